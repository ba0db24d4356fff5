/* How far a record's stack can be taken at its word: rule 1 decides a
 * leak by its allocation stack, and an engine whose unwinder may give up
 * short of main (a sanitizer's fast unwinder on a Ruby without frame
 * pointers gives 2 or 3 frames, and verdicts from those were wrong both
 * ways; GlOutputTraits.stack_limit) leaves some stacks that cannot decide.
 * Such a leak is never a pass and never definite: it is kept, uncertain
 * (record->stack_cut), and the run that has one is INCOMPLETE. Likewise a
 * frame whose module the output did not name (modules_hidden) cannot be
 * told to be a target's. */
#ifndef GEMLEAK_STACKS_H
#define GEMLEAK_STACKS_H

#include <glib.h>
#include "gemleak/judge/classify.h"
#include "gemleak/read/process.h"

/* Classifies @record of @process as gl_classifier_classify() does, but,
 * under an output whose unwinder may give up, a leak whose stack reaches
 * neither main nor a thread's or fiber's start and is shorter than the
 * depth limit, or that the limit cut before it met a target, is kept as
 * uncertain (record->stack_cut: its frames), unless what is in view already
 * makes it Ruby's own memory (rule 2). *@unplaced: it was skipped as
 * entering no target but has frames without their module, where the output
 * may hide them: nobody can tell.
 * Returns: the verdict. */
GlVerdict gl_stacks_verdict(GlClassifier *classifier, GlRecord *record, const GlProcess *process,
                            gboolean *unplaced);

/* What the allocating call alone says of a leak (GL_UNWOUND_CALL, and
 * GL_UNWOUND_FRAMES on a Ruby that keeps frame pointers): with gemleak's
 * allocation front in the process, every call an extension made into
 * Ruby's allocation functions shows in the stacks below it (@via), so a
 * block whose allocating call is Ruby's own code, with no such call on the
 * way, is Ruby's (rule 2), and one the dynamic loader allocated is the
 * loader's, whatever the rest of its stack (gemleak(1), RULES). */
typedef enum {
    GL_CALL_OPEN,     /* it decides nothing: the whole stack does */
    GL_CALL_RUBY,     /* Ruby's code allocated it outside any extension's call */
    GL_CALL_LOADER,   /* the dynamic loader allocated it */
} GlCallSays;

GlCallSays gl_stacks_by_call(const GlStack *stack, gboolean via);

/* Returns: TRUE if the allocating call decides the leaks of a process
 * whose stacks were made @unwound, its Ruby keeping frame pointers or not
 * (@frame_pointers): GL_UNWOUND_CALL always, GL_UNWOUND_FRAMES where the
 * frame pointers were there to walk (through the front's frame). */
gboolean gl_stacks_call_decides(GlUnwound unwound, gboolean frame_pointers);

/* Returns: TRUE if @stack was cut short by an unwinder that gave up: it
 * reaches neither main nor a thread's or fiber's start, and holds fewer
 * than @stack_limit program counters (the limit counting @hidden_frames
 * the output does not show). What the cut hides may decide whose a leak is:
 * the exact pass (gemleak/run/exact.h) unwinds those allocations again. */
gboolean gl_stacks_cut(const GlStack *stack, guint stack_limit, guint hidden_frames);

/* Returns: how many of @findings (GlFinding*) show a stack the unwinder
 * cut short (record->stack_cut): each makes the run INCOMPLETE. */
guint gl_stacks_cut_short(const GPtrArray *findings);

/* Returns: (transfer full) (nullable): the problem that says @cut findings'
 * stacks were cut short (GL_ERROR_LIMIT), NULL for none. */
GError *gl_stacks_cut_short_problem(guint cut);

#endif
