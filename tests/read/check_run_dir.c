/* What the helper and gemleak wrote of a run beside the engine's reports:
 * ruby-PID.txt, the lists and engine.txt (gemleak/read/run_dir.h). */
#include "testutil.h"
#include "gemleak/read/run_dir.h"

#include <sys/stat.h>
#include <unistd.h>

START_TEST(test_ruby_of_a_process)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "ruby-12.txt", NULL);
    GlProcessFacts facts;
    ck_assert(!gl_process_facts_read(dir, 12, &facts));
    ck_assert(!facts.known);
    gl_test_write(path, "3.4.5 free-at-exit\n", -1);
    ck_assert(gl_process_facts_read(dir, 12, &facts));
    ck_assert_str_eq(facts.ruby_version, "3.4.5");
    ck_assert(facts.free_at_exit);
    gl_test_write(path, "3.1.2\n", -1);
    ck_assert(gl_process_facts_read(dir, 12, &facts));
    ck_assert_str_eq(facts.ruby_version, "3.1.2");
    ck_assert(!facts.free_at_exit);
    /* not a version: said, but no version kept */
    gl_test_write(path, "3.4.5\x1b[2J free-at-exit\n", -1);
    ck_assert(gl_process_facts_read(dir, 12, &facts));
    ck_assert_str_eq(facts.ruby_version, "");
    ck_assert(facts.free_at_exit);
    /* more than the helper writes: not its */
    g_autofree char *big = g_strnfill(4096, '3');
    gl_test_write(path, big, -1);
    ck_assert(!gl_process_facts_read(dir, 12, &facts));
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_engine_of_a_run)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "engine.txt", NULL);
    g_auto(GlRunFacts) none = { 0 };
    gl_run_facts_read(dir, &none);
    ck_assert_str_eq(none.title, "Valgrind");
    ck_assert_str_eq(none.name, "valgrind");
    ck_assert(!none.silent_when_clean);
    ck_assert_ptr_null(none.min_ruby);
    /* gemleak before 0.2: the title alone, for the silent engines only */
    gl_test_write(path, "LeakSanitizer", -1);
    g_auto(GlRunFacts) legacy = { 0 };
    gl_run_facts_read(dir, &legacy);
    ck_assert_str_eq(legacy.title, "LeakSanitizer");
    ck_assert(legacy.silent_when_clean);
    gl_test_write(path, "LeakSanitizer\nname lsan\nversion /usr/lib/liblsan.so.0\n"
                        "silent-when-clean yes\nmin-ruby 3.3\nmin-ruby-why it frees\n", -1);
    g_auto(GlRunFacts) facts = { 0 };
    gl_run_facts_read(dir, &facts);
    ck_assert_str_eq(facts.name, "lsan");
    ck_assert_str_eq(facts.version, "/usr/lib/liblsan.so.0");
    ck_assert_str_eq(facts.min_ruby, "3.3");
    ck_assert_str_eq(facts.min_ruby_why, "it frees");
    ck_assert(facts.silent_when_clean);
    gl_remove_tree(dir);
}
END_TEST

/* Issue 35, 14: every file of a run directory is read bounded, and only
 * when it is a regular file: a list linked to /dev/zero grew to 3 GB, and
 * a FIFO in its place hung `gemleak filter` (the case's own timeout is the
 * bound: the hang is the bug). */
START_TEST(test_run_directory_files_are_regular_and_bounded)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *zero = g_build_filename(dir, "loaded-7.txt", NULL);
    ck_assert_int_eq(symlink("/dev/zero", zero), 0);
    g_autofree char *fifo = g_build_filename(dir, "ruby-8.txt", NULL);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    g_autofree char *fifo2 = g_build_filename(dir, "loaded-8.txt", NULL);
    ck_assert_int_eq(mkfifo(fifo2, 0600), 0);
    g_autofree char *engine = g_build_filename(dir, "engine.txt", NULL);
    ck_assert_int_eq(symlink("/dev/zero", engine), 0);
    GlProcessFacts facts;
    ck_assert(!gl_process_facts_read(dir, 8, &facts));
    g_autofree char *loaded = gl_process_loaded(dir, 7);
    ck_assert_ptr_null(loaded);
    g_autofree char *loaded_fifo = gl_process_loaded(dir, 8);
    ck_assert_ptr_null(loaded_fifo);
    g_auto(GlRunFacts) run = { 0 };
    gl_run_facts_read(dir, &run);
    ck_assert_str_eq(run.title, "Valgrind");
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_ruby_versions_compared)
{
    ck_assert(gl_ruby_version_at_least("3.3.0", "3.3"));
    ck_assert(gl_ruby_version_at_least("3.4.5", "3.3"));
    ck_assert(gl_ruby_version_at_least("4.0.0", "3.3"));
    ck_assert(!gl_ruby_version_at_least("3.2.9", "3.3"));
    ck_assert(!gl_ruby_version_at_least("2.7.8", "3.3"));
    ck_assert(!gl_ruby_version_at_least("", "3.3"));
    ck_assert(!gl_ruby_version_at_least(NULL, "3.3"));
}
END_TEST

Suite *gl_run_dir_suite(void)
{
    Suite *suite = suite_create("run_dir");
    TCase *tc = tcase_create("facts");
    tcase_add_test(tc, test_ruby_of_a_process);
    tcase_add_test(tc, test_engine_of_a_run);
    tcase_add_test(tc, test_ruby_versions_compared);
    tcase_add_test(tc, test_run_directory_files_are_regular_and_bounded);
    suite_add_tcase(suite, tc);
    return suite;
}
