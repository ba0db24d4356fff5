/* src/cli/options.c: the options filter and run share: --format and -o,
 * values and the files options name checked before anything is read or
 * run, --jobs and the threads it asks for. */
#include "testutil.h"
#include "gemleak/base/errors.h"

#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

/* A file named by an option (--baseline, --skip-functions-file) that cannot
 * be used. */
#define OPTION_FILE_STATUS GL_EXIT_USAGE

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

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

/* Issue 39: --growth[=K] takes K from 2 to 20 (bare: 3), and anything
 * else is a usage error that names the range, before anything runs. A
 * good value is told by the run going on to the next option's mistake. */
START_TEST(test_growth_repetitions)
{
    const char *const bad[] = { "1", "0", "21", "100", "abc", "", "3x", "+3", "-3", " 3",
                                "03" };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *option = g_strconcat("--growth=", bad[i], NULL);
        RUN(run, "run", option, "--", "/nonexistent/command");
        ck_assert_msg(run.status == GL_EXIT_USAGE, "%s: status %d\n%s", option, run.status,
                      run.err);
        g_autofree char *escaped = g_regex_escape_string(bad[i], -1);
        g_autofree char *pattern = g_strdup_printf(
            "^gemleak: --growth=%s: give how many times each test runs again, from 2 to 20 "
            "\\(--growth alone: 3\\)$", escaped);
        gl_assert_line(run.err, pattern);
        gl_assert_no_line(run.err, "Valgrind");
        gl_test_run_clear(&run);
    }
    const char *const good[] = { "--growth", "--growth=2", "--growth=20" };
    for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
        RUN(run, "run", good[i], "--color", "junk", "--", "/nonexistent/command");
        ck_assert_msg(run.status == GL_EXIT_USAGE, "%s: status %d", good[i], run.status);
        gl_assert_line(run.err, "^gemleak: --color junk: give auto, always or never$");
        gl_assert_no_line(run.err, "--growth");
        gl_test_run_clear(&run);
    }
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

Suite *gl_cli_options_suite(void)
{
    Suite *suite = suite_create("cli-options");
    TCase *tc = tcase_create("cli-options");
    tcase_add_test(tc, test_several_formats_at_once);
    tcase_add_test(tc, test_jobs_do_not_change_the_report);
    tcase_add_test(tc, test_option_files_are_bounded);
    tcase_add_test(tc, test_jobs_bounds);
    tcase_add_test(tc, test_option_values_checked_first);
    tcase_add_test(tc, test_growth_repetitions);
    tcase_add_test(tc, test_non_ascii_option_values);
    tcase_add_test(tc, test_inputs_after_double_dash);
    tcase_add_test(tc, test_fewer_threads_when_none_can_start);
    tcase_add_test(tc, test_fewer_threads_under_an_address_space_limit);
    suite_add_tcase(suite, tc);
    return suite;
}
