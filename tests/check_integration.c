/* Integration tests: the gemleak binary as a user runs it, on real Valgrind
 * and real Ruby.
 *
 *   check_integration FIXTURES-DIR GEMLEAK-BINARY
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>

#include "testutil.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/classify.h"
#include "gemleak/run/runner.h"

static const char *gemleak_binary;

/* gemleak run's status when the command itself was killed by SIGKILL and
 * nothing failed the gate. */
#define KILLED_COMMAND_STATUS 4
static char *project_root;

/* What a command printed and how it ended. */
typedef struct {
    int status;   /* the exit status, or 128 + signal */
    char *out;
    char *err;
} Result;

static void result_clear(Result *result)
{
    g_clear_pointer(&result->out, g_free);
    g_clear_pointer(&result->err, g_free);
}

/* Runs @argv (NULL-terminated) in @cwd (nullable) with @env (nullable:
 * inherited) and waits for it. */
static void run_command(Result *result, const char *cwd, char **env, const char *const *argv)
{
    result->status = gl_test_spawn_in(cwd, env, argv, &result->out, &result->err);
}

static void run_argv(Result *result, const char *first, ...) G_GNUC_NULL_TERMINATED;

static void run_argv(Result *result, const char *first, ...)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    va_list ap;
    va_start(ap, first);
    for (const char *arg = first; arg != NULL; arg = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer) arg);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    run_command(result, NULL, NULL, (const char *const *) argv->pdata);
}

/* The fixture extensions, built once for the whole suite. */
static char *ext_dir;

/* Runs the shell @script while the suite is set up, before any test (so
 * with a GError rather than a failed check); @what names it in the error. */
static gboolean run_setup_script(const char *what, const char *script, GError **error)
{
    const char *argv[] = { "sh", "-c", script, NULL };
    int wait_status = 0;
    g_autofree char *err = NULL;
    if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, &err,
                      &wait_status, error))
        return FALSE;
    if (!g_spawn_check_wait_status(wait_status, error)) {
        g_prefix_error(error, "%s: %s", what, err);
        return FALSE;
    }
    return TRUE;
}

static gboolean build_extension(const char *name, GError **error)
{
    g_autofree char *source = gl_test_fixture("ext");
    g_autofree char *from = g_build_filename(source, name, NULL);
    g_autofree char *to = g_build_filename(ext_dir, name, NULL);
    g_autofree char *script = g_strdup_printf(
        "cp -r '%s' '%s' && cd '%s' && ruby extconf.rb >/dev/null && make >/dev/null", from,
        ext_dir, to);
    g_autofree char *what = g_strdup_printf("building %s", name);
    return run_setup_script(what, script, error);
}

/* gemleak run [ARGS...] -- ruby --disable-gems -I<leaky> -I<other> -e CODE,
 * in @cwd (nullable), with TMPDIR at @tmp (nullable) and the variables
 * NAME=VALUE of @vars (nullable) set. */
static void gemleak_run_env(Result *result, const char *cwd, const char *tmp,
                            const char *const *vars, const char *const *args, const char *code)
{
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    g_autofree char *other = g_strdup_printf("-I%s/other", ext_dir);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    g_ptr_array_add(argv, (gpointer) "run");
    for (const char *const *arg = args; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *tail[] = { "--", "ruby", "--disable-gems", leaky, other, "-e", code, NULL };
    for (const char *const *arg = tail; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_get_environ();
    if (tmp != NULL)
        env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    for (const char *const *var = vars; var != NULL && *var != NULL; var++) {
        g_auto(GStrv) pair = g_strsplit(*var, "=", 2);
        env = g_environ_setenv(env, pair[0], pair[1] != NULL ? pair[1] : "", TRUE);
    }
    run_command(result, cwd, env, (const char *const *) argv->pdata);
}

static void gemleak_run(Result *result, const char *cwd, const char *tmp,
                        const char *const *args, const char *code)
{
    gemleak_run_env(result, cwd, tmp, NULL, args, code);
}

#define ARGS(...) ((const char *const[]) { __VA_ARGS__, NULL })
#define NO_ARGS NULL

/* The directory "gemleak: Valgrind's XML is kept in DIR" names, or NULL. */
static char *kept_dir(const char *err)
{
    g_autoptr(GRegex) regex = g_regex_new("^gemleak: Valgrind's XML is kept in (\\S+) ",
                                          G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    if (!g_regex_match(regex, err, 0, &match))
        return NULL;
    return g_match_info_fetch(match, 1);
}

/* Removes the XML directory the run kept, if it kept one, and clears
 * @result: the end of a test that has checked what it wanted. */
static void result_discard(Result *result)
{
    g_autofree char *kept = result->err != NULL ? kept_dir(result->err) : NULL;
    gl_remove_tree(kept);
    result_clear(result);
}

/* How many dirs under @dir: run directories left behind. */
static guint entries_in(const char *dir)
{
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    guint n = 0;
    while (handle != NULL && g_dir_read_name(handle) != NULL)
        n++;
    return n;
}


/* A stand-in for Valgrind in @dir: says it is 3.19.0, and writes a
 * complete, clean XML document where --xml-file says (%p its pid), then
 * runs the shell code @then (nullable) with the command after the options
 * as "$@". For tests of gemleak's own process handling, quickly.
 * Returns: (transfer full): its path. */
static char *fake_valgrind(const char *dir, const char *then)
{
    char *path = g_build_filename(dir, "fake-valgrind", NULL);
    g_autofree char *script = g_strdup_printf(
        "#!/bin/sh\n"
        "[ \"$1\" = --version ] && { echo valgrind-3.19.0; exit 0; }\n"
        "while [ $# -gt 0 ]; do case \"$1\" in\n"
        "  --xml-file=*) xml=\"${1#--xml-file=}\"; shift;;\n"
        "  --*) shift;;\n"
        "  *) break;;\n"
        "esac; done\n"
        "xml=$(printf '%%s' \"$xml\" | sed -e \"s/%%p/$$/\" -e 's/%%%%/%%/g')\n"
        "printf '<?xml version=\"1.0\"?>\\n<valgrindoutput>\\n<protocolversion>4</protocolversion>\\n"
        "<protocoltool>memcheck</protocoltool>\\n<pid>%%s</pid>\\n<status><state>RUNNING</state></status>\\n"
        "<status><state>FINISHED</state></status>\\n</valgrindoutput>\\n' $$ > \"$xml\"\n"
        "%s\n",
        then != NULL ? then : "");
    gl_test_write(path, script, -1);
    g_chmod(path, 0755);
    return path;
}

/* What gemleak's helper writes for a Ruby that loaded leaky.so, for a fake
 * Valgrind's process: a run in which nothing loaded a target would check
 * nothing, and never pass. */
#define FAKE_LOADED "printf '/fake/leaky.so\\n' > \"${xml%/*}/loaded-$$.txt\"\n"

/* ---- gemleak run: the scenarios of a gem's test suite ----------------------- */

START_TEST(test_clean_method_reports_nothing)
{
    g_autofree char *tmp = gl_test_tmpdir();
    Result r = { 0 };
    gemleak_run(&r, NULL, tmp, NO_ARGS, "require 'leaky'; Leaky.clean");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: ran under Valgrind \\d+\\.\\d+\\.\\d+ with \\d+ suppression files "
                          "\\(Ruby \\d+\\.\\d+\\.\\d+\\)$");
    gl_assert_line(r.err, "^gemleak: 1 file, \\d+ errors read: 0 findings, ");
    /* the leak in Init_leaky is there, and skipped */
    gl_assert_line(r.err, "\\d+ in Init code\\)$");
    gl_assert_line(r.err, "^gemleak: target: .*/leaky/leaky\\.so$");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    gl_assert_no_line(r.err, "kept in");
    ck_assert_uint_eq(entries_in(tmp), 0);  /* the private directory is gone */
    result_clear(&r);
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_malloc_leak_reported_and_xml_kept)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^100 bytes in 1 block is definitely lost$");
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^ \\*leaky_alloc \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^  malloc \\(at .*vgpreload_memcheck.*\\)$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    ck_assert(gl_list_xml_files_any(dir));
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

START_TEST(test_use_after_free_shows_three_stacks)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.use_after_free");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^Invalid write of size 1$");
    gl_assert_line(r.err, "^Address 0x[0-9a-f]+ is 0 bytes inside a block of size 100 free'd$");
    gl_assert_line(r.err, "^Block was alloc'd at$");
    ck_assert_uint_eq(gl_test_count(r.err, strlen(r.err), " *leaky_use_after_free (leaky.c:"), 3);
    gl_assert_line(r.err, "^gemleak: FAIL: 1 memory error$");
    result_discard(&r);
}
END_TEST

START_TEST(test_uninitialised_read_not_reported)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.uninitialized");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_no_line(r.err, "Conditional jump");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    result_clear(&r);
}
END_TEST

START_TEST(test_callback_into_ruby_skipped_unless_defaults_dropped)
{
    const char *code = "require 'leaky'; Leaky.callback_intern; Leaky.callback_funcall";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "[1-9]\\d* Ruby's own memory");
    result_clear(&r);

    Result all = { 0 };
    gemleak_run(&all, NULL, NULL, ARGS("--no-default-skips"), code);
    ck_assert_msg(all.status == 1, "status %d\n%s", all.status, all.err);
    gl_assert_line(all.err, "^ \\*leaky_callback_(intern|funcall) \\(leaky\\.c:\\d+\\)$");
    result_discard(&all);
}
END_TEST

START_TEST(test_leak_in_init_not_reported)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "[1-9]\\d* in Init code\\)$");
    gl_assert_no_line(r.err, "Init_leaky \\(leaky");
    result_clear(&r);
}
END_TEST

START_TEST(test_leak_in_forked_child_reported_once)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS,
                "require 'leaky'; pid = fork { Leaky.leak }; Process.wait(pid)");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: 2 files, \\d+ errors read: 1 finding \\(\\d+ occurrences?\\), ");
    ck_assert_uint_eq(gl_test_count(r.err, strlen(r.err), " bytes in 1 block is definitely lost"), 1);
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    result_discard(&r);
}
END_TEST

START_TEST(test_two_extensions_and_object_choice)
{
    const char *code = "require 'leaky'; require 'other'; Leaky.leak; Other.leak";
    Result both = { 0 };
    gemleak_run(&both, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(both.status == 1, "status %d\n%s", both.status, both.err);
    gl_assert_line(both.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(both.err, "^ \\*other_leak \\(other\\.c:\\d+\\)$");
    gl_assert_line(both.err, "^gemleak: targets: .*/leaky\\.so, .*/other\\.so$");
    result_discard(&both);

    Result one = { 0 };
    gemleak_run(&one, NULL, NULL, ARGS("--object", "other"), code);
    ck_assert_msg(one.status == 1, "status %d\n%s", one.status, one.err);
    gl_assert_line(one.err, "^ \\*other_leak \\(other\\.c:\\d+\\)$");
    gl_assert_no_line(one.err, "leaky_leak");
    result_discard(&one);
}
END_TEST

START_TEST(test_object_never_loaded_is_an_error)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--object", "redcarpet"), "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 2, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: --object redcarpet matches no extension the run loaded "
                          "\\(it loaded: .*/leaky/leaky\\.so\\)$");
    /* the run is not lost: its XML can be filtered again with the right name */
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

START_TEST(test_suppressions_dir_silences_a_leak)
{
    g_autofree char *project = gl_test_tmpdir();
    g_autofree char *supp_dir = g_build_filename(project, "suppressions", NULL);
    g_mkdir_with_parents(supp_dir, 0700);
    g_autofree char *supp = g_build_filename(supp_dir, "ruby.supp", NULL);
    gl_test_write(supp, "{\n   leaky's known leak\n   Memcheck:Leak\n   ...\n   fun:leaky_leak\n}\n", -1);
    /* ./suppressions is the default */
    Result r = { 0 };
    gemleak_run(&r, project, NULL, NO_ARGS, "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "with [2-9] suppression files");
    result_clear(&r);
    /* and --suppressions-dir DIR from anywhere */
    Result named = { 0 };
    gemleak_run(&named, NULL, NULL, ARGS("--suppressions-dir", supp_dir), "require 'leaky'; Leaky.leak");
    ck_assert_msg(named.status == 0, "status %d\n%s", named.status, named.err);
    result_clear(&named);
    gl_remove_tree(project);
}
END_TEST

/* The suppression blocks in @text, from "{" to "}", as a user would copy
 * them from the terminal. Returns: (transfer full). */
static char *copy_suppressions(const char *text)
{
    g_autoptr(GRegex) block = g_regex_new("^[ \t]*\\{[ \t]*\n.*?^[ \t]*\\}[ \t]*$",
                                          G_REGEX_MULTILINE | G_REGEX_DOTALL, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    GString *pasted = g_string_new(NULL);
    g_regex_match(block, text, 0, &match);
    while (g_match_info_matches(match)) {
        g_autofree char *one = g_match_info_fetch(match, 0);
        g_string_append_printf(pasted, "%s\n", one);
        g_match_info_next(match, NULL);
    }
    return g_string_free(pasted, FALSE);
}

/* Leaky.leak reached from several places in Ruby: Valgrind's own block for
 * one occurrence names Ruby's frames of that one call site. The block
 * gemleak prints stops after the target's frames, so pasted into a
 * suppressions file it silences every occurrence, and it is the block
 * --format supp writes. */
START_TEST(test_gen_suppressions_block_silences_every_call_site)
{
    const char *code = "require 'leaky'\n"
                       "def via_method = Leaky.leak\n"
                       "Leaky.leak; via_method; [1, 2].each { Leaky.leak }\n"
                       "Leaky.send(:leak); 2.times { via_method }; Leaky.leak_xmalloc\n";
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *written = g_build_filename(dir, "written.supp", NULL);
    Result first = { 0 };
    gemleak_run(&first, NULL, NULL, ARGS("--gen-suppressions", "--suppressions-out", written), code);
    ck_assert_msg(first.status == 1, "status %d\n%s", first.status, first.err);
    gl_assert_line(first.err, "definitely lost .*\\([4-9] occurrences in 1 process");
    gl_assert_line(first.err, "^   gemleak [0-9a-f]+: definite leak in leaky_alloc \\(leaky\\.c:\\d+\\) via "
                              "leaky_leak \\(leaky\\.c:\\d+\\)$");
    g_autofree char *pasted = copy_suppressions(first.err);
    ck_assert_uint_eq(gl_test_count(pasted, strlen(pasted), "Memcheck:Leak"), 2);
    /* the very blocks of --format supp */
    g_autofree char *supp = gl_test_read(written, NULL);
    g_auto(GStrv) blocks = g_strsplit(pasted, "}\n", -1);
    for (char **b = blocks; *b != NULL && **b != '\0'; b++)
        ck_assert_msg(strstr(supp, *b) != NULL, "printed:\n%s\nnot in --format supp:\n%s", *b, supp);
    result_discard(&first);

    g_autofree char *ruby_supp = g_build_filename(dir, "ruby.supp", NULL);
    gl_test_write(ruby_supp, pasted, -1);
    Result second = { 0 };
    gemleak_run(&second, NULL, NULL, ARGS("--suppressions-dir", dir), code);
    ck_assert_msg(second.status == 0, "status %d\npasted:\n%s\n%s", second.status, pasted, second.err);
    gl_assert_line(second.err, "^gemleak: 1 file, \\d+ errors read: 0 findings, ");
    result_clear(&second);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_failing_ruby_keeps_its_status)
{
    Result raised = { 0 };
    gemleak_run(&raised, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.clean; raise 'boom'");
    ck_assert_msg(raised.status == 4, "status %d\n%s", raised.status, raised.err);
    gl_assert_line(raised.err, "boom \\(RuntimeError\\)");
    gl_assert_line(raised.err, "^gemleak: pass: no findings$");
    gl_assert_no_line(raised.err, "definitely lost");
    g_autofree char *dir = kept_dir(raised.err);  /* a failed run keeps its XML */
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&raised);

    Result exited = { 0 };
    gemleak_run(&exited, NULL, NULL, NO_ARGS, "require 'leaky'; exit 7");
    ck_assert_msg(exited.status == 4, "status %d\n%s", exited.status, exited.err);
    gl_assert_line(exited.err, "^gemleak: exit status 4: the command failed \\(exit status 7\\); "
                               "nothing fails the gate$");
    result_discard(&exited);
}
END_TEST

/* The "command" member of the JSON report at @path: how the command
 * ended, which the exit status alone cannot say. */
static gint64 command_status_in(const char *path)
{
    g_autofree char *json = gl_test_read(path, NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert_msg(json_parser_load_from_data(parser, json, -1, NULL), "not JSON: %s", json);
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    ck_assert_msg(json_object_has_member(root, "command"), "no \"command\" in %s", json);
    return json_object_get_int_member(json_object_get_object_member(root, "command"), "status");
}

START_TEST(test_leak_then_raise_exits_5_with_the_finding)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "report.json", NULL);
    g_autofree char *format = g_strconcat("json:", json, NULL);
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--format", "text", "--format", format),
                "require 'leaky'; Leaky.leak_and_raise");
    ck_assert_msg(r.status == 5, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: exit status 5: findings fail the gate, and the command failed "
                          "\\(exit status 1\\)$");
    gl_assert_line(r.err, "leaked, then raised \\(RuntimeError\\)");
    gl_assert_line(r.err, "^ \\*leaky_leak_and_raise \\(leaky\\.c:\\d+\\)$");
    /* the report says the command failed too */
    ck_assert_int_eq(command_status_in(json), 1);
    result_discard(&r);

    Result exited = { 0 };
    gemleak_run(&exited, NULL, NULL, ARGS("--format", "text", "--format", format),
                "require 'leaky'; exit 7");
    ck_assert_msg(exited.status == 4, "status %d\n%s", exited.status, exited.err);
    gl_assert_line(exited.err, "^gemleak: exit status 4: the command failed \\(exit status 7\\); "
                               "nothing fails the gate$");
    ck_assert_int_eq(command_status_in(json), 7);
    result_discard(&exited);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_helper_and_environment_in_every_ruby)
{
    const char *code =
        "require 'leaky'; "
        "print ENV['GEMLEAK_RUNNING'], ENV['RUBY_FREE_AT_EXIT'], defined?(GemLeakHelper) ? 1 : 0; "
        "print `ruby --disable-gems -e 'print defined?(GemLeakHelper) ? 1 : 0'`; "
        "print ' ', Process.getrlimit(:NOFILE).join(','), ' ', Process.getrlimit(:STACK)[0]";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    /* GEMLEAK_RUNNING, RUBY_FREE_AT_EXIT, the helper here and in a spawned Ruby */
    ck_assert_msg(g_str_has_prefix(r.out, "1111 "), "stdout: %s", r.out);
    g_auto(GStrv) fields = g_strsplit(r.out, " ", -1);
    g_auto(GStrv) files = g_strsplit(fields[1], ",", 2);
    ck_assert_int_le(g_ascii_strtoll(files[0], NULL, 10), 8192);
    ck_assert_int_le(g_ascii_strtoll(files[1], NULL, 10), 8192);
    ck_assert_msg(g_ascii_strtoull(fields[2], NULL, 10) == (guint64) RLIM_INFINITY,
                  "stack limit %s", fields[2]);
    result_clear(&r);

    /* RUBY_FREE_AT_EXIT=0 turns it off: Ruby 3.4 turns it on when the
     * variable is set at all, so it is removed; another value is kept. */
    gemleak_run_env(&r, NULL, NULL, ARGS("RUBY_FREE_AT_EXIT=0"), NO_ARGS,
                    "require 'leaky'; print ENV.fetch('RUBY_FREE_AT_EXIT', 'unset')");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    ck_assert_str_eq(r.out, "unset");
    result_clear(&r);
    gemleak_run_env(&r, NULL, NULL, ARGS("RUBY_FREE_AT_EXIT=yes"), NO_ARGS,
                    "require 'leaky'; print ENV.fetch('RUBY_FREE_AT_EXIT', 'unset')");
    ck_assert_str_eq(r.out, "yes");
    result_clear(&r);
}
END_TEST

START_TEST(test_annotations_to_stdout_text_to_stderr)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--format", "text", "--format", "github:-"),
                "require 'leaky'; Leaky.leak; $stdout.puts 'suite output'");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^suite output$");
    gl_assert_line(r.out, "^::error title=gemleak%3A definite leak in leaky_alloc ");
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_no_line(r.err, "^::error");
    result_discard(&r);
}
END_TEST

