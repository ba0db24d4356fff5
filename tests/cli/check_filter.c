/* src/cli/filter.c: gemleak filter on what is already there: Valgrind's
 * XML (files, directories, standard input, gzip, cut short) and gemleak's
 * own JSON reports (the shards of a CI matrix), and the statuses it ends
 * with. Sanitizers' reports: check_filter_sanitizer.c. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/json_format.h"
#include "gemleak/read/input.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

START_TEST(test_findings_exit_1_clean_exit_0)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    RUN(found, "filter", "-O", "leaky", leak);
    ck_assert_int_eq(found.status, 1);
    gl_assert_line(found.out, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    ck_assert_str_eq(found.err, "");
    gl_test_run_clear(&found);

    RUN(nothing, "filter", "-O", "leaky", clean);
    ck_assert_int_eq(nothing.status, 0);
    gl_assert_line(nothing.out, "^gemleak: pass: no findings$");
    gl_test_run_clear(&nothing);

    /* A Ruby Regexp, as the Rake settings pass it */
    RUN(regex, "filter", "-O", "/\\Aleak(y|ier)\\z/", leak);
    ck_assert_int_eq(regex.status, 1);
    gl_assert_line(regex.out, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_test_run_clear(&regex);
}
END_TEST

START_TEST(test_unreadable_inputs_exit_3_and_keep_the_rest)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    g_autofree char *empty = gl_test_fixture("edge/empty.xml");
    g_autofree char *not_xml = gl_test_fixture("edge/not_xml.txt");
    g_autofree char *helgrind = gl_test_fixture("edge/helgrind.xml");
    RUN(unsure, "filter", "-O", "leaky", clean, empty);
    ck_assert_int_eq(unsure.status, 3);
    gl_test_run_clear(&unsure);

    /* findings win over unreadable inputs: the gate failed either way */
    RUN(run, "filter", "-O", "leaky", "/nonexistent/42.xml", leak, empty, not_xml, helgrind);
    ck_assert_int_eq(run.status, 1);
    /* what could be read is reported all the same */
    gl_assert_line(run.out, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(run.err, "^gemleak: /nonexistent/42\\.xml: cannot open: No such file or directory$");
    gl_assert_line(run.err, "^gemleak: .*empty\\.xml: empty file");
    gl_assert_line(run.err, "^gemleak: .*not_xml\\.txt: not XML");
    gl_assert_line(run.err, "^gemleak: .*helgrind\\.xml: Valgrind helgrind output, not memcheck");
    gl_test_run_clear(&run);
}
END_TEST

