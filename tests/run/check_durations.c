/* The durations file (src/run/durations.c): how long each test file took,
 * kept between runs for the shares of the next. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "plan_util.h"
#include "gemleak/run/rundir.h"

/* A file that is not gemleak's is read as none, said once, and never
 * overwritten; gemleak's own is updated through a rename. */
START_TEST(test_durations_file)
{
    const gsize sizes[] = { 100, 300 };
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 2);
    const char *foreign[] = { "not json {", "[1, 2]", "{\"files\": {\"a.rb\": 1}}",
                              "{\"format\": \"gemleak-durations\", \"version\": 9, \"files\": {}}" };
    GlCommandOptions options = { .jobs = 2, .durations = GL_DURATIONS_FILE };
    for (guint i = 0; i < G_N_ELEMENTS(foreign); i++) {
        gl_test_write(GL_DURATIONS_FILE, foreign[i], -1);
        g_auto(GlCommandPlan) plan = { 0 };
        gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &plan);
        ck_assert_uint_eq(plan.notes->len, 1);
        ck_assert(strstr(g_ptr_array_index(plan.notes, 0), "is not gemleak's durations file") != NULL);
        const double seconds[] = { 1, 2 };
        g_autoptr(GError) error = NULL;
        ck_assert(!gl_durations_update(GL_DURATIONS_FILE, &plan, seconds, NULL, &error));
        g_autofree char *after = gl_test_read(GL_DURATIONS_FILE, NULL);
        ck_assert_str_eq(after, foreign[i]);
    }

    g_unlink(GL_DURATIONS_FILE);
    g_auto(GlCommandPlan) plan = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &plan);
    const double seconds[] = { 12.5, 3 };   /* b.rb ran first, alone (the larger) */
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_durations_update(GL_DURATIONS_FILE, &plan, seconds, NULL, &error), "%s",
                  error != NULL ? error->message : "");
    g_autoptr(GHashTable) durations = gl_durations_load(GL_DURATIONS_FILE, NULL);
    ck_assert_ptr_nonnull(durations);
    ck_assert_double_eq_tol(*(double *) g_hash_table_lookup(durations, "b.rb"), 12.5, 0.001);
    ck_assert_double_eq_tol(*(double *) g_hash_table_lookup(durations, "a.rb"), 3, 0.001);
    /* no file left beside it */
    g_autoptr(GDir) listing = g_dir_open(".", 0, NULL);
    guint entries = 0;
    while (g_dir_read_name(listing) != NULL)
        entries++;
    ck_assert_uint_eq(entries, 3);

    /* a later run of one file keeps the other's entry; the next plan uses them */
    g_auto(GlCommandPlan) again = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &again);
    g_autofree char *first = gl_test_words(g_ptr_array_index(again.commands, 0), 1);
    ck_assert_str_eq(first, "b.rb");
    gl_remove_tree(dir);
}
END_TEST

/* What the helper timed is each file's own; the files it did not time
 * share the rest of their command's time. */
