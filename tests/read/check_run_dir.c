/* What the helper and gemleak wrote of a run beside the engine's reports:
 * ruby-PID.txt, the lists and engine.txt (gemleak/read/run_dir.h), and
 * engine.txt as gemleak run writes it (gemleak/run/rundir.h). */
#include "testutil.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/run/engine.h"
#include "gemleak/run/rundir.h"

#include <string.h>

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
    g_auto(GlEngineFacts) none = { 0 };
    gl_engine_facts_read(dir, &none);
    ck_assert_str_eq(none.title, "Valgrind");
    ck_assert_str_eq(none.name, "valgrind");
    ck_assert(!gl_engine_facts_say(&none, GL_ENGINE_SILENT_WHEN_CLEAN));
    ck_assert_ptr_null(none.min_ruby);
    /* gemleak before 0.2: the title alone, for the silent engines only */
    gl_test_write(path, "LeakSanitizer", -1);
    g_auto(GlEngineFacts) legacy = { 0 };
    gl_engine_facts_read(dir, &legacy);
    ck_assert_str_eq(legacy.title, "LeakSanitizer");
    ck_assert(gl_engine_facts_say(&legacy, GL_ENGINE_SILENT_WHEN_CLEAN));
    gl_test_write(path, "LeakSanitizer\nname lsan\nversion /usr/lib/liblsan.so.0\n"
                        "silent-when-clean yes\nmin-ruby 3.3\nmin-ruby-why it frees\n", -1);
    g_auto(GlEngineFacts) facts = { 0 };
    gl_engine_facts_read(dir, &facts);
    ck_assert_str_eq(facts.name, "lsan");
    ck_assert_str_eq(facts.version, "/usr/lib/liblsan.so.0");
    ck_assert_str_eq(facts.min_ruby, "3.3");
    ck_assert_str_eq(facts.min_ruby_why, "it frees");
    ck_assert(gl_engine_facts_say(&facts, GL_ENGINE_SILENT_WHEN_CLEAN));
    gl_remove_tree(dir);
}
END_TEST

/* Returns: @facts' value of every row of GL_ENGINE_FILE_KEYS, a line
 * each: "KEY VALUE", "KEY (null)", "KEY yes", "KEY no". */
static char *engine_rows(const GlEngineFacts *facts)
{
    GString *rows = g_string_new(NULL);
    guint n = 0;
    const GlEngineKey *keys = gl_engine_keys(&n);
    for (guint i = 0; i < n; i++) {
        if (keys[i].number) {
            g_string_append_printf(rows, "%s %u\n", keys[i].key,
                                   gl_engine_facts_number(facts, &keys[i]));
            continue;
        }
        const char *value = keys[i].flag ? gl_engine_facts_say(facts, keys[i].bit) ? "yes" : "no"
                                         : gl_engine_facts_text(facts, &keys[i]);
        g_string_append_printf(rows, "%s %s\n", keys[i].key, value != NULL ? value : "(null)");
    }
    return g_string_free(rows, FALSE);
}

/* Issue 38: engine.txt is described once, by GL_ENGINE_FILE_KEYS, and
 * that table drives its writer and its reader: every row written is read
 * back as it was, a string and a flag alike, whatever rows come later. */
START_TEST(test_engine_file_round_trip)
{
    g_autofree char *dir = gl_test_tmpdir();
    guint n = 0;
    const GlEngineKey *keys = gl_engine_keys(&n);
    ck_assert_uint_ge(n, 12);
    GlEngineFacts written = { .title = "Some Engine" };
    g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < n; i++) {
        if (keys[i].flag) {
            written.caps |= keys[i].bit;
            continue;
        }
        if (keys[i].number) {
            *(guint *) (void *) ((char *) &written + keys[i].offset) = 7 + i;
            continue;
        }
        char *value = g_strdup_printf("the %s of some engine", keys[i].key);
        g_ptr_array_add(values, value);
        *(const char **) (void *) ((char *) &written + keys[i].offset) = value;
    }
    /* every row, then each flag cleared alone */
    for (guint cleared = 0; cleared <= n; cleared++) {
        GlEngineFacts facts = written;
        if (cleared < n && !keys[cleared].flag)
            continue;  /* a string or a number: written as it is, every time */
        if (cleared < n)
            facts.caps &= ~keys[cleared].bit;
        g_autoptr(GError) error = NULL;
        ck_assert_msg(gl_rundir_write_engine_facts(dir, &facts, &error), "%s", error->message);
        g_auto(GlEngineFacts) read = { 0 };
        gl_engine_facts_read(dir, &read);
        ck_assert_str_eq(read.title, "Some Engine");
        g_autofree char *expected = engine_rows(&facts);
        g_autofree char *got = engine_rows(&read);
        ck_assert_str_eq(got, expected);
    }
    /* a line each: a value that is not one line is left out */
    GlEngineFacts broken = written;
    broken.version = "3.19.0\nmin-ruby 9.9";
    ck_assert(gl_rundir_write_engine_facts(dir, &broken, NULL));
    g_auto(GlEngineFacts) read = { 0 };
    gl_engine_facts_read(dir, &read);
    ck_assert_ptr_null(read.version);
    ck_assert_str_eq(read.min_ruby, "the min-ruby of some engine");
    gl_remove_tree(dir);
}
END_TEST

