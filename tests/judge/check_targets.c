/* targets: the extensions a run loaded, from the helper's lists. */
#include <string.h>

#include "testutil.h"
#include "gemleak/base/protocol.h"
#include "gemleak/judge/targets.h"

/* Each path once, sorted, from every list of the run directory. */
START_TEST(test_loaded_lists)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *one = g_build_filename(dir, GL_PROTO_LOADED_PREFIX "12" GL_PROTO_FILE_SUFFIX, NULL);
    g_autofree char *two = g_build_filename(dir, GL_PROTO_LOADED_PREFIX "13" GL_PROTO_FILE_SUFFIX, NULL);
    gl_test_write(one, "/p/lib/b.so\n/p/lib/a.so\n", -1);
    gl_test_write(two, "/p/lib/a.so\n", -1);
    const char *inputs[] = { dir, NULL };
    gboolean found = FALSE;
    g_autoptr(GPtrArray) loaded = gl_targets_from_loaded_lists(inputs, &found);
    ck_assert(found);
    ck_assert_uint_eq(loaded->len, 2);
    ck_assert_str_eq(g_ptr_array_index(loaded, 0), "/p/lib/a.so");
    ck_assert_str_eq(g_ptr_array_index(loaded, 1), "/p/lib/b.so");

    /* a file of the run: the lists beside it */
    g_autofree char *xml = g_build_filename(dir, "12.xml", NULL);
    gl_test_write(xml, "", 0);
    const char *file_inputs[] = { xml, NULL };
    g_autoptr(GPtrArray) beside = gl_targets_from_loaded_lists(file_inputs, NULL);
    ck_assert_uint_eq(beside->len, 2);
    gl_remove_tree(dir);
}
END_TEST

/* No list: nothing found. An empty list (a Ruby that loaded no
 * extension): found, and empty. */
START_TEST(test_no_or_empty_lists)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *inputs[] = { dir, NULL };
    gboolean found = TRUE;
    g_autoptr(GPtrArray) none = gl_targets_from_loaded_lists(inputs, &found);
    ck_assert(!found);
    ck_assert_uint_eq(none->len, 0);
    g_autofree char *empty = g_build_filename(dir, GL_PROTO_LOADED_PREFIX "7" GL_PROTO_FILE_SUFFIX, NULL);
    gl_test_write(empty, "", 0);
    g_autoptr(GPtrArray) nothing = gl_targets_from_loaded_lists(inputs, &found);
    ck_assert(found);
    ck_assert_uint_eq(nothing->len, 0);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_targets_suite(void)
{
    Suite *suite = suite_create("targets");
    TCase *tc = tcase_create("targets");
    tcase_add_test(tc, test_loaded_lists);
    tcase_add_test(tc, test_no_or_empty_lists);
    suite_add_tcase(suite, tc);
    return suite;
}
