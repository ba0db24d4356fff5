/* The list of report formats, and what several of them share. */
#include "gemleak/report.h"
#include "gemleak/errors.h"

#include <errno.h>
#include <string.h>

static const GlReporter *const reporters[] = {
    &gl_report_text,
    &gl_report_json,
    &gl_report_junit,
    &gl_report_sarif,
    &gl_report_github,
    &gl_report_supp,
    NULL,
};

const GlReporter *const *gl_reporters(void)
{
    return reporters;
}

const GlReporter *gl_reporter_find(const char *name)
{
    for (const GlReporter *const *r = reporters; *r != NULL; r++)
        if (g_strcmp0((*r)->name, name) == 0)
            return *r;
    return NULL;
}

gboolean gl_report_write(const GlReporter *reporter, const GlReportContext *context, FILE *out,
                         const char *out_name, GError **error)
{
    gpointer state = reporter->begin(context, out);
    for (guint i = 0; i < context->findings->len; i++)
        reporter->finding(state, g_ptr_array_index(context->findings, i), i);
    reporter->end(state);
    if (fflush(out) != 0 || ferror(out)) {
        int saved = errno;
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot write the %s report: %s",
                    out_name, reporter->name, g_strerror(saved));
        return FALSE;
    }
    return TRUE;
}

void gl_frame_describe(const GlFrame *frame, GString *out)
{
    if (frame->fn != NULL && frame->file != NULL) {
        g_string_append_printf(out, "%s (%s:%u)", frame->fn, frame->file, frame->line);
    } else if (frame->obj != NULL) {
        g_string_append_printf(out, "%s (at %s)", frame->fn != NULL ? frame->fn : "???",
                               frame->obj);
    } else if (frame->fn != NULL) {
        g_string_append(out, frame->fn);
    } else {
        g_string_append_printf(out, "0x%" G_GINT64_MODIFIER "X", frame->ip);
    }
}

char *gl_finding_message(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (finding->occurrences <= 1)
        return g_strdup(record->what);
    GString *message = g_string_new(record->what);
    g_string_append_printf(message, " (%u occurrences in %u process%s", finding->occurrences,
                           finding->pids->len, finding->pids->len == 1 ? "" : "es");
    if (record->leak_kind != GL_LEAK_NONE)
        g_string_append_printf(message, ": %" G_GUINT64_FORMAT " bytes in %" G_GUINT64_FORMAT
                               " blocks in all", finding->total_bytes, finding->total_blocks);
    g_string_append_c(message, ')');
    return g_string_free(message, FALSE);
}

static const GlFrame *first_target(const GlStack *stack, gboolean with_file)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (stack->frames[i].in_target && (!with_file || stack->frames[i].file != NULL))
            return &stack->frames[i];
    return NULL;
}

const GlFrame *gl_finding_location(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    const GlFrame *frame = first_target(&record->stack, TRUE);
    if (frame == NULL)
        frame = gl_record_first_target_frame(record);
    return frame;
}

char *gl_frame_source_path(const GlFrame *frame, const char *project_root, gboolean *under_root)
{
    if (under_root != NULL)
        *under_root = FALSE;
    if (frame == NULL || frame->file == NULL)
        return NULL;
    g_autofree char *path = frame->file[0] == '/' || frame->dir == NULL
                                ? g_strdup(frame->file)
                                : g_build_filename(frame->dir, frame->file, NULL);
    if (project_root != NULL && path[0] == '/') {
        gsize n = strlen(project_root);
        while (n > 1 && project_root[n - 1] == '/')
            n--;
        if (strncmp(path, project_root, n) == 0 && path[n] == '/') {
            if (under_root != NULL)
                *under_root = TRUE;
            return g_strdup(path + n + 1);
        }
    }
    return g_steal_pointer(&path);
}

gboolean gl_report_finding_fails(const GlReportContext *context, const GlFinding *finding)
{
    if (context->gate != NULL && !context->gate->failed)
        return FALSE;
    return context->fail_on == NULL || gl_gate_counts(context->fail_on, finding->record);
}

const char *gl_record_category(const GlRecord *record)
{
    switch (record->leak_kind) {
    case GL_LEAK_DEFINITE: return "definite leak";
    case GL_LEAK_INDIRECT: return "indirect leak";
    case GL_LEAK_POSSIBLE: return "possible leak";
    case GL_LEAK_REACHABLE: return "still reachable";
    case GL_LEAK_NONE: break;
    }
    return strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0 ? "crash" : "memory error";
}

/* The outermost target frame of the primary stack: where the target was
 * entered, which tells apart two leaks in the same helper. */
static const GlFrame *entry_frame(const GlStack *stack)
{
    guint n = gl_stack_relevant_frames(stack);
    return n > 0 && stack->frames[n - 1].in_target ? &stack->frames[n - 1] : NULL;
}

char *gl_finding_title(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    const GlFrame *frame = gl_finding_location(finding);
    const GlFrame *entry = entry_frame(&record->stack);
    GString *title = g_string_new(record->leak_kind != GL_LEAK_NONE ? gl_record_category(record)
                                                                     : record->kind);
    if (frame != NULL) {
        g_string_append(title, " in ");
        gl_frame_describe(frame, title);
    }
    if (frame != NULL && entry != NULL && entry != frame && entry->fn != NULL &&
        g_strcmp0(entry->fn, frame->fn) != 0) {
        g_string_append(title, " via ");
        gl_frame_describe(entry, title);
    }
    return g_string_free(title, FALSE);
}

void gl_json_add_string_value(JsonBuilder *builder, const char *value)
{
    if (value == NULL) {
        json_builder_add_null_value(builder);
    } else if (g_utf8_validate(value, -1, NULL)) {
        json_builder_add_string_value(builder, value);
    } else {
        /* Valgrind copies bytes as they are (paths, arguments, names), and
         * json-glib would write them so: JSON must be UTF-8. */
        g_autofree char *valid = g_utf8_make_valid(value, -1);
        json_builder_add_string_value(builder, valid);
    }
}

void gl_json_add_string(JsonBuilder *builder, const char *name, const char *value)
{
    json_builder_set_member_name(builder, name);
    gl_json_add_string_value(builder, value);
}

void gl_json_add_int(JsonBuilder *builder, const char *name, gint64 value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_int_value(builder, value);
}

void gl_json_write(JsonBuilder *builder, FILE *out)
{
    g_autoptr(JsonNode) root = json_builder_get_root(builder);
    g_autoptr(JsonGenerator) generator = json_generator_new();
    json_generator_set_pretty(generator, TRUE);
    json_generator_set_root(generator, root);
    g_autofree char *text = json_generator_to_data(generator, NULL);
    fputs(text, out);
    fputc('\n', out);
}
