/* Merging kept records into findings: the same leak reported by several
 * processes (a forked child inherits its parent's unfreed blocks) or several
 * files is one finding with its count, its processes and its totals. */
#ifndef GEMLEAK_MERGE_H
#define GEMLEAK_MERGE_H

#include <glib.h>
#include "gemleak/record.h"

typedef struct {
    GlRecord *record;      /* the first occurrence: message, stacks, suppression */
    guint occurrences;
    GArray *pids;          /* gint64, each once, in order of first appearance */
    guint64 total_bytes;   /* summed over occurrences (leaks only) */
    guint64 total_blocks;
    char *fingerprint;     /* stable across runs: no pids, addresses or line numbers */
    guint64 order;         /* where the first occurrence was read: the tie-break */
} GlFinding;

typedef struct GlFindings GlFindings;

/* Returns: (transfer full): an empty table; free with gl_findings_free(). */
GlFindings *gl_findings_new(void);
void gl_findings_free(GlFindings *findings);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlFindings, gl_findings_free)

/* Adds a record the classifier kept (and marked); the table owns it. @order
 * says where it was read ((file index << 32) | record index), so that
 * findings read in parallel sort as they would have read in series. */
void gl_findings_add(GlFindings *findings, GlRecord *record, guint64 order);

/* Moves every finding of @from into @into, merging equal ones. */
void gl_findings_absorb(GlFindings *into, GlFindings *from);

guint gl_findings_count(const GlFindings *findings);

/* Returns: (transfer container): the findings, most bytes first, then most
 * occurrences, then first read; the table still owns each finding. */
GPtrArray *gl_findings_sorted(GlFindings *findings);

/* Returns: (transfer full): the identity under which records merge: the kind
 * and every stack's frames up to its last target frame (the Ruby VM frames
 * beyond it differ between call sites and say nothing about the leak). */
char *gl_record_merge_key(const GlRecord *record);

/* Returns: (transfer full): a short hex digest of the kind and the functions
 * of the primary stack up to its last target frame, with the target's object
 * names: what stays the same when lines shift and pids change. */
char *gl_record_fingerprint(const GlRecord *record);

/* Returns: how many leading frames of @stack matter for identity: up to and
 * including the last target frame, or all when none is a target. */
guint gl_stack_relevant_frames(const GlStack *stack);

#endif
