/* --growth: memory that only grows, per test and per site of a target
 * (gemleak(1), RULES, "Growth"). After the suite's own run, the helper runs
 * each test that can run again K more times and measures after each run
 * (gemleak/base/protocol.h, GL_PROTO_GROWTH_VARIABLE): the records read
 * after a "gemleak:growth\tREP\tNAME\tLOCATION" marker, while the process
 * ran, are that measure's loss records with what each changed since the
 * measure before (record->has_change: Valgrind's changed leak check, a
 * sanitizer's "gemleak:grew" lines).
 *
 * Those of REP 1 to K are samples: judged by the same rules as leaks
 * (rule 2: Ruby's memory is never the extension's) whatever their leak
 * kind, and never counted as leaks; REP 0's (the measure before the first
 * run again) only set the start. Per test and per site (the merge key of
 * its records, their kind aside) the series sums each repetition's change,
 * every kind together. A site grows when
 *   - no repetition's change is negative, in bytes or in blocks (it never
 *     falls back: a bounded cache, a scratch buffer reused),
 *   - a repetition after the first added something, bytes or blocks (a
 *     warm-up, a memo filled once, adds only in the first),
 *   - and the median of the bytes each repetition added is at least
 *     --growth-min-bytes (1 by default);
 * a table that doubles (+X, +2X, 0) grows. Such a site is a finding of
 * kind GL_KIND_GROWTH (GlFinding.growth), its test tests[0], held when
 * its blocks are the structs of Data objects (classify.h), lost when some
 * of what it added was lost rather than reachable. A site that the same
 * process also leaked (the same target frames) is one finding: the leak.
 * Knows the helper's markers and the records, nothing of a format. */
#ifndef GEMLEAK_GROWTH_H
#define GEMLEAK_GROWTH_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/judge/classify.h"
#include "gemleak/judge/merge.h"
#include "gemleak/read/process.h"

/* What one process's growth measures came to, besides its findings. */
typedef struct {
    gboolean asked;        /* its helper began the repetitions ("gemleak:growth") */
    gboolean finished;     /* ... and said how many tests it measured (the last marker) */
    guint measured;        /* tests measured: run again and measured at least once, and
                            * not said unmeasured (one that ended its runs part way) */
    guint repetitions;     /* the most repetitions a test of it ran */
    GPtrArray *unmeasured; /* char*: "NAME (LOCATION): WHY", a test the helper could
                            * not measure, in order; owned */
    guint unfinished;      /* of a shard's report: its processes that asked and did not
                            * finish (a process's own count is !finished) */
} GlGrowthCounts;

void gl_growth_counts_clear(GlGrowthCounts *counts);

typedef struct GlGrowthJudge GlGrowthJudge;

/* Returns: (transfer full): the judge of one input's growth samples; @rules
 * (its --growth-min-bytes) must outlive it. */
GlGrowthJudge *gl_growth_judge_new(const GlRules *rules);
void gl_growth_judge_free(GlGrowthJudge *judge);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlGrowthJudge, gl_growth_judge_free)

/* Returns: TRUE if @record was read after a growth measure's marker while
 * its process ran (not its exit check's): then @record is taken, judged
 * by @classifier's rules as a sample of its test (REP 1 to K) or dropped
 * (REP 0, or a sample the rules skip), and never counted. FALSE: @record
 * is not growth's, and is left to the caller. */
gboolean gl_growth_take(GlGrowthJudge *judge, GlClassifier *classifier, const GlProcess *process,
                        GlRecord *record, guint64 order);

/* A leak of the check at exit (or a later check) that @judge's samples
 * saw lost while the tests ran again: the same loss record (its process,
 * kind and exact stack) grew by what it lost. A repetition's run of a test
 * that leaks loses again what its first run lost; the leak is the first
 * run's, and the repetitions' blocks are taken out of @record's count.
 * Returns: TRUE when every block of @record was lost by the repetitions
 * (its stack is theirs: a call from gemleak's helper), which the caller
 * then drops: the site's growth finding, "some of it lost", still says
 * it; FALSE when @record stands, with its count made less. */
gboolean gl_growth_lost_again(GlGrowthJudge *judge, GlRecord *record);

/* The end of the input, whose process's markers are @process's: adds to
 * @findings a finding for each site that grew in a test, but those the
 * same findings hold as a leak already, and fills @counts (cleared first;
 * clear it with gl_growth_counts_clear()). */
void gl_growth_finish(GlGrowthJudge *judge, const GlProcess *process, GlFindings *findings,
                      GlGrowthCounts *counts);

/* The statistic on one series: @bytes and @blocks, @repetitions long, the
 * change each repetition made. Returns: TRUE if it grows, @min_bytes the
 * least median; *@median the median of @bytes (never below 0). */
gboolean gl_growth_grows(const gint64 *bytes, const gint64 *blocks, guint repetitions,
                         guint64 min_bytes, guint64 *median);

/* Returns: (transfer full): @growth in the report's words: "+800 bytes in
 * +50 blocks at each of 3 repetitions (series +800, +800, +800), still
 * reachable", "+X bytes in +Y blocks over 3 repetitions (series ...)",
 * "..., held by N Data objects the test keeps", "..., some of it lost". */
char *gl_growth_describe(const GlGrowth *growth);

#endif
