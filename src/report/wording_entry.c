/* Findings and groups as the text report shows them: the text report's
 * entries, and JUnit's failures (gemleak/report/wording.h). */
#include "gemleak/report/wording.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/project_paths.h"

#include <string.h>

const char *gl_paint(gboolean color, const char *code)
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
            g_string_append_printf(out, "%s %c", gl_paint(color, GL_PAINT_RED),
                                   gl_frame_is_own(frame, own_source) ? '*' : '~');
        else
            g_string_append(out, "  ");
        describe_frame(out, frame, project_root);
        g_string_append_printf(out, "%s\n", gl_paint(frame->in_target && color, GL_PAINT_RESET));
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
                           const GlEntryStyle *style)
{
    gboolean color = style->color;
    guint after = style->frames_after;
    const char *project_root = style->project_root;
    const char *dim = gl_paint(color, GL_PAINT_DIM), *reset = gl_paint(color, GL_PAINT_RESET);
    const GlRecord *record = finding->record;
    g_autofree char *message = escaped(gl_finding_message(finding));
    g_string_append_printf(out, "%s%s%s%s\n", gl_paint(color, GL_PAINT_BOLD),
                           heading && !finding->certain ? "uncertain: " : "", message,
                           gl_paint(color, GL_PAINT_RESET));
    g_autofree char *tests = gl_finding_tests_line(finding, project_root);
    if (tests != NULL)
        append_line(out, tests);
    g_autofree char *uncertain = escaped(gl_finding_uncertainty(finding));
    g_autofree char *advice = escaped(gl_finding_uncertainty_advice(finding));
    if (uncertain != NULL)
        g_string_append_printf(out, "%suncertain: %s. %s%s\n", dim, uncertain, advice, reset);
    if (style->sources != NULL)
        render_source_line(out, finding, style->sources);
    render_stack(out, &record->stack, color, after, project_root);
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        if (aux->text != NULL)
            append_line(out, aux->text);
        render_stack(out, &aux->stack, color, after, project_root);
    }
    render_other_accesses(out, finding, project_root);
    if (style->suppressions) {
        /* Unindented, as --format supp writes it: ready to paste. */
        g_autofree char *block = gl_finding_suppression(finding);
        if (block != NULL)
            g_string_append_printf(out, "%sSuppression for this finding (for "
                                   "suppressions/ruby.supp):%s\n%s", dim, reset, block);
        else
            g_string_append_printf(out, "%s%s%s\n", dim, gl_finding_no_suppression(finding),
                                   reset);
    }
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
void gl_entry_group(GString *out, const GlGroup *group, const GlEntryStyle *style)
{
    const GlFinding *first = g_ptr_array_index(group->findings, 0);
    const char *project_root = style->project_root;
    if (group->findings->len == 1) {
        render_finding(out, first, TRUE, style);
        render_owned(out, group, project_root);
        return;
    }
    g_autofree char *message = escaped(gl_group_heading(group));
    g_string_append_printf(out, "%s%s%s\n", gl_paint(style->color, GL_PAINT_BOLD), message,
                           gl_paint(style->color, GL_PAINT_RESET));
    g_autofree char *reason = gl_group_reason(group);
    if (reason != NULL)
        append_line(out, reason);
    for (guint w = 0; group->ways->len > 1 && w < group->ways->len; w++) {
        g_autofree char *way = gl_group_way_line(group, w, project_root);
        append_line(out, way);
    }
    g_string_append(out, "call path 1: ");
    render_finding(out, first, FALSE, style);
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

void gl_entry_finding(GString *out, const GlFinding *finding, const GlEntryStyle *style)
{
    render_finding(out, finding, TRUE, style);
}

char *gl_group_text(const GlGroup *group, gboolean suppressions, const char *project_root)
{
    GString *out = g_string_new(NULL);
    const GlEntryStyle style = { .suppressions = suppressions, .frames_after = G_MAXUINT,
                                 .project_root = project_root };
    gl_entry_group(out, group, &style);
    return g_string_free(out, FALSE);
}
