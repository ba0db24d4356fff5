/* Findings: kept records merged by identity (see merge.h). */
#include "gemleak/judge/merge.h"
#include "gemleak/base/text.h"

#include <stdlib.h>
#include <string.h>

struct GlFindings {
    GHashTable *by_key;  /* merge key (owned) -> GlFinding* (owned) */
};

static void finding_free(gpointer data)
{
    GlFinding *finding = data;
    if (finding->sites != NULL)
        g_ptr_array_unref(finding->sites);
    else
        gl_record_free(finding->record);
    g_ptr_array_unref(finding->tests);
    gl_test_free(finding->among_first);
    gl_test_free(finding->among_last);
    gl_growth_free(finding->growth);
    g_array_unref(finding->pids);
    g_free(finding->fingerprint);
    for (guint v = 0; v < GL_FINGERPRINT_VERSION - 1; v++) {
        g_free(finding->earlier_fingerprints[v]);
        g_free(finding->earlier_structure_fingerprints[v]);
        g_strfreev(finding->earlier_kind_fingerprints[v]);
    }
    g_free(finding->structure_fingerprint);
    g_strfreev(finding->kind_fingerprints);
    g_free(finding);
}

void gl_growth_free(GlGrowth *growth)
{
    if (growth == NULL)
        return;
    g_free(growth->bytes);
    g_free(growth->blocks);
    g_free(growth);
}

GlFindings *gl_findings_new(void)
{
    GlFindings *findings = g_new0(GlFindings, 1);
    findings->by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, finding_free);
    return findings;
}

void gl_findings_free(GlFindings *findings)
{
    if (findings == NULL)
        return;
    g_hash_table_unref(findings->by_key);
    g_free(findings);
}

guint gl_stack_relevant_frames(const GlStack *stack)
{
    for (guint i = stack->n_frames; i > 0; i--)
        if (stack->frames[i - 1].in_target)
            return i;
    return stack->n_frames;
}

/* One frame as identity sees it: its function (or, stripped, its object)
 * and source line. */
static void frame_key(GString *out, const GlFrame *frame)
{
    g_string_append(out, frame->fn != NULL ? frame->fn
                                           : frame->obj != NULL ? gl_base_name(frame->obj) : "?");
    if (frame->file != NULL)
        g_string_append_printf(out, "@%s:%u", frame->file, frame->line);
}

/* The relevant frames of @stack, a line each, a frame repeated in a row
 * (a recursion, or unnamed frames of one object) once. */
static void append_stack_key(GString *key, const GlStack *stack)
{
    guint n = gl_stack_relevant_frames(stack);
    g_autoptr(GString) last = g_string_new(NULL);
    g_autoptr(GString) frame = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        g_string_truncate(frame, 0);
        frame_key(frame, &stack->frames[i]);
        if (i > 0 && strcmp(frame->str, last->str) == 0)
            continue;
        g_string_append(key, frame->str);
        g_string_append_c(key, '\n');
        g_string_assign(last, frame->str);
    }
}

gboolean gl_record_on_freed_block(const GlRecord *record)
{
    if (record->leak_kind != GL_LEAK_NONE)
        return FALSE;
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        if (gl_aux_says_freed(aux->text) && aux->stack.n_frames > 0)
            return TRUE;
    }
    return FALSE;
}

char *gl_record_merge_key(const GlRecord *record)
{
    GString *key = g_string_new(NULL);
    if (gl_record_on_freed_block(record)) {
        /* One bug, one block: however many places read or wrote it after
         * it was freed, or freed it again. */
        g_string_append(key, "freed block\n");
    } else {
        g_string_append_printf(key, "%s\n", record->kind);
        append_stack_key(key, &record->stack);
    }
    for (guint i = 0; i < record->aux->len; i++) {
        g_string_append(key, "--\n");
        append_stack_key(key, &g_array_index(record->aux, GlAux, i).stack);
    }
    return g_string_free(key, FALSE);
}

