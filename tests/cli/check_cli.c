/* The command line as a user meets it: statuses, messages, reports. */
#include "testutil.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/base/errors.h"
#include "gemleak/report/report.h"
#include "gemleak/run/rundir.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

/* A file named by an option (--baseline, --skip-functions-file) that cannot
 * be used. */
#define OPTION_FILE_STATUS GL_EXIT_USAGE

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

START_TEST(test_version_and_help)
{
    RUN(version, "--version");
    ck_assert_int_eq(version.status, 0);
    gl_assert_line(version.out, "^gemleak \\d+\\.\\d+\\.\\d+$");
    gl_test_run_clear(&version);

    RUN(help, "filter", "--help");
    ck_assert_int_eq(help.status, 0);
    gl_assert_line(help.out, "^Usage:$");
    gl_assert_line(help.out, "^  gemleak filter \\[OPTION.*\\] FILE\\|DIR\\|-\\.\\.\\.$");
    gl_assert_line(help.out, "--object=PATTERN");
    gl_assert_line(help.out, "^Exit status:$");
    gl_assert_line(help.out, "^  3  an input could not be read");
    gl_test_run_clear(&help);

    /* run's help heads its own options and the report options it shares
     * with filter, in that order. */
    RUN(run_help, "run", "--help");
    ck_assert_int_eq(run_help.status, 0);
    gl_assert_line(run_help.out, "^Run options:\n  --valgrind=PATH ");
    gl_assert_line(run_help.out, "^Report options:\n  -O, --object=PATTERN ");
    /* run's exit statuses tell the gate from the command */
    gl_assert_line(run_help.out, "^  4  the command failed \\(a non-zero status, or killed by a signal\\), and$");
    gl_assert_line(run_help.out, "^  5  findings fail the gate, and the command failed too$");
    gl_assert_no_line(run_help.out, "Application Options");
    gl_test_run_clear(&run_help);

    RUN(general, "--help");
    ck_assert_int_eq(general.status, 0);
    gl_assert_line(general.out, "^  filter ");
    gl_test_run_clear(&general);
}
END_TEST

START_TEST(test_usage_errors_exit_2)
{
    const char *const cases[][6] = {
        { "frobnicate", NULL },
        { "filter", NULL },
        { "filter", "--bogus", "x.xml", NULL },
        { "filter", "-O", "leaky", "--format", "yaml", "x.xml" },
        { "filter", "-O", "leaky", "--leak-kinds", "lost", "x.xml" },
        { "filter", "-O", "leaky", "--fail-on", "sometimes", "x.xml" },
        { "filter", "-O", "/[leaky/", "x.xml", NULL },
        { "filter", "-O", "leaky", "--skip-function", "/rb_(/", "x.xml" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GlTestRun run = { 0 };
        g_autofree char **args = g_new0(char *, 7);
        for (guint j = 0; j < 6 && cases[i][j] != NULL; j++)
            args[j] = (char *) cases[i][j];
        gl_test_gemleak_argv(&run, (const char *const *) args);
        ck_assert_msg(run.status == GL_EXIT_USAGE, "case %u: status %d, err %s", i, run.status,
                      run.err);
        gl_assert_line(run.err, "^gemleak: ");
        gl_test_run_clear(&run);
    }
    GlTestRun none = { 0 };
    gl_test_gemleak(&none, NULL, NULL);
    ck_assert_int_eq(none.status, 2);
    gl_assert_line(none.err, "^Usage:$");
    gl_test_run_clear(&none);
}
END_TEST

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

/* A report that cannot be written is said, the others are written, and
 * findings that fail the gate still exit 1: the gate's verdict is not lost
 * to a full disk. With nothing failing, it is trouble: 3. */
START_TEST(test_report_that_cannot_be_written)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "report.json", NULL);
    g_autofree char *json_spec = g_strconcat("json:", json, NULL);
    /* /dev/full: every write fails with ENOSPC, as on a full disk */
    RUN(failing, "filter", "-O", "leaky", "--format", "sarif:/dev/full", "--format", json_spec,
        leak);
    ck_assert_msg(failing.status == 1, "status %d\n%s", failing.status, failing.err);
    gl_assert_line(failing.err, "^gemleak: .*/dev/full.*: No space left on device");
    ck_assert(g_file_test(json, G_FILE_TEST_IS_REGULAR));
    gl_test_run_clear(&failing);
    RUN(passing, "filter", "-O", "leaky", "--format", "sarif:/dev/full", clean);
    ck_assert_int_eq(passing.status, 3);
    gl_assert_line(passing.err, "^gemleak: .*/dev/full.*: No space left on device");
    gl_test_run_clear(&passing);
    /* a directory that is not there is known before anything is read */
    RUN(nowhere, "filter", "-O", "leaky", "--format", "sarif:/nonexistent/dir/r.sarif", leak);
    ck_assert_int_eq(nowhere.status, 2);
    gl_assert_line(nowhere.err, "^gemleak: the sarif report \\(/nonexistent/dir/r\\.sarif\\) "
                                "cannot be written: no directory /nonexistent/dir$");
    gl_test_run_clear(&nowhere);
    gl_remove_tree(dir);
}
END_TEST

/* A report that could never be written (a directory, a directory no file
 * can be made in) is known before the command runs, not after the suite,
 * with the text report lost. */
START_TEST(test_report_destinations_checked_before_the_run)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json_spec = g_strconcat("json:", dir, NULL);
    g_autofree char *locked = g_build_filename(dir, "read-only", NULL);
    g_autofree char *in_locked = g_build_filename(locked, "r.txt", NULL);
    ck_assert_int_eq(g_mkdir(locked, 0500), 0);
    /* /proc takes no new file, even from root */
    const char *const cases[][3] = {
        { "-o", dir, "^gemleak: the text report \\(.*\\) cannot be written: it is a directory$" },
        { "--format", json_spec, "^gemleak: the json report \\(.*\\) cannot be written: it is a "
          "directory$" },
        { "--write-baseline", dir, "^gemleak: --write-baseline .* cannot be written: it is a "
          "directory$" },
        { "-o", "/proc/gemleak-report.txt", "^gemleak: the text report \\(/proc/gemleak-report\\.txt\\) "
          "cannot be written: no file can be made in /proc: " },
        { "-o", in_locked, "^gemleak: the text report \\(.*/read-only/r\\.txt\\) cannot be written: "
          "no file can be made in .*/read-only: Permission denied$" },
    };
    /* root writes in a directory of mode 0500 */
    guint n = G_N_ELEMENTS(cases) - (geteuid() == 0 ? 1 : 0);
    for (guint i = 0; i < n; i++) {
        RUN(run, "run", cases[i][0], cases[i][1], "--", "/nonexistent/command");
        ck_assert_msg(run.status == GL_EXIT_USAGE, "%s %s: status %d\n%s", cases[i][0],
                      cases[i][1], run.status, run.err);
        gl_assert_line(run.err, cases[i][2]);
        gl_assert_no_line(run.err, "Valgrind");
        gl_test_run_clear(&run);
    }
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_several_formats_at_once)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "leaks.json", NULL);
    g_autofree char *text = g_build_filename(dir, "leaks.txt", NULL);
    g_autofree char *json_spec = g_strconcat("json:", json, NULL);

    /* --format FORMAT -o FILE, a second --format to the stream */
    RUN(a, "filter", "-O", "leaky", "--format", "json", "-o", json, "--format", "text", leak);
    ck_assert_int_eq(a.status, 1);
    gl_assert_line(a.out, "^gemleak: FAIL: ");
    g_autofree char *written = gl_test_read(json, NULL);
    ck_assert(g_str_has_prefix(written, "{"));
    gl_test_run_clear(&a);

    /* -o before its --format, and FORMAT:FILE */
    RUN(b, "filter", "-O", "leaky", "-o", text, "--format", "text", "--format", json_spec, leak);
    ck_assert_int_eq(b.status, 1);
    ck_assert_str_eq(b.out, "");
    g_autofree char *text_written = gl_test_read(text, NULL);
    gl_assert_line(text_written, "^ \\*leaky_leak ");
    gl_test_run_clear(&b);

    /* a lone -o is the text report */
    RUN(c, "filter", "-O", "leaky", "-o", text, leak);
    g_autofree char *text_again = gl_test_read(text, NULL);
    gl_assert_line(text_again, "^gemleak: FAIL: ");
    gl_test_run_clear(&c);

    /* in run too, before anything runs: here the lone -o makes a text
     * report on standard output, which json:- then shares */
    RUN(lone_in_run, "run", "-o", "-", "--format", "json:-", "--", "ruby", "-e", "1");
    ck_assert_int_eq(lone_in_run.status, 2);
    gl_assert_line(lone_in_run.err, "^gemleak: 2 reports would share one stream");
    gl_test_run_clear(&lone_in_run);

    /* two reports cannot share standard output */
    RUN(d, "filter", "-O", "leaky", "--format", "json", "--format", "text", leak);
    ck_assert_int_eq(d.status, 2);
    gl_assert_line(d.err, "share one stream");
    gl_test_run_clear(&d);

    /* "-" is standard output, which filter's default report also uses */
    RUN(dash, "filter", "-O", "leaky", "--format", "text", "--format", "json:-", leak);
    ck_assert_int_eq(dash.status, 2);
    gl_test_run_clear(&dash);

    /* a file that is not a regular one is written as it is, not replaced */
    RUN(device, "filter", "-O", "leaky", "--format", "json:/dev/null", leak);
    ck_assert_int_eq(device.status, 1);
    ck_assert(g_file_test("/dev/null", G_FILE_TEST_EXISTS) &&
              !g_file_test("/dev/null", G_FILE_TEST_IS_REGULAR));
    gl_test_run_clear(&device);

    /* a destination in no directory is known before anything is read */
    RUN(e, "filter", "-O", "leaky", "-o", "/nonexistent/dir/r.txt", leak);
    ck_assert_int_eq(e.status, 2);
    gl_assert_line(e.err, "/nonexistent/dir/r\\.txt\\) cannot be written: no directory ");
    gl_test_run_clear(&e);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_gate_options)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *uaf = gl_test_fixture("xml/use_after_free.xml");
    RUN(within, "filter", "-O", "leaky", "--max-bytes", "1000", leak);
    ck_assert_int_eq(within.status, 0);
    gl_assert_line(within.out, "^gemleak: pass: 3 leaks losing 284 bytes \\(within --max-bytes 1000\\)$");
    gl_test_run_clear(&within);

    RUN(over, "filter", "-O", "leaky", "--max-bytes", "100", leak);
    ck_assert_int_eq(over.status, 1);
    gl_assert_line(over.out, "^gemleak: FAIL: 3 leaks losing 284 bytes \\(over --max-bytes 100\\)$");
    gl_test_run_clear(&over);

    RUN(none, "filter", "-O", "leaky", "--fail-on", "none", leak);
    ck_assert_int_eq(none.status, 0);
    gl_test_run_clear(&none);

    RUN(errors_only, "filter", "-O", "leaky", "--fail-on", "errors", leak);
    ck_assert_int_eq(errors_only.status, 0);
    gl_test_run_clear(&errors_only);

    RUN(uaf_run, "filter", "-O", "leaky", "--fail-on", "errors", uaf);
    ck_assert_int_eq(uaf_run.status, 1);
    gl_test_run_clear(&uaf_run);

    RUN(bad, "filter", "-O", "leaky", "--max-bytes", "lots", leak);
    ck_assert_int_eq(bad.status, 2);
    gl_test_run_clear(&bad);
}
END_TEST

