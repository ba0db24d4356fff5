/* Growth findings (--growth) in every format, as a user or a program
 * reads them: built by hand as the judge builds them (a finding of kind
 * Growth, its series in GlFinding.growth, its test first in tests), a
 * steady series, an unequal one (a doubling table), one held by the test's
 * Data objects, one partly lost, and one site grown by two tests. */
#include "testutil.h"
#include "gemleak/base/json_format.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/baseline.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/group.h"
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"

#include <string.h>

#include <json-glib/json-glib.h>

#define ROOT "/tmp/gemleak-fixtures"
#define TEST_FILE ROOT "/test/cache_test.rb"

/* A site of the extension: malloc, called by cache_add (growth.c:12),
 * called by cache_push (growth.c:30), which Ruby called. @function names
 * the allocating function, so that two sites can differ. */
static GlRecord *site_record(const char *function, guint line, GlLeakKind leak_kind)
{
    g_autofree char *inner = g_strdup_printf("%s@" ROOT "/growth/growth.so:growth.c:%u",
                                             function, line);
    GlRecord *record = gl_test_record(GL_KIND_GROWTH, "malloc@/vg.so", inner,
                                      "cache_push@" ROOT "/growth/growth.so:growth.c:30",
                                      "rb_vm_exec@/usr/lib/libruby.so.3.4", NULL);
    /* what the judge's samples were: a reachable (or lost) kind, or none */
    record->leak_kind = leak_kind;
    for (guint i = 1; i <= 2; i++) {
        record->stack.frames[i].in_target = TRUE;
        record->stack.frames[i].dir = gl_record_intern(record, ROOT "/growth");
    }
    return record;
}

static gint compare_changes(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
    return x < y ? -1 : x > y;
}

/* A growth finding of @k repetitions, @bytes and @blocks each one's change. */
static GlFinding *growth_finding(GlRecord *record, guint k, const gint64 *bytes,
                                 const gint64 *blocks, gboolean held, gboolean lost,
                                 const char *test, guint test_line, const char *fingerprint)
{
    GlFinding *finding = gl_finding_new(record, 0);
    finding->occurrences = 1;
    gl_pids_add(finding->pids, 100);
    finding->certain = TRUE;
    finding->fingerprint = g_strdup(fingerprint);
    GlGrowth *growth = g_new0(GlGrowth, 1);
    growth->repetitions = k;
    growth->bytes = g_memdup2(bytes, k * sizeof(gint64));
    growth->blocks = g_memdup2(blocks, k * sizeof(gint64));
    g_autoptr(GArray) sorted = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_array_append_vals(sorted, bytes, k);
    g_array_sort(sorted, compare_changes);
    growth->median_bytes = k > 0 ? (guint64) MAX(g_array_index(sorted, gint64, k / 2), 0) : 0;
    growth->held = held;
    growth->lost = lost;
    finding->growth = growth;
    /* what the judge may put there: the sums (unsigned: an odd series wraps) */
    guint64 total = 0, total_blocks = 0;
    for (guint i = 0; i < k; i++)
        total += (guint64) bytes[i], total_blocks += (guint64) blocks[i];
    finding->total_bytes = total;
    finding->direct_bytes = total;
    finding->total_blocks = total_blocks;
    g_autofree char *location = g_strdup_printf(TEST_FILE ":%u", test_line);
    g_ptr_array_add(finding->tests, gl_test_new(test, location));
    return finding;
}

static void finding_free(gpointer data)
{
    GlFinding *finding = data;
    g_ptr_array_unref(finding->sites);  /* its record */
    g_array_unref(finding->pids);
    g_ptr_array_unref(finding->tests);
    g_free(finding->fingerprint);
    gl_growth_free(finding->growth);
    g_free(finding);
}

static const gint64 STEADY_BYTES[] = { 800, 800, 800 }, STEADY_BLOCKS[] = { 50, 50, 50 };
static const gint64 DOUBLING_BYTES[] = { 800, 1600, 0 }, DOUBLING_BLOCKS[] = { 50, 100, 0 };
static const gint64 HELD_BYTES[] = { 4800, 4800, 4800 }, HELD_BLOCKS[] = { 50, 50, 50 };
static const gint64 LOST_BYTES[] = { 32, 32, 32 }, LOST_BLOCKS[] = { 1, 1, 1 };

/* The four series, each of its own site and test; the samples' leak kind
 * differs, as whatever the judge leaves on the record must not matter. */
