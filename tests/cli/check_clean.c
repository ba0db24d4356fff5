/* src/cli/clean.c: gemleak clean, and what it prints. Which directories
 * it removes: tests/run/check_commands.c (gl_rundir_clean). */
#include "testutil.h"

#include <glib.h>
#include <glib/gstdio.h>

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

/* gemleak clean names directories in TMPDIR and what it found in them:
 * a TMPDIR or a file name with an escape or a newline reaches the
 * terminal escaped, on one line. */
START_TEST(test_clean_escapes_the_names_it_prints)
{
    /* TMPDIR before GLib first reads it (it keeps it) */
    char base[] = "/tmp/gemleak-clean-XXXXXX";
    ck_assert_ptr_nonnull(g_mkdtemp(base));
    g_autofree char *tmp = g_build_filename(base, "t\033[2J\nforged", NULL);
    ck_assert_int_eq(g_mkdir(tmp, 0700), 0);
    g_setenv("TMPDIR", tmp, TRUE);
    g_autofree char *ours = g_build_filename(tmp, "gemleak-run-AbC123", NULL);
    g_autofree char *odd = g_build_filename(tmp, "gemleak-run-\033[31m!", NULL);
    ck_assert_int_eq(g_mkdir(ours, 0700), 0);
    ck_assert_int_eq(g_mkdir(odd, 0700), 0);
    g_autofree char *marker = g_build_filename(ours, "gemleak-run.txt", NULL);
    gl_test_write(marker, "x", -1);
    g_autofree char *stranger = g_build_filename(odd, "x\nforged\033[0m", NULL);
    gl_test_write(stranger, "x", -1);

    RUN(dry, "clean", "--dry-run");
    ck_assert_int_eq(dry.status, 0);
    gl_assert_no_raw_control(dry.out);
    gl_assert_line(dry.out, "^would remove .*/t\\\\x1b\\[2J\\\\nforged/gemleak-run-AbC123 \\(");
    gl_assert_line(dry.out, "^left .*/gemleak-run-\\\\x1b\\[31m!: it holds x\\\\nforged\\\\x1b\\[0m, "
                            "which gemleak does not write$");
    gl_assert_line(dry.out, "^would remove 1 directory of gemleak's in .*/t\\\\x1b\\[2J\\\\nforged, ");
    gl_test_run_clear(&dry);
    gl_remove_tree(base);
}
END_TEST

Suite *gl_cli_clean_suite(void)
{
    Suite *suite = suite_create("cli-clean");
    TCase *tc = tcase_create("cli-clean");
    tcase_add_test(tc, test_clean_escapes_the_names_it_prints);
    suite_add_tcase(suite, tc);
    return suite;
}
