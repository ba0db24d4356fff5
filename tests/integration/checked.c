/* Integration tests, gemleak run: what was not checked never passes. */
#include "harness.h"

/* A directory with the leaky extension built in lib/, as a gem's checkout
 * has it, and suite.rb, which leaks once. Returns: (transfer full) its path. */
static char *leaky_project(void)
{
    char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_strdup_printf("mkdir -p '%s/lib' && cp '%s/leaky/leaky.so' '%s/lib/'",
                                            dir, ext_dir, dir);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autofree char *suite = g_build_filename(dir, "suite.rb", NULL);
    gl_test_write(suite, "require 'leaky'\nLeaky.leak\nputs 'suite ran'\n", -1);
    return dir;
}

/* Tests started below the tools a build uses to start programs (xargs,
 * find -exec, make, awk's system()) run under Valgrind like any other
 * Ruby, and the leak is found. */
START_TEST(test_ruby_below_build_tools_is_checked)
{
    g_autofree char *dir = leaky_project();
    g_autofree char *makefile = g_build_filename(dir, "Makefile", NULL);
    gl_test_write(makefile, "test:\n\truby -Ilib suite.rb\n", -1);
    const char *commands[] = {
        "echo suite.rb | xargs ruby -Ilib",
        "find . -name suite.rb -exec ruby -Ilib {} \\;",
        "make -s test",
        "awk 'BEGIN { system(\"ruby -Ilib suite.rb\") }'",
    };
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
        const char *argv[] = { gemleak_binary, "run", "--", "sh", "-c", commands[i], NULL };
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 1, "%s: status %d\n%s", commands[i], r.status, r.err);
        gl_assert_line(r.out, "^suite ran$");
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
        result_clear(&r);
    }
    /* Below a program the user told Valgrind to skip, a Ruby started
     * without the variable that puts it under Valgrind gets it back from
     * the library gemleak preloads (issue 26, item 4): it is checked. */
    const char *restored[] = { gemleak_binary, "run", "--valgrind-opt=--trace-children-skip=*xargs",
                               "--", "sh", "-c",
                               "echo suite.rb | xargs env -u GEMLEAK_ENGINE_COMMAND ruby -Ilib",
                               NULL };
    Result back = { 0 };
    run_command(&back, dir, NULL, restored);
    ck_assert_msg(back.status == 1, "status %d\n%s", back.status, back.err);
    gl_assert_line(back.err, "^gemleak: FAIL: 1 leak");
    result_clear(&back);
    /* A Ruby that runs outside Valgrind all the same (below a static
     * program, which no preloaded library reaches, that took gemleak's
     * variables away) and loads the extension: the run does not pass, and
     * says which process it was. */
    const char *gemleaks[] = { "GEMLEAK_ENGINE_COMMAND", "GEMLEAK_RESTORE", NULL };
    build_static_unsetenv(dir, "unset", gemleaks);
    const char *skipped[] = { gemleak_binary, "run", "--valgrind-opt=--trace-children-skip=*/unset",
                              "--", "sh", "-c", "./unset sh -c 'ruby -Ilib suite.rb; true'", NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, skipped);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: process \\d+: it loaded \\S+/lib/leaky\\.so outside "
                          "Valgrind \\(it has no XML: a program Valgrind does not trace started "
                          "it\\): what it ran was not checked$");
    gl_assert_line(r.err, "^gemleak: INCOMPLETE: ");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A launcher whose Ruby child gets an environment of its own (RUBYOPT
 * replaced or removed, everything cleared, gemleak's variables deleted):
 * by default the launcher is traced, Valgrind follows every exec whatever
 * the environment, and the child's leak is found. */
START_TEST(test_ruby_with_its_own_environment_is_checked)
{
    g_autofree char *dir = leaky_project();
    g_autofree char *lib = g_build_filename(dir, "lib", NULL);
    const char *starts[] = {
        "system({'RUBYOPT' => '-W0'}, RbConfig.ruby, '-Ilib', 'suite.rb')",
        "system({'RUBYOPT' => nil}, RbConfig.ruby, '-Ilib', 'suite.rb')",
        "system({'PATH' => ENV['PATH']}, RbConfig.ruby, '-Ilib', 'suite.rb', unsetenv_others: true)",
        "system('env', '-i', RbConfig.ruby, '-Ilib', 'suite.rb')",
        "ENV.keys.grep(/GEMLEAK/).each { |k| ENV.delete(k) }\nsystem(RbConfig.ruby, '-Ilib', 'suite.rb')",
    };
    for (guint i = 0; i < G_N_ELEMENTS(starts); i++) {
        g_autofree char *rake = write_launcher(dir, "rake", starts[i]);
        const char *argv[] = { gemleak_binary, "run", "--", rake, NULL };
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 1, "%s: status %d\n%s", starts[i], r.status, r.err);
        gl_assert_line(r.out, "^suite ran$");
        gl_assert_line(r.err, "^gemleak: FAIL: 1 leak");
        result_clear(&r);
    }
    (void) lib;
    gl_remove_tree(dir);
}
END_TEST

