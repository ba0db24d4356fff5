/* The commands a run starts: files after :::, shards, balanced shares, a
 * bare ruby's loader, the durations file. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <glib/gstdio.h>

#include "testutil.h"
#include "gemleak/run/commands.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/run/rundir.h"
#include "../../src/run/runner_int.h"
#include "gemleak/run/runner.h"
#include "gemleak/judge/gate.h"

#define ARGV(...) ((char *[]) { __VA_ARGS__, NULL })

/* Returns: (transfer full): the command's words from @from on, one string. */
static char *words(GStrv command, guint from)
{
    return g_strjoinv(" ", command + from);
}

/* A directory of files named a.rb, b.rb... of the given sizes, as the
 * current directory. Returns: (transfer full): the directory. */
static char *files_of_sizes(const gsize *sizes, guint n)
{
    char *dir = gl_test_tmpdir();
    ck_assert_int_eq(g_chdir(dir), 0);
    for (guint i = 0; i < n; i++) {
        g_autofree char *name = g_strdup_printf("%c.rb", 'a' + i);
        g_autofree char *text = g_strnfill(sizes[i], '#');
        gl_test_write(name, text, -1);
    }
    return dir;
}

static void plan_ok(char **command, const GlCommandOptions *options, GlCommandPlan *plan)
{
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_commands_plan(command, options, plan, &error), "%s",
                  error != NULL ? error->message : "");
}

/* ruby -Ilib ::: a b c would run a alone, with b and c as its ARGV. */
START_TEST(test_bare_ruby_gets_a_loader)
{
    const gsize sizes[] = { 10, 10, 10 };
    g_autofree char *dir = files_of_sizes(sizes, 3);
    GlCommandOptions options = { .jobs = 1 };
    g_auto(GlCommandPlan) plan = { 0 };
    plan_ok(ARGV("ruby", "-Ilib", "-I", "test", ":::", "a.rb", "b.rb", "c.rb"), &options, &plan);
    ck_assert_uint_eq(plan.commands->len, 1);
    GStrv argv = g_ptr_array_index(plan.commands, 0);
    ck_assert_str_eq(argv[4], "-e");
    /* each file as `ruby FILE` runs it: $0 and __FILE__ its name (a body
     * under `if __FILE__ == $0` runs; issue 35, 7) */
    ck_assert(strstr(argv[5], "$0 = f; load f") != NULL);
    g_autofree char *tail = words(argv, 6);
    ck_assert_str_eq(tail, "a.rb b.rb c.rb");
    ck_assert_uint_eq(plan.notes->len, 1);

    /* the same after bundle exec, and with a path to the interpreter */
    g_auto(GlCommandPlan) bundled = { 0 };
    plan_ok(ARGV("bundle", "exec", "/opt/ruby34/bin/ruby", "-w", ":::", "a.rb"), &options, &bundled);
    ck_assert_str_eq(((GStrv) g_ptr_array_index(bundled.commands, 0))[4], "-e");

    /* what takes several files of its own is left as it is */
    char **own[] = {
        ARGV("ruby", "-Ilib", "-e", "ARGV.each { |f| load f }", ":::", "a.rb", "b.rb"),
        ARGV("ruby", "-S", "rspec", ":::", "a.rb", "b.rb"),
        ARGV("ruby", "-Itest", "runner.rb", ":::", "a.rb", "b.rb"),
        ARGV("rspec", ":::", "a.rb", "b.rb"),
    };
    for (guint i = 0; i < G_N_ELEMENTS(own); i++) {
        g_auto(GlCommandPlan) kept = { 0 };
        plan_ok(own[i], &options, &kept);
        g_autofree char *all = words(g_ptr_array_index(kept.commands, 0), 0);
        ck_assert_msg(strstr(all, "$0 = f") == NULL, "%s", all);
        ck_assert(g_str_has_suffix(all, " a.rb b.rb"));
    }
    gl_remove_tree(dir);
}
END_TEST

/* Ruby's options are read as ruby.c reads them: the word after
 * --encoding, -C, -E, -I, -r, --enable ... is their value, not the
 * script (which ran the first file alone), and "--" ends the options (a
 * loader after it would be the script's name). */