START_TEST(test_targets_from_the_runs_list)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_build_filename(dir, "5000.xml", NULL);
    g_autofree char *list = g_build_filename(dir, "loaded-5000.txt", NULL);
    g_autofree char *contents = gl_test_read(leak, NULL);
    gl_test_write(copy, contents, -1);
    gl_test_write(list, "/tmp/gemleak-fixtures/leaky/leaky.so\n", -1);

    RUN(found, "filter", dir);
    ck_assert_int_eq(found.status, 1);
    gl_assert_line(found.out, "^gemleak: target: /tmp/gemleak-fixtures/leaky/leaky\\.so$");
    gl_assert_line(found.out, "^ \\*leaky_leak ");
    gl_test_run_clear(&found);

    /* a name that matches nothing the run loaded is an error that names it */
    RUN(typo, "filter", "-O", "leakyy", dir);
    ck_assert_int_eq(typo.status, 2);
    gl_assert_line(typo.err, "--object leakyy matches no extension the run loaded \\(it loaded: "
                             "/tmp/gemleak-fixtures/leaky/leaky\\.so\\)");
    gl_test_run_clear(&typo);

    /* and a JSON report file says so, for a program (the Rake task) to tell
     * its user in its own words */
    g_autofree char *elsewhere = gl_test_tmpdir();
    g_autofree char *json_path = g_build_filename(elsewhere, "report.json", NULL);
    g_autofree char *json_format = g_strconcat("json:", json_path, NULL);
    RUN(told, "filter", "-O", "leaky", "-O", "leakyy", "--format", "text", "--format", json_format, dir);
    ck_assert_int_eq(told.status, 2);
    g_autofree char *json = gl_test_read(json_path, NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *error = json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)),
                                                      "error");
    ck_assert_ptr_nonnull(error);
    ck_assert_str_eq(json_object_get_string_member(error, "unmatched_object"), "leakyy");
    JsonArray *loaded = json_object_get_array_member(error, "loaded");
    ck_assert_uint_eq(json_array_get_length(loaded), 1);
    ck_assert_str_eq(json_array_get_string_element(loaded, 0), "/tmp/gemleak-fixtures/leaky/leaky.so");
    ck_assert(strstr(json_object_get_string_member(error, "message"), "--object leakyy matches") != NULL);
    gl_test_run_clear(&told);

    /* written where the report would have been: through a symbolic link
     * to its target, which stays a link, as the reports are */
    g_autofree char *target = g_build_filename(elsewhere, "target.json", NULL);
    g_autofree char *link = g_build_filename(elsewhere, "link.json", NULL);
    ck_assert_int_eq(symlink(target, link), 0);
    g_autofree char *link_format = g_strconcat("json:", link, NULL);
    RUN(linked, "filter", "-O", "leakyy", "--format", link_format, dir);
    ck_assert_int_eq(linked.status, 2);
    ck_assert(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
    g_autofree char *through = gl_test_read(target, NULL);
    ck_assert_ptr_nonnull(through);
    ck_assert(strstr(through, "\"unmatched_object\"") != NULL);
    gl_test_run_clear(&linked);
    gl_remove_tree(elsewhere);
    gl_remove_tree(dir);
}
END_TEST

/* Builds @path, a shared object that exports @symbol (an extension's
 * Init_<name>, or not). */
static void build_shared_object(const char *path, const char *symbol)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_mkdir_with_parents(dir, 0700);
    g_autofree char *source = g_strconcat(path, ".c", NULL);
    g_autofree char *code = g_strdup_printf("void %s(void);\nvoid %s(void) {}\n", symbol, symbol);
    gl_test_write(source, code, -1);
    g_autofree char *command = g_strdup_printf("cc -shared -fPIC -o '%s' '%s'", path, source);
    ck_assert_int_eq(system(command), 0);
    g_unlink(source);
}

START_TEST(test_no_target_known)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *absolute = g_canonicalize_filename(leak, NULL);
    g_autofree char *empty = gl_test_tmpdir();
    ck_assert_int_eq(chdir(empty), 0);
    RUN(run, "filter", absolute);
    ck_assert_int_eq(run.status, 2);
    gl_assert_line(run.err, "no target extension known: name it with --object NAME");
    gl_test_run_clear(&run);

    /* Only the project's own Ruby extensions: an ELF object exporting
     * Init_<name>, outside vendored, installed and hidden trees. */
    g_autofree char *lib = g_build_filename(empty, "lib", "leaky.so", NULL);
    g_autofree char *built = g_build_filename(empty, "tmp", "x86_64-linux", "leaky", "3.1.2",
                                              "leaky.so", NULL);
    g_autofree char *vendored = g_build_filename(empty, "vendor", "bundle", "ruby", "3.1.0", "gems",
                                                 "nokogiri-1.0", "nokogiri.so", NULL);
    g_autofree char *hidden = g_build_filename(empty, ".bundle", "other.so", NULL);
    g_autofree char *library = g_build_filename(empty, "lib", "libhelper.so", NULL);
    g_autofree char *not_elf = g_build_filename(empty, "lib", "fake.so", NULL);
    build_shared_object(lib, "Init_leaky");
    build_shared_object(built, "Init_leaky");
    build_shared_object(vendored, "Init_nokogiri");
    build_shared_object(hidden, "Init_other");
    build_shared_object(library, "helper_function");
    gl_test_write(not_elf, "Init_fake", -1);
    GlTestRun found = { 0 };
    gl_test_gemleak(&found, "filter", absolute, NULL);
    ck_assert_int_eq(found.status, 0);  /* not the object Valgrind saw: nothing found */
    gl_assert_line(found.out, "^gemleak: targets: .*/lib/leaky\\.so, .*/tmp/x86_64-linux/leaky/3\\.1\\.2/leaky\\.so$");
    gl_test_run_clear(&found);

    /* never a system directory: the scan from / took 1,266 objects */
    ck_assert_int_eq(chdir("/"), 0);
    GlTestRun root = { 0 };
    gl_test_gemleak(&root, "filter", absolute, NULL);
    ck_assert_int_eq(root.status, 2);
    gl_assert_line(root.err, "no target extension known");
    gl_test_run_clear(&root);
    gl_remove_tree(empty);
}
END_TEST

/* A run whose Ruby processes loaded no extension (a LoadError before it was
 * built) recorded that: naming the extension is then an error, not a pass;
 * on XML without lists, a pattern no error shows is worth a warning. */
START_TEST(test_target_that_is_not_there)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_build_filename(dir, "5000.xml", NULL);
    g_autofree char *list = g_build_filename(dir, "loaded-5000.txt", NULL);
    g_autofree char *contents = gl_test_read(leak, NULL);
    gl_test_write(copy, contents, -1);
    gl_test_write(list, "", 0);

    RUN(named, "filter", "-O", "redcarpet", dir);
    ck_assert_int_eq(named.status, 2);
    gl_assert_line(named.err, "--object redcarpet matches no extension the run loaded: it loaded none");
    gl_assert_no_line(named.out, "pass");
    gl_test_run_clear(&named);

    /* nothing was checked: trouble, not a usage error (it said "Try
     * --help", exit 2) */
    RUN(unnamed, "filter", dir);
    ck_assert_int_eq(unnamed.status, 3);
    gl_assert_line(unnamed.err, "nothing was checked: no Ruby process of the run loaded an "
                                "extension of the project");
    gl_assert_no_line(unnamed.err, "Try ");
    gl_test_run_clear(&unnamed);

    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    RUN(plain, "filter", "-O", "leakyy", leak);
    ck_assert_int_eq(plain.status, 0);
    gl_assert_line(plain.err, "^gemleak: warning: --object leakyy matches no object in the errors "
                              "read \\(they show leaky\\.so\\): the extension may be clean, or the "
                              "name wrong$");
    gl_test_run_clear(&plain);
    RUN(seen, "filter", "-O", "leaky", clean);
    gl_assert_no_line(seen.err, "warning");
    gl_test_run_clear(&seen);
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

START_TEST(test_jobs_do_not_change_the_report)
{
    g_autofree char *xml = gl_test_fixture("xml");
    RUN(one, "filter", "-O", "leaky", "-j", "1", xml);
    RUN(four, "filter", "-O", "leaky", "-j", "4", xml);
    ck_assert_str_eq(one.out, four.out);
    ck_assert_int_eq(one.status, four.status);
    gl_test_run_clear(&one);
    gl_test_run_clear(&four);
}
END_TEST

/* The summary line's numbers add up: every error read is an occurrence of
 * a finding, known to the baseline, or skipped (13 were unexplained once). */
