/* Readying a run (src/run/prepare.c): which programs are launchers. */
#include "testutil.h"
#include "gemleak/run/runner.h"

/* Bundler and Rake, by name or path, are launchers; Ruby and rspec not. */
START_TEST(test_launchers)
{
    ck_assert(gl_is_launcher("bundle"));
    ck_assert(gl_is_launcher("/usr/local/bin/bundle"));
    ck_assert(gl_is_launcher("bin/rake"));
    ck_assert(gl_is_launcher("bundler"));
    ck_assert(!gl_is_launcher("ruby"));
    ck_assert(!gl_is_launcher("rspec"));
    ck_assert(!gl_is_launcher("/home/rake/bin/ruby"));
    ck_assert(!gl_is_launcher("rake-compiler"));
}
END_TEST

Suite *gl_prepare_suite(void)
{
    Suite *suite = suite_create("prepare");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_launchers);
    suite_add_tcase(suite, tc);
    return suite;
}
