/* A run's directory: untraced forks, compression, locks, gemleak clean. */
#define _GNU_SOURCE 1  /* renameat2 */
#include "gemleak/run/rundir.h"
#include "gemleak/run/engine.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/run_files.h"
#include "gemleak/read/process_facts.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <zlib.h>

/* A preamble is a few KiB; its argv may be long (a ruby given a thousand
 * test files), but not this long. */
#define PREAMBLE_MAX_BYTES ((gsize) 4 * 1024 * 1024)
#define COPY_BUFFER_BYTES ((gsize) 256 * 1024)

int gl_rundir_lock(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Renames the directory @from to @to unless @to exists.
 * Returns: 0, or -1 with errno set (EEXIST: @to exists). */
static int rename_new(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)  /* a file system, a kernel without it */
        return -1;
#endif
    struct stat st;
    if (lstat(to, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

char *gl_rundir_make_locked(const char *tmpdir, const char *prefix, int *lock, GError **error)
{
    *lock = -1;
    /* Made and locked under a name gemleak clean does not look at, then
     * renamed: the lock goes with the directory, so that clean never sees
     * it unlocked under gemleak's name. */
    for (guint attempt = 0; attempt < 100; attempt++) {
        g_autofree char *hidden = g_strdup_printf("%s/.%sXXXXXX", tmpdir, prefix);
        if (g_mkdtemp_full(hidden, 0700) == NULL) {
            int saved = errno;
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot make a directory in %s: %s",
                        tmpdir, g_strerror(saved));
            return NULL;
        }
        int fd = gl_rundir_lock(hidden);
        if (fd < 0) {
            int saved = errno;
            g_rmdir(hidden);
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot lock %s: %s", hidden,
                        g_strerror(saved));
            return NULL;
        }
        g_autofree char *base = g_path_get_basename(hidden);
        char *dir = g_build_filename(tmpdir, base + 1, NULL);
        if (rename_new(hidden, dir) == 0) {
            *lock = fd;
            return dir;
        }
        int saved = errno;
        close(fd);
        g_rmdir(hidden);
        if (saved != EEXIST) {
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot make %s: %s", dir,
                        g_strerror(saved));
            g_free(dir);
            return NULL;
        }
        g_free(dir);
    }
    g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot make a directory of a new name "
                "in %s", tmpdir);
    return NULL;
}

/* Returns: TRUE if @name is NNN@suffix. */
/* Returns: TRUE if @name is the XML of a process image (PID.xml, PID.N.xml),
 * compressed with @compressed. */
static gboolean is_xml_file(const char *name, gboolean compressed)
{
    return g_str_has_suffix(name, compressed ? ".xml.gz" : ".xml") &&
           gl_run_file_pid(name, NULL, NULL);
}

static gboolean is_pid_file(const char *name, const char *prefix, const char *suffix)
{
    if (!g_str_has_prefix(name, prefix) || !g_str_has_suffix(name, suffix))
        return FALSE;
    gsize digits = strlen(name) - strlen(prefix) - strlen(suffix);
    if (digits == 0 || strlen(name) < strlen(prefix) + strlen(suffix))
        return FALSE;
    for (gsize i = 0; i < digits; i++)
        if (!g_ascii_isdigit(name[strlen(prefix) + i]))
            return FALSE;
    return TRUE;
}

/* Returns: TRUE if the XML file @path ends after its preamble: a process
 * forked under Valgrind writes its preamble at once, and then, having
 * exec'd a program Valgrind skips, nothing more. */
static gboolean ends_after_preamble(const char *path)
{
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_bounded(path, PREAMBLE_MAX_BYTES, &text, &length, NULL))
        return FALSE;
    if (memchr(text, '\0', length) != NULL || strstr(text, "<status>") != NULL ||
        strstr(text, "<error>") != NULL || strstr(text, "<valgrindoutput>") == NULL)
        return FALSE;
    const char *args = g_strrstr(text, "</args>");
    if (args == NULL)
        return FALSE;
    for (const char *c = args + strlen("</args>"); *c != '\0'; c++)
        if (!g_ascii_isspace(*c))
            return FALSE;
    return TRUE;
}