static void assert_summary_adds_up(const char *text)
{
    g_autoptr(GRegex) regex = g_regex_new(
        "^gemleak: \\d+ process(?:es)? checked(?: \\([^)]*\\))?, (\\d+) errors? read: \\d+ findings?(?: \\((\\d+) occurrences?[^)]*\\))?"
        "(, \\d+ known to the baseline \\((\\d+) occurrences?\\))?(, (\\d+) skipped)?",
        G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    ck_assert_msg(g_regex_match(regex, text, 0, &match), "no summary in:\n%s", text);
    guint64 numbers[7] = { 0 };
    for (guint i = 1; i <= 6; i++) {
        g_autofree char *group = g_match_info_fetch(match, (gint) i);
        numbers[i] = group != NULL && *group != '\0' ? g_ascii_strtoull(group, NULL, 10) : 0;
    }
    ck_assert_msg(numbers[1] == numbers[2] + numbers[4] + numbers[6], "does not add up:\n%s", text);
}

/* A leaked cycle of two blocks, captured twice: Valgrind names the block
 * allocated first definitely lost, the other indirectly lost, so the
 * definite leak's site moves with the order. Both blocks' sites are the
 * cycle's, whatever their kind: a baseline written from one run knows the
 * other's. */
START_TEST(test_baseline_knows_a_moved_cycle)
{
    g_autofree char *head_first = gl_test_fixture("xml/cycle_head_first.xml");
    g_autofree char *tail_first = gl_test_fixture("xml/cycle_tail_first.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *baseline = g_build_filename(dir, "baseline.json", NULL);

    RUN(write, "filter", "-O", "leaky", "--leak-kinds", "definite,indirect", "--write-baseline",
        baseline, head_first);
    ck_assert_int_eq(write.status, 0);
    gl_assert_line(write.out, "^112 \\(48 direct, 64 indirect\\) bytes in 1 block is definitely "
                              "lost\n(.*\n){1,2} \\*cycle_head ");
    gl_assert_line(write.out, "^64 bytes in 1 block is indirectly lost\n(.*\n){1,2} "
                              "\\*cycle_tail ");
    gl_test_run_clear(&write);

    RUN(moved, "filter", "-O", "leaky", "--leak-kinds", "definite,indirect", tail_first);
    ck_assert_int_eq(moved.status, 1);
    gl_assert_line(moved.out, "^112 \\(64 direct, 48 indirect\\) bytes in 1 block is definitely "
                              "lost\n(.*\n){1,2} \\*cycle_tail ");
    gl_test_run_clear(&moved);

    RUN(known, "filter", "-O", "leaky", "--leak-kinds", "definite,indirect", "--baseline", baseline,
        tail_first);
    ck_assert_int_eq(known.status, 0);
    gl_assert_line(known.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 2 known to the "
                              "baseline \\(2 occurrences\\), ");
    gl_test_run_clear(&known);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_baseline_adoption)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *fork = gl_test_fixture("xml/fork");
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *baseline = g_build_filename(dir, "baseline.json", NULL);
    g_autofree char *empty = g_build_filename(dir, "empty.json", NULL);
    g_autofree char *partial = g_build_filename(dir, "partial.json", NULL);

    /* writing a baseline reports and passes: it adopts what is there */
    RUN(write, "filter", "-O", "leaky", "--write-baseline", baseline, leak);
    ck_assert_int_eq(write.status, 0);
    gl_assert_line(write.out, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(write.out, "^gemleak: pass: 3 findings written to the baseline .*/baseline\\.json "
                              "\\(with --fail-on they fail this run too\\)$");
    g_autofree char *json = gl_test_read(baseline, NULL);
    ck_assert_uint_eq(gl_test_count(json, strlen(json), "\"fingerprint\""), 3);
    gl_test_run_clear(&write);
    /* unless --fail-on asks to fail as well */
    RUN(write_and_fail, "filter", "-O", "leaky", "--write-baseline", baseline, "--fail-on",
        "definite,errors", leak);
    ck_assert_int_eq(write_and_fail.status, 1);
    gl_assert_line(write_and_fail.out, "^gemleak: FAIL: 3 leaks losing 284 bytes$");
    gl_test_run_clear(&write_and_fail);

    /* known leaks pass */
    RUN(known, "filter", "-O", "leaky", "--baseline", baseline, leak);
    ck_assert_int_eq(known.status, 0);
    gl_assert_line(known.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 3 known to the baseline \\(3 occurrences\\), \\d+ skipped ");
    assert_summary_adds_up(known.out);
    gl_assert_line(known.out, "^gemleak: pass: no findings$");
    gl_test_run_clear(&known);

    /* a moved line is the same leak: the source, and the XML's lines, moved down */
    g_autofree char *here = g_build_filename(dir, "here", NULL);
    g_autofree char *there = g_build_filename(dir, "there", NULL);
    g_autofree char *before = gl_test_capture_in("xml/leak.xml", "/tmp/gemleak-fixtures/leaky",
                                                 "leaky", here, 0);
    g_autofree char *moved = gl_test_capture_in("xml/leak.xml", "/tmp/gemleak-fixtures/leaky",
                                                "leaky", there, 40);
    g_autofree char *unmoved = g_build_filename(dir, "unmoved.json", NULL);
    RUN(write_unmoved, "filter", "-O", "leaky", "--write-baseline", unmoved, before);
    ck_assert_int_eq(write_unmoved.status, 0);
    gl_test_run_clear(&write_unmoved);
    RUN(shifted, "filter", "-O", "leaky", "--baseline", unmoved, moved);
    ck_assert_msg(shifted.status == 0, "%s", shifted.out);
    gl_assert_line(shifted.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 3 known to the "
                                "baseline \\(3 occurrences\\), ");
    gl_test_run_clear(&shifted);
    /* and what the source says at that line is what tells the leak: not
     * the same text, not the same leak */
    g_autofree char *source = g_build_filename(there, "leaky", "leaky.c", NULL);
    g_autofree char *code = gl_test_read(source, NULL);
    GString *edited = g_string_new(code);
    ck_assert_uint_eq(g_string_replace(edited, "    leaky_alloc(100);", "    leaky_alloc(101);", 1), 1);
    gl_test_write(source, edited->str, (gssize) edited->len);
    g_string_free(edited, TRUE);
    RUN(changed, "filter", "-O", "leaky", "--baseline", unmoved, moved);
    ck_assert_int_eq(changed.status, 1);
    gl_assert_line(changed.out, "^ \\*leaky_leak \\(leaky\\.c:73\\)$");
    gl_test_run_clear(&changed);

    /* a new leak fails: against an empty baseline, and one that knows some */
    RUN(write_empty, "filter", "-O", "leaky", "--write-baseline", empty, clean);
    ck_assert_int_eq(write_empty.status, 0);
    gl_test_run_clear(&write_empty);
    RUN(fresh, "filter", "-O", "leaky", "--baseline", empty, leak);
    ck_assert_int_eq(fresh.status, 1);
    gl_assert_line(fresh.out, "^gemleak: FAIL: 3 leaks losing 284 bytes$");
    gl_test_run_clear(&fresh);
    RUN(write_partial, "filter", "-O", "leaky", "--write-baseline", partial, fork);
    gl_test_run_clear(&write_partial);
    RUN(some, "filter", "-O", "leaky", "--baseline", partial, leak);
    ck_assert_int_eq(some.status, 1);
    gl_assert_line(some.out, "2 findings \\(2 occurrences\\), 1 known to the baseline \\(1 occurrence\\), ");
    assert_summary_adds_up(some.out);
    gl_assert_no_line(some.out, "^ \\*leaky_leak \\(");
    gl_test_run_clear(&some);

    /* a baseline that cannot be read is a bad option value */
    RUN(missing, "filter", "-O", "leaky", "--baseline", "/nonexistent/b.json", leak);
    ck_assert_int_eq(missing.status, 2);
    gl_assert_line(missing.err, "^gemleak: --baseline /nonexistent/b\\.json: ");
    gl_test_run_clear(&missing);
    g_autofree char *bogus = g_build_filename(dir, "bogus.json", NULL);
    gl_test_write(bogus, "{\"results\": []}", -1);
    RUN(wrong, "filter", "-O", "leaky", "--baseline", bogus, leak);
    ck_assert_int_eq(wrong.status, 2);
    gl_assert_line(wrong.err, "not a gemleak JSON report");
    gl_test_run_clear(&wrong);
    gl_remove_tree(dir);
}
END_TEST

/* Issue 20: a baseline is a file to commit. It holds what identifies each
 * finding (kind, fingerprint, location relative to the project root,
 * functions), in fingerprint order: the same leaks from another run (other
 * pids, the checkout elsewhere) give the same bytes, and no absolute path
 * or pid. */
START_TEST(test_baseline_holds_what_identifies_a_finding)
{
    g_autofree char *dir = gl_test_tmpdir();
    /* a checkout, with the sources the fixture was captured from */
    g_autofree char *here = g_build_filename(dir, "here", NULL);
    g_autofree char *captured = gl_test_capture_in("xml/leak.xml", "/tmp/gemleak-fixtures/leaky",
                                                   "leaky", here, 0);
    g_autofree char *first = g_build_filename(dir, "first.json", NULL);
    RUN(write, "filter", "-O", "leaky", "--project-root", here, "--write-baseline", first,
        captured);
    ck_assert_int_eq(write.status, 0);
    gl_test_run_clear(&write);

    /* the same leaks, from other processes of a checkout elsewhere */
    g_autofree char *root = g_build_filename(dir, "elsewhere", "checkout", NULL);
    g_autofree char *elsewhere = gl_test_capture_in("xml/leak.xml", "/tmp/gemleak-fixtures/leaky",
                                                    "leaky", root, 0);
    g_autofree char *text = gl_test_read(elsewhere, NULL);
    g_autoptr(GRegex) pids = g_regex_new("<(pid|ppid)>\\d+<", 0, 0, NULL);
    g_autofree char *moved_text = g_regex_replace(pids, text, -1, 0, "<\\1>4242<", 0, NULL);
    g_autofree char *moved = g_build_filename(dir, "moved.xml", NULL);
    gl_test_write(moved, moved_text, -1);
    g_autofree char *second = g_build_filename(dir, "second.json", NULL);
    RUN(again, "filter", "-O", "leaky", "--project-root", root, "--write-baseline", second, moved);
    ck_assert_int_eq(again.status, 0);
    gl_test_run_clear(&again);

    gsize n_first = 0, n_second = 0;
    g_autofree char *a = gl_test_read(first, &n_first);
    g_autofree char *b = gl_test_read(second, &n_second);
    ck_assert_msg(n_first == n_second && memcmp(a, b, n_first) == 0, "two baselines differ:\n%.600s\n%.600s",
                  a, b);
    ck_assert_msg(strstr(a, "\"/") == NULL && strstr(a, "tmp") == NULL && strstr(a, "5269") == NULL,
                  "an absolute path or a pid:\n%.600s", a);
    ck_assert_uint_lt(n_first, 1500);

    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, a, (gssize) n_first, NULL));
    JsonObject *top = json_node_get_object(json_parser_get_root(parser));
    ck_assert_uint_eq(json_object_get_size(top), 2);
    ck_assert_int_eq(json_object_get_int_member(top, "fingerprint_version"), GL_FINGERPRINT_VERSION);
    JsonArray *findings = json_object_get_array_member(top, "findings");
    ck_assert_uint_eq(json_array_get_length(findings), 3);
    const char *last = "";
    gboolean leaky_leak = FALSE;
    for (guint i = 0; i < 3; i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        ck_assert_uint_eq(json_object_get_size(finding), 4);
        ck_assert_str_eq(json_object_get_string_member(finding, "kind"), "Leak_DefinitelyLost");
        const char *print = json_object_get_string_member(finding, "fingerprint");
        ck_assert_msg(strcmp(last, print) < 0, "not in fingerprint order:\n%.600s", a);
        last = print;
        gl_assert_line(json_object_get_string_member(finding, "location"),
                       "^leaky/leaky\\.c:\\d+$");
        JsonArray *functions = json_object_get_array_member(finding, "functions");
        ck_assert_uint_gt(json_array_get_length(functions), 0);
        for (guint f = 0; f < json_array_get_length(functions); f++)
            leaky_leak |= g_strcmp0(json_array_get_string_element(functions, f), "leaky_leak") == 0;
    }
    ck_assert(leaky_leak);

    /* and it is a baseline: the leaks it holds pass */
    RUN(known, "filter", "-O", "leaky", "--baseline", second, moved);
    ck_assert_int_eq(known.status, 0);
    gl_assert_line(known.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 3 known to the "
                              "baseline \\(3 occurrences\\), ");
    gl_test_run_clear(&known);
    gl_remove_tree(dir);
}
END_TEST

/* A baseline an older gemleak wrote (a whole JSON report, fingerprints
 * over Ruby's frames too) keeps working: its findings are matched as that
 * gemleak fingerprinted them, and a note says to write it again. */
START_TEST(test_old_baselines_keep_reading)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *old = gl_test_fixture("edge/baseline-v1-leak.json");
    RUN(known, "filter", "-O", "leaky", "--baseline", old, leak);
    ck_assert_msg(known.status == 0, "%s%s", known.out, known.err);
    gl_assert_line(known.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 3 known to the "
                              "baseline \\(3 occurrences\\), ");
    gl_assert_line(known.err, "^gemleak: note: --baseline .*/baseline-v1-leak\\.json was written "
                              "by an older gemleak: its findings are matched as it fingerprinted "
                              "them, which another Ruby changes; write it again with "
                              "--write-baseline$");
    gl_test_run_clear(&known);

    /* the new leak it does not know still fails */
    g_autofree char *uaf = gl_test_fixture("xml/use_after_free.xml");
    RUN(fresh, "filter", "-O", "leaky", "--baseline", old, uaf);
    ck_assert_int_eq(fresh.status, 1);
    gl_test_run_clear(&fresh);

    /* version 2's (issue 20: the extension's functions and a rank by line) */
    g_autofree char *v2 = gl_test_fixture("edge/baseline-v2-leak.json");
    RUN(known_v2, "filter", "-O", "leaky", "--baseline", v2, leak);
    ck_assert_msg(known_v2.status == 0, "%s%s", known_v2.out, known_v2.err);
    gl_assert_line(known_v2.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 3 known to the "
                                 "baseline \\(3 occurrences\\), ");
    gl_assert_line(known_v2.err, "^gemleak: note: --baseline .*/baseline-v2-leak\\.json was "
                                 "written by an older gemleak: its findings are matched as it "
                                 "fingerprinted them, which tells neither two sites of one "
                                 "function nor the kinds of the errors on one freed block apart; "
                                 "write it again with --write-baseline$");
    gl_test_run_clear(&known_v2);
    RUN(fresh_v2, "filter", "-O", "leaky", "--baseline", v2, uaf);
    ck_assert_int_eq(fresh_v2.status, 1);
    gl_test_run_clear(&fresh_v2);
}
END_TEST

