/* --format text: what a person reads in a terminal or a CI log. */
#include "gemleak/report/report.h"
#include "gemleak/base/text.h"
#include "gemleak/read/source.h"
#include "gemleak/judge/project_paths.h"

#include <string.h>

#define BOLD "\033[1m"
#define RED "\033[1;31m"
#define DIM "\033[2m"
#define RESET "\033[0m"

typedef struct {
    const GlReportContext *context;
    FILE *out;
    GString *line;
    GlSources *sources;     /* the analysis's (the lines a run recorded), or own_sources */
    gboolean own_sources;
} TextState;

/* Returns: (transfer none): @code when colouring, else "". */
static const char *paint(gboolean color, const char *code)
{
    return color ? code : "";
}

/* Appends @frame as gl_frame_describe() does, its names escaped. */
static void describe_frame(GString *out, const GlFrame *frame, const char *project_root)
{
    g_autoptr(GString) described = g_string_new(NULL);
    gl_frame_describe(frame, project_root, described);
    gl_text_append_escaped(out, described->str, FALSE);
}

/* Returns: (transfer full) (nullable): @text escaped; takes @text. */
static char *escaped(char *text)
{
    if (text == NULL)
        return NULL;
    char *shown = gl_text_escape(text);
    g_free(text);
    return shown;
}

/* Appends @text escaped, then a newline. */
static void append_line(GString *out, const char *text)
{
    gl_text_append_escaped(out, text, FALSE);
    g_string_append_c(out, '\n');
}

/* Target frames are marked " *", the others indented by two spaces, as the
 * reference Ruby tool prints them; those of the target that are not the
 * project's own source (a runtime linked in, a header's code:
 * project_paths.h) " ~". Unless @after is G_MAXUINT (--frames
 * all), a run of unnamed frames of one object is one line, and the stack
 * stops @after frames past its outermost target frame: what a reader needs
 * is the allocation, the extension, and where it was called from. */
static void render_stack(GString *out, const GlStack *stack, gboolean color, guint after,
                         const char *project_root)
{
    gboolean all = after == G_MAXUINT;
    gboolean own_source = gl_stack_has_own_source(stack);
    guint end = stack->n_frames;
    if (!all) {
        guint relevant = 0;
        for (guint i = 0; i < stack->n_frames; i++)
            if (stack->frames[i].in_target)
                relevant = i + 1;
        end = MIN(stack->n_frames, (relevant > 0 ? relevant : 1) + after);
    }
    for (guint i = 0; i < end; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (!all && frame->fn == NULL && !frame->in_target && frame->obj != NULL) {
            guint run = 1;
            while (i + run < end && stack->frames[i + run].fn == NULL &&
                   !stack->frames[i + run].in_target &&
                   g_strcmp0(stack->frames[i + run].obj, frame->obj) == 0)
                run++;
            if (run > 1) {
                g_string_append_printf(out, "  ... %u frames in ", run);
                append_line(out, gl_base_name(frame->obj));
                i += run - 1;
                continue;
            }
        }
        if (frame->in_target)
            g_string_append_printf(out, "%s %c", paint(color, RED),
                                   gl_frame_is_own(frame, own_source) ? '*' : '~');
        else
            g_string_append(out, "  ");
        describe_frame(out, frame, project_root);
        g_string_append_printf(out, "%s\n", paint(frame->in_target && color, RESET));
    }
    if (end < stack->n_frames)
        g_string_append_printf(out, "  ... %u more frame%s\n", stack->n_frames - end,
                               stack->n_frames - end == 1 ? "" : "s");
}

/* The source line of the place the finding is reported at, as compilers
 * show it, when the file can be read. */
static void render_source_line(GString *out, const GlFinding *finding, GlSources *sources)
{
    const GlFrame *at = gl_finding_location(finding);
    g_autofree char *path = gl_frame_path(at);
    const char *text = path != NULL ? gl_sources_line(sources, path, at->line) : NULL;
    if (text == NULL)
        return;
    g_string_append_printf(out, " %4u | ", at->line);
    gl_text_append_escaped(out, text, TRUE);
    g_string_append_c(out, '\n');
}

/* The places a freed block was used, after the first: one line each. */
static void render_other_accesses(GString *out, const GlFinding *finding,
                                  const char *project_root)
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
        g_string_append(out, "  ");
        gl_text_append_escaped(out, site->what, FALSE);
        g_string_append(out, ": ");
        if (at != NULL)
            describe_frame(out, at, project_root);
        g_string_append_c(out, '\n');
    }
}

/* A finding: its message (headed "uncertain: " when it is the entry's
 * heading, @heading, and not certain), its tests, why it is uncertain,
 * its source line and stacks. */
