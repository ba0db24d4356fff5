/* A run directory made and marked (src/run/rundir.c). */
#include <signal.h>
#include <stdio.h>

#include <glib/gstdio.h>

#include "testutil.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/run/rundir.h"

/* Issue 26, item 10: the directory of a run a signal interrupted says why
 * to gemleak filter (which never passes it: tests/judge/check_gate.c);
 * gemleak clean takes it as its own. */
START_TEST(test_interrupted_run_is_marked)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *dir = g_build_filename(tmp, "gemleak-run-Int3rr", NULL);
    ck_assert_int_eq(g_mkdir(dir, 0700), 0);
    g_autoptr(GError) error = NULL;
    ck_assert(gl_rundir_mark(dir, &error));
    ck_assert(gl_rundir_mark_interrupted(dir, SIGTERM, &error));
    const char *inputs[] = { dir, NULL };
    g_auto(GlRunCoverage) coverage = { 0 };
    gl_run_dir_coverage(inputs, &coverage);
    ck_assert_str_eq(coverage.interrupted, "SIGTERM");
    FILE *null = fopen("/dev/null", "w");
    ck_assert_uint_eq(gl_rundir_clean(tmp, FALSE, null), 1);
    fclose(null);
    gl_remove_tree(tmp);
}
END_TEST

Suite *gl_rundir_suite(void)
{
    Suite *suite = suite_create("rundir");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_interrupted_run_is_marked);
    suite_add_tcase(suite, tc);
    return suite;
}
