/* --format github: GitHub Actions workflow commands, one annotation a
 * finding, at its first target frame relative to the project root.
 *
 *   ::error file=ext/tally/tally.c,line=13,title=...::message%0Aframes
 *
 * A group of findings (group.h) is one annotation, at its first finding,
 * with its totals and its first call paths.
 *
 * GitHub shows at most 10 error annotations (and 10 warnings) a step, so
 * the findings come largest first and a closing line says how many more
 * there were. Findings that do not fail the gate are warnings. */
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/project_paths.h"

#include <string.h>

#define MAX_ANNOTATIONS 10

typedef struct {
    const GlReportContext *context;
    FILE *out;
    guint errors;
    guint warnings;
    guint left_out;
} GithubState;

/* GitHub's rules (actions/toolkit, command.ts): in a message, %, CR and LF
 * are escaped; in a property also ':' and ','. GitHub unescapes nothing
 * else, so any other control character (an escape in a test's name) would
 * reach the log, and the terminal that shows it, raw: it is written as the
 * text report writes it (\x1b). */
static void append_escaped(GString *out, const char *text, gboolean property)
{
    g_autofree char *valid = g_utf8_make_valid(text, -1);
    for (const char *c = valid; *c != '\0'; c = g_utf8_next_char(c)) {
        gunichar u = g_utf8_get_char(c);
        switch (u) {
        case '%': g_string_append(out, "%25"); break;
        case '\r': g_string_append(out, "%0D"); break;
        case '\n': g_string_append(out, "%0A"); break;
        case ':':
            g_string_append(out, property ? "%3A" : ":");
            break;
        case ',':
            g_string_append(out, property ? "%2C" : ",");
            break;
        default: {
            g_autofree char *one = g_strndup(c, (gsize) (g_utf8_next_char(c) - c));
            gl_text_append_escaped(out, one, FALSE);
            break;
        }
        }
    }
}

static gpointer github_begin(const GlReportContext *context, FILE *out)
{
    GithubState *state = g_new0(GithubState, 1);
    state->context = context;
    state->out = out;
    /* First, and one annotation for them all: what could not be read may
     * hold findings, so the step must not read as a pass. */
    const GPtrArray *problems = context->analysis->problems;
    if (problems->len > 0) {
        g_autoptr(GString) body = g_string_new(NULL);
        for (guint i = 0; i < problems->len; i++)
            g_string_append_printf(body, "%s%s", i > 0 ? "\n" : "",
                                   ((const GError *) g_ptr_array_index(problems, i))->message);
        g_autoptr(GString) line = g_string_new("::error title=gemleak: ");
        append_escaped(line, context->trouble != NULL ? context->trouble
                                                      : "an input could not all be read", TRUE);
        g_string_append(line, "::");
        append_escaped(line, body->str, FALSE);
        fprintf(out, "%s\n", line->str);
    }
    return state;
}

/* The frames of @stack that matter, up to its last target frame, marked as
 * in the text report. */
static void append_relevant_frames(GString *body, const GlStack *stack, const char *project_root)
{
    guint n = gl_stack_relevant_frames(stack);
    gboolean own_source = gl_stack_has_own_source(stack);
    for (guint i = 0; i < n; i++) {
        const GlFrame *frame = &stack->frames[i];
        g_string_append(body, !frame->in_target ? "\n  "
                              : gl_frame_is_own(frame, own_source) ? "\n *" : "\n ~");
        gl_frame_describe(&stack->frames[i], project_root, body);
    }
}

/* The message: Valgrind's, then the frames that matter and any further
 * parts; the log has the whole stacks. */
static void append_body(GString *body, const GlFinding *finding, gboolean heading,
                        const char *project_root)
{
    const GlRecord *record = finding->record;
    g_autofree char *message = gl_finding_message(finding);
    if (heading && !finding->certain)
        g_string_append(body, "uncertain: ");
    g_string_append(body, message);
    g_autofree char *tests = gl_finding_tests_line(finding, project_root);
    if (tests != NULL)
        g_string_append_printf(body, "\n%s", tests);
    g_autofree char *uncertain = gl_finding_uncertainty(finding);
    g_autofree char *advice = gl_finding_uncertainty_advice(finding);
    if (uncertain != NULL)
        g_string_append_printf(body, "\nuncertain: %s. %s", uncertain, advice);
    append_relevant_frames(body, &record->stack, project_root);
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        if (aux->text != NULL)
            g_string_append_printf(body, "\n%s", aux->text);
        append_relevant_frames(body, &aux->stack, project_root);
    }
}

