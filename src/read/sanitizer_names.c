/* Frames a runtime left unnamed, named from their objects (sanitizer_names.h). */
#include "gemleak/read/sanitizer_names.h"
#include "gemleak/base/run_files.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"
#include "gemleak/read/run_dir.h"

#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

/* Far above any report gemleak reads (sanitizer_reader.c's limit). */
#define MAX_REPORT_BYTES ((gsize) 1 << 30)
/* What the runtime writes for what it did not name. */
#define UNNAMED "<null>"

/* One line of the text in hand. */
typedef struct {
    const char *start;
    gsize length;
} Line;

/* Returns: (transfer none) (nullable): what follows "@tag N " on @line (N
 * the frame number in *@number, @expected when it is not NULL), or NULL. */
static const char *tagged(const Line *line, const char *tag, const char *expected,
                          char **number)
{
    gsize n = strlen(tag);
    if (line->length <= n + 1 || strncmp(line->start, tag, n) != 0 || line->start[n] != ' ')
        return NULL;
    const char *digits = line->start + n + 1;
    const char *end = line->start + line->length;
    const char *c = digits;
    while (c < end && g_ascii_isdigit(*c))
        c++;
    if (c == digits || c >= end || *c != ' ')
        return NULL;
    if (expected != NULL && (strlen(expected) != (gsize) (c - digits) ||
                             strncmp(expected, digits, (gsize) (c - digits)) != 0))
        return NULL;
    if (number != NULL)
        *number = g_strndup(digits, (gsize) (c - digits));
    return c + 1;
}

/* Returns: TRUE if @rest (up to @end) is "0xPC 0xOFFSET 0xQ LINE COLUMN":
 * the pc and offset in *@pc, *@offset. */
static gboolean closing_numbers(const char *rest, const char *end, char **pc, guint64 *offset)
{
    g_autofree char *text = g_strndup(rest, (gsize) (end - rest));
    g_auto(GStrv) words = g_strsplit(text, " ", -1);
    if (g_strv_length(words) != 5 || !g_str_has_prefix(words[0], "0x") ||
        !g_str_has_prefix(words[1], "0x"))
        return FALSE;
    char *stop = NULL;
    *offset = g_ascii_strtoull(words[1] + 2, &stop, 16);
    if (stop == words[1] + 2 || *stop != '\0')
        return FALSE;
    *pc = g_strdup(words[0]);
    return TRUE;
}

static gboolean field_is(const char *field, const Line *line, const char *text)
{
    gsize n = (gsize) (line->start + line->length - field);
    return n == strlen(text) && strncmp(field, text, n) == 0;
}

/* Writes @n frames of @module at @pc and @offset, named as @frames says,
 * numbered on from @first. */
static void write_named(GString *out, const char *module, gsize module_length, const char *pc,
                        guint64 offset, const GlRuntimeFrame *frames, guint n, guint64 first)
{
    for (guint i = 0; i < n; i++) {
        guint64 k = first + i;
        g_string_append_printf(out, "Gm %" G_GUINT64_FORMAT " ", k);
        g_string_append_len(out, module, (gssize) module_length);
        g_string_append_printf(out, "\nGf %" G_GUINT64_FORMAT " %s\nGs %" G_GUINT64_FORMAT
                               " %s\nG %" G_GUINT64_FORMAT " %s 0x%" G_GINT64_MODIFIER
                               "x 0x0 %u 0\n", k,
                               frames[i].function != NULL ? frames[i].function : UNNAMED, k,
                               frames[i].file != NULL ? frames[i].file : UNNAMED, k, pc,
                               offset, frames[i].line);
    }
}

/* Copies the frame of @lines (four) as it is, numbered @k. */
static void write_renumbered(GString *out, const Line *lines, const char *const *rests, guint64 k)
{
    static const char *const tags[] = { "Gm", "Gf", "Gs", "G" };
    for (guint i = 0; i < 4; i++) {
        g_string_append_printf(out, "%s %" G_GUINT64_FORMAT " ", tags[i], k);
        g_string_append_len(out, rests[i], (gssize) (lines[i].start + lines[i].length - rests[i]));
        g_string_append_c(out, '\n');
    }
}

