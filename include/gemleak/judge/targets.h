/* Finding the target extensions when the user names none: the lists of
 * loaded extensions that `gemleak run` leaves beside its XML files, or
 * else the .so files under the current directory. */
#ifndef GEMLEAK_TARGETS_H
#define GEMLEAK_TARGETS_H

#include <glib.h>


/* Reads the loaded-extension lists in the directories of @inputs
 * (directories themselves, or the directory of each file). *found (nullable)
 * says whether there was any list, even an empty one: the helper writes
 * one for every Ruby process it runs in.
 * Returns: (transfer full): the extension paths, each once, sorted; empty
 * when there are no lists or they are empty. */
GPtrArray *gl_targets_from_loaded_lists(const char *const *inputs, gboolean *found);

/* The bounds of the scan below: a project's own tree is far smaller. */
#define GL_TARGETS_SCAN_DEPTH 8
#define GL_TARGETS_SCAN_ENTRIES 50000

/* Returns: TRUE if @path is a Ruby extension: an ELF shared object that
 * exports Init_<name> for its file name <name>.so. */
gboolean gl_is_ruby_extension(const char *path);

/* Returns: TRUE if @path is an ELF shared object none of whose dynamic
 * symbols, defined or imported, begins with @prefix ("__asan_": it was
 * not compiled with AddressSanitizer); FALSE when one does, or when it
 * cannot be read as one. */
gboolean gl_elf_lacks_symbols(const char *path, const char *prefix);

/* Finds the project's own extensions below @dir: the .so files that are
 * Ruby extensions, not in hidden, vendor or node_modules directories, nor
 * where installed gems live; at most GL_TARGETS_SCAN_DEPTH deep and
 * GL_TARGETS_SCAN_ENTRIES entries. A system directory (/, /usr, /lib...)
 * is not scanned.
 * Returns: (transfer full): their paths, sorted (possibly none). */
GPtrArray *gl_targets_from_tree(const char *dir);

#endif