guint gl_rundir_drop_untraced(const char *dir, GHashTable *killed)
{
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    guint dropped = 0;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!is_pid_file(name, "", ".xml"))
            continue;
        gint pid = (gint) g_ascii_strtoll(name, NULL, 10);
        if (killed != NULL && g_hash_table_contains(killed, GINT_TO_POINTER(pid)))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (ends_after_preamble(path) && g_unlink(path) == 0) {
            /* What it loaded went with the exec: nothing of it was left to
             * check, and its list must not read as a process that ran
             * outside Valgrind. */
            g_autofree char *list = g_strdup_printf("%s/" GL_PROTO_LOADED_PREFIX "%d" GL_PROTO_FILE_SUFFIX,
                                                    dir, pid);
            g_unlink(list);
            dropped++;
        }
    }
    return dropped;
}

/* Returns: TRUE if @dir holds the XML of process @pid, plain or compressed. */
static gboolean has_xml(const char *dir, gint64 pid)
{
    g_autofree char *plain = g_strdup_printf("%s/%" G_GINT64_FORMAT ".xml", dir, pid);
    g_autofree char *packed = g_strdup_printf("%s.gz", plain);
    return g_file_test(plain, G_FILE_TEST_EXISTS) || g_file_test(packed, G_FILE_TEST_EXISTS);
}

gboolean gl_rundir_mark(const char *dir, GError **error)
{
    g_autofree char *path = g_build_filename(dir, GL_PROTO_RUN_MARKER, NULL);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, "gemleak run: the engine's reports, a file a process, and what "
                                   "gemleak's helper said of each process\n", -1, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write in the run directory "
                    "%s: %s", dir, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean gl_rundir_mark_interrupted(const char *dir, int signo, GError **error)
{
    g_autofree char *path = g_build_filename(dir, GL_PROTO_INTERRUPTED_FILE, NULL);
    g_autofree char *name = g_strdup_printf("%s\n", gl_signal_name(signo));
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, name, -1, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write in the run directory "
                    "%s: %s", dir, local->message);
        return FALSE;
    }
    return TRUE;
}

/* Returns: (transfer full) (nullable): the signal that interrupted the run
 * of @dir, as interrupted.txt names it; NULL when none did. */
static char *interrupted_in(const char *dir)
{
    g_autofree char *path = g_build_filename(dir, GL_PROTO_INTERRUPTED_FILE, NULL);
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_bounded(path, 64, &text, &length, NULL))
        return NULL;
    g_autofree char *line = g_strndup(text, strcspn(text, "\r\n"));
    /* Even an empty or unreadable one says that the run was cut short. */
    return g_utf8_make_valid(*line != '\0' ? line : "a signal", -1);
}

/* Returns: TRUE if @dir holds a report of process @pid that a sanitizer
 * wrote (log_path=DIR/lsan, DIR/asan), or the helper's word that the
 * engine's runtime was in it (engine-PID.txt): an engine that writes
 * nothing for a process without leaks checked it all the same. */
static gboolean has_engine_record(const char *dir, gint64 pid)
{
    g_autofree char *said = g_strdup_printf("%s/" GL_PROTO_ENGINE_PREFIX "%" G_GINT64_FORMAT
                                            GL_PROTO_FILE_SUFFIX, dir, pid);
    return gl_engine_has_log(dir, pid) || g_file_test(said, G_FILE_TEST_EXISTS);
}

