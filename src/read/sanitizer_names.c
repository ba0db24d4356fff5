/* Frames a runtime left unnamed, named from their objects (sanitizer_names.h). */
#include "gemleak/read/sanitizer_names.h"
#include "gemleak/base/run_files.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/read/sanitizer_reader.h"
#include "sanitizer_exact_int.h"

#include <string.h>

/* What the runtime writes for what it did not name. */
#define UNNAMED "<null>"

/* A report's text in the making. */
typedef struct {
    GlDebugInfo *info;
    GString *out;
    GPtrArray *frames;  /* GlExactFrame*: the one being read, at most */
    /* how many frames the stack in hand gained so far: the runtime numbers
     * a stack's frames on, those inlined at one address too */
    guint64 shift;
    gboolean named;     /* a frame was named */
} Naming;

/* Writes @frame (closed), numbered on in its stack, named from its object
 * when the runtime left it unnamed. */
static void write_closed(Naming *naming, const GlExactFrame *frame)
{
    guint64 said = g_ascii_strtoull(frame->number, NULL, 10);
    if (said == 0)  /* a stack's first frame */
        naming->shift = 0;
    const char *module = frame->fields[0]->str;
    const GlRuntimeFrame *named = NULL;
    guint n = 0;
    if (strcmp(frame->fields[1]->str, UNNAMED) == 0 && strcmp(frame->fields[2]->str, UNNAMED) == 0 &&
        strcmp(module, UNNAMED) != 0)
        n = gl_debuginfo_runtime_frames(naming->info, module, gl_exact_frame_number(frame, 1),
                                        &named);
    if (n == 0) {
        gl_exact_write_frame(naming->out, frame, (guint) (said + naming->shift));
        return;
    }
    for (guint i = 0; i < n; i++) {
        guint k = (guint) (said + naming->shift + i);
        g_string_append_printf(naming->out, "Gm %u %s\nGf %u %s\nGs %u %s\nG %u 0x%"
                               G_GINT64_MODIFIER "x 0x%" G_GINT64_MODIFIER "x 0x0 %u 0\n",
                               k, module, k, named[i].function != NULL ? named[i].function : UNNAMED,
                               k, named[i].file != NULL ? named[i].file : UNNAMED, k,
                               gl_exact_frame_number(frame, 0), gl_exact_frame_number(frame, 1),
                               named[i].line);
    }
    naming->shift += n - 1;
    naming->named = TRUE;
}

/* Writes the frame left open (its lines as they were: a report cut short,
 * a line the format did not expect), if any, and ends the stack in hand. */
static void write_open(Naming *naming)
{
    static const char *const tags[] = { "Gm", "Gf", "Gs" };
    for (guint f = 0; f < naming->frames->len; f++) {
        const GlExactFrame *frame = g_ptr_array_index(naming->frames, f);
        for (guint i = 0; i < frame->stage && i < 3; i++)
            g_string_append_printf(naming->out, "%s %s %s\n", tags[i], frame->number,
                                   frame->fields[i]->str);
    }
    g_ptr_array_set_size(naming->frames, 0);
    naming->shift = 0;
}

char *gl_sanitizer_name_frames(GlDebugInfo *info, const char *data, gsize length,
                               gsize *named_length)
{
    g_autofree char *text = g_strndup(data, length);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    guint n_lines = g_strv_length(lines);
    g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func(gl_exact_frame_free);
    g_autoptr(GString) out = g_string_sized_new(length + length / 2);
    Naming naming = { .info = info, .out = out, .frames = frames };
    for (guint i = 0; i < n_lines; i++) {
        /* the last piece: after the last newline, "" or a line cut short */
        gboolean last = i + 1 == n_lines;
        if (!last && gl_exact_frame_line(frames, lines[i])) {
            const GlExactFrame *frame = g_ptr_array_index(frames, frames->len - 1);
            if (frame->stage == 4) {
                write_closed(&naming, frame);
                g_ptr_array_set_size(frames, 0);
            }
            continue;
        }
        write_open(&naming);
        g_string_append(out, lines[i]);
        if (!last)
            g_string_append_c(out, '\n');
    }
    if (!naming.named)
        return NULL;
    *named_length = out->len;
    return g_string_free(g_steal_pointer(&out), FALSE);
}

gboolean gl_sanitizer_name_report(GlDebugInfo *info, const char *path, gboolean *named,
                                  GError **error)
{
    if (named != NULL)
        *named = FALSE;
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_regular(path, GL_SANITIZER_REPORT_MAX_BYTES, &text, &length, error))
        return FALSE;
    /* nothing unnamed: no frame line says so */
    if (g_strstr_len(text, (gssize) length, "\nGf ") == NULL ||
        g_strstr_len(text, (gssize) length, " " UNNAMED "\n") == NULL)
        return TRUE;
    gsize named_length = 0;
    g_autofree char *written = gl_sanitizer_name_frames(info, text, length, &named_length);
    if (written == NULL)
        return TRUE;
    if (named != NULL)
        *named = TRUE;
    /* with the mode the runtime gave it, whole or as it was; unsynced (a
     * sync a report, each some 0.5 ms to 10 ms: a run directory is made
     * again) */
    return gl_file_replace_unsynced(path, written, named_length, error);
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
        if (!gl_sanitizer_name_report(info, path, &named, &error) && messages != NULL) {
            g_autofree char *why = gl_text_escape(error->message);
            fprintf(messages, "gemleak: warning: the frames of %s stay unnamed: %s\n", name, why);
        }
        named_reports += named;
    }
    return named_reports;
}