START_TEST(test_durations_measured_by_the_helper)
{
    const gsize sizes[] = { 100, 100, 100 };
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 3);
    g_autofree char *a = g_canonicalize_filename("a.rb", NULL);
    g_autofree char *b = g_canonicalize_filename("b.rb", NULL);
    g_autofree char *run = g_build_filename(dir, "run", NULL);
    g_mkdir(run, 0700);
    /* two processes timed a.rb; one line is not the helper's */
    g_autofree char *one = g_strdup_printf("7000\t%s\n250\t%s\n", a, b);
    g_autofree char *two = g_strdup_printf("500\t%s\nnonsense\n", a);
    g_autofree char *first = g_build_filename(run, "durations-11.txt", NULL);
    g_autofree char *second = g_build_filename(run, "durations-12.txt", NULL);
    gl_test_write(first, one, -1);
    gl_test_write(second, two, -1);
    g_autoptr(GHashTable) measured = gl_run_dir_test_durations(run);
    ck_assert_uint_eq(g_hash_table_size(measured), 2);
    ck_assert_double_eq_tol(*(double *) g_hash_table_lookup(measured, a), 7.5, 0.001);

    GlCommandOptions options = { .jobs = 1, .durations = GL_DURATIONS_FILE };
    g_auto(GlCommandPlan) plan = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb", "c.rb"), &options, &plan);
    const double seconds[] = { 10 };
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_durations_update(GL_DURATIONS_FILE, &plan, seconds, measured, &error), "%s",
                  error != NULL ? error->message : "");
    g_autoptr(GHashTable) kept = gl_durations_load(GL_DURATIONS_FILE, NULL);
    ck_assert_double_eq_tol(*(double *) g_hash_table_lookup(kept, "a.rb"), 7.5, 0.001);
    ck_assert_double_eq_tol(*(double *) g_hash_table_lookup(kept, "b.rb"), 0.25, 0.001);
    ck_assert_double_eq_tol(*(double *) g_hash_table_lookup(kept, "c.rb"), 2.25, 0.001);
    gl_remove_tree(dir);
}
END_TEST

/* A durations file nested a million deep (json-glib recurses once a
 * level) is no durations file of ours: said in a note, not a crash. */
START_TEST(test_durations_file_nested_deep)
{
    const gsize sizes[] = { 100, 100 };
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 2);
    g_autofree char *deep = g_strnfill(1000000, '[');
    gl_test_write(GL_DURATIONS_FILE, deep, -1);
    GlCommandOptions options = { .jobs = 2, .durations = GL_DURATIONS_FILE };
    g_auto(GlCommandPlan) plan = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &plan);
    ck_assert_uint_eq(plan.notes->len, 1);
    const char *note = g_ptr_array_index(plan.notes, 0);
    ck_assert_msg(strstr(note, "is not gemleak's durations file (nested deeper than 32 levels)")
                  != NULL, "%s", note);
    const double seconds[] = { 1, 2 };
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_durations_update(GL_DURATIONS_FILE, &plan, seconds, NULL, &error));
    gsize length = 0;
    g_autofree char *after = gl_test_read(GL_DURATIONS_FILE, &length);
    ck_assert_uint_eq(length, 1000000);
    gl_remove_tree(dir);
}
END_TEST

/* What gemleak writes it can read again: a huge value is no duration
 * (not written back as a negative one), and a file that would outgrow
 * what gemleak reads keeps this run's files alone. */
START_TEST(test_durations_file_stays_readable)
{
    const gsize sizes[] = { 100, 100 };
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 2);
    gl_test_write(GL_DURATIONS_FILE,
                  "{\"format\": \"gemleak-durations\", \"version\": 1, \"files\": "
                  "{\"a.rb\": 1e300, \"b.rb\": 2000, \"c.rb\": 9223372036854775807}}", -1);
    GlCommandOptions options = { .jobs = 1, .durations = GL_DURATIONS_FILE };
    g_auto(GlCommandPlan) plan = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "b.rb"), &options, &plan);
    const double seconds[] = { 3 };
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_durations_update(GL_DURATIONS_FILE, &plan, seconds, NULL, &error), "%s",
                  error != NULL ? error->message : "");
    g_autofree char *text = gl_test_read(GL_DURATIONS_FILE, NULL);
    gl_assert_no_line(text, "-[0-9]");
    gl_assert_no_line(text, "\"[ac]\\.rb\"");
    gl_assert_line(text, "^    \"b\\.rb\" : 3000,?$");

    /* 4,100 entries of 4,000 bytes, just below the 16 MiB gemleak reads,
     * and a run of 100 more files */
    GString *big = g_string_new("{\"format\": \"gemleak-durations\", \"version\": 1, \"files\": {");
    g_autofree char *long_name = g_strnfill(4000, 'x');
    for (guint i = 0; i < 4100; i++)
        g_string_append_printf(big, "%s\"old/%s%u.rb\": 1000", i > 0 ? ", " : "", long_name, i);
    g_string_append(big, "}}");
    ck_assert_uint_lt(big->len, 16 << 20);
    gl_test_write(GL_DURATIONS_FILE, big->str, (gssize) big->len);
    g_string_free(big, TRUE);
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(argv, g_strdup("rspec"));
    g_ptr_array_add(argv, g_strdup(":::"));
    for (guint i = 0; i < 100; i++)
        g_ptr_array_add(argv, g_strdup_printf("new/%s%u.rb", long_name, i));
    g_ptr_array_add(argv, NULL);
    g_auto(GlCommandPlan) many = { 0 };
    gl_test_plan_ok((char **) argv->pdata, &options, &many);
    ck_assert_uint_eq(many.notes->len, 0);
    ck_assert_msg(gl_durations_update(GL_DURATIONS_FILE, &many, seconds, NULL, &error), "%s",
                  error != NULL ? error->message : "");
    g_autofree char *note = NULL;
    g_autoptr(GHashTable) kept = gl_durations_load(GL_DURATIONS_FILE, &note);
    ck_assert_msg(kept != NULL, "%s", note);
    ck_assert_uint_eq(g_hash_table_size(kept), 100);
    gl_remove_tree(dir);
}
END_TEST

