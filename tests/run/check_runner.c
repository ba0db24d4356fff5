/* Running a run's commands (src/run/runner.c). */
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <glib/gstdio.h>
#include <string.h>

#include "testutil.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/run/engine.h"
#include "gemleak/run/runner.h"
#include "../../src/run/runner_int.h"
#include "helper_util.h"

#include <unistd.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdlib.h>

/* A run makes gemleak the subreaper of what its commands leave behind, for
 * as long as it waits for them; after it, an orphan of the program that
 * called it (the tests, in-process) is init's again, not its own. */
/* Spawns @argv with @env (gl_run_spawn), waits for it. Returns: its exit
 * status, or -1 when it could not start (*@error set). */
static int spawned_status(char **argv, char **env, gboolean quiet, GError **error)
{
    pid_t pid = 0;
    if (!gl_run_spawn(argv, env, quiet, TRUE, getpid(), &pid, error))
        return -1;
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* A command starts as the command line says (vfork()ed: gemleak's memory
 * is not copied): found on the PATH of the environment it is given, not
 * gemleak's; with none of gemleak's descriptors but the standard three;
 * its output to /dev/null when quiet; a script without "#!" under
 * /bin/sh; and a command that is nowhere said as glib said it. */
START_TEST(test_a_command_starts_as_its_command_line_says)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *bin = g_build_filename(tmp, "bin", NULL);
    g_mkdir(bin, 0700);
    g_autofree char *tool = g_build_filename(bin, "gl-spawn-probe", NULL);
    g_autofree char *out = g_build_filename(tmp, "out", NULL);
    /* a script without "#!": what it says goes to the file it is given */
    ck_assert(g_file_set_contents(tool, "echo \"$1\" > \"$2\"; ls /proc/self/fd >> \"$2\"; echo said\n",
                                  -1, NULL));
    g_chmod(tool, 0700);
    g_autofree char *path = g_strconcat("PATH=", bin, ":/usr/bin:/bin", NULL);
    char *env[] = { path, NULL };
    char *argv[] = { (char *) "gl-spawn-probe", (char *) "hello", out, NULL };
    int held = open("/dev/null", O_RDONLY);  /* without O_CLOEXEC: a child must not get it */
    ck_assert_int_ge(held, 3);
    g_autoptr(GError) error = NULL;
    ck_assert_int_eq(spawned_status(argv, env, TRUE, &error), 0);
    close(held);
    g_autofree char *said = NULL;
    ck_assert(g_file_get_contents(out, &said, NULL, NULL));
    /* the first line, then the descriptors ls had open: 0 to 2, and the
     * one it reads the directory with */
    g_auto(GStrv) lines = g_strsplit(g_strstrip(said), "\n", -1);
    ck_assert_str_eq(lines[0], "hello");
    for (char **line = lines + 1; *line != NULL; line++)
        ck_assert_msg(atoi(*line) <= 3, "the command had descriptor %s open:\n%s", *line, said);
    ck_assert_int_le(g_strv_length(lines), 5);
    /* a command that is on no directory of the PATH */
    char *missing[] = { (char *) "gl-spawn-nowhere", NULL };
    ck_assert_int_eq(spawned_status(missing, env, TRUE, &error), -1);
    ck_assert_str_eq(error->message,
                     "Failed to execute child process \u201cgl-spawn-nowhere\u201d (No such file or directory)");
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_subreaper_undone_after_a_run)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *valgrind = g_build_filename(tmp, "fake-valgrind", NULL);
    gl_test_write(valgrind, "#!/bin/sh\n[ \"$1\" = --version ] && echo valgrind-3.19.0\nexit 0\n", -1);
    ck_assert_int_eq(g_chmod(valgrind, 0755), 0);
    GlRunOptions options = { .program = valgrind };
    g_autoptr(GPtrArray) commands = g_ptr_array_new_with_free_func((GDestroyNotify) g_strfreev);
    g_ptr_array_add(commands, g_strdupv((char *[]) { "true", NULL }));
    GlRunResult result;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_run_commands(&options, commands, &result, &error), "%s",
                  error != NULL ? error->message : "");
    gl_run_finish(&result, TRUE);
#ifdef __linux__
    int subreaper = -1;
    ck_assert_int_eq(prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0), 0);
    ck_assert_msg(subreaper == 0, "still the subreaper of orphans after the run");
#endif
    gl_remove_tree(tmp);
}
END_TEST

/* Returns: (transfer full): the --show-leak-kinds Valgrind gets for a
 * run asking @kinds, with --growth's @growth repetitions. */
static char *shown_kinds(GlLeakKind kinds, guint growth)
{
    GlRunOptions options = { .leak_kinds = kinds, .growth = growth };
    const GlEngine *valgrind = gl_engine_find("valgrind");
    char *command[] = { "ruby", "-e", "1", NULL };
    g_autoptr(GPtrArray) argv = valgrind->argv(&options, "valgrind", "/tmp/run", "/tmp/helper",
                                               command, NULL);
    for (guint i = 0; argv->pdata[i] != NULL; i++)
        if (g_str_has_prefix(argv->pdata[i], "--show-leak-kinds="))
            return g_strdup((char *) argv->pdata[i] + strlen("--show-leak-kinds="));
    return NULL;
}

/* Issue 39: --growth measures by the loss records that changed, still
 * reachable ones above all: Valgrind shows every kind then (the judge
 * keeps the asked-for kinds as leaks); a run without it, as asked. */
