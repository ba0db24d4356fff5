/* Lost cycles read as indirect (cycles.h). */
#include "gemleak/judge/cycles.h"

struct GlCycles {
    gboolean on;          /* definite leaks asked for, and indirect ones not */
    GHashTable *direct;   /* the target's functions on a direct leak's stack (owned), a set */
};

GlCycles *gl_cycles_new(const GlRules *rules)
{
    GlCycles *cycles = g_new0(GlCycles, 1);
    GlLeakKind wanted = gl_rules_get_leak_kinds(rules);
    cycles->on = (wanted & GL_LEAK_DEFINITE) != 0 && (wanted & GL_LEAK_INDIRECT) == 0;
    cycles->direct = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return cycles;
}

void gl_cycles_free(GlCycles *cycles)
{
    if (cycles == NULL)
        return;
    g_hash_table_unref(cycles->direct);
    g_free(cycles);
}

gboolean gl_cycles_note(GlCycles *cycles, const GlRecord *record, GlVerdict verdict)
{
    if (!cycles->on)
        return FALSE;
    if (record->leak_kind == GL_LEAK_DEFINITE) {
        for (guint i = 0; i < record->stack.n_frames; i++) {
            const GlFrame *frame = &record->stack.frames[i];
            if (frame->in_target && frame->fn != NULL && !g_hash_table_contains(cycles->direct, frame->fn))
                g_hash_table_add(cycles->direct, g_strdup(frame->fn));
        }
        return FALSE;
    }
    const GlFrame *first = gl_record_first_target_frame(record);
    return record->leak_kind == GL_LEAK_INDIRECT && verdict == GL_VERDICT_SKIP_KIND &&
           first != NULL && first->fn != NULL;
}

/* Returns: whether a target frame of @record is in @functions (names). */
static gboolean passes_through(const GlRecord *record, GHashTable *functions)
{
    for (guint i = 0; i < record->stack.n_frames; i++) {
        const GlFrame *frame = &record->stack.frames[i];
        if (frame->in_target && frame->fn != NULL && g_hash_table_contains(functions, frame->fn))
            return TRUE;
    }
    return FALSE;
}

gboolean gl_cycles_promote(const GlCycles *cycles, GlRecord *record)
{
    if (passes_through(record, cycles->direct))
        return FALSE;
    record->leak_kind = GL_LEAK_DEFINITE;
    record->kind = gl_record_intern(record, "Leak_DefinitelyLost");
    return TRUE;
}
