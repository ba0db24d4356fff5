/* One input through the judges: the one loop every input format goes
 * through (Valgrind's XML, a sanitizer's report, gemleak's JSON report read
 * back), which gemleak filter and run (analyze.h, on threads), the fuzzer
 * and the tests share. Each record the input seam (gemleak/read/input.h)
 * hands out goes, as the process's output traits ask:
 *   - through Valgrind's added checks re-created (checks.h),
 *   - with a copy for each test that allocated blocks of it (owners.h),
 *   - to the rules (classify.h), with the stacks that cannot decide kept
 *     uncertain (stacks.h) and the lost cycles' blocks promoted (cycles.h),
 *   - and, kept, to the attribution (attribute.h) and the findings;
 * but a leak record of a growth measure (--growth) goes to growth.h, whose
 * findings join the others at the end of the input;
 * a record already judged (a JSON report's finding) merges as it is.
 * What the input and the helper said of the process (its Ruby, whether it
 * freed its memory at exit, the engine's needs) decides what is judged. */
#ifndef GEMLEAK_JUDGEMENT_H
#define GEMLEAK_JUDGEMENT_H

#include <glib.h>
#include "gemleak/read/debuginfo.h"
#include "gemleak/judge/classify.h"
#include "gemleak/judge/growth.h"
#include "gemleak/judge/merge.h"
#include "gemleak/read/input.h"

/* What judging one input gave. */
typedef struct {
    GlFindings *findings;
    guint processes;       /* the processes it stands for (GlProcess.stands_for), once read;
                            * 0 when it was skipped or could not be read */
    guint64 errors_seen;
    guint64 by_verdict[GL_N_VERDICTS];
    guint64 repeated;
    guint64 inherited;
    gboolean marked;       /* its process wrote gemleak's markers */
    gboolean free_at_exit; /* its process's Ruby freed its memory at exit (the helper said) */
    gboolean recent_unkept;  /* its process's allocation front could not keep the
                              * extensions' blocks from recent addresses (the helper said) */
    gint64 pid;            /* its process, when its output says whether the check ran to its
                            * end (GlOutputTraits.says_done); 0 otherwise */
    gboolean checked_to_end;  /* it says so */
    guint not_lost;        /* records of checks while it ran that the exit check did not
                            * report again (checks.h): never lost */
    gboolean truncated;    /* it stops short */
    gboolean halted;       /* the engine stopped its process at an error (ASan's
                            * "ABORTING"): the rest of it did not run */
    GPtrArray *problems;   /* GError* */
    GPtrArray *notes;      /* char* */
    GHashTable *suppressed;  /* suppression name -> count, nullable */
    GHashTable *objects;     /* object paths the frames named (owned strings), a set */
    /* An input already judged (a shard's report): what its run could not
     * check, as it counted it. */
    gboolean report;
    guint report_incomplete;
    guint report_unchecked;
    guint report_free_at_exit;
    guint report_recent_unkept;
    GPtrArray *report_truncated;  /* char*, nullable */
    /* (nullable, not owned) The objects the records name, shared by the
     * inputs of an analysis: a runtime's frames are named as Valgrind
     * names them (GlOutputTraits.named_by_runtime); NULL leaves them as
     * the runtime wrote them. */
    GlDebugInfo *debuginfo;
    /* (nullable, not owned) What the run that wrote the input recorded of
     * its objects (its directory's record): they are read as it says. */
    const GlRunRecord *recorded;
    /* --growth: what its process's growth measures came to (growth.h) */
    GlGrowthCounts growth;
} GlJudgement;

void gl_judgement_init(GlJudgement *judgement);
void gl_judgement_clear(GlJudgement *judgement);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GlJudgement, gl_judgement_clear)

/* Reads every record of @input (named @path in messages: the path as
 * given, "-" for standard input) and judges it by @rules into
 * @judgement (initialised); @order_base orders its findings among the
 * other inputs' ((index << 32)). @listed: the input was found in a
 * directory, where someone else's XML (a JUnit report) is skipped with a
 * note rather than a problem. */
void gl_judge_input(GlInput *input, const char *path, const GlRules *rules, guint64 order_base,
                    gboolean listed, GlJudgement *judgement);

#endif
