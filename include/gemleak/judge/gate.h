/* The CI gate: which findings fail the run (exit status 1), and the one
 * line that says why. */
#ifndef GEMLEAK_GATE_H
#define GEMLEAK_GATE_H

#include <glib.h>
#include "gemleak/judge/merge.h"
#include "gemleak/base/record.h"

typedef struct {
    GlLeakKind leak_kinds;  /* leaks of these kinds fail */
    gboolean errors;        /* memory errors and crashes fail */
    gboolean uncertain;     /* findings whose owner is uncertain fail too */
    gboolean has_max_bytes; /* leaks fail only past max_bytes in all */
    guint64 max_bytes;
    gboolean growth;        /* --growth's findings fail (judge/growth.h) */
    gboolean growth_held;   /* ... those held by Data objects the test keeps too */
} GlGate;

/* The default: definite leaks, every memory error kept, and growth (there
 * is none unless --growth was asked); not growth held by Data objects. */
void gl_gate_init(GlGate *gate);

/* Parses --fail-on: leak kinds (definite, indirect, possible, reachable),
 * "errors", "uncertain", "growth", "growth-held", "all" or "none",
 * separated by commas.
 * Returns: FALSE with GL_ERROR_USAGE for an unknown word. */
gboolean gl_gate_parse_fail_on(GlGate *gate, const char *spec, GError **error);

typedef struct {
    gboolean failed;
    gboolean complete;      /* every input was read whole, every process traced, the
                             * run not interrupted */
    guint failing;          /* findings of a failing kind */
    guint64 failing_bytes;  /* bytes those leaks lost */
    char *line;             /* "gemleak: FAIL: ...", "gemleak: pass: ...", or
                             * "gemleak: INCOMPLETE: ..." when nothing fails but
                             * some input could not all be read, or some
                             * process loaded an extension outside Valgrind */
} GlGateResult;

/* Decides on @findings (GlFinding*), read from inputs of which
 * @incomplete_inputs could not all be read, from a run in which
 * @unchecked_processes loaded an extension outside Valgrind, or in which
 * no process under Valgrind loaded a target at all (@checked_nothing), or
 * that the signal @interrupted (nullable: none; "SIGTERM") cut short: what
 * was not read, not traced or not run may hold findings, so nothing
 * "passes" then. Fills @result; clear it with gl_gate_result_clear(). */
void gl_gate_evaluate(const GlGate *gate, const GPtrArray *findings, guint incomplete_inputs,
                      guint unchecked_processes, gboolean checked_nothing,
                      const char *interrupted, GlGateResult *result);

/* As gl_gate_evaluate(), for a run that asked for --growth and measured no
 * test (@growth_unmeasured): nothing passes then either. */
void gl_gate_evaluate_growth(const GlGate *gate, const GPtrArray *findings,
                             guint incomplete_inputs, guint unchecked_processes,
                             gboolean checked_nothing, const char *interrupted,
                             gboolean growth_unmeasured, GlGateResult *result);
void gl_gate_result_clear(GlGateResult *result);

/* Writing a baseline (@writing) adopts the findings there are: the run
 * passes unless --fail-on asked otherwise (@fail_on_given), and @gate then
 * fails on nothing.
 * Returns: TRUE if the findings are adopted. */
gboolean gl_gate_adopt(GlGate *gate, gboolean writing, gboolean fail_on_given);

/* Returns: (transfer full): the gate's line when @n findings were adopted
 * into the baseline @path. */
char *gl_gate_adopted_line(guint n, const char *path);

/* Returns: TRUE if @finding is of a kind that can fail the gate (an
 * uncertain one only with "uncertain" in --fail-on; growth held by Data
 * objects only with "growth-held"). */
gboolean gl_gate_counts(const GlGate *gate, const GlFinding *finding);

#endif