static const struct {
    const char *function;
    guint line;
    GlLeakKind samples;
    const gint64 *bytes;
    const gint64 *blocks;
    gboolean held;
    gboolean lost;
    const char *test;
    guint test_line;
    const char *fingerprint;
} SERIES[] = {
    { "cache_add", 12, GL_LEAK_NONE, STEADY_BYTES, STEADY_BLOCKS, FALSE, FALSE,
      "CacheTest#test_add", 6, "1111111111111111" },
    { "table_insert", 20, GL_LEAK_REACHABLE, DOUBLING_BYTES, DOUBLING_BLOCKS, FALSE, FALSE,
      "TableTest#test_insert", 9, "2222222222222222" },
    { "wrap_new", 40, GL_LEAK_REACHABLE, HELD_BYTES, HELD_BLOCKS, TRUE, FALSE,
      "WrapTest#test_wrap", 14, "3333333333333333" },
    { "journal_grow", 50, GL_LEAK_DEFINITE, LOST_BYTES, LOST_BLOCKS, FALSE, TRUE,
      "JournalTest#test_append", 21, "4444444444444444" },
};

static GlFinding *series_finding(guint i)
{
    return growth_finding(site_record(SERIES[i].function, SERIES[i].line, SERIES[i].samples), 3,
                          SERIES[i].bytes, SERIES[i].blocks, SERIES[i].held, SERIES[i].lost,
                          SERIES[i].test, SERIES[i].test_line, SERIES[i].fingerprint);
}

static GlFinding *steady(void) { return series_finding(0); }
static GlFinding *doubling(void) { return series_finding(1); }
static GlFinding *held(void) { return series_finding(2); }
static GlFinding *lost(void) { return series_finding(3); }

typedef struct {
    GlAnalysis *analysis;
    GlGateResult result;
    GPtrArray *findings;   /* GlFinding*, owned */
    GlReportContext context;
} Report;

/* A report of @findings (consumed, NULL-terminated) over a clean run's
 * analysis; the gate failed unless @passed. */
static void report_prepare(Report *report, gboolean passed, GlFinding *first, ...)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "growth", NULL));
    g_autofree char *path = gl_test_fixture("xml/clean.xml");
    const char *paths[] = { path, NULL };
    report->analysis = gl_analyze(paths, rules, 1);
    report->findings = g_ptr_array_new_with_free_func(finding_free);
    va_list ap;
    va_start(ap, first);
    for (GlFinding *f = first; f != NULL; f = va_arg(ap, GlFinding *))
        g_ptr_array_add(report->findings, f);
    va_end(ap);
    GlGate gate;
    gl_gate_init(&gate);
    gl_gate_evaluate(&gate, report->findings, 0, 0, FALSE, NULL, &report->result);
    report->result.failed = !passed;
    static const char *targets[] = { "growth", NULL };
    GlReportContext context = {
        .analysis = report->analysis,
        .findings = report->findings,
        .gate = &report->result,
        .targets = targets,
        .project_root = ROOT,
        .frames_after = G_MAXUINT,
        .verdict_elsewhere = TRUE,
    };
    report->context = context;
}

static void report_clear(Report *report)
{
    gl_gate_result_clear(&report->result);
    g_ptr_array_unref(report->findings);
    gl_analysis_free(report->analysis);
}

/* Returns: (transfer full): the @format report. */
static char *write_format(Report *report, const char *format)
{
    char *buffer = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buffer, &size);
    /* --write-baseline's is no --format */
    const GlReporter *reporter = strcmp(format, "baseline") == 0 ? &gl_report_baseline
                                                                 : gl_reporter_find(format);
    ck_assert(gl_report_write(reporter, &report->context, out, "memory", NULL));
    fclose(out);
    return buffer;
}

/* The spec's words, steady and not, held and lost, whatever leak kind the
 * samples had. */
