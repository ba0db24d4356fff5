/* Groups (issue 21): one bug, one entry, in every format, on real Valgrind
 * captures of fixtures/ext/grouped, an extension with the three shapes
 * (see grouped.c): one allocator wrapper reached from 30 call sites; one
 * object's three buffers lost together; two bugs through one helper. */
#include "testutil.h"
#include "gemleak/judge/group.h"
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"

#include <string.h>

#include <json-glib/json-glib.h>

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

static guint count_lines(const char *text)
{
    return gl_test_count(text, strlen(text), "\n");
}

/* Returns: (transfer full): the JSON report of @fixture, parsed. */
static JsonParser *json_report(const char *fixture)
{
    g_autofree char *xml = gl_test_fixture(fixture);
    RUN(run, "filter", "-O", "grouped", "--format", "json", xml);
    ck_assert_int_eq(run.status, 1);
    JsonParser *parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, run.out, -1, NULL));
    gl_test_run_clear(&run);
    return parser;
}

START_TEST(test_allocator_from_thirty_call_sites_is_one_entry)
{
    g_autofree char *xml = gl_test_fixture("xml/grouped_loop.xml");
    RUN(run, "filter", "-O", "grouped", xml);
    ck_assert_int_eq(run.status, 1);
    gl_assert_line(run.out, "^30 bytes in 30 blocks are definitely lost in 30 call paths "
                            "\\(30 occurrences in 1 process\\)$");
    gl_assert_line(run.out, "^one bug: lost in loop_realloc, entered through "
                            "grouped_destroy_loop$");
    gl_assert_line(run.out, "^call path 1: 1 byte in 1 block is definitely lost$");
    gl_assert_line(run.out, "^call path 2: 1 byte in 1 block is definitely lost: "
                            "loop_realloc \\(grouped\\.c:32\\) < .* < "
                            "grouped_destroy_loop \\(grouped\\.c:\\d+\\)$");
    gl_assert_line(run.out, "^and 27 more call paths ");
    gl_assert_no_line(run.out, "^call path 4");
    gl_assert_line(run.out, ": 30 findings in 1 group \\(30 occurrences\\), ");
    gl_assert_line(run.out, "^gemleak: FAIL: 1 leak \\(30 call paths\\) losing 30 bytes$");
    /* 280 lines, one finding after another, before */
    ck_assert_uint_lt(count_lines(run.out), 25);
    gl_test_run_clear(&run);
}
END_TEST

START_TEST(test_one_objects_buffers_are_one_entry)
{
    g_autofree char *xml = gl_test_fixture("xml/grouped_parse.xml");
    RUN(run, "filter", "-O", "grouped", xml);
    ck_assert_int_eq(run.status, 1);
    gl_assert_line(run.out, "^219 bytes in 9 blocks are definitely lost in 3 call paths "
                            "\\(3 occurrences in 1 process\\)$");
    gl_assert_line(run.out, "^one bug: lost in parser_init, entered through grouped_parse$");
    /* the three lines of parser_init, each shown */
    gl_assert_line(run.out, "^ \\*parser_init \\(grouped\\.c:106\\)$");
    gl_assert_line(run.out, "^call path 2: 18 bytes in 3 blocks are definitely lost: "
                            "parser_init \\(grouped\\.c:105\\) < grouped_parse \\(grouped\\.c:\\d+\\)$");
    gl_assert_line(run.out, "^call path 3: 9 bytes in 3 blocks are definitely lost: "
                            "parser_init \\(grouped\\.c:104\\) < grouped_parse \\(grouped\\.c:\\d+\\)$");
    gl_assert_no_line(run.out, "more call path");
    gl_assert_line(run.out, "^gemleak: FAIL: 1 leak \\(3 call paths\\) losing 219 bytes$");
    gl_test_run_clear(&run);
}
END_TEST

