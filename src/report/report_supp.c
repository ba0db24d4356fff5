/* --format supp (--suppressions-out FILE): every finding as a Valgrind
 * suppression (gl_finding_suppression(): the frames up to the last target
 * frame, whatever Ruby called them from), ready for a project's
 * suppressions/ruby.supp, each under a comment that names its finding. */
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"

typedef struct {
    const GlReportContext *context;
    FILE *out;
} SuppState;

static gpointer supp_begin(const GlReportContext *context, FILE *out)
{
    SuppState *state = g_new0(SuppState, 1);
    state->context = context;
    state->out = out;
    g_autofree char *joined = context->targets != NULL && context->targets[0] != NULL
                                  ? g_strjoinv(", ", (char **) context->targets)
                                  : g_strdup("the targets");
    g_autofree char *targets = gl_suppression_line(joined);
    fprintf(out, "# Valgrind suppressions written by gemleak %s for the findings in %s.\n"
                 "# Each silences the finding named above it; keep those you accept in\n"
                 "# your project's suppressions/ruby.supp (gemleak run reads them there).\n",
            GEMLEAK_VERSION, targets);
    return state;
}

static void supp_finding(gpointer data, const GlFinding *finding, guint index)
{
    SuppState *state = data;
    (void) index;
    g_autofree char *block = gl_finding_suppression(finding);
    if (block != NULL) {
        fprintf(state->out, "\n%s", block);
        return;
    }
    g_autofree char *comment = gl_finding_suppression_comment(finding);
    /* growth among them: named, with why no block (wording_supp.c) */
    fprintf(state->out, "\n%s# %s\n", comment, gl_finding_no_suppression(finding));
}

static void supp_end(gpointer data)
{
    SuppState *state = data;
    if (state->context->findings->len == 0)
        fputs("\n# No findings: nothing to suppress.\n", state->out);
    g_free(state);
}

const GlReporter gl_report_supp = {
    .name = "supp",
    .begin = supp_begin,
    .finding = supp_finding,
    .end = supp_end,
};
