/* src/cli/run.c, run_messages.c: gemleak run, refused before anything
 * runs (--keep-xml, a Valgrind that does not answer, a TMPDIR too long),
 * and what it says of a run (the kept directory, the durations file).
 * Runs of real suites: tests/integration/. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/input.h"
#include "gemleak/run/engine.h"
#include "gemleak/run/rundir.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

/* --keep-xml takes a directory of the user's own that nobody else can
 * write to, or a new one: refused before anything runs otherwise. */
START_TEST(test_keep_xml_must_be_private)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *shared = g_build_filename(base, "shared", NULL);
    g_autofree char *group = g_build_filename(base, "group", NULL);
    g_autofree char *theirs = g_build_filename(base, "theirs", NULL);
    g_autofree char *file = g_build_filename(base, "file", NULL);
    /* the directory above can be swapped by whoever may write there */
    g_autofree char *open_parent = g_build_filename(base, "open", NULL);
    g_autofree char *under_open = g_build_filename(open_parent, "xml", NULL);
    g_autofree char *sticky_parent = g_build_filename(base, "sticky", NULL);
    g_autofree char *under_sticky = g_build_filename(sticky_parent, "new", "xml", NULL);
    ck_assert_int_eq(g_mkdir(open_parent, 0700), 0);
    ck_assert_int_eq(chmod(open_parent, 0777), 0);
    ck_assert_int_eq(g_mkdir(sticky_parent, 0700), 0);
    ck_assert_int_eq(chmod(sticky_parent, 01777), 0);
    ck_assert_int_eq(g_mkdir(shared, 0700), 0);
    ck_assert_int_eq(chmod(shared, 01777), 0);
    ck_assert_int_eq(g_mkdir(group, 0700), 0);
    ck_assert_int_eq(chmod(group, 0770), 0);
    ck_assert_int_eq(g_mkdir(theirs, 0700), 0);
    gl_test_write(file, "", 0);
    gboolean can_chown = chown(theirs, 65534, 65534) == 0;
    const char *const cases[][2] = {
        { shared, "^gemleak: --keep-xml .*/shared: others can write to it \\(mode 1777\\): " },
        { group, "^gemleak: --keep-xml .*/group: others can write to it \\(mode 0770\\): " },
        { file, "^gemleak: --keep-xml .*/file: not a directory$" },
        { under_open, "^gemleak: --keep-xml .*/open/xml: others can write to .*/open, above it, "
                      "without the sticky bit \\(mode 0777\\): " },
        { theirs, "^gemleak: --keep-xml .*/theirs: owned by another user \\(uid 65534\\): " },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases) - (can_chown ? 0 : 1); i++) {
        RUN(run, "run", "--keep-xml", cases[i][0], "--", "/nonexistent/command");
        ck_assert_msg(run.status == GL_EXIT_USAGE, "%s: status %d\n%s", cases[i][0], run.status,
                      run.err);
        gl_assert_line(run.err, cases[i][1]);
        gl_assert_no_line(run.err, "Valgrind");
        gl_test_run_clear(&run);
    }
    /* as /tmp is: only the owner of an entry may rename it */
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_run_check_keep_dir(under_sticky, &error), "%s", error->message);
    gl_remove_tree(base);
}
END_TEST

/* Two runs at once in one --keep-xml directory would read each other's
 * XML: the second is refused while the first holds it. */
START_TEST(test_keep_xml_held_by_another_run)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "xml", NULL);
    ck_assert_int_eq(g_mkdir(keep, 0700), 0);
    int held = gl_rundir_lock(keep);
    ck_assert_int_ge(held, 0);
    RUN(run, "run", "--keep-xml", keep, "--", "/nonexistent/command");
    ck_assert_msg(run.status == GL_EXIT_USAGE, "status %d\n%s", run.status, run.err);
    gl_assert_line(run.err, "^gemleak: --keep-xml .*/xml: another gemleak run is using it: give "
                            "each run a directory of its own$");
    gl_assert_no_line(run.err, "Valgrind");
    ck_assert(!gl_input_dir_has_inputs(keep));
    gl_test_run_clear(&run);
    close(held);
    gl_remove_tree(base);
}
END_TEST

/* A --valgrind whose --version floods its output, or never ends, costs a
 * few seconds and a one-line error, not a hang. */
START_TEST(test_valgrind_version_probe_is_bounded)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *const fakes[][3] = {
        { "flood", "#!/bin/sh\nexec yes valgrind-3.19.0\n",
          "^gemleak: .*/flood does not look like Valgrind: '.*/flood --version' printed more "
          "than 4096 bytes$" },
        { "hang", "#!/bin/sh\nexec sleep 100\n",
          "^gemleak: .*/hang does not look like Valgrind: '.*/hang --version' did not finish "
          "within 5 seconds$" },
        { "silent", "#!/bin/sh\nexec sleep 100 >/dev/null\n",
          "did not finish within 5 seconds$" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(fakes); i++) {
        g_autofree char *fake = g_build_filename(dir, fakes[i][0], NULL);
        gl_test_write(fake, fakes[i][1], -1);
        ck_assert_int_eq(chmod(fake, 0755), 0);
        gint64 start = g_get_monotonic_time();
        RUN(run, "run", "--valgrind", fake, "--", "/nonexistent/command");
        gint64 took = (g_get_monotonic_time() - start) / G_USEC_PER_SEC;
        ck_assert_msg(run.status == GL_EXIT_ERROR, "%s: status %d\n%s", fakes[i][0], run.status,
                      run.err);
        gl_assert_line(run.err, fakes[i][2]);
        ck_assert_msg(gl_test_count(run.err, strlen(run.err), "\n") == 1, "%s: %s", fakes[i][0], run.err);
        ck_assert_int_le(took, 10);
        gl_test_run_clear(&run);
    }
    /* a wrapper that answers, and leaves something running with its output */
    g_autofree char *wrapper = g_build_filename(dir, "wrapper", NULL);
    gl_test_write(wrapper, "#!/bin/sh\n[ \"$1\" = --version ] && { sleep 100 & echo valgrind-3.19.0; "
                           "exit 0; }\nexit 1\n", -1);
    ck_assert_int_eq(chmod(wrapper, 0755), 0);
    g_autofree char *version = NULL;
    gint64 start = g_get_monotonic_time();
    g_autoptr(GError) error = NULL;
    version = gl_engine_find("valgrind")->version(wrapper, &error);
    ck_assert_msg(version != NULL, "%s", error != NULL ? error->message : "?");
    ck_assert_str_eq(version, "3.19.0");
    ck_assert_int_le((g_get_monotonic_time() - start) / G_USEC_PER_SEC, 2);
    gl_remove_tree(dir);
}
END_TEST

