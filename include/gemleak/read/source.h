/* Source files: their paths as a compiler wrote them into the debug
 * information, made plain, and their lines, read once each, for the
 * reports to show. */
#ifndef GEMLEAK_SOURCE_H
#define GEMLEAK_SOURCE_H

#include <glib.h>
#include "gemleak/base/record.h"

/* Larger source files are not read. */
#define GL_SOURCE_MAX_SIZE ((gsize) 16 * 1024 * 1024)

/* Returns: (transfer full): @path with "." and ".." segments and repeated
 * slashes folded away, lexically (the file need not exist):
 * "tmp/x86_64-linux/ext/3.1/../../../../ext/ext/a.c" -> "ext/ext/a.c". A
 * ".." that would climb above the start of a relative path is kept. */
char *gl_path_normalize(const char *path);

/* Returns: (transfer full) (nullable): the source file of @frame (its dir
 * and file), normalized; NULL when the frame has no file. */
char *gl_frame_path(const GlFrame *frame);

/* Returns: TRUE if @frame's source is a header of the system, the
 * compiler or Ruby (ruby.h's inline functions, a C++ template, glibc's
 * _FORTIFY_SOURCE wrappers) inlined into the extension: a place its
 * maintainer does not edit, and one that comes and goes with compiler
 * flags and Ruby versions. */
gboolean gl_frame_from_a_header(const GlFrame *frame);

typedef struct GlSources GlSources;

/* Returns: (transfer full): an empty cache; free with gl_sources_free().
 * Not thread-safe: one a thread. */
GlSources *gl_sources_new(void);
void gl_sources_free(GlSources *sources);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlSources, gl_sources_free)

/* Returns: (transfer none) (nullable): line @line (from 1) of @path without
 * its line end: as gl_sources_set_line() gave it, else as the file has it;
 * NULL when the file cannot be read, is larger than GL_SOURCE_MAX_SIZE, or
 * is shorter. */
const char *gl_sources_line(GlSources *sources, const char *path, guint line);

/* Makes line @line of @path read as @text, whatever the file says now:
 * the line as a run read it (gemleak/read/run_record.h). The first text
 * given for a line stays. */
void gl_sources_set_line(GlSources *sources, const char *path, guint line, const char *text);

#endif
