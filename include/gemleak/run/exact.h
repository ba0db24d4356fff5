/* Exact stacks paid only where something leaked: the exact pass.
 *
 * An engine that unwinds fast (GL_ENGINE_EXACT_WHERE_LEAKED: LeakSanitizer
 * with fast_unwind_on_malloc=1) gives, on a Ruby built without frame
 * pointers, stacks that stop at the allocating call. When the run's
 * reports hold a leak whose stack was cut (gl_sanitizer_stack_cut()), the
 * same commands run again, in a run directory of their own, their output
 * and input /dev/null's and their exit status ignored, with the allocation
 * front (src/agent/exact_*.c) preloaded before the runtime: it unwinds exactly
 * the allocations made at those leaks' sites (the allocating call, by
 * module and offset, and the block's size) and nothing else, so that the
 * second run costs about what the first did. Then each of the first run's
 * reports is rewritten (gemleak/read/sanitizer_exact.h): its cut records'
 * blocks get the stacks found at their sites and sizes. A block the
 * second run did not lose again (a suite that does not run the same way
 * twice) keeps the first run's record, whose cut stack is never a pass
 * (the run is INCOMPLETE): nothing seen passes silently. A child Ruby
 * that reads its script from standard input is run again by its parent,
 * which gives it the script again. */
#ifndef GEMLEAK_EXACT_H
#define GEMLEAK_EXACT_H

#include <glib.h>
#include "gemleak/read/sanitizer_inherited.h"
#include "gemleak/judge/rules.h"
#include "gemleak/run/runner.h"

typedef struct {
    guint ran;             /* times the commands ran again: 0, 1, or 2 when only the tests
                            * that allocated the blocks ran first, and not all were lost
                            * again */
    gboolean filtered;     /* the first time again, only those tests ran */
    gboolean everywhere;   /* it unwound every allocation exactly: the fast check could not
                            * judge some blocks (allocated on a Fiber's stack) */
    guint hidden;          /* those blocks */
    guint hidden_lost;     /* those of them the exact run found lost */
    guint sites;           /* allocation sites (by size) unwound exactly */
    guint blocks;          /* blocks of cut records in the first run's reports */
    guint given;           /* those given an exact stack */
    guint records;         /* cut records */
    gdouble seconds;       /* how long the second run took */
    int interrupted_by;    /* a signal to gemleak ended it, or 0 */
    gboolean timed_out;    /* it ran past its time (gl_exact_deadline()) and was ended */
    guint unfinished;      /* its processes that loaded an extension and left no report
                            * that says their check ran to its end (killed, crashed, a
                            * full disk) */
    /* nothing ran again: the command reads its script from standard input,
     * which was a pipe, and what it read is gone */
    gboolean unrepeatable;
} GlExactResult;

/* Returns: how many seconds the second run of commands that took @seconds
 * the first time may take before it is ended (a suite that waits for
 * something that does not come must not hang the run): what it costs,
 * once the first run's time when it unwinds only the sites that leaked,
 * up to 23 times (real suites, exact unwinding) when it unwinds every
 * allocation (@everywhere), with room to spare and a minute for a machine
 * that got busy. */
guint gl_exact_deadline(gdouble seconds, gboolean everywhere);

/* After gl_run_commands() (@options, @commands, @result as given and
 * filled there): when the engine pays exact stacks only where something
 * leaked and @result's reports hold a leak record whose stack was cut, runs
 * @commands again for those stacks and rewrites the reports, as above.
 * @targets (nullable) names the run's targets, --object's: a block below
 * another extension's call of Ruby's allocation functions is that one's,
 * and needs no stack; without them the extensions the run loaded from the
 * project are. @inherited (nullable) holds what forked children inherited
 * (gemleak/read/sanitizer_inherited.h): those blocks are their parents',
 * whose run again gives them stacks; they need none of their own.
 * Nothing when the run was interrupted. A second run interrupted by a
 * signal to gemleak marks the first run interrupted too (@result, and its
 * directory). @exact says what was done.
 * Returns: FALSE with @error set when the reports could not be read or
 * rewritten, or the second run could not start (the reports are then as
 * the first run left them). */
gboolean gl_run_exact(const GlRunOptions *options, GPtrArray *commands, GlRunResult *result,
                      const GlRules *targets, const GlInherited *inherited, GlExactResult *exact,
                      GError **error);

#endif
