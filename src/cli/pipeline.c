/* What filter and run share once the options are parsed and the plan
 * built (plan.c): the targets settled (pipeline_targets.c), the analysis
 * and its reports, and the exit status (exit_status.c). */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/coverage.h"
#include "gemleak/judge/project_paths.h"
#include "gemleak/judge/stacks.h"
#include "gemleak/report/report.h"
#include "gemleak/read/run_dir.h"

#include <string.h>

/* Reads @inputs with what @plan says (its rules get the targets), writes
 * every report, says what went wrong on @err, and sets @outcome. @run
 * (nullable: filter) is the run that wrote the inputs: which of its
 * processes a signal killed, how its command ended.
 * Returns: FALSE with @error set when the targets cannot be settled;
 * nothing is read or written then. */
gboolean gl_cli_analyze_and_report(const Options *options, Plan *plan, const char *const *inputs,
                                   const GlRunResult *run, FILE *err, Outcome *outcome,
                                   GError **error)
{
    GlRules *rules = plan->rules;
    const GlBaseline *baseline = plan->baseline;
    g_autoptr(GPtrArray) shown = g_ptr_array_new_null_terminated(4, g_free, TRUE);
    gboolean have_lists = FALSE;
    g_auto(GlRunCoverage) coverage_data = { 0 };
    GlRunCoverage *coverage = &coverage_data;
    gl_run_dir_coverage(inputs, coverage);
    if (!gl_cli_resolve_targets(options, plan->sinks, inputs, coverage->unlisted > 0, rules, shown,
                                &have_lists, error))
        return FALSE;

    g_autoptr(GlAnalysis) analysis = gl_analyze_with_killed(inputs, rules, gl_cli_effective_jobs(options),
                                                                run != NULL ? run->killed : NULL);
    if (options->per_test != NULL && analysis->summary.processes > 0 &&
        analysis->summary.marked_files == 0)
        fprintf(err, "gemleak: warning: --per-test: no process ran a test under minitest, "
                "test-unit or RSpec that gemleak could follow (see any warning of the helper "
                "above): no finding names a test\n");
    if (!have_lists && options->objects != NULL && analysis->summary.processes > 0)
        gl_cli_warn_unseen_targets(rules, analysis, err);
    if (baseline != NULL && gl_baseline_version(baseline) < GL_FINGERPRINT_VERSION)
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "--baseline %s was written by an older gemleak: its findings are matched as it "
            "fingerprinted them, which %s; write it again with --write-baseline",
            options->baseline, gl_baseline_version(baseline) == 1
                ? "another Ruby changes"
                : gl_baseline_version(baseline) == 2
                ? "tells neither two sites of one function nor the kinds of the errors on one "
                  "freed block apart"
                : "names a function the compiler split by its part (.cold, .part.N), which "
                  "another optimisation level changes, and holds what called a recursion, "
                  "which one engine sees and another does not"));
    guint known = 0;
    g_autoptr(GPtrArray) reported = baseline != NULL
        ? gl_baseline_filter(baseline, analysis->findings, &known)
        : g_ptr_array_ref(analysis->findings);
    /* A lost cycle's definitely lost block is the one Valgrind meets
     * first: another of its blocks next run. With its indirect blocks
     * shown, a baseline knows it by any of their sites. */
    if (baseline != NULL && !(gl_rules_get_leak_kinds(rules) & GL_LEAK_INDIRECT)) {
        guint structures = 0;
        for (guint i = 0; i < reported->len; i++)
            structures += ((const GlFinding *) g_ptr_array_index(reported, i))->structure_fingerprint
                          != NULL;
        if (structures > 0)
            g_ptr_array_add(analysis->notes, g_strdup_printf(
                "%u new finding%s lost other blocks with %s (indirect bytes): in a leaked cycle, "
                "Valgrind names another of its blocks in another run; with --leak-kinds "
                "definite,indirect a baseline knows a cycle by any of its blocks", structures,
                structures == 1 ? "" : "s", structures == 1 ? "it" : "them"));
    }
    /* An extension built without -g: its frames placed as its symbol table
     * can, and one line, once, on how to get file and line. */
    g_autoptr(GPtrArray) undebugged = gl_findings_place_units(analysis->findings,
                                                              plan->project_root);
    for (guint i = 0; i < undebugged->len; i++)
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "%s was built without debug information (no -g): its frames have no file or line; "
            "the reports place them at the source file its symbol table names, else at the "
            "object; a build with -g (in extconf.rb, $CFLAGS << \" -g\" after what sets "
            "$CFLAGS) gives them", gl_base_name(g_ptr_array_index(undebugged, i))));
    guint cut = gl_stacks_cut_short(reported);
    /* a log gemleak only read: its runtime's options make the next whole */
    guint cut_in_logs = 0;
    const char *whole_stacks = NULL;
    for (guint i = 0; i < reported->len; i++) {
        const GlRecord *record = ((const GlFinding *) g_ptr_array_index(reported, i))->record;
        if (record->stack_cut > 0 && record->whole_stacks != NULL) {
            cut_in_logs++;
            if (whole_stacks == NULL || strlen(record->whole_stacks) > strlen(whole_stacks))
                whole_stacks = record->whole_stacks;
        }
    }
    GError *cut_problem = gl_stacks_cut_short_problem(cut - cut_in_logs);
    if (cut_problem != NULL)
        g_ptr_array_add(analysis->problems, cut_problem);
    GError *log_cut_problem = gl_coverage_log_cut_problem(cut_in_logs, whole_stacks);
    if (log_cut_problem != NULL)
        g_ptr_array_add(analysis->problems, log_cut_problem);
    GlGate gate = plan->gate;
    gboolean adopting = gl_gate_adopt(&gate, plan->write_baseline != NULL,
                                      options->fail_on != NULL);
    GlGateResult gate_result;
    /* What ran outside Valgrind and loaded an extension is trouble, said
     * with the unreadable inputs, in every report; and so is a run in
     * which no process under Valgrind loaded a target: it checked nothing. */
    gl_coverage_require_proof(inputs, analysis->checked_to_end, run != NULL ? run->killed : NULL,
                              coverage);
    for (guint i = 0; i < coverage->unchecked->len; i++)
        g_ptr_array_add(analysis->problems,
                        g_error_new(GL_ERROR, GL_ERROR_CHILD, "%s: what it ran was not checked%s",
                                    (const char *) g_ptr_array_index(coverage->unchecked, i),
                                    run != NULL && run->launcher != NULL
                                        ? "; run again with --trace-launchers" : ""));
    /* an extension the engine cannot see into was not checked for what it
     * would have seen */
    guint uninstrumented = gl_coverage_require_instrumented(inputs, analysis->records,
                                                            analysis->problems);
    /* What the findings needed of the objects and the checkout, as they
     * are now, into the run directory: read anywhere, any time later, it
     * says what it says now. */
    if (run != NULL && run->dir != NULL) {
        GlRunRecord *record = gl_run_records_of(analysis->records, run->dir, NULL);
        gl_analysis_record(analysis, record, plan->project_root);
        g_autoptr(GError) unwritten = NULL;
        if (!gl_run_record_write(record, run->dir, &unwritten)) {
            g_autofree char *why = gl_text_escape(unwritten->message);
            fprintf(err, "gemleak: warning: %s: read elsewhere or after a rebuild, the run "
                    "directory reads from the objects and sources as they are then\n", why);
        }
    }
    gboolean checked_nothing = gl_coverage_checked_nothing(
        coverage, run != NULL, gl_coverage_targets_seen(rules, analysis->objects));
    if (checked_nothing) {
        g_autofree char *targets = g_strjoinv(", ", (char **) shown->pdata);
        g_ptr_array_add(analysis->problems, gl_coverage_checked_nothing_problem(coverage, targets));
    }
    analysis->summary.unchecked_processes += coverage->unchecked->len + uninstrumented;
    /* A run a signal cut short (CI cancelling the job) checked only what
     * ran before it: its processes' checks may never have run (a Ruby the
     * signal ends skips LeakSanitizer's exit check), and the rest of the
     * suite did not run at all. The directory says so to filter too. */
    const char *interrupted = coverage->interrupted != NULL ? coverage->interrupted
                              : run != NULL && run->interrupted_by != 0
                                  ? gl_signal_name(run->interrupted_by) : NULL;
    if (interrupted != NULL)
        g_ptr_array_add(analysis->problems, g_error_new(
            GL_ERROR, GL_ERROR_CHILD, "the run was interrupted by %s: what the command had not "
            "run by then was not checked, nor whatever the signal ended before its check",
            interrupted));
    gl_gate_evaluate(&gate, reported, analysis->summary.incomplete_files,
                     analysis->summary.unchecked_processes, checked_nothing, interrupted,
                     &gate_result);
    if (adopting) {
        g_free(gate_result.line);
        gate_result.line = gl_gate_adopted_line(analysis->findings->len, plan->write_baseline);
    }
    /* The first run of a gem that has no baseline yet (CI's, before anyone
     * wrote one) writes it: said, so that someone commits it. */
    if (plan->baseline_missing)
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "--baseline %s did not exist: this run writes it with its %u finding%s, and passes "
            "them (--write-baseline-if-missing); commit it, and later runs fail only on findings "
            "it does not know", plan->write_baseline, analysis->findings->len,
            analysis->findings->len == 1 ? "" : "s"));
    outcome->gate_failed = gate_result.failed;
    outcome->problems = analysis->problems->len > 0;
    outcome->checked_nothing_only = checked_nothing && analysis->problems->len == 1;
    outcome->status = run != NULL ? gl_cli_run_status(outcome, run) : gl_cli_filter_status(outcome);
    g_autofree char *unreadable = g_strdup_printf("%s could not all be read",
                                                  coverage->reports != NULL ? coverage->reports
                                                                            : "the inputs");
    g_autofree char *not_built = g_strdup_printf("an extension was not built for %s",
                                                 coverage->engine != NULL ? coverage->engine
                                                                          : "the engine");
    outcome->trouble = checked_nothing ? "nothing was checked"
                       : interrupted != NULL ? "the run was interrupted"
                       : coverage->unchecked->len > 0
                           ? "a process that loaded an extension was not checked"
                       : cut > 0 ? "a finding's stack was cut short"
                       : uninstrumented > 0 ? not_built
                       : unreadable;
    outcome->halted = analysis->summary.halted_processes;
    g_autofree char *exit_line = run != NULL ? gl_cli_run_exit_line(outcome->status, run, outcome,
                                                                    coverage->engine)
                                             : NULL;
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
        .trouble = outcome->trouble,
        .ran_command = run != NULL,
        .command_status = run != NULL ? run->status : 0,
    };

    /* Every report is tried: one that cannot be written (a full disk) is
     * said, and is trouble, but never hides what the gate decided. */
    if (!gl_sinks_write(plan->sinks, &context, analysis->findings, err)) {
        outcome->problems = TRUE;
        outcome->status = run != NULL ? gl_cli_run_status(outcome, run) : gl_cli_filter_status(outcome);
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
    /* it named a string of this function's */
    if (outcome->trouble == unreadable)
        outcome->trouble = "an input could not all be read";
    if (outcome->trouble == not_built)
        outcome->trouble = "an extension was not built for the engine";
    gl_gate_result_clear(&gate_result);
    return TRUE;
}