gboolean gl_rundir_write_engine(const char *dir, const GlEngine *engine, const char *version,
                                gboolean proof, GError **error)
{
    g_autoptr(GString) text = g_string_new(engine->title);
    g_string_append_printf(text, "\n" GL_PROTO_ENGINE_NAME " %s\n", engine->name);
    /* one line each: a runtime's path has no newline gemleak would keep */
    if (version != NULL && strchr(version, '\n') == NULL)
        g_string_append_printf(text, GL_PROTO_ENGINE_VERSION " %s\n", version);
    g_string_append_printf(text, GL_PROTO_ENGINE_REPORTS " %s\n" GL_PROTO_ENGINE_OUTSIDE " %s\n",
                           engine->reports, engine->outside);
    if (engine->log != NULL)
        g_string_append_printf(text, GL_PROTO_ENGINE_LOG " %s\n", engine->log);
    if (engine->instrumented_prefix != NULL)
        g_string_append_printf(text, GL_PROTO_ENGINE_INSTRUMENTED " %s\n",
                               engine->instrumented_prefix);
    if (engine->silent_when_clean && !proof)
        g_string_append(text, GL_PROTO_ENGINE_SILENT " yes\n");
    if (proof)
        g_string_append(text, GL_PROTO_ENGINE_PROOF " yes\n");
    if (engine->leaks_min_ruby != NULL)
        g_string_append_printf(text, GL_PROTO_ENGINE_LEAKS_MIN_RUBY " %s\n"
                               GL_PROTO_ENGINE_LEAKS_MIN_RUBY_WHY " %s\n", engine->leaks_min_ruby,
                               engine->leaks_min_ruby_why);
    if (engine->min_ruby != NULL)
        g_string_append_printf(text, GL_PROTO_ENGINE_MIN_RUBY " %s\n"
                               GL_PROTO_ENGINE_MIN_RUBY_WHY " %s\n", engine->min_ruby,
                               engine->min_ruby_why);
    g_autofree char *path = g_build_filename(dir, GL_PROTO_ENGINE_FILE, NULL);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, text->str, (gssize) text->len, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write in the run directory "
                    "%s: %s", dir, local->message);
        return FALSE;
    }
    return TRUE;
}

/* Returns: (transfer full) (nullable): why process @pid's verdicts are not
 * true: the Ruby it ran (its helper said) is older than the engine of
 * @run needs; NULL when it is not, or nobody said. */
static char *older_than_engine(const char *dir, gint64 pid, const GlRunFacts *run)
{
    GlProcessFacts facts;
    if (run->min_ruby == NULL || !gl_process_facts_read(dir, pid, &facts) ||
        facts.ruby_version[0] == '\0' ||
        gl_ruby_version_at_least(facts.ruby_version, run->min_ruby))
        return NULL;
    return g_strdup_printf("process %" G_GINT64_FORMAT ": it ran Ruby %s, and --engine %s needs "
                           "Ruby %s or newer: %s (--engine valgrind, the default, checks it)", pid,
                           facts.ruby_version, run->name, run->min_ruby,
                           run->min_ruby_why != NULL ? run->min_ruby_why : "");
}

/* Adds to @coverage what the directory @dir says: its lists, which of
 * their processes have XML (or a record of the engine's), and its
 * outside-PID.txt sentences. */
