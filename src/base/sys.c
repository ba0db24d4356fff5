/* Files read whole within a bound, file identities, signal names, probes. */
#include "gemleak/base/sys.h"
#include "gemleak/base/errors.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* Symbolic links followed before a path is given up on, as the kernel does. */
#define MAX_LINKS 40

static void too_large(const char *path, gsize max_bytes, GError **error)
{
    /* Not g_format_size: its no-break space is not what a user types in grep. */
    if (max_bytes >= (1u << 20) && max_bytes % (1u << 20) == 0)
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "%s: larger than %" G_GSIZE_FORMAT " MiB",
                    path, max_bytes >> 20);
    else
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "%s: larger than %" G_GSIZE_FORMAT " bytes",
                    path, max_bytes);
}

/* Reads @path as gl_file_read_bounded() says; only a regular file when
 * @regular_only (opened without blocking: a FIFO would wait for a writer). */
static gboolean read_bounded(const char *path, gsize max_bytes, gboolean regular_only,
                             char **contents, gsize *length, GError **error)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (regular_only ? O_NONBLOCK : 0));
    if (fd < 0) {
        int saved = errno;
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot open: %s", path, g_strerror(saved));
        return FALSE;
    }
    /* one fstat for the three questions (a run read some 20 small files,
     * three fstats and two fcntls each) */
    struct stat st;
    gboolean stated = fstat(fd, &st) == 0;
    if (stated && S_ISDIR(st.st_mode)) {
        close(fd);
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: is a directory", path);
        return FALSE;
    }
    /* O_NONBLOCK off again, the only flag F_SETFL changes that open() set */
    if (regular_only &&
        (!stated || !S_ISREG(st.st_mode) || fcntl(fd, F_SETFL, O_RDONLY) != 0)) {
        close(fd);
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: not a regular file", path);
        return FALSE;
    }
    /* A regular file says its size; a device or a pipe is read up to the bound. */
    if (stated && S_ISREG(st.st_mode) && (guint64) st.st_size > max_bytes) {
        close(fd);
        too_large(path, max_bytes, error);
        return FALSE;
    }
    GByteArray *data = g_byte_array_new();
    guint8 buffer[65536];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            close(fd);
            g_byte_array_unref(data);
            g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot read: %s", path,
                        g_strerror(saved));
            return FALSE;
        }
        if (n == 0)
            break;
        if ((gsize) n > max_bytes - data->len) {
            close(fd);
            g_byte_array_unref(data);
            too_large(path, max_bytes, error);
            return FALSE;
        }
        g_byte_array_append(data, buffer, (guint) n);
    }
    close(fd);
    *length = data->len;
    g_byte_array_append(data, (const guint8 *) "", 1);
    *contents = (char *) g_byte_array_free(data, FALSE);
    return TRUE;
}

gboolean gl_file_read_bounded(const char *path, gsize max_bytes, char **contents, gsize *length,
                              GError **error)
{
    return read_bounded(path, max_bytes, FALSE, contents, length, error);
}

gboolean gl_file_read_regular(const char *path, gsize max_bytes, char **contents, gsize *length,
                              GError **error)
{
    return read_bounded(path, max_bytes, TRUE, contents, length, error);
}

gboolean gl_file_id_of_path(const char *path, GlFileId *id)
{
    struct stat st;
    if (path == NULL || stat(path, &st) != 0)
        return FALSE;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return TRUE;
}

gboolean gl_file_id_of_fd(int fd, GlFileId *id)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return FALSE;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return TRUE;
}

gboolean gl_file_id_equal(const GlFileId *a, const GlFileId *b)
{
    return a->dev == b->dev && a->ino == b->ino;
}

/* Returns: the descriptor an absolute, canonical @path names by its
 * spelling alone, or -1. */
