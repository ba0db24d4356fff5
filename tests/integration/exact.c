/* Integration tests, issue 28: --engine lsan unwinds fast, and pays exact
 * stacks only where something leaked (gemleak/run/exact.h). On a stock
 * Ruby 3.4 (no frame pointers: GEMLEAK_TEST_RUBY34, else the one
 * scripts/build-ruby builds), the findings equal those of --exact-stacks,
 * which unwinds every allocation exactly, as --engine lsan did before:
 * the same stacks, locations, fingerprints and certainty, on ext/leaky
 * (fibers included), ext/probe, the example gem, and a real gem's suite:
 * strscan's, from Ruby's own source (../shared/ruby, or
 * GEMLEAK_TEST_RUBY_SOURCE), unchanged, with three leaks planted from
 * outside it (fixtures/ext/leaky/planted.rb, through ext/leaky), one in
 * the child Ruby that test_ractor.rb starts with its script on standard
 * input. */
#include <string.h>

#include "harness.h"

#define DEFAULT_RUBY34 "/root/.cache/gemleak/ruby-3.4.5/bin/ruby"
#define DEFAULT_RUBY_SOURCE "../shared/ruby/ruby3.4_3.4.5.orig.tar.xz"

static char *ruby34;      /* nullable: none here */
static char *ruby34_bin;
static char *work;        /* leaky/, probe/, gem/, strscan/ (nullable), built with it */
static char *strscan;     /* nullable: strscan's checkout, built, ext/leaky beside it */
static char *why_skipped;
static char *why_no_strscan;

/* Runs @script under sh, PATH starting at Ruby 3.4's bin/. Returns: its
 * standard error when it failed (transfer full), else NULL. */
static char *setup_script(const char *script)
{
    g_autofree char *path = g_strconcat(ruby34_bin, ":", g_getenv("PATH"), NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    const char *argv[] = { "sh", "-c", script, NULL };
    Result r = { 0 };
    run_command(&r, NULL, env, argv);
    char *failed = r.status == 0 ? NULL : g_strdup_printf("%s: %s", script, r.err);
    result_clear(&r);
    return failed;
}

/* strscan's sources and tests out of Ruby's release tarball, built as they
 * are: strscan/ext/strscan holds strscan.so, strscan/ the suite, and
 * strscan/ext/leaky a copy of the built ext/leaky with planted.rb, which
 * plants the leaks (the suite's project holds both extensions, so both
 * are targets). Runs after setup_exact built ext/leaky. */
static void setup_strscan(void)
{
    const char *given = g_getenv("GEMLEAK_TEST_RUBY_SOURCE");
    g_autofree char *tarball = given != NULL && *given != '\0'
        ? g_strdup(given) : g_build_filename(project_root, DEFAULT_RUBY_SOURCE, NULL);
    if (!g_file_test(tarball, G_FILE_TEST_IS_REGULAR)) {
        why_no_strscan = g_strdup_printf("no Ruby source tarball (GEMLEAK_TEST_RUBY_SOURCE, else "
                                         "%s)", DEFAULT_RUBY_SOURCE);
        return;
    }
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && mkdir strscan && cd strscan && "
        "tar -xJf '%s' --strip-components=1 --wildcards 'ruby-*/ext/strscan' 'ruby-*/test/strscan' "
        "'ruby-*/tool/lib' && cp -r ../leaky ext/leaky && cd ext/strscan && "
        "ruby extconf.rb >/dev/null && make >/dev/null 2>&1",
        work, tarball);
    char *failed = setup_script(script);
    if (failed != NULL)
        why_no_strscan = failed;
    else
        strscan = g_build_filename(work, "strscan", NULL);
}

