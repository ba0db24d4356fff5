/* The outcome of a run (gemleak/judge/outcome.h): what the analysis comes
 * to once the run's coverage is held to it, and what the trouble is. */
#include "gemleak/judge/outcome.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/coverage.h"
#include "gemleak/judge/fingerprint.h"
#include "gemleak/judge/project_paths.h"
#include "gemleak/judge/stacks.h"

#include <string.h>

/* Leaves out of @outcome->reported what the baseline knows, and notes what
 * it cannot match as it is: a baseline of an older fingerprint, and the
 * lost cycles whose block Valgrind names differs from run to run. */
static void leave_out_known(GlAnalysis *analysis, const GlOutcomeInput *input, GlOutcome *outcome)
{
    const GlBaseline *baseline = input->baseline;
    if (baseline == NULL) {
        outcome->reported = g_ptr_array_ref(analysis->findings);
        return;
    }
    int version = gl_baseline_version(baseline);
    if (version < GL_FINGERPRINT_VERSION)
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "--baseline %s was written by an older gemleak: its findings are matched as it "
            "fingerprinted them, which %s; write it again with --write-baseline",
            input->baseline_path, version == 1
                ? "another Ruby changes"
                : version == 2
                ? "tells neither two sites of one function nor the kinds of the errors on one "
                  "freed block apart"
                : "names a function the compiler split by its part (.cold, .part.N), which "
                  "another optimisation level changes, and holds what called a recursion, "
                  "which one engine sees and another does not"));
    outcome->reported = gl_baseline_filter(baseline, analysis->findings, &outcome->baseline_known);
    /* A lost cycle's definitely lost block is the one Valgrind meets
     * first: another of its blocks next run. With its indirect blocks
     * shown, a baseline knows it by any of their sites. */
    if (gl_rules_get_leak_kinds(input->rules) & GL_LEAK_INDIRECT)
        return;
    guint structures = 0;
    for (guint i = 0; i < outcome->reported->len; i++)
        structures += ((const GlFinding *) g_ptr_array_index(outcome->reported, i))
                          ->structure_fingerprint != NULL;
    if (structures > 0)
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "%u new finding%s lost other blocks with %s (indirect bytes): in a leaked cycle, "
            "Valgrind names another of its blocks in another run; with --leak-kinds "
            "definite,indirect a baseline knows a cycle by any of its blocks", structures,
            structures == 1 ? "" : "s", structures == 1 ? "it" : "them"));
}

/* An extension built without -g: its frames placed as its symbol table
 * can, and one note, once, on how to get file and line (C++ sources take
 * their flags from $CXXFLAGS, not $CFLAGS). */
static void place_undebugged(GlAnalysis *analysis, const char *project_root)
{
    g_autoptr(GPtrArray) undebugged = gl_findings_place_units(analysis->findings, project_root);
    for (guint i = 0; i < undebugged->len; i++)
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "%s was built without debug information (no -g): its frames have no file or line; "
            "the reports place them at the source file its symbol table names, else at the "
            "object; a build with -g (in extconf.rb, after what sets them: $CFLAGS << \" -g\" "
            "for C sources, $CXXFLAGS << \" -g\" for C++) gives them",
            gl_base_name(g_ptr_array_index(undebugged, i))));
}

/* Adds the problems of @reported's stacks that the unwinder cut short:
 * those of a log gemleak only read with what makes the next log whole (its
 * runtime's options), the others' apart.
 * Returns: how many findings have one. */
static guint add_cut_problems(GlAnalysis *analysis, const GPtrArray *reported)
{
    guint cut = gl_stacks_cut_short(reported);
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
    return cut;
}

/* What ran outside the engine and loaded an extension is trouble, said
 * with the unreadable inputs, in every report; so is a process without
 * proof that its check ran to its end, and an extension the engine cannot
 * see into: it was not checked for what it would have seen.
 * Returns: how many processes loaded one of those. */
static guint add_unchecked_problems(GlAnalysis *analysis, const GlOutcomeInput *input,
                                    GlRunCoverage *coverage)
{
    gl_coverage_require_proof(input->inputs, analysis->checked_to_end, input->killed, coverage);
    for (guint i = 0; i < coverage->unchecked->len; i++)
        g_ptr_array_add(analysis->problems,
                        g_error_new(GL_ERROR, GL_ERROR_CHILD, "%s: what it ran was not checked%s",
                                    (const char *) g_ptr_array_index(coverage->unchecked, i),
                                    input->launcher_outside
                                        ? "; run again with --trace-launchers" : ""));
    return gl_coverage_require_instrumented(input->inputs, analysis->records, analysis->problems);
}

/* A run in which no process under the engine loaded a target checked
 * nothing: a problem, whatever the findings.
 * Returns: TRUE if it checked nothing. */
static gboolean add_checked_nothing(GlAnalysis *analysis, const GlOutcomeInput *input,
                                    const GlRunCoverage *coverage)
{
    gboolean checked_nothing = gl_coverage_checked_nothing(
        coverage, input->ran, gl_coverage_targets_seen(input->rules, analysis->objects));
    if (checked_nothing) {
        g_autofree char *targets = g_strjoinv(", ", (char **) input->targets);
        g_ptr_array_add(analysis->problems, gl_coverage_checked_nothing_problem(coverage, targets));
    }
    return checked_nothing;
}

/* A run a signal cut short (CI cancelling the job) checked only what ran
 * before it: its processes' checks may never have run (a Ruby the signal
 * ends skips LeakSanitizer's exit check), and the rest of the suite did
 * not run at all. The directory says so to filter too.
 * Returns: (transfer none) (nullable): the signal's name. */
