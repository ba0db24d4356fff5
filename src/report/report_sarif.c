/* --format sarif: SARIF 2.1.0 for code scanning. One run; one rule per
 * error kind found; one result per finding at its first target frame (a
 * group of findings, group.h, is one result: its first finding's, with
 * the others' places as related locations),
 * relative to the project root when the file lies under it; the stacks as
 * code flows; a partial fingerprint that survives line shifts and pids, so
 * that code scanning follows a leak from commit to commit. */
#include "gemleak/report/report.h"
#include "gemleak/report/json_helpers.h"
#include "gemleak/report/wording.h"

#include <string.h>

#include "gemleak/base/json.h"

/* The base that relative locations are relative to. */
#define ROOT_ID "PROJECTROOT"
/* v2: the extension's frames only (issue 20); another key, so that code
 * scanning does not take the new values for the old ones' alerts moving */
#define FINGERPRINT_KEY "gemleakFingerprint/v" G_STRINGIFY(GL_FINGERPRINT_VERSION)

typedef struct {
    const GlReportContext *context;
    FILE *out;
    JsonBuilder *builder;
    GPtrArray *rules;   /* kind names, in order of first use: ruleIndex */
} SarifState;

/* The rule of growth held by Data objects the test keeps (--fail-on
 * growth-held): a note, apart from growth, so that code scanning can tell
 * them apart. */
#define RULE_GROWTH_HELD "GrowthHeld"

/* What each kind means, for the rule's description. */
static const struct {
    const char *kind;
    const char *text;
} descriptions[] = {
    { "Leak_DefinitelyLost", "Memory is allocated and never freed, and nothing points to it any more." },
    { "Leak_IndirectlyLost", "Memory is reachable only from memory that is itself definitely lost." },
    { "Leak_PossiblyLost", "Memory is reachable only through pointers into its middle." },
    { "Leak_StillReachable", "Memory is never freed, though a pointer to it remains at exit." },
    { "InvalidRead", "The program reads memory it does not own (freed, or outside a block)." },
    { "InvalidWrite", "The program writes memory it does not own (freed, or outside a block)." },
    { "InvalidFree", "The program frees memory that is not a live heap block." },
    { "MismatchedFree", "Memory is freed with a function that does not match its allocation." },
    { "Overlap", "The source and destination of a copy overlap." },
    { "SyscallParam", "A system call is given unaddressable or uninitialised memory." },
    { "UninitCondition", "A jump or move depends on uninitialised memory." },
    { "UninitValue", "An uninitialised value is used." },
    { "InvalidJump", "The program jumps to an address that holds no code." },
    { GL_KIND_FATAL_SIGNAL, "The process was killed by a signal." },
    { GL_KIND_GROWTH, "A site of the extension kept more live memory after each repetition of a "
                      "test and never gave it back: memory that only grows." },
    { RULE_GROWTH_HELD, "A site of the extension kept more live memory after each repetition of "
                        "a test, as the structs of Data objects the test keeps: the test's "
                        "objects, which may be by design." },
};

static const char *describe(const char *kind)
{
    for (guint i = 0; i < G_N_ELEMENTS(descriptions); i++)
        if (strcmp(descriptions[i].kind, kind) == 0)
            return descriptions[i].text;
    return "An error Valgrind's memcheck reports.";
}

static void add_message(JsonBuilder *builder, const char *name, const char *text)
{
    json_builder_set_member_name(builder, name);
    json_builder_begin_object(builder);
    gl_json_add_string(builder, "text", text);
    json_builder_end_object(builder);
}

/* Returns: (transfer full): @path (absolute) as a file URI, ending in "/"
 * when @directory. */
static char *file_uri(const char *path, gboolean directory)
{
    g_autofree char *escaped = g_uri_escape_string(path, "/", FALSE);
    gboolean add_slash = directory && !g_str_has_suffix(escaped, "/");
    return g_strconcat("file://", escaped, add_slash ? "/" : "", NULL);
}

/* A file path as a URI reference: relative to ROOT_ID when under the
 * project root, else an absolute file URI. */
