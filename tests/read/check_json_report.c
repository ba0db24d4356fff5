/* gemleak's own JSON reports read back as inputs (the shards of a CI
 * matrix), through the input seam and the one loop of the judges, and
 * what is refused. */
#include <string.h>

#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/judgement.h"
#include "gemleak/judge/merge.h"
#include "gemleak/read/input.h"
#include "gemleak/judge/gate.h"

#include <json-glib/json-glib.h>

/* Returns: TRUE if the input seam reads @path as a gemleak JSON report. */
static gboolean is_report(const char *path)
{
    g_autoptr(GlInput) input = gl_input_open(path, FALSE, NULL, NULL);
    return input != NULL && gl_input_format(input) == gl_input_format_find("gemleak-json");
}

/* Reads the report @path (@order_base among other inputs) into @judged
 * (initialised here) as gemleak filter does, and @targets (nullable) the
 * targets it names. Returns: FALSE with @error set to the first problem
 * when it could not be read. */
static gboolean read_report(const char *path, guint64 order_base, GlJudgement *judged,
                            GPtrArray *targets, GError **error)
{
    gl_judgement_init(judged);
    g_autoptr(GlInput) input = gl_input_open(path, FALSE, NULL, error);
    if (input == NULL)
        return FALSE;
    g_autoptr(GlRules) rules = gl_rules_new();
    gl_judge_input(input, path, rules, order_base, FALSE, judged);
    const GlJudgedRun *run = gl_input_process(input)->judged;
    for (guint i = 0; run != NULL && targets != NULL && i < run->targets->len; i++)
        g_ptr_array_add(targets, g_strdup(g_ptr_array_index(run->targets, i)));
    if (run == NULL) {
        g_propagate_error(error, g_error_copy(g_ptr_array_index(judged->problems, 0)));
        return FALSE;
    }
    return TRUE;
}

/* Returns: (transfer full): the path of the JSON report gemleak filter
 * writes for fixtures/xml/@xml in @dir. */
static char *report_of(const char *dir, const char *xml)
{
    g_autofree char *input = g_build_filename(gl_test_fixtures, "xml", xml, NULL);
    char *path = g_build_filename(dir, "shard.json", NULL);
    GlTestRun run = { 0 };
    gl_test_gemleak(&run, "filter", "-O", "leaky", "--format", "json", "-o", path, input, NULL);
    ck_assert_msg(run.status == 1, "status %d: %s", run.status, run.err);
    gl_test_run_clear(&run);
    return path;
}

/* A shard's report reads back with its counts, its targets and its
 * findings, merged as they were. */
START_TEST(test_report_reads_back)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = report_of(dir, "leak.xml");
    g_autofree char *xml = g_build_filename(gl_test_fixtures, "xml", "leak.xml", NULL);
    ck_assert(is_report(path));
    ck_assert(!is_report(xml));

    g_auto(GlJudgement) input = { 0 };
    g_autoptr(GPtrArray) targets = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) error = NULL;
    ck_assert_msg(read_report(path, 0, &input, targets, &error), "%s",
                  error != NULL ? error->message : "");
    ck_assert_uint_eq(input.processes, 1);
    ck_assert_uint_gt(input.errors_seen, 0);
    ck_assert_uint_gt(input.by_verdict[GL_VERDICT_KEEP], 0);
    ck_assert_uint_gt(targets->len, 0);
    ck_assert_str_eq(g_ptr_array_index(targets, 0), "leaky");  /* as -O gave it */
    ck_assert_uint_eq(input.problems->len, 0);
    ck_assert_uint_eq(input.report_unchecked, 0);
    guint found = gl_findings_count(input.findings);
    ck_assert_uint_gt(found, 0);

    /* the same report twice: its findings merge, none is added */
    g_auto(GlJudgement) again = { 0 };
    ck_assert(read_report(path, (guint64) 1 << 32, &again, NULL, &error));
    gl_findings_absorb(input.findings, again.findings);
    ck_assert_uint_eq(gl_findings_count(input.findings), found);
    gl_remove_tree(dir);
}
END_TEST

/* JSON that is not a gemleak report, or one of a newer shape, is refused
 * with what to do; so is nesting deeper than any report's. */
START_TEST(test_what_is_refused)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *other = g_build_filename(dir, "package.json", NULL);
    gl_test_write(other, "{\"name\": \"left-pad\", \"findings\": []}\n", -1);
    GlJudgement input;
    g_autoptr(GError) error = NULL;
    ck_assert(is_report(other));
    ck_assert(!read_report(other, 0, &input, NULL, &error));
    gl_judgement_clear(&input);
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_WRONG_FORMAT));
    gl_assert_line(error->message, "JSON, but not a gemleak report");
    g_clear_error(&error);

    g_autofree char *newer = g_build_filename(dir, "newer.json", NULL);
    gl_test_write(newer, "{\"tool\": {\"name\": \"gemleak\"}, \"report_version\": 99, "
                         "\"findings\": []}\n", -1);
    ck_assert(!read_report(newer, 0, &input, NULL, &error));
    gl_judgement_clear(&input);
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_WRONG_FORMAT));
    gl_assert_line(error->message, "a report of shape 99, newer than this gemleak reads .*: use "
                                   "the gemleak that wrote it$");
    g_clear_error(&error);

    /* a JSON object, as a report starts: the seam reads it as one */
    GString *deep = g_string_new("{\"findings\": ");
    for (guint i = 0; i < 10000; i++)
        g_string_append_c(deep, '[');
    g_autofree char *deep_path = g_build_filename(dir, "deep.json", NULL);
    gl_test_write(deep_path, deep->str, (gssize) deep->len);
    ck_assert(!gl_json_depth_within(deep->str, deep->len, GL_JSON_INPUT_MAX_DEPTH));
    ck_assert(!read_report(deep_path, 0, &input, NULL, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_LIMIT));
    ck_assert_uint_eq(input.processes, 0);
    g_string_free(deep, TRUE);
    gl_judgement_clear(&input);
    gl_remove_tree(dir);
}
END_TEST

