/* A run directory as its processes leave it, read back (src/run/rundir_untraced.c drops the XML
 * of forks that ran an untraced program; src/read/run_dir.c reads the rest): which were checked,
 * what ran outside the engine. */
#include "testutil.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/run/rundir.h"

/* What the helper says of a fork of a launcher that loaded an extension
 * outside Valgrind: a sentence each (the gate's verdict on them:
 * tests/judge/check_gate.c). */
START_TEST(test_processes_outside_valgrind)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *one = g_build_filename(dir, "outside-42.txt", NULL);
    g_autofree char *two = g_build_filename(dir, "outside-7.txt", NULL);
    g_autofree char *other = g_build_filename(dir, "outside-x.txt", NULL);
    gl_test_write(one, "forked from the launcher rake, it loaded /p/lib/x.so outside Valgrind\n", -1);
    gl_test_write(two, "", -1);                 /* cut short: still said */
    gl_test_write(other, "the launcher rake loaded /p/y.so outside Valgrind\n", -1); /* not the helper's name */
    g_autoptr(GPtrArray) said = gl_run_dir_outside(dir);
    ck_assert_uint_eq(said->len, 2);
    ck_assert_str_eq(g_ptr_array_index(said, 0),
                     "process 42: forked from the launcher rake, it loaded /p/lib/x.so outside "
                     "Valgrind");
    ck_assert_str_eq(g_ptr_array_index(said, 1),
                     "process 7: below a launcher, it ran outside Valgrind");

    gl_remove_tree(dir);
}
END_TEST

/* A run directory's processes: one that loaded an extension and has XML
 * was checked; one that loaded one and has none ran outside Valgrind; one
 * that loaded none, or ran a program Valgrind skips after the exec, is
 * neither; outside-PID.txt is the helper's own word. */
START_TEST(test_run_coverage)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *files[][2] = {
        { "loaded-10.txt", "/p/lib/x.so\n" }, { "10.xml", "<valgrindoutput>" },
        { "loaded-11.txt", "/p/lib/x.so\n/p/lib/y.so\n" },          /* no XML */
        { "loaded-12.txt", "" }, { "12.xml", "<valgrindoutput>" },    /* loaded nothing */
        { "loaded-13.txt", "/p/lib/x.so\n" }, { "13.xml.gz", "" },   /* kept, compressed */
        { "outside-14.txt", "the launcher rake loaded /p/lib/x.so outside Valgrind (seen at "
                            "its exit)\n" },
    };
    ck_assert(gl_rundir_mark(dir, NULL));
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *path = g_build_filename(dir, files[i][0], NULL);
        gl_test_write(path, files[i][1], -1);
    }
    g_autofree char *file = g_build_filename(dir, "10.xml", NULL);
    const char *inputs[] = { dir, file, NULL };   /* the directory once */
    GlRunCoverage coverage;
    gl_run_dir_coverage(inputs, &coverage);
    ck_assert_uint_eq(coverage.runs, 1);
    ck_assert_uint_eq(coverage.lists, 4);
    ck_assert_uint_eq(coverage.checked, 2);
    ck_assert_uint_eq(coverage.unlisted, 0);
    ck_assert_uint_eq(coverage.unchecked->len, 2);
    ck_assert_str_eq(g_ptr_array_index(coverage.unchecked, 0),
                     "process 11: it loaded /p/lib/x.so, /p/lib/y.so outside Valgrind (it has no "
                     "XML: a program Valgrind does not trace started it)");
    ck_assert_str_eq(g_ptr_array_index(coverage.unchecked, 1),
                     "process 14: the launcher rake loaded /p/lib/x.so outside Valgrind (seen at "
                     "its exit)");
    gl_run_coverage_clear(&coverage);

    /* Valgrind's file of a process that exec'd a compiler ends after its
     * preamble: dropped, and its list with it. */
    g_autofree char *xml = g_build_filename(dir, "11.xml", NULL);
    gl_test_write(xml, "<?xml version=\"1.0\"?>\n<valgrindoutput>\n<args><argv><exe>/usr/bin/cc"
                       "</exe></argv></args>\n", -1);
    ck_assert_uint_eq(gl_rundir_drop_untraced(dir, NULL), 1);
    gl_run_dir_coverage(inputs, &coverage);
    ck_assert_uint_eq(coverage.lists, 3);
    ck_assert_uint_eq(coverage.unchecked->len, 1);
    g_autofree char *unlisted = g_build_filename(dir, "15.xml", NULL);  /* sh, or RUBYOPT lost */
    gl_test_write(unlisted, "<valgrindoutput>", -1);
    gl_run_coverage_clear(&coverage);
    gl_run_dir_coverage(inputs, &coverage);
    ck_assert_uint_eq(coverage.unlisted, 1);
    gl_run_coverage_clear(&coverage);

    /* A Ruby that checked itself before it exec'd a program Valgrind does
     * not trace (fork { exec("true") }) left only its image's file,
     * 16.1.xml, set aside before the exec: it was checked. */
    g_autofree char *list = g_build_filename(dir, "loaded-16.txt", NULL);
    gl_test_write(list, "/p/lib/x.so\n", -1);
    g_autofree char *image = g_build_filename(dir, "16.1.xml.gz", NULL);
    gl_test_write(image, "", -1);
    gl_run_dir_coverage(inputs, &coverage);
    ck_assert_uint_eq(coverage.checked, 3);
    ck_assert_uint_eq(coverage.unchecked->len, 1);
    gl_run_coverage_clear(&coverage);

    /* No gemleak run: no lists, nothing to say. */
    const char *plain[] = { "-", NULL };
    gl_run_dir_coverage(plain, &coverage);
    ck_assert_uint_eq(coverage.lists, 0);
    ck_assert_uint_eq(coverage.unchecked->len, 0);
    gl_run_coverage_clear(&coverage);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_rundir_untraced_suite(void)
{
    Suite *suite = suite_create("rundir_processes");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_processes_outside_valgrind);
    tcase_add_test(tc, test_run_coverage);
    suite_add_tcase(suite, tc);
    return suite;
}
