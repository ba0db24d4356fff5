/* gemleak's JSON reports as inputs (see json_input.h). */
#include "gemleak/judge/json_input.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/json_format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

void gl_json_input_clear(GlJsonInput *input)
{
    if (input->targets != NULL)
        g_ptr_array_unref(input->targets);
    if (input->problems != NULL)
        g_ptr_array_unref(input->problems);
    if (input->truncated_files != NULL)
        g_ptr_array_unref(input->truncated_files);
    memset(input, 0, sizeof *input);
}

gboolean gl_json_input_detect(const char *path)
{
    if (strcmp(path, "-") == 0)
        return FALSE;
    FILE *file = g_fopen(path, "rb");
    if (file == NULL)
        return FALSE;
    int c;
    do
        c = fgetc(file);
    while (c == ' ' || c == '\t' || c == '\r' || c == '\n');
    fclose(file);
    return c == '{';
}


/* ---- members, whatever their type ---------------------------------------------- */

static const char *string_member(JsonObject *object, const char *name)
{
    JsonNode *node = object != NULL ? json_object_get_member(object, name) : NULL;
    return node != NULL && json_node_get_value_type(node) == G_TYPE_STRING
               ? json_node_get_string(node) : NULL;
}

static gint64 int_member(JsonObject *object, const char *name, gint64 otherwise)
{
    JsonNode *node = object != NULL ? json_object_get_member(object, name) : NULL;
    return node != NULL && json_node_get_value_type(node) == G_TYPE_INT64 ? json_node_get_int(node)
                                                                          : otherwise;
}

static gboolean bool_member(JsonObject *object, const char *name, gboolean otherwise)
{
    JsonNode *node = object != NULL ? json_object_get_member(object, name) : NULL;
    return node != NULL && json_node_get_value_type(node) == G_TYPE_BOOLEAN
               ? json_node_get_boolean(node) : otherwise;
}

static JsonArray *array_member(JsonObject *object, const char *name)
{
    JsonNode *node = object != NULL ? json_object_get_member(object, name) : NULL;
    return node != NULL && JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
}

static JsonObject *object_member(JsonObject *object, const char *name)
{
    JsonNode *node = object != NULL ? json_object_get_member(object, name) : NULL;
    return node != NULL && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
}

static JsonObject *object_element(JsonArray *array, guint index)
{
    JsonNode *node = json_array_get_element(array, index);
    return node != NULL && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
}

/* Adds the strings of @array (nullable) to @into, copied. */
static void add_strings(GPtrArray *into, JsonArray *array)
{
    for (guint i = 0; array != NULL && i < json_array_get_length(array); i++) {
        JsonNode *node = json_array_get_element(array, i);
        if (json_node_get_value_type(node) == G_TYPE_STRING)
            g_ptr_array_add(into, g_strdup(json_node_get_string(node)));
    }
}

/* ---- records ------------------------------------------------------------------------ */

static void read_stack(GlRecord *record, JsonArray *frames, GlStack *stack)
{
    guint n = frames != NULL ? json_array_get_length(frames) : 0;
    stack->frames = n > 0 ? g_new0(GlFrame, n) : NULL;
    stack->n_frames = 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *object = object_element(frames, i);
        if (object == NULL)
            continue;
        GlFrame *frame = &stack->frames[stack->n_frames++];
        frame->fn = gl_record_intern(record, string_member(object, "fn"));
        frame->obj = gl_record_intern(record, string_member(object, "obj"));
        frame->dir = gl_record_intern(record, string_member(object, "dir"));
        frame->file = gl_record_intern(record, string_member(object, "file"));
        frame->line = (guint) CLAMP(int_member(object, "line", 0), 0, G_MAXUINT);
        const char *ip = string_member(object, "ip");
        frame->ip = ip != NULL ? g_ascii_strtoull(ip, NULL, 16) : 0;
        frame->in_target = bool_member(object, "in_target", FALSE);
    }
}

/* Returns: TRUE if @a and @b are one access: the same kind, message and
 * frames. */
