/* The options filter and run share (what a finding is, reports, the gate),
 * and how a command parses them and says what went wrong. */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/report/report.h"

#include <stdlib.h>
#include <string.h>

static void output_free(gpointer data)
{
    Output *output = data;
    g_free(output->format);
    g_free(output->path);
    g_free(output);
}

void gl_cli_options_init(Options *options)
{
    memset(options, 0, sizeof *options);
    options->outputs = g_ptr_array_new_with_free_func(output_free);
}

void gl_cli_options_clear(Options *options)
{
    g_strfreev(options->objects);
    g_strfreev(options->skip_functions);
    g_free(options->skip_functions_file);
    g_free(options->leak_kinds);
    g_ptr_array_unref(options->outputs);
    g_free(options->pending_output);
    g_free(options->color);
    g_free(options->fail_on);
    g_free(options->max_bytes);
    g_free(options->growth_min_bytes);
    g_free(options->project_root);
    g_free(options->frames);
    g_free(options->suppressions_out);
    g_free(options->baseline);
    g_free(options->write_baseline);
    g_free(options->engine);
    g_free(options->valgrind);
    g_strfreev(options->valgrind_opts);
    g_strfreev(options->suppressions_dirs);
    g_free(options->keep_xml);
    g_free(options->shard);
    g_free(options->durations);
    g_free(options->per_test);
}

static gboolean unknown_format(const char *name, GError **error)
{
    g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "unknown format '%s' (use %s)", name,
                gl_reporter_names());
    return FALSE;
}

/* --format FORMAT[:FILE]: a new report; -o FILE names the file of the
 * --format before it (or, given first, of the one after it). */
static gboolean on_format(const char *name, const char *value, gpointer data, GError **error)
{
    Options *options = data;
    (void) name;
    Output *output = g_new0(Output, 1);
    const char *colon = strchr(value, ':');
    output->format = colon != NULL ? g_strndup(value, (gsize) (colon - value)) : g_strdup(value);
    if (colon != NULL && colon[1] == '\0') {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--format %s names no file (give FORMAT:FILE, or FORMAT alone for the "
                    "command's stream)", value);
        output_free(output);
        return FALSE;
    }
    if (colon != NULL)
        output->path = g_strdup(colon + 1);
    else
        output->path = g_steal_pointer(&options->pending_output);
    g_ptr_array_add(options->outputs, output);
    if (gl_reporter_find(output->format) == NULL)
        return unknown_format(output->format, error);
    return TRUE;
}

static gboolean on_output(const char *name, const char *value, gpointer data, GError **error)
{
    Options *options = data;
    Output *last = options->outputs->len > 0
        ? g_ptr_array_index(options->outputs, options->outputs->len - 1) : NULL;
    if (*value == '\0') {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%s: give a file name (or - for standard "
                    "output)", name);
        return FALSE;
    }
    if (last != NULL && last->path == NULL) {
        last->path = g_strdup(value);
    } else if (options->pending_output == NULL) {
        options->pending_output = g_strdup(value);
    } else {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "-o %s: give a --format for each -o (%s has none)", value,
                    options->pending_output);
        return FALSE;
    }
    return TRUE;
}

static gboolean on_jobs(const char *name, const char *value, gpointer data, GError **error)
{
    Options *options = data;
    guint64 n = 0;
    if (!g_ascii_string_to_unsigned(value, 10, 1, G_MAXUINT, &n, NULL)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%s %s: give a number of 1 or more", name,
                    value);
        return FALSE;
    }
    options->jobs = (guint) n;
    return TRUE;
}

/* Returns: how many threads read, and how many commands run at once:
 * --jobs, else one per processor, at most GL_MAX_JOBS. */
guint gl_cli_effective_jobs(const Options *options)
{
    guint jobs = options->jobs > 0 ? options->jobs : g_get_num_processors();
    return MIN(jobs, GL_MAX_JOBS);
}

/* More than GL_MAX_JOBS at once would be Valgrind processes by the hundred
 * on one machine: the user is told, and gets GL_MAX_JOBS. */
