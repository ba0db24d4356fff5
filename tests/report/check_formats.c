/* The reports CI systems read: JUnit and SARIF validated against their
 * schemas, GitHub annotations and their escaping, suppression files. */
#include "testutil.h"
#include "gemleak/judge/baseline.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/gate.h"
#include "gemleak/report/report.h"

#include <string.h>

#include <json-glib/json-glib.h>

typedef struct {
    GlAnalysis *analysis;
    GlGate gate;
    GlGateResult result;
    GlReportContext context;
} Report;

static void report_prepare(Report *report, const char *relative, const char *fail_on)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *path = g_path_is_absolute(relative) ? g_strdup(relative)
                                                         : gl_test_fixture(relative);
    const char *paths[] = { path, NULL };
    report->analysis = gl_analyze(paths, rules, 1);
    gl_gate_init(&report->gate);
    if (fail_on != NULL)
        ck_assert(gl_gate_parse_fail_on(&report->gate, fail_on, NULL));
    gl_gate_evaluate(&report->gate, report->analysis->findings,
                     report->analysis->summary.incomplete_files, 0, FALSE, NULL,
                     &report->result);
    static const char *targets[] = { "leaky", NULL };
    GlReportContext context = {
        .analysis = report->analysis,
        .findings = report->analysis->findings,
        .gate = &report->result,
        .fail_on = &report->gate,
        .targets = targets,
        .project_root = "/tmp/gemleak-fixtures",
        .frames_after = G_MAXUINT,
    };
    report->context = context;
}

static void report_clear(Report *report)
{
    gl_gate_result_clear(&report->result);
    gl_analysis_free(report->analysis);
}

/* Writes @format of @report to a file in @dir. Returns: (transfer full) its path. */
static char *write_format(Report *report, const char *format, const char *dir)
{
    char *path = g_strdup_printf("%s/report.%s", dir, format);
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    ck_assert(gl_report_write(gl_reporter_find(format), &report->context, out, path, NULL));
    fclose(out);
    return path;
}

static void assert_junit_valid(const char *path)
{
    g_autofree char *xsd = gl_test_project_file("tests/schemas/junit.xsd");
    const char *argv[] = { "xmllint", "--noout", "--schema", xsd, path, NULL };
    g_autofree char *err = NULL;
    int status = gl_test_spawn(argv, NULL, &err);
    ck_assert_msg(status == 0, "JUnit report does not validate:\n%s", err);
}

static void assert_sarif_valid(const char *path)
{
    gl_test_assert_sarif_file_valid(path);
}

START_TEST(test_junit_with_findings_and_without)
{
    g_autofree char *dir = gl_test_tmpdir();
    Report leak;
    report_prepare(&leak, "xml/leak.xml", NULL);
    g_autofree char *path = write_format(&leak, "junit", dir);
    assert_junit_valid(path);
    g_autofree char *xml = gl_test_read(path, NULL);
    gl_assert_line(xml, "<testsuite name=\"gemleak\" timestamp=\"[0-9-]+T[0-9:]+\" hostname=\"[^\"]+\" "
                        "tests=\"3\" failures=\"3\" errors=\"0\" skipped=\"0\" time=\"0\">");
    gl_assert_line(xml, "<testcase name=\"definite leak in leaky_alloc \\(leaky/leaky\\.c:15\\) via "
                        "leaky_leak \\(leaky/leaky\\.c:\\d+\\)\" classname=\"gemleak\\.leaky\" time=\"0\">");
    gl_assert_line(xml, "<failure message=\"100 bytes in 1 block is definitely lost\" "
                        "type=\"Leak_DefinitelyLost\">100 bytes in 1 block is definitely lost");
    gl_assert_line(xml, "^ \\*leaky_leak \\(leaky/leaky\\.c:\\d+\\)$");
    report_clear(&leak);

    Report clean;
    report_prepare(&clean, "xml/clean.xml", NULL);
    g_autofree char *clean_path = write_format(&clean, "junit", dir);
    assert_junit_valid(clean_path);
    g_autofree char *clean_xml = gl_test_read(clean_path, NULL);
    gl_assert_line(clean_xml, "tests=\"1\" failures=\"0\"");
    gl_assert_line(clean_xml, "<testcase name=\"no leaks or memory errors in the targets\" "
                              "classname=\"gemleak\" time=\"0\"/>");
    report_clear(&clean);

    /* findings that do not fail the gate are skipped, not failed */
    Report tolerated;
    report_prepare(&tolerated, "xml/leak.xml", "errors");
    g_autofree char *tolerated_path = write_format(&tolerated, "junit", dir);
    assert_junit_valid(tolerated_path);
    g_autofree char *tolerated_xml = gl_test_read(tolerated_path, NULL);
    gl_assert_line(tolerated_xml, "tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"3\"");
    gl_assert_line(tolerated_xml, "<skipped message=\"does not fail the gate");
    report_clear(&tolerated);
    gl_remove_tree(dir);
}
END_TEST

