/* The list of report formats (the registry), and a whole report written
 * through one of them. */
#include "gemleak/report/report.h"
#include "gemleak/base/errors.h"

#include <errno.h>
#include <string.h>

/* The formats, each defined in its src/report/report_<name>.c; --format's
 * names in the order --help lists them. */
extern const GlReporter gl_report_json;
extern const GlReporter gl_report_junit;
extern const GlReporter gl_report_sarif;
extern const GlReporter gl_report_github;

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

const char *gl_reporter_names(void)
{
    static char *names;
    if (names == NULL) {
        GString *joined = g_string_new(NULL);
        for (const GlReporter *const *r = reporters; *r != NULL; r++)
            g_string_append_printf(joined, "%s%s", joined->len > 0 ? ", " : "", (*r)->name);
        names = g_string_free(joined, FALSE);
    }
    return names;
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
    if (reporter->group != NULL) {
        g_autoptr(GPtrArray) groups = gl_findings_group(context->findings);
        for (guint i = 0; i < groups->len; i++)
            reporter->group(state, g_ptr_array_index(groups, i), i);
    } else {
        for (guint i = 0; i < context->findings->len; i++)
            reporter->finding(state, g_ptr_array_index(context->findings, i), i);
    }
    reporter->end(state);
    if (fflush(out) != 0 || ferror(out)) {
        int saved = errno;
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot write the %s report: %s",
                    out_name, reporter->name, g_strerror(saved));
        return FALSE;
    }
    return TRUE;
}