/* Valgrind asserts on an --xml-file name over 900 characters (and dies
 * with SIGSEGV, which read as the command's failure): a TMPDIR or
 * --keep-xml that long is said up front, before Valgrind runs. */
START_TEST(test_run_directory_too_long_for_valgrind)
{
    /* TMPDIR first: GLib reads it once, at the first temporary directory. */
    g_autofree char *base = g_strdup_printf("/tmp/gemleak-long-%d", (int) getpid());
    GString *long_dir = g_string_new(base);
    while (long_dir->len < 950)
        g_string_append(long_dir, "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ck_assert_int_eq(g_mkdir_with_parents(long_dir->str, 0700), 0);
    g_setenv("TMPDIR", long_dir->str, TRUE);
    gint64 start = g_get_monotonic_time();
    RUN(tmpdir, "run", "--", "ruby", "-e", "1");
    ck_assert_msg(tmpdir.status == GL_EXIT_ERROR, "status %d\n%s", tmpdir.status, tmpdir.err);
    gl_assert_line(tmpdir.err, "^gemleak: TMPDIR is too long for Valgrind: its XML files would "
                               "be named .*/gemleak-run-XXXXXX/%p\\.xml, \\d+ characters, and "
                               "Valgrind takes at most 900: set TMPDIR to a shorter directory$");
    gl_assert_no_line(tmpdir.err, "command");
    /* nothing ran */
    ck_assert_int_le((g_get_monotonic_time() - start) / G_USEC_PER_SEC, 2);
    gl_test_run_clear(&tmpdir);

    g_autofree char *keep = g_build_filename(long_dir->str, "xml", NULL);
    g_setenv("TMPDIR", "/tmp", TRUE);
    RUN(kept, "run", "--keep-xml", keep, "--", "ruby", "-e", "1");
    ck_assert_msg(kept.status == GL_EXIT_USAGE, "status %d\n%s", kept.status, kept.err);
    gl_assert_line(kept.err, "^gemleak: --keep-xml .*/xml: too long for Valgrind: its XML files "
                             "would be named .*/xml/%p\\.xml, \\d+ characters, and Valgrind "
                             "takes at most 900: give a shorter directory$");
    gl_test_run_clear(&kept);
    g_string_free(long_dir, TRUE);
    gl_remove_tree(base);
}
END_TEST

/* A file name with a terminal escape in it, in gemleak's own notes: shown
 * escaped, as in reports, never sent to the terminal raw. */
START_TEST(test_notes_escape_file_names)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *durations = g_build_filename(dir, "dur\033[31m.txt", NULL);
    gl_test_write(durations, "not json\n", -1);
    RUN(run, "run", "--durations", durations, "--", "true", ":::", "/etc/hostname");
    ck_assert_ptr_null(strchr(run.err, '\033'));
    gl_assert_line(run.err, "^gemleak: note: .*/dur\\\\x1b\\[31m\\.txt is not gemleak's "
                            "durations file");
    gl_test_run_clear(&run);

    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    RUN(unseen, "filter", "--object", "no\033[31mne", leak);
    ck_assert_ptr_null(strchr(unseen.err, '\033'));
    gl_assert_line(unseen.err, "^gemleak: warning: --object no\\\\x1b\\[31mne matches no object");
    gl_test_run_clear(&unseen);
    gl_remove_tree(dir);
}
END_TEST

/* The line that names a kept --keep-xml directory: a newline in its name
 * once forged a "gemleak: pass: no findings" line. */
START_TEST(test_kept_directory_line_is_escaped)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "k\ngemleak: pass: no findings\033[2J", NULL);
    RUN(run, "run", "--keep-xml", keep, "--", "true");
    gl_assert_no_raw_control(run.err);
    gl_assert_line(run.err, "^gemleak: Valgrind's XML is kept in .*/k\\\\ngemleak: pass: no "
                            "findings\\\\x1b\\[2J \\(.*; read it again with: gemleak filter ");
    gl_test_run_clear(&run);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_cli_run_suite(void)
{
    Suite *suite = suite_create("cli-run");
    TCase *tc = tcase_create("cli-run");
    tcase_add_test(tc, test_keep_xml_must_be_private);
    tcase_add_test(tc, test_keep_xml_held_by_another_run);
    tcase_add_test(tc, test_run_directory_too_long_for_valgrind);
    tcase_add_test(tc, test_notes_escape_file_names);
    tcase_add_test(tc, test_kept_directory_line_is_escaped);
    suite_add_tcase(suite, tc);

    /* probes that take their time box: seconds each */
    TCase *probes = tcase_create("probes");
    tcase_set_timeout(probes, 60);
    tcase_add_test(probes, test_valgrind_version_probe_is_bounded);
    suite_add_tcase(suite, probes);
    return suite;
}
