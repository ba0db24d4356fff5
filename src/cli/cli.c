/* The command line: parsing, dispatch, reports and exit statuses. */
#include "gemleak/cli/cli.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/baseline.h"
#include "gemleak/judge/classify.h"
#include "gemleak/run/commands.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/gate.h"
#include "gemleak/read/json_input.h"
#include "gemleak/report/report.h"
#include "gemleak/run/runner.h"
#include "gemleak/run/rundir.h"
#include "gemleak/report/sinks.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/targets.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>


/* One report to write: a format and where ("-" or NULL: the default stream). */
typedef struct {
    char *format;
    char *path;
} Output;

typedef struct {
    /* what is a finding */
    char **objects;
    char **skip_functions;
    char *skip_functions_file;
    gboolean no_default_skips;
    char *leak_kinds;
    gboolean all_errors;
    gboolean free_at_exit;
    /* reports and the gate */
    GPtrArray *outputs;         /* Output*, in the order given */
    char *pending_output;       /* an -o that came before its --format */
    char *color;
    guint jobs;                 /* as given; 0: not given */
    gboolean gen_suppressions;
    char *fail_on;
    char *max_bytes;
    char *project_root;
    char *frames;
    char *suppressions_out;
    char *baseline;
    char *write_baseline;
    gboolean help;
    /* run */
    char *valgrind;
    char **valgrind_opts;
    char **suppressions_dirs;
    char *keep_xml;
    char *shard;
    char *durations;
    char *per_test;             /* "test" or "file"; NULL: off */
    gboolean trace_launchers;
    gboolean spare_launchers;
} Options;

static void output_free(gpointer data)
{
    Output *output = data;
    g_free(output->format);
    g_free(output->path);
    g_free(output);
}

static void options_init(Options *options)
{
    memset(options, 0, sizeof *options);
    options->outputs = g_ptr_array_new_with_free_func(output_free);
}

static void options_clear(Options *options)
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
    g_free(options->project_root);
    g_free(options->frames);
    g_free(options->suppressions_out);
    g_free(options->baseline);
    g_free(options->write_baseline);
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
    g_autoptr(GString) names = g_string_new(NULL);
    for (const GlReporter *const *r = gl_reporters(); *r != NULL; r++)
        g_string_append_printf(names, "%s%s", names->len > 0 ? ", " : "", (*r)->name);
    g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "unknown format '%s' (use %s)", name,
                names->str);
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
static guint effective_jobs(const Options *options)
{
    guint jobs = options->jobs > 0 ? options->jobs : g_get_num_processors();
    return MIN(jobs, GL_MAX_JOBS);
}

/* More than GL_MAX_JOBS at once would be Valgrind processes by the hundred
 * on one machine: the user is told, and gets GL_MAX_JOBS. */
static void say_jobs_capped(const Options *options, FILE *err)
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
static GOptionGroup *report_group(Options *options)
{
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
        { "no-default-skips", 0, 0, G_OPTION_ARG_NONE, &options->no_default_skips,
          "Turn off rule 2 (Ruby's own memory): only --skip-function patterns skip", NULL },
        { "leak-kinds", 0, 0, G_OPTION_ARG_STRING, &options->leak_kinds,
          "Leak kinds to report: definite, indirect, possible, reachable, all, none "
          "(default: definite)", "KINDS" },
        { "all-errors", 0, 0, G_OPTION_ARG_NONE, &options->all_errors,
          "Report every memory error, not only those that enter a target", NULL },
        { "free-at-exit", 0, 0, G_OPTION_ARG_NONE, &options->free_at_exit,
          "Ruby 3.4+ with RUBY_FREE_AT_EXIT=1: keep every leak that enters a target", NULL },
        { "format", 'f', G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer) on_format,
          "Report format: text, json, junit, sarif, github, supp; repeatable, each with its "
          "-o (or FORMAT:FILE)", "FORMAT[:FILE]" },
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
          "kinds, errors, uncertain, all, none (default: definite,errors)", "KINDS" },
        { "max-bytes", 0, 0, G_OPTION_ARG_STRING, &options->max_bytes,
          "Let leaks of up to N bytes in all pass the gate", "N" },
        { "baseline", 0, 0, G_OPTION_ARG_FILENAME, &options->baseline,
          "Report and fail only on findings not in FILE, an earlier JSON report", "FILE" },
        { "write-baseline", 0, 0, G_OPTION_ARG_FILENAME, &options->write_baseline,
          "Write every finding to FILE, as a baseline for later runs, and pass; add "
          "--fail-on definite,errors to fail on them as well", "FILE" },
        { "suppressions-out", 0, 0, G_OPTION_ARG_FILENAME, &options->suppressions_out,
          "Write a Valgrind suppression for each finding to FILE (--format supp:FILE)", "FILE" },
        { "frames", 0, 0, G_OPTION_ARG_STRING, &options->frames,
          "Text report: show N frames past the outermost frame of the extension, runs of "
          "unnamed frames as one line (default: 3); all: every frame", "N|all" },
        { "project-root", 0, 0, G_OPTION_ARG_FILENAME, &options->project_root,
          "Show source and test locations relative to DIR in every report (default: "
          "$GITHUB_WORKSPACE, else the current directory)", "DIR" },
        { "help", 'h', 0, G_OPTION_ARG_NONE, &options->help, "Show this help", NULL },
        G_OPTION_ENTRY_NULL,
    };
    GOptionGroup *group = g_option_group_new("report", "Report options", "Show report options",
                                             options, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

static const char filter_summary[] =
    "Reads Valgrind memcheck XML (files, plain or gzip-compressed, directories of\n"
    "%p.xml files, or - for standard input; in a directory only regular files)\n"
    "and gemleak's own JSON reports (--format json; the shards of a CI matrix\n"
    "merge as one run), and reports only the errors that belong to the target\n"
    "extension, leaving out the thousands that Ruby itself leaves at exit.";

static const char filter_exit_statuses[] =
    "Exit status:\n"
    "  0  nothing found (no finding fails the gate)\n"
    "  1  findings that fail the gate (see --fail-on)\n"
    "  2  usage error\n"
    "  3  an input could not be read or was not complete Valgrind XML, a JSON\n"
    "     report merged says its own run was not all checked, or a report\n"
    "     could not be written, and nothing failed the gate\n";

static const char run_exit_statuses[] =
    "Exit status:\n"
    "  0  nothing fails the gate, and the command passed\n"
    "  1  findings fail the gate (see --fail-on); the command passed\n"
    "  2  usage error\n"
    "  3  Valgrind or gemleak trouble (Valgrind missing or too old, no XML\n"
    "     written, XML cut short, an extension loaded outside Valgrind, a\n"
    "     report not written), and nothing failed the gate\n"
    "  4  the command failed (a non-zero status, or killed by a signal), and\n"
    "     nothing failed the gate\n"
    "  5  findings fail the gate, and the command failed too\n"
    "The text report's last line says which, and how the command ended.\n";

static const char filter_description[] =
    "A definite leak is kept when its allocation stack enters a target, unless\n"
    "a Ruby function other than Ruby's allocators (ruby_xmalloc, ALLOC_N...)\n"
    "lies between the allocation and the first target frame (the extension\n"
    "called Ruby, which allocated for itself), or it happened in the target's\n"
    "Init code, once, at load. Where Ruby has no symbols to tell, the finding\n"
    "is kept as uncertain and fails only with --fail-on uncertain. Memory\n"
    "errors are kept when any of their stacks enters a target; an\n"
    "uninitialised value used inside Ruby's GC is Ruby's, unless the\n"
    "extension allocated its block (--track-origins=yes). gemleak(1),\n"
    "RULES, gives each rule and why.\n"
    "\n"
    "Examples:\n"
    "  gemleak filter --object redcarpet valgrind-xml/\n"
    "  gemleak filter -O redcarpet --format json -o leaks.json 1234.xml\n"
    "  gemleak filter -O redcarpet --format text --format json:leaks.json run/\n"
    "  gemleak filter --format sarif:gemleak.sarif shard-*/gemleak.json\n";

static GOptionContext *new_context(const char *parameter, const char *summary,
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

/* ---- building the rules ------------------------------------------------- */

static gboolean parse_unsigned(const char *option, const char *text, guint64 *value,
                               GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, value, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%s: '%s' is not a number of bytes",
                    option, text);
        return FALSE;
    }
    return TRUE;
}