/* Files after ::: shared among --jobs processes, --shard taking a slice:
 * one report over them all. */
START_TEST(test_jobs_and_shards)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *names[] = { "a", "b", "c", "d" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *file = g_strdup_printf("%s/%s.rb", dir, names[i]);
        /* a and b leak; every file says which process ran it */
        g_autofree char *code = g_strdup_printf(
            "require 'leaky'; %s$stdout.puts \"%s in #{Process.pid}\"\n",
            i < 2 ? "Leaky.leak; " : "", names[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *loader = "ARGV.each { |f| require f }";
    g_autofree char *a = g_build_filename(dir, "a.rb", NULL);
    g_autofree char *b = g_build_filename(dir, "b.rb", NULL);
    g_autofree char *c = g_build_filename(dir, "c.rb", NULL);
    g_autofree char *d = g_build_filename(dir, "d.rb", NULL);

    const char *all[] = { gemleak_binary, "run", "--jobs", "2", "--", "ruby", "--disable-gems",
                          leaky, "-e", loader, ":::", a, b, c, d, NULL };
    /* in @dir, where the run keeps its durations file */
    Result r = { 0 };
    run_command(&r, dir, NULL, all);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: 2 commands at once under Valgrind$");
    /* two processes (a and c, b and d), one merged finding */
    gl_assert_line(r.err, "^gemleak: 2 files, \\d+ errors read: 1 finding \\(\\d+ occurrences?\\), ");
    gl_assert_line(r.err, "^200 bytes in 2 blocks are definitely lost \\(2 occurrences in 2 processes\\)$");
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    ck_assert_uint_eq(g_strv_length(lines), 5);
    result_discard(&r);

    /* shard 1 of 2: a and c only */
    const char *shard[] = { gemleak_binary, "run", "--shard", "1/2", "--", "ruby", "--disable-gems",
                            leaky, "-e", loader, ":::", a, b, c, d, NULL };
    Result s1 = { 0 };
    run_command(&s1, dir, NULL, shard);
    ck_assert_msg(s1.status == 1, "status %d\n%s", s1.status, s1.err);
    gl_assert_line(s1.out, "^a in \\d+$");
    gl_assert_line(s1.out, "^c in \\d+$");
    gl_assert_no_line(s1.out, "^b in");
    gl_assert_no_line(s1.out, "^d in");
    result_discard(&s1);

    const char *bad[] = { gemleak_binary, "run", "--shard", "3/2", "--", "ruby", ":::", a, NULL };
    Result s3 = { 0 };
    run_command(&s3, NULL, NULL, bad);
    ck_assert_int_eq(s3.status, 2);
    gl_assert_line(s3.err, "--shard 3/2: give I/N with 1 <= I <= N");
    result_clear(&s3);
    gl_remove_tree(dir);
}
END_TEST

/* The helper lets go of minitest's memoized let values at exit. */
START_TEST(test_helper_forgets_minitest_lets)
{
    const char *code =
        "module Minitest; class Runnable; end; end; "
        "test = Minitest::Runnable.new; test.instance_variable_set(:@_memoized, { big: 'x' * 100 }); "
        "GemLeakHelper.forget_minitest_lets; p test.instance_variable_get(:@_memoized)";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--object", "leaky"), code);
    ck_assert_str_eq(r.out, "nil\n");
    result_clear(&r);
}
END_TEST

/* ruby-MAJOR.MINOR.supp applies to this Ruby; ruby-2.supp does not. */
START_TEST(test_suppressions_by_ruby_version)
{
    g_autofree char *version = gl_ruby_version("ruby");
    ck_assert_ptr_nonnull(version);
    g_auto(GStrv) parts = g_strsplit(version, ".", 3);
    const char *leak_supp = "{\n   known\n   Memcheck:Leak\n   ...\n   fun:leaky_leak\n}\n";
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *minor = g_strdup_printf("%s/ruby-%s.%s.supp", dir, parts[0], parts[1]);
    g_autofree char *other = g_build_filename(dir, "ruby-2.supp", NULL);

    gl_test_write(other, leak_supp, -1);
    Result older = { 0 };
    gemleak_run(&older, NULL, NULL, ARGS("--suppressions-dir", dir), "require 'leaky'; Leaky.leak");
    ck_assert_msg(older.status == 1, "ruby-2.supp was used for Ruby %s:\n%s", version, older.err);
    result_discard(&older);

    gl_test_write(minor, leak_supp, -1);
    Result matching = { 0 };
    gemleak_run(&matching, NULL, NULL, ARGS("--suppressions-dir", dir), "require 'leaky'; Leaky.leak");
    ck_assert_msg(matching.status == 0, "status %d\n%s", matching.status, matching.err);
    result_clear(&matching);
    gl_remove_tree(dir);

    /* the choice itself, file by file */
    g_autofree char *root = gl_test_project_file("suppressions");
    const char *dirs[] = { root, NULL };
    g_autoptr(GPtrArray) files = gl_suppression_files(dirs, "3.1.2");
    ck_assert_uint_eq(files->len, 2);
    ck_assert(g_str_has_suffix(g_ptr_array_index(files, 0), "/ruby.supp"));
    ck_assert(g_str_has_suffix(g_ptr_array_index(files, 1), "/ruby-3.1.supp"));
    g_autoptr(GPtrArray) none = gl_suppression_files(dirs, "2.7.8");
    ck_assert_uint_eq(none->len, 1);
}
END_TEST

START_TEST(test_twice_in_a_row)
{
    for (int i = 0; i < 2; i++) {
        Result r = { 0 };
        gemleak_run(&r, NULL, NULL, ARGS("--format", "json"), "require 'leaky'; Leaky.leak");
        ck_assert_msg(r.status == 1, "run %d: status %d\n%s", i, r.status, r.err);
        ck_assert(strstr(r.err, "\"fn\" : \"leaky_leak\"") != NULL);
        g_autofree char *dir = kept_dir(r.err);
        gl_remove_tree(dir);
        result_clear(&r);
    }
}
END_TEST

START_TEST(test_keep_xml_directory)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "with space", "xml", NULL);
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--keep-xml", keep), "require 'leaky'; Leaky.clean");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    ck_assert(gl_list_xml_files_any(keep));
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
    gl_assert_line(again.err, "already holds Valgrind XML from another run");
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

/* Runs that go wrong: each said for what it is, the XML kept. */
/* SIGKILL from outside (Valgrind finishes its XML when a process kills
 * itself): the XML stops short, and is read as far as it goes. gemleak
 * reaped the process and knows why: a note, not trouble. */
START_TEST(test_command_killed_by_a_signal)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS,
                "require 'leaky'; fork { Process.kill(:KILL, Process.ppid) }; sleep 30");
    ck_assert_msg(r.status == KILLED_COMMAND_STATUS, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: the command was killed by signal 9 \\(Killed\\)$");
    gl_assert_line(r.err, "^gemleak: note: .*/(\\d+)\\.xml: process \\1 was killed by SIGKILL; its "
                          "XML ends early$");
    gl_assert_no_line(r.err, "^gemleak: .*\\.xml: truncated ");
    gl_assert_line(r.err, "^gemleak: target: .*/leaky/leaky\\.so$");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    ck_assert(gl_list_xml_files_any(dir));
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

/* A child the command forked and never waited for: gemleak waits for it
 * (it adopts orphans), so its XML is read whole. */
START_TEST(test_orphaned_child_is_waited_for)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; fork { sleep 2; Leaky.leak }");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: 2 files, \\d+ errors read: 1 finding \\(\\d+ occurrences?\\), ");
    gl_assert_no_line(r.err, "truncated");
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    result_discard(&r);
}
END_TEST

START_TEST(test_valgrinds_own_fatal_error)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--valgrind-opt", "--no-such-valgrind-option"), "1");
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "no-such-valgrind-option");  /* Valgrind's own words */
    gl_assert_line(r.err, "^gemleak: Valgrind wrote no XML: see its messages above");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

START_TEST(test_ruby_crashes_under_valgrind)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.crash");
    ck_assert_msg(r.status == 5, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "\\[BUG\\] Segmentation fault");           /* Ruby's own report */
    gl_assert_line(r.err, "^Invalid write of size 1$");                 /* the bug */
    gl_assert_line(r.err, "^Process terminating with default action of signal 6 \\(SIGABRT\\)$");
    gl_assert_line(r.err, "^ \\*leaky_crash \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^gemleak: note: .*: process \\d+ died: Process terminating with default "
                          "action of signal 6 \\(SIGABRT\\)$");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&r);
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
    gl_assert_line(r.err, "^gemleak: Valgrind wrote no XML");
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
    gl_assert_line(second.err, "^gemleak: 1 file, \\d+ errors read: 0 findings, ");
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
    ck_assert(gl_list_xml_files_any(dir));
    gl_remove_tree(tmp);
}
END_TEST


/* More commands than gemleak runs at once (300 files, --jobs 300): at most
 * GL_MAX_JOBS of them, each with its share, rather than an assertion. */
START_TEST(test_more_jobs_than_gemleak_runs)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *valgrind = fake_valgrind(dir, FAKE_LOADED);
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    const char *head[] = { gemleak_binary, "run", "--valgrind", valgrind, "-O", "leaky",
                           "--jobs", "300", "--", "/bin/true", ":::", NULL };
    for (const char *const *arg = head; *arg != NULL; arg++)
        g_ptr_array_add(argv, g_strdup(*arg));
    for (int i = 1; i <= 300; i++)
        g_ptr_array_add(argv, g_strdup_printf("%d", i));
    g_ptr_array_add(argv, NULL);
    Result r = { 0 };
    run_command(&r, dir, NULL, (const char *const *) argv->pdata);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: note: --jobs 300: gemleak reads and runs at most 64 at once$");
    gl_assert_line(r.err, "^gemleak: 64 commands at once under Valgrind$");
    gl_assert_line(r.err, "^gemleak: 64 files, 0 errors read: 0 findings$");
    result_discard(&r);
    gl_remove_tree(dir);
}
END_TEST


/* What a --keep-xml directory holds is not loaded: the helper comes from a
 * directory gemleak makes for itself (mode 0700), never from the kept one,
 * and is gone after the run. */
START_TEST(test_keep_xml_runs_nothing_it_holds)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "xml", NULL);
    g_autofree char *ruby_dir = g_build_filename(keep, "ruby", NULL);
    ck_assert_int_eq(g_mkdir_with_parents(ruby_dir, 0700), 0);
    g_autofree char *planted = g_build_filename(ruby_dir, "set.rb", NULL);
    gl_test_write(planted, "$stdout.puts 'planted code ran'\n", -1);
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--keep-xml", keep),
                "require 'leaky'; require 'set'; "
                "lib = File.dirname(ENV['RUBYOPT'][/-r(\\S+)/, 1]); "
                "$stdout.puts lib, format('%o', File.stat(lib).mode & 0777), "
                "defined?(GemLeakHelper) ? 'helper' : 'no helper'");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_no_line(r.out, "planted code ran");
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    ck_assert_msg(g_strv_length(lines) >= 3, "stdout: %s", r.out);
    ck_assert_msg(!g_str_has_prefix(lines[0], keep), "the helper is in the kept directory: %s",
                  lines[0]);
    ck_assert_str_eq(lines[1], "700");
    ck_assert_str_eq(lines[2], "helper");
    ck_assert(!g_file_test(lines[0], G_FILE_TEST_EXISTS));
    ck_assert(gl_list_xml_files_any(keep));
    result_clear(&r);
    gl_remove_tree(base);
}
END_TEST

/* A % in the run directory (a Jenkins workspace for feature/foo is
 * feature%2Ffoo) is written %% for Valgrind, which expands %p and %q. */
START_TEST(test_percent_in_the_run_directory)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "feature%2Ffoo", "xml", NULL);
    Result kept = { 0 };
    gemleak_run(&kept, NULL, NULL, ARGS("--keep-xml", keep), "require 'leaky'; Leaky.clean");
    ck_assert_msg(kept.status == 0, "status %d\n%s", kept.status, kept.err);
    ck_assert(gl_list_xml_files_any(keep));
    result_clear(&kept);

    g_autofree char *tmp = g_build_filename(base, "ws%p%q%%", NULL);
    ck_assert_int_eq(g_mkdir(tmp, 0700), 0);
    Result private = { 0 };
    gemleak_run(&private, NULL, tmp, NO_ARGS, "require 'leaky'; Leaky.clean");
    ck_assert_msg(private.status == 0, "status %d\n%s", private.status, private.err);
    gl_assert_line(private.err, "^gemleak: 1 file, ");
    result_clear(&private);
    gl_remove_tree(base);
}
END_TEST


/* gemleak under the control of a test: started with pipes, so that the
 * test can read what it says as it says it, signal it, and give up on it
 * after a while rather than wait as long as it hangs. */
typedef struct {
    GPid pid;
    gboolean reaped;
    FILE *out;
    int err_fd;
    GString *err_text;   /* what was read of standard error so far */
    GString *err_line;   /* a line read in part */
} Live;

/* Starts @argv (NULL-terminated) with @env. */
static void live_spawn(Live *live, const char *const *argv, char **env)
{
    g_autoptr(GError) error = NULL;
    int out_fd = -1;
    memset(live, 0, sizeof *live);
    ck_assert_msg(g_spawn_async_with_pipes(NULL, (char **) argv, env, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &live->pid, NULL, &out_fd, &live->err_fd,
                                           &error),
                  "%s", error != NULL ? error->message : "?");
    live->out = fdopen(out_fd, "r");
    live->err_text = g_string_new(NULL);
    live->err_line = g_string_new(NULL);
}

/* Starts gemleak run ARGS -- ruby -e CODE, with TMPDIR at @tmp (nullable). */
static void live_start(Live *live, const char *code, const char *const *args, const char *tmp)
{
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    g_ptr_array_add(argv, (gpointer) "run");
    for (const char *const *arg = args; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *tail[] = { "--", "ruby", "--disable-gems", leaky, "-e", code, NULL };
    for (const char *const *arg = tail; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_get_environ();
    if (tmp != NULL)
        env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    live_spawn(live, (const char *const *) argv->pdata, env);
}

/* Returns: (transfer full): the next line of standard output, without its newline. */
static char *live_read_out(Live *live)
{
    char *line = NULL;
    size_t size = 0;
    ssize_t n = getline(&line, &size, live->out);
    ck_assert_msg(n > 0, "no more output; stderr so far:\n%s", live->err_text->str);
    char *copy = g_strchomp(g_strdup(line));
    free(line);
    return copy;
}

/* Reads standard error for up to @seconds, line by line, until a line
 * matches @pattern (NULL: until the end).
 * Returns: TRUE if it did (or the end came). */
static gboolean live_read_err(Live *live, const char *pattern, int seconds)
{
    gint64 deadline = g_get_monotonic_time() + (gint64) seconds * G_USEC_PER_SEC;
    for (;;) {
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;
        struct pollfd pfd = { .fd = live->err_fd, .events = POLLIN };
        if (left <= 0 || poll(&pfd, 1, (int) left) <= 0)
            return FALSE;
        char buffer[4096];
        ssize_t n = read(live->err_fd, buffer, sizeof buffer);
        if (n <= 0)
            return pattern == NULL;
        for (ssize_t i = 0; i < n; i++) {
            if (buffer[i] != '\n') {
                g_string_append_c(live->err_line, buffer[i]);
                continue;
            }
            g_string_append_printf(live->err_text, "%s\n", live->err_line->str);
            gboolean match = pattern != NULL &&
                             g_regex_match_simple(pattern, live->err_line->str, 0, 0);
            g_string_truncate(live->err_line, 0);
            if (match) {
                /* the rest of the buffer is kept for the next read */
                g_string_append_len(live->err_line, buffer + i + 1, n - i - 1);
                char *newline;
                while ((newline = strchr(live->err_line->str, '\n')) != NULL) {
                    g_string_append_len(live->err_text, live->err_line->str,
                                        newline - live->err_line->str + 1);
                    g_string_erase(live->err_line, 0, newline - live->err_line->str + 1);
                }
                return TRUE;
            }
        }
    }
}

/* Waits up to @seconds for gemleak to end.
 * Returns: TRUE with *status (128 + N when killed by signal N) if it did. */
static gboolean live_wait(Live *live, int seconds, int *status)
{
    for (int i = 0; i < seconds * 20; i++) {
        int wait_status = 0;
        if (waitpid(live->pid, &wait_status, WNOHANG) == live->pid) {
            live->reaped = TRUE;
            *status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                             : 128 + WTERMSIG(wait_status);
            return TRUE;
        }
        g_usleep(50000);
    }
    return FALSE;
}

static void live_clear(Live *live)
{
    if (!live->reaped && live->pid > 0) {
        kill(live->pid, SIGKILL);
        waitpid(live->pid, NULL, 0);
    }
    if (live->out != NULL)
        fclose(live->out);
    if (live->err_fd >= 0)
        close(live->err_fd);
    if (live->err_text != NULL)
        g_string_free(live->err_text, TRUE);
    if (live->err_line != NULL)
        g_string_free(live->err_line, TRUE);
    memset(live, 0, sizeof *live);
}

/* Returns: TRUE if @pid is gone (or a zombie), within @seconds. */
static gboolean gone_within(pid_t pid, int seconds)
{
    for (int i = 0; i < seconds * 10; i++) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid);
        g_autofree char *stat = NULL;
        if (!g_file_get_contents(path, &stat, NULL, NULL))
            return TRUE;
        const char *close = strrchr(stat, ')');
        if (close != NULL && close[1] == ' ' && close[2] == 'Z')
            return TRUE;
        g_usleep(100000);
    }
    return FALSE;
}

