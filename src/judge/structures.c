/* Lost structures counted whole (see structures.h). */
#include "gemleak/judge/structures.h"
#include "gemleak/judge/merge.h"

#include <string.h>

/* Returns: TRUE if @a and @b come from one report of their process: a
 * check's records share when they were found and the marker before them. */
static gboolean same_report(const GlRecord *a, const GlRecord *b)
{
    return a->pid == b->pid && a->at_exit == b->at_exit && a->while_running == b->while_running &&
           g_strcmp0(a->marker, b->marker) == 0;
}

/* Returns: TRUE if a function of the target on @indirect's stack is on
 * @direct's too: the call that allocated one allocated the other. */
static gboolean allocated_in_one_call(const GlRecord *indirect, const GlRecord *direct)
{
    for (guint i = 0; i < indirect->stack.n_frames; i++) {
        const GlFrame *frame = &indirect->stack.frames[i];
        if (!frame->in_target || frame->fn == NULL)
            continue;
        for (guint j = 0; j < direct->stack.n_frames; j++) {
            const GlFrame *other = &direct->stack.frames[j];
            if (other->in_target && g_strcmp0(other->fn, frame->fn) == 0)
                return TRUE;
        }
    }
    return FALSE;
}

/* Returns: the index of @stack's outermost target frame, or n_frames. */
static guint outermost_target(const GlStack *stack)
{
    for (guint i = stack->n_frames; i > 0; i--)
        if (stack->frames[i - 1].in_target)
            return i - 1;
    return stack->n_frames;
}

/* Returns: TRUE if @a and @b are one call: the same function, file and
 * line (and return address, where both have one). */
static gboolean same_call(const GlFrame *a, const GlFrame *b)
{
    return g_strcmp0(a->fn, b->fn) == 0 && g_strcmp0(a->file, b->file) == 0 &&
           a->line == b->line && (a->ip == 0 || b->ip == 0 || a->ip == b->ip);
}

/* Returns: how many calls into the extension @a and @b share, from their
 * outermost target frames inward: the same calls built one structure.
 * Ruby's frames further out say nothing of it, and may even end apart (an
 * exact pass's stack at _start, the runtime's at __libc_start_main). */
static guint shared_target_calls(const GlStack *a, const GlStack *b)
{
    guint i = outermost_target(a), j = outermost_target(b), n = 0;
    if (i == a->n_frames || j == b->n_frames)
        return 0;
    while (same_call(&a->frames[i], &b->frames[j])) {
        n++;
        if (i == 0 || j == 0)
            break;
        i--;
        j--;
    }
    return n;
}

GlRecord *gl_structures_holder(const GPtrArray *records, const GlRecord *indirect)
{
    GlRecord *best = NULL;
    guint best_shared = 0;
    for (guint i = 0; i < records->len; i++) {
        GlRecord *direct = g_ptr_array_index(records, i);
        if (direct->leak_kind != GL_LEAK_DEFINITE || direct->attribution_only ||
            !same_report(direct, indirect) || !allocated_in_one_call(indirect, direct))
            continue;
        guint shared = shared_target_calls(&direct->stack, &indirect->stack);
        if (best == NULL || shared > best_shared) {
            best = direct;
            best_shared = shared;
        }
    }
    return best;
}

/* Counts @indirect's bytes in @direct's record. */
static void attach(GlRecord *direct, const GlRecord *indirect)
{
    guint64 own = gl_record_direct_bytes(direct);
    guint64 total = gl_add_saturating(direct->leaked_bytes, indirect->leaked_bytes);
    direct->leaked_bytes = total;
    g_autofree char *what = g_strdup_printf(
        "Direct leak of %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " direct, %" G_GUINT64_FORMAT
        " indirect) byte(s) in %" G_GUINT64_FORMAT " object(s)", total, own, total - own,
        direct->leaked_blocks);
    direct->what = gl_record_intern(direct, what);
}

guint gl_structures_attach(GPtrArray *records)
{
    guint attached = 0;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *indirect = g_ptr_array_index(records, i);
        if (indirect->leak_kind != GL_LEAK_INDIRECT || indirect->attribution_only)
            continue;
        GlRecord *direct = gl_structures_holder(records, indirect);
        if (direct == NULL)
            continue;
        attach(direct, indirect);
        attached++;
    }
    return attached;
}
