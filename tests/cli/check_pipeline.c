/* src/cli/pipeline.c, plan.c, pipeline_targets.c: what filter and run
 * share once the options are parsed: the reports and where they go,
 * checked first; the targets; the baseline, read and written; the gate
 * and its verdict, said once. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/merge.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

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

    /* nothing loaded: nothing was checked (3), the name may be right */
    RUN(named, "filter", "-O", "redcarpet", dir);
    ck_assert_int_eq(named.status, 3);
    gl_assert_line(named.err, "--object redcarpet matches no extension the run loaded: it loaded none");
    gl_assert_no_line(named.err, "Try ");
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
    /* the block it holds, listed in its entry (group.h) */
    gl_assert_line(write.out, "^owned 1: 64 bytes in 1 block is indirectly lost: cycle_tail ");
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

/* Issue 37 (item 6): a function an optimising compiler split or cloned
 * (GCC's "f.cold", "f.part.0", "f.isra.0", "f.constprop.0") is, in the
 * fingerprint and the baseline's functions, the function it split: a leak
 * keeps its name whatever the optimisation level. A baseline of version 3,
 * which named the part, still knows its findings. */
START_TEST(test_split_functions_fingerprint_as_the_function)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    /* the same leaks, the functions named as an -O2 build's symbols name them */
    g_autofree char *text = gl_test_read(leak, NULL);
    const char *const renames[][2] = {
        { "<fn>leaky_alloc</fn>", "<fn>leaky_alloc.cold</fn>" },
        { "<fn>leaky_leak</fn>", "<fn>leaky_leak.part.0</fn>" },
        { "<fn>leaky_leak_in_helper</fn>", "<fn>leaky_leak_in_helper.isra.0</fn>" },
        { "<fn>leaky_leak_xmalloc</fn>", "<fn>leaky_leak_xmalloc.constprop.0</fn>" },
    };
    g_autoptr(GString) split_text = g_string_new(text);
    for (guint i = 0; i < G_N_ELEMENTS(renames); i++)
        ck_assert_uint_gt(g_string_replace(split_text, renames[i][0], renames[i][1], 0), 0);
    g_autofree char *split = g_build_filename(dir, "split.xml", NULL);
    gl_test_write(split, split_text->str, (gssize) split_text->len);

    g_autofree char *whole_baseline = g_build_filename(dir, "whole.json", NULL);
    g_autofree char *split_baseline = g_build_filename(dir, "split.json", NULL);
    RUN(whole_run, "filter", "-O", "leaky", "--write-baseline", whole_baseline, leak);
    ck_assert_int_eq(whole_run.status, 0);
    gl_test_run_clear(&whole_run);
    RUN(split_run, "filter", "-O", "leaky", "--write-baseline", split_baseline, split);
    ck_assert_int_eq(split_run.status, 0);
    gl_test_run_clear(&split_run);
    g_autofree char *a = gl_test_read(whole_baseline, NULL);
    g_autofree char *b = gl_test_read(split_baseline, NULL);
    ck_assert_msg(strcmp(a, b) == 0, "the split build's baseline differs:\n%s\n%s", a, b);
    ck_assert_msg(strstr(b, ".cold") == NULL && strstr(b, ".part.") == NULL, "%s", b);

    /* each knows the other's leaks */
    RUN(known, "filter", "-O", "leaky", "--baseline", whole_baseline, split);
    ck_assert_msg(known.status == 0, "%s%s", known.out, known.err);
    gl_assert_line(known.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 "
                              "findings, 3 known to the baseline \\(3 occurrences\\), ");
    gl_test_run_clear(&known);

    /* the text report still shows the frames as the object names them */
    RUN(shown, "filter", "-O", "leaky", split);
    ck_assert_int_eq(shown.status, 1);
    gl_assert_line(shown.out, "^ \\*leaky_alloc\\.cold \\(");
    gl_test_run_clear(&shown);

    /* version 3's baseline, written from the split build by gemleak before
     * issue 37, named the parts: matched as it fingerprinted them */
    g_autofree char *v3 = gl_test_fixture("edge/baseline-v3-cold-leak.json");
    RUN(known_v3, "filter", "-O", "leaky", "--baseline", v3, split);
    ck_assert_msg(known_v3.status == 0, "%s%s", known_v3.out, known_v3.err);
    gl_assert_line(known_v3.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: "
                                 "0 findings, 3 known to the baseline \\(3 occurrences\\), ");
    gl_assert_line(known_v3.err, "^gemleak: note: --baseline .*/baseline-v3-cold-leak\\.json was "
                                 "written by an older gemleak: its findings are matched as it "
                                 "fingerprinted them, which names a function the compiler split "
                                 "by its part \\(\\.cold, \\.part\\.N\\), which another "
                                 "optimisation level changes, and holds what called a "
                                 "recursion, which one engine sees and another does not; "
                                 "write it again with --write-baseline$");
    gl_test_run_clear(&known_v3);
    gl_remove_tree(dir);
}
END_TEST

