/* Integration tests, gemleak run: what runs under Valgrind, and what is
 * kept (issue 12). */
#include <string.h>
#include <signal.h>
#include <sys/types.h>

#include "harness.h"

/* Every <exe> of the XML kept in @dir (compressed or not), one a line. */
static char *exes_in(const char *dir)
{
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && for f in *.xml*; do case $f in *.gz) zcat \"$f\";; *) cat \"$f\";; esac; "
        "done | sed -n 's:.*<exe>\\(.*\\)</exe>.*:\\1:p' | sort -u", dir);
    const char *argv[] = { "sh", "-c", script, NULL };
    char *out = NULL;
    ck_assert_int_eq(gl_test_spawn(argv, &out, NULL), 0);
    return out;
}

/* The arguments of every process Valgrind traced (but Valgrind's own), one
 * a line, sorted. */
static char *arguments_in(const char *dir)
{
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && for f in *.xml*; do case $f in *.gz) zcat \"$f\";; *) cat \"$f\";; esac | "
        "sed -n '/<argv>/,/<\\/argv>/s:.*<arg>\\(.*\\)</arg>.*:\\1:p'; done | sort",
        dir);
    const char *argv[] = { "sh", "-c", script, NULL };
    char *out = NULL;
    ck_assert_int_eq(gl_test_spawn(argv, &out, NULL), 0);
    return out;
}

/* A rake test whose task compiles the extensions first, with
 * --spare-launchers (the default): rake is a launcher and runs outside
 * Valgrind, as do extconf.rb and the compiler; what rake starts runs
 * under it (the shell and make of its build, the tests' Ruby), the tests
 * once. */
START_TEST(test_build_tools_stay_out_of_valgrind)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *gem = g_build_filename(dir, "gem", NULL);
    g_autofree char *copy = g_strdup_printf("cp -a '%s' '%s' && rm -rf '%s/tmp' '%s'/lib/tally/*.so",
                                            sample_gem, gem, gem, gem);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--keep-xml", keep, "--",
                           "rake", "-I", lib, "test", NULL };
    Result r = { 0 };
    run_command(&r, gem, NULL, argv);
    /* count_test.rb leaks; the tests pass */
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: ran under Valgrind .*; rake ran natively, as a launcher, "
                          "what it started under it \\(--trace-launchers: the launcher too\\)$");
    gl_assert_line(r.err, "copy_text");
    g_autofree char *exes = exes_in(keep);
    gl_assert_line(exes, "ruby[0-9.]*$");
    gl_assert_no_line(exes, "/(cc|gcc[-0-9]*|cc1|as|ld|collect2)$");
    g_autofree char *arguments = arguments_in(keep);
    ck_assert_msg(g_strcmp0(arguments, "") != 0, "nothing traced");
    gl_assert_line(arguments, "rake_test_loader\\.rb$");     /* the tests, once */
    gl_assert_no_line(arguments, "(/rake|extconf\\.rb)$");
    gl_assert_no_line(r.err, "truncated");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

static char **leaky_environment(void)
{
    g_autofree char *leaky = g_build_filename(ext_dir, "leaky", NULL);
    return g_environ_setenv(g_get_environ(), "RUBYLIB", leaky, TRUE);
}

/* What `bundle exec` does with a Ruby script: it loads it into its own
 * process. That process then runs the suite, and goes under Valgrind. */
START_TEST(test_a_launcher_that_hands_over_is_traced)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *bundle = write_launcher(
        dir, "bundle", "file = ARGV[1]\nARGV.replace(ARGV[2..])\n$0 = file\nKernel.load(file)\n");
    g_autofree char *suite = g_build_filename(dir, "suite.rb", NULL);
    gl_test_write(suite, "require 'leaky'\nLeaky.leak\nputs \"suite ran: #{ARGV.join(' ')}\"\n", -1);
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--keep-xml", keep, "--",
                           bundle, "exec", suite, "one", "two", NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^suite ran: one two$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    g_autofree char *arguments = arguments_in(keep);
    gl_assert_line(arguments, "/suite\\.rb$");
    gl_assert_no_line(arguments, "/bundle$");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A "launcher" that loads the extension itself is no launcher: it runs
 * again, from the start, under Valgrind, and its leak is found. */