static void add_artifact_location(JsonBuilder *builder, const char *path, gboolean relative)
{
    json_builder_set_member_name(builder, "artifactLocation");
    json_builder_begin_object(builder);
    if (relative) {
        g_autofree char *escaped = g_uri_escape_string(path, "/", FALSE);
        gl_json_add_string(builder, "uri", escaped);
        gl_json_add_string(builder, "uriBaseId", ROOT_ID);
    } else {
        g_autofree char *uri = file_uri(path, FALSE);
        gl_json_add_string(builder, "uri", uri);
    }
    json_builder_end_object(builder);
}

/* A location object for @frame: its source line when it has one, else its
 * object file, and always its function name and @message, or by default
 * its description. */
static void add_location_with(SarifState *state, const GlFrame *frame, const char *message)
{
    JsonBuilder *builder = state->builder;
    gboolean relative = FALSE;
    g_autofree char *source = gl_frame_source_path(frame, state->context->project_root, &relative);
    /* A path relative to no known directory (a build directory whose
     * object could not be read) is no URI: the object names the place. */
    if (source != NULL && !relative && source[0] != '/')
        g_clear_pointer(&source, g_free);
    gboolean lines = source != NULL;
    /* Built without -g: the source file its symbol table names, else its
     * object, relative to the project when under it. */
    if (source == NULL)
        source = gl_frame_place(&(GlFrame) { .unit = frame->unit, .obj = frame->obj },
                                state->context->project_root, &relative);
    json_builder_begin_object(builder);
    if (source != NULL || frame->obj != NULL) {
        json_builder_set_member_name(builder, "physicalLocation");
        json_builder_begin_object(builder);
        if (source != NULL) {
            add_artifact_location(builder, source, relative);
            if (lines && frame->line > 0) {
                json_builder_set_member_name(builder, "region");
                json_builder_begin_object(builder);
                gl_json_add_int(builder, "startLine", frame->line);
                json_builder_end_object(builder);
            }
        } else {
            add_artifact_location(builder, frame->obj, FALSE);
        }
        json_builder_end_object(builder);
    }
    if (frame->fn != NULL) {
        json_builder_set_member_name(builder, "logicalLocations");
        json_builder_begin_array(builder);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, "name", frame->fn);
        gl_json_add_string(builder, "kind", "function");
        json_builder_end_object(builder);
        json_builder_end_array(builder);
    }
    GString *description = g_string_new(NULL);
    gl_frame_describe(frame, state->context->project_root, description);
    add_message(builder, "message", message != NULL ? message : description->str);
    g_string_free(description, TRUE);
    json_builder_end_object(builder);
}

static void add_location(SarifState *state, const GlFrame *frame)
{
    add_location_with(state, frame, NULL);
}

static void add_thread_flow(SarifState *state, const GlStack *stack)
{
    JsonBuilder *builder = state->builder;
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "locations");
    json_builder_begin_array(builder);
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        json_builder_begin_object(builder);
        json_builder_set_member_name(builder, "location");
        add_location(state, frame);
        if (frame->obj != NULL) {
            g_autofree char *module = g_path_get_basename(frame->obj);
            gl_json_add_string(builder, "module", module);
        }
        /* the frames of the target are what a reader should look at */
        gl_json_add_string(builder, "importance", frame->in_target ? "essential" : "unimportant");
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
    json_builder_end_object(builder);
}

/* One code flow for the primary stack, one for each further stack. */
static void add_code_flow(SarifState *state, const char *message, const GlStack *stack)
{
    JsonBuilder *builder = state->builder;
    if (stack->n_frames == 0 || stack->frames == NULL)  /* no frames, never one without the other */
        return;
    json_builder_begin_object(builder);
    add_message(builder, "message", message);
    json_builder_set_member_name(builder, "threadFlows");
    json_builder_begin_array(builder);
    add_thread_flow(state, stack);
    json_builder_end_array(builder);
    json_builder_end_object(builder);
}

