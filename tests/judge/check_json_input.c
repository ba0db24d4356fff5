/* json_input: gemleak's own JSON reports read back as inputs (the shards
 * of a CI matrix), and what is refused. */
#include <string.h>

#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/merge.h"
#include "gemleak/judge/json_input.h"

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
    ck_assert(gl_json_input_detect(path));
    ck_assert(!gl_json_input_detect(xml));

    g_autoptr(GlFindings) findings = gl_findings_new();
    GlJsonInput input = { 0 };
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_json_input_read(path, findings, 0, &input, &error), "%s",
                  error != NULL ? error->message : "");
    ck_assert_uint_eq(input.processes, 1);
    ck_assert_uint_gt(input.errors_seen, 0);
    ck_assert_uint_gt(input.by_verdict[GL_VERDICT_KEEP], 0);
    ck_assert_uint_gt(input.targets->len, 0);
    ck_assert_str_eq(g_ptr_array_index(input.targets, 0), "leaky");  /* as -O gave it */
    ck_assert_uint_eq(input.problems->len, 0);
    ck_assert_uint_eq(input.unchecked_processes, 0);
    guint found = gl_findings_count(findings);
    ck_assert_uint_gt(found, 0);

    /* the same report twice: its findings merge, none is added */
    ck_assert(gl_json_input_read(path, findings, (guint64) 1 << 32, &input, &error));
    ck_assert_uint_eq(gl_findings_count(findings), found);

    /* the targets alone */
    ck_assert(gl_json_input_read(path, NULL, 0, &input, &error));
    ck_assert_uint_gt(input.targets->len, 0);
    gl_json_input_clear(&input);
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
    GlJsonInput input = { 0 };
    g_autoptr(GError) error = NULL;
    ck_assert(gl_json_input_detect(other));
    ck_assert(!gl_json_input_read(other, NULL, 0, &input, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_WRONG_FORMAT));
    gl_assert_line(error->message, "JSON, but not a gemleak report");
    g_clear_error(&error);

    g_autofree char *newer = g_build_filename(dir, "newer.json", NULL);
    gl_test_write(newer, "{\"tool\": {\"name\": \"gemleak\"}, \"report_version\": 99, "
                         "\"findings\": []}\n", -1);
    ck_assert(!gl_json_input_read(newer, NULL, 0, &input, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_WRONG_FORMAT));
    gl_assert_line(error->message, "a report of shape 99, newer than this gemleak reads .*: use "
                                   "the gemleak that wrote it$");
    g_clear_error(&error);

    GString *deep = g_string_new(NULL);
    for (guint i = 0; i < 10000; i++)
        g_string_append_c(deep, '[');
    g_autofree char *deep_path = g_build_filename(dir, "deep.json", NULL);
    gl_test_write(deep_path, deep->str, (gssize) deep->len);
    ck_assert(!gl_json_depth_within(deep->str, deep->len, GL_JSON_INPUT_MAX_DEPTH));
    ck_assert(!gl_json_input_read(deep_path, NULL, 0, &input, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_LIMIT));
    g_string_free(deep, TRUE);
    gl_json_input_clear(&input);
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

Suite *gl_json_input_suite(void)
{
    Suite *suite = suite_create("json_input");
    TCase *tc = tcase_create("json_input");
    tcase_add_test(tc, test_report_reads_back);
    tcase_add_test(tc, test_what_is_refused);
    tcase_add_test(tc, test_depth);
    suite_add_tcase(suite, tc);
    return suite;
}