static const char *add_interrupted(GlAnalysis *analysis, const GlOutcomeInput *input,
                                   const GlRunCoverage *coverage)
{
    const char *interrupted = coverage->interrupted != NULL ? coverage->interrupted
                              : input->interrupted_by != 0 ? gl_signal_name(input->interrupted_by)
                              : NULL;
    if (interrupted != NULL)
        g_ptr_array_add(analysis->problems, g_error_new(
            GL_ERROR, GL_ERROR_CHILD, "the run was interrupted by %s: what the command had not "
            "run by then was not checked, nor whatever the signal ended before its check",
            interrupted));
    return interrupted;
}

/* A run that asked for --growth and measured no test (no test could run
 * again, the helper could not count, the repetitions never began) checked
 * nothing of what it asked: never a pass.
 * Returns: TRUE if so. */
static gboolean add_growth_unmeasured(GlAnalysis *analysis)
{
    const GlSummary *summary = &analysis->summary;
    if (!summary->growth_asked || summary->growth_measured > 0)
        return FALSE;
    g_ptr_array_add(analysis->problems, g_error_new(
        GL_ERROR, GL_ERROR_LIMIT, "--growth was asked and no test was measured: whether memory "
        "grows nobody can tell (%s, and any warning of the helper)",
        summary->growth_unmeasured->len > 0 ? "the note names the tests not measured and why"
                                            : "no test could run again"));
    return TRUE;
}

void gl_outcome_judge(GlAnalysis *analysis, const GlOutcomeInput *input, GlRunCoverage *coverage,
                      GlOutcome *outcome)
{
    memset(outcome, 0, sizeof *outcome);
    leave_out_known(analysis, input, outcome);
    place_undebugged(analysis, input->project_root);
    guint cut = add_cut_problems(analysis, outcome->reported);
    outcome->gate = input->gate;
    gboolean adopting = gl_gate_adopt(&outcome->gate, input->write_baseline != NULL,
                                      input->fail_on_given);
    guint uninstrumented = add_unchecked_problems(analysis, input, coverage);
    outcome->checked_nothing = add_checked_nothing(analysis, input, coverage);
    analysis->summary.unchecked_processes += coverage->unchecked->len + uninstrumented;
    const char *interrupted = add_interrupted(analysis, input, coverage);
    gboolean growth_unmeasured = add_growth_unmeasured(analysis);
    gl_gate_evaluate_growth(&outcome->gate, outcome->reported, analysis->summary.incomplete_files,
                            analysis->summary.unchecked_processes, outcome->checked_nothing,
                            interrupted, growth_unmeasured, &outcome->gate_result);
    if (adopting) {
        g_free(outcome->gate_result.line);
        outcome->gate_result.line = gl_gate_adopted_line(analysis->findings->len,
                                                         input->write_baseline);
    }
    /* The first run of a gem that has no baseline yet (CI's, before anyone
     * wrote one) writes it: said, so that someone commits it. */
    if (input->baseline_missing)
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "--baseline %s did not exist: this run writes it with its %u finding%s, and passes "
            "them (--write-baseline-if-missing); commit it, and later runs fail only on findings "
            "it does not know", input->write_baseline, analysis->findings->len,
            analysis->findings->len == 1 ? "" : "s"));
    outcome->problems = analysis->problems->len > 0;
    outcome->checked_nothing_only = outcome->checked_nothing && analysis->problems->len == 1;
    outcome->trouble = !outcome->problems && outcome->gate_result.complete ? GL_TROUBLE_NONE
                       : outcome->checked_nothing ? GL_TROUBLE_CHECKED_NOTHING
                       : interrupted != NULL ? GL_TROUBLE_INTERRUPTED
                       : coverage->unchecked->len > 0 ? GL_TROUBLE_UNCHECKED
                       : cut > 0 ? GL_TROUBLE_STACK_CUT
                       : uninstrumented > 0 ? GL_TROUBLE_NOT_BUILT
                       : growth_unmeasured ? GL_TROUBLE_GROWTH_UNMEASURED
                       : GL_TROUBLE_UNREADABLE;
    outcome->halted = analysis->summary.halted_processes;
}

void gl_outcome_clear(GlOutcome *outcome)
{
    if (outcome->reported != NULL)
        g_ptr_array_unref(outcome->reported);
    outcome->reported = NULL;
    gl_gate_result_clear(&outcome->gate_result);
}

char *gl_trouble_describe(GlTrouble trouble, const GlRunCoverage *coverage)
{
    switch (trouble) {
    case GL_TROUBLE_NONE:
        return NULL;
    case GL_TROUBLE_CHECKED_NOTHING:
        return g_strdup("nothing was checked");
    case GL_TROUBLE_INTERRUPTED:
        return g_strdup("the run was interrupted");
    case GL_TROUBLE_UNCHECKED:
        return g_strdup("a process that loaded an extension was not checked");
    case GL_TROUBLE_STACK_CUT:
        return g_strdup("a finding's stack was cut short");
    case GL_TROUBLE_NOT_BUILT:
        return g_strdup_printf("an extension was not built for %s",
                               coverage->engine != NULL ? coverage->engine : "the engine");
    case GL_TROUBLE_GROWTH_UNMEASURED:
        return g_strdup("--growth measured no test");
    case GL_TROUBLE_UNREADABLE:
        break;
    }
    return g_strdup_printf("%s could not all be read",
                           coverage->reports != NULL ? coverage->reports : "the inputs");
}
