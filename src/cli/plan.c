/* The plan: what the options of filter and run say, checked and built
 * before any input is read or any command run (the rules, the gate, the
 * baseline, the project root, --frames), and the reports and where they
 * go, each destination checked first (gl_sinks_check()). */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/run_files.h"
#include "gemleak/read/run_record.h"
#include "gemleak/report/report.h"

#include <string.h>

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
 * whatever the reason: sets @error to one with the message of @cause
 * (consumed), whose code said why.
 * Returns: FALSE. */
static gboolean usage_failure(GError **error, GError *cause)
{
    g_set_error_literal(error, GL_ERROR, GL_ERROR_USAGE, cause->message);
    g_error_free(cause);
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
    if (options->no_ruby_memory_rule)
        gl_rules_drop_ruby_memory_rule(rules);
    for (char **p = options->skip_functions; p != NULL && *p != NULL; p++)
        if (!gl_rules_add_skip_function(rules, *p, error))
            return FALSE;
    g_autoptr(GError) unread = NULL;
    if (options->skip_functions_file != NULL &&
        !gl_rules_add_skip_functions_from_file(rules, options->skip_functions_file, &unread))
        return usage_failure(error, g_steal_pointer(&unread));
    gl_rules_set_all_errors(rules, options->all_errors);
    gl_rules_set_free_at_exit(rules, options->free_at_exit);
    return TRUE;
}

void gl_cli_plan_clear(Plan *plan)
{
    /* Not g_clear_pointer: clang-tidy takes its size check for a mistake. */
    gl_rules_free(plan->rules);
    plan->rules = NULL;
    gl_baseline_free(plan->baseline);
    plan->baseline = NULL;
    g_clear_pointer(&plan->project_root, g_free);
    g_clear_pointer(&plan->write_baseline, g_free);
    gl_sinks_free(plan->sinks);
    plan->sinks = NULL;
}

gboolean gl_cli_not_empty(const char *option, const char *value, GError **error)
{
    if (value == NULL || *value != '\0')
        return TRUE;
    g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%s: the value is empty", option);
    return FALSE;
}

/* Returns: (transfer full) (nullable): the project root the runs of the
 * run directories of @inputs recorded (run_record.h), when they recorded
 * one and the same. */
static char *recorded_root(const char *const *inputs)
{
    if (inputs == NULL)
        return NULL;
    g_autoptr(GPtrArray) dirs = gl_run_dirs(inputs);
    char *root = NULL;
    for (guint i = 0; i < dirs->len; i++) {
        g_autoptr(GlRunRecord) record = gl_run_record_read(g_ptr_array_index(dirs, i), NULL);
        const char *theirs = record != NULL ? gl_run_record_root(record) : NULL;
        if (theirs == NULL)
            continue;
        if (root != NULL && strcmp(root, theirs) != 0) {
            g_free(root);
            return NULL;
        }
        if (root == NULL)
            root = g_strdup(theirs);
    }
    return root;
}

/* Returns: (transfer full): --project-root, else the root of the run that
 * wrote @inputs (its frames' paths are that machine's), else
 * $GITHUB_WORKSPACE (where GitHub checks the repository out), else the
 * current directory. */
static char *project_root(const Options *options, const char *const *inputs)
{
    const char *workspace = g_getenv("GITHUB_WORKSPACE");
    if (options->project_root != NULL)
        return g_canonicalize_filename(options->project_root, NULL);
    char *recorded = recorded_root(inputs);
    if (recorded != NULL)
        return recorded;
    if (workspace != NULL && *workspace != '\0')
        return g_canonicalize_filename(workspace, NULL);
    return g_get_current_dir();
}

gboolean gl_cli_plan_build(const Options *options, const char *const *inputs, Plan *plan,
                           GError **error)
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
        if (!gl_cli_not_empty("--object", *p, error))
            return FALSE;
    if (!gl_cli_not_empty("--skip-functions-file", options->skip_functions_file, error) ||
        !gl_cli_not_empty("--baseline", options->baseline, error) ||
        !gl_cli_not_empty("--write-baseline", options->write_baseline, error) ||
        !gl_cli_not_empty("--suppressions-out", options->suppressions_out, error) ||
        !gl_cli_not_empty("--project-root", options->project_root, error) ||
        !build_rules(options, plan->rules, error))
        return FALSE;
    if (options->fail_on != NULL && !gl_gate_parse_fail_on(&plan->gate, options->fail_on, error))
        return FALSE;
    if (options->max_bytes != NULL) {
        if (!parse_unsigned("--max-bytes", options->max_bytes, &plan->gate.max_bytes, error))
            return FALSE;
        plan->gate.has_max_bytes = TRUE;
    }
    if (options->growth_min_bytes != NULL) {
        guint64 min_bytes = 0;
        if (!parse_unsigned("--growth-min-bytes", options->growth_min_bytes, &min_bytes, error))
            return FALSE;
        gl_rules_set_growth_min_bytes(plan->rules, min_bytes);
    }
    if (options->project_root != NULL &&
        !g_file_test(options->project_root, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--project-root %s: no such directory",
                    options->project_root);
        return FALSE;
    }
    plan->project_root = project_root(options, inputs);
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
    if (options->write_baseline_if_missing &&
        (options->baseline == NULL || options->write_baseline != NULL)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    options->baseline == NULL
                        ? "--write-baseline-if-missing: give the baseline with --baseline FILE"
                        : "--write-baseline-if-missing writes --baseline's FILE when it is "
                          "missing: give it or --write-baseline, not both");
        return FALSE;
    }
    plan->write_baseline = g_strdup(options->write_baseline);
    /* A gem's first run (in CI, before anyone wrote one) writes the
     * baseline it is told to read; one that exists and cannot be read is
     * still an error, never overwritten. A dangling link is missing too:
     * writing goes through it, as to any report. */
    if (options->write_baseline_if_missing &&
        !g_file_test(options->baseline, G_FILE_TEST_EXISTS)) {
        plan->baseline_missing = TRUE;
        plan->write_baseline = g_strdup(options->baseline);
        return TRUE;
    }
    g_autoptr(GError) unread = NULL;
    if (options->baseline != NULL &&
        (plan->baseline = gl_baseline_load(options->baseline, &unread)) == NULL)
        return usage_failure(error, g_steal_pointer(&unread));
    return TRUE;
}

/* ---- where reports go ----------------------------------------------------- */

/* Lists every report of @options (the text report when none is named), and
 * refuses, before anything is read or run, what gl_sinks_check() refuses:
 * @inputs and @keep_dir are what gemleak will read.
 * Returns: (transfer full) (nullable): the sinks; NULL with @error set. */
GlSinks *gl_cli_plan_sinks(const Options *options, const Plan *plan, const char *const *inputs,
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
    if (plan->write_baseline != NULL)
        gl_sinks_add(sinks, &gl_report_baseline,
                     g_strdup_printf("--write-baseline %s", plan->write_baseline),
                     plan->write_baseline, "never", TRUE);
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
