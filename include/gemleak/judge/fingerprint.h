/* Fingerprints: the name a finding keeps across runs, machines and Ruby
 * versions, which baselines and the JSON, SARIF and GitHub reports carry.
 * Made of the kind and the extension's own functions in the finding's
 * stacks (never pids, addresses, line numbers or Ruby's frames), and of a
 * rank among the sites of one set of functions, in line order. Computed
 * over the whole table at once, since the rank and the uniqueness of each
 * depend on the others. */
#ifndef GEMLEAK_FINGERPRINT_H
#define GEMLEAK_FINGERPRINT_H

#include <glib.h>
#include "gemleak/judge/merge.h"

/* Gives every finding of @findings its fingerprint, unique in the table,
 * its legacy_fingerprint (as gemleak 0.1 made them, for the baselines
 * written then), and, to a block of a lost structure (a definite leak with
 * indirect bytes, an indirect leak), its structure_fingerprint: its
 * functions without its kind, which a leaked cycle's blocks keep when
 * Valgrind names another of them definitely lost. Call it once the table is complete, before
 * gl_findings_sorted(), which orders ties by fingerprint. */
void gl_findings_fingerprint(GlFindings *findings);

/* Returns: (transfer full): the functions @finding's fingerprint is made
 * of, in the order of its stacks, a function repeated in a row once: the
 * extension's own (not inlined from a header). Free with g_strfreev(). */
char **gl_finding_functions(const GlFinding *finding);

#endif
