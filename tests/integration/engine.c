/* Integration tests, the LeakSanitizer engine: on a Ruby 3.3 or newer
 * (GEMLEAK_TEST_RUBY34, else the Ruby 3.4.5 scripts/build-ruby builds),
 * with the real runtime, --engine lsan finds the leaks the Valgrind engine
 * finds, on the probe patterns and the example gem (a process on Ruby 3.1
 * is INCOMPLETE: handed.c). Without such a Ruby the tests that need it are
 * skipped, and say why. */
#include <string.h>

#include "harness.h"
#include "gemleak/base/protocol.h"

#define DEFAULT_RUBY34 "/root/.cache/gemleak/ruby-3.4.5/bin/ruby"

/* What the unchecked fixture set up, once for the case. */
static char *ruby34;      /* nullable: no Ruby >= 3.3 here */
static char *ruby34_bin;  /* its bin/ directory, for PATH (rake, its gems) */
static char *work;        /* the extensions and the example gem, built with it */
static char *why_skipped;

/* Returns: TRUE if @ruby runs and is 3.3 or newer. */
static gboolean recent_ruby(const char *ruby)
{
    if (!g_file_test(ruby, G_FILE_TEST_IS_EXECUTABLE))
        return FALSE;
    const char *argv[] = { ruby, "-e", "print RUBY_VERSION >= '3.3' ? 'yes' : 'no'", NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    gboolean yes = r.status == 0 && strcmp(r.out, "yes") == 0;
    result_clear(&r);
    return yes;
}

/* Runs @script under sh with PATH starting at Ruby 3.4's bin/. */
static gboolean setup_script(const char *script)
{
    g_autofree char *path = g_strconcat(ruby34_bin, ":", g_getenv("PATH"), NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    const char *argv[] = { "sh", "-c", script, NULL };
    Result r = { 0 };
    run_command(&r, NULL, env, argv);
    gboolean ok = r.status == 0;
    if (!ok)
        why_skipped = g_strdup_printf("setting up failed: %s: %s", script, r.err);
    result_clear(&r);
    return ok;
}

static void setup_ruby34(void)
{
    const char *given = g_getenv("GEMLEAK_TEST_RUBY34");
    const char *ruby = given != NULL && *given != '\0' ? given : DEFAULT_RUBY34;
    if (!recent_ruby(ruby)) {
        why_skipped = g_strdup_printf("no Ruby 3.3 or newer (GEMLEAK_TEST_RUBY34, else %s; "
                                      "scripts/build-ruby builds one)", DEFAULT_RUBY34);
        return;
    }
    ruby34 = g_strdup(ruby);
    ruby34_bin = g_path_get_dirname(ruby);
    work = g_dir_make_tmp("gemleak-engine-XXXXXX", NULL);
    g_autofree char *ext = gl_test_fixture("ext");
    g_autofree char *gem = gl_test_fixture("sample-gem");
    g_autofree char *script = g_strdup_printf("cd '%s' && cp -r '%s/leaky' '%s/probe' . && "
                             "(cd leaky && ruby extconf.rb >/dev/null && make >/dev/null) && "
                             "(cd probe && ruby extconf.rb >/dev/null && make >/dev/null) && "
                             "cp -r '%s' gem && cd gem && rake -R nowhere -f rakelib/compile.rake compile >/dev/null",
                             work, ext, ext, gem);
    if (!setup_script(script))
        g_clear_pointer(&ruby34, g_free);
}

static void teardown_ruby34(void)
{
    if (work != NULL)
        gl_remove_tree(work);
    g_clear_pointer(&work, g_free);
    g_clear_pointer(&ruby34, g_free);
    g_clear_pointer(&ruby34_bin, g_free);
    g_clear_pointer(&why_skipped, g_free);
}

/* Says what is skipped and why. Returns: TRUE when the test can run. */
static gboolean have_ruby34(const char *test)
{
    return ready_or_skip(ruby34, test, why_skipped);
}

/* gemleak run --engine @engine [@option] --format json -o @json --format
 * text -- @command... in @cwd. */
static void run_engine_within(Result *result, const char *cwd, const char *engine,
                              const char *option, const char *json, const char *const *command,
                              const char *address_space_kb)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    /* ulimit -v: what gemleak and each process of the run may map */
    g_autofree char *limit = address_space_kb != NULL
        ? g_strdup_printf("ulimit -v %s && exec \"$0\" \"$@\"", address_space_kb) : NULL;
    if (limit != NULL) {
        g_ptr_array_add(argv, (gpointer) "sh");
        g_ptr_array_add(argv, (gpointer) "-c");
        g_ptr_array_add(argv, limit);
    }
    const char *head[] = { gemleak_binary, "run", "--engine", engine, NULL };
    const char *tail[] = { "--format", "json", "-o", json, "--format", "text", "--", NULL };
    for (const char *const *arg = head; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    if (option != NULL)
        g_ptr_array_add(argv, (gpointer) option);
    for (const char *const *arg = tail; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    for (const char *const *arg = command; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_autofree char *path = g_strconcat(ruby34_bin, ":", g_getenv("PATH"), NULL);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    run_command(result, cwd, env, (const char *const *) argv->pdata);
}

static void run_engine_with(Result *result, const char *cwd, const char *engine,
                            const char *option, const char *json, const char *const *command)
{
    run_engine_within(result, cwd, engine, option, json, command, NULL);
}

static void run_engine(Result *result, const char *cwd, const char *engine, const char *json,
                       const char *const *command)
{
    run_engine_with(result, cwd, engine, NULL, json, command);
}

/* Returns: (transfer full): each leak finding of the JSON report @path as
 * "KIND: FN FN..." (its frames in a target), " (uncertain)" after it when
 * its stack could not decide it, sorted, each once, a line each: what the
 * two engines must agree on. */
static char *leaks_of(const char *path)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, path, &error), "%s: %s", path,
                  error != NULL ? error->message : "");
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *findings = json_object_get_array_member(root, "findings");
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        if (json_object_get_null_member(finding, "leak_kind"))
            continue;  /* a memory error: Valgrind's alone */
        GString *line = g_string_new(json_object_get_string_member(finding, "leak_kind"));
        g_string_append(line, ":");
        JsonArray *frames = json_object_get_array_member(finding, "frames");
        for (guint j = 0; j < json_array_get_length(frames); j++) {
            JsonObject *frame = json_array_get_object_element(frames, j);
            if (json_object_get_boolean_member(frame, "in_target"))
                g_string_append_printf(line, " %s", json_object_get_string_member(frame, "fn"));
        }
        if (!json_object_get_null_member(finding, "uncertainty"))
            g_string_append(line, " (uncertain)");
        g_ptr_array_add(lines, g_string_free(line, FALSE));
    }
    g_ptr_array_sort(lines, gl_compare_strings);
    GString *joined = g_string_new(NULL);
    for (guint i = 0; i < lines->len; i++) {
        const char *line = g_ptr_array_index(lines, i);
        if (i == 0 || strcmp(line, g_ptr_array_index(lines, i - 1)) != 0)
            g_string_append_printf(joined, "%s\n", line);
    }
    return g_string_free(joined, FALSE);
}

/* Runs @command under both engines, in @cwd; asserts that both end with
 * @status and name the same leaks, and that LeakSanitizer says what it
 * cannot see. Returns: (transfer full): the leaks. */
static char *same_leaks(const char *cwd, const char *const *command, int status)
{
    g_autofree char *lsan_json = g_build_filename(work, "lsan.json", NULL);
    g_autofree char *valgrind_json = g_build_filename(work, "valgrind.json", NULL);
    Result lsan = { 0 }, valgrind = { 0 };
    run_engine(&lsan, cwd, "lsan", lsan_json, command);
    ck_assert_msg(lsan.status == status, "lsan: status %d:\n%s", lsan.status, lsan.err);
    gl_assert_line(lsan.err, "^gemleak: ran under LeakSanitizer \\(/.*liblsan\\.so[.0-9]*\\) "
                             "\\(Ruby 3\\.[0-9.]*; fast stacks\\)$");
    gl_assert_line(lsan.err, "^gemleak: note: LeakSanitizer sees leaks only, not invalid reads "
                             "and writes, use after free");
    run_engine(&valgrind, cwd, "valgrind", valgrind_json, command);
    ck_assert_msg(valgrind.status == status, "valgrind: status %d:\n%s", valgrind.status,
                  valgrind.err);
    g_autofree char *by_lsan = leaks_of(lsan_json);
    g_autofree char *by_valgrind = leaks_of(valgrind_json);
    ck_assert_str_eq(by_lsan, by_valgrind);
    result_discard(&lsan);
    result_discard(&valgrind);
    return g_steal_pointer(&by_lsan);
}

/* The probe patterns of ext/leaky: a plain leak, Ruby's allocator, a leak
 * in a function named like Init_, the extension's own Init_ (skipped),
 * callbacks into Ruby and a reachable block (no finding), a native thread. */
START_TEST(test_lsan_leaky_patterns_as_valgrind)
{
    if (!have_ruby34("the LeakSanitizer engine on ext/leaky"))
        return;
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", work);
    const char *command[] = {
        ruby34, "--disable-gems", leaky, "-e",
        "require 'leaky'; Leaky.clean; Leaky.leak; Leaky.leak_xmalloc; Leaky.leak_in_helper; "
        "Leaky.callback_intern; Leaky.callback_funcall; Leaky.callback_eval; "
        "Leaky.leak_in_thread; Leaky.reachable; "
        "def deep(n) = n.zero? ? (Leaky.leak_and_raise rescue nil) : [n].each { deep(n - 1) }; "
        "deep(12)", NULL };
    g_autofree char *leaks = same_leaks(NULL, command, 1);
    /* deep(12): a stack the depth limit cut deep in Ruby's VM, as a test's
     * is; the extension's leak all the same, certain */
    ck_assert_str_eq(leaks, "definite: leaky_alloc Init_helpers leaky_leak_in_helper\n"
                            "definite: leaky_alloc leaky_leak\n"
                            "definite: leaky_alloc leaky_leak_and_raise\n"
                            "definite: leaky_alloc leaky_thread_main\n"
                            "definite: leaky_leak_xmalloc\n");
}
END_TEST

/* A child forked after its parent leaked inherits those blocks: counted
 * once, the parent's, under every way a sanitizer's engine runs, its
 * reports listing each lost object's address (the blocks the child
 * inherited are found by it): --exact-stacks, and AddressSanitizer's
 * engine, ran without the list and counted them twice (540 bytes). */
