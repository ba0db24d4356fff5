/* Where reports go: each report's destination, checked before anything is
 * read or run, then written. */
#include "gemleak/report/sinks.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/text.h"
#include "gemleak/base/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

static gboolean wants_color(const char *mode, FILE *stream)
{
    if (g_strcmp0(mode, "always") == 0)
        return TRUE;
    if (g_strcmp0(mode, "never") == 0 || stream == NULL)
        return FALSE;
    return isatty(fileno(stream)) && g_getenv("NO_COLOR") == NULL &&
           g_strcmp0(g_getenv("TERM"), "dumb") != 0;
}

/* One report and where it goes, resolved before anything is read. */
typedef struct {
    const GlReporter *reporter;
    char *label;             /* "the json report (r.json)", for messages */
    const char *path;        /* as given (the Options' string); NULL: the command's stream */
    int fd;                  /* >= 0: a descriptor of ours ("-", /dev/stdout, /proc/self/fd/2) */
    char *file;              /* else the file, every symbolic link resolved */
    const char *color;       /* --color; "never" for files that are not text reports */
    gboolean every_finding;  /* --write-baseline: the findings the baseline knows too */
} Sink;

static void sink_free(gpointer data)
{
    Sink *sink = data;
    g_free(sink->label);
    g_free(sink->file);
    g_free(sink);
}

/* A report goes to the command's stream (standard output for filter,
 * standard error for run) when no file is named, to standard output for
 * "-", and to the descriptor a path such as /dev/stdout stands for. */
static Sink *sink_new(const GlReporter *reporter, char *label, const char *path, FILE *stream,
                      FILE *out, const char *color)
{
    Sink *sink = g_new0(Sink, 1);
    sink->reporter = reporter;
    sink->label = label;
    sink->path = path;
    sink->color = color;
    if (path == NULL)
        sink->fd = fileno(stream);
    else if (strcmp(path, "-") == 0)
        sink->fd = fileno(out);
    else
        sink->fd = gl_path_fd(path);
    if (sink->fd < 0) {
        sink->file = gl_path_resolve(path);
    }
    return sink;
}

/* What gemleak reads, for telling a report path from it. */
typedef struct {
    GArray *files;   /* GlFileId: inputs, --baseline, --skip-functions-file */
    GArray *dirs;    /* GlFileId: input directories, --keep-xml */
    GPtrArray *names;/* char*: the same, as given, in the same order (files, then dirs) */
} Reads;

/* Returns: (transfer none) (nullable): what @sink would overwrite or write
 * into among @reads: the name as given. */
static const char *sink_clobbers(const Sink *sink, const Reads *reads, gboolean *inside)
{
    GlFileId id;
    *inside = FALSE;
    if (gl_file_id_of_path(sink->file, &id))
        for (guint i = 0; i < reads->files->len; i++)
            if (gl_file_id_equal(&id, &g_array_index(reads->files, GlFileId, i)))
                return g_ptr_array_index(reads->names, i);
    /* Any directory on the way up: the XML directory's subdirectories
     * are no place for reports either. */
    g_autofree char *dir = g_path_get_dirname(sink->file);
    for (;;) {
        if (gl_file_id_of_path(dir, &id)) {
            for (guint i = 0; i < reads->dirs->len; i++) {
                if (gl_file_id_equal(&id, &g_array_index(reads->dirs, GlFileId, i))) {
                    *inside = TRUE;
                    return g_ptr_array_index(reads->names, reads->files->len + i);
                }
            }
        }
        if (strcmp(dir, "/") == 0 || strcmp(dir, ".") == 0)
            return NULL;
        char *parent = g_path_get_dirname(dir);
        g_free(dir);
        dir = parent;
    }
}

static void reads_add(Reads *reads, GPtrArray *dir_names, const char *path)
{
    GlFileId id;
    if (path == NULL || strcmp(path, "-") == 0 || !gl_file_id_of_path(path, &id))
        return;
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_array_append_val(reads->dirs, id);
        g_ptr_array_add(dir_names, (gpointer) path);
    } else {
        g_array_append_val(reads->files, id);
        g_ptr_array_add(reads->names, (gpointer) path);
    }
}