static void setup_exact(void)
{
    const char *given = g_getenv("GEMLEAK_TEST_RUBY34");
    const char *ruby = given != NULL && *given != '\0' ? given : DEFAULT_RUBY34;
    if (!g_file_test(ruby, G_FILE_TEST_IS_EXECUTABLE)) {
        why_skipped = g_strdup_printf("no Ruby 3.4 (GEMLEAK_TEST_RUBY34, else %s; "
                                      "scripts/build-ruby builds one)", DEFAULT_RUBY34);
        return;
    }
    ruby34 = g_strdup(ruby);
    ruby34_bin = g_path_get_dirname(ruby);
    work = g_dir_make_tmp("gemleak-exact-XXXXXX", NULL);
    g_autofree char *ext = gl_test_fixture("ext");
    g_autofree char *gem = gl_test_fixture("sample-gem");
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && cp -r '%s/leaky' '%s/probe' . && "
        "(cd leaky && ruby extconf.rb >/dev/null && make >/dev/null 2>&1) && "
        "(cd probe && ruby extconf.rb >/dev/null && make >/dev/null 2>&1) && "
        "cp -r '%s' gem && cd gem && rake -R nowhere -f rakelib/compile.rake compile >/dev/null",
        work, ext, ext, gem);
    why_skipped = setup_script(script);
    if (why_skipped != NULL) {
        g_clear_pointer(&ruby34, g_free);
        return;
    }
    setup_strscan();
}

static void teardown_exact(void)
{
    if (work != NULL)
        gl_remove_tree(work);
    g_clear_pointer(&work, g_free);
    g_clear_pointer(&ruby34, g_free);
    g_clear_pointer(&ruby34_bin, g_free);
    g_clear_pointer(&strscan, g_free);
    g_clear_pointer(&why_skipped, g_free);
    g_clear_pointer(&why_no_strscan, g_free);
}

/* gemleak run --engine lsan OPTIONS... --format json:@json --format text
 * -- @command..., in @cwd, Ruby 3.4 first on PATH, with @vars (nullable,
 * NAME=VALUE each) in its environment. */
static void run_lsan(Result *result, const char *cwd, const char *const *options,
                     const char *json, const char *const *vars, const char *const *command)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autofree char *format = g_strconcat("json:", json, NULL);
    const char *head[] = { gemleak_binary, "run", "--engine", "lsan", NULL };
    for (const char *const *arg = head; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    for (const char *const *arg = options; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *tail[] = { "--format", format, "--format", "text", "--", NULL };
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
    for (const char *const *var = vars; var != NULL && *var != NULL; var++) {
        g_auto(GStrv) pair = g_strsplit(*var, "=", 2);
        env = g_environ_setenv(env, pair[0], pair[1] != NULL ? pair[1] : "", TRUE);
    }
    /* The tests in one order, the same in every run: the first call of a
     * method goes through another path of Ruby's VM than the next ones, and
     * which test makes it changes the stacks a leak is lost on. */
    env = g_environ_setenv(env, "SEED", "1", TRUE);
    run_command(result, cwd, env, (const char *const *) argv->pdata);
}

/* Returns: (transfer full): every finding of the JSON report @path, a
 * line each, sorted: its kind, bytes, blocks and occurrences, fingerprint,
 * location, certainty, and every frame of its stack (function, file,
 * line): what an exact run and the exact pass must agree on. */
static char *findings_of(const char *path, const char *err)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, path, &error), "%s: %s\n%s", path,
                  error != NULL ? error->message : "", err);
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *findings = json_object_get_array_member(root, "findings");
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        GString *line = g_string_new(NULL);
        g_string_append_printf(line, "%s %" G_GINT64_FORMAT " bytes in %" G_GINT64_FORMAT
                               " (%" G_GINT64_FORMAT " occurrences) %s %s",
                               json_object_get_string_member(finding, "kind"),
                               json_object_get_int_member(finding, "bytes"),
                               json_object_get_int_member(finding, "blocks"),
                               json_object_get_int_member(finding, "occurrences"),
                               json_object_get_string_member(finding, "fingerprint"),
                               json_object_get_boolean_member(finding, "certain") ? "certain"
                                                                                  : "UNCERTAIN");
        JsonObject *location = json_object_get_object_member(finding, "location");
        if (location != NULL)
            g_string_append_printf(line, " at %s:%" G_GINT64_FORMAT,
                                   json_object_get_string_member(location, "fn"),
                                   json_object_get_int_member(location, "line"));
        JsonArray *frames = json_object_get_array_member(finding, "frames");
        for (guint j = 0; j < json_array_get_length(frames); j++) {
            JsonObject *frame = json_array_get_object_element(frames, j);
            const char *fn = json_object_get_string_member_with_default(frame, "fn", "?");
            const char *file = json_object_get_string_member_with_default(frame, "file", "?");
            g_string_append_printf(line, "\n  %s %s:%" G_GINT64_FORMAT, fn != NULL ? fn : "?",
                                   file != NULL ? file : "?",
                                   json_object_get_int_member_with_default(frame, "line", 0));
        }
        g_ptr_array_add(lines, g_string_free(line, FALSE));
    }
    g_ptr_array_sort(lines, gl_compare_strings);
    g_ptr_array_add(lines, NULL);
    return g_strjoinv("\n", (char **) lines->pdata);
}

