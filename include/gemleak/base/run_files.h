/* The names of the files engines write in a run directory, one a process
 * image (gemleak/base/protocol.h has the rest of the run directory's
 * protocol, which the client libraries and the Ruby helper share, and
 * which holds macros only). */
#ifndef GEMLEAK_RUN_FILES_H
#define GEMLEAK_RUN_FILES_H

#include <glib.h>

/* Reads @name: Valgrind's "PID.xml" (and .xml.gz), a sanitizer's
 * "NAME.PID" (log_path=DIR/NAME); an image that exec'd another program,
 * its file renamed before the exec (GL_PROTO_MARKER_EXEC), "PID.N.xml" or
 * "NAME.PID.N", N counting from 1.
 * Returns: TRUE if @name is one, with *@pid (nullable) its process and
 * *@image (nullable) its N, 0 for the process's last image. */
gboolean gl_run_file_pid(const char *name, gint64 *pid, guint *image);

/* Returns: (transfer full): the run directory of each of @inputs
 * (NULL-terminated): an input itself when it is a directory, else the one
 * it is in; "-" (standard input) has none. Each once, in the order of the
 * inputs; free with g_ptr_array_unref(). */
GPtrArray *gl_run_dirs(const char *const *inputs);

#endif
