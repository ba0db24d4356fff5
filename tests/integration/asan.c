/* Integration tests, the AddressSanitizer engine on Debian's Ruby 3.1
 * (/usr/bin/ruby; GEMLEAK_TEST_RUBY31 names another), with the real
 * runtime: ext/probe's use after free and heap overflow, built with
 * AddressSanitizer, are the errors the Valgrind engine finds in its plain
 * build, with their allocation and free stacks; a clean run passes; a
 * plain build is named, and a build that halts says so. Without that Ruby
 * or the runtime the tests are skipped, and say why. */
#include <string.h>

#include <glib/gstdio.h>

#include "harness.h"
#include "gemleak/run/engine.h"

#define DEFAULT_RUBY31 "/usr/bin/ruby"

static char *ruby31;       /* nullable: no such Ruby, or the builds failed */
static char *work;         /* probe/ (plain), recover/ and halt/ (AddressSanitizer) */
static char *why_skipped;

/* Builds ext/probe into @work/@name with @flags added to Ruby's CFLAGS,
 * and -fsanitize=address to its LDFLAGS (none when @flags is NULL). */
static gboolean build_probe(const char *name, const char *flags)
{
    g_autofree char *ext = gl_test_fixture("ext/probe");
    g_autofree char *configure =
        flags == NULL
            ? g_strdup_printf("'%s' extconf.rb", ruby31)
            : g_strdup_printf("'%s' extconf.rb --with-cflags=\"$('%s' -rrbconfig -e 'print "
                              "RbConfig::CONFIG[%%q(CFLAGS)]') %s\" --with-ldflags=\"$('%s' "
                              "-rrbconfig -e 'print RbConfig::CONFIG[%%q(LDFLAGS)]') "
                              "-fsanitize=address\"", ruby31, ruby31, flags, ruby31);
    g_autofree char *script = g_strdup_printf("cp -r '%s' '%s/%s' && cd '%s/%s' && %s >/dev/null "
                                              "&& make >/dev/null 2>&1", ext, work, name, work,
                                              name, configure);
    const char *argv[] = { "sh", "-c", script, NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    gboolean ok = r.status == 0;
    if (!ok)
        why_skipped = g_strdup_printf("building %s failed: %s", name, r.err);
    result_clear(&r);
    return ok;
}

static void setup_ruby31(void)
{
    const char *given = g_getenv("GEMLEAK_TEST_RUBY31");
    const char *ruby = given != NULL && *given != '\0' ? given : DEFAULT_RUBY31;
    if (!g_file_test(ruby, G_FILE_TEST_IS_EXECUTABLE)) {
        why_skipped = g_strdup_printf("no %s (GEMLEAK_TEST_RUBY31)", ruby);
        return;
    }
    g_autofree char *runtime = gl_engine_find("asan")->version(NULL, NULL);  /* its runtime */
    if (runtime == NULL) {
        why_skipped = g_strdup("no AddressSanitizer runtime (Debian: libasan8)");
        return;
    }
    ruby31 = g_strdup(ruby);
    work = g_dir_make_tmp("gemleak-asan-XXXXXX", NULL);
    if (!build_probe("probe", NULL) ||
        !build_probe("recover", "-fsanitize=address -fsanitize-recover=address "
                                "-fno-omit-frame-pointer") ||
        !build_probe("halt", "-fsanitize=address -fno-omit-frame-pointer"))
        g_clear_pointer(&ruby31, g_free);
}

static void teardown_ruby31(void)
{
    if (work != NULL)
        gl_remove_tree(work);
    g_clear_pointer(&work, g_free);
    g_clear_pointer(&ruby31, g_free);
    g_clear_pointer(&why_skipped, g_free);
}

static gboolean have_ruby31(const char *test)
{
    return ready_or_skip(ruby31, test, why_skipped);
}

/* gemleak run --engine @engine --format json -o @json --format text --
 * ruby --disable-gems -I@work/@build -e @code. */
static void run_probe(Result *result, const char *engine, const char *build, const char *json,
                      const char *code)
{
    g_autofree char *include = g_strdup_printf("-I%s/%s", work, build);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    const char *argv[] = { gemleak_binary, "run", "--engine", engine, "--format", "json", "-o",
                           json, "--format", "text", "--", ruby31, "--disable-gems", include,
                           "-e", code, NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    run_command(result, NULL, env, argv);
}

/* Appends to @line the functions of @frames (a JSON array) in a target. */
static void append_target_functions(GString *line, JsonArray *frames)
{
    for (guint i = 0; frames != NULL && i < json_array_get_length(frames); i++) {
        JsonObject *frame = json_array_get_object_element(frames, i);
        if (json_object_get_boolean_member(frame, "in_target"))
            g_string_append_printf(line, " %s", json_object_get_string_member(frame, "fn"));
    }
}

/* Returns: (transfer full): each memory error of the JSON report @path as
 * "KIND: FN... | FN... | FN...; ACCESS-KIND FN..., ...", its own frames in
 * a target, then each other stack's that has any (where the block was
 * freed and allocated), then each access to the same freed block: what
 * the two engines must agree on, whatever words they use. Sorted. */
static char *errors_of(const char *path)
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
        if (!json_object_get_null_member(finding, "leak_kind"))
            continue;
        GString *line = g_string_new(json_object_get_string_member(finding, "kind"));
        g_string_append(line, ":");
        append_target_functions(line, json_object_get_array_member(finding, "frames"));
        JsonArray *stacks = json_object_get_array_member(finding, "stacks");
        for (guint j = 0; j < json_array_get_length(stacks); j++) {
            g_autoptr(GString) functions = g_string_new(NULL);
            append_target_functions(functions, json_object_get_array_member(
                                                   json_array_get_object_element(stacks, j),
                                                   "frames"));
            if (functions->len > 0)
                g_string_append_printf(line, " |%s", functions->str);
        }
        if (json_object_has_member(finding, "accesses")) {
            JsonArray *accesses = json_object_get_array_member(finding, "accesses");
            for (guint j = 0; j < json_array_get_length(accesses); j++) {
                JsonObject *access = json_array_get_object_element(accesses, j);
                g_string_append_printf(line, "%s %s", j == 0 ? ";" : ",",
                                       json_object_get_string_member(access, "kind"));
                append_target_functions(line, json_object_get_array_member(access, "frames"));
            }
        }
        g_ptr_array_add(lines, g_string_free(line, FALSE));
    }
    g_ptr_array_sort(lines, gl_compare_strings);
    GString *joined = g_string_new(NULL);
    for (guint i = 0; i < lines->len; i++)
        g_string_append_printf(joined, "%s\n", (const char *) g_ptr_array_index(lines, i));
    return g_string_free(joined, FALSE);
}