/* Asserts that @fast and @exact (findings_of()) are the same, naming the
 * first line where they are not (Check's messages have a bound). */
static void assert_same(const char *name, const char *fast, const char *exact, const char *err)
{
    if (strcmp(fast, exact) == 0)
        return;
    g_auto(GStrv) a = g_strsplit(fast, "\n", -1);
    g_auto(GStrv) b = g_strsplit(exact, "\n", -1);
    guint i = 0;
    while (a[i] != NULL && b[i] != NULL && strcmp(a[i], b[i]) == 0)
        i++;
    g_autofree char *tail = g_strndup(err, 2000);
    ck_abort_msg("%s: the exact pass and --exact-stacks differ at line %u:\n  fast pass: %.300s\n"
                 "  exact:     %.300s\n%s", name, i + 1, a[i] != NULL ? a[i] : "(end)",
                 b[i] != NULL ? b[i] : "(end)", tail);
}

/* Runs @command (in @cwd) under --engine lsan, then --engine lsan
 * --exact-stacks; asserts both end with @status, the first with a second
 * run for exact stacks (or none: @again FALSE), and that they find the
 * same, which has @expected (nullable) in it.
 * Returns: (transfer full): the findings, as findings_of() gives them. */
static char *same_as_exact(const char *name, const char *cwd, const char *const *vars, int status,
                           gboolean again, const char *expected, const char *const *command)
{
    g_autofree char *fast_json = g_strdup_printf("%s/%s-fast.json", work, name);
    g_autofree char *exact_json = g_strdup_printf("%s/%s-exact.json", work, name);
    Result fast = { 0 }, exact = { 0 };
    run_lsan(&fast, cwd, NULL, fast_json, vars, command);
    ck_assert_msg(fast.status == status, "%s: status %d:\n%.3000s", name, fast.status, fast.err);
    gl_assert_line(fast.err, "^gemleak: ran under LeakSanitizer .*\\(Ruby 3\\.[0-9.]*; fast "
                             "stacks\\)$");
    if (again)
        gl_assert_line(fast.err, "^gemleak: exact stacks: .* ran again \\([0-9.]+ s, output "
                                 "discarded, status ignored\\)");
    else
        gl_assert_no_line(fast.err, "^gemleak: exact stacks:");
    run_lsan(&exact, cwd, ARGS("--exact-stacks"), exact_json, vars, command);
    ck_assert_msg(exact.status == status, "%s --exact-stacks: status %d:\n%.3000s", name, exact.status,
                  exact.err);
    gl_assert_line(exact.err, "\\(Ruby 3\\.[0-9.]*; exact stacks\\)$");
    gl_assert_no_line(exact.err, "^gemleak: exact stacks:");
    g_autofree char *by_fast = findings_of(fast_json, fast.err);
    char *by_exact = findings_of(exact_json, exact.err);
    assert_same(name, by_fast, by_exact, fast.err);
    if (expected != NULL)
        ck_assert_msg(strstr(by_exact, expected) != NULL, "%s: no %s in:\n%s", name, expected,
                      by_exact);
    result_discard(&fast);
    result_discard(&exact);
    return by_exact;
}

/* ext/leaky's shapes: a plain leak, Ruby's allocator, a helper, a thread,
 * a stack the depth limit cuts (deep(12)), Init code; and leaks in a
 * Fiber and in an Enumerator's, whose stacks are not the thread's (the
 * fast unwinder cannot see their allocations, and LeakSanitizer takes
 * such blocks for reachable: only exact stacks judge them). */
