/* The unit suite runner: check_unit FIXTURES-DIR.
 * Each test runs in a forked child (Check's default), so that a crash or a
 * sanitizer report fails that test alone. The last line counts the tests
 * that passed, were skipped (gl_test_skip) and failed. */
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURES-DIR\n", argv[0]);
        return 2;
    }
    gl_test_fixtures = argv[1];
    /* The report is compared as text: no colour from the environment. */
    g_setenv("NO_COLOR", "1", TRUE);
    /* gemleak runs in this process, not from build/: its data is the
     * checkout's (suppressions/ beside fixtures/). */
    g_autofree char *fixtures = g_canonicalize_filename(argv[1], NULL);
    g_autofree char *project = g_path_get_dirname(fixtures);
    g_setenv("GEMLEAK_DATADIR", project, TRUE);
    /* A test bounds correctness, not speed (make bench's): Check's 4 s was
     * a speed bound, which a busy 2-core machine broke (a test that takes
     * 2 s alone took over 4 under a parallel build). This one catches a
     * hang; a test case's own bound (tcase_set_timeout) stays where a
     * hang is what it tests. Read when each test case is made. */
    g_setenv("CK_DEFAULT_TIMEOUT", "300", FALSE);
    /* gemleak's cache between runs (gemleak/run/cache.h): a private one,
     * before GLib first reads where it is (it keeps it), not the user's;
     * TMPDIR read here, not through GLib, which keeps what it read first
     * (a test sets its own). */
    const char *tmp = g_getenv("TMPDIR");
    g_autofree char *cache = g_build_filename(tmp != NULL && *tmp != '\0' ? tmp : "/tmp",
                                              "gemleak-unit-cache-XXXXXX", NULL);
    if (g_mkdtemp(cache) != NULL)
        g_setenv("XDG_CACHE_HOME", cache, TRUE);
    else
        g_clear_pointer(&cache, g_free);

    SRunner *runner = srunner_create(gl_reader_suite());
    srunner_add_suite(runner, gl_classify_suite());
    srunner_add_suite(runner, gl_merge_suite());
    srunner_add_suite(runner, gl_report_suite());
    srunner_add_suite(runner, gl_cli_suite());
    srunner_add_suite(runner, gl_cli_options_suite());
    srunner_add_suite(runner, gl_cli_filter_suite());
    srunner_add_suite(runner, gl_cli_pipeline_suite());
    srunner_add_suite(runner, gl_cli_run_suite());
    srunner_add_suite(runner, gl_cli_clean_suite());
    srunner_add_suite(runner, gl_formats_suite());
    srunner_add_suite(runner, gl_growth_report_suite());
    srunner_add_suite(runner, gl_hostile_suite());
    srunner_add_suite(runner, gl_attribute_suite());
    srunner_add_suite(runner, gl_commands_suite());
    srunner_add_suite(runner, gl_durations_suite());
    srunner_add_suite(runner, gl_prepare_suite());
    srunner_add_suite(runner, gl_runner_suite());
    srunner_add_suite(runner, gl_rundir_suite());
    srunner_add_suite(runner, gl_rundir_untraced_suite());
    srunner_add_suite(runner, gl_rundir_clean_suite());
    srunner_add_suite(runner, gl_cache_suite());
    srunner_add_suite(runner, gl_exact_suite());
    srunner_add_suite(runner, gl_gate_suite());
    srunner_add_suite(runner, gl_growth_suite());
    srunner_add_suite(runner, gl_targets_suite());
    srunner_add_suite(runner, gl_sys_suite());
    srunner_add_suite(runner, gl_sanitizer_reader_suite());
    srunner_add_suite(runner, gl_sanitizer_exact_suite());
    srunner_add_suite(runner, gl_sanitizer_inherited_suite());
    srunner_add_suite(runner, gl_filter_sanitizer_suite());
    srunner_add_suite(runner, gl_splitter_suite());
    srunner_add_suite(runner, gl_source_suite());
    srunner_add_suite(runner, gl_demangle_suite());
    srunner_add_suite(runner, gl_debuginfo_suite());
    srunner_add_suite(runner, gl_sanitizer_names_suite());
    srunner_add_suite(runner, gl_run_record_suite());
    srunner_add_suite(runner, gl_structures_suite());
    srunner_add_suite(runner, gl_project_paths_suite());
    srunner_add_suite(runner, gl_sinks_suite());
    srunner_add_suite(runner, gl_json_report_suite());
    srunner_add_suite(runner, gl_group_suite());
    srunner_add_suite(runner, gl_run_dir_suite());
    srunner_add_suite(runner, gl_sanitizer_suite());
    srunner_add_suite(runner, gl_checks_suite());
    srunner_add_suite(runner, gl_input_suite());
    srunner_add_suite(runner, gl_judges_suite());
    srunner_add_suite(runner, gl_judgement_suite());
    srunner_add_suite(runner, gl_outcome_suite());
    srunner_add_suite(runner, gl_program_kind_suite());
    srunner_add_suite(runner, gl_restore_env_suite());
    srunner_add_suite(runner, gl_hidden_table_suite());
    srunner_add_suite(runner, gl_got_suite());
    srunner_add_suite(runner, gl_alloc_suite());
    GlTestCounts counts = { 0 };
    gl_test_run(runner, NULL, &counts);
    srunner_free(runner);
    if (cache != NULL)
        gl_remove_tree(cache);
    gl_test_print_counts("check_unit", &counts);
    gl_test_save_counts("check_unit", &counts);
    return counts.failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
