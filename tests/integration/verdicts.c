/* Integration tests, gemleak run: verdicts, every shape of the probe, live
 * on this machine's Ruby. */
#include <string.h>

#include "harness.h"

static const char *const probe_bugs[] = {
    "r_malloc", "r_calloc", "r_realloc", "r_strdup", "r_xmalloc", "r_alloc_n", "r_xcalloc",
    "r_xrealloc", "r_ruby_strdup", "r_typed_nofree", "r_st_table", "r_fdset", "r_econv",
    "r_getcwd", "r_onig_new", "r_onig_region", "r_asprintf", "r_zlib",
    "r_two_sites", "r_calls_init_named", "r_xmalloc_gc", "r_uaf_two_lines", "r_uaf_tail",
    "r_double_free", "r_overflow", NULL,
};

/* Adds the function of every target frame of @frames (a JSON array) to @fns. */
static void target_functions(JsonArray *frames, GHashTable *fns)
{
    for (guint i = 0; frames != NULL && i < json_array_get_length(frames); i++) {
        JsonObject *frame = json_array_get_object_element(frames, i);
        if (json_object_get_boolean_member(frame, "in_target") &&
            !json_object_get_null_member(frame, "fn"))
            g_hash_table_add(fns, (gpointer) json_object_get_string_member(frame, "fn"));
    }
}

/* Every real bug found and certain; nothing else but Ruby's own memory that
 * a stripped Ruby leaves uncertain; Init code and Ruby's memory behind the
 * Ruby API left out (issue 9, on Debian's Ruby). */