START_TEST(test_leaky_shapes_as_an_exact_run)
{
    if (!ready_or_skip(ruby34, "the exact pass on ext/leaky", why_skipped))
        return;
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", work);
    const char *command[] = {
        ruby34, "--disable-gems", leaky, "-e",
        "require 'leaky'; Leaky.clean; Leaky.leak; Leaky.leak_xmalloc; Leaky.leak_in_helper; "
        "Leaky.callback_intern; Leaky.leak_in_thread; Leaky.reachable; "
        "def deep(n) = n.zero? ? (Leaky.leak_and_raise rescue nil) : [n].each { deep(n - 1) }; "
        "deep(12)", NULL };
    g_free(same_as_exact("leaky", NULL, NULL, 1, TRUE, "leaky_thread_main", command));
    const char *fibers[] = {
        ruby34, "--disable-gems", leaky, "-e",
        "require 'leaky'; Fiber.new { Leaky.leak }.resume; "
        "Enumerator.new { |y| Leaky.leak_in_helper; y << 1 }.next", NULL };
    g_autofree char *found = same_as_exact("fibers", NULL, NULL, 1, TRUE, "leaky_leak_in_helper",
                                           fibers);
    ck_assert_ptr_null(strstr(found, "UNCERTAIN"));
}
END_TEST

/* What an extension allocates as it loads (ext/leaky's Init_leaky keeps a
 * block it never frees, and one strdup(3) allocated for it) has its whole
 * stack from the fast pass, the require running (the C library's
 * allocations too, but those it makes for Ruby's own calls, its
 * realpath(3) at each require): judged Init code there, as
 * --exact-stacks judges it,
 * and the clean suite runs once, in this process and in a Ruby it starts
 * (issue 36: every process that loaded the extension ran again for it).
 * A Ractor's require goes through the helper's hook too, and works (it
 * raised Ractor::IsolationError, psych's test_ractor.rb found). A leak
 * after the require that is its site's first allocation has its whole
 * stack from the fast pass too, and nothing runs again (issue 36: a leak
 * on a path a suite takes once ran its tests again); one at a site met
 * before (Leaky.clean's, then the first leak's) has its stack cut, and
 * runs again: both blocks, at one site, share the stacks found again. */
START_TEST(test_init_code_is_judged_in_the_first_pass)
{
    if (!ready_or_skip(ruby34, "Init code in the fast pass", why_skipped))
        return;
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", work);
    g_autofree char *code = g_strdup_printf(
        "require 'rbconfig'; require 'leaky'; Leaky.clean; Ractor.new { require 'leaky' }.take; "
        "system(RbConfig.ruby, '--disable-gems', '%s', '-e', "
        "'require %%q(leaky); Leaky.clean') or abort", leaky);
    const char *command[] = { ruby34, "--disable-gems", leaky, "-e", code, NULL };
    g_autofree char *none = same_as_exact("init", NULL, NULL, 0, FALSE, NULL, command);
    ck_assert_str_eq(none, "");
    const char *leaking[] = { ruby34, "--disable-gems", leaky, "-e",
                              "require 'leaky'; Leaky.leak", NULL };
    g_autofree char *once = same_as_exact("init-and-leak", NULL, NULL, 1, FALSE,
                                          " at leaky_alloc:", leaking);
    ck_assert_msg(strstr(once, "100 bytes in 1 (1 occurrences)") != NULL, "%s", once);
    const char *twice[] = { ruby34, "--disable-gems", leaky, "-e",
                            "require 'leaky'; def two = Leaky.leak; two; Leaky.leak_and_raise rescue "
                            "nil; two", NULL };
    g_autofree char *again = same_as_exact("init-and-leaks", NULL, NULL, 1, TRUE,
                                           " at leaky_alloc:", twice);
    ck_assert_msg(strstr(again, "\n  leaky_leak_and_raise leaky.c:") != NULL, "%s", again);
}
END_TEST

/* Every leak shape of ext/probe: memory a Ruby API hands to the extension
 * (strdup, ruby_xmalloc, rb_fd_init, st tables, an encoding converter),
 * TypedData without dfree, zlib's cycle, Init code. Not r_getcwd: two runs
 * of LeakSanitizer disagree on it whatever the unwinder (one of its two
 * blocks is found lost in one run, reachable in the next: a copy of its
 * address left where the check scans), nor the memory errors. */