START_TEST(test_bare_ruby_among_rubys_options)
{
    const gsize sizes[] = { 10, 10 };
    g_autofree char *dir = files_of_sizes(sizes, 2);
    GlCommandOptions options = { .jobs = 1 };
    const char *const bare[] = {
        "--encoding UTF-8", "--encoding=UTF-8", "--external-encoding UTF-8",
        "--external-encoding=UTF-8", "--internal-encoding UTF-8", "--enable frozen-string-literal",
        "--enable=frozen-string-literal", "--disable gems", "--disable-gems", "--dump insns",
        "--backtrace-limit 5", "-C sub", "-Csub", "-E UTF-8:UTF-8", "-EUTF-8", "-I lib", "-Ilib",
        "-r set", "-rset", "-x", "-xsub", "-0", "-0777", "-F:", "-i.bak", "-W0", "-W:no-deprecated",
        "-wIlib", "-wI lib", "-wr set", "-w -W1 -I lib -r set -C sub --encoding UTF-8",
    };
    for (guint i = 0; i < G_N_ELEMENTS(bare); i++) {
        g_autofree char *line = g_strdup_printf("ruby %s ::: a.rb b.rb", bare[i]);
        g_auto(GStrv) command = g_strsplit(line, " ", -1);
        g_auto(GlCommandPlan) plan = { 0 };
        plan_ok(command, &options, &plan);
        GStrv argv = g_ptr_array_index(plan.commands, 0);
        g_autofree char *all = words(argv, 0);
        g_autofree char *expected = g_strdup_printf("ruby %s -e ", bare[i]);
        ck_assert_msg(g_str_has_prefix(all, expected), "%s: %s", bare[i], all);
        ck_assert_msg(g_str_has_suffix(all, "$0 = f; load f } a.rb b.rb"), "%s", all);
    }

    /* "--" ends the options: the loader goes before it */
    g_auto(GlCommandPlan) dashes = { 0 };
    plan_ok(ARGV("ruby", "-Ilib", "--", ":::", "a.rb", "b.rb"), &options, &dashes);
    GStrv argv = g_ptr_array_index(dashes.commands, 0);
    ck_assert_str_eq(argv[1], "-Ilib");
    ck_assert_str_eq(argv[2], "-e");
    ck_assert_str_eq(argv[4], "--");
    g_autofree char *tail = words(argv, 5);
    ck_assert_str_eq(tail, "a.rb b.rb");

    const char *const scripted[] = {
        "-w -- runner.rb", "--encoding UTF-8 runner.rb", "--encoding=UTF-8 runner.rb",
        "-C sub runner.rb", "-I lib runner.rb", "-x runner.rb", "-we ARGV", "-e ARGV", "-",
        "-S rspec", "-wS rspec",
    };
    for (guint i = 0; i < G_N_ELEMENTS(scripted); i++) {
        g_autofree char *line = g_strdup_printf("ruby %s ::: a.rb b.rb", scripted[i]);
        g_auto(GStrv) command = g_strsplit(line, " ", -1);
        g_auto(GlCommandPlan) plan = { 0 };
        plan_ok(command, &options, &plan);
        g_autofree char *all = words(g_ptr_array_index(plan.commands, 0), 0);
        g_autofree char *expected = g_strdup_printf("ruby %s a.rb b.rb", scripted[i]);
        ck_assert_str_eq(all, expected);
    }
    gl_remove_tree(dir);
}
END_TEST