void gl_cli_say_jobs_capped(const Options *options, FILE *err)
{
    if (options->jobs > GL_MAX_JOBS)
        fprintf(err, "gemleak: note: --jobs %u: gemleak reads and runs at most %d at once\n",
                options->jobs, GL_MAX_JOBS);
}

/* The options filter and run share: what a finding is, reports, the gate.
 * GOption copies the entries, so they can point into this call's Options.
 * Paths and patterns are FILENAME: GOption passes their bytes as they are,
 * where STRING would convert them from the locale's charset and refuse
 * what does not convert (a Latin-1 file name in a UTF-8 locale). */
GOptionGroup *gl_cli_report_group(Options *options)
{
    /* the formats as their list says (gemleak/report/report.h); kept for
     * the process, as GOption keeps the text */
    static char *format_help;
    if (format_help == NULL)
        format_help = g_strdup_printf("Report format: %s; repeatable, each with its -o (or "
                                      "FORMAT:FILE)", gl_reporter_names());
    const GOptionEntry entries[] = {
        { "object", 'O', 0, G_OPTION_ARG_FILENAME_ARRAY, &options->objects,
          "The target extension: a binary name (redcarpet), a path or a glob of the .so, or "
          "a /REGEX/; repeatable. Default: the extensions the run loaded, else the Ruby "
          "extensions under the current directory", "PATTERN" },
        { "skip-function", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->skip_functions,
          "A function whose leaks are not the extension's (a glob, or a /REGEX/ matched "
          "anywhere in the name); repeatable", "PATTERN" },
        { "skip-functions-file", 0, 0, G_OPTION_ARG_FILENAME, &options->skip_functions_file,
          "Read more such patterns from FILE, one a line", "FILE" },
        { "no-default-skips", 0, 0, G_OPTION_ARG_NONE, &options->no_ruby_memory_rule,
          "Turn off rule 2 (Ruby's own memory): only --skip-function patterns skip", NULL },
        { "leak-kinds", 0, 0, G_OPTION_ARG_STRING, &options->leak_kinds,
          "Leak kinds to report: definite, indirect, possible, reachable, all, none "
          "(default: definite)", "KINDS" },
        { "all-errors", 0, 0, G_OPTION_ARG_NONE, &options->all_errors,
          "Report every memory error, not only those that enter a target", NULL },
        { "free-at-exit", 0, 0, G_OPTION_ARG_NONE, &options->free_at_exit,
          "Keep every leak that enters a target, Init code's too (XML no gemleak helper "
          "recorded, of a Ruby run with RUBY_FREE_AT_EXIT=1; gemleak run needs none)", NULL },
        { "format", 'f', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer) on_format,
          format_help, "FORMAT[:FILE]" },
        { "output", 'o', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer) on_output,
          "Write the report of the --format before it to FILE (- is standard output); "
          "checked before anything runs", "FILE" },
        { "color", 0, 0, G_OPTION_ARG_STRING, &options->color,
          "Colour the text report: auto (on a terminal, without NO_COLOR, TERM not dumb), "
          "always, never", "WHEN" },
        { "jobs", 'j', 0, G_OPTION_ARG_CALLBACK, (gpointer) on_jobs,
          "Read N files at once; run: also run N commands at once over the files after ::: "
          "(default: one per processor; at most " G_STRINGIFY(GL_MAX_JOBS) ")", "N" },
        { "gen-suppressions", 0, 0, G_OPTION_ARG_NONE, &options->gen_suppressions,
          "Show each finding's Valgrind suppression block (run: ask Valgrind for them)", NULL },
        { "fail-on", 0, 0, G_OPTION_ARG_STRING, &options->fail_on,
          "Findings that fail the run (exit 1; run: 5 when the command failed too): leak "
          "kinds, errors, uncertain, growth, growth-held, all, none (default: "
          "definite,errors, and growth with --growth)", "KINDS" },
        { "max-bytes", 0, 0, G_OPTION_ARG_STRING, &options->max_bytes,
          "Let leaks of up to N bytes in all pass the gate", "N" },
        { "growth-min-bytes", 0, 0, G_OPTION_ARG_STRING, &options->growth_min_bytes,
          "--growth: a site grows only when the median of the bytes each repetition added "
          "is N or more (default: 0, any growth)", "N" },
        { "baseline", 0, 0, G_OPTION_ARG_FILENAME, &options->baseline,
          "Report and fail only on findings not in FILE, an earlier JSON report", "FILE" },
        { "write-baseline", 0, 0, G_OPTION_ARG_FILENAME, &options->write_baseline,
          "Write what identifies every finding (kind, fingerprint, location, functions) to "
          "FILE, a baseline to commit for later runs, and pass; add --fail-on "
          "definite,errors to fail on them as well", "FILE" },
        { "write-baseline-if-missing", 0, 0, G_OPTION_ARG_NONE,
          &options->write_baseline_if_missing,
          "With a --baseline FILE that does not exist yet (a gem's first run in CI): write "
          "it, as --write-baseline FILE does, and say so", NULL },
        { "suppressions-out", 0, 0, G_OPTION_ARG_FILENAME, &options->suppressions_out,
          "Write a Valgrind suppression for each finding to FILE (--format supp:FILE)", "FILE" },
        { "frames", 0, 0, G_OPTION_ARG_STRING, &options->frames,
          "Text report: show N frames past the outermost frame of the extension, runs of "
          "unnamed frames as one line (default: 3); all: every frame", "N|all" },
        { "project-root", 0, 0, G_OPTION_ARG_FILENAME, &options->project_root,
          "Show source and test locations relative to DIR in every report (default: a run "
          "directory's own run's, else $GITHUB_WORKSPACE, else the current directory)", "DIR" },
        { "help", 'h', 0, G_OPTION_ARG_NONE, &options->help, "Show this help", NULL },
        G_OPTION_ENTRY_NULL,
    };
    GOptionGroup *group = g_option_group_new("report", "Report options", "Show report options",
                                             options, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

GOptionContext *gl_cli_new_context(const char *parameter, const char *summary,
                                   const char *description, const char *statuses,
                                   GOptionGroup *main_group)
{
    GOptionContext *context = g_option_context_new(parameter);
    g_option_context_set_summary(context, summary);
    g_autofree char *full = g_strconcat(description, "\n", statuses,
                                        "\nSee gemleak(1) for the whole story.", NULL);
    g_option_context_set_description(context, full);
    /* We print help ourselves: GOption's own would exit() the process. */
    g_option_context_set_help_enabled(context, FALSE);
    g_option_context_set_main_group(context, main_group);
    return context;
}

/* ---- commands --------------------------------------------------------------- */

/* A message names what the user typed and the files it named: one line,
 * escaped, whatever they hold. */
static void say_error(FILE *err, const GError *error)
{
    g_autofree char *message = gl_text_escape(error->message);
    fprintf(err, "gemleak: %s\n", message);
}

int gl_cli_usage_error(FILE *err, const char *command, const GError *error)
{
    say_error(err, error);
    fprintf(err, "Try 'gemleak %s --help'.\n", command);
    return GL_EXIT_USAGE;
}

int gl_cli_fail(FILE *err, const char *command, const GError *error)
{
    GlExitStatus status = gl_error_exit_status(error);
    if (status == GL_EXIT_USAGE)
        return gl_cli_usage_error(err, command, error);
    say_error(err, error);
    return status;
}

/* Parses @argv (@argc of them, the command's name first) into @options; a
 * lone -o before any --format is the text report's.
 * Returns: (transfer full): the arguments left, the command's name first;
 * NULL with @error set. */
char **gl_cli_parse_options(GOptionContext *context, Options *options, int argc, char **argv,
                            GError **error)
{
    g_auto(GStrv) args = g_new0(char *, (gsize) argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    if (!g_option_context_parse_strv(context, &args, error))
        return NULL;
    if (!options->help && options->pending_output != NULL &&
        !on_format("--format", "text", options, error))
        return NULL;
    return g_steal_pointer(&args);
}