START_TEST(test_two_bugs_through_one_helper_stay_two)
{
    g_autofree char *xml = gl_test_fixture("xml/grouped_helper.xml");
    RUN(run, "filter", "-O", "grouped", xml);
    ck_assert_int_eq(run.status, 1);
    gl_assert_line(run.out, "^40 bytes in 1 block is definitely lost$");
    gl_assert_line(run.out, "^24 bytes in 1 block is definitely lost$");
    gl_assert_line(run.out, "^ \\*state_partial_generate \\(grouped\\.c:\\d+\\)$");
    gl_assert_line(run.out, "^ \\*array_to_json \\(grouped\\.c:\\d+\\)$");
    gl_assert_no_line(run.out, "call path");
    gl_assert_no_line(run.out, "one bug");
    gl_assert_line(run.out, ": 2 findings \\(2 occurrences\\), ");
    gl_assert_line(run.out, "^gemleak: FAIL: 2 leaks losing 64 bytes$");
    gl_test_run_clear(&run);

    g_autoptr(JsonParser) parser = json_report("xml/grouped_helper.xml");
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *groups = json_object_get_array_member(root, "groups");
    ck_assert_uint_eq(json_array_get_length(groups), 2);
    ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(groups, 0),
                                                   "entry"), "state_partial_generate");
    ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(groups, 1),
                                                   "entry"), "array_to_json");
}
END_TEST

/* JSON: every finding keeps its fields and its own fingerprint (baselines
 * match per call path), and says its group; "groups" has the totals. */
START_TEST(test_json_keeps_findings_and_adds_groups)
{
    g_autoptr(JsonParser) parser = json_report("xml/grouped_loop.xml");
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *findings = json_object_get_array_member(root, "findings");
    ck_assert_uint_eq(json_array_get_length(findings), 30);
    g_autoptr(GHashTable) prints = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < 30; i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        ck_assert_int_eq(json_object_get_int_member(finding, "group"), 1);
        ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 1);
        g_hash_table_add(prints, (gpointer) json_object_get_string_member(finding, "fingerprint"));
    }
    ck_assert_uint_eq(g_hash_table_size(prints), 30);
    JsonArray *groups = json_object_get_array_member(root, "groups");
    ck_assert_uint_eq(json_array_get_length(groups), 1);
    JsonObject *group = json_array_get_object_element(groups, 0);
    ck_assert_int_eq(json_object_get_int_member(group, "id"), 1);
    ck_assert_int_eq(json_object_get_int_member(group, "bytes"), 30);
    ck_assert_int_eq(json_object_get_int_member(group, "blocks"), 30);
    ck_assert_str_eq(json_object_get_string_member(group, "function"), "loop_realloc");
    ck_assert_str_eq(json_object_get_string_member(group, "entry"), "grouped_destroy_loop");
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(group, "fingerprints")),
                      30);
    JsonObject *summary = json_object_get_object_member(root, "summary");
    ck_assert_int_eq(json_object_get_int_member(summary, "findings"), 30);
    ck_assert_int_eq(json_object_get_int_member(summary, "groups"), 1);
}
END_TEST

/* One byte is "1 byte", in the finding and the gate (Valgrind writes
 * "1 bytes"); a hand-cut copy of one error of grouped_loop.xml. */
START_TEST(test_one_byte_in_english)
{
    g_autofree char *xml = gl_test_fixture("edge/one-byte-leak.xml");
    RUN(run, "filter", "-O", "grouped", xml);
    ck_assert_int_eq(run.status, 1);
    gl_assert_line(run.out, "^1 byte in 1 block is definitely lost$");
    gl_assert_line(run.out, "^gemleak: FAIL: 1 leak losing 1 byte$");
    gl_test_run_clear(&run);
}
END_TEST