/* A baseline's fingerprint matches only a finding's whole fingerprint:
 * json-glib hands out C strings, so "FINGERPRINT\u0000..." once matched
 * FINGERPRINT; nor does one with more after it, or less. */
START_TEST(test_baseline_fingerprint_matches_only_itself)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *written = g_build_filename(dir, "written.json", NULL);
    RUN(write, "filter", "-O", "leaky", "--write-baseline", written, leak);
    ck_assert_int_eq(write.status, 0);
    gl_test_run_clear(&write);
    g_autofree char *text = gl_test_read(written, NULL);
    g_autoptr(GRegex) member = g_regex_new("\"fingerprint\" : \"([0-9a-f]{16})\"", 0, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    ck_assert_msg(g_regex_match(member, text, 0, &match), "no fingerprint in:\n%s", text);
    g_autofree char *print = g_match_info_fetch(match, 1);
    RUN(known, "filter", "-O", "leaky", "--baseline", written, leak);
    ck_assert_int_eq(known.status, 0);
    gl_test_run_clear(&known);

    /* what is kept of the fingerprint (its first N digits), then what follows */
    const struct { int kept; const char *after; } forms[] = {
        { 16, "\\u0000" }, { 16, "\\u0000x" }, { 16, "\\u0000\\u0000" }, { 16, "x" },
        { 16, " " }, { 15, "" }, { 15, "\\u0000" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(forms); i++) {
        g_autofree char *odd = g_strdup_printf("%.*s%s", forms[i].kept, print, forms[i].after);
        g_autofree char *baseline = g_strdup_printf(
            "{\"fingerprint_version\": %d, \"findings\": [{\"kind\": \"Leak_DefinitelyLost\", "
            "\"fingerprint\": \"%s\", \"kind_fingerprints\": [\"%s\"], "
            "\"structure_fingerprint\": \"%s\"}]}\n", GL_FINGERPRINT_VERSION, odd, odd, odd);
        g_autofree char *path = g_build_filename(dir, "odd.json", NULL);
        gl_test_write(path, baseline, -1);
        RUN(run, "filter", "-O", "leaky", "--baseline", path, leak);
        ck_assert_msg(run.status == 1, "\"%s\" matched %s: status %d\n%s%s", odd, print,
                      run.status, run.out, run.err);
        gl_assert_line(run.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 3 findings \\(3 occurrences\\), ");
        gl_test_run_clear(&run);
    }
    gl_remove_tree(dir);
}
END_TEST

/* Issue 20: the text report names a source file as JSON, SARIF and GitHub
 * do, relative to the project root (a path a terminal or an editor opens),
 * and so do JUnit's test names and bodies; one outside the root stays as
 * Valgrind named it. */
START_TEST(test_every_format_names_the_same_path)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    /* the fixtures were captured there; --project-root must exist */
    ck_assert_int_eq(g_mkdir_with_parents("/tmp/gemleak-fixtures/leaky", 0755), 0);
    g_autofree char *junit = g_build_filename(dir, "r.xml", NULL);
    g_autofree char *json = g_build_filename(dir, "r.json", NULL);
    g_autofree char *sarif = g_build_filename(dir, "r.sarif", NULL);
    g_autofree char *github = g_build_filename(dir, "r.github", NULL);
    g_autofree char *junit_to = g_strconcat("junit:", junit, NULL);
    g_autofree char *json_to = g_strconcat("json:", json, NULL);
    g_autofree char *sarif_to = g_strconcat("sarif:", sarif, NULL);
    g_autofree char *github_to = g_strconcat("github:", github, NULL);
    RUN(run, "filter", "-O", "leaky", "--project-root", "/tmp/gemleak-fixtures", "--format", "text",
        "--format", junit_to, "--format", json_to, "--format", sarif_to, "--format", github_to,
        leak);
    ck_assert_int_eq(run.status, 1);
    gl_assert_line(run.out, "^ \\*leaky_leak \\(leaky/leaky\\.c:\\d+\\)$");
    gl_assert_no_line(run.out, "\\(leaky\\.c:");
    g_autofree char *junit_text = gl_test_read(junit, NULL);
    gl_assert_line(junit_text, "name=\"definite leak in leaky_alloc \\(leaky/leaky\\.c:15\\) via "
                               "leaky_leak \\(leaky/leaky\\.c:\\d+\\)\"");
    gl_assert_line(junit_text, "^ \\*leaky_leak \\(leaky/leaky\\.c:\\d+\\)$");
    ck_assert_msg(strstr(junit_text, "(leaky.c:") == NULL, "%.2000s", junit_text);
    g_autofree char *json_text = gl_test_read(json, NULL);
    gl_assert_line(json_text, "\"file\" : \"leaky/leaky\\.c\"");
    g_autofree char *sarif_text = gl_test_read(sarif, NULL);
    gl_assert_line(sarif_text, "\"uri\" : \"leaky/leaky\\.c\"");
    ck_assert_msg(strstr(sarif_text, "(leaky.c:") == NULL, "%.2000s", sarif_text);
    g_autofree char *github_text = gl_test_read(github, NULL);
    gl_assert_line(github_text, "^::error file=leaky/leaky\\.c,line=15,title=gemleak%3A definite "
                                "leak in leaky_alloc \\(leaky/leaky\\.c%3A15\\)");
    ck_assert_msg(strstr(github_text, "(leaky.c:") == NULL, "%.2000s", github_text);
    gl_test_run_clear(&run);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_suppressions_out_and_project_root)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *supp = g_build_filename(dir, "leaks.supp", NULL);
    /* The fixtures were captured there; --project-root must exist. */
    ck_assert_int_eq(g_mkdir_with_parents("/tmp/gemleak-fixtures/leaky", 0755), 0);
    RUN(run, "filter", "-O", "leaky", "--suppressions-out", supp, "--project-root",
        "/tmp/gemleak-fixtures", "--format", "github", leak);
    ck_assert_int_eq(run.status, 1);
    g_autofree char *text = gl_test_read(supp, NULL);
    ck_assert_uint_eq(gl_test_count(text, strlen(text), "   Memcheck:Leak\n"), 3);
    gl_assert_line(run.out, "^::error file=leaky/leaky\\.c,line=\\d+,title=");
    gl_test_run_clear(&run);

    /* GitHub's workspace is the default root */
    g_setenv("GITHUB_WORKSPACE", "/tmp/gemleak-fixtures/leaky", TRUE);
    RUN(workspace, "filter", "-O", "leaky", "--format", "github", leak);
    gl_assert_line(workspace.out, "^::error file=leaky\\.c,line=\\d+,title=");
    gl_test_run_clear(&workspace);
    gl_remove_tree(dir);
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
    g_autoptr(GPtrArray) files = gl_list_xml_files(fork, NULL);
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

/* The text report escapes control characters in what it did not write
 * itself (test names, file names, function names): a test named
 * "x\ngemleak: pass: no findings" injected a pass line into a failing
 * report, and an escape sequence reached the terminal. Printable UTF-8
 * stays as it is. */
START_TEST(test_text_report_escapes_control_characters)
{
    g_autofree char *fixture = gl_test_fixture("xml/per_test.xml");
    g_autofree char *original = gl_test_read(fixture, NULL);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *xml = g_build_filename(dir, "100.xml", NULL);
    /* the helper percent-encodes the fields of a marker */
    GString *text = g_string_new(original);
    g_string_replace(text, "LeakyTest#test_leak\t/tmp/gemleak-fixtures/leaky_test.rb",
                     "x%0Agemleak:%20pass:%20no%20findings%1B[2J\tt%C3%ABst%E2%9C%93%0D.rb", 0);
    g_string_replace(text, "<fn>leaky_leak</fn>", "<fn>leaky_leak&#10;gemleak: pass</fn>", 0);
    g_string_replace(text, "<file>leaky.c</file>", "<file>lea&#13;ky.c</file>", 0);
    gl_test_write(xml, text->str, (gssize) text->len);
    g_string_free(text, TRUE);

    RUN(run, "filter", "-O", "leaky", xml);
    ck_assert_int_eq(run.status, 1);
    gl_assert_line(run.out, "^gemleak: FAIL: ");
    gl_assert_no_line(run.out, "^gemleak: pass");
    ck_assert(strchr(run.out, '\033') == NULL);
    ck_assert(strchr(run.out, '\r') == NULL);
    gl_assert_line(run.out, "^first lost in x\\\\ngemleak: pass: no findings\\\\x1b\\[2J "
                            "\\(tëst✓\\\\r\\.rb:9\\)$");
    gl_assert_line(run.out, "^ \\*leaky_leak\\\\ngemleak: pass \\(lea\\\\rky\\.c:\\d+\\)$");
    gl_test_run_clear(&run);

    /* gemleak's messages too: a file name in a note */
    g_autofree char *odd = g_build_filename(dir, "x\ngemleak: pass.xml", NULL);
    ck_assert_int_eq(mkfifo(odd, 0600), 0);
    RUN(listed, "filter", "-O", "leaky", dir);
    ck_assert_int_eq(listed.status, 1);
    gl_assert_line(listed.err, "^gemleak: note: .*/x\\\\ngemleak: pass\\.xml: skipped: ");
    gl_assert_no_line(listed.err, "^gemleak: pass");
    gl_test_run_clear(&listed);
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

/* Files named by options are read whole: a wrong one (/dev/zero, 80,000
 * nested arrays) is refused in one line, not read until memory runs out or
 * the JSON parser's recursion overflows the stack. */
START_TEST(test_option_files_are_bounded)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *nested = g_build_filename(dir, "nested.json", NULL);
    g_autofree char *brackets = g_strnfill(80000, '[');
    gl_test_write(nested, brackets, -1);

    RUN(deep, "filter", "-O", "leaky", "--baseline", nested, leak);
    ck_assert_int_eq(deep.status, OPTION_FILE_STATUS);
    gl_assert_line(deep.err, "^gemleak: --baseline .*/nested\\.json: nested more than 64 levels "
                             "deep: not a gemleak JSON report$");
    gl_test_run_clear(&deep);

    RUN(zero, "filter", "-O", "leaky", "--baseline", "/dev/zero", leak);
    ck_assert_int_eq(zero.status, OPTION_FILE_STATUS);
    gl_assert_line(zero.err, "^gemleak: --baseline /dev/zero: larger than 64 MiB: not a "
                             "gemleak JSON report$");
    gl_test_run_clear(&zero);

    RUN(skips, "filter", "-O", "leaky", "--skip-functions-file", "/dev/zero", leak);
    ck_assert_int_eq(skips.status, OPTION_FILE_STATUS);
    gl_assert_line(skips.err, "^gemleak: --skip-functions-file /dev/zero: larger than 1 MiB: "
                              "not a list of function patterns$");
    gl_test_run_clear(&skips);

    /* a list with NULs and no final newline is read as far as it makes sense */
    g_autofree char *list = g_build_filename(dir, "skips.txt", NULL);
    static const char patterns[] = "rb_al\0garbage\n# comment\nrb_foo  # why\nrb_l*";
    gl_test_write(list, patterns, sizeof patterns - 1);
    RUN(odd, "filter", "-O", "leaky", "--skip-functions-file", list, leak);
    ck_assert_int_eq(odd.status, 1);
    ck_assert_str_eq(odd.err, "");
    gl_test_run_clear(&odd);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_jobs_bounds)
{
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    const char *const bad[] = { "0", "-1", "many", "" };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        RUN(run, "filter", "-O", "leaky", "--jobs", bad[i], clean);
        ck_assert_msg(run.status == GL_EXIT_USAGE, "--jobs '%s': status %d", bad[i], run.status);
        gl_assert_line(run.err, "^gemleak: --jobs .*: give a number of 1 or more$");
        gl_assert_line(run.err, "^Try 'gemleak filter --help'\\.$");
        gl_test_run_clear(&run);
    }
    /* more than gemleak runs at once is capped, and said */
    RUN(many, "filter", "-O", "leaky", "-j", "300", clean);
    ck_assert_int_eq(many.status, 0);
    gl_assert_line(many.err, "^gemleak: note: --jobs 300: gemleak reads and runs at most 64 at once$");
    gl_test_run_clear(&many);
}
END_TEST

