/* --format text: what a person reads in a terminal or a CI log: each
 * entry as gl_entry_group() shows it, then a summary. */
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"
#include "gemleak/base/text.h"
#include "gemleak/read/source.h"

#include <string.h>

typedef struct {
    const GlReportContext *context;
    FILE *out;
    GString *line;
    GlEntryStyle style;     /* its sources: the analysis's (the lines a run recorded), or
                             * own_sources */
    gboolean own_sources;
} TextState;

static gpointer text_begin(const GlReportContext *context, FILE *out)
{
    TextState *state = g_new0(TextState, 1);
    state->context = context;
    state->out = out;
    state->line = g_string_new(NULL);
    /* the lines as the run read them, where it recorded them */
    state->own_sources = context->analysis == NULL || context->analysis->sources == NULL;
    state->style = (GlEntryStyle) {
        .color = context->color,
        .suppressions = context->suppressions,
        .frames_after = context->frames_after,
        .sources = state->own_sources ? gl_sources_new() : context->analysis->sources,
        .project_root = context->project_root,
    };
    return state;
}

static void text_finding(gpointer data, const GlFinding *finding, guint index)
{
    TextState *state = data;
    g_string_truncate(state->line, 0);
    if (index > 0)
        g_string_append_c(state->line, '\n');
    gl_entry_finding(state->line, finding, &state->style);
    fputs(state->line->str, state->out);
}

static void text_group(gpointer data, const GlGroup *group, guint index)
{
    TextState *state = data;
    g_string_truncate(state->line, 0);
    if (index > 0)
        g_string_append_c(state->line, '\n');
    gl_entry_group(state->line, group, &state->style);
    fputs(state->line->str, state->out);
}

static void append_count(GString *out, guint64 count, const char *what, gboolean *first)
{
    if (count == 0)
        return;
    g_string_append_printf(out, "%s%" G_GUINT64_FORMAT " %s", *first ? "" : ", ", count, what);
    *first = FALSE;
}

/* Appends the summary's first line: the processes checked, the errors
 * read, the findings and their groups, what the baseline knew and what
 * was skipped, and why. */
static void append_summary(GString *out, const GlReportContext *context)
{
    const GlSummary *summary = &context->analysis->summary;
    /* Every error read is an occurrence of a finding, known to the
     * baseline, or skipped for one reason: the numbers add up. */
    guint64 occurrences = 0, all_occurrences = 0;
    guint uncertain = 0;
    gl_report_counts(context, &occurrences, &all_occurrences, &uncertain);
    /* processes, not files: an engine that writes nothing for a clean
     * process (or little) has checked more than its files show */
    guint clean = gl_report_clean_processes(context);
    g_string_append_printf(out, "gemleak: %u process%s checked", summary->processes,
                           summary->processes == 1 ? "" : "es");
    if (clean > 0 && clean == summary->processes)
        g_string_append(out, clean == 1 ? " (clean)" : " (all clean)");
    else if (clean > 0)
        g_string_append_printf(out, " (%u clean)", clean);
    g_string_append_printf(out, ", %" G_GUINT64_FORMAT " error%s read: ", summary->errors_seen,
                           summary->errors_seen == 1 ? "" : "s");
    /* Growth (--growth) is counted apart: a series of one site over one
     * test's repetitions, no occurrence of a leak or an error. */
    guint grew_sites = 0;
    guint grew = gl_report_growth_count(context->findings, &grew_sites);
    g_autoptr(GPtrArray) ordinary = g_ptr_array_new();
    guint64 ordinary_occurrences = 0;
    guint ordinary_uncertain = 0;
    for (guint i = 0; i < context->findings->len; i++) {
        GlFinding *finding = g_ptr_array_index(context->findings, i);
        if (finding->growth != NULL)
            continue;
        g_ptr_array_add(ordinary, finding);
        ordinary_occurrences += finding->occurrences;
        ordinary_uncertain += !finding->certain;
    }
    if (ordinary->len > 0 || grew == 0)
        g_string_append_printf(out, "%u finding%s", ordinary->len, ordinary->len == 1 ? "" : "s");
    g_autoptr(GPtrArray) groups = gl_findings_group(ordinary);
    if (groups->len < ordinary->len)
        g_string_append_printf(out, " in %u group%s", groups->len, groups->len == 1 ? "" : "s");
    if (ordinary->len > 0) {
        g_string_append_printf(out, " (%" G_GUINT64_FORMAT " occurrence%s", ordinary_occurrences,
                               ordinary_occurrences == 1 ? "" : "s");
        if (ordinary_uncertain > 0)
            g_string_append_printf(out, ", %u uncertain", ordinary_uncertain);
        g_string_append_c(out, ')');
    }
    if (grew > 0) {
        g_string_append_printf(out, "%s%u site%s grew", ordinary->len > 0 ? ", " : "", grew_sites,
                               grew_sites == 1 ? "" : "s");
        /* a site that grew in several tests is a finding in each */
        guint grew_uncertain = uncertain - ordinary_uncertain;
        if (grew > grew_sites)
            g_string_append_printf(out, " (%u findings%s", grew, grew_uncertain > 0 ? ", " : ")");
        else if (grew_uncertain > 0)
            g_string_append(out, " (");
        if (grew_uncertain > 0)
            g_string_append_printf(out, "%u uncertain)", grew_uncertain);
    }
    if (context->baseline_known > 0) {
        guint64 known = all_occurrences - occurrences;
        g_string_append_printf(out, ", %u known to the baseline (%" G_GUINT64_FORMAT
                               " occurrence%s)", context->baseline_known, known,
                               known == 1 ? "" : "s");
    }
    guint64 skipped = gl_summary_skipped(summary);
    if (skipped > 0) {
        gboolean first = TRUE;
        g_string_append_printf(out, ", %" G_GUINT64_FORMAT " skipped (", skipped);
        for (guint v = GL_VERDICT_KEEP + 1; v < GL_N_VERDICTS; v++) {
            guint64 count = summary->by_verdict[v];
            append_count(out, count, gl_verdict_describe((GlVerdict) v, count), &first);
        }
        append_count(out, summary->repeated, "repeated by a later leak check", &first);
        append_count(out, summary->inherited, "inherited from the parent process", &first);
        g_string_append_c(out, ')');
    }
    if (summary->truncated_files->len > 0)
        g_string_append_printf(out, ", %u truncated file%s", summary->truncated_files->len,
                               summary->truncated_files->len == 1 ? "" : "s");
}

