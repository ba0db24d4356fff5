/* Integration tests: the gem, as a user installs it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define TEST_USER "gemleak-test"

/* Runs tests/@script CLONE WORK from a fresh clone of this tree, with the
 * README's blocks in WORK (install.sh, Gemfile.line, bundle.sh,
 * Rakefile.snippet), as a user without privileges: run as root (CI), as
 * TEST_USER, made when missing, after root installed gemleak from the
 * clone with Bundler into WORK/root-gems; with HOME, GEM_HOME and TMPDIR
 * private to it and nothing of gemleak in the environment. The script prints a
 * "== " line a step, "FAILED: ..." when one does not go as the README
 * says, and "== done" at the end. */
static void run_clone_script(const char *test, const char *script_name)
{
    g_autofree char *root = g_path_get_dirname(gl_test_fixtures);
    g_autofree char *git_dir = g_build_filename(root, ".git", NULL);
    ck_assert_msg(g_file_test(git_dir, G_FILE_TEST_EXISTS),
                  "%s is not a git checkout: this test installs the gem from a clone of it", root);
    g_autofree char *work = gl_test_tmpdir();
    g_autofree char *clone = g_build_filename(work, "gemleak", NULL);
    g_autofree char *clone_cmd = g_strdup_printf("git clone -q '%s' '%s' && mkdir '%s/home' '%s/gems' '%s/tmp'",
                                                 root, clone, work, work, work);
    const char *sh_clone[] = { "sh", "-c", clone_cmd, NULL };
    g_autofree char *clone_err = NULL;
    ck_assert_msg(gl_test_spawn(sh_clone, NULL, &clone_err) == 0, "git clone: %s", clone_err);

    g_autofree char *install = readme_block("gem-install");
    g_autofree char *gemfile = readme_block("gemfile-line");
    g_autofree char *bundle = readme_block("bundle-install");
    g_autofree char *snippet = readme_block("rakefile-snippet");
    const char *names[] = { "install.sh", "Gemfile.line", "bundle.sh", "Rakefile.snippet" };
    const char *blocks[] = { install, gemfile, bundle, snippet };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *path = g_build_filename(work, names[i], NULL);
        gl_test_write(path, blocks[i], -1);
    }

    g_autofree char *home = g_build_filename(work, "home", NULL);
    g_autofree char *home_var = g_strconcat("HOME=", home, NULL);
    g_autofree char *gem_home = g_strconcat("GEM_HOME=", work, "/gems", NULL);
    g_autofree char *tmp_var = g_strconcat("TMPDIR=", work, "/tmp", NULL);
    g_autofree char *script = g_build_filename(clone, "tests", script_name, NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    if (geteuid() == 0) {
        /* Root installs gemleak from the clone with Bundler first, as a
         * trial does into the system's gems (issue 37, item 9): into
         * root-gems/, which stands for them (root's, the same commit
         * checked out, Bundler's git cache), for the script to meet. No
         * binary is built (PKG_CONFIG=false): what trips the user's
         * Bundler is what root's left in the directory. */
        g_autofree char *root_install = g_strdup_printf(
            "cd '%s' && mkdir root-gems root-project root-home && "
            "sed 's|\"https://[^\"]*\"|\"file://%s\"|' Gemfile.line >root-project/Gemfile && "
            "cd root-project && HOME='%s/root-home' GEM_HOME='%s/root-gems' PKG_CONFIG=false "
            "bundle install --quiet </dev/null", work, clone, work, work);
        const char *sh_root[] = { "sh", "-c", root_install, NULL };
        g_autofree char *root_out = NULL, *root_err = NULL;
        ck_assert_msg(gl_test_spawn(sh_root, &root_out, &root_err) == 0,
                      "Bundler as root, into root-gems/: %s%s", root_out, root_err);
        g_autofree char *prepare = g_strdup_printf(
            "id -u " TEST_USER " >/dev/null 2>&1 || useradd --system --user-group --no-create-home "
            "--home-dir /nonexistent --shell /bin/sh " TEST_USER " && chown -R " TEST_USER ": '%s' "
            "&& chown -R root: '%s/root-gems'", work, work);
        const char *sh_prepare[] = { "sh", "-c", prepare, NULL };
        g_autofree char *prepare_err = NULL;
        ck_assert_msg(gl_test_spawn(sh_prepare, NULL, &prepare_err) == 0, "making the user %s: %s",
                      TEST_USER, prepare_err);
        const char *as_user[] = { "runuser", "-u", TEST_USER, "--" };
        for (guint i = 0; i < G_N_ELEMENTS(as_user); i++)
            g_ptr_array_add(argv, (gpointer) as_user[i]);
    }
    const char *rest[] = { "env", "-i", home_var, gem_home, tmp_var, "PATH=/usr/bin:/bin",
                           "LANG=C.UTF-8", "sh", script, clone, work, NULL };
    for (guint i = 0; i < G_N_ELEMENTS(rest); i++)
        g_ptr_array_add(argv, (gpointer) rest[i]);

    Result r = { 0 };
    run_command(&r, work, NULL, (const char *const *) argv->pdata);
    /* Check's messages are short: the whole log goes to standard error */
    if (r.status != 0)
        fprintf(stderr, "%s:\n%s\n%s\n", test, r.out, r.err);
    const char *failed = strstr(r.out, "FAILED: ");
    ck_assert_msg(r.status == 0, "status %d: %.300s (the whole log is above)", r.status,
                  failed != NULL ? failed : "see the log");
    gl_assert_line(r.out, "^== done$");
    result_clear(&r);
    gl_remove_tree(work);
}