START_TEST(test_growth_messages)
{
    static const struct {
        GlFinding *(*make)(void);
        const char *message;
    } cases[] = {
        { steady, "growth: +800 bytes in +50 blocks at each of 3 repetitions (series +800, +800, "
                  "+800), still reachable" },
        { doubling, "growth: +2400 bytes in +150 blocks over 3 repetitions (series +800, +1600, "
                    "+0), still reachable" },
        { held, "growth: +4800 bytes in +50 blocks at each of 3 repetitions (series +4800, "
                "+4800, +4800), held by +50 Data objects a repetition that the test keeps" },
        { lost, "growth: +32 bytes in +1 block at each of 3 repetitions (series +32, +32, +32), "
                "some of it lost" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GlFinding *finding = cases[i].make();
        g_autofree char *message = gl_finding_message(finding);
        ck_assert_str_eq(message, cases[i].message);
        finding_free(finding);
    }
    /* held, unequal: the objects in all */
    static const gint64 bytes[] = { 96, 0, 192 }, blocks[] = { 1, 0, 2 };
    GlFinding *finding = growth_finding(site_record("wrap_new", 40, GL_LEAK_NONE), 3, bytes,
                                        blocks, TRUE, TRUE, "WrapTest#test_more", 3, "5");
    g_autofree char *message = gl_finding_message(finding);
    ck_assert_str_eq(message, "growth: +288 bytes in +3 blocks over 3 repetitions (series +96, "
                              "+0, +192), held by +3 Data objects that the test keeps, some of "
                              "it lost");
    finding_free(finding);
}
END_TEST

START_TEST(test_text_report)
{
    Report report;
    report_prepare(&report, FALSE, doubling(), steady(), held(), lost(), NULL);
    g_autofree char *text = write_format(&report, "text");
    /* the message, the test with its file:line, the site's frames */
    gl_assert_line(text, "^growth: \\+800 bytes in \\+50 blocks at each of 3 repetitions "
                         "\\(series \\+800, \\+800, \\+800\\), still reachable$");
    gl_assert_line(text, "^grew in CacheTest#test_add \\(test/cache_test\\.rb:6\\)$");
    gl_assert_line(text, "^  malloc \\(at /vg\\.so\\)$");
    gl_assert_line(text, "^ \\*cache_add \\(growth/growth\\.c:12\\)$");
    gl_assert_line(text, "^ \\*cache_push \\(growth/growth\\.c:30\\)$");
    gl_assert_line(text, "^growth: \\+2400 bytes in \\+150 blocks over 3 repetitions "
                         "\\(series \\+800, \\+1600, \\+0\\), still reachable$");
    gl_assert_line(text, "^grew in TableTest#test_insert \\(test/cache_test\\.rb:9\\)$");
    gl_assert_line(text, ", held by \\+50 Data objects a repetition that the test keeps$");
    gl_assert_line(text, "^growth: \\+32 bytes in \\+1 block at each .*, some of it lost$");
    /* counted apart from leaks and errors, each site its own entry */
    gl_assert_line(text, "^gemleak: 1 process checked.*, \\d+ errors? read: 4 sites grew(,|$)");
    gl_assert_no_line(text, "call path");
    gl_assert_no_line(text, "lost in|first lost|first seen");
    report_clear(&report);

    /* beside a leak: its own count, and its own group */
    GlRecord *leak = gl_test_record("Leak_DefinitelyLost", "malloc@/vg.so",
                                    "cache_add@" ROOT "/growth/growth.so:growth.c:12",
                                    "cache_push@" ROOT "/growth/growth.so:growth.c:30", NULL);
    leak->stack.frames[1].in_target = leak->stack.frames[2].in_target = TRUE;
    GlFinding *leaked = gl_finding_new(leak, 1);
    leaked->occurrences = 2;
    leaked->total_bytes = leaked->direct_bytes = 20;
    leaked->total_blocks = 2;
    gl_pids_add(leaked->pids, 100);
    leaked->certain = TRUE;
    leaked->fingerprint = g_strdup("9999999999999999");
    report_prepare(&report, FALSE, leaked, steady(), NULL);
    g_autofree char *both = write_format(&report, "text");
    gl_assert_line(both, "^gemleak: .* read: 1 finding \\(2 occurrences\\), 1 site grew(,|$)");
    gl_assert_line(both, "^20 bytes in 2 blocks are definitely lost \\(2 occurrences in 1 "
                         "process\\)$");
    gl_assert_line(both, "^growth: \\+800 bytes");
    report_clear(&report);
}
END_TEST

/* One site that grew in two tests: two findings, one site; they read as
 * one bug of two tests, never as leaks. */
START_TEST(test_two_tests)
{
    GlFinding *other = growth_finding(site_record("cache_add", 12, GL_LEAK_NONE), 3,
                                      STEADY_BYTES, STEADY_BLOCKS, FALSE, FALSE,
                                      "CacheTest#test_add_again", 11, "1111111111111111");
    Report report;
    report_prepare(&report, FALSE, steady(), other, NULL);
    g_autoptr(GPtrArray) groups = gl_findings_group(report.findings);
    ck_assert_uint_eq(groups->len, 1);
    g_autofree char *text = write_format(&report, "text");
    gl_assert_line(text, "^growth in 2 call paths, in 2 tests: \\+1600 bytes a repetition "
                         "\\(their medians summed\\)$");
    gl_assert_line(text, "^one bug: grew in cache_add, entered through cache_push$");
    gl_assert_line(text, "^call path 1: growth: \\+800 bytes in \\+50 blocks at each of 3 "
                         "repetitions");
    gl_assert_line(text, "^grew in CacheTest#test_add \\(test/cache_test\\.rb:6\\)$");
    gl_assert_line(text, "^call path 2: growth: \\+800 bytes .*still reachable: cache_add "
                         "\\(growth/growth\\.c:12\\) < cache_push \\(growth/growth\\.c:30\\); "
                         "grew in CacheTest#test_add_again \\(test/cache_test\\.rb:11\\)$");
    gl_assert_line(text, "^gemleak: .* read: 1 site grew \\(2 findings\\)(,|$)");
    report_clear(&report);
}
END_TEST

/* Growth is a kind class of its own: a leak and a growth of one site,
 * one function, one entry point, stay two groups. */
START_TEST(test_growth_never_groups_with_leaks)
{
    static const GlLeakKind kinds[] = { GL_LEAK_NONE, GL_LEAK_REACHABLE, GL_LEAK_DEFINITE };
    for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
        GlRecord *leak = gl_test_record("Leak_StillReachable", "malloc@/vg.so",
                                        "cache_add@" ROOT "/growth/growth.so:growth.c:12",
                                        "cache_push@" ROOT "/growth/growth.so:growth.c:30", NULL);
        leak->stack.frames[1].in_target = leak->stack.frames[2].in_target = TRUE;
        if (kinds[k] == GL_LEAK_DEFINITE) {
            leak->kind = gl_record_intern(leak, "Leak_DefinitelyLost");
            leak->leak_kind = GL_LEAK_DEFINITE;
        }
        GlFinding *leaked = gl_finding_new(leak, 1);
        leaked->occurrences = 1;
        leaked->certain = TRUE;
        gl_pids_add(leaked->pids, 100);
        GlFinding *grew = growth_finding(site_record("cache_add", 12, kinds[k]), 3, STEADY_BYTES,
                                         STEADY_BLOCKS, FALSE, FALSE, "CacheTest#test_add", 6,
                                         "1111111111111111");
        g_autoptr(GPtrArray) findings = g_ptr_array_new_with_free_func(finding_free);
        g_ptr_array_add(findings, leaked);
        g_ptr_array_add(findings, grew);
        g_autoptr(GPtrArray) groups = gl_findings_group(findings);
        ck_assert_msg(groups->len == 2, "leak kind %d: %u groups", kinds[k], groups->len);
    }
}
END_TEST