START_TEST(test_probe_shapes_as_an_exact_run)
{
    if (!ready_or_skip(ruby34, "the exact pass on ext/probe", why_skipped))
        return;
    g_autofree char *probe = g_strdup_printf("-I%s/probe", work);
    g_autofree char *script = g_strdup_printf(
        "require 'probe'; ARGV.replace(Probe.singleton_methods.grep(/\\A[rn]_/).map(&:to_s).sort - "
        "%%w[r_double_free r_uaf_tail r_uaf_two_lines r_overflow r_getcwd]); "
        "load '%s/probe/probe_run.rb'",
        work);
    const char *command[] = { ruby34, "--disable-gems", probe, "-e", script, NULL };
    g_autofree char *found = same_as_exact("probe", NULL, NULL, 1, TRUE, " at r_fdset:", command);
    ck_assert_ptr_nonnull(strstr(found, " at r_strdup:"));
    ck_assert_ptr_nonnull(strstr(found, " at r_xmalloc:"));
    ck_assert_ptr_nonnull(strstr(found, " at r_malloc:"));
}
END_TEST

/* The example gem's minitest suite: the leak in tally_count; and its clean
 * part, which runs once (nothing leaked: no exact stacks to pay). */
START_TEST(test_sample_gem_as_an_exact_run)
{
    if (!ready_or_skip(ruby34, "the exact pass on the example gem", why_skipped))
        return;
    g_autofree char *gem = g_build_filename(work, "gem", NULL);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "-e",
                              "require './test/count_test'; require './test/frequencies_test'",
                              NULL };
    g_free(same_as_exact("gem", gem, NULL, 1, TRUE, " at copy_text:", command));
    const char *clean[] = { ruby34, "-Ilib", "-Itest", "test/frequencies_test.rb", NULL };
    g_autofree char *none = same_as_exact("gem-clean", gem, NULL, 0, FALSE, NULL, clean);
    ck_assert_str_eq(none, "");
}
END_TEST

/* A real gem's suite: strscan's 142 tests (test-unit, as Ruby runs its
 * own), unchanged, with leaks planted from outside it (planted.rb) in
 * StringScanner#peek (malloc) and #getch (ruby_xmalloc), and in a helper
 * of the child Ruby of test_ractor.rb, which assert_in_out_err starts
 * with its script on standard input, and whose parent runs again. */
START_TEST(test_real_gem_suite_as_an_exact_run)
{
    if (!ready_or_skip(ruby34, "the exact pass on strscan's suite", why_skipped) ||
        !ready_or_skip(strscan, "the exact pass on strscan's suite", why_no_strscan))
        return;
    g_autofree char *ext = g_build_filename(strscan, "ext", "strscan", NULL);
    g_autofree char *include = g_strconcat("-I", ext, NULL);
    g_autofree char *rubylib = g_strconcat("RUBYLIB=", ext, NULL);
    g_autofree char *rubyopt = g_strdup_printf("RUBYOPT=-I%s/ext/leaky -rplanted", strscan);
    const char *command[] = { ruby34, include, "-Itool/lib", "-e",
                              "ARGV.each { |f| require File.expand_path(f) }; "
                              "ARGV.replace(%w[--seed=1])",
                              "test/strscan/test_stringscanner.rb", "test/strscan/test_ractor.rb",
                              NULL };
    g_autofree char *found = same_as_exact("strscan", strscan, ARGS(rubylib, rubyopt), 1, TRUE,
                                           " at leaky_alloc:", command);
    ck_assert_ptr_nonnull(strstr(found, " at leaky_leak_xmalloc:"));
    ck_assert_ptr_nonnull(strstr(found, "\n  leaky_leak leaky.c:"));
    ck_assert_ptr_nonnull(strstr(found, "\n  leaky_leak_in_helper leaky.c:"));
    ck_assert_ptr_null(strstr(found, "UNCERTAIN"));
}
END_TEST

/* A suite that does not run the same way twice: the leak happens in the
 * first run only (a file it writes says it ran), at a site met before (the
 * example gem's copy_text, whose block Tally.frequencies frees), its stack
 * cut. The second run does not lose it again: it keeps the first run's
 * record, whose stack was cut, and the run is INCOMPLETE, never a pass. */