/* What tells apart two accesses to one freed block. */
static char *site_key(const GlRecord *record)
{
    GString *key = g_string_new(record->kind);
    g_string_append_c(key, '\n');
    append_stack_key(key, &record->stack);
    return g_string_free(key, FALSE);
}

/* ---- choosing by content ------------------------------------------------------ */

static guint total_frames(const GlRecord *record)
{
    guint n = record->stack.n_frames;
    for (guint i = 0; i < record->aux->len; i++)
        n += g_array_index(record->aux, GlAux, i).stack.n_frames;
    return n;
}

static void append_full_stack(GString *out, const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        g_string_append_printf(out, "%s|%s|%s|%u|%" G_GINT64_MODIFIER "x\n",
                               frame->fn != NULL ? frame->fn : "",
                               frame->obj != NULL ? gl_base_name(frame->obj) : "",
                               frame->file != NULL ? frame->file : "", frame->line, frame->ip);
    }
}

static char *content_key(const GlRecord *record)
{
    GString *key = g_string_new(record->kind);
    g_string_append_c(key, '\n');
    append_full_stack(key, &record->stack);
    for (guint i = 0; i < record->aux->len; i++)
        append_full_stack(key, &g_array_index(record->aux, GlAux, i).stack);
    return g_string_free(key, FALSE);
}

/* Orders two occurrences of one finding by content alone: the one with
 * fewest frames (the shallowest recursion) first, then by their frames.
 * The one shown is then the same whatever the reading order. */
gint gl_record_compare_content(const GlRecord *a, const GlRecord *b)
{
    guint na = total_frames(a), nb = total_frames(b);
    if (na != nb)
        return na < nb ? -1 : 1;
    g_autofree char *ka = content_key(a);
    g_autofree char *kb = content_key(b);
    return strcmp(ka, kb);
}

/* ---- adding ----------------------------------------------------------------------- */

void gl_pids_add(GArray *pids, gint64 pid)
{
    for (guint i = 0; i < pids->len; i++)
        if (g_array_index(pids, gint64, i) == pid)
            return;
    g_array_append_val(pids, pid);
}

/* The direct share of a leak's bytes: Valgrind's text says "152 (56 direct,
 * 96 indirect) bytes" when blocks it points to were lost with it; a mid-run
 * check adds what grew, "152 (+152) (56 (+56) direct, 96 (+96) indirect)". */
guint64 gl_record_direct_bytes(const GlRecord *record)
{
    const char *open = record->what != NULL ? strchr(record->what, '(') : NULL;
    while (open != NULL && !g_ascii_isdigit(open[1]))
        open = strchr(open + 1, '(');
    if (open != NULL && strstr(open, " direct, ") != NULL) {
        g_autofree char *digits = g_strdup(open + 1);
        char *out = digits;
        for (const char *c = digits; *c != '\0' && *c != ' '; c++)
            if (g_ascii_isdigit(*c))
                *out++ = *c;
        *out = '\0';
        return g_ascii_strtoull(digits, NULL, 10);
    }
    return record->leaked_bytes;
}

/* Adds @record as a site of @finding: a new access to its freed block, or
 * an occurrence that may show better than the one shown. Takes @record. */
static void add_site(GlFinding *finding, GlRecord *record)
{
    if (!finding->freed_block) {
        if (gl_record_compare_content(record, finding->record) < 0) {
            g_ptr_array_remove(finding->sites, finding->record);
            g_ptr_array_add(finding->sites, record);
            finding->record = record;
        } else {
            gl_record_free(record);
        }
        return;
    }
    g_autofree char *key = site_key(record);
    for (guint i = 0; i < finding->sites->len; i++) {
        GlRecord *site = g_ptr_array_index(finding->sites, i);
        g_autofree char *other = site_key(site);
        if (strcmp(key, other) != 0)
            continue;
        if (gl_record_compare_content(record, site) < 0) {
            g_ptr_array_index(finding->sites, i) = record;
            if (finding->record == site)
                finding->record = record;
            gl_record_free(site);
        } else {
            gl_record_free(record);
        }
        return;
    }
    g_ptr_array_add(finding->sites, record);
    if (gl_record_compare_content(record, finding->record) < 0)
        finding->record = record;
}