/* A suite that double-forks leaves its grandchildren to gemleak (the
 * child subreaper): they are reaped as they end, not piled up as zombies
 * until the command is done. */
START_TEST(test_orphans_reaped_as_they_end)
{
    const char *code =
        "require 'leaky'; gemleak = Process.ppid; "
        "3.times { pid = fork { fork { exit!(0) }; exit!(0) }; Process.wait(pid) }; "
        "kids = lambda { Dir['/proc/[0-9]*/stat'].filter_map { |f| "
        "  s = (File.read(f) rescue next); m = s.match(/\\) (\\S) (\\d+) /); "
        "  m && m[2].to_i == gemleak && !f.start_with?(\"/proc/#{Process.pid}/\") ? m[1] : nil } }; "
        "deadline = Time.now + 240; "
        "sleep 0.2 while Time.now < deadline && kids.call.any? { |state| state != 'Z' }; "
        "sleep 1; $stdout.puts \"zombies: #{kids.call.count('Z')}\"";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    ck_assert_str_eq(r.out, "zombies: 0\n");
    gl_assert_line(r.err, "^gemleak: 7 files, ");
    result_clear(&r);
}
END_TEST

/* SIGTERM while gemleak waits for the processes the command left running:
 * the wait ends at once, they are passed the signal, and the report covers
 * what is complete. */
START_TEST(test_interrupted_while_waiting_for_orphans)
{
    Live live;
    live_start(&live, "require 'leaky'; pid = fork { sleep 600 }; $stdout.puts pid; $stdout.flush",
               NULL, NULL);
    g_autofree char *line = live_read_out(&live);
    pid_t orphan = (pid_t) g_ascii_strtoll(line, NULL, 10);
    ck_assert_int_gt(orphan, 0);
    ck_assert_msg(live_read_err(&live, "^gemleak: the command is done; waiting up to 60 s for "
                                       "the processes it left running$", 120),
                  "gemleak did not say it waits:\n%s", live.err_text->str);
    kill(live.pid, SIGTERM);
    int status = 0;
    gboolean ended = live_wait(&live, 20, &status);
    gboolean orphan_gone = gone_within(orphan, 10);
    live_read_err(&live, NULL, 5);
    if (!orphan_gone)  /* a pid that is gone may be another process's by now */
        kill(orphan, SIGKILL);
    ck_assert_msg(ended, "gemleak went on waiting 20 s after SIGTERM:\n%s", live.err_text->str);
    ck_assert_msg(orphan_gone, "the orphan %d still runs", (int) orphan);
    gl_assert_line(live.err_text->str, "^gemleak: interrupted by Terminated: ");
    gl_assert_line(live.err_text->str, "^gemleak: target: .*/leaky\\.so$");
    ck_assert_msg(status != 128 + SIGTERM, "gemleak died of the signal:\n%s", live.err_text->str);
    g_autofree char *dir = kept_dir(live.err_text->str);
    gl_remove_tree(dir);
    live_clear(&live);
}
END_TEST

/* gemleak SIGKILLed (a CI job's hard timeout): its Valgrind does not run on. */
START_TEST(test_valgrind_dies_with_gemleak)
{
    /* gemleak killed leaves its directories: in one of the test's own */
    g_autofree char *tmp = gl_test_tmpdir();
    Live live;
    live_start(&live, "$stdout.puts Process.pid; $stdout.flush; sleep 600", ARGS("-O", "leaky"),
               tmp);
    g_autofree char *line = live_read_out(&live);
    pid_t child = (pid_t) g_ascii_strtoll(line, NULL, 10);
    ck_assert_int_gt(child, 0);
    kill(live.pid, SIGKILL);
    int status = 0;
    ck_assert(live_wait(&live, 10, &status));
    ck_assert_int_eq(status, 128 + SIGKILL);
    gboolean gone = gone_within(child, 10);
    if (!gone)  /* a pid that is gone may be another process's by now */
        kill(child, SIGKILL);
    ck_assert_msg(gone, "Valgrind (pid %d) ran on after gemleak was killed", (int) child);
    live_clear(&live);
    gl_remove_tree(tmp);
}
END_TEST

/* A process the suite kills on purpose (here a grandchild re-parented to
 * gemleak, which reaps it): its XML ends early, and gemleak says why
 * rather than call the run's XML incomplete. The suite passed: exit 0. */
START_TEST(test_process_killed_by_the_suite)
{
    const char *code =
        "require 'leaky'; r, w = IO.pipe; "
        "mid = fork { fork { r.close; w.puts Process.pid; w.close; sleep 600 }; exit!(0) }; "
        "w.close; Process.wait(mid); pid = r.gets.to_i; sleep 1; "
        "Process.kill(:KILL, pid); Leaky.clean; $stdout.puts pid";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    g_autofree char *pid = g_strstrip(g_strdup(r.out));
    g_autofree char *note = g_strdup_printf("^gemleak: note: .*/%s\\.xml: process %s was killed by "
                                            "SIGKILL; its XML ends early$", pid, pid);
    gl_assert_line(r.err, note);
    gl_assert_no_line(r.err, "truncated at");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    result_discard(&r);
}
END_TEST


/* run's exit status alone says which of the gate and the command failed,
 * or that gemleak could not read all of Valgrind's XML; the text report's
 * last line says it in words. Valgrind is a stand-in here that writes the
 * XML it is given (FAKE_XML) and runs the command. */
