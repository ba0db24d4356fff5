/* The frames a sanitizer runtime left unnamed, named by gemleak.
 *
 * A runtime that names frames itself (symbolize=1) reads the debug
 * information of every object in a stack, Ruby's 46 MB of DWARF among
 * them, in every process that reports: on psych's suite with one leak that
 * is more than the suite's own time. Run with symbolize=0, it writes each
 * frame's module and offset only, in gemleak's frame format
 * (GL_SANITIZER_FRAME_FORMAT: "Gf N <null>", "Gs N <null>", line 0); gemleak
 * names them once a run, from the objects (debuginfo.h), as the runtime
 * would have, before anything reads the reports: a frame becomes the
 * functions inlined at its address and the one whose code it is, numbered
 * as the runtime numbers them. It knows gemleak's frame format, nothing
 * about Ruby. */
#ifndef GEMLEAK_SANITIZER_NAMES_H
#define GEMLEAK_SANITIZER_NAMES_H

#include <stdio.h>
#include <glib.h>
#include "gemleak/read/debuginfo.h"

/* Returns: (transfer full) (nullable): @data (@length bytes of a report)
 * with the frames the runtime left unnamed named, its length in
 * *@named_length; NULL when no frame of it was left unnamed. */
char *gl_sanitizer_name_frames(GlDebugInfo *info, const char *data, gsize length,
                               gsize *named_length);

/* Names the unnamed frames of the report at @path in place (written whole
 * and renamed over it: a reader sees the one or the other); *@named
 * (nullable) says whether it named any.
 * Returns: FALSE with @error set when it could not be read or written;
 * TRUE when it had nothing to name. */
gboolean gl_sanitizer_name_report(GlDebugInfo *info, const char *path, gboolean *named,
                                  GError **error);

/* Names the unnamed frames of the reports in the run directory @dir (its
 * engine's, GL_ENGINE_NAMES_FRAMES in its engine.txt: LOG.PID files) in
 * place, each with gl_sanitizer_name_report(); what cannot be is said on
 * @messages (nullable), "gemleak: warning: ...": its frames stay unnamed.
 * Returns: how many reports it named. */
guint gl_sanitizer_name_run_dir(GlDebugInfo *info, const char *dir, FILE *messages);

#endif