/* Each CI system's variables, with its own base. */
START_TEST(test_shard_auto)
{
    struct {
        const char *env[3];
        guint index, count;
    } cases[] = {
        { { "CI_NODE_INDEX=1", "CI_NODE_TOTAL=3", NULL }, 0, 3 },           /* GitLab: from 1 */
        { { "CI_NODE_INDEX=3", "CI_NODE_TOTAL=3", NULL }, 2, 3 },
        { { "CIRCLE_NODE_INDEX=0", "CIRCLE_NODE_TOTAL=2", NULL }, 0, 2 },   /* from 0 */
        { { "BUILDKITE_PARALLEL_JOB=3", "BUILDKITE_PARALLEL_JOB_COUNT=4", NULL }, 3, 4 },
        { { "HOME=/", NULL, NULL }, 0, 1 },                                 /* none: all */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        guint index = 99, count = 99;
        g_autofree char *source = NULL;
        g_autoptr(GError) error = NULL;
        ck_assert_msg(gl_shard_parse("auto", cases[i].env, &index, &count, &source, &error),
                      "case %u: %s", i, error != NULL ? error->message : "");
        ck_assert_uint_eq(index, cases[i].index);
        ck_assert_uint_eq(count, cases[i].count);
        ck_assert_ptr_nonnull(source);
    }
    const char *bad[][3] = {
        { "CI_NODE_INDEX=0", "CI_NODE_TOTAL=3", NULL },        /* GitLab has no shard 0 */
        { "CIRCLE_NODE_INDEX=2", "CIRCLE_NODE_TOTAL=2", NULL },/* CircleCI's last is 1 */
        { "CI_NODE_INDEX=1", NULL, NULL },                     /* half of it */
        { "BUILDKITE_PARALLEL_JOB=x", "BUILDKITE_PARALLEL_JOB_COUNT=2", NULL },
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        guint index = 0, count = 0;
        g_autofree char *source = NULL;
        g_autoptr(GError) error = NULL;
        ck_assert_msg(!gl_shard_parse("auto", bad[i], &index, &count, &source, &error), "bad %u", i);
        ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
        ck_assert(strstr(error->message, "--shard auto") != NULL);
    }
    guint index = 0, count = 0;
    g_autofree char *source = NULL;
    ck_assert(gl_shard_parse("2/4", NULL, &index, &count, &source, NULL));
    ck_assert_uint_eq(index, 1);
    ck_assert_uint_eq(count, 4);
    ck_assert_ptr_null(source);
    ck_assert(!gl_shard_parse("0/4", NULL, &index, &count, &source, NULL));
    ck_assert(!gl_shard_parse("5/4", NULL, &index, &count, &source, NULL));
}
END_TEST

/* Every file in exactly one shard, whatever the count. */
START_TEST(test_shards_split_every_file_once)
{
    const gsize sizes[] = { 900, 10, 300, 300, 20, 500, 30 };
    g_autofree char *dir = files_of_sizes(sizes, G_N_ELEMENTS(sizes));
    for (guint shards = 1; shards <= 8; shards++) {
        g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint s = 1; s <= shards; s++) {
            g_autofree char *shard = g_strdup_printf("%u/%u", s, shards);
            GlCommandOptions options = { .shard = shard, .jobs = 2 };
            g_auto(GlCommandPlan) plan = { 0 };
            g_autoptr(GError) error = NULL;
            gboolean ok = gl_commands_plan(ARGV("rspec", ":::", "a.rb", "b.rb", "c.rb", "d.rb",
                                                "e.rb", "f.rb", "g.rb"),
                                           &options, &plan, &error);
            if (!ok) {   /* more shards than files: an empty one says so */
                ck_assert_uint_gt(shards, 7);
                ck_assert(strstr(error->message, "no files to run") != NULL);
                continue;
            }
            for (guint c = 0; c < plan.shares->len; c++) {
                GPtrArray *share = g_ptr_array_index(plan.shares, c);
                for (guint i = 0; i < share->len; i++)
                    ck_assert_msg(g_hash_table_add(seen, g_strdup(g_ptr_array_index(share, i))),
                                  "%s twice in %u shards", (char *) g_ptr_array_index(share, i),
                                  shards);
            }
        }
        ck_assert_uint_eq(g_hash_table_size(seen), shards > 7 ? 7 : 7);
        GHashTableIter iter;
        gpointer key;
        g_hash_table_iter_init(&iter, seen);
        while (g_hash_table_iter_next(&iter, &key, NULL))
            g_free(key);
    }
    gl_remove_tree(dir);
}
END_TEST

/* One slow file goes alone, the rest share the other job: by recorded
 * seconds, else by size. */