/* Under a limit on processes (or address space) a thread cannot be
 * created: fewer threads read, with the same report, instead of GLib
 * aborting. */
START_TEST(test_fewer_threads_when_none_can_start)
{
    /* Root is exempt from RLIMIT_NPROC: this test runs in a child of its
     * own (Check forks), which can become nobody for good. Nobody reads a
     * copy of the fixtures of its own: the checkout may lie in a directory
     * only its owner can enter (mktemp -d makes them mode 0700). */
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *xml = g_build_filename(dir, "xml", NULL);
    g_autofree char *fixtures = gl_test_fixture("xml");
    const char *copy[] = { "cp", "-R", fixtures, xml, NULL };
    ck_assert_int_eq(gl_test_spawn(copy, NULL, NULL), 0);
    const char *give[] = { "chown", "-R", "65534:65534", dir, NULL };
    if (geteuid() == 0)
        ck_assert_int_eq(gl_test_spawn(give, NULL, NULL), 0);
    RUN(one, "filter", "-O", "leaky", "-j", "1", xml);
    if (geteuid() == 0) {
        ck_assert_int_eq(setgid(65534), 0);
        ck_assert_int_eq(setuid(65534), 0);
    }
    struct rlimit saved;
    ck_assert_int_eq(getrlimit(RLIMIT_NPROC, &saved), 0);
    struct rlimit none = { 0, saved.rlim_max };
    ck_assert_int_eq(setrlimit(RLIMIT_NPROC, &none), 0);
    RUN(four, "filter", "-O", "leaky", "-j", "4", xml);
    /* LeakSanitizer needs a thread at exit */
    setrlimit(RLIMIT_NPROC, &saved);
    ck_assert_int_eq(four.status, one.status);
    ck_assert_str_eq(four.out, one.out);
    gl_assert_line(four.err, "^gemleak: note: read with 1 thread, not 4: ");
    gl_test_run_clear(&one);
    gl_test_run_clear(&four);
    gl_remove_tree(dir);
}
END_TEST

/* Under an address-space limit (ulimit -v) threads can start and then
 * find no memory: GLib aborts. The threads that fit are counted before
 * any starts; the report is the one thread's. */
START_TEST(test_fewer_threads_under_an_address_space_limit)
{
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer maps terabytes of shadow: it cannot run under one. */
    gl_test_skip("AddressSanitizer cannot run under an address-space limit");
#endif
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    gsize length = 0;
    g_autofree char *xml = gl_test_read(leak, &length);
    for (guint i = 0; i < 300; i++) {
        g_autofree char *name = g_strdup_printf("%s/%u.xml", dir, i);
        gl_test_write(name, xml, (gssize) length);
    }
    RUN(one, "filter", "-O", "leaky", "-j", "1", dir);
    ck_assert_int_eq(one.status, 1);

    /* As ulimit -v 120000 leaves gemleak's own binary: some 70 MB over
     * what it has mapped when it starts. */
    g_autofree char *statm = gl_test_read("/proc/self/statm", NULL);
    guint64 pages = g_ascii_strtoull(statm, NULL, 10);
    ck_assert_uint_gt(pages, 0);
    rlim_t mapped = (rlim_t) (pages * (guint64) sysconf(_SC_PAGESIZE));
    struct rlimit limit = { mapped + (rlim_t) 72 * 1024 * 1024, RLIM_INFINITY };
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &limit), 0);
    RUN(many, "filter", "-O", "leaky", "-j", "64", dir);
    ck_assert_int_eq(many.status, one.status);
    ck_assert_str_eq(many.out, one.out);
    gl_assert_line(many.err, "^gemleak: note: read with \\d+ threads?, not 64: ");
    gl_test_run_clear(&one);
    gl_test_run_clear(&many);
    gl_remove_tree(dir);
}
END_TEST

/* Every option value, and every file an option names, is checked before
 * anything is read or run: in run, before Valgrind starts (here the
 * command does not exist, so a run that went ahead would say that
 * instead, exit 3). */
START_TEST(test_option_values_checked_first)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    const char *const cases[][3] = {
        { "--fail-on", "", "^gemleak: --fail-on: the value is empty \\(give definite, .*none to never fail\\)$" },
        { "--leak-kinds", "", "^gemleak: --leak-kinds: the value is empty " },
        { "--fail-on", "definitly", "^gemleak: --fail-on: unknown kind 'definitly' " },
        { "--max-bytes", "abc", "^gemleak: --max-bytes: 'abc' is not a number of bytes$" },
        { "--color", "junk", "^gemleak: --color junk: give auto, always or never$" },
        { "--project-root", "/nonexistent", "^gemleak: --project-root /nonexistent: no such directory$" },
        { "--format", "json:", "^gemleak: --format json: names no file " },
        { "--output", "", "^gemleak: --output: give a file name " },
        { "--object", "", "^gemleak: --object: the value is empty$" },
        { "--baseline", "/nonexistent/b.json", "^gemleak: --baseline /nonexistent/b\\.json: cannot open: " },
        { "--skip-functions-file", "/nonexistent/s", "^gemleak: --skip-functions-file /nonexistent/s: cannot open: " },
        { "--write-baseline", "", "^gemleak: --write-baseline: the value is empty$" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        RUN(filter, "filter", "-O", "leaky", cases[i][0], cases[i][1], leak);
        ck_assert_msg(filter.status == GL_EXIT_USAGE, "filter %s '%s': status %d", cases[i][0],
                      cases[i][1], filter.status);
        gl_assert_line(filter.err, cases[i][2]);
        gl_assert_line(filter.err, "^Try 'gemleak filter --help'\\.$");
        gl_test_run_clear(&filter);

        RUN(run, "run", cases[i][0], cases[i][1], "--", "/nonexistent/command");
        ck_assert_msg(run.status == GL_EXIT_USAGE, "run %s '%s': status %d\n%s", cases[i][0],
                      cases[i][1], run.status, run.err);
        gl_assert_line(run.err, cases[i][2]);
        gl_assert_no_line(run.err, "Valgrind");
        gl_test_run_clear(&run);
    }
    RUN(keep, "run", "--keep-xml", "", "--", "/nonexistent/command");
    ck_assert_int_eq(keep.status, GL_EXIT_USAGE);
    gl_assert_line(keep.err, "^gemleak: --keep-xml: the value is empty$");
    gl_test_run_clear(&keep);
}
END_TEST

/* Paths and patterns are bytes, as file names are: UTF-8 in a UTF-8
 * locale, and Latin-1 bytes in any locale. */
START_TEST(test_non_ascii_option_values)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *utf8 = g_build_filename(dir, "rapport-\xc3\xa9t\xc3\xa9.txt", NULL);
    g_autofree char *latin1 = g_build_filename(dir, "rapport-\xe9t\xe9.json", NULL);
    g_autofree char *latin1_spec = g_strconcat("json:", latin1, NULL);
    const char *const locales[] = { "C.UTF-8", "C" };
    for (guint i = 0; i < G_N_ELEMENTS(locales); i++) {
        g_setenv("LC_ALL", locales[i], TRUE);
        RUN(run, "filter", "-O", "leaky", "-O", "caf\xc3\xa9", "--skip-function", "r\xe9*",
            "--format", "text", "-o", utf8, "--format", latin1_spec, "--project-root", dir, leak);
        ck_assert_msg(run.status == 1, "LC_ALL=%s: status %d\n%s", locales[i], run.status, run.err);
        /* the lines on stderr: no object is called café, said in its bytes;
         * the verdict, which no stream had */
        gl_assert_line(run.err, "^gemleak: warning: --object caf\xc3\xa9 matches no object ");
        gl_assert_line(run.err, "^gemleak: FAIL: 3 leaks losing 284 bytes$");
        ck_assert_int_eq(gl_test_count(run.err, strlen(run.err), "\n"), 2);
        g_autofree char *text = gl_test_read(utf8, NULL);
        gl_assert_line(text, "^gemleak: targets: leaky, caf\xc3\xa9$");
        ck_assert(g_file_test(latin1, G_FILE_TEST_IS_REGULAR));
        gl_test_run_clear(&run);
    }
    g_unsetenv("LC_ALL");
    gl_remove_tree(dir);
}
END_TEST