START_TEST(test_a_leak_not_lost_again_never_passes)
{
    if (!ready_or_skip(ruby34, "a leak the exact pass does not see again", why_skipped))
        return;
    g_autofree char *lib = g_strdup_printf("-I%s/gem/lib", work);
    g_autofree char *marker = g_build_filename(work, "ran-once", NULL);
    g_autofree char *code = g_strdup_printf(
        "require 'tally'; Tally.frequencies('a b'); unless File.exist?('%s'); File.write('%s', ''); "
        "Tally.count('a b a'); end", marker, marker);
    const char *command[] = { ruby34, "--disable-gems", lib, "-e", code, NULL };
    g_autofree char *json = g_build_filename(work, "once.json", NULL);
    Result r = { 0 };
    run_lsan(&r, NULL, NULL, json, NULL, command);
    ck_assert_msg(r.status == 3, "status %d:\n%.3000s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: exact stacks: .* of 1 leaked block; the command ran again "
                          ".*: it did not get its whole stack; the run again did not lose it: it "
                          "keeps the fast stack, cut short, which never passes$");
    gl_assert_line(r.err, "^uncertain: its stack stops after [0-9]+ frames, short of main");
    gl_assert_line(r.err, "^gemleak: INCOMPLETE: ");
    gl_assert_no_line(r.err, "^gemleak: pass");
    result_discard(&r);
}
END_TEST

/* A second run whose process leaves no report (killed, crashed, or the
 * disk full) did not judge the blocks it was to unwind (a leak at a site
 * met before, as above): said so, never
 * "did not lose them again" (issue 35, minor: a full disk said that). */
START_TEST(test_a_second_run_without_a_report_did_not_judge)
{
    if (!ready_or_skip(ruby34, "an exact pass whose process leaves no report", why_skipped))
        return;
    g_autofree char *lib = g_strdup_printf("-I%s/gem/lib", work);
    g_autofree char *marker = g_build_filename(work, "killed-again", NULL);
    g_autofree char *code = g_strdup_printf(
        "require 'tally'; Tally.frequencies('a b'); Tally.count('a b a'); "
        "if File.exist?('%s') then Process.kill(:KILL, $$) else File.write('%s', '') end",
        marker, marker);
    const char *command[] = { ruby34, "--disable-gems", lib, "-e", code, NULL };
    g_autofree char *json = g_build_filename(work, "killed-again.json", NULL);
    Result r = { 0 };
    run_lsan(&r, NULL, NULL, json, NULL, command);
    ck_assert_msg(r.status == 3, "status %d:\n%.3000s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: exact stacks: .*; 1 process of it left no finished report "
                          "\\(killed or crashed, or the disk is full\\); the run again did not "
                          "judge it: it keeps the fast stack, cut short, which never passes$");
    gl_assert_no_line(r.err, "did not lose");
    gl_assert_line(r.err, "^gemleak: INCOMPLETE: ");
    result_discard(&r);
}
END_TEST

/* What runs a second time keeps to itself: its output does not reach the
 * suite's streams, its exit status is not the run's (the second run of
 * this script fails), and a child Ruby that reads its script from
 * standard input (as assert_separately starts one) runs again as its
 * parent gives it the script again: its leak has its whole stack. */
START_TEST(test_the_second_run_keeps_to_itself)
{
    if (!ready_or_skip(ruby34, "what the exact pass's run keeps to itself", why_skipped))
        return;
    g_autofree char *marker = g_build_filename(work, "second-run", NULL);
    g_autofree char *code = g_strdup_printf(
        "require 'leaky'; require 'rbconfig'\n"
        "again = File.exist?('%s'); File.write('%s', '')\n"
        "$stdout.puts 'the suite speaks'; $stderr.puts 'the suite complains'\n"
        "Leaky.leak; Leaky.leak\n"
        "out = IO.popen([RbConfig.ruby, '--disable-gems', '-I%s/leaky'], 'r+') { |io| "
        "io.write(%%q(require 'leaky'; 2.times { Leaky.leak_in_helper }; puts 'child done')); "
        "io.close_write; "
        "io.read }\n"
        "$stdout.puts out\n"
        "exit(again ? 7 : 0)\n", marker, marker, work);
    g_autofree char *script = g_build_filename(work, "twice.rb", NULL);
    gl_test_write(script, code, -1);
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", work);
    const char *command[] = { ruby34, "--disable-gems", leaky, script, NULL };
    g_autofree char *json = g_build_filename(work, "twice.json", NULL);
    Result r = { 0 };
    run_lsan(&r, NULL, NULL, json, NULL, command);
    ck_assert_msg(r.status == 1, "status %d:\n%.3000s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: exact stacks: .* the command ran again ");
    ck_assert_str_eq(r.out, "the suite speaks\nchild done\n");
    g_auto(GStrv) complaints = g_strsplit(r.err, "the suite complains", -1);
    ck_assert_uint_eq(g_strv_length(complaints), 2);  /* said once */
    g_autofree char *found = findings_of(json, r.err);
    ck_assert_msg(strstr(found, " at leaky_alloc:") != NULL, "%s", found);
    ck_assert_ptr_null(strstr(found, "UNCERTAIN"));
    ck_assert_msg(strstr(found, "leaky_leak_in_helper") != NULL, "%s", found);
    gl_assert_line(r.err, "^gemleak: FAIL: 2 leaks ");
    result_discard(&r);
}
END_TEST

