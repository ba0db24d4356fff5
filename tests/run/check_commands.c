/* The commands a run starts (src/run/commands.c): files after :::, shards,
 * balanced shares, a bare ruby's loader. */
#include <string.h>

#include <glib/gstdio.h>

#include "plan_util.h"
#include "gemleak/base/errors.h"

/* ruby -Ilib ::: a b c would run a alone, with b and c as its ARGV. */
START_TEST(test_bare_ruby_gets_a_loader)
{
    const gsize sizes[] = { 10, 10, 10 };
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 3);
    GlCommandOptions options = { .jobs = 1 };
    g_auto(GlCommandPlan) plan = { 0 };
    gl_test_plan_ok(ARGV("ruby", "-Ilib", "-I", "test", ":::", "a.rb", "b.rb", "c.rb"), &options, &plan);
    ck_assert_uint_eq(plan.commands->len, 1);
    GStrv argv = g_ptr_array_index(plan.commands, 0);
    ck_assert_str_eq(argv[4], "-e");
    /* each file as `ruby FILE` runs it: $0 and __FILE__ its name (a body
     * under `if __FILE__ == $0` runs; issue 35, 7) */
    ck_assert(strstr(argv[5], "$0 = f; load f") != NULL);
    g_autofree char *tail = gl_test_words(argv, 6);
    ck_assert_str_eq(tail, "a.rb b.rb c.rb");
    ck_assert_uint_eq(plan.notes->len, 1);

    /* the same after bundle exec, and with a path to the interpreter */
    g_auto(GlCommandPlan) bundled = { 0 };
    gl_test_plan_ok(ARGV("bundle", "exec", "/opt/ruby34/bin/ruby", "-w", ":::", "a.rb"), &options, &bundled);
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
        gl_test_plan_ok(own[i], &options, &kept);
        g_autofree char *all = gl_test_words(g_ptr_array_index(kept.commands, 0), 0);
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
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 2);
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
        gl_test_plan_ok(command, &options, &plan);
        GStrv argv = g_ptr_array_index(plan.commands, 0);
        g_autofree char *all = gl_test_words(argv, 0);
        g_autofree char *expected = g_strdup_printf("ruby %s -e ", bare[i]);
        ck_assert_msg(g_str_has_prefix(all, expected), "%s: %s", bare[i], all);
        ck_assert_msg(g_str_has_suffix(all, "$0 = f; load f } a.rb b.rb"), "%s", all);
    }

    /* "--" ends the options: the loader goes before it */
    g_auto(GlCommandPlan) dashes = { 0 };
    gl_test_plan_ok(ARGV("ruby", "-Ilib", "--", ":::", "a.rb", "b.rb"), &options, &dashes);
    GStrv argv = g_ptr_array_index(dashes.commands, 0);
    ck_assert_str_eq(argv[1], "-Ilib");
    ck_assert_str_eq(argv[2], "-e");
    ck_assert_str_eq(argv[4], "--");
    g_autofree char *tail = gl_test_words(argv, 5);
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
        gl_test_plan_ok(command, &options, &plan);
        g_autofree char *all = gl_test_words(g_ptr_array_index(plan.commands, 0), 0);
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
    g_autofree char *dir = gl_test_files_of_sizes(sizes, G_N_ELEMENTS(sizes));
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
    g_autofree char *dir = gl_test_files_of_sizes(sizes, 4);
    gl_test_write(GL_DURATIONS_FILE,
                  "{\"format\": \"gemleak-durations\", \"version\": 1, \"files\": "
                  "{\"a.rb\": 1000, \"b.rb\": 1000, \"c.rb\": 9000, \"d.rb\": 1000}}", -1);
    GlCommandOptions options = { .jobs = 2, .durations = GL_DURATIONS_FILE };
    g_auto(GlCommandPlan) plan = { 0 };
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb", "c.rb", "d.rb"), &options, &plan);
    ck_assert_uint_eq(plan.commands->len, 2);
    g_autofree char *first = gl_test_words(g_ptr_array_index(plan.commands, 0), 1);
    g_autofree char *second = gl_test_words(g_ptr_array_index(plan.commands, 1), 1);
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
    gl_test_plan_ok(ARGV("rspec", ":::", "a.rb", "b.rb", "c.rb"), &options, &by_size);
    g_autofree char *alone = gl_test_words(g_ptr_array_index(by_size.commands, 0), 1);
    ck_assert_str_eq(alone, "b.rb");
    gl_remove_tree(dir);
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
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_bare_ruby_gets_a_loader);
    tcase_add_test(tc, test_bare_ruby_among_rubys_options);
    tcase_add_test(tc, test_shard_auto);
    tcase_add_test(tc, test_shards_split_every_file_once);
    tcase_add_test(tc, test_jobs_balanced_by_cost);
    tcase_add_test(tc, test_usage_errors);
    suite_add_tcase(suite, tc);
    return suite;
}
