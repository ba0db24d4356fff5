/* Lost cycles under an engine that calls every block of one indirect
 * (LeakSanitizer: two structs that point at each other, as zlib's z_stream
 * and its state do; GlOutputTraits.cycles_indirect), where Valgrind calls
 * one of them definite: with indirect leaks not asked for, the cycle would
 * pass. An indirect leak counts as definite, and is judged again as one,
 * unless it was allocated within a call of the target that also allocated
 * a direct leak of the process (a function of the target is on both
 * stacks): its blocks are then taken for that structure's, as a struct's
 * buffer that another helper of the same method grew, which Valgrind
 * counts in the structure's record. Which it is, only the whole process
 * says: the candidates wait for its end. */
#ifndef GEMLEAK_CYCLES_H
#define GEMLEAK_CYCLES_H

#include <glib.h>
#include "gemleak/judge/classify.h"

typedef struct GlCycles GlCycles;

/* Returns: (transfer full): for one process's records, judged by @rules
 * (which must outlive it). */
GlCycles *gl_cycles_new(const GlRules *rules);
void gl_cycles_free(GlCycles *cycles);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlCycles, gl_cycles_free)

/* Notes @record, classified @verdict (its target frames marked): a direct
 * leak's functions of the target.
 * Returns: TRUE if @record may be a lost cycle's block (an indirect leak
 * skipped as a kind not asked for, with a frame of the target), to keep
 * until gl_cycles_promote() can say, once every record is noted. */
gboolean gl_cycles_note(GlCycles *cycles, const GlRecord *record, GlVerdict verdict);

/* Returns: TRUE if @record, noted as a candidate, is a lost cycle's block:
 * it is then a definite leak (its kind changed), to judge again. */
gboolean gl_cycles_promote(const GlCycles *cycles, GlRecord *record);

#endif
