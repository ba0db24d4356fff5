/* The command line as a user meets it: statuses, messages, reports. */
#include "testutil.h"
#include "gemleak/analyze.h"
#include "gemleak/errors.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

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
    gl_assert_line(incomplete.out, "^gemleak: 1 file, 0 errors read: 0 findings \\(0 occurrences\\), 1 truncated file$");
    gl_test_run_clear(&incomplete);
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

    /* an unwritable destination is exit 3, with its name */
    RUN(e, "filter", "-O", "leaky", "-o", "/nonexistent/dir/r.txt", leak);
    ck_assert_int_eq(e.status, 3);
    gl_assert_line(e.err, "/nonexistent/dir/r\\.txt");
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
    g_autofree char *json_path = g_build_filename(dir, "report.json", NULL);
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

    RUN(unnamed, "filter", dir);
    ck_assert_int_eq(unnamed.status, 2);
    gl_assert_line(unnamed.err, "no Ruby process of the run loaded a native extension");
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
        "^gemleak: \\d+ files?, (\\d+) errors? read: \\d+ findings? \\((\\d+) occurrences?[^)]*\\)"
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
    gl_assert_line(known.out, "^gemleak: 1 file, \\d+ errors read: 0 findings \\(0 occurrences\\), 3 known to the baseline \\(3 occurrences\\), \\d+ skipped ");
    assert_summary_adds_up(known.out);
    gl_assert_line(known.out, "^gemleak: pass: no findings$");
    gl_test_run_clear(&known);

    /* a moved line is the same leak */
    gsize length;
    g_autofree char *text = gl_test_read(leak, &length);
    g_autoptr(GRegex) lines = g_regex_new("(<file>leaky\\.c</file>\\s*<line>)\\d+", 0, 0, NULL);
    g_autofree char *moved_text = g_regex_replace(lines, text, -1, 0, "\\g<1>999", 0, NULL);
    ck_assert(strstr(moved_text, "<line>999</line>") != NULL);
    g_autofree char *moved = g_build_filename(dir, "moved.xml", NULL);
    gl_test_write(moved, moved_text, -1);
    RUN(shifted, "filter", "-O", "leaky", "--baseline", baseline, moved);
    ck_assert_int_eq(shifted.status, 0);
    gl_test_run_clear(&shifted);

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

    /* a baseline that cannot be read is an input error */
    RUN(missing, "filter", "-O", "leaky", "--baseline", "/nonexistent/b.json", leak);
    ck_assert_int_eq(missing.status, 3);
    gl_assert_line(missing.err, "^gemleak: --baseline /nonexistent/b\\.json: ");
    gl_test_run_clear(&missing);
    g_autofree char *bogus = g_build_filename(dir, "bogus.json", NULL);
    gl_test_write(bogus, "{\"results\": []}", -1);
    RUN(wrong, "filter", "-O", "leaky", "--baseline", bogus, leak);
    ck_assert_int_eq(wrong.status, 3);
    gl_assert_line(wrong.err, "not a gemleak JSON report");
    gl_test_run_clear(&wrong);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_suppressions_out_and_project_root)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *supp = g_build_filename(dir, "leaks.supp", NULL);
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
    gl_remove_tree(dir);
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
    tcase_add_test(tc, test_gate_options);
    tcase_add_test(tc, test_targets_from_the_runs_list);
    tcase_add_test(tc, test_no_target_known);
    tcase_add_test(tc, test_target_that_is_not_there);
    tcase_add_test(tc, test_shard_reports_merge);
    tcase_add_test(tc, test_json_that_is_not_a_report);
    tcase_add_test(tc, test_text_stacks_people_can_read);
    tcase_add_test(tc, test_standard_input);
    tcase_add_test(tc, test_jobs_do_not_change_the_report);
    tcase_add_test(tc, test_baseline_adoption);
    tcase_add_test(tc, test_suppressions_out_and_project_root);
    suite_add_tcase(suite, tc);
    return suite;
}