START_TEST(test_run_exit_statuses)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *valgrind = fake_valgrind(dir, FAKE_LOADED
                                              "[ -n \"$FAKE_XML\" ] && cat \"$FAKE_XML\" > \"$xml\"\n"
                                              "exec \"$@\"");
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *leak_abs = g_canonicalize_filename(leak, NULL);
    g_autofree char *text = gl_test_read(leak, NULL);
    g_autofree char *cut = g_build_filename(dir, "cut.xml", NULL);
    gl_test_write(cut, text, strstr(text, "<error>") - text + 20);
    const struct {
        const char *xml;
        const char *command;
        int status;
        const char *line;
    } cases[] = {
        { NULL, "true", 0, "^gemleak: exit status 0: nothing fails the gate, and the command passed$" },
        { leak_abs, "true", 1, "^gemleak: exit status 1: findings fail the gate; the command passed$" },
        { cut, "true", 3, "^gemleak: exit status 3: Valgrind's XML could not all be read \\(see "
                          "gemleak's messages\\); nothing fails the gate, and the command passed$" },
        { cut, "exit 1", 3, "^gemleak: exit status 3: Valgrind's XML could not all be read \\(see "
                            "gemleak's messages\\); nothing fails the gate, and the command failed "
                            "\\(exit status 1\\)$" },
        { NULL, "exit 7", 4, "^gemleak: exit status 4: the command failed \\(exit status 7\\); "
                             "nothing fails the gate$" },
        { NULL, "kill -9 $$", 4, "^gemleak: exit status 4: the command failed \\(killed by "
                                 "SIGKILL\\); nothing fails the gate$" },
        { leak_abs, "exit 1", 5, "^gemleak: exit status 5: findings fail the gate, and the command "
                                 "failed \\(exit status 1\\)$" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *argv[] = { gemleak_binary, "run", "--valgrind", valgrind, "-O", "leaky", "--",
                               "sh", "-c", cases[i].command, NULL };
        g_auto(GStrv) env = cases[i].xml != NULL
            ? g_environ_setenv(g_get_environ(), "FAKE_XML", cases[i].xml, TRUE)
            : g_environ_unsetenv(g_get_environ(), "FAKE_XML");
        Result r = { 0 };
        run_command(&r, NULL, env, argv);
        ck_assert_msg(r.status == cases[i].status, "case %u: status %d\n%s", i, r.status, r.err);
        gl_assert_line(r.err, cases[i].line);
        /* what could not all be read never passes */
        if (cases[i].xml == cut) {
            gl_assert_line(r.err, "^gemleak: INCOMPLETE: no findings in what could be read; 1 input "
                                  "could not all be read \\(see gemleak's messages\\)$");
            gl_assert_no_line(r.err, "^gemleak: pass");
        }
        result_discard(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

/* ---- Rake: the example gem's tasks ------------------------------------------ */

/* The example gem, compiled once; each test works on a copy of it. */
static char *sample_gem;

static gboolean prepare_sample_gem(GError **error)
{
    g_autofree char *source = gl_test_fixture("sample-gem");
    sample_gem = g_build_filename(ext_dir, "sample-gem", NULL);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *script = g_strdup_printf("cp -r '%s' '%s' && cd '%s' && rake -I '%s' compile",
                                              source, sample_gem, sample_gem, lib);
    return run_setup_script("compiling the example gem", script, error);
}

/* rake -I @lib ARGS... in a fresh copy of the example gem, with GEMLEAK
 * set and @env (NAME=VALUE strings; a NAME alone unsets it) added.
 * Returns: (transfer full) the copy's directory. */
static char *rake_run_with(Result *result, const char *lib, const char *const *env_pairs,
                           const char *const *args)
{
    char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_strdup_printf("cp -a '%s/.' '%s'", sample_gem, dir);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) "rake");
    g_ptr_array_add(argv, (gpointer) "-I");
    g_ptr_array_add(argv, (gpointer) lib);
    for (const char *const *arg = args; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GEMLEAK", gemleak_binary, TRUE);
    for (const char *const *pair = env_pairs; pair != NULL && *pair != NULL; pair++) {
        g_auto(GStrv) kv = g_strsplit(*pair, "=", 2);
        env = kv[1] != NULL ? g_environ_setenv(env, kv[0], kv[1], TRUE) : g_environ_unsetenv(env, kv[0]);
    }
    run_command(result, dir, env, (const char *const *) argv->pdata);
    return dir;
}

/* rake_run_with() the library of this tree, rake/lib. */
static char *rake_run(Result *result, const char *const *env_pairs, const char *const *args)
{
    g_autofree char *lib = gl_test_project_file("rake/lib");
    return rake_run_with(result, lib, env_pairs, args);
}

/* rake -I rake/lib ARGS... in @dir, with GEMLEAK set to @gemleak. */
static void rake_in(Result *result, const char *dir, const char *gemleak, const char *const *args)
{
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) "rake");
    g_ptr_array_add(argv, (gpointer) "-I");
    g_ptr_array_add(argv, lib);
    for (const char *const *arg = args; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GEMLEAK", gemleak, TRUE);
    run_command(result, dir, env, (const char *const *) argv->pdata);
}

/* The README's block under "<!-- gemleak:NAME: ...", without its fences.
 * Returns: (transfer full). */
static char *readme_block(const char *name)
{
    g_autofree char *path = gl_test_project_file("README.md");
    g_autofree char *readme = gl_test_read(path, NULL);
    g_autofree char *marker = g_strdup_printf("<!-- gemleak:%s:", name);
    const char *at = strstr(readme, marker);
    ck_assert_msg(at != NULL, "README.md has no %s", marker);
    const char *start = strstr(at, "```");
    ck_assert_ptr_nonnull(start);
    start = strchr(start, '\n');
    ck_assert_ptr_nonnull(start);
    start++;
    const char *end = strstr(start, "```\n");
    ck_assert_ptr_nonnull(end);
    return g_strndup(start, (gsize) (end - start));
}

/* A line of a Ruby backtrace in gemleak's library (rake/lib/gemleak.rb,
 * rake/lib/gemleak/rake.rb, ...). */
#define GEMLEAK_LIBRARY_FRAME "/gemleak(/\\w+)?\\.rb:\\d+:in "

static void forget(Result *result, char *dir)
{
    result_discard(result);
    gl_remove_tree(dir);
    g_free(dir);
}

START_TEST(test_rake_test_task_fails_on_a_leak)
{
    Result r = { 0 };
    char *dir = rake_run(&r, NULL, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(r.status != 0, "rake passed:\n%s", r.err);
    gl_assert_line(r.out, "1 runs, 1 assertions, 0 failures");
    gl_assert_line(r.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^GemLeak::Error: gemleak: 1 finding \\(leaks or memory errors\\) in the "
                          "extension; the report is above$");
    /* a failing gate is a message and a status, as a failing `rake test`
     * is: no backtrace into gemleak's library */
    gl_assert_no_line(r.err, GEMLEAK_LIBRARY_FRAME);
    forget(&r, dir);
}
END_TEST

/* A clean run passes and leaves nothing in TMPDIR: neither the task's
 * report directory nor Valgrind's XML. */
START_TEST(test_rake_test_task_passes_without_the_leaking_test)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *tmpdir = g_strconcat("TMPDIR=", tmp, NULL);
    Result r = { 0 };
    char *dir = rake_run(&r, ARGS(tmpdir), ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    gl_assert_line(r.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    ck_assert_uint_eq(entries_in(tmp), 0);
    forget(&r, dir);
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_rake_failing_assertion_still_fails)
{
    Result r = { 0 };
    char *dir = rake_run(&r, NULL, ARGS("test:valgrind", "TEST=test/failing_test.rb"));
    ck_assert_int_ne(r.status, 0);
    gl_assert_line(r.out, "1 runs, 1 assertions, 1 failures");
    gl_assert_line(r.err, "^GemLeak::Error: test suite failed \\(status 1\\); gemleak found no leaks$");
    gl_assert_no_line(r.err, "^ \\*");
    gl_assert_no_line(r.err, GEMLEAK_LIBRARY_FRAME);
    forget(&r, dir);
}
END_TEST

START_TEST(test_rake_binary_name_limits_the_targets)
{
    Result both = { 0 };
    char *dir = rake_run(&both, NULL, ARGS("test:valgrind", "TEST=test/stopwords_test.rb"));
    ck_assert_int_ne(both.status, 0);
    gl_assert_line(both.err, "^ \\*stopwords_load \\(stopwords\\.c:\\d+\\)$");
    forget(&both, dir);

    Result one = { 0 };
    dir = rake_run(&one, ARGS("GEMLEAK_BINARY=tally"), ARGS("test:valgrind", "TEST=test/stopwords_test.rb"));
    ck_assert_msg(one.status == 0, "status %d:\n%s", one.status, one.err);
    gl_assert_line(one.err, "^gemleak: target: .*/tally\\.so$");
    forget(&one, dir);

    /* a name that matches nothing: gemleak stops before its report, and the
     * task says so rather than blame the suite */
    Result none = { 0 };
    dir = rake_run(&none, ARGS("GEMLEAK_BINARY=nosuchext"), ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_int_ne(none.status, 0);
    gl_assert_line(none.err, "^gemleak: --object nosuchext matches no extension the run loaded");
    gl_assert_line(none.err, "^GemLeak::Error: binary_name \"nosuchext\" names no extension the tests "
                             "loaded \\(they loaded: .*/lib/tally/tally\\.so\\): fix binary_name in your "
                             "Rakefile \\(\"tally\", as create_makefile names it\\), or leave it unset");
    gl_assert_no_line(none.err, "^GemLeak::Error: .*--help");
    forget(&none, dir);
}
END_TEST

START_TEST(test_rake_suppressions_and_reports_reach_gemleak)
{
    g_autofree char *supp_dir = gl_test_tmpdir();
    g_autofree char *supp = g_build_filename(supp_dir, "ruby.supp", NULL);
    gl_test_write(supp, "{\n   tally_count's known leak\n   Memcheck:Leak\n   ...\n   fun:tally_count\n}\n", -1);
    g_autofree char *suppressions = g_strconcat("GEMLEAK_SUPPRESSIONS=", supp_dir, NULL);
    Result silenced = { 0 };
    char *dir = rake_run(&silenced, ARGS(suppressions), ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(silenced.status == 0, "status %d:\n%s", silenced.status, silenced.err);
    forget(&silenced, dir);

    Result reported = { 0 };
    dir = rake_run(&reported, ARGS("GEMLEAK_REPORTS=junit:gemleak.xml"),
                   ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_int_ne(reported.status, 0);
    g_autofree char *junit_path = g_build_filename(dir, "gemleak.xml", NULL);
    g_autofree char *junit = gl_test_read(junit_path, NULL);
    gl_assert_line(junit, "<testcase name=\"definite leak in copy_text \\(tally\\.c:\\d+\\) via tally_count");
    forget(&reported, dir);
    gl_remove_tree(supp_dir);
}
END_TEST

/* The library away from a built tree (a gem whose binary is gone, say),
 * without GEMLEAK and with no gemleak on PATH. */
START_TEST(test_rake_without_gemleak_says_how_to_get_it)
{
    Result r = { 0 };
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *tmpdir = g_strconcat("TMPDIR=", tmp, NULL);
    g_autofree char *lib_copy = gl_test_tmpdir();
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *copy = g_strdup_printf("cp -R '%s/.' '%s'", lib, lib_copy);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    char *dir = rake_run_with(&r, lib_copy, ARGS("GEMLEAK", "PATH=/usr/bin:/bin", tmpdir),
                              ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_int_ne(r.status, 0);
    gl_assert_line(r.err, "^GemLeak::Error: gemleak's binary is not built: install the gemleak gem "
                          "\\(gem install, or Bundler with git: or a gem source, builds it\\), run "
                          "make in gemleak's source \\(for Bundler's path:\\), or set "
                          "GEMLEAK=/path/to/gemleak$");
    ck_assert_uint_eq(entries_in(tmp), 0);
    forget(&r, dir);
    gl_remove_tree(tmp);
    gl_remove_tree(lib_copy);
}
END_TEST

START_TEST(test_rspec_task)
{
    Result leak = { 0 };
    char *dir = rake_run(&leak, NULL, ARGS("spec:valgrind", "SPEC=spec/count_spec.rb"));
    ck_assert_int_ne(leak.status, 0);
    gl_assert_line(leak.out, "1 example, 0 failures");
    gl_assert_line(leak.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(leak.err, "^GemLeak::Error: gemleak: 1 finding ");
    forget(&leak, dir);

    Result clean = { 0 };
    dir = rake_run(&clean, NULL, ARGS("spec:valgrind", "SPEC=spec/frequencies_spec.rb"));
    ck_assert_msg(clean.status == 0, "status %d:\n%s", clean.status, clean.err);
    gl_assert_line(clean.out, "2 examples, 0 failures");
    forget(&clean, dir);

    Result failing = { 0 };
    dir = rake_run(&failing, NULL, ARGS("spec:valgrind", "SPEC=spec/failing_spec.rb"));
    ck_assert_int_ne(failing.status, 0);
    gl_assert_line(failing.out, "1 example, 1 failure");
    gl_assert_line(failing.err, "^GemLeak::Error: spec suite failed \\(status 1\\); gemleak found no leaks$");
    gl_assert_no_line(failing.err, GEMLEAK_LIBRARY_FRAME);
    forget(&failing, dir);
}
END_TEST

/* A task given a GemLeak::Configuration of its own uses it, not
 * GemLeak.configure's: the test task targets only the extension that does
 * not leak in its suite, the spec task lets the 17-byte leak pass the gate,
 * so both pass where the shared tasks fail. */
START_TEST(test_rake_task_with_its_own_configuration)
{
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "own.rake", NULL);
    gl_test_write(rake_file,
                  "only_tally = GemLeak::Configuration.new.tap { |c| c.binary_names = [\"tally\"] }\n"
                  "GemLeak::TestTask.new(only_tally, \"test:own\" => :compile) { |t| t.libs << \"test\" }\n"
                  "small_leaks_pass = GemLeak::Configuration.new.tap { |c| c.max_bytes = 100 }\n"
                  "GemLeak::RSpec::RakeTask.new(small_leaks_pass, \"spec:own\" => :compile)\n",
                  -1);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GEMLEAK", gemleak_binary, TRUE);

    Result test = { 0 };
    const char *test_argv[] = { "rake", "-I", lib, "test:own", "TEST=test/stopwords_test.rb", NULL };
    run_command(&test, dir, env, test_argv);
    ck_assert_msg(test.status == 0, "status %d:\n%s", test.status, test.err);
    gl_assert_line(test.err, "^gemleak: target: .*/tally\\.so$");
    result_discard(&test);

    Result spec = { 0 };
    const char *spec_argv[] = { "rake", "-I", lib, "spec:own", "SPEC=spec/count_spec.rb", NULL };
    run_command(&spec, dir, env, spec_argv);
    ck_assert_msg(spec.status == 0, "status %d:\n%s", spec.status, spec.err);
    gl_assert_line(spec.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(spec.out, "1 example, 0 failures");
    forget(&spec, dir);
}
END_TEST

/* The README's Rakefile snippets, pasted into the example gem below the
 * test and spec tasks it already has, add test:valgrind and spec:valgrind
 * beside them, leave `rake test` as it was, and work as the README says. */
START_TEST(test_readme_rakefile_snippet)
{
    g_autofree char *snippet = readme_block("rakefile-snippet");
    g_autofree char *rspec = readme_block("rakefile-snippet-rspec");
    /* minitest's needs no RSpec, defines no test task, leaves binary_name unset */
    ck_assert_msg(strstr(snippet, "spec") == NULL && strstr(snippet, "RSpec") == NULL, "%s", snippet);
    ck_assert_msg(strstr(snippet, "Rake::TestTask.new") == NULL, "%s", snippet);
    ck_assert_msg(g_regex_match_simple("^\\s*# c\\.binary_name = ", snippet, G_REGEX_MULTILINE, 0),
                  "%s", snippet);

    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    g_autofree char *contents = g_strconcat(
        "require \"rake/testtask\"\n"
        "require \"rspec/core/rake_task\"\n"
        "Rake::TestTask.new(test: :compile) do |t|\n"
        "  t.libs << \"test\"\n"
        "  t.test_files = FileList[\"test/frequencies_test.rb\"]\n"
        "end\n"
        "RSpec::Core::RakeTask.new(spec: :compile)\n\n",
        snippet, "\n", rspec, NULL);
    gl_test_write(rakefile, contents, -1);

    Result tasks = { 0 };
    rake_in(&tasks, dir, gemleak_binary, ARGS("-T"));
    ck_assert_msg(tasks.status == 0, "rake -T: %s", tasks.err);
    gl_assert_line(tasks.out, "^rake test:valgrind +# Run the tests under Valgrind with gemleak$");
    gl_assert_line(tasks.out, "^rake spec:valgrind +# Run RSpec code examples under Valgrind with gemleak$");
    gl_assert_line(tasks.out, "^rake test +# Run tests");
    ck_assert_msg(tasks.err[0] == '\0', "rake -T warns: %s", tasks.err);
    result_clear(&tasks);

    /* compile comes first: the extension is gone */
    g_autofree char *so = g_build_filename(dir, "lib", "tally", "tally.so", NULL);
    ck_assert_int_eq(g_unlink(so), 0);
    Result leak = { 0 };
    rake_in(&leak, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(leak.status != 0, "rake passed:\n%s", leak.err);
    gl_assert_line(leak.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    gl_assert_line(leak.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(leak.err, "^GemLeak::Error: gemleak: 1 finding ");
    result_discard(&leak);

    /* the gem's own task is untouched */
    Result plain = { 0 };
    rake_in(&plain, dir, gemleak_binary, ARGS("test"));
    ck_assert_msg(plain.status == 0, "status %d:\n%s", plain.status, plain.err);
    gl_assert_line(plain.out, "2 runs, 2 assertions, 0 failures");
    gl_assert_no_line(plain.err, "^gemleak");
    result_clear(&plain);

    Result spec = { 0 };
    rake_in(&spec, dir, gemleak_binary, ARGS("spec:valgrind", "SPEC=spec/frequencies_spec.rb"));
    ck_assert_msg(spec.status == 0, "status %d:\n%s", spec.status, spec.err);
    gl_assert_line(spec.err, "^gemleak: pass: no findings$");
    result_clear(&spec);
    gl_remove_tree(dir);
    g_free(dir);
}
END_TEST

/* The gemleak side of the README's move from ruby_memcheck: ruby_memcheck's
 * settings, a Regexp among them, do what they did. */
START_TEST(test_readme_ruby_memcheck_migration)
{
    g_autofree char *block = readme_block("rakefile-migration");
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    gl_test_write(rakefile, block, -1);
    Result r = { 0 };
    rake_in(&r, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    forget(&r, dir);
}
END_TEST

/* A Ruby script on the library of this tree: what it printed, and its status. */
static void ruby_with_library(Result *result, const char *script)
{
    g_autofree char *lib = gl_test_project_file("rake/lib");
    const char *argv[] = { "ruby", "-I", lib, "-rgemleak", "-e", script, NULL };
    run_command(result, NULL, NULL, argv);
}

/* ruby_memcheck's settings, by name, become the options that mean the
 * same; a Regexp becomes gemleak's /REGEX/ (and works: see the run), and
 * what gemleak cannot take is refused with a message. */
START_TEST(test_rake_ruby_memcheck_settings)
{
    Result mapped = { 0 };
    ruby_with_library(&mapped,
        "puts GemLeak::Configuration.new(binary_name: /\\Atally\\z/i, "
        "skipped_ruby_functions: [/\\Arb_my_(cb|hook)/, 'rb_other*'], "
        "valgrind_options: ['--num-callers=30'], valgrind_suppressions_dir: 'supp', "
        "valgrind_generate_suppressions: true, filter_all_errors: false, "
        "use_only_ruby_free_at_exit: true, valgrind: '/opt/vg/bin/valgrind --vex-iropt-register-updates=allregs-at-mem-access').arguments");
    ck_assert_msg(mapped.status == 0, "%s", mapped.err);
    ck_assert_str_eq(mapped.out,
                     "--object\n/(?i)\\Atally\\z/\n"
                     "--valgrind\n/opt/vg/bin/valgrind\n"
                     "--valgrind-opt\n--vex-iropt-register-updates=allregs-at-mem-access\n"
                     "--valgrind-opt\n--num-callers=30\n"
                     "--suppressions-dir\nsupp\n"
                     "--skip-function\n/\\Arb_my_(cb|hook)/\n--skip-function\nrb_other*\n"
                     "--all-errors\n--free-at-exit\n--gen-suppressions\n");
    result_clear(&mapped);

    /* GemLeak.config sets the shared configuration; filter_all_errors: true is gemleak's default */
    Result config = { 0 };
    ruby_with_library(&config, "GemLeak.config(binary_name: 'tally', filter_all_errors: true); "
                               "puts GemLeak.configuration.arguments");
    ck_assert_str_eq(config.out, "--object\ntally\n");
    result_clear(&config);

    /* Regexp.union and interpolation write (?-mix:...), which PCRE reads alike */
    Result union_ = { 0 };
    ruby_with_library(&union_, "puts GemLeak::Pattern.argument(Regexp.union(/\\Arb_a/i, /\\Arb_b/), 'x')");
    ck_assert_str_eq(union_.out, "/(?i-mx:\\Arb_a)|(?-mix:\\Arb_b)/\n");
    result_clear(&union_);

    /* gemleak's rule 2 needs no list: the defaults are empty, and a
     * ruby_memcheck Rakefile's DEFAULT + [...] adds just its patterns */
    Result defaults = { 0 };
    ruby_with_library(&defaults, "p GemLeak::Configuration::DEFAULT_SKIPPED_RUBY_FUNCTIONS");
    ck_assert_str_eq(defaults.out, "[]\n");
    result_clear(&defaults);

    const struct {
        const char *script;
        const char *message;
    } refused[] = {
        { "GemLeak::Configuration.new(skip_functions: [/rb_\\h+/]).arguments",
          /* (Ruby doubles the backslashes of a message it dies with) */
          "skip_functions: /rb_\\\\{1,2}h\\+/ cannot be passed to gemleak: \\\\{1,2}h is a hex digit in Ruby" },
        { "GemLeak::Configuration.new(binary_name: /tally/n).arguments",
          "binary_name: /tally/n cannot be passed to gemleak: gemleak matches names as UTF-8" },
        { "GemLeak::Configuration.new(suppressions_dir: /supp/).arguments",
          "suppressions_dir: a Regexp \\(/supp/\\) is no suppressions_dir; give a String" },
        { "GemLeak.config(temp_dir: '/tmp/x')",
          "GemLeak: temp_dir is ruby_memcheck's, not gemleak's: gemleak keeps Valgrind's XML" },
        { "GemLeak.config(binary_nmae: 'x')", "GemLeak: unknown setting binary_nmae" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(refused); i++) {
        Result r = { 0 };
        ruby_with_library(&r, refused[i].script);
        ck_assert_msg(r.status != 0, "%s passed", refused[i].script);
        gl_assert_line(r.err, refused[i].message);
        gl_assert_line(r.err, "\\(GemLeak::Error\\)");
        result_clear(&r);
    }

    /* A real run: a Regexp reaches gemleak as a pattern it matches (as a
     * string, it named no extension the suite loaded) */
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "memcheck.rake", NULL);
    gl_test_write(rake_file, "GemLeak.config(binary_name: /\\Atall/)\n", -1);
    Result run = { 0 };
    rake_in(&run, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_int_ne(run.status, 0);
    gl_assert_line(run.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    gl_assert_line(run.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(run.err, "^GemLeak::Error: gemleak: 1 finding ");
    forget(&run, dir);
}
END_TEST

/* Rake adds a second definition's actions to the first's: with
 * ruby_memcheck's test:valgrind still there, the suite would run twice.
 * Defined before gemleak's, it stays alone; defined after, the run says so. */
START_TEST(test_rake_task_defined_twice_warns)
{
    g_autofree char *snippet = readme_block("rakefile-snippet");
    const char *other = "namespace(:test) { task(:valgrind) { puts \"the other library's task\" } }\n";
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    g_autofree char *before = g_strconcat(other, snippet, NULL);
    gl_test_write(rakefile, before, -1);
    Result first = { 0 };
    rake_in(&first, dir, gemleak_binary, ARGS("test:valgrind"));
    ck_assert_msg(first.status == 0, "status %d:\n%s", first.status, first.err);
    gl_assert_line(first.err, "^gemleak: rake task test:valgrind is already defined \\(by ruby_memcheck\\?\\); "
                              "gemleak leaves it alone rather than run the suite twice");
    gl_assert_line(first.out, "^the other library's task$");
    gl_assert_no_line(first.err, "^gemleak: ran under Valgrind");
    result_clear(&first);

    /* a gemleak that only runs the command, to see the order of things */
    g_autofree char *fake = g_build_filename(dir, "fake-gemleak", NULL);
    gl_test_write(fake, "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n", -1);
    g_chmod(fake, 0755);
    g_autofree char *after = g_strconcat(snippet, other, NULL);
    gl_test_write(rakefile, after, -1);
    /* and a Rakefile without a compile task (the extension is built) */
    g_autofree char *compile = g_build_filename(dir, "rakelib", "compile.rake", NULL);
    ck_assert_int_eq(g_unlink(compile), 0);
    Result second = { 0 };
    rake_in(&second, dir, fake, ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_msg(second.status == 0, "status %d:\n%s", second.status, second.err);
    gl_assert_line(second.err, "^gemleak: rake task test:valgrind also runs 1 action\\(s\\) that another "
                               "library \\(ruby_memcheck\\?\\) added");
    gl_assert_line(second.out, "^the other library's task$");
    result_clear(&second);
    gl_remove_tree(dir);
    g_free(dir);
}
END_TEST

/* c.write_baseline adopts what the suite leaks: the task passes, the file
 * holds the finding. */
START_TEST(test_rake_write_baseline)
{
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "baseline.rake", NULL);
    gl_test_write(rake_file, "GemLeak.configure { |c| c.write_baseline = \".gemleak-baseline.json\" }\n", -1);
    Result r = { 0 };
    rake_in(&r, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^gemleak: pass: 1 finding written to the baseline \\.gemleak-baseline\\.json ");
    g_autofree char *baseline = g_build_filename(dir, ".gemleak-baseline.json", NULL);
    g_autofree char *json = gl_test_read(baseline, NULL);
    ck_assert_uint_eq(gl_test_count(json, strlen(json), "\"fingerprint\""), 1);
    forget(&r, dir);
}
END_TEST

/* The pids of every finding of the JSON report at @path, "," separated. */
static char *report_pids(const char *path)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert_msg(json_parser_load_from_file(parser, path, NULL), "%s", path);
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    GString *pids = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonArray *list = json_object_get_array_member(json_array_get_object_element(findings, i),
                                                       "pids");
        for (guint p = 0; p < json_array_get_length(list); p++)
            g_string_append_printf(pids, "%" G_GINT64_FORMAT ",",
                                   json_array_get_int_element(list, p));
    }
    return g_string_free(pids, FALSE);
}

/* Issue 20: a rake-compiler build (the extension built in tmp/, its source
 * in ext/) is named ext/tally/tally.c:13 by every report, text too; and
 * the baseline the task writes, written again after the checkout moved
 * (and was built again there, as a CI checkout is), by other processes, is
 * the same file, with no absolute path and no pid. */
START_TEST(test_rake_compiler_paths_and_baselines)
{
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("clean"));
    ck_assert_msg(setup.status == 0, "rake clean: %s", setup.err);
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "baseline.rake", NULL);
    gl_test_write(rake_file,
                  "GemLeak.configure do |c|\n"
                  "  c.write_baseline = \".gemleak-baseline.json\"\n"
                  "  c.reports = %w[json:r.json sarif:r.sarif junit:r.xml github:r.github]\n"
                  "end\n", -1);
    Result r = { 0 };
    rake_in(&r, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^ \\*copy_text \\(ext/tally/tally\\.c:13\\)$");
    gl_assert_line(r.err, "^ \\*tally_count \\(ext/tally/tally\\.c:\\d+\\)$");
    gl_assert_no_line(r.err, "\\(tally\\.c:");
    static const struct {
        const char *file;
        const char *line;
    } named[] = {
        { "r.json", "\"file\" : \"ext/tally/tally\\.c\",\\s+\"line\" : 13," },
        { "r.sarif", "\"uri\" : \"ext/tally/tally\\.c\"" },
        { "r.xml", "<testcase name=\"definite leak in copy_text \\(ext/tally/tally\\.c:13\\) via "
                   "tally_count \\(ext/tally/tally\\.c:\\d+\\)\"" },
        { "r.github", "^::(error|warning) file=ext/tally/tally\\.c,line=13,title=gemleak%3A definite leak in "
                      "copy_text \\(ext/tally/tally\\.c%3A13\\)" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(named); i++) {
        g_autofree char *path = g_build_filename(dir, named[i].file, NULL);
        g_autofree char *text = gl_test_read(path, NULL);
        ck_assert_msg(g_regex_match_simple(named[i].line, text, G_REGEX_MULTILINE, 0),
                      "%s: no /%s/ in:\n%.3000s", named[i].file, named[i].line, text);
        ck_assert_msg(strstr(text, "(tally.c:") == NULL && strstr(text, "(tally.c%3A") == NULL,
                      "%s names tally.c alone:\n%.3000s", named[i].file, text);
    }
    g_autofree char *json = g_build_filename(dir, "r.json", NULL);
    g_autofree char *first_pids = report_pids(json);
    g_autofree char *baseline = g_build_filename(dir, ".gemleak-baseline.json", NULL);
    gsize n_first = 0;
    g_autofree char *first = gl_test_read(baseline, &n_first);
    result_clear(&r);

    /* the checkout elsewhere, built there */
    g_autofree char *parent = gl_test_tmpdir();
    g_autofree char *moved = g_build_filename(parent, "elsewhere", NULL);
    ck_assert_int_eq(g_rename(dir, moved), 0);
    Result clean = { 0 };
    rake_in(&clean, moved, gemleak_binary, ARGS("clean"));
    ck_assert_int_eq(clean.status, 0);
    result_clear(&clean);
    Result again = { 0 };
    rake_in(&again, moved, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(again.status == 0, "status %d:\n%s", again.status, again.err);
    gl_assert_line(again.err, "^ \\*copy_text \\(ext/tally/tally\\.c:13\\)$");
    g_autofree char *moved_json = g_build_filename(moved, "r.json", NULL);
    g_autofree char *second_pids = report_pids(moved_json);
    ck_assert_str_ne(first_pids, second_pids);
    g_autofree char *moved_baseline = g_build_filename(moved, ".gemleak-baseline.json", NULL);
    gsize n_second = 0;
    g_autofree char *second = gl_test_read(moved_baseline, &n_second);
    ck_assert_msg(n_first == n_second && memcmp(first, second, n_first) == 0,
                  "two baselines of the same leaks differ:\n%s\n%s", first, second);
    ck_assert_msg(strstr(first, "\"/") == NULL && strstr(first, dir) == NULL &&
                      strstr(first, parent) == NULL,
                  "an absolute path:\n%s", first);
    g_auto(GStrv) pids = g_strsplit(second_pids, ",", -1);
    for (char **pid = pids; *pid != NULL && **pid != '\0'; pid++) {
        g_autofree char *number = g_strdup_printf(" %s", *pid);
        ck_assert_msg(strstr(first, number) == NULL, "a pid, %s:\n%s", *pid, first);
    }
    gl_assert_line(first, "^      \"location\" : \"ext/tally/tally\\.c:13\",$");
    gl_assert_line(first, "^        \"copy_text\",$");
    ck_assert_uint_lt(n_first, 600);
    /* the README shows this very file */
    g_autofree char *shown = readme_block("baseline-example");
    ck_assert_msg(strcmp(shown, first) == 0, "the README shows:\n%s\nthe run wrote:\n%s", shown,
                  first);
    result_clear(&again);
    gl_remove_tree(parent);
    g_free(dir);
}
END_TEST

/* A failing test and a leak in one run: the task's message names both. */
START_TEST(test_rake_failing_suite_and_leak_both_named)
{
    Result r = { 0 };
    char *dir = rake_run(&r, NULL, ARGS("test:valgrind", "TEST=test/{count,failing}_test.rb"));
    ck_assert_int_ne(r.status, 0);
    gl_assert_line(r.out, "2 runs, 2 assertions, 1 failures");
    gl_assert_line(r.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^GemLeak::Error: test suite failed \\(status 1\\), and gemleak found 1 finding "
                          "\\(leaks or memory errors\\) in the extension: both are reported above$");
    forget(&r, dir);
}
END_TEST

/* ---- --per-test: which test leaked -------------------------------------------- */

/* The line of the example gem's @file (relative to it) that holds @needle. */
static guint sample_line(const char *file, const char *needle)
{
    g_autofree char *relative = g_build_filename("sample-gem", file, NULL);
    g_autofree char *path = gl_test_fixture(relative);
    g_autofree char *text = gl_test_read(path, NULL);
    const char *at = strstr(text, needle);
    ck_assert_msg(at != NULL, "%s has no %s", file, needle);
    guint line = 1;
    for (const char *c = text; c < at; c++)
        line += *c == '\n';
    return line;
}

/* gemleak run ARGS --format text --format json:report.json -- COMMAND, in a
 * fresh copy of the example gem; *report (nullable) receives the JSON
 * report's root, which @parser owns.
 * Returns: (transfer full) the copy's directory. */
static char *sample_run(Result *result, const char *const *args, const char *const *command,
                        JsonParser *parser, JsonObject **report)
{
    char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_strdup_printf("cp -a '%s/.' '%s'", sample_gem, dir);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autofree char *json = g_build_filename(dir, "report.json", NULL);
    g_autofree char *json_format = g_strconcat("json:", json, NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    g_ptr_array_add(argv, (gpointer) "run");
    for (const char *const *arg = args; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *formats[] = { "--format", "text", "--format", json_format, "--", NULL };
    for (const char *const *arg = formats; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    for (const char *const *arg = command; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    run_command(result, dir, NULL, (const char *const *) argv->pdata);
    ck_assert_msg(json_parser_load_from_file(parser, json, NULL), "no JSON report:\n%s",
                  result->err);
    *report = json_node_get_object(json_parser_get_root(parser));
    return dir;
}

/* The one finding of @report: there must be exactly one. */
static JsonObject *only_finding(JsonObject *report, const char *err)
{
    JsonArray *findings = json_object_get_array_member(report, "findings");
    ck_assert_msg(json_array_get_length(findings) == 1, "%u findings:\n%s",
                  json_array_get_length(findings), err);
    return json_array_get_object_element(findings, 0);
}

/* "NAME @ LOCATION; ..." of the finding's tests: the whole list, so that an
 * assertion on it also says that no clean test is named. */
static char *finding_tests(JsonObject *finding)
{
    JsonArray *tests = json_object_get_array_member(finding, "tests");
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(tests); i++) {
        JsonObject *test = json_array_get_object_element(tests, i);
        g_string_append_printf(out, "%s%s @ %s", i > 0 ? "; " : "",
                               json_object_get_string_member(test, "name"),
                               json_object_get_string_member(test, "location"));
    }
    return g_string_free(out, FALSE);
}

/* Three minitest tests, one of which leaks: --per-test names exactly that
 * one; without it the report is what it always was, the same leak with
 * the same numbers. */
START_TEST(test_per_test_minitest)
{
    guint line = sample_line("test/words_test.rb", "def test_count");
    const char *command[] = { "ruby", "-Ilib", "-Itest", "test/words_test.rb", NULL };
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *report = NULL;
    Result r = { 0 };
    char *dir = sample_run(&r, ARGS("--per-test"), command, parser, &report);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.out, "^3 runs, 3 assertions, 0 failures, 0 errors");
    JsonObject *finding = only_finding(report, r.err);
    g_autofree char *tests = finding_tests(finding);
    g_autofree char *expected = g_strdup_printf("WordsTest#test_count @ test/words_test.rb:%u", line);
    ck_assert_str_eq(tests, expected);
    ck_assert(!json_object_get_boolean_member(finding, "lost_at_exit"));
    ck_assert(!json_object_get_boolean_member(finding, "lost_before_tests"));
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    g_autofree char *pattern = g_strdup_printf("^6 bytes in 1 block is definitely lost\n"
                                               "first lost in WordsTest#test_count "
                                               "\\(test/words_test\\.rb:%u\\)$", line);
    gl_assert_line(r.err, pattern);
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 6 bytes$");
    g_autofree char *message = g_strdup(json_object_get_string_member(finding, "message"));
    g_autofree char *fingerprint = g_strdup(json_object_get_string_member(finding, "fingerprint"));
    forget(&r, dir);

    g_autoptr(JsonParser) plain_parser = json_parser_new();
    Result plain = { 0 };
    dir = sample_run(&plain, NULL, command, plain_parser, &report);
    ck_assert_msg(plain.status == 1, "status %d:\n%s", plain.status, plain.err);
    finding = only_finding(report, plain.err);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(finding, "tests")), 0);
    ck_assert(!json_object_get_boolean_member(finding, "lost_at_exit"));
    ck_assert_str_eq(json_object_get_string_member(finding, "message"), message);
    ck_assert_str_eq(json_object_get_string_member(finding, "fingerprint"), fingerprint);
    JsonObject *summary = json_object_get_object_member(report, "summary");
    ck_assert_int_eq(json_object_get_int_member(
                         json_object_get_object_member(summary, "skipped_by_reason"),
                         "repeated_by_later_check"), 0);
    gl_assert_no_line(plain.err, "first lost|at exit|repeated|--per-test");
    gl_assert_line(plain.err, "^gemleak: FAIL: 1 leak losing 6 bytes$");
    forget(&plain, dir);
}
END_TEST

START_TEST(test_per_test_rspec)
{
    guint line = sample_line("spec/words_spec.rb", "it \"counts them\"");
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *report = NULL;
    Result r = { 0 };
    char *dir = sample_run(&r, ARGS("--per-test"), ARGS("rspec", "spec/words_spec.rb"), parser,
                           &report);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.out, "^3 examples, 0 failures$");
    g_autofree char *tests = finding_tests(only_finding(report, r.err));
    g_autofree char *expected = g_strdup_printf("Tally words counts them @ spec/words_spec.rb:%u",
                                                line);
    ck_assert_str_eq(tests, expected);
    forget(&r, dir);
}
END_TEST

START_TEST(test_per_test_test_unit)
{
    guint line = sample_line("test/words_unit_test.rb", "def test_count");
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *report = NULL;
    Result r = { 0 };
    char *dir = sample_run(&r, ARGS("--per-test"), ARGS("ruby", "test/words_unit_test.rb"), parser,
                           &report);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.out, "^3 tests, 3 assertions, 0 failures, 0 errors");
    g_autofree char *tests = finding_tests(only_finding(report, r.err));
    g_autofree char *expected = g_strdup_printf("WordsUnitTest#test_count @ "
                                                "test/words_unit_test.rb:%u", line);
    ck_assert_str_eq(tests, expected);
    forget(&r, dir);
}
END_TEST

/* Per test file: the file that leaked, of two. A forked child attributes
 * in its own process: the test it was forked in. */
START_TEST(test_per_test_file_and_fork)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *report = NULL;
    Result r = { 0 };
    char *dir = sample_run(&r, ARGS("--per-test=file"),
                           ARGS("ruby", "-Ilib", "-Itest", "-e",
                                "ARGV.each { |f| require File.expand_path(f) }",
                                "test/frequencies_test.rb", "test/words_test.rb"),
                           parser, &report);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.out, "^5 runs, 5 assertions, 0 failures");
    g_autofree char *tests = finding_tests(only_finding(report, r.err));
    ck_assert_str_eq(tests, "test/words_test.rb @ test/words_test.rb");
    gl_assert_line(r.err, "^first lost in test/words_test\\.rb$");
    forget(&r, dir);

    guint line = sample_line("test/forking_test.rb", "def test_count_in_a_child");
    g_autoptr(JsonParser) fork_parser = json_parser_new();
    Result forked = { 0 };
    dir = sample_run(&forked, ARGS("--per-test"), ARGS("ruby", "-Ilib", "-Itest",
                                                       "test/forking_test.rb"),
                     fork_parser, &report);
    ck_assert_msg(forked.status == 1, "status %d:\n%s", forked.status, forked.err);
    gl_assert_line(forked.out, "^2 runs, 2 assertions, 0 failures");
    JsonObject *finding = only_finding(report, forked.err);
    g_autofree char *fork_tests = finding_tests(finding);
    g_autofree char *expected = g_strdup_printf("ForkingTest#test_count_in_a_child @ "
                                                "test/forking_test.rb:%u", line);
    ck_assert_str_eq(fork_tests, expected);
    /* the child's leak, in the child alone */
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(finding, "pids")), 1);
    forget(&forked, dir);

    /* no test framework: said, and the leak reported as ever */
    g_autoptr(JsonParser) script_parser = json_parser_new();
    Result script = { 0 };
    dir = sample_run(&script, ARGS("--per-test"),
                     ARGS("ruby", "-Ilib", "-e", "require 'tally'; Tally.count('a b')"),
                     script_parser, &report);
    ck_assert_msg(script.status == 1, "status %d:\n%s", script.status, script.err);
    gl_assert_line(script.err, "^gemleak: warning: --per-test: no process ran a test under "
                               "minitest, test-unit or RSpec");
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(
                          only_finding(report, script.err), "tests")), 0);
    forget(&script, dir);
}
END_TEST

/* The Rake setting: per_test = true, and :file. */
START_TEST(test_per_test_rake_setting)
{
    guint line = sample_line("test/words_test.rb", "def test_count");
    Result r = { 0 };
    char *dir = rake_run(&r, ARGS("PER_TEST=true"), ARGS("test:valgrind", "TEST=test/words_test.rb"));
    ck_assert_int_ne(r.status, 0);
    g_autofree char *pattern = g_strdup_printf("^first lost in WordsTest#test_count "
                                               "\\(test/words_test\\.rb:%u\\)$", line);
    gl_assert_line(r.err, pattern);
    gl_assert_line(r.err, "^GemLeak::Error: gemleak: 1 finding ");
    forget(&r, dir);

    Result file = { 0 };
    dir = rake_run(&file, ARGS("PER_TEST=file"), ARGS("spec:valgrind", "SPEC=spec/words_spec.rb"));
    ck_assert_int_ne(file.status, 0);
    gl_assert_line(file.err, "^first lost in spec/words_spec\\.rb$");
    forget(&file, dir);
}
END_TEST

/* ---- the gem, as a user installs it ------------------------------------------ */

#define TEST_USER "gemleak-test"

/* The gem route from a fresh clone, as a user without privileges: the
 * README's commands build and install the gem into a private GEM_HOME; a
 * small gem whose Rakefile is the README's snippet fails on a planted leak
 * and passes without it, with no gemleak on PATH and no GEMLEAK;
 * $GEM_HOME/bin/gemleak runs --version, filter and run; Bundler, with the
 * README's commands (its own path, no GEM_HOME), builds it from the
 * README's Gemfile line (git:, a file:// clone) and `bundle exec gemleak`
 * runs, also with path: after make; make install PREFIX=$HOME/.local
 * gives a binary and a Ruby library that work (tests/gem_from_clone.sh).
 * Run as root (CI), the steps run as TEST_USER, made when missing. */
START_TEST(test_gem_from_a_fresh_clone)
{
    g_autofree char *root = g_path_get_dirname(gl_test_fixtures);
    g_autofree char *git_dir = g_build_filename(root, ".git", NULL);
    ck_assert_msg(g_file_test(git_dir, G_FILE_TEST_EXISTS),
                  "%s is not a git checkout: this test installs the gem from a clone of it", root);
    g_autofree char *work = gl_test_tmpdir();
    g_autofree char *clone = g_build_filename(work, "gemleak", NULL);
    g_autofree char *clone_cmd = g_strdup_printf("git clone -q '%s' '%s' && mkdir '%s/home' '%s/gems' '%s/tmp'",
                                                 root, clone, work, work, work);
    const char *sh_clone[] = { "sh", "-c", clone_cmd, NULL };
    g_autofree char *clone_err = NULL;
    ck_assert_msg(gl_test_spawn(sh_clone, NULL, &clone_err) == 0, "git clone: %s", clone_err);

    g_autofree char *install = readme_block("gem-install");
    g_autofree char *gemfile = readme_block("gemfile-line");
    g_autofree char *bundle = readme_block("bundle-install");
    g_autofree char *snippet = readme_block("rakefile-snippet");
    const char *names[] = { "install.sh", "Gemfile.line", "bundle.sh", "Rakefile.snippet" };
    const char *blocks[] = { install, gemfile, bundle, snippet };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *path = g_build_filename(work, names[i], NULL);
        gl_test_write(path, blocks[i], -1);
    }

    g_autofree char *home = g_build_filename(work, "home", NULL);
    g_autofree char *home_var = g_strconcat("HOME=", home, NULL);
    g_autofree char *gem_home = g_strconcat("GEM_HOME=", work, "/gems", NULL);
    g_autofree char *tmp_var = g_strconcat("TMPDIR=", work, "/tmp", NULL);
    g_autofree char *script = g_build_filename(clone, "tests", "gem_from_clone.sh", NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    if (geteuid() == 0) {
        g_autofree char *prepare = g_strdup_printf(
            "id -u " TEST_USER " >/dev/null 2>&1 || useradd --system --user-group --no-create-home "
            "--home-dir /nonexistent --shell /bin/sh " TEST_USER " && chown -R " TEST_USER ": '%s'",
            work);
        const char *sh_prepare[] = { "sh", "-c", prepare, NULL };
        g_autofree char *prepare_err = NULL;
        ck_assert_msg(gl_test_spawn(sh_prepare, NULL, &prepare_err) == 0, "making the user %s: %s",
                      TEST_USER, prepare_err);
        const char *as_user[] = { "runuser", "-u", TEST_USER, "--" };
        for (guint i = 0; i < G_N_ELEMENTS(as_user); i++)
            g_ptr_array_add(argv, (gpointer) as_user[i]);
    }
    const char *rest[] = { "env", "-i", home_var, gem_home, tmp_var, "PATH=/usr/bin:/bin",
                           "LANG=C.UTF-8", "sh", script, clone, work, NULL };
    for (guint i = 0; i < G_N_ELEMENTS(rest); i++)
        g_ptr_array_add(argv, (gpointer) rest[i]);

    Result r = { 0 };
    run_command(&r, work, NULL, (const char *const *) argv->pdata);
    /* Check's messages are short: the whole log goes to standard error */
    if (r.status != 0)
        fprintf(stderr, "test_gem_from_a_fresh_clone:\n%s\n%s\n", r.out, r.err);
    const char *failed = strstr(r.out, "FAILED: ");
    ck_assert_msg(r.status == 0, "status %d: %.300s (the whole log is above)", r.status,
                  failed != NULL ? failed : "see the log");
    gl_assert_line(r.out, "^== done$");
    result_clear(&r);
    gl_remove_tree(work);
}
END_TEST

/* make install for a package: everything under DESTDIR, and the Ruby
 * library told where the binary will be once the package is installed. */
START_TEST(test_make_install_destdir)
{
    g_autofree char *root = g_path_get_dirname(gl_test_fixtures);
    g_autofree char *destdir = gl_test_tmpdir();
    g_autofree char *install = g_strdup_printf(
        "make -s -C '%s' install DESTDIR='%s' PREFIX=/usr RUBYLIBDIR=/usr/lib/ruby/vendor_ruby", root,
        destdir);
    const char *make[] = { "sh", "-c", install, NULL };
    g_autofree char *make_err = NULL;
    ck_assert_msg(gl_test_spawn(make, NULL, &make_err) == 0, "make install failed:\n%s", make_err);
    const char *installed[] = { "usr/bin/gemleak", "usr/share/man/man1/gemleak.1",
                                "usr/share/gemleak/suppressions/ruby.supp",
                                "usr/lib/ruby/vendor_ruby/gemleak.rb",
                                "usr/lib/ruby/vendor_ruby/gemleak/rake.rb",
                                "usr/lib/ruby/vendor_ruby/gemleak/installed.rb" };
    for (guint i = 0; i < G_N_ELEMENTS(installed); i++) {
        g_autofree char *path = g_build_filename(destdir, installed[i], NULL);
        ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_REGULAR), "%s not installed", installed[i]);
    }
    g_autofree char *lib = g_build_filename(destdir, "usr/lib/ruby/vendor_ruby", NULL);
    const char *ruby[] = { "ruby", "-I", lib, "-rgemleak", "-e", "print GemLeak::INSTALLED_EXECUTABLE", NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, ruby);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "/usr/bin/gemleak");
    result_clear(&r);
    gl_remove_tree(destdir);
}
END_TEST

/* Building the gem stops, when a library's headers are missing, with one
 * message naming the packages to install. */
START_TEST(test_gem_build_names_missing_packages)
{
    g_autofree char *work = gl_test_tmpdir();
    g_autofree char *extconf = gl_test_project_file("ext/gemleak/extconf.rb");
    const char *argv[] = { "ruby", extconf, NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PKG_CONFIG", "false", TRUE);
    Result r = { 0 };
    run_command(&r, work, env, argv);
    ck_assert_int_ne(r.status, 0);
    gl_assert_line(r.err, "^gemleak: cannot build the gemleak binary: missing libxml-2\\.0, glib-2\\.0, "
                          "gio-2\\.0, json-glib-1\\.0, zlib \\(pkg-config finds no \\.pc file\\)\\.$");
    gl_assert_line(r.err, "^  Debian, Ubuntu: sudo apt-get install gcc make pkg-config libxml2-dev "
                          "libglib2\\.0-dev libjson-glib-dev zlib1g-dev$");
    gl_assert_line(r.err, "^  Fedora: +sudo dnf install gcc make pkgconf-pkg-config libxml2-devel "
                          "glib2-devel json-glib-devel zlib-devel$");
    g_autofree char *makefile = g_build_filename(work, "Makefile", NULL);
    ck_assert(!g_file_test(makefile, G_FILE_TEST_EXISTS));
    result_clear(&r);
    gl_remove_tree(work);
}
END_TEST

/* ---- gemleak itself ---------------------------------------------------- */

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

/* ---- the manual ---------------------------------------------------------- */

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

/* Runs the test cases named in @names (NULL-terminated) in a child each, at
 * once: each scenario is a Ruby process under Valgrind, and the machine has
 * more than one core.
 * Returns: how many tests failed in all. */
/* ---- verdicts: every shape of the probe, live on this machine's Ruby --------- */

static const char *const probe_bugs[] = {
    "r_malloc", "r_calloc", "r_realloc", "r_strdup", "r_xmalloc", "r_alloc_n", "r_xcalloc",
    "r_xrealloc", "r_ruby_strdup", "r_typed_nofree", "r_st_table", "r_asprintf", "r_zlib",
    "r_two_sites", "r_calls_init_named", "r_xmalloc_gc", "r_uaf_two_lines", "r_uaf_tail",
    "r_double_free", "r_overflow", NULL,
};

/* Adds the function of every target frame of @frames (a JSON array) to @fns. */
static void target_functions(JsonArray *frames, GHashTable *fns)
{
    for (guint i = 0; frames != NULL && i < json_array_get_length(frames); i++) {
        JsonObject *frame = json_array_get_object_element(frames, i);
        if (json_object_get_boolean_member(frame, "in_target") &&
            !json_object_get_null_member(frame, "fn"))
            g_hash_table_add(fns, (gpointer) json_object_get_string_member(frame, "fn"));
    }
}

/* Every real bug found and certain; nothing else but Ruby's own memory that
 * a stripped Ruby leaves uncertain; Init code and Ruby's memory behind the
 * Ruby API left out (issue 9, on Debian's Ruby). */
START_TEST(test_probe_verdicts)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "probe.json", NULL);
    g_autofree char *format = g_strdup_printf("json:%s", json);
    g_autofree char *include = g_strdup_printf("-I%s/probe", ext_dir);
    g_autofree char *script = g_strdup_printf("%s/probe/probe_run.rb", ext_dir);
    Result r = { 0 };
    run_argv(&r, gemleak_binary, "run", "-O", "probe", "--format", "text", "--format", format,
             "--", "ruby", "--disable-gems", include, script, NULL);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);

    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, json, NULL));
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    g_autoptr(GHashTable) found = g_hash_table_new(g_str_hash, g_str_equal);
    guint certain = 0, zlib = 0;
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        g_autoptr(GHashTable) fns = g_hash_table_new(g_str_hash, g_str_equal);
        target_functions(json_object_get_array_member(finding, "frames"), fns);
        JsonArray *stacks = json_object_get_array_member(finding, "stacks");
        for (guint s = 0; s < json_array_get_length(stacks); s++)
            target_functions(json_object_get_array_member(json_array_get_object_element(stacks, s),
                                                          "frames"), fns);
        gboolean is_certain = json_object_get_boolean_member(finding, "certain");
        certain += is_certain;
        zlib += g_hash_table_contains(fns, "r_zlib");
        gboolean known = FALSE;
        for (const char *const *bug = probe_bugs; *bug != NULL; bug++) {
            if (!g_hash_table_contains(fns, *bug))
                continue;
            known = TRUE;
            g_hash_table_add(found, (gpointer) *bug);
            ck_assert_msg(is_certain, "%s is uncertain\n%s", *bug, r.err);
        }
        /* probe.c: an n_* method's memory is never certain, at most
         * uncertain on a Ruby without symbols; which of the kept objects
         * Valgrind calls definitely lost moves with the heap's layout. */
        gboolean in_n = FALSE;
        GHashTableIter iter;
        gpointer fn;
        g_hash_table_iter_init(&iter, fns);
        while (g_hash_table_iter_next(&iter, &fn, NULL))
            in_n |= g_str_has_prefix(fn, "n_");
        if (!known)
            ck_assert_msg(!is_certain && in_n, "reported but no bug: %s\n%s",
                          json_object_get_string_member(finding, "message"), r.err);
    }
    for (const char *const *bug = probe_bugs; *bug != NULL; bug++)
        ck_assert_msg(g_hash_table_contains(found, *bug), "%s was missed\n%s", *bug, r.err);
    /* r_two_sites is two findings. zlib's z_stream and its deflate state
     * point to each other: Valgrind calls one block of such a cycle
     * definitely lost and the rest indirectly, or, depending on where the
     * heap put them, both definitely lost. */
    ck_assert_msg(zlib == 1 || zlib == 2, "%u findings of r_zlib\n%s", zlib, r.err);
    ck_assert_uint_eq(certain, g_strv_length((char **) probe_bugs) + 1 + (zlib - 1));
    /* the use-after-free touched at two lines is one finding, and the one
     * whose access was a tail call is placed where it was freed */
    gl_assert_line(r.err, "^Invalid (read|write) of size 1, and 1 other access to the same freed block");
    gl_assert_no_line(r.err, "probe_setup_tables");
    result_discard(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A suite whose extension never loaded (not built: a LoadError) passed. */
START_TEST(test_extension_that_never_loaded)
{
    Result named = { 0 };
    gemleak_run(&named, NULL, NULL, ARGS("-O", "redcarpet"), "require 'redcarpet'");
    ck_assert_msg(named.status == 2, "status %d\n%s", named.status, named.err);
    gl_assert_line(named.err, "^gemleak: --object redcarpet matches no extension the run loaded: "
                              "it loaded none");
    gl_assert_no_line(named.err, "pass");
    result_discard(&named);

    Result unnamed = { 0 };
    gemleak_run(&unnamed, NULL, NULL, NO_ARGS, "require 'redcarpet'");
    ck_assert_msg(unnamed.status == 2, "status %d\n%s", unnamed.status, unnamed.err);
    gl_assert_line(unnamed.err, "no Ruby process of the run loaded a native extension");
    result_discard(&unnamed);
}
END_TEST

/* ---- run: what runs under Valgrind, and what is kept (issue 12) ------------- */

/* Every <exe> of the XML kept in @dir (compressed or not), one a line. */
static char *exes_in(const char *dir)
{
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && for f in *.xml*; do case $f in *.gz) zcat \"$f\";; *) cat \"$f\";; esac; "
        "done | sed -n 's:.*<exe>\\(.*\\)</exe>.*:\\1:p' | sort -u", dir);
    const char *argv[] = { "sh", "-c", script, NULL };
    char *out = NULL;
    ck_assert_int_eq(gl_test_spawn(argv, &out, NULL), 0);
    return out;
}

