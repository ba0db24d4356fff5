/* The files compiled into gemleak, so that it needs no data path to find
 * them: the Ruby helper and its parts, the libraries it preloads into a
 * run's processes, the guard, the manual (the Makefile's RESOURCES, each
 * named by its path under the build directory: "helper/gemleak_helper.rb",
 * "client/gemleak_alloc.so", "man/gemleak.1"). The build writes their
 * bytes into gemleak's read-only data as they are (scripts/gen-resources):
 * nothing runs to register them at each start, and no GIO (GResource) is
 * loaded for them. */
#ifndef GEMLEAK_BASE_RESOURCES_H
#define GEMLEAK_BASE_RESOURCES_H

#include <glib.h>

/* Returns: (transfer full) (nullable): the bytes of the file @name, which
 * are gemleak's own and never freed (the GBytes is the caller's to unref);
 * NULL when gemleak carries no file of that name. */
GBytes *gl_resource(const char *name);

#endif
