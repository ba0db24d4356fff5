/* Finding the target extensions when the user names none: the lists of
 * loaded extensions that `gemleak run` leaves beside its XML files, or
 * else the .so files under the current directory. */
#ifndef GEMLEAK_TARGETS_H
#define GEMLEAK_TARGETS_H

#include <glib.h>

/* The file the Ruby helper writes for each process, in the run directory:
 * one loaded extension path a line. */
#define GL_LOADED_PREFIX "loaded-"
#define GL_LOADED_SUFFIX ".txt"

/* Reads the loaded-extension lists in the directories of @inputs
 * (directories themselves, or the directory of each file).
 * Returns: (transfer full): the extension paths, each once, sorted; empty
 * when there are no lists. */
GPtrArray *gl_targets_from_loaded_lists(const char *const *inputs);

/* Returns: (transfer full): every *.so below @dir (hidden directories and
 * vendor/bundle skipped), sorted. */
GPtrArray *gl_targets_from_tree(const char *dir);

#endif