static int fd_by_name(const char *path)
{
    static const char *const std_names[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
    for (int i = 0; i < 3; i++)
        if (strcmp(path, std_names[i]) == 0)
            return i;
    g_autofree char *own = g_strdup_printf("/proc/%ld/", (long) getpid());
    const char *rest = NULL;
    if (g_str_has_prefix(path, "/dev/fd/"))
        rest = path + strlen("/dev/fd/");
    else if (g_str_has_prefix(path, "/proc/self/fd/"))
        rest = path + strlen("/proc/self/fd/");
    else if (g_str_has_prefix(path, "/proc/thread-self/fd/"))
        rest = path + strlen("/proc/thread-self/fd/");
    else if (g_str_has_prefix(path, own)) {
        const char *tail = path + strlen(own);
        if (g_str_has_prefix(tail, "task/")) {
            tail += strlen("task/");
            while (g_ascii_isdigit(*tail))
                tail++;
            if (*tail++ != '/')
                return -1;
        }
        if (g_str_has_prefix(tail, "fd/"))
            rest = tail + strlen("fd/");
    }
    guint64 n = 0;
    if (rest == NULL || !g_ascii_string_to_unsigned(rest, 10, 0, G_MAXINT, &n, NULL))
        return -1;
    return (int) n;
}

/* One step of resolving: @path with its directory resolved; *link (transfer
 * full) what its last component points to, if it is a symbolic link.
 * Returns: (transfer full) (nullable): NULL when the directory does not exist. */
static char *resolve_step(const char *path, char **link)
{
    *link = NULL;
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *base = g_path_get_basename(path);
    char *real_dir = realpath(dir, NULL);
    if (real_dir == NULL)
        return NULL;
    char *full = strcmp(base, "/") == 0 ? g_strdup(real_dir) : g_build_filename(real_dir, base, NULL);
    free(real_dir);
    struct stat st;
    if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode))
        *link = g_file_read_link(full, NULL);
    return full;
}

int gl_path_fd(const char *path)
{
    g_autofree char *current = g_canonicalize_filename(path, NULL);
    for (int hops = 0; hops <= MAX_LINKS; hops++) {
        int fd = fd_by_name(current);
        if (fd >= 0)
            return fd;
        g_autofree char *link = NULL;
        g_autofree char *full = resolve_step(current, &link);
        if (full == NULL)
            return -1;
        if ((fd = fd_by_name(full)) >= 0)
            return fd;
        if (link == NULL)
            return -1;
        g_autofree char *dir = g_path_get_dirname(full);
        g_free(current);
        current = g_canonicalize_filename(link, dir);
    }
    return -1;
}

char *gl_path_resolve(const char *path)
{
    g_autofree char *current = g_canonicalize_filename(path, NULL);
    for (int hops = 0; hops <= MAX_LINKS; hops++) {
        g_autofree char *link = NULL;
        char *full = resolve_step(current, &link);
        if (full == NULL)
            break;
        if (link == NULL)
            return full;
        g_autofree char *dir = g_path_get_dirname(full);
        g_free(full);
        g_free(current);
        current = g_canonicalize_filename(link, dir);
    }
    return g_canonicalize_filename(path, NULL);
}