/* A finding made of hostile text: markup, quotes, control characters,
 * invalid UTF-8, GitHub's separators. */
static GlFinding *hostile_finding(void)
{
    /* A memory error: its message is Valgrind's own text, hostile here. */
    GlRecord *record = gl_test_record("InvalidRead", "malloc@/vg.so",
                                      "evil<&>\"'fn@/work/gem/lib/leaky.so:x.c:7", NULL);
    record->stack.frames[1].in_target = TRUE;
    record->stack.frames[1].dir = gl_record_intern(record, "/work/gem/ext/a,b:c%d");
    record->stack.frames[1].file = gl_record_intern(record, "we:ird,na%me.c");
    record->what = gl_record_intern(record, "10 bytes <lost> & \"found\"\x01\x1f\xff\xfe\r\nnext: line, 100%");
    GlFinding *finding = g_new0(GlFinding, 1);
    finding->record = record;
    finding->occurrences = 1;
    finding->pids = g_array_new(FALSE, FALSE, sizeof(gint64));
    finding->certain = TRUE;
    finding->fingerprint = g_strdup("0123456789abcdef");
    /* a test name is the suite's own text: RSpec descriptions hold anything */
    finding->tests = g_ptr_array_new_with_free_func((GDestroyNotify) gl_test_free);
    g_ptr_array_add(finding->tests, gl_test_new("Evil<&>\"' spec\x01\r\nnext, 100%",
                                                "/work/gem/spec/e:v,il.rb:3"));
    return finding;
}

static void hostile_finding_free(GlFinding *finding)
{
    gl_record_free(finding->record);
    g_ptr_array_unref(finding->tests);
    g_array_unref(finding->pids);
    g_free(finding->fingerprint);
    g_free(finding);
}