/* A JSON report read back (a shard merged) groups the same. */
START_TEST(test_json_read_back_groups_the_same)
{
    g_autofree char *xml = gl_test_fixture("xml/grouped_loop.xml");
    RUN(json, "filter", "-O", "grouped", "--format", "json", xml);
    ck_assert_int_eq(json.status, 1);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "shard.json", NULL);
    gl_test_write(path, json.out, -1);
    gl_test_run_clear(&json);
    RUN(back, "filter", path);
    ck_assert_int_eq(back.status, 1);
    gl_assert_line(back.out, "^30 bytes in 30 blocks are definitely lost in 30 call paths ");
    gl_assert_line(back.out, "^gemleak: FAIL: 1 leak \\(30 call paths\\) losing 30 bytes$");
    gl_test_run_clear(&back);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_ci_formats_one_entry_a_group)
{
    g_autofree char *xml = gl_test_fixture("xml/grouped_loop.xml");
    RUN(github, "filter", "-O", "grouped", "--format", "github", xml);
    ck_assert_int_eq(github.status, 1);
    ck_assert_uint_eq(gl_test_count(github.out, strlen(github.out), "::error "), 1);
    gl_assert_line(github.out, "^::error .*title=gemleak%3A definite leak in loop_realloc .*"
                               "%2C 30 call paths::30 bytes in 30 blocks are definitely lost in "
                               "30 call paths .*%0Aand 27 more call paths$");
    gl_assert_no_line(github.out, "more findings are not shown");
    gl_test_run_clear(&github);

    RUN(junit, "filter", "-O", "grouped", "--format", "junit", xml);
    ck_assert_int_eq(junit.status, 1);
    gl_assert_line(junit.out, "tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\"");
    ck_assert_uint_eq(gl_test_count(junit.out, strlen(junit.out), "<testcase "), 1);
    gl_test_run_clear(&junit);

    RUN(sarif, "filter", "-O", "grouped", "--format", "sarif", xml);
    ck_assert_int_eq(sarif.status, 1);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, sarif.out, -1, NULL));
    JsonObject *run = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs"), 0);
    JsonArray *results = json_object_get_array_member(run, "results");
    ck_assert_uint_eq(json_array_get_length(results), 1);
    JsonObject *result = json_array_get_object_element(results, 0);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(result,
                                                                         "relatedLocations")), 29);
    ck_assert_int_eq(json_object_get_int_member(result, "occurrenceCount"), 30);
    gl_test_assert_sarif_valid(sarif.out);
    gl_test_run_clear(&sarif);
}
END_TEST

/* A leak in a block that a method of the extension yields to: Leaky.leak
 * entered from Ruby's VM below Leaky.with_block (fixtures/xml/
 * entry_through_ruby.xml). Every report names one entry point, the
 * group's: Leaky.leak's, not the method further out (issue 29). */
START_TEST(test_titles_name_the_groups_entry)
{
    g_autofree char *xml = gl_test_fixture("xml/entry_through_ruby.xml");
    RUN(json, "filter", "-O", "leaky", "--format", "json", xml);
    ck_assert_int_eq(json.status, 1);
    gl_assert_line(json.out, "^ *\"entry\" : \"leaky_leak\",$");
    gl_test_run_clear(&json);

    const char *formats[] = { "junit", "github", "sarif", "supp" };
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
        RUN(run, "filter", "-O", "leaky", "--format", formats[i], xml);
        ck_assert_int_eq(run.status, 1);
        /* (GitHub's title escapes the colon) */
        ck_assert_msg(strstr(run.out, "definite leak in leaky_alloc (leaky.c") != NULL &&
                          strstr(run.out, "via leaky_leak (leaky.c") != NULL,
                      "%s names no entry leaky_leak:\n%s", formats[i], run.out);
        ck_assert_msg(strstr(run.out, "via leaky_with_block") == NULL, "%s:\n%s", formats[i],
                      run.out);
        gl_test_run_clear(&run);
    }
}
END_TEST

/* An error in @helper, inlined there from glibc's memcpy wrapper, in the
 * method @method; its frames marked as the extension's. */
static GlRecord *memcpy_error(const char *helper, const char *method)
{
    g_autofree char *inner = g_strdup_printf("%s@/gem/x.so:x.c:10", helper);
    g_autofree char *outer = g_strdup_printf("%s@/gem/x.so:x.c:20", method);
    GlRecord *record = gl_test_record("InvalidRead", "memcpy@/gem/x.so:x.c:1", inner, outer,
                                      "rb_vm_exec@/libruby.so", NULL);
    record->stack.frames[0].dir = gl_record_intern(record,
                                                   "/usr/include/x86_64-linux-gnu/bits");
    record->stack.frames[0].file = gl_record_intern(record, "string_fortified.h");
    record->stack.frames[0].in_target = TRUE;
    record->stack.frames[1].dir = gl_record_intern(record, "/gem/ext");
    record->stack.frames[1].in_target = TRUE;
    record->stack.frames[2].dir = gl_record_intern(record, "/gem/ext");
    record->stack.frames[2].in_target = TRUE;
    return record;
}

/* What a header inlined into every function of the extension (glibc's
 * memcpy wrapper) is not where a bug is: two helpers' errors in one
 * method are two bugs. */