START_TEST(test_growth_shows_every_leak_kind)
{
    g_autofree char *plain = shown_kinds(GL_LEAK_DEFINITE, 0);
    ck_assert_str_eq(plain, "definite");
    g_autofree char *growth = shown_kinds(GL_LEAK_DEFINITE, 3);
    ck_assert_str_eq(growth, "definite,indirect,possible,reachable");
}
END_TEST

/* The library preloaded into every process of a run is tried on the
 * dynamic loader first: one it takes is kept; one it refuses (here, not a
 * library at all) is removed, and why is said in the loader's words, not
 * printed by every process of the run. */
START_TEST(test_a_preload_library_the_loader_refuses_is_left_out)
{
    g_autofree char *dir = gl_test_written_helper(FALSE);
    g_autofree char *why = NULL;
    g_autofree char *taken = gl_run_preload_library(dir, &why);
    ck_assert_msg(why == NULL, "refused: %s", why);
    ck_assert_ptr_nonnull(taken);
    gl_test_write(taken, "not a library\n", -1);
    g_autofree char *refused = gl_run_preload_library(dir, &why);
    ck_assert_ptr_null(refused);
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "cannot be preloaded") != NULL && strstr(why, taken) != NULL &&
                      strchr(why, '\n') == NULL,
                  "said: %s", why);
    ck_assert(!g_file_test(taken, G_FILE_TEST_EXISTS));
    gl_remove_tree(dir);
}
END_TEST

/* Returns: (transfer full): the run's preload library in @dir, made a file
 * of its own (a new inode, as a build of gemleak writes it): what the
 * loader took of another file says nothing of it. */
static char *fresh_preload_library(const char *dir)
{
    g_autofree char *library = g_build_filename(dir, "gemleak_preload.so", NULL);
    gsize length = 0;
    g_autofree char *bytes = gl_test_read(library, &length);
    ck_assert_int_eq(g_unlink(library), 0);
    gl_test_write(library, bytes, (gssize) length);
    return g_steal_pointer(&library);
}

/* What the dynamic loader prints of itself when the user asks it to
 * (LD_DEBUG, LD_SHOW_AUXV) is not its refusal: a run under a sanitizer
 * with LD_DEBUG set went no further than "the dynamic loader refuses
 * gemleak's libraries". */
START_TEST(test_the_loaders_own_words_are_not_a_refusal)
{
    g_autofree char *dir = gl_test_written_helper(FALSE);
    g_autofree char *library = fresh_preload_library(dir);
    g_setenv("LD_DEBUG", "statistics", TRUE);
    g_setenv("LD_SHOW_AUXV", "1", TRUE);
    g_autofree char *why = NULL;
    g_autofree char *taken = gl_run_preload_library(dir, &why);
    g_unsetenv("LD_DEBUG");
    g_unsetenv("LD_SHOW_AUXV");
    ck_assert_msg(why == NULL, "refused: %s", why);
    ck_assert_str_eq(taken, library);
    gl_remove_tree(dir);
}
END_TEST

/* The loader is asked once of a library: a run whose library is the one
 * it took before (the same file, unchanged, on a filesystem mounted as it
 * was) starts no program to ask again (some 2 ms of every run); a library
 * changed since is asked of again. */
START_TEST(test_a_library_the_loader_took_is_not_asked_of_again)
{
    g_autofree char *dir = gl_test_written_helper(FALSE);
    g_autofree char *library = fresh_preload_library(dir);
    /* true(1) first on PATH, counting how often it is started */
    g_autofree char *bin = gl_test_tmpdir();
    g_autofree char *count = g_build_filename(bin, "count", NULL);
    g_autofree char *program = g_build_filename(bin, "true", NULL);
    g_autofree char *script = g_strdup_printf("#!/bin/sh\necho started >> '%s'\n", count);
    gl_test_write(program, script, -1);
    ck_assert_int_eq(g_chmod(program, 0755), 0);
    g_autofree char *path = g_strdup(g_getenv("PATH"));
    g_autofree char *ours = g_strconcat(bin, ":", path, NULL);
    g_setenv("PATH", ours, TRUE);
    for (int i = 0; i < 3; i++) {
        g_autofree char *why = NULL;
        g_autofree char *taken = gl_run_preload_library(dir, &why);
        ck_assert_msg(why == NULL, "refused: %s", why);
        ck_assert_ptr_nonnull(taken);
    }
    g_autofree char *once = gl_test_read(count, NULL);
    ck_assert_str_eq(once, "started\n");
    /* the library changed: asked again */
    g_autofree char *changed = fresh_preload_library(dir);
    g_autofree char *why = NULL;
    g_autofree char *taken = gl_run_preload_library(dir, &why);
    g_setenv("PATH", path, TRUE);
    ck_assert_ptr_nonnull(taken);
    g_autofree char *twice = gl_test_read(count, NULL);
    ck_assert_str_eq(twice, "started\nstarted\n");
    gl_remove_tree(bin);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_runner_suite(void)
{
    Suite *suite = suite_create("runner");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_subreaper_undone_after_a_run);
    tcase_add_test(tc, test_growth_shows_every_leak_kind);
    tcase_add_test(tc, test_a_preload_library_the_loader_refuses_is_left_out);
    tcase_add_test(tc, test_the_loaders_own_words_are_not_a_refusal);
    tcase_add_test(tc, test_a_library_the_loader_took_is_not_asked_of_again);
    tcase_add_test(tc, test_a_command_starts_as_its_command_line_says);
    suite_add_tcase(suite, tc);
    return suite;
}
