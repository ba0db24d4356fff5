/* --growth's samples -> series per test and site -> findings (growth.h). */
#include "gemleak/judge/growth.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/attribute.h"
#include "gemleak/judge/stacks.h"

#include <stdlib.h>
#include <string.h>

/* What one site's live memory did over one test's repetitions. */
typedef struct {
    GlTest *test;
    GlRecord *record;     /* the sample shown, chosen by content (owned) */
    guint64 order;        /* where its first sample was read */
    gint64 bytes[GL_PROTO_GROWTH_MAX + 1];   /* [REP]: the change that repetition made */
    gint64 blocks[GL_PROTO_GROWTH_MAX + 1];
    guint last;           /* the last repetition with a sample */
    gboolean held;        /* the structs of Data objects (classify.h) */
    gboolean lost;        /* some of what it added was lost, not reachable */
} Series;

/* What the repetitions lost of one loss record. */
typedef struct {
    guint64 bytes;
    guint64 blocks;
} Lost;

struct GlGrowthJudge {
    const GlRules *rules;
    GHashTable *series;   /* test and site key (owned) -> Series* (owned) */
    GHashTable *lost;     /* loss key (owned) -> Lost* (owned) */
};

static void series_free(gpointer data)
{
    Series *series = data;
    gl_test_free(series->test);
    gl_record_free(series->record);
    g_free(series);
}

void gl_growth_counts_clear(GlGrowthCounts *counts)
{
    if (counts->unmeasured != NULL)
        g_ptr_array_unref(counts->unmeasured);
    memset(counts, 0, sizeof *counts);
}

GlGrowthJudge *gl_growth_judge_new(const GlRules *rules)
{
    GlGrowthJudge *judge = g_new0(GlGrowthJudge, 1);
    judge->rules = rules;
    judge->series = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, series_free);
    judge->lost = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return judge;
}

void gl_growth_judge_free(GlGrowthJudge *judge)
{
    if (judge == NULL)
        return;
    g_hash_table_unref(judge->series);
    g_hash_table_unref(judge->lost);
    g_free(judge);
}

/* Returns: (transfer full): what tells @test apart from the others of its
 * process. */
static char *test_key(const GlTest *test)
{
    return g_strdup_printf("%s\t%s", test->name, test->location != NULL ? test->location : "");
}

/* Returns: (transfer full): @record's site, as its finding's merge key says
 * it, its kind aside: every kind of one site is one series. */
static char *site_key(const GlRecord *record)
{
    g_autofree char *key = gl_record_merge_key(record);
    const char *stack = strchr(key, '\n');
    return g_strdup(stack != NULL ? stack + 1 : key);
}

/* @record, a sample of a lost kind, grew: what it lost, by its loss key. */
static void note_lost(GlGrowthJudge *judge, const GlRecord *record)
{
    char *key = gl_record_loss_key(record);
    Lost *lost = g_hash_table_lookup(judge->lost, key);
    if (lost == NULL) {
        lost = g_new0(Lost, 1);
        g_hash_table_insert(judge->lost, key, lost);
    } else {
        g_free(key);
    }
    lost->bytes += (guint64) record->change_bytes;
    lost->blocks += record->change_blocks > 0 ? (guint64) record->change_blocks : 0;
}

gboolean gl_growth_lost_again(GlGrowthJudge *judge, GlRecord *record)
{
    if (g_hash_table_size(judge->lost) == 0 || record->leak_kind == GL_LEAK_NONE ||
        record->leak_kind == GL_LEAK_REACHABLE || !record->has_leak_size)
        return FALSE;
    g_autofree char *key = gl_record_loss_key(record);
    Lost *lost = g_hash_table_lookup(judge->lost, key);
    if (lost == NULL)
        return FALSE;
    if (lost->bytes >= record->leaked_bytes && lost->blocks >= record->leaked_blocks)
        return TRUE;
    record->leaked_bytes -= MIN(lost->bytes, record->leaked_bytes);
    record->leaked_blocks -= MIN(lost->blocks, record->leaked_blocks);
    return FALSE;
}