/* What gemleak run writes of each engine reads back as the engine is, and
 * holds every line the real runs of the fixtures hold, as they are and in
 * their order (a line added since is left out of them). */
START_TEST(test_engine_file_of_each_engine)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_auto(GStrv) names = g_strsplit(gl_engine_names(), ", ", -1);
    ck_assert_uint_eq(g_strv_length(names), 3);
    for (char **name = names; *name != NULL; name++) {
        const GlEngine *engine = gl_engine_find(*name);
        for (int proof = 0; proof <= 1; proof++) {
            ck_assert(gl_rundir_write_engine(dir, engine, "1.2.3", proof, NULL));
            g_auto(GlEngineFacts) read = { 0 };
            gl_engine_facts_read(dir, &read);
            GlEngineFacts expected = engine->facts;
            expected.version = "1.2.3";
            /* the run's: proved, a clean process says so */
            expected.caps &= ~(guint) GL_ENGINE_PROVES_CHECKS;
            if (proof)
                expected.caps = (expected.caps & ~(guint) GL_ENGINE_SILENT_WHEN_CLEAN) |
                                GL_ENGINE_PROVES_CHECKS;
            ck_assert_str_eq(read.title, engine->facts.title);
            g_autofree char *want = engine_rows(&expected);
            g_autofree char *got = engine_rows(&read);
            ck_assert_str_eq(got, want);
        }
    }
    const char *runs[][3] = {
        { "valgrind", "3.19.0", "xml/nio4r-ruby31/engine.txt" },
        { "lsan", "/usr/lib/x86_64-linux-gnu/liblsan.so.0.0.0", "lsan/nio4r-ruby34/engine.txt" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(runs); i++) {
        const GlEngine *engine = gl_engine_find(runs[i][0]);
        ck_assert(gl_rundir_write_engine(dir, engine, runs[i][1],
                                         gl_engine_supports(engine, GL_ENGINE_PROVES_CHECKS), NULL));
        g_autofree char *path = g_build_filename(dir, "engine.txt", NULL);
        g_autofree char *fixture = gl_test_fixture(runs[i][2]);
        g_autofree char *got = gl_test_read(path, NULL);
        g_autofree char *real = gl_test_read(fixture, NULL);
        g_auto(GStrv) written = g_strsplit(got, "\n", -1);
        g_auto(GStrv) lines = g_strsplit(real, "\n", -1);
        char **at = written;
        for (char **line = lines; *line != NULL; line++) {
            while (*at != NULL && strcmp(*at, *line) != 0)
                at++;
            ck_assert_msg(*at != NULL, "%s: \"%s\" is not written so, or not in that order:\n%s",
                          runs[i][2], *line, got);
        }
        ck_assert_str_eq(written[0], lines[0]);   /* the title first */
    }
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
    g_auto(GlEngineFacts) run = { 0 };
    gl_engine_facts_read(dir, &run);
    ck_assert_str_eq(run.title, "Valgrind");
    gl_remove_tree(dir);
}
END_TEST

/* Issue 38: what ran outside the engine is said of the run's engine, as
 * its engine.txt names it, not of Valgrind under every engine. */
START_TEST(test_outside_names_the_engine)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *outside = g_build_filename(dir, "outside-7.txt", NULL);
    gl_test_write(outside, "", -1);   /* cut short: the helper's sentence is lost */
    g_autoptr(GPtrArray) valgrind = gl_run_dir_outside(dir);
    ck_assert_uint_eq(valgrind->len, 1);
    ck_assert_str_eq(g_ptr_array_index(valgrind, 0),
                     "process 7: below a launcher, it ran outside Valgrind");
    g_autofree char *engine = g_build_filename(dir, "engine.txt", NULL);
    gl_test_write(engine, "LeakSanitizer\nname lsan\nlog lsan\n", -1);
    g_autoptr(GPtrArray) lsan = gl_run_dir_outside(dir);
    ck_assert_uint_eq(lsan->len, 1);
    ck_assert_str_eq(g_ptr_array_index(lsan, 0),
                     "process 7: below a launcher, it ran outside LeakSanitizer");
    const char *inputs[] = { dir, NULL };
    g_auto(GlRunCoverage) coverage = { 0 };
    gl_run_dir_coverage(inputs, &coverage);
    ck_assert_uint_eq(coverage.unchecked->len, 1);
    ck_assert_str_eq(g_ptr_array_index(coverage.unchecked, 0),
                     "process 7: below a launcher, it ran outside LeakSanitizer");
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
    tcase_add_test(tc, test_engine_file_round_trip);
    tcase_add_test(tc, test_engine_file_of_each_engine);
    tcase_add_test(tc, test_ruby_versions_compared);
    tcase_add_test(tc, test_outside_names_the_engine);
    tcase_add_test(tc, test_run_directory_files_are_regular_and_bounded);
    suite_add_tcase(suite, tc);
    return suite;
}