/* A durations file that is a symbolic link is written through it. */
START_TEST(test_durations_file_through_a_link)
{
    const gsize sizes[] = { 100, 100 };
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 2);
    GlCommandOptions options = { .jobs = 1, .durations = "link.json" };
    ck_assert_int_eq(symlink("kept/real.json", "link.json"), 0);
    ck_assert_int_eq(g_mkdir("kept", 0700), 0);
    g_auto(GlCommandPlan) plan = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb"), &options, &plan);
    const double seconds[] = { 3 };
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_durations_update("link.json", &plan, seconds, NULL, &error), "%s",
                  error != NULL ? error->message : "");
    ck_assert(g_file_test("link.json", G_FILE_TEST_IS_SYMLINK));
    g_autofree char *real = gl_test_read("kept/real.json", NULL);
    gl_assert_line(real, "^    \"a\\.rb\" : 3000,?$");
    gl_remove_tree(dir);
}
END_TEST

/* A FIFO (or another file that is not a regular one) in the durations
 * file's place is not read, which would wait for a writer before the
 * command starts, nor replaced. */
START_TEST(test_durations_file_that_is_a_fifo)
{
    const gsize sizes[] = { 100, 100 };
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 2);
    GlCommandOptions options = { .jobs = 1, .durations = GL_DURATIONS_FILE };
    const double seconds[] = { 3 };
    g_autoptr(GError) error = NULL;
    ck_assert_int_eq(mkfifo(GL_DURATIONS_FILE, 0600), 0);
    g_auto(GlCommandPlan) fifo = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &fifo);
    ck_assert_uint_eq(fifo.notes->len, 1);
    const char *note = g_ptr_array_index(fifo.notes, 0);
    ck_assert_msg(strstr(note, "is not gemleak's durations file (not a regular file)") != NULL,
                  "%s", note);
    ck_assert(!gl_durations_update(GL_DURATIONS_FILE, &fifo, seconds, NULL, &error));
    struct stat st;
    ck_assert_int_eq(lstat(GL_DURATIONS_FILE, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_durations_suite(void)
{
    Suite *suite = suite_create("durations");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_durations_file);
    tcase_add_test(tc, test_durations_measured_by_the_helper);
    tcase_add_test(tc, test_durations_file_nested_deep);
    tcase_add_test(tc, test_durations_file_stays_readable);
    tcase_add_test(tc, test_durations_file_through_a_link);
    tcase_add_test(tc, test_durations_file_that_is_a_fifo);
    suite_add_tcase(suite, tc);
    return suite;
}