/* The arguments of every process Valgrind traced (but Valgrind's own), one
 * a line, sorted. */
static char *arguments_in(const char *dir)
{
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && for f in *.xml*; do case $f in *.gz) zcat \"$f\";; *) cat \"$f\";; esac | "
        "sed -n '/<argv>/,/<\\/argv>/s:.*<arg>\\(.*\\)</arg>.*:\\1:p'; done | sort",
        dir);
    const char *argv[] = { "sh", "-c", script, NULL };
    char *out = NULL;
    ck_assert_int_eq(gl_test_spawn(argv, &out, NULL), 0);
    return out;
}

/* A rake test whose task compiles the extensions first, with
 * --spare-launchers: rake is a launcher and runs outside Valgrind, as do
 * extconf.rb, make and the compiler; the test process alone is traced. */
START_TEST(test_build_tools_stay_out_of_valgrind)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *gem = g_build_filename(dir, "gem", NULL);
    g_autofree char *copy = g_strdup_printf("cp -a '%s' '%s' && rm -rf '%s/tmp' '%s'/lib/tally/*.so",
                                            sample_gem, gem, gem, gem);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--keep-xml", keep, "--",
                           "rake", "-I", lib, "test", NULL };
    Result r = { 0 };
    run_command(&r, gem, NULL, argv);
    /* count_test.rb leaks; the tests pass */
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: ran under Valgrind .*; rake ran outside it, as a launcher "
                          "\\(--spare-launchers\\)$");
    gl_assert_line(r.err, "copy_text");
    g_autofree char *exes = exes_in(keep);
    gl_assert_line(exes, "ruby[0-9.]*$");
    gl_assert_no_line(exes, "/(sh|dash|bash|cc|gcc[-0-9]*|cc1|as|ld|collect2|g?make)$");
    g_autofree char *arguments = arguments_in(keep);
    ck_assert_msg(g_strcmp0(arguments, "") != 0, "nothing traced");
    gl_assert_line(arguments, "rake_test_loader\\.rb$");     /* the tests, once */
    gl_assert_no_line(arguments, "(/rake|extconf\\.rb)$");
    gl_assert_no_line(r.err, "truncated");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* Launchers made to order: a bin/ directory with @name, a Ruby script of
 * @code. Returns: (transfer full): its path. */