static void coverage_of_dir(const char *dir, GlRunCoverage *coverage)
{
    g_auto(GlRunFacts) run = { 0 };
    gl_run_facts_read(dir, &run);
    /* an engine that writes PID.xml traces every process it runs; one
     * that writes NAME.PID is a runtime in the process, which the helper's
     * engine-PID.txt accounts for when it wrote nothing */
    gboolean tracer = run.log == NULL && !run.silent_when_clean;
    if (!tracer) {
        g_free(coverage->engine);
        coverage->engine = g_strdup(run.title);
        g_free(coverage->reports);
        coverage->reports = g_strdup(run.reports);
    }
    char *interrupted = interrupted_in(dir);
    if (interrupted != NULL) {
        g_free(coverage->interrupted);
        coverage->interrupted = interrupted;
    }
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (strcmp(name, GL_PROTO_RUN_MARKER) == 0) {
            coverage->runs++;
            continue;
        }
        if (is_pid_file(name, "", ".xml") || is_pid_file(name, "", ".xml.gz")) {
            g_autofree char *list = g_strdup_printf("%s/" GL_PROTO_LOADED_PREFIX "%" G_GINT64_FORMAT
                                                    GL_PROTO_FILE_SUFFIX, dir,
                                                    g_ascii_strtoll(name, NULL, 10));
            coverage->unlisted += !g_file_test(list, G_FILE_TEST_EXISTS);
            continue;
        }
        if (!is_pid_file(name, GL_PROTO_LOADED_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        gint64 pid = g_ascii_strtoll(name + strlen(GL_PROTO_LOADED_PREFIX), NULL, 10);
        coverage->lists++;
        g_autofree char *valid = gl_process_loaded(dir, pid);
        if (valid == NULL)
            continue;
        if (has_xml(dir, pid) || (!tracer && has_engine_record(dir, pid))) {
            g_autofree char *too_old = older_than_engine(dir, pid, &run);
            if (too_old != NULL)
                g_ptr_array_add(coverage->unchecked, g_steal_pointer(&too_old));
            else
                coverage->checked++;
            continue;
        }
        g_ptr_array_add(coverage->unchecked,
                        g_strdup_printf("process %" G_GINT64_FORMAT ": it loaded %s outside %s "
                                        "(%s)", pid, valid, run.title, run.outside));
    }
    g_autoptr(GPtrArray) outside = gl_rundir_outside(dir);
    for (guint i = 0; i < outside->len; i++)
        g_ptr_array_add(coverage->unchecked, g_strdup(g_ptr_array_index(outside, i)));
}

void gl_rundir_coverage(const char *const *inputs, GlRunCoverage *coverage)
{
    memset(coverage, 0, sizeof *coverage);
    coverage->unchecked = g_ptr_array_new_with_free_func(g_free);
    /* what a directory without engine.txt was written by, unless one
     * says another */
    g_auto(GlRunFacts) plain = { 0 };
    gl_run_facts_read(NULL, &plain);
    coverage->engine = g_steal_pointer(&plain.title);
    coverage->reports = g_steal_pointer(&plain.reports);
    g_autoptr(GPtrArray) dirs = gl_run_dirs(inputs);
    for (guint i = 0; i < dirs->len; i++)
        coverage_of_dir(g_ptr_array_index(dirs, i), coverage);
    g_ptr_array_sort(coverage->unchecked, gl_compare_strings);
}

GPtrArray *gl_rundir_outside(const char *dir)
{
    GPtrArray *said = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!is_pid_file(name, GL_PROTO_OUTSIDE_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        gint pid = (gint) g_ascii_strtoll(name + strlen(GL_PROTO_OUTSIDE_PREFIX), NULL, 10);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        /* Even an unreadable one says that something ran unchecked. */
        if (!gl_file_read_bounded(path, PREAMBLE_MAX_BYTES, &text, &length, NULL))
            text = g_strdup("");
        char *end = strchr(text, '\n');   /* one line: the helper writes no more */
        if (end != NULL)
            *end = '\0';
        g_autofree char *line = g_utf8_make_valid(text, -1);  /* a path's raw bytes */
        g_ptr_array_add(said, *line != '\0'
            ? g_strdup_printf("process %d: %s", pid, line)
            : g_strdup_printf("process %d: below a launcher, it ran outside Valgrind", pid));
    }
    g_ptr_array_sort(said, gl_compare_strings);
    return said;
}

char *gl_rundir_ruby_versions(const char *dir)
{
    g_autoptr(GPtrArray) versions = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        GlProcessFacts facts;
        if (!is_pid_file(name, GL_PROTO_RUBY_PREFIX, GL_PROTO_FILE_SUFFIX) ||
            !gl_process_facts_read(dir, g_ascii_strtoll(name + strlen(GL_PROTO_RUBY_PREFIX), NULL,
                                                        10), &facts) ||
            facts.ruby_version[0] == '\0')
            continue;
        gboolean seen = FALSE;
        for (guint i = 0; i < versions->len && !seen; i++)
            seen = strcmp(g_ptr_array_index(versions, i), facts.ruby_version) == 0;
        if (!seen)
            g_ptr_array_add(versions, g_strdup(facts.ruby_version));
    }
    if (versions->len == 0)
        return NULL;
    g_ptr_array_sort(versions, gl_compare_strings);
    g_ptr_array_add(versions, NULL);
    return g_strjoinv(", ", (char **) versions->pdata);
}

