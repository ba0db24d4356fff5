/* What a child forked under a sanitizer's engine inherited from its
 * parent, told apart without a leak check at the fork.
 *
 * Under Valgrind the child checks at once what it inherited (a full check:
 * every loss record so far), and gemleak subtracts that from its later
 * checks. Under a sanitizer that check cost each child 0.05 to 0.07 s (a
 * collection, a scan of the heap, a symbolized report), most of what a
 * suite that forks paid over the runtime alone. There the helper writes
 * "gemleak:parent<TAB>PPID" after "gemleak:forked" instead, and before the
 * run's reports are read, the check is written in its place: of the blocks
 * the child's later reports list lost, those its parent's report lists
 * lost too, at the same address, of the same size, allocated by the same
 * stack. The child's memory is a copy of its parent's, and a lost block
 * stays lost: what the parent had lost at the fork, both report. A block
 * both lost only later is one both lost the same way (the same site, the
 * same finding): counted once, the parent's. What the child alone lost
 * stays the child's. The judges read the check written in as they read
 * the one made at the fork (judge/attribute.h: inherited). */
#ifndef GEMLEAK_SANITIZER_INHERITED_H
#define GEMLEAK_SANITIZER_INHERITED_H

#include <glib.h>

/* Returns: (transfer full): the blocks @child's report (@child_length
 * bytes) lists lost after its "gemleak:parent" line that @parent (the
 * parent's reports, @parent_length bytes; nullable: it left none) lists
 * lost too, at the same address, of the same size, allocated by the same
 * stack: a set of "ADDRESS<TAB>SIZE" keys (hexadecimal, decimal). Read on
 * the stacks as the runtime gave them: the exact pass gives a site's
 * blocks its stacks in any order. The line's PPID is in *@ppid (0: the
 * report has none; the set is then empty). */
GHashTable *gl_sanitizer_inherited_blocks(const char *child, gsize child_length,
                                          const char *parent, gsize parent_length, gint64 *ppid);

/* Returns: (transfer full): @child's report (@child_length bytes, process
 * @pid) with the check of what it inherited written in place of its
 * "gemleak:parent" line, the blocks of @blocks (gl_sanitizer_inherited_blocks())
 * each once; and in the records after the line, each of those blocks with
 * the stack @parent's record of it has (@parent, the parent's reports as
 * the exact pass left them, nullable: the child's own stack then): what
 * the exact pass gave the parent's block, its copy has. The report as it
 * is when it has no such line. */
GString *gl_sanitizer_inherited_check(const char *child, gsize child_length, gint64 pid,
                                      GHashTable *blocks, const char *parent, gsize parent_length);

/* Returns: the parent's pid a report's "gemleak:parent" line names, 0 when
 * @data (@length bytes) has none. */
gint64 gl_sanitizer_parent_of(const char *data, gsize length);

/* The forked children of a run directory ("lsan.PID", "asan.PID" reports)
 * and the blocks each inherited, found from their parents' reports there
 * ("PREFIX.PPID", and "PREFIX.PPID.N" of the images the parent exec'd). */
typedef struct GlInherited GlInherited;

/* Returns: (transfer full) (nullable): what the forked children of @dir
 * inherited; NULL with @error set when a report could not be read. Found
 * before the exact pass rewrites the reports' stacks. */
GlInherited *gl_sanitizer_inherited_find(const char *dir, GError **error);

/* Writes into each child's report of @found the check of what it
 * inherited (gl_sanitizer_inherited_check()); *@children (nullable) gets
 * how many. Returns: FALSE, with @error set, when one could not be. */
gboolean gl_sanitizer_inherited_write(const char *dir, const GlInherited *found, guint *children,
                                      GError **error);

/* Returns: (transfer none) (nullable): the blocks the child whose report
 * is named @report (in the directory @found was found in) inherited, as
 * gl_exact_sites() skips them; NULL when it is no forked child's. */
GHashTable *gl_sanitizer_inherited_of(const GlInherited *found, const char *report);

void gl_sanitizer_inherited_free(GlInherited *found);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlInherited, gl_sanitizer_inherited_free)

#endif