START_TEST(test_header_frames_do_not_join_bugs)
{
    g_autoptr(GlFindings) table = gl_findings_new();
    gl_findings_add(table, memcpy_error("copy_key", "parse"), 0);
    gl_findings_add(table, memcpy_error("copy_value", "parse"), 1);
    gl_findings_add(table, memcpy_error("copy_value", "parse"), 2);
    g_autoptr(GPtrArray) findings = gl_findings_sorted(table);
    ck_assert_uint_eq(findings->len, 2);
    g_autoptr(GPtrArray) groups = gl_findings_group(findings);
    ck_assert_uint_eq(groups->len, 2);
    for (guint i = 0; i < groups->len; i++) {
        const GlGroup *group = g_ptr_array_index(groups, i);
        ck_assert_str_eq(group->entry, "parse");
        ck_assert(g_str_has_prefix(group->function, "copy_"));
    }
}
END_TEST

/* ---- real gems: one root cause, one entry (issue 40) ---------------------- */

/* A gem's captured run (fixtures/capture-gems.sh), moved into a directory
 * of the test's own: its input, and the gem's checkout there, the project
 * root the reports show paths relative to. */
typedef struct {
    char *dir;
    char *input;
    char *root;
} Capture;

static void capture_open(Capture *capture, const char *fixture, const char *gem)
{
    capture->dir = gl_test_tmpdir();
    capture->input = gl_test_gem_capture(fixture, capture->dir, gem);
    capture->root = g_build_filename(capture->dir, gem, NULL);
}

static void capture_close(Capture *capture)
{
    gl_remove_tree(capture->dir);
    g_free(capture->dir);
    g_free(capture->input);
    g_free(capture->root);
}

