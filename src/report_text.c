/* --format text: what a person reads in a terminal or a CI log. */
#include "gemleak/report.h"

#include <string.h>

#define BOLD "\033[1m"
#define RED "\033[1;31m"
#define DIM "\033[2m"
#define RESET "\033[0m"

typedef struct {
    const GlReportContext *context;
    FILE *out;
    GString *line;
} TextState;

/* Returns: (transfer none): @code when colouring, else "". */
static const char *paint(gboolean color, const char *code)
{
    return color ? code : "";
}

/* Target frames are marked " *", the others indented by two spaces, as the
 * reference Ruby tool prints them. */
static void render_stack(GString *out, const GlStack *stack, gboolean color)
{
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->in_target)
            g_string_append_printf(out, "%s *", paint(color, RED));
        else
            g_string_append(out, "  ");
        gl_frame_describe(frame, out);
        g_string_append_printf(out, "%s\n", paint(frame->in_target && color, RESET));
    }
}

/* The places a freed block was used, after the first: one line each. */
static void render_other_accesses(GString *out, const GlFinding *finding)
{
    if (!finding->freed_block || finding->sites == NULL || finding->sites->len < 2)
        return;
    g_string_append(out, "The same freed block was also used at:\n");
    for (guint i = 0; i < finding->sites->len; i++) {
        const GlRecord *site = g_ptr_array_index(finding->sites, i);
        if (site == finding->record)
            continue;
        const GlFrame *at = NULL;
        for (guint f = 0; f < site->stack.n_frames && at == NULL; f++)
            if (site->stack.frames[f].in_target)
                at = &site->stack.frames[f];
        if (at == NULL && site->stack.n_frames > 0)
            at = &site->stack.frames[0];
        g_string_append_printf(out, "  %s: ", site->what);
        if (at != NULL)
            gl_frame_describe(at, out);
        g_string_append_c(out, '\n');
    }
}

static void render_finding(GString *out, const GlFinding *finding, gboolean color,
                           gboolean suppressions, const char *project_root)
{
    const GlRecord *record = finding->record;
    g_autofree char *message = gl_finding_message(finding);
    g_string_append_printf(out, "%s%s%s\n", paint(color, BOLD), message, paint(color, RESET));
    g_autofree char *tests = gl_finding_tests_line(finding, project_root);
    if (tests != NULL)
        g_string_append_printf(out, "%s\n", tests);
    g_autofree char *uncertain = gl_finding_uncertainty(finding);
    if (uncertain != NULL)
        g_string_append_printf(out, "%suncertain: %s. Ruby's debug symbols decide it (Debian and "
                               "Ubuntu: the libruby dbgsym package of the debug archive; or a Ruby "
                               "built with symbols, as ruby-build makes).%s\n",
                               paint(color, DIM), uncertain, paint(color, RESET));
    render_stack(out, &record->stack, color);
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        if (aux->text != NULL)
            g_string_append_printf(out, "%s\n", aux->text);
        render_stack(out, &aux->stack, color);
    }
    render_other_accesses(out, finding);
    if (suppressions) {
        /* Unindented, as --format supp writes it: ready to paste. */
        g_autofree char *block = gl_finding_suppression(finding);
        if (block != NULL)
            g_string_append_printf(out, "%sSuppression for this finding (for suppressions/ruby.supp):%s\n%s",
                                   paint(color, DIM), paint(color, RESET), block);
        else
            g_string_append_printf(out, "%s(Valgrind has no suppression for this kind of error)%s\n",
                                   paint(color, DIM), paint(color, RESET));
    }
}

char *gl_finding_text(const GlFinding *finding, gboolean suppressions, const char *project_root)
{
    GString *out = g_string_new(NULL);
    render_finding(out, finding, FALSE, suppressions, project_root);
    return g_string_free(out, FALSE);
}

static gpointer text_begin(const GlReportContext *context, FILE *out)
{
    TextState *state = g_new0(TextState, 1);
    state->context = context;
    state->out = out;
    state->line = g_string_new(NULL);
    return state;
}

static void text_finding(gpointer data, const GlFinding *finding, guint index)
{
    TextState *state = data;
    g_string_truncate(state->line, 0);
    if (index > 0)
        g_string_append_c(state->line, '\n');
    render_finding(state->line, finding, state->context->color, state->context->suppressions,
                   state->context->project_root);
    fputs(state->line->str, state->out);
}

static void append_count(GString *out, guint64 count, const char *what, gboolean *first)
{
    if (count == 0)
        return;
    g_string_append_printf(out, "%s%" G_GUINT64_FORMAT " %s", *first ? "" : ", ", count, what);
    *first = FALSE;
}

static void text_end(gpointer data)
{
    TextState *state = data;
    const GlReportContext *context = state->context;
    const GlSummary *summary = &context->analysis->summary;
    GString *line = g_string_new(NULL);

    if (context->findings->len > 0)
        fputc('\n', state->out);
    g_string_append_printf(line, "gemleak: %u file%s, %" G_GUINT64_FORMAT " errors read, %u finding%s",
                           summary->files, summary->files == 1 ? "" : "s", summary->errors_seen,
                           context->findings->len, context->findings->len == 1 ? "" : "s");
    guint64 skipped = gl_summary_skipped(summary);
    if (skipped > 0) {
        gboolean first = TRUE;
        g_string_append_printf(line, ", %" G_GUINT64_FORMAT " skipped (", skipped);
        for (guint v = GL_VERDICT_KEEP + 1; v < GL_N_VERDICTS; v++)
            append_count(line, summary->by_verdict[v], gl_verdict_describe((GlVerdict) v), &first);
        append_count(line, summary->repeated, "repeated by a later leak check", &first);
        g_string_append_c(line, ')');
    }
    guint uncertain = 0;
    for (guint i = 0; i < context->findings->len; i++)
        uncertain += !((const GlFinding *) g_ptr_array_index(context->findings, i))->certain;
    if (uncertain > 0)
        g_string_append_printf(line, " (%u uncertain)", uncertain);
    if (context->baseline_known > 0)
        g_string_append_printf(line, ", %u known to the baseline", context->baseline_known);
    if (summary->truncated_files->len > 0)
        g_string_append_printf(line, ", %u truncated file%s", summary->truncated_files->len,
                               summary->truncated_files->len == 1 ? "" : "s");
    fprintf(state->out, "%s\n", line->str);

    if (context->targets != NULL && context->targets[0] != NULL) {
        g_autofree char *targets = g_strjoinv(", ", (char **) context->targets);
        fprintf(state->out, "gemleak: target%s: %s\n", context->targets[1] != NULL ? "s" : "",
                targets);
    }
    if (context->gate != NULL && context->gate->line != NULL)
        fprintf(state->out, "%s%s%s\n",
                paint(state->context->color, context->gate->failed ? RED : BOLD), context->gate->line,
                paint(state->context->color, RESET));

    g_string_free(line, TRUE);
    g_string_free(state->line, TRUE);
    g_free(state);
}

const GlReporter gl_report_text = {
    .name = "text",
    .summary = "findings with their stacks, then a summary (the default)",
    .begin = text_begin,
    .finding = text_finding,
    .end = text_end,
};