/* The lines after the summary: the targets, Ruby's freeing at exit, the
 * gate's line and run's exit status (unless said elsewhere). */
static void write_verdict(FILE *out, const GlReportContext *context)
{
    const GlSummary *summary = &context->analysis->summary;
    if (context->targets != NULL && context->targets[0] != NULL) {
        g_autofree char *joined = g_strjoinv(", ", (char **) context->targets);
        g_autofree char *targets = gl_text_escape(joined);
        fprintf(out, "gemleak: target%s: %s\n", context->targets[1] != NULL ? "s" : "", targets);
    }
    if (summary->free_at_exit > 0)
        fprintf(out, "gemleak: Ruby freed its own memory at exit (RUBY_FREE_AT_EXIT) in "
                "%u of %u process%s: there, what the extension lost of what a Ruby API allocated is "
                "its own (gemleak(1), RULES, 2)\n", summary->free_at_exit, summary->processes,
                summary->processes == 1 ? "" : "es");
    if (summary->recent_unkept > 0)
        fprintf(out, "gemleak: warning: in %u of %u process%s the allocation front could not keep "
                "the extension's blocks from addresses freed of late (its shadow, 256 GiB of "
                "address space, could not be mapped: ulimit -v, or strict overcommit): a block "
                "lost at such an address may read as reachable where a stale word of Ruby's still "
                "names it; the Valgrind engine has no such gap (gemleak(1), WHAT EACH ENGINE "
                "SEES)\n", summary->recent_unkept, summary->processes,
                summary->processes == 1 ? "" : "es");
    /* The gate's line names files (--write-baseline's) */
    if (context->gate != NULL && context->gate->line != NULL && !context->verdict_elsewhere) {
        g_autofree char *gate = gl_text_escape(context->gate->line);
        const char *paint = context->gate->failed ? GL_PAINT_RED : GL_PAINT_BOLD;
        fprintf(out, "%s%s%s\n", gl_paint(context->color, paint), gate,
                gl_paint(context->color, GL_PAINT_RESET));
    }
    if (context->exit_line != NULL && !context->verdict_elsewhere) {
        g_autofree char *exit_line = gl_text_escape(context->exit_line);
        fprintf(out, "%s\n", exit_line);
    }
}

static void text_end(gpointer data)
{
    TextState *state = data;
    const GlReportContext *context = state->context;
    if (context->findings->len > 0)
        fputc('\n', state->out);
    GString *line = g_string_new(NULL);
    append_summary(line, context);
    fprintf(state->out, "%s\n", line->str);
    g_string_free(line, TRUE);
    write_verdict(state->out, context);
    g_string_free(state->line, TRUE);
    if (state->own_sources)
        gl_sources_free(state->style.sources);
    g_free(state);
}

const GlReporter gl_report_text = {
    .name = "text",
    .begin = text_begin,
    .finding = text_finding,
    .group = text_group,
    .end = text_end,
};