START_TEST(test_a_launcher_that_loads_the_extension_runs_again)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *rake = write_launcher(
        dir, "rake", "$stdout.puts 'rake started'\nrequire 'leaky'\nLeaky.leak\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: rake \\(pid \\d+\\) loaded \\S+/leaky\\.so itself: it runs "
                          "again from the start, under Valgrind$");
    gl_assert_line(r.out, "^rake started$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A process forked from a launcher cannot start again: when it loads the
 * extension, what it did is not checked, and the run never passes; nor
 * does gemleak filter on the directory the run kept. */
START_TEST(test_a_launchers_fork_that_loads_the_extension_fails)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *rake = write_launcher(
        dir, "rake", "Process.wait(fork { require 'leaky' })\n"
                    "system(RbConfig.ruby, '-e', 'require %(leaky)')\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--keep-xml", keep, "--",
                           rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: process \\d+: forked from the launcher rake, it loaded "
                          "\\S+/leaky\\.so outside Valgrind: what it ran was not checked; run "
                          "again with --trace-launchers$");
    gl_assert_line(r.err, "^gemleak: INCOMPLETE: ");
    gl_assert_no_line(r.err, "^gemleak: pass");
    result_clear(&r);

    const char *again[] = { gemleak_binary, "filter", keep, NULL };
    run_command(&r, dir, NULL, again);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: process \\d+: forked from the launcher rake, it loaded "
                          "\\S+/leaky\\.so outside Valgrind: what it ran was not checked$");
    gl_assert_line(r.out, "^gemleak: INCOMPLETE: ");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A CI shard whose launcher forked a process that loaded the extension
 * outside Valgrind: its JSON report, merged, keeps the merge from passing,
 * and says why. */
START_TEST(test_a_shard_with_an_unchecked_process_never_merges_into_a_pass)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *rake = write_launcher(
        dir, "rake", "Process.wait(fork { require 'leaky' })\n"
                    "system(RbConfig.ruby, '-e', 'require %(leaky)')\n");
    g_autofree char *shard = g_build_filename(dir, "shard.json", NULL);
    g_autofree char *format = g_strconcat("json:", shard, NULL);
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--format", format, "--",
                           rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    result_clear(&r);

    const char *merge[] = { gemleak_binary, "filter", shard, NULL };
    Result merged = { 0 };
    run_command(&merged, dir, env, merge);
    ck_assert_msg(merged.status == 3, "status %d\n%s%s", merged.status, merged.out, merged.err);
    gl_assert_line(merged.out, "^gemleak: INCOMPLETE: no findings in what was checked; 1 process "
                               "that loaded an extension was not checked \\(see gemleak's "
                               "messages\\)$");
    gl_assert_line(merged.err, "^gemleak: \\S+/shard\\.json: process \\d+: forked from the launcher "
                               "rake, it loaded \\S+/leaky\\.so outside Valgrind: what it ran was "
                               "not checked; run again with --trace-launchers$");
    result_clear(&merged);
    gl_remove_tree(dir);
}
END_TEST

/* Item 13: a Ruby that puts itself under Valgrind runs again exactly as it
 * was started. `ruby -I lib -C sub`: Ruby has changed directory (and
 * expanded lib from the first one) before the helper loads. */