struct GlSinks {
    GPtrArray *items;   /* Sink*, in the order given */
    FILE *stream;       /* a sink with no path writes here */
    FILE *out;          /* "-" writes here */
};

GlSinks *gl_sinks_new(FILE *stream, FILE *out)
{
    GlSinks *sinks = g_new0(GlSinks, 1);
    sinks->items = g_ptr_array_new_with_free_func(sink_free);
    sinks->stream = stream;
    sinks->out = out;
    return sinks;
}

void gl_sinks_free(GlSinks *sinks)
{
    if (sinks == NULL)
        return;
    g_ptr_array_unref(sinks->items);
    g_free(sinks);
}

void gl_sinks_add(GlSinks *sinks, const GlReporter *reporter, char *label, const char *path,
                  const char *color, gboolean every_finding)
{
    Sink *sink = sink_new(reporter, label, path, sinks->stream, sinks->out, color);
    sink->every_finding = every_finding;
    g_ptr_array_add(sinks->items, sink);
}

/* Refuses two sinks in one stream or one file. */
static gboolean check_shared(const GPtrArray *items, GError **error)
{
    for (guint i = 0; i < items->len; i++) {
        const Sink *a = g_ptr_array_index(items, i);
        guint sharing = 1;
        for (guint j = 0; j < items->len; j++) {
            const Sink *b = g_ptr_array_index(items, j);
            if (j != i && a->fd >= 0 && b->fd == a->fd)
                sharing++;
            GlFileId ida, idb;
            if (j > i && a->file != NULL && b->file != NULL &&
                (strcmp(a->file, b->file) == 0 ||
                 (gl_file_id_of_path(a->file, &ida) && gl_file_id_of_path(b->file, &idb) &&
                  gl_file_id_equal(&ida, &idb)))) {
                g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                            "%s and %s would both go to %s: give each its own file", a->label,
                            b->label, a->file);
                return FALSE;
            }
        }
        if (sharing > 1) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                        "%u reports would share one stream: give each --format but one its "
                        "-o FILE", sharing);
            return FALSE;
        }
    }
    return TRUE;
}

/* Refuses a sink over a file gemleak reads or inside a directory it reads. */
static gboolean check_reads(const GPtrArray *items, const GlSinkReads *what, GError **error)
{
    Reads reads = {
        .files = g_array_new(FALSE, FALSE, sizeof(GlFileId)),
        .dirs = g_array_new(FALSE, FALSE, sizeof(GlFileId)),
        .names = g_ptr_array_new(),
    };
    g_autoptr(GPtrArray) dir_names = g_ptr_array_new();
    for (const char *const *input = what->inputs; input != NULL && *input != NULL; input++)
        reads_add(&reads, dir_names, *input);
    reads_add(&reads, dir_names, what->skip_functions_file);
    reads_add(&reads, dir_names, what->keep_dir);
    guint n_files_but_baseline = reads.files->len;
    reads_add(&reads, dir_names, what->baseline);
    g_ptr_array_extend(reads.names, dir_names, NULL, NULL);
    g_autofree char *keep = what->keep_dir != NULL ? gl_path_resolve(what->keep_dir) : NULL;

    gboolean ok = TRUE;
    for (guint i = 0; ok && i < items->len; i++) {
        const Sink *sink = g_ptr_array_index(items, i);
        if (sink->file == NULL)
            continue;
        gboolean inside = FALSE;
        const char *clobbered = sink_clobbers(sink, &reads, &inside);
        /* --write-baseline over --baseline refreshes it: read first, written last */
        if (clobbered != NULL && !inside && sink->every_finding &&
            g_strcmp0(clobbered, what->baseline) == 0) {
            GlFileId id;
            gboolean other = FALSE;
            if (gl_file_id_of_path(sink->file, &id))
                for (guint f = 0; f < n_files_but_baseline && !other; f++)
                    other = gl_file_id_equal(&id, &g_array_index(reads.files, GlFileId, f));
            if (!other)
                clobbered = NULL;
        }
        /* A --keep-xml directory that is not there yet has no inode. */
        if (clobbered == NULL && keep != NULL && g_str_has_prefix(sink->file, keep) &&
            sink->file[strlen(keep)] == '/') {
            clobbered = what->keep_dir;
            inside = TRUE;
        }
        if (clobbered != NULL) {
            if (inside)
                g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                            "%s would be written inside %s, a directory gemleak reads: write it "
                            "elsewhere", sink->label, clobbered);
            else
                g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                            "%s would overwrite %s, which gemleak reads: write it elsewhere",
                            sink->label, clobbered);
            ok = FALSE;
        }
    }
    g_array_unref(reads.files);
    g_array_unref(reads.dirs);
    g_ptr_array_unref(reads.names);
    return ok;
}