/* Issue 35 (items 7, 11): a leak at the bottom of a recursion is one
 * finding whatever the depth each engine keeps: the recursion ends its
 * identity (version 4), so a stack Valgrind cut inside it (--num-callers)
 * and one that reaches past it to the caller fingerprint alike; a baseline
 * of one knows the other's leak. */
START_TEST(test_recursion_depth_is_no_part_of_the_fingerprint)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *text = gl_test_read(leak, NULL);
    const char *caller = "    <frame>\n      <ip>0x8926371</ip>\n"
                         "      <obj>/tmp/gemleak-fixtures/leaky/leaky.so</obj>\n"
                         "      <fn>leaky_leak</fn>\n";
    const char *at = strstr(text, caller);
    ck_assert_ptr_nonnull(at);
    const char *end = strstr(at, "  </stack>");
    ck_assert_ptr_nonnull(end);
    GString *step = g_string_new(NULL);
    g_string_printf(step, "    <frame>\n      <ip>0x8926340</ip>\n"
                          "      <obj>/tmp/gemleak-fixtures/leaky/leaky.so</obj>\n"
                          "      <fn>leaky_step</fn>\n      <dir>/tmp/gemleak-fixtures/leaky</dir>\n"
                          "      <file>leaky.c</file>\n      <line>25</line>\n    </frame>\n");
    /* three levels, then the caller and Ruby; forty, cut inside them */
    g_autoptr(GString) whole = g_string_new_len(text, at - text);
    for (guint i = 0; i < 3; i++)
        g_string_append(whole, step->str);
    g_string_append(whole, at);
    g_autoptr(GString) cut = g_string_new_len(text, at - text);
    for (guint i = 0; i < 40; i++)
        g_string_append(cut, step->str);
    g_string_append(cut, end);
    g_string_free(step, TRUE);
    g_autofree char *whole_xml = g_build_filename(dir, "whole.xml", NULL);
    g_autofree char *cut_xml = g_build_filename(dir, "cut.xml", NULL);
    gl_test_write(whole_xml, whole->str, (gssize) whole->len);
    gl_test_write(cut_xml, cut->str, (gssize) cut->len);

    g_autofree char *baseline = g_build_filename(dir, "whole.json", NULL);
    RUN(written, "filter", "-O", "leaky", "--write-baseline", baseline, whole_xml);
    ck_assert_int_eq(written.status, 0);
    gl_test_run_clear(&written);
    RUN(known, "filter", "-O", "leaky", "--baseline", baseline, cut_xml);
    ck_assert_msg(known.status == 0, "%s%s", known.out, known.err);
    gl_assert_line(known.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 "
                              "findings, 3 known to the baseline \\(3 occurrences\\), ");
    gl_test_run_clear(&known);
    gl_remove_tree(dir);
}
END_TEST

/* Issue 37 (item 3): a CI job that reads a baseline works on the gem's
 * first run, before anyone wrote one: --write-baseline-if-missing writes
 * it, the run passes and says to commit it; the next run reads it. A
 * baseline that exists and cannot be read is still refused, never
 * overwritten. */
