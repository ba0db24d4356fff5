/* sys: file replacement, removal of trees, path resolution, signal names. */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "testutil.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/errors.h"

/* A replaced file has the new bytes only, and keeps its mode: whether
 * the disk is waited for (gl_file_replace) or not (the unsynced kind,
 * whose new file is 0600). */
START_TEST(test_file_replace)
{
    gboolean (*const replacers[])(const char *, const char *, gsize, GError **) = {
        gl_file_replace, gl_file_replace_unsynced
    };
    for (guint i = 0; i < G_N_ELEMENTS(replacers); i++) {
        g_autofree char *dir = gl_test_tmpdir();
        g_autofree char *path = g_build_filename(dir, "report.json", NULL);
        g_autoptr(GError) error = NULL;
        ck_assert(replacers[i](path, "first, and longer\n", 18, &error));
        struct stat made;
        ck_assert_int_eq(stat(path, &made), 0);
        /* the unsynced kind's new file is the user's alone */
        if (replacers[i] == gl_file_replace_unsynced)
            ck_assert_int_eq(made.st_mode & 0777, 0600);
        ck_assert_int_eq(g_chmod(path, 0640), 0);
        ck_assert(replacers[i](path, "second\n", 7, &error));
        g_autofree char *text = gl_test_read(path, NULL);
        ck_assert_str_eq(text, "second\n");
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_int_eq(st.st_mode & 0777, 0640);
        /* nothing left beside it */
        g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
        ck_assert_str_eq(g_dir_read_name(listing), "report.json");
        ck_assert_ptr_null(g_dir_read_name(listing));

        /* a file in a directory that does not exist: an I/O error */
        g_autofree char *nowhere = g_build_filename(dir, "no", "such", "file", NULL);
        ck_assert(!replacers[i](nowhere, "x", 1, &error));
        ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_IO));
        gl_remove_tree(dir);
    }
}
END_TEST

/* A second name of a file: where there was none, and over one that was
 * there (the cache's file named again in a run's directory, and back);
 * nothing left beside it; where it cannot be made, an I/O error and the
 * name as it was. */
START_TEST(test_file_link_replace)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *source = g_build_filename(dir, "kept.iseq", NULL);
    g_autofree char *named = g_build_filename(dir, "run.iseq", NULL);
    gl_test_write(source, "compiled\n", -1);
    g_autoptr(GError) error = NULL;
    struct stat src, st;
    ck_assert_int_eq(stat(source, &src), 0);
    ck_assert(gl_file_link_replace(source, named, &error));
    ck_assert_int_eq(stat(named, &st), 0);
    ck_assert(st.st_ino == src.st_ino && st.st_dev == src.st_dev);
    /* over another file */
    g_autofree char *other = g_build_filename(dir, "other.iseq", NULL);
    gl_test_write(other, "another\n", -1);
    ck_assert(gl_file_link_replace(other, named, &error));
    g_autofree char *text = gl_test_read(named, NULL);
    ck_assert_str_eq(text, "another\n");
    g_autofree char *kept = gl_test_read(source, NULL);
    ck_assert_str_eq(kept, "compiled\n");
    g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
    guint names = 0;
    while (g_dir_read_name(listing) != NULL)
        names++;
    ck_assert_uint_eq(names, 3);
    /* no such source: an I/O error, the name as it was */
    g_autofree char *missing = g_build_filename(dir, "missing.iseq", NULL);
    ck_assert(!gl_file_link_replace(missing, named, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_IO));
    g_autofree char *still = gl_test_read(named, NULL);
    ck_assert_str_eq(still, "another\n");
    gl_remove_tree(dir);
}
END_TEST

/* A tree goes; a symbolic link in it goes, and what it points to stays. */
START_TEST(test_remove_tree_follows_no_link)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *outside = gl_test_tmpdir();
    g_autofree char *kept = g_build_filename(outside, "kept.txt", NULL);
    gl_test_write(kept, "mine\n", -1);
    g_autofree char *sub = g_build_filename(dir, "a", "b", NULL);
    ck_assert_int_eq(g_mkdir_with_parents(sub, 0700), 0);
    g_autofree char *file = g_build_filename(sub, "c.txt", NULL);
    gl_test_write(file, "c\n", -1);
    g_autofree char *link = g_build_filename(dir, "a", "link", NULL);
    ck_assert_int_eq(symlink(outside, link), 0);
    gl_remove_tree(dir);
    ck_assert(!g_file_test(dir, G_FILE_TEST_EXISTS));
    ck_assert(g_file_test(kept, G_FILE_TEST_IS_REGULAR));
    gl_remove_tree(NULL);  /* nothing to remove */
    gl_remove_tree(outside);
}
END_TEST

/* A symbolic link is resolved, the last component too, even when what it
 * points to does not exist yet. */
START_TEST(test_path_resolve)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *real = g_canonicalize_filename(dir, NULL);
    g_autofree char *target = g_build_filename(real, "target.json", NULL);
    g_autofree char *link = g_build_filename(dir, "link.json", NULL);
    ck_assert_int_eq(symlink(target, link), 0);
    g_autofree char *resolved = gl_path_resolve(link);
    ck_assert_str_eq(resolved, target);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_signal_names)
{
    ck_assert_str_eq(gl_signal_name(SIGKILL), "SIGKILL");
    ck_assert_str_eq(gl_signal_name(SIGTERM), "SIGTERM");
    ck_assert_str_eq(gl_signal_name(SIGSEGV), "SIGSEGV");
}
END_TEST

Suite *gl_sys_suite(void)
{
    Suite *suite = suite_create("sys");
    TCase *tc = tcase_create("sys");
    tcase_add_test(tc, test_file_replace);
    tcase_add_test(tc, test_remove_tree_follows_no_link);
    tcase_add_test(tc, test_file_link_replace);
    tcase_add_test(tc, test_path_resolve);
    tcase_add_test(tc, test_signal_names);
    suite_add_tcase(suite, tc);
    return suite;
}