#define PROBE_ERRORS "require 'probe'; Probe.r_uaf_two_lines; Probe.r_overflow; " \
                     "$stderr.puts 'went on'"

/* The use after free (a read, then a write) and the heap overflow: the
 * same errors, in the same functions, with the same free and allocation
 * stacks, as the Valgrind engine's on the plain build; the process goes on
 * after them (built to recover); leaks are not checked on Ruby 3.1, and
 * the run says so, and what AddressSanitizer cannot see. */
START_TEST(test_asan_probe_errors_as_valgrind)
{
    if (!have_ruby31("the AddressSanitizer engine on ext/probe"))
        return;
    g_autofree char *asan_json = g_build_filename(work, "asan.json", NULL);
    g_autofree char *valgrind_json = g_build_filename(work, "valgrind.json", NULL);
    Result asan = { 0 }, valgrind = { 0 };
    run_probe(&asan, "asan", "recover", asan_json, PROBE_ERRORS);
    ck_assert_msg(asan.status == 1, "asan: status %d:\n%s", asan.status, asan.err);
    gl_assert_line(asan.err, "^gemleak: ran under AddressSanitizer \\(/.*libasan\\.so[.0-9]*\\) "
                             "\\(Ruby 3\\.1[.0-9]*; exact stacks\\)$");
    gl_assert_line(asan.err, "^gemleak: note: AddressSanitizer does not see the use of "
                             "uninitialised values: the Valgrind engine does \\(uninitialised "
                             "values with --valgrind-opt=--undef-value-errors=yes\\)$");
    gl_assert_line(asan.err, "^gemleak: note: leaks are not checked: AddressSanitizer's leak "
                             "check needs Ruby to free its own memory at exit .* the command "
                             "runs Ruby 3\\.1");
    gl_assert_line(asan.err, "^went on$");
    gl_assert_no_line(asan.err, "not built with AddressSanitizer");
    gl_assert_no_line(asan.err, "stopped at its first error");
    gl_assert_line(asan.err, "^gemleak: FAIL: 2 memory errors$");
    run_probe(&valgrind, "valgrind", "probe", valgrind_json, PROBE_ERRORS);
    ck_assert_msg(valgrind.status == 1, "valgrind: status %d:\n%s", valgrind.status,
                  valgrind.err);
    g_autofree char *by_asan = errors_of(asan_json);
    g_autofree char *by_valgrind = errors_of(valgrind_json);
    ck_assert_str_eq(by_asan, by_valgrind);
    ck_assert_str_eq(by_asan,
                     "InvalidRead: r_uaf_two_lines | r_uaf_two_lines | r_uaf_two_lines; "
                     "InvalidRead r_uaf_two_lines, InvalidWrite r_uaf_two_lines\n"
                     "InvalidWrite: r_overflow | r_overflow\n");
    result_discard(&asan);
    result_discard(&valgrind);
}
END_TEST