char *gl_sanitizer_name_frames(GlDebugInfo *info, const char *data, gsize length,
                               gsize *named_length)
{
    /* the text split at its newlines; the last piece may have none */
    g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(Line));
    for (const char *p = data, *end = data + length; p < end;) {
        const char *newline = memchr(p, '\n', (gsize) (end - p));
        Line line = { p, newline != NULL ? (gsize) (newline - p) : (gsize) (end - p) };
        g_array_append_val(lines, line);
        p = newline != NULL ? newline + 1 : end;
    }
    gboolean ends_in_newline = length > 0 && data[length - 1] == '\n';
    g_autoptr(GString) out = g_string_sized_new(length + length / 2);
    gboolean named = FALSE;
    /* how many frames the stack in hand gained so far: the runtime numbers
     * a stack's frames on, those inlined at one address too */
    guint64 shift = 0;
    for (guint i = 0; i < lines->len;) {
        const Line *line = &g_array_index(lines, Line, i);
        g_autofree char *number = NULL;
        const char *rests[4] = { NULL };
        g_autofree char *pc = NULL;
        guint64 offset = 0;
        if (i + 3 < lines->len && (rests[0] = tagged(line, "Gm", NULL, &number)) != NULL &&
            (rests[1] = tagged(line + 1, "Gf", number, NULL)) != NULL &&
            (rests[2] = tagged(line + 2, "Gs", number, NULL)) != NULL &&
            (rests[3] = tagged(line + 3, "G", number, NULL)) != NULL &&
            closing_numbers(rests[3], line[3].start + line[3].length, &pc, &offset) &&
            (i + 4 < lines->len || ends_in_newline)) {
            /* a stack's first frame */
            guint64 n_said = g_ascii_strtoull(number, NULL, 10);
            if (n_said == 0)
                shift = 0;
            const GlRuntimeFrame *frames = NULL;
            guint n = 0;
            gsize module_length = (gsize) (line->start + line->length - rests[0]);
            if (field_is(rests[1], &line[1], UNNAMED) && field_is(rests[2], &line[2], UNNAMED) &&
                !field_is(rests[0], line, UNNAMED)) {
                g_autofree char *module = g_strndup(rests[0], module_length);
                n = gl_debuginfo_runtime_frames(info, module, offset, &frames);
            }
            if (n > 0) {
                write_named(out, rests[0], module_length, pc, offset, frames, n, n_said + shift);
                shift += n - 1;
                named = TRUE;
            } else {
                write_renumbered(out, line, rests, n_said + shift);
            }
            i += 4;
            continue;
        }
        shift = 0;
        g_string_append_len(out, line->start, (gssize) line->length);
        if (i + 1 < lines->len || ends_in_newline)
            g_string_append_c(out, '\n');
        i++;
    }
    if (!named)
        return NULL;
    *named_length = out->len;
    return g_string_free(g_steal_pointer(&out), FALSE);
}

/* Returns: TRUE with *@named set (whether it named any) when the report
 * at @path could be read, and written where it needed to be. */
static gboolean name_report(GlDebugInfo *info, const char *path, gboolean *named,
                            GError **error);

gboolean gl_sanitizer_name_report(GlDebugInfo *info, const char *path, GError **error)
{
    gboolean named = FALSE;
    return name_report(info, path, &named, error);
}

guint gl_sanitizer_name_run_dir(GlDebugInfo *info, const char *dir, FILE *messages)
{
    g_auto(GlEngineFacts) facts = { 0 };
    gl_engine_facts_read(dir, &facts);
    if (!gl_engine_facts_say(&facts, GL_ENGINE_NAMES_FRAMES) || facts.log == NULL)
        return 0;
    g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
    if (listing == NULL)
        return 0;
    g_autofree char *prefix = g_strconcat(facts.log, ".", NULL);
    guint named_reports = 0;
    const char *name;
    while ((name = g_dir_read_name(listing)) != NULL) {
        gint64 pid = 0;
        if (!g_str_has_prefix(name, prefix) || !gl_run_file_pid(name, &pid, NULL))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autoptr(GError) error = NULL;
        gboolean named = FALSE;
        if (!name_report(info, path, &named, &error) && messages != NULL) {
            g_autofree char *why = gl_text_escape(error->message);
            fprintf(messages, "gemleak: warning: the frames of %s stay unnamed: %s\n", name, why);
        }
        named_reports += named;
    }
    return named_reports;
}

static gboolean name_report(GlDebugInfo *info, const char *path, gboolean *named_any,
                            GError **error)
{
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_regular(path, MAX_REPORT_BYTES, &text, &length, error))
        return FALSE;
    /* nothing unnamed: no frame line says so */
    if (g_strstr_len(text, (gssize) length, "\nGf ") == NULL ||
        g_strstr_len(text, (gssize) length, " " UNNAMED "\n") == NULL)
        return TRUE;
    gsize named_length = 0;
    g_autofree char *named = gl_sanitizer_name_frames(info, text, length, &named_length);
    if (named == NULL)
        return TRUE;
    *named_any = TRUE;
    /* with the mode the runtime gave it */
    GStatBuf st;
    int mode = g_stat(path, &st) == 0 ? (int) (st.st_mode & 0777) : 0600;
    return g_file_set_contents_full(path, named, (gssize) named_length,
                                    G_FILE_SET_CONTENTS_CONSISTENT, mode, error);
}
