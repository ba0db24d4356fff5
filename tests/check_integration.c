/* Integration tests: the gemleak binary as a user runs it, on real Valgrind
 * and real Ruby.
 *
 *   check_integration FIXTURES-DIR GEMLEAK-BINARY
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"

static const char *gemleak_binary;
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
    g_autoptr(GError) error = NULL;
    int wait_status = 0;
    gboolean ok = g_spawn_sync(cwd, (char **) argv, env, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &result->out, &result->err, &wait_status, &error);
    ck_assert_msg(ok, "cannot run %s: %s", argv[0], error != NULL ? error->message : "?");
    if (WIFEXITED(wait_status))
        result->status = WEXITSTATUS(wait_status);
    else if (WIFSIGNALED(wait_status))
        result->status = 128 + WTERMSIG(wait_status);
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

/* ---- gemleak itself ---------------------------------------------------- */

/* A leak checker that leaks is a joke: gemleak under Valgrind, reading
 * every fixture on several threads, must report nothing of its own. */
START_TEST(test_gemleak_is_valgrind_clean)
{
    g_autofree char *xml = gl_test_fixture("xml");
    g_autofree char *fork = gl_test_fixture("xml/fork");
    g_autofree char *edge = gl_test_fixture("edge");
    Result result = { 0 };
    run_argv(&result, "valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite",
             "--error-exitcode=99", gemleak_binary, "filter", "-O", "leaky", "-j", "3",
             "--format", "json", xml, fork, edge, NULL);
    /* 3: the edge fixtures are broken on purpose; 99 would be Valgrind's */
    ck_assert_msg(result.status == 3, "status %d; stderr:\n%s", result.status, result.err);
    ck_assert_msg(strstr(result.err, "definitely lost") == NULL, "%s", result.err);
    ck_assert_msg(strstr(result.err, "Invalid") == NULL, "%s", result.err);
    ck_assert(strstr(result.out, "\"findings\"") != NULL);
    result_clear(&result);
}
END_TEST

/* ---- the manual ---------------------------------------------------------- */

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
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FIXTURES-DIR GEMLEAK-BINARY\n", argv[0]);
        return 2;
    }
    gl_test_fixtures = argv[1];
    gemleak_binary = argv[2];
    g_autofree char *fixtures = g_canonicalize_filename(argv[1], NULL);
    project_root = g_path_get_dirname(fixtures);
    g_setenv("NO_COLOR", "1", TRUE);

    Suite *suite = suite_create("integration");
    TCase *self = tcase_create("gemleak itself");
    tcase_add_test(self, test_gemleak_is_valgrind_clean);
    tcase_add_test(self, test_man_page_renders_without_warnings);
    tcase_add_test(self, test_every_option_is_documented);
    tcase_set_timeout(self, 300);
    suite_add_tcase(suite, self);

    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    g_free(project_root);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
