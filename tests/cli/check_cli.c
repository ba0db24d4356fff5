/* src/cli/cli.c: the command line as a user meets it: the commands, their
 * help, usage errors, and what the user typed coming back escaped. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/report/report.h"
#include "../../src/cli/cli_int.h"

#include <glib.h>
#include <string.h>

#define RUN(run, ...) GlTestRun run = { 0 }; gl_test_gemleak(&run, __VA_ARGS__, NULL)

START_TEST(test_version_and_help)
{
    RUN(version, "--version");
    ck_assert_int_eq(version.status, 0);
    gl_assert_line(version.out, "^gemleak \\d+\\.\\d+\\.\\d+$");
    gl_test_run_clear(&version);

    RUN(help, "filter", "--help");
    ck_assert_int_eq(help.status, 0);
    gl_assert_line(help.out, "^Usage:$");
    gl_assert_line(help.out, "^  gemleak filter \\[OPTION.*\\] FILE\\|DIR\\|-\\.\\.\\.$");
    gl_assert_line(help.out, "--object=PATTERN");
    gl_assert_line(help.out, "^Exit status:$");
    gl_assert_line(help.out, "^  3  an input could not be read");
    /* what filter reads is the input seam's table, one item a format, the
     * one that reads what no other claims first */
    gl_assert_line(help.out, "^Reads, each file as its first bytes say .*\n"
                             "that one of these reads, regular files only\\):\n"
                             "  - Valgrind memcheck XML: .*\n    .*\n"
                             "  - gemleak's own JSON reports .*\n    .*\n"
                             "  - LeakSanitizer and AddressSanitizer reports .*\n    .*\n"
                             "and reports only the errors that belong to the target extension");
    gl_test_run_clear(&help);

    /* run's help heads its own options and the report options it shares
     * with filter, in that order. */
    RUN(run_help, "run", "--help");
    ck_assert_int_eq(run_help.status, 0);
    gl_assert_line(run_help.out, "^Run options:\n  --valgrind=PATH ");
    gl_assert_line(run_help.out, "^Report options:\n  -O, --object=PATTERN ");
    /* run's exit statuses tell the gate from the command */
    gl_assert_line(run_help.out, "^  4  the command failed \\(a non-zero status, or killed by a signal\\), and$");
    gl_assert_line(run_help.out, "^  5  findings fail the gate, and the command failed too$");
    gl_assert_no_line(run_help.out, "Application Options");
    /* --engine's help is the engine table's: each engine, the first the
     * default, with what it checks */
    gl_assert_line(run_help.out, "^  --engine=ENGINE +Check with ENGINE: valgrind \\(the default: "
                                 "leaks and memory errors\\), lsan \\(LeakSanitizer [^)]*\\) or "
                                 "asan \\(AddressSanitizer: [^)]*\\)$");
    gl_test_run_clear(&run_help);

    RUN(general, "--help");
    ck_assert_int_eq(general.status, 0);
    gl_assert_line(general.out, "^  filter ");
    gl_test_run_clear(&general);
}
END_TEST

/* doc/guide.md's walk-through of adding an engine is the tree's: five
 * files, each there; and the one that tells the engines apart in run's
 * help names each engine of the table. */
START_TEST(test_guide_names_the_files_an_engine_touches)
{
    gl_test_guide_files("**Adding an engine** touches these five files", 5, "NAME");
    g_autofree char *options_path = gl_test_project_file("src/cli/run_options.c");
    g_autofree char *options = gl_test_read(options_path, NULL);
    const char *engines[] = { "Valgrind", "--engine lsan", "--engine asan" };
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++)
        ck_assert_msg(strstr(options, engines[i]) != NULL, "src/cli/run_options.c does not name %s",
                      engines[i]);
}
END_TEST

/* The commands are cli.c's table: each one it lists runs (its --help),
 * the general help lists it with its summary, and `gemleak help` takes
 * each but help itself as a topic. */