START_TEST(test_junit_escapes_every_character)
{
    g_autofree char *dir = gl_test_tmpdir();
    Report report;
    report_prepare(&report, "xml/clean.xml", NULL);
    GlFinding *finding = hostile_finding();
    g_autoptr(GPtrArray) findings = g_ptr_array_new();
    g_ptr_array_add(findings, finding);
    report.context.findings = findings;
    report.context.gate = NULL;
    g_autofree char *path = write_format(&report, "junit", dir);
    assert_junit_valid(path);
    g_autofree char *xml = gl_test_read(path, NULL);
    ck_assert(strstr(xml, "evil&lt;&amp;&gt;\"'fn") != NULL || strstr(xml, "evil&lt;&amp;&gt;&quot;'fn") != NULL);
    ck_assert(strstr(xml, "\x01") == NULL);
    hostile_finding_free(finding);
    report_clear(&report);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_sarif_with_findings_and_without)
{
    g_autofree char *dir = gl_test_tmpdir();
    Report uaf;
    report_prepare(&uaf, "xml/use_after_free.xml", NULL);
    g_autofree char *path = write_format(&uaf, "sarif", dir);
    assert_sarif_valid(path);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, path, NULL));
    JsonObject *run = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs"), 0);
    JsonObject *driver = json_object_get_object_member(json_object_get_object_member(run, "tool"), "driver");
    ck_assert_str_eq(json_object_get_string_member(driver, "name"), "gemleak");
    ck_assert_str_eq(json_object_get_string_member(driver, "version"), GEMLEAK_VERSION);
    JsonArray *rules = json_object_get_array_member(driver, "rules");
    ck_assert_uint_eq(json_array_get_length(rules), 1);
    ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(rules, 0), "id"),
                     "InvalidWrite");
    JsonObject *result = json_array_get_object_element(json_object_get_array_member(run, "results"), 0);
    ck_assert_str_eq(json_object_get_string_member(result, "level"), "error");
    ck_assert_str_eq(json_object_get_string_member(result, "ruleId"), "InvalidWrite");
    JsonObject *physical = json_object_get_object_member(
        json_array_get_object_element(json_object_get_array_member(result, "locations"), 0),
        "physicalLocation");
    JsonObject *artifact = json_object_get_object_member(physical, "artifactLocation");
    ck_assert_str_eq(json_object_get_string_member(artifact, "uri"), "leaky/leaky.c");
    ck_assert_str_eq(json_object_get_string_member(artifact, "uriBaseId"), "PROJECTROOT");
    /* the base a relative location resolves against: a directory URI */
    JsonObject *base = json_object_get_object_member(
        json_object_get_object_member(run, "originalUriBaseIds"), "PROJECTROOT");
    ck_assert_str_eq(json_object_get_string_member(base, "uri"), "file:///tmp/gemleak-fixtures/");
    ck_assert_int_gt(json_object_get_int_member(json_object_get_object_member(physical, "region"),
                                                "startLine"), 0);
    /* the write, the free and the allocation: one code flow each */
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(result, "codeFlows")), 3);
    const GlFinding *finding = g_ptr_array_index(uaf.analysis->findings, 0);
    ck_assert_str_eq(json_object_get_string_member(
                         json_object_get_object_member(result, "partialFingerprints"),
                         "gemleakFingerprint/v" G_STRINGIFY(GL_FINGERPRINT_VERSION)),
                     finding->fingerprint);
    report_clear(&uaf);

    Report clean;
    report_prepare(&clean, "xml/clean.xml", NULL);
    g_autofree char *clean_path = write_format(&clean, "sarif", dir);
    assert_sarif_valid(clean_path);
    report_clear(&clean);

    /* outside the project root: an absolute file URI, still valid */
    Report elsewhere;
    report_prepare(&elsewhere, "xml/leak.xml", NULL);
    elsewhere.context.project_root = "/somewhere/else";
    g_autofree char *elsewhere_path = write_format(&elsewhere, "sarif", dir);
    assert_sarif_valid(elsewhere_path);
    g_autofree char *text = gl_test_read(elsewhere_path, NULL);
    ck_assert(strstr(text, "\"uri\" : \"file:///tmp/gemleak-fixtures/leaky/leaky.c\"") != NULL);
    report_clear(&elsewhere);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_github_escaping)
{
    g_autofree char *dir = gl_test_tmpdir();
    Report report;
    report_prepare(&report, "xml/clean.xml", NULL);
    GlFinding *finding = hostile_finding();
    g_autoptr(GPtrArray) findings = g_ptr_array_new();
    g_ptr_array_add(findings, finding);
    report.context.findings = findings;
    report.context.gate = NULL;
    report.context.project_root = "/work/gem";
    g_autofree char *path = write_format(&report, "github", dir);
    g_autofree char *text = gl_test_read(path, NULL);
    /* properties: % : , escaped; the message: % CR LF escaped, : and , kept;
     * other control characters as the text report writes them */
    ck_assert_msg(g_str_has_prefix(text, "::error file=ext/a%2Cb%3Ac%25d/we%3Aird%2Cna%25me.c,"
                                         "line=7,title=gemleak%3A InvalidRead in evil<&>\"'fn "
                                         "(ext/a%2Cb%3Ac%25d/we%3Aird%2Cna%25me.c%3A7)::10 bytes <lost> & \"found\""),
                  "%s", text);
    ck_assert_msg(strstr(text, "\"found\"\\x01\\x1f\xef\xbf\xbd\xef\xbf\xbd%0D%0Anext: line, "
                               "100%25%0Afirst seen in Evil<&>\"' spec\\x01%0D%0A"
                               "next, 100%25 (spec/e:v,il.rb:3)%0A  malloc (at /vg.so)%0A *evil") != NULL,
                  "%s", text);
    /* one line per annotation: no raw newline inside it */
    ck_assert_uint_eq(gl_test_count(text, strlen(text), "\n"), 1);
    hostile_finding_free(finding);
    report_clear(&report);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_github_shows_ten_then_counts)
{
    g_autofree char *dir = gl_test_tmpdir();
    Report report;
    report_prepare(&report, "xml/leak.xml", NULL);
    /* thirteen failing bugs: thirteen leaks, each in a function of its own
     * (the same finding thirteen times would be one group, one annotation) */
    g_autoptr(GlFindings) table = gl_findings_new();
    for (int i = 0; i < 13; i++) {
        g_autofree char *frame = g_strdup_printf(
            "leak_%d@/tmp/gemleak-fixtures/leaky/leaky.so:leaky.c:%d", i, 10 + i);
        GlRecord *record = gl_test_record("Leak_DefinitelyLost", "malloc@/vg.so", frame, NULL);
        record->leak_kind = GL_LEAK_DEFINITE;
        record->what = gl_record_intern(record, "10 bytes in 1 blocks are definitely lost");
        record->leaked_bytes = 10;
        record->leaked_blocks = 1;
        record->stack.frames[1].in_target = TRUE;
        record->stack.frames[1].dir = gl_record_intern(record, "/tmp/gemleak-fixtures/leaky");
        gl_findings_add(table, record, (guint64) i);
    }
    g_autoptr(GPtrArray) many = gl_findings_sorted(table);
    report.context.findings = many;
    g_autofree char *path = write_format(&report, "github", dir);
    g_autofree char *text = gl_test_read(path, NULL);
    ck_assert_uint_eq(gl_test_count(text, strlen(text), "::error "), 10);
    gl_assert_line(text, "^::warning title=gemleak::3 more findings are not shown as annotations "
                         "\\(GitHub shows 10 a step\\): the gemleak report has them all$");
    gl_assert_line(text, "^::error file=leaky/leaky\\.c,line=\\d+,title=gemleak%3A definite leak in ");
    gl_assert_line(text, "^gemleak: FAIL: ");
    report_clear(&report);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_suppressions_file)
{
    g_autofree char *dir = gl_test_tmpdir();
    /* from Valgrind's own suppression frames */
    Report generated;
    report_prepare(&generated, "xml/suppressions.xml", NULL);
    g_autofree char *path = write_format(&generated, "supp", dir);
    g_autofree char *supp = gl_test_read(path, NULL);
    gl_assert_line(supp, "^# definite leak in leaky_alloc \\(leaky\\.c:15\\) via leaky_leak \\(leaky\\.c:\\d+\\): "
                         "100 bytes in 1 block is definitely lost");
    gl_assert_line(supp, "^   gemleak [0-9a-f]{16}: definite leak in leaky_alloc");
    gl_assert_line(supp, "^   Memcheck:Leak$");
    gl_assert_line(supp, "^   match-leak-kinds: definite$");
    gl_assert_line(supp, "^   fun:malloc$");
    gl_assert_line(supp, "^   fun:leaky_alloc$");
    gl_assert_line(supp, "^   fun:leaky_leak$");
    /* cut after the last target frame: no Ruby frames */
    gl_assert_no_line(supp, "rb_vm_exec");
    /* Valgrind itself accepts the file */
    g_autofree char *option = g_strconcat("--suppressions=", path, NULL);
    const char *argv[] = { "valgrind", "-q", option, "true", NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn(argv, NULL, &err) == 0, "valgrind refuses it:\n%s", err);
    report_clear(&generated);

    /* derived from the frames, for XML without suppressions; the use-after-free too */
    Report derived;
    report_prepare(&derived, "xml/use_after_free.xml", NULL);
    g_autofree char *derived_path = write_format(&derived, "supp", dir);
    g_autofree char *derived_supp = gl_test_read(derived_path, NULL);
    gl_assert_line(derived_supp, "^   Memcheck:Addr1$");
    gl_assert_line(derived_supp, "^   fun:leaky_use_after_free$");
    g_autofree char *option2 = g_strconcat("--suppressions=", derived_path, NULL);
    const char *argv2[] = { "valgrind", "-q", option2, "true", NULL };
    ck_assert(gl_test_spawn(argv2, NULL, NULL) == 0);
    report_clear(&derived);

    /* nothing found: a file that says so, and no block */
    Report clean;
    report_prepare(&clean, "xml/clean.xml", NULL);
    g_autofree char *clean_path = write_format(&clean, "supp", dir);
    g_autofree char *clean_supp = gl_test_read(clean_path, NULL);
    gl_assert_line(clean_supp, "^# No findings: nothing to suppress\\.$");
    gl_assert_no_line(clean_supp, "^\\{$");
    report_clear(&clean);
    gl_remove_tree(dir);
}
END_TEST