/* A command that runs no Ruby, or a Ruby that loads no extension, checked
 * nothing: it never passes, and a kept directory read again says the same. */
START_TEST(test_command_that_checks_nothing_never_passes)
{
    g_autofree char *dir = leaky_project();
    g_autofree char *keep = g_build_filename(dir, "xml", NULL);
    const char *const commands[][6] = {
        { "true", NULL },
        { "ruby", "-v", NULL },
        { "sh", "-c", "exit", NULL },
        { "ruby", "-e", "puts 1", NULL },
    };
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
        for (guint with_object = 0; with_object < 2; with_object++) {
            g_autoptr(GPtrArray) argv = g_ptr_array_new();
            g_ptr_array_add(argv, (gpointer) gemleak_binary);
            g_ptr_array_add(argv, (gpointer) "run");
            if (with_object) {
                g_ptr_array_add(argv, (gpointer) "-O");
                g_ptr_array_add(argv, (gpointer) "leaky");
            }
            g_ptr_array_add(argv, (gpointer) "--");
            for (const char *const *arg = commands[i]; *arg != NULL; arg++)
                g_ptr_array_add(argv, (gpointer) *arg);
            g_ptr_array_add(argv, NULL);
            Result r = { 0 };
            run_command(&r, dir, NULL, (const char *const *) argv->pdata);
            gl_assert_no_line(r.err, "^gemleak: pass");
            if (i == 3) {
                /* A Ruby ran with the helper and loaded nothing: nothing
                 * was checked (3), a target named or not. */
                ck_assert_msg(r.status == 3, "ruby -e%s: status %d\n%s",
                              with_object ? " -O" : "", r.status, r.err);
                gl_assert_line(r.err, with_object ? "^gemleak: --object leaky matches no "
                                                    "extension the run loaded: it loaded none"
                                                  : "^gemleak: nothing was checked: no Ruby "
                                                    "process of the run loaded an extension "
                                                    "of the project");
            } else {
                ck_assert_msg(r.status == 3, "%s%s: status %d\n%s", commands[i][0],
                              with_object ? " -O" : "", r.status, r.err);
                gl_assert_line(r.err, "^gemleak: nothing was checked: no process under Valgrind "
                                      "loaded \\S*leaky\\S*");
                gl_assert_line(r.err, "^gemleak: INCOMPLETE: nothing was checked");
                gl_assert_line(r.err, "^gemleak: exit status 3: nothing was checked");
            }
            result_clear(&r);
        }
    }
    const char *kept[] = { gemleak_binary, "run", "--keep-xml", keep, "--", "ruby", "-v", NULL };
    Result r = { 0 };
    run_command(&r, dir, NULL, kept);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    result_clear(&r);
    const char *again[] = { gemleak_binary, "filter", keep, NULL };
    run_command(&r, dir, NULL, again);
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^gemleak: INCOMPLETE: nothing was checked");
    result_clear(&r);
    gl_remove_tree(dir);
}
END_TEST

/* A command that fails before any Ruby starts (a compiler's error, a
 * missing gem's "command not found") is a failing command, exit status 4,
 * as when the tests fail: not Valgrind or gemleak trouble (3). That
 * nothing was checked is still said. */
START_TEST(test_command_that_fails_before_ruby_starts)
{
    g_autofree char *dir = leaky_project();
    const char *failing = "echo 'make: *** [compile] Error 1' >&2; exit 2";
    for (guint with_object = 0; with_object < 2; with_object++) {
        const char *plain[] = { gemleak_binary, "run", "--", "sh", "-c", failing, NULL };
        const char *object[] = { gemleak_binary, "run", "-O", "leaky", "--", "sh", "-c", failing, NULL };
        const char *const *argv = with_object ? object : plain;
        Result r = { 0 };
        run_command(&r, dir, NULL, argv);
        ck_assert_msg(r.status == 4, "%s: status %d\n%s", with_object ? "-O" : "", r.status, r.err);
        gl_assert_line(r.err, "^gemleak: exit status 4: the command failed \\(exit status 2\\); "
                              "nothing was checked$");
        gl_assert_line(r.err, "^gemleak: INCOMPLETE: nothing was checked");
        gl_assert_no_line(r.err, "^gemleak: pass");
        result_discard(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

void integration_checked(TCase *tcase)
{
    tcase_add_test(tcase, test_ruby_below_build_tools_is_checked);
    tcase_add_test(tcase, test_ruby_with_its_own_environment_is_checked);
    tcase_add_test(tcase, test_command_that_checks_nothing_never_passes);
    tcase_add_test(tcase, test_command_that_fails_before_ruby_starts);
}