START_TEST(test_truncated_file_reports_what_came_before)
{
    g_autofree char *path = gl_test_fixture("xml/leak.xml");
    gsize length;
    g_autofree char *text = gl_test_read(path, &length);
    /* cut in the middle of the last error */
    const char *last = g_strrstr(text, "<error>");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *cut = g_build_filename(dir, "4242.xml", NULL);
    gl_test_write(cut, text, (last - text) + 200);
    RUN(run, "filter", "-O", "leaky", "--format", "json", cut);
    ck_assert_int_eq(run.status, 1);  /* the leaks before the cut */
    gl_assert_line(run.err, "^gemleak: .*4242\\.xml: truncated at byte \\d+ after \\d+ complete errors");
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, run.out, -1, NULL));
    JsonObject *summary = json_object_get_object_member(
        json_node_get_object(json_parser_get_root(parser)), "summary");
    JsonArray *truncated = json_object_get_array_member(summary, "truncated_files");
    ck_assert_uint_eq(json_array_get_length(truncated), 1);
    ck_assert_str_eq(json_array_get_string_element(truncated, 0), cut);
    ck_assert_int_gt(json_object_get_int_member(summary, "findings"), 0);
    gl_test_run_clear(&run);

    /* cut before any finding: nothing failed, but the input was incomplete */
    g_autofree char *early = g_build_filename(dir, "4243.xml", NULL);
    gl_test_write(early, text, strstr(text, "<error>") - text + 50);
    RUN(incomplete, "filter", "-O", "leaky", early);
    ck_assert_int_eq(incomplete.status, 3);
    gl_assert_line(incomplete.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 0 errors read: 0 findings, 1 truncated file$");
    /* never "pass" on what could not all be read */
    gl_assert_no_line(incomplete.out, "pass");
    gl_assert_line(incomplete.out, "^gemleak: INCOMPLETE: no findings in what could be read; 1 "
                                   "input could not all be read \\(see gemleak's messages\\)$");
    gl_test_run_clear(&incomplete);
    RUN(incomplete_json, "filter", "-O", "leaky", "--format", "json", early);
    g_autoptr(JsonParser) again = json_parser_new();
    ck_assert(json_parser_load_from_data(again, incomplete_json.out, -1, NULL));
    JsonObject *gate = json_object_get_object_member(
        json_node_get_object(json_parser_get_root(again)), "gate");
    ck_assert(!json_object_get_boolean_member(gate, "failed"));
    ck_assert(!json_object_get_boolean_member(gate, "complete"));
    gl_test_run_clear(&incomplete_json);

    /* CI reports do not pass it either: an error case, an unsuccessful
     * invocation, an error annotation */
    g_autofree char *junit = g_build_filename(dir, "junit.xml.out", NULL);
    g_autofree char *sarif = g_build_filename(dir, "report.sarif", NULL);
    g_autofree char *github = g_build_filename(dir, "github.txt", NULL);
    g_autofree char *junit_spec = g_strconcat("junit:", junit, NULL);
    g_autofree char *sarif_spec = g_strconcat("sarif:", sarif, NULL);
    g_autofree char *github_spec = g_strconcat("github:", github, NULL);
    RUN(ci, "filter", "-O", "leaky", "--format", junit_spec, "--format", sarif_spec, "--format",
        github_spec, early);
    ck_assert_int_eq(ci.status, 3);
    g_autofree char *junit_text = gl_test_read(junit, NULL);
    gl_assert_line(junit_text, "errors=\"1\"");
    gl_assert_line(junit_text, "<testcase name=\"Valgrind's XML could not all be read\"");
    gl_assert_line(junit_text, "<error message=\".*4243\\.xml: truncated at byte \\d+");
    gl_assert_no_line(junit_text, "no leaks or memory errors");
    g_autofree char *sarif_text = gl_test_read(sarif, NULL);
    gl_assert_line(sarif_text, "\"executionSuccessful\" : false");
    gl_assert_line(sarif_text, "\"text\" : \".*4243\\.xml: truncated at byte \\d+");
    g_autofree char *github_text = gl_test_read(github, NULL);
    gl_assert_line(github_text, "^::error title=gemleak: Valgrind's XML could not all be read::"
                                ".*4243\\.xml: truncated at byte \\d+");
    gl_test_run_clear(&ci);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_standard_input)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    int fd = open(leak, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(dup2(fd, STDIN_FILENO), 0);  /* Check runs each test in its own process */
    close(fd);
    RUN(run, "filter", "-O", "leaky", "-");
    ck_assert_int_eq(run.status, 1);
    gl_assert_line(run.out, "^ \\*leaky_leak ");
    gl_test_run_clear(&run);
}
END_TEST

/* JSON of a report: its findings, keyed by fingerprint, without what
 * differs from a run to a merge of its shards (nothing should). */
static JsonNode *report_findings(const char *path, JsonObject **summary)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert_msg(json_parser_load_from_file(parser, path, NULL), "%s", path);
    JsonNode *root = json_node_copy(json_parser_get_root(parser));
    *summary = json_object_get_object_member(json_node_get_object(root), "summary");
    return root;
}

/* CI shards each upload a small JSON report; gemleak filter merges them as
 * it merges processes: the same findings, occurrences, pids and summary as
 * one run over all. Mixed with XML too. */
