/* Integration tests: gemleak itself (Valgrind-clean, its data, its
 * signals, its options) and the manual. */
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "harness.h"
#include "gemleak/judge/analyze.h"

START_TEST(test_keep_xml_directory)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "with space", "xml", NULL);
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--keep-xml", keep), "require 'leaky'; Leaky.clean");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    ck_assert(gl_input_dir_has_inputs(keep));
    /* a path to paste into a shell is quoted */
    gl_assert_line(r.err, "kept in .*/with space/xml \\(.*; read it again with: gemleak filter "
                          "'.*/with space/xml'; yours to remove: gemleak clean leaves --keep-xml "
                          "directories alone\\)$");
    /* gemleak clean never removes it: the line does not send the user there */
    gl_assert_no_line(r.err, "remove old runs with: gemleak clean");
    result_clear(&r);

    Result again = { 0 };
    gemleak_run(&again, NULL, NULL, ARGS("--keep-xml", keep), "require 'leaky'");
    ck_assert_msg(again.status == 2, "status %d\n%s", again.status, again.err);
    gl_assert_line(again.err, "already holds the reports of another run");
    result_clear(&again);
    gl_remove_tree(base);
}
END_TEST

START_TEST(test_missing_or_old_valgrind)
{
    Result missing = { 0 };
    gemleak_run(&missing, NULL, NULL, ARGS("--valgrind", "/nonexistent/valgrind"), "1");
    ck_assert_int_eq(missing.status, 3);
    gl_assert_line(missing.err, "^gemleak: cannot run Valgrind \\(/nonexistent/valgrind\\)");
    result_clear(&missing);

    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *fake = g_build_filename(dir, "valgrind", NULL);
    gl_test_write(fake, "#!/bin/sh\necho valgrind-3.8.1\n", -1);
    g_chmod(fake, 0755);
    Result old = { 0 };
    gemleak_run(&old, NULL, NULL, ARGS("--valgrind", fake), "1");
    ck_assert_int_eq(old.status, 3);
    gl_assert_line(old.err, "^gemleak: Valgrind 3\\.8\\.1 is too old: gemleak needs 3\\.10 or newer$");
    result_clear(&old);
    gl_remove_tree(dir);
}
END_TEST

/* @binary run -O leaky -- ruby -e "require 'leaky'" in @cwd, with the
 * variables NAME=VALUE of @vars set. */
static void run_binary(Result *result, const char *cwd, const char *binary, const char *const *vars)
{
    g_autofree char *include = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *argv[] = { binary, "run", "-O", "leaky", "--", "ruby", "--disable-gems", include,
                           "-e", "require 'leaky'", NULL };
    g_auto(GStrv) env = g_get_environ();
    for (const char *const *var = vars; var != NULL && *var != NULL; var++) {
        g_auto(GStrv) pair = g_strsplit(*var, "=", 2);
        env = g_environ_setenv(env, pair[0], pair[1], TRUE);
    }
    run_command(result, cwd, env, argv);
}

/* Copies gemleak to @dir/@bin/gemleak, and its suppressions to @data
 * (nullable: none). Returns: (transfer full) the copy. */
static char *install_copy(const char *dir, const char *bin, const char *data)
{
    g_autofree char *source = gl_test_project_file("suppressions");
    char *binary = g_build_filename(dir, bin, "gemleak", NULL);
    g_autoptr(GString) script = g_string_new(NULL);
    g_string_printf(script, "mkdir -p '%s/%s' && cp '%s' '%s'", dir, bin, gemleak_binary, binary);
    if (data != NULL)
        g_string_append_printf(script, " && mkdir -p '%s/%s' && cp '%s'/*.supp '%s/%s/'", dir, data,
                               source, dir, data);
    const char *sh[] = { "sh", "-c", script->str, NULL };
    ck_assert_int_eq(gl_test_spawn(sh, NULL, NULL), 0);
    return binary;
}

/* gemleak finds its suppressions beside where it is, not where make
 * guessed it would be installed: PREFIX/bin/gemleak reads
 * PREFIX/share/gemleak, the gem's libexec/gemleak the gem's own. Found
 * nowhere, it says where it looked rather than run with none. */
