/* The imports of the modules loaded, by their GOT entries (src/agent/
 * got.c), which the allocation front and the client library redirect:
 * which names a list of globs takes, each import of a real module found
 * with the function it calls, a module met once until one is unloaded. */
#define _GNU_SOURCE
#include "testutil.h"
#include "gemleak/base/sys.h"
#include "../../src/agent/got_int.h"

#include <dlfcn.h>
#include <string.h>

START_TEST(test_names_match_as_globs)
{
    GotNames names = { .n = 0 };
    got_names_add(&names, "malloc");
    got_names_add(&names, "st_*");
    got_names_add(&names, "rebuild_table*");
    got_names_add(&names, "_Zn[wa]m");
    ck_assert(got_names_match(&names, "malloc"));
    ck_assert(!got_names_match(&names, "malloc_usable_size"));  /* a name is whole */
    ck_assert(!got_names_match(&names, "mallo"));
    ck_assert(got_names_match(&names, "st_insert"));            /* a prefix */
    ck_assert(got_names_match(&names, "st_"));
    ck_assert(!got_names_match(&names, "rb_st_insert"));
    ck_assert(got_names_match(&names, "rebuild_table_with"));
    ck_assert(got_names_match(&names, "_Znwm"));                /* fnmatch's */
    ck_assert(got_names_match(&names, "_Znam"));
    ck_assert(!got_names_match(&names, "_Znxm"));
    ck_assert(!got_names_match(&names, ""));
}
END_TEST

/* The file gemleak writes (GEMLEAK_ALLOC_APIS): a glob a line, '#' a
 * comment, blank lines and a last line without its newline. */
START_TEST(test_names_read_from_file)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "apis.txt", NULL);
    gl_test_write(path, "# rule 2\nruby_xmalloc\n\nrb_st_*\nonig_new", -1);
    GotNames names = { .n = 0 };
    ck_assert_int_eq(got_names_read(&names, path), 1);
    ck_assert_uint_eq(names.n, 3);
    ck_assert(got_names_match(&names, "ruby_xmalloc"));
    ck_assert(got_names_match(&names, "rb_st_init_numtable"));
    ck_assert(got_names_match(&names, "onig_new"));
    ck_assert(!got_names_match(&names, "# rule 2"));
    g_autofree char *missing = g_build_filename(dir, "none.txt", NULL);
    ck_assert_int_eq(got_names_read(&names, missing), 0);
    ck_assert_uint_eq(names.n, 3);
    gl_remove_tree(dir);
}
END_TEST

typedef struct {
    const char *module;      /* a part of the name of the module looked at */
    int found;               /* its import of malloc was met */
    uintptr_t bound;         /* what that entry calls */
} Looking;

static void on_import(const GotModule *module, uintptr_t slot, const char *name, void *data)
{
    Looking *looking = data;
    ck_assert(slot >= module->low && slot < module->high);  /* the entry is the module's */
    if (strcmp(name, "malloc") == 0) {
        looking->found = 1;
        looking->bound = got_bound(module, slot, name);
    }
}

static int in_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    Looking *looking = data;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, looking->module) == NULL)
        return 0;
    got_each_import(info, on_import, looking);
    return 1;
}

/* GLib, which this program loads, calls malloc through its GOT: the entry
 * is found, and calls what the loader binds malloc to (bound now or not). */
START_TEST(test_imports_of_a_loaded_module)
{
    Looking looking = { .module = "libglib-2.0.so" };
    ck_assert_int_eq(dl_iterate_phdr(in_module, &looking), 1);
    ck_assert(looking.found);
    ck_assert_ptr_eq((void *) looking.bound, dlsym(RTLD_DEFAULT, "malloc"));
}
END_TEST

START_TEST(test_a_module_is_met_once_until_one_is_unloaded)
{
    static GotSeen seen;   /* large: not on the stack */
    memset(&seen, 0, sizeof seen);
    struct dl_phdr_info one = { .dlpi_addr = 0x7f0000000000, .dlpi_subs = 3 };
    struct dl_phdr_info two = { .dlpi_addr = 0x7f0000100000, .dlpi_subs = 3 };
    ck_assert_int_eq(got_seen_first(&seen, &one, sizeof one), 1);
    ck_assert_int_eq(got_seen_first(&seen, &two, sizeof two), 1);
    ck_assert_int_eq(got_seen_first(&seen, &one, sizeof one), 0);
    ck_assert_int_eq(got_seen_first(&seen, &two, sizeof two), 0);
    /* a module unloaded: another may be loaded where it was */
    one.dlpi_subs = two.dlpi_subs = 4;
    ck_assert_int_eq(got_seen_first(&seen, &one, sizeof one), 1);
    ck_assert_int_eq(got_seen_first(&seen, &one, sizeof one), 0);
    ck_assert_int_eq(got_seen_first(&seen, &two, sizeof two), 1);
}
END_TEST

Suite *gl_got_suite(void)
{
    Suite *suite = suite_create("got");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_names_match_as_globs);
    tcase_add_test(tc, test_names_read_from_file);
    tcase_add_test(tc, test_imports_of_a_loaded_module);
    tcase_add_test(tc, test_a_module_is_met_once_until_one_is_unloaded);
    suite_add_tcase(suite, tc);
    return suite;
}