static guint rule_index(SarifState *state, const char *kind)
{
    for (guint i = 0; i < state->rules->len; i++)
        if (strcmp(g_ptr_array_index(state->rules, i), kind) == 0)
            return i;
    g_ptr_array_add(state->rules, (gpointer) kind);
    return state->rules->len - 1;
}

static gpointer sarif_begin(const GlReportContext *context, FILE *out)
{
    SarifState *state = g_new0(SarifState, 1);
    state->context = context;
    state->out = out;
    state->builder = json_builder_new();
    state->rules = g_ptr_array_new();
    /* Results first: the rules come from them and are written at the end. */
    json_builder_begin_array(state->builder);
    return state;
}

/* The other call paths of @group, where each is: relatedLocations. */
static void add_related_locations(SarifState *state, const GlGroup *group)
{
    JsonBuilder *builder = state->builder;
    json_builder_set_member_name(builder, "relatedLocations");
    json_builder_begin_array(builder);
    for (guint i = 1; i < group->findings->len; i++) {
        const GlFinding *other = g_ptr_array_index(group->findings, i);
        const GlFrame *at = gl_finding_location(other);
        if (at == NULL)
            continue;
        g_autofree char *path = gl_finding_path_line(other, state->context->project_root);
        g_autofree char *text = g_strdup_printf("call path %u: %s", i + 1, path);
        add_location_with(state, at, text);
    }
    /* its other ways in, and the blocks its structures owned */
    for (guint w = 0; group->ways->len > 1 && w < group->ways->len; w++) {
        g_autofree char *way = gl_group_way_line(group, w, state->context->project_root);
        add_location_with(state, g_array_index(group->ways, GlWayIn, w).frame, way);
    }
    for (guint o = 0; o < group->owned->len; o++) {
        const GlFrame *at = gl_finding_location(g_array_index(group->owned, GlOwned, o).finding);
        if (at == NULL)
            continue;
        g_autofree char *owned = gl_group_owned_line(group, o, state->context->project_root);
        add_location_with(state, at, owned);
    }
    json_builder_end_array(builder);
}

/* Adds a result's stacks as code flows: its first finding's own, and its
 * other stacks (where the block was allocated, freed...). */
static void add_code_flows(SarifState *state, const GlFinding *finding)
{
    JsonBuilder *builder = state->builder;
    const GlRecord *record = finding->record;
    json_builder_set_member_name(builder, "codeFlows");
    json_builder_begin_array(builder);
    /* A leak's words are its totals, as every report gives them: each
     * engine words its record its own way, Valgrind with a "loss record N
     * of M" that changes from run to run. */
    g_autofree char *what = record->leak_kind != GL_LEAK_NONE || finding->growth != NULL
                                ? gl_finding_message(finding) : g_strdup(record->what);
    add_code_flow(state, what, &record->stack);
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        add_code_flow(state, aux->text != NULL ? aux->text : what, &aux->stack);
    }
    json_builder_end_array(builder);
}

/* Adds a result's "properties", for tools that read more than the
 * message: the tests of its first finding, and, with @more, @group's call
 * paths, ways in and owned blocks. */
