/* Merging kept records into findings: the same leak reported by several
 * processes (a forked child inherits its parent's unfreed blocks) or several
 * files is one finding with its count, its processes and its totals; the
 * accesses to one freed block are one finding with the places they were
 * made. A finding reads the same in every run: what it shows is chosen by
 * content, never by which process was read first. */
#ifndef GEMLEAK_MERGE_H
#define GEMLEAK_MERGE_H

#include <glib.h>
#include "gemleak/record.h"

typedef struct {
    GlRecord *record;      /* the occurrence shown (a site's), chosen by content */
    GPtrArray *sites;      /* GlRecord*, owned: one a distinct access of a freed
                            * block, else just the one shown; nullable */
    gboolean freed_block;  /* errors on one freed block, merged */
    guint occurrences;
    GArray *pids;          /* gint64, each once, in order of first appearance */
    guint64 total_bytes;   /* summed over occurrences (leaks only), saturating */
    guint64 total_blocks;
    guint64 direct_bytes;  /* of total_bytes, those of the blocks lost themselves */
    gboolean certain;      /* not every occurrence was uncertain (classify.h) */
    char *fingerprint;     /* stable across runs: no pids, addresses or line numbers */
    guint64 order;         /* where the first occurrence was read: the last tie-break */
} GlFinding;

typedef struct GlFindings GlFindings;

/* Returns: (transfer full): an empty table; free with gl_findings_free(). */
GlFindings *gl_findings_new(void);
void gl_findings_free(GlFindings *findings);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlFindings, gl_findings_free)

/* Adds a record the classifier kept (and marked); the table owns it. @order
 * says where it was read ((file index << 32) | record index). */
void gl_findings_add(GlFindings *findings, GlRecord *record, guint64 order);

/* Returns: (transfer full): a finding of no occurrence yet, showing @record
 * (consumed), for one that was merged elsewhere (a JSON report read back);
 * the caller fills in its counts. Give it to gl_findings_add_finding(). */
GlFinding *gl_finding_new(GlRecord *record, guint64 order);

/* Adds @site (consumed) to @finding: another access to its freed block. */
void gl_finding_add_site(GlFinding *finding, GlRecord *site);

/* Adds @finding (consumed), merging it with an equal one. */
void gl_findings_add_finding(GlFindings *findings, GlFinding *finding);

/* Moves every finding of @from into @into, merging equal ones. */
void gl_findings_absorb(GlFindings *into, GlFindings *from);

guint gl_findings_count(const GlFindings *findings);

/* Returns: (transfer container): the findings, most bytes first, then most
 * occurrences, then by fingerprint; each with its fingerprint (unique in
 * the table) and the occurrence it shows. The table still owns each
 * finding. Source files are read for fingerprints (see source.h). */
GPtrArray *gl_findings_sorted(GlFindings *findings);

/* Returns: (transfer full): the identity under which records merge: the kind
 * and every stack's frames up to its last target frame (the Ruby VM frames
 * beyond it differ between call sites and say nothing about the leak), a
 * frame repeated in a row counting once (the depth of a recursion is no
 * part of a leak); for errors on a freed block, the block's free and
 * allocation stacks. */
char *gl_record_merge_key(const GlRecord *record);

/* Returns: TRUE if @record is an error on a block that was freed (a
 * use-after-free, a double free): Valgrind's "... free'd" part. */
gboolean gl_record_on_freed_block(const GlRecord *record);

/* Returns: how many leading frames of @stack matter for identity: up to and
 * including the last target frame, or all when none is a target. */
guint gl_stack_relevant_frames(const GlStack *stack);

#endif