static gboolean same_access(const GlRecord *a, const GlRecord *b)
{
    if (g_strcmp0(a->kind, b->kind) != 0 || g_strcmp0(a->what, b->what) != 0 ||
        a->stack.n_frames != b->stack.n_frames)
        return FALSE;
    for (guint i = 0; i < a->stack.n_frames; i++) {
        const GlFrame *x = &a->stack.frames[i], *y = &b->stack.frames[i];
        if (x->ip != y->ip || x->line != y->line || g_strcmp0(x->fn, y->fn) != 0 ||
            g_strcmp0(x->obj, y->obj) != 0 || g_strcmp0(x->file, y->file) != 0)
            return FALSE;
    }
    return TRUE;
}

/* The occurrence a finding shows, as the report wrote it. */
static GlRecord *read_record(JsonObject *object, const char *kind, const char *what,
                             JsonArray *frames)
{
    GlRecord *record = gl_record_new();
    record->kind = gl_record_intern(record, kind != NULL ? kind : "Unknown");
    record->leak_kind = gl_leak_kind_from_name(record->kind);
    record->what = gl_record_intern(record, what != NULL ? what : record->kind);
    read_stack(record, frames, &record->stack);
    JsonArray *stacks = array_member(object, "stacks");
    for (guint i = 0; stacks != NULL && i < json_array_get_length(stacks); i++) {
        JsonObject *aux_object = object_element(stacks, i);
        if (aux_object == NULL)
            continue;
        GlAux aux = { .text = gl_record_intern(record, string_member(aux_object, "text")) };
        read_stack(record, array_member(aux_object, "frames"), &aux.stack);
        g_array_append_val(record->aux, aux);
    }
    return record;
}

static void read_finding(JsonObject *object, GlFindings *findings, guint64 order)
{
    const char *kind = string_member(object, "kind");
    const char *what = string_member(object, "what");
    if (what == NULL)
        what = string_member(object, "message");
    GlRecord *record = read_record(object, kind, what, array_member(object, "frames"));
    JsonArray *pids = array_member(object, "pids");
    record->pid = pids != NULL && json_array_get_length(pids) > 0
                      ? json_array_get_int_element(pids, 0) : 0;
    gboolean certain = bool_member(object, "certain", TRUE);
    record->uncertain = !certain;
    record->unnamed_frames = (guint) CLAMP(int_member(object, "unnamed_frames", 0), 0, G_MAXUINT);
    record->unnamed_object = gl_record_intern(record, string_member(object, "unnamed_object"));
    record->stack_cut = (guint) CLAMP(int_member(object, "stack_cut", 0), 0, G_MAXUINT);
    const char *rawtext = string_member(object, "suppression");
    if (rawtext != NULL) {
        record->suppression = g_new0(GlSuppression, 1);
        record->suppression->rawtext = gl_record_intern(record, rawtext);
        record->suppression->frames = g_new0(const char *, 1);
    }

    GlFinding *finding = gl_finding_new(record, order);
    finding->occurrences = (guint) CLAMP(int_member(object, "occurrences", 1), 1, G_MAXUINT);
    gint64 bytes = int_member(object, "bytes", 0);
    finding->total_bytes = bytes > 0 ? (guint64) bytes : 0;
    gint64 blocks = int_member(object, "blocks", 0);
    finding->total_blocks = blocks > 0 ? (guint64) blocks : 0;
    gint64 direct = int_member(object, "direct_bytes", bytes);
    finding->direct_bytes = direct > 0 ? (guint64) direct : 0;
    finding->certain = certain;
    for (guint i = 0; pids != NULL && i < json_array_get_length(pids); i++)
        gl_pids_add(finding->pids, json_array_get_int_element(pids, i));
    /* The tests it was lost in (--per-test), as the report names them. */
    JsonArray *tests = array_member(object, "tests");
    for (guint i = 0; tests != NULL && i < json_array_get_length(tests); i++) {
        JsonObject *test = object_element(tests, i);
        const char *name = string_member(test, "name");
        const char *location = string_member(test, "location");
        if (test != NULL && finding->tests->len < GL_FINDING_MAX_TESTS)
            g_ptr_array_add(finding->tests, gl_test_new(name, location));
    }
    finding->more_tests = bool_member(object, "more_tests", FALSE) ||
                          (tests != NULL && json_array_get_length(tests) > GL_FINDING_MAX_TESTS);
    finding->lost_before_tests = bool_member(object, "lost_before_tests", FALSE);
    finding->lost_at_exit = bool_member(object, "lost_at_exit", FALSE);
    finding->found_again = bool_member(object, "found_again", FALSE);
    finding->allocated_in_tests = bool_member(object, "allocated_in_tests", FALSE);
    JsonObject *among = object_member(object, "lost_among");
    JsonObject *first = among != NULL ? object_member(among, "first") : NULL;
    JsonObject *last = among != NULL ? object_member(among, "last") : NULL;
    gint64 among_tests = among != NULL ? int_member(among, "tests", 0) : 0;
    if (among_tests > 0 && first != NULL && last != NULL) {
        finding->among = (guint64) among_tests;
        finding->among_first = gl_test_new(string_member(first, "name"),
                                           string_member(first, "location"));
        finding->among_last = gl_test_new(string_member(last, "name"),
                                          string_member(last, "location"));
    }
    /* Every place a freed block was used: the one shown is among them. */
    JsonArray *accesses = array_member(object, "accesses");
    for (guint i = 0; finding->freed_block && accesses != NULL &&
                      i < json_array_get_length(accesses); i++) {
        JsonObject *access = object_element(accesses, i);
        if (access == NULL)
            continue;
        GlRecord *site = read_record(NULL, string_member(access, "kind"),
                                     string_member(access, "message"),
                                     array_member(access, "frames"));
        site->pid = record->pid;
        /* The one shown is there already, with its other stacks. */
        if (same_access(site, record))
            gl_record_free(site);
        else
            gl_finding_add_site(finding, site);
    }
    gl_findings_add_finding(findings, finding);
}