/* Returns: (transfer full): a copy of the example gem, @name in the work
 * directory, whose tests each write "Class#test_name" to the log @log_name
 * (there too; its path in *@log) as they start: which tests ran. */
static char *gem_logging_tests(const char *name, const char *log_name, char **log)
{
    char *gem = g_build_filename(work, name, NULL);
    g_autofree char *copy = g_strdup_printf("cp -r '%s/gem' '%s'", work, gem);
    g_autofree char *failed = setup_script(copy);
    ck_assert_msg(failed == NULL, "%s", failed);
    *log = g_build_filename(work, log_name, NULL);
    g_autofree char *helper = g_build_filename(gem, "test", "test_helper.rb", NULL);
    g_autofree char *text = g_strdup_printf(
        "$LOAD_PATH.unshift(File.expand_path(\"../lib\", __dir__))\n"
        "require \"tally\"\n"
        "require \"minitest/autorun\"\n"
        "class Minitest::Test\n"
        "  def setup = File.write(%%q(%s), \"#{self.class}##{name}\\n\", mode: \"a\")\n"
        "end\n", *log);
    gl_test_write(helper, text, -1);
    return gem;
}

/* Sixty short tests, one of which leaks: only that test runs again (the
 * log each test writes says which ran); --per-test names it as before,
 * with the leak's whole stack. */
