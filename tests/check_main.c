/* The unit suite runner: check_unit FIXTURES-DIR.
 * Each test runs in a forked child (Check's default), so that a crash or a
 * sanitizer report fails that test alone. */
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

    SRunner *runner = srunner_create(gl_reader_suite());
    srunner_add_suite(runner, gl_classify_suite());
    srunner_add_suite(runner, gl_merge_suite());
    srunner_add_suite(runner, gl_report_suite());
    srunner_add_suite(runner, gl_cli_suite());
    srunner_add_suite(runner, gl_formats_suite());
    srunner_add_suite(runner, gl_hostile_suite());
    srunner_add_suite(runner, gl_attribute_suite());
    srunner_add_suite(runner, gl_commands_suite());
    srunner_add_suite(runner, gl_targets_suite());
    srunner_add_suite(runner, gl_sys_suite());
    srunner_add_suite(runner, gl_sanitizer_reader_suite());
    srunner_add_suite(runner, gl_filter_sanitizer_suite());
    srunner_add_suite(runner, gl_splitter_suite());
    srunner_add_suite(runner, gl_source_suite());
    srunner_add_suite(runner, gl_sinks_suite());
    srunner_add_suite(runner, gl_json_input_suite());
    srunner_add_suite(runner, gl_group_suite());
    srunner_add_suite(runner, gl_process_facts_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
