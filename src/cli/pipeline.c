/* What filter and run share once the options are parsed and the plan
 * built (plan.c): the targets settled (pipeline_targets.c), the analysis,
 * its outcome judged (gemleak/judge/outcome.h), its reports, and the exit
 * status (exit_status.c). */
#include "cli_int.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/outcome.h"
#include "gemleak/read/run_record.h"
#include "gemleak/report/report.h"
#include "gemleak/read/run_dir.h"

/* What the options and the run say the outcome is judged from. */
static GlOutcomeInput outcome_input(const Options *options, const Plan *plan,
                                    const char *const *inputs, const GPtrArray *shown,
                                    const GlRunResult *run)
{
    return (GlOutcomeInput) {
        .inputs = inputs,
        .rules = plan->rules,
        .targets = (const char *const *) shown->pdata,
        .baseline = plan->baseline,
        .baseline_path = options->baseline,
        .write_baseline = plan->write_baseline,
        .baseline_missing = plan->baseline_missing,
        .gate = plan->gate,
        .fail_on_given = options->fail_on != NULL,
        .project_root = plan->project_root,
        .ran = run != NULL,
        .killed = run != NULL ? run->killed : NULL,
        .interrupted_by = run != NULL ? run->interrupted_by : 0,
        .launcher_outside = run != NULL && run->launcher != NULL,
    };
}

/* Says what --per-test and --object could not do in @analysis. */
static void warn_of_options(const Options *options, const GlRules *rules,
                            const GlAnalysis *analysis, gboolean have_lists, FILE *err)
{
    if (options->per_test != NULL && analysis->summary.processes > 0 &&
        analysis->summary.marked_files == 0)
        fprintf(err, "gemleak: warning: --per-test: no process ran a test under minitest, "
                "test-unit or RSpec that gemleak could follow (see any warning of the helper "
                "above): no finding names a test\n");
    if (!have_lists && options->objects != NULL && analysis->summary.processes > 0)
        gl_cli_warn_unseen_targets(rules, analysis, err);
}

/* What the findings needed of the objects and the checkout, as they are
 * now, into the run directory @dir: read anywhere, any time later, it says
 * what it says now. */
static void record_run(GlAnalysis *analysis, const char *dir, const char *project_root,
                       FILE *err)
{
    GlRunRecord *record = gl_run_records_of(analysis->records, dir, NULL);
    gl_analysis_record(analysis, record, project_root);
    g_autoptr(GError) unwritten = NULL;
    if (!gl_run_record_write(record, dir, &unwritten)) {
        g_autofree char *why = gl_text_escape(unwritten->message);
        fprintf(err, "gemleak: warning: %s: read elsewhere or after a rebuild, the run "
                "directory reads from the objects and sources as they are then\n", why);
    }
}

/* Says @analysis's notes and problems on @err, one line each, whatever the
 * file names in them hold. */
static void say_notes_and_problems(const GlAnalysis *analysis, FILE *err)
{
    for (guint i = 0; i < analysis->notes->len; i++) {
        g_autofree char *note = gl_text_escape(g_ptr_array_index(analysis->notes, i));
        fprintf(err, "gemleak: note: %s\n", note);
    }
    for (guint i = 0; i < analysis->problems->len; i++) {
        g_autofree char *problem =
            gl_text_escape(((GError *) g_ptr_array_index(analysis->problems, i))->message);
        fprintf(err, "gemleak: %s\n", problem);
    }
}

/* Reads @inputs with what @plan says (its rules get the targets), judges
 * the outcome (gemleak/judge/outcome.h), writes every report, says what
 * went wrong on @err, and sets @outcome's exit status. @run (nullable:
 * filter) is the run that wrote the inputs: which of its processes a
 * signal killed, how its command ended.
 * Returns: FALSE with @error set when the targets cannot be settled;
 * nothing is read or written then. */
gboolean gl_cli_analyze_and_report(const Options *options, Plan *plan, const char *const *inputs,
                                   const GlRunResult *run, FILE *err, Outcome *outcome,
                                   GError **error)
{
    g_autoptr(GPtrArray) shown = g_ptr_array_new_null_terminated(4, g_free, TRUE);
    gboolean have_lists = FALSE;
    g_auto(GlRunCoverage) coverage = { 0 };
    gl_run_dir_coverage(inputs, &coverage);
    if (!gl_cli_resolve_targets(options, plan->sinks, inputs, &coverage, plan->rules, shown,
                                &have_lists, error))
        return FALSE;

    g_autoptr(GlAnalysis) analysis = gl_analyze_with_killed(inputs, plan->rules,
                                                            gl_cli_effective_jobs(options),
                                                            run != NULL ? run->killed : NULL,
                                                            run != NULL ? run->objects : NULL);
    warn_of_options(options, plan->rules, analysis, have_lists, err);
    GlOutcomeInput input = outcome_input(options, plan, inputs, shown, run);
    GlOutcome judged;
    gl_outcome_judge(analysis, &input, &coverage, &judged);
    if (run != NULL && run->dir != NULL)
        record_run(analysis, run->dir, plan->project_root, err);
    outcome->status = run != NULL ? gl_cli_run_status(&judged, run) : gl_cli_filter_status(&judged);
    g_autofree char *exit_line = run != NULL
        ? gl_cli_run_exit_line(outcome->status, run, &judged, &coverage) : NULL;
    g_autofree char *trouble = gl_trouble_describe(judged.trouble, &coverage);
    GlReportContext context = {
        .analysis = analysis,
        .findings = judged.reported,
        .baseline_known = judged.baseline_known,
        .gate = &judged.gate_result,
        .fail_on = &judged.gate,
        .targets = (const char *const *) shown->pdata,
        .suppressions = options->gen_suppressions,
        .project_root = plan->project_root,
        .frames_after = plan->frames_after,
        .exit_line = exit_line,
        .trouble = trouble,
        .ran_command = run != NULL,
        .command_status = run != NULL ? run->status : 0,
    };
    /* Every report is tried: one that cannot be written (a full disk) is
     * said, and is trouble, but never hides what the gate decided. */
    if (!gl_sinks_write(plan->sinks, &context, analysis->findings, err)) {
        judged.problems = TRUE;
        outcome->status = run != NULL ? gl_cli_run_status(&judged, run)
                                      : gl_cli_filter_status(&judged);
    }
    say_notes_and_problems(analysis, err);
    gl_outcome_clear(&judged);
    return TRUE;
}