static void render_finding(GString *out, const GlFinding *finding, gboolean heading,
                           gboolean color, gboolean suppressions, guint after, GlSources *sources,
                           const char *project_root)
{
    const GlRecord *record = finding->record;
    g_autofree char *message = escaped(gl_finding_message(finding));
    g_string_append_printf(out, "%s%s%s%s\n", paint(color, BOLD),
                           heading && !finding->certain ? "uncertain: " : "", message,
                           paint(color, RESET));
    g_autofree char *tests = gl_finding_tests_line(finding, project_root);
    if (tests != NULL)
        append_line(out, tests);
    g_autofree char *uncertain = escaped(gl_finding_uncertainty(finding));
    g_autofree char *advice = escaped(gl_finding_uncertainty_advice(finding));
    if (uncertain != NULL)
        g_string_append_printf(out, "%suncertain: %s. %s%s\n", paint(color, DIM), uncertain,
                               advice, paint(color, RESET));
    if (sources != NULL)
        render_source_line(out, finding, sources);
    render_stack(out, &record->stack, color, after, project_root);
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        if (aux->text != NULL)
            append_line(out, aux->text);
        render_stack(out, &aux->stack, color, after, project_root);
    }
    render_other_accesses(out, finding, project_root);
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

static gpointer text_begin(const GlReportContext *context, FILE *out)
{
    TextState *state = g_new0(TextState, 1);
    state->context = context;
    state->out = out;
    state->line = g_string_new(NULL);
    /* the lines as the run read them, where it recorded them */
    state->own_sources = context->analysis == NULL || context->analysis->sources == NULL;
    state->sources = state->own_sources ? gl_sources_new() : context->analysis->sources;
    return state;
}

static void text_finding(gpointer data, const GlFinding *finding, guint index)
{
    TextState *state = data;
    g_string_truncate(state->line, 0);
    if (index > 0)
        g_string_append_c(state->line, '\n');
    render_finding(state->line, finding, TRUE, state->context->color, state->context->suppressions,
                   state->context->frames_after, state->sources, state->context->project_root);
    fputs(state->line->str, state->out);
}

/* What a group's structures owned: a heading, the first blocks a line
 * each, and how many more. */
static void render_owned(GString *out, const GlGroup *group, const char *project_root)
{
    g_autofree char *heading = gl_group_owned_heading(group);
    if (heading == NULL)
        return;
    append_line(out, heading);
    guint shown = MIN(group->owned->len, GL_GROUP_PATHS_SHOWN);
    for (guint i = 0; i < shown; i++) {
        g_autofree char *line = gl_group_owned_line(group, i, project_root);
        append_line(out, line);
    }
    if (group->owned->len > shown)
        g_string_append_printf(out, "and %u more owned block%s (--format json lists them all)\n",
                               group->owned->len - shown,
                               group->owned->len - shown == 1 ? "" : "s");
}

/* A group of several findings: its totals and why it is one, its ways in,
 * its first call path as a finding of its own shows, the next ones a line
 * each, and how many more: 30 call paths of one bug read in 20 lines, not
 * 280; then what it owned. */
static void render_group(GString *out, const GlGroup *group, gboolean color,
                         gboolean suppressions, guint after, GlSources *sources,
                         const char *project_root)
{
    const GlFinding *first = g_ptr_array_index(group->findings, 0);
    if (group->findings->len == 1) {
        render_finding(out, first, TRUE, color, suppressions, after, sources, project_root);
        render_owned(out, group, project_root);
        return;
    }
    g_autofree char *message = escaped(gl_group_heading(group));
    g_string_append_printf(out, "%s%s%s\n", paint(color, BOLD), message, paint(color, RESET));
    g_autofree char *reason = gl_group_reason(group);
    if (reason != NULL)
        append_line(out, reason);
    for (guint w = 0; group->ways->len > 1 && w < group->ways->len; w++) {
        g_autofree char *way = gl_group_way_line(group, w, project_root);
        append_line(out, way);
    }
    g_string_append(out, "call path 1: ");
    render_finding(out, first, FALSE, color, suppressions, after, sources, project_root);
    guint shown = MIN(group->findings->len, GL_GROUP_PATHS_SHOWN);
    for (guint i = 1; i < shown; i++) {
        const GlFinding *finding = g_ptr_array_index(group->findings, i);
        g_autofree char *path = gl_finding_path_line(finding, project_root);
        g_string_append_printf(out, "call path %u: ", i + 1);
        append_line(out, path);
    }
    if (group->findings->len > shown)
        g_string_append_printf(out, "and %u more call path%s (--format json lists them all)\n",
                               group->findings->len - shown,
                               group->findings->len - shown == 1 ? "" : "s");
    render_owned(out, group, project_root);
}

char *gl_group_text(const GlGroup *group, gboolean suppressions, const char *project_root)
{
    GString *out = g_string_new(NULL);
    render_group(out, group, FALSE, suppressions, G_MAXUINT, NULL, project_root);
    return g_string_free(out, FALSE);
}

