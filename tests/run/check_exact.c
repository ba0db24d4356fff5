/* The exact pass (src/run/exact.c): the commands again, with exact stacks
 * only where something leaked. */
#include "testutil.h"
#include "gemleak/run/exact.h"

/* The exact pass's time limit follows from what it runs again (issue 35,
 * 5): twice the first run and a minute when it unwinds only the sites
 * that leaked; when it unwinds every allocation exactly (what the fast
 * check could not judge), that costs up to 23 times native on real
 * suites: 25 times, and the minute. A clean suite that took 10 s was
 * killed by the first limit, 80 s, at 8.5x. */
START_TEST(test_exact_deadline_follows_what_runs_again)
{
    ck_assert_uint_eq(gl_exact_deadline(10, FALSE), 80);
    ck_assert_uint_eq(gl_exact_deadline(10, TRUE), 310);
    ck_assert_uint_eq(gl_exact_deadline(-1, TRUE), 60);
    ck_assert_uint_le(gl_exact_deadline(1e30, TRUE), G_MAXUINT / 2);
}
END_TEST

Suite *gl_exact_suite(void)
{
    Suite *suite = suite_create("exact");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_exact_deadline_follows_what_runs_again);
    suite_add_tcase(suite, tc);
    return suite;
}
