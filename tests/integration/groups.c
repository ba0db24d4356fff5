/* Integration tests, gemleak run: one bug, one entry (issue 21), on the
 * three shapes of fixtures/ext/grouped built and run under real Valgrind. */
#include <string.h>

#include "harness.h"

/* All three shapes in one process: they keep apart from each other too. */
START_TEST(test_three_shapes_four_bugs)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS,
                "require 'grouped'; Grouped.destroy_loop; "
                "3.times { begin; Grouped.parse('!x'); rescue ArgumentError; end }; "
                "Grouped.generate; Grouped.array_to_json");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^30 bytes in 30 blocks are definitely lost in 30 call paths "
                          "\\(30 occurrences in 1 process\\)$");
    gl_assert_line(r.err, "^one bug: lost in loop_realloc, entered through grouped_destroy_loop$");
    gl_assert_line(r.err, "^and 27 more call paths ");
    gl_assert_line(r.err, "^219 bytes in 9 blocks are definitely lost in 3 call paths ");
    gl_assert_line(r.err, "^one bug: lost in parser_init, entered through grouped_parse$");
    /* fbuffer_alloc's two bugs: two entries of their own */
    gl_assert_line(r.err, "^40 bytes in 1 block is definitely lost$");
    gl_assert_line(r.err, "^24 bytes in 1 block is definitely lost$");
    ck_assert_uint_eq(gl_test_count(r.err, strlen(r.err), "one bug: "), 2);
    /* by bytes lost: the loop's 30 call paths of 1 byte come before the
     * 24 bytes of array_to_json */
    const char *loop = strstr(r.err, "30 bytes in 30 blocks");
    const char *array = strstr(r.err, "24 bytes in 1 block");
    ck_assert(loop != NULL && array != NULL && loop < array);
    gl_assert_line(r.err, ": 35 findings in 4 groups \\(35 occurrences\\)");
    gl_assert_line(r.err, "^gemleak: FAIL: 4 leaks \\(35 call paths\\) losing 313 bytes$");
    result_discard(&r);
}
END_TEST

void integration_groups(TCase *tcase)
{
    tcase_add_test(tcase, test_three_shapes_four_bugs);
}