/* Returns: (transfer full) (nullable): why the file @path (every link
 * resolved) could not be written as write_report() writes it, or NULL. */
static char *unwritable(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return g_strdup("it is a directory");
        /* written as it is (a FIFO, /dev/null); opening a FIFO would wait */
        if (!S_ISREG(st.st_mode))
            return access(path, W_OK) == 0 ? NULL : g_strdup(g_strerror(errno));
    }
    g_autofree char *parent = g_path_get_dirname(path);
    if (!g_file_test(parent, G_FILE_TEST_IS_DIR))
        return g_strdup_printf("no directory %s", parent);
    /* A regular file is replaced through a file made beside it: the one
     * test that holds for root, ACLs and read-only mounts alike is making one. */
    g_autofree char *probe = g_build_filename(parent, ".gemleak-probe-XXXXXX", NULL);
    int fd = g_mkstemp_full(probe, O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        int saved = errno;
        return g_strdup_printf("no file can be made in %s: %s", parent, g_strerror(saved));
    }
    close(fd);
    g_unlink(probe);
    return NULL;
}

gboolean gl_sinks_check(const GlSinks *sinks, const GlSinkReads *reads, GError **error)
{
    if (!check_shared(sinks->items, error) || !check_reads(sinks->items, reads, error))
        return FALSE;
    /* A report that could never be written is known now, not after a run
     * of many minutes, with the text report that held the finding. */
    for (guint i = 0; i < sinks->items->len; i++) {
        const Sink *sink = g_ptr_array_index(sinks->items, i);
        if (sink->file == NULL)
            continue;
        g_autofree char *why = unwritable(sink->file);
        if (why != NULL) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%s cannot be written: %s", sink->label,
                        why);
            return FALSE;
        }
    }
    return TRUE;
}

/* Writes one report where @sink says: a stream of ours; a file that is not
 * a regular one (a FIFO, /dev/null) as it is; a regular file through
 * gl_file_replace(), a symbolic link's target rather than the link. */
static gboolean write_report(const Sink *sink, GlReportContext *context, FILE *stream, FILE *out,
                             GError **error)
{
    if (sink->fd >= 0) {
        FILE *target = sink->fd == fileno(stream) ? stream
                       : sink->fd == fileno(out) ? out : NULL;
        FILE *own = NULL;
        if (target == NULL) {
            int fd = dup(sink->fd);
            target = own = fd >= 0 ? fdopen(fd, "w") : NULL;
            if (target == NULL) {
                int saved = errno;
                if (fd >= 0)
                    close(fd);
                g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: %s", sink->path, g_strerror(saved));
                return FALSE;
            }
        }
        context->color = wants_color(sink->color, target);
        const char *name = sink->path != NULL && strcmp(sink->path, "-") != 0 ? sink->path
                           : target == stderr ? "standard error" : "standard output";
        gboolean ok = gl_report_write(sink->reporter, context, target, name, error);
        if (own != NULL)
            fclose(own);
        return ok;
    }
    context->color = g_strcmp0(sink->color, "always") == 0;
    if (g_file_test(sink->file, G_FILE_TEST_EXISTS) &&
        !g_file_test(sink->file, G_FILE_TEST_IS_REGULAR)) {
        FILE *direct = fopen(sink->file, "w");
        if (direct == NULL) {
            int saved = errno;
            g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: %s", sink->path, g_strerror(saved));
            return FALSE;
        }
        gboolean ok = gl_report_write(sink->reporter, context, direct, sink->path, error);
        fclose(direct);
        return ok;
    }
    char *buffer = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&buffer, &size);
    if (memory == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: %s", sink->path, g_strerror(errno));
        return FALSE;
    }
    gboolean ok = gl_report_write(sink->reporter, context, memory, sink->path, error);
    fclose(memory);
    g_autoptr(GError) local = NULL;
    if (ok && !gl_file_replace(sink->file, buffer, size, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "cannot write the %s report: %s",
                    sink->reporter->name, local->message);
        ok = FALSE;
    }
    free(buffer);
    return ok;
}

