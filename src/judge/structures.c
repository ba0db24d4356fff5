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

/* Returns: how many outermost frames @a and @b share: the same return
 * addresses are the same calls. */
static guint shared_outer_frames(const GlStack *a, const GlStack *b)
{
    guint n = 0;
    while (n < a->n_frames && n < b->n_frames &&
           a->frames[a->n_frames - 1 - n].ip == b->frames[b->n_frames - 1 - n].ip &&
           g_strcmp0(a->frames[a->n_frames - 1 - n].obj, b->frames[b->n_frames - 1 - n].obj) == 0)
        n++;
    return n;
}

/* Returns: (transfer none) (nullable): the direct leak of @records whose
 * structure holds @indirect. */
static GlRecord *holder_of(GPtrArray *records, const GlRecord *indirect)
{
    GlRecord *best = NULL;
    guint best_shared = 0;
    for (guint i = 0; i < records->len; i++) {
        GlRecord *direct = g_ptr_array_index(records, i);
        if (direct->leak_kind != GL_LEAK_DEFINITE || direct->attribution_only ||
            !same_report(direct, indirect) || !allocated_in_one_call(indirect, direct))
            continue;
        guint shared = shared_outer_frames(&direct->stack, &indirect->stack);
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
        GlRecord *direct = holder_of(records, indirect);
        if (direct == NULL)
            continue;
        attach(direct, indirect);
        attached++;
    }
    return attached;
}