gboolean gl_growth_take(GlGrowthJudge *judge, GlClassifier *classifier, const GlProcess *process,
                        GlRecord *record, guint64 order)
{
    /* a memory error while a test ran again is one, as in its first run */
    if (record->leak_kind == GL_LEAK_NONE || record->at_exit || record->marker == NULL)
        return FALSE;
    GlMarker marker;
    if (gl_marker_read(record->marker, &marker) != GL_MARKER_GROWTH) {
        gl_marker_clear(&marker);
        return FALSE;
    }
    /* REP 0 measures where the test's runs again start from */
    if (marker.growth != GL_GROWTH_REPETITION || marker.count == 0 || !record->has_change ||
        (record->change_bytes == 0 && record->change_blocks == 0)) {
        gl_marker_clear(&marker);
        gl_record_free(record);
        return TRUE;
    }
    if (record->leak_kind != GL_LEAK_REACHABLE && record->change_bytes > 0)
        note_lost(judge, record);
    gboolean unplaced = FALSE;
    gl_classifier_set_every_kind(classifier, TRUE);
    GlVerdict verdict = gl_stacks_verdict(classifier, record, process, &unplaced);
    gl_classifier_set_every_kind(classifier, FALSE);
    if (verdict != GL_VERDICT_KEEP) {
        gl_marker_clear(&marker);
        gl_record_free(record);
        return TRUE;
    }
    g_autofree char *tkey = test_key(marker.test);
    g_autofree char *skey = site_key(record);
    char *key = g_strconcat(tkey, "\n", skey, NULL);
    Series *series = g_hash_table_lookup(judge->series, key);
    if (series == NULL) {
        series = g_new0(Series, 1);
        series->test = g_steal_pointer(&marker.test);
        series->order = order;
        series->held = gl_classifier_data_struct(classifier, record);
        g_hash_table_insert(judge->series, key, series);
    } else {
        g_free(key);
    }
    guint rep = (guint) marker.count;
    series->bytes[rep] += record->change_bytes;
    series->blocks[rep] += record->change_blocks;
    series->last = MAX(series->last, rep);
    series->lost |= record->leak_kind != GL_LEAK_REACHABLE &&
                    (record->change_bytes > 0 || record->change_blocks > 0);
    if (series->record == NULL || gl_record_compare_content(record, series->record) < 0) {
        gl_record_free(series->record);
        series->record = record;
    } else {
        gl_record_free(record);
    }
    gl_marker_clear(&marker);
    return TRUE;
}

/* ---- the statistic -------------------------------------------------------------- */

static gint compare_gint64(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
    return x < y ? -1 : x > y;
}

gboolean gl_growth_grows(const gint64 *bytes, const gint64 *blocks, guint repetitions,
                         guint64 min_bytes, guint64 *median)
{
    *median = 0;
    if (repetitions == 0)
        return FALSE;
    gboolean falls = FALSE, later = FALSE;
    for (guint r = 0; r < repetitions; r++) {
        falls |= bytes[r] < 0 || blocks[r] < 0;
        later |= r > 0 && (bytes[r] > 0 || blocks[r] > 0);
    }
    g_autofree gint64 *sorted = g_memdup2(bytes, repetitions * sizeof *bytes);
    qsort(sorted, repetitions, sizeof *sorted, compare_gint64);
    /* of an even number, the mean of the two in the middle */
    guint half = repetitions / 2;
    gint64 middle = repetitions % 2 == 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2;
    *median = middle > 0 ? (guint64) middle : 0;
    return !falls && later && *median >= min_bytes;
}

static gint64 add_clamped(gint64 a, gint64 b)
{
    gint64 sum;
    if (!__builtin_add_overflow(a, b, &sum))
        return sum;
    return b > 0 ? G_MAXINT64 : G_MININT64;
}

/* Returns: the repetitions @growth has a change of bytes and blocks for. */
static guint growth_repetitions(const GlGrowth *growth)
{
    return growth->bytes != NULL && growth->blocks != NULL ? growth->repetitions : 0;
}

/* "+800 bytes in +50 blocks": changes, signed (a repetition that added
 * nothing is "+0"), in English's numbers. */
static void append_change(GString *out, gint64 bytes, gint64 blocks)
{
    g_string_append_printf(out, "%+" G_GINT64_FORMAT " byte%s in %+" G_GINT64_FORMAT " block%s",
                           bytes, bytes == 1 || bytes == -1 ? "" : "s", blocks,
                           blocks == 1 || blocks == -1 ? "" : "s");
}

/* "+800 bytes in +50 blocks at each of 3 repetitions (series +800,
 * +800, +800), still reachable"; "+2400 bytes in +150 blocks over 3
 * repetitions (series +800, +1600, +0)" when they differ; "held by +50
 * Data objects a repetition that the test keeps" for the structs of Data
 * objects (their blocks are the objects); "some of it lost" when a
 * measure found some of it lost. The series is the bytes', which the
 * statistic judges (judge/growth.h). */
