/* Fingerprints: the name a finding keeps across runs, machines and Ruby
 * versions, which baselines and the JSON, SARIF and GitHub reports carry.
 * Made of the kind (each kind of the errors on a freed block) and the
 * extension's own functions in the finding's stacks, each with the text of
 * its source line, whitespace made one space (never pids, addresses, line
 * numbers or Ruby's frames; a function the compiler split, "f.cold", as
 * the function "f" it split), and of a rank among the sites that read the
 * same, in line order. The lines are those the run read, where it recorded
 * them (a kept run directory read elsewhere), else read where gemleak
 * runs: without the source, a site is told from another of the same
 * functions by its rank alone. Computed over the whole table at once, since the rank and the
 * uniqueness of each depend on the others. */
#ifndef GEMLEAK_FINGERPRINT_H
#define GEMLEAK_FINGERPRINT_H

#include <glib.h>
#include "gemleak/judge/merge.h"
#include "gemleak/read/source.h"

/* Gives every finding of @findings its fingerprint, unique in the table,
 * its earlier_fingerprints (as each earlier GL_FINGERPRINT_VERSION made
 * them, for the baselines written then), to an error on a freed block of
 * several kinds its kind_fingerprints, and, to a block of a lost structure
 * (a definite leak with indirect bytes, an indirect leak), its
 * structure_fingerprint: its site without its kind, which a leaked cycle's
 * blocks keep when Valgrind names another of them definitely lost. Call it
 * once the table is complete, before gl_findings_sorted(), which orders
 * ties by fingerprint. The source lines are read through @sources
 * (nullable: a cache of its own), which holds a run's lines as it read
 * them (gemleak/read/run_record.h) where it recorded them. */
void gl_findings_fingerprint(GlFindings *findings, GlSources *sources);

/* Returns: (transfer full): the functions @finding's fingerprint is made
 * of, in the order of its stacks, a function repeated in a row once: the
 * extension's own (not inlined from a header). Free with g_strfreev(). */
char **gl_finding_functions(const GlFinding *finding);

#endif