/* Adds @test to the tests of @finding, once: the first
 * GL_FINDING_MAX_TESTS that ran, whichever loss record named them first. */
static void add_test(GlFinding *finding, const GlTest *test)
{
    if (gl_tests_insert(finding->tests, gl_test_copy(test), GL_FINDING_MAX_TESTS))
        finding->more_tests = TRUE;
}

static void add_attribution(GlFinding *finding, const GlAttribution *attribution)
{
    if (attribution == NULL)
        return;
    for (guint i = 0; attribution->tests != NULL && i < attribution->tests->len; i++)
        add_test(finding, g_ptr_array_index(attribution->tests, i));
    finding->lost_before_tests |= attribution->before_tests;
    finding->lost_at_exit |= attribution->at_exit;
    finding->found_again |= attribution->again && attribution->tests != NULL &&
                            attribution->tests->len > 0;
    finding->more_tests |= attribution->more_tests;
    finding->allocated_in_tests |= attribution->allocated;
    /* The first span of tests read says where to look. */
    if (attribution->among > 0 && finding->among == 0 && attribution->among_first != NULL &&
        attribution->among_last != NULL) {
        finding->among = attribution->among;
        finding->among_first = gl_test_new(attribution->among_first->name,
                                           attribution->among_first->location);
        finding->among_last = gl_test_new(attribution->among_last->name,
                                          attribution->among_last->location);
    }
}

void gl_findings_add(GlFindings *findings, GlRecord *record, guint64 order)
{
    gl_findings_add_attributed(findings, record, order, NULL);
}

void gl_findings_add_attributed(GlFindings *findings, GlRecord *record, guint64 order,
                                const GlAttribution *attribution)
{
    char *key = gl_record_merge_key(record);
    GlFinding *finding = g_hash_table_lookup(findings->by_key, key);
    gint64 pid = record->pid;
    guint64 bytes = record->leaked_bytes, blocks = record->leaked_blocks;
    guint64 direct = gl_record_direct_bytes(record);
    gboolean certain = !record->uncertain;
    if (finding == NULL) {
        finding = gl_finding_new(record, order);
        g_hash_table_insert(findings->by_key, key, finding);
    } else {
        g_free(key);
        finding->order = MIN(finding->order, order);
        add_site(finding, record);
    }
    finding->occurrences++;
    finding->certain |= certain;
    gl_pids_add(finding->pids, pid);
    add_attribution(finding, attribution);
    finding->total_bytes = gl_add_saturating(finding->total_bytes, bytes);
    finding->total_blocks = gl_add_saturating(finding->total_blocks, blocks);
    finding->direct_bytes = gl_add_saturating(finding->direct_bytes, direct);
}

/* Adds @theirs (consumed) to @ours, the same finding read elsewhere. */
static void merge_finding(GlFinding *ours, GlFinding *theirs)
{
    if (theirs->order < ours->order) {
        /* Theirs was read first: its pids and tests lead. */
        GArray *pids = ours->pids;
        ours->pids = theirs->pids;
        theirs->pids = pids;
        GPtrArray *tests = ours->tests;
        ours->tests = theirs->tests;
        theirs->tests = tests;
        /* --growth: the series shown is its first test's */
        GlGrowth *growth = ours->growth;
        ours->growth = theirs->growth;
        theirs->growth = growth;
        ours->order = theirs->order;
    }
    GlAttribution attribution = {
        .tests = theirs->tests,
        .before_tests = theirs->lost_before_tests,
        .at_exit = theirs->lost_at_exit,
        .again = theirs->found_again,
        .allocated = theirs->allocated_in_tests,
        .among = theirs->among,
        .among_first = theirs->among_first,
        .among_last = theirs->among_last,
    };
    add_attribution(ours, &attribution);
    ours->more_tests |= theirs->more_tests;
    while (theirs->sites->len > 0)
        add_site(ours, g_ptr_array_steal_index(theirs->sites, theirs->sites->len - 1));
    theirs->record = NULL;
    ours->occurrences += theirs->occurrences;
    ours->certain |= theirs->certain;
    ours->total_bytes = gl_add_saturating(ours->total_bytes, theirs->total_bytes);
    ours->total_blocks = gl_add_saturating(ours->total_blocks, theirs->total_blocks);
    ours->direct_bytes = gl_add_saturating(ours->direct_bytes, theirs->direct_bytes);
    for (guint i = 0; i < theirs->pids->len; i++)
        gl_pids_add(ours->pids, g_array_index(theirs->pids, gint64, i));
    finding_free(theirs);
}