START_TEST(test_shard_reports_merge)
{
    g_autofree char *fork = gl_test_fixture("xml/fork");
    g_autoptr(GPtrArray) files = gl_input_list(fork, NULL, NULL);
    ck_assert_uint_eq(files->len, 2);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *whole = g_build_filename(dir, "whole.json", NULL);
    g_autofree char *merged = g_build_filename(dir, "merged.json", NULL);
    g_autofree char *mixed = g_build_filename(dir, "mixed.json", NULL);
    g_autofree char *shard1 = g_build_filename(dir, "shard1.json", NULL);
    g_autofree char *shard2 = g_build_filename(dir, "shard2.json", NULL);
    RUN(one, "filter", "-O", "leaky", "--format", "json", "-o", whole, fork);
    RUN(s1, "filter", "-O", "leaky", "--format", "json", "-o", shard1,
        (const char *) g_ptr_array_index(files, 0));
    RUN(s2, "filter", "-O", "leaky", "--format", "json", "-o", shard2,
        (const char *) g_ptr_array_index(files, 1));
    RUN(both, "filter", "--format", "json", "-o", merged, shard1, shard2);
    ck_assert_int_eq(both.status, one.status);
    RUN(half, "filter", "--format", "json", "-o", mixed, shard1,
        (const char *) g_ptr_array_index(files, 1));
    ck_assert_int_eq(half.status, one.status);

    JsonObject *whole_summary, *merged_summary, *mixed_summary;
    g_autoptr(JsonNode) a = report_findings(whole, &whole_summary);
    g_autoptr(JsonNode) b = report_findings(merged, &merged_summary);
    g_autoptr(JsonNode) c = report_findings(mixed, &mixed_summary);
    const char *members[] = { "files", "errors_seen", "findings", "occurrences", "skipped" };
    for (guint i = 0; i < G_N_ELEMENTS(members); i++) {
        ck_assert_int_eq(json_object_get_int_member(whole_summary, members[i]),
                         json_object_get_int_member(merged_summary, members[i]));
        ck_assert_int_eq(json_object_get_int_member(whole_summary, members[i]),
                         json_object_get_int_member(mixed_summary, members[i]));
    }
    JsonArray *fa = json_object_get_array_member(json_node_get_object(a), "findings");
    JsonNode *others[] = { b, c };
    for (guint o = 0; o < G_N_ELEMENTS(others); o++) {
        JsonArray *fb = json_object_get_array_member(json_node_get_object(others[o]), "findings");
        ck_assert_uint_eq(json_array_get_length(fa), json_array_get_length(fb));
        for (guint i = 0; i < json_array_get_length(fa); i++) {
            JsonObject *x = json_array_get_object_element(fa, i);
            JsonObject *y = json_array_get_object_element(fb, i);
            ck_assert_str_eq(json_object_get_string_member(x, "fingerprint"),
                             json_object_get_string_member(y, "fingerprint"));
            ck_assert_str_eq(json_object_get_string_member(x, "message"),
                             json_object_get_string_member(y, "message"));
            ck_assert_int_eq(json_object_get_int_member(x, "bytes"),
                             json_object_get_int_member(y, "bytes"));
            ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(x, "pids")),
                              json_array_get_length(json_object_get_array_member(y, "pids")));
        }
    }
    /* the shards' targets are the merge's */
    JsonArray *targets = json_object_get_array_member(json_node_get_object(b), "targets");
    ck_assert_uint_eq(json_array_get_length(targets), 1);
    ck_assert_str_eq(json_array_get_string_element(targets, 0), "leaky");
    gl_test_run_clear(&one);
    gl_test_run_clear(&s1);
    gl_test_run_clear(&s2);
    gl_test_run_clear(&both);
    gl_test_run_clear(&half);
    gl_remove_tree(dir);
}
END_TEST

/* A shard's report keeps the tests each leak was lost in (--per-test),
 * and the leak reports a later check repeated: merged, they say the same. */