static JsonObject *json_root(JsonParser *parser, const char *text)
{
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_data(parser, text, -1, &error), "%s",
                  error != NULL ? error->message : "?");
    return json_node_get_object(json_parser_get_root(parser));
}

static JsonObject *finding_with_fingerprint(JsonArray *findings, const char *fingerprint)
{
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        if (g_strcmp0(json_object_get_string_member(finding, GL_MEMBER_FINGERPRINT),
                      fingerprint) == 0)
            return finding;
    }
    ck_abort_msg("no finding %s", fingerprint);
    return NULL;
}

static void assert_series(JsonObject *growth, const char *member, const gint64 *values, guint k)
{
    JsonArray *array = json_object_get_array_member(growth, member);
    ck_assert_uint_eq(json_array_get_length(array), k);
    for (guint i = 0; i < k; i++)
        ck_assert_int_eq(json_array_get_int_element(array, i), values[i]);
}

START_TEST(test_json_report)
{
    Report report;
    report_prepare(&report, FALSE, doubling(), held(), lost(), NULL);
    g_autofree char *text = write_format(&report, "json");
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = json_root(parser, text);
    ck_assert_int_eq(json_object_get_int_member(root, GL_MEMBER_REPORT_VERSION), 2);
    JsonArray *findings = json_object_get_array_member(root, GL_MEMBER_FINDINGS);
    ck_assert_uint_eq(json_array_get_length(findings), 3);

    JsonObject *table = finding_with_fingerprint(findings, "2222222222222222");
    ck_assert_str_eq(json_object_get_string_member(table, "kind"), "Growth");
    ck_assert_str_eq(json_object_get_string_member(table, "leak_kind"), "growth");
    ck_assert_str_eq(json_object_get_string_member(table, "message"),
                     "growth: +2400 bytes in +150 blocks over 3 repetitions (series +800, "
                     "+1600, +0), still reachable");
    JsonObject *growth = json_object_get_object_member(table, "growth");
    ck_assert_int_eq(json_object_get_int_member(growth, "repetitions"), 3);
    assert_series(growth, "bytes", DOUBLING_BYTES, 3);
    assert_series(growth, "blocks", DOUBLING_BLOCKS, 3);
    ck_assert_int_eq(json_object_get_int_member(growth, "median_bytes"), 800);
    ck_assert(!json_object_get_boolean_member(growth, "held"));
    ck_assert(!json_object_get_boolean_member(growth, "lost"));
    JsonObject *test = json_array_get_object_element(
        json_object_get_array_member(table, "tests"), 0);
    ck_assert_str_eq(json_object_get_string_member(test, "name"), "TableTest#test_insert");
    ck_assert_str_eq(json_object_get_string_member(test, "location"), "test/cache_test.rb:9");
    JsonObject *location = json_object_get_object_member(table, "location");
    ck_assert_str_eq(json_object_get_string_member(location, "fn"), "table_insert");
    ck_assert_str_eq(json_object_get_string_member(location, "file"), "growth/growth.c");
    ck_assert_str_eq(json_object_get_string_member(location, "stack"), "allocation");

    growth = json_object_get_object_member(finding_with_fingerprint(findings, "3333333333333333"),
                                           "growth");
    ck_assert(json_object_get_boolean_member(growth, "held"));
    growth = json_object_get_object_member(finding_with_fingerprint(findings, "4444444444444444"),
                                           "growth");
    ck_assert(json_object_get_boolean_member(growth, "lost"));
    /* its group too says growth */
    JsonObject *group = json_array_get_object_element(
        json_object_get_array_member(root, GL_MEMBER_GROUPS), 0);
    ck_assert_str_eq(json_object_get_string_member(group, "leak_kind"), "growth");
    JsonObject *summary = json_object_get_object_member(root, GL_MEMBER_SUMMARY);
    ck_assert_int_eq(json_object_get_int_member(summary, "growth"), 3);
    ck_assert_int_eq(json_object_get_int_member(summary, "findings"), 3);
    report_clear(&report);

    /* a leak has no "growth" member */
    Report plain;
    report_prepare(&plain, FALSE, NULL);
    g_autofree char *none = write_format(&plain, "json");
    g_autoptr(JsonParser) none_parser = json_parser_new();
    JsonObject *none_root = json_root(none_parser, none);
    ck_assert_int_eq(json_object_get_int_member(
                         json_object_get_object_member(none_root, GL_MEMBER_SUMMARY), "growth"), 0);
    report_clear(&plain);
}
END_TEST