START_TEST(test_sanitizers_count_a_childs_inherited_leaks_once)
{
    if (!have_ruby34("a forked child's inherited leaks under every sanitizer's way"))
        return;
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", work);
    const char *command[] = { ruby34, "--disable-gems", leaky, "-e",
                              "require 'leaky'; Leaky.leak; Leaky.leak_xmalloc; "
                              "pid = fork { Leaky.leak }; Process.wait(pid)", NULL };
    const char *ways[][2] = { { "lsan", NULL }, { "lsan", "--exact-stacks" }, { "asan", NULL } };
    for (guint i = 0; i < G_N_ELEMENTS(ways); i++) {
        g_autofree char *json = g_strdup_printf("%s/inherited-%u.json", work, i);
        Result r = { 0 };
        run_engine_with(&r, NULL, ways[i][0], ways[i][1], json, command);
        gl_assert_line(r.err, "^gemleak: 2 processes checked( \\([^)]*\\))?, .*, 2 inherited from "
                              "the parent process\\)$");
        gl_assert_line(r.err, "^gemleak: FAIL: 2 leaks losing 320 bytes");
        result_discard(&r);
    }
}
END_TEST

#define DEFAULT_RUBY34_FP "/root/.cache/gemleak/ruby-3.4.5-fp/bin/ruby"

/* On a Ruby that keeps frame pointers (scripts/build-ruby fp), whose flags
 * extensions are built with, the engine unwinds by them (the fast
 * unwinder, near native speed) and says so; its stacks are whole: the same
 * leaks as Valgrind's, the one 12 blocks deep included, none uncertain. */
START_TEST(test_lsan_fast_stacks_on_a_frame_pointer_ruby)
{
    const char *given = g_getenv("GEMLEAK_TEST_RUBY34_FP");
    const char *fp_ruby = given != NULL && *given != '\0' ? given : DEFAULT_RUBY34_FP;
    if (!have_ruby34("the LeakSanitizer engine's fast stacks"))
        return;
    if (!recent_ruby(fp_ruby))
        gl_test_skip("the LeakSanitizer engine's fast stacks: no Ruby with frame pointers "
                     "(GEMLEAK_TEST_RUBY34_FP, else %s; scripts/build-ruby fp builds one)",
                     DEFAULT_RUBY34_FP);
    char *plain_bin = ruby34_bin;
    ruby34_bin = g_path_get_dirname(fp_ruby);
    g_autofree char *fp_work = g_build_filename(work, "fp", NULL);
    g_autofree char *ext = gl_test_fixture("ext");
    g_autofree char *script = g_strdup_printf("mkdir -p '%s' && cd '%s' && cp -r '%s/leaky' . && "
                                              "cd leaky && ruby extconf.rb >/dev/null && "
                                              "make >/dev/null", fp_work, fp_work, ext);
    ck_assert_msg(setup_script(script), "%s", why_skipped);
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", fp_work);
    const char *command[] = {
        fp_ruby, "--disable-gems", leaky, "-e",
        "require 'leaky'; Leaky.clean; Leaky.leak; Leaky.leak_xmalloc; Leaky.callback_intern; "
        "def deep(n) = n.zero? ? (Leaky.leak_and_raise rescue nil) : [n].each { deep(n - 1) }; "
        "deep(12)", NULL };
    g_autofree char *lsan_json = g_build_filename(work, "fp-lsan.json", NULL);
    Result lsan = { 0 };
    run_engine(&lsan, NULL, "lsan", lsan_json, command);
    ck_assert_msg(lsan.status == 1, "lsan: status %d:\n%s", lsan.status, lsan.err);
    gl_assert_line(lsan.err, "^gemleak: ran under LeakSanitizer .*\\(Ruby 3\\.[0-9.]*; it keeps "
                             "frame pointers: fast stacks\\)$");
    g_autofree char *leaks = leaks_of(lsan_json);
    ck_assert_str_eq(leaks, "definite: leaky_alloc leaky_leak\n"
                            "definite: leaky_alloc leaky_leak_and_raise\n"
                            "definite: leaky_leak_xmalloc\n");
    result_discard(&lsan);
    g_free(ruby34_bin);
    ruby34_bin = plain_bin;
}
END_TEST

/* Every shape of ext/probe: TypedData without dfree, st tables, zlib's
 * cycle (LeakSanitizer calls all of it indirect), memory Ruby's API hands
 * to the extension, Init code. Not its memory errors: LeakSanitizer does
 * not see them, and its allocator, unguarded, hands a block freed twice
 * out twice, after which a lost block can look reachable (r_fdset's, in
 * one run of three). */
START_TEST(test_lsan_probe_patterns_as_valgrind)
{
    if (!have_ruby34("the LeakSanitizer engine on ext/probe"))
        return;
    g_autofree char *probe = g_strdup_printf("-I%s/probe", work);
    g_autofree char *script = g_strdup_printf(
        "require 'probe'; ARGV.replace(Probe.singleton_methods.grep(/\\A[rn]_/).map(&:to_s).sort - "
        "%%w[r_double_free r_uaf_tail r_uaf_two_lines r_overflow]); load '%s/probe/probe_run.rb'",
        work);
    const char *command[] = { ruby34, "--disable-gems", probe, "-e", script, NULL };
    g_autofree char *leaks = same_leaks(NULL, command, 1);
    ck_assert_ptr_nonnull(strstr(leaks, "definite: r_typed_nofree\n"));
    ck_assert_ptr_nonnull(strstr(leaks, "definite: r_zlib\n"));
    ck_assert_ptr_nonnull(strstr(leaks, "definite: r_fdset\n"));
    ck_assert_ptr_nonnull(strstr(leaks, "definite: r_econv\n"));
    ck_assert_ptr_null(strstr(leaks, "Init_probe\n"));
}
END_TEST

/* The example gem's minitest suite: the leak in tally_count, by both. */
START_TEST(test_lsan_sample_gem_as_valgrind)
{
    if (!have_ruby34("the LeakSanitizer engine on the example gem"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "-e",
                              "require './test/count_test'; require './test/frequencies_test'",
                              NULL };
    g_autofree char *leaks = same_leaks(gem, command, 1);
    ck_assert_ptr_nonnull(strstr(leaks, " tally_count\n"));
}
END_TEST

/* gemleak run --engine @engine --per-test ..., as run_engine(). */
static void run_per_test(Result *result, const char *cwd, const char *engine, const char *json,
                         const char *const *command)
{
    run_engine_with(result, cwd, engine, "--per-test", json, command);
}

/* Returns: (transfer full): the only finding of the JSON report @path as
 * "BYTES bytes in BLOCKS: NAME @ LOCATION; ...", its tests. */
static char *named_tests(const char *path, const char *err)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, path, &error), "%s: %s\n%s", path,
                  error != NULL ? error->message : "", err);
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *findings = json_object_get_array_member(root, "findings");
    ck_assert_msg(json_array_get_length(findings) == 1, "%u findings:\n%s",
                  json_array_get_length(findings), err);
    JsonObject *finding = json_array_get_object_element(findings, 0);
    GString *out = g_string_new(NULL);
    g_string_append_printf(out, "%" G_GINT64_FORMAT " bytes in %" G_GINT64_FORMAT ":",
                           json_object_get_int_member(finding, "bytes"),
                           json_object_get_int_member(finding, "blocks"));
    JsonArray *tests = json_object_get_array_member(finding, "tests");
    for (guint i = 0; i < json_array_get_length(tests); i++) {
        JsonObject *test = json_array_get_object_element(tests, i);
        g_string_append_printf(out, "%s %s @ %s", i > 0 ? ";" : "",
                               json_object_get_string_member(test, "name"),
                               json_object_get_string_member(test, "location"));
    }
    return g_string_free(out, FALSE);
}

/* Runs @command in @cwd under both engines (with @option, nullable), each
 * failing the gate, and returns (transfer full) the one finding they agree
 * on, as named_tests() says it; *lsan keeps LeakSanitizer's run for more
 * asserts (result_discard() it). @name tells their JSON reports apart. */
static char *agreed_finding(Result *lsan, const char *cwd, const char *name, const char *option,
                            const char *const *command)
{
    g_autofree char *lsan_json = g_strdup_printf("%s/lsan-%s.json", work, name);
    g_autofree char *valgrind_json = g_strdup_printf("%s/valgrind-%s.json", work, name);
    run_engine_with(lsan, cwd, "lsan", option, lsan_json, command);
    ck_assert_msg(lsan->status == 1, "lsan: status %d:\n%s", lsan->status, lsan->err);
    Result valgrind = { 0 };
    run_engine_with(&valgrind, cwd, "valgrind", option, valgrind_json, command);
    ck_assert_msg(valgrind.status == 1, "valgrind: status %d:\n%s", valgrind.status, valgrind.err);
    char *by_lsan = named_tests(lsan_json, lsan->err);
    g_autofree char *by_valgrind = named_tests(valgrind_json, valgrind.err);
    ck_assert_str_eq(by_lsan, by_valgrind);
    result_discard(&valgrind);
    return by_lsan;
}

/* --per-test under LeakSanitizer: the example gem's three minitest tests,
 * one of which leaks; the test it names (the one that allocated the block)
 * and the bytes are the Valgrind engine's (the test after which a check
 * found it lost). */