START_TEST(test_a_ruby_started_with_chdir_goes_under_valgrind)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *lib = g_build_filename(dir, "lib", NULL);
    g_autofree char *sub = g_build_filename(dir, "sub", NULL);
    g_mkdir_with_parents(lib, 0700);
    g_mkdir_with_parents(sub, 0700);
    g_autofree char *marker = g_build_filename(lib, "marker.rb", NULL);
    gl_test_write(marker, "MARKER = 'from lib'\n", -1);
    g_autofree char *suite = g_build_filename(sub, "suite.rb", NULL);
    gl_test_write(suite, "require 'marker'\nrequire 'leaky'\nLeaky.leak\n"
                         "puts \"suite ran in #{File.basename(Dir.pwd)}, #{MARKER}\"\n", -1);
    g_autofree char *rake = write_launcher(
        dir, "rake", "system(RbConfig.ruby, '-I', 'lib', '-C', 'sub', 'suite.rb') or abort\n"
                     "system(RbConfig.ruby, '-wCsub', '-e', 'require %(leaky); "
                     "puts %(-e ran in ) + File.basename(Dir.pwd)') or abort\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^suite ran in sub, from lib$");
    gl_assert_line(r.out, "^-e ran in sub$");
    gl_assert_no_line(r.err, "chdir");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A script piped on standard input: Ruby has read its first line (and
 * taken the shebang's switches) before the helper loads; under Valgrind
 * the same script runs, with the same $0, switches and DATA. */
START_TEST(test_a_script_on_standard_input_goes_under_valgrind)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *rake = write_launcher(
        dir, "rake",
        "script = %(#!/usr/bin/env ruby -w\nrequire 'leaky'\nLeaky.leak\n) +\n"
        "  %(puts \"piped script ran: \\#{$0} \\#{$VERBOSE.inspect} \\#{__LINE__} \\#{DATA.read.chomp}\"\n) +\n"
        "  %(__END__\nthe data\n)\n"
        "IO.popen([RbConfig.ruby], 'w') { |io| io.write(script) }\n"
        "abort('the piped script failed') unless $?.success?\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^piped script ran: - true 4 the data$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A child whose RUBYLIB is its own (Rake's ruby with a -I of its own, a
 * suite's system({"RUBYLIB" => ...})) still loads the helper, and is
 * checked. */
START_TEST(test_a_child_with_its_own_rubylib_is_checked)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *leaky = g_build_filename(ext_dir, "leaky", NULL);
    g_autofree char *code = g_strdup_printf(
        "system({'RUBYLIB' => '%s'}, RbConfig.ruby, '-e', "
        "'require %%(leaky); Leaky.leak; puts %%(child ran)') or abort('the child failed')\n",
        leaky);
    g_autofree char *rake = write_launcher(dir, "rake", code);
    const char *argv[] = { gemleak_binary, "run", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^child ran$");
    gl_assert_no_line(r.err, "cannot load such file");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A Ruby below a program Valgrind skips (here make, by the user's own
 * --trace-children-skip) stays out of Valgrind, as the program does; but
 * one that loads the project's extension runs tests: it runs again, from
 * the start, under Valgrind, as a launcher that does. */
START_TEST(test_a_ruby_below_make_that_loads_the_extension_runs_again)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *makefile = g_build_filename(dir, "Makefile", NULL);
    gl_test_write(makefile, "test:\n\t$(RUBY) suite.rb\n", -1);
    g_autofree char *suite = g_build_filename(dir, "suite.rb", NULL);
    gl_test_write(suite, "require 'leaky'\nLeaky.leak\nputs 'suite ran'\n", -1);
    /* make below the launcher, and below a Ruby under Valgrind (which
     * skips make, and runs the Ruby below it natively) */
    g_autofree char *rake = write_launcher(
        dir, "rake", "make = %(system('make', '-s', 'RUBY=#{RbConfig.ruby}') or abort('make failed'))\n"
                     "eval(make)\n"
                     "system(RbConfig.ruby, '-e', make) or abort\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--spare-launchers",
                           "--valgrind-opt=--trace-children-skip=make,*/make", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: suite\\.rb \\(pid \\d+\\) loaded \\S+/leaky\\.so itself: it "
                          "runs again from the start, under Valgrind$");
    const char *again = "/leaky.so itself: it runs again from the start, under Valgrind\n";
    guint n_again = gl_test_count(r.err, strlen(r.err), again);
    ck_assert_msg(n_again == 2, "%u restarts\n%s", n_again, r.err);
    gl_assert_line(r.out, "^suite ran$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 200 bytes");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A compiler a traced process starts runs natively, as meant: the run's
 * line says so as a fact of the run, not as a fault (issue 37, item 8:
 * "1 process ran a compiler or another build tool outside it" read as one). */
START_TEST(test_a_build_tool_run_natively_reads_as_meant)
{
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--", "sh", "-c",
                           "cc --version >/dev/null && ruby -e 'require %q(leaky)'", NULL };
    Result r = { 0 };
    run_command(&r, NULL, env, argv);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: ran under Valgrind .*; as meant, 1 process ran a build tool "
                          "natively \\(a compiler or the like, which starts no Ruby\\)$");
    gl_assert_no_line(r.err, "outside it");
    result_clear(&r);
}
END_TEST

/* Issue 37, item 4: by default a launcher runs natively (it costs most
 * under Valgrind, and runs no test), and no Ruby it starts escapes the
 * check: what it starts runs under Valgrind, with all that starts in
 * turn, so that a Ruby started with an environment of its own, with
 * unsetenv_others, or ignoring RUBYOPT (which the helper rides on) is
 * checked all the same. */
START_TEST(test_a_launcher_runs_natively_and_what_it_starts_is_checked)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *leaky = g_build_filename(ext_dir, "leaky", NULL);
    g_autofree char *code = g_strdup_printf(
        "leak = %%q(require 'leaky'; Leaky.leak)\n"
        "system('env', '-i', 'PATH=/usr/bin:/bin', RbConfig.ruby, '-I%s', '-e', leak) or abort\n"
        "system(RbConfig.ruby, '--disable=rubyopt', '-I%s', '-e', leak) or abort\n"
        "Process.wait(spawn({}, RbConfig.ruby, '-I%s', '-e', leak, unsetenv_others: true))\n"
        "puts 'the launcher ran'\n", leaky, leaky, leaky);
    g_autofree char *rake = write_launcher(dir, "rake", code);
    const char *argv[] = { gemleak_binary, "run", "--", rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^the launcher ran$");
    gl_assert_line(r.err, "^gemleak: ran under Valgrind .*; rake ran natively, as a launcher");
    gl_assert_line(r.err, "^300 bytes in 3 blocks are definitely lost \\(3 occurrences in 3 "
                          "processes\\)$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 300 bytes$");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* --trace-launchers puts the launcher under Valgrind too. */
START_TEST(test_trace_launchers)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    g_autofree char *rake = write_launcher(dir, "rake",
                                           "system(RbConfig.ruby, '-e', 'require %(leaky)')\n");
    g_auto(GStrv) env = leaky_environment();
    const char *argv[] = { gemleak_binary, "run", "--trace-launchers", "--keep-xml", keep, "--",
                           rake, NULL };
    Result r = { 0 };
    run_command(&r, dir, env, argv);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_no_line(r.err, "as a launcher");
    g_autofree char *arguments = arguments_in(keep);
    gl_assert_line(arguments, "/bin/rake$");
    gl_assert_line(arguments, "^-e$");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* gemleak SIGKILLed in a launcher run: the Valgrind the helper started
 * below the launcher (gemleak's grandchild, out of the kernel's reach
 * through PR_SET_PDEATHSIG) does not run on, nor write on in a directory
 * gemleak clean may remove. */
START_TEST(test_valgrind_below_a_launcher_dies_with_gemleak)
{
    /* A spared launcher whose Ruby child put itself under Valgrind; a
     * traced launcher (the default); a child whose environment it cleared. */
    const struct {
        const char *option;
        const char *start;
    } variants[] = {
        { "--spare-launchers", "system(RbConfig.ruby, '-e', " },
        { "--trace-launchers", "system(RbConfig.ruby, '-e', " },
        { "--trace-launchers", "system('env', '-i', RbConfig.ruby, '-e', " },
    };
    for (guint i = 0; i < G_N_ELEMENTS(variants); i++) {
        g_autofree char *dir = gl_test_tmpdir();
        g_autofree char *code = g_strconcat(variants[i].start, "'$stdout.puts Process.pid; "
                                            "$stdout.flush; sleep 600')\n", NULL);
        g_autofree char *rake = write_launcher(dir, "rake", code);
        g_auto(GStrv) env = leaky_environment();
        env = g_environ_setenv(env, "TMPDIR", dir, TRUE);  /* gemleak killed leaves its directories */
        const char *argv[] = { gemleak_binary, "run", variants[i].option, "-O", "leaky", "--", rake,
                               NULL };
        Live live;
        live_spawn(&live, argv, env);
        g_autofree char *line = live_read_out(&live);
        pid_t valgrind = (pid_t) g_ascii_strtoll(line, NULL, 10);
        ck_assert_int_gt(valgrind, 0);
        g_autofree char *exe_link = g_strdup_printf("/proc/%d/exe", (int) valgrind);
        g_autofree char *exe = g_file_read_link(exe_link, NULL);
        ck_assert_msg(exe != NULL && strstr(exe, "memcheck") != NULL, "pid %d runs %s, not Valgrind",
                      (int) valgrind, exe != NULL ? exe : "?");
        kill(live.pid, SIGKILL);
        int status = 0;
        ck_assert(live_wait(&live, 10, &status));
        ck_assert_int_eq(status, 128 + SIGKILL);
        gboolean gone = gone_within(valgrind, 10);
        if (!gone)  /* a pid that is gone may be another process's by now */
            kill(valgrind, SIGKILL);
        ck_assert_msg(gone, "%s: Valgrind (pid %d), below rake, ran on after gemleak was killed",
                      code, (int) valgrind);
        live_clear(&live);
        gl_remove_tree(dir);
    }
}
END_TEST

/* A bare ruby takes one script: given three files, it gets a loader and
 * runs them all, whatever --jobs. */
START_TEST(test_bare_ruby_runs_every_file)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *names[] = { "a", "b", "c" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *file = g_strdup_printf("%s/%s.rb", dir, names[i]);
        g_autofree char *code = g_strdup_printf("require 'leaky'\n$stdout.puts \"%s ran with "
                                                "#{ARGV.size} arguments\"\n", names[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    for (int jobs = 1; jobs <= 2; jobs++) {
        g_autofree char *n = g_strdup_printf("%d", jobs);
        const char *argv[] = { gemleak_binary, "run", "--jobs", n, "--", "ruby", "--disable-gems",
                               leaky, ":::", "a.rb", "b.rb", "c.rb", NULL };
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 0, "--jobs %d: status %d\n%s", jobs, r.status, r.err);
        gl_assert_line(r.out, "^a ran with 0 arguments$");
        gl_assert_line(r.out, "^b ran with 0 arguments$");
        gl_assert_line(r.out, "^c ran with 0 arguments$");
        gl_assert_line(r.err, "^gemleak: note: ruby takes one script and gives it the other files "
                              "as arguments: gemleak loads the files after ::: itself");
        result_clear(&r);
    }
    /* the run remembered what each file cost, for the next --jobs */
    g_autofree char *durations = g_build_filename(dir, ".gemleak-durations.json", NULL);
    g_autofree char *text = gl_test_read(durations, NULL);
    gl_assert_line(text, "\"a\\.rb\" : \\d+,?$");
    gl_assert_line(text, "\"c\\.rb\" : \\d+,?$");
    gl_remove_tree(dir);
}
END_TEST

/* Each file after ::: runs as `ruby FILE` runs it: a test file whose body
 * is under `if __FILE__ == $0` (a script that is its own test) runs that
 * body, and its leak fails the gate; the loader ran each file with $0 "-e",
 * and the run passed (issue 35, 7). */
START_TEST(test_each_file_runs_as_its_own_script)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *tests = g_build_filename(dir, "test", NULL);
    g_mkdir(tests, 0700);
    g_autofree char *file = g_build_filename(tests, "a.rb", NULL);
    gl_test_write(file, "require 'leaky'\nif __FILE__ == $0\n  Leaky.leak\n  $stdout.puts "
                        "\"main: #{$0}\"\nend\n", -1);
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *argv[] = { gemleak_binary, "run", "--", "ruby", "--disable-gems", leaky, ":::",
                           "test/a.rb", NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, argv);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^main: test/a.rb$");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A failing run keeps its XML compressed, says where and how much, and
 * gemleak filter reads it back; gemleak clean removes it. */
/* Ruby's options that take a value (--encoding UTF-8, -r set) and "--"
 * are read as ruby reads them: each file of each share runs, not the
 * first alone with the others as its arguments. */
START_TEST(test_bare_ruby_with_options_runs_every_file)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *names[] = { "a", "b", "c" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *file = g_strdup_printf("%s/%s.rb", dir, names[i]);
        g_autofree char *code = g_strdup_printf("require 'leaky'\n$stdout.puts \"%s ran with "
                                                "#{ARGV.size} arguments\"\n", names[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("%s/leaky", ext_dir);
    g_autofree char *leaky_attached = g_strconcat("-I", leaky, NULL);
    const char *with_values[] = { gemleak_binary, "run", "--jobs", "2", "--", "ruby",
                                  "--encoding", "UTF-8", "--external-encoding", "UTF-8",
                                  "-W0", "-r", "set", "--disable", "gems", "-I", leaky,
                                  ":::", "a.rb", "b.rb", "c.rb", NULL };
    const char *dashes[] = { gemleak_binary, "run", "--jobs", "2", "--", "ruby", "--disable-gems",
                             leaky_attached, "--", ":::", "a.rb", "b.rb", "c.rb", NULL };
    const char *const *commands[] = { with_values, dashes };
    for (guint c = 0; c < G_N_ELEMENTS(commands); c++) {
        Result r = { 0 };
        run_command(&r, dir, NULL, commands[c]);
        ck_assert_msg(r.status == 0, "command %u: status %d\n%s", c, r.status, r.err);
        for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
            g_autofree char *line = g_strdup_printf("^%s ran with 0 arguments$", names[i]);
            ck_assert_msg(g_regex_match_simple(line, r.out, G_REGEX_MULTILINE, 0),
                          "command %u: %s did not run:\n%s\n%s", c, names[i], r.out, r.err);
        }
        result_clear(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_kept_xml_is_compressed)
{
    g_autofree char *tmp = gl_test_tmpdir();
    Result r = { 0 };
    gemleak_run(&r, NULL, tmp, NO_ARGS, "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: Valgrind's XML is kept in \\S+ \\(\\d+(\\.\\d)? kB, "
                          "gzip-compressed from \\d+(\\.\\d)? [kM]B; read it again with: gemleak "
                          "filter \\S+; remove old runs with: gemleak clean\\)$");
    g_autofree char *kept = kept_dir(r.err);
    ck_assert_ptr_nonnull(kept);
    g_autoptr(GDir) listing = g_dir_open(kept, 0, NULL);
    const char *name;
    guint compressed = 0;
    while ((name = g_dir_read_name(listing)) != NULL) {
        ck_assert_msg(!g_str_has_suffix(name, ".xml"), "%s kept uncompressed", name);
        compressed += g_str_has_suffix(name, ".xml.gz");
    }
    ck_assert_uint_ge(compressed, 1);

    Result again = { 0 };
    run_argv(&again, gemleak_binary, "filter", kept, NULL);
    ck_assert_msg(again.status == 1, "status %d\n%s", again.status, again.err);
    gl_assert_line(again.out, "^100 bytes in 1 block is definitely lost$");
    gl_assert_line(again.out, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    result_clear(&again);

    /* clean removes it, and nothing else in TMPDIR */
    g_autofree char *other = g_build_filename(tmp, "gemleak-run-mine00", NULL);
    g_mkdir(other, 0700);
    g_autofree char *note = g_build_filename(other, "notes.txt", NULL);
    gl_test_write(note, "mine", -1);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    /* a cache of its own: clean also removes other builds' helpers there */
    g_autofree char *cache = g_build_filename(tmp, "cache", NULL);
    env = g_environ_setenv(env, "XDG_CACHE_HOME", cache, TRUE);
    const char *clean[] = { gemleak_binary, "clean", NULL };
    Result cleaned = { 0 };
    run_command(&cleaned, NULL, env, clean);
    ck_assert_int_eq(cleaned.status, 0);
    gl_assert_line(cleaned.out, "^removed .*/gemleak-run-\\w{6} \\(\\d+(\\.\\d)? kB\\)$");
    gl_assert_line(cleaned.out, "^left .*/gemleak-run-mine00: it holds notes\\.txt, which gemleak "
                                "does not write$");
    ck_assert(!g_file_test(kept, G_FILE_TEST_EXISTS));
    ck_assert(g_file_test(note, G_FILE_TEST_EXISTS));
    result_clear(&cleaned);
    result_clear(&r);
    gl_remove_tree(tmp);
}
END_TEST

/* The text report trims each stack a few frames past the extension's
 * outermost one; --frames all shows every frame. */
START_TEST(test_trimmed_text_report)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--frames", "1"), "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^  \\.\\.\\. \\d+ more frames?$");
    result_discard(&r);
    Result all = { 0 };
    gemleak_run(&all, NULL, NULL, ARGS("--frames", "all"), "require 'leaky'; Leaky.leak");
    gl_assert_no_line(all.err, "^  \\.\\.\\. \\d+ more frames?$");
    gl_assert_line(all.err, "^  (main|\\(below main\\)|__libc_start_main)");
    result_discard(&all);
}
END_TEST

static gint compare_lines(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The findings of a JSON report, as "fingerprint bytes blocks" lines, sorted. */
static char *findings_of(const char *path)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, path, NULL));
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *f = json_array_get_object_element(findings, i);
        g_ptr_array_add(lines, g_strdup_printf(
            "%s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
            json_object_get_string_member(f, "fingerprint"),
            json_object_get_int_member_with_default(f, "bytes", 0),
            json_object_get_int_member_with_default(f, "blocks", 0),
            json_object_get_int_member_with_default(f, "occurrences", 0)));
    }
    g_ptr_array_sort(lines, compare_lines);
    g_ptr_array_add(lines, NULL);
    return g_strjoinv("\n", (char **) lines->pdata);
}

/* Each CI shard runs its part and writes JSON; gemleak filter of the
 * shards' reports finds what one run of every file finds. */
START_TEST(test_shards_merge_into_one_run)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *bodies[] = { "Leaky.leak", "Leaky.clean", "Leaky.leak", "Leaky.leak_xmalloc" };
    for (guint i = 0; i < G_N_ELEMENTS(bodies); i++) {
        g_autofree char *file = g_strdup_printf("%s/t%u.rb", dir, i);
        g_autofree char *code = g_strdup_printf("require 'leaky'\n%s\n", bodies[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *files[] = { "t0.rb", "t1.rb", "t2.rb", "t3.rb" };
    const char *shards[] = { "1/2", "2/2", NULL };
    const char *env_sharded[][3] = { { "CI_NODE_INDEX=1", "CI_NODE_TOTAL=2", NULL },
                                     { "CI_NODE_INDEX=2", "CI_NODE_TOTAL=2", NULL } };
    for (guint s = 0; s < 3; s++) {
        g_autofree char *json = g_strdup_printf("json:%s/%s.json", dir,
                                                s < 2 ? (s == 0 ? "s1" : "s2") : "one");
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_ptr_array_add(argv, (gpointer) gemleak_binary);
        g_ptr_array_add(argv, (gpointer) "run");
        if (s < 2) {   /* the first by its number, the second from GitLab's variables */
            g_ptr_array_add(argv, (gpointer) "--shard");
            g_ptr_array_add(argv, (gpointer) (s == 0 ? shards[0] : "auto"));
        } else {
            /* Occurrences count processes: the whole run shares its files
             * between two processes as the shards split them, by size (the
             * shards' recorded durations would balance them otherwise). */
            g_autofree char *durations = g_build_filename(dir, ".gemleak-durations.json", NULL);
            g_unlink(durations);
            g_ptr_array_add(argv, (gpointer) "--jobs");
            g_ptr_array_add(argv, (gpointer) "2");
        }
        const char *tail[] = { "--format", "text", "--format", json, "--", "ruby",
                               "--disable-gems", leaky, ":::", NULL };
        for (const char *const *a = tail; *a != NULL; a++)
            g_ptr_array_add(argv, (gpointer) *a);
        for (guint i = 0; i < G_N_ELEMENTS(files); i++)
            g_ptr_array_add(argv, (gpointer) files[i]);
        g_ptr_array_add(argv, NULL);
        g_auto(GStrv) env = g_get_environ();
        for (guint v = 0; s == 1 && v < 2; v++) {
            g_auto(GStrv) kv = g_strsplit(env_sharded[1][v], "=", 2);
            env = g_environ_setenv(env, kv[0], kv[1], TRUE);
        }
        Result r = { 0 };
        run_command(&r, dir, env, (const char *const *) argv->pdata);
        ck_assert_msg(r.status == 1, "run %u: status %d\n%s", s, r.status, r.err);
        if (s == 1)
            gl_assert_line(r.err, "^gemleak: note: --shard auto: shard 2 of 2, from "
                                  "CI_NODE_INDEX=2 and CI_NODE_TOTAL=2 \\(GitLab\\)$");
        result_discard(&r);
    }
    g_autofree char *s1 = g_build_filename(dir, "s1.json", NULL);
    g_autofree char *s2 = g_build_filename(dir, "s2.json", NULL);
    g_autofree char *one = g_build_filename(dir, "one.json", NULL);
    g_autofree char *merged = g_build_filename(dir, "merged.json", NULL);
    g_autofree char *merged_spec = g_strconcat("json:", merged, NULL);
    Result m = { 0 };
    run_argv(&m, gemleak_binary, "filter", "--format", "text", "--format", merged_spec, s1, s2,
             NULL);
    ck_assert_msg(m.status == 1, "status %d\n%s", m.status, m.err);
    result_clear(&m);
    g_autofree char *want = findings_of(one);
    g_autofree char *got = findings_of(merged);
    ck_assert_str_eq(got, want);
    ck_assert(strchr(want, '\n') != NULL);   /* two findings at least, one from each shard */
    gl_remove_tree(dir);
}
END_TEST

void integration_commands(TCase *tcase)
{
    tcase_add_test(tcase, test_build_tools_stay_out_of_valgrind);
    tcase_add_test(tcase, test_a_launcher_that_hands_over_is_traced);
    tcase_add_test(tcase, test_a_launcher_that_loads_the_extension_runs_again);
    tcase_add_test(tcase, test_a_launchers_fork_that_loads_the_extension_fails);
    tcase_add_test(tcase, test_a_shard_with_an_unchecked_process_never_merges_into_a_pass);
    tcase_add_test(tcase, test_trace_launchers);
    tcase_add_test(tcase, test_a_launcher_runs_natively_and_what_it_starts_is_checked);
    tcase_add_test(tcase, test_a_build_tool_run_natively_reads_as_meant);
    tcase_add_test(tcase, test_a_ruby_started_with_chdir_goes_under_valgrind);
    tcase_add_test(tcase, test_a_script_on_standard_input_goes_under_valgrind);
    tcase_add_test(tcase, test_a_child_with_its_own_rubylib_is_checked);
    tcase_add_test(tcase, test_a_ruby_below_make_that_loads_the_extension_runs_again);
    tcase_add_test(tcase, test_valgrind_below_a_launcher_dies_with_gemleak);
    tcase_add_test(tcase, test_bare_ruby_runs_every_file);
    tcase_add_test(tcase, test_bare_ruby_with_options_runs_every_file);
    tcase_add_test(tcase, test_each_file_runs_as_its_own_script);
    tcase_add_test(tcase, test_kept_xml_is_compressed);
    tcase_add_test(tcase, test_trimmed_text_report);
    tcase_add_test(tcase, test_shards_merge_into_one_run);
}