/* What does nothing wrong passes. */
START_TEST(test_asan_clean_probe_passes)
{
    if (!have_ruby31("a clean run under the AddressSanitizer engine"))
        return;
    g_autofree char *json = g_build_filename(work, "clean.json", NULL);
    Result r = { 0 };
    run_probe(&r, "asan", "recover", json,
              "require 'probe'; Probe.n_respond_to([Object.new]); GC.start");
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    gl_assert_no_line(r.err, "not built with AddressSanitizer");
    result_discard(&r);
}
END_TEST

/* An extension built without AddressSanitizer: its use after free goes
 * unseen, so the run never passes (INCOMPLETE, issue 26's principle: what
 * was not checked never passes), naming it, in filter of the kept
 * directory too, and how to build it. */
START_TEST(test_asan_plain_build_is_named)
{
    if (!have_ruby31("a plain build under the AddressSanitizer engine"))
        return;
    g_autofree char *json = g_build_filename(work, "plain.json", NULL);
    Result r = { 0 };
    run_probe(&r, "asan", "probe", json, "require 'probe'; Probe.r_uaf_two_lines");
    ck_assert_msg(r.status == 3, "status %d:\n%s", r.status, r.err);
    g_autofree char *named = g_strdup_printf("%s/probe/probe\\.so was not built with "
                                             "AddressSanitizer \\(no __asan_ symbol in it\\): its "
                                             "invalid reads and writes, and its reads of freed "
                                             "memory, were not checked in the process that loaded "
                                             "it$", work);
    gl_assert_line(r.err, named);
    gl_assert_line(r.err, "^gemleak: INCOMPLETE: no findings in what was checked; 1 process "
                          "that loaded an extension was not checked ");
    gl_assert_line(r.err, "^gemleak: exit status 3: an extension was not built for "
                          "AddressSanitizer ");
    gl_assert_line(r.err, "^gemleak: build it with gemleak's Rake task \\(GemLeak\\.configure "
                          "\\{ \\|c\\| c\\.engine = :asan \\}\\), or with: (\\S*/)?ruby\\S* "
                          "extconf\\.rb --with-cflags=\"\\$\\((\\S*/)?ruby\\S* -rrbconfig .* "
                          "-fsanitize=address");
    /* the run's Ruby, not the one on PATH (a user trial pasted Debian's 3.1
     * into a 3.4 run's recipe) */
    gl_assert_line(r.err, "^gemleak: build it with .* or with: /\\S*ruby\\S* extconf\\.rb ");
    g_autofree char *kept = kept_dir(r.err);
    ck_assert_ptr_nonnull(kept);
    Result again = { 0 };
    run_argv(&again, gemleak_binary, "filter", kept, NULL);
    ck_assert_msg(again.status == 3, "filter: status %d:\n%s", again.status, again.err);
    gl_assert_line(again.err, named);
    result_clear(&again);
    result_discard(&r);
}
END_TEST

/* Built without -fsanitize-recover=address: the process stops at the use
 * after free, the overflow after it never runs, and the run says that
 * what came next was not checked. */
START_TEST(test_asan_halted_process_says_so)
{
    if (!have_ruby31("a build that halts under the AddressSanitizer engine"))
        return;
    g_autofree char *json = g_build_filename(work, "halt.json", NULL);
    Result r = { 0 };
    run_probe(&r, "asan", "halt", json, PROBE_ERRORS);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_no_line(r.err, "^went on$");
    gl_assert_line(r.err, "asan\\.\\d+: process \\d+ stopped at its first error: what it would "
                          "have run next \\(the rest of its tests\\) did not run, and was not "
                          "checked");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 memory error in what could be read");
    /* the process's status is the engine's (exitcode=0), not the suite's */
    gl_assert_line(r.err, "^gemleak: exit status 1: findings fail the gate; the command's status "
                          "says nothing: AddressSanitizer stopped 1 process at its first error, "
                          "and what it would have run next did not run$");
    g_autofree char *errors = errors_of(json);
    ck_assert_str_eq(errors, "InvalidRead: r_uaf_two_lines | r_uaf_two_lines | r_uaf_two_lines; "
                             "InvalidRead r_uaf_two_lines\n");
    result_discard(&r);
}
END_TEST