static void add_properties(SarifState *state, const GlGroup *group, gboolean more)
{
    JsonBuilder *builder = state->builder;
    const GlFinding *finding = g_ptr_array_index(group->findings, 0);
    const char *root = state->context->project_root;
    json_builder_set_member_name(builder, "properties");
    json_builder_begin_object(builder);
    if (finding->tests->len > 0)
        gl_json_add_tests(builder, finding, root);
    if (more) {
        g_autofree char *reason = gl_group_reason(group);
        gl_json_add_string(builder, "group", reason);
        json_builder_set_member_name(builder, "callPathFingerprints");
        json_builder_begin_array(builder);
        for (guint i = 0; i < group->findings->len; i++)
            gl_json_add_string_value(builder, ((const GlFinding *) g_ptr_array_index(
                                                  group->findings, i))->fingerprint);
        json_builder_end_array(builder);
        json_builder_set_member_name(builder, "waysIn");
        json_builder_begin_array(builder);
        for (guint w = 0; w < group->ways->len; w++)
            gl_json_add_string_value(builder, g_array_index(group->ways, GlWayIn, w).frame->fn);
        json_builder_end_array(builder);
        json_builder_set_member_name(builder, "owned");
        json_builder_begin_array(builder);
        for (guint o = 0; o < group->owned->len; o++) {
            const GlOwned *owned = &g_array_index(group->owned, GlOwned, o);
            g_autofree char *line = gl_group_owned_line(group, o, root);
            json_builder_begin_object(builder);
            gl_json_add_string(builder, "fingerprint",
                               owned->finding != NULL ? owned->finding->fingerprint : NULL);
            gl_json_add_int(builder, "bytes", (gint64) owned->bytes);
            gl_json_add_int(builder, "blocks", (gint64) owned->blocks);
            gl_json_add_string(builder, "text", line);
            json_builder_end_object(builder);
        }
        json_builder_end_array(builder);
    }
    json_builder_end_object(builder);
}

/* One result: @group's, shown by its first finding. */
static void add_result(SarifState *state, const GlGroup *group)
{
    JsonBuilder *builder = state->builder;
    const GlFinding *finding = g_ptr_array_index(group->findings, 0);
    const GlRecord *record = finding->record;
    const char *root = state->context->project_root;
    gboolean several = group->findings->len > 1;
    g_autofree char *message = several ? gl_group_message(group) : gl_finding_message(finding);
    g_autofree char *title = gl_group_title(group, root, FALSE);
    g_autofree char *tests = gl_finding_tests_line(finding, root);
    /* growth's message names itself ("growth: +800 bytes..."), as the
     * text report's first line: the title would say it twice */
    gboolean grew = finding->growth != NULL && !several;
    char *text = grew && tests != NULL ? g_strdup_printf("%s; %s", message, tests)
                 : grew ? g_strdup(message)
                 : tests != NULL ? g_strdup_printf("%s: %s; %s", title, message, tests)
                 : g_strdup_printf("%s: %s", title, message);

    /* An uncertain one may be no bug: a warning, saying why. */
    g_autofree char *uncertainty = gl_group_uncertainty(group);
    if (uncertainty != NULL) {
        char *longer = g_strdup_printf("%s; uncertain: %s", text, uncertainty);
        g_free(text);
        text = longer;
    }
    /* Growth the test's Data objects hold: a note of a rule of its own,
     * as it fails no gate by default. */
    gboolean held = finding->growth != NULL && finding->growth->held;
    const char *rule = held ? RULE_GROWTH_HELD : record->kind;
    json_builder_begin_object(builder);
    gl_json_add_string(builder, "ruleId", rule);
    gl_json_add_int(builder, "ruleIndex", rule_index(state, rule));
    gl_json_add_string(builder, "level", held ? "note" : uncertainty != NULL ? "warning" : "error");
    add_message(builder, "message", text);

    json_builder_set_member_name(builder, "locations");
    json_builder_begin_array(builder);
    const GlFrame *at = gl_finding_location(finding);
    if (at == NULL && record->stack.n_frames > 0)
        at = &record->stack.frames[0];
    if (at != NULL)
        add_location(state, at);
    json_builder_end_array(builder);
    gboolean more = several || group->ways->len > 1 || group->owned->len > 0;
    if (more)
        add_related_locations(state, group);

    add_code_flows(state, finding);

    json_builder_set_member_name(builder, "partialFingerprints");
    json_builder_begin_object(builder);
    gl_json_add_string(builder, FINGERPRINT_KEY, finding->fingerprint);
    json_builder_end_object(builder);
    gl_json_add_int(builder, "occurrenceCount", (gint64) group->occurrences);
    g_free(text);
    if (finding->tests->len > 0 || more)
        add_properties(state, group, more);
    json_builder_end_object(builder);
}

static void sarif_group(gpointer data, const GlGroup *group, guint index)
{
    (void) index;
    add_result(data, group);
}

