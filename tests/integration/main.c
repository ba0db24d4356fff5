/* Integration tests: the gemleak binary as a user runs it, on real Valgrind
 * and real Ruby.
 *
 *   check_integration FIXTURES-DIR GEMLEAK-BINARY
 *
 * This file builds the fixtures once, gathers the test cases of the other
 * files of tests/integration/ (one per area) and runs them at once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* Runs the test cases named in @names (NULL-terminated) in a child each, at
 * once: each scenario is a Ruby process under Valgrind, and the machine has
 * more than one core. Each child sends its counts back through a pipe.
 * Adds to @counts what they ran. */
static void run_in_parallel(Suite *suite, const char *const *names, GlTestCounts *counts)
{
    g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
    g_autoptr(GArray) pipes = g_array_new(FALSE, FALSE, sizeof(int));
    /* CK_RUN_CASE picks one case, as it does for an ordinary Check runner. */
    const char *only = g_getenv("CK_RUN_CASE");
    for (const char *const *name = names; *name != NULL; name++) {
        if (only != NULL && *only != '\0' && strcmp(only, *name) != 0)
            continue;
        int ends[2];
        if (pipe(ends) != 0) {
            counts->run++;
            counts->failed++;
            fprintf(stderr, "check_integration: %s: no pipe: %s\n", *name, g_strerror(errno));
            continue;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(ends[0]);
            SRunner *runner = srunner_create(suite);
            GlTestCounts mine = { 0 };
            gl_test_run(runner, *name, &mine);
            srunner_free(runner);
            g_autofree char *who = g_strdup_printf("check_integration: %s", *name);
            gl_test_print_counts(who, &mine);
            gboolean sent = write(ends[1], &mine, sizeof mine) == (ssize_t) sizeof mine;
            _exit(sent && mine.failed == 0 ? 0 : 1);
        }
        close(ends[1]);
        g_array_append_val(pids, pid);
        g_array_append_val(pipes, ends[0]);
    }
    for (guint i = 0; i < pids->len; i++) {
        GlTestCounts theirs = { 0 };
        int fd = g_array_index(pipes, int, i);
        gboolean got = read(fd, &theirs, sizeof theirs) == (ssize_t) sizeof theirs;
        close(fd);
        int wait_status = 0;
        waitpid(g_array_index(pids, pid_t, i), &wait_status, 0);
        /* A case whose child died before it could say counts as one failure. */
        if (!got) {
            theirs = (GlTestCounts) { .run = 1, .failed = 1 };
            fprintf(stderr, "check_integration: a test case ended without its counts (wait "
                    "status %d)\n", wait_status);
        }
        counts->run += theirs.run;
        counts->passed += theirs.passed;
        counts->skipped += theirs.skipped;
        counts->failed += theirs.failed;
    }
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
        !build_extension("probe", &error) || !build_extension("grouped", &error) ||
        !build_extension("sites", &error) || !build_extension("nodebug", &error) ||
        !prepare_sample_gem(&error)) {
        fprintf(stderr, "check_integration: cannot build the fixture extensions: %s\n",
                error->message);
        gl_remove_tree(ext_dir);
        return EXIT_FAILURE;
    }

    /* The test cases run at once, each in a process of its own
     * (run_in_parallel); the tests of one case run in turn. */
    enum { SELF, LEAKS, VERDICTS, PROCESSES, COMMANDS, CHECKED, PER_TEST, MINITEST, RSPEC, GEM,
           ENGINE, ASAN, GROUPS, HANDED, PROMISE, SAME, EXACT, DIFFERENTIAL, NODEBUG,
           GROWTH, GROWTH_MARKERS, N_CASES };
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
        [ENGINE] = "run: the LeakSanitizer engine",
        [ASAN] = "run: the AddressSanitizer engine",
        [GROUPS] = "run: one bug, one entry",
        [HANDED] = "run: memory a Ruby API hands to the extension",
        [PROMISE] = "run: the gate's promise under every engine",
        [SAME] = "run: one finding, whatever the engine",
        [EXACT] = "run: exact stacks where something leaked",
        [DIFFERENTIAL] = "run: every engine, one verdict",
        [NODEBUG] = "run: an extension without debug information",
        [GROWTH] = "run: memory that only grows",
        [GROWTH_MARKERS] = "run: growth markers",
        [N_CASES] = NULL,
    };
    TCase *cases[N_CASES];
    for (guint i = 0; i < N_CASES; i++)
        cases[i] = tcase_create(names[i]);

    integration_self(cases[SELF]);
    integration_leaks(cases[LEAKS]);
    integration_verdicts(cases[VERDICTS]);
    integration_processes(cases[PROCESSES]);
    integration_commands(cases[COMMANDS]);
    integration_checked(cases[CHECKED]);
    integration_minitest(cases[MINITEST]);
    integration_rspec(cases[RSPEC]);
    integration_per_test(cases[PER_TEST]);
    integration_gem(cases[GEM]);
    integration_engine(cases[ENGINE]);
    integration_asan(cases[ASAN]);
    integration_groups(cases[GROUPS]);
    integration_handed(cases[HANDED]);
    integration_promise(cases[PROMISE]);
    integration_same(cases[SAME]);
    integration_exact(cases[EXACT]);
    integration_differential(cases[DIFFERENTIAL]);
    integration_nodebug(cases[NODEBUG]);
    integration_growth(cases[GROWTH]);
    integration_growth_markers(cases[GROWTH_MARKERS]);

    /* A bound for a hang, not for speed: on a busy 2-core machine the gem
     * from a clone (gemleak built four times, suites under Valgrind) took
     * over the ten minutes this once was. */
    Suite *suite = suite_create("integration");
    for (guint i = 0; i < N_CASES; i++) {
        tcase_set_timeout(cases[i], 3600);
        suite_add_tcase(suite, cases[i]);
    }
    /* The runner owns the suite: freeing it frees the suite too. */
    SRunner *owner = srunner_create(suite);
    GlTestCounts counts = { 0 };
    run_in_parallel(suite, names, &counts);
    srunner_free(owner);
    gl_remove_tree(ext_dir);
    g_free(ext_dir);
    g_free(sample_gem);
    g_free(project_root);
    gl_test_print_counts("check_integration", &counts);
    gl_test_save_counts("check_integration", &counts);
    return counts.failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
