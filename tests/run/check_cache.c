/* gemleak's cache between runs (src/run/cache.c): what is kept under a
 * key is what is read under it, and nothing under another; a directory
 * others can write to is not used; the helper a Ruby compiled, and what it
 * read of RbConfig, reach the next run's helper directory whole; what a
 * run asked of a Ruby is not asked again of the same executable, and is
 * asked again of one built or installed since; so is where the C compiler
 * said a sanitizer's runtime is; a run's helper files are the cache's,
 * written once a build. The unit runner's cache is
 * a private directory (check_main.c). */
#include "testutil.h"
#include "gemleak/run/cache.h"
#include "gemleak/run/runner.h"
#include "../../src/run/runner_int.h"
#include "helper_util.h"
#include "../../src/run/sanitizer_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "helper_sum.h"

START_TEST(test_kept_under_its_key)
{
    gl_cache_put("unit", "one.txt", "key one", "value\nof one\n");
    g_autofree char *got = gl_cache_get("unit", "one.txt", "key one");
    ck_assert_str_eq(got, "value\nof one\n");
    ck_assert_ptr_null(gl_cache_get("unit", "one.txt", "key two"));
    ck_assert_ptr_null(gl_cache_get("unit", "one.txt", "key"));
    ck_assert_ptr_null(gl_cache_get("unit", "none.txt", "key one"));
    ck_assert_ptr_null(gl_cache_get("unit", "../one.txt", "key one"));
    ck_assert_ptr_null(gl_cache_dir("a/b"));
    ck_assert_ptr_null(gl_cache_dir(""));
    /* a key of two lines is never kept: it could not be read back */
    gl_cache_put("unit", "two.txt", "key\ntwo", "value");
    ck_assert_ptr_null(gl_cache_get("unit", "two.txt", "key"));
    /* kept again: the new value */
    gl_cache_put("unit", "one.txt", "key one", "another");
    g_autofree char *again = gl_cache_get("unit", "one.txt", "key one");
    ck_assert_str_eq(again, "another");
}
END_TEST

/* What is kept there runs in the suite's Ruby: a cache others can write
 * to is neither read nor written. */
START_TEST(test_a_directory_others_can_write_is_not_used)
{
    gl_cache_put("shared", "one.txt", "key", "value");
    g_autofree char *dir = gl_cache_dir("shared");
    ck_assert_ptr_nonnull(dir);
    g_autofree char *runs = g_path_get_dirname(dir);
    const char *const dirs[] = { dir, runs };
    for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
        ck_assert_int_eq(g_chmod(dirs[i], 0777), 0);
        ck_assert_ptr_null(gl_cache_dir("shared"));
        ck_assert_ptr_null(gl_cache_get("shared", "one.txt", "key"));
        ck_assert_int_eq(g_chmod(dirs[i], 0700), 0);
    }
    g_autofree char *got = gl_cache_get("shared", "one.txt", "key");
    ck_assert_str_eq(got, "value");
}
END_TEST

/* A helper directory gets what the Rubies of a run before it compiled and
 * read (whole files only, not one a Ruby was still writing), and the same
 * helper only: another helper's compiled file is not this one's. */