/* Returns: (transfer none) (nullable): the report that says the verdict
 * on gemleak's streams: a text report in the command's stream, else one on
 * standard error (@err). */
static const Sink *verdict_sink(const GlSinks *sinks, FILE *err)
{
    const int streams[] = { fileno(sinks->stream), fileno(err) };
    for (guint s = 0; s < G_N_ELEMENTS(streams); s++) {
        for (guint i = 0; i < sinks->items->len; i++) {
            const Sink *sink = g_ptr_array_index(sinks->items, i);
            if (sink->reporter == &gl_report_text && sink->fd >= 0 && sink->fd == streams[s])
                return sink;
        }
    }
    return NULL;
}

gboolean gl_sinks_write(const GlSinks *sinks, const GlReportContext *context,
                        const GPtrArray *all_findings, FILE *err)
{
    gboolean all_written = TRUE;
    /* The verdict is said once where a CI log shows the streams together:
     * by that report, else on standard error after them all. */
    const Sink *speaker = verdict_sink(sinks, err);
    for (guint i = 0; i < sinks->items->len; i++) {
        const Sink *sink = g_ptr_array_index(sinks->items, i);
        GlReportContext here = *context;
        here.verdict_elsewhere = sink != speaker && sink->fd >= 0 &&
                                 (sink->fd == fileno(sinks->out) || sink->fd == fileno(err) ||
                                  sink->fd == fileno(sinks->stream));
        if (sink->every_finding) {
            here.findings = all_findings;
            here.baseline_known = 0;
        }
        g_autoptr(GError) error = NULL;
        if (!write_report(sink, &here, sinks->stream, sinks->out, &error)) {
            g_autofree char *message = gl_text_escape(error->message);
            fprintf(err, "gemleak: %s\n", message);
            all_written = FALSE;
        }
    }
    if (speaker == NULL) {
        fflush(sinks->out);
        if (context->gate != NULL && context->gate->line != NULL)
            fprintf(err, "%s\n", context->gate->line);
        if (context->exit_line != NULL)
            fprintf(err, "%s\n", context->exit_line);
    }
    return all_written;
}

gboolean gl_sinks_write_instead(const GlSinks *sinks, const char *format, const char *text,
                                gsize length, GError **error)
{
    gboolean all_written = TRUE;
    for (guint i = 0; i < sinks->items->len; i++) {
        const Sink *sink = g_ptr_array_index(sinks->items, i);
        if (strcmp(sink->reporter->name, format) != 0 || sink->fd >= 0)
            continue;
        g_autoptr(GError) local = NULL;
        if (g_file_test(sink->file, G_FILE_TEST_EXISTS) &&
            !g_file_test(sink->file, G_FILE_TEST_IS_REGULAR)) {
            FILE *direct = fopen(sink->file, "w");
            if (direct == NULL || fwrite(text, 1, length, direct) != length) {
                g_set_error(&local, GL_ERROR, GL_ERROR_IO, "%s", g_strerror(errno));
            }
            if (direct != NULL && fclose(direct) != 0 && local == NULL)
                g_set_error(&local, GL_ERROR, GL_ERROR_IO, "%s", g_strerror(errno));
        } else {
            gl_file_replace(sink->file, text, length, &local);
        }
        if (local != NULL) {
            if (all_written)
                g_set_error(error, GL_ERROR, GL_ERROR_IO, "cannot write the %s report: %s",
                            format, local->message);
            all_written = FALSE;
        }
    }
    return all_written;
}