GHashTable *gl_rundir_test_durations(const char *dir)
{
    GHashTable *durations = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!is_pid_file(name, GL_PROTO_DURATIONS_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        if (!gl_file_read_bounded(path, PREAMBLE_MAX_BYTES, &text, &length, NULL))
            continue;
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **line = lines; *line != NULL; line++) {
            char *tab = strchr(*line, '\t');
            guint64 ms = 0;
            if (tab == NULL || tab[1] != '/')
                continue;
            *tab = '\0';
            if (!g_ascii_string_to_unsigned(*line, 10, 0, G_MAXUINT32, &ms, NULL))
                continue;
            gdouble *seconds = g_hash_table_lookup(durations, tab + 1);
            if (seconds == NULL) {
                seconds = g_new0(gdouble, 1);
                g_hash_table_insert(durations, g_strdup(tab + 1), seconds);
            }
            *seconds += (gdouble) ms / 1000;
        }
    }
    return durations;
}

/* ---- compression ------------------------------------------------------------ */

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
        if (is_xml_file(name, FALSE)) {
            if (pool != NULL)
                g_thread_pool_push(pool, g_strdup(name), NULL);
        } else if ((is_xml_file(name, TRUE) || gl_engine_is_log(name, NULL)) &&
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

/* ---- gemleak clean ------------------------------------------------------------ */

/* Returns: TRUE if @name is one gemleak writes in a run directory (XML,
 * compressed XML, a half-written compressed file, the helper's lists) or
 * in a helper directory. */
static gboolean written_by_gemleak(const char *name, gboolean helper)
{
    if (helper)
        return strcmp(name, "gemleak_helper.rb") == 0 || strcmp(name, "gemleak_client.so") == 0;
    if (is_xml_file(name, FALSE) || is_xml_file(name, TRUE) ||
        is_pid_file(name, GL_PROTO_LOADED_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        is_pid_file(name, GL_PROTO_DURATIONS_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        is_pid_file(name, GL_PROTO_OUTSIDE_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        is_pid_file(name, GL_PROTO_RUBY_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        strcmp(name, GL_PROTO_RUN_MARKER) == 0)
        return TRUE;
    /* a sanitizer engine's reports (lsan.PID, asan.PID) and the helper's
     * word that its runtime was in a process */
    if (gl_engine_is_log(name, NULL) || strcmp(name, GL_PROTO_ENGINE_FILE) == 0 ||
        strcmp(name, GL_PROTO_INTERRUPTED_FILE) == 0 ||
        is_pid_file(name, GL_PROTO_ENGINE_PREFIX, GL_PROTO_FILE_SUFFIX))
        return TRUE;
    /* .NNN.xml.gz.XXXXXX, compress_file's temporary */
    const char *gz = strstr(name, ".xml.gz.");
    if (name[0] != '.' || gz == NULL || strlen(gz) != strlen(".xml.gz.XXXXXX"))
        return FALSE;
    g_autofree char *xml = g_strndup(name + 1, (gsize) (gz - name - 1 + strlen(".xml")));
    return is_xml_file(xml, FALSE);
}

/* Returns: (transfer full) (nullable): why @path is not a directory that
 * gemleak clean may remove, or NULL; *bytes: what it holds. */
static char *not_ours(const char *path, gboolean helper, guint64 *bytes)
{
    struct stat st;
    *bytes = 0;
    if (lstat(path, &st) != 0)
        return g_strdup(g_strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return g_strdup("not a directory");
    if (st.st_uid != geteuid())
        return g_strdup("another user's");
    if ((st.st_mode & 07777) != 0700)
        return g_strdup_printf("mode %04o, where gemleak makes 0700", (unsigned) (st.st_mode & 07777));
    g_autoptr(GError) error = NULL;
    g_autoptr(GDir) dir = g_dir_open(path, 0, &error);
    if (dir == NULL)
        return g_strdup(error->message);
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *child = g_build_filename(path, name, NULL);
        struct stat cst;
        if (!written_by_gemleak(name, helper) || lstat(child, &cst) != 0 || !S_ISREG(cst.st_mode))
            return g_strdup_printf("it holds %s, which gemleak does not write", name);
        *bytes += (guint64) cst.st_size;
    }
    return NULL;
}

guint gl_rundir_clean(const char *tmpdir, gboolean dry_run, FILE *out)
{
    g_autoptr(GDir) dir = g_dir_open(tmpdir, 0, NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        gboolean run = g_str_has_prefix(name, GL_PROTO_RUN_DIR) &&
                       strlen(name) == strlen(GL_PROTO_RUN_DIR) + 6;
        gboolean helper = g_str_has_prefix(name, GL_PROTO_HELPER_DIR) &&
                          strlen(name) == strlen(GL_PROTO_HELPER_DIR) + 6;
        if (run || helper)
            g_ptr_array_add(names, g_strdup(name));
    }
    g_ptr_array_sort(names, gl_compare_strings);
    guint removed = 0;
    guint64 freed = 0;
    for (guint i = 0; i < names->len; i++) {
        const char *base = g_ptr_array_index(names, i);
        gboolean helper = g_str_has_prefix(base, GL_PROTO_HELPER_DIR);
        g_autofree char *path = g_build_filename(tmpdir, base, NULL);
        /* TMPDIR and the names in it may hold anything: escaped, on one line */
        g_autofree char *shown = gl_text_escape(path);
        guint64 bytes = 0;
        g_autofree char *why = not_ours(path, helper, &bytes);
        if (why != NULL) {
            g_autofree char *why_shown = gl_text_escape(why);
            fprintf(out, "left %s: %s\n", shown, why_shown);
            continue;
        }
        /* Held until removed: a gemleak starting now makes a new name. */
        int lock = gl_rundir_lock(path);
        if (lock < 0) {
            fprintf(out, "left %s: a running gemleak is using it\n", shown);
            continue;
        }
        /* A run that ended between the look and the lock took its
         * directory with it: the lock is on a directory no longer there. */
        struct stat held, now;
        if (fstat(lock, &held) != 0 || lstat(path, &now) != 0 || held.st_dev != now.st_dev ||
            held.st_ino != now.st_ino) {
            close(lock);
            continue;
        }
        g_autofree char *size = gl_format_bytes(bytes);
        if (!dry_run)
            gl_remove_tree(path);
        close(lock);
        if (!dry_run && g_file_test(path, G_FILE_TEST_EXISTS)) {
            fprintf(out, "left %s: cannot remove all of it\n", shown);
            continue;
        }
        fprintf(out, "%s %s (%s)\n", dry_run ? "would remove" : "removed", shown, size);
        removed++;
        freed += bytes;
    }
    g_autofree char *total = gl_format_bytes(freed);
    g_autofree char *where = gl_text_escape(tmpdir);
    fprintf(out, "%s %u director%s of gemleak's in %s, %s\n",
            dry_run ? "would remove" : "removed", removed, removed == 1 ? "y" : "ies", where,
            total);
    return removed;
}