START_TEST(test_shard_reports_keep_the_tests)
{
    g_autofree char *xml = gl_test_fixture("xml/per_test.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *shard = g_build_filename(dir, "shard.json", NULL);
    g_autofree char *merged = g_build_filename(dir, "merged.json", NULL);
    g_autofree char *shard_spec = g_strconcat("json:", shard, NULL);
    g_autofree char *merged_spec = g_strconcat("json:", merged, NULL);
    RUN(one, "filter", "-O", "leaky", "--format", "text", "--format", shard_spec, xml);
    RUN(again, "filter", "--format", "text", "--format", merged_spec, shard);
    ck_assert_int_eq(again.status, one.status);
    ck_assert_str_eq(again.out, one.out);
    gl_assert_line(again.out, "^first lost in LeakyTest#test_leak \\(.*leaky_test\\.rb:\\d+\\)$");
    gl_assert_line(again.out, ", 1 repeated by a later leak check\\)$");
    g_autofree char *a = gl_test_read(shard, NULL);
    g_autofree char *b = gl_test_read(merged, NULL);
    ck_assert_str_eq(b, a);
    gl_test_run_clear(&one);
    gl_test_run_clear(&again);
    gl_remove_tree(dir);
}
END_TEST

/* What a shard could not check stays unchecked in the merge: a shard that
 * could not all be read, or whose run loaded an extension outside
 * Valgrind, makes the merged gate INCOMPLETE, never a pass. */
START_TEST(test_incomplete_shard_stays_incomplete)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    gsize length;
    g_autofree char *text = gl_test_read(leak, &length);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *early = g_build_filename(dir, "4243.xml", NULL);
    gl_test_write(early, text, strstr(text, "<error>") - text + 50);
    g_autofree char *shard1 = g_build_filename(dir, "shard1.json", NULL);
    g_autofree char *shard2 = g_build_filename(dir, "shard2.json", NULL);
    g_autofree char *merged = g_build_filename(dir, "merged.json", NULL);
    g_autofree char *merged_spec = g_strconcat("json:", merged, NULL);
    RUN(s1, "filter", "-O", "leaky", "--format", "json", "-o", shard1, early);
    ck_assert_int_eq(s1.status, 3);
    RUN(s2, "filter", "-O", "leaky", "--format", "json", "-o", shard2, clean);
    ck_assert_int_eq(s2.status, 0);

    RUN(both, "filter", "--format", "text", "--format", merged_spec, shard1, shard2);
    ck_assert_msg(both.status == 3, "status %d\n%s%s", both.status, both.out, both.err);
    gl_assert_no_line(both.out, "pass");
    gl_assert_line(both.out, "^gemleak: 2 processes checked( \\([^)]*\\))?, .*, 1 truncated file$");
    gl_assert_line(both.out, "^gemleak: INCOMPLETE: no findings in what could be read; 1 input "
                             "could not all be read \\(see gemleak's messages\\)$");
    /* the shard's own problem, said with the shard that had it */
    gl_assert_line(both.err, "^gemleak: .*shard1\\.json: .*4243\\.xml: truncated at byte \\d+");
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, merged, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonObject *gate = json_object_get_object_member(root, "gate");
    ck_assert(!json_object_get_boolean_member(gate, "complete"));
    JsonArray *truncated = json_object_get_array_member(
        json_object_get_object_member(root, "summary"), "truncated_files");
    ck_assert_uint_eq(json_array_get_length(truncated), 1);
    ck_assert_str_eq(json_array_get_string_element(truncated, 0), early);

    /* INCOMPLETE in, INCOMPLETE out, however many merges deep */
    RUN(again, "filter", merged);
    ck_assert_int_eq(again.status, 3);
    gl_assert_line(again.out, "^gemleak: INCOMPLETE: no findings in what could be read; 1 input "
                              "could not all be read");
    gl_assert_line(again.err, "^gemleak: .*merged\\.json: .*shard1\\.json: .*4243\\.xml: truncated");

    /* a report that says no more than that its gate was incomplete */
    g_autofree char *terse = g_build_filename(dir, "terse.json", NULL);
    gl_test_write(terse, "{\"tool\": {\"name\": \"gemleak\"}, \"report_version\": 1, \"targets\": "
                         "[\"leaky\"], \"findings\": [], \"summary\": {\"files\": 1}, \"gate\": "
                         "{\"failed\": false, \"complete\": false, \"message\": \"gemleak: "
                         "INCOMPLETE: no findings in what could be read\"}}\n", -1);
    RUN(bare, "filter", terse, shard2);
    ck_assert_int_eq(bare.status, 3);
    gl_assert_line(bare.out, "^gemleak: INCOMPLETE: no findings in what could be read; 1 input "
                             "could not all be read");
    gl_assert_line(bare.err, "^gemleak: .*terse\\.json: not everything was checked: gemleak: "
                             "INCOMPLETE: no findings in what could be read$");

    /* a shard whose run loaded an extension outside Valgrind */
    g_autofree char *outside = g_build_filename(dir, "outside.json", NULL);
    gl_test_write(outside, "{\"tool\": {\"name\": \"gemleak\"}, \"report_version\": 1, \"targets\": "
                           "[\"leaky\"], \"findings\": [], \"summary\": {\"files\": 1, "
                           "\"unchecked_processes\": 1, \"problems\": [\"process 12, forked from "
                           "the launcher rake, loaded /x/leaky.so outside Valgrind: what it ran "
                           "was not checked; run again with --trace-launchers\"]}, \"gate\": "
                           "{\"failed\": false, \"complete\": false}}\n", -1);
    RUN(launcher, "filter", outside, shard2);
    ck_assert_int_eq(launcher.status, 3);
    gl_assert_line(launcher.out, "^gemleak: INCOMPLETE: no findings in what was checked; 1 "
                                 "process that loaded an extension was not checked");
    gl_assert_line(launcher.err, "^gemleak: .*outside\\.json: process 12, forked from the "
                                 "launcher rake, loaded /x/leaky\\.so outside Valgrind: what it "
                                 "ran was not checked");
    gl_test_run_clear(&s1);
    gl_test_run_clear(&s2);
    gl_test_run_clear(&both);
    gl_test_run_clear(&again);
    gl_test_run_clear(&bare);
    gl_test_run_clear(&launcher);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_json_that_is_not_a_report)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *other = g_build_filename(dir, "other.json", NULL);
    gl_test_write(other, "{\"findings\": 3, \"tool\": {\"name\": \"rubocop\"}}\n", -1);
    RUN(run, "filter", "-O", "leaky", other);
    ck_assert_int_eq(run.status, 3);
    gl_assert_line(run.err, "other\\.json: JSON, but not a gemleak report");
    gl_test_run_clear(&run);

    g_autofree char *deep = g_build_filename(dir, "deep.json", NULL);
    GString *nested = g_string_new("{\"a\":");
    for (int i = 0; i < 80000; i++)
        g_string_append_c(nested, '[');
    gl_test_write(deep, nested->str, (gssize) nested->len);
    g_string_free(nested, TRUE);
    RUN(refused, "filter", "-O", "leaky", deep);
    ck_assert_int_eq(refused.status, 3);
    gl_assert_line(refused.err, "deep\\.json: JSON nested deeper than \\d+ levels");
    gl_test_run_clear(&refused);

    /* A report of a shape this gemleak does not know, given alone without
     * -O: its targets cannot be read, and the reason is its version, not
     * a missing --object. */
    g_autofree char *newer = g_build_filename(dir, "newer.json", NULL);
    g_autofree char *report = g_strdup_printf(
        "{\"tool\": {\"name\": \"gemleak\"}, \"report_version\": %d, \"targets\": [\"leaky\"], "
        "\"findings\": []}\n", GL_JSON_REPORT_VERSION + 1);
    gl_test_write(newer, report, -1);
    ck_assert_int_eq(chdir(dir), 0);
    RUN(unknown, "filter", newer);
    ck_assert_msg(unknown.status == 3, "status %d\n%s", unknown.status, unknown.err);
    g_autofree char *pattern = g_strdup_printf("newer\\.json: a report of shape %d, newer than "
                                               "this gemleak reads \\(%d\\)",
                                               GL_JSON_REPORT_VERSION + 1, GL_JSON_REPORT_VERSION);
    gl_assert_line(unknown.err, pattern);
    gl_assert_no_line(unknown.err, "no target extension known");
    gl_test_run_clear(&unknown);
    gl_remove_tree(dir);
}
END_TEST

