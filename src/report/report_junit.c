/* --format junit: one test suite, one test case a group of findings
 * (group.h: a finding alone, or the call paths of one bug; failed when it
 * fails the gate, skipped when it does not), an error case when Valgrind's
 * XML could not all be read, else a passing case when there are none. It follows the Ant JUnit schema that most consumers read
 * (tests/schemas/junit.xsd), which allows no file or line attribute: the
 * location is in the test case's name. Written with libxml2's writer. */
#include "gemleak/base/xml.h"
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"

#include <string.h>

#include <libxml/xmlwriter.h>

typedef struct {
    const GlReportContext *context;
    FILE *out;
    xmlBufferPtr buffer;
    xmlTextWriterPtr writer;
} JunitState;

/* XML 1.0 allows no control character but tab, newline and carriage
 * return, and the writer escapes only markup: anything else is replaced.
 * Returns: (transfer full). */
static char *xml_safe(const char *text)
{
    char *valid = g_utf8_make_valid(text != NULL ? text : "", -1);
    for (char *c = valid; *c != '\0'; c++)
        if ((unsigned char) *c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r')
            *c = '?';
    return valid;
}

static void attribute(xmlTextWriterPtr writer, const char *name, const char *value)
{
    g_autofree char *safe = xml_safe(value);
    gl_xml()->TextWriterWriteAttribute(writer, BAD_CAST name, BAD_CAST safe);
}

static void text(xmlTextWriterPtr writer, const char *value)
{
    g_autofree char *safe = xml_safe(value);
    gl_xml()->TextWriterWriteString(writer, BAD_CAST safe);
}

static guint count_failing(const GlReportContext *context, const GPtrArray *groups)
{
    guint failing = 0;
    for (guint i = 0; i < groups->len; i++)
        failing += gl_report_group_fails(context, g_ptr_array_index(groups, i));
    return failing;
}

static gpointer junit_begin(const GlReportContext *context, FILE *out)
{
    JunitState *state = g_new0(JunitState, 1);
    state->context = context;
    state->out = out;
    state->buffer = gl_xml()->BufferCreate();
    state->writer = gl_xml()->NewTextWriterMemory(state->buffer, 0);
    xmlTextWriterPtr writer = state->writer;
    gl_xml()->TextWriterSetIndent(writer, 1);
    gl_xml()->TextWriterSetIndentString(writer, BAD_CAST "  ");
    gl_xml()->TextWriterStartDocument(writer, NULL, "UTF-8", NULL);

    /* A case a group: the counts are the groups'. */
    g_autoptr(GPtrArray) groups = gl_findings_group(context->findings);
    guint findings = groups->len;
    guint failing = count_failing(context, groups);
    /* XML that could not all be read is an error case, never a pass. */
    gboolean incomplete = context->gate != NULL && !context->gate->complete;
    g_autoptr(GDateTime) now = g_date_time_new_now_utc();
    g_autofree char *timestamp = g_date_time_format(now, "%Y-%m-%dT%H:%M:%S");
    g_autofree char *tests = g_strdup_printf("%u", incomplete ? findings + 1 : MAX(findings, 1));
    g_autofree char *failures = g_strdup_printf("%u", failing);
    g_autofree char *skipped = g_strdup_printf("%u", findings - failing);
    gl_xml()->TextWriterStartElement(writer, BAD_CAST "testsuite");
    attribute(writer, "name", "gemleak");
    attribute(writer, "timestamp", timestamp);
    attribute(writer, "hostname", g_get_host_name());
    attribute(writer, "tests", tests);
    attribute(writer, "failures", failures);
    attribute(writer, "errors", incomplete ? "1" : "0");
    attribute(writer, "skipped", skipped);
    attribute(writer, "time", "0");

    gl_xml()->TextWriterStartElement(writer, BAD_CAST "properties");
    gl_xml()->TextWriterStartElement(writer, BAD_CAST "property");
    attribute(writer, "name", "gemleak.version");
    attribute(writer, "value", GEMLEAK_VERSION);
    gl_xml()->TextWriterEndElement(writer);
    for (const char *const *target = context->targets; target != NULL && *target != NULL; target++) {
        gl_xml()->TextWriterStartElement(writer, BAD_CAST "property");
        attribute(writer, "name", "gemleak.target");
        attribute(writer, "value", *target);
        gl_xml()->TextWriterEndElement(writer);
    }
    gl_xml()->TextWriterEndElement(writer);

    if (incomplete) {
        const GPtrArray *problems = context->analysis->problems;
        GString *all = g_string_new(NULL);
        for (guint i = 0; i < problems->len; i++)
            g_string_append_printf(all, "%s\n",
                                   ((const GError *) g_ptr_array_index(problems, i))->message);
        gl_xml()->TextWriterStartElement(writer, BAD_CAST "testcase");
        g_autofree char *name = g_strdup(context->trouble != NULL
                                             ? context->trouble : "an input could not all be read");
        name[0] = g_ascii_toupper(name[0]);
        attribute(writer, "name", name);
        attribute(writer, "classname", "gemleak");
        attribute(writer, "time", "0");
        gl_xml()->TextWriterStartElement(writer, BAD_CAST "error");
        attribute(writer, "message", problems->len > 0
                                         ? ((const GError *) g_ptr_array_index(problems, 0))->message
                                         : "an input could not all be read");
        attribute(writer, "type", "incomplete");
        text(writer, all->str);
        gl_xml()->TextWriterEndElement(writer);
        gl_xml()->TextWriterEndElement(writer);
        g_string_free(all, TRUE);
    } else if (findings == 0) {
        gl_xml()->TextWriterStartElement(writer, BAD_CAST "testcase");
        attribute(writer, "name", "no leaks or memory errors in the targets");
        attribute(writer, "classname", "gemleak");
        attribute(writer, "time", "0");
        gl_xml()->TextWriterEndElement(writer);
    }
    return state;
}

/* "gemleak.tally" for a finding in tally.so: consumers group by class. */
static char *class_name(const GlFinding *finding)
{
    const GlFrame *frame = gl_finding_location(finding);
    if (frame == NULL || frame->obj == NULL)
        return g_strdup("gemleak");
    g_autofree char *base = g_path_get_basename(frame->obj);
    char *dot = strchr(base, '.');
    if (dot != NULL)
        *dot = '\0';
    return g_strconcat("gemleak.", base, NULL);
}

static void junit_group(gpointer data, const GlGroup *group, guint index)
{
    JunitState *state = data;
    xmlTextWriterPtr writer = state->writer;
    (void) index;
    const GlFinding *finding = g_ptr_array_index(group->findings, 0);
    const char *root = state->context->project_root;
    g_autofree char *title = gl_group_title(group, root, TRUE);
    g_autofree char *classname = class_name(finding);
    g_autofree char *message = gl_group_heading(group);
    g_autofree char *body = gl_group_text(group, state->context->suppressions, root);
    /* --per-test: the case is named after the test that leaked first, so
     * that the CI's test report points at it. */
    g_autofree char *test = finding->tests->len > 0
        ? gl_test_name(g_ptr_array_index(finding->tests, 0), root)
        : finding->lost_at_exit ? g_strdup("at exit") : NULL;
    g_autofree char *name = test != NULL ? g_strdup_printf("%s: %s", test, title)
                                         : g_strdup(title);

    gl_xml()->TextWriterStartElement(writer, BAD_CAST "testcase");
    attribute(writer, "name", name);
    attribute(writer, "classname", classname);
    attribute(writer, "time", "0");
    gboolean fails = gl_report_group_fails(state->context, group);
    /* Why it does not fail: uncertain (and why), or of a kind or size the
     * gate lets pass. */
    g_autofree char *uncertainty = gl_group_uncertainty(group);
    const GlGrowth *growth = finding->growth;
    g_autofree char *skipped = uncertainty != NULL
        ? g_strdup_printf("uncertain: %s; --fail-on uncertain fails on it", uncertainty)
        : growth != NULL && growth->held
        ? g_strdup("held by Data objects the test keeps: --fail-on growth-held fails on it")
        : growth != NULL ? g_strdup("does not fail the gate (--fail-on growth fails on it)")
        : g_strdup("does not fail the gate (--fail-on, --max-bytes)");
    gl_xml()->TextWriterStartElement(writer, BAD_CAST(fails ? "failure" : "skipped"));
    attribute(writer, "message", fails ? message : skipped);
    if (fails)
        attribute(writer, "type", finding->record->kind);
    text(writer, body);
    gl_xml()->TextWriterEndElement(writer);
    gl_xml()->TextWriterEndElement(writer);
}

static void junit_finding(gpointer data, const GlFinding *finding, guint index)
{
    /* A finding alone is a group of one. */
    g_autoptr(GPtrArray) one = g_ptr_array_new();
    g_ptr_array_add(one, (gpointer) finding);
    g_autoptr(GPtrArray) groups = gl_findings_group(one);
    junit_group(data, g_ptr_array_index(groups, 0), index);
}

static void junit_end(gpointer data)
{
    JunitState *state = data;
    const GlReportContext *context = state->context;
    xmlTextWriterPtr writer = state->writer;

    GString *out = g_string_new(NULL);
    if (context->gate != NULL && context->gate->line != NULL)
        g_string_append_printf(out, "%s\n", context->gate->line);
    gl_xml()->TextWriterStartElement(writer, BAD_CAST "system-out");
    text(writer, out->str);
    gl_xml()->TextWriterEndElement(writer);
    g_string_truncate(out, 0);
    for (guint i = 0; i < context->analysis->problems->len; i++)
        g_string_append_printf(out, "%s\n",
                               ((const GError *) g_ptr_array_index(context->analysis->problems, i))->message);
    gl_xml()->TextWriterStartElement(writer, BAD_CAST "system-err");
    text(writer, out->str);
    gl_xml()->TextWriterEndElement(writer);
    g_string_free(out, TRUE);

    gl_xml()->TextWriterEndElement(writer);  /* testsuite */
    gl_xml()->TextWriterEndDocument(writer);
    gl_xml()->FreeTextWriter(writer);
    fwrite(gl_xml()->BufferContent(state->buffer), 1, (size_t) gl_xml()->BufferLength(state->buffer), state->out);
    gl_xml()->BufferFree(state->buffer);
    g_free(state);
}

const GlReporter gl_report_junit = {
    .name = "junit",
    .begin = junit_begin,
    .finding = junit_finding,
    .group = junit_group,
    .end = junit_end,
};
