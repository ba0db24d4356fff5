/* The input seam (input.h): which format a file is, and the calls the rest
 * of gemleak makes, passed to that format's GlInputFormat. */
#include "gemleak/read/input.h"
#include "input_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* The formats, one file each, asked in this order whether a file is
 * theirs; the last, which has no detect(), reads whatever none claims. */
extern const GlInputFormat gl_input_json_report;    /* json_report.c */
extern const GlInputFormat gl_input_sanitizer;      /* sanitizer_reader.c */
extern const GlInputFormat gl_input_valgrind_xml;   /* reader.c */

static const GlInputFormat *const formats[] = {
    &gl_input_json_report,
    &gl_input_sanitizer,
    &gl_input_valgrind_xml,
};

struct GlInput {
    const GlInputFormat *format;
    gpointer state;
    char *dir;   /* nullable */
    GPtrArray *no_notes;  /* what a format without notes has to say */
};

const GlInputFormat *gl_input_format_find(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++)
        if (g_strcmp0(formats[i]->name, name) == 0)
            return formats[i];
    return NULL;
}

const char *gl_input_format_name(const GlInputFormat *format)
{
    return format->name;
}

/* Appends @format's help line to @help. */
static void append_reads(GString *help, const GlInputFormat *format)
{
    g_auto(GStrv) lines = g_strsplit(format->reads, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++)
        g_string_append_printf(help, "%s%s\n", i == 0 ? "  - " : "    ", lines[i]);
}

char *gl_input_formats_help(void)
{
    GString *help = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++)
        if (formats[i]->detect == NULL)
            append_reads(help, formats[i]);
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++)
        if (formats[i]->detect != NULL)
            append_reads(help, formats[i]);
    return g_string_free(help, FALSE);
}

/* Returns: (transfer none): the format whose detect() claims @head, the
 * one without detect() when none does. */
static const GlInputFormat *format_of(const char *head, gsize length, gboolean listed)
{
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++)
        if (formats[i]->detect == NULL || formats[i]->detect(head, length, listed))
            return formats[i];
    return &gl_input_valgrind_xml;
}

/* Returns: the first bytes of the regular file @fd into @head (from its
 * start, leaving its offset where it is), how many. */
static gsize read_head(int fd, char *head)
{
    ssize_t n;
    do
        n = pread(fd, head, GL_INPUT_HEAD_BYTES, 0);
    while (n < 0 && errno == EINTR);
    return n > 0 ? (gsize) n : 0;
}

/* Returns: what a file of type @mode is, for "not a regular file (...)". */
static const char *file_type(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISSOCK(mode))
        return "a socket";
    return "of another type";
}

/* Returns: (transfer full): the note that says @path was skipped. */
static char *skipped_note(const char *path, mode_t mode)
{
    g_autofree char *shown = g_utf8_make_valid(path, -1);
    return g_strdup_printf("%s: skipped: not a regular file (%s)", shown, file_type(mode));
}

static GlInput *input_new(const GlInputFormat *format, gpointer state, const char *path)
{
    GlInput *input = g_new0(GlInput, 1);
    input->format = format;
    input->state = state;
    input->dir = path != NULL ? g_path_get_dirname(path) : NULL;
    input->no_notes = g_ptr_array_new();
    return input;
}

GlInput *gl_input_open(const char *path, gboolean listed, char **skipped, GError **error)
{
    if (skipped != NULL)
        *skipped = NULL;
    if (strcmp(path, "-") == 0)
        return input_new(&gl_input_valgrind_xml,
                         gl_input_valgrind_xml.open(dup(STDIN_FILENO), NULL, 0, "<stdin>"), NULL);
    int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | (listed ? O_NONBLOCK : 0);
    int fd = g_open(path, flags, 0);
    if (fd < 0) {
        int saved = errno;
        g_autofree char *shown = g_utf8_make_valid(path, -1);
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot open: %s", shown,
                    g_strerror(saved));
        return NULL;
    }
    struct stat st;
    gboolean regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (listed && !regular) {
        if (skipped != NULL)
            *skipped = skipped_note(path, st.st_mode);
        close(fd);
        return NULL;
    }
    const GlInputFormat *format = &gl_input_valgrind_xml;
    /* Only a regular file is looked into twice: the first bytes of a pipe
     * are gone once read. */
    if (regular) {
        g_autofree char *head = g_malloc(GL_INPUT_HEAD_BYTES);
        format = format_of(head, read_head(fd, head), listed);
    }
    return input_new(format, format->open(fd, NULL, 0, path), path);
}

