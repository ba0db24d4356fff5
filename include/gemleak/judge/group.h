/* Groups: the findings that are one bug. A finding is one call path (its
 * merge key has every frame and line up to the extension's outermost
 * frame); one bug often has many: an allocator wrapper reached from 30
 * call sites of a library's free macro, or an object whose three buffers,
 * allocated at three lines, are lost together. Every report shows a group
 * as one entry and the gate counts groups; fingerprints and baselines stay
 * per finding.
 *
 * The rule: findings of one kind class (a leak kind, or one error kind)
 * form a group when they share
 *   (a) the function of their innermost extension frame: where the
 *       extension allocated, or erred (its line ignored), and
 *   (b) the function of the outermost extension frame of the contiguous
 *       run of extension frames that holds it: the entry point, the Ruby
 *       method implemented in C through which Ruby entered the extension.
 * Two bugs through one allocation helper keep apart by (b): they are
 * entered from two methods. */
#ifndef GEMLEAK_GROUP_H
#define GEMLEAK_GROUP_H

#include <glib.h>
#include "gemleak/judge/merge.h"

typedef struct {
    guint id;              /* 1, 2, ...: its place in the report */
    GPtrArray *findings;   /* GlFinding*, not owned, in the order given: the
                            * first is the one shown */
    guint64 total_bytes;   /* summed over its findings, saturating (leaks) */
    guint64 total_blocks;
    guint64 direct_bytes;
    guint64 occurrences;
    GArray *pids;          /* gint64, each once */
    gboolean certain;      /* one of its findings is certain */
    const char *function;  /* (a), nullable: a finding without an extension frame */
    const char *entry;     /* (b), nullable */
} GlGroup;

/* Finds, in @finding's stacks, the frames of (a), *function, and (b),
 * *entry: the one rule for the entry point, which every report names
 * (a group's JSON "entry", the titles of JUnit, SARIF and GitHub). Both
 * NULL (transfer none, owned by the finding's record) when no extension
 * frame places the finding. */
void gl_finding_group_frames(const GlFinding *finding, const GlFrame **function,
                             const GlFrame **entry);

/* Returns: (transfer full): the groups of @findings (GlFinding*, in report
 * order): most bytes first, then most occurrences, then in the order of
 * their first finding; each group's findings in the order given. Free
 * with g_ptr_array_unref(). */
GPtrArray *gl_findings_group(const GPtrArray *findings);

#endif