/* Returns: how many lines of @text match @pattern. */
static guint count_matching(const char *text, const char *pattern)
{
    g_autoptr(GRegex) regex = g_regex_new(pattern, G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    guint n = 0;
    for (g_regex_match(regex, text, 0, &match); g_match_info_matches(match);
         g_match_info_next(match, NULL))
        n++;
    return n;
}

/* The headings of a text report's entries: a blank line before each. */
static guint count_entries(const char *text)
{
    return count_matching(text, "^\\d+ (\\(\\d+ direct, \\d+ indirect\\) )?bytes? in ");
}

/* Returns: (transfer full): the report of @format on @capture, status 1. */
static char *report_of(const char *format, const Capture *capture, const char *kinds)
{
    GlTestRun run = { 0 };
    if (kinds != NULL)
        gl_test_gemleak(&run, "filter", "--project-root", capture->root, "--leak-kinds", kinds,
                        "--format", format, capture->input, NULL);
    else
        gl_test_gemleak(&run, "filter", "--project-root", capture->root, "--format", format,
                        capture->input, NULL);
    ck_assert_msg(run.status == 1, "%s of %s: status %d\n%s%s", format, capture->input,
                  run.status, run.out, run.err);
    char *out = g_steal_pointer(&run.out);
    gl_test_run_clear(&run);
    return out;
}

/* Returns: (transfer none): the results of a SARIF report @parser holds. */
static JsonArray *sarif_results(JsonParser *parser)
{
    JsonObject *run = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs"), 0);
    return json_object_get_array_member(run, "results");
}

/* Returns: (transfer none): the properties of the first of @n results of
 * the SARIF report @sarif, valid, which @parser reads. */
static JsonObject *sarif_first_properties(JsonParser *parser, const char *sarif, guint n)
{
    gl_test_assert_sarif_valid(sarif);
    ck_assert(json_parser_load_from_data(parser, sarif, -1, NULL));
    JsonArray *results = sarif_results(parser);
    ck_assert_uint_eq(json_array_get_length(results), n);
    return json_object_get_object_member(json_array_get_object_element(results, 0), "properties");
}

/* One bug reached two ways, in every format: the entry's ways in named,
 * @ways (NULL-terminated) in that order. */
static void assert_one_entry_two_ways(const char *fixture, const char *const *ways)
{
    Capture capture = { 0 };
    capture_open(&capture, fixture, "nio4r");
    g_autofree char *text = report_of("text", &capture, NULL);
    ck_assert_msg(count_entries(text) == 1, "not one entry:\n%s", text);
    gl_assert_line(text, "^one bug: lost in .*, entered 2 ways$");
    g_autofree char *first = g_strdup_printf("^way in 1: %s \\((ext/nio4r/)?selector\\.c:\\d+\\): "
                                             "\\d+ bytes in \\d+ blocks in \\d+ call paths$", ways[0]);
    g_autofree char *second = g_strdup_printf("^way in 2: %s \\((ext/nio4r/)?selector\\.c:\\d+\\): "
                                              "\\d+ bytes in \\d+ blocks? in \\d+ call paths?$", ways[1]);
    gl_assert_line(text, first);
    gl_assert_line(text, second);
    gl_assert_line(text, " in 1 group \\(");
    gl_assert_line(text, "^gemleak: FAIL: 1 leak \\(\\d+ call paths\\) losing \\d+ bytes");

    g_autofree char *json = report_of("json", &capture, NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *groups = json_object_get_array_member(root, "groups");
    ck_assert_uint_eq(json_array_get_length(groups), 1);
    JsonArray *entries = json_object_get_array_member(json_array_get_object_element(groups, 0),
                                                      "entries");
    ck_assert_uint_eq(json_array_get_length(entries), 2);
    for (guint i = 0; i < 2; i++)
        ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(entries, i),
                                                       "fn"), ways[i]);
    JsonArray *findings = json_object_get_array_member(root, "findings");
    for (guint i = 0; i < json_array_get_length(findings); i++)
        ck_assert_int_eq(json_object_get_int_member(json_array_get_object_element(findings, i),
                                                    "group"), 1);

    g_autofree char *junit = report_of("junit", &capture, NULL);
    ck_assert_uint_eq(gl_test_count(junit, strlen(junit), "<testcase "), 1);
    gl_assert_line(junit, "tests=\"1\" failures=\"1\"");
    g_autofree char *via = g_strdup_printf("via %s \\((ext/nio4r/)?selector\\.c:\\d+\\) and %s,",
                                           ways[0], ways[1]);
    gl_assert_line(junit, via);
    gl_assert_line(junit, "^way in 2: ");

    g_autofree char *github = report_of("github", &capture, NULL);
    ck_assert_uint_eq(gl_test_count(github, strlen(github), "::error "), 1);
    g_autofree char *title = g_strdup_printf("title=gemleak%%3A definite leak in .* via %s .* "
                                             "and %s%%2C \\d+ call paths::", ways[0], ways[1]);
    gl_assert_line(github, title);
    gl_assert_line(github, "%0Away in 2: ");

    g_autofree char *sarif = report_of("sarif", &capture, NULL);
    g_autoptr(JsonParser) sarif_parser = json_parser_new();
    JsonObject *properties = sarif_first_properties(sarif_parser, sarif, 1);
    JsonArray *ways_in = json_object_get_array_member(properties, "waysIn");
    ck_assert_uint_eq(json_array_get_length(ways_in), 2);
    ck_assert_str_eq(json_array_get_string_element(ways_in, 1), ways[1]);
    capture_close(&capture);
}

/* nio4r 2.7.4's suite under Valgrind on Ruby 3.1 (fixtures/capture-gems.sh):
 * libev's ev_loop_destroy frees with realloc(p, 0), which the allocator
 * nio4r gives it (Ruby's xrealloc) answers with a new block: the same
 * blocks lost by the same calls, reached from NIO::Selector#close and
 * from the selector's free function. Two entries before. */
START_TEST(test_nio4r_two_ways_in_one_entry)
{
    const char *ways[] = { "NIO_Selector_close_synchronized", "NIO_Selector_free", NULL };
    assert_one_entry_two_ways("xml/nio4r-ruby31", ways);
}
END_TEST

/* The same suite under LeakSanitizer on Ruby 3.4.5, whose -O3 build
 * inlined ev_realloc into its callers: the blocks are allocated in
 * ev_loop_destroy, in epoll_destroy it calls, and in NIO_Selector_shutdown
 * (ev_loop_destroy inlined, its frame not shown). Six entries before. */