/* ---- the report ------------------------------------------------------------------------ */

static gboolean load(const char *path, JsonParser *parser, GError **error)
{
    GStatBuf info;
    if (g_stat(path, &info) != 0) {
        int saved = errno;
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot open: %s", path, g_strerror(saved));
        return FALSE;
    }
    if (!S_ISREG(info.st_mode) || (guint64) info.st_size > GL_JSON_INPUT_MAX_SIZE) {
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "%s: not a regular file of at most %u MiB: "
                    "refused", path, (guint) (GL_JSON_INPUT_MAX_SIZE >> 20));
        return FALSE;
    }
    g_autofree char *text = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(path, &text, &length, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    if (!gl_json_depth_within(text, length, GL_JSON_INPUT_MAX_DEPTH)) {
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "%s: JSON nested deeper than %d levels: not a "
                    "gemleak report, refused", path, GL_JSON_INPUT_MAX_DEPTH);
        return FALSE;
    }
    if (!json_parser_load_from_data(parser, text, (gssize) length, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_WRONG_FORMAT, "%s: not JSON that gemleak can read "
                    "(%s)", path, local->message);
        return FALSE;
    }
    return TRUE;
}

/* What the report's run could not check, so that a merge never passes
 * what a shard could not (INCOMPLETE in, INCOMPLETE out). A report that
 * says only that its gate was not complete (`gate.complete` false, no
 * counts, no problems) stands for one input not read in full. */
