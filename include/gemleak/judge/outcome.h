/* The outcome of a run: what the analysis of its inputs comes to once the
 * run's coverage is held to it. The findings the reports show (the
 * baseline's left out), the problems that make it incomplete (what was
 * not checked, stacks cut short, a run interrupted, nothing checked at
 * all), the gate's verdict on them, and what the trouble comes to, said
 * once for every report and for run's last line. The command line prints
 * it (src/cli/pipeline.c); the exit status is made from it
 * (src/cli/exit_status.c). */
#ifndef GEMLEAK_OUTCOME_H
#define GEMLEAK_OUTCOME_H

#include <glib.h>
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/baseline.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/rules.h"
#include "gemleak/read/run_dir.h"

/* What the problems of a run come to, one phrase for them all, the first
 * that holds in this order: its words are gl_trouble_describe()'s. */
typedef enum {
    GL_TROUBLE_NONE,            /* no problem */
    GL_TROUBLE_CHECKED_NOTHING, /* no process the engine checked loaded a target */
    GL_TROUBLE_INTERRUPTED,     /* a signal cut the run short */
    GL_TROUBLE_UNCHECKED,       /* a process that loaded an extension was not checked */
    GL_TROUBLE_STACK_CUT,       /* the unwinder cut a finding's stack short */
    GL_TROUBLE_NOT_BUILT,       /* an extension was not built for the engine */
    GL_TROUBLE_GROWTH_UNMEASURED, /* --growth was asked and measured no test */
    GL_TROUBLE_UNREADABLE,      /* an input could not all be read (any other problem) */
} GlTrouble;

/* What the outcome is judged from, beside the analysis and the coverage. */
typedef struct {
    const char *const *inputs;      /* what the analysis read, as given */
    const GlRules *rules;           /* with its targets settled */
    const char *const *targets;     /* what the reports say the targets are, NULL-terminated */
    const GlBaseline *baseline;     /* nullable: --baseline's */
    const char *baseline_path;      /* --baseline FILE, as given (nullable) */
    const char *write_baseline;     /* nullable: where this run writes a baseline */
    gboolean baseline_missing;      /* that is --baseline's, which did not exist yet */
    GlGate gate;                    /* --fail-on, --max-bytes */
    gboolean fail_on_given;         /* --fail-on was given: a baseline written adopts nothing */
    const char *project_root;       /* absolute (nullable) */
    /* The run, when gemleak run ran it; filter leaves these 0. */
    gboolean ran;
    GHashTable *killed;             /* (nullable) pid -> signal, both GINT_TO_POINTER: the
                                     * processes a signal killed */
    int interrupted_by;             /* the signal gemleak received, or 0 */
    gboolean launcher_outside;      /* a launcher ran outside the engine: a process it
                                     * started may be why one was not checked */
} GlOutcomeInput;

typedef struct {
    GPtrArray *reported;            /* GlFinding* the reports show: the analysis's less the
                                     * baseline's (owned: gl_outcome_clear()) */
    guint baseline_known;           /* findings left out because the baseline knows them */
    GlGate gate;                    /* what it was judged by: fails on nothing when a baseline
                                     * written adopts the findings */
    GlGateResult gate_result;       /* the gate's verdict and line */
    gboolean problems;              /* some problem: incomplete, whatever the gate says */
    gboolean checked_nothing;       /* no process the engine checked loaded a target */
    gboolean checked_nothing_only;  /* ... and that is the one problem */
    GlTrouble trouble;              /* what the problems come to */
    guint halted;                   /* processes the engine stopped at their first error */
} GlOutcome;

/* Judges @analysis, read from @input->inputs, whose run directories said
 * @coverage (read/run_dir.h): leaves out what the baseline knows,
 * places the frames of objects built without -g, adds to @analysis its
 * problems (stacks cut short, processes not checked, extensions not built
 * for the engine, nothing checked, the run interrupted) and its notes,
 * counts its unchecked processes, moves to @coverage's unchecked each
 * process without proof that its check ran to its end, and evaluates the
 * gate. Clear @outcome with gl_outcome_clear(). */
void gl_outcome_judge(GlAnalysis *analysis, const GlOutcomeInput *input, GlRunCoverage *coverage,
                      GlOutcome *outcome);

void gl_outcome_clear(GlOutcome *outcome);

/* Returns: (transfer full) (nullable): @trouble in words, as the reports
 * and run's last line say it: "nothing was checked", "Valgrind's XML could
 * not all be read"..., with the engine and what it writes as @coverage
 * names them ("the engine", "the inputs" when it does not); NULL for
 * GL_TROUBLE_NONE. */
char *gl_trouble_describe(GlTrouble trouble, const GlRunCoverage *coverage);

#endif
