/* What gemleak asks of the system beyond GLib: files read whole within a
 * bound, what a path or a stream is (device and inode), signal names,
 * short commands run with a time and size limit, and the order of names
 * (GLib 2.74 sorts a GPtrArray of strings with no function of its own). */
#ifndef GEMLEAK_SYS_H
#define GEMLEAK_SYS_H

#include <stdio.h>
#include <sys/types.h>
#include <glib.h>

/* Reads @path whole, refusing more than @max_bytes (a /dev/zero, a huge
 * file given by mistake). The contents end with a NUL not counted in
 * *length, and may hold NULs of their own.
 * Returns: FALSE with GL_ERROR_IO (cannot open or read, a directory) or
 * GL_ERROR_LIMIT (too large) set; messages start with @path. */
/* As gl_file_read_bounded(), but only a regular file (GL_ERROR_IO "not a
 * regular file" for a FIFO, a device, a socket): what gemleak or its
 * helper wrote, a run directory's files, which nothing else is. */
gboolean gl_file_read_regular(const char *path, gsize max_bytes, char **contents, gsize *length,
                              GError **error);

gboolean gl_file_read_bounded(const char *path, gsize max_bytes, char **contents, gsize *length,
                              GError **error);

/* What a file is, whatever the path it was reached by. */
typedef struct {
    dev_t dev;
    ino_t ino;
} GlFileId;

/* Returns: TRUE with *id set if @path (symlinks followed) exists. */
gboolean gl_file_id_of_path(const char *path, GlFileId *id);

/* Returns: TRUE with *id set if @fd is open. */
gboolean gl_file_id_of_fd(int fd, GlFileId *id);

gboolean gl_file_id_equal(const GlFileId *a, const GlFileId *b);

/* Returns: the descriptor @path stands for when it names one of this
 * process's own (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N,
 * /proc/<our pid>/fd/N, or a symlink to one of them), else -1. */
int gl_path_fd(const char *path);

/* Returns: (transfer full): @path with every symbolic link resolved, the
 * last component too, even when what it points to does not exist yet;
 * when a directory on the way does not exist or links loop, @path made
 * absolute as it is (the write or mkdir that follows says what is wrong). */
char *gl_path_resolve(const char *path);

/* Returns: (transfer none): "SIGKILL" for 9 and so on; "signal N" (in a
 * static buffer, not thread-safe) for signals without a name here. */
const char *gl_signal_name(int signo);

/* Runs @argv (NULL-terminated, found on PATH) with standard input and
 * standard error on /dev/null, in a process group of its own, and reads
 * its standard output: at most @max_bytes, for at most @timeout_ms. What
 * outlives that is killed, the whole group.
 * Returns: TRUE with *output (transfer full) and *wait_status set when it
 * ended in time within the bound; FALSE with GL_ERROR_ENVIRONMENT when it
 * cannot be started, GL_ERROR_LIMIT when it printed too much or took too
 * long (the message says which). */
gboolean gl_probe_command(const char *const *argv, char **const envp, gsize max_bytes,
                          guint timeout_ms, char **output, int *wait_status, GError **error);

/* As gl_probe_command(), with what @argv writes on standard error read as
 * its output, where it comes in turn with what it prints. */
gboolean gl_probe_command_both_streams(const char *const *argv, char **const envp,
                                       gsize max_bytes, guint timeout_ms, char **output,
                                       int *wait_status, GError **error);

/* Replaces the file @path (no symbolic link in it) with @size bytes of
 * @data: through a file beside it and a rename, so that a failed write,
 * or a reader at the same time, sees the old file whole. The file keeps
 * its mode and owner; a new one gets 0666 less the umask.
 * Returns: FALSE with GL_ERROR_IO set, the old file left as it was. */
gboolean gl_file_replace(const char *path, const char *data, gsize size, GError **error);

/* As gl_file_replace(), without waiting for the disk: a crash may leave
 * the old file, or none, never a part of the new one; a reader at the
 * same time sees one whole file (what is kept only to be made again, which
 * a sync would cost some 0.5 ms a file). A new file is the user's alone
 * (0600). */
gboolean gl_file_replace_unsynced(const char *path, const char *data, gsize size,
                                  GError **error);

/* Makes @path a second name of the file @source names (a hard link, the
 * same filesystem): directly where there is no @path yet (a link appears
 * whole), else through a name beside it and a rename, as
 * gl_file_replace_unsynced() does: no byte is read or written. Only for a
 * file nobody writes in place (every writer of it renames a new one over
 * it), which both names then share.
 * Returns: FALSE with GL_ERROR_IO set (another filesystem: EXDEV), @path
 * left as it was. */
gboolean gl_file_link_replace(const char *source, const char *path, GError **error);

/* For g_ptr_array_sort() of strings (char*): strcmp's order. */
gint gl_compare_strings(gconstpointer a, gconstpointer b);

/* Removes @path (nullable: nothing to remove) and everything under it;
 * a symbolic link is removed, not followed. */
void gl_remove_tree(const char *path);

/* The most threads that read at once, and (gemleak run) the most commands
 * run at once under an engine: more would be hundreds of Valgrinds on one
 * machine, each with hundreds of megabytes. */
#define GL_MAX_JOBS 64

/* A library gemleak loads where it needs it (libxml2, json-glib) that it
 * cannot load (@missing NULL: dlerror() says why), or that has no function
 * @missing: says so on standard error, with what needs it (@needed_by) and
 * the package that has it, and exits with status 3: nothing was read. */
G_GNUC_NORETURN void gl_library_missing(const char *name, const char *soname, const char *missing,
                                        const char *needed_by, const char *package);

#endif
