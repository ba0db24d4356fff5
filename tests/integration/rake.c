/* Integration tests, Rake: the example gem's tasks, with minitest and
 * RSpec, and their options. */
#include <string.h>

#include "harness.h"

/* rake -I rake/lib ARGS... in @dir, with GEMLEAK set to @gemleak. */
static void rake_in(Result *result, const char *dir, const char *gemleak, const char *const *args)
{
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) "rake");
    g_ptr_array_add(argv, (gpointer) "-I");
    g_ptr_array_add(argv, lib);
    for (const char *const *arg = args; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GEMLEAK", gemleak, TRUE);
    run_command(result, dir, env, (const char *const *) argv->pdata);
}

/* A line of a Ruby backtrace in gemleak's library (rake/lib/gemleak.rb,
 * rake/lib/gemleak/rake.rb, ...). */
#define GEMLEAK_LIBRARY_FRAME "/gemleak(/\\w+)?\\.rb:\\d+:in "

START_TEST(test_rake_test_task_fails_on_a_leak)
{
    Result r = { 0 };
    char *dir = rake_run(&r, NULL, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(r.status != 0, "rake passed:\n%s", r.err);
    gl_assert_line(r.out, "1 runs, 1 assertions, 0 failures");
    gl_assert_line(r.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^GemLeak::Error: gemleak: 1 finding \\(leaks or memory errors\\) in the "
                          "extension; the report is above$");
    /* a failing gate is a message and a status, as a failing `rake test`
     * is: no backtrace into gemleak's library */
    gl_assert_no_line(r.err, GEMLEAK_LIBRARY_FRAME);
    forget(&r, dir);
}
END_TEST

/* A clean run passes and leaves nothing in TMPDIR: neither the task's
 * report directory nor Valgrind's XML. */
START_TEST(test_rake_test_task_passes_without_the_leaking_test)
{
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *tmpdir = g_strconcat("TMPDIR=", tmp, NULL);
    Result r = { 0 };
    char *dir = rake_run(&r, ARGS(tmpdir), ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    gl_assert_line(r.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    ck_assert_uint_eq(entries_in(tmp), 0);
    forget(&r, dir);
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_rake_failing_assertion_still_fails)
{
    Result r = { 0 };
    char *dir = rake_run(&r, NULL, ARGS("test:valgrind", "TEST=test/failing_test.rb"));
    ck_assert_int_ne(r.status, 0);
    gl_assert_line(r.out, "1 runs, 1 assertions, 1 failures");
    gl_assert_line(r.err, "^GemLeak::Error: test suite failed \\(status 1\\); gemleak found no leaks$");
    gl_assert_no_line(r.err, "^ \\*");
    gl_assert_no_line(r.err, GEMLEAK_LIBRARY_FRAME);
    forget(&r, dir);
}
END_TEST

START_TEST(test_rake_binary_name_limits_the_targets)
{
    Result both = { 0 };
    char *dir = rake_run(&both, NULL, ARGS("test:valgrind", "TEST=test/stopwords_test.rb"));
    ck_assert_int_ne(both.status, 0);
    gl_assert_line(both.err, "^ \\*stopwords_load \\(stopwords\\.c:\\d+\\)$");
    forget(&both, dir);

    Result one = { 0 };
    dir = rake_run(&one, ARGS("GEMLEAK_BINARY=tally"), ARGS("test:valgrind", "TEST=test/stopwords_test.rb"));
    ck_assert_msg(one.status == 0, "status %d:\n%s", one.status, one.err);
    gl_assert_line(one.err, "^gemleak: target: .*/tally\\.so$");
    forget(&one, dir);

    /* a name that matches nothing: gemleak stops before its report, and the
     * task says so rather than blame the suite */
    Result none = { 0 };
    dir = rake_run(&none, ARGS("GEMLEAK_BINARY=nosuchext"), ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_int_ne(none.status, 0);
    gl_assert_line(none.err, "^gemleak: --object nosuchext matches no extension the run loaded");
    gl_assert_line(none.err, "^GemLeak::Error: binary_name \"nosuchext\" names no extension the tests "
                             "loaded \\(they loaded: .*/lib/tally/tally\\.so\\): fix binary_name in your "
                             "Rakefile \\(\"tally\", as create_makefile names it\\), or leave it unset");
    gl_assert_no_line(none.err, "^GemLeak::Error: .*--help");
    forget(&none, dir);
}
END_TEST

START_TEST(test_rake_suppressions_and_reports_reach_gemleak)
{
    g_autofree char *supp_dir = gl_test_tmpdir();
    g_autofree char *supp = g_build_filename(supp_dir, "ruby.supp", NULL);
    gl_test_write(supp, "{\n   tally_count's known leak\n   Memcheck:Leak\n   ...\n   fun:tally_count\n}\n", -1);
    g_autofree char *suppressions = g_strconcat("GEMLEAK_SUPPRESSIONS=", supp_dir, NULL);
    Result silenced = { 0 };
    char *dir = rake_run(&silenced, ARGS(suppressions), ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(silenced.status == 0, "status %d:\n%s", silenced.status, silenced.err);
    forget(&silenced, dir);

    Result reported = { 0 };
    dir = rake_run(&reported, ARGS("GEMLEAK_REPORTS=junit:gemleak.xml"),
                   ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_int_ne(reported.status, 0);
    g_autofree char *junit_path = g_build_filename(dir, "gemleak.xml", NULL);
    g_autofree char *junit = gl_test_read(junit_path, NULL);
    gl_assert_line(junit, "<testcase name=\"definite leak in copy_text \\(tally\\.c:\\d+\\) via tally_count");
    forget(&reported, dir);
    gl_remove_tree(supp_dir);
}
END_TEST

/* The library away from a built tree (a gem whose binary is gone, say),
 * without GEMLEAK and with no gemleak on PATH. */
START_TEST(test_rake_without_gemleak_says_how_to_get_it)
{
    Result r = { 0 };
    g_autofree char *tmp = gl_test_tmpdir();
    g_autofree char *tmpdir = g_strconcat("TMPDIR=", tmp, NULL);
    g_autofree char *lib_copy = gl_test_tmpdir();
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *copy = g_strdup_printf("cp -R '%s/.' '%s'", lib, lib_copy);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    char *dir = rake_run_with(&r, lib_copy, ARGS("GEMLEAK", "PATH=/usr/bin:/bin", tmpdir),
                              ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_int_ne(r.status, 0);
    gl_assert_line(r.err, "^GemLeak::Error: gemleak's binary is not built: install the gemleak gem "
                          "\\(gem install, or Bundler with git: or a gem source, builds it\\), run "
                          "make in gemleak's source \\(for Bundler's path:\\), or set "
                          "GEMLEAK=/path/to/gemleak$");
    ck_assert_uint_eq(entries_in(tmp), 0);
    forget(&r, dir);
    gl_remove_tree(tmp);
    gl_remove_tree(lib_copy);
}
END_TEST

/* How often the task showed the command it ran (`gemleak run ... --
 * ruby ...`, some 600 characters) in @result's output: once, as `rake spec`
 * shows its own, however the suite or the gate ended (issue 37, item 8:
 * RSpec's task printed it again before `rake aborted!`). */
static guint commands_shown(const Result *result)
{
    const char *shown = " run --format text --format json:";
    return gl_test_count(result->out, strlen(result->out), shown) +
           gl_test_count(result->err, strlen(result->err), shown);
}

START_TEST(test_rspec_task)
{
    Result leak = { 0 };
    char *dir = rake_run(&leak, NULL, ARGS("spec:valgrind", "SPEC=spec/count_spec.rb"));
    ck_assert_int_ne(leak.status, 0);
    gl_assert_line(leak.out, "1 example, 0 failures");
    gl_assert_line(leak.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(leak.err, "^GemLeak::Error: gemleak: 1 finding ");
    ck_assert_msg(commands_shown(&leak) == 1, "the command shown %u times:\n%s\n%s",
                  commands_shown(&leak), leak.out, leak.err);
    forget(&leak, dir);

    Result clean = { 0 };
    dir = rake_run(&clean, NULL, ARGS("spec:valgrind", "SPEC=spec/frequencies_spec.rb"));
    ck_assert_msg(clean.status == 0, "status %d:\n%s", clean.status, clean.err);
    gl_assert_line(clean.out, "2 examples, 0 failures");
    forget(&clean, dir);

    Result failing = { 0 };
    dir = rake_run(&failing, NULL, ARGS("spec:valgrind", "SPEC=spec/failing_spec.rb"));
    ck_assert_int_ne(failing.status, 0);
    gl_assert_line(failing.out, "1 example, 1 failure");
    gl_assert_line(failing.err, "^GemLeak::Error: spec suite failed \\(status 1\\); gemleak found no leaks$");
    gl_assert_no_line(failing.err, GEMLEAK_LIBRARY_FRAME);
    ck_assert_msg(commands_shown(&failing) == 1, "the command shown %u times:\n%s\n%s",
                  commands_shown(&failing), failing.out, failing.err);
    forget(&failing, dir);
}
END_TEST

/* A task given a GemLeak::Configuration of its own uses it, not
 * GemLeak.configure's: the test task targets only the extension that does
 * not leak in its suite, the spec task lets the 17-byte leak pass the gate,
 * so both pass where the shared tasks fail. */
START_TEST(test_rake_task_with_its_own_configuration)
{
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "own.rake", NULL);
    gl_test_write(rake_file,
                  "only_tally = GemLeak::Configuration.new.tap { |c| c.binary_names = [\"tally\"] }\n"
                  "GemLeak::TestTask.new(only_tally, \"test:own\" => :compile) { |t| t.libs << \"test\" }\n"
                  "small_leaks_pass = GemLeak::Configuration.new.tap { |c| c.max_bytes = 100 }\n"
                  "GemLeak::RSpec::RakeTask.new(small_leaks_pass, \"spec:own\" => :compile)\n",
                  -1);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GEMLEAK", gemleak_binary, TRUE);

    Result test = { 0 };
    const char *test_argv[] = { "rake", "-I", lib, "test:own", "TEST=test/stopwords_test.rb", NULL };
    run_command(&test, dir, env, test_argv);
    ck_assert_msg(test.status == 0, "status %d:\n%s", test.status, test.err);
    gl_assert_line(test.err, "^gemleak: target: .*/tally\\.so$");
    result_discard(&test);

    Result spec = { 0 };
    const char *spec_argv[] = { "rake", "-I", lib, "spec:own", "SPEC=spec/count_spec.rb", NULL };
    run_command(&spec, dir, env, spec_argv);
    ck_assert_msg(spec.status == 0, "status %d:\n%s", spec.status, spec.err);
    gl_assert_line(spec.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(spec.out, "1 example, 0 failures");
    forget(&spec, dir);
}
END_TEST

/* The README's Rakefile snippets, pasted into the example gem below the
 * test and spec tasks it already has, add test:valgrind and spec:valgrind
 * beside them, leave `rake test` as it was, and work as the README says. */
START_TEST(test_readme_rakefile_snippet)
{
    g_autofree char *snippet = readme_block("rakefile-snippet");
    g_autofree char *rspec = readme_block("rakefile-snippet-rspec");
    /* minitest's needs no RSpec, defines no test task, leaves binary_name unset */
    ck_assert_msg(strstr(snippet, "spec") == NULL && strstr(snippet, "RSpec") == NULL, "%s", snippet);
    ck_assert_msg(strstr(snippet, "Rake::TestTask.new") == NULL, "%s", snippet);
    ck_assert_msg(g_regex_match_simple("^\\s*# c\\.binary_name = ", snippet, G_REGEX_MULTILINE, 0),
                  "%s", snippet);

    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    g_autofree char *contents = g_strconcat(
        "require \"rake/testtask\"\n"
        "require \"rspec/core/rake_task\"\n"
        "Rake::TestTask.new(test: :compile) do |t|\n"
        "  t.libs << \"test\"\n"
        "  t.test_files = FileList[\"test/frequencies_test.rb\"]\n"
        "end\n"
        "RSpec::Core::RakeTask.new(spec: :compile)\n\n",
        snippet, "\n", rspec, NULL);
    gl_test_write(rakefile, contents, -1);

    Result tasks = { 0 };
    rake_in(&tasks, dir, gemleak_binary, ARGS("-T"));
    ck_assert_msg(tasks.status == 0, "rake -T: %s", tasks.err);
    gl_assert_line(tasks.out, "^rake test:valgrind +# Run the tests under Valgrind with gemleak$");
    gl_assert_line(tasks.out, "^rake spec:valgrind +# Run RSpec code examples under Valgrind with gemleak$");
    gl_assert_line(tasks.out, "^rake test +# Run tests");
    ck_assert_msg(tasks.err[0] == '\0', "rake -T warns: %s", tasks.err);
    result_clear(&tasks);

    /* compile comes first: the extension is gone */
    g_autofree char *so = g_build_filename(dir, "lib", "tally", "tally.so", NULL);
    ck_assert_int_eq(g_unlink(so), 0);
    Result leak = { 0 };
    rake_in(&leak, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(leak.status != 0, "rake passed:\n%s", leak.err);
    gl_assert_line(leak.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    gl_assert_line(leak.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(leak.err, "^GemLeak::Error: gemleak: 1 finding ");
    result_discard(&leak);

    /* the gem's own task is untouched */
    Result plain = { 0 };
    rake_in(&plain, dir, gemleak_binary, ARGS("test"));
    ck_assert_msg(plain.status == 0, "status %d:\n%s", plain.status, plain.err);
    gl_assert_line(plain.out, "2 runs, 2 assertions, 0 failures");
    gl_assert_no_line(plain.err, "^gemleak");
    result_clear(&plain);

    Result spec = { 0 };
    rake_in(&spec, dir, gemleak_binary, ARGS("spec:valgrind", "SPEC=spec/frequencies_spec.rb"));
    ck_assert_msg(spec.status == 0, "status %d:\n%s", spec.status, spec.err);
    gl_assert_line(spec.err, "^gemleak: pass: no findings$");
    result_clear(&spec);
    gl_remove_tree(dir);
    g_free(dir);
}
END_TEST

/* rake -T names the engine that runs, set wherever GemLeak.configure
 * stands in the Rakefile (issue 29); a description the Rakefile gave is
 * its own. */
START_TEST(test_rake_descriptions_name_the_engine)
{
    g_autofree char *snippet = readme_block("rakefile-snippet");
    g_autofree char *rspec = readme_block("rakefile-snippet-rspec");
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    const char *engines[][2] = { { ":lsan", "LeakSanitizer" }, { "\"asan\"", "AddressSanitizer" },
                                 { "nil", "Valgrind" } };
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++) {
        g_autofree char *contents = g_strdup_printf(
            "%s\n%s\ndesc \"Leak checks, quickly\"\nGemLeak::TestTask.new(\"test:quick\")\n"
            "GemLeak.configure { |c| c.engine = %s }\n", snippet, rspec, engines[i][0]);
        gl_test_write(rakefile, contents, -1);
        Result tasks = { 0 };
        rake_in(&tasks, dir, gemleak_binary, ARGS("-T"));
        ck_assert_msg(tasks.status == 0, "rake -T: %s", tasks.err);
        g_autofree char *test = g_strdup_printf("^rake test:valgrind +# Run the tests under %s with "
                                                "gemleak$", engines[i][1]);
        g_autofree char *spec = g_strdup_printf("^rake spec:valgrind +# Run RSpec code examples under "
                                                "%s with gemleak$", engines[i][1]);
        gl_assert_line(tasks.out, test);
        gl_assert_line(tasks.out, spec);
        gl_assert_line(tasks.out, "^rake test:quick +# Leak checks, quickly$");
        result_clear(&tasks);
    }
    gl_remove_tree(dir);
    g_free(dir);
}
END_TEST

/* The gemleak side of the README's move from ruby_memcheck, below the
 * Rakefile's Rake::TestTask (the guide's Rakefile before): the tests of
 * `rake test`, TEST= as it takes it; ruby_memcheck's settings, a Regexp
 * among them, do what they did. */
START_TEST(test_readme_ruby_memcheck_migration)
{
    g_autofree char *block = readme_block("rakefile-migration");
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    g_autofree char *contents = g_strconcat(
        "require \"rake/testtask\"\n"
        "Rake::TestTask.new(test: :compile) do |t|\n"
        "  t.libs << \"test\"\n"
        "  t.test_files = FileList[\"test/**/*_test.rb\"]\n"
        "end\n", block, NULL);
    gl_test_write(rakefile, contents, -1);
    Result r = { 0 };
    rake_in(&r, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: test:valgrind runs 1 test file, those of rake test "
                          "\\(Rake::TestTask\\)$");
    gl_assert_line(r.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    forget(&r, dir);
}
END_TEST

/* Returns: (transfer full): the lines of @text that say how many tests
 * ran (minitest's "N runs, ...", test-unit's "N tests, ..."), without
 * their times. */
static char *tests_run(const char *text)
{
    g_autoptr(GRegex) regex = g_regex_new("^([0-9]+ runs, .*|[0-9]+ tests, [0-9]+ assertions, .*)$",
                                          G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    GString *lines = g_string_new(NULL);
    for (g_regex_match(regex, text, 0, &match); g_match_info_matches(match);
         g_match_info_next(match, NULL)) {
        g_autofree char *line = g_match_info_fetch(match, 1);
        g_string_append_printf(lines, "%s\n", line);
    }
    return g_string_free(lines, FALSE);
}

/* A project whose `rake test` is minitest's Minitest::TestTask (which
 * finds test_*.rb and *_test.rb anywhere under test/, where
 * ruby_memcheck's Rake::TestTask finds test/test*.rb): with the README's
 * migration,
 * test:valgrind runs every test file `rake test` runs, and says how many
 * (issue 29). */
START_TEST(test_readme_migration_runs_a_minitest_test_task)
{
    Result probe = { 0 };
    const char *has_task[] = { "ruby", "-e", "require 'minitest/test_task'", NULL };
    run_command(&probe, NULL, NULL, has_task);
    gboolean has = probe.status == 0;
    result_clear(&probe);
    if (!ready_or_skip(has ? "" : NULL, "the README's migration on a Minitest::TestTask",
                       "this Ruby's minitest has no minitest/test_task (minitest 5.16 and later)"))
        return;
    g_autofree char *block = readme_block("rakefile-migration");
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    const char *dropped[] = { "test/failing_test.rb", "test/stopwords_test.rb" };
    for (guint i = 0; i < G_N_ELEMENTS(dropped); i++) {
        g_autofree char *path = g_build_filename(dir, dropped[i], NULL);
        ck_assert_int_eq(g_unlink(path), 0);
    }
    /* found by Minitest::TestTask's test_*.rb, not by Rake::TestTask's default */
    g_autofree char *unit = g_build_filename(dir, "test", "unit", NULL);
    g_mkdir_with_parents(unit, 0700);
    g_autofree char *again = g_build_filename(unit, "test_frequencies_again.rb", NULL);
    gl_test_write(again,
                  "require_relative \"../test_helper\"\n"
                  "class FrequenciesAgainTest < Minitest::Test\n"
                  "  def test_again\n"
                  "    assert_equal 2, Tally.frequencies(\"a b a\")[\"a\"]\n"
                  "  end\n"
                  "end\n", -1);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    g_autofree char *contents = g_strconcat("require \"minitest/test_task\"\n"
                                            "Minitest::TestTask.create(:test)\n", block, NULL);
    gl_test_write(rakefile, contents, -1);

    Result plain = { 0 };
    rake_in(&plain, dir, gemleak_binary, ARGS("test"));
    ck_assert_msg(plain.status == 0, "rake test: status %d:\n%s\n%s", plain.status, plain.out,
                  plain.err);
    g_autofree char *expected = tests_run(plain.out);
    ck_assert_msg(strstr(expected, " runs, ") != NULL && strstr(expected, " tests, ") != NULL,
                  "rake test ran:\n%s", plain.out);
    result_clear(&plain);

    Result r = { 0 };
    rake_in(&r, dir, gemleak_binary, ARGS("test:valgrind"));
    g_autofree char *ran = tests_run(r.out);
    ck_assert_str_eq(ran, expected);
    /* test/test_helper.rb is one of them: Minitest::TestTask requires it */
    gl_assert_line(r.err, "^gemleak: test:valgrind runs 7 test files, those of rake test "
                          "\\(Minitest::TestTask\\)$");
    gl_assert_line(r.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^GemLeak::Error: gemleak: [0-9]+ findings? \\(leaks or memory errors\\) "
                          "in the extension; the report is above$");
    forget(&r, dir);
}
END_TEST

/* A Ruby script on the library of this tree: what it printed, and its status. */
static void ruby_with_library(Result *result, const char *script)
{
    g_autofree char *lib = gl_test_project_file("rake/lib");
    const char *argv[] = { "ruby", "-I", lib, "-rgemleak", "-e", script, NULL };
    run_command(result, NULL, NULL, argv);
}

/* ruby_memcheck's settings, by name, become the options that mean the
 * same; a Regexp becomes gemleak's /REGEX/ (and works: see the run), and
 * what gemleak cannot take is refused with a message. */
START_TEST(test_rake_ruby_memcheck_settings)
{
    Result mapped = { 0 };
    ruby_with_library(&mapped,
        "puts GemLeak::Configuration.new(binary_name: /\\Atally\\z/i, "
        "skipped_ruby_functions: [/\\Arb_my_(cb|hook)/, 'rb_other*'], "
        "valgrind_options: ['--num-callers=30'], valgrind_suppressions_dir: 'supp', "
        "valgrind_generate_suppressions: true, filter_all_errors: false, "
        "use_only_ruby_free_at_exit: true, valgrind: '/opt/vg/bin/valgrind --vex-iropt-register-updates=allregs-at-mem-access').arguments");
    ck_assert_msg(mapped.status == 0, "%s", mapped.err);
    ck_assert_str_eq(mapped.out,
                     "--object\n/(?i)\\Atally\\z/\n"
                     "--valgrind\n/opt/vg/bin/valgrind\n"
                     "--valgrind-opt\n--vex-iropt-register-updates=allregs-at-mem-access\n"
                     "--valgrind-opt\n--num-callers=30\n"
                     "--suppressions-dir\nsupp\n"
                     "--skip-function\n/\\Arb_my_(cb|hook)/\n--skip-function\nrb_other*\n"
                     "--all-errors\n--free-at-exit\n--gen-suppressions\n");
    result_clear(&mapped);

    /* GemLeak.config sets the shared configuration; filter_all_errors: true is gemleak's default */
    Result config = { 0 };
    ruby_with_library(&config, "GemLeak.config(binary_name: 'tally', filter_all_errors: true); "
                               "puts GemLeak.configuration.arguments");
    ck_assert_str_eq(config.out, "--object\ntally\n");
    result_clear(&config);

    /* Regexp.union and interpolation write (?-mix:...), which PCRE reads alike */
    Result union_ = { 0 };
    ruby_with_library(&union_, "puts GemLeak::Pattern.argument(Regexp.union(/\\Arb_a/i, /\\Arb_b/), 'x')");
    ck_assert_str_eq(union_.out, "/(?i-mx:\\Arb_a)|(?-mix:\\Arb_b)/\n");
    result_clear(&union_);

    /* gemleak's rule 2 needs no list: the defaults are empty, and a
     * ruby_memcheck Rakefile's DEFAULT + [...] adds just its patterns */
    Result defaults = { 0 };
    ruby_with_library(&defaults, "p GemLeak::Configuration::DEFAULT_SKIPPED_RUBY_FUNCTIONS");
    ck_assert_str_eq(defaults.out, "[]\n");
    result_clear(&defaults);

    const struct {
        const char *script;
        const char *message;
    } refused[] = {
        { "GemLeak::Configuration.new(skip_functions: [/rb_\\h+/]).arguments",
          /* (Ruby doubles the backslashes of a message it dies with) */
          "skip_functions: /rb_\\\\{1,2}h\\+/ cannot be passed to gemleak: \\\\{1,2}h is a hex digit in Ruby" },
        { "GemLeak::Configuration.new(binary_name: /tally/n).arguments",
          "binary_name: /tally/n cannot be passed to gemleak: gemleak matches names as UTF-8" },
        { "GemLeak::Configuration.new(suppressions_dir: /supp/).arguments",
          "suppressions_dir: a Regexp \\(/supp/\\) is no suppressions_dir; give a String" },
        { "GemLeak.config(temp_dir: '/tmp/x')",
          "GemLeak: temp_dir is ruby_memcheck's, not gemleak's: gemleak keeps Valgrind's XML" },
        { "GemLeak.config(binary_nmae: 'x')", "GemLeak: unknown setting binary_nmae" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(refused); i++) {
        Result r = { 0 };
        ruby_with_library(&r, refused[i].script);
        ck_assert_msg(r.status != 0, "%s passed", refused[i].script);
        gl_assert_line(r.err, refused[i].message);
        gl_assert_line(r.err, "\\(GemLeak::Error\\)");
        result_clear(&r);
    }

    /* A real run: a Regexp reaches gemleak as a pattern it matches (as a
     * string, it named no extension the suite loaded) */
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "memcheck.rake", NULL);
    gl_test_write(rake_file, "GemLeak.config(binary_name: /\\Atall/)\n", -1);
    Result run = { 0 };
    rake_in(&run, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_int_ne(run.status, 0);
    gl_assert_line(run.err, "^gemleak: target: .*/lib/tally/tally\\.so$");
    gl_assert_line(run.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(run.err, "^GemLeak::Error: gemleak: 1 finding ");
    forget(&run, dir);
}
END_TEST

/* Rake adds a second definition's actions to the first's: with
 * ruby_memcheck's test:valgrind still there, the suite would run twice.
 * Defined before gemleak's, it stays alone; defined after, the run says so. */
START_TEST(test_rake_task_defined_twice_warns)
{
    g_autofree char *snippet = readme_block("rakefile-snippet");
    const char *other = "namespace(:test) { task(:valgrind) { puts \"the other library's task\" } }\n";
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rakefile = g_build_filename(dir, "Rakefile", NULL);
    g_autofree char *before = g_strconcat(other, snippet, NULL);
    gl_test_write(rakefile, before, -1);
    Result first = { 0 };
    rake_in(&first, dir, gemleak_binary, ARGS("test:valgrind"));
    ck_assert_msg(first.status == 0, "status %d:\n%s", first.status, first.err);
    gl_assert_line(first.err, "^gemleak: rake task test:valgrind is already defined \\(by ruby_memcheck\\?\\); "
                              "gemleak leaves it alone rather than run the suite twice");
    gl_assert_line(first.out, "^the other library's task$");
    gl_assert_no_line(first.err, "^gemleak: ran under Valgrind");
    result_clear(&first);

    /* a gemleak that only runs the command, to see the order of things */
    g_autofree char *fake = g_build_filename(dir, "fake-gemleak", NULL);
    gl_test_write(fake, "#!/bin/sh\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n", -1);
    g_chmod(fake, 0755);
    g_autofree char *after = g_strconcat(snippet, other, NULL);
    gl_test_write(rakefile, after, -1);
    /* and a Rakefile without a compile task (the extension is built) */
    g_autofree char *compile = g_build_filename(dir, "rakelib", "compile.rake", NULL);
    ck_assert_int_eq(g_unlink(compile), 0);
    Result second = { 0 };
    rake_in(&second, dir, fake, ARGS("test:valgrind", "TEST=test/frequencies_test.rb"));
    ck_assert_msg(second.status == 0, "status %d:\n%s", second.status, second.err);
    gl_assert_line(second.err, "^gemleak: rake task test:valgrind also runs 1 action\\(s\\) that another "
                               "library \\(ruby_memcheck\\?\\) added");
    gl_assert_line(second.out, "^the other library's task$");
    result_clear(&second);
    gl_remove_tree(dir);
    g_free(dir);
}
END_TEST

/* c.write_baseline adopts what the suite leaks: the task passes, the file
 * holds the finding. */
START_TEST(test_rake_write_baseline)
{
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("--version"));
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "baseline.rake", NULL);
    gl_test_write(rake_file, "GemLeak.configure { |c| c.write_baseline = \".gemleak-baseline.json\" }\n", -1);
    Result r = { 0 };
    rake_in(&r, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^gemleak: pass: 1 finding written to the baseline \\.gemleak-baseline\\.json ");
    g_autofree char *baseline = g_build_filename(dir, ".gemleak-baseline.json", NULL);
    g_autofree char *json = gl_test_read(baseline, NULL);
    ck_assert_uint_eq(gl_test_count(json, strlen(json), "\"fingerprint\""), 1);
    forget(&r, dir);
}
END_TEST

/* The pids of every finding of the JSON report at @path, "," separated. */
static char *report_pids(const char *path)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert_msg(json_parser_load_from_file(parser, path, NULL), "%s", path);
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    GString *pids = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonArray *list = json_object_get_array_member(json_array_get_object_element(findings, i),
                                                       "pids");
        for (guint p = 0; p < json_array_get_length(list); p++)
            g_string_append_printf(pids, "%" G_GINT64_FORMAT ",",
                                   json_array_get_int_element(list, p));
    }
    return g_string_free(pids, FALSE);
}

/* Issue 20: a rake-compiler build (the extension built in tmp/, its source
 * in ext/) is named ext/tally/tally.c:13 by every report, text too; and
 * the baseline the task writes, written again after the checkout moved
 * (and was built again there, as a CI checkout is), by other processes, is
 * the same file, with no absolute path and no pid. */
START_TEST(test_rake_compiler_paths_and_baselines)
{
    Result setup = { 0 };
    char *dir = rake_run(&setup, NULL, ARGS("clean"));
    ck_assert_msg(setup.status == 0, "rake clean: %s", setup.err);
    result_clear(&setup);
    g_autofree char *rake_file = g_build_filename(dir, "rakelib", "baseline.rake", NULL);
    gl_test_write(rake_file,
                  "GemLeak.configure do |c|\n"
                  "  c.write_baseline = \".gemleak-baseline.json\"\n"
                  "  c.reports = %w[json:r.json sarif:r.sarif junit:r.xml github:r.github]\n"
                  "end\n", -1);
    Result r = { 0 };
    rake_in(&r, dir, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.err, "^ \\*copy_text \\(ext/tally/tally\\.c:13\\)$");
    gl_assert_line(r.err, "^ \\*tally_count \\(ext/tally/tally\\.c:\\d+\\)$");
    gl_assert_no_line(r.err, "\\(tally\\.c:");
    static const struct {
        const char *file;
        const char *line;
    } named[] = {
        { "r.json", "\"file\" : \"ext/tally/tally\\.c\",\\s+\"line\" : 13," },
        { "r.sarif", "\"uri\" : \"ext/tally/tally\\.c\"" },
        { "r.xml", "<testcase name=\"definite leak in copy_text \\(ext/tally/tally\\.c:13\\) via "
                   "tally_count \\(ext/tally/tally\\.c:\\d+\\)\"" },
        { "r.github", "^::(error|warning) file=ext/tally/tally\\.c,line=13,title=gemleak%3A definite leak in "
                      "copy_text \\(ext/tally/tally\\.c%3A13\\)" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(named); i++) {
        g_autofree char *path = g_build_filename(dir, named[i].file, NULL);
        g_autofree char *text = gl_test_read(path, NULL);
        ck_assert_msg(g_regex_match_simple(named[i].line, text, G_REGEX_MULTILINE, 0),
                      "%s: no /%s/ in:\n%.3000s", named[i].file, named[i].line, text);
        ck_assert_msg(strstr(text, "(tally.c:") == NULL && strstr(text, "(tally.c%3A") == NULL,
                      "%s names tally.c alone:\n%.3000s", named[i].file, text);
    }
    g_autofree char *json = g_build_filename(dir, "r.json", NULL);
    g_autofree char *first_pids = report_pids(json);
    g_autofree char *baseline = g_build_filename(dir, ".gemleak-baseline.json", NULL);
    gsize n_first = 0;
    g_autofree char *first = gl_test_read(baseline, &n_first);
    result_clear(&r);

    /* the checkout elsewhere, built there */
    g_autofree char *parent = gl_test_tmpdir();
    g_autofree char *moved = g_build_filename(parent, "elsewhere", NULL);
    ck_assert_int_eq(g_rename(dir, moved), 0);
    Result clean = { 0 };
    rake_in(&clean, moved, gemleak_binary, ARGS("clean"));
    ck_assert_int_eq(clean.status, 0);
    result_clear(&clean);
    Result again = { 0 };
    rake_in(&again, moved, gemleak_binary, ARGS("test:valgrind", "TEST=test/count_test.rb"));
    ck_assert_msg(again.status == 0, "status %d:\n%s", again.status, again.err);
    gl_assert_line(again.err, "^ \\*copy_text \\(ext/tally/tally\\.c:13\\)$");
    g_autofree char *moved_json = g_build_filename(moved, "r.json", NULL);
    g_autofree char *second_pids = report_pids(moved_json);
    ck_assert_str_ne(first_pids, second_pids);
    g_autofree char *moved_baseline = g_build_filename(moved, ".gemleak-baseline.json", NULL);
    gsize n_second = 0;
    g_autofree char *second = gl_test_read(moved_baseline, &n_second);
    ck_assert_msg(n_first == n_second && memcmp(first, second, n_first) == 0,
                  "two baselines of the same leaks differ:\n%s\n%s", first, second);
    ck_assert_msg(strstr(first, "\"/") == NULL && strstr(first, dir) == NULL &&
                      strstr(first, parent) == NULL,
                  "an absolute path:\n%s", first);
    g_auto(GStrv) pids = g_strsplit(second_pids, ",", -1);
    for (char **pid = pids; *pid != NULL && **pid != '\0'; pid++) {
        g_autofree char *number = g_strdup_printf(" %s", *pid);
        ck_assert_msg(strstr(first, number) == NULL, "a pid, %s:\n%s", *pid, first);
    }
    gl_assert_line(first, "^      \"location\" : \"ext/tally/tally\\.c:13\",$");
    gl_assert_line(first, "^        \"copy_text\",$");
    ck_assert_uint_lt(n_first, 600);
    /* the README shows this very file */
    g_autofree char *shown = readme_block("baseline-example");
    ck_assert_msg(strcmp(shown, first) == 0, "the README shows:\n%s\nthe run wrote:\n%s", shown,
                  first);
    result_clear(&again);
    gl_remove_tree(parent);
    g_free(dir);
}
END_TEST

/* A failing test and a leak in one run: the task's message names both. */
START_TEST(test_rake_failing_suite_and_leak_both_named)
{
    Result r = { 0 };
    char *dir = rake_run(&r, NULL, ARGS("test:valgrind", "TEST=test/{count,failing}_test.rb"));
    ck_assert_int_ne(r.status, 0);
    gl_assert_line(r.out, "2 runs, 2 assertions, 1 failures");
    gl_assert_line(r.err, "^ \\*tally_count \\(tally\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^GemLeak::Error: test suite failed \\(status 1\\), and gemleak found 1 finding "
                          "\\(leaks or memory errors\\) in the extension: both are reported above$");
    forget(&r, dir);
}
END_TEST

void integration_minitest(TCase *tcase)
{
    tcase_add_test(tcase, test_rake_test_task_fails_on_a_leak);
    tcase_add_test(tcase, test_rake_test_task_passes_without_the_leaking_test);
    tcase_add_test(tcase, test_rake_failing_assertion_still_fails);
    tcase_add_test(tcase, test_rake_binary_name_limits_the_targets);
    tcase_add_test(tcase, test_readme_rakefile_snippet);
    tcase_add_test(tcase, test_rake_descriptions_name_the_engine);
    tcase_add_test(tcase, test_rake_failing_suite_and_leak_both_named);
    tcase_add_test(tcase, test_rake_write_baseline);
    tcase_add_test(tcase, test_rake_compiler_paths_and_baselines);
}

void integration_rspec(TCase *tcase)
{
    tcase_add_test(tcase, test_rspec_task);
    tcase_add_test(tcase, test_rake_suppressions_and_reports_reach_gemleak);
    tcase_add_test(tcase, test_rake_without_gemleak_says_how_to_get_it);
    tcase_add_test(tcase, test_rake_task_with_its_own_configuration);
    tcase_add_test(tcase, test_readme_ruby_memcheck_migration);
    tcase_add_test(tcase, test_readme_migration_runs_a_minitest_test_task);
    tcase_add_test(tcase, test_rake_ruby_memcheck_settings);
    tcase_add_test(tcase, test_rake_task_defined_twice_warns);
}
