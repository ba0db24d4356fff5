/* Source paths and lines (see source.h). */
#include "gemleak/read/source.h"

#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

char *gl_path_normalize(const char *path)
{
    gboolean absolute = path[0] == '/';
    g_auto(GStrv) parts = g_strsplit(path, "/", -1);
    GPtrArray *kept = g_ptr_array_new();
    for (char **part = parts; *part != NULL; part++) {
        if (**part == '\0' || strcmp(*part, ".") == 0)
            continue;
        if (strcmp(*part, "..") == 0) {
            const char *last = kept->len > 0 ? g_ptr_array_index(kept, kept->len - 1) : NULL;
            if (last != NULL && strcmp(last, "..") != 0) {
                g_ptr_array_remove_index(kept, kept->len - 1);
                continue;
            }
            if (absolute)
                continue;  /* "/.." is "/" */
        }
        g_ptr_array_add(kept, *part);
    }
    g_ptr_array_add(kept, NULL);
    g_autofree char *joined = g_strjoinv("/", (char **) kept->pdata);
    g_ptr_array_free(kept, TRUE);
    if (absolute)
        return g_strconcat("/", joined, NULL);
    return *joined != '\0' ? g_steal_pointer(&joined) : g_strdup(".");
}

char *gl_frame_path(const GlFrame *frame)
{
    if (frame == NULL || frame->file == NULL)
        return NULL;
    g_autofree char *path = frame->file[0] == '/' || frame->dir == NULL
                                ? g_strdup(frame->file)
                                : g_build_filename(frame->dir, frame->file, NULL);
    return gl_path_normalize(path);
}

gboolean gl_frame_from_a_header(const GlFrame *frame)
{
    g_autofree char *path = gl_frame_path(frame);
    return path != NULL &&
           (g_str_has_prefix(path, "/usr/include/") || g_str_has_prefix(path, "/usr/local/include/") ||
            g_str_has_prefix(path, "/usr/lib/gcc/") || strstr(path, "/include/c++/") != NULL ||
            strstr(path, "/include/ruby-") != NULL || strstr(path, "/include/ruby/") != NULL);
}

/* ---- the cache ------------------------------------------------------------- */

typedef struct {
    char *text;         /* the whole file, NUL-terminated at each line end */
    GArray *lines;      /* guint offsets of each line in text */
} SourceFile;

struct GlSources {
    GHashTable *files;  /* path -> SourceFile*, NULL value when unreadable */
    GHashTable *set;    /* path -> GHashTable (GUINT_TO_POINTER(line) -> text): lines
                         * as a run read them */
};

static void source_file_free(gpointer data)
{
    SourceFile *file = data;
    if (file == NULL)
        return;
    g_free(file->text);
    g_array_unref(file->lines);
    g_free(file);
}

GlSources *gl_sources_new(void)
{
    GlSources *sources = g_new0(GlSources, 1);
    sources->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, source_file_free);
    sources->set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) g_hash_table_unref);
    return sources;
}

void gl_sources_free(GlSources *sources)
{
    if (sources == NULL)
        return;
    g_hash_table_unref(sources->files);
    g_hash_table_unref(sources->set);
    g_free(sources);
}

static SourceFile *load(const char *path)
{
    GStatBuf info;
    if (g_stat(path, &info) != 0 || !S_ISREG(info.st_mode) ||
        (guint64) info.st_size > GL_SOURCE_MAX_SIZE)
        return NULL;
    char *text = NULL;
    gsize length = 0;
    if (!g_file_get_contents(path, &text, &length, NULL))
        return NULL;
    SourceFile *file = g_new0(SourceFile, 1);
    file->text = text;
    file->lines = g_array_new(FALSE, FALSE, sizeof(guint));
    guint start = 0;
    for (gsize i = 0; i <= length; i++) {
        if (i == length || text[i] == '\n') {
            if (i < length || i > start)
                g_array_append_val(file->lines, start);
            if (i < length)
                text[i] = '\0';
            if (i > start && text[i - 1] == '\r')
                text[i - 1] = '\0';
            start = (guint) i + 1;
        }
    }
    return file;
}

static SourceFile *file_of(GlSources *sources, const char *path)
{
    gpointer file = NULL;
    if (g_hash_table_lookup_extended(sources->files, path, NULL, &file))
        return file;
    file = load(path);
    g_hash_table_insert(sources->files, g_strdup(path), file);
    return file;
}

void gl_sources_set_line(GlSources *sources, const char *path, guint line, const char *text)
{
    GHashTable *lines = g_hash_table_lookup(sources->set, path);
    if (lines == NULL) {
        lines = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        g_hash_table_insert(sources->set, g_strdup(path), lines);
    }
    if (!g_hash_table_contains(lines, GUINT_TO_POINTER(line)))
        g_hash_table_insert(lines, GUINT_TO_POINTER(line), g_strdup(text));
}

const char *gl_sources_line(GlSources *sources, const char *path, guint line)
{
    GHashTable *set = path != NULL ? g_hash_table_lookup(sources->set, path) : NULL;
    const char *given = set != NULL ? g_hash_table_lookup(set, GUINT_TO_POINTER(line)) : NULL;
    if (given != NULL)
        return given;
    SourceFile *file = path != NULL ? file_of(sources, path) : NULL;
    if (file == NULL || line == 0 || line > file->lines->len)
        return NULL;
    return file->text + g_array_index(file->lines, guint, line - 1);
}
