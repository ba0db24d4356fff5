/* targets: the extensions a run loaded, from the helper's lists. */
#include <string.h>

#include "testutil.h"
#include "gemleak/base/protocol.h"
#include "gemleak/judge/targets.h"
#include "gemleak/run/engine.h"

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

/* An extension built without AddressSanitizer is told from one built with
 * it by its dynamic symbols: GLib has no __asan_ symbol, the runtime
 * (which defines them, as an instrumented object imports them) has; what
 * is no ELF file, or none at all, is not said to lack them. */
START_TEST(test_elf_lacks_symbols)
{
    g_autofree char *glib = gl_test_mapped_library("libglib-2.0.so");
    ck_assert_ptr_nonnull(glib);
    ck_assert(gl_elf_lacks_symbols(glib, "__asan_"));
    ck_assert(!gl_elf_lacks_symbols(glib, "g_strdup"));
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *text = g_build_filename(dir, "not-elf.so", NULL);
    gl_test_write(text, "not an ELF file at all", -1);
    ck_assert(!gl_elf_lacks_symbols(text, "__asan_"));
    g_autofree char *missing = g_build_filename(dir, "missing.so", NULL);
    ck_assert(!gl_elf_lacks_symbols(missing, "__asan_"));
    gl_remove_tree(dir);
    g_autofree char *runtime = gl_engine_find("asan")->version(NULL, NULL);  /* its runtime */
    if (runtime != NULL)
        ck_assert(!gl_elf_lacks_symbols(runtime, "__asan_"));
}
END_TEST

Suite *gl_targets_suite(void)
{
    Suite *suite = suite_create("targets");
    TCase *tc = tcase_create("targets");
    tcase_add_test(tc, test_loaded_lists);
    tcase_add_test(tc, test_no_or_empty_lists);
    tcase_add_test(tc, test_elf_lacks_symbols);
    suite_add_tcase(suite, tc);
    return suite;
}
