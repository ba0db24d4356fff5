/* sinks: where reports go, refused before anything is read or run when
 * they could not be written or would destroy what gemleak reads. */
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/report/sinks.h"

static void add(GlSinks *sinks, const char *format, const char *path)
{
    const GlReporter *reporter = gl_reporter_find(format);
    ck_assert_ptr_nonnull(reporter);
    char *label = path != NULL ? g_strdup_printf("the %s report (%s)", format, path)
                               : g_strdup_printf("the %s report", format);
    gl_sinks_add(sinks, reporter, label, path, "never", FALSE);
}

/* Two reports in one stream would be unreadable, two in one file would
 * lose one; one in the stream and one in a file is fine. */
START_TEST(test_one_report_a_destination)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *file = g_build_filename(dir, "r.out", NULL);
    const GlSinkReads reads = { 0 };
    g_autoptr(GError) error = NULL;

    g_autoptr(GlSinks) fine = gl_sinks_new(stderr, stdout);
    add(fine, "text", NULL);
    add(fine, "json", file);
    ck_assert(gl_sinks_check(fine, &reads, &error));

    g_autoptr(GlSinks) stream = gl_sinks_new(stderr, stdout);
    add(stream, "text", NULL);
    add(stream, "json", NULL);
    ck_assert(!gl_sinks_check(stream, &reads, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
    gl_assert_line(error->message, "^2 reports would share one stream");
    g_clear_error(&error);

    g_autoptr(GlSinks) one_file = gl_sinks_new(stderr, stdout);
    add(one_file, "json", file);
    add(one_file, "sarif", file);
    ck_assert(!gl_sinks_check(one_file, &reads, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
    gl_assert_line(error->message, "^the json report \\(.*\\) and the sarif report \\(.*\\) would "
                                   "both go to .*r\\.out: give each its own file$");
    ck_assert(!g_file_test(file, G_FILE_TEST_EXISTS));  /* nothing was written */
    gl_remove_tree(dir);
}
END_TEST

/* A report over an input, or inside a directory of inputs (the next run
 * would read it as XML), is refused; so is one whose directory does not
 * exist. */
START_TEST(test_what_gemleak_reads_is_safe)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *xml = g_build_filename(dir, "1.xml", NULL);
    gl_test_write(xml, "<valgrindoutput/>", -1);
    const char *inputs[] = { xml, NULL };
    const GlSinkReads reads = { .inputs = inputs };
    g_autoptr(GError) error = NULL;

    g_autoptr(GlSinks) over = gl_sinks_new(stderr, stdout);
    add(over, "json", xml);
    ck_assert(!gl_sinks_check(over, &reads, &error));
    gl_assert_line(error->message, "would overwrite .*1\\.xml, which gemleak reads: write it "
                                   "elsewhere$");
    g_clear_error(&error);
    g_autofree char *kept = gl_test_read(xml, NULL);
    ck_assert_str_eq(kept, "<valgrindoutput/>");

    const char *dirs[] = { dir, NULL };
    const GlSinkReads read_dir = { .inputs = dirs };
    g_autofree char *inside_path = g_build_filename(dir, "report.xml", NULL);
    g_autoptr(GlSinks) inside = gl_sinks_new(stderr, stdout);
    add(inside, "junit", inside_path);
    ck_assert(!gl_sinks_check(inside, &read_dir, &error));
    gl_assert_line(error->message, "would be written inside .*, a directory gemleak reads");
    g_clear_error(&error);

    g_autofree char *nowhere = g_build_filename(dir, "no", "such", "r.json", NULL);
    g_autoptr(GlSinks) missing = gl_sinks_new(stderr, stdout);
    add(missing, "json", nowhere);
    ck_assert(!gl_sinks_check(missing, &reads, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
    gl_assert_line(error->message, "^the json report \\(.*\\) cannot be written: ");
    gl_remove_tree(dir);
}
END_TEST

/* What gemleak says when it stops before its reports goes to each file
 * of that format, and nowhere else. */
START_TEST(test_write_instead)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "r.json", NULL);
    g_autofree char *sarif = g_build_filename(dir, "r.sarif", NULL);
    g_autoptr(GlSinks) sinks = gl_sinks_new(stderr, stdout);
    add(sinks, "json", json);
    add(sinks, "sarif", sarif);
    const GlSinkReads reads = { 0 };
    ck_assert(gl_sinks_check(sinks, &reads, NULL));
    const char *text = "{\"error\": {\"message\": \"stopped\"}}\n";
    g_autoptr(GError) error = NULL;
    ck_assert(gl_sinks_write_instead(sinks, "json", text, strlen(text), &error));
    g_autofree char *written = gl_test_read(json, NULL);
    ck_assert_str_eq(written, text);
    ck_assert(!g_file_test(sarif, G_FILE_TEST_EXISTS));
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_sinks_suite(void)
{
    Suite *suite = suite_create("sinks");
    TCase *tc = tcase_create("sinks");
    tcase_add_test(tc, test_one_report_a_destination);
    tcase_add_test(tc, test_what_gemleak_reads_is_safe);
    tcase_add_test(tc, test_write_instead);
    suite_add_tcase(suite, tc);
    return suite;
}
