/* Whether a run checked what it ran: what the run directories say of the
 * processes (GlRunCoverage, gemleak/read/run_dir.h, read by
 * gemleak/run/rundir.h) and what their reports proved (the analysis),
 * judged. A gate never passes what was not checked: a process that loaded
 * a target without proof that its check ran to its end was not checked,
 * and a run in which no process loaded a target under the engine checked
 * nothing. */
#ifndef GEMLEAK_COVERAGE_H
#define GEMLEAK_COVERAGE_H

#include <glib.h>
#include "gemleak/judge/rules.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/read/run_record.h"

/* For the runs of @inputs whose reports prove each leak check ran to its
 * end (engine.txt's proof): moves to @coverage's unchecked each process
 * that loaded an extension without that proof in @proof (pid -> TRUE, as
 * GlAnalysis.checked_to_end), saying why (@killed, nullable: pid ->
 * signal, both GINT_TO_POINTER, names the processes a signal killed). */
void gl_coverage_require_proof(const char *const *inputs, GHashTable *proof, GHashTable *killed,
                               GlRunCoverage *coverage);

/* The extensions the processes of the run directory @dir loaded (their
 * lists of loaded extensions) that were not built for its engine: none
 * of their dynamic symbols begins with @prefix (engine.txt's
 * instrumented, "__asan_"). The one scan behind gemleak run's note on
 * each and the problem below. What the run recorded of an extension
 * (@record, nullable: the directory's record, run_record.h) is what it
 * was; one it did not is read from disk, and what it says added to
 * @record. @loaded_by (nullable) receives (transfer full) how many
 * processes loaded each (guint, at the same index); @processes (nullable)
 * how many processes loaded one or more.
 * Returns: (transfer full): their paths, each once, in the order first
 * met (the processes as the directory lists them). */
GPtrArray *gl_coverage_uninstrumented(const char *dir, const char *prefix, GlRunRecord *record,
                                      GArray **loaded_by, guint *processes);

/* For the runs of @inputs whose engine sees into an extension only when it
 * was built for it (engine.txt's instrumented): adds to @problems, one an
 * extension, each extension their processes loaded that was not built so
 * (gl_coverage_uninstrumented()): what that build sees (invalid reads and
 * writes) was not checked in it, so the run never passes. @records
 * (nullable): the records of the run directories, as above.
 * Returns: how many processes loaded one: not checked. */
guint gl_coverage_require_instrumented(const char *const *inputs, GlRunRecords *records,
                                       GPtrArray *problems);

/* Returns: TRUE if a frame of some record read lies in a target of
 * @rules (@objects: the object paths the frames named, a set): a process
 * under the engine loaded it, whether the helper recorded it or not. */
gboolean gl_coverage_targets_seen(const GlRules *rules, GHashTable *objects);

/* Returns: TRUE if the run (@ran: gemleak run ran it; else what its
 * directories say) checked nothing: no process counted checked nor
 * unchecked, and no record showed a target's frame (@targets_seen). */
gboolean gl_coverage_checked_nothing(const GlRunCoverage *coverage, gboolean ran,
                                     gboolean targets_seen);

/* Returns: (transfer full): the problem that says the run checked nothing
 * (GL_ERROR_CHILD), @targets what the targets were ("a, b"). */
GError *gl_coverage_checked_nothing_problem(const GlRunCoverage *coverage, const char *targets);

/* Returns: (transfer full) (nullable): the problem that says @cut findings
 * of logs no gemleak run wrote (a suite run under a runtime by hand) have
 * stacks cut short, and what makes the next log's whole: @whole_stacks,
 * their record->whole_stacks, the runtime's own options. NULL for none. */
GError *gl_coverage_log_cut_problem(guint cut, const char *whole_stacks);

#endif