START_TEST(test_commands_are_the_table)
{
    RUN(general, "--help");
    ck_assert_int_eq(general.status, 0);
    /* no line of the help wider than a terminal; a summary wrapped, on
     * lines of its own indented under its start */
    gl_assert_no_line(general.out, "^.{80,}$");
    g_autoptr(GRegex) continued = g_regex_new("\n {11}", 0, 0, NULL);
    g_autofree char *unwrapped = g_regex_replace_literal(continued, general.out, -1, 0, " ", 0,
                                                         NULL);
    guint n = 0;
    for (const Command *command = gl_cli_commands(); command->name != NULL; command++, n++) {
        g_autofree char *listed = g_strdup_printf("\n  %-9s%s\n", command->name,
                                                  command->summary);
        ck_assert_msg(strstr(unwrapped, listed) != NULL, "the help does not list %s: %s",
                      command->name, general.out);
        if (command->aside)
            continue;
        g_autofree char *usage = g_strdup_printf("\n  gemleak %s %s\n", command->name,
                                                 command->usage);
        ck_assert_msg(strstr(general.out, usage) != NULL, "no usage line for %s: %s",
                      command->name, general.out);
        RUN(help, command->name, "--help");
        ck_assert_msg(help.status == 0, "gemleak %s --help: status %d: %s", command->name,
                      help.status, help.err);
        gl_test_run_clear(&help);
        RUN(topic, "help", command->name);
        ck_assert_msg(topic.status == 0, "gemleak help %s: status %d: %s", command->name,
                      topic.status, topic.err);
        gl_test_run_clear(&topic);
    }
    ck_assert_uint_ge(n, 4);
    gl_test_run_clear(&general);
}
END_TEST

/* Returns: (transfer full): the section @name of gemleak(1), as roff. */
static char *manual_section(const char *name)
{
    g_autofree char *path = gl_test_project_file("man/gemleak.1");
    g_autofree char *page = gl_test_read(path, NULL);
    g_autofree char *heading = g_strdup_printf("\n.SH %s\n", name);
    const char *start = strstr(page, heading);
    ck_assert_msg(start != NULL, "gemleak(1) has no section %s", name);
    const char *end = strstr(start + 1, "\n.SH ");
    return g_strndup(start, end != NULL ? (gsize) (end - start) : strlen(start));
}

/* A new format is its file, a line in report.c's list, its test and the
 * manual (doc/guide.md): --format's help and its error take the list's
 * names, and gemleak(1) tells each in FORMATS. */
START_TEST(test_every_format_is_in_the_help_and_the_manual)
{
    RUN(help, "filter", "--help");
    ck_assert_int_eq(help.status, 0);
    g_autofree char *formats = manual_section("FORMATS");
    guint n = 0;
    for (const GlReporter *const *r = gl_reporters(); *r != NULL; r++, n++) {
        g_autofree char *in_help = g_strdup_printf("^  -f, --format=FORMAT\\[:FILE\\] +Report "
                                                   "format: ([a-z]+, )*%s[,;]", (*r)->name);
        gl_assert_line(help.out, in_help);
        g_autofree char *entry = g_strdup_printf("\n.TP\n.B %s\n", (*r)->name);
        ck_assert_msg(strstr(formats, entry) != NULL, "gemleak(1), FORMATS, does not tell "
                      "--format %s", (*r)->name);
    }
    ck_assert_uint_ge(n, 6);
    /* the help names no format the list does not have */
    g_autofree char *listed = g_strdup_printf("Report format: %s; ", gl_reporter_names());
    ck_assert_msg(strstr(help.out, listed) != NULL, "--format's help is not the list's: %s",
                  help.out);
    gl_test_run_clear(&help);

    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    RUN(unknown, "filter", "--format", "yaml", leak);
    ck_assert_int_eq(unknown.status, GL_EXIT_USAGE);
    g_autofree char *error = g_strdup_printf("gemleak: unknown format 'yaml' (use %s)\n",
                                             gl_reporter_names());
    ck_assert_msg(strstr(unknown.err, error) != NULL, "%s", unknown.err);
    gl_test_run_clear(&unknown);
}
END_TEST

/* doc/guide.md's walk-through of adding a report format is the tree's. */
START_TEST(test_guide_names_the_files_a_format_touches)
{
    gl_test_guide_files("**Adding a report format** touches these four files", 4, "NAME");
}
END_TEST