START_TEST(test_probe_verdicts)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "probe.json", NULL);
    g_autofree char *format = g_strdup_printf("json:%s", json);
    g_autofree char *include = g_strdup_printf("-I%s/probe", ext_dir);
    g_autofree char *script = g_strdup_printf("%s/probe/probe_run.rb", ext_dir);
    Result r = { 0 };
    run_argv(&r, gemleak_binary, "run", "-O", "probe", "--format", "text", "--format", format,
             "--", "ruby", "--disable-gems", include, script, NULL);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);

    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, json, NULL));
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    g_autoptr(GHashTable) found = g_hash_table_new(g_str_hash, g_str_equal);
    guint certain = 0, zlib = 0;
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        g_autoptr(GHashTable) fns = g_hash_table_new(g_str_hash, g_str_equal);
        target_functions(json_object_get_array_member(finding, "frames"), fns);
        JsonArray *stacks = json_object_get_array_member(finding, "stacks");
        for (guint s = 0; s < json_array_get_length(stacks); s++)
            target_functions(json_object_get_array_member(json_array_get_object_element(stacks, s),
                                                          "frames"), fns);
        gboolean is_certain = json_object_get_boolean_member(finding, "certain");
        certain += is_certain;
        zlib += g_hash_table_contains(fns, "r_zlib");
        gboolean known = FALSE;
        for (const char *const *bug = probe_bugs; *bug != NULL; bug++) {
            if (!g_hash_table_contains(fns, *bug))
                continue;
            known = TRUE;
            g_hash_table_add(found, (gpointer) *bug);
            ck_assert_msg(is_certain, "%s is uncertain\n%s", *bug, r.err);
        }
        /* probe.c: an n_* method's memory is never certain, at most
         * uncertain on a Ruby without symbols; which of the kept objects
         * Valgrind calls definitely lost moves with the heap's layout. */
        gboolean in_n = FALSE;
        GHashTableIter iter;
        gpointer fn;
        g_hash_table_iter_init(&iter, fns);
        while (g_hash_table_iter_next(&iter, &fn, NULL))
            in_n |= g_str_has_prefix(fn, "n_");
        if (!known)
            ck_assert_msg(!is_certain && in_n, "reported but no bug: %s\n%s",
                          json_object_get_string_member(finding, "message"), r.err);
    }
    for (const char *const *bug = probe_bugs; *bug != NULL; bug++)
        ck_assert_msg(g_hash_table_contains(found, *bug), "%s was missed\n%s", *bug, r.err);
    /* r_two_sites is two findings. zlib's z_stream and its deflate state
     * point to each other: Valgrind calls one block of such a cycle
     * definitely lost and the rest indirectly, or, depending on where the
     * heap put them, both definitely lost. */
    ck_assert_msg(zlib == 1 || zlib == 2, "%u findings of r_zlib\n%s", zlib, r.err);
    ck_assert_uint_eq(certain, g_strv_length((char **) probe_bugs) + 1 + (zlib - 1));
    /* the use-after-free touched at two lines is one finding, and the one
     * whose access was a tail call is placed where it was freed */
    gl_assert_line(r.err, "^Invalid (read|write) of size 1, and 1 other access to the same freed block");
    gl_assert_no_line(r.err, "probe_setup_tables");
    result_discard(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A suite whose extension never loaded (not built: a LoadError) passed. */
START_TEST(test_extension_that_never_loaded)
{
    Result named = { 0 };
    gemleak_run(&named, NULL, NULL, ARGS("-O", "redcarpet"), "require 'redcarpet'");
    /* the command failed (a LoadError) before it loaded anything: 4, not
     * a usage error (issue 35, minor) */
    ck_assert_msg(named.status == 4, "status %d\n%s", named.status, named.err);
    gl_assert_no_line(named.err, "^Try ");
    gl_assert_line(named.err, "^gemleak: --object redcarpet matches no extension the run loaded: "
                              "it loaded none");
    gl_assert_no_line(named.err, "pass");
    result_discard(&named);

    Result unnamed = { 0 };
    gemleak_run(&unnamed, NULL, NULL, NO_ARGS, "require 'redcarpet'");
    /* the command failed (a LoadError) before anything was checked: 4,
     * not a usage error */
    ck_assert_msg(unnamed.status == 4, "status %d\n%s", unnamed.status, unnamed.err);
    gl_assert_line(unnamed.err, "^gemleak: nothing was checked: no Ruby process of the run "
                                "loaded an extension of the project");
    gl_assert_line(unnamed.err, "^gemleak: exit status 4: the command failed \\(status 1\\) "
                                "before anything was checked$");
    result_discard(&unnamed);

    /* No Ruby of the run got as far as gemleak's helper (a mistyped test
     * file: Ruby fails before its -r libraries load), in a directory with
     * no extension: the command failed, 4, not a usage error. A trial on
     * a fetched gem saw "no target extension known ... Try 'gemleak run
     * --help'" (2), and no line saying the command failed. */
    g_autofree char *empty = gl_test_tmpdir();
    const char *mistyped[] = { gemleak_binary, "run", "--", "ruby", "--disable-gems",
                               "no_such_test.rb", NULL };
    Result missing = { 0 };
    run_command(&missing, empty, NULL, mistyped);
    ck_assert_msg(missing.status == 4, "status %d\n%s", missing.status, missing.err);
    gl_assert_no_line(missing.err, "^Try ");
    gl_assert_no_line(missing.err, "no target extension known");
    gl_assert_line(missing.err, "^gemleak: nothing was checked: no Ruby process of the run ran "
                                "with gemleak's helper");
    gl_assert_line(missing.err, "^gemleak: exit status 4: the command failed \\(status 1\\) "
                                "before anything was checked$");
    result_discard(&missing);

    /* A command that starts no Ruby, and passes: nothing was checked, 3 */
    const char *no_ruby[] = { gemleak_binary, "run", "--", "true", NULL };
    Result none = { 0 };
    run_command(&none, empty, NULL, no_ruby);
    ck_assert_msg(none.status == 3, "status %d\n%s", none.status, none.err);
    gl_assert_no_line(none.err, "^Try ");
    gl_assert_line(none.err, "^gemleak: nothing was checked: no Ruby process of the run ran "
                             "with gemleak's helper");
    result_discard(&none);
    gl_remove_tree(empty);
}
END_TEST

/* The verdict is on standard error once, whatever the formats (issue 29):
 * with a JSON report alone, and with annotations on standard output beside
 * the text report. */
START_TEST(test_verdict_once_on_stderr)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_strdup_printf("json:%s/r.json", dir);
    Result failing = { 0 };
    gemleak_run(&failing, NULL, NULL, ARGS("-O", "leaky", "--format", json),
                "require 'leaky'; Leaky.leak");
    ck_assert_msg(failing.status == 1, "status %d\n%s", failing.status, failing.err);
    ck_assert_uint_eq(gl_test_count(failing.err, strlen(failing.err), "gemleak: FAIL: "), 1);
    gl_assert_line(failing.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
    gl_assert_line(failing.err, "^gemleak: exit status 1: findings fail the gate; the command "
                                "passed$");
    result_discard(&failing);

    Result clean = { 0 };
    gemleak_run(&clean, NULL, NULL, ARGS("-O", "leaky", "--format", "text", "--format", "github:-"),
                "require 'leaky'; Leaky.clean");
    ck_assert_msg(clean.status == 0, "status %d\n%s", clean.status, clean.err);
    ck_assert_uint_eq(gl_test_count(clean.err, strlen(clean.err), "pass: no findings"), 1);
    ck_assert_uint_eq(gl_test_count(clean.out, strlen(clean.out), "pass: no findings"), 0);
    result_discard(&clean);
    gl_remove_tree(dir);
}
END_TEST

void integration_verdicts(TCase *tcase)
{
    tcase_add_test(tcase, test_verdict_once_on_stderr);
    tcase_add_test(tcase, test_probe_verdicts);
    tcase_add_test(tcase, test_extension_that_never_loaded);
}
