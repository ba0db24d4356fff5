/* Merging kept records into findings: the same leak reported by several
 * processes (a forked child inherits its parent's unfreed blocks) or several
 * files is one finding with its count, its processes and its totals; the
 * accesses to one freed block are one finding with the places they were
 * made. A finding reads the same in every run: what it shows is chosen by
 * content, never by which process was read first. */
#ifndef GEMLEAK_MERGE_H
#define GEMLEAK_MERGE_H

#include <glib.h>
#include "gemleak/base/record.h"


/* When an occurrence happened, as far as the markers of its process say
 * (attribute.h): the tests during which it was lost, or that it was lost
 * before the first test or only at exit. */
typedef struct {
    GPtrArray *tests;      /* GlTest*, in order; nullable: none */
    gboolean before_tests; /* lost before the process's first test (while loading) */
    gboolean at_exit;      /* first lost at exit, after the process's last test */
    gboolean again;        /* @tests were found by running them again, alone (--per-test) */
    gboolean allocated;    /* @tests (or before_tests) are where its blocks were allocated,
                            * not the checks after which they were lost (a sanitizer's engine) */
    gboolean more_tests;   /* other tests lost it too, not named */
    /* Lost in one of this many tests, from @among_first to @among_last (a
     * check after several tests), when no test of them lost it again run
     * alone; 0: not so. The tests are borrowed. */
    guint64 among;
    const GlTest *among_first;
    const GlTest *among_last;
} GlAttribution;

/* A finding names at most this many tests: the first few say where to look. */
#define GL_FINDING_MAX_TESTS 5

/* What a fingerprint is made of, in baselines and JSON reports (and
 * SARIF's partial fingerprint's name): the one constant to raise when that
 * changes, once a release. 1, a file without it: gemleak 0.1's, Ruby's
 * named frames too; 2: the extension's functions only, and a rank by line
 * (issue 20); 3: each function with the text of its source line, and the
 * kinds of the errors on a freed block (issue 26); 4: a function a compiler
 * split or cloned ("f.cold", "f.part.0") as the function it split (issue
 * 37). A baseline of an earlier version is matched by that version's
 * fingerprints (GlFinding's earlier_fingerprints), which fingerprint.c
 * keeps making as they were. */
#define GL_FINGERPRINT_VERSION 4

/* --growth: what one site's live memory did over one test's repetitions
 * (a finding of kind GL_KIND_GROWTH; judge/growth.h decides). Owned by its
 * finding. */
typedef struct {
    guint repetitions;     /* K: the test ran K times after its first run */
    gint64 *bytes;         /* [repetitions]: the change in live bytes each made */
    gint64 *blocks;        /* [repetitions]: the change in live blocks */
    guint64 median_bytes;  /* the median of bytes[] (--growth-min-bytes) */
    gboolean held;         /* the structs of Data objects the test keeps (growth-held) */
    gboolean lost;         /* some of what it added was lost, not reachable, at a measure */
} GlGrowth;

/* Frees @growth (nullable). */
void gl_growth_free(GlGrowth *growth);

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
    char *fingerprint;     /* stable across runs and Rubies: the extension's functions
                            * and their lines' text, no pids, addresses, line numbers or
                            * Ruby's frames */
    /* As each earlier version made them, for the baselines written then:
     * [v - 1] is version v's (nullable: none of that version). */
    char *earlier_fingerprints[GL_FINGERPRINT_VERSION - 1];
    char *earlier_structure_fingerprints[GL_FINGERPRINT_VERSION - 1];
    char **earlier_kind_fingerprints[GL_FINGERPRINT_VERSION - 1];
    char *structure_fingerprint;  /* nullable: a block of a lost structure (a leak
                                   * with indirect bytes, or an indirect leak): its
                                   * site, whatever the kind (fingerprint.h) */
    char **kind_fingerprints;  /* nullable: errors of several kinds on one freed block:
                                * each kind's fingerprint alone, sorted (fingerprint.h) */
    guint64 order;         /* where the first occurrence was read: the last tie-break */
    /* --per-test: the tests during which it was lost (a leak) or happened
     * (an error), first seen first, at most GL_FINDING_MAX_TESTS; empty
     * when no marker says. */
    GPtrArray *tests;      /* GlTest*, owned */
    gboolean more_tests;   /* other tests too, beyond those */
    gboolean lost_before_tests;  /* an occurrence was lost before its process's first test */
    gboolean lost_at_exit; /* an occurrence was first lost at exit, after the last test */
    gboolean found_again;  /* its tests were found by running them again, alone */
    gboolean allocated_in_tests;  /* its tests (or before the first) are where its blocks
                                   * were allocated (a sanitizer's engine), not where a
                                   * check found them lost */
    /* Lost in one of @among tests, from @among_first to @among_last (owned),
     * that no test run again alone lost again; 0, NULL: not so. */
    guint64 among;
    GlTest *among_first;
    GlTest *among_last;
    /* --growth: the series of a growing site (nullable: not a growth
     * finding); its test is tests[0]. */
    GlGrowth *growth;
} GlFinding;

typedef struct GlFindings GlFindings;

/* Adds @pid to @pids (gint64) unless it is there: each once, in order. */
void gl_pids_add(GArray *pids, gint64 pid);

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

/* As gl_findings_add(), with when the occurrence happened (nullable:
 * unknown), which the finding adds to its tests. */
void gl_findings_add_attributed(GlFindings *findings, GlRecord *record, guint64 order,
                                const GlAttribution *attribution);

/* Moves every finding of @from into @into, merging equal ones. */
void gl_findings_absorb(GlFindings *into, GlFindings *from);

guint gl_findings_count(const GlFindings *findings);

/* Returns: (transfer container): the findings, in no order. The table
 * still owns each finding. */
GPtrArray *gl_findings_list(GlFindings *findings);

/* Returns: (transfer container): the findings, most bytes first, then most
 * occurrences, then by fingerprint (gl_findings_fingerprint() gives them,
 * first), then in reading order; a freed block's accesses sorted by
 * content. The table still owns each finding. */
GPtrArray *gl_findings_sorted(GlFindings *findings);

/* Orders two occurrences of one finding by content alone: the one with
 * fewest frames (the shallowest recursion) first, then by their frames.
 * The one shown is then the same whatever the reading order.
 * Returns: <0, 0 or >0, as strcmp() does. */
gint gl_record_compare_content(const GlRecord *a, const GlRecord *b);

/* Returns: (transfer full): the identity under which records merge: the kind
 * and every stack's frames up to its last target frame (the Ruby VM frames
 * beyond it differ between call sites and say nothing about the leak), a
 * frame repeated in a row counting once (the depth of a recursion is no
 * part of a leak); for errors on a freed block, the block's free and
 * allocation stacks. */
char *gl_record_merge_key(const GlRecord *record);

/* Returns: the bytes of @record's blocks lost themselves: its "N direct"
 * when Valgrind's text says "152 (56 direct, 96 indirect) bytes", else all
 * its bytes. */
guint64 gl_record_direct_bytes(const GlRecord *record);

/* Returns: TRUE if @record is an error on a block that was freed (a
 * use-after-free, a double free): Valgrind's "... free'd" part. */
gboolean gl_record_on_freed_block(const GlRecord *record);

/* Returns: how many leading frames of @stack matter for identity: up to and
 * including the last target frame, or all when none is a target. */
guint gl_stack_relevant_frames(const GlStack *stack);

#endif
