/* What gemleak keeps between runs, in a directory of the user's own
 * (XDG_CACHE_HOME/gemleak/runs, else ~/.cache/gemleak/runs): what a run
 * would otherwise pay again before and as its suite starts, each thing
 * under a key that names what it was made from, so that what changed is
 * never taken for what was kept:
 *
 * - the Ruby helper compiled by a Ruby of a run, and what it read of that
 *   Ruby's RbConfig (helper-HASH/, HASH the helper's own source): the
 *   first Ruby of every run compiled it again (some 20 ms);
 * - what gemleak asked of a Ruby before the run (rubies/: its version and
 *   whether it keeps frame pointers, under its executable's path, device,
 *   inode, size and times): a Ruby's start (some 10 ms);
 * - where the C compiler said a sanitizer's runtime is (runtimes/, under
 *   the compiler's executable as a Ruby's above, and the runtime's name):
 *   the compiler's start (some 3 ms, asked by every run of a sanitizer's
 *   engine); a runtime no longer there is asked for again.
 *
 * The directory is used only when it, and the one above it, belong to the
 * user and nobody else can write to them (what is kept there runs in the
 * suite's Ruby): otherwise nothing is kept, and nothing is read. A file is
 * written whole or not at all (a temporary name, then a rename), so that
 * runs side by side share it. Nothing here fails a run. */
#ifndef GEMLEAK_RUN_CACHE_H
#define GEMLEAK_RUN_CACHE_H

#include <glib.h>

/* Returns: (transfer full) (nullable): the directory @name (one component)
 * of gemleak's cache, made (mode 0700) when missing; NULL when there is
 * none fit to use. */
char *gl_cache_dir(const char *name);

/* Returns: (transfer full) (nullable): the directory that holds the
 * cache's directories, when it is there and fit to use; NULL otherwise.
 * Nothing is made. */
char *gl_cache_root(void);

/* Returns: (transfer full) (nullable): what gl_cache_put() kept as @file
 * (one component) in the cache's @name directory under @key (one line),
 * NULL when nothing is kept under that key. */
char *gl_cache_get(const char *name, const char *file, const char *key);

/* Keeps @value as @file in the cache's @name directory, under @key (one
 * line, no newline in it). */
void gl_cache_put(const char *name, const char *file, const char *key, const char *value);

/* Copies the regular files of @from whose names @wanted accepts into the
 * directory @to (each whole, under a temporary name first; on the same
 * filesystem, a second name of the file, gl_file_link_replace(): every
 * writer of these files renames a new one over them), those @to holds
 * already aside. Returns: how many it copied. */
guint gl_cache_copy(const char *from, const char *to, gboolean (*wanted)(const char *name));

/* Returns: (transfer full) (nullable): a key that names the program
 * @program (a name on PATH, or a path) as it is now: its executable's real
 * path, device, inode, size and times (one built or installed again is
 * another), then @what (nullable: what is asked of it, one line); in *@file
 * (transfer full) the cache's file for that path and @what
 * ("HASH[-WHAT].txt"). NULL when it cannot be told. */
char *gl_cache_program_key(const char *program, const char *what, char **file);

#endif