START_TEST(test_nio4r_under_lsan_one_entry)
{
    const char *ways[] = { "NIO_Selector_close_synchronized", "NIO_Selector_free", NULL };
    assert_one_entry_two_ways("lsan/nio4r-ruby34", ways);
    Capture capture = { 0 };
    capture_open(&capture, "lsan/nio4r-ruby34", "nio4r");
    g_autofree char *text = report_of("text", &capture, NULL);
    gl_assert_line(text, "^1564 bytes in 1564 blocks are definitely lost in 36 call paths "
                         "\\(202 occurrences in 1 process\\)$");
    gl_assert_line(text, "^one bug: lost in ev_loop_destroy, NIO_Selector_shutdown and "
                         "epoll_destroy, entered 2 ways$");
    capture_close(&capture);
}
END_TEST

/* fast_jsonparser 0.6.0 under Valgrind with indirect leaks shown: a break
 * out of load_many's block jumps over the document stream's destructors,
 * and the parser's implementation object is lost with the two buffers it
 * owns (indirectly lost). One entry, its owned blocks in it; before, the
 * buffers were an entry of their own. */
START_TEST(test_fast_jsonparser_owned_blocks_in_their_entry)
{
    Capture capture = { 0 };
    capture_open(&capture, "xml/fast_jsonparser-ruby31", "fast_jsonparser");
    g_autofree char *text = report_of("text", &capture, "definite,indirect");
    /* the parser's, and the parser_t struct its free function leaves */
    ck_assert_msg(count_entries(text) == 2, "not two entries:\n%s", text);
    gl_assert_line(text, "^16480 \\(96 direct, 16384 indirect\\) bytes in 1 block is definitely "
                         "lost$");
    gl_assert_line(text, "^it owned 16384 bytes in 2 blocks, lost with it:$");
    gl_assert_line(text, "^owned 1: 8192 bytes in 1 block is indirectly lost: set_max_depth "
                         "\\(ext/fast_jsonparser/simdjson\\.cpp:982[34]\\) < ");
    gl_assert_line(text, "^owned 2: 8192 bytes in 1 block is indirectly lost: ");
    gl_assert_no_line(text, "^16384 bytes in 2 blocks are indirectly lost");
    gl_assert_line(text, ": 4 findings in 2 groups ");

    g_autofree char *json = report_of("json", &capture, "definite,indirect");
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *groups = json_object_get_array_member(root, "groups");
    ck_assert_uint_eq(json_array_get_length(groups), 2);
    JsonObject *group = json_array_get_object_element(groups, 0);
    ck_assert_int_eq(json_object_get_int_member(group, "bytes"), 16480);
    JsonArray *owned = json_object_get_array_member(group, "owned");
    ck_assert_uint_eq(json_array_get_length(owned), 2);
    ck_assert_int_eq(json_object_get_int_member(json_array_get_object_element(owned, 0), "bytes"),
                     8192);
    JsonArray *findings = json_object_get_array_member(root, "findings");
    guint in_first = 0;
    for (guint i = 0; i < json_array_get_length(findings); i++)
        in_first += json_object_get_int_member(json_array_get_object_element(findings, i),
                                               "group") == 1;
    ck_assert_uint_eq(in_first, 3);

    g_autofree char *junit = report_of("junit", &capture, "definite,indirect");
    ck_assert_uint_eq(gl_test_count(junit, strlen(junit), "<testcase "), 2);
    gl_assert_line(junit, "^owned 1: 8192 bytes");
    g_autofree char *github = report_of("github", &capture, "definite,indirect");
    ck_assert_uint_eq(gl_test_count(github, strlen(github), "::error "), 2);
    gl_assert_line(github, "%0Aowned 1: 8192 bytes");
    g_autofree char *sarif = report_of("sarif", &capture, "definite,indirect");
    g_autoptr(JsonParser) sarif_parser = json_parser_new();
    JsonObject *properties = sarif_first_properties(sarif_parser, sarif, 2);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(properties, "owned")), 2);
    capture_close(&capture);
}
END_TEST

/* The same bug under LeakSanitizer on Ruby 3.4.5: it reports the parser's
 * buffers (tape, strings) direct, their stack one frame of load_many (its
 * symbolizer did not unfold the code inlined there), the implementation
 * object direct and its buffers indirect. One entry, with what the
 * implementation object owned counted in it, as Valgrind counts it; before,
 * three entries, the indirect bytes in the tape's. */