/* An option that names a file or a value it cannot be is a usage error,
 * whatever the reason. */
static gboolean usage_failure(GError **error)
{
    if (error != NULL && *error != NULL)
        (*error)->code = GL_ERROR_USAGE;
    return FALSE;
}

static gboolean build_rules(const Options *options, GlRules *rules, GError **error)
{
    if (options->leak_kinds != NULL) {
        GlLeakKind kinds = 0;
        if (!gl_leak_kinds_parse(options->leak_kinds, &kinds, error))
            return FALSE;
        gl_rules_set_leak_kinds(rules, kinds);
    }
    if (options->no_default_skips)
        gl_rules_drop_default_callbacks(rules);
    for (char **p = options->skip_functions; p != NULL && *p != NULL; p++)
        if (!gl_rules_add_callback(rules, *p, error))
            return FALSE;
    if (options->skip_functions_file != NULL &&
        !gl_rules_add_callbacks_from_file(rules, options->skip_functions_file, error))
        return usage_failure(error);
    gl_rules_set_all_errors(rules, options->all_errors);
    gl_rules_set_free_at_exit(rules, options->free_at_exit);
    return TRUE;
}

/* What the options say, checked and built before any input is read or
 * any command run: a mistake in them costs one line, not a suite's run
 * under Valgrind. */
typedef struct {
    GlRules *rules;
    GlGate gate;
    GlBaseline *baseline;      /* nullable */
    char *project_root;        /* absolute */
    guint frames_after;        /* --frames: G_MAXUINT for all */
    GlSinks *sinks;            /* the reports, where they go */
} Plan;

static void plan_clear(Plan *plan)
{
    /* Not g_clear_pointer: clang-tidy takes its size check for a mistake. */
    gl_rules_free(plan->rules);
    plan->rules = NULL;
    gl_baseline_free(plan->baseline);
    plan->baseline = NULL;
    g_clear_pointer(&plan->project_root, g_free);
    gl_sinks_free(plan->sinks);
    plan->sinks = NULL;
}

static gboolean not_empty(const char *option, const char *value, GError **error)
{
    if (value == NULL || *value != '\0')
        return TRUE;
    g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%s: the value is empty", option);
    return FALSE;
}

/* Returns: (transfer full): --project-root, else $GITHUB_WORKSPACE (where
 * GitHub checks the repository out), else the current directory. */
static char *project_root(const Options *options)
{
    const char *workspace = g_getenv("GITHUB_WORKSPACE");
    if (options->project_root != NULL)
        return g_canonicalize_filename(options->project_root, NULL);
    if (workspace != NULL && *workspace != '\0')
        return g_canonicalize_filename(workspace, NULL);
    return g_get_current_dir();
}

static gboolean plan_build(const Options *options, Plan *plan, GError **error)
{
    memset(plan, 0, sizeof *plan);
    plan->rules = gl_rules_new();
    gl_gate_init(&plan->gate);
    static const char *const colors[] = { "auto", "always", "never" };
    if (options->color != NULL && !g_strv_contains(colors, options->color)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--color %s: give auto, always or never", options->color);
        return FALSE;
    }
    for (char **p = options->objects; p != NULL && *p != NULL; p++)
        if (!not_empty("--object", *p, error))
            return FALSE;
    if (!not_empty("--skip-functions-file", options->skip_functions_file, error) ||
        !not_empty("--baseline", options->baseline, error) ||
        !not_empty("--write-baseline", options->write_baseline, error) ||
        !not_empty("--suppressions-out", options->suppressions_out, error) ||
        !not_empty("--project-root", options->project_root, error) ||
        !build_rules(options, plan->rules, error))
        return FALSE;
    if (options->fail_on != NULL && !gl_gate_parse_fail_on(&plan->gate, options->fail_on, error))
        return FALSE;
    if (options->max_bytes != NULL) {
        if (!parse_unsigned("--max-bytes", options->max_bytes, &plan->gate.max_bytes, error))
            return FALSE;
        plan->gate.has_max_bytes = TRUE;
    }
    if (options->project_root != NULL &&
        !g_file_test(options->project_root, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--project-root %s: no such directory",
                    options->project_root);
        return FALSE;
    }
    plan->project_root = project_root(options);
    plan->frames_after = 3;
    if (options->frames != NULL && strcmp(options->frames, "all") == 0) {
        plan->frames_after = G_MAXUINT;
    } else if (options->frames != NULL) {
        guint64 n = 0;
        if (!g_ascii_string_to_unsigned(options->frames, 10, 0, 1000, &n, NULL)) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                        "--frames: '%s' is not a number of frames (0 to 1000) or all",
                        options->frames);
            return FALSE;
        }
        plan->frames_after = (guint) n;
    }
    if (options->baseline != NULL &&
        (plan->baseline = gl_baseline_load(options->baseline, error)) == NULL)
        return usage_failure(error);
    return TRUE;
}

/* An --object that matches nothing the run loaded stops gemleak before its
 * reports: each JSON report file then says what went wrong, for a program
 * that runs gemleak (the Rake tasks) to tell its user in its own words.
 * This is on the way out with a usage error: a file that cannot be written
 * is left unwritten, as the reports would have been. */
