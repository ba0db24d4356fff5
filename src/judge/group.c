/* Groups of findings: one bug, one entry (see group.h). */
#include "gemleak/judge/group.h"
#include "gemleak/judge/project_paths.h"
#include "gemleak/read/source.h"

#include <string.h>

static void group_free(gpointer data)
{
    GlGroup *group = data;
    g_ptr_array_unref(group->findings);
    g_array_unref(group->pids);
    g_free(group);
}

/* The stack whose extension frames place the finding: a leak's allocation
 * or an error's access, else (an error on a freed block whose access is
 * Ruby's alone) the first other stack that has one. */
static const GlStack *placing_stack(const GlRecord *record)
{
    for (guint i = 0; i < record->stack.n_frames; i++)
        if (record->stack.frames[i].in_target)
            return &record->stack;
    for (guint a = 0; a < record->aux->len; a++) {
        const GlStack *stack = &g_array_index(record->aux, GlAux, a).stack;
        for (guint i = 0; i < stack->n_frames; i++)
            if (stack->frames[i].in_target)
                return stack;
    }
    return NULL;
}

void gl_finding_group_frames(const GlFinding *finding, const GlFrame **function,
                             const GlFrame **entry)
{
    *function = NULL;
    *entry = NULL;
    const GlStack *stack = placing_stack(finding->record);
    if (stack == NULL)
        return;
    guint i = 0;
    while (!stack->frames[i].in_target)
        i++;
    /* (a) passes over what a header inlined there (glibc's memcpy wrapper,
     * ruby.h's inline functions) and a runtime linked in (Rust's alloc::):
     * every bug in the extension goes through those, as
     * gl_finding_location() passes them over too. */
    gboolean own_source = gl_stack_has_own_source(stack);
    guint own = i;
    while (own < stack->n_frames && stack->frames[own].in_target &&
           !gl_frame_is_own(&stack->frames[own], own_source))
        own++;
    if (own < stack->n_frames && stack->frames[own].in_target)
        i = own;
    *function = &stack->frames[i];
    /* Outward while the frames are the extension's: a bundled library's
     * frames are, Ruby's (a callback's rb_funcall, the VM) are not. */
    while (i + 1 < stack->n_frames && stack->frames[i + 1].in_target)
        i++;
    *entry = &stack->frames[i];
}

/* (a) and (b) of group.h by their functions' names. */
static void group_frames(const GlFinding *finding, const char **function, const char **entry)
{
    const GlFrame *function_frame = NULL, *entry_frame = NULL;
    gl_finding_group_frames(finding, &function_frame, &entry_frame);
    *function = function_frame != NULL ? function_frame->fn : NULL;
    *entry = entry_frame != NULL ? entry_frame->fn : NULL;
}

/* Returns: (transfer full) (nullable): what the findings of one group
 * share; NULL for a finding that is a group of its own. */
static char *group_key(const GlFinding *finding)
{
    const char *function = NULL, *entry = NULL;
    group_frames(finding, &function, &entry);
    if (function == NULL || entry == NULL)
        return NULL;
    const GlRecord *record = finding->record;
    /* A freed block's accesses are one finding already, and the kind of
     * its first access says little: its class is "freed block". */
    const char *kind = finding->freed_block ? "freed block" : record->kind;
    return g_strdup_printf("%s\n%s\n%s", kind != NULL ? kind : "", function, entry);
}

static void group_add(GlGroup *group, GlFinding *finding)
{
    g_ptr_array_add(group->findings, finding);
    group->total_bytes = gl_add_saturating(group->total_bytes, finding->total_bytes);
    group->total_blocks = gl_add_saturating(group->total_blocks, finding->total_blocks);
    group->direct_bytes = gl_add_saturating(group->direct_bytes, finding->direct_bytes);
    group->occurrences = gl_add_saturating(group->occurrences, finding->occurrences);
    group->certain |= finding->certain;
    for (guint i = 0; i < finding->pids->len; i++)
        gl_pids_add(group->pids, g_array_index(finding->pids, gint64, i));
}

/* Most bytes first, as findings are, then most occurrences, then in the
 * order of their first finding. */
static gint compare_groups(gconstpointer a, gconstpointer b)
{
    const GlGroup *x = *(const GlGroup *const *) a;
    const GlGroup *y = *(const GlGroup *const *) b;
    if (x->total_bytes != y->total_bytes)
        return x->total_bytes > y->total_bytes ? -1 : 1;
    if (x->occurrences != y->occurrences)
        return x->occurrences > y->occurrences ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

GPtrArray *gl_findings_group(const GPtrArray *findings)
{
    GPtrArray *groups = g_ptr_array_new_with_free_func(group_free);
    g_autoptr(GHashTable) by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < findings->len; i++) {
        GlFinding *finding = g_ptr_array_index(findings, i);
        char *key = group_key(finding);
        GlGroup *group = key != NULL ? g_hash_table_lookup(by_key, key) : NULL;
        if (group == NULL) {
            group = g_new0(GlGroup, 1);
            group->id = groups->len + 1;
            group->findings = g_ptr_array_new();
            group->pids = g_array_new(FALSE, FALSE, sizeof(gint64));
            group_frames(finding, &group->function, &group->entry);
            g_ptr_array_add(groups, group);
            if (key != NULL)
                g_hash_table_insert(by_key, g_steal_pointer(&key), group);
        }
        g_free(key);
        group_add(group, finding);
    }
    g_ptr_array_sort(groups, compare_groups);
    for (guint g = 0; g < groups->len; g++)
        ((GlGroup *) g_ptr_array_index(groups, g))->id = g + 1;
    return groups;
}