/* JSON and SARIF are UTF-8 whatever bytes the inputs held (a Latin-1 file
 * name, a target pattern, a function name), and a JSON report is a
 * baseline gemleak reads back. */
START_TEST(test_json_is_utf8_and_reads_back_as_a_baseline)
{
    g_autofree char *dir = gl_test_tmpdir();
    Report report;
    report_prepare(&report, "xml/clean.xml", NULL);
    GlFinding *finding = hostile_finding();
    finding->record->stack.frames[0].fn = gl_record_intern(finding->record, "caf\xe9_alloc\xc3");
    g_autoptr(GPtrArray) findings = g_ptr_array_new();
    g_ptr_array_add(findings, finding);
    static const char *targets[] = { "leaky", "caf\xe9", NULL };
    report.context.findings = findings;
    report.context.targets = targets;
    g_ptr_array_add(report.analysis->summary.truncated_files, g_strdup("/tmp/caf\xe9/42.xml"));
    const char *const formats[] = { "json", "sarif" };
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
        g_autofree char *path = write_format(&report, formats[i], dir);
        g_autofree char *text = gl_test_read(path, NULL);
        ck_assert_msg(g_utf8_validate(text, -1, NULL), "%s: not UTF-8", formats[i]);
        g_autoptr(JsonParser) parser = json_parser_new();
        g_autoptr(GError) error = NULL;
        ck_assert_msg(json_parser_load_from_data(parser, text, -1, &error), "%s: %s", formats[i],
                      error != NULL ? error->message : "?");
    }
    g_autofree char *json = g_strdup_printf("%s/report.json", dir);
    g_autoptr(GError) error = NULL;
    g_autoptr(GlBaseline) baseline = gl_baseline_load(json, &error);
    ck_assert_msg(baseline != NULL, "%s", error != NULL ? error->message : "?");
    ck_assert(gl_baseline_knows(baseline, "0123456789abcdef"));
    hostile_finding_free(finding);
    report_clear(&report);
    gl_remove_tree(dir);
}
END_TEST