START_TEST(test_jobs_balanced_by_cost)
{
    const gsize sizes[] = { 100, 100, 100, 100 };
    g_autofree char *dir = files_of_sizes(sizes, 4);
    gl_test_write(GL_DURATIONS_FILE,
                  "{\"format\": \"gemleak-durations\", \"version\": 1, \"files\": "
                  "{\"a.rb\": 1000, \"b.rb\": 1000, \"c.rb\": 9000, \"d.rb\": 1000}}", -1);
    GlCommandOptions options = { .jobs = 2, .durations = GL_DURATIONS_FILE };
    g_auto(GlCommandPlan) plan = { 0 };
    plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb", "c.rb", "d.rb"), &options, &plan);
    ck_assert_uint_eq(plan.commands->len, 2);
    g_autofree char *first = words(g_ptr_array_index(plan.commands, 0), 1);
    g_autofree char *second = words(g_ptr_array_index(plan.commands, 1), 1);
    ck_assert_str_eq(first, "c.rb");
    ck_assert_str_eq(second, "a.rb b.rb d.rb");   /* in the order given */
    ck_assert_uint_eq(plan.notes->len, 0);

    /* without the file: by size */
    g_unlink(GL_DURATIONS_FILE);
    gl_test_write("b.rb", "# a long file\n" "################################################"
                          "################################################################"
                          "################################################################",
                  -1);
    g_auto(GlCommandPlan) by_size = { 0 };
    plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb", "c.rb"), &options, &by_size);
    g_autofree char *alone = words(g_ptr_array_index(by_size.commands, 0), 1);
    ck_assert_str_eq(alone, "b.rb");
    gl_remove_tree(dir);
}
END_TEST

/* A file that is not gemleak's is read as none, said once, and never
 * overwritten; gemleak's own is updated through a rename. */
START_TEST(test_durations_file)
{
    const gsize sizes[] = { 100, 300 };
    g_autofree char *dir = files_of_sizes(sizes, 2);
    const char *foreign[] = { "not json {", "[1, 2]", "{\"files\": {\"a.rb\": 1}}",
                              "{\"format\": \"gemleak-durations\", \"version\": 9, \"files\": {}}" };
    GlCommandOptions options = { .jobs = 2, .durations = GL_DURATIONS_FILE };
    for (guint i = 0; i < G_N_ELEMENTS(foreign); i++) {
        gl_test_write(GL_DURATIONS_FILE, foreign[i], -1);
        g_auto(GlCommandPlan) plan = { 0 };
        plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &plan);
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
    plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &plan);
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
    plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &again);
    g_autofree char *first = words(g_ptr_array_index(again.commands, 0), 1);
    ck_assert_str_eq(first, "b.rb");
    gl_remove_tree(dir);
}
END_TEST

/* What the helper timed is each file's own; the files it did not time
 * share the rest of their command's time. */
START_TEST(test_durations_measured_by_the_helper)
{
    const gsize sizes[] = { 100, 100, 100 };
    g_autofree char *dir = files_of_sizes(sizes, 3);
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
    plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb", "c.rb"), &options, &plan);
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
    g_autofree char *dir = files_of_sizes(sizes, 2);
    g_autofree char *deep = g_strnfill(1000000, '[');
    gl_test_write(GL_DURATIONS_FILE, deep, -1);
    GlCommandOptions options = { .jobs = 2, .durations = GL_DURATIONS_FILE };
    g_auto(GlCommandPlan) plan = { 0 };
    plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &plan);
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
    g_autofree char *dir = files_of_sizes(sizes, 2);
    gl_test_write(GL_DURATIONS_FILE,
                  "{\"format\": \"gemleak-durations\", \"version\": 1, \"files\": "
                  "{\"a.rb\": 1e300, \"b.rb\": 2000, \"c.rb\": 9223372036854775807}}", -1);
    GlCommandOptions options = { .jobs = 1, .durations = GL_DURATIONS_FILE };
    g_auto(GlCommandPlan) plan = { 0 };
    plan_ok(ARGV("rspec", ":::", "b.rb"), &options, &plan);
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
    plan_ok((char **) argv->pdata, &options, &many);
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
    g_autofree char *dir = files_of_sizes(sizes, 2);
    GlCommandOptions options = { .jobs = 1, .durations = "link.json" };
    ck_assert_int_eq(symlink("kept/real.json", "link.json"), 0);
    ck_assert_int_eq(g_mkdir("kept", 0700), 0);
    g_auto(GlCommandPlan) plan = { 0 };
    plan_ok(ARGV("rspec", ":::", "a.rb"), &options, &plan);
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
    g_autofree char *dir = files_of_sizes(sizes, 2);
    GlCommandOptions options = { .jobs = 1, .durations = GL_DURATIONS_FILE };
    const double seconds[] = { 3 };
    g_autoptr(GError) error = NULL;
    ck_assert_int_eq(mkfifo(GL_DURATIONS_FILE, 0600), 0);
    g_auto(GlCommandPlan) fifo = { 0 };
    plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb"), &options, &fifo);
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