/* The gem route from a fresh clone (tests/gem_from_clone.sh): the
 * README's commands build and install the gem into a private GEM_HOME; a
 * small gem whose Rakefile is its test task and the README's snippet
 * fails on a planted leak and passes without it, with no gemleak on PATH
 * and no GEMLEAK; $GEM_HOME/bin/gemleak runs --version, filter and run;
 * Bundler into the system's gems stops as the README says; Bundler, with
 * the README's commands (its own path, no GEM_HOME), builds it from the
 * README's Gemfile line (git:, a file:// clone) and `bundle exec gemleak`
 * runs, also with path: after make; make install PREFIX=$HOME/.local
 * gives a binary and a Ruby library that work. */
START_TEST(test_gem_from_a_fresh_clone)
{
    run_clone_script("test_gem_from_a_fresh_clone", "gem_from_clone.sh");
}
END_TEST

/* Where the binary cannot be built (tests/gem_without_tools.sh: no C
 * compiler, pkg-config or GLib's tools on PATH), gem install and Bundler
 * with the README's Gemfile line succeed, and the gem's command, `bundle
 * exec gemleak` and the Rake task fail, naming the packages to install
 * (issue 29). */
START_TEST(test_gem_where_it_cannot_be_built)
{
    run_clone_script("test_gem_where_it_cannot_be_built", "gem_without_tools.sh");
}
END_TEST

/* make install for a package: everything under DESTDIR, and the Ruby
 * library told where the binary will be once the package is installed. */
START_TEST(test_make_install_destdir)
{
    g_autofree char *root = g_path_get_dirname(gl_test_fixtures);
    g_autofree char *destdir = gl_test_tmpdir();
    g_autofree char *install = g_strdup_printf(
        "make -s -C '%s' install DESTDIR='%s' PREFIX=/usr RUBYLIBDIR=/usr/lib/ruby/vendor_ruby", root,
        destdir);
    const char *make[] = { "sh", "-c", install, NULL };
    g_autofree char *make_err = NULL;
    ck_assert_msg(gl_test_spawn(make, NULL, &make_err) == 0, "make install failed:\n%s", make_err);
    const char *installed[] = { "usr/bin/gemleak", "usr/share/man/man1/gemleak.1",
                                "usr/share/gemleak/suppressions/ruby.supp",
                                "usr/lib/ruby/vendor_ruby/gemleak.rb",
                                "usr/lib/ruby/vendor_ruby/gemleak/rake.rb",
                                "usr/lib/ruby/vendor_ruby/gemleak/installed.rb" };
    for (guint i = 0; i < G_N_ELEMENTS(installed); i++) {
        g_autofree char *path = g_build_filename(destdir, installed[i], NULL);
        ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_REGULAR), "%s not installed", installed[i]);
    }
    g_autofree char *lib = g_build_filename(destdir, "usr/lib/ruby/vendor_ruby", NULL);
    const char *ruby[] = { "ruby", "-I", lib, "-rgemleak", "-e", "print GemLeak::INSTALLED_EXECUTABLE", NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, ruby);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "/usr/bin/gemleak");
    result_clear(&r);
    gl_remove_tree(destdir);
}
END_TEST

