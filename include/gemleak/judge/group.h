/* Groups: the findings that are one bug. A finding is one call path (its
 * merge key has every frame and line up to the extension's outermost
 * frame); one bug often has many: an allocator wrapper reached from 30
 * call sites of a library's free macro, an object whose three buffers,
 * allocated at three lines, are lost together, a destroy function that
 * loses the same blocks whichever method calls it. Every report shows a
 * group as one entry and the gate counts groups; fingerprints and
 * baselines stay per finding.
 *
 * A block is lost by the code that had it from its allocator: the
 * function that allocated it, or one further out that it was handed to.
 * The extension's part of a finding's stack is its call path, from (a)
 * the function of its first frame there (where the extension allocated,
 * or erred; group.c passes over a header's and a runtime's inlined frames)
 * out to (b) its entry point, the outermost frame of the contiguous run of
 * extension frames that holds it (the Ruby method implemented in C through
 * which Ruby entered the extension). Findings of one kind class (a leak
 * kind, or one error kind) are one group when, directly or through other
 * findings of the group:
 *   1. one function, one way in: they share the function of (a) (its line
 *      left out, so that one object's buffers join) and of (b);
 *   2. one routine, several ways in: their call paths are the same calls
 *      (function, file and line) from the allocation out through a
 *      function that is not the allocating one: that function lost the
 *      blocks, whichever way Ruby entered it (a destroy function that a
 *      free function and a close method both call);
 *   3. one call built them: entered through one entry point, their call
 *      paths are the same calls from there inward, the entry point's own
 *      call and at least one more, down to one function, at two of whose
 *      lines they part, and each was allocated there or in one function
 *      it called (a parser's allocate making its implementation object and
 *      its buffers); or one path stops at a call the other goes on into;
 *   4. a call path that shows the extension only at its entry point, on a
 *      line of another file than that method's (code inlined into it that
 *      the runtime's symbolizer did not unfold), belongs with the other
 *      findings of that entry point, when they are one group.
 *   5. uncertain leaks that no frame of the extension places (their
 *      frames name no module: a runtime's default frame format; or their
 *      stack stops short) are one group by their site: the function of
 *      the first named frame outward of the allocator and Ruby's
 *      allocation functions, all one can say of them.
 * Two bugs through one allocation helper, entered from two methods, stay
 * two: their paths share the helper alone, and it allocated.
 *
 * An indirect leak is owned by the direct leak whose structure holds it
 * (structures.h): it is listed in its holder's group, not as an entry of
 * its own. Without indirect leaks asked for, Valgrind names none, and a
 * LeakSanitizer report's are counted in their holder's bytes alone: the
 * reports say those bytes, the same under every engine. */
#ifndef GEMLEAK_GROUP_H
#define GEMLEAK_GROUP_H

#include <glib.h>
#include "gemleak/judge/merge.h"

/* A way into a group: an entry point (b) and what was lost through it. */
typedef struct {
    const GlFrame *frame;  /* the entry point's frame, in the first finding entered there
                            * whose call path goes further in (rule 4's is at a line of
                            * another file), else in the first */
    gboolean shallow;      /* @frame is its call path's only frame */
    guint call_paths;
    guint64 bytes;         /* saturating */
    guint64 blocks;
} GlWayIn;

/* A block a group's structures owned: an indirect leak the report lists
 * (--leak-kinds with indirect), lost with them, counted in their bytes
 * already. */
typedef struct {
    const GlFinding *finding;
    guint64 bytes;
    guint64 blocks;
} GlOwned;

typedef struct {
    guint id;              /* 1, 2, ...: its place in the report */
    GPtrArray *findings;   /* GlFinding*, not owned, in the order given: the
                            * call paths; the first is the one shown */
    guint64 total_bytes;   /* summed over its findings, saturating (leaks) */
    guint64 total_blocks;
    guint64 direct_bytes;
    guint64 occurrences;
    GArray *pids;          /* gint64, each once */
    gboolean certain;      /* one of its findings is certain */
    const char *function;  /* (a) of its first finding, nullable: a finding
                            * without an extension frame */
    const char *entry;     /* (b) of its first finding, nullable */
    GPtrArray *functions;  /* const char*: the functions of (a), each once, in
                            * the order of its findings */
    GArray *ways;          /* GlWayIn: its entry points, most bytes first */
    GArray *owned;         /* GlOwned: what its structures owned, most bytes first */
    guint64 owned_bytes;   /* saturating */
    guint64 owned_blocks;
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
 * their first finding; each group's findings in the order given, an
 * indirect leak that a finding's structure holds among that group's owned
 * blocks. Free with g_ptr_array_unref(). */
GPtrArray *gl_findings_group(const GPtrArray *findings);

#endif