START_TEST(test_the_helper_compiled_before_reaches_the_next_run)
{
    g_autofree char *first = gl_test_written_helper(TRUE);
    const char *const kept[] = { "gemleak_helper_body-ruby-3.4.5-x86_64-linux-20cda200d3.iseq",
                                 "rbconfig-2049-1837465.txt", NULL };
    const char *const not_kept[] = { "gemleak_helper_body-ruby-3.4.5-x86_64-linux-20cda200d3.iseq.42",
                                     "rbconfig-2049-1837466.txt.42", NULL };
    for (const char *const *name = kept; *name != NULL; name++) {
        g_autofree char *path = g_build_filename(first, *name, NULL);
        gl_test_write(path, *name, -1);
    }
    for (const char *const *name = not_kept; *name != NULL; name++) {
        g_autofree char *path = g_build_filename(first, *name, NULL);
        gl_test_write(path, *name, -1);
    }
    gl_run_keep_helper(first);
    gl_remove_tree(first);

    g_autofree char *second = gl_test_written_helper(TRUE);
    for (const char *const *name = kept; *name != NULL; name++) {
        g_autofree char *path = g_build_filename(second, *name, NULL);
        g_autofree char *text = gl_test_read(path, NULL);
        ck_assert_str_eq(text, *name);
    }
    for (const char *const *name = not_kept; *name != NULL; name++) {
        g_autofree char *path = g_build_filename(second, *name, NULL);
        ck_assert_msg(!g_file_test(path, G_FILE_TEST_EXISTS), "%s was kept", *name);
    }
    /* on one filesystem, each run's is the cache's file itself, not a copy;
     * a Ruby's new file (renamed over it) leaves the cache's as it was
     * until the run is kept */
    g_autofree char *third = gl_test_written_helper(TRUE);
    g_autofree char *in_second = g_build_filename(second, kept[0], NULL);
    g_autofree char *in_third = g_build_filename(third, kept[0], NULL);
    GStatBuf a, b;
    ck_assert_int_eq(g_stat(in_second, &a), 0);
    ck_assert_int_eq(g_stat(in_third, &b), 0);
    if (a.st_dev == b.st_dev)
        ck_assert_msg(a.st_ino == b.st_ino, "%s was copied, not linked", kept[0]);
    g_autofree char *partial = g_strconcat(in_second, ".42", NULL);
    gl_test_write(partial, "compiled again", -1);
    ck_assert_int_eq(g_rename(partial, in_second), 0);
    g_autofree char *third_text = gl_test_read(in_third, NULL);
    ck_assert_str_eq(third_text, kept[0]);
    gl_run_keep_helper(second);
    gl_remove_tree(second);
    gl_remove_tree(third);
    g_autofree char *fourth = gl_test_written_helper(TRUE);
    g_autofree char *in_fourth = g_build_filename(fourth, kept[0], NULL);
    g_autofree char *fourth_text = gl_test_read(in_fourth, NULL);
    ck_assert_str_eq(fourth_text, "compiled again");
    gl_remove_tree(fourth);
}
END_TEST

/* Issue 36: a run's helper directory held 1 MB written again in every
 * run (the guard most of it). Its files are second names of the ones
 * gemleak's cache holds for this build, written there by the first run;
 * a cached file that is not what this build wrote (another size, other
 * permissions) is written again, and the run's files are whole. */