/* After --, every argument is an input, dashes or not. */
START_TEST(test_inputs_after_double_dash)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *dashed = g_build_filename(dir, "-x.xml", NULL);
    g_autofree char *contents = gl_test_read(leak, NULL);
    gl_test_write(dashed, contents, -1);
    ck_assert_int_eq(chdir(dir), 0);
    RUN(run, "filter", "-O", "leaky", "--", "-x.xml");
    ck_assert_msg(run.status == 1, "status %d\n%s", run.status, run.err);
    gl_assert_line(run.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 53 errors read: 3 findings ");
    ck_assert_str_eq(run.err, "");
    gl_test_run_clear(&run);
    gl_remove_tree(dir);
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

/* A report path that is an input, or lies in an input directory (or in
 * run's --keep-xml directory), or is a file an option reads, is a usage
 * error, and the input stays as it was. */
START_TEST(test_reports_never_overwrite_inputs)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *xml = g_build_filename(dir, "4242.xml", NULL);
    gsize length = 0;
    g_autofree char *original = gl_test_read(leak, &length);
    gl_test_write(xml, original, (gssize) length);
    g_autofree char *other_spelling = g_strconcat(dir, "/./../", strrchr(dir, '/') + 1, "/4242.xml", NULL);
    g_autofree char *elsewhere = gl_test_tmpdir();
    g_autofree char *link_abs = g_build_filename(elsewhere, "link-to-4242.xml", NULL);
    ck_assert_int_eq(symlink(xml, link_abs), 0);
    g_autofree char *inside = g_build_filename(dir, "report.xml", NULL);
    g_autofree char *deeper = g_build_filename(dir, "sub", "report.json", NULL);
    g_autofree char *skips_abs = g_build_filename(elsewhere, "skips.txt", NULL);
    gl_test_write(skips_abs, "rb_foo\n", -1);
    g_autofree char *json_inside = g_strconcat("junit:", inside, NULL);

    const char *const cases[][5] = {
        { "-o", xml, xml, "would overwrite .*4242\\.xml, which gemleak reads" },
        { "-o", other_spelling, xml, "would overwrite" },
        { "-o", link_abs, xml, "would overwrite" },
        { "--format", json_inside, dir, "would be written inside .*, a directory gemleak reads" },
        { "--write-baseline", deeper, dir, "would be written inside" },
        { "--suppressions-out", xml, dir, "would be written inside" },
        { "--write-baseline", skips_abs, xml, "would overwrite .*/skips\\.txt" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        RUN(run, "filter", "-O", "leaky", "--skip-functions-file", skips_abs, cases[i][0],
            cases[i][1], cases[i][2]);
        ck_assert_msg(run.status == GL_EXIT_USAGE, "case %u: status %d\n%s", i, run.status, run.err);
        gl_assert_line(run.err, cases[i][3]);
        gsize now_length = 0;
        g_autofree char *now = gl_test_read(xml, &now_length);
        ck_assert_msg(now_length == length && memcmp(now, original, length) == 0,
                      "case %u: the input changed", i);
        ck_assert(!g_file_test(inside, G_FILE_TEST_EXISTS));
        gl_test_run_clear(&run);
    }

    /* run: nothing may go inside --keep-xml DIR, there yet or not */
    g_autofree char *keep = g_build_filename(dir, "kept", NULL);
    g_autofree char *in_keep = g_build_filename(keep, "r.json", NULL);
    RUN(keep_run, "run", "--keep-xml", keep, "--write-baseline", in_keep, "--", "/nonexistent/x");
    ck_assert_int_eq(keep_run.status, GL_EXIT_USAGE);
    gl_assert_line(keep_run.err, "^gemleak: --write-baseline .*/kept/r\\.json would be written "
                                 "inside .*/kept, a directory gemleak reads: write it elsewhere$");
    gl_test_run_clear(&keep_run);
    g_autofree char *keep_deeper = g_build_filename(dir, "new", "deeper", NULL);
    g_autofree char *in_deeper = g_build_filename(keep_deeper, "junit.xml", NULL);
    g_autofree char *junit_in_deeper = g_strconcat("junit:", in_deeper, NULL);
    RUN(deeper_run, "run", "--keep-xml", keep_deeper, "--format", junit_in_deeper, "--",
        "/nonexistent/x");
    ck_assert_int_eq(deeper_run.status, GL_EXIT_USAGE);
    gl_assert_line(deeper_run.err, "would be written inside .*/new/deeper, a directory gemleak reads");
    gl_test_run_clear(&deeper_run);

    /* --write-baseline may refresh the --baseline it reads; no other report may */
    g_autofree char *baseline_abs = g_build_filename(elsewhere, "baseline.json", NULL);
    gl_test_write(baseline_abs, "{\"findings\": []}", -1);
    RUN(refresh, "filter", "-O", "leaky", "--baseline", baseline_abs, "--write-baseline",
        baseline_abs, leak);
    ck_assert_int_eq(refresh.status, 0);  /* writing a baseline adopts what it holds */
    g_autofree char *refreshed = gl_test_read(baseline_abs, NULL);
    ck_assert_uint_eq(gl_test_count(refreshed, strlen(refreshed), "\"fingerprint\""), 3);
    gl_test_run_clear(&refresh);
    RUN(clobber, "filter", "-O", "leaky", "--baseline", baseline_abs, "-o", baseline_abs, leak);
    ck_assert_int_eq(clobber.status, GL_EXIT_USAGE);
    gl_test_run_clear(&clobber);

    gl_remove_tree(elsewhere);
    gl_remove_tree(dir);
}
END_TEST

/* -o onto a symbolic link writes the file it points to, which keeps its
 * mode; the link stays a link. A new file gets 0666 less the umask. */
START_TEST(test_report_through_a_symlink_keeps_the_mode)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *target = g_build_filename(dir, "report.txt", NULL);
    g_autofree char *link = g_build_filename(dir, "latest.txt", NULL);
    gl_test_write(target, "old\n", -1);
    ck_assert_int_eq(chmod(target, 0640), 0);
    ck_assert_int_eq(symlink("report.txt", link), 0);
    RUN(run, "filter", "-O", "leaky", "-o", link, leak);
    ck_assert_int_eq(run.status, 1);
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(stat(target, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    g_autofree char *text = gl_test_read(target, NULL);
    gl_assert_line(text, "^gemleak: FAIL: ");
    gl_test_run_clear(&run);

    /* a dangling link: its target is made */
    g_autofree char *dangling = g_build_filename(dir, "dangling.json", NULL);
    g_autofree char *made = g_build_filename(dir, "made.json", NULL);
    ck_assert_int_eq(symlink("made.json", dangling), 0);
    mode_t mask = umask(027);
    RUN(fresh, "filter", "-O", "leaky", "--format", "json", "-o", dangling, leak);
    umask(mask);
    ck_assert_int_eq(fresh.status, 1);
    ck_assert_int_eq(lstat(dangling, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(stat(made, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    gl_test_run_clear(&fresh);
    gl_remove_tree(dir);
}
END_TEST

/* Two reports to one file, or to one stream however it is spelled, are
 * refused: one would be lost, or both unreadable. */
START_TEST(test_two_reports_one_destination)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *file = g_build_filename(dir, "r.txt", NULL);
    g_autofree char *again = g_build_filename(dir, ".", "r.txt", NULL);
    g_autofree char *json_again = g_strconcat("json:", again, NULL);
    RUN(one_file, "filter", "-O", "leaky", "--format", "text", "-o", file, "--format", json_again, leak);
    ck_assert_int_eq(one_file.status, GL_EXIT_USAGE);
    gl_assert_line(one_file.err, "^gemleak: the text report \\(.*\\) and the json report \\(.*\\) "
                                 "would both go to .*/r\\.txt: give each its own file$");
    ck_assert(!g_file_test(file, G_FILE_TEST_EXISTS));
    gl_test_run_clear(&one_file);

    RUN(supp, "filter", "-O", "leaky", "--format", "supp", "-o", file, "--suppressions-out", again, leak);
    ck_assert_int_eq(supp.status, GL_EXIT_USAGE);
    gl_test_run_clear(&supp);

    const char *const streams[][2] = {
        { "/dev/stdout", "json:/proc/self/fd/1" },
        { "/dev/fd/1", "json:/dev/stdout" },
        { "/dev/stderr", "sarif:/proc/self/fd/2" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(streams); i++) {
        RUN(run, "filter", "-O", "leaky", "--format", "text", "-o", streams[i][0], "--format",
            streams[i][1], leak);
        ck_assert_msg(run.status == GL_EXIT_USAGE, "%s and %s: status %d", streams[i][0],
                      streams[i][1], run.status);
        gl_assert_line(run.err, "^gemleak: 2 reports would share one stream");
        gl_test_run_clear(&run);
    }
    gl_remove_tree(dir);
}
END_TEST

/* --keep-xml takes a directory of the user's own that nobody else can
 * write to, or a new one: refused before anything runs otherwise. */
START_TEST(test_keep_xml_must_be_private)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *shared = g_build_filename(base, "shared", NULL);
    g_autofree char *group = g_build_filename(base, "group", NULL);
    g_autofree char *theirs = g_build_filename(base, "theirs", NULL);
    g_autofree char *file = g_build_filename(base, "file", NULL);
    /* the directory above can be swapped by whoever may write there */
    g_autofree char *open_parent = g_build_filename(base, "open", NULL);
    g_autofree char *under_open = g_build_filename(open_parent, "xml", NULL);
    g_autofree char *sticky_parent = g_build_filename(base, "sticky", NULL);
    g_autofree char *under_sticky = g_build_filename(sticky_parent, "new", "xml", NULL);
    ck_assert_int_eq(g_mkdir(open_parent, 0700), 0);
    ck_assert_int_eq(chmod(open_parent, 0777), 0);
    ck_assert_int_eq(g_mkdir(sticky_parent, 0700), 0);
    ck_assert_int_eq(chmod(sticky_parent, 01777), 0);
    ck_assert_int_eq(g_mkdir(shared, 0700), 0);
    ck_assert_int_eq(chmod(shared, 01777), 0);
    ck_assert_int_eq(g_mkdir(group, 0700), 0);
    ck_assert_int_eq(chmod(group, 0770), 0);
    ck_assert_int_eq(g_mkdir(theirs, 0700), 0);
    gl_test_write(file, "", 0);
    gboolean can_chown = chown(theirs, 65534, 65534) == 0;
    const char *const cases[][2] = {
        { shared, "^gemleak: --keep-xml .*/shared: others can write to it \\(mode 1777\\): " },
        { group, "^gemleak: --keep-xml .*/group: others can write to it \\(mode 0770\\): " },
        { file, "^gemleak: --keep-xml .*/file: not a directory$" },
        { under_open, "^gemleak: --keep-xml .*/open/xml: others can write to .*/open, above it, "
                      "without the sticky bit \\(mode 0777\\): " },
        { theirs, "^gemleak: --keep-xml .*/theirs: owned by another user \\(uid 65534\\): " },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases) - (can_chown ? 0 : 1); i++) {
        RUN(run, "run", "--keep-xml", cases[i][0], "--", "/nonexistent/command");
        ck_assert_msg(run.status == GL_EXIT_USAGE, "%s: status %d\n%s", cases[i][0], run.status,
                      run.err);
        gl_assert_line(run.err, cases[i][1]);
        gl_assert_no_line(run.err, "Valgrind");
        gl_test_run_clear(&run);
    }
    /* as /tmp is: only the owner of an entry may rename it */
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_run_check_keep_dir(under_sticky, &error), "%s", error->message);
    gl_remove_tree(base);
}
END_TEST

/* Two runs at once in one --keep-xml directory would read each other's
 * XML: the second is refused while the first holds it. */
START_TEST(test_keep_xml_held_by_another_run)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "xml", NULL);
    ck_assert_int_eq(g_mkdir(keep, 0700), 0);
    int held = gl_rundir_lock(keep);
    ck_assert_int_ge(held, 0);
    RUN(run, "run", "--keep-xml", keep, "--", "/nonexistent/command");
    ck_assert_msg(run.status == GL_EXIT_USAGE, "status %d\n%s", run.status, run.err);
    gl_assert_line(run.err, "^gemleak: --keep-xml .*/xml: another gemleak run is using it: give "
                            "each run a directory of its own$");
    gl_assert_no_line(run.err, "Valgrind");
    ck_assert(!gl_list_xml_files_any(keep));
    gl_test_run_clear(&run);
    close(held);
    gl_remove_tree(base);
}
END_TEST

/* A --valgrind whose --version floods its output, or never ends, costs a
 * few seconds and a one-line error, not a hang. */
START_TEST(test_valgrind_version_probe_is_bounded)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *const fakes[][3] = {
        { "flood", "#!/bin/sh\nexec yes valgrind-3.19.0\n",
          "^gemleak: .*/flood does not look like Valgrind: '.*/flood --version' printed more "
          "than 4096 bytes$" },
        { "hang", "#!/bin/sh\nexec sleep 100\n",
          "^gemleak: .*/hang does not look like Valgrind: '.*/hang --version' did not finish "
          "within 5 seconds$" },
        { "silent", "#!/bin/sh\nexec sleep 100 >/dev/null\n",
          "did not finish within 5 seconds$" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(fakes); i++) {
        g_autofree char *fake = g_build_filename(dir, fakes[i][0], NULL);
        gl_test_write(fake, fakes[i][1], -1);
        ck_assert_int_eq(chmod(fake, 0755), 0);
        gint64 start = g_get_monotonic_time();
        RUN(run, "run", "--valgrind", fake, "--", "/nonexistent/command");
        gint64 took = (g_get_monotonic_time() - start) / G_USEC_PER_SEC;
        ck_assert_msg(run.status == GL_EXIT_ERROR, "%s: status %d\n%s", fakes[i][0], run.status,
                      run.err);
        gl_assert_line(run.err, fakes[i][2]);
        ck_assert_msg(gl_test_count(run.err, strlen(run.err), "\n") == 1, "%s: %s", fakes[i][0], run.err);
        ck_assert_int_le(took, 10);
        gl_test_run_clear(&run);
    }
    /* a wrapper that answers, and leaves something running with its output */
    g_autofree char *wrapper = g_build_filename(dir, "wrapper", NULL);
    gl_test_write(wrapper, "#!/bin/sh\n[ \"$1\" = --version ] && { sleep 100 & echo valgrind-3.19.0; "
                           "exit 0; }\nexit 1\n", -1);
    ck_assert_int_eq(chmod(wrapper, 0755), 0);
    g_autofree char *version = NULL;
    gint64 start = g_get_monotonic_time();
    g_autoptr(GError) error = NULL;
    version = gl_valgrind_version(wrapper, &error);
    ck_assert_msg(version != NULL, "%s", error != NULL ? error->message : "?");
    ck_assert_str_eq(version, "3.19.0");
    ck_assert_int_le((g_get_monotonic_time() - start) / G_USEC_PER_SEC, 2);
    gl_remove_tree(dir);
}
END_TEST

/* Valgrind asserts on an --xml-file name over 900 characters (and dies
 * with SIGSEGV, which read as the command's failure): a TMPDIR or
 * --keep-xml that long is said up front, before Valgrind runs. */
START_TEST(test_run_directory_too_long_for_valgrind)
{
    /* TMPDIR first: GLib reads it once, at the first temporary directory. */
    g_autofree char *base = g_strdup_printf("/tmp/gemleak-long-%d", (int) getpid());
    GString *long_dir = g_string_new(base);
    while (long_dir->len < 950)
        g_string_append(long_dir, "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ck_assert_int_eq(g_mkdir_with_parents(long_dir->str, 0700), 0);
    g_setenv("TMPDIR", long_dir->str, TRUE);
    gint64 start = g_get_monotonic_time();
    RUN(tmpdir, "run", "--", "ruby", "-e", "1");
    ck_assert_msg(tmpdir.status == GL_EXIT_ERROR, "status %d\n%s", tmpdir.status, tmpdir.err);
    gl_assert_line(tmpdir.err, "^gemleak: TMPDIR is too long for Valgrind: its XML files would "
                               "be named .*/gemleak-run-XXXXXX/%p\\.xml, \\d+ characters, and "
                               "Valgrind takes at most 900: set TMPDIR to a shorter directory$");
    gl_assert_no_line(tmpdir.err, "command");
    /* nothing ran */
    ck_assert_int_le((g_get_monotonic_time() - start) / G_USEC_PER_SEC, 2);
    gl_test_run_clear(&tmpdir);

    g_autofree char *keep = g_build_filename(long_dir->str, "xml", NULL);
    g_setenv("TMPDIR", "/tmp", TRUE);
    RUN(kept, "run", "--keep-xml", keep, "--", "ruby", "-e", "1");
    ck_assert_msg(kept.status == GL_EXIT_USAGE, "status %d\n%s", kept.status, kept.err);
    gl_assert_line(kept.err, "^gemleak: --keep-xml .*/xml: too long for Valgrind: its XML files "
                             "would be named .*/xml/%p\\.xml, \\d+ characters, and Valgrind "
                             "takes at most 900: give a shorter directory$");
    gl_test_run_clear(&kept);
    g_string_free(long_dir, TRUE);
    gl_remove_tree(base);
}
END_TEST

/* A JSON report is UTF-8 whatever bytes the file names and the targets
 * hold, and gemleak reads it back as a --baseline. */
START_TEST(test_json_report_reads_back_as_a_baseline)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *dir = g_build_filename(base, "caf\xe9", NULL);
    ck_assert_int_eq(g_mkdir(dir, 0700), 0);
    gsize length = 0;
    g_autofree char *text = gl_test_read(leak, &length);
    g_autofree char *whole = g_build_filename(dir, "5000.xml", NULL);
    g_autofree char *cut = g_build_filename(dir, "5001.xml", NULL);
    gl_test_write(whole, text, (gssize) length);
    gl_test_write(cut, text, strstr(text, "<error>") - text + 50);
    g_autofree char *report = g_build_filename(base, "r\xe9port.json", NULL);
    g_autofree char *spec = g_strconcat("json:", report, NULL);
    RUN(first, "filter", "-O", "leaky", "-O", "caf\xe9", "--format", spec, whole, cut);
    ck_assert_msg(first.status == 1, "status %d\n%s", first.status, first.err);
    g_autofree char *json = gl_test_read(report, NULL);
    ck_assert(g_utf8_validate(json, -1, NULL));
    ck_assert(strstr(json, "caf\xef\xbf\xbd") != NULL);  /* U+FFFD for the Latin-1 byte */
    gl_test_run_clear(&first);

    RUN(again, "filter", "-O", "leaky", "--baseline", report, leak);
    ck_assert_msg(again.status == 0, "status %d\n%s", again.status, again.err);
    gl_assert_line(again.out, ", 3 known to the baseline \\(3 occurrences\\), ");
    gl_test_run_clear(&again);
    gl_remove_tree(base);
}
END_TEST

/* A file name with a terminal escape in it, in gemleak's own notes: shown
 * escaped, as in reports, never sent to the terminal raw. */
START_TEST(test_notes_escape_file_names)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *durations = g_build_filename(dir, "dur\033[31m.txt", NULL);
    gl_test_write(durations, "not json\n", -1);
    RUN(run, "run", "--durations", durations, "--", "true", ":::", "/etc/hostname");
    ck_assert_ptr_null(strchr(run.err, '\033'));
    gl_assert_line(run.err, "^gemleak: note: .*/dur\\\\x1b\\[31m\\.txt is not gemleak's "
                            "durations file");
    gl_test_run_clear(&run);

    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    RUN(unseen, "filter", "--object", "no\033[31mne", leak);
    ck_assert_ptr_null(strchr(unseen.err, '\033'));
    gl_assert_line(unseen.err, "^gemleak: warning: --object no\\\\x1b\\[31mne matches no object");
    gl_test_run_clear(&unseen);
    gl_remove_tree(dir);
}
END_TEST