/* Uninitialised values from a user's own Valgrind run (memcheck's default
 * --undef-value-errors=yes, here with --track-origins=yes): Ruby's GC
 * marking the stack under the extension's rb_str_new fails nothing. */
START_TEST(test_uninitialised_values_in_rubys_gc_pass)
{
    g_autofree char *xml = gl_test_fixture("xml/gc_uninit.xml");
    RUN(run, "filter", "-O", "probe", xml);
    ck_assert_msg(run.status == 0, "status %d\n%s", run.status, run.out);
    gl_assert_no_line(run.out, "^Conditional jump or move depends on uninitialised value");
    gl_assert_line(run.out, "^uncertain: \\d+ frames in libruby-3\\.1\\.so\\.3\\.1\\.2 have no "
                            "symbols, so gemleak cannot tell whether this error was raised in "
                            "Ruby's garbage collector \\(Ruby's\\) or not \\(the extension's\\)\\. ");
    gl_assert_line(run.out, "^gemleak: pass: no certain finding; ");
    gl_test_run_clear(&run);
}
END_TEST

/* Stacks people can read: the allocation, the extension's frames and a few
 * past them, runs of unnamed frames as one line; the source line shown as
 * compilers show it; --frames all for everything. */
START_TEST(test_text_stacks_people_can_read)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *source = gl_test_project_file("fixtures/ext/leaky/leaky.c");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *ext = g_build_filename(dir, "ext", NULL);
    g_mkdir_with_parents(ext, 0700);
    g_autofree char *copy = g_build_filename(ext, "leaky.c", NULL);
    g_autofree char *code = gl_test_read(source, NULL);
    gl_test_write(copy, code, -1);
    g_autofree char *xml = gl_test_read(leak, NULL);
    g_autoptr(GString) moved = g_string_new(xml);
    g_string_replace(moved, "<dir>/tmp/gemleak-fixtures/leaky</dir>", "<dir>EXT</dir>", 0);
    g_autofree char *dir_tag = g_strdup_printf("<dir>%s</dir>", ext);
    g_string_replace(moved, "<dir>EXT</dir>", dir_tag, 0);
    g_autofree char *path = g_build_filename(dir, "leak.xml", NULL);
    gl_test_write(path, moved->str, -1);

    RUN(run, "filter", "-O", "leaky", path);
    ck_assert_int_eq(run.status, 1);
    /* leaky_alloc's malloc, as the file reads */
    gl_assert_line(run.out, "^   +\\d+ \\|     volatile char \\*p = malloc\\(size\\);$");
    gl_assert_line(run.out, "^  \\.\\.\\. \\d+ frames in libruby-3\\.1\\.so\\.3\\.1\\.2$");
    gl_assert_line(run.out, "^  \\.\\.\\. \\d+ more frames$");
    gl_assert_no_line(run.out, "ruby_run_node");
    RUN(all, "filter", "-O", "leaky", "--frames", "all", path);
    gl_assert_line(all.out, "^  ruby_run_node \\(at ");
    gl_assert_no_line(all.out, "more frames");
    gl_assert_no_line(all.out, " frames in ");
    RUN(none, "filter", "-O", "leaky", "--frames", "0", path);
    gl_assert_no_line(none.out, "rb_vm_exec");
    RUN(bad, "filter", "-O", "leaky", "--frames", "many", path);
    ck_assert_int_eq(bad.status, 2);
    gl_test_run_clear(&run);
    gl_test_run_clear(&all);
    gl_test_run_clear(&none);
    gl_test_run_clear(&bad);
    gl_remove_tree(dir);
}
END_TEST

/* An input that begins with text is not XML, whatever follows: said at
 * once, not after reading on to the next '<', which /dev/zero (or a
 * gigabyte of something else) would never give. */