static void read_unchecked(JsonObject *report, JsonObject *summary, GlJsonInput *input)
{
    add_strings(input->problems, array_member(summary, "problems"));
    add_strings(input->truncated_files, array_member(summary, "truncated_files"));
    input->incomplete_files = (guint) CLAMP(int_member(summary, "incomplete_files", 0), 0,
                                            G_MAXUINT);
    input->unchecked_processes = (guint) CLAMP(int_member(summary, "unchecked_processes", 0), 0,
                                               G_MAXUINT);
    input->free_at_exit = (guint) CLAMP(int_member(summary, "free_at_exit_processes", 0), 0,
                                        G_MAXUINT);
    JsonObject *gate = object_member(report, "gate");
    gboolean complete = bool_member(gate, "complete", TRUE) && input->problems->len == 0 &&
                        input->incomplete_files == 0 && input->unchecked_processes == 0;
    if (complete)
        return;
    if (input->incomplete_files == 0 && input->unchecked_processes == 0)
        input->incomplete_files = 1;
    if (input->problems->len == 0) {
        const char *message = string_member(gate, "message");
        g_ptr_array_add(input->problems,
                        g_strdup_printf("not everything was checked: %s",
                                        message != NULL ? message : "its gate is not complete"));
    }
}

gboolean gl_json_input_read(const char *path, GlFindings *findings, guint64 order_base,
                            GlJsonInput *input, GError **error)
{
    gl_json_input_clear(input);
    input->targets = g_ptr_array_new_with_free_func(g_free);
    input->problems = g_ptr_array_new_with_free_func(g_free);
    input->truncated_files = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!load(path, parser, error))
        return FALSE;
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *report = root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root)
                                                                       : NULL;
    JsonArray *list = array_member(report, "findings");
    if (g_strcmp0(string_member(object_member(report, "tool"), "name"), "gemleak") != 0 ||
        list == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_WRONG_FORMAT, "%s: JSON, but not a gemleak report "
                    "(gemleak reads back what --format json writes)", path);
        return FALSE;
    }
    gint64 version = int_member(report, "report_version", 0);
    if (version > GL_JSON_REPORT_VERSION) {
        g_set_error(error, GL_ERROR, GL_ERROR_WRONG_FORMAT, "%s: a report of shape %" G_GINT64_FORMAT
                    ", newer than this gemleak reads (%d): use the gemleak that wrote it", path,
                    version, GL_JSON_REPORT_VERSION);
        return FALSE;
    }
    add_strings(input->targets, array_member(report, "targets"));
    JsonObject *summary = object_member(report, "summary");
    read_unchecked(report, summary, input);
    JsonObject *reasons = object_member(summary, "skipped_by_reason");
    input->processes = (guint) CLAMP(int_member(summary, "files", 0), 0, G_MAXUINT);
    input->errors_seen = (guint64) MAX(int_member(summary, "errors_seen", 0), 0);
    input->by_verdict[GL_VERDICT_SKIP_KIND] = (guint64) MAX(int_member(reasons, "other_leak_kinds", 0), 0);
    input->by_verdict[GL_VERDICT_SKIP_NO_TARGET] = (guint64) MAX(int_member(reasons, "not_in_target", 0), 0);
    input->by_verdict[GL_VERDICT_SKIP_RUBY] = (guint64) MAX(int_member(reasons, "ruby_memory", 0), 0);
    input->by_verdict[GL_VERDICT_SKIP_INIT] = (guint64) MAX(int_member(reasons, "in_init", 0), 0);
    input->by_verdict[GL_VERDICT_SKIP_UNJUDGED] =
        (guint64) MAX(int_member(reasons, "unjudged_process", 0), 0);
    input->repeated = (guint64) MAX(int_member(reasons, "repeated_by_later_check", 0), 0);
    input->inherited = (guint64) MAX(int_member(reasons, "inherited_from_parent", 0), 0);
    guint64 skipped = input->repeated + input->inherited;
    for (guint v = GL_VERDICT_KEEP + 1; v < GL_N_VERDICTS; v++)
        skipped += input->by_verdict[v];
    input->by_verdict[GL_VERDICT_KEEP] = input->errors_seen > skipped ? input->errors_seen - skipped : 0;
    for (guint i = 0; findings != NULL && i < json_array_get_length(list); i++) {
        JsonObject *object = object_element(list, i);
        if (object != NULL)
            read_finding(object, findings, order_base | i);
    }
    return TRUE;
}
