/* Integration tests, issue 30: memory a Ruby API hands to the extension (an
 * fd set, an st_table, an encoding converter, a ruby_strdup copy, a
 * ruby_getcwd path, an Onigmo regex and region) is the extension's when it
 * never releases it, under every engine, in `run` and in `filter` of the
 * kept directory; released, it is nothing; callbacks into Ruby and Ruby's
 * objects stay Ruby's. Valgrind on Debian's Ruby 3.1 (its rules read
 * stacks without symbols), LeakSanitizer and AddressSanitizer on a Ruby
 * 3.4 (which frees its own memory at exit), named by its path from a
 * script while `ruby` on PATH is Debian's 3.1. */
#include <string.h>

#include "harness.h"

#define DEFAULT_RUBY34 "/root/.cache/gemleak/ruby-3.4.5/bin/ruby"

/* The probe's methods that lose API memory, each a finding of its own. */
static const char *const handed[] = {
    "r_fdset", "r_econv", "r_getcwd", "r_onig_new", "r_onig_region", "r_ruby_strdup",
    "r_st_table", NULL,
};

/* What else runs: the same API memory released, callbacks into Ruby, and
 * Ruby's objects kept to exit. */
#define OTHERS "n_api_released n_funcall n_str_kept n_hash_aset n_str_encode n_define_class"

static char *work;        /* the probe built with Ruby 3.4 (probe/), and scripts */
static char *ruby34;      /* nullable: none here */
static char *why_skipped;

static void setup_handed(void)
{
    const char *given = g_getenv("GEMLEAK_TEST_RUBY34");
    const char *ruby = given != NULL && *given != '\0' ? given : DEFAULT_RUBY34;
    work = g_dir_make_tmp("gemleak-handed-XXXXXX", NULL);
    if (!g_file_test(ruby, G_FILE_TEST_IS_EXECUTABLE)) {
        why_skipped = g_strdup_printf("no Ruby 3.4 (GEMLEAK_TEST_RUBY34, else %s; "
                                      "scripts/build-ruby builds one)", DEFAULT_RUBY34);
        return;
    }
    g_autofree char *ext = gl_test_fixture("ext/probe");
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && cp -r '%s' probe && cd probe && '%s' extconf.rb >/dev/null && make >/dev/null",
        work, ext, ruby);
    const char *argv[] = { "sh", "-c", script, NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    if (r.status == 0)
        ruby34 = g_strdup(ruby);
    else
        why_skipped = g_strdup_printf("the probe did not build with %s: %s", ruby, r.err);
    result_clear(&r);
}

static void teardown_handed(void)
{
    gl_remove_tree(work);
    g_clear_pointer(&work, g_free);
    g_clear_pointer(&ruby34, g_free);
    g_clear_pointer(&why_skipped, g_free);
}

/* Asserts that the JSON report @json holds one certain finding for each
 * of handed[] and nothing else; @what names the run in messages. */
static void assert_handed_only(const char *json, const char *what, const char *err)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, json, &error), "%s: %s\n%s", what,
                  error != NULL ? error->message : "", err);
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    g_autoptr(GHashTable) found = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        JsonArray *frames = json_object_get_array_member(finding, "frames");
        const char *fn = NULL;
        for (guint j = 0; j < json_array_get_length(frames) && fn == NULL; j++) {
            JsonObject *frame = json_array_get_object_element(frames, j);
            if (json_object_get_boolean_member(frame, "in_target"))
                fn = json_object_get_string_member(frame, "fn");
        }
        ck_assert_msg(fn != NULL && g_strv_contains(handed, fn), "%s: reported %s, no bug:\n%s",
                      what, fn != NULL ? fn : "(no target frame)", err);
        ck_assert_msg(json_object_get_boolean_member(finding, "certain"), "%s: %s uncertain\n%s",
                      what, fn, err);
        ck_assert_msg(g_hash_table_add(found, g_strdup(fn)), "%s: %s twice\n%s", what, fn, err);
    }
    for (const char *const *fn = handed; *fn != NULL; fn++)
        ck_assert_msg(g_hash_table_contains(found, *fn), "%s: %s was missed\n%s", what, *fn, err);
}

/* Runs gemleak run [--engine @engine] -O probe, keeping the run directory,
 * on @command; then gemleak filter of that directory: both fail the gate
 * with the handed memory alone. */
