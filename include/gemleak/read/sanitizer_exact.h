/* The reports of gemleak's exact pass, in the runtimes' text and gemleak's
 * frame format (GL_SANITIZER_FRAME_FORMAT), read and written: which leak
 * records of a fast pass had their stacks cut, at which allocation sites;
 * the exact stacks a second pass found at those sites (the
 * "gemleak:stack" and "gemleak:at" lines of src/agent/exact_write.c, joined
 * to the leak check's objects by address); and the fast pass's report
 * with each block of a cut record given the stack found for its site and
 * size. It knows the format, nothing of Ruby: what a whole stack is, the
 * caller says (GlExactCut).
 *
 * A site is the allocation's call: the first frame after the allocator's
 * (the runtime's interceptor) and gemleak's, by its module and its offset
 * there as the runtime prints them, and the size of the block; below an
 * extension's call of one of Ruby's allocation functions (gemleak_via),
 * that call's ("SIZE<TAB>OFFSET<TAB>MODULE<TAB>via"). */
#ifndef GEMLEAK_SANITIZER_EXACT_H
#define GEMLEAK_SANITIZER_EXACT_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/read/process.h"

/* A leak record's stack as the walk over a report reads it. */
typedef struct {
    /* its frames, innermost first (ip, obj, fn), those of gemleak's
     * libraries taken out; frames[0] the allocator's */
    const GlStack *stack;
    /* one of those was gemleak_via: the allocation ran below an
     * extension's call of one of Ruby's allocation functions */
    gboolean via;
    gint via_frame;        /* the index in @stack of that extension's call, -1: none */
    guint dropped;         /* how many frames of gemleak's were taken out */
    GlUnwound unwound;     /* how the report's stacks were made (its "gemleak:unwound") */
    /* the exact pass gave it its stack (a rewritten report's record) */
    gboolean exact;
} GlExactStack;

/* Returns: TRUE if @stack was cut short: what it hides may decide the leak. */
typedef gboolean (*GlExactCut)(const GlExactStack *stack);

/* The exact stacks of an exact pass, by site and size. */
typedef struct GlExactDonors GlExactDonors;

/* What a rewrite did. */
typedef struct {
    guint records;     /* cut leak records met */
    guint blocks;      /* their blocks */
    guint given;       /* blocks given an exact stack */
    guint hidden;      /* blocks the check could not judge ("gemleak:hidden") */
    guint hidden_lost; /* those the exact pass found lost */
} GlExactCount;

/* What gl_exact_sites() found. */
typedef struct {
    guint blocks;        /* cut blocks whose sites were added */
    /* Some are in a process that names no test as the owner of any block
     * ("gemleak:owned" lines): a Ruby a test started, or one without the
     * owners. Only a run of every test may lose them again. */
    gboolean untested;
    /* Blocks the leak check could not judge: allocated on another stack
     * than the thread's, still allocated at the check ("gemleak:hidden",
     * src/agent/alloc.c). Only a run with exact stacks judges them. */
    guint hidden;
} GlExactFound;

/* Adds to @sites (a set of "SIZE<TAB>OFFSET<TAB>MODULE" strings, owned by
 * it) the site of each block of each leak record of @data (a report, in
 * gemleak's frame format, with report_objects=1's lists) whose stack @cut
 * says was cut, and to @tests (nullable; a set of "NAME<TAB>LOCATION"
 * strings) the test that allocated it, as its "gemleak:owned" lines say
 * (none for the setup's, before the first test). A module that holds a
 * newline cannot be named in a sites file: its blocks are left out. @found
 * adds up what it found. The blocks of @skip (nullable; a set of
 * "ADDRESS<TAB>SIZE" keys, gl_exact_block_key(): a forked child's that
 * its parent's report holds, sanitizer_inherited.h) are left out: the
 * parent's run again gives them theirs. */
void gl_exact_sites(const char *data, gsize length, GlExactCut cut, GHashTable *sites,
                    GHashTable *tests, GlExactFound *found, GHashTable *skip);

/* Adds to @tests (as gl_exact_sites() does) the tests that allocated the
 * blocks of @data whose stacks the fast pass unwound exactly itself (the
 * mark of an exact stack: the first allocation at a site, or one made as
 * a require ran, src/agent/alloc.c) at a site of @sites, once every
 * report's cut blocks are in it. The run again loses them again beside
 * the cut ones, and cannot tell which of the stacks it finds at a site
 * was which block's: its stacks at those sites go to all of them, in the
 * order the run found them (gl_exact_rewrite()'s @shared). @skip as
 * gl_exact_sites() takes it. */
void gl_exact_shared_tests(const char *data, gsize length, GHashTable *sites, GHashTable *tests,
                           GHashTable *skip);

/* Returns: (transfer full): no stacks yet; free with gl_exact_donors_free(). */
GlExactDonors *gl_exact_donors_new(void);
void gl_exact_donors_free(GlExactDonors *donors);

/* Returns: (transfer full): a copy of @donors, whose stacks can be given
 * apart from theirs. */
GlExactDonors *gl_exact_donors_copy(const GlExactDonors *donors);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlExactDonors, gl_exact_donors_free)

/* Adds the stacks of @data, a report of the exact pass: each block a leak
 * check listed (report_objects=1) that the table written before it holds,
 * with that stack, and each other block of a record whose own stack is
 * whole (@cut says not cut: the exact pass unwound every allocation), with
 * that one, under the stack's site and the block's size.
 * Returns: how many blocks it added. */
guint gl_exact_donors_add(GlExactDonors *donors, const char *data, gsize length, GlExactCut cut);

/* Returns: (transfer full): @data, a fast pass's report, with each leak
 * record whose stack @cut says was cut split by the stacks @donors holds
 * for its blocks' sites and sizes (each stack given to one block: a block
 * the exact pass found lost once stands for one the fast pass found), a
 * record for each stack after the allocator's frames, where the report's
 * records end; the blocks none was found for keep the record's own stack.
 * The blocks its check could not judge ("gemleak:hidden") that the exact
 * pass found lost, by size, with a stack no record took, make a report of
 * their own (process @pid) before the line that says the check ran to its
 * end; the others it judged reachable. The "gemleak:hidden" lines, and the
 * "gemleak:owned" ones with @strip_owners, are left out. Every other line
 * stays as it is. @count (nullable) says how many. The blocks of @skip
 * (nullable, as gl_exact_sites() takes it) keep the record's own stack,
 * and count nowhere. The blocks of a record with an exact stack of the
 * fast pass's own at a site of @shared (nullable: gl_exact_shared_tests())
 * are given a stack of @donors too, when one is left, and count nowhere. */
char *gl_exact_rewrite(const char *data, gsize length, GlExactCut cut, GlExactDonors *donors,
                       gint64 pid, gboolean strip_owners, GlExactCount *count, GHashTable *skip,
                       GHashTable *shared);

/* Returns: (transfer full): the key of a block at @address of @bytes in
 * a set gl_exact_sites() and gl_exact_rewrite() skip. */
char *gl_exact_block_key(guint64 address, guint64 bytes);

#endif