START_TEST(test_endless_text_input_is_not_xml)
{
    RUN(zero, "filter", "-O", "leaky", "/dev/zero");
    ck_assert_int_eq(zero.status, 3);
    gl_assert_line(zero.err, "^gemleak: /dev/zero: not XML \\(text where an element should be, "
                             "at byte 0\\)$");
    gl_test_run_clear(&zero);
}
END_TEST

/* An input named twice (two spellings, a directory and a file in it, "-"
 * twice) is read, and counted, once. */
START_TEST(test_the_same_input_twice_is_read_once)
{
    g_autofree char *xml = gl_test_fixture("xml");
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *absolute = g_canonicalize_filename(leak, NULL);
    RUN(once, "filter", "-O", "leaky", leak);
    RUN(twice, "filter", "-O", "leaky", leak, absolute);
    ck_assert_int_eq(twice.status, once.status);
    ck_assert_str_eq(twice.out, once.out);
    gl_assert_line(twice.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 53 errors read: 3 findings ");
    gl_test_run_clear(&twice);

    RUN(dir, "filter", "-O", "leaky", xml);
    RUN(dir_and_file, "filter", "-O", "leaky", xml, leak);
    ck_assert_str_eq(dir_and_file.out, dir.out);
    gl_test_run_clear(&dir);
    gl_test_run_clear(&dir_and_file);

    int fd = open(leak, O_RDONLY);
    ck_assert_int_ge(dup2(fd, STDIN_FILENO), 0);
    close(fd);
    RUN(stdin_twice, "filter", "-O", "leaky", "-", "-");
    ck_assert_int_eq(stdin_twice.status, once.status);
    gl_assert_line(stdin_twice.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 53 errors read: 3 findings ");
    ck_assert_str_eq(stdin_twice.err, "");
    gl_test_run_clear(&stdin_twice);
    gl_test_run_clear(&once);
}
END_TEST

typedef struct {
    int fd;             /* closed once written */
    const char *path;   /* opened to write when fd is -1 */
    const char *data;
    gsize length;
} Writer;

static gpointer write_and_close(gpointer data)
{
    Writer *writer = data;
    int fd = writer->fd >= 0 ? writer->fd : open(writer->path, O_WRONLY);
    for (gsize done = 0; fd >= 0 && done < writer->length;) {
        ssize_t n = write(fd, writer->data + done, writer->length - done);
        if (n <= 0)
            break;
        done += (gsize) n;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* What a directory holds is read only if it is a regular file: a FIFO
 * named *.xml would block the reader for ever, /dev/zero never ends. They
 * are named and skipped. A FIFO or pipe the user names is read (gemleak
 * filter <(zcat run.xml.gz)). */
START_TEST(test_only_regular_files_are_read_from_a_directory)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    gsize length = 0;
    g_autofree char *xml = gl_test_read(leak, &length);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *file = g_build_filename(dir, "1.xml", NULL);
    gl_test_write(file, xml, (gssize) length);
    g_autofree char *fifo = g_build_filename(dir, "2.xml", NULL);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    g_autofree char *zero = g_build_filename(dir, "3.xml", NULL);
    ck_assert_int_eq(symlink("/dev/zero", zero), 0);
    g_autofree char *subdir = g_build_filename(dir, "4.xml", NULL);
    ck_assert_int_eq(g_mkdir(subdir, 0700), 0);

    RUN(listed, "filter", "-O", "leaky", dir);
    ck_assert_int_eq(listed.status, 1);
    gl_assert_line(listed.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 53 errors read: 3 findings ");
    gl_assert_line(listed.err, "^gemleak: note: .*/2\\.xml: skipped: not a regular file \\(a FIFO\\)$");
    gl_assert_line(listed.err,
                   "^gemleak: note: .*/3\\.xml: skipped: not a regular file \\(a character device\\)$");
    gl_assert_line(listed.err, "^gemleak: note: .*/4\\.xml: skipped: not a regular file \\(a directory\\)$");
    gl_test_run_clear(&listed);

    /* a directory with nothing else to read has nothing read */
    ck_assert_int_eq(g_unlink(file), 0);
    RUN(nothing, "filter", "-O", "leaky", dir);
    ck_assert_int_eq(nothing.status, GL_EXIT_ERROR);
    gl_assert_line(nothing.err, "no \\*\\.xml or \\*\\.xml\\.gz files in this directory");
    gl_assert_line(nothing.err, "^gemleak: note: .*/2\\.xml: skipped: not a regular file \\(a FIFO\\)$");
    gl_test_run_clear(&nothing);

    Writer to_fifo = { .fd = -1, .path = fifo, .data = xml, .length = length };
    GThread *writing = g_thread_new("write", write_and_close, &to_fifo);
    RUN(named_fifo, "filter", "-O", "leaky", fifo);
    g_thread_join(writing);
    ck_assert_int_eq(named_fifo.status, 1);
    gl_assert_line(named_fifo.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 53 errors read: 3 findings ");
    gl_test_run_clear(&named_fifo);

    int ends[2];
    ck_assert_int_eq(pipe(ends), 0);
    Writer to_pipe = { .fd = ends[1], .data = xml, .length = length };
    writing = g_thread_new("write", write_and_close, &to_pipe);
    g_autofree char *dev_fd = g_strdup_printf("/dev/fd/%d", ends[0]);
    RUN(named_pipe, "filter", "-O", "leaky", dev_fd);
    g_thread_join(writing);
    close(ends[0]);
    ck_assert_int_eq(named_pipe.status, 1);
    gl_assert_line(named_pipe.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 53 errors read: 3 findings ");
    gl_test_run_clear(&named_pipe);
    gl_remove_tree(dir);
}
END_TEST

/* A gzip problem is a problem of the input: a clean run whose .xml.gz
 * goes on with bytes that are not gzip (a second member broken) does not
 * pass. */
START_TEST(test_gzip_problem_does_not_pass)
{
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *gz = g_build_filename(dir, "100.xml.gz", NULL);
    g_autofree char *command = g_strdup_printf("gzip -c '%s' > '%s'", clean, gz);
    ck_assert_int_eq(system(command), 0);
    RUN(whole, "filter", "-O", "leaky", gz);
    ck_assert_int_eq(whole.status, GL_EXIT_CLEAN);
    gl_test_run_clear(&whole);

    gsize length = 0;
    g_autofree char *data = gl_test_read(gz, &length);
    GString *broken = g_string_new_len(data, (gssize) length);
    g_string_append_len(broken, "\x1f\x0b\x08\x00garbage", 11);
    gl_test_write(gz, broken->str, (gssize) broken->len);
    g_string_free(broken, TRUE);
    RUN(run, "filter", "-O", "leaky", gz);
    ck_assert_int_eq(run.status, GL_EXIT_ERROR);
    gl_assert_line(run.out, "^gemleak: INCOMPLETE: ");
    gl_assert_line(run.err, "^gemleak: .*/100\\.xml\\.gz: .*gzip");
    gl_test_run_clear(&run);
    gl_remove_tree(dir);
}
END_TEST

/* Returns: (transfer full) a new directory that holds a shared object
 * named @name that is not that library (it defines @symbol alone), which
 * the dynamic loader finds first under LD_LIBRARY_PATH; *@gemleak
 * (transfer full) the gemleak under test. Skips the test without
 * build/gemleak (make builds it) or cc. */
static char *impostor_dir(const char *name, const char *symbol, char **gemleak)
{
    *gemleak = gl_test_project_file("build/gemleak");
    g_autofree char *cc = g_find_program_in_path("cc");
    if (!g_file_test(*gemleak, G_FILE_TEST_IS_EXECUTABLE) || cc == NULL)
        gl_test_skip("no %s (make builds it), or no cc", *gemleak);
    char *dir = gl_test_tmpdir();
    g_autofree char *source = g_build_filename(dir, "empty.c", NULL);
    g_autofree char *text = g_strdup_printf("int %s;\n", symbol);
    gl_test_write(source, text, -1);
    const char *build[] = { "cc", "-shared", "-fPIC", "-o", name, "empty.c", NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn_in(dir, NULL, build, NULL, &err) == 0, "%s", err);
    return dir;
}

/* Returns: (transfer full) what the dynamic loader said it loaded
 * (LD_DEBUG=files) while @gemleak, in @dir, read the sanitizer's report
 * @report into the text report, which it checked; GLib is among it. */
static char *loaded_reading_report(const char *gemleak, const char *dir, const char *report)
{
    const char *text[] = { gemleak, "filter", "-O", "*", report, NULL };
    g_auto(GStrv) debug = g_environ_setenv(g_get_environ(), "LD_DEBUG", "files", TRUE);
    g_autofree char *out = NULL;
    char *err = NULL;
    gl_test_spawn_in(dir, debug, text, &out, &err);
    gl_assert_line(out, "^gemleak: 1 process checked");
    ck_assert_msg(strstr(err, "file=libglib-2.0.so.0 [0];  needed by ") != NULL,
                  "the dynamic loader said nothing of what it loaded (LD_DEBUG=files)");
    return err;
}

/* gemleak loads libxml2 where it reads or writes XML (gemleak/base/xml.h).
 * Where it cannot (an installation without it: here a libxml2.so.2 that
 * is not libxml2, found first), reading Valgrind's XML says so and ends
 * with status 3, never a pass; reading a sanitizer's report (what a run
 * under a sanitizer's engine reads) never loads it, nor ICU or libstdc++,
 * from gemleak's start to its end. */
START_TEST(test_libxml2_is_loaded_where_xml_is_read)
{
    g_autofree char *gemleak = NULL;
    g_autofree char *dir = impostor_dir("libxml2.so.2", "not_libxml2", &gemleak);
    g_autofree char *err = NULL;
    g_autofree char *fixture = gl_test_fixture("xml/leak.xml");
    g_autofree char *leak = g_canonicalize_filename(fixture, NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "LD_LIBRARY_PATH", dir, TRUE);
    const char *filter[] = { gemleak, "filter", "-O", "leaky", leak, NULL };
    g_autofree char *out = NULL;
    int status = gl_test_spawn_in(dir, env, filter, &out, &err);
    ck_assert_int_eq(status, 3);
    gl_assert_line(err, "^gemleak: libxml2\\.so\\.2 has no xmlInitParser \\(reading Valgrind's XML and "
                        "writing JUnit reports need it; Debian's package: libxml2\\)$");

    g_autofree char *report_fixture = gl_test_fixture("lsan/clean-ruby34.lsan");
    g_autofree char *report = g_canonicalize_filename(report_fixture, NULL);
    g_autofree char *loaded = loaded_reading_report(gemleak, dir, report);
    gl_remove_tree(dir);
    ck_assert_msg(strstr(loaded, "file=libxml2.so") == NULL && strstr(loaded, "file=libicuuc.so") == NULL &&
                      strstr(loaded, "file=libstdc++.so") == NULL,
                  "reading a sanitizer's report loaded libxml2, ICU or libstdc++");
}
END_TEST

/* gemleak loads json-glib (and with it GObject and GIO) where it reads or
 * writes JSON (gemleak/base/json.h). Where it cannot (here a
 * libjson-glib-1.0.so.0 that is not json-glib, found first), a JSON report
 * asked for says so and ends with status 3, never a pass; reading a
 * sanitizer's report into the text report loads none of the three, from
 * gemleak's start to its end: linked, they were most of what its start
 * cost, in every run and each of its forks. */
START_TEST(test_json_glib_is_loaded_where_json_is_read_or_written)
{
    g_autofree char *gemleak = NULL;
    g_autofree char *dir = impostor_dir("libjson-glib-1.0.so.0", "not_json_glib", &gemleak);
    g_autofree char *err = NULL;
    g_autofree char *report_fixture = gl_test_fixture("lsan/clean-ruby34.lsan");
    g_autofree char *report = g_canonicalize_filename(report_fixture, NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "LD_LIBRARY_PATH", dir, TRUE);
    const char *json[] = { gemleak, "filter", "-O", "*", "--format", "json", "-o", "out.json",
                           report, NULL };
    g_autofree char *out = NULL;
    int status = gl_test_spawn_in(dir, env, json, &out, &err);
    ck_assert_int_eq(status, 3);
    gl_assert_line(err, "^gemleak: libjson-glib-1\\.0\\.so\\.0 has no [a-z_]+ \\(JSON reports, "
                        "baselines and --jobs' durations need it; Debian's package: "
                        "libjson-glib-1\\.0-0\\)$");

    g_autofree char *loaded = loaded_reading_report(gemleak, dir, report);
    gl_remove_tree(dir);
    ck_assert_msg(strstr(loaded, "file=libjson-glib-1.0.so") == NULL &&
                      strstr(loaded, "file=libgobject-2.0.so") == NULL &&
                      strstr(loaded, "file=libgio-2.0.so") == NULL,
                  "reading a sanitizer's report loaded json-glib, GObject or GIO");
}
END_TEST

Suite *gl_cli_filter_suite(void)
{
    Suite *suite = suite_create("cli-filter");
    TCase *tc = tcase_create("cli-filter");
    tcase_add_test(tc, test_findings_exit_1_clean_exit_0);
    tcase_add_test(tc, test_unreadable_inputs_exit_3_and_keep_the_rest);
    tcase_add_test(tc, test_truncated_file_reports_what_came_before);
    tcase_add_test(tc, test_shard_reports_merge);
    tcase_add_test(tc, test_shard_reports_keep_the_tests);
    tcase_add_test(tc, test_incomplete_shard_stays_incomplete);
    tcase_add_test(tc, test_json_that_is_not_a_report);
    tcase_add_test(tc, test_text_stacks_people_can_read);
    tcase_add_test(tc, test_uninitialised_values_in_rubys_gc_pass);
    tcase_add_test(tc, test_standard_input);
    tcase_add_test(tc, test_endless_text_input_is_not_xml);
    tcase_add_test(tc, test_the_same_input_twice_is_read_once);
    tcase_add_test(tc, test_only_regular_files_are_read_from_a_directory);
    tcase_add_test(tc, test_gzip_problem_does_not_pass);
    tcase_add_test(tc, test_libxml2_is_loaded_where_xml_is_read);
    tcase_add_test(tc, test_json_glib_is_loaded_where_json_is_read_or_written);
    suite_add_tcase(suite, tc);
    return suite;
}