static char *write_launcher(const char *dir, const char *name, const char *code)
{
    g_autofree char *bin = g_build_filename(dir, "bin", NULL);
    g_mkdir_with_parents(bin, 0700);
    char *path = g_build_filename(bin, name, NULL);
    g_autofree char *text = g_strdup_printf("#!/usr/bin/env ruby\n%s", code);
    gl_test_write(path, text, -1);
    g_chmod(path, 0755);
    return path;
}

static char **leaky_environment(void)
{
    g_autofree char *leaky = g_build_filename(ext_dir, "leaky", NULL);
    return g_environ_setenv(g_get_environ(), "RUBYLIB", leaky, TRUE);
}

/* What `bundle exec` does with a Ruby script: it loads it into its own
 * process. That process then runs the suite, and goes under Valgrind. */
START_TEST(test_a_launcher_that_hands_over_is_traced)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *bundle = write_launcher(
        dir, "bundle", "file = ARGV[1]\nARGV.replace(ARGV[2..])\n$0 = file\nKernel.load(file)\n");
    g_autofree char *suite = g_build_filename(dir, "suite.rb", NULL);
    gl_test_write(suite, "require 'leaky'\nLeaky.leak\nputs \"suite ran: #{ARGV.join(' ')}\"\n", -1);
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--keep-xml", keep, "--",
                           bundle, "exec", suite, "one", "two", NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^suite ran: one two$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    g_autofree char *arguments = arguments_in(keep);
    gl_assert_line(arguments, "/suite\\.rb$");
    gl_assert_no_line(arguments, "/bundle$");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A "launcher" that loads the extension itself is no launcher: it runs
 * again, from the start, under Valgrind, and its leak is found. */
START_TEST(test_a_launcher_that_loads_the_extension_runs_again)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *rake = write_launcher(
        dir, "rake", "$stdout.puts 'rake started'\nrequire 'leaky'\nLeaky.leak\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: rake \\(pid \\d+\\) loaded \\S+/leaky\\.so itself: it runs "
                          "again from the start, under Valgrind$");
    gl_assert_line(r.out, "^rake started$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A process forked from a launcher cannot start again: when it loads the
 * extension, what it did is not checked, and the run never passes; nor
 * does gemleak filter on the directory the run kept. */
START_TEST(test_a_launchers_fork_that_loads_the_extension_fails)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *rake = write_launcher(
        dir, "rake", "Process.wait(fork { require 'leaky' })\n"
                    "system(RbConfig.ruby, '-e', 'require %(leaky)')\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--keep-xml", keep, "--",
                           rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: process \\d+: forked from the launcher rake, it loaded "
                          "\\S+/leaky\\.so outside Valgrind: what it ran was not checked; run "
                          "again without --spare-launchers$");
    gl_assert_line(r.err, "^gemleak: INCOMPLETE: ");
    gl_assert_no_line(r.err, "^gemleak: pass");
    result_clear(&r);

    const char *again[] = { gemleak_binary, "filter", keep, NULL };
    run_command(&r, dir, NULL, again);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: process \\d+: forked from the launcher rake, it loaded "
                          "\\S+/leaky\\.so outside Valgrind: what it ran was not checked$");
    gl_assert_line(r.out, "^gemleak: INCOMPLETE: ");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A directory with the leaky extension built in lib/, as a gem's checkout
 * has it, and suite.rb, which leaks once. Returns: (transfer full) its path. */
static char *leaky_project(void)
{
    char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_strdup_printf("mkdir -p '%s/lib' && cp '%s/leaky/leaky.so' '%s/lib/'",
                                            dir, ext_dir, dir);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autofree char *suite = g_build_filename(dir, "suite.rb", NULL);
    gl_test_write(suite, "require 'leaky'\nLeaky.leak\nputs 'suite ran'\n", -1);
    return dir;
}

/* Tests started below the tools a build uses to start programs (xargs,
 * find -exec, make, awk's system()) run under Valgrind like any other
 * Ruby, and the leak is found. */
START_TEST(test_ruby_below_build_tools_is_checked)
{
    g_autofree char *dir = leaky_project();
    g_autofree char *makefile = g_build_filename(dir, "Makefile", NULL);
    gl_test_write(makefile, "test:\n\truby -Ilib suite.rb\n", -1);
    const char *commands[] = {
        "echo suite.rb | xargs ruby -Ilib",
        "find . -name suite.rb -exec ruby -Ilib {} \\;",
        "make -s test",
        "awk 'BEGIN { system(\"ruby -Ilib suite.rb\") }'",
    };
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
        const char *argv[] = { gemleak_binary, "run", "--", "sh", "-c", commands[i], NULL };
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 1, "%s: status %d\n%s", commands[i], r.status, r.err);
        gl_assert_line(r.out, "^suite ran$");
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
        result_clear(&r);
    }
    /* A Ruby that runs outside Valgrind all the same (below a program the
     * user told Valgrind to skip, without the variable that would put it
     * under Valgrind) and loads the extension: the run does not pass, and
     * says which process it was. */
    const char *skipped[] = { gemleak_binary, "run", "--valgrind-opt=--trace-children-skip=*xargs",
                              "--", "sh", "-c",
                              "echo suite.rb | xargs env -u GEMLEAK_VALGRIND ruby -Ilib", NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, skipped);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: process \\d+: it loaded \\S+/lib/leaky\\.so outside "
                          "Valgrind \\(it has no XML: a program Valgrind does not trace started "
                          "it\\): what it ran was not checked$");
    gl_assert_line(r.err, "^gemleak: INCOMPLETE: ");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A launcher whose Ruby child gets an environment of its own (RUBYOPT
 * replaced or removed, everything cleared, gemleak's variables deleted):
 * by default the launcher is traced, Valgrind follows every exec whatever
 * the environment, and the child's leak is found. */
START_TEST(test_ruby_with_its_own_environment_is_checked)
{
    g_autofree char *dir = leaky_project();
    g_autofree char *lib = g_build_filename(dir, "lib", NULL);
    const char *starts[] = {
        "system({'RUBYOPT' => '-W0'}, RbConfig.ruby, '-Ilib', 'suite.rb')",
        "system({'RUBYOPT' => nil}, RbConfig.ruby, '-Ilib', 'suite.rb')",
        "system({'PATH' => ENV['PATH']}, RbConfig.ruby, '-Ilib', 'suite.rb', unsetenv_others: true)",
        "system('env', '-i', RbConfig.ruby, '-Ilib', 'suite.rb')",
        "ENV.keys.grep(/GEMLEAK/).each { |k| ENV.delete(k) }\nsystem(RbConfig.ruby, '-Ilib', 'suite.rb')",
    };
    for (guint i = 0; i < G_N_ELEMENTS(starts); i++) {
        g_autofree char *rake = write_launcher(dir, "rake", starts[i]);
        const char *argv[] = { gemleak_binary, "run", "--", rake, NULL };
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 1, "%s: status %d\n%s", starts[i], r.status, r.err);
        gl_assert_line(r.out, "^suite ran$");
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
        result_clear(&r);
    }
    (void) lib;
    gl_remove_tree(dir);
}
END_TEST