static void write_target_error(const Options *options, const char *message, const char *pattern,
                               const char *const *loaded)
{
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    gl_json_add_tool(builder);
    json_builder_set_member_name(builder, "error");
    json_builder_begin_object(builder);
    gl_json_add_string(builder, "message", message);
    gl_json_add_string(builder, "unmatched_object", pattern);
    json_builder_set_member_name(builder, "loaded");
    json_builder_begin_array(builder);
    for (const char *const *path = loaded; *path != NULL; path++)
        json_builder_add_string_value(builder, *path);
    json_builder_end_array(builder);
    json_builder_end_object(builder);
    json_builder_end_object(builder);

    for (guint i = 0; i < options->outputs->len; i++) {
        const Output *output = g_ptr_array_index(options->outputs, i);
        if (strcmp(output->format, "json") != 0 || output->path == NULL ||
            strcmp(output->path, "-") == 0)
            continue;
        char *buffer = NULL;
        size_t size = 0;
        FILE *memory = open_memstream(&buffer, &size);
        if (memory == NULL)
            return;
        gl_json_write(builder, memory);
        fclose(memory);
        g_file_set_contents(output->path, buffer, (gssize) size, NULL);
        free(buffer);
    }
}

/* Sets the targets: --object, else the run's loaded extensions, else the
 * Ruby extensions under the current directory. @shown receives what the
 * report says the targets are; *have_lists whether the inputs came with
 * the run's lists of loaded extensions. @unlisted: some process has XML
 * and no list (a Ruby whose environment lost gemleak's helper may be
 * among them): lists that name nothing do not settle the targets then. */
static gboolean resolve_targets(const Options *options, const char *const *inputs,
                                gboolean unlisted, GlRules *rules, GPtrArray *shown,
                                gboolean *have_lists, GError **error)
{
    g_autoptr(GPtrArray) loaded = gl_targets_from_loaded_lists(inputs, have_lists);
    if (options->objects != NULL) {
        for (char **p = options->objects; *p != NULL; p++) {
            if (!gl_rules_add_target(rules, *p, error))
                return FALSE;
        }
        /* With the run's lists at hand, a name that matches nothing it
         * loaded is a typo, or an extension that never loaded: not a clean
         * run. */
        for (guint t = 0; *have_lists && t < gl_rules_n_targets(rules); t++) {
            gboolean seen = FALSE;
            for (guint i = 0; i < loaded->len && !seen; i++)
                seen = gl_rules_target_matches(rules, t, g_ptr_array_index(loaded, i));
            if (seen)
                continue;
            g_autofree char *message = NULL;
            gboolean none = loaded->len == 0;
            g_ptr_array_add(loaded, NULL);
            if (none) {
                message = g_strdup_printf("--object %s matches no extension the run loaded: it "
                                          "loaded none (was the extension built? a LoadError in "
                                          "the suite's output says what Ruby could not load)",
                                          gl_rules_target_pattern(rules, t));
            } else {
                g_autofree char *list = g_strjoinv(", ", (char **) loaded->pdata);
                message = g_strdup_printf("--object %s matches no extension the run loaded (it "
                                          "loaded: %s)", gl_rules_target_pattern(rules, t), list);
            }
            write_target_error(options, message, gl_rules_target_pattern(rules, t),
                               (const char *const *) loaded->pdata);
            g_set_error_literal(error, GL_ERROR, GL_ERROR_USAGE, message);
            return FALSE;
        }
        /* The targets as they resolved: the paths the run loaded. */
        for (guint i = 0; i < loaded->len; i++)
            for (guint t = 0; t < gl_rules_n_targets(rules); t++)
                if (gl_rules_target_matches(rules, t, g_ptr_array_index(loaded, i))) {
                    g_ptr_array_add(shown, g_strdup(g_ptr_array_index(loaded, i)));
                    break;
                }
        if (loaded->len == 0)
            for (char **p = options->objects; *p != NULL; p++)
                g_ptr_array_add(shown, g_strdup(*p));
        return TRUE;
    }
    g_autoptr(GPtrArray) found = g_steal_pointer(&loaded);
    /* gemleak's own reports (CI shards) say what their targets were; one
     * that cannot be read (a newer shape) says why there are none. */
    g_autoptr(GError) unreadable = NULL;
    for (const char *const *input = inputs; *input != NULL; input++) {
        if (!gl_json_input_detect(*input))
            continue;
        GlJsonInput report = { 0 };
        if (gl_json_input_read(*input, NULL, 0, &report, unreadable == NULL ? &unreadable : NULL))
            for (guint i = 0; i < report.targets->len; i++)
                if (!g_ptr_array_find_with_equal_func(found, g_ptr_array_index(report.targets, i),
                                                      g_str_equal, NULL))
                    g_ptr_array_add(found, g_strdup(g_ptr_array_index(report.targets, i)));
        gl_json_input_clear(&report);
    }
    if (found->len == 0 && *have_lists && !unlisted) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "no Ruby process of the run loaded a native extension: was it built (rake "
                    "compile)? A LoadError in the suite's output says what Ruby could not load");
        return FALSE;
    }
    if (found->len == 0) {
        g_autofree char *cwd = g_get_current_dir();
        g_ptr_array_unref(found);
        found = gl_targets_from_tree(cwd);
    }
    if (found->len == 0 && unreadable != NULL) {
        g_propagate_error(error, g_steal_pointer(&unreadable));
        return FALSE;
    }
    if (found->len == 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "no target extension known: name it with --object NAME (the name given "
                    "to create_makefile in extconf.rb), a path or a glob of its .so (without "
                    "the lists of a gemleak run, only the current directory's own Ruby "
                    "extensions are looked for, and no system directory)");
        return FALSE;
    }
    for (guint i = 0; i < found->len; i++) {
        const char *path = g_ptr_array_index(found, i);
        if (!gl_rules_add_target(rules, path, error))
            return FALSE;
        g_ptr_array_add(shown, g_strdup(path));
    }
    return TRUE;
}

/* Returns: TRUE if a frame of some error read lies in a target: a process
 * under Valgrind loaded it, whether the helper recorded it or not. */
static gboolean targets_seen(const GlRules *rules, const GlAnalysis *analysis)
{
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, analysis->objects);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        for (guint t = 0; t < gl_rules_n_targets(rules); t++)
            if (gl_rules_target_matches(rules, t, key))
                return TRUE;
    return FALSE;
}

/* On XML without the run's lists, a clean extension may be in no error at
 * all: a pattern that matches no object the errors show is worth a
 * warning, not a failure. */
static void warn_unseen_targets(const GlRules *rules, const GlAnalysis *analysis, FILE *err)
{
    for (guint t = 0; t < gl_rules_n_targets(rules); t++) {
        GHashTableIter iter;
        gpointer key;
        gboolean seen = FALSE;
        g_hash_table_iter_init(&iter, analysis->objects);
        while (!seen && g_hash_table_iter_next(&iter, &key, NULL))
            seen = gl_rules_target_matches(rules, t, key);
        if (seen)
            continue;
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        g_hash_table_iter_init(&iter, analysis->objects);
        while (g_hash_table_iter_next(&iter, &key, NULL)) {
            const char *path = key;
            if (!g_str_has_suffix(path, ".so") || g_str_has_prefix(path, "/usr/") ||
                g_str_has_prefix(path, "/lib"))
                continue;
            g_ptr_array_add(names, g_path_get_basename(path));
        }
        g_ptr_array_sort(names, gl_compare_strings);
        while (names->len > 8)
            g_ptr_array_remove_index(names, names->len - 1);
        g_ptr_array_add(names, NULL);
        g_autofree char *list = g_strjoinv(", ", (char **) names->pdata);
        fprintf(err, "gemleak: warning: --object %s matches no object in the errors read%s%s%s: "
                "the extension may be clean, or the name wrong\n",
                gl_rules_target_pattern(rules, t), *list != '\0' ? " (they show " : "", list,
                *list != '\0' ? ")" : "");
    }
}