START_TEST(test_sarif_report)
{
    Report report;
    report_prepare(&report, FALSE, steady(), held(), NULL);
    g_autofree char *text = write_format(&report, "sarif");
    gl_test_assert_sarif_valid(text);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *run = json_array_get_object_element(
        json_object_get_array_member(json_root(parser, text), "runs"), 0);
    JsonArray *results = json_object_get_array_member(run, "results");
    ck_assert_uint_eq(json_array_get_length(results), 2);
    gboolean seen_growth = FALSE, seen_held = FALSE;
    for (guint i = 0; i < 2; i++) {
        JsonObject *result = json_array_get_object_element(results, i);
        const char *rule = json_object_get_string_member(result, "ruleId");
        const char *level = json_object_get_string_member(result, "level");
        const char *message = json_object_get_string_member(
            json_object_get_object_member(result, "message"), "text");
        JsonObject *physical = json_object_get_object_member(
            json_array_get_object_element(json_object_get_array_member(result, "locations"), 0),
            "physicalLocation");
        ck_assert_str_eq(json_object_get_string_member(
                             json_object_get_object_member(physical, "artifactLocation"), "uri"),
                         "growth/growth.c");
        if (strcmp(rule, "Growth") == 0) {
            seen_growth = TRUE;
            ck_assert_str_eq(level, "error");
            ck_assert_str_eq(message, "growth: +800 bytes in +50 blocks at each of 3 "
                                      "repetitions (series +800, +800, +800), still reachable; "
                                      "grew in CacheTest#test_add (test/cache_test.rb:6)");
            ck_assert_int_eq(json_object_get_int_member(
                                 json_object_get_object_member(physical, "region"), "startLine"),
                             12);
        } else {
            seen_held = TRUE;
            ck_assert_str_eq(rule, "GrowthHeld");
            ck_assert_str_eq(level, "note");
            ck_assert(g_str_has_prefix(message, "growth: +4800 bytes"));
        }
    }
    ck_assert(seen_growth && seen_held);
    /* a rule each, the held one a note by default */
    JsonArray *rules = json_object_get_array_member(
        json_object_get_object_member(json_object_get_object_member(run, "tool"), "driver"),
        "rules");
    ck_assert_uint_eq(json_array_get_length(rules), 2);
    for (guint i = 0; i < 2; i++) {
        JsonObject *rule = json_array_get_object_element(rules, i);
        const char *level = json_object_get_string_member(
            json_object_get_object_member(rule, "defaultConfiguration"), "level");
        ck_assert_str_eq(level, strcmp(json_object_get_string_member(rule, "id"), "GrowthHeld")
                                        == 0 ? "note" : "error");
    }
    report_clear(&report);
}
END_TEST