/* A command that runs no Ruby, or a Ruby that loads no extension, checked
 * nothing: it never passes, and a kept directory read again says the same. */
START_TEST(test_command_that_checks_nothing_never_passes)
{
    g_autofree char *dir = leaky_project();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    const char *const commands[][6] = {
        { "true", NULL },
        { "ruby", "-v", NULL },
        { "sh", "-c", "exit", NULL },
        { "ruby", "-e", "puts 1", NULL },
    };
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
        for (guint with_object = 0; with_object < 2; with_object++) {
            g_autoptr(GPtrArray) argv = g_ptr_array_new();
            g_ptr_array_add(argv, (gpointer) gemleak_binary);
            g_ptr_array_add(argv, (gpointer) "run");
            if (with_object) {
                g_ptr_array_add(argv, (gpointer) "-O");
                g_ptr_array_add(argv, (gpointer) "leaky");
            }
            g_ptr_array_add(argv, (gpointer) "--");
            for (const char *const *arg = commands[i]; *arg != NULL; arg++)
                g_ptr_array_add(argv, (gpointer) *arg);
            g_ptr_array_add(argv, NULL);
            Result r = { 0 };
            run_command(&r, dir, NULL, (const char *const *) argv->pdata);
            gl_assert_no_line(r.err, "^gemleak: pass");
            if (i == 3) {
                /* A Ruby ran with the helper and loaded nothing: a usage
                 * error, as before, that says so. */
                ck_assert_msg(r.status == 2, "ruby -e%s: status %d\n%s",
                              with_object ? " -O" : "", r.status, r.err);
                gl_assert_line(r.err, with_object ? "^gemleak: --object leaky matches no "
                                                    "extension the run loaded: it loaded none"
                                                  : "^gemleak: no Ruby process of the run "
                                                    "loaded a native extension");
            } else {
                ck_assert_msg(r.status == 3, "%s%s: status %d\n%s", commands[i][0],
                              with_object ? " -O" : "", r.status, r.err);
                gl_assert_line(r.err, "^gemleak: nothing was checked: no process under Valgrind "
                                      "loaded \\S*leaky\\S*");
                gl_assert_line(r.err, "^gemleak: INCOMPLETE: nothing was checked");
                gl_assert_line(r.err, "^gemleak: exit status 3: nothing was checked");
            }
            result_clear(&r);
        }
    }
    const char *kept[] = { gemleak_binary, "run", "--keep-xml", keep, "--", "ruby", "-v", NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, kept);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    result_clear(&r);
    const char *again[] = { gemleak_binary, "filter", keep, NULL };
    run_command(&r, dir, NULL, again);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^gemleak: INCOMPLETE: nothing was checked");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A command that fails before any Ruby starts (a compiler's error, a
 * missing gem's "command not found") is a failing command, exit status 4,
 * as when the tests fail: not Valgrind or gemleak trouble (3). That
 * nothing was checked is still said. */
