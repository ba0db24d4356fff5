/* The command line: gemleak_main() hands each command to its own file
 * (filter.c, run.c, clean.c, help.c), which parse their options
 * (options.c) and go through the pipeline filter and run share
 * (pipeline.c). The commands are a table, as git's commands[] and tmux's
 * cmd_table: one line a command drives dispatch, the general help and
 * the manual's topics (help.c). */
#include "gemleak/cli/cli.h"
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/text.h"

#include <locale.h>
#include <string.h>

/* The general help's lines: a command's summary wraps to this width. */
#define HELP_WIDTH 79
/* "  filter   ": where a summary starts. */
#define HELP_NAME_WIDTH 9

static int help_main(int argc, char **argv, FILE *out, FILE *err);

static const Command commands[] = {
    { .name = "filter", .main = gl_cli_filter, .usage = "[OPTION...] FILE|DIR|-...",
      .summary = "read existing Valgrind XML or sanitizer reports (or gemleak JSON reports, to "
                 "merge CI shards) and report the target's errors",
      .report_options = TRUE },
    { .name = "run", .main = gl_cli_run, .usage = "[OPTION...] [--] COMMAND [ARG...]",
      .summary = "run a Ruby command under an engine (Valgrind by default), then filter and "
                 "report",
      .report_options = TRUE },
    { .name = "clean", .main = gl_cli_clean, .usage = "[--dry-run]",
      .summary = "remove the reports of old runs that gemleak kept in TMPDIR" },
    { .name = "help", .main = help_main,
      .summary = "show the manual, gemleak(1), or a part of it: a command's, a section's "
                 "(gemleak help rules)",
      .aside = TRUE },
    { .name = NULL },
};

const Command *gl_cli_commands(void)
{
    return commands;
}

/* gemleak help: given the table, which it tells the topics from. */
static int help_main(int argc, char **argv, FILE *out, FILE *err)
{
    return gl_cli_help(commands, argc, argv, out, err);
}

/* Appends @text after @indent columns already on the line, its words
 * wrapped at HELP_WIDTH, each next line indented as far. */
static void append_wrapped(GString *out, const char *text, guint indent)
{
    g_auto(GStrv) words = g_strsplit(text, " ", -1);
    guint column = indent;
    for (guint i = 0; words[i] != NULL; i++) {
        guint length = (guint) strlen(words[i]);
        if (column > indent && column + 1 + length > HELP_WIDTH) {
            g_string_append_printf(out, "\n%*s", (int) indent, "");
            column = indent;
        } else if (column > indent) {
            g_string_append_c(out, ' ');
            column++;
        }
        g_string_append(out, words[i]);
        column += length;
    }
    g_string_append_c(out, '\n');
}

/* Appends each command of the table whose aside is @aside: its name,
 * then its summary. */
static void append_commands(GString *out, gboolean aside)
{
    for (const Command *command = commands; command->name != NULL; command++) {
        if (command->aside != aside)
            continue;
        g_string_append_printf(out, "  %-*s", HELP_NAME_WIDTH, command->name);
        append_wrapped(out, command->summary, 2 + HELP_NAME_WIDTH);
    }
}

/* Returns: (transfer full): what `gemleak --help` says: a usage line for
 * each command that has one, what gemleak does, and the commands. */
static char *general_help(void)
{
    GString *help = g_string_new("Usage:\n");
    for (const Command *command = commands; command->name != NULL; command++)
        if (command->usage != NULL)
            g_string_append_printf(help, "  gemleak %s %s\n", command->name, command->usage);
    g_string_append(help,
        "  gemleak --version\n"
        "\n"
        "Finds the real memory leaks and memory errors of Ruby native extensions in\n"
        "what Valgrind memcheck (or LeakSanitizer, AddressSanitizer: --engine)\n"
        "reports, without the thousands of errors Ruby itself leaves at exit.\n"
        "\n"
        "Commands:\n");
    append_commands(help, FALSE);
    g_string_append_c(help, '\n');
    append_commands(help, TRUE);
    g_string_append(help,
        "\n"
        "Start with:  gemleak run -- bundle exec rake test\n"
        "\n"
        "'gemleak COMMAND --help' describes each command's options; 'gemleak help\n"
        "[run|filter|rules|...]' shows the manual, gemleak(1), which tells all.\n");
    return g_string_free(help, FALSE);
}

/* Writes the general help to @stream. Returns: @status. */
static int say_help(FILE *stream, int status)
{
    g_autofree char *help = general_help();
    fputs(help, stream);
    return status;
}

int gemleak_main(int argc, char **argv, FILE *out, FILE *err)
{
    /* The user's locale: GOption converts STRING values from its charset. */
    setlocale(LC_ALL, "");
    const char *name = argc > 1 ? argv[1] : NULL;
    if (name == NULL)
        return say_help(err, GL_EXIT_USAGE);
    /* gemleak's own options, before any command */
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
        return say_help(out, GL_EXIT_CLEAN);
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        fprintf(out, "gemleak %s\n", GEMLEAK_VERSION);
        return GL_EXIT_CLEAN;
    }
    for (const Command *command = commands; command->name != NULL; command++)
        if (strcmp(name, command->name) == 0)
            return command->main(argc - 1, argv + 1, out, err);
    g_autofree char *shown = gl_text_escape(name);
    fprintf(err, "gemleak: unknown command '%s'\n", shown);
    return say_help(err, GL_EXIT_USAGE);
}
