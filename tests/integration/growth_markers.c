/* Integration tests, --growth: each test run again after the suite, a
 * measure before the first run again and after each, as
 * include/gemleak/base/protocol.h says (GL_PROTO_GROWTH_VARIABLE), seen
 * in what the engine wrote. */
#include <string.h>

#include "harness.h"
#include "gemleak/base/protocol.h"

/* gemleak run ARGS --keep-xml KEPT -- ruby -Ilib -Itest test/words_test.rb
 * (the example gem's three minitest tests, one of which leaks 6 bytes a
 * run) in a fresh copy of the example gem.
 * Returns: (transfer full) the copy, which holds KEPT ("kept"). */
static char *words_run(Result *result, const char *const *args)
{
    char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_strdup_printf("cp -a '%s/.' '%s'", sample_gem, dir);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autofree char *kept = g_build_filename(dir, "kept", NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    g_ptr_array_add(argv, (gpointer) "run");
    for (const char *const *arg = args; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *rest[] = { "--keep-xml", kept, "--", "ruby", "-Ilib", "-Itest",
                           "test/words_test.rb", NULL };
    for (const char *const *arg = rest; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    run_command(result, dir, NULL, (const char *const *) argv->pdata);
    gl_assert_line(result->out, "^3 runs, 3 assertions, 0 failures, 0 errors");
    return dir;
}

/* Returns: (transfer full): the text of every file of @kept whose name
 * matches @glob, decompressed (a kept directory is gzip-compressed). */
static char *kept_text(const char *kept, const char *glob)
{
    g_autofree char *script = g_strdup_printf("cd '%s' && zcat -f %s", kept, glob);
    const char *argv[] = { "sh", "-c", script, NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    ck_assert_msg(r.status == 0, "%s: %s", script, r.err);
    char *text = g_steal_pointer(&r.out);
    result_clear(&r);
    return text;
}

char *growth_markers(const char *text, const char *prefix, const char *suffix,
                            const char *dir)
{
    g_autofree char *pattern = g_strdup_printf("^%s(gemleak:growth[^\\n]*?)%s$", prefix, suffix);
    g_autoptr(GRegex) regex = g_regex_new(pattern, G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    GString *markers = g_string_new(NULL);
    g_autofree char *real = realpath(dir, NULL);
    g_autofree char *in_dir = g_strconcat(real, "/", NULL);
    for (g_regex_match(regex, text, 0, &match); g_match_info_matches(match);
         g_match_info_next(match, NULL)) {
        g_autofree char *marker = g_match_info_fetch(match, 1);
        g_auto(GStrv) parts = g_strsplit(marker, in_dir, -1);
        g_autofree char *relative = g_strjoinv("", parts);
        g_string_append_printf(markers, "%s\n", relative);
    }
    return g_string_free(markers, FALSE);
}

/* Returns: (transfer full): "gemleak:growth\tREP\tWordsTest#test_NAME\t
 * test/words_test.rb:LINE" for REP 0 to @k of @name, one a line. */
static char *measured_markers(const char *name, guint line, guint k)
{
    GString *markers = g_string_new(NULL);
    for (guint rep = 0; rep <= k; rep++)
        g_string_append_printf(markers, "gemleak:growth\t%u\tWordsTest#%s\ttest/words_test.rb:%u\n",
                               rep, name, line);
    return g_string_free(markers, FALSE);
}

/* The line of test/words_test.rb's @method. */
static guint words_line(const char *method)
{
    g_autofree char *path = g_build_filename(sample_gem, "test", "words_test.rb", NULL);
    g_autofree char *text = gl_test_read(path, NULL);
    g_autofree char *def = g_strdup_printf("def %s", method);
    const char *at = strstr(text, def);
    ck_assert_msg(at != NULL, "words_test.rb has no %s", def);
    guint line = 1;
    for (const char *c = text; c < at; c++)
        line += *c == '\n';
    return line;
}

/* @markers hold "gemleak:growth", then the repetitions of each of the
 * three tests (in the order minitest ran them), then "measured 3". */
static void assert_three_measured(const char *markers, guint k)
{
    static const char *const tests[] = { "test_frequencies", "test_count", "test_symbols" };
    ck_assert_msg(g_str_has_prefix(markers, "gemleak:growth\n"), "%s", markers);
    g_autofree char *last = g_strdup("gemleak:growth\tmeasured\t3\n");
    ck_assert_msg(g_str_has_suffix(markers, last), "%s", markers);
    gsize whole = strlen("gemleak:growth\n") + strlen(last);
    for (guint i = 0; i < G_N_ELEMENTS(tests); i++) {
        g_autofree char *each = measured_markers(tests[i], words_line(tests[i]), k);
        ck_assert_msg(strstr(markers, each) != NULL, "no %s in order:\n%s", tests[i], markers);
        whole += strlen(each);
    }
    ck_assert_msg(strlen(markers) == whole, "other markers:\n%s", markers);
}

/* Under Valgrind (Debian's Ruby 3.1): the markers in the XML, each
 * followed by a changed leak check of every leak kind: after the leaking
 * test's repetitions, its block, one more each time, as Valgrind's
 * changed check writes it ("N (+D) bytes in M (+E) blocks"); and the run
 * says in engine.txt that growth was asked, with K. */
START_TEST(test_growth_under_valgrind)
{
    Result r = { 0 };
    char *dir = words_run(&r, ARGS("--growth"));
    g_autofree char *kept = g_build_filename(dir, "kept", NULL);
    g_autofree char *xml = kept_text(kept, "*.xml*");
    g_autofree char *markers = growth_markers(xml, "  <text>", "  </text>", dir);
    assert_three_measured(markers, GL_PROTO_GROWTH_DEFAULT);

    for (guint rep = 1; rep <= GL_PROTO_GROWTH_DEFAULT; rep++) {
        g_autofree char *marker = g_strdup_printf("gemleak:growth\t%u\tWordsTest#test_count\t", rep);
        const char *at = strstr(xml, marker);
        ck_assert_msg(at != NULL, "no %s", marker);
        const char *next = strstr(at + 1, "<clientmsg>");
        ck_assert(next != NULL);
        g_autofree char *check = g_strndup(at, (gsize) (next - at));
        g_autofree char *lost = g_strdup_printf("<text>%u (+6) bytes in %u (+1) blocks are "
                                                "definitely lost in loss record ", 6 * rep, rep);
        ck_assert_msg(strstr(check, lost) != NULL, "after %s: no %s", marker, lost);
    }
    /* every kind shown: still reachable records changed too (Ruby's) */
    const char *first = strstr(xml, "gemleak:growth\t0\t");
    const char *measured = strstr(xml, "gemleak:growth\tmeasured\t");
    ck_assert(first != NULL && measured != NULL && first < measured);
    g_autofree char *phase = g_strndup(first, (gsize) (measured - first));
    ck_assert(strstr(phase, "<kind>Leak_StillReachable</kind>") != NULL);
    g_autofree char *engine_txt = g_build_filename(kept, "engine.txt", NULL);
    g_autofree char *engine = gl_test_read(engine_txt, NULL);
    gl_assert_line(engine, "^growth 3$");
    forget(&r, dir);

    /* --growth=K: K repetitions */
    Result two = { 0 };
    dir = words_run(&two, ARGS("--growth=2"));
    g_autofree char *kept_two = g_build_filename(dir, "kept", NULL);
    g_autofree char *xml_two = kept_text(kept_two, "*.xml*");
    g_autofree char *markers_two = growth_markers(xml_two, "  <text>", "  </text>", dir);
    assert_three_measured(markers_two, 2);
    forget(&two, dir);
}
END_TEST

/* A run without --growth is as it was: no growth marker, no line in
 * engine.txt, Valgrind shows the kinds asked for (definite, by default). */
START_TEST(test_no_growth_without_the_option)
{
    Result r = { 0 };
    char *dir = words_run(&r, NULL);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 6 bytes$");
    g_autofree char *kept = g_build_filename(dir, "kept", NULL);
    g_autofree char *xml = kept_text(kept, "*.xml*");
    ck_assert(strstr(xml, "gemleak:growth") == NULL);
    ck_assert(strstr(xml, "<kind>Leak_StillReachable</kind>") == NULL);
    ck_assert(strstr(xml, "<arg>--show-leak-kinds=definite</arg>") != NULL);
    g_autofree char *engine_txt = g_build_filename(kept, "engine.txt", NULL);
    g_autofree char *engine = gl_test_read(engine_txt, NULL);
    gl_assert_no_line(engine, "^growth");
    forget(&r, dir);
}
END_TEST

void integration_growth_markers(TCase *tcase)
{
    tcase_add_test(tcase, test_growth_under_valgrind);
    tcase_add_test(tcase, test_no_growth_without_the_option);
}