void gl_findings_absorb(GlFindings *into, GlFindings *from)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, from->by_key);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        GlFinding *theirs = value;
        GlFinding *ours = g_hash_table_lookup(into->by_key, key);
        g_hash_table_iter_steal(&iter);
        if (ours == NULL) {
            g_hash_table_insert(into->by_key, key, theirs);
            continue;
        }
        g_free(key);
        merge_finding(ours, theirs);
    }
}

GlFinding *gl_finding_new(GlRecord *record, guint64 order)
{
    GlFinding *finding = g_new0(GlFinding, 1);
    finding->record = record;
    finding->sites = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
    g_ptr_array_add(finding->sites, record);
    finding->freed_block = gl_record_on_freed_block(record);
    finding->pids = g_array_new(FALSE, FALSE, sizeof(gint64));
    finding->tests = g_ptr_array_new_with_free_func((GDestroyNotify) gl_test_free);
    finding->order = order;
    return finding;
}

void gl_finding_add_site(GlFinding *finding, GlRecord *site)
{
    add_site(finding, site);
}

void gl_findings_add_finding(GlFindings *findings, GlFinding *finding)
{
    char *key = gl_record_merge_key(finding->record);
    GlFinding *ours = g_hash_table_lookup(findings->by_key, key);
    if (ours == NULL) {
        g_hash_table_insert(findings->by_key, key, finding);
        return;
    }
    g_free(key);
    merge_finding(ours, finding);
}

guint gl_findings_count(const GlFindings *findings)
{
    return g_hash_table_size(findings->by_key);
}

/* ---- fingerprints --------------------------------------------------------------- */

static gint compare_findings(gconstpointer a, gconstpointer b)
{
    const GlFinding *x = *(const GlFinding *const *) a;
    const GlFinding *y = *(const GlFinding *const *) b;
    if (x->total_bytes != y->total_bytes)
        return x->total_bytes > y->total_bytes ? -1 : 1;
    if (x->occurrences != y->occurrences)
        return x->occurrences > y->occurrences ? -1 : 1;
    int by_print = g_strcmp0(x->fingerprint, y->fingerprint);
    if (by_print != 0)
        return by_print;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Sorts a freed block's accesses by content, so that each report lists
 * them the same way. */
static gint compare_sites(gconstpointer a, gconstpointer b)
{
    return gl_record_compare_content(*(const GlRecord *const *) a, *(const GlRecord *const *) b);
}

GPtrArray *gl_findings_list(GlFindings *findings)
{
    GPtrArray *list = g_ptr_array_sized_new(g_hash_table_size(findings->by_key));
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, findings->by_key);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        g_ptr_array_add(list, value);
    return list;
}

GPtrArray *gl_findings_sorted(GlFindings *findings)
{
    GPtrArray *sorted = gl_findings_list(findings);
    for (guint i = 0; i < sorted->len; i++) {
        GlFinding *finding = g_ptr_array_index(sorted, i);
        if (finding->sites != NULL)
            g_ptr_array_sort(finding->sites, compare_sites);
    }
    g_ptr_array_sort(sorted, compare_findings);
    return sorted;
}