/* A name with a newline in it cannot break a suppression block: each
 * line of the file stays one line, and Valgrind reads the file. */
START_TEST(test_suppressions_with_newlines_in_names)
{
    g_autofree char *dir = gl_test_tmpdir();
    Report report;
    report_prepare(&report, "xml/clean.xml", NULL);
    GlFinding *finding = hostile_finding();
    GlFrame *frame = &finding->record->stack.frames[1];
    frame->fn = gl_record_intern(finding->record, "evil\nfn}\r\n{");
    /* a kind Valgrind can suppress: Memcheck:Addr8 */
    finding->record->what = gl_record_intern(finding->record, "Invalid read of size 8");
    g_autoptr(GPtrArray) findings = g_ptr_array_new();
    g_ptr_array_add(findings, finding);
    report.context.findings = findings;
    g_autofree char *path = write_format(&report, "supp", dir);
    g_autofree char *supp = gl_test_read(path, NULL);
    /* (strstr: the message's invalid UTF-8 is kept, and GRegex wants UTF-8) */
    ck_assert_msg(strstr(supp, "\n   fun:evil?fn}??{\n") != NULL, "%s", supp);
    g_autofree char *option = g_strconcat("--suppressions=", path, NULL);
    const char *argv[] = { "valgrind", "-q", option, "true", NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn(argv, NULL, &err) == 0, "valgrind refuses it:\n%s\n%s", err, supp);

    /* Valgrind's own frames, from the XML, the same */
    GlSuppression suppression = {
        .kind = "Memcheck:Leak",
        .aux = "match-leak-kinds:\ndefinite",
        .frames = (const char *[]) { "fun:malloc", "fun:evil\nfn", NULL },
    };
    finding->record->suppression = &suppression;
    g_autofree char *again = write_format(&report, "supp", dir);
    g_autofree char *supp2 = gl_test_read(again, NULL);
    ck_assert_msg(strstr(supp2, "\n   fun:evil?fn\n") != NULL, "%s", supp2);
    ck_assert_msg(strstr(supp2, "\n   match-leak-kinds: definite\n") != NULL, "%s", supp2);
    finding->record->suppression = NULL;
    hostile_finding_free(finding);
    report_clear(&report);
    gl_remove_tree(dir);
}
END_TEST