static void text_group(gpointer data, const GlGroup *group, guint index)
{
    TextState *state = data;
    const GlReportContext *context = state->context;
    g_string_truncate(state->line, 0);
    if (index > 0)
        g_string_append_c(state->line, '\n');
    render_group(state->line, group, context->color, context->suppressions,
                 context->frames_after, state->sources, context->project_root);
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
    /* Every error read is an occurrence of a finding, known to the
     * baseline, or skipped for one reason: the numbers add up. */
    guint64 occurrences = 0, all_occurrences = 0;
    guint uncertain = 0;
    gl_report_counts(context, &occurrences, &all_occurrences, &uncertain);
    /* processes, not files: an engine that writes nothing for a clean
     * process (or little) has checked more than its files show */
    guint clean = gl_report_clean_processes(context);
    g_string_append_printf(line, "gemleak: %u process%s checked", summary->processes,
                           summary->processes == 1 ? "" : "es");
    if (clean > 0 && clean == summary->processes)
        g_string_append(line, clean == 1 ? " (clean)" : " (all clean)");
    else if (clean > 0)
        g_string_append_printf(line, " (%u clean)", clean);
    g_string_append_printf(line, ", %" G_GUINT64_FORMAT " error%s read: %u finding%s",
                           summary->errors_seen, summary->errors_seen == 1 ? "" : "s",
                           context->findings->len, context->findings->len == 1 ? "" : "s");
    g_autoptr(GPtrArray) groups = gl_findings_group(context->findings);
    if (groups->len < context->findings->len)
        g_string_append_printf(line, " in %u group%s", groups->len, groups->len == 1 ? "" : "s");
    if (context->findings->len > 0) {
        g_string_append_printf(line, " (%" G_GUINT64_FORMAT " occurrence%s", occurrences,
                               occurrences == 1 ? "" : "s");
        if (uncertain > 0)
            g_string_append_printf(line, ", %u uncertain", uncertain);
        g_string_append_c(line, ')');
    }
    if (context->baseline_known > 0) {
        guint64 known = all_occurrences - occurrences;
        g_string_append_printf(line, ", %u known to the baseline (%" G_GUINT64_FORMAT
                               " occurrence%s)", context->baseline_known, known,
                               known == 1 ? "" : "s");
    }
    guint64 skipped = gl_summary_skipped(summary);
    if (skipped > 0) {
        gboolean first = TRUE;
        g_string_append_printf(line, ", %" G_GUINT64_FORMAT " skipped (", skipped);
        for (guint v = GL_VERDICT_KEEP + 1; v < GL_N_VERDICTS; v++) {
            guint64 count = summary->by_verdict[v];
            append_count(line, count, gl_verdict_describe((GlVerdict) v, count), &first);
        }
        append_count(line, summary->repeated, "repeated by a later leak check", &first);
        append_count(line, summary->inherited, "inherited from the parent process", &first);
        g_string_append_c(line, ')');
    }
    if (summary->truncated_files->len > 0)
        g_string_append_printf(line, ", %u truncated file%s", summary->truncated_files->len,
                               summary->truncated_files->len == 1 ? "" : "s");
    fprintf(state->out, "%s\n", line->str);

    if (context->targets != NULL && context->targets[0] != NULL) {
        g_autofree char *targets = escaped(g_strjoinv(", ", (char **) context->targets));
        fprintf(state->out, "gemleak: target%s: %s\n", context->targets[1] != NULL ? "s" : "",
                targets);
    }
    if (summary->free_at_exit > 0)
        fprintf(state->out, "gemleak: Ruby freed its own memory at exit (RUBY_FREE_AT_EXIT) in "
                "%u of %u process%s: there, what the extension lost of what a Ruby API allocated is "
                "its own (gemleak(1), RULES, 2)\n", summary->free_at_exit, summary->processes,
                summary->processes == 1 ? "" : "es");
    /* The gate's line names files (--write-baseline's) */
    if (context->gate != NULL && context->gate->line != NULL && !context->verdict_elsewhere) {
        g_autofree char *gate = gl_text_escape(context->gate->line);
        fprintf(state->out, "%s%s%s\n",
                paint(state->context->color, context->gate->failed ? RED : BOLD), gate,
                paint(state->context->color, RESET));
    }
    if (context->exit_line != NULL && !context->verdict_elsewhere) {
        g_autofree char *exit_line = gl_text_escape(context->exit_line);
        fprintf(state->out, "%s\n", exit_line);
    }

    g_string_free(line, TRUE);
    g_string_free(state->line, TRUE);
    if (state->own_sources)
        gl_sources_free(state->sources);
    g_free(state);
}

const GlReporter gl_report_text = {
    .name = "text",
    .summary = "findings with their stacks, then a summary (the default)",
    .begin = text_begin,
    .finding = text_finding,
    .group = text_group,
    .end = text_end,
};