/* Asserts that @text holds no raw control character but newlines, and no
 * line a name forged. */
static void assert_no_raw_control(const char *text)
{
    for (const char *c = text; *c != '\0'; c++)
        ck_assert_msg(*c == '\n' || (unsigned char) *c >= 0x20 || *c == '\t',
                      "a raw control character 0x%02x in:\n%s", (unsigned char) *c, text);
    ck_assert_msg(strchr(text, 0x7f) == NULL, "a raw DEL in:\n%s", text);
    gl_assert_no_line(text, "^gemleak: pass");
    gl_assert_no_line(text, "^forged");
}

/* gemleak clean names directories in TMPDIR and what it found in them:
 * a TMPDIR or a file name with an escape or a newline reaches the
 * terminal escaped, on one line. */
START_TEST(test_clean_escapes_the_names_it_prints)
{
    /* TMPDIR before GLib first reads it (it keeps it) */
    char base[] = "/tmp/gemleak-clean-XXXXXX";
    ck_assert_ptr_nonnull(g_mkdtemp(base));
    g_autofree char *tmp = g_build_filename(base, "t\033[2J\nforged", NULL);
    ck_assert_int_eq(g_mkdir(tmp, 0700), 0);
    g_setenv("TMPDIR", tmp, TRUE);
    g_autofree char *ours = g_build_filename(tmp, "gemleak-run-AbC123", NULL);
    g_autofree char *odd = g_build_filename(tmp, "gemleak-run-\033[31m!", NULL);
    ck_assert_int_eq(g_mkdir(ours, 0700), 0);
    ck_assert_int_eq(g_mkdir(odd, 0700), 0);
    g_autofree char *marker = g_build_filename(ours, "gemleak-run.txt", NULL);
    gl_test_write(marker, "x", -1);
    g_autofree char *stranger = g_build_filename(odd, "x\nforged\033[0m", NULL);
    gl_test_write(stranger, "x", -1);

    RUN(dry, "clean", "--dry-run");
    ck_assert_int_eq(dry.status, 0);
    assert_no_raw_control(dry.out);
    gl_assert_line(dry.out, "^would remove .*/t\\\\x1b\\[2J\\\\nforged/gemleak-run-AbC123 \\(");
    gl_assert_line(dry.out, "^left .*/gemleak-run-\\\\x1b\\[31m!: it holds x\\\\nforged\\\\x1b\\[0m, "
                            "which gemleak does not write$");
    gl_assert_line(dry.out, "^would remove 1 directory of gemleak's in .*/t\\\\x1b\\[2J\\\\nforged, ");
    gl_test_run_clear(&dry);
    gl_remove_tree(base);
}
END_TEST