START_TEST(test_usage_errors_exit_2)
{
    const char *const cases[][6] = {
        { "frobnicate", NULL },
        { "filter", NULL },
        { "filter", "--bogus", "x.xml", NULL },
        { "filter", "-O", "leaky", "--format", "yaml", "x.xml" },
        { "filter", "-O", "leaky", "--leak-kinds", "lost", "x.xml" },
        { "filter", "-O", "leaky", "--fail-on", "sometimes", "x.xml" },
        { "filter", "-O", "/[leaky/", "x.xml", NULL },
        { "filter", "-O", "leaky", "--skip-function", "/rb_(/", "x.xml" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GlTestRun run = { 0 };
        g_autofree char **args = g_new0(char *, 7);
        for (guint j = 0; j < 6 && cases[i][j] != NULL; j++)
            args[j] = (char *) cases[i][j];
        gl_test_gemleak_argv(&run, (const char *const *) args);
        ck_assert_msg(run.status == GL_EXIT_USAGE, "case %u: status %d, err %s", i, run.status,
                      run.err);
        gl_assert_line(run.err, "^gemleak: ");
        gl_test_run_clear(&run);
    }
    GlTestRun none = { 0 };
    gl_test_gemleak(&none, NULL, NULL);
    ck_assert_int_eq(none.status, 2);
    gl_assert_line(none.err, "^Usage:$");
    gl_test_run_clear(&none);
}
END_TEST

/* What the user typed comes back in gemleak's messages escaped too: an
 * unknown command, an option's value, a file that cannot be read. */
START_TEST(test_messages_escape_what_the_user_typed)
{
    RUN(command, "\033[2Jforged");
    ck_assert_int_eq(command.status, 2);
    gl_assert_no_raw_control(command.err);
    gl_assert_line(command.err, "^gemleak: unknown command '\\\\x1b\\[2Jforged'$");
    gl_test_run_clear(&command);

    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    RUN(fail_on, "filter", "--fail-on", "x\nforged\033[0m", leak);
    ck_assert_int_eq(fail_on.status, 2);
    gl_assert_no_raw_control(fail_on.err);
    gl_assert_line(fail_on.err, "^gemleak: --fail-on: unknown kind 'x\\\\nforged\\\\x1b\\[0m'");
    gl_test_run_clear(&fail_on);

    RUN(baseline, "filter", "--baseline", "/nonexistent/b\nforged\033[0m.json", leak);
    ck_assert_int_eq(baseline.status, 2);
    gl_assert_no_raw_control(baseline.err);
    gl_assert_line(baseline.err, "^gemleak: --baseline /nonexistent/b\\\\nforged\\\\x1b\\[0m\\.json: ");
    gl_test_run_clear(&baseline);

    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *report = g_build_filename(dir, "no\033[2J/r.json", NULL);
    RUN(sink, "filter", "--format", "json", "-o", report, leak);
    ck_assert_int_ne(sink.status, 0);
    gl_assert_no_raw_control(sink.err);
    gl_assert_line(sink.err, "no\\\\x1b\\[2J/r\\.json");
    gl_test_run_clear(&sink);
    gl_remove_tree(dir);
}
END_TEST

/* Returns: (transfer full): what gl_cli_say_exact() says of @exact. */
static char *said_of_exact(const GlExactResult *exact)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(out);
    gl_cli_say_exact(exact, out);
    fclose(out);
    return text;
}

/* The exact pass's line speaks of one block as one (a trial on a real
 * gem read "the tests that allocated them ran again ... 1 of the 1 got
 * their whole stack"), and of several as several. */
START_TEST(test_the_exact_pass_line_agrees_in_number)
{
    GlExactResult one = { .ran = 1, .filtered = TRUE, .sites = 1, .blocks = 1, .given = 1,
                          .records = 1, .seconds = 0.4 };
    g_autofree char *single = said_of_exact(&one);
    ck_assert_str_eq(single, "gemleak: exact stacks: the fast pass had only part of the stack of 1 "
                             "leaked block; the tests that allocated it ran again (0.4 s, output "
                             "discarded, status ignored), unwinding exactly at 1 allocation site "
                             "only: it got its whole stack\n");
    one.given = 0;
    g_autofree char *lost = said_of_exact(&one);
    ck_assert_msg(strstr(lost, ": it did not get its whole stack; the run again did not lose it: "
                               "it keeps the fast stack, cut short, which never passes\n") != NULL,
                  "%s", lost);
    GlExactResult two = { .ran = 1, .filtered = TRUE, .sites = 1, .blocks = 2, .given = 1,
                          .records = 1, .seconds = 0.4 };
    g_autofree char *several = said_of_exact(&two);
    ck_assert_msg(strstr(several, "of 2 leaked blocks; the tests that allocated them ran again") !=
                      NULL && strstr(several, ": 1 of the 2 got their whole stack; the run again "
                                              "did not lose the other one: it keeps the fast "
                                              "stack, cut short, which never passes\n") != NULL,
                  "%s", several);
}
END_TEST