START_TEST(test_only_the_test_that_leaked_runs_again)
{
    if (!ready_or_skip(ruby34, "the tests the exact pass runs again", why_skipped))
        return;
    g_autofree char *log = NULL;
    g_autofree char *gem = gem_logging_tests("gem-sixty", "tests-ran.log", &log);
    g_autoptr(GPtrArray) files = NULL;
    g_autoptr(GPtrArray) command = NULL;
    sixty_tests(ruby34, FALSE, &files, &command);
    for (guint i = 0; g_ptr_array_index(files, i) != NULL; i += 2) {
        g_autofree char *path = g_build_filename(gem, g_ptr_array_index(files, i), NULL);
        gl_test_write(path, g_ptr_array_index(files, i + 1), -1);
    }
    for (guint pass = 0; pass < 2; pass++) {
        g_unlink(log);
        g_autofree char *json = g_strdup_printf("%s/sixty-%u.json", work, pass);
        Result r = { 0 };
        run_lsan(&r, gem, pass == 0 ? NULL : ARGS("--per-test"), json, NULL,
                 (const char *const *) command->pdata);
        ck_assert_msg(r.status == 1, "status %d:\n%.3000s", r.status, r.err);
        gl_assert_line(r.err, "^gemleak: exact stacks: .* the tests that allocated (it|them) ran "
                              "again ");
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 6 bytes$");
        g_autofree char *ran = NULL;
        ck_assert(g_file_get_contents(log, &ran, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(ran, "\n", -1);
        guint leaking = 0;
        for (char **line = lines; *line != NULL; line++)
            leaking += strcmp(*line, "Short4Test#test_7") == 0;
        /* sixty the first time, the one again */
        ck_assert_uint_eq(g_strv_length(lines), 62);
        ck_assert_uint_eq(leaking, 2);
        g_autofree char *found = findings_of(json, r.err);
        ck_assert_msg(strstr(found, " certain at copy_text:") != NULL, "%s", found);
        ck_assert_msg(strstr(found, "tally_count") != NULL, "%s", found);
        if (pass == 1)
            gl_assert_line(r.err, "^allocated in Short4Test#test_7 ");
        else
            gl_assert_no_line(r.err, "allocated in ");
        result_discard(&r);
    }
}
END_TEST

/* A test that starts a Ruby which leaks: the child is told which test
 * started it, its blocks are that test's, and only that test runs again
 * (before, a leak in a process that ran no test reran the whole command:
 * every test twice); --per-test puts the child's leak at the test. The
 * child's environment, as the suite sees it, has nothing of it (it aborts
 * if it has). */
START_TEST(test_a_childs_leak_reruns_the_test_that_started_it)
{
    if (!ready_or_skip(ruby34, "the test that started a leaking child", why_skipped))
        return;
    g_autofree char *log = NULL;
    g_autofree char *gem = gem_logging_tests("gem-child", "child-tests-ran.log", &log);
    g_autoptr(GString) tests = g_string_new("require_relative \"test_helper\"\n"
                                            "class ChildTest < Minitest::Test\n");
    for (guint test = 1; test <= 10; test++)
        g_string_append_printf(tests, "  def test_%u\n    %s\n  end\n", test,
                               test == 7 ? "assert system(RbConfig.ruby, \"--disable-gems\", "
                                           "\"-I#{File.expand_path(\"../lib\", __dir__)}\", "
                                           "\"-e\", %q(abort if ENV.key?(\"GEMLEAK_ORIGIN\"); require \"tally\"; "
                                           "Tally.frequencies(\"a b\"); Tally.count(\"a b a\")))"
                                         : "assert_equal 2, Tally.frequencies(\"a b a\")[\"a\"]");
    g_string_append(tests, "end\n");
    g_autofree char *file = g_build_filename(gem, "test", "child_test.rb", NULL);
    gl_test_write(file, tests->str, -1);
    const char *command[] = { ruby34, "-Ilib", "-Itest", "test/child_test.rb", NULL };
    for (guint pass = 0; pass < 2; pass++) {
        g_unlink(log);
        g_autofree char *json = g_strdup_printf("%s/child-%u.json", work, pass);
        Result r = { 0 };
        run_lsan(&r, gem, pass == 0 ? NULL : ARGS("--per-test"), json, NULL, command);
        ck_assert_msg(r.status == 1, "status %d:\n%.3000s", r.status, r.err);
        gl_assert_line(r.err, "^gemleak: exact stacks: .* the tests that allocated (it|them) ran "
                              "again ");
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 6 bytes$");
        g_autofree char *ran = NULL;
        ck_assert(g_file_get_contents(log, &ran, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(ran, "\n", -1);
        guint again = 0;
        for (char **line = lines; *line != NULL; line++)
            again += strcmp(*line, "ChildTest#test_7") == 0;
        /* ten the first time, the one again */
        ck_assert_msg(g_strv_length(lines) == 12, "%s", ran);
        ck_assert_uint_eq(again, 2);
        g_autofree char *found = findings_of(json, r.err);
        ck_assert_msg(strstr(found, " certain at copy_text:") != NULL, "%s", found);
        if (pass == 1)
            gl_assert_line(r.err, "^allocated in ChildTest#test_7 ");
        result_discard(&r);
    }
}
END_TEST

void integration_exact(TCase *tcase)
{
    tcase_add_unchecked_fixture(tcase, setup_exact, teardown_exact);
    tcase_add_test(tcase, test_leaky_shapes_as_an_exact_run);
    tcase_add_test(tcase, test_init_code_is_judged_in_the_first_pass);
    tcase_add_test(tcase, test_probe_shapes_as_an_exact_run);
    tcase_add_test(tcase, test_sample_gem_as_an_exact_run);
    tcase_add_test(tcase, test_real_gem_suite_as_an_exact_run);
    tcase_add_test(tcase, test_a_leak_not_lost_again_never_passes);
    tcase_add_test(tcase, test_a_second_run_without_a_report_did_not_judge);
    tcase_add_test(tcase, test_the_second_run_keeps_to_itself);
    tcase_add_test(tcase, test_only_the_test_that_leaked_runs_again);
    tcase_add_test(tcase, test_a_childs_leak_reruns_the_test_that_started_it);
}