/* ---- reports -------------------------------------------------------------- */

/* ---- where reports go ----------------------------------------------------- */

/* Lists every report of @options (the text report when none is named), and
 * refuses, before anything is read or run, what gl_sinks_check() refuses:
 * @inputs and @keep_dir are what gemleak will read.
 * Returns: (transfer full) (nullable): the sinks; NULL with @error set. */
static GlSinks *plan_sinks(const Options *options, const char *const *inputs,
                           const char *keep_dir, FILE *stream, FILE *out, GError **error)
{
    g_autoptr(GlSinks) sinks = gl_sinks_new(stream, out);
    if (options->outputs->len == 0)
        gl_sinks_add(sinks, &gl_report_text, g_strdup("the text report"), NULL, options->color,
                     FALSE);
    for (guint i = 0; i < options->outputs->len; i++) {
        const Output *output = g_ptr_array_index(options->outputs, i);
        char *label = output->path != NULL
            ? g_strdup_printf("the %s report (%s)", output->format, output->path)
            : g_strdup_printf("the %s report", output->format);
        gl_sinks_add(sinks, gl_reporter_find(output->format), label, output->path,
                     options->color, FALSE);
    }
    if (options->suppressions_out != NULL)
        gl_sinks_add(sinks, &gl_report_supp,
                     g_strdup_printf("--suppressions-out %s", options->suppressions_out),
                     options->suppressions_out, "never", FALSE);
    if (options->write_baseline != NULL)
        gl_sinks_add(sinks, &gl_report_json,
                     g_strdup_printf("--write-baseline %s", options->write_baseline),
                     options->write_baseline, "never", TRUE);
    const GlSinkReads reads = {
        .inputs = inputs,
        .skip_functions_file = options->skip_functions_file,
        .keep_dir = keep_dir,
        .baseline = options->baseline,
    };
    if (!gl_sinks_check(sinks, &reads, error))
        return NULL;
    return g_steal_pointer(&sinks);
}

typedef struct {
    gboolean gate_failed;
    gboolean problems;
    const char *trouble; /* what the problems come to, for run's last line */
    int status;          /* the exit status it makes */
} Outcome;

/* filter's exit status: findings that fail the gate win over inputs that
 * could not be read whole. */
static int filter_status(const Outcome *outcome)
{
    if (outcome->gate_failed)
        return GL_EXIT_FINDINGS;
    return outcome->problems ? GL_EXIT_ERROR : GL_EXIT_CLEAN;
}

/* run's exit status says, alone, which of the gate and the command failed
 * (minitest, rspec and rake exit 1 on a failing test, as a leak did):
 * findings that fail the gate, with (5) or without (1) a failing command;
 * else Valgrind or gemleak trouble (3); else a failing command (4). */
static int run_status(const Outcome *outcome, const GlRunResult *run)
{
    gboolean command_failed = run->status != 0;
    if (outcome->gate_failed)
        return command_failed ? GL_EXIT_FINDINGS_AND_COMMAND_FAILED : GL_EXIT_FINDINGS;
    if (outcome->problems)
        return GL_EXIT_ERROR;
    return command_failed ? GL_EXIT_COMMAND_FAILED : GL_EXIT_CLEAN;
}

/* Returns: (transfer full): how the command ended, as the last line says it. */
static char *command_ending(const GlRunResult *run)
{
    if (run->status == 0)
        return g_strdup("the command passed");
    if (run->killed_by != 0)
        return g_strdup_printf("the command failed (killed by %s)", gl_signal_name(run->killed_by));
    return g_strdup_printf("the command failed (exit status %d)", run->status);
}

/* Returns: (transfer full): the text report's last line in run: the exit
 * status and what it means. */
static char *run_exit_line(int status, const GlRunResult *run, const Outcome *outcome)
{
    g_autofree char *command = command_ending(run);
    switch (status) {
    case GL_EXIT_CLEAN:
        return g_strdup("gemleak: exit status 0: nothing fails the gate, and the command passed");
    case GL_EXIT_FINDINGS:
        return g_strdup("gemleak: exit status 1: findings fail the gate; the command passed");
    case GL_EXIT_ERROR:
        return g_strdup_printf("gemleak: exit status 3: %s (see gemleak's messages); nothing "
                               "fails the gate, and %s", outcome->trouble, command);
    case GL_EXIT_COMMAND_FAILED:
        return g_strdup_printf("gemleak: exit status 4: %s; nothing fails the gate", command);
    case GL_EXIT_FINDINGS_AND_COMMAND_FAILED:
        return g_strdup_printf("gemleak: exit status 5: findings fail the gate, and %s", command);
    default:
        return g_strdup_printf("gemleak: exit status %d", status);
    }
}

/* Reads @inputs with what @plan says (its rules get the targets), writes
 * every report, says what went wrong on @err, and sets @outcome. @run
 * (nullable: filter) is the run that wrote the inputs: which of its
 * processes a signal killed, how its command ended.
 * Returns: FALSE with @error set when the targets cannot be settled;
 * nothing is read or written then. */