START_TEST(test_the_helpers_files_are_the_caches)
{
    static const char *const files[] = { "gemleak_helper.rb", "gemleak_helper_body.rb",
                                         "gemleak_helper_per_test_again.rb",
                                         "gemleak_helper_launch_outside.rb",
                                         "gemleak_helper_growth_run.rb",
                                         "gemleak_preload.so", "gemleak_alloc.so",
                                         "gemleak_client.so", "gemleak_guard" };
    g_autofree char *cache = gl_cache_dir("helper-" GL_HELPER_SUM);
    ck_assert_ptr_nonnull(cache);
    g_autofree char *first = gl_test_written_helper(TRUE);
    g_autofree char *second = gl_test_written_helper(TRUE);
    guint linked = 0;
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *in_first = g_build_filename(first, files[i], NULL);
        g_autofree char *in_second = g_build_filename(second, files[i], NULL);
        g_autofree char *cached = g_build_filename(cache, files[i], NULL);
        GStatBuf a, b, c;
        if (g_stat(in_first, &a) != 0) {
            /* a build without the guard (no static C library) has none */
            ck_assert_str_eq(files[i], "gemleak_guard");
            continue;
        }
        ck_assert_int_eq(g_stat(in_second, &b), 0);
        ck_assert_int_eq(g_stat(cached, &c), 0);
        ck_assert_int_eq(a.st_size, c.st_size);
        if (a.st_dev != c.st_dev)
            continue;  /* the cache on another filesystem: written */
        ck_assert_msg(a.st_ino == c.st_ino && b.st_ino == c.st_ino, "%s was written, not linked",
                      files[i]);
        linked++;
    }
    g_autofree char *guard = g_build_filename(second, "gemleak_guard", NULL);
    if (g_file_test(guard, G_FILE_TEST_EXISTS))
        ck_assert(g_file_test(guard, G_FILE_TEST_IS_EXECUTABLE));

    /* a cached file another hand changed: written again, whole */
    g_autofree char *body = g_build_filename(first, "gemleak_helper_body.rb", NULL);
    g_autofree char *whole = gl_test_read(body, NULL);
    g_autofree char *cached_body = g_build_filename(cache, "gemleak_helper_body.rb", NULL);
    ck_assert_int_eq(g_unlink(cached_body), 0);
    gl_test_write(cached_body, "# not the helper\n", -1);
    g_autofree char *third = gl_test_written_helper(TRUE);
    g_autofree char *in_third = g_build_filename(third, "gemleak_helper_body.rb", NULL);
    g_autofree char *third_text = gl_test_read(in_third, NULL);
    ck_assert_str_eq(third_text, whole);
    g_autofree char *cached_text = gl_test_read(cached_body, NULL);
    ck_assert_str_eq(cached_text, whole);
    gl_remove_tree(first);
    gl_remove_tree(second);
    gl_remove_tree(third);
    if (linked == 0)
        gl_test_skip("the cache is on another filesystem than the helper's directories here");
}
END_TEST

/* What gemleak asks of the command's Ruby before a run (its version) is
 * asked once of an executable: a run after it reads what the first was
 * told, and an executable changed since is asked again. The Ruby here is
 * a script that says a version; each call names it another way (the
 * process remembers the last Ruby asked by name). */
START_TEST(test_a_ruby_is_asked_once)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *ruby = g_build_filename(dir, "ruby", NULL);
    gl_test_write(ruby, "#!/bin/sh\nprintf '9.8.7\\n-O2 -fno-omit-frame-pointer'\n", -1);
    ck_assert_int_eq(g_chmod(ruby, 0755), 0);
    g_autofree char *version = gl_ruby_version(ruby);
    ck_assert_str_eq(version, "9.8.7");
    ck_assert(gl_ruby_frame_pointers(ruby));
    /* what the first run was told, made another answer where it is kept */
    g_autofree char *cache = gl_cache_dir("rubies");
    g_autofree char *real = realpath(ruby, NULL);
    g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, real, -1);
    g_autofree char *file = g_strdup_printf("%.16s.txt", sum);
    g_autofree char *path = g_build_filename(cache, file, NULL);
    g_autofree char *text = gl_test_read(path, NULL);
    char *told = strchr(text, '\n');
    ck_assert_ptr_nonnull(told);
    *told = '\0';
    g_autofree char *other = g_strconcat(text, "\n4.5.6\n-O2", NULL);
    gl_test_write(path, other, -1);
    g_autofree char *by_path = g_strconcat(dir, "/./ruby", NULL);
    g_autofree char *kept = gl_ruby_version(by_path);
    ck_assert_str_eq(kept, "4.5.6");
    ck_assert(!gl_ruby_frame_pointers(by_path));
    /* the executable written again: asked again */
    gl_test_write(ruby, "#!/bin/sh\nprintf '9.8.8\\n-O2'\n", -1);
    ck_assert_int_eq(g_chmod(ruby, 0755), 0);
    g_autofree char *again_path = g_strconcat(dir, "/././ruby", NULL);
    g_autofree char *again = gl_ruby_version(again_path);
    ck_assert_str_eq(again, "9.8.8");
    gl_remove_tree(dir);
}
END_TEST