const char *gl_signal_name(int signo)
{
    static const struct {
        int signo;
        const char *name;
    } names[] = {
        { SIGHUP, "SIGHUP" },   { SIGINT, "SIGINT" },   { SIGQUIT, "SIGQUIT" },
        { SIGILL, "SIGILL" },   { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
        { SIGBUS, "SIGBUS" },   { SIGFPE, "SIGFPE" },   { SIGKILL, "SIGKILL" },
        { SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
        { SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" },
        { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" }, { SIGSYS, "SIGSYS" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        if (names[i].signo == signo)
            return names[i].name;
    static char other[32];
    g_snprintf(other, sizeof other, "signal %d", signo);
    return other;
}

/* ---- probes ----------------------------------------------------------------- */

/* In the child before exec: a group of its own, so that what it starts
 * can be killed with it. */
static void own_group(gpointer unused)
{
    (void) unused;
    setpgid(0, 0);
}

/* As own_group(), and its standard error goes where its output goes. */
static void own_group_both_streams(gpointer unused)
{
    own_group(unused);
    dup2(STDOUT_FILENO, STDERR_FILENO);
}

static void kill_group(GPid pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* gl_probe_command(), and with @both_streams what the command says on
 * standard error read as its output. */
static gboolean probe(const char *const *argv, char **const envp, gboolean both_streams,
                      gsize max_bytes, guint timeout_ms, char **output, int *wait_status,
                      GError **error)
{
    GPid pid = 0;
    int out_fd = -1;
    g_autoptr(GError) local = NULL;
    if (!g_spawn_async_with_pipes(NULL, (char **) argv, envp,
                                  G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDERR_TO_DEV_NULL,
                                  both_streams ? own_group_both_streams : own_group, NULL, &pid,
                                  NULL, &out_fd, NULL, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "%s", local->message);
        return FALSE;
    }
    setpgid(pid, pid);  /* as the child does: whichever runs first */
    gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;
    GByteArray *data = g_byte_array_new();
    gboolean too_long = FALSE, too_much = FALSE, reaped = FALSE, reading = TRUE;
    int status = 0;
    /* Until the output ends and the process has exited; a process that
     * exits while something it started holds the output open is done too. */
    while (!too_much && (reading || !reaped)) {
        if (!reaped) {
            pid_t done = waitpid(pid, &status, WNOHANG);
            if (done == pid || (done < 0 && errno == ECHILD))
                reaped = TRUE;
        }
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;
        if (left <= 0) {
            too_long = TRUE;
            break;
        }
        if (!reading) {
            /* the output ended: the exit follows at once (a run asks
             * several such questions before it starts the command) */
            if (reaped)
                break;
            g_usleep(1000);
            continue;
        }
        struct pollfd pfd = { .fd = out_fd, .events = POLLIN };
        int ready = poll(&pfd, 1, reaped ? 0 : (int) MIN(left, 50));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            if (reaped)
                reading = FALSE;  /* exited, and nothing more to read now */
            continue;
        }
        guint8 buffer[4096];
        ssize_t n = ready < 0 ? -1 : read(out_fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            reading = FALSE;
            continue;
        }
        if ((gsize) n > max_bytes - data->len)
            too_much = TRUE;
        else
            g_byte_array_append(data, buffer, (guint) n);
    }
    close(out_fd);
    /* Whatever it started in its group goes too. */
    if (!reaped)
        kill_group(pid);
    else
        kill(-pid, SIGKILL);
    g_spawn_close_pid(pid);
    if (too_long || too_much) {
        g_byte_array_unref(data);
        if (too_much)
            g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "printed more than %" G_GSIZE_FORMAT
                        " bytes", max_bytes);
        else
            g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "did not finish within %u seconds",
                        (timeout_ms + 999) / 1000);
        return FALSE;
    }
    g_byte_array_append(data, (const guint8 *) "", 1);
    *output = (char *) g_byte_array_free(data, FALSE);
    *wait_status = status;
    return TRUE;
}

gboolean gl_probe_command(const char *const *argv, char **const envp, gsize max_bytes,
                          guint timeout_ms, char **output, int *wait_status, GError **error)
{
    return probe(argv, envp, FALSE, max_bytes, timeout_ms, output, wait_status, error);
}

gboolean gl_probe_command_both_streams(const char *const *argv, char **const envp,
                                       gsize max_bytes, guint timeout_ms, char **output,
                                       int *wait_status, GError **error)
{
    return probe(argv, envp, TRUE, max_bytes, timeout_ms, output, wait_status, error);
}

/* Returns: (transfer full): the start of a name beside @path for a file
 * that becomes it by a rename: its directory, a dot, and its name (its
 * first 200 bytes, valid UTF-8). */
static char *beside(const char *path)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *short_base = g_utf8_make_valid(base, MIN((gssize) strlen(base), 200));
    return g_strdup_printf("%s/.%s", dir, short_base);
}

/* Replaces the file @path (no symbolic link in it) with @size bytes of
 * @data: through a file beside it and a rename, so that a failed write
 * leaves the old file whole; with @durable, on the disk before the rename.
 * The file keeps its mode and owner; a new one gets, with @durable, 0666
 * less the umask, as the shell's > gives (a report), else 0600 (what
 * gemleak keeps for itself: the umask is not read, which sets it). */
static gboolean replace(const char *path, const char *data, gsize size, gboolean durable,
                        GError **error)
{
    struct stat st;
    gboolean existed = stat(path, &st) == 0;
    mode_t mode;
    if (existed) {
        mode = st.st_mode & 07777;
    } else if (!durable) {
        mode = 0600;
    } else {
        mode_t mask = umask(0);  /* the only way to read it; the threads are done */
        umask(mask);
        mode = 0666 & ~mask;
    }
    g_autofree char *hidden = beside(path);
    g_autofree char *temp = g_strconcat(hidden, ".XXXXXX", NULL);
    int fd = g_mkstemp_full(temp, O_WRONLY | O_CLOEXEC, 0600);
    int saved = 0;
    if (fd < 0) {
        saved = errno;
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot write: %s", path, g_strerror(saved));
        return FALSE;
    }
    for (gsize done = 0; done < size && saved == 0;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n < 0 && errno != EINTR)
            saved = errno;
        else if (n > 0)
            done += (gsize) n;
    }
    if (saved == 0 && existed && fchown(fd, st.st_uid, st.st_gid) != 0 && errno != EPERM)
        saved = errno;
    if (saved == 0 && fchmod(fd, mode) != 0)
        saved = errno;
    if (saved == 0 && durable && fsync(fd) != 0)
        saved = errno;
    if (close(fd) != 0 && saved == 0)
        saved = errno;
    if (saved == 0 && rename(temp, path) != 0)
        saved = errno;
    if (saved != 0) {
        g_unlink(temp);
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot write: %s", path, g_strerror(saved));
        return FALSE;
    }
    return TRUE;
}

gboolean gl_file_replace(const char *path, const char *data, gsize size, GError **error)
{
    return replace(path, data, size, TRUE, error);
}

gboolean gl_file_replace_unsynced(const char *path, const char *data, gsize size,
                                  GError **error)
{
    return replace(path, data, size, FALSE, error);
}

gboolean gl_file_link_replace(const char *source, const char *path, GError **error)
{
    /* a run's fresh helper directory: one call, not two (link, rename) */
    if (link(source, path) == 0)
        return TRUE;
    int saved = errno;
    if (saved != EEXIST) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot link %s there: %s", path, source,
                    g_strerror(saved));
        return FALSE;
    }
    g_autofree char *hidden = beside(path);
    for (int tries = 0; tries < 8 && saved == EEXIST; tries++) {
        g_autofree char *temp = g_strdup_printf("%s.%08x", hidden, g_random_int());
        if (link(source, temp) != 0) {
            saved = errno;
            continue;
        }
        if (rename(temp, path) == 0)
            return TRUE;
        saved = errno;
        g_unlink(temp);
    }
    g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot link %s there: %s", path, source,
                g_strerror(saved));
    return FALSE;
}

gint gl_compare_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

void gl_remove_tree(const char *path)
{
    if (path == NULL)
        return;
    /* unlink(2) first: what it removes, nearly everything of a run's
     * directories, needs no stat before (a run's two directories took a
     * stat a file, some 35); a directory refuses it (EISDIR under Linux,
     * EPERM by POSIX), a symbolic link to one does not */
    if (g_unlink(path) == 0 || errno == ENOENT)
        return;
    GStatBuf st;
    if (g_lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *child = g_build_filename(path, name, NULL);
        gl_remove_tree(child);
    }
    g_rmdir(path);
}

void gl_library_missing(const char *name, const char *soname, const char *missing,
                        const char *needed_by, const char *package)
{
    if (missing != NULL)
        fprintf(stderr, "gemleak: %s has no %s", soname, missing);
    else
        fprintf(stderr, "gemleak: cannot load %s: %s", name, dlerror());
    fprintf(stderr, " (%s need it; Debian's package: %s)\n", needed_by, package);
    exit(3);
}