/* The line that names a kept --keep-xml directory: a newline in its name
 * once forged a "gemleak: pass: no findings" line. */
START_TEST(test_kept_directory_line_is_escaped)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "k\ngemleak: pass: no findings\033[2J", NULL);
    RUN(run, "run", "--keep-xml", keep, "--", "true");
    assert_no_raw_control(run.err);
    gl_assert_line(run.err, "^gemleak: Valgrind's XML is kept in .*/k\\\\ngemleak: pass: no "
                            "findings\\\\x1b\\[2J \\(.*; read it again with: gemleak filter ");
    gl_test_run_clear(&run);
    gl_remove_tree(dir);
}
END_TEST

/* What the user typed comes back in gemleak's messages escaped too: an
 * unknown command, an option's value, a file that cannot be read. */
START_TEST(test_messages_escape_what_the_user_typed)
{
    RUN(command, "\033[2Jforged");
    ck_assert_int_eq(command.status, 2);
    assert_no_raw_control(command.err);
    gl_assert_line(command.err, "^gemleak: unknown command '\\\\x1b\\[2Jforged'$");
    gl_test_run_clear(&command);

    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    RUN(fail_on, "filter", "--fail-on", "x\nforged\033[0m", leak);
    ck_assert_int_eq(fail_on.status, 2);
    assert_no_raw_control(fail_on.err);
    gl_assert_line(fail_on.err, "^gemleak: --fail-on: unknown kind 'x\\\\nforged\\\\x1b\\[0m'");
    gl_test_run_clear(&fail_on);

    RUN(baseline, "filter", "--baseline", "/nonexistent/b\nforged\033[0m.json", leak);
    ck_assert_int_eq(baseline.status, 2);
    assert_no_raw_control(baseline.err);
    gl_assert_line(baseline.err, "^gemleak: --baseline /nonexistent/b\\\\nforged\\\\x1b\\[0m\\.json: ");
    gl_test_run_clear(&baseline);

    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *report = g_build_filename(dir, "no\033[2J/r.json", NULL);
    RUN(sink, "filter", "--format", "json", "-o", report, leak);
    ck_assert_int_ne(sink.status, 0);
    assert_no_raw_control(sink.err);
    gl_assert_line(sink.err, "no\\\\x1b\\[2J/r\\.json");
    gl_test_run_clear(&sink);
    gl_remove_tree(dir);
}
END_TEST

/* GitHub's annotations escape only %, CR and LF: an escape in a test's
 * name reached the log raw, and with it the terminal that shows it. */
START_TEST(test_github_format_escapes_control_characters)
{
    g_autofree char *fixture = gl_test_fixture("xml/per_test.xml");
    g_autofree char *original = gl_test_read(fixture, NULL);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *xml = g_build_filename(dir, "100.xml", NULL);
    GString *text = g_string_new(original);
    /* the helper percent-encodes the fields of a marker */
    g_string_replace(text, "LeakyTest#test_leak\t", "Leaky%1B[2JTest#test_leak%07\t", 0);
    gl_test_write(xml, text->str, (gssize) text->len);
    g_string_free(text, TRUE);

    RUN(run, "filter", "-O", "leaky", "--format", "github", xml);
    ck_assert_int_eq(run.status, 1);
    assert_no_raw_control(run.out);
    gl_assert_line(run.out, "^::error .*Leaky\\\\x1b\\[2JTest#test_leak\\\\x07");
    gl_test_run_clear(&run);
    gl_remove_tree(dir);
}
END_TEST

static guint count_in(const char *text, const char *needle)
{
    return gl_test_count(text, strlen(text), needle);
}

/* The gate's verdict is said once on gemleak's streams, whatever the
 * reports (issue 29): by the text report in the command's stream, else on
 * standard error; another report written to a stream leaves it out, one in
 * a file keeps it. */
START_TEST(test_verdict_said_once)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *clean = gl_test_fixture("xml/clean.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "r.json", NULL);
    g_autofree char *json_format = g_strconcat("json:", json, NULL);
    g_autofree char *text = g_build_filename(dir, "r.txt", NULL);
    g_autofree char *text_format = g_strconcat("text:", text, NULL);

    /* a JSON report alone: the verdict on standard error */
    RUN(json_only, "filter", "-O", "leaky", "--format", json_format, leak);
    ck_assert_int_eq(json_only.status, 1);
    ck_assert_str_eq(json_only.out, "");
    ck_assert_uint_eq(count_in(json_only.err, "gemleak: FAIL: "), 1);
    gl_assert_line(json_only.err, "^gemleak: FAIL: 3 leaks losing 284 bytes$");
    gl_test_run_clear(&json_only);

    /* annotations on standard output, no findings: the pass once, on
     * standard error, not among the annotations */
    RUN(github, "filter", "-O", "leaky", "--format", "github", clean);
    ck_assert_int_eq(github.status, 0);
    ck_assert_uint_eq(count_in(github.out, "gemleak: pass"), 0);
    ck_assert_uint_eq(count_in(github.err, "gemleak: pass"), 1);
    gl_assert_line(github.err, "^gemleak: pass: no findings$");
    gl_test_run_clear(&github);

    /* the text report in the command's stream says it, and nothing else
     * on the streams; annotations in a file keep theirs */
    g_autofree char *annotations = g_build_filename(dir, "github.txt", NULL);
    g_autofree char *github_format = g_strconcat("github:", annotations, NULL);
    RUN(both, "filter", "-O", "leaky", "--format", "text", "--format", github_format, leak);
    ck_assert_uint_eq(count_in(both.out, "gemleak: FAIL: "), 1);
    ck_assert_uint_eq(count_in(both.err, "gemleak: FAIL: "), 0);
    g_autofree char *in_file = gl_test_read(annotations, NULL);
    ck_assert_uint_eq(count_in(in_file, "gemleak: FAIL: "), 1);
    gl_test_run_clear(&both);

    /* a text report in a file is whole, and the streams still get it once */
    RUN(file, "filter", "-O", "leaky", "--format", text_format, leak);
    ck_assert_uint_eq(count_in(file.out, "gemleak: FAIL: "), 0);
    ck_assert_uint_eq(count_in(file.err, "gemleak: FAIL: "), 1);
    g_autofree char *report = gl_test_read(text, NULL);
    gl_assert_line(report, "^gemleak: FAIL: 3 leaks losing 284 bytes$");
    gl_test_run_clear(&file);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_cli_suite(void)
{
    Suite *suite = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_add_test(tc, test_version_and_help);
    tcase_add_test(tc, test_usage_errors_exit_2);
    tcase_add_test(tc, test_findings_exit_1_clean_exit_0);
    tcase_add_test(tc, test_unreadable_inputs_exit_3_and_keep_the_rest);
    tcase_add_test(tc, test_truncated_file_reports_what_came_before);
    tcase_add_test(tc, test_several_formats_at_once);
    tcase_add_test(tc, test_report_that_cannot_be_written);
    tcase_add_test(tc, test_report_destinations_checked_before_the_run);
    tcase_add_test(tc, test_gate_options);
    tcase_add_test(tc, test_targets_from_the_runs_list);
    tcase_add_test(tc, test_no_target_known);
    tcase_add_test(tc, test_target_that_is_not_there);
    tcase_add_test(tc, test_shard_reports_merge);
    tcase_add_test(tc, test_shard_reports_keep_the_tests);
    tcase_add_test(tc, test_text_report_escapes_control_characters);
    tcase_add_test(tc, test_incomplete_shard_stays_incomplete);
    tcase_add_test(tc, test_json_that_is_not_a_report);
    tcase_add_test(tc, test_text_stacks_people_can_read);
    tcase_add_test(tc, test_uninitialised_values_in_rubys_gc_pass);
    tcase_add_test(tc, test_standard_input);
    tcase_add_test(tc, test_jobs_do_not_change_the_report);
    tcase_add_test(tc, test_baseline_adoption);
    tcase_add_test(tc, test_baseline_knows_a_moved_cycle);
    tcase_add_test(tc, test_baseline_holds_what_identifies_a_finding);
    tcase_add_test(tc, test_old_baselines_keep_reading);
    tcase_add_test(tc, test_baseline_fingerprint_matches_only_itself);
    tcase_add_test(tc, test_every_format_names_the_same_path);
    tcase_add_test(tc, test_suppressions_out_and_project_root);
    tcase_add_test(tc, test_option_files_are_bounded);
    tcase_add_test(tc, test_endless_text_input_is_not_xml);
    tcase_add_test(tc, test_jobs_bounds);
    tcase_add_test(tc, test_option_values_checked_first);
    tcase_add_test(tc, test_non_ascii_option_values);
    tcase_add_test(tc, test_inputs_after_double_dash);
    tcase_add_test(tc, test_the_same_input_twice_is_read_once);
    tcase_add_test(tc, test_only_regular_files_are_read_from_a_directory);
    tcase_add_test(tc, test_gzip_problem_does_not_pass);
    tcase_add_test(tc, test_reports_never_overwrite_inputs);
    tcase_add_test(tc, test_report_through_a_symlink_keeps_the_mode);
    tcase_add_test(tc, test_two_reports_one_destination);
    tcase_add_test(tc, test_keep_xml_must_be_private);
    tcase_add_test(tc, test_keep_xml_held_by_another_run);
    tcase_add_test(tc, test_json_report_reads_back_as_a_baseline);
    tcase_add_test(tc, test_run_directory_too_long_for_valgrind);
    tcase_add_test(tc, test_fewer_threads_when_none_can_start);
    tcase_add_test(tc, test_fewer_threads_under_an_address_space_limit);
    tcase_add_test(tc, test_notes_escape_file_names);
    tcase_add_test(tc, test_clean_escapes_the_names_it_prints);
    tcase_add_test(tc, test_kept_directory_line_is_escaped);
    tcase_add_test(tc, test_messages_escape_what_the_user_typed);
    tcase_add_test(tc, test_github_format_escapes_control_characters);
    tcase_add_test(tc, test_verdict_said_once);
    suite_add_tcase(suite, tc);

    /* probes that take their time box: seconds each */
    TCase *probes = tcase_create("probes");
    tcase_set_timeout(probes, 60);
    tcase_add_test(probes, test_valgrind_version_probe_is_bounded);
    suite_add_tcase(suite, probes);
    return suite;
}