/* Where the C compiler says a sanitizer's runtime is, it is asked once: a
 * run after it (here, the same library asked after another, which the
 * process does not remember) reads what it was told; a compiler installed
 * again is asked again. The compiler is a script first on PATH that counts
 * its runs. */
START_TEST(test_a_compiler_is_asked_once_for_a_runtime)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *gcc = g_build_filename(dir, "gcc", NULL);
    g_autofree char *runs = g_build_filename(dir, "runs", NULL);
    const char *const names[] = { "one", "two", "three" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *name = g_strdup_printf("%s/lib%s.so.0", dir, names[i]);
        gl_test_write(name, "", 0);
    }
    g_autofree char *script = g_strdup_printf(
        "#!/bin/sh\necho >> '%s'\ncase \"$1\" in\n"
        "-print-file-name=libgltest_one.so) echo '%s/libone.so.0' ;;\n"
        "-print-file-name=libgltest_two.so) echo '%s/libtwo.so.0' ;;\n"
        "*) echo \"${1#-print-file-name=}\" ;;\nesac\n", runs, dir, dir);
    gl_test_write(gcc, script, -1);
    ck_assert_int_eq(g_chmod(gcc, 0755), 0);
    g_autofree char *path = g_strconcat(dir, ":", g_getenv("PATH"), NULL);
    g_setenv("PATH", path, TRUE);
    const GlSanitizerRuntime one = { "one", "One", "libgltest_one.so", "GEMLEAK_TEST_NO_SUCH_RUNTIME",
                                     "nothing", "one" };
    const GlSanitizerRuntime two = { "two", "Two", "libgltest_two.so", "GEMLEAK_TEST_NO_SUCH_RUNTIME",
                                     "nothing", "two" };
    const struct {
        const GlSanitizerRuntime *runtime;
        const char *expected;   /* the library's name in @dir */
        guint runs;             /* the compiler's runs after it */
    } asked[] = {
        { &one, "libone.so.0", 1 }, { &two, "libtwo.so.0", 2 },
        /* what the first was told, kept */
        { &one, "libone.so.0", 2 }, { &two, "libtwo.so.0", 2 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(asked); i++) {
        g_autoptr(GError) error = NULL;
        g_autofree char *found = gl_sanitizer_runtime(asked[i].runtime, &error);
        ck_assert_msg(found != NULL, "%s", error != NULL ? error->message : "");
        g_autofree char *base = g_path_get_basename(found);
        ck_assert_str_eq(base, asked[i].expected);
        g_autofree char *counted = gl_test_read(runs, NULL);
        ck_assert_uint_eq(strlen(counted), asked[i].runs);
    }
    /* the compiler installed again, naming another library: asked again */
    g_autofree char *other = g_strdup_printf(
        "#!/bin/sh\necho >> '%s'\necho '%s/libthree.so.0'\n", runs, dir);
    g_unlink(gcc);
    gl_test_write(gcc, other, -1);
    ck_assert_int_eq(g_chmod(gcc, 0755), 0);
    g_autofree char *again = gl_sanitizer_runtime(&one, NULL);
    ck_assert_ptr_nonnull(again);
    g_autofree char *base = g_path_get_basename(again);
    ck_assert_str_eq(base, "libthree.so.0");
    g_autofree char *counted = gl_test_read(runs, NULL);
    ck_assert_uint_eq(strlen(counted), 3);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_cache_suite(void)
{
    Suite *suite = suite_create("cache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_kept_under_its_key);
    tcase_add_test(tc, test_a_directory_others_can_write_is_not_used);
    tcase_add_test(tc, test_the_helper_compiled_before_reaches_the_next_run);
    tcase_add_test(tc, test_the_helpers_files_are_the_caches);
    tcase_add_test(tc, test_a_ruby_is_asked_once);
    tcase_add_test(tc, test_a_compiler_is_asked_once_for_a_runtime);
    suite_add_tcase(suite, tc);
    return suite;
}
