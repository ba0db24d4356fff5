/* Stacks that cannot decide (stacks.h). */
#include "gemleak/judge/stacks.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/programs.h"
#include "gemleak/judge/merge.h"
#include "rules_int.h"

#include <string.h>

/* The functions a whole stack ends in: the program's start, a thread's, or
 * a fiber's (Fiber, Enumerator#next): Ruby's coroutine switches to a new
 * machine stack whose first frame is cont.c's fiber_entry (calling
 * rb_fiber_start), or coroutine_trampoline where the platform's coroutine
 * is ucontext's or a pthread's; nothing lies below it. A Ractor's thread
 * under Ruby's M:N scheduler (3.3+) starts on a coroutine of its own too,
 * at thread_pthread_mn.c's co_start. */
static const char *const stack_bottoms[] = {
    "main", "__libc_start_main", "__libc_start_call_main", "_start", "start_thread",
    "clone", "clone3", "fiber_entry", "coroutine_trampoline", "co_start",
};

/* Returns: TRUE if @stack reaches main or a thread's start. */
static gboolean reaches_bottom(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        for (guint b = 0; stack->frames[i].fn != NULL && b < G_N_ELEMENTS(stack_bottoms); b++)
            if (strcmp(stack->frames[i].fn, stack_bottoms[b]) == 0)
                return TRUE;
    return FALSE;
}

/* Returns: how many program counters @stack holds, which the runtime's
 * depth limit counts: frames inlined at one share it, each once; but a
 * recursion repeats one return address a frame after another, and the
 * frames symbolized at it start over at the same function each time. */
static guint program_counters(const GlStack *stack)
{
    guint pcs = 0, group = 0;
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        gboolean again = i > 0 && frame->ip == stack->frames[i - 1].ip && frame->fn != NULL &&
                         g_strcmp0(frame->fn, stack->frames[group].fn) == 0;
        if (i == 0 || frame->ip != stack->frames[i - 1].ip || again) {
            pcs++;
            group = i;
        }
    }
    return pcs;
}

/* Returns: TRUE if a frame of @stack has code but no module named. */
static gboolean without_module(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (stack->frames[i].obj == NULL && (stack->frames[i].fn != NULL ||
                                             stack->frames[i].file != NULL))
            return TRUE;
    return FALSE;
}

/* Returns: TRUE if a stack of @record (primary, freed by, allocated by)
 * has a frame without its module. */
static gboolean record_without_module(const GlRecord *record)
{
    if (without_module(&record->stack))
        return TRUE;
    for (guint i = 0; i < record->aux->len; i++)
        if (without_module(&g_array_index(record->aux, GlAux, i).stack))
            return TRUE;
    return FALSE;
}

GlCallSays gl_stacks_by_call(const GlStack *stack, gboolean via)
{
    /* the runtime's own frame (its interceptor, and what was inlined at
     * it), then the allocating call */
    guint i = 1;
    while (i < stack->n_frames && stack->frames[i].ip == stack->frames[0].ip)
        i++;
    if (via || i >= stack->n_frames || stack->frames[i].obj == NULL)
        return GL_CALL_OPEN;
    if (gl_is_ruby_object(stack->frames[i].obj))
        return GL_CALL_RUBY;
    if (gl_is_dynamic_loader(stack->frames[i].obj))
        return GL_CALL_LOADER;
    return GL_CALL_OPEN;
}

gboolean gl_stacks_call_decides(GlUnwound unwound, gboolean frame_pointers)
{
    return unwound == GL_UNWOUND_CALL || (unwound == GL_UNWOUND_FRAMES && frame_pointers);
}

/* Returns: TRUE if the allocating call decides @record, with the verdict
 * in *@verdict: below an extension's call of Ruby's allocation functions,
 * that extension's when it is not a target; else Ruby's code's, or the
 * dynamic loader's. */