/* --per-test under AddressSanitizer: a use after free happens during the
 * second of three tests, and the report names it. */
START_TEST(test_asan_per_test_names_the_test)
{
    if (!have_ruby31("--per-test under the AddressSanitizer engine"))
        return;
    g_autofree char *suite = g_build_filename(work, "uaf_test.rb", NULL);
    gl_test_write(suite,
                  "require 'probe'\n"
                  "require 'minitest/autorun'\n"
                  "class UafTest < Minitest::Test\n"
                  "  def test_a_clean; Probe.n_respond_to([Object.new]); assert true; end\n"
                  "  def test_b_uaf; Probe.r_uaf_two_lines; assert true; end\n"
                  "  def test_c_clean; Probe.n_respond_to([Object.new]); assert true; end\n"
                  "end\n", -1);
    g_autofree char *include = g_strdup_printf("-I%s/recover", work);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_autofree char *json = g_build_filename(work, "per-test.json", NULL);
    const char *argv[] = { gemleak_binary, "run", "--engine", "asan", "--per-test", "--format",
                           "json", "-o", json, "--format", "text", "--", ruby31, include, suite,
                           "--seed", "1", NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    Result r = { 0 };
    run_command(&r, NULL, env, argv);
    ck_assert_msg(r.status == 1, "status %d:\n%s\n%s", r.status, r.out, r.err);
    gl_assert_line(r.out, "^3 runs, 3 assertions, 0 failures, 0 errors");
    gl_assert_line(r.err, "^first seen in UafTest#test_b_uaf \\(.*uaf_test\\.rb:5\\)$");
    gl_assert_no_line(r.err, "test_a_clean|test_c_clean");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 memory error$");
    result_discard(&r);
}
END_TEST

/* Issue 26, item 10: SIGTERM to a run under AddressSanitizer: never a
 * pass, in any report, nor when gemleak filter reads them again. */
START_TEST(test_asan_interrupted_run_never_passes)
{
    if (!have_ruby31("an interrupted run under the AddressSanitizer engine"))
        return;
    g_autofree char *json = g_build_filename(work, "interrupted.json", NULL);
    g_autofree char *include = g_strdup_printf("-I%s/recover", work);
    const char *argv[] = { gemleak_binary, "run", "--engine", "asan", "--format", "json", "-o",
                           json, "--format", "text", "--", ruby31, "--disable-gems", include,
                           "-e", "require 'probe'; $stdout.puts 'ready'; $stdout.flush; sleep 60",
                           NULL };
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
 * frame format split on it, and the extension's frames were in no target
 * (a pass) or had garbled names. Its errors are found as where none is. */
START_TEST(test_asan_pipe_in_the_path)
{
    if (!have_ruby31("a '|' in the extension's path under the AddressSanitizer engine"))
        return;
    ck_assert_msg(build_probe("check|out", "-fsanitize=address -fsanitize-recover=address "
                                           "-fno-omit-frame-pointer"), "%s", why_skipped);
    g_autofree char *json = g_build_filename(work, "pipe.json", NULL);
    Result r = { 0 };
    run_probe(&r, "asan", "check|out", json, PROBE_ERRORS);
    ck_assert_msg(r.status == 1, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: target: .*/check\\|out/probe\\.so$");
    gl_assert_line(r.err, "^gemleak: FAIL: 2 memory errors$");
    gl_assert_line(r.err, "^ \\*r_uaf_two_lines \\(probe\\.c:\\d+\\)$");
    g_autofree char *errors = errors_of(json);
    ck_assert_str_eq(errors,
                     "InvalidRead: r_uaf_two_lines | r_uaf_two_lines | r_uaf_two_lines; "
                     "InvalidRead r_uaf_two_lines, InvalidWrite r_uaf_two_lines\n"
                     "InvalidWrite: r_overflow | r_overflow\n");
    result_discard(&r);
}
END_TEST

/* The example gem that loads its extension with require_relative
 * (fixtures/relative-gem), copied into @work/relative-gem and built there
 * by its compile task.
 * Returns: (transfer full): the copy's directory. */
static char *relative_gem(void)
{
    char *dir = g_build_filename(work, "relative-gem", NULL);
    g_autofree char *fixture = gl_test_fixture("relative-gem");
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *script = g_strdup_printf("rm -rf '%s' && cp -r '%s' '%s' && cd '%s' && "
                                              "rake -I '%s' compile >/dev/null 2>&1",
                                              dir, fixture, dir, dir, lib);
    const char *sh[] = { "sh", "-c", script, NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn(sh, NULL, &err) == 0, "building %s: %s", dir, err);
    return dir;
}

/* What the user's own build is: its bytes and when it was written. */
static char *build_state(const char *so)
{
    GStatBuf st;
    ck_assert_msg(g_stat(so, &st) == 0, "no %s", so);
    gsize length = 0;
    g_autofree char *bytes = gl_test_read(so, &length);
    g_autofree char *digest = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) bytes,
                                                          length);
    return g_strdup_printf("%s %lld.%09ld", digest, (long long) st.st_mtim.tv_sec,
                           st.st_mtim.tv_nsec);
}

/* Issue 37, item 2: c.engine = :asan, and a gem that loads its extension
 * with require_relative (not through the load path, which the task puts
 * its AddressSanitizer build first on): what the suite loads is that
 * build all the same, and `rake spec:valgrind` finds the use after free;
 * the user's own build in lib/ is as it was, also after a task
 * interrupted as Ctrl-C interrupts it. */
START_TEST(test_asan_rake_task_loads_the_instrumented_build_however_required)
{
    if (!have_ruby31("the Rake task with engine :asan on a gem that uses require_relative"))
        return;
    g_autofree char *dir = relative_gem();
    g_autofree char *so = g_build_filename(dir, "lib", "scanner", "scanner.so", NULL);
    g_autofree char *before = build_state(so);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GEMLEAK", gemleak_binary, TRUE);
    env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    const char *argv[] = { "rake", "-I", lib, "spec:valgrind", NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status != 0, "rake passed:\n%s", r.err);
    gl_assert_line(r.out, "^2 examples, 0 failures$");
    gl_assert_line(r.err, "^gemleak: ran under AddressSanitizer ");
    gl_assert_line(r.err, "^gemleak: target: .*/tmp/gemleak-asan/[0-9.]+/lib/scanner/scanner\\.so$");
    gl_assert_no_line(r.err, "not built with AddressSanitizer");
    gl_assert_line(r.err, "^ \\*scanner_first \\(ext/scanner/scanner\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^GemLeak::Error: gemleak: 1 finding \\(leaks or memory errors\\) in the "
                          "extension; the report is above$");
    g_autofree char *after = build_state(so);
    ck_assert_str_eq(after, before);
    result_clear(&r);

    /* Ctrl-C while the suite runs: the whole process group gets SIGINT
     * (started from Ruby: a shell would start it with SIGINT ignored) */
    const char *interrupt =
        "pid = spawn('rake', '-I', ARGV[0], 'spec:valgrind', 'SPEC=spec/slow_spec.rb', "
        "out: 'out.txt', err: 'err.txt', pgroup: true)\n"
        "1200.times { break if File.read('out.txt').include?(%(ready\\n)); sleep 0.5 }\n"
        "Process.kill('INT', -pid)\n"
        "Process.wait(pid)\n"
        "puts %(status #{$?.exitstatus || 128 + $?.termsig})\n";
    const char *ruby[] = { "ruby", "-e", interrupt, lib, NULL };
    Result interrupted = { 0 };
    run_command(&interrupted, dir, env, ruby);
    gl_assert_line(interrupted.out, "^status [1-9][0-9]*$");
    g_autofree char *out_path = g_build_filename(dir, "out.txt", NULL);
    g_autofree char *out = gl_test_read(out_path, NULL);
    gl_assert_line(out, "^ready$");
    g_autofree char *interrupted_state = build_state(so);
    ck_assert_str_eq(interrupted_state, before);
    result_clear(&interrupted);
    gl_remove_tree(dir);
}
END_TEST

void integration_asan(TCase *tcase)
{
    tcase_add_unchecked_fixture(tcase, setup_ruby31, teardown_ruby31);
    tcase_add_test(tcase, test_asan_probe_errors_as_valgrind);
    tcase_add_test(tcase, test_asan_clean_probe_passes);
    tcase_add_test(tcase, test_asan_plain_build_is_named);
    tcase_add_test(tcase, test_asan_halted_process_says_so);
    tcase_add_test(tcase, test_asan_per_test_names_the_test);
    tcase_add_test(tcase, test_asan_interrupted_run_never_passes);
    tcase_add_test(tcase, test_asan_pipe_in_the_path);
    tcase_add_test(tcase, test_asan_rake_task_loads_the_instrumented_build_however_required);
}