char *gl_growth_describe(const GlGrowth *growth)
{
    GString *message = g_string_new(NULL);
    guint k = growth_repetitions(growth);
    if (k == 0) {
        g_string_append(message, "no repetition measured");
        return g_string_free(message, FALSE);
    }
    gint64 bytes = 0, blocks = 0;
    gboolean steady = k > 0;
    for (guint i = 0; i < k; i++) {
        bytes = add_clamped(bytes, growth->bytes[i]);
        blocks = add_clamped(blocks, growth->blocks[i]);
        steady = steady && growth->bytes[i] == growth->bytes[0] &&
                 growth->blocks[i] == growth->blocks[0];
    }
    if (steady)
        bytes = growth->bytes[0], blocks = growth->blocks[0];
    append_change(message, bytes, blocks);
    g_string_append_printf(message, " %s %u repetition%s (series ",
                           steady && k > 1 ? "at each of" : steady ? "at" : "over", k,
                           k == 1 ? "" : "s");
    for (guint i = 0; i < k; i++)
        g_string_append_printf(message, "%s%+" G_GINT64_FORMAT, i > 0 ? ", " : "",
                               growth->bytes[i]);
    g_string_append_c(message, ')');
    if (growth->held)
        g_string_append_printf(message, ", held by %+" G_GINT64_FORMAT " Data object%s%s that "
                               "the test keeps", blocks, blocks == 1 || blocks == -1 ? "" : "s",
                               steady && k > 1 ? " a repetition" : "");
    if (growth->lost)
        g_string_append(message, ", some of it lost");
    else if (!growth->held)
        g_string_append(message, ", still reachable");
    return g_string_free(message, FALSE);
}

/* ---- the end of an input --------------------------------------------------------------- */

/* One frame of a target as the site's identity sees it: its function (its
 * object, unnamed). Not its line: a sanitizer's growth sites are named
 * from the objects, with no line (read/symbolize.h), where its leak
 * report gives one. */
static void frame_key(GString *out, const GlFrame *frame)
{
    g_string_append(out, frame->fn != NULL ? frame->fn
                                           : frame->obj != NULL ? gl_base_name(frame->obj) : "?");
    g_string_append_c(out, '\n');
}

/* Returns: (transfer full) (nullable): the target's frames of @record's
 * stack, from its innermost to its outermost: the site whatever the engine
 * unwound below it (a runtime's interceptor, the function the target
 * called); NULL when none is a target's. */
static char *target_key(const GlRecord *record)
{
    const GlStack *stack = &record->stack;
    guint first = 0;
    while (first < stack->n_frames && !stack->frames[first].in_target)
        first++;
    if (first == stack->n_frames)
        return NULL;
    guint last = gl_stack_relevant_frames(stack);
    GString *key = g_string_new(NULL);
    for (guint i = first; i < last; i++)
        frame_key(key, &stack->frames[i]);
    return g_string_free(key, FALSE);
}

/* In the repetitions of a test the helper said it could not measure. */
#define UNMEASURED G_MAXUINT

/* What the markers of @process say: the repetitions each test ran
 * (test key -> GUINT_TO_POINTER, UNMEASURED for a test the helper could
 * not measure, whatever it measured before), into @repetitions, and the
 * counts. */
static void read_markers(const GlProcess *process, GHashTable *repetitions,
                         GlGrowthCounts *counts)
{
    counts->unmeasured = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; process->growth_markers != NULL && i < process->growth_markers->len; i++) {
        GlMarker marker;
        if (gl_marker_read(g_ptr_array_index(process->growth_markers, i), &marker) !=
            GL_MARKER_GROWTH) {
            gl_marker_clear(&marker);
            continue;
        }
        counts->asked = TRUE;
        if (marker.growth == GL_GROWTH_MEASURED) {
            counts->finished = TRUE;
        } else if (marker.growth == GL_GROWTH_UNMEASURED) {
            /* a test that ended its runs part way (exit!, a fork that
             * returned in the child): what it measured is no series */
            g_hash_table_insert(repetitions, test_key(marker.test), GUINT_TO_POINTER(UNMEASURED));
            g_ptr_array_add(counts->unmeasured, g_strdup_printf(
                "%s%s%s%s: %s", marker.test->name, marker.test->location != NULL ? " (" : "",
                marker.test->location != NULL ? marker.test->location : "",
                marker.test->location != NULL ? ")" : "",
                *marker.why != '\0' ? marker.why : "no reason given"));
        } else if (marker.growth == GL_GROWTH_REPETITION && marker.count > 0) {
            char *key = test_key(marker.test);
            guint before = GPOINTER_TO_UINT(g_hash_table_lookup(repetitions, key));
            if (before != UNMEASURED)
                g_hash_table_insert(repetitions, key,
                                    GUINT_TO_POINTER(MAX(before, (guint) marker.count)));
            else
                g_free(key);
        }
        gl_marker_clear(&marker);
    }
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, repetitions);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        guint k = GPOINTER_TO_UINT(value);
        if (k == UNMEASURED || k == 0)
            continue;
        counts->measured++;
        counts->repetitions = MAX(counts->repetitions, k);
    }
}