/* XML cut short: JUnit's error case and SARIF's unsuccessful invocation
 * still follow their schemas. */
START_TEST(test_incomplete_input_in_ci_formats)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *text = gl_test_read(leak, NULL);
    g_autofree char *cut = g_build_filename(dir, "cut.xml", NULL);
    gl_test_write(cut, text, strstr(text, "<error>") - text + 50);
    Report report;
    report_prepare(&report, cut, NULL);
    ck_assert(!report.result.complete);
    g_autofree char *junit = write_format(&report, "junit", dir);
    assert_junit_valid(junit);
    g_autofree char *sarif = write_format(&report, "sarif", dir);
    assert_sarif_valid(sarif);
    g_autofree char *log = gl_test_read(sarif, NULL);
    gl_assert_line(log, "\"executionSuccessful\" : false");
    report_clear(&report);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_formats_suite(void)
{
    Suite *suite = suite_create("formats");
    TCase *tc = tcase_create("formats");
    tcase_add_test(tc, test_junit_with_findings_and_without);
    tcase_add_test(tc, test_junit_escapes_every_character);
    tcase_add_test(tc, test_sarif_with_findings_and_without);
    tcase_add_test(tc, test_github_escaping);
    tcase_add_test(tc, test_github_shows_ten_then_counts);
    tcase_add_test(tc, test_suppressions_file);
    tcase_add_test(tc, test_json_is_utf8_and_reads_back_as_a_baseline);
    tcase_add_test(tc, test_suppressions_with_newlines_in_names);
    tcase_add_test(tc, test_incomplete_input_in_ci_formats);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(suite, tc);
    return suite;
}