static gboolean analyze_and_report(const Options *options, Plan *plan, const char *const *inputs,
                                   const GlRunResult *run, FILE *err, Outcome *outcome,
                                   GError **error)
{
    GlRules *rules = plan->rules;
    const GlBaseline *baseline = plan->baseline;
    g_autoptr(GPtrArray) shown = g_ptr_array_new_null_terminated(4, g_free, TRUE);
    gboolean have_lists = FALSE;
    g_auto(GlRunCoverage) coverage_data = { 0 };
    GlRunCoverage *coverage = &coverage_data;
    gl_rundir_coverage(inputs, coverage);
    if (!resolve_targets(options, inputs, coverage->unlisted > 0, rules, shown, &have_lists,
                         error))
        return FALSE;

    g_autoptr(GlAnalysis) analysis = gl_analyze_with_killed(inputs, rules, effective_jobs(options),
                                                                run != NULL ? run->killed : NULL);
    if (options->per_test != NULL && analysis->summary.files > 0 &&
        analysis->summary.marked_files == 0)
        fprintf(err, "gemleak: warning: --per-test: no process ran a test under minitest, "
                "test-unit or RSpec that gemleak could follow (see any warning of the helper "
                "above): no finding names a test\n");
    if (!have_lists && options->objects != NULL && analysis->summary.files > 0)
        warn_unseen_targets(rules, analysis, err);
    guint known = 0;
    g_autoptr(GPtrArray) reported = baseline != NULL
        ? gl_baseline_filter(baseline, analysis->findings, &known)
        : g_ptr_array_ref(analysis->findings);
    /* Writing a baseline adopts the findings there are: the run passes
     * unless --fail-on asks otherwise. */
    GlGate gate = plan->gate;
    gboolean adopting = options->write_baseline != NULL && options->fail_on == NULL;
    if (adopting)
        gl_gate_parse_fail_on(&gate, "none", NULL);
    GlGateResult gate_result;
    /* What ran outside Valgrind and loaded an extension is trouble, said
     * with the unreadable inputs, in every report; and so is a run in
     * which no process under Valgrind loaded a target: it checked nothing. */
    for (guint i = 0; i < coverage->unchecked->len; i++)
        g_ptr_array_add(analysis->problems,
                        g_error_new(GL_ERROR, GL_ERROR_CHILD, "%s: what it ran was not checked%s",
                                    (const char *) g_ptr_array_index(coverage->unchecked, i),
                                    options->spare_launchers && !options->trace_launchers
                                        ? "; run again without --spare-launchers" : ""));
    gboolean checked_nothing = (run != NULL || coverage->runs > 0 || coverage->lists > 0) &&
                               coverage->checked == 0 &&
                               !targets_seen(rules, analysis);
    if (checked_nothing) {
        g_autofree char *targets = g_strjoinv(", ", (char **) shown->pdata);
        g_ptr_array_add(analysis->problems, g_error_new(
            GL_ERROR, GL_ERROR_CHILD, "nothing was checked: no process under Valgrind loaded %s "
            "(does the command run the tests? %s)", targets, coverage->lists == 0
                ? "no Ruby process ran with gemleak's helper: a Ruby started with its own "
                  "RUBYOPT, or none, does not, and then only --object tells its extension"
                : "the Ruby processes gemleak's helper ran in loaded none of them"));
    }
    analysis->summary.unchecked_processes += coverage->unchecked->len;
    gl_gate_evaluate(&gate, reported, analysis->summary.incomplete_files,
                     analysis->summary.unchecked_processes, checked_nothing, &gate_result);
    if (adopting) {
        g_free(gate_result.line);
        gate_result.line = g_strdup_printf(
            "gemleak: pass: %u finding%s written to the baseline %s (with --fail-on they fail "
            "this run too)", analysis->findings->len, analysis->findings->len == 1 ? "" : "s",
            options->write_baseline);
    }
    outcome->gate_failed = gate_result.failed;
    outcome->problems = analysis->problems->len > 0;
    outcome->status = run != NULL ? run_status(outcome, run) : filter_status(outcome);
    outcome->trouble = checked_nothing ? "nothing was checked"
                       : coverage->unchecked->len > 0 ? "a process loaded an extension outside "
                                                        "Valgrind"
                       : "Valgrind's XML could not all be read";
    g_autofree char *exit_line = run != NULL ? run_exit_line(outcome->status, run, outcome) : NULL;
    GlReportContext context = {
        .analysis = analysis,
        .findings = reported,
        .baseline_known = known,
        .gate = &gate_result,
        .fail_on = &gate,
        .targets = (const char *const *) shown->pdata,
        .suppressions = options->gen_suppressions,
        .project_root = plan->project_root,
        .frames_after = plan->frames_after,
        .exit_line = exit_line,
        .ran_command = run != NULL,
        .command_status = run != NULL ? run->status : 0,
    };

    /* Every report is tried: one that cannot be written (a full disk) is
     * said, and is trouble, but never hides what the gate decided. */
    if (!gl_sinks_write(plan->sinks, &context, analysis->findings, err)) {
        outcome->problems = TRUE;
        outcome->status = run != NULL ? run_status(outcome, run) : filter_status(outcome);
    }
    /* One line each, whatever the file names in them hold. */
    for (guint i = 0; i < analysis->notes->len; i++) {
        g_autofree char *note = gl_text_escape(g_ptr_array_index(analysis->notes, i));
        fprintf(err, "gemleak: note: %s\n", note);
    }
    for (guint i = 0; i < analysis->problems->len; i++) {
        g_autofree char *problem =
            gl_text_escape(((GError *) g_ptr_array_index(analysis->problems, i))->message);
        fprintf(err, "gemleak: %s\n", problem);
    }
    gl_gate_result_clear(&gate_result);
    return TRUE;
}

/* ---- commands --------------------------------------------------------------- */

static int usage_error(FILE *err, const char *command, const GError *error)
{
    fprintf(err, "gemleak: %s\n", error->message);
    fprintf(err, "Try 'gemleak %s --help'.\n", command);
    return GL_EXIT_USAGE;
}

static int fail(FILE *err, const char *command, const GError *error)
{
    GlExitStatus status = gl_error_exit_status(error);
    if (status == GL_EXIT_USAGE)
        return usage_error(err, command, error);
    fprintf(err, "gemleak: %s\n", error->message);
    return status;
}

/* Parses @argv (@argc of them, the command's name first) into @options; a
 * lone -o before any --format is the text report's.
 * Returns: (transfer full): the arguments left, the command's name first;
 * NULL with @error set. */