/* Bundler and Rake, by name or path, are launchers; Ruby and rspec not. */
START_TEST(test_launchers)
{
    ck_assert(gl_is_launcher("bundle"));
    ck_assert(gl_is_launcher("/usr/local/bin/bundle"));
    ck_assert(gl_is_launcher("bin/rake"));
    ck_assert(gl_is_launcher("bundler"));
    ck_assert(!gl_is_launcher("ruby"));
    ck_assert(!gl_is_launcher("rspec"));
    ck_assert(!gl_is_launcher("/home/rake/bin/ruby"));
    ck_assert(!gl_is_launcher("rake-compiler"));
}
END_TEST

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
 * compiled helper a Ruby of the run cached there. */
START_TEST(test_clean_removes_a_helper_directory_left_behind)
{
    g_autofree char *tmp = gl_test_tmpdir();
    int lock = -1;
    g_autoptr(GError) error = NULL;
    g_autofree char *written = gl_run_write_helper(TRUE, &lock, &error);
    ck_assert_msg(written != NULL, "%s", error != NULL ? error->message : "");
    close(lock);  /* the gemleak that wrote it is gone */
    /* moved where nothing else is to clean */
    g_autofree char *base = g_path_get_basename(written);
    g_autofree char *helper = g_build_filename(tmp, base, NULL);
    ck_assert_msg(g_rename(written, helper) == 0, "%s: %s", written, g_strerror(errno));
    const char *const also[] = { "exact-sites.txt", "exact-tests.txt",
                                 "gemleak_helper_body-ruby-3.4.5-x86_64-linux-20cda200d3.iseq",
                                 "gemleak_helper_body-ruby-3.4.5-x86_64-linux-20cda200d3.iseq.4242",
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
        g_ptr_array_add(commands, g_strdupv(ARGV("true")));
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

/* A run makes gemleak the subreaper of what its commands leave behind, for
 * as long as it waits for them; after it, an orphan of the program that
 * called it (the tests, in-process) is init's again, not its own. */
START_TEST(test_subreaper_undone_after_a_run)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *valgrind = g_build_filename(tmp, "fake-valgrind", NULL);
    gl_test_write(valgrind, "#!/bin/sh\n[ \"$1\" = --version ] && echo valgrind-3.19.0\nexit 0\n", -1);
    ck_assert_int_eq(g_chmod(valgrind, 0755), 0);
    GlRunOptions options = { .program = valgrind };
    g_autoptr(GPtrArray) commands = g_ptr_array_new_with_free_func((GDestroyNotify) g_strfreev);
    g_ptr_array_add(commands, g_strdupv(ARGV("true")));
    GlRunResult result;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_run_commands(&options, commands, &result, &error), "%s",
                  error != NULL ? error->message : "");
    gl_run_finish(&result, TRUE);
#ifdef __linux__
    int subreaper = -1;
    ck_assert_int_eq(prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0), 0);
    ck_assert_msg(subreaper == 0, "still the subreaper of orphans after the run");
#endif
    gl_remove_tree(tmp);
}
END_TEST

/* What the helper says of a fork of a launcher that loaded an extension
 * outside Valgrind: a sentence each, and the run never passes. */
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

    GlGate gate;
    gl_gate_init(&gate);
    g_autoptr(GPtrArray) none = g_ptr_array_new();
    GlGateResult result;
    gl_gate_evaluate(&gate, none, 0, said->len, FALSE, NULL, &result);
    ck_assert(!result.failed);
    ck_assert(!result.complete);
    ck_assert_str_eq(result.line, "gemleak: INCOMPLETE: no findings in what was checked; 2 "
                                  "processes that loaded an extension were not checked (see gemleak's "
                                  "messages)");
    gl_gate_result_clear(&result);
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