/* One annotation: @group's, or @finding's alone when @group is NULL. */
static void annotate(GithubState *state, const GlFinding *finding, const GlGroup *group)
{
    gboolean error = group != NULL ? gl_report_group_fails(state->context, group)
                                   : gl_report_finding_fails(state->context, finding);
    guint *count = error ? &state->errors : &state->warnings;
    if (*count >= MAX_ANNOTATIONS) {
        state->left_out++;
        return;
    }
    (*count)++;

    GString *line = g_string_new(error ? "::error " : "::warning ");
    const GlFrame *frame = gl_finding_location(finding);
    gboolean under_root = FALSE;
    g_autofree char *path = gl_frame_place(frame, state->context->project_root, &under_root);
    /* GitHub places a file annotation only on a path in the repository. */
    if (path != NULL && under_root) {
        g_string_append(line, "file=");
        append_escaped(line, path, TRUE);
        if (frame->line > 0)
            g_string_append_printf(line, ",line=%u", frame->line);
        g_string_append_c(line, ',');
    }
    g_autofree char *title = group != NULL ? gl_group_title(group, state->context->project_root, TRUE)
                                           : gl_finding_title(finding, state->context->project_root);
    g_autofree char *full_title = g_strconcat("gemleak: ", title, NULL);
    g_string_append(line, "title=");
    append_escaped(line, full_title, TRUE);
    g_string_append(line, "::");
    g_autoptr(GString) body = g_string_new(NULL);
    const char *root = state->context->project_root;
    if (group != NULL && group->findings->len > 1) {
        g_autofree char *message = gl_group_heading(group);
        g_autofree char *reason = gl_group_reason(group);
        g_string_append_printf(body, "%s\n%s", message, reason);
        for (guint w = 0; group->ways->len > 1 && w < group->ways->len; w++) {
            g_autofree char *way = gl_group_way_line(group, w, root);
            g_string_append_printf(body, "\n%s", way);
        }
        g_string_append(body, "\ncall path 1: ");
        append_body(body, finding, FALSE, root);
        guint shown = MIN(group->findings->len, GL_GROUP_PATHS_SHOWN);
        for (guint i = 1; i < shown; i++) {
            const GlFinding *other = g_ptr_array_index(group->findings, i);
            g_autofree char *one = gl_finding_path_line(other, root);
            g_string_append_printf(body, "\ncall path %u: %s", i + 1, one);
        }
        if (group->findings->len > shown)
            g_string_append_printf(body, "\nand %u more call paths", group->findings->len - shown);
    } else {
        append_body(body, finding, TRUE, root);
    }
    g_autofree char *owned = group != NULL ? gl_group_owned_heading(group) : NULL;
    if (owned != NULL) {
        g_string_append_printf(body, "\n%s", owned);
        guint shown = MIN(group->owned->len, GL_GROUP_PATHS_SHOWN);
        for (guint i = 0; i < shown; i++) {
            g_autofree char *one = gl_group_owned_line(group, i, root);
            g_string_append_printf(body, "\n%s", one);
        }
        if (group->owned->len > shown)
            g_string_append_printf(body, "\nand %u more owned blocks", group->owned->len - shown);
    }
    append_escaped(line, body->str, FALSE);
    fprintf(state->out, "%s\n", line->str);
    g_string_free(line, TRUE);
}

static void github_finding(gpointer data, const GlFinding *finding, guint index)
{
    (void) index;
    annotate(data, finding, NULL);
}

static void github_group(gpointer data, const GlGroup *group, guint index)
{
    (void) index;
    annotate(data, g_ptr_array_index(group->findings, 0), group);
}

static void github_end(gpointer data)
{
    GithubState *state = data;
    const GlReportContext *context = state->context;
    if (state->left_out > 0)
        fprintf(state->out, "::warning title=gemleak::%u more finding%s not shown as annotations "
                "(GitHub shows %d a step): the gemleak report has them all\n",
                state->left_out, state->left_out == 1 ? " is" : "s are", MAX_ANNOTATIONS);
    if (context->gate != NULL && context->gate->line != NULL && !context->verdict_elsewhere) {
        g_autofree char *gate = gl_text_escape(context->gate->line);
        fprintf(state->out, "%s\n", gate);
    }
    g_free(state);
}

const GlReporter gl_report_github = {
    .name = "github",
    .begin = github_begin,
    .finding = github_finding,
    .group = github_group,
    .end = github_end,
};