/* --growth: a growth finding read back (a shard's) keeps its kind and its
 * series, the "growth" member as the JSON report writes it; one whose
 * series is not there is still growth, never a leak nor an error. */
START_TEST(test_growth_finding_reads_back)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "shard.json", NULL);
    g_autofree char *input = gl_test_fixture("lsan/growth-ruby34");
    GlTestRun run = { 0 };
    gl_test_gemleak(&run, "filter", "--format", "json", "-o", path, input, NULL);
    ck_assert_int_eq(run.status, 1);
    gl_test_run_clear(&run);
    /* the series of each growth finding, as the report writes them */
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, path, NULL));
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    guint growths = 0;
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        if (g_strcmp0(json_object_get_string_member(finding, "kind"), "Growth") != 0)
            continue;
        if (growths++ == 0) {
            /* the first without its series (a report of an earlier writer) */
            if (json_object_has_member(finding, "growth"))
                json_object_remove_member(finding, "growth");
            continue;
        }
        JsonObject *growth = json_object_new();
        json_object_set_int_member(growth, "repetitions", 3);
        JsonArray *bytes = json_array_new(), *blocks = json_array_new();
        for (gint64 r = 0; r < 3; r++) {
            json_array_add_int_element(bytes, 100 * (r + 1));
            json_array_add_int_element(blocks, r);
        }
        json_object_set_array_member(growth, "bytes", bytes);
        json_object_set_array_member(growth, "blocks", blocks);
        json_object_set_int_member(growth, "median_bytes", 200);
        json_object_set_boolean_member(growth, "held", TRUE);
        json_object_set_boolean_member(growth, "lost", FALSE);
        json_object_set_object_member(finding, "growth", growth);
    }
    ck_assert_uint_eq(growths, 5);
    g_autoptr(JsonGenerator) generator = json_generator_new();
    json_generator_set_root(generator, json_parser_get_root(parser));
    ck_assert(json_generator_to_file(generator, path, NULL));

    g_auto(GlJudgement) judged = { 0 };
    g_autoptr(GError) error = NULL;
    ck_assert_msg(read_report(path, 0, &judged, NULL, &error), "%s",
                  error != NULL ? error->message : "");
    g_autoptr(GPtrArray) all = gl_findings_list(judged.findings);
    guint with_series = 0, without = 0, leaks = 0;
    GlGate gate;
    gl_gate_init(&gate);
    for (guint i = 0; i < all->len; i++) {
        const GlFinding *finding = g_ptr_array_index(all, i);
        if (g_strcmp0(finding->record->kind, "Growth") != 0) {
            leaks += finding->record->leak_kind != GL_LEAK_NONE;
            continue;
        }
        ck_assert_int_eq(finding->record->leak_kind, GL_LEAK_NONE);
        ck_assert_uint_eq(finding->tests->len, 1);
        if (finding->growth == NULL) {
            without++;
            ck_assert(gl_gate_counts(&gate, finding));
            continue;
        }
        with_series++;
        ck_assert_uint_eq(finding->growth->repetitions, 3);
        ck_assert_int_eq(finding->growth->bytes[2], 300);
        ck_assert_int_eq(finding->growth->blocks[1], 1);
        ck_assert_uint_eq(finding->growth->median_bytes, 200);
        ck_assert(finding->growth->held);
        ck_assert(!finding->growth->lost);
        ck_assert(!gl_gate_counts(&gate, finding));  /* held */
    }
    ck_assert_uint_eq(with_series, 4);
    ck_assert_uint_eq(without, 1);
    ck_assert_uint_eq(leaks, 1);
    gl_remove_tree(dir);
}
END_TEST

/* Brackets in strings do not count towards the depth. */
START_TEST(test_depth)
{
    const char *flat = "{\"a\": \"[[[[[[[[\", \"b\": [1, [2]]}";
    ck_assert(gl_json_depth_within(flat, strlen(flat), 3));
    ck_assert(!gl_json_depth_within(flat, strlen(flat), 2));
    const char *escaped = "[\"\\\"[[[[\"]";
    ck_assert(gl_json_depth_within(escaped, strlen(escaped), 1));
}
END_TEST

Suite *gl_json_report_suite(void)
{
    Suite *suite = suite_create("json_report");
    TCase *tc = tcase_create("json_report");
    tcase_add_test(tc, test_report_reads_back);
    tcase_add_test(tc, test_what_is_refused);
    tcase_add_test(tc, test_depth);
    tcase_add_test(tc, test_growth_finding_reads_back);
    suite_add_tcase(suite, tc);
    return suite;
}
