/* The command line: gemleak_main() hands each command to its own file
 * (filter.c, run.c, clean.c), which parse their options (options.c) and go
 * through the pipeline filter and run share (pipeline.c). */
#include "gemleak/cli/cli.h"
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/text.h"

#include <locale.h>
#include <string.h>

static const char general_help[] =
    "Usage:\n"
    "  gemleak filter [OPTION...] FILE|DIR|-...\n"
    "  gemleak run [OPTION...] [--] COMMAND [ARG...]\n"
    "  gemleak clean [--dry-run]\n"
    "  gemleak --version\n"
    "\n"
    "Finds the real memory leaks and memory errors of Ruby native extensions in\n"
    "what Valgrind memcheck (or LeakSanitizer, AddressSanitizer: --engine)\n"
    "reports, without the thousands of errors Ruby itself leaves at exit.\n"
    "\n"
    "Commands:\n"
    "  filter   read existing Valgrind XML or sanitizer reports (or gemleak JSON\n"
    "           reports, to merge CI shards) and report the target's errors\n"
    "  run      run a Ruby command under an engine (Valgrind by default), then\n"
    "           filter and report\n"
    "  clean    remove the reports of old runs that gemleak kept in TMPDIR\n"
    "\n"
    "  help     show the manual, gemleak(1), or a part of it: a command's, a\n"
    "           section's (gemleak help rules)\n"
    "\n"
    "Start with:  gemleak run -- bundle exec rake test\n"
    "\n"
    "'gemleak COMMAND --help' describes each command's options; 'gemleak help\n"
    "[run|filter|rules|...]' shows the manual, gemleak(1), which tells all.\n";

int gemleak_main(int argc, char **argv, FILE *out, FILE *err)
{
    /* The user's locale: GOption converts STRING values from its charset. */
    setlocale(LC_ALL, "");
    const char *command = argc > 1 ? argv[1] : NULL;
    if (command == NULL) {
        fputs(general_help, err);
        return GL_EXIT_USAGE;
    }
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0) {
        fputs(general_help, out);
        return GL_EXIT_CLEAN;
    }
    if (strcmp(command, "--version") == 0 || strcmp(command, "version") == 0) {
        fprintf(out, "gemleak %s\n", GEMLEAK_VERSION);
        return GL_EXIT_CLEAN;
    }
    if (strcmp(command, "filter") == 0)
        return gl_cli_filter(argc - 1, argv + 1, out, err);
    if (strcmp(command, "run") == 0)
        return gl_cli_run(argc - 1, argv + 1, out, err);
    if (strcmp(command, "clean") == 0)
        return gl_cli_clean(argc - 1, argv + 1, out, err);
    if (strcmp(command, "help") == 0)
        return gl_cli_help(argc - 1, argv + 1, out, err);
    g_autofree char *shown = gl_text_escape(command);
    fprintf(err, "gemleak: unknown command '%s'\n", shown);
    fputs(general_help, err);
    return GL_EXIT_USAGE;
}
