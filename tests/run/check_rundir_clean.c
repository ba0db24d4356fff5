/* gemleak clean (src/run/rundir_clean.c): what is gemleak's to remove in
 * TMPDIR, and never a run that is starting. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "testutil.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/run/cache.h"
#include "gemleak/run/rundir.h"
#include "../../src/run/runner_int.h"
#include "helper_util.h"

/* A sanitizer engine's run directory is gemleak's to clean: its reports
 * (lsan.PID, asan.PID), engine.txt and the helper's engine-PID.txt; not
 * one that also holds what gemleak does not write. */
START_TEST(test_clean_removes_sanitizer_runs)
{
    g_autofree char *tmp = gl_test_tmpdir();
    const char *const ours[] = { "asan.27238", "lsan.27239", "engine-27238.txt", "engine.txt",
                                 "gemleak-run.txt", "loaded-27238.txt", NULL };
    g_autofree char *run = g_build_filename(tmp, "gemleak-run-2OJCZ3", NULL);
    g_autofree char *mine = g_build_filename(tmp, "gemleak-run-mine00", NULL);
    g_mkdir(run, 0700);
    g_mkdir(mine, 0700);
    for (const char *const *name = ours; *name != NULL; name++) {
        g_autofree char *path = g_build_filename(run, *name, NULL);
        gl_test_write(path, "x", -1);
    }
    g_autofree char *other = g_build_filename(mine, "asan.log", NULL);
    gl_test_write(other, "x", -1);
    FILE *null = fopen("/dev/null", "w");
    ck_assert_uint_eq(gl_rundir_clean(tmp, FALSE, null), 1);
    fclose(null);
    ck_assert(!g_file_test(run, G_FILE_TEST_EXISTS));
    ck_assert(g_file_test(other, G_FILE_TEST_EXISTS));
    gl_remove_tree(tmp);
}
END_TEST

/* A helper directory a killed gemleak left behind is gemleak's to clean,
 * whatever it holds of what gemleak writes there: every file of it as
 * gl_run_write_helper() writes it, the exact pass's lists, and the
 * compiled helper and RbConfig's values a Ruby of the run cached there. */
START_TEST(test_clean_removes_a_helper_directory_left_behind)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *written = gl_test_written_helper(TRUE); /* the gemleak that wrote it is gone */
    /* moved where nothing else is to clean */
    g_autofree char *base = g_path_get_basename(written);
    g_autofree char *helper = g_build_filename(tmp, base, NULL);
    ck_assert_msg(g_rename(written, helper) == 0, "%s: %s", written, g_strerror(errno));
    const char *const also[] = { "exact-sites.txt", "exact-tests.txt",
                                 "gemleak_helper_body-ruby-3.4.5-x86_64-linux-20cda200d3.iseq",
                                 "gemleak_helper_body-ruby-3.4.5-x86_64-linux-20cda200d3.iseq.4242",
                                 "rbconfig-2049-1837465.txt", "rbconfig-2049-1837465.txt.4242",
                                 NULL };
    for (const char *const *name = also; *name != NULL; name++) {
        g_autofree char *path = g_build_filename(helper, *name, NULL);
        gl_test_write(path, "x", -1);
    }
    FILE *null = fopen("/dev/null", "w");
    ck_assert_uint_eq(gl_rundir_clean(tmp, FALSE, null), 1);
    fclose(null);
    ck_assert_msg(!g_file_test(helper, G_FILE_TEST_EXISTS), "%s was left", helper);
    gl_remove_tree(tmp);
}
END_TEST

/* Each build of gemleak kept its helper in the cache (helper-HASH, some
 * 1.3 MB), and nothing removed another build's: gemleak clean removes
 * those that hold only what gemleak writes there, leaves this build's and
 * one holding something else, and with --dry-run only says so. */