START_TEST(test_baseline_written_when_missing)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *uaf = gl_test_fixture("xml/use_after_free.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *baseline = g_build_filename(dir, "baseline.json", NULL);

    RUN(first, "filter", "-O", "leaky", "--baseline", baseline, "--write-baseline-if-missing",
        leak);
    ck_assert_msg(first.status == 0, "%s%s", first.out, first.err);
    ck_assert(g_file_test(baseline, G_FILE_TEST_IS_REGULAR));
    gl_assert_line(first.out, "^gemleak: pass: 3 findings written to the baseline .*/baseline\\.json ");
    gl_assert_line(first.err, "^gemleak: note: --baseline .*/baseline\\.json did not exist: this "
                              "run writes it with its 3 findings, and passes them "
                              "\\(--write-baseline-if-missing\\); commit it, and later runs fail "
                              "only on findings it does not know$");
    gl_test_run_clear(&first);

    RUN(again, "filter", "-O", "leaky", "--baseline", baseline, "--write-baseline-if-missing",
        leak);
    ck_assert_msg(again.status == 0, "%s%s", again.out, again.err);
    gl_assert_line(again.out, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 "
                              "findings, 3 known to the baseline \\(3 occurrences\\), ");
    gl_assert_no_line(again.err, "did not exist");
    gl_test_run_clear(&again);

    /* a new finding fails as with --baseline alone */
    RUN(fresh, "filter", "-O", "leaky", "--baseline", baseline, "--write-baseline-if-missing",
        uaf);
    ck_assert_int_eq(fresh.status, 1);
    gl_test_run_clear(&fresh);

    /* one that is there and is no baseline: refused, and left as it was */
    g_autofree char *odd = g_build_filename(dir, "odd.json", NULL);
    gl_test_write(odd, "not json\n", -1);
    RUN(refused, "filter", "-O", "leaky", "--baseline", odd, "--write-baseline-if-missing", leak);
    ck_assert_int_eq(refused.status, 2);
    gl_test_run_clear(&refused);
    g_autofree char *kept = gl_test_read(odd, NULL);
    ck_assert_str_eq(kept, "not json\n");

    RUN(alone, "filter", "-O", "leaky", "--write-baseline-if-missing", leak);
    ck_assert_int_eq(alone.status, 2);
    gl_assert_line(alone.err, "^gemleak: --write-baseline-if-missing: give the baseline with "
                              "--baseline FILE$");
    gl_test_run_clear(&alone);
    RUN(both, "filter", "-O", "leaky", "--baseline", baseline, "--write-baseline", odd,
        "--write-baseline-if-missing", leak);
    ck_assert_int_eq(both.status, 2);
    gl_test_run_clear(&both);
    gl_remove_tree(dir);
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
    gl_assert_no_raw_control(run.out);
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

Suite *gl_cli_pipeline_suite(void)
{
    Suite *suite = suite_create("cli-pipeline");
    TCase *tc = tcase_create("cli-pipeline");
    tcase_add_test(tc, test_report_that_cannot_be_written);
    tcase_add_test(tc, test_report_destinations_checked_before_the_run);
    tcase_add_test(tc, test_gate_options);
    tcase_add_test(tc, test_targets_from_the_runs_list);
    tcase_add_test(tc, test_no_target_known);
    tcase_add_test(tc, test_target_that_is_not_there);
    tcase_add_test(tc, test_text_report_escapes_control_characters);
    tcase_add_test(tc, test_baseline_adoption);
    tcase_add_test(tc, test_baseline_knows_a_moved_cycle);
    tcase_add_test(tc, test_baseline_holds_what_identifies_a_finding);
    tcase_add_test(tc, test_old_baselines_keep_reading);
    tcase_add_test(tc, test_baseline_fingerprint_matches_only_itself);
    tcase_add_test(tc, test_split_functions_fingerprint_as_the_function);
    tcase_add_test(tc, test_recursion_depth_is_no_part_of_the_fingerprint);
    tcase_add_test(tc, test_baseline_written_when_missing);
    tcase_add_test(tc, test_every_format_names_the_same_path);
    tcase_add_test(tc, test_suppressions_out_and_project_root);
    tcase_add_test(tc, test_reports_never_overwrite_inputs);
    tcase_add_test(tc, test_report_through_a_symlink_keeps_the_mode);
    tcase_add_test(tc, test_two_reports_one_destination);
    tcase_add_test(tc, test_json_report_reads_back_as_a_baseline);
    tcase_add_test(tc, test_github_format_escapes_control_characters);
    tcase_add_test(tc, test_verdict_said_once);
    suite_add_tcase(suite, tc);
    return suite;
}