START_TEST(test_command_that_fails_before_ruby_starts)
{
    g_autofree char *dir = leaky_project();
    const char *failing = "echo 'make: *** [compile] Error 1' >&2; exit 2";
    for (guint with_object = 0; with_object < 2; with_object++) {
        const char *plain[] = { gemleak_binary, "run", "--", "sh", "-c", failing, NULL };
        const char *object[] = { gemleak_binary, "run", "-O", "leaky", "--", "sh", "-c", failing, NULL };
        const char *const *argv = with_object ? object : plain;
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 4, "%s: status %d\n%s", with_object ? "-O" : "", r.status, r.err);
        gl_assert_line(r.err, "^gemleak: exit status 4: the command failed \\(exit status 2\\); "
                              "nothing was checked$");
        gl_assert_line(r.err, "^gemleak: INCOMPLETE: nothing was checked");
        gl_assert_no_line(r.err, "^gemleak: pass");
        result_discard(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

/* A CI shard whose launcher forked a process that loaded the extension
 * outside Valgrind: its JSON report, merged, keeps the merge from passing,
 * and says why. */
START_TEST(test_a_shard_with_an_unchecked_process_never_merges_into_a_pass)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *rake = write_launcher(
        dir, "rake", "Process.wait(fork { require 'leaky' })\n"
                    "system(RbConfig.ruby, '-e', 'require %(leaky)')\n");
    g_autofree char *shard = g_build_filename(dir, "shard.json", NULL);
    g_autofree char *format = g_strconcat("json:", shard, NULL);
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--format", format, "--",
                           rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    result_clear(&r);

    const char *merge[] = { gemleak_binary, "filter", shard, NULL };
    Result merged = { 0 };
    run_command(&merged, dir, env, merge);
    ck_assert_msg(merged.status == 3, "status %d\n%s%s", merged.status, merged.out, merged.err);
    gl_assert_line(merged.out, "^gemleak: INCOMPLETE: no findings in what Valgrind saw; 1 process "
                               "loaded an extension outside Valgrind \\(see gemleak's messages\\)$");
    gl_assert_line(merged.err, "^gemleak: \\S+/shard\\.json: process \\d+: forked from the launcher "
                               "rake, it loaded \\S+/leaky\\.so outside Valgrind: what it ran was "
                               "not checked; run again without --spare-launchers$");
    result_clear(&merged);
    gl_remove_tree(dir);
}
END_TEST

/* Item 13: a Ruby that puts itself under Valgrind runs again exactly as it
 * was started. `ruby -I lib -C sub`: Ruby has changed directory (and
 * expanded lib from the first one) before the helper loads. */
START_TEST(test_a_ruby_started_with_chdir_goes_under_valgrind)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *lib = g_build_filename(dir, "lib", NULL);
    g_autofree char *sub = g_build_filename(dir, "sub", NULL);
    g_mkdir_with_parents(lib, 0700);
    g_mkdir_with_parents(sub, 0700);
    g_autofree char *marker = g_build_filename(lib, "marker.rb", NULL);
    gl_test_write(marker, "MARKER = 'from lib'\n", -1);
    g_autofree char *suite = g_build_filename(sub, "suite.rb", NULL);
    gl_test_write(suite, "require 'marker'\nrequire 'leaky'\nLeaky.leak\n"
                         "puts \"suite ran in #{File.basename(Dir.pwd)}, #{MARKER}\"\n", -1);
    g_autofree char *rake = write_launcher(
        dir, "rake", "system(RbConfig.ruby, '-I', 'lib', '-C', 'sub', 'suite.rb') or abort\n"
                     "system(RbConfig.ruby, '-wCsub', '-e', 'require %(leaky); "
                     "puts %(-e ran in ) + File.basename(Dir.pwd)') or abort\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^suite ran in sub, from lib$");
    gl_assert_line(r.out, "^-e ran in sub$");
    gl_assert_no_line(r.err, "chdir");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A script piped on standard input: Ruby has read its first line (and
 * taken the shebang's switches) before the helper loads; under Valgrind
 * the same script runs, with the same $0, switches and DATA. */
START_TEST(test_a_script_on_standard_input_goes_under_valgrind)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *rake = write_launcher(
        dir, "rake",
        "script = %(#!/usr/bin/env ruby -w\nrequire 'leaky'\nLeaky.leak\n) +\n"
        "  %(puts \"piped script ran: \\#{$0} \\#{$VERBOSE.inspect} \\#{__LINE__} \\#{DATA.read.chomp}\"\n) +\n"
        "  %(__END__\nthe data\n)\n"
        "IO.popen([RbConfig.ruby], 'w') { |io| io.write(script) }\n"
        "abort('the piped script failed') unless $?.success?\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^piped script ran: - true 4 the data$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A child whose RUBYLIB is its own (Rake's ruby with a -I of its own, a
 * suite's system({"RUBYLIB" => ...})) still loads the helper, and is
 * checked. */
START_TEST(test_a_child_with_its_own_rubylib_is_checked)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *leaky = g_build_filename(ext_dir, "leaky", NULL);
    g_autofree char *code = g_strdup_printf(
        "system({'RUBYLIB' => '%s'}, RbConfig.ruby, '-e', "
        "'require %%(leaky); Leaky.leak; puts %%(child ran)') or abort('the child failed')\n",
        leaky);
    g_autofree char *rake = write_launcher(dir, "rake", code);
    const char *argv[] = { gemleak_binary, "run", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^child ran$");
    gl_assert_no_line(r.err, "cannot load such file");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A Ruby below a program Valgrind skips (here make, by the user's own
 * --trace-children-skip) stays out of Valgrind, as the program does; but
 * one that loads the project's extension runs tests: it runs again, from
 * the start, under Valgrind, as a launcher that does. */
START_TEST(test_a_ruby_below_make_that_loads_the_extension_runs_again)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *makefile = g_build_filename(dir, "Makefile", NULL);
    gl_test_write(makefile, "test:\n\t$(RUBY) suite.rb\n", -1);
    g_autofree char *suite = g_build_filename(dir, "suite.rb", NULL);
    gl_test_write(suite, "require 'leaky'\nLeaky.leak\nputs 'suite ran'\n", -1);
    /* make below the launcher, and below a Ruby under Valgrind (which
     * skips make, and runs the Ruby below it natively) */
    g_autofree char *rake = write_launcher(
        dir, "rake", "make = %(system('make', '-s', 'RUBY=#{RbConfig.ruby}') or abort('make failed'))\n"
                     "eval(make)\n"
                     "system(RbConfig.ruby, '-e', make) or abort\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers",
                           "--valgrind-opt=--trace-children-skip=make,*/make", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: suite\\.rb \\(pid \\d+\\) loaded \\S+/leaky\\.so itself: it "
                          "runs again from the start, under Valgrind$");
    const char *again = "/leaky.so itself: it runs again from the start, under Valgrind\n";
    guint n_again = gl_test_count(r.err, strlen(r.err), again);
    ck_assert_msg(n_again == 2, "%u restarts\n%s", n_again, r.err);
    gl_assert_line(r.out, "^suite ran$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 200 bytes");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* --trace-launchers (the default) puts the launcher under Valgrind too. */
START_TEST(test_trace_launchers)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *rake = write_launcher(dir, "rake",
                                           "system(RbConfig.ruby, '-e', 'require %(leaky)')\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--trace-launchers", "--keep-xml", keep, "--",
                           rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_no_line(r.err, "as a launcher");
    g_autofree char *arguments = arguments_in(keep);
    gl_assert_line(arguments, "/bin/rake$");
    gl_assert_line(arguments, "^-e$");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* gemleak SIGKILLed in a launcher run: the Valgrind the helper started
 * below the launcher (gemleak's grandchild, out of the kernel's reach
 * through PR_SET_PDEATHSIG) does not run on, nor write on in a directory
 * gemleak clean may remove. */
START_TEST(test_valgrind_below_a_launcher_dies_with_gemleak)
{
    /* A spared launcher whose Ruby child put itself under Valgrind; a
     * traced launcher (the default); a child whose environment it cleared. */
    const struct {
        const char *option;
        const char *start;
    } variants[] = {
        { "--spare-launchers", "system(RbConfig.ruby, '-e', " },
        { "--trace-launchers", "system(RbConfig.ruby, '-e', " },
        { "--trace-launchers", "system('env', '-i', RbConfig.ruby, '-e', " },
    };
    for (guint i = 0; i < G_N_ELEMENTS(variants); i++) {
        g_autofree char *dir = gl_test_tmpdir();
        g_autofree char *code = g_strconcat(variants[i].start, "'$stdout.puts Process.pid; "
                                            "$stdout.flush; sleep 600')\n", NULL);
        g_autofree char *rake = write_launcher(dir, "rake", code);
        g_auto(GStrv) env = leaky_environment();
        env = g_environ_setenv(env, "TMPDIR", dir, TRUE);  /* gemleak killed leaves its directories */
        const char *argv[] = { gemleak_binary, "run", variants[i].option, "-O", "leaky", "--", rake,
                               NULL };
        Live live;
        live_spawn(&live, argv, env);
        g_autofree char *line = live_read_out(&live);
        pid_t valgrind = (pid_t) g_ascii_strtoll(line, NULL, 10);
        ck_assert_int_gt(valgrind, 0);
        g_autofree char *exe_link = g_strdup_printf("/proc/%d/exe", (int) valgrind);
        g_autofree char *exe = g_file_read_link(exe_link, NULL);
        ck_assert_msg(exe != NULL && strstr(exe, "memcheck") != NULL, "pid %d runs %s, not Valgrind",
                      (int) valgrind, exe != NULL ? exe : "?");
        kill(live.pid, SIGKILL);
        int status = 0;
        ck_assert(live_wait(&live, 10, &status));
        ck_assert_int_eq(status, 128 + SIGKILL);
        gboolean gone = gone_within(valgrind, 10);
        if (!gone)  /* a pid that is gone may be another process's by now */
            kill(valgrind, SIGKILL);
        ck_assert_msg(gone, "%s: Valgrind (pid %d), below rake, ran on after gemleak was killed",
                      code, (int) valgrind);
        live_clear(&live);
        gl_remove_tree(dir);
    }
}
END_TEST

/* A bare ruby takes one script: given three files, it gets a loader and
 * runs them all, whatever --jobs. */
START_TEST(test_bare_ruby_runs_every_file)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *names[] = { "a", "b", "c" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *file = g_strdup_printf("%s/%s.rb", dir, names[i]);
        g_autofree char *code = g_strdup_printf("require 'leaky'\n$stdout.puts \"%s ran with "
                                                "#{ARGV.size} arguments\"\n", names[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    for (int jobs = 1; jobs <= 2; jobs++) {
        g_autofree char *n = g_strdup_printf("%d", jobs);
        const char *argv[] = { gemleak_binary, "run", "--jobs", n, "--", "ruby", "--disable-gems",
                               leaky, ":::", "a.rb", "b.rb", "c.rb", NULL };
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 0, "--jobs %d: status %d\n%s", jobs, r.status, r.err);
        gl_assert_line(r.out, "^a ran with 0 arguments$");
        gl_assert_line(r.out, "^b ran with 0 arguments$");
        gl_assert_line(r.out, "^c ran with 0 arguments$");
        gl_assert_line(r.err, "^gemleak: note: ruby takes one script and gives it the other files "
                              "as arguments: gemleak loads the files after ::: itself");
        result_clear(&r);
    }
    /* the run remembered what each file cost, for the next --jobs */
    g_autofree char *durations = g_build_filename(dir, ".gemleak-durations.json", NULL);
    g_autofree char *text = gl_test_read(durations, NULL);
    gl_assert_line(text, "\"a\\.rb\" : \\d+,?$");
    gl_assert_line(text, "\"c\\.rb\" : \\d+,?$");
    gl_remove_tree(dir);
}
END_TEST

/* A failing run keeps its XML compressed, says where and how much, and
 * gemleak filter reads it back; gemleak clean removes it. */
/* Ruby's options that take a value (--encoding UTF-8, -r set) and "--"
 * are read as ruby reads them: each file of each share runs, not the
 * first alone with the others as its arguments. */
START_TEST(test_bare_ruby_with_options_runs_every_file)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *names[] = { "a", "b", "c" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *file = g_strdup_printf("%s/%s.rb", dir, names[i]);
        g_autofree char *code = g_strdup_printf("require 'leaky'\n$stdout.puts \"%s ran with "
                                                "#{ARGV.size} arguments\"\n", names[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("%s/leaky", ext_dir);
    g_autofree char *leaky_attached = g_strconcat("-I", leaky, NULL);
    const char *with_values[] = { gemleak_binary, "run", "--jobs", "2", "--", "ruby",
                                  "--encoding", "UTF-8", "--external-encoding", "UTF-8",
                                  "-W0", "-r", "set", "--disable", "gems", "-I", leaky,
                                  ":::", "a.rb", "b.rb", "c.rb", NULL };
    const char *dashes[] = { gemleak_binary, "run", "--jobs", "2", "--", "ruby", "--disable-gems",
                             leaky_attached, "--", ":::", "a.rb", "b.rb", "c.rb", NULL };
    const char *const *commands[] = { with_values, dashes };
    for (guint c = 0; c < G_N_ELEMENTS(commands); c++) {
        Result r = { 0 };
        run_command(&r, dir, NULL, commands[c]);
        ck_assert_msg(r.status == 0, "command %u: status %d\n%s", c, r.status, r.err);
        for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
            g_autofree char *line = g_strdup_printf("^%s ran with 0 arguments$", names[i]);
            ck_assert_msg(g_regex_match_simple(line, r.out, G_REGEX_MULTILINE, 0),
                          "command %u: %s did not run:\n%s\n%s", c, names[i], r.out, r.err);
        }
        result_clear(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_kept_xml_is_compressed)
{
    g_autofree char *tmp = gl_test_tmpdir();
    Result r = { 0 };
    gemleak_run(&r, NULL, tmp, NO_ARGS, "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: Valgrind's XML is kept in \\S+ \\(\\d+(\\.\\d)? kB, "
                          "gzip-compressed from \\d+(\\.\\d)? [kM]B; read it again with: gemleak "
                          "filter \\S+; remove old runs with: gemleak clean\\)$");
    g_autofree char *kept = kept_dir(r.err);
    ck_assert_ptr_nonnull(kept);
    g_autoptr(GDir) listing = g_dir_open(kept, 0, NULL);
    const char *name;
    guint compressed = 0;
    while ((name = g_dir_read_name(listing)) != NULL) {
        ck_assert_msg(!g_str_has_suffix(name, ".xml"), "%s kept uncompressed", name);
        compressed += g_str_has_suffix(name, ".xml.gz");
    }
    ck_assert_uint_ge(compressed, 1);

    Result again = { 0 };
    run_argv(&again, gemleak_binary, "filter", kept, NULL);
    ck_assert_msg(again.status == 1, "status %d\n%s", again.status, again.err);
    gl_assert_line(again.out, "^100 bytes in 1 block is definitely lost$");
    gl_assert_line(again.out, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    result_clear(&again);

    /* clean removes it, and nothing else in TMPDIR */
    g_autofree char *other = g_build_filename(tmp, "gemleak-run-mine00", NULL);
    g_mkdir(other, 0700);
    g_autofree char *note = g_build_filename(other, "notes.txt", NULL);
    gl_test_write(note, "mine", -1);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    const char *clean[] = { gemleak_binary, "clean", NULL };
    Result cleaned = { 0 };
    run_command(&cleaned, NULL, env, clean);
    ck_assert_int_eq(cleaned.status, 0);
    gl_assert_line(cleaned.out, "^removed .*/gemleak-run-\\w{6} \\(\\d+(\\.\\d)? kB\\)$");
    gl_assert_line(cleaned.out, "^left .*/gemleak-run-mine00: it holds notes\\.txt, which gemleak "
                                "does not write$");
    ck_assert(!g_file_test(kept, G_FILE_TEST_EXISTS));
    ck_assert(g_file_test(note, G_FILE_TEST_EXISTS));
    result_clear(&cleaned);
    result_clear(&r);
    gl_remove_tree(tmp);
}
END_TEST

/* The text report trims each stack a few frames past the extension's
 * outermost one; --frames all shows every frame. */
START_TEST(test_trimmed_text_report)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--frames", "1"), "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^  \\.\\.\\. \\d+ more frames?$");
    result_discard(&r);
    Result all = { 0 };
    gemleak_run(&all, NULL, NULL, ARGS("--frames", "all"), "require 'leaky'; Leaky.leak");
    gl_assert_no_line(all.err, "^  \\.\\.\\. \\d+ more frames?$");
    gl_assert_line(all.err, "^  (main|\\(below main\\)|__libc_start_main)");
    result_discard(&all);
}
END_TEST

static gint compare_lines(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The findings of a JSON report, as "fingerprint bytes blocks" lines, sorted. */
static char *findings_of(const char *path)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, path, NULL));
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *f = json_array_get_object_element(findings, i);
        g_ptr_array_add(lines, g_strdup_printf(
            "%s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
            json_object_get_string_member(f, "fingerprint"),
            json_object_get_int_member_with_default(f, "bytes", 0),
            json_object_get_int_member_with_default(f, "blocks", 0),
            json_object_get_int_member_with_default(f, "occurrences", 0)));
    }
    g_ptr_array_sort(lines, compare_lines);
    g_ptr_array_add(lines, NULL);
    return g_strjoinv("\n", (char **) lines->pdata);
}

/* Each CI shard runs its part and writes JSON; gemleak filter of the
 * shards' reports finds what one run of every file finds. */
START_TEST(test_shards_merge_into_one_run)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *bodies[] = { "Leaky.leak", "Leaky.clean", "Leaky.leak", "Leaky.leak_xmalloc" };
    for (guint i = 0; i < G_N_ELEMENTS(bodies); i++) {
        g_autofree char *file = g_strdup_printf("%s/t%u.rb", dir, i);
        g_autofree char *code = g_strdup_printf("require 'leaky'\n%s\n", bodies[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *files[] = { "t0.rb", "t1.rb", "t2.rb", "t3.rb" };
    const char *shards[] = { "1/2", "2/2", NULL };
    const char *env_sharded[][3] = { { "CI_NODE_INDEX=1", "CI_NODE_TOTAL=2", NULL },
                                     { "CI_NODE_INDEX=2", "CI_NODE_TOTAL=2", NULL } };
    for (guint s = 0; s < 3; s++) {
        g_autofree char *json = g_strdup_printf("json:%s/%s.json", dir,
                                                s < 2 ? (s == 0 ? "s1" : "s2") : "one");
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_ptr_array_add(argv, (gpointer) gemleak_binary);
        g_ptr_array_add(argv, (gpointer) "run");
        if (s < 2) {   /* the first by its number, the second from GitLab's variables */
            g_ptr_array_add(argv, (gpointer) "--shard");
            g_ptr_array_add(argv, (gpointer) (s == 0 ? shards[0] : "auto"));
        } else {
            /* Occurrences count processes: the whole run shares its files
             * between two processes as the shards split them, by size (the
             * shards' recorded durations would balance them otherwise). */
            g_autofree char *durations = g_build_filename(dir, ".gemleak-durations.json", NULL);
            g_unlink(durations);
            g_ptr_array_add(argv, (gpointer) "--jobs");
            g_ptr_array_add(argv, (gpointer) "2");
        }
        const char *tail[] = { "--format", "text", "--format", json, "--", "ruby",
                               "--disable-gems", leaky, ":::", NULL };
        for (const char *const *a = tail; *a != NULL; a++)
            g_ptr_array_add(argv, (gpointer) *a);
        for (guint i = 0; i < G_N_ELEMENTS(files); i++)
            g_ptr_array_add(argv, (gpointer) files[i]);
        g_ptr_array_add(argv, NULL);
        g_auto(GStrv) env = g_get_environ();
        for (guint v = 0; s == 1 && v < 2; v++) {
            g_auto(GStrv) kv = g_strsplit(env_sharded[1][v], "=", 2);
            env = g_environ_setenv(env, kv[0], kv[1], TRUE);
        }
        Result r = { 0 };
        run_command(&r, dir, env, (const char *const *) argv->pdata);
        ck_assert_msg(r.status == 1, "run %u: status %d\n%s", s, r.status, r.err);
        if (s == 1)
            gl_assert_line(r.err, "^gemleak: note: --shard auto: shard 2 of 2, from "
                                  "CI_NODE_INDEX=2 and CI_NODE_TOTAL=2 \\(GitLab\\)$");
        result_discard(&r);
    }
    g_autofree char *s1 = g_build_filename(dir, "s1.json", NULL);
    g_autofree char *s2 = g_build_filename(dir, "s2.json", NULL);
    g_autofree char *one = g_build_filename(dir, "one.json", NULL);
    g_autofree char *merged = g_build_filename(dir, "merged.json", NULL);
    g_autofree char *merged_spec = g_strconcat("json:", merged, NULL);
    Result m = { 0 };
    run_argv(&m, gemleak_binary, "filter", "--format", "text", "--format", merged_spec, s1, s2,
             NULL);
    ck_assert_msg(m.status == 1, "status %d\n%s", m.status, m.err);
    result_clear(&m);
    g_autofree char *want = findings_of(one);
    g_autofree char *got = findings_of(merged);
    ck_assert_str_eq(got, want);
    ck_assert(strchr(want, '\n') != NULL);   /* two findings at least, one from each shard */
    gl_remove_tree(dir);
}
END_TEST

static int run_in_parallel(Suite *suite, const char *const *names)
{
    g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
    /* CK_RUN_CASE picks one case, as it does for an ordinary Check runner. */
    const char *only = g_getenv("CK_RUN_CASE");
    for (const char *const *name = names; *name != NULL; name++) {
        if (only != NULL && *only != '\0' && strcmp(only, *name) != 0)
            continue;
        pid_t pid = fork();
        if (pid == 0) {
            SRunner *runner = srunner_create(suite);
            srunner_run(runner, NULL, *name, CK_NORMAL);
            int failed = srunner_ntests_failed(runner);
            srunner_free(runner);
            _exit(failed > 125 ? 125 : failed);
        }
        g_array_append_val(pids, pid);
    }
    int failed = 0;
    for (guint i = 0; i < pids->len; i++) {
        int wait_status = 0;
        waitpid(g_array_index(pids, pid_t, i), &wait_status, 0);
        failed += WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 1;
    }
    return failed;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FIXTURES-DIR GEMLEAK-BINARY\n", argv[0]);
        return 2;
    }
    g_autofree char *fixtures = g_canonicalize_filename(argv[1], NULL);
    g_autofree char *binary = g_canonicalize_filename(argv[2], NULL);
    gl_test_fixtures = fixtures;
    gemleak_binary = binary;
    project_root = g_path_get_dirname(fixtures);
    g_setenv("NO_COLOR", "1", TRUE);
    /* A gemleak run from the environment (rake under gemleak) must not leak in. */
    g_unsetenv("RUBYOPT");
    g_unsetenv("RUBYLIB");

    /* No ck_assert outside a test: Check reports even passing ones. */
    g_autoptr(GError) error = NULL;
    ext_dir = g_dir_make_tmp("gemleak-ext-XXXXXX", &error);
    if (ext_dir == NULL || !build_extension("leaky", &error) || !build_extension("other", &error) ||
        !build_extension("probe", &error) ||
        !prepare_sample_gem(&error)) {
        fprintf(stderr, "check_integration: cannot build the fixture extensions: %s\n",
                error->message);
        gl_remove_tree(ext_dir);
        return EXIT_FAILURE;
    }

    /* The test cases run at once, each in a process of its own
     * (run_in_parallel); the tests of one case run in turn. */
    enum { SELF, LEAKS, VERDICTS, PROCESSES, COMMANDS, CHECKED, PER_TEST, MINITEST, RSPEC, GEM,
           N_CASES };
    const char *names[N_CASES + 1] = {
        [SELF] = "gemleak itself",
        [LEAKS] = "run: leaks",
        [VERDICTS] = "run: verdicts",
        [PROCESSES] = "run: processes and options",
        [COMMANDS] = "run: what runs, what is kept",
        [CHECKED] = "run: what was not checked never passes",
        [PER_TEST] = "run: per test",
        [MINITEST] = "rake: minitest",
        [RSPEC] = "rake: rspec and options",
        [GEM] = "the gem from a clone",
        [N_CASES] = NULL,
    };
    TCase *cases[N_CASES];
    for (guint i = 0; i < N_CASES; i++)
        cases[i] = tcase_create(names[i]);

    TCase *self = cases[SELF];
    tcase_add_test(self, test_gemleak_is_valgrind_clean);
    tcase_add_test(self, test_man_page_renders_without_warnings);
    tcase_add_test(self, test_demo_finds_the_example_leak);
    tcase_add_test(self, test_every_option_is_documented);
    tcase_add_test(self, test_missing_or_old_valgrind);
    tcase_add_test(self, test_data_found_where_the_binary_is);
    tcase_add_test(self, test_command_that_does_not_exist);
    tcase_add_test(self, test_interrupted_run);
    tcase_add_test(self, test_keep_xml_directory);
    tcase_add_test(self, test_suppressions_out_silence_a_real_run);
    tcase_add_test(self, test_two_reports_on_one_stream_refused);

    TCase *leaks = cases[LEAKS];
    tcase_add_test(leaks, test_clean_method_reports_nothing);
    tcase_add_test(leaks, test_malloc_leak_reported_and_xml_kept);
    tcase_add_test(leaks, test_use_after_free_shows_three_stacks);
    tcase_add_test(leaks, test_uninitialised_read_not_reported);
    tcase_add_test(leaks, test_callback_into_ruby_skipped_unless_defaults_dropped);
    tcase_add_test(leaks, test_leak_in_init_not_reported);
    tcase_add_test(leaks, test_helper_and_environment_in_every_ruby);
    tcase_add_test(leaks, test_annotations_to_stdout_text_to_stderr);
    tcase_add_test(leaks, test_jobs_and_shards);
    tcase_add_test(leaks, test_ruby_crashes_under_valgrind);
    tcase_add_test(leaks, test_helper_forgets_minitest_lets);

    TCase *verdicts = cases[VERDICTS];
    tcase_add_test(verdicts, test_probe_verdicts);
    tcase_add_test(verdicts, test_extension_that_never_loaded);

    TCase *processes = cases[PROCESSES];
    tcase_add_test(processes, test_leak_in_forked_child_reported_once);
    tcase_add_test(processes, test_two_extensions_and_object_choice);
    tcase_add_test(processes, test_object_never_loaded_is_an_error);
    tcase_add_test(processes, test_suppressions_dir_silences_a_leak);
    tcase_add_test(processes, test_gen_suppressions_block_silences_every_call_site);
    tcase_add_test(processes, test_failing_ruby_keeps_its_status);
    tcase_add_test(processes, test_leak_then_raise_exits_5_with_the_finding);
    tcase_add_test(processes, test_twice_in_a_row);
    tcase_add_test(processes, test_command_killed_by_a_signal);
    tcase_add_test(processes, test_valgrinds_own_fatal_error);
    tcase_add_test(processes, test_orphaned_child_is_waited_for);
    tcase_add_test(processes, test_suppressions_by_ruby_version);
    tcase_add_test(processes, test_more_jobs_than_gemleak_runs);
    tcase_add_test(processes, test_keep_xml_runs_nothing_it_holds);
    tcase_add_test(processes, test_percent_in_the_run_directory);
    tcase_add_test(processes, test_orphans_reaped_as_they_end);
    tcase_add_test(processes, test_interrupted_while_waiting_for_orphans);
    tcase_add_test(processes, test_valgrind_dies_with_gemleak);
    tcase_add_test(processes, test_process_killed_by_the_suite);
    tcase_add_test(processes, test_run_exit_statuses);

    TCase *commands = cases[COMMANDS];
    tcase_add_test(commands, test_build_tools_stay_out_of_valgrind);
    tcase_add_test(commands, test_a_launcher_that_hands_over_is_traced);
    tcase_add_test(commands, test_a_launcher_that_loads_the_extension_runs_again);
    tcase_add_test(commands, test_a_launchers_fork_that_loads_the_extension_fails);
    tcase_add_test(commands, test_a_shard_with_an_unchecked_process_never_merges_into_a_pass);
    tcase_add_test(commands, test_trace_launchers);
    tcase_add_test(commands, test_a_ruby_started_with_chdir_goes_under_valgrind);
    tcase_add_test(commands, test_a_script_on_standard_input_goes_under_valgrind);
    tcase_add_test(commands, test_a_child_with_its_own_rubylib_is_checked);
    tcase_add_test(commands, test_a_ruby_below_make_that_loads_the_extension_runs_again);

    tcase_add_test(commands, test_valgrind_below_a_launcher_dies_with_gemleak);
    tcase_add_test(commands, test_bare_ruby_runs_every_file);
    tcase_add_test(commands, test_bare_ruby_with_options_runs_every_file);
    tcase_add_test(commands, test_kept_xml_is_compressed);
    tcase_add_test(commands, test_trimmed_text_report);
    tcase_add_test(commands, test_shards_merge_into_one_run);

    TCase *checked = cases[CHECKED];
    tcase_add_test(checked, test_ruby_below_build_tools_is_checked);
    tcase_add_test(checked, test_ruby_with_its_own_environment_is_checked);
    tcase_add_test(checked, test_command_that_checks_nothing_never_passes);
    tcase_add_test(checked, test_command_that_fails_before_ruby_starts);

    TCase *minitest = cases[MINITEST];
    tcase_add_test(minitest, test_rake_test_task_fails_on_a_leak);
    tcase_add_test(minitest, test_rake_test_task_passes_without_the_leaking_test);
    tcase_add_test(minitest, test_rake_failing_assertion_still_fails);
    tcase_add_test(minitest, test_rake_binary_name_limits_the_targets);
    tcase_add_test(minitest, test_readme_rakefile_snippet);
    tcase_add_test(minitest, test_rake_failing_suite_and_leak_both_named);
    tcase_add_test(minitest, test_rake_write_baseline);
    tcase_add_test(minitest, test_rake_compiler_paths_and_baselines);

    TCase *rspec = cases[RSPEC];
    tcase_add_test(rspec, test_rspec_task);
    tcase_add_test(rspec, test_rake_suppressions_and_reports_reach_gemleak);
    tcase_add_test(rspec, test_rake_without_gemleak_says_how_to_get_it);
    tcase_add_test(rspec, test_rake_task_with_its_own_configuration);
    tcase_add_test(rspec, test_readme_ruby_memcheck_migration);
    tcase_add_test(rspec, test_rake_ruby_memcheck_settings);
    tcase_add_test(rspec, test_rake_task_defined_twice_warns);

    TCase *per_test = cases[PER_TEST];
    tcase_add_test(per_test, test_per_test_minitest);
    tcase_add_test(per_test, test_per_test_rspec);
    tcase_add_test(per_test, test_per_test_test_unit);
    tcase_add_test(per_test, test_per_test_file_and_fork);
    tcase_add_test(per_test, test_per_test_rake_setting);

    TCase *gem = cases[GEM];
    tcase_add_test(gem, test_gem_build_names_missing_packages);
    tcase_add_test(gem, test_make_install_destdir);
    tcase_add_test(gem, test_gem_from_a_fresh_clone);

    Suite *suite = suite_create("integration");
    for (guint i = 0; i < N_CASES; i++) {
        tcase_set_timeout(cases[i], 600);
        suite_add_tcase(suite, cases[i]);
    }
    /* The runner owns the suite: freeing it frees the suite too. */
    SRunner *owner = srunner_create(suite);
    int failed = run_in_parallel(suite, names);
    srunner_free(owner);
    gl_remove_tree(ext_dir);
    g_free(ext_dir);
    g_free(sample_gem);
    g_free(project_root);
    if (failed > 0)
        fprintf(stderr, "check_integration: %d test%s failed\n", failed, failed == 1 ? "" : "s");
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