START_TEST(test_lsan_per_test_names_the_test_as_valgrind)
{
    if (!have_ruby34("--per-test under the LeakSanitizer engine"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "test/words_test.rb", NULL };
    Result lsan = { 0 };
    g_autofree char *agreed = agreed_finding(&lsan, gem, "per-test", "--per-test", command);
    ck_assert(g_str_has_prefix(agreed, "6 bytes in 1: WordsTest#test_count @ test/words_test.rb:"));
    gl_assert_line(lsan.out, "^3 runs, 3 assertions, 0 failures, 0 errors");
    gl_assert_line(lsan.err, "^allocated in WordsTest#test_count \\(test/words_test\\.rb:[0-9]+\\)$");
    gl_assert_no_line(lsan.err, "warning: --per-test");
    result_discard(&lsan);
}
END_TEST

/* --growth under LeakSanitizer: the markers are lines of the report file,
 * before "gemleak:exit". Each test is measured K times through the client
 * library's counting (the checkpoint writes the marker), or, where this
 * gemleak's library has no allocation hooks, every test is named
 * unmeasured, and the run says it measured none: never silently nothing. */
START_TEST(test_lsan_growth_markers)
{
    if (!have_ruby34("--growth under the LeakSanitizer engine"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "test/words_test.rb", NULL };
    g_autofree char *json = g_build_filename(work, "growth.json", NULL);
    Result r = { 0 };
    run_engine_with(&r, gem, "lsan", "--growth=2", json, command);
    /* it leaks: the directory is kept */
    g_autofree char *kept = kept_dir(r.err);
    ck_assert_msg(kept != NULL, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.out, "^3 runs, 3 assertions, 0 failures, 0 errors");
    g_autofree char *script = g_strdup_printf("zcat -f '%s'/lsan.*", kept);
    const char *cat[] = { "sh", "-c", script, NULL };
    Result report = { 0 };
    run_command(&report, NULL, NULL, cat);
    ck_assert_int_eq(report.status, 0);
    g_autofree char *found = growth_markers(report.out, "", "", gem);
    /* before the runtime's check at exit */
    const char *exit_marker = strstr(report.out, "\ngemleak:exit\n");
    ck_assert(exit_marker != NULL && strstr(exit_marker, "gemleak:growth") == NULL);
    g_autoptr(GString) markers = g_string_new(found);
    g_string_append(markers, "gemleak:exit\n");
    const char *tests[] = { "test_count", "test_frequencies", "test_symbols" };
    ck_assert_msg(g_str_has_prefix(markers->str, "gemleak:growth\n"), "%s", markers->str);
    gboolean counted = strstr(markers->str, "gemleak:growth\t0\t") != NULL;
    for (guint i = 0; i < G_N_ELEMENTS(tests); i++) {
        g_autofree char *line = g_strdup_printf("WordsTest#%s\ttest/words_test.rb:", tests[i]);
        g_autofree char *pattern = counted
            ? g_strdup_printf("^gemleak:growth\t0\t%s[0-9]+\n"
                              "gemleak:growth\t1\t%s[0-9]+\n"
                              "gemleak:growth\t2\t%s[0-9]+$", line, line, line)
            : g_strdup_printf("^gemleak:growth\tunmeasured\t%s[0-9]+\tno allocation hooks$",
                              line);
        ck_assert_msg(g_regex_match_simple(pattern, markers->str, G_REGEX_MULTILINE, 0),
                      "%s:\n%s", tests[i], markers->str);
    }
    ck_assert_msg(g_str_has_suffix(markers->str, counted
                                       ? "gemleak:growth\tmeasured\t3\ngemleak:exit\n"
                                       : "gemleak:growth\tmeasured\t0\ngemleak:exit\n"),
                  "%s", markers->str);
    guint lines = 0;
    for (const char *c = markers->str; *c != '\0'; c++)
        lines += *c == '\n';
    ck_assert_uint_eq(lines, counted ? 1 + 3 * 3 + 2 : 1 + 3 + 2);
    result_clear(&report);
    result_discard(&r);
}
END_TEST

/* Issue 37, item 5: under LeakSanitizer too, the first test that
 * allocated a lost block is named first, though it turned GC.stress on,
 * whichever place the runtime's report gives its loss record (largest
 * first: FIRST_BLOCK=small puts it last), with the first five of the
 * seven that allocated one. */
START_TEST(test_lsan_per_test_names_the_first_test_first)
{
    if (!have_ruby34("--per-test under the LeakSanitizer engine: the first test first"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *blocks[] = { "FIRST_BLOCK=small", "FIRST_BLOCK=big" };
    for (guint i = 0; i < G_N_ELEMENTS(blocks); i++) {
        const char *command[] = { "env", blocks[i], ruby34, "-Ilib", "-Itest",
                                  "per_test/first_leak_test.rb", NULL };
        g_autofree char *json = g_strdup_printf("%s/first-%u.json", work, i);
        Result r = { 0 };
        run_per_test(&r, gem, "lsan", json, command);
        ck_assert_msg(r.status == 1, "%s: status %d:\n%s", blocks[i], r.status, r.err);
        gl_assert_line(r.out, "^8 runs, 8 assertions, 0 failures, 0 errors");
        g_autofree char *named = named_tests(json, r.err);
        g_autoptr(GRegex) regex = g_regex_new(
            "^[0-9]+ bytes in 7: FirstLeakTest#test_b_leaks_under_gc_stress @ [^;]*; "
            "FirstLeakTest#test_c_leaks @ [^;]*; FirstLeakTest#test_d_leaks @ [^;]*; "
            "FirstLeakTest#test_e_leaks @ [^;]*; FirstLeakTest#test_f_leaks @ [^;]*$", 0, 0, NULL);
        ck_assert_msg(g_regex_match(regex, named, 0, NULL), "%s: %s\n%s", blocks[i], named, r.err);
        gl_assert_line(r.err, "^allocated in FirstLeakTest#test_b_leaks_under_gc_stress "
                              "\\(per_test/first_leak_test\\.rb:[0-9]+\\); also in "
                              "FirstLeakTest#test_c_leaks ");
        result_discard(&r);
    }
}
END_TEST

/* Issue 26, item 14: --per-test=file under LeakSanitizer names the file
 * whose tests allocated each lost block, as the Valgrind engine names the
 * file after whose check it was lost: every leak was "before the first
 * test (while the suite loaded)". */
START_TEST(test_lsan_per_test_file_names_the_file)
{
    if (!have_ruby34("--per-test=file under the LeakSanitizer engine"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "-e",
                              "ARGV.each { |file| require_relative file }",
                              "test/count_test.rb", "test/words_test.rb", NULL };
    g_autofree char *json = g_build_filename(work, "per-file.json", NULL);
    Result r = { 0 };
    run_engine_with(&r, gem, "lsan", "--per-test=file", json, command);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    /* tally_count's leak, in a test of each file: the file whose test
     * minitest ran first (its order is random) named first */
    gl_assert_line(r.err, "^allocated in test/(count_test\\.rb; also in test/words|words_test\\.rb; "
                          "also in test/count)_test\\.rb$");
    gl_assert_no_line(r.err, "before the first test");
    g_autofree char *named = named_tests(json, r.err);
    ck_assert_msg(strcmp(named, "23 bytes in 2: test/count_test.rb @ test/count_test.rb; "
                                "test/words_test.rb @ test/words_test.rb") == 0 ||
                      strcmp(named, "23 bytes in 2: test/words_test.rb @ test/words_test.rb; "
                                    "test/count_test.rb @ test/count_test.rb") == 0,
                  "%s", named);
    result_discard(&r);
}
END_TEST

/* Six files of ten tests (the 60-test suite of per_test.c and the
 * benchmark), Short4Test#test_7 leaking: the test that allocated the block
 * is named, with no check while the tests run and nothing run again. */
START_TEST(test_lsan_per_test_sixty_tests)
{
    if (!have_ruby34("--per-test under the LeakSanitizer engine, 60 tests"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    g_autoptr(GPtrArray) files = NULL;
    g_autoptr(GPtrArray) command = NULL;
    sixty_tests(ruby34, FALSE, &files, &command);
    for (guint i = 0; g_ptr_array_index(files, i) != NULL; i += 2) {
        g_autofree char *path = g_build_filename(gem, g_ptr_array_index(files, i), NULL);
        gl_test_write(path, g_ptr_array_index(files, i + 1), -1);
    }
    g_autofree char *json = g_build_filename(work, "lsan-sixty.json", NULL);
    Result r = { 0 };
    run_per_test(&r, gem, "lsan", json, (const char *const *) command->pdata);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.out, "^60 runs, 60 assertions, 0 failures, 0 errors");
    g_autofree char *named = named_tests(json, r.err);
    ck_assert_str_eq(named, "6 bytes in 1: Short4Test#test_7 @ test/short_4_test.rb:21");
    gl_assert_line(r.err, "^allocated in Short4Test#test_7 \\(test/short_4_test\\.rb:21\\)$");
    g_autofree char *report = NULL;
    ck_assert(g_file_get_contents(json, &report, NULL, NULL));
    ck_assert_msg(strstr(report, "\"allocated_in_tests\" : true") != NULL, "%s", report);
    result_discard(&r);
}
END_TEST

/* A clean suite runs once under --per-test (issue 36, 1): the owners the
 * helper keeps give the exact pass nothing to do, and nothing of Ruby's
 * own makes the command run again. */
START_TEST(test_lsan_per_test_clean_suite_runs_once)
{
    if (!have_ruby34("a clean suite under --per-test, judged once"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "-e",
                              "ARGV.each { |f| require File.expand_path(f) }",
                              "test/frequencies_test.rb", NULL };
    g_autofree char *json = g_build_filename(work, "lsan-per-test-clean.json", NULL);
    Result r = { 0 };
    run_per_test(&r, gem, "lsan", json, command);
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    gl_assert_no_line(r.err, "^gemleak: exact stacks:");
    result_discard(&r);
}
END_TEST

/* A test that leaks, then forks a child that ends as Ruby does (its exit
 * check reports what it inherited): the block is the parent's, counted
 * once under both engines (issue 21). */
START_TEST(test_lsan_fork_counts_inherited_once)
{
    if (!have_ruby34("a forked child's inherited leaks under the LeakSanitizer engine"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    g_autofree char *test = g_build_filename(gem, "test", "inherit_test.rb", NULL);
    gl_test_write(test,
                  "require_relative \"test_helper\"\n"
                  "class InheritTest < Minitest::Test\n"
                  "  def test_leak_then_fork\n"
                  "    assert_equal 2, Tally.count(\"a b\")\n"
                  "    pid = fork { Tally.frequencies(\"a\") }\n"
                  "    Process.wait(pid)\n"
                  "    assert_predicate $?, :success?\n"
                  "  end\n"
                  "end\n", -1);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "test/inherit_test.rb", NULL };
    Result lsan = { 0 };
    g_autofree char *agreed = agreed_finding(&lsan, gem, "inherit", NULL, command);
    ck_assert_str_eq(agreed, "4 bytes in 1:");
    gl_assert_line(lsan.out, "^1 runs, 2 assertions, 0 failures, 0 errors");
    gl_assert_line(lsan.err, "^gemleak: 2 processes checked( \\([^)]*\\))?, .* inherited from the parent process\\)$");
    gl_assert_line(lsan.err, "^gemleak: FAIL: 1 leak losing 4 bytes$");
    result_discard(&lsan);
}
END_TEST

/* --per-test under LeakSanitizer, whose realloc calls no allocation hook:
 * blocks reallocated in a test (by realloc, and by Ruby's REALLOC_N) are
 * that test's, through the client library preloaded before the runtime,
 * which a program the test starts does not get (it gets only the library
 * every process of the run gets); and the Valgrind engine
 * names the same test. */
START_TEST(test_lsan_per_test_reallocated_block)
{
    if (!have_ruby34("--per-test under the LeakSanitizer engine, reallocated blocks"))
        return;
    g_autofree char *suite = g_build_filename(work, "realloc_test.rb", NULL);
    gl_test_write(suite,
                  "require 'probe'\n"
                  "require 'minitest/autorun'\n"
                  "class ReallocTest < Minitest::Test\n"
                  "  def test_a_clean; puts \"preload: [#{`printenv LD_PRELOAD`.strip}]\"; "
                  "assert true; end\n"
                  "  def test_b_realloc; Probe.r_realloc; Probe.r_xrealloc; assert true; end\n"
                  "  def test_c_clean; assert true; end\n"
                  "end\n", -1);
    g_autofree char *probe = g_strdup_printf("-I%s/probe", work);
    const char *command[] = { ruby34, probe, suite, "--seed", "1", NULL };
    g_autofree char *lsan_json = g_build_filename(work, "lsan-realloc.json", NULL);
    g_autofree char *valgrind_json = g_build_filename(work, "valgrind-realloc.json", NULL);
    Result lsan = { 0 }, valgrind = { 0 };
    run_per_test(&lsan, NULL, "lsan", lsan_json, command);
    ck_assert_msg(lsan.status == 1, "lsan: status %d:\n%s", lsan.status, lsan.err);
    gl_assert_line(lsan.out, "^3 runs, 3 assertions, 0 failures, 0 errors");
    /* what Ruby starts gets neither the runtime nor the client library:
     * only what every process of the run gets */
    gl_assert_line(lsan.out, "^preload: \\[/[^]:]*/gemleak_preload\\.so\\]$");
    gl_assert_line(lsan.err, "^allocated in ReallocTest#test_b_realloc \\(.*realloc_test\\.rb:5\\)$");
    gl_assert_no_line(lsan.err, "test_a_clean|test_c_clean|lost at exit");
    gl_assert_line(lsan.err, "^gemleak: FAIL: 2 leaks losing 211 bytes$");
    run_per_test(&valgrind, NULL, "valgrind", valgrind_json, command);
    ck_assert_msg(valgrind.status == 1, "valgrind: status %d:\n%s", valgrind.status, valgrind.err);
    gl_assert_line(valgrind.err, "^gemleak: FAIL: 2 leaks losing 211 bytes$");
    gl_assert_line(valgrind.err, "^first lost in ReallocTest#test_b_realloc ");
    result_discard(&lsan);
    result_discard(&valgrind);
}
END_TEST

/* A child that ends with exit!: the runtime's own check at exit does not
 * run there, and its leak was passed as "no report, no leaks"; the helper
 * checks before exit!, and the leak is found, under both engines, and put
 * at the test that forked the child (--per-test). */
START_TEST(test_lsan_exit_bang_child_is_checked)
{
    if (!have_ruby34("a child that ends with exit! under the LeakSanitizer engine"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    g_autofree char *test = g_build_filename(gem, "test", "exit_bang_test.rb", NULL);
    gl_test_write(test,
                  "require_relative \"test_helper\"\n"
                  "class ExitBangTest < Minitest::Test\n"
                  "  def test_child_leaks_and_exits_bang\n"
                  "    pid = fork { Tally.count(\"x y\"); exit!(0) }\n"
                  "    Process.wait(pid)\n"
                  "    assert_predicate $?, :success?\n"
                  "  end\n"
                  "end\n", -1);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "test/exit_bang_test.rb", NULL };
    Result lsan = { 0 };
    g_autofree char *agreed = agreed_finding(&lsan, gem, "exit-bang", NULL, command);
    ck_assert_str_eq(agreed, "4 bytes in 1:");
    gl_assert_line(lsan.out, "^1 runs, 1 assertions, 0 failures, 0 errors");
    gl_assert_line(lsan.err, "^gemleak: FAIL: 1 leak losing 4 bytes$");
    result_discard(&lsan);

    Result per_test = { 0 };
    g_autofree char *named = agreed_finding(&per_test, gem, "exit-bang-per-test", "--per-test",
                                            command);
    ck_assert_str_eq(named, "4 bytes in 1: ExitBangTest#test_child_leaks_and_exits_bang @ "
                            "test/exit_bang_test.rb:3");
    result_discard(&per_test);
}
END_TEST

/* Builds @work/@name, a dynamic program, from the C @source. */
static void build_program(const char *name, const char *source)
{
    g_autofree char *source_name = g_strconcat(name, ".c", NULL);
    g_autofree char *path = g_build_filename(work, source_name, NULL);
    gl_test_write(path, source, -1);
    const char *compile[] = { "cc", "-o", name, source_name, NULL };
    Result built = { 0 };
    run_command(&built, work, NULL, compile);
    ck_assert_msg(built.status == 0, "%s does not build: %s", name, built.err);
    result_clear(&built);
}

/* Builds @work/@name, a program that runs its arguments as a command
 * where ptrace is refused, as a container's seccomp profile may refuse it
 * (gemleak's guard cannot follow a static program there). */
static void build_no_ptrace(const char *name)
{
    static const char source[] =
        "#define _GNU_SOURCE\n"
        "#include <errno.h>\n"
        "#include <linux/filter.h>\n"
        "#include <linux/seccomp.h>\n"
        "#include <stddef.h>\n"
        "#include <sys/prctl.h>\n"
        "#include <sys/syscall.h>\n"
        "#include <unistd.h>\n"
        "int main(int argc, char **argv) {\n"
        "    (void) argc;\n"
        "    struct sock_filter filter[] = {\n"
        "        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),\n"
        "        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),\n"
        "        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),\n"
        "        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),\n"
        "    };\n"
        "    struct sock_fprog program = { sizeof filter / sizeof filter[0], filter };\n"
        "    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||\n"
        "        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)\n"
        "        return 126;\n"
        "    execvp(argv[1], argv + 1);\n"
        "    return 127;\n"
        "}\n";
    build_program(name, source);
}

/* Builds @work/@name, a dynamic program that runs its arguments as a
 * command with posix_spawnp() and returns its status: the library gemleak
 * preloads finds a static program on PATH there too. */
static void build_spawner(const char *name)
{
    static const char source[] =
        "#include <spawn.h>\n"
        "#include <sys/wait.h>\n"
        "extern char **environ;\n"
        "int main(int argc, char **argv) {\n"
        "    (void) argc;\n"
        "    pid_t pid;\n"
        "    int status = 0;\n"
        "    if (posix_spawnp(&pid, argv[1], NULL, NULL, argv + 1, environ) != 0 ||\n"
        "        waitpid(pid, &status, 0) != pid)\n"
        "        return 127;\n"
        "    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;\n"
        "}\n";
    build_program(name, source);
}

/* Returns: (transfer full): the directory of ext/leaky built for
 * @engine's run: AddressSanitizer's build for asan (else the run is
 * INCOMPLETE for that alone), the plain one else. */
static char *leaky_for(const char *engine)
{
    if (strcmp(engine, "asan") != 0)
        return g_build_filename(work, "leaky", NULL);
    char *dir = g_build_filename(work, "leaky-asan", NULL);
    g_autofree char *so = g_build_filename(dir, "leaky.so", NULL);
    if (g_file_test(so, G_FILE_TEST_EXISTS))
        return dir;
    g_autofree char *ext = gl_test_fixture("ext");
    g_autofree char *script = g_strdup_printf(
        "cp -r '%s/leaky' '%s' && cd '%s' && ruby extconf.rb --with-cflags=\"$(ruby -rrbconfig "
        "-e 'print RbConfig::CONFIG[%%q(CFLAGS)]') " GL_PROTO_ASAN_CFLAGS "\" "
        "--with-ldflags=\"$(ruby -rrbconfig -e 'print RbConfig::CONFIG[%%q(LDFLAGS)]') "
        GL_PROTO_ASAN_LDFLAGS "\" >/dev/null && make >/dev/null", ext, dir, dir);
    ck_assert_msg(setup_script(script), "%s", why_skipped);
    return dir;
}

/* Returns: (transfer full): Ruby code that loads ext/leaky from @leaky,
 * calls Leaky.clean, and runs @launcher... (each word of it an argument)
 * with a child Ruby that loads it too, calls Leaky.@call and says so. */
static char *parent_code(const char *leaky, const char *launcher, const char *call)
{
    return g_strdup_printf(
        "require 'rbconfig'; require 'leaky'; Leaky.clean; "
        "system(*%%w(%s), RbConfig.ruby, '--disable-gems', '-I%s', '-e', "
        "'require %%q(leaky); Leaky.%s; puts %%q(child ran)') or abort('the launcher failed')",
        launcher, leaky, call);
}

/* Issue 35, item 6: a static launcher that clears the environment
 * (busybox's env -i; Go's and Rust's launchers are static) starts a Ruby
 * that loads the extension and leaks. LD_PRELOAD never reaches a static
 * program, so under the sanitizers' engines the Ruby ran with nothing of
 * gemleak's, and the run passed (Valgrind, which follows every exec,
 * found the leak). Now gemleak's guard runs the launcher and gives the
 * Ruby it starts the run's variables back: the leak is found, under both
 * engines, whether the launcher is exec'd by Ruby (system), found on PATH
 * by posix_spawnp, or is the command itself; a clean one passes. */
START_TEST(test_static_launcher_is_followed)
{
    if (!have_ruby34("a static launcher under the sanitizers' engines"))
        return;
    build_static_unsetenv(work, "envi", NULL);
    build_spawner("spawner");
    g_autofree char *envi = g_build_filename(work, "envi", NULL);
    g_autofree char *through_path = g_strdup_printf("env PATH=%s:/usr/bin:/bin %s/spawner envi",
                                                    work, work);
    g_autofree char *json = g_build_filename(work, "static.json", NULL);
    const char *engines[] = { "lsan", "asan" };
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++) {
        g_autofree char *leaky = leaky_for(engines[i]);
        g_autofree char *include = g_strconcat("-I", leaky, NULL);
        const char *launchers[] = { envi, through_path };
        for (guint j = 0; j < G_N_ELEMENTS(launchers); j++) {
            g_autofree char *code = parent_code(leaky, launchers[j], "leak");
            const char *command[] = { ruby34, "--disable-gems", include, "-e", code, NULL };
            Result r = { 0 };
            run_engine(&r, NULL, engines[i], json, command);
            ck_assert_msg(r.status == 1, "%s, %s: status %d:\n%s", engines[i], launchers[j],
                          r.status, r.err);
            gl_assert_line(r.out, "^child ran$");
            gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
            gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
            gl_assert_no_line(r.err, "static program|not checked|INCOMPLETE");
            result_discard(&r);
        }
        g_autofree char *clean = parent_code(leaky, envi, "clean");
        const char *command[] = { ruby34, "--disable-gems", include, "-e", clean, NULL };
        Result r = { 0 };
        run_engine(&r, NULL, engines[i], json, command);
        ck_assert_msg(r.status == 0, "%s: status %d:\n%s", engines[i], r.status, r.err);
        gl_assert_line(r.out, "^child ran$");
        gl_assert_line(r.err, "^gemleak: pass: no findings$");
        result_clear(&r);
        /* the command itself: gemleak starts it under the guard */
        const char *alone[] = { envi, ruby34, "--disable-gems", include, "-e",
                                "require 'leaky'; Leaky.leak", NULL };
        run_engine(&r, NULL, engines[i], json, alone);
        ck_assert_msg(r.status == 1, "%s: status %d:\n%s", engines[i], r.status, r.err);
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
        result_discard(&r);
    }
}
END_TEST

/* A launcher under the sanitizers' engines (rake, which runs natively)
 * that runs a build step through the shell: only a Ruby gets the runtime.
 * make and the compiler ran under LeakSanitizer (its LD_PRELOAD passed
 * down from the shell gemleak wrapped), and their own leaks made a clean
 * gem INCOMPLETE, or ran the command again (json_scanner's rake-compiler
 * build, issue 37's trial). The Ruby the launcher starts is checked. */
START_TEST(test_lsan_launcher_build_step_stays_native)
{
    if (!have_ruby34("a launcher's build step under the LeakSanitizer engine"))
        return;
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *leaky = leaky_for("lsan");
    const char *what[] = { "leak", "clean" };
    g_autofree char *bin = g_path_get_dirname(ruby34);
    g_autofree char *path = g_strdup_printf("%s:%s", bin, g_getenv("PATH"));
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    for (guint i = 0; i < G_N_ELEMENTS(what); i++) {
        g_autofree char *code = g_strdup_printf(
            "system('sh', '-c', 'cc --version >/dev/null && make --version >/dev/null') or abort\n"
            "system(RbConfig.ruby, '-I%s', '-e', %%q(require 'leaky'; Leaky.%s)) or abort\n"
            "puts 'the launcher ran'\n", leaky, what[i]);
        g_autofree char *rake = write_launcher(dir, "rake", code);
        /* the launcher is the command: gemleak runs it natively */
        const char *argv[] = { gemleak_binary, "run", "--engine", "lsan", "--", rake, NULL };
        Result r = { 0 };
        run_command(&r, dir, env, argv);
        gl_assert_line(r.out, "^the launcher ran$");
        gl_assert_line(r.err, "rake ran natively, as a launcher");
        gl_assert_no_line(r.err, "uncertain|INCOMPLETE|not in a target|cc1|collect2|libbfd");
        if (i == 0) {
            ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
            gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
        } else {
            ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
            gl_assert_line(r.err, "^gemleak: 1 process checked \\(clean\\)");
        }
        result_discard(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

/* A Ruby that a process of the run execs (a test's assert_separately, a
 * system of a script) starts once, with the engine's runtime from its
 * first instruction, under both sanitizers' engines: what its command
 * line requires (-r, which Ruby loads before RUBYOPT's helper) runs once,
 * with the runtime mapped, and its leak is found. It started without the
 * runtime and ran again under it (issue 36: 30 ms a Ruby; what -r loaded
 * ran twice, once outside the engine). A build step (extconf.rb) still
 * runs outside it, as a launcher's does. And the suite's environment is
 * its own, but for what it is told of: the helper takes the run's other
 * variables out of the ENV Ruby shows it (a dozen, GEMLEAK_RESTORE's 2 kB
 * among them: Ruby's own test library converts the whole of ENV after
 * each test), and the child gets them back, as with an environment of
 * its own: it runs under the engine, and its leak is found. (The
 * variables named are gemleak's: the suite's own GEMLEAK_ ones, the
 * tests' among them, stay.) */
START_TEST(test_sanitizers_start_a_childs_ruby_once)
{
    if (!have_ruby34("a Ruby a process of the run starts"))
        return;
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *starts = g_build_filename(dir, "starts.txt", NULL);
    g_autofree char *counter = g_build_filename(dir, "counter.rb", NULL);
    g_autofree char *counter_code = g_strdup_printf(
        "File.open(%%q(%s), 'a') { |f| f.puts(%%q(start) + (File.read(%%q(/proc/self/maps))"
        "[/lib[al]san/] ? %%q( under the runtime) : %%q( without it)) + %%q( ) + "
        "File.basename($0)) }\n", starts);
    gl_test_write(counter, counter_code, -1);
    g_autofree char *extconf = g_build_filename(dir, "extconf.rb", NULL);
    gl_test_write(extconf, "puts 'extconf ran'\n", -1);
    const char *engines[] = { "lsan", "asan" };
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++) {
        g_autofree char *leaky = leaky_for(engines[i]);
        g_autofree char *json = g_build_filename(dir, "once.json", NULL);
        g_autofree char *code = g_strdup_printf(
            "require 'rbconfig'; require 'leaky'; Leaky.clean; "
            "run = %%w[GEMLEAK_RUNNING GEMLEAK_RUN_DIR GEMLEAK_PID GEMLEAK_CLIENT GEMLEAK_RESTORE "
            "GEMLEAK_ALLOC_LIBRARY GEMLEAK_ENGINE_RUNTIME GEMLEAK_GUARD]; "
            "puts 'suite sees: ' + (ENV.keys & run).sort.join(' '); "
            "system(RbConfig.ruby, '--disable-gems', '-r%s', '-I%s', '-e', "
            "'require %%q(leaky); Leaky.leak; puts %%q(child ran, sees: ) + "
            "(ENV.keys & ARGV).sort.join(%%q( ))', *run) or abort('the child failed'); "
            "system(RbConfig.ruby, '--disable-gems', '-r%s', '%s') or abort('extconf failed')",
            counter, leaky, counter, extconf);
        g_autofree char *include = g_strconcat("-I", leaky, NULL);
        const char *command[] = { ruby34, "--disable-gems", include, "-e", code, NULL };
        g_unlink(starts);
        Result r = { 0 };
        run_engine(&r, dir, engines[i], json, command);
        ck_assert_msg(r.status == 1, "%s: status %d:\n%s", engines[i], r.status, r.err);
        gl_assert_line(r.out, "^suite sees: GEMLEAK_RUNNING GEMLEAK_RUN_DIR$");
        gl_assert_line(r.out, "^child ran, sees: GEMLEAK_RUNNING GEMLEAK_RUN_DIR$");
        gl_assert_line(r.out, "^extconf ran$");
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
        g_autofree char *said = NULL;
        ck_assert(g_file_get_contents(starts, &said, NULL, NULL));
        /* the exact pass runs the command again: each run one of each */
        gsize length = strlen(said);
        guint under = gl_test_count(said, length, "start under the runtime -e\n");
        ck_assert_msg(under >= 1 && gl_test_count(said, length, "start") == 2 * under &&
                          gl_test_count(said, length, "start without it extconf.rb\n") == under,
                      "%s: the child Rubies started:\n%s", engines[i], said);
        result_discard(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

/* Where ptrace is refused (here a seccomp filter, as a container's
 * profile may set; Yama, or strace already tracing, alike), the guard
 * cannot follow the static launcher: the Ruby it starts runs outside the
 * engine, as the suite runs it natively (the plain build of the
 * extension: AddressSanitizer's would not load without its runtime), and
 * the run says which program and why: INCOMPLETE, never a pass. */
START_TEST(test_static_launcher_unfollowed_is_incomplete)
{
    if (!have_ruby34("a static launcher the guard cannot follow"))
        return;
    build_static_unsetenv(work, "envi", NULL);
    build_no_ptrace("noptrace");
    g_autofree char *launcher = g_strdup_printf("%s/noptrace %s/envi", work, work);
    g_autofree char *json = g_build_filename(work, "unfollowed.json", NULL);
    const char *engines[] = { "lsan", "asan" };
    g_autofree char *leaky = g_build_filename(work, "leaky", NULL);
    g_autofree char *include = g_strconcat("-I", leaky, NULL);
    g_autofree char *code = parent_code(leaky, launcher, "leak");
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++) {
        const char *command[] = { ruby34, "--disable-gems", include, "-e", code, NULL };
        Result r = { 0 };
        run_engine(&r, NULL, engines[i], json, command);
        ck_assert_msg(r.status == 3, "%s: status %d:\n%s", engines[i], r.status, r.err);
        gl_assert_line(r.out, "^child ran$");
        gl_assert_line(r.err, "^gemleak: process \\d+: it ran the static program \\S+/envi, "
                              "which LD_PRELOAD does not reach, and gemleak could not follow what "
                              "it started \\(ptrace: Operation not permitted\\): what it ran was "
                              "not checked$");
        gl_assert_line(r.err, "^gemleak: INCOMPLETE: no findings in what was checked; ");
        result_discard(&r);
    }
}
END_TEST

/* A Ruby below a static program that dropped the runtime and gemleak's
 * variables (which the preloaded library, that a static program never
 * loads, cannot give back): gemleak's guard follows the program and gives
 * them back, and the Ruby is checked (issue 35, item 6; it ran outside
 * the engine). Where the guard cannot follow it (ptrace refused), the
 * Ruby loads the extension without the runtime and writes no report: not
 * "no leaks", INCOMPLETE, the program named. (A parent that only drops
 * the handover, `env -u`, gets it back from the preloaded library: issue
 * 26, item 4.) */
START_TEST(test_lsan_process_outside_the_engine_is_incomplete)
{
    if (!have_ruby34("a process outside the LeakSanitizer engine"))
        return;
    g_autofree char *json = g_build_filename(work, "outside.json", NULL);
    const char *runtime_and_gemleaks[] = { "LD_PRELOAD", "GEMLEAK_ENGINE_COMMAND",
                                           "GEMLEAK_RESTORE", NULL };
    build_static_unsetenv(work, "strip", runtime_and_gemleaks);
    build_no_ptrace("noptrace");
    g_autofree char *code = g_strdup_printf(
        "'%s/strip' '%s' --disable-gems -I'%s/leaky' -e 'require %%q(leaky); Leaky.clean'", work,
        ruby34, work);
    const char *command[] = { "sh", "-c", code, NULL };
    Result followed = { 0 };
    run_engine(&followed, NULL, "lsan", json, command);
    ck_assert_msg(followed.status == 0, "status %d:\n%s", followed.status, followed.err);
    gl_assert_line(followed.err, "^gemleak: pass: no findings$");
    gl_assert_no_line(followed.err, "outside LeakSanitizer|static program");
    result_clear(&followed);

    g_autofree char *refused = g_strdup_printf("'%s/noptrace' %s", work, code);
    const char *unfollowed[] = { "sh", "-c", refused, NULL };
    Result r = { 0 };
    run_engine(&r, NULL, "lsan", json, unfollowed);
    ck_assert_msg(r.status == 3, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "it loaded .*/leaky/leaky\\.so outside LeakSanitizer \\(its runtime "
                          "was not in the process, and it wrote no report\\)");
    gl_assert_line(r.err, "it ran the static program \\S+/strip, which LD_PRELOAD does not "
                          "reach, and gemleak could not follow what it started \\(ptrace: ");
    gl_assert_no_line(r.err, "^gemleak: pass");
    result_discard(&r);

    /* the same Ruby under the engine, clean: no report, and a pass */
    g_autofree char *inside = g_strdup_printf("'%s' --disable-gems -I'%s/leaky' -e 'require "
                                              "%%q(leaky); Leaky.clean'", ruby34, work);
    const char *under[] = { "sh", "-c", inside, NULL };
    Result clean = { 0 };
    run_engine(&clean, NULL, "lsan", json, under);
    ck_assert_msg(clean.status == 0, "status %d:\n%s", clean.status, clean.err);
    gl_assert_line(clean.err, "^gemleak: pass: no findings$");
    result_clear(&clean);
}
END_TEST

/* Rake's engine setting @engine reaches gemleak as --engine; on Ruby 3.4,
 * the example gem's test task (count_test.rb) runs under it with the
 * native build of its extension removed, into @result.
 * Returns: FALSE when there is no such Ruby (said). */
static gboolean rake_task_with_engine(const char *engine, Result *result)
{
    Result args = { 0 };
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *code = g_strdup_printf("puts GemLeak::Configuration.new(engine: :%s)"
                                            ".arguments", engine);
    const char *argv[] = { "ruby", "-I", lib, "-rgemleak", "-e", code, NULL };
    run_command(&args, NULL, NULL, argv);
    g_autofree char *expected = g_strdup_printf("--engine\n%s\n", engine);
    ck_assert_str_eq(args.out, expected);
    result_clear(&args);
    g_autofree char *what = g_strdup_printf("Rake's engine: :%s on the example gem", engine);
    if (!have_ruby34(what))
        return FALSE;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    g_autofree char *name = g_strdup_printf("Rakefile.%s", engine);
    g_autofree char *rakefile = g_build_filename(gem, name, NULL);
    g_autofree char *text = g_strdup_printf(
        "require 'rake/testtask'\n"
        "require 'gemleak/rake'\n"
        "GemLeak::TestTask.new { |t| t.libs << 'test'; "
        "t.test_files = FileList['test/count_test.rb'] }\n"
        "GemLeak.configure { |c| c.engine = :%s }\n", engine);
    gl_test_write(rakefile, text, -1);
    g_autofree char *so = g_build_filename(gem, "lib", "tally", "tally.so", NULL);
    g_unlink(so);
    g_autofree char *path = g_strconcat(ruby34_bin, ":", g_getenv("PATH"), NULL);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    env = g_environ_setenv(env, "GEMLEAK", gemleak_binary, TRUE);
    env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    /* by its path: the command is looked for on this process's PATH */
    g_autofree char *rake_path = g_build_filename(ruby34_bin, "rake", NULL);
    const char *rake[] = { rake_path, "-I", lib, "-f", name, "test:valgrind", NULL };
    run_command(result, gem, env, rake);
    ck_assert_msg(result->status != 0, "rake passed:\n%s", result->err);
    gl_assert_line(result->err, "^GemLeak::Error: gemleak: 1 finding ");
    return TRUE;
}

/* Rake's engine setting reaches gemleak: the example gem's test task
 * under LeakSanitizer, the extension compiled first (a compiler under the
 * runtime would crash: only Ruby gets it). Its frame is at the project's
 * ext/tally/tally.c, as under the other engines (issue 27: the runtime's
 * path, relative to the build directory, was shown as tally.c). */
START_TEST(test_lsan_rake_task)
{
    Result r = { 0 };
    if (!rake_task_with_engine("lsan", &r))
        return;
    gl_assert_line(r.err, "^gemleak: ran under LeakSanitizer ");
    gl_assert_line(r.err, "^ \\*tally_count \\(ext/tally/tally\\.c:\\d+\\)$");
    result_clear(&r);
}
END_TEST

/* engine: :asan builds the example gem's extensions with AddressSanitizer
 * into tmp/gemleak-asan/, the native build left alone (removed: the suite
 * must not need it), and runs the test task with that build first on the
 * load path, under the runtime: AddressSanitizer's leak check on Ruby 3.4
 * finds tally_count's leak, named at its source, and nothing says the
 * build lacks AddressSanitizer. */
START_TEST(test_asan_rake_task)
{
    Result r = { 0 };
    if (!rake_task_with_engine("asan", &r))
        return;
    gl_assert_line(r.err, "^gemleak: ran under AddressSanitizer ");
    gl_assert_line(r.err, "^gemleak: target: .*/tmp/gemleak-asan/3\\.[0-9.]+/lib/tally/tally\\.so$");
    gl_assert_no_line(r.err, "not built with AddressSanitizer");
    gl_assert_line(r.err, "^ \\*tally_count \\(ext/tally/tally\\.c:\\d+\\)$");
    result_clear(&r);
}
END_TEST

/* Issue 26, item 10: SIGTERM to a run under LeakSanitizer, whose Ruby then
 * ends by the signal before the runtime's leak check: the JSON report said
 * "complete" and "pass: no findings", and gemleak filter of it exited 0. */
START_TEST(test_lsan_interrupted_run_never_passes)
{
    if (!have_ruby34("an interrupted run under the LeakSanitizer engine"))
        return;
    g_autofree char *json = g_build_filename(work, "interrupted.json", NULL);
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", work);
    g_autofree char *ruby = g_build_filename(ruby34_bin, "ruby", NULL);
    const char *argv[] = { gemleak_binary, "run", "--engine", "lsan", "--format", "json", "-o",
                           json, "--format", "text", "--", ruby, "--disable-gems", leaky, "-e",
                           "require 'leaky'; Leaky.leak; $stdout.puts 'ready'; $stdout.flush; "
                           "sleep 60", NULL };
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    Result r = { 0 };
    run_interrupted(&r, argv, env);
    assert_interrupted_is_incomplete(&r, json);
    result_clear(&r);
}
END_TEST

/* Issue 26, item 11: a '|' in the directory the extension is built in
 * (the checkout's), which is in its module's path and its sources': the
 * frame format split on it, the extension's frames were in no target, and
 * its leaks passed. */
START_TEST(test_lsan_pipe_in_the_path)
{
    if (!have_ruby34("a '|' in the extension's path under the LeakSanitizer engine"))
        return;
    g_autofree char *dir = g_build_filename(work, "check|out", NULL);
    g_autofree char *ext = gl_test_fixture("ext");
    g_autofree char *script = g_strdup_printf("mkdir -p '%s' && cp -r '%s/leaky' '%s' && cd '%s/leaky' "
                                              "&& ruby extconf.rb >/dev/null && make >/dev/null",
                                              dir, ext, dir, dir);
    ck_assert_msg(setup_script(script), "%s", why_skipped);
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", dir);
    g_autofree char *json = g_build_filename(work, "pipe.json", NULL);
    const char *command[] = { ruby34, "--disable-gems", leaky, "-e",
                              "require 'leaky'; Leaky.leak", NULL };
    Result r = { 0 };
    run_engine(&r, NULL, "lsan", json, command);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: target: .*/check\\|out/leaky/leaky\\.so$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
    gl_assert_line(r.err, "^ \\*leaky_alloc \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    result_discard(&r);
}
END_TEST

/* A suite whose tests assert that what a child Ruby prints on standard
 * error is empty (Ruby's assert_separately and assert_in_out_err, with -w),
 * a child started directly and one through a shell; and a test that asks
 * for Ruby 3.4's warning about RUBY_FREE_AT_EXIT itself, which it must
 * still get. */
static const char child_output_test[] =
    "require_relative \"test_helper\"\n"
    "require \"open3\"\n"
    "require \"rbconfig\"\n"
    "class ChildOutputTest < Minitest::Test\n"
    "  def test_a_child_ruby_prints_nothing_on_stderr\n"
    "    out, err, status = Open3.capture3(RbConfig.ruby, \"-w\", \"--disable=gems\", \"-Ilib\",\n"
    "      \"-e\", \"require 'tally'; print Tally.frequencies('a b a')['a']\")\n"
    "    assert_equal [\"2\", \"\"], [out, err]\n"
    "    assert_predicate status, :success?\n"
    "  end\n"
    "  def test_a_ruby_a_shell_starts_prints_nothing_on_stderr\n"
    "    out, err, _ = Open3.capture3(\"sh\", \"-c\", \"#{RbConfig.ruby} -w -e 'print 1'\")\n"
    "    assert_equal [\"1\", \"\"], [out, err]\n"
    "  end\n"
    "  def test_the_warning_the_suite_asks_for_is_printed\n"
    "    _, err, _ = Open3.capture3({ \"RUBY_FREE_AT_EXIT\" => \"1\" }, RbConfig.ruby, \"-e\", \"1\")\n"
    "    assert_match(/: warning: Free at exit is experimental and may be unstable$/, err)\n"
    "  end\n"
    "end\n";

/* Builds the example gem in @gem for AddressSanitizer (else an asan run
 * is INCOMPLETE) into asan-build/; *to_asan gets the script that puts that
 * build in lib/ for a run, the children's too, *to_plain the one that gives
 * the native build back after it (both transfer full). */
static void instrument_gem(const char *gem, char **to_asan, char **to_plain)
{
    g_autofree char *instrument = g_strdup_printf(
        "cd '%s' && rm -rf asan-build && mkdir asan-build && cd asan-build && "
        "ruby ../ext/tally/extconf.rb --with-cflags=\"$(ruby -rrbconfig -e "
        "'print RbConfig::CONFIG[%%q(CFLAGS)]') " GL_PROTO_ASAN_CFLAGS "\" "
        "--with-ldflags=\"$(ruby -rrbconfig -e 'print RbConfig::CONFIG[%%q(LDFLAGS)]') "
        GL_PROTO_ASAN_LDFLAGS "\" >/dev/null && make >/dev/null", gem);
    ck_assert_msg(setup_script(instrument), "%s", why_skipped);
    *to_asan = g_strdup_printf("cd '%s/lib/tally' && mv tally.so tally.so.plain && "
                               "cp ../../asan-build/tally.so .", gem);
    *to_plain = g_strdup_printf("cd '%s/lib/tally' && mv tally.so.plain tally.so", gem);
}

/* Asserts that @r, gemleak running child_output_test, passed as the suite
 * did, and that nothing of Ruby's warning about the RUBY_FREE_AT_EXIT
 * gemleak sets reached the suite's output, the top process's included. */
static void assert_output_untouched(const char *engine, Result *r)
{
    ck_assert_msg(r->status == 0, "%s: status %d:\n%s\n%s", engine, r->status, r->out, r->err);
    gl_assert_line(r->out, "^3 runs, [0-9]+ assertions, 0 failures, 0 errors");
    gl_assert_no_line(r->out, "Free at exit");
    gl_assert_no_line(r->err, "Free at exit");
}

/* gemleak leaves what the suite's processes print as it was (issue 29):
 * on Ruby 3.4, under each engine and the Rake task, a clean suite that
 * asserts a child Ruby's standard error is empty passes, exit status 0. */
START_TEST(test_child_stderr_stays_the_suites_under_every_engine)
{
    if (!have_ruby34("what a child Ruby prints, under every engine"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    /* the Rake tasks' tests took the native build away */
    g_autofree char *compile = g_strdup_printf("cd '%s' && rake -R nowhere -f rakelib/compile.rake "
                                               "compile >/dev/null", gem);
    ck_assert_msg(setup_script(compile), "%s", why_skipped);
    g_autofree char *to_asan = NULL;
    g_autofree char *to_plain = NULL;
    instrument_gem(gem, &to_asan, &to_plain);
    g_autofree char *test = g_build_filename(gem, "test", "child_output_test.rb", NULL);
    gl_test_write(test, child_output_test, -1);
    const char *command[] = { ruby34, "-w", "-Ilib", "-Itest", "test/child_output_test.rb", NULL };
    const char *engines[] = { "valgrind", "lsan", "asan" };
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++) {
        g_autofree char *json = g_strdup_printf("%s/child-output-%s.json", work, engines[i]);
        Result r = { 0 };
        gboolean asan = strcmp(engines[i], "asan") == 0;
        ck_assert_msg(!asan || setup_script(to_asan), "%s", why_skipped);
        run_engine(&r, gem, engines[i], json, command);
        ck_assert_msg(!asan || setup_script(to_plain), "%s", why_skipped);
        assert_output_untouched(engines[i], &r);
        gl_assert_line(r.err, "^gemleak: pass: no findings$");
        result_discard(&r);
    }

    g_autofree char *rakefile = g_build_filename(gem, "Rakefile.child_output", NULL);
    gl_test_write(rakefile,
                  "require 'gemleak/rake'\n"
                  "GemLeak::TestTask.new { |t| t.libs << 'test'; "
                  "t.test_files = FileList['test/child_output_test.rb'] }\n", -1);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *path = g_strconcat(ruby34_bin, ":", g_getenv("PATH"), NULL);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    env = g_environ_setenv(env, "GEMLEAK", gemleak_binary, TRUE);
    env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    g_autofree char *rake_path = g_build_filename(ruby34_bin, "rake", NULL);
    const char *rake[] = { rake_path, "-I", lib, "-f", "Rakefile.child_output", "test:valgrind",
                           NULL };
    Result r = { 0 };
    run_command(&r, gem, env, rake);
    assert_output_untouched("rake test:valgrind", &r);
    result_clear(&r);
    g_unlink(test);
}
END_TEST

/* A suite run by Bundler, its standard error a file of its own. */
static const char bundled_test[] =
    "require \"minitest/autorun\"\n"
    "require \"tally\"\n"
    "class BundledTest < Minitest::Test\n"
    "  def test_one\n"
    "    $stderr.puts \"the suite's own line\"\n"
    "    warn \"the suite's own warning\"\n"
    "    assert_equal 2, Tally.frequencies(\"a b a\")[\"a\"]\n"
    "  end\n"
    "  def test_two\n"
    "    assert_equal 1, Tally.frequencies(\"b\")[\"b\"]\n"
    "  end\n"
    "end\n";

/* Nothing of gemleak's reaches a suite's streams, and its helper loads
 * nothing outside Ruby's default gems (issue 37, item 1: it required
 * fiddle, which Ruby 3.4 under Bundler warns about twice per process and
 * Ruby 3.5 cannot load there at all): under `bundle exec`, with a fiddle
 * that says when it is required and then fails to load, the suite's
 * standard error is byte for byte what it is natively, under every engine,
 * with and without --per-test, and --per-test stays on. */
START_TEST(test_bundled_suite_stderr_is_its_own_under_every_engine)
{
    if (!have_ruby34("a suite under bundle exec, under every engine"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    g_autofree char *compile = g_strdup_printf("cd '%s' && rake -R nowhere -f rakelib/compile.rake "
                                               "compile >/dev/null", gem);
    ck_assert_msg(setup_script(compile), "%s", why_skipped);
    g_autofree char *to_asan = NULL;
    g_autofree char *to_plain = NULL;
    instrument_gem(gem, &to_asan, &to_plain);
    g_autofree char *suite = g_build_filename(work, "bundled", NULL);
    g_autofree char *hide = g_build_filename(suite, "hide", NULL);
    g_mkdir_with_parents(hide, 0700);
    g_autofree char *gemfile = g_build_filename(suite, "Gemfile", NULL);
    gl_test_write(gemfile, "gem \"minitest\"\n", -1);
    g_autofree char *test = g_build_filename(suite, "bundled_test.rb", NULL);
    gl_test_write(test, bundled_test, -1);
    g_autofree char *fiddle = g_build_filename(hide, "fiddle.rb", NULL);
    gl_test_write(fiddle, "$stderr.puts \"fiddle was required\"\n"
                          "raise LoadError, \"fiddle is not in this Gemfile\"\n", -1);
    g_autofree char *install = g_strdup_printf("cd '%s' && bundle install --local >/dev/null", suite);
    ck_assert_msg(setup_script(install), "%s", why_skipped);

    g_autofree char *path = g_strconcat(ruby34_bin, ":", g_getenv("PATH"), NULL);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    env = g_environ_setenv(env, "RUBYLIB", hide, TRUE);
    g_autofree char *suite_command = g_strdup_printf(
        "bundle exec ruby -w -I'%s/lib' bundled_test.rb 2>suite.err", gem);
    const char *native[] = { "sh", "-c", suite_command, NULL };
    Result r = { 0 };
    run_command(&r, suite, env, native);
    ck_assert_msg(r.status == 0, "natively: status %d:\n%s\n%s", r.status, r.out, r.err);
    result_clear(&r);
    g_autofree char *err_file = g_build_filename(suite, "suite.err", NULL);
    g_autofree char *native_err = NULL;
    ck_assert(g_file_get_contents(err_file, &native_err, NULL, NULL));
    ck_assert_msg(strstr(native_err, "the suite's own warning") != NULL, "%s", native_err);

    const char *engines[] = { "valgrind", "lsan", "asan" };
    const char *per_test[] = { NULL, "--per-test" };
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++) {
        for (guint j = 0; j < G_N_ELEMENTS(per_test); j++) {
            gboolean asan = strcmp(engines[i], "asan") == 0;
            g_autoptr(GPtrArray) argv = g_ptr_array_new();
            const char *head[] = { gemleak_binary, "run", "--engine", engines[i], NULL };
            for (const char *const *arg = head; *arg != NULL; arg++)
                g_ptr_array_add(argv, (gpointer) *arg);
            if (per_test[j] != NULL)
                g_ptr_array_add(argv, (gpointer) per_test[j]);
            const char *tail[] = { "--", "sh", "-c", suite_command, NULL };
            for (const char *const *arg = tail; *arg != NULL; arg++)
                g_ptr_array_add(argv, (gpointer) *arg);
            g_ptr_array_add(argv, NULL);
            g_unlink(err_file);
            ck_assert_msg(!asan || setup_script(to_asan), "%s", why_skipped);
            run_command(&r, suite, env, (const char *const *) argv->pdata);
            ck_assert_msg(!asan || setup_script(to_plain), "%s", why_skipped);
            const char *how = per_test[j] != NULL ? per_test[j] : "whole";
            ck_assert_msg(r.status == 0, "%s %s: status %d:\n%s\n%s", engines[i], how, r.status,
                          r.out, r.err);
            gl_assert_line(r.err, "^gemleak: pass: no findings$");
            gl_assert_no_line(r.err, "per-test.* off");
            g_autofree char *err = NULL;
            ck_assert(g_file_get_contents(err_file, &err, NULL, NULL));
            ck_assert_msg(strcmp(err, native_err) == 0,
                          "%s %s: the suite's standard error:\n%s\nnatively:\n%s", engines[i],
                          how, err, native_err);
            result_discard(&r);
        }
    }
}
END_TEST

/* YJIT stays as the suite sets it (doc/guide.md): with RUBY_YJIT_ENABLE=1
 * on Ruby 3.4, the Valgrind engine finds the example gem's leak as
 * without it; LeakSanitizer's stacks stop in YJIT's code, which leaves the
 * leak uncertain: a stack cut short, the run is INCOMPLETE (issue 26, item
 * 2; it passed). */
START_TEST(test_yjit_stays_as_the_suite_sets_it)
{
    if (!have_ruby34("YJIT under the engines"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    g_autofree char *compile = g_strdup_printf("cd '%s' && rake -R nowhere -f rakelib/compile.rake "
                                               "compile >/dev/null", gem);
    ck_assert_msg(setup_script(compile), "%s", why_skipped);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "-e",
                              "puts \"yjit: #{RubyVM::YJIT.enabled?}\"; require './test/count_test'",
                              NULL };
    g_setenv("RUBY_YJIT_ENABLE", "1", TRUE);
    g_autofree char *json = g_build_filename(work, "yjit.json", NULL);
    Result valgrind = { 0 }, lsan = { 0 };
    run_engine(&valgrind, gem, "valgrind", json, command);
    run_engine(&lsan, gem, "lsan", json, command);
    g_unsetenv("RUBY_YJIT_ENABLE");
    ck_assert_msg(valgrind.status == 1, "valgrind: status %d:\n%s", valgrind.status, valgrind.err);
    gl_assert_line(valgrind.out, "^yjit: true$");
    gl_assert_line(valgrind.err, "^ \\*tally_count \\(ext/tally/tally\\.c:\\d+\\)$");
    gl_assert_line(valgrind.err, "^gemleak: FAIL: 1 leak ");
    ck_assert_msg(lsan.status == 3, "lsan: status %d:\n%s", lsan.status, lsan.err);
    gl_assert_line(lsan.out, "^yjit: true$");
    gl_assert_line(lsan.err, "^uncertain: its stack stops after [0-9]+ frames, short of main");
    gl_assert_line(lsan.err, "^gemleak: INCOMPLETE: no certain finding in what was checked; 1 "
                             "finding whose stack the unwinder cut short");
    result_discard(&valgrind);
    result_discard(&lsan);
}
END_TEST

/* Issue 36: with LeakSanitizer's runtime naming no frame, a forked child
 * of json's suite whose Ractor had run crashed at its end in a run in four
 * to six ("[BUG] pthread_cond_wait: Invalid argument": Ruby's M:N scheduler
 * leaves a native thread waiting on a lock its exit frees, and the bytes
 * were another block's), never natively: the allocation front held the
 * exit's frees back. While the suite runs, an extension's block (Fiddle's)
 * is kept from the address of one just freed; once Ruby's exit begins (a
 * finalizer runs after the helper's at_exit), it is not. */
START_TEST(test_lsan_keeps_no_address_back_as_ruby_exits)
{
    if (!have_ruby34("the allocation front's kept addresses"))
        return;
    static const char script[] =
        "begin; require 'fiddle'; rescue LoadError; puts 'no fiddle'; exit; end\n"
        "def reused; a = Fiddle.malloc(48); Fiddle.free(a); b = Fiddle.malloc(48); "
        "Fiddle.free(b); a == b; end\n"
        "puts \"running: #{reused}\"\n"
        "ObjectSpace.define_finalizer(Object.new, proc { puts \"exiting: #{reused}\" })\n";
    g_autofree char *path = g_build_filename(work, "held.rb", NULL);
    gl_test_write(path, script, -1);
    const char *command[] = { ruby34, path, NULL };
    g_autofree char *json = g_build_filename(work, "held.json", NULL);
    Result lsan = { 0 };
    run_engine(&lsan, work, "lsan", json, command);
    if (strstr(lsan.out, "no fiddle") != NULL) {
        result_discard(&lsan);
        gl_test_skip("no fiddle in %s to allocate with", ruby34);
    }
    /* it loads no extension of a project: nothing to check (status 3) */
    gl_assert_line(lsan.err, "^gemleak: nothing was checked");
    gl_assert_line(lsan.out, "^running: false$");
    gl_assert_line(lsan.out, "^exiting: true$");
    result_discard(&lsan);
}
END_TEST

/* Returns: the number after "collections at exit: " in @out. */
static guint collections_at_exit(const char *out)
{
    const char *at = strstr(out, "collections at exit: ");
    ck_assert_msg(at != NULL, "no count in: %s", out);
    return (guint) g_ascii_strtoull(at + strlen("collections at exit: "), NULL, 10);
}

/* A forked child that turns GC.stress on and exits (json's suite has one):
 * each allocation at its exit is a full collection, so the helper's work
 * there runs with the collector off until it has turned GC.stress off.
 * Counted from the child's last at_exit to a finalizer (after every
 * at_exit): as many as natively (16 more once, 40 ms of json's child;
 * then 4 more, the helper's block warmed). */
START_TEST(test_lsan_stressed_child_exits_without_the_helpers_collections)
{
    if (!have_ruby34("a stressed child's exit under the LeakSanitizer engine"))
        return;
    static const char script[] =
        "def collections = GC.count\n"
        "collections\n"
        "pid = fork do\n"
        "  at_exit { $before = collections }\n"
        "  $kept = Object.new\n"
        "  ObjectSpace.define_finalizer($kept, proc { after = collections; GC.stress = false; "
        "puts \"collections at exit: #{after - $before}\" })\n"
        "  GC.stress = true\n"
        "end\n"
        "Process.wait(pid)\n";
    g_autofree char *path = g_build_filename(work, "stressed.rb", NULL);
    gl_test_write(path, script, -1);
    const char *command[] = { ruby34, path, NULL };
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    ck_assert_int_eq(gl_test_spawn(command, &out, &err), 0);
    guint native = collections_at_exit(out);
    g_autofree char *json = g_build_filename(work, "stressed.json", NULL);
    Result lsan = { 0 };
    run_engine(&lsan, work, "lsan", json, command);
    gl_assert_line(lsan.err, "^gemleak: nothing was checked");
    guint under = collections_at_exit(lsan.out);
    ck_assert_msg(under <= native, "%u collections at the child's exit, %u natively", under, native);
    result_discard(&lsan);
}
END_TEST

/* Returns: the member @name of the JSON report @path's summary. */
static gint64 summary_member(const char *path, const char *name)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, path, &error), "%s: %s", path,
                  error != NULL ? error->message : "");
    JsonObject *summary = json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)),
                                                        "summary");
    ck_assert_msg(summary != NULL && json_object_has_member(summary, name), "%s: no summary.%s",
                  path, name);
    return json_object_get_int_member(summary, name);
}

/* The allocation front keeps the extension's blocks from addresses freed of
 * late with a shadow of 256 GiB of address space. Where that cannot be
 * mapped (here ulimit -v: LeakSanitizer's 4 TiB and 16 GiB more; strict
 * overcommit does the same), the check is weaker, and the run says so: a
 * warning, and the JSON summary's count, never silence. Without the limit,
 * neither. */
START_TEST(test_lsan_says_when_recent_addresses_are_not_kept)
{
    if (!have_ruby34("the allocation front under a limit on address space"))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "test/count_test.rb", NULL };
    g_autofree char *json = g_build_filename(work, "unkept.json", NULL);
    static const char warning[] = "^gemleak: warning: in 1 of 1 process the allocation front could "
                                  "not keep the extension's blocks from addresses freed of late ";
    Result limited = { 0 };
    run_engine_within(&limited, gem, "lsan", NULL, json, command, "4311744512");
    gl_assert_line(limited.err, warning);
    gl_assert_line(limited.err, "^gemleak: FAIL: 1 leak ");
    ck_assert_int_eq(summary_member(json, "recent_unkept_processes"), 1);
    result_discard(&limited);
    Result plain = { 0 };
    run_engine(&plain, gem, "lsan", json, command);
    gl_assert_no_line(plain.err, "^gemleak: warning: in [0-9]+ of");
    gl_assert_line(plain.err, "^gemleak: FAIL: 1 leak ");
    ck_assert_int_eq(summary_member(json, "recent_unkept_processes"), 0);
    result_discard(&plain);
}
END_TEST

void integration_engine(TCase *tcase)
{
    tcase_add_unchecked_fixture(tcase, setup_ruby34, teardown_ruby34);
    tcase_add_test(tcase, test_lsan_interrupted_run_never_passes);
    tcase_add_test(tcase, test_lsan_stressed_child_exits_without_the_helpers_collections);
    tcase_add_test(tcase, test_lsan_says_when_recent_addresses_are_not_kept);
    tcase_add_test(tcase, test_lsan_pipe_in_the_path);
    tcase_add_test(tcase, test_lsan_leaky_patterns_as_valgrind);
    tcase_add_test(tcase, test_lsan_probe_patterns_as_valgrind);
    tcase_add_test(tcase, test_lsan_fast_stacks_on_a_frame_pointer_ruby);
    tcase_add_test(tcase, test_lsan_sample_gem_as_valgrind);
    tcase_add_test(tcase, test_lsan_process_outside_the_engine_is_incomplete);
    tcase_add_test(tcase, test_static_launcher_is_followed);
    tcase_add_test(tcase, test_static_launcher_unfollowed_is_incomplete);
    tcase_add_test(tcase, test_lsan_per_test_names_the_test_as_valgrind);
    tcase_add_test(tcase, test_lsan_growth_markers);
    tcase_add_test(tcase, test_lsan_per_test_names_the_first_test_first);
    tcase_add_test(tcase, test_lsan_per_test_file_names_the_file);
    tcase_add_test(tcase, test_lsan_per_test_sixty_tests);
    tcase_add_test(tcase, test_lsan_per_test_clean_suite_runs_once);
    tcase_add_test(tcase, test_lsan_exit_bang_child_is_checked);
    tcase_add_test(tcase, test_lsan_launcher_build_step_stays_native);
    tcase_add_test(tcase, test_sanitizers_start_a_childs_ruby_once);
    tcase_add_test(tcase, test_lsan_per_test_reallocated_block);
    tcase_add_test(tcase, test_lsan_fork_counts_inherited_once);
    tcase_add_test(tcase, test_sanitizers_count_a_childs_inherited_leaks_once);
    tcase_add_test(tcase, test_lsan_rake_task);
    tcase_add_test(tcase, test_asan_rake_task);
    tcase_add_test(tcase, test_child_stderr_stays_the_suites_under_every_engine);
    tcase_add_test(tcase, test_bundled_suite_stderr_is_its_own_under_every_engine);
    tcase_add_test(tcase, test_yjit_stays_as_the_suite_sets_it);
    tcase_add_test(tcase, test_lsan_keeps_no_address_back_as_ruby_exits);
}