GlInput *gl_input_open_memory(const GlInputFormat *format, const char *data, gsize size,
                              const char *name)
{
    if (format == NULL)
        format = format_of(data, MIN(size, GL_INPUT_HEAD_BYTES), FALSE);
    return input_new(format, format->open(-1, data, size, name), NULL);
}

void gl_input_free(GlInput *input)
{
    if (input == NULL)
        return;
    input->format->free(input->state);
    g_free(input->dir);
    g_ptr_array_unref(input->no_notes);
    g_free(input);
}

GlRecord *gl_input_next(GlInput *input)
{
    return input->format->next(input->state);
}

const GlProcess *gl_input_process(const GlInput *input)
{
    return input->format->process(input->state);
}

const GPtrArray *gl_input_problems(const GlInput *input)
{
    return input->format->problems(input->state);
}

const GPtrArray *gl_input_notes(const GlInput *input)
{
    return input->format->notes != NULL ? input->format->notes(input->state) : input->no_notes;
}

GHashTable *gl_input_suppression_counts(const GlInput *input)
{
    return input->format->suppressed != NULL ? input->format->suppressed(input->state) : NULL;
}

const GlInputFormat *gl_input_format(const GlInput *input)
{
    return input->format;
}

const char *gl_input_dir(const GlInput *input)
{
    return input->dir;
}

/* ---- listing a directory ---------------------------------------------------------- */

/* Returns: TRUE if a format reads the file @name of a directory by its
 * name, or (@path, a regular file, read without blocking) by its first
 * bytes. */
static gboolean listable(const char *name, const char *path)
{
    for (guint i = 0; i < G_N_ELEMENTS(formats); i++)
        if (formats[i]->named != NULL && formats[i]->named(name))
            return TRUE;
    int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
    if (fd < 0)
        return FALSE;
    struct stat st;
    gboolean found = FALSE;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        g_autofree char *head = g_malloc(GL_INPUT_HEAD_BYTES);
        gsize length = read_head(fd, head);
        for (guint i = 0; i < G_N_ELEMENTS(formats) && !found; i++)
            found = length > 0 && formats[i]->detect != NULL &&
                    formats[i]->detect(head, length, TRUE);
    }
    close(fd);
    return found;
}

GPtrArray *gl_input_list(const char *dir, GPtrArray *skipped, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GDir) handle = g_dir_open(dir, 0, &local);
    if (handle == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot read directory: %s", dir,
                    local->message);
        return NULL;
    }
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) odd = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(handle)) != NULL) {
        /* gemleak's record of the run: no report, whatever a line of
         * source it holds looks like */
        if (strcmp(name, GL_PROTO_RECORD_FILE) == 0)
            continue;
        char *path = g_build_filename(dir, name, NULL);
        if (!listable(name, path)) {
            g_free(path);
            continue;
        }
        GStatBuf st;
        if (g_stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            g_ptr_array_add(odd, skipped_note(path, st.st_mode));
            g_free(path);
        } else {
            g_ptr_array_add(files, path);
        }
    }
    g_ptr_array_sort(files, gl_compare_strings);
    g_ptr_array_sort(odd, gl_compare_strings);
    for (guint i = 0; skipped != NULL && i < odd->len; i++)
        g_ptr_array_add(skipped, g_strdup(g_ptr_array_index(odd, i)));
    return files;
}

gboolean gl_input_dir_has_inputs(const char *dir)
{
    g_autoptr(GPtrArray) files = gl_input_list(dir, NULL, NULL);
    return files != NULL && files->len > 0;
}
