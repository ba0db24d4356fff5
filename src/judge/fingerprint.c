/* Fingerprints: a finding's name across runs and machines (see
 * fingerprint.h). */
#include "gemleak/judge/fingerprint.h"
#include "gemleak/read/source.h"

#include <string.h>

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* A fingerprint's frames are the extension's own: Ruby's between them and
 * around them are named on a Ruby with symbols and not on a stripped one,
 * and change with every Ruby version (ruby_xmalloc's way to malloc went
 * from one function to four between 3.1 and 3.4); so do the frames a
 * header inlined into the extension (ruby.h's inline functions, glibc's
 * _FORTIFY_SOURCE wrappers, which Debian's flags add). */
static gboolean frame_identifies(const GlFrame *frame)
{
    return frame->in_target && frame->fn != NULL && !gl_frame_from_a_header(frame);
}

/* Returns: TRUE if @stack has a frame that identifies a finding. */
static gboolean stack_identifies(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (frame_identifies(&stack->frames[i]))
            return TRUE;
    return FALSE;
}

static void hash_stack(GChecksum *sum, const GlStack *stack)
{
    const char *last = NULL;
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (!frame_identifies(frame))
            continue;
        /* a recursion's depth is no part of a leak */
        if (last != NULL && strcmp(last, frame->fn) == 0)
            continue;
        last = frame->fn;
        g_checksum_update(sum, (const guchar *) "\n", 1);
        g_checksum_update(sum, (const guchar *) frame->fn, -1);
        if (frame->obj != NULL) {
            g_checksum_update(sum, (const guchar *) "@", 1);
            g_checksum_update(sum, (const guchar *) base_name(frame->obj), -1);
        }
    }
}

/* The stacks that make a finding what it is: a freed block's free and
 * allocation stacks, else every stack. */
static gboolean identity_includes_primary(const GlFinding *finding)
{
    return !finding->freed_block;
}

/* Returns: TRUE if the finding's primary stack is part of its identity:
 * always, but for a freed block whose free and allocation stacks are all
 * Ruby's (then the extension's access to it tells it). */
static gboolean identity_uses_primary(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (identity_includes_primary(finding))
        return TRUE;
    for (guint i = 0; i < record->aux->len; i++)
        if (stack_identifies(&g_array_index(record->aux, GlAux, i).stack))
            return FALSE;
    return TRUE;
}

/* Returns: (transfer full): the first 16 hex digits of @sum after @rank
 * (which site of one set of functions it is; 0 adds nothing). 64 bits
 * tell apart every leak a suite will ever have. */
static char *fingerprint_finish(GChecksum *sum, guint rank)
{
    if (rank > 0) {
        g_autofree char *text = g_strdup_printf("\n#%u", rank);
        g_checksum_update(sum, (const guchar *) text, -1);
    }
    return g_strndup(g_checksum_get_string(sum), 16);
}

/* The kind and the extension's functions in the finding's stacks, then
 * @rank: which site of those functions it is, in line order. Lines stay
 * out, so that a pure shift keeps it; Ruby's frames stay out, so that
 * another Ruby keeps it; nothing but the XML goes in, so that every
 * machine computes the same. */
static char *fingerprint(const GlFinding *finding, guint rank)
{
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    const GlRecord *record = finding->record;
    if (identity_includes_primary(finding))
        g_checksum_update(sum, (const guchar *) record->kind, -1);
    else
        g_checksum_update(sum, (const guchar *) "freed block", -1);
    if (identity_uses_primary(finding))
        hash_stack(sum, &record->stack);
    for (guint i = 0; i < record->aux->len; i++) {
        g_checksum_update(sum, (const guchar *) "\n--", 3);
        hash_stack(sum, &g_array_index(record->aux, GlAux, i).stack);
    }
    return fingerprint_finish(sum, rank);
}

/* The fingerprint's frames before issue 20: every named frame up to the
 * last target frame, Ruby's too. Kept to match the baselines written then. */
static void legacy_hash_stack(GChecksum *sum, const GlStack *stack)
{
    guint n = gl_stack_relevant_frames(stack);
    const char *last = NULL;
    for (guint i = 0; i < n; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->fn == NULL)
            continue;
        if (last != NULL && strcmp(last, frame->fn) == 0 && !frame->in_target)
            continue;
        last = frame->fn;
        g_checksum_update(sum, (const guchar *) "\n", 1);
        g_checksum_update(sum, (const guchar *) frame->fn, -1);
        if (frame->in_target && frame->obj != NULL) {
            g_checksum_update(sum, (const guchar *) "@", 1);
            g_checksum_update(sum, (const guchar *) base_name(frame->obj), -1);
        }
    }
}

/* The fingerprint before issue 20 (GlFinding's legacy_fingerprint). */
static char *legacy_fingerprint(const GlFinding *finding, guint rank)
{
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    const GlRecord *record = finding->record;
    if (identity_includes_primary(finding)) {
        g_checksum_update(sum, (const guchar *) record->kind, -1);
        legacy_hash_stack(sum, &record->stack);
    } else {
        g_checksum_update(sum, (const guchar *) "freed block", -1);
    }
    for (guint i = 0; i < record->aux->len; i++) {
        g_checksum_update(sum, (const guchar *) "\n--", 3);
        legacy_hash_stack(sum, &g_array_index(record->aux, GlAux, i).stack);
    }
    return fingerprint_finish(sum, rank);
}