/* A run that checked nothing never passes. */
START_TEST(test_gate_checked_nothing)
{
    GlGate gate;
    gl_gate_init(&gate);
    g_autoptr(GPtrArray) none = g_ptr_array_new();
    GlGateResult result;
    gl_gate_evaluate(&gate, none, 0, 0, TRUE, NULL, &result);
    ck_assert(!result.failed);
    ck_assert(!result.complete);
    ck_assert_str_eq(result.line, "gemleak: INCOMPLETE: nothing was checked: no process the "
                                  "engine checked loaded a target extension (see gemleak's "
                                  "messages)");
    gl_gate_result_clear(&result);
}
END_TEST

/* Issue 26, item 10: a run a signal interrupted never passes, and its
 * directory says why to gemleak filter; gemleak clean takes it as its own. */
START_TEST(test_interrupted_run_never_passes)
{
    GlGate gate;
    gl_gate_init(&gate);
    g_autoptr(GPtrArray) none = g_ptr_array_new();
    GlGateResult result;
    gl_gate_evaluate(&gate, none, 0, 0, FALSE, "SIGTERM", &result);
    ck_assert(!result.failed);
    ck_assert(!result.complete);
    ck_assert_str_eq(result.line, "gemleak: INCOMPLETE: no findings in what was checked; the run "
                                  "was interrupted by SIGTERM: what the command had not run by "
                                  "then was not checked");
    gl_gate_result_clear(&result);

    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *dir = g_build_filename(tmp, "gemleak-run-Int3rr", NULL);
    ck_assert_int_eq(g_mkdir(dir, 0700), 0);
    g_autoptr(GError) error = NULL;
    ck_assert(gl_rundir_mark(dir, &error));
    ck_assert(gl_rundir_mark_interrupted(dir, SIGTERM, &error));
    const char *inputs[] = { dir, NULL };
    g_auto(GlRunCoverage) coverage = { 0 };
    gl_run_dir_coverage(inputs, &coverage);
    ck_assert_str_eq(coverage.interrupted, "SIGTERM");
    FILE *null = fopen("/dev/null", "w");
    ck_assert_uint_eq(gl_rundir_clean(tmp, FALSE, null), 1);
    fclose(null);
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_usage_errors)
{
    GlCommandOptions options = { .jobs = 1, .shard = "1/2" };
    g_auto(GlCommandPlan) plan = { 0 };
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_commands_plan(ARGV("rspec"), &options, &plan, &error));
    ck_assert(strstr(error->message, "--shard needs the test files after :::") != NULL);
    g_clear_error(&error);
    options.shard = NULL;
    ck_assert(!gl_commands_plan(ARGV(":::", "a.rb"), &options, &plan, &error));
    ck_assert_str_eq(error->message, "no command before :::");
}
END_TEST

Suite *gl_commands_suite(void)
{
    Suite *suite = suite_create("commands");
    TCase *tc = tcase_create("commands");
    tcase_add_test(tc, test_bare_ruby_gets_a_loader);
    tcase_add_test(tc, test_bare_ruby_among_rubys_options);
    tcase_add_test(tc, test_shard_auto);
    tcase_add_test(tc, test_shards_split_every_file_once);
    tcase_add_test(tc, test_jobs_balanced_by_cost);
    tcase_add_test(tc, test_durations_file);
    tcase_add_test(tc, test_durations_measured_by_the_helper);
    tcase_add_test(tc, test_durations_file_nested_deep);
    tcase_add_test(tc, test_durations_file_stays_readable);
    tcase_add_test(tc, test_durations_file_through_a_link);
    tcase_add_test(tc, test_durations_file_that_is_a_fifo);
    tcase_add_test(tc, test_usage_errors);
    tcase_add_test(tc, test_launchers);
    tcase_add_test(tc, test_clean_removes_sanitizer_runs);
    tcase_add_test(tc, test_clean_removes_a_helper_directory_left_behind);
    tcase_add_test(tc, test_processes_outside_valgrind);
    tcase_add_test(tc, test_run_coverage);
    tcase_add_test(tc, test_gate_checked_nothing);
    tcase_add_test(tc, test_interrupted_run_never_passes);
    tcase_add_test(tc, test_subreaper_undone_after_a_run);
    suite_add_tcase(suite, tc);

    /* a race, run many times: seconds */
    TCase *races = tcase_create("races");
    tcase_set_timeout(races, 120);
    tcase_add_test(races, test_clean_racing_starting_runs);
    suite_add_tcase(suite, races);
    return suite;
}