/* A copy of the gem's files that extconf.rb needs, in a new directory:
 * what it writes into the gem stays out of this tree.
 * Returns: (transfer full): the copy's root. */
static char *gem_copy(void)
{
    char *root = gl_test_tmpdir();
    g_autofree char *project = g_path_get_dirname(gl_test_fixtures);
    g_autofree char *script = g_strdup_printf(
        "cd '%s' && mkdir -p '%s/ext/gemleak' '%s/rake/lib/gemleak' && "
        "cp ext/gemleak/extconf.rb '%s/ext/gemleak/' && "
        "cp rake/lib/gemleak/unbuilt.rb '%s/rake/lib/gemleak/'", project, root, root, root, root);
    const char *sh[] = { "sh", "-c", script, NULL };
    ck_assert_int_eq(gl_test_spawn(sh, NULL, NULL), 0);
    return root;
}

/* Where a library's headers are missing, the gem installs without its
 * binary (issue 29): extconf.rb names the packages to install, writes a
 * Makefile that builds nothing, and records why in the gem, for its
 * command and Rake tasks to say when they are used. */
START_TEST(test_gem_build_names_missing_packages)
{
    g_autofree char *root = gem_copy();
    g_autofree char *ext = g_build_filename(root, "ext", "gemleak", NULL);
    g_autofree char *extconf = g_build_filename(ext, "extconf.rb", NULL);
    const char *argv[] = { "ruby", extconf, NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PKG_CONFIG", "false", TRUE);
    Result r = { 0 };
    run_command(&r, ext, env, argv);
    ck_assert_msg(r.status == 0, "status %d:\n%s", r.status, r.err);
    gl_assert_line(r.out, "^gemleak: the gemleak binary is not built: missing libxml-2\\.0, glib-2\\.0, "
                          "json-glib-1\\.0, zlib, libdw, libelf \\(pkg-config finds no \\.pc file\\)\\.$");
    gl_assert_line(r.out, "^  Debian, Ubuntu: sudo apt-get install gcc make pkg-config libxml2-dev "
                          "libglib2\\.0-dev libjson-glib-dev zlib1g-dev libdw-dev libiberty-dev$");
    gl_assert_line(r.out, "^  Fedora: +sudo dnf install gcc make pkgconf-pkg-config libxml2-devel "
                          "glib2-devel json-glib-devel zlib-devel elfutils-devel binutils-devel$");
    g_autofree char *makefile = g_build_filename(ext, "Makefile", NULL);
    ck_assert(g_file_test(makefile, G_FILE_TEST_IS_REGULAR));
    g_autofree char *record = g_build_filename(root, "libexec", "gemleak-not-built.txt", NULL);
    g_autofree char *why = gl_test_read(record, NULL);
    ck_assert_str_eq(why, "its build was missing libxml-2.0, glib-2.0, json-glib-1.0, zlib, libdw, libelf "
                          "(pkg-config finds no .pc file)\n");
    result_clear(&r);

    /* RubyGems then runs make: it succeeds, and builds nothing */
    const char *targets[] = { "clean", "all", "install" };
    for (guint i = 0; i < G_N_ELEMENTS(targets); i++) {
        const char *make[] = { "make", targets[i], NULL };
        Result m = { 0 };
        run_command(&m, ext, NULL, make);
        ck_assert_msg(m.status == 0, "make %s: %s", targets[i], m.err);
        result_clear(&m);
    }
    g_autofree char *binary = g_build_filename(root, "libexec", "gemleak", NULL);
    ck_assert(!g_file_test(binary, G_FILE_TEST_EXISTS));
    gl_remove_tree(root);
}
END_TEST

void integration_gem(TCase *tcase)
{
    tcase_add_test(tcase, test_gem_build_names_missing_packages);
    tcase_add_test(tcase, test_make_install_destdir);
    tcase_add_test(tcase, test_gem_from_a_fresh_clone);
    tcase_add_test(tcase, test_gem_where_it_cannot_be_built);
}
