/* A kept run directory's XML compressed, a file a thread, each through a
 * temporary file and a rename; and sizes as gemleak says them. */
#include "gemleak/run/rundir.h"
#include "rundir_int.h"
#include "gemleak/run/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <zlib.h>

#define COPY_BUFFER_BYTES ((gsize) 256 * 1024)

typedef struct {
    const char *dir;
    GMutex lock;
    GlCompressed *result;
} Compression;

/* Compresses @dir/@name to @name.gz, or says why not in *why. */
static gboolean compress_file(const char *dir, const char *name, guint64 *plain, guint64 *packed,
                              char **why)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autofree char *target = g_strconcat(path, ".gz", NULL);
    /* not *.xml nor *.xml.gz: never read as XML, even half written */
    g_autofree char *temp = g_strdup_printf("%s/.%s.gz.XXXXXX", dir, name);
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        *why = g_strdup(g_strerror(errno));
        return FALSE;
    }
    int out = g_mkstemp_full(temp, O_WRONLY | O_CLOEXEC, 0600);
    if (out < 0) {
        *why = g_strdup(g_strerror(errno));
        close(in);
        return FALSE;
    }
    gzFile gz = gzdopen(out, "wb");
    if (gz == NULL) {
        *why = g_strdup("zlib cannot start");
        close(out);
        close(in);
        g_unlink(temp);
        return FALSE;
    }
    g_autofree char *buffer = g_malloc(COPY_BUFFER_BYTES);
    guint64 total = 0;
    for (;;) {
        ssize_t n = read(in, buffer, COPY_BUFFER_BYTES);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *why = g_strdup_printf("cannot read it: %s", g_strerror(errno));
            break;
        }
        if (n == 0)
            break;
        if (gzwrite(gz, buffer, (unsigned) n) != (int) n) {
            int zerr = 0;
            const char *message = gzerror(gz, &zerr);
            *why = g_strdup_printf("cannot write %s: %s", temp,
                                   zerr == Z_ERRNO ? g_strerror(errno) : message);
            break;
        }
        total += (guint64) n;
    }
    close(in);
    /* gzclose flushes and closes the descriptor: where a full disk shows */
    int closed = gzclose(gz);
    if (*why == NULL && closed != Z_OK)
        *why = g_strdup_printf("cannot write %s: %s", temp,
                               closed == Z_ERRNO ? g_strerror(errno) : "zlib error");
    struct stat st;
    if (*why == NULL && stat(temp, &st) != 0)
        *why = g_strdup(g_strerror(errno));
    if (*why == NULL && rename(temp, target) != 0)
        *why = g_strdup_printf("cannot rename %s: %s", temp, g_strerror(errno));
    if (*why != NULL) {
        g_unlink(temp);
        return FALSE;
    }
    g_unlink(path);
    *plain = total;
    *packed = (guint64) st.st_size;
    return TRUE;
}

static void compress_one(gpointer data, gpointer user_data)
{
    char *name = data;
    Compression *work = user_data;
    guint64 plain = 0, packed = 0;
    g_autofree char *why = NULL;
    gboolean ok = compress_file(work->dir, name, &plain, &packed, &why);
    g_mutex_lock(&work->lock);
    if (ok) {
        work->result->files++;
        work->result->plain_bytes += plain;
        work->result->kept_bytes += packed;
    } else {
        g_autofree char *path = g_build_filename(work->dir, name, NULL);
        struct stat st;
        if (stat(path, &st) == 0)
            work->result->kept_bytes += (guint64) st.st_size;
        g_ptr_array_add(work->result->failures,
                        g_strdup_printf("%s is kept uncompressed: %s", path, why));
    }
    g_mutex_unlock(&work->lock);
    g_free(name);
}

void gl_rundir_compress(const char *dir, guint jobs, GlCompressed *result)
{
    memset(result, 0, sizeof *result);
    result->failures = g_ptr_array_new_with_free_func(g_free);
    Compression work = { .dir = dir, .result = result };
    g_mutex_init(&work.lock);
    GThreadPool *pool = g_thread_pool_new(compress_one, &work, (gint) MAX(jobs, 1), TRUE, NULL);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        struct stat st;
        if (gl_rundir_is_xml_file(name, FALSE)) {
            if (pool != NULL)
                g_thread_pool_push(pool, g_strdup(name), NULL);
        } else if ((gl_rundir_is_xml_file(name, TRUE) || gl_engine_is_log(name, NULL)) &&
                   stat(path, &st) == 0) {
            g_mutex_lock(&work.lock);
            result->kept_bytes += (guint64) st.st_size;
            g_mutex_unlock(&work.lock);
        }
    }
    if (pool != NULL)
        g_thread_pool_free(pool, FALSE, TRUE);
    g_mutex_clear(&work.lock);
}

void gl_compressed_clear(GlCompressed *result)
{
    if (result->failures != NULL)
        g_ptr_array_unref(result->failures);
    memset(result, 0, sizeof *result);
}

char *gl_format_bytes(guint64 bytes)
{
    if (bytes < 1000)
        return g_strdup_printf("%" G_GUINT64_FORMAT " bytes", bytes);
    static const char *const units[] = { "kB", "MB", "GB", "TB" };
    double value = (double) bytes / 1000;
    guint unit = 0;
    while (value >= 1000 && unit + 1 < G_N_ELEMENTS(units)) {
        value /= 1000;
        unit++;
    }
    return g_strdup_printf("%.1f %s", value, units[unit]);
}