START_TEST(test_clean_removes_other_builds_caches)
{
    /* this build's, as a run leaves it */
    g_autofree char *written = gl_test_written_helper(FALSE);
    gl_remove_tree(written);
    g_autofree char *ours = gl_cache_dir(gl_run_helper_cache_name());
    ck_assert_ptr_nonnull(ours);
    g_autofree char *root = gl_cache_root();
    ck_assert_ptr_nonnull(root);
    g_autofree char *old = g_build_filename(root, "helper-0123456789abcdef", NULL);
    g_autofree char *odd = g_build_filename(root, "helper-fedcba9876543210", NULL);
    const char *const files[] = { "gemleak_helper.rb", "gemleak_helper_body.rb", "gemleak_preload.so",
                                  "gemleak_helper_body-ruby-3.4.5-x86_64-linux-20cda200d3.iseq",
                                  "rbconfig-2049-1837465.txt", NULL };
    const char *const dirs[] = { old, odd, NULL };
    for (const char *const *dir = dirs; *dir != NULL; dir++) {
        ck_assert_int_eq(g_mkdir(*dir, 0700), 0);
        for (const char *const *name = files; *name != NULL; name++) {
            g_autofree char *path = g_build_filename(*dir, *name, NULL);
            gl_test_write(path, "x", -1);
        }
    }
    g_autofree char *stray = g_build_filename(odd, "notes.txt", NULL);
    gl_test_write(stray, "mine", -1);

    char *said = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&said, &size);
    ck_assert_uint_eq(gl_rundir_clean_cache(TRUE, out), 1);
    fclose(out);
    ck_assert_msg(g_file_test(old, G_FILE_TEST_IS_DIR), "--dry-run removed %s", old);
    ck_assert_msg(strstr(said, "would remove ") != NULL && strstr(said, "helper-0123456789abcdef") != NULL,
                  "%s", said);
    free(said);

    out = open_memstream(&said, &size);
    ck_assert_uint_eq(gl_rundir_clean_cache(FALSE, out), 1);
    fclose(out);
    ck_assert_msg(!g_file_test(old, G_FILE_TEST_EXISTS), "%s was left:\n%s", old, said);
    ck_assert_msg(g_file_test(ours, G_FILE_TEST_IS_DIR), "this build's cache was removed:\n%s", said);
    ck_assert_msg(g_file_test(stray, G_FILE_TEST_EXISTS), "%s was removed:\n%s", stray, said);
    ck_assert_msg(strstr(said, "left ") != NULL && strstr(said, "it holds notes.txt") != NULL, "%s", said);
    ck_assert_msg(strstr(said, "removed what gemleak's cache kept for 1 other build of gemleak") != NULL,
                  "%s", said);
    free(said);
    gl_remove_tree(odd);
}
END_TEST

/* gemleak clean, over and over, while runs start and end in its TMPDIR. */
typedef struct {
    const char *tmp;
    gint stop;
    guint removed;
} Cleaner;

static gpointer clean_over_and_over(gpointer data)
{
    Cleaner *cleaner = data;
    FILE *null = fopen("/dev/null", "w");
    while (!g_atomic_int_get(&cleaner->stop))
        cleaner->removed += gl_rundir_clean(cleaner->tmp, FALSE, null);
    fclose(null);
    return NULL;
}

/* gemleak clean never sees a starting run's directories unlocked: it
 * removed a run's XML or helper directory as it started (4 runs in 350). */
START_TEST(test_clean_racing_starting_runs)
{
    /* TMPDIR before GLib first reads it (it keeps it): not the shared /tmp */
    char template[] = "/tmp/gemleak-race-XXXXXX";
    ck_assert_ptr_nonnull(g_mkdtemp(template));
    g_autofree char *tmp = g_strdup(template);
    g_setenv("TMPDIR", tmp, TRUE);
    ck_assert_str_eq(g_get_tmp_dir(), tmp);
    g_autofree char *valgrind = g_build_filename(tmp, "fake-valgrind", NULL);
    gl_test_write(valgrind, "#!/bin/sh\n[ \"$1\" = --version ] && echo valgrind-3.19.0\nexit 0\n", -1);
    ck_assert_int_eq(g_chmod(valgrind, 0755), 0);
    Cleaner cleaner = { .tmp = tmp };
    GThread *thread = g_thread_new("clean", clean_over_and_over, &cleaner);
    guint lost = 0, runs = 150;
    for (guint i = 0; i < runs; i++) {
        GlRunOptions options = { .program = valgrind };
        g_autoptr(GPtrArray) commands = g_ptr_array_new_with_free_func((GDestroyNotify) g_strfreev);
        g_ptr_array_add(commands, g_strdupv((char *[]) { "true", NULL }));
        GlRunResult result;
        g_autoptr(GError) error = NULL;
        gboolean ok = gl_run_commands(&options, commands, &result, &error);
        if (!ok || !g_file_test(result.dir, G_FILE_TEST_IS_DIR) ||
            !g_file_test(result.helper_dir, G_FILE_TEST_IS_DIR))
            lost++;
        gl_run_finish(&result, TRUE);
    }
    g_atomic_int_set(&cleaner.stop, 1);
    g_thread_join(thread);
    ck_assert_msg(lost == 0 && cleaner.removed == 0,
                  "%u runs of %u lost a directory; gemleak clean removed %u", lost, runs,
                  cleaner.removed);
    gl_remove_tree(tmp);
}
END_TEST

Suite *gl_rundir_clean_suite(void)
{
    Suite *suite = suite_create("rundir_clean");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_clean_removes_sanitizer_runs);
    tcase_add_test(tc, test_clean_removes_a_helper_directory_left_behind);
    tcase_add_test(tc, test_clean_removes_other_builds_caches);
    suite_add_tcase(suite, tc);

    /* a race, run many times: seconds */
    TCase *races = tcase_create("races");
    tcase_set_timeout(races, 120);
    tcase_add_test(races, test_clean_racing_starting_runs);
    suite_add_tcase(suite, races);
    return suite;
}