static void sarif_finding(gpointer data, const GlFinding *finding, guint index)
{
    /* A finding alone is a group of one. */
    g_autoptr(GPtrArray) one = g_ptr_array_new();
    g_ptr_array_add(one, (gpointer) finding);
    g_autoptr(GPtrArray) groups = gl_findings_group(one);
    sarif_group(data, g_ptr_array_index(groups, 0), index);
}

/* Adds "tool": gemleak, and a rule for each kind the results name. */
static void add_tool(JsonBuilder *builder, const GPtrArray *rules)
{
    json_builder_set_member_name(builder, "tool");
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "driver");
    json_builder_begin_object(builder);
    gl_json_add_string(builder, "name", "gemleak");
    gl_json_add_string(builder, "version", GEMLEAK_VERSION);
    gl_json_add_string(builder, "semanticVersion", GEMLEAK_VERSION);
    json_builder_set_member_name(builder, "rules");
    json_builder_begin_array(builder);
    for (guint i = 0; i < rules->len; i++) {
        const char *kind = g_ptr_array_index(rules, i);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, "id", kind);
        gl_json_add_string(builder, "name", kind);
        add_message(builder, "shortDescription", describe(kind));
        json_builder_set_member_name(builder, "defaultConfiguration");
        json_builder_begin_object(builder);
        gl_json_add_string(builder, "level", strcmp(kind, RULE_GROWTH_HELD) == 0 ? "note" : "error");
        json_builder_end_object(builder);
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
    json_builder_end_object(builder);
    json_builder_end_object(builder);
}

/* Adds "invocations": whether every input was read (what was not may
 * hold results), and each problem. */
static void add_invocations(JsonBuilder *builder, const GlReportContext *context)
{
    json_builder_set_member_name(builder, "invocations");
    json_builder_begin_array(builder);
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "executionSuccessful");
    json_builder_add_boolean_value(builder, context->gate == NULL || context->gate->complete);
    const GPtrArray *problems = context->analysis->problems;
    if (problems->len > 0) {
        json_builder_set_member_name(builder, "toolExecutionNotifications");
        json_builder_begin_array(builder);
        for (guint i = 0; i < problems->len; i++) {
            json_builder_begin_object(builder);
            gl_json_add_string(builder, "level", "error");
            add_message(builder, "message",
                        ((const GError *) g_ptr_array_index(problems, i))->message);
            json_builder_end_object(builder);
        }
        json_builder_end_array(builder);
    }
    json_builder_end_object(builder);
    json_builder_end_array(builder);
}

static void sarif_end(gpointer data)
{
    SarifState *state = data;
    const GlReportContext *context = state->context;
    json_builder_end_array(state->builder);
    g_autoptr(GlJsonNode) results = json_builder_get_root(state->builder);

    g_autoptr(GlJsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    gl_json_add_string(builder, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    gl_json_add_string(builder, "version", "2.1.0");
    json_builder_set_member_name(builder, "runs");
    json_builder_begin_array(builder);
    json_builder_begin_object(builder);

    add_tool(builder, state->rules);

    if (context->project_root != NULL) {
        g_autofree char *uri = file_uri(context->project_root, TRUE);
        json_builder_set_member_name(builder, "originalUriBaseIds");
        json_builder_begin_object(builder);
        json_builder_set_member_name(builder, ROOT_ID);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, "uri", uri);
        json_builder_end_object(builder);
        json_builder_end_object(builder);
    }
    add_invocations(builder, context);
    json_builder_set_member_name(builder, "results");
    json_builder_add_value(builder, json_node_ref(results));
    json_builder_end_object(builder);
    json_builder_end_array(builder);
    json_builder_end_object(builder);

    gl_json_write(builder, state->out);
    g_object_unref(state->builder);
    g_ptr_array_unref(state->rules);
    g_free(state);
}

const GlReporter gl_report_sarif = {
    .name = "sarif",
    .begin = sarif_begin,
    .finding = sarif_finding,
    .group = sarif_group,
    .end = sarif_end,
};