char **gl_finding_functions(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    g_autoptr(GStrvBuilder) functions = g_strv_builder_new();
    const char *last = NULL;
    for (guint s = identity_uses_primary(finding) ? 0 : 1; s <= record->aux->len; s++) {
        const GlStack *stack = s == 0 ? &record->stack
                                      : &g_array_index(record->aux, GlAux, s - 1).stack;
        for (guint i = 0; i < stack->n_frames; i++) {
            const GlFrame *frame = &stack->frames[i];
            if (!frame_identifies(frame) || (last != NULL && strcmp(last, frame->fn) == 0))
                continue;
            last = frame->fn;
            g_strv_builder_add(functions, frame->fn);
        }
    }
    return g_strv_builder_end(functions);
}

/* Compares the lines of the target frames of two stacks, in order. */
static gint compare_target_lines(const GlStack *a, const GlStack *b)
{
    guint na = gl_stack_relevant_frames(a), nb = gl_stack_relevant_frames(b);
    guint i = 0, j = 0;
    for (;;) {
        while (i < na && !a->frames[i].in_target)
            i++;
        while (j < nb && !b->frames[j].in_target)
            j++;
        if (i >= na || j >= nb)
            return (i < na) - (j < nb);
        if (a->frames[i].line != b->frames[j].line)
            return a->frames[i].line < b->frames[j].line ? -1 : 1;
        i++;
        j++;
    }
}

/* Orders the sites of one set of functions by their lines, numerically:
 * an order a shift of lines keeps. */
static gint compare_sites_by_line(const GlFinding *x, const GlFinding *y)
{
    const GlRecord *a = x->record, *b = y->record;
    gint by = identity_includes_primary(x) ? compare_target_lines(&a->stack, &b->stack) : 0;
    for (guint i = 0; by == 0 && i < MIN(a->aux->len, b->aux->len); i++)
        by = compare_target_lines(&g_array_index(a->aux, GlAux, i).stack,
                                  &g_array_index(b->aux, GlAux, i).stack);
    return by != 0 ? by : gl_record_compare_content(a, b);
}

static gint compare_for_ranking(gconstpointer a, gconstpointer b)
{
    const GlFinding *x = *(const GlFinding *const *) a;
    const GlFinding *y = *(const GlFinding *const *) b;
    int by_print = strcmp(x->fingerprint, y->fingerprint);
    return by_print != 0 ? by_print : compare_sites_by_line(x, y);
}



/* Gives every finding of @sorted its fingerprint as @print makes them: the
 * sites of one set of functions ranked by their lines. */
static void rank_fingerprints(GPtrArray *sorted, char *(*print)(const GlFinding *, guint))
{
    for (guint i = 0; i < sorted->len; i++) {
        GlFinding *finding = g_ptr_array_index(sorted, i);
        g_free(finding->fingerprint);
        finding->fingerprint = print(finding, 0);
    }
    g_ptr_array_sort(sorted, compare_for_ranking);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autofree char *base = NULL;
    guint rank = 0;
    for (guint i = 0; i < sorted->len; i++) {
        GlFinding *finding = g_ptr_array_index(sorted, i);
        if (base != NULL && strcmp(base, finding->fingerprint) == 0) {
            rank++;
        } else {
            g_free(base);
            base = g_strdup(finding->fingerprint);
            rank = 0;
        }
        /* A rank that another set of functions already has (most unlikely)
         * moves on, so that fingerprints stay unique in the report. */
        if (rank > 0) {   /* rank 0's was made above */
            g_free(finding->fingerprint);
            finding->fingerprint = print(finding, rank);
        }
        for (guint r = rank + 1; g_hash_table_contains(seen, finding->fingerprint); r++) {
            g_free(finding->fingerprint);
            finding->fingerprint = print(finding, r);
        }
        g_hash_table_add(seen, g_strdup(finding->fingerprint));
    }
}

/* Returns: TRUE if @finding is a block of a lost structure: one that holds
 * indirectly lost blocks, or one of those. In a lost cycle Valgrind calls
 * the block it meets first (the lowest address) definitely lost and the
 * others indirectly lost, so which one it names moves from run to run. */
static gboolean in_lost_structure(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (finding->freed_block)
        return FALSE;
    return record->leak_kind == GL_LEAK_INDIRECT ||
           (record->leak_kind == GL_LEAK_DEFINITE && finding->direct_bytes < finding->total_bytes);
}

/* Returns: (transfer full) (nullable): the site of a lost structure's
 * block, whatever kind Valgrind gave it this run. */
static char *structure_fingerprint(const GlFinding *finding)
{
    if (!in_lost_structure(finding))
        return NULL;
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(sum, (const guchar *) "lost structure", -1);
    hash_stack(sum, &finding->record->stack);
    return fingerprint_finish(sum, 0);
}

void gl_findings_fingerprint(GlFindings *findings)
{
    g_autoptr(GPtrArray) all = gl_findings_list(findings);
    /* The fingerprints of old baselines first, then today's. */
    rank_fingerprints(all, legacy_fingerprint);
    for (guint i = 0; i < all->len; i++) {
        GlFinding *finding = g_ptr_array_index(all, i);
        g_free(finding->legacy_fingerprint);
        finding->legacy_fingerprint = g_steal_pointer(&finding->fingerprint);
    }
    rank_fingerprints(all, fingerprint);
    for (guint i = 0; i < all->len; i++) {
        GlFinding *finding = g_ptr_array_index(all, i);
        g_free(finding->structure_fingerprint);
        finding->structure_fingerprint = structure_fingerprint(finding);
    }
}