START_TEST(test_fast_jsonparser_under_lsan_one_entry)
{
    Capture capture = { 0 };
    capture_open(&capture, "lsan/fast_jsonparser-ruby34", "fast_jsonparser");
    g_autofree char *text = report_of("text", &capture, NULL);
    ck_assert_msg(count_entries(text) == 2, "not two entries:\n%s", text);
    gl_assert_line(text, "^9683744 \\(9667360 direct, 16384 indirect\\) bytes in 3 blocks are "
                         "definitely lost in 3 call paths \\(3 occurrences in 1 process\\)$");
    gl_assert_line(text, "^call path \\d: 16480 \\(96 direct, 16384 indirect\\) bytes in 1 block "
                         "is definitely lost");
    /* what it owned, as Valgrind says it without indirect leaks asked for:
     * the run lists its blocks when asked (a filter of Valgrind's XML
     * cannot, where the run did not ask Valgrind for them: a trial was
     * told to give --leak-kinds definite,indirect it had just given) */
    gl_assert_line(text, "^it owned 16384 bytes, lost with it \\(a run with --leak-kinds "
                         "definite,indirect lists its blocks\\)$");
    gl_assert_line(text, "^gemleak: FAIL: 2 leaks \\(4 call paths\\) losing 9683784 bytes$");
    /* asked for, its blocks, by the runtime's names (the object the
     * capture's run read is not here) */
    g_autofree char *owned = report_of("text", &capture, "definite,indirect");
    ck_assert_msg(count_entries(owned) == 2, "not two entries:\n%s", owned);
    gl_assert_line(owned, "^it owned 16384 bytes in 2 blocks, lost with it:$");
    gl_assert_line(owned, "^owned 1: 8192 bytes in 1 block is indirectly lost: \\S*set_max_depth");
    capture_close(&capture);
}
END_TEST

/* ---- uncertain entries (issue 40, item 3) ----------------------------------- */

/* The probe's Ruby strings under two unnamed frames of Debian's stripped
 * libruby (fixtures/xml/probe.xml): an uncertain finding, headed as one in
 * every format, with why, where it was headed as a bug. */
START_TEST(test_uncertain_headed_in_every_format)
{
    g_autofree char *xml = gl_test_fixture("xml/probe.xml");
    RUN(text, "filter", "-O", "probe", xml);
    gl_assert_line(text.out, "^uncertain: 215 bytes in 1 block is definitely lost$\n"
                             "uncertain: 2 frames in libruby-3\\.1\\.so\\.3\\.1\\.2 have no symbols");
    gl_test_run_clear(&text);

    RUN(junit, "filter", "-O", "probe", "--format", "junit", xml);
    gl_assert_line(junit.out, "<testcase name=\"uncertain: definite leak in n_strings_under_gc "
                              "\\(probe\\.c:\\d+\\)\"");
    gl_assert_line(junit.out, "<skipped message=\"uncertain: 2 frames in libruby-3\\.1\\.so\\.3\\.1\\.2 "
                              "have no symbols, so gemleak cannot tell whether Ruby or the extension "
                              "owns this memory; --fail-on uncertain fails on it\"");
    gl_test_run_clear(&junit);

    RUN(github, "filter", "-O", "probe", "--format", "github", xml);
    gl_assert_line(github.out, "^::warning title=gemleak%3A uncertain%3A definite leak in "
                               "n_strings_under_gc \\(probe\\.c%3A\\d+\\)::uncertain: 215 bytes in 1 "
                               "block is definitely lost%0Auncertain: 2 frames in ");
    gl_test_run_clear(&github);

    RUN(json, "filter", "-O", "probe", "--format", "json", xml);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, json.out, -1, NULL));
    JsonArray *groups = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "groups");
    guint uncertain = 0;
    for (guint i = 0; i < json_array_get_length(groups); i++) {
        JsonObject *group = json_array_get_object_element(groups, i);
        if (json_object_get_boolean_member(group, "certain"))
            continue;
        uncertain++;
        ck_assert(g_str_has_prefix(json_object_get_string_member(group, "uncertainty"),
                                   "2 frames in libruby-3.1.so.3.1.2 have no symbols"));
    }
    ck_assert_uint_eq(uncertain, 1);
    gl_test_run_clear(&json);

    RUN(sarif, "filter", "-O", "probe", "--format", "sarif", xml);
    gl_test_assert_sarif_valid(sarif.out);
    g_autoptr(JsonParser) sarif_parser = json_parser_new();
    ck_assert(json_parser_load_from_data(sarif_parser, sarif.out, -1, NULL));
    JsonArray *results = sarif_results(sarif_parser);
    guint warnings = 0;
    for (guint i = 0; i < json_array_get_length(results); i++) {
        JsonObject *result = json_array_get_object_element(results, i);
        const char *said = json_object_get_string_member(json_object_get_object_member(result,
                                                                                       "message"),
                                                         "text");
        gboolean doubt = g_str_has_prefix(said, "uncertain: ");
        ck_assert_msg(doubt == (strcmp(json_object_get_string_member(result, "level"),
                                       "warning") == 0), "%s", said);
        warnings += doubt;
    }
    ck_assert_uint_eq(warnings, 1);
    gl_test_run_clear(&sarif);
}
END_TEST