START_TEST(test_junit_report)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *xsd = gl_test_project_file("tests/schemas/junit.xsd");
    Report report;
    report_prepare(&report, FALSE, steady(), NULL);
    g_autofree char *xml = write_format(&report, "junit");
    g_autofree char *path = g_build_filename(dir, "junit.xml", NULL);
    gl_test_write(path, xml, -1);
    const char *argv[] = { "xmllint", "--noout", "--schema", xsd, path, NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn(argv, NULL, &err) == 0, "JUnit report does not validate:\n%s", err);
    /* the case of its test, failed */
    gl_assert_line(xml, "<testcase name=\"CacheTest#test_add: growth in cache_add "
                        "\\(growth/growth\\.c:12\\) via cache_push \\(growth/growth\\.c:30\\)\" "
                        "classname=\"gemleak\\.growth\" time=\"0\">");
    gl_assert_line(xml, "<failure message=\"growth: \\+800 bytes in \\+50 blocks at each of 3 "
                        "repetitions \\(series \\+800, \\+800, \\+800\\), still reachable\" "
                        "type=\"Growth\">");
    gl_assert_line(xml, "^grew in CacheTest#test_add \\(test/cache_test\\.rb:6\\)$");
    gl_assert_line(xml, "^ \\*cache_add \\(growth/growth\\.c:12\\)$");
    report_clear(&report);

    /* held, the gate passed: skipped, saying what would fail on it */
    report_prepare(&report, TRUE, held(), NULL);
    g_autofree char *passed = write_format(&report, "junit");
    gl_assert_line(passed, "<testcase name=\"WrapTest#test_wrap: held growth in wrap_new ");
    gl_assert_line(passed, "<skipped message=\"held by Data objects the test keeps: --fail-on "
                           "growth-held fails on it\">");
    report_clear(&report);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_github_report)
{
    Report report;
    report_prepare(&report, FALSE, steady(), NULL);
    g_autofree char *text = write_format(&report, "github");
    gl_assert_line(text, "^::error file=growth/growth\\.c,line=12,title=gemleak%3A growth in "
                         "cache_add \\(growth/growth\\.c%3A12\\) via cache_push "
                         "\\(growth/growth\\.c%3A30\\)::growth: \\+800 bytes in \\+50 blocks at "
                         "each of 3 repetitions \\(series \\+800, \\+800, \\+800\\), still "
                         "reachable%0Agrew in CacheTest#test_add \\(test/cache_test\\.rb:6\\)"
                         "%0A  malloc \\(at /vg\\.so\\)%0A \\*cache_add");
    report_clear(&report);

    /* the gate passed: a warning */
    report_prepare(&report, TRUE, held(), NULL);
    g_autofree char *warning = write_format(&report, "github");
    gl_assert_line(warning, "^::warning file=growth/growth\\.c,line=40,title=gemleak%3A held "
                            "growth in wrap_new ");
    report_clear(&report);
}
END_TEST