static char **parse_options(GOptionContext *context, Options *options, int argc, char **argv,
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

static int cmd_filter(int argc, char **argv, FILE *out, FILE *err)
{
    /* GOption's usage line names the program: make it the command. */
    g_set_prgname("gemleak filter");
    Options options;
    options_init(&options);
    g_autoptr(GOptionContext) context = new_context("FILE|DIR|-...", filter_summary,
                                                    filter_description, filter_exit_statuses,
                                                    report_group(&options));
    g_autoptr(GError) error = NULL;
    Plan plan = { 0 };
    int status;
    g_auto(GStrv) args = parse_options(context, &options, argc, argv, &error);
    if (args == NULL) {
        status = fail(err, "filter", error);
        goto out;
    }
    if (options.help) {
        g_autofree char *help = g_option_context_get_help(context, TRUE, NULL);
        fputs(help, out);
        status = GL_EXIT_CLEAN;
        goto out;
    }
    /* GOption leaves the "--" it stopped at: what follows are inputs, even
     * those that start with a dash. */
    for (guint i = 1; args[i] != NULL; i++) {
        if (strcmp(args[i], "--") == 0) {
            g_free(args[i]);
            memmove(args + i, args + i + 1, (g_strv_length(args + i + 1) + 1) * sizeof *args);
            break;
        }
    }
    if (args[1] == NULL) {
        g_set_error(&error, GL_ERROR, GL_ERROR_USAGE,
                    "no input: give Valgrind XML files, directories of them, or - for "
                    "standard input");
        status = usage_error(err, "filter", error);
        goto out;
    }

    if (!plan_build(&options, &plan, &error) ||
        !(plan.sinks = plan_sinks(&options, (const char *const *) args + 1, NULL, out, out,
                                  &error))) {
        status = fail(err, "filter", error);
        goto out;
    }
    say_jobs_capped(&options, err);
    Outcome outcome = { 0 };
    if (!analyze_and_report(&options, &plan, (const char *const *) args + 1, NULL, err,
                            &outcome, &error)) {
        status = fail(err, "filter", error);
        goto out;
    }
    status = outcome.status;
out:
    plan_clear(&plan);
    options_clear(&options);
    return status;
}

/* ---- run ------------------------------------------------------------------------ */

/* --per-test[=test|file]: bare, per test. */
static gboolean on_per_test(const char *name, const char *value, gpointer data, GError **error)
{
    Options *options = data;
    (void) name;
    if (value != NULL && strcmp(value, "test") != 0 && strcmp(value, "file") != 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--per-test=%s: give test (a leak check after each test) or file (after "
                    "each test file)", value);
        return FALSE;
    }
    g_free(options->per_test);
    options->per_test = g_strdup(value != NULL ? value : "test");
    return TRUE;
}

static GOptionGroup *run_group(Options *options)
{
    const GOptionEntry entries[] = {
        { "valgrind", 0, 0, G_OPTION_ARG_FILENAME, &options->valgrind,
          "The Valgrind to run (default: valgrind on PATH)", "PATH" },
        { "valgrind-opt", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->valgrind_opts,
          "Pass OPT to Valgrind as it is; repeatable", "OPT" },
        { "suppressions-dir", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->suppressions_dirs,
          "Use ruby.supp, ruby-3.supp, ruby-3.1.supp... from DIR; repeatable "
          "(default: ./suppressions if there is one)", "DIR" },
        { "keep-xml", 0, 0, G_OPTION_ARG_FILENAME, &options->keep_xml,
          "Write Valgrind's XML to DIR and keep it (default: a private directory, "
          "removed after a clean run); one run at a time in DIR, none under a directory "
          "others can write to", "DIR" },
        { "shard", 0, 0, G_OPTION_ARG_STRING, &options->shard,
          "Run only the I-th of N parts of the files after ::: (a CI shard); auto: I and N "
          "from GitLab's, CircleCI's or Buildkite's variables", "I/N|auto" },
        { "durations", 0, 0, G_OPTION_ARG_FILENAME, &options->durations,
          "Balance --jobs by the seconds each file took before, kept in FILE (default: "
          GL_DURATIONS_FILE ")", "FILE" },
        { "per-test", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer) on_per_test,
          "Name the test in which each leak was lost (minitest, test-unit, RSpec): a leak check "
          "after each test (--per-test alone), or after each test file; slower", "test|file" },
        { "spare-launchers", 0, 0, G_OPTION_ARG_NONE, &options->spare_launchers,
          "Run a launcher command (bundle, rake) outside Valgrind, faster: a Ruby it starts "
          "with its own RUBYOPT, or none, is then not checked", NULL },
        { "trace-launchers", 0, 0, G_OPTION_ARG_NONE, &options->trace_launchers,
          "Run a launcher command under Valgrind too (the default; undoes --spare-launchers)",
          NULL },
        G_OPTION_ENTRY_NULL,
    };
    GOptionGroup *group = g_option_group_new("run", "Run options:", "Show run options",
                                             options, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

static const char run_summary[] =
    "Runs COMMAND (a Ruby test suite, a script, rake...) under Valgrind memcheck,\n"
    "every Ruby process it starts included, then reports the errors that belong\n"
    "to the extensions it loaded (or to --object), leaving out Ruby's own.";

static const char run_description[] =
    "The report goes to standard error, apart from the command's own output, or\n"
    "to -o FILE. Valgrind's XML is kept, gzip-compressed, and its directory\n"
    "named, when the run finds something, fails or is interrupted; 'gemleak\n"
    "clean' removes the kept directories of old runs from TMPDIR.\n"
    "\n"
    "Every process the command starts runs under Valgrind, whatever its\n"
    "environment, but compilers, linkers and the small tools of a build that\n"
    "start no other program (cc, cc1, as, ld, install, rm, sed...), and the\n"
    "Ruby that runs extconf.rb (natively, watched: if it loads an extension of\n"
    "the project it starts again under Valgrind). Shells, make, xargs, find,\n"
    "git and launchers stay traced, so that no Ruby below them escapes.\n"
    "--valgrind-opt=--trace-children-skip=PATTERNS replaces that list (empty:\n"
    "trace everything). --spare-launchers runs a command that is a launcher\n"
    "(bundle, rake) outside Valgrind, and each Ruby it starts puts itself under\n"
    "Valgrind through gemleak's helper: faster, but a Ruby started with its\n"
    "own RUBYOPT, or none, is then not checked.\n"
    "\n"
    "Files after ::: are shared among --jobs processes, each running COMMAND\n"
    "with its share appended; the command must take several files (rspec, a\n"
    "loader): a bare ruby, which takes one script, gets a loader that requires\n"
    "each file. Shares are balanced by the time each file took in earlier runs,\n"
    "kept in " GL_DURATIONS_FILE " (--durations), else by file size.\n"
    "--shard I/N runs the I-th of N parts (split by file size, the same on every\n"
    "CI machine); --shard auto reads I and N from GitLab (CI_NODE_INDEX,\n"
    "CI_NODE_TOTAL), CircleCI (CIRCLE_NODE_INDEX, CIRCLE_NODE_TOTAL) or Buildkite\n"
    "(BUILDKITE_PARALLEL_JOB, BUILDKITE_PARALLEL_JOB_COUNT). Each shard's JSON\n"
    "report merges with the others' in 'gemleak filter s1.json s2.json...'.\n"
    "\n"
    "Examples:\n"
    "  gemleak run -- ruby -Ilib -Itest test/leak_test.rb\n"
    "  gemleak run --object redcarpet -- bundle exec rake test\n"
    "  gemleak run --format json -o leaks.json --format text -- rspec\n"
    "  gemleak run --jobs 2 -- ruby -Ilib -Itest ::: test/*_test.rb\n"
    "  gemleak run --shard auto --format json:shard.json -- rspec ::: spec/*_spec.rb\n";

/* Valgrind's XML and what the run says of it, for a user who wants it back:
 * compressed first (a failing suite's XML is tens to hundreds of MB,
 * gzip makes it 20 to 50 times smaller, and gemleak filter reads it as
 * it is), and where it is, how large, and how to be rid of it: gemleak
 * clean removes the run directories gemleak made, never a --keep-xml one
 * (@by_user), which is the user's to remove. */
static void keep_xml(FILE *err, const char *dir, gboolean by_user, guint jobs)
{
    GlCompressed compressed;
    gl_rundir_compress(dir, jobs, &compressed);
    for (guint i = 0; i < compressed.failures->len; i++)
        fprintf(err, "gemleak: warning: %s\n", (const char *) g_ptr_array_index(compressed.failures, i));
    g_autofree char *quoted = strpbrk(dir, " \t'\"\\$`!*?[]{}()<>|&;#~") != NULL
        ? g_shell_quote(dir) : g_strdup(dir);
    g_autofree char *kept = gl_format_bytes(compressed.kept_bytes);
    g_autofree char *plain = gl_format_bytes(compressed.plain_bytes);
    g_autofree char *size = compressed.files > 0
        ? g_strdup_printf("%s, gzip-compressed from %s", kept, plain) : g_strdup(kept);
    fprintf(err, "gemleak: Valgrind's XML is kept in %s (%s; read it again with: gemleak "
            "filter %s; %s)\n", dir, size, quoted,
            by_user ? "yours to remove: gemleak clean leaves --keep-xml directories alone"
                    : "remove old runs with: gemleak clean");
    gl_compressed_clear(&compressed);
}

/* What each file of a run that went through cost, for the next run's
 * --jobs: only a passing command's times say what its files cost (a
 * failing one may have stopped early, an interrupted one did). */
static void record_durations(const GlCommandPlan *commands, const char *path,
                             const GlRunResult *result, FILE *err)
{
    g_autoptr(GError) error = NULL;
    if (!commands->has_files || result->status != 0 || result->interrupted_by != 0)
        return;
    g_autoptr(GHashTable) measured = gl_rundir_test_durations(result->dir);
    if (!gl_durations_update(path, commands, (const double *) (void *) result->seconds->data,
                             measured, &error))
        fprintf(err, "gemleak: note: the durations of this run are not kept: %s\n",
                error->message);
}

/* Runs @command under Valgrind as @plan says and reports; the run
 * directory is kept unless all went well. */
static int run_planned(const Options *options, Plan *plan, char **command, FILE *err)
{
    g_autoptr(GError) error = NULL;
    int status;
    GlRunResult result = { 0 };
    gboolean keep = TRUE;
    GlCommandOptions planning = {
        .shard = options->shard,
        .jobs = effective_jobs(options),
        .durations = options->durations != NULL ? options->durations : GL_DURATIONS_FILE,
    };
    g_auto(GlCommandPlan) commands = { 0 };
    if (!not_empty("--durations", options->durations, &error) ||
        !gl_commands_plan(command, &planning, &commands, &error))
        return fail(err, "run", error);
    for (guint i = 0; i < commands.notes->len; i++)
        fprintf(err, "gemleak: note: %s\n", (const char *) g_ptr_array_index(commands.notes, i));
    if (options->per_test != NULL && !gl_per_test_available()) {
        g_set_error(&error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "--per-test: this gemleak was built without Valgrind's headers "
                    "(valgrind/valgrind.h; Debian: valgrind, Fedora: valgrind-devel): install "
                    "them and build gemleak again");
        return fail(err, "run", error);
    }

    /* The suppressions: gemleak's own for this Ruby, then the project's. */
    g_autofree char *data_dir = gl_data_dir();
    g_autoptr(GPtrArray) supp_dirs = g_ptr_array_new_null_terminated(4, g_free, TRUE);
    g_ptr_array_add(supp_dirs, g_build_filename(data_dir, "suppressions", NULL));
    g_autofree char *own_supp = g_build_filename(data_dir, "suppressions", "ruby.supp", NULL);
    if (!g_file_test(own_supp, G_FILE_TEST_IS_REGULAR))
        fprintf(err, "gemleak: warning: no %s: Ruby's own errors at exit are not suppressed "
                "(reinstall gemleak, or set GEMLEAK_DATADIR to the directory that holds "
                "suppressions/)\n", own_supp);
    for (char **dir = options->suppressions_dirs; dir != NULL && *dir != NULL; dir++) {
        if (!g_file_test(*dir, G_FILE_TEST_IS_DIR)) {
            g_set_error(&error, GL_ERROR, GL_ERROR_USAGE,
                        "--suppressions-dir %s: no such directory", *dir);
            return usage_error(err, "run", error);
        }
        g_ptr_array_add(supp_dirs, g_strdup(*dir));
    }
    if (options->suppressions_dirs == NULL && g_file_test("suppressions", G_FILE_TEST_IS_DIR))
        g_ptr_array_add(supp_dirs, g_strdup("suppressions"));
    const char *ruby = gl_is_ruby_object(command[0]) ? command[0] : "ruby";
    g_autofree char *ruby_version = gl_ruby_version(ruby);
    g_autoptr(GPtrArray) supps = gl_suppression_files((const char *const *) supp_dirs->pdata,
                                                      ruby_version);
    guint n_supps = supps->len;
    g_ptr_array_add(supps, NULL);

    GlRunOptions run = {
        .valgrind = options->valgrind != NULL ? options->valgrind : "valgrind",
        .valgrind_options = (const char *const *) options->valgrind_opts,
        .suppressions = (const char *const *) supps->pdata,
        .leak_kinds = gl_rules_get_leak_kinds(plan->rules),
        .gen_suppressions = options->gen_suppressions,
        .keep_dir = options->keep_xml,
        .messages = err,
        .per_test = options->per_test,
        .time_files = commands.has_files,
        .spare_launchers = options->spare_launchers && !options->trace_launchers,
    };
    say_jobs_capped(options, err);
    if (commands.commands->len > 1)
        fprintf(err, "gemleak: %u commands at once under Valgrind\n", commands.commands->len);
    if (!gl_run_commands(&run, commands.commands, &result, &error)) {
        status = fail(err, "run", error);
        goto done;
    }
    fprintf(err, "gemleak: ran under Valgrind %s with %u suppression file%s (Ruby %s)",
            result.valgrind_version, n_supps, n_supps == 1 ? "" : "s",
            ruby_version != NULL ? ruby_version : "unknown");
    if (result.untraced > 0)
        fprintf(err, "; %u process%s ran a compiler or another build tool outside it",
                result.untraced, result.untraced == 1 ? "" : "es");
    if (result.launcher != NULL)
        fprintf(err, "; %s ran outside it, as a launcher (--spare-launchers)", result.launcher);
    fputc('\n', err);
    if (result.interrupted_by != 0)
        fprintf(err, "gemleak: interrupted by %s: the report covers what Valgrind finished "
                "writing\n", g_strsignal(result.interrupted_by));
    else if (result.killed_by != 0)
        fprintf(err, "gemleak: the command was killed by signal %d (%s)\n", result.killed_by,
                g_strsignal(result.killed_by));
    if (result.descendants_left && result.interrupted_by != 0)
        fprintf(err, "gemleak: processes the command started were still running when gemleak "
                "was interrupted: they were passed the signal, and their XML may be "
                "incomplete\n");
    else if (result.descendants_left)
        fprintf(err, "gemleak: processes the command started were still running a minute after "
                "it ended: their XML may be incomplete\n");
    record_durations(&commands, planning.durations, &result, err);
    if (!gl_list_xml_files_any(result.dir)) {
        if (result.launcher != NULL)
            fprintf(err, "gemleak: nothing ran under Valgrind: %s, a launcher, runs outside it, "
                    "and started no Ruby process that did (status %d; without --spare-launchers it "
                    "runs under Valgrind too)\n", result.launcher, result.status);
        else
            fprintf(err, "gemleak: Valgrind wrote no XML: see its messages above (did the command "
                    "exist? status %d)\n", result.status);
        status = GL_EXIT_ERROR;
        goto done;
    }

    const char *inputs[] = { result.dir, NULL };
    Outcome outcome = { 0 };
    if (!analyze_and_report(options, plan, inputs, &result, err, &outcome, &error)) {
        /* what ran outside Valgrind may be why no target was seen */
        for (guint i = 0; i < result.outside->len; i++)
            fprintf(err, "gemleak: %s\n", (const char *) g_ptr_array_index(result.outside, i));
        status = fail(err, "run", error);
        goto done;
    }
    status = outcome.status;
    keep = status != 0 || result.interrupted_by != 0;
done:
    if (result.dir != NULL && (keep || result.kept_by_user))
        keep_xml(err, result.dir, result.kept_by_user, effective_jobs(options));
    gl_run_result_clear(&result, !keep);
    return status;
}

static int run_and_report(const Options *options, char **command, FILE *out, FILE *err)
{
    g_autoptr(GError) error = NULL;
    Plan plan = { 0 };
    int status;
    /* Usage errors now, not after minutes under Valgrind. */
    if ((options->keep_xml != NULL ? !gl_run_check_keep_dir(options->keep_xml, &error)
                                   : !gl_run_check_tmpdir(&error)) ||
        !plan_build(options, &plan, &error) ||
        !(plan.sinks = plan_sinks(options, NULL, options->keep_xml, err, out, &error)))
        status = fail(err, "run", error);
    else
        status = run_planned(options, &plan, command, err);
    plan_clear(&plan);
    return status;
}

static int cmd_run(int argc, char **argv, FILE *out, FILE *err)
{
    g_set_prgname("gemleak run");
    Options options;
    options_init(&options);
    g_autoptr(GOptionContext) context = new_context("[--] COMMAND [ARG...]", run_summary,
                                                    run_description, run_exit_statuses,
                                                    report_group(&options));
    g_option_context_add_group(context, run_group(&options));
    /* Options end at the command: its own options are its business. */
    g_option_context_set_strict_posix(context, TRUE);
    g_autoptr(GError) error = NULL;
    int status;
    g_auto(GStrv) args = parse_options(context, &options, argc, argv, &error);
    if (args == NULL) {
        status = fail(err, "run", error);
    } else if (options.help) {
        /* GOption heads the main group "Application Options:" once there is
         * another group; here they are the report options, as in filter. */
        g_autofree char *text = g_option_context_get_help(context, FALSE, NULL);
        g_autoptr(GString) help = g_string_new(text);
        g_string_replace(help, "\nApplication Options:\n", "\nReport options:\n", 1);
        fputs(help->str, out);
        status = GL_EXIT_CLEAN;
    } else {
        char **command = args + 1;
        if (command[0] != NULL && strcmp(command[0], "--") == 0)
            command++;
        if (command[0] == NULL) {
            g_set_error(&error, GL_ERROR, GL_ERROR_USAGE,
                        "no command: give the command to run after --, e.g. "
                        "gemleak run -- ruby test.rb");
            status = usage_error(err, "run", error);
        } else {
            status = run_and_report(&options, command, out, err);
        }
    }
    options_clear(&options);
    return status;
}

/* ---- clean ------------------------------------------------------------------------ */

static const char clean_summary[] =
    "Removes the run directories gemleak left in TMPDIR (gemleak-run-XXXXXX:\n"
    "Valgrind's XML of runs that failed or were interrupted, and the helper\n"
    "directories of a gemleak that was killed), and only those: directories\n"
    "of yours, mode 0700, holding nothing gemleak does not write there, that\n"
    "no running gemleak holds. --keep-xml directories are yours to remove.";

static int cmd_clean(int argc, char **argv, FILE *out, FILE *err)
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
    if (!g_option_context_parse_strv(context, &args, &error)) {
        error->code = GL_ERROR_USAGE;
        return usage_error(err, "clean", error);
    }
    if (help) {
        g_autofree char *text = g_option_context_get_help(context, TRUE, NULL);
        fputs(text, out);
        return GL_EXIT_CLEAN;
    }
    if (args[1] != NULL) {
        g_set_error(&error, GL_ERROR, GL_ERROR_USAGE, "clean takes no arguments (it looks in "
                    "TMPDIR, %s)", g_get_tmp_dir());
        return usage_error(err, "clean", error);
    }
    gl_rundir_clean(g_get_tmp_dir(), dry_run, out);
    return GL_EXIT_CLEAN;
}

static const char general_help[] =
    "Usage:\n"
    "  gemleak filter [OPTION...] FILE|DIR|-...\n"
    "  gemleak run [OPTION...] [--] COMMAND [ARG...]\n"
    "  gemleak clean [--dry-run]\n"
    "  gemleak --version\n"
    "\n"
    "Finds the real memory leaks and memory errors of Ruby native extensions in\n"
    "Valgrind memcheck's output, without the thousands of errors Ruby itself\n"
    "leaves at exit.\n"
    "\n"
    "Commands:\n"
    "  filter   read existing Valgrind XML (or gemleak JSON reports, to merge CI\n"
    "           shards) and report the target's errors\n"
    "  run      run a Ruby command under Valgrind, then filter and report\n"
    "  clean    remove the XML of old runs that gemleak kept in TMPDIR\n"
    "\n"
    "Start with:  gemleak run -- bundle exec rake test\n"
    "\n"
    "'gemleak COMMAND --help' describes each command; gemleak(1) tells all.\n";

int gemleak_main(int argc, char **argv, FILE *out, FILE *err)
{
    /* The user's locale: GOption converts STRING values from its charset. */
    setlocale(LC_ALL, "");
    const char *command = argc > 1 ? argv[1] : NULL;
    if (command == NULL) {
        fputs(general_help, err);
        return GL_EXIT_USAGE;
    }
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(general_help, out);
        return GL_EXIT_CLEAN;
    }
    if (strcmp(command, "--version") == 0 || strcmp(command, "version") == 0) {
        fprintf(out, "gemleak %s\n", GEMLEAK_VERSION);
        return GL_EXIT_CLEAN;
    }
    if (strcmp(command, "filter") == 0)
        return cmd_filter(argc - 1, argv + 1, out, err);
    if (strcmp(command, "run") == 0)
        return cmd_run(argc - 1, argv + 1, out, err);
    if (strcmp(command, "clean") == 0)
        return cmd_clean(argc - 1, argv + 1, out, err);
    fprintf(err, "gemleak: unknown command '%s'\n", command);
    fputs(general_help, err);
    return GL_EXIT_USAGE;
}