/* Returns: (transfer full): the target keys of the leaks @findings hold. */
static GHashTable *leak_sites(GlFindings *findings)
{
    GHashTable *sites = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GPtrArray) all = gl_findings_list(findings);
    for (guint i = 0; i < all->len; i++) {
        const GlFinding *finding = g_ptr_array_index(all, i);
        for (guint s = 0; finding->sites != NULL && s < finding->sites->len; s++) {
            const GlRecord *record = g_ptr_array_index(finding->sites, s);
            char *key = record->leak_kind != GL_LEAK_NONE ? target_key(record) : NULL;
            if (key != NULL)
                g_hash_table_add(sites, key);
        }
    }
    return sites;
}

static gint compare_series(gconstpointer a, gconstpointer b)
{
    const Series *x = *(const Series *const *) a, *y = *(const Series *const *) b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Makes @series, which grew over @k repetitions, a finding of @findings. */
static void add_finding(GlFindings *findings, Series *series, guint k, guint64 median)
{
    GlGrowth *growth = g_new0(GlGrowth, 1);
    growth->repetitions = k;
    growth->bytes = g_memdup2(series->bytes + 1, k * sizeof(gint64));
    growth->blocks = g_memdup2(series->blocks + 1, k * sizeof(gint64));
    growth->median_bytes = median;
    growth->held = series->held;
    growth->lost = series->lost;
    GlRecord *record = g_steal_pointer(&series->record);
    record->kind = gl_record_intern(record, GL_KIND_GROWTH);
    /* no loss: never counted with the leaks */
    record->leak_kind = GL_LEAK_NONE;
    g_autofree char *what = gl_growth_describe(growth);
    record->what = gl_record_intern(record, what);
    gint64 pid = record->pid;
    gboolean certain = !record->uncertain;
    GlFinding *finding = gl_finding_new(record, series->order);
    finding->growth = growth;
    finding->occurrences = 1;
    finding->certain = certain;
    gl_pids_add(finding->pids, pid);
    g_ptr_array_add(finding->tests, gl_test_copy(series->test));
    for (guint r = 0; r < k; r++) {
        finding->total_bytes = gl_add_saturating(finding->total_bytes, (guint64) growth->bytes[r]);
        finding->total_blocks = gl_add_saturating(finding->total_blocks,
                                                  (guint64) growth->blocks[r]);
    }
    finding->direct_bytes = finding->total_bytes;
    gl_findings_add_finding(findings, finding);
}

void gl_growth_finish(GlGrowthJudge *judge, const GlProcess *process, GlFindings *findings,
                      GlGrowthCounts *counts)
{
    memset(counts, 0, sizeof *counts);
    g_autoptr(GHashTable) repetitions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                                              NULL);
    read_markers(process, repetitions, counts);
    if (g_hash_table_size(judge->series) == 0)
        return;
    counts->asked = TRUE;
    g_autoptr(GHashTable) leaks = leak_sites(findings);
    g_autoptr(GPtrArray) all = g_ptr_array_new();
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, judge->series);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        g_ptr_array_add(all, value);
    g_ptr_array_sort(all, compare_series);
    guint64 min_bytes = gl_rules_get_growth_min_bytes(judge->rules);
    for (guint i = 0; i < all->len; i++) {
        Series *series = g_ptr_array_index(all, i);
        g_autofree char *key = test_key(series->test);
        /* the repetitions its markers say it ran, those after its last
         * sample adding nothing */
        guint said = GPOINTER_TO_UINT(g_hash_table_lookup(repetitions, key));
        if (said == UNMEASURED)
            continue;
        guint k = MAX(said, series->last);
        guint64 median = 0;
        if (!gl_growth_grows(series->bytes + 1, series->blocks + 1, k, min_bytes, &median))
            continue;
        g_autofree char *site = target_key(series->record);
        if (site != NULL && g_hash_table_contains(leaks, site))
            continue;  /* the leak says it */
        add_finding(findings, series, k, median);
    }
    g_hash_table_remove_all(judge->series);
}