/* A Valgrind suppression cannot silence growth (gemleak measures it from
 * reachable leak checks); a baseline does, by its fingerprint. */
START_TEST(test_suppressions_and_baseline)
{
    Report report;
    report_prepare(&report, FALSE, steady(), NULL);
    g_autofree char *supp = write_format(&report, "supp");
    gl_assert_line(supp, "^# growth in cache_add \\(growth\\.c:12\\) via cache_push "
                         "\\(growth\\.c:30\\): growth: \\+800 bytes");
    gl_assert_line(supp, "^# \\(growth is gemleak's measure, not a Valgrind error: no "
                         "suppression silences it; --write-baseline keeps it known\\)$");
    gl_assert_no_line(supp, "^\\{$");
    gl_assert_no_line(supp, "Memcheck:");
    report.context.suppressions = TRUE;
    g_autofree char *text = write_format(&report, "text");
    gl_assert_line(text, "^\\(growth is gemleak's measure, not a Valgrind error");
    gl_assert_no_line(text, "Memcheck:");

    g_autofree char *baseline_text = write_format(&report, "baseline");
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *entry = json_array_get_object_element(
        json_object_get_array_member(json_root(parser, baseline_text), GL_MEMBER_FINDINGS), 0);
    ck_assert_str_eq(json_object_get_string_member(entry, "kind"), "Growth");
    ck_assert_str_eq(json_object_get_string_member(entry, "location"), "growth/growth.c:12");
    g_autoptr(GError) error = NULL;
    g_autoptr(GlBaseline) baseline = gl_baseline_load_from_data(baseline_text,
                                                                strlen(baseline_text),
                                                                "baseline", &error);
    ck_assert_msg(baseline != NULL, "%s", error != NULL ? error->message : "?");
    ck_assert(gl_baseline_knows(baseline, "1111111111111111"));
    /* the JSON report, as a baseline, too */
    g_autofree char *json = write_format(&report, "json");
    g_autoptr(GlBaseline) from_json = gl_baseline_load_from_data(json, strlen(json), "report",
                                                                 &error);
    ck_assert_msg(from_json != NULL, "%s", error != NULL ? error->message : "?");
    ck_assert(gl_baseline_knows(from_json, "1111111111111111"));
    report_clear(&report);
}
END_TEST

/* Every format over a growth finding of odd shape: no repetition, a
 * series of extremes, no frame in the extension, no test. */
START_TEST(test_every_format_takes_odd_growth)
{
    static const gint64 extremes[] = { G_MAXINT64, G_MAXINT64, G_MININT64 };
    GlFinding *wild = growth_finding(site_record("cache_add", 12, GL_LEAK_NONE), 3, extremes,
                                     extremes, TRUE, TRUE, "T", 1, "6");
    g_ptr_array_set_size(wild->tests, 0);
    GlFinding *empty = growth_finding(gl_test_record(GL_KIND_GROWTH, "malloc@/vg.so", NULL), 0,
                                      NULL, NULL, FALSE, FALSE, "T", 1, "7");
    g_autofree char *message = gl_finding_message(empty);
    ck_assert_str_eq(message, "growth: no repetition measured");
    Report report;
    report_prepare(&report, FALSE, wild, empty, NULL);
    for (const GlReporter *const *r = gl_reporters(); *r != NULL; r++) {
        g_autofree char *text = write_format(&report, (*r)->name);
        ck_assert_ptr_nonnull(text);
    }
    g_autofree char *baseline = write_format(&report, "baseline");
    ck_assert_ptr_nonnull(baseline);
    report_clear(&report);
}
END_TEST

Suite *gl_growth_report_suite(void)
{
    Suite *suite = suite_create("growth report");
    TCase *tc = tcase_create("growth report");
    tcase_add_test(tc, test_growth_messages);
    tcase_add_test(tc, test_text_report);
    tcase_add_test(tc, test_two_tests);
    tcase_add_test(tc, test_growth_never_groups_with_leaks);
    tcase_add_test(tc, test_json_report);
    tcase_add_test(tc, test_sarif_report);
    tcase_add_test(tc, test_junit_report);
    tcase_add_test(tc, test_github_report);
    tcase_add_test(tc, test_suppressions_and_baseline);
    tcase_add_test(tc, test_every_format_takes_odd_growth);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(suite, tc);
    return suite;
}