static gboolean by_call(GlClassifier *classifier, const GlRecord *record, GlVerdict *verdict)
{
    if (record->via) {
        const GlStack *stack = &record->stack;
        for (guint i = 0; i < stack->n_frames; i++)
            if (stack->frames[i].in_target)
                return FALSE;
        *verdict = GL_VERDICT_SKIP_NO_TARGET;
        return TRUE;
    }
    switch (gl_stacks_by_call(&record->stack, FALSE)) {
    case GL_CALL_RUBY:
        if (!gl_classifier_ruby_rule(classifier))
            return FALSE;
        *verdict = GL_VERDICT_SKIP_RUBY;
        return TRUE;
    case GL_CALL_LOADER:
        *verdict = GL_VERDICT_SKIP_NO_TARGET;
        return TRUE;
    case GL_CALL_OPEN:
        break;
    }
    return FALSE;
}

/* Returns: the verdict for @record, @verdict as the rules gave it, under
 * an unwinder that may give up (@traits). */
static GlVerdict judge_depth(GlClassifier *classifier, GlRecord *record, GlVerdict verdict,
                             const GlOutputTraits *traits)
{
    if (record->leak_kind == GL_LEAK_NONE || verdict == GL_VERDICT_SKIP_KIND ||
        reaches_bottom(&record->stack))
        return verdict;
    /* What is in view already decides it: Ruby's own memory (rule 2). */
    if (verdict == GL_VERDICT_SKIP_NO_TARGET && gl_classifier_ruby_in_view(classifier, record))
        return GL_VERDICT_SKIP_RUBY;
    if (program_counters(&record->stack) + traits->hidden_frames + record->dropped_frames >=
            traits->stack_limit &&
        verdict != GL_VERDICT_SKIP_NO_TARGET)
        return verdict;
    /* What the allocating call says, where it can say it. */
    GlVerdict said = verdict;
    if (gl_stacks_call_decides(traits->unwound, gl_classifier_frame_pointers(classifier)) &&
        by_call(classifier, record, &said))
        return said;
    record->uncertain = TRUE;
    record->stack_cut = MAX(record->stack.n_frames, 1);
    return GL_VERDICT_KEEP;
}

GlVerdict gl_stacks_verdict(GlClassifier *classifier, GlRecord *record, const GlProcess *process,
                            gboolean *unplaced)
{
    const GlOutputTraits *traits = &process->traits;
    GlVerdict verdict = gl_classifier_classify(classifier, record, process);
    if (traits->stack_limit > 0)
        verdict = judge_depth(classifier, record, verdict, traits);
    *unplaced = traits->modules_hidden != NULL && verdict == GL_VERDICT_SKIP_NO_TARGET &&
                record_without_module(record);
    return verdict;
}

gboolean gl_stacks_cut(const GlStack *stack, guint stack_limit, guint hidden_frames)
{
    return !reaches_bottom(stack) && program_counters(stack) + hidden_frames < stack_limit;
}

guint gl_stacks_cut_short(const GPtrArray *findings)
{
    guint cut = 0;
    for (guint i = 0; i < findings->len; i++)
        cut += ((const GlFinding *) g_ptr_array_index(findings, i))->record->stack_cut > 0;
    return cut;
}

GError *gl_stacks_cut_short_problem(guint cut)
{
    /* A stack the engine's unwinder cut short (a sanitizer's fast unwinder
     * at a frame without a frame pointer, YJIT's code) cannot say whose
     * memory it is: never a pass (uncertain for want of Ruby's symbols is
     * another matter, left to --fail-on uncertain). */
    if (cut == 0)
        return NULL;
    return g_error_new(GL_ERROR, GL_ERROR_LIMIT, "%u finding%s whose stack the unwinder cut short "
                       "of main: gemleak cannot tell whether the extension lost %s, and what else "
                       "the stack hides (a whole stack decides: the Valgrind engine's, or "
                       "--exact-stacks' (every allocation unwound exactly, in one run); or, where "
                       "gemleak unwound by frame pointers, the extension built with the flags of "
                       "the Ruby that keeps them, -fno-omit-frame-pointer)", cut,
                       cut == 1 ? "" : "s", cut == 1 ? "it" : "them");
}