START_TEST(test_data_found_where_the_binary_is)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *prefix = g_build_filename(dir, "prefix", NULL);
    g_autofree char *installed = install_copy(prefix, "bin", "share/gemleak/suppressions");
    Result r = { 0 };
    run_binary(&r, dir, installed, NULL);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "with [1-9]\\d* suppression files? \\(Ruby ");
    gl_assert_no_line(r.err, "warning");
    result_clear(&r);

    g_autofree char *gem = g_build_filename(dir, "gem", NULL);
    g_autofree char *in_gem = install_copy(gem, "libexec", "suppressions");
    Result g = { 0 };
    run_binary(&g, dir, in_gem, NULL);
    ck_assert_msg(g.status == 0, "status %d\n%s", g.status, g.err);
    gl_assert_line(g.err, "with [1-9]\\d* suppression files? \\(Ruby ");
    result_clear(&g);

    g_autofree char *bare = g_build_filename(dir, "bare", NULL);
    g_autofree char *lonely = install_copy(bare, "bin", NULL);
    Result none = { 0 };
    run_binary(&none, dir, lonely, ARGS("GEMLEAK_DATADIR=/nonexistent/gemleak"));
    ck_assert_msg(none.status == 0, "status %d\n%s", none.status, none.err);
    gl_assert_line(none.err, "^gemleak: warning: no /nonexistent/gemleak/suppressions/ruby\\.supp: "
                             "Ruby's own errors at exit are not suppressed");
    result_clear(&none);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_command_that_does_not_exist)
{
    g_autofree char *tmp = gl_test_tmpdir();
    const char *argv[] = { gemleak_binary, "run", "--", "/nonexistent/command", NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    Result r = { 0 };
    run_command(&r, NULL, env, argv);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: Valgrind wrote nothing");
    gl_assert_line(r.err, "kept in");
    result_clear(&r);
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_suppressions_out_silence_a_real_run)
{
    const char *code = "require 'leaky'; Leaky.leak; Leaky.leak_xmalloc; Leaky.use_after_free";
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *supp = g_build_filename(dir, "ruby.supp", NULL);
    Result first = { 0 };
    gemleak_run(&first, NULL, NULL, ARGS("--suppressions-out", supp), code);
    ck_assert_msg(first.status == 1, "status %d\n%s", first.status, first.err);
    gl_assert_line(first.err, "^gemleak: FAIL: 2 leaks losing 220 bytes, 1 memory error$");
    result_discard(&first);

    Result second = { 0 };
    gemleak_run(&second, NULL, NULL, ARGS("--suppressions-dir", dir), code);
    ck_assert_msg(second.status == 0, "status %d\n%s", second.status, second.err);
    gl_assert_line(second.err, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, ");
    result_clear(&second);
    gl_remove_tree(dir);
}
END_TEST

/* SIGTERM from CI: passed on to the command, then the report of what the
 * XML holds, and the XML kept. */
START_TEST(test_interrupted_run)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *argv[] = { gemleak_binary, "run", "--", "ruby", "--disable-gems", leaky, "-e",
                           "require 'leaky'; Leaky.leak; $stdout.puts 'ready'; $stdout.flush; sleep 60",
                           NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    g_autoptr(GSubprocessLauncher) launcher =
        g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE);
    g_subprocess_launcher_set_environ(launcher, env);
    g_autoptr(GError) error = NULL;
    g_autoptr(GSubprocess) process = g_subprocess_launcher_spawnv(launcher, argv, &error);
    ck_assert_ptr_nonnull(process);
    /* wait for Ruby to be in its sleep */
    g_autoptr(GDataInputStream) out = g_data_input_stream_new(g_subprocess_get_stdout_pipe(process));
    g_autofree char *line = g_data_input_stream_read_line(out, NULL, NULL, &error);
    ck_assert_str_eq(line, "ready");
    g_subprocess_send_signal(process, SIGTERM);
    g_autofree char *err_text = NULL;
    ck_assert(g_subprocess_communicate_utf8(process, NULL, NULL, NULL, &err_text, &error));
    int status = g_subprocess_get_if_exited(process) ? g_subprocess_get_exit_status(process) : -1;
    /* the leak fails the gate; the command, killed by the signal, failed */
    ck_assert_msg(status == 5, "status %d\n%s", status, err_text);
    gl_assert_line(err_text, "^gemleak: interrupted by Terminated: the report covers what Valgrind "
                             "finished writing$");
    gl_assert_line(err_text, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    g_autofree char *dir = kept_dir(err_text);
    ck_assert_ptr_nonnull(dir);
    ck_assert(gl_input_dir_has_inputs(dir));
    gl_remove_tree(tmp);
}
END_TEST

/* Issue 26, item 10: an interrupted run (CI cancelling the job) checked
 * only what ran before the signal: its report, its JSON report and what
 * gemleak filter makes of either are INCOMPLETE, never a pass. */
START_TEST(test_interrupted_run_never_passes)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(tmp, "shard.json", NULL);
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *argv[] = { gemleak_binary, "run", "--format", "json", "-o", json, "--format",
                           "text", "--", "ruby", "--disable-gems", leaky, "-e",
                           "require 'leaky'; Leaky.clean; $stdout.puts 'ready'; $stdout.flush; "
                           "sleep 60", NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    Result r = { 0 };
    run_interrupted(&r, argv, env);
    assert_interrupted_is_incomplete(&r, json);
    result_clear(&r);
    gl_remove_tree(tmp);
}
END_TEST

/* A leak checker that leaks is a joke: gemleak under Valgrind, reading
 * every fixture on several threads, must report nothing of its own. */
START_TEST(test_gemleak_is_valgrind_clean)
{
    g_autofree char *xml = gl_test_fixture("xml");
    g_autofree char *fork = gl_test_fixture("xml/fork");
    g_autofree char *edge = gl_test_fixture("edge");
    Result result = { 0 };
    run_argv(&result, "valgrind", "-q", "--leak-check=full",
             "--show-leak-kinds=definite,indirect,possible",
             "--errors-for-leak-kinds=definite,indirect,possible", "--error-exitcode=99", gemleak_binary, "filter", "-O", "leaky", "-j", "3",
             "--format", "json", xml, fork, edge, NULL);
    /* 1: findings (the broken edge fixtures say so on stderr); 99 would be Valgrind's */
    ck_assert_msg(result.status == 1, "status %d; stderr:\n%s", result.status, result.err);
    ck_assert(strstr(result.err, "helgrind.xml: Valgrind helgrind output") != NULL);
    ck_assert_msg(strstr(result.err, " lost in loss record") == NULL, "%s", result.err);
    ck_assert_msg(strstr(result.err, "Invalid") == NULL, "%s", result.err);
    ck_assert(strstr(result.out, "\"findings\"") != NULL);
    result_clear(&result);
}
END_TEST

/* The binary's own streams, however spelled: "-" and /dev/stdout are one,
 * run's report stream and /dev/stderr are one. */
START_TEST(test_two_reports_on_one_stream_refused)
{
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    Result dash = { 0 };
    run_argv(&dash, gemleak_binary, "filter", "-O", "leaky", "--format", "json:-", "--format",
             "sarif:/dev/stdout", leak, NULL);
    ck_assert_msg(dash.status == 2, "status %d\n%s", dash.status, dash.err);
    gl_assert_line(dash.err, "^gemleak: 2 reports would share one stream");
    ck_assert_str_eq(dash.out, "");
    result_clear(&dash);

    Result filter = { 0 };
    run_argv(&filter, gemleak_binary, "filter", "-O", "leaky", "--format", "text", "--format",
             "json:/proc/self/fd/1", leak, NULL);
    ck_assert_msg(filter.status == 2, "status %d\n%s", filter.status, filter.err);
    result_clear(&filter);

    Result run = { 0 };
    run_argv(&run, gemleak_binary, "run", "--format", "text", "--format", "json:/dev/stderr", "--",
             "/bin/true", NULL);
    ck_assert_msg(run.status == 2, "status %d\n%s", run.status, run.err);
    gl_assert_line(run.err, "^gemleak: 2 reports would share one stream");
    gl_assert_no_line(run.err, "Valgrind");
    result_clear(&run);
}
END_TEST

/* The README's quick start: `make demo` runs fixtures/sample-gem/demo.sh,
 * which must find the example gem's one leak and end as it says. */
START_TEST(test_demo_finds_the_example_leak)
{
    g_autofree char *script = gl_test_project_file("fixtures/sample-gem/demo.sh");
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *work = g_build_filename(tmp, "demo", NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "DEMO_DIR", work, TRUE);
    env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    const char *argv[] = { "sh", script, gemleak_binary, NULL };
    Result r = { 0 };
    run_command(&r, NULL, env, argv);
    ck_assert_msg(r.status == 0, "status %d\n%s\n%s", r.status, r.out, r.err);
    gl_assert_line(r.out, "^   The leak: 17 bytes in 1 block is definitely lost$");
    /* the source as every report names it: relative to the project root */
    gl_assert_line(r.out, "^   in copy_text \\(ext/tally/tally\\.c:13\\)$");
    gl_assert_line(r.out, "^   \\d+ never entered tally\\.so \\(Ruby at exit\\)$");
    gl_assert_line(r.out, "^== As expected: exit status 1, one genuine leak\\.");
    gl_assert_line(r.err, "^ \\*copy_text \\(ext/tally/tally\\.c:13\\)$");
    result_discard(&r);
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_man_page_renders_without_warnings)
{
    g_autofree char *page = g_build_filename(project_root, "man", "gemleak.1", NULL);
    Result result = { 0 };
    run_argv(&result, "groff", "-man", "-ww", "-z", page, NULL);
    ck_assert_int_eq(result.status, 0);
    ck_assert_msg(result.err[0] == '\0', "groff warns:\n%s", result.err);
    result_clear(&result);
}
END_TEST

/* Every long option --help shows is in the man page. */
static void check_documented(const char *command)
{
    g_autofree char *page_path = g_build_filename(project_root, "man", "gemleak.1", NULL);
    g_autofree char *page = gl_test_read(page_path, NULL);
    Result help = { 0 };
    run_argv(&help, gemleak_binary, command, "--help", NULL);
    ck_assert_int_eq(help.status, 0);
    g_autoptr(GRegex) option = g_regex_new("--([a-z][a-z-]+)", 0, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    guint seen = 0;
    g_regex_match(option, help.out, 0, &match);
    while (g_match_info_matches(match)) {
        g_autofree char *name = g_match_info_fetch(match, 1);
        /* in man source every dash of an option is written \- */
        g_autoptr(GString) escaped = g_string_new("\\-\\-");
        for (const char *c = name; *c != '\0'; c++)
            g_string_append(escaped, *c == '-' ? "\\-" : (char[]) { *c, '\0' });
        ck_assert_msg(strstr(page, escaped->str) != NULL,
                      "gemleak %s --%s is not in man/gemleak.1 (as %s)", command, name,
                      escaped->str);
        seen++;
        g_match_info_next(match, NULL);
    }
    ck_assert_uint_gt(seen, 10);
    result_clear(&help);
}

START_TEST(test_every_option_is_documented)
{
    check_documented("filter");
    check_documented("run");
}
END_TEST

void integration_self(TCase *tcase)
{
    tcase_add_test(tcase, test_gemleak_is_valgrind_clean);
    tcase_add_test(tcase, test_man_page_renders_without_warnings);
    tcase_add_test(tcase, test_demo_finds_the_example_leak);
    tcase_add_test(tcase, test_every_option_is_documented);
    tcase_add_test(tcase, test_missing_or_old_valgrind);
    tcase_add_test(tcase, test_data_found_where_the_binary_is);
    tcase_add_test(tcase, test_command_that_does_not_exist);
    tcase_add_test(tcase, test_interrupted_run);
    tcase_add_test(tcase, test_interrupted_run_never_passes);
    tcase_add_test(tcase, test_keep_xml_directory);
    tcase_add_test(tcase, test_suppressions_out_silence_a_real_run);
    tcase_add_test(tcase, test_two_reports_on_one_stream_refused);
}