static void run_and_filter(const char *engine, const char *name, const char *const *command)
{
    g_autofree char *kept = g_strdup_printf("%s/%s-kept", work, name);
    g_autofree char *json = g_strdup_printf("json:%s/%s-run.json", work, name);
    g_autofree char *filtered = g_strdup_printf("json:%s/%s-filter.json", work, name);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    const char *head[] = { gemleak_binary, "run", "--engine", engine, "-O", "probe", "--keep-xml",
                           kept, "--format", json, "--format", "text", "--", NULL };
    for (const char *const *arg = head; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    for (const char *const *arg = command; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    Result r = { 0 };
    run_command(&r, work, env, (const char *const *) argv->pdata);
    ck_assert_msg(r.status == 1, "%s run: status %d\n%s", engine, r.status, r.err);
    assert_handed_only(json + 5, engine, r.err);
    result_clear(&r);

    const char *again[] = { gemleak_binary, "filter", "-O", "probe", "--format", filtered,
                            "--format", "text", kept, NULL };
    run_command(&r, work, env, again);
    ck_assert_msg(r.status == 1, "%s filter: status %d\n%s", engine, r.status, r.err);
    assert_handed_only(filtered + 5, engine, r.err);
    result_clear(&r);
    gl_remove_tree(kept);
}

/* Debian's Ruby 3.1 under Valgrind: no free at exit, no symbols. */
START_TEST(test_api_memory_under_valgrind)
{
    g_autofree char *include = g_strdup_printf("-I%s/probe", ext_dir);
    g_autofree char *script = g_strdup_printf("%s/probe/probe_run.rb", ext_dir);
    g_autofree char *methods = g_strjoinv(" ", (char **) handed);
    g_autofree char *all = g_strdup_printf("%s %s", methods, OTHERS);
    g_auto(GStrv) words = g_strsplit(all, " ", -1);
    g_autoptr(GPtrArray) command = g_ptr_array_new();
    const char *head[] = { "ruby", "--disable-gems", include, script, NULL };
    for (const char *const *arg = head; *arg != NULL; arg++)
        g_ptr_array_add(command, (gpointer) *arg);
    for (char **word = words; *word != NULL; word++)
        g_ptr_array_add(command, *word);
    g_ptr_array_add(command, NULL);
    run_and_filter("valgrind", "valgrind", (const char *const *) command->pdata);
}
END_TEST

/* Writes a script that runs the probe with Ruby 3.4 named by its path.
 * Returns: (transfer full): its path. */
static char *probe_script(void)
{
    g_autofree char *methods = g_strjoinv(" ", (char **) handed);
    g_autofree char *path = g_build_filename(work, "probe.sh", NULL);
    g_autofree char *text = g_strdup_printf("#!/bin/sh\nexec '%s' --disable-gems -I'%s/probe' "
                                            "'%s/probe/probe_run.rb' %s %s\n", ruby34, work,
                                            work, methods, OTHERS);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    ck_assert_int_eq(g_chmod(path, 0755), 0);
    return g_steal_pointer(&path);
}

/* Through a script: what the engine needs of Ruby is the Ruby the process
 * runs, not `ruby` on PATH (Debian's 3.1 here), for LeakSanitizer and for
 * AddressSanitizer's leak check alike. */
START_TEST(test_api_memory_under_lsan)
{
    if (!ready_or_skip(ruby34, "handed API memory under LeakSanitizer", why_skipped))
        return;
    g_autofree char *script = probe_script();
    const char *command[] = { script, NULL };
    run_and_filter("lsan", "lsan", command);
}
END_TEST

START_TEST(test_api_memory_under_asan)
{
    if (!ready_or_skip(ruby34, "handed API memory under AddressSanitizer", why_skipped))
        return;
    g_autofree char *script = probe_script();
    const char *command[] = { script, NULL };
    run_and_filter("asan", "asan", command);
}
END_TEST

/* A process on a Ruby older than LeakSanitizer needs (3.3: it cannot free
 * its memory at exit) is not passed: the run is INCOMPLETE and names it,
 * whatever `ruby` on PATH said before it ran; and it runs once (no exact
 * stacks paid for what is not checked). */
START_TEST(test_lsan_process_on_ruby31_is_incomplete)
{
    if (!g_file_test("/usr/bin/ruby", G_FILE_TEST_IS_EXECUTABLE))
        gl_test_skip("LeakSanitizer on a Ruby 3.1 process: no /usr/bin/ruby (Debian's ruby)");
    if (!ready_or_skip(ruby34, "LeakSanitizer on a Ruby 3.1 process", why_skipped))
        return;
    g_autofree char *include = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *argv[] = { gemleak_binary, "run", "--engine", "lsan", "--", "/usr/bin/ruby",
                           "--disable-gems", include, "-e", "require 'leaky'", NULL };
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    Result r = { 0 };
    run_command(&r, NULL, env, argv);
    ck_assert_msg(r.status == 3, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: process \\d+: it ran Ruby 3\\.[0-2]\\.\\d+, and --engine lsan "
                          "needs Ruby 3\\.3 or newer: .*\\(--engine valgrind, the default, checks "
                          "it\\): what it ran was not checked");
    gl_assert_no_line(r.err, "^gemleak: pass");
    /* its thousands of Ruby's blocks are not worth exact stacks: the run
     * counts it unchecked whatever they are */
    gl_assert_no_line(r.err, "^gemleak: exact stacks:");
    result_discard(&r);
}
END_TEST

void integration_handed(TCase *tcase)
{
    tcase_add_unchecked_fixture(tcase, setup_handed, teardown_handed);
    tcase_add_test(tcase, test_api_memory_under_valgrind);
    tcase_add_test(tcase, test_api_memory_under_lsan);
    tcase_add_test(tcase, test_api_memory_under_asan);
    tcase_add_test(tcase, test_lsan_process_on_ruby31_is_incomplete);
}