/* Two uncertain call paths of one function: "maybe one bug", never "one
 * bug", under a heading that says uncertain. */
START_TEST(test_uncertain_group_is_not_one_bug)
{
    g_autoptr(GlFindings) table = gl_findings_new();
    for (guint i = 0; i < 2; i++) {
        g_autofree char *inner = g_strdup_printf("parse@/gem/x.so:x.c:%u", 10 + i);
        GlRecord *record = gl_test_record("Leak_DefinitelyLost", "malloc@/lib/vgpreload.so",
                                          "?@/usr/lib/libruby.so", "?@/usr/lib/libruby.so",
                                          inner, "rb_vm_exec@/usr/lib/libruby.so", NULL);
        record->stack.frames[3].in_target = TRUE;
        record->leaked_bytes = 20;
        record->leaked_blocks = 1;
        record->uncertain = TRUE;
        record->unnamed_frames = 2;
        record->unnamed_object = gl_record_intern(record, "libruby-3.1.so.3.1.2");
        gl_findings_add(table, record, i);
    }
    g_autoptr(GPtrArray) findings = gl_findings_sorted(table);
    g_autoptr(GPtrArray) groups = gl_findings_group(findings);
    ck_assert_uint_eq(groups->len, 1);
    g_autofree char *text = gl_group_text(g_ptr_array_index(groups, 0), FALSE, "/gem");
    gl_assert_line(text, "^uncertain: 40 bytes in 2 blocks are definitely lost in 2 call paths "
                         "\\(2 occurrences in 1 process\\)$");
    gl_assert_line(text, "^maybe one bug \\(uncertain\\): lost in parse, which Ruby called$");
    gl_assert_no_line(text, "^one bug");
}
END_TEST

Suite *gl_group_suite(void)
{
    Suite *suite = suite_create("group");
    TCase *shapes = tcase_create("shapes");
    tcase_add_test(shapes, test_allocator_from_thirty_call_sites_is_one_entry);
    tcase_add_test(shapes, test_one_objects_buffers_are_one_entry);
    tcase_add_test(shapes, test_two_bugs_through_one_helper_stay_two);
    tcase_add_test(shapes, test_header_frames_do_not_join_bugs);
    suite_add_tcase(suite, shapes);
    TCase *formats = tcase_create("group formats");
    tcase_set_timeout(formats, 30);
    tcase_add_test(formats, test_json_keeps_findings_and_adds_groups);
    tcase_add_test(formats, test_json_read_back_groups_the_same);
    tcase_add_test(formats, test_ci_formats_one_entry_a_group);
    tcase_add_test(formats, test_one_byte_in_english);
    tcase_add_test(formats, test_titles_name_the_groups_entry);
    suite_add_tcase(suite, formats);
    TCase *gems = tcase_create("real gems");
    tcase_set_timeout(gems, 60);
    tcase_add_test(gems, test_nio4r_two_ways_in_one_entry);
    tcase_add_test(gems, test_nio4r_under_lsan_one_entry);
    tcase_add_test(gems, test_fast_jsonparser_owned_blocks_in_their_entry);
    tcase_add_test(gems, test_fast_jsonparser_under_lsan_one_entry);
    suite_add_tcase(suite, gems);
    TCase *doubt = tcase_create("uncertain");
    tcase_set_timeout(doubt, 30);
    tcase_add_test(doubt, test_uncertain_headed_in_every_format);
    tcase_add_test(doubt, test_uncertain_group_is_not_one_bug);
    suite_add_tcase(suite, doubt);
    return suite;
}
