/* A lost structure counted whole under the sanitizer engines.
 *
 * Valgrind counts the blocks a lost block points to in its loss record:
 * "576 (384 direct, 192 indirect) bytes in 1 blocks are definitely lost"
 * for a struct lost with the buffer it holds. LeakSanitizer reports those
 * blocks apart, as an "Indirect leak" of their own allocation stack, and
 * says nothing of which direct leak holds them: a finding of 384 bytes
 * where Valgrind's says 576. */
#ifndef GEMLEAK_STRUCTURES_H
#define GEMLEAK_STRUCTURES_H

#include <glib.h>
#include "gemleak/base/record.h"

/* Returns: (transfer none) (nullable): the direct leak of @records
 * (GlRecord*, its frames' in_target set) whose structure holds @indirect:
 * a direct leak of the same report (the same check) that a function of
 * the target on the indirect leak's stack also allocated (the call that
 * built the structure), the one that shares the most calls into the
 * extension with it, from the outermost target frame inward (the same
 * call), the first of those. Copies made for --per-test's attribution
 * (attribution_only) take no part. The reports use it too, to list an
 * indirect leak with its holder (judge/group.h). */
GlRecord *gl_structures_holder(const GPtrArray *records, const GlRecord *indirect);

/* Adds each indirect leak of @records (GlRecord*: one process's, read and
 * classified) to the direct leak whose structure holds it
 * (gl_structures_holder()), as Valgrind's record holds it. The direct
 * leak's bytes grow by the indirect's (its blocks stay its own, as
 * Valgrind counts them), its text says both, as Valgrind's does ("... of
 * 576 (384 direct, 192 indirect) byte(s) ..."), which
 * gl_record_direct_bytes() reads. The indirect record stays as it was: a
 * finding of its own when indirect leaks are asked for, as under Valgrind,
 * which the reports list with its holder (group.h).
 * Returns: how many indirect leaks were counted in a structure. */
guint gl_structures_attach(GPtrArray *records);

#endif