/* The manual where `man gemleak` finds nothing (a gem install puts no
 * page where man looks; a slim container has no man): `gemleak help`
 * shows gemleak(1) as text, whole or a part (issue 37, item 8). */
START_TEST(test_help_shows_the_manual)
{
    RUN(rules, "help", "rules");
    ck_assert_msg(rules.status == 0, "status %d: %s", rules.status, rules.err);
    gl_assert_line(rules.out, "^RULES$");
    gl_assert_line(rules.out, "^       gemleak reads each error's stacks from the innermost frame");
    gl_assert_line(rules.out, "^       1.  Not in a target. A leak whose allocation stack never");
    gl_assert_line(rules.out, "ruby_xmalloc,\\s+ruby_xmalloc2,\\s+ruby_xcalloc,");
    gl_assert_no_line(rules.out, "^(OPTIONS|RUN|NAME)$");
    /* text, not roff: no request, no font escape, nothing wider than a terminal */
    gl_assert_no_line(rules.out, "^\\.[A-Za-z]");
    gl_assert_no_line(rules.out, "\\\\f[BIRP]|\\\\-|\\\\\\(");
    gl_assert_no_line(rules.out, "^.{81,}$");
    gl_test_run_clear(&rules);

    /* a command: the options it takes, then the section that tells it */
    RUN(run, "help", "run");
    ck_assert_int_eq(run.status, 0);
    gl_assert_line(run.out, "^OPTIONS$");
    gl_assert_line(run.out, "^       -O PATTERN, --object=PATTERN$");
    gl_assert_line(run.out, "^   run$");
    gl_assert_line(run.out, "^       --engine=ENGINE$");
    gl_assert_line(run.out, "^RUN$");
    gl_assert_line(run.out, "^       gemleak run starts valgrind --tool=memcheck --xml=yes");
    gl_assert_no_line(run.out, "^RULES$");
    gl_test_run_clear(&run);

    RUN(filter, "help", "filter");
    ck_assert_int_eq(filter.status, 0);
    gl_assert_line(filter.out, "^       -O PATTERN, --object=PATTERN$");
    gl_assert_no_line(filter.out, "^       --engine=ENGINE$");
    gl_test_run_clear(&filter);

    /* any section, by its name as the page spells it or with dashes */
    RUN(per_test, "help", "per-test");
    ck_assert_int_eq(per_test.status, 0);
    gl_assert_line(per_test.out, "^PER TEST$");
    gl_test_run_clear(&per_test);

    RUN(whole, "help");
    ck_assert_int_eq(whole.status, 0);
    gl_assert_line(whole.out, "^NAME$");
    gl_assert_line(whole.out, "^       gemleak - find the real memory leaks");
    gl_assert_line(whole.out, "^SEE ALSO$");
    gl_test_run_clear(&whole);

    RUN(unknown, "help", "nosuch");
    ck_assert_int_eq(unknown.status, GL_EXIT_USAGE);
    gl_assert_line(unknown.err, "^gemleak: help: no part of the manual is called 'nosuch': "
                                "filter, run, clean, name, .*, rules, .*, per-test, .*, see-also$");
    gl_test_run_clear(&unknown);

    /* the general help points to it */
    RUN(general, "--help");
    gl_assert_line(general.out, "^\\[run\\|filter\\|rules\\|\\.\\.\\.\\]' shows the manual");
    gl_test_run_clear(&general);
}
END_TEST

Suite *gl_cli_suite(void)
{
    Suite *suite = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_add_test(tc, test_version_and_help);
    tcase_add_test(tc, test_usage_errors_exit_2);
    tcase_add_test(tc, test_guide_names_the_files_an_engine_touches);
    tcase_add_test(tc, test_commands_are_the_table);
    tcase_add_test(tc, test_every_format_is_in_the_help_and_the_manual);
    tcase_add_test(tc, test_guide_names_the_files_a_format_touches);
    tcase_add_test(tc, test_messages_escape_what_the_user_typed);
    tcase_add_test(tc, test_help_shows_the_manual);
    tcase_add_test(tc, test_the_exact_pass_line_agrees_in_number);
    suite_add_tcase(suite, tc);
    return suite;
}
