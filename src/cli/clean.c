/* gemleak clean: removes the run directories gemleak left in TMPDIR. */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/run/rundir.h"

#include <stdlib.h>
#include <string.h>

static const char clean_summary[] =
    "Removes the run directories gemleak left in TMPDIR (gemleak-run-XXXXXX:\n"
    "Valgrind's XML of runs that failed or were interrupted, and the helper\n"
    "directories of a gemleak that was killed), and only those: directories\n"
    "of yours, mode 0700, holding nothing gemleak does not write there, that\n"
    "no running gemleak holds. --keep-xml directories are yours to remove.\n"
    "It also removes what gemleak's cache keeps for other builds of gemleak\n"
    "(XDG_CACHE_HOME/gemleak/runs/helper-HASH: their helper, some 1.3 MB each).";

int gl_cli_clean(int argc, char **argv, FILE *out, FILE *err)
{
    g_set_prgname("gemleak clean");
    gboolean dry_run = FALSE, help = FALSE;
    const GOptionEntry entries[] = {
        { "dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run, "Say what would be removed; remove "
          "nothing", NULL },
        { "help", 'h', 0, G_OPTION_ARG_NONE, &help, "Show this help", NULL },
        G_OPTION_ENTRY_NULL,
    };
    g_autoptr(GOptionContext) context = g_option_context_new(NULL);
    g_option_context_set_summary(context, clean_summary);
    g_option_context_set_description(context, "Exit status: 0, or 2 for a usage error.\n\n"
                                     "See gemleak(1) for the whole story.");
    g_option_context_set_help_enabled(context, FALSE);
    g_option_context_add_main_entries(context, entries, NULL);
    g_auto(GStrv) args = g_new0(char *, (gsize) argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse_strv(context, &args, &error))
        return gl_cli_usage_error(err, "clean", error);
    if (help) {
        g_autofree char *text = g_option_context_get_help(context, TRUE, NULL);
        fputs(text, out);
        return GL_EXIT_CLEAN;
    }
    if (args[1] != NULL) {
        g_set_error(&error, GL_ERROR, GL_ERROR_USAGE, "clean takes no arguments (it looks in "
                    "TMPDIR, %s)", g_get_tmp_dir());
        return gl_cli_usage_error(err, "clean", error);
    }
    gl_rundir_clean(g_get_tmp_dir(), dry_run, out);
    gl_rundir_clean_cache(dry_run, out);
    return GL_EXIT_CLEAN;
}
