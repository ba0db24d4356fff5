/* gemleak's own JSON reports read back as inputs (a format of the input
 * seam, "gemleak-json"): the shards of a CI matrix, each a report of its
 * own, merge as the processes of one run do. A report's findings were
 * judged where it was written: each becomes a record that carries what
 * its finding said (GlJudged, gemleak/base/record.h), which the judges
 * merge as it is, and the report's counts the input's facts (GlJudgedRun). */
#include "input_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/json_format.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/text.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemleak/base/json.h"

/* Reports larger than this are refused (a finding takes a few KiB). */
#define MAX_SIZE ((gsize) 512 * 1024 * 1024)

typedef struct {
    JsonParser *parser;
    JsonArray *findings;     /* in the parser's tree; NULL when it cannot be read */
    guint next;              /* the next finding to hand out */
    GlProcess process;
    GlJudgedRun run;
    GPtrArray *problems;     /* GError* */
} Report;

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

static guint64 count_member(JsonObject *object, const char *name)
{
    return (guint64) MAX(int_member(object, name, 0), 0);
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
        frame->fn = gl_record_intern(record, string_member(object, GL_MEMBER_FN));
        frame->obj = gl_record_intern(record, string_member(object, GL_MEMBER_OBJ));
        frame->dir = gl_record_intern(record, string_member(object, GL_MEMBER_DIR));
        frame->file = gl_record_intern(record, string_member(object, GL_MEMBER_FILE));
        frame->line = (guint) CLAMP(int_member(object, GL_MEMBER_LINE, 0), 0, G_MAXUINT);
        const char *ip = string_member(object, GL_MEMBER_IP);
        frame->ip = ip != NULL ? g_ascii_strtoull(ip, NULL, 16) : 0;
        frame->in_target = bool_member(object, GL_MEMBER_IN_TARGET, FALSE);
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
    JsonArray *stacks = array_member(object, GL_MEMBER_STACKS);
    for (guint i = 0; stacks != NULL && i < json_array_get_length(stacks); i++) {
        JsonObject *aux_object = object_element(stacks, i);
        if (aux_object == NULL)
            continue;
        GlAux aux = { .text = gl_record_intern(record, string_member(aux_object, GL_MEMBER_TEXT)) };
        read_stack(record, array_member(aux_object, GL_MEMBER_FRAMES), &aux.stack);
        g_array_append_val(record->aux, aux);
    }
    return record;
}

/* The tests a finding was lost in (--per-test), as the report names them. */
static void read_tests(JsonObject *object, GlJudged *judged)
{
    judged->tests = g_ptr_array_new_with_free_func((GDestroyNotify) gl_test_free);
    JsonArray *tests = array_member(object, GL_MEMBER_TESTS);
    for (guint i = 0; tests != NULL && i < json_array_get_length(tests); i++) {
        JsonObject *test = object_element(tests, i);
        if (test != NULL)
            g_ptr_array_add(judged->tests, gl_test_new(string_member(test, GL_MEMBER_NAME),
                                                       string_member(test, GL_MEMBER_LOCATION)));
    }
    judged->more_tests = bool_member(object, GL_MEMBER_MORE_TESTS, FALSE);
    judged->lost_before_tests = bool_member(object, GL_MEMBER_LOST_BEFORE_TESTS, FALSE);
    judged->lost_at_exit = bool_member(object, GL_MEMBER_LOST_AT_EXIT, FALSE);
    judged->found_again = bool_member(object, GL_MEMBER_FOUND_AGAIN, FALSE);
    judged->allocated_in_tests = bool_member(object, GL_MEMBER_ALLOCATED_IN_TESTS, FALSE);
    JsonObject *among = object_member(object, GL_MEMBER_LOST_AMONG);
    JsonObject *first = among != NULL ? object_member(among, GL_MEMBER_FIRST) : NULL;
    JsonObject *last = among != NULL ? object_member(among, GL_MEMBER_LAST) : NULL;
    gint64 among_tests = among != NULL ? int_member(among, GL_MEMBER_TESTS, 0) : 0;
    if (among_tests > 0 && first != NULL && last != NULL) {
        judged->among = (guint64) among_tests;
        judged->among_first = gl_test_new(string_member(first, GL_MEMBER_NAME),
                                          string_member(first, GL_MEMBER_LOCATION));
        judged->among_last = gl_test_new(string_member(last, GL_MEMBER_NAME),
                                         string_member(last, GL_MEMBER_LOCATION));
    }
}

/* Returns: (transfer full): the numbers of @array, an array of @n
 * integers, or NULL when it is not. */
static gint64 *read_series(JsonArray *array, guint n)
{
    if (array == NULL || json_array_get_length(array) != n)
        return NULL;
    gint64 *series = g_new0(gint64, n);
    for (guint i = 0; i < n; i++) {
        JsonNode *node = json_array_get_element(array, i);
        if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_INT64) {
            g_free(series);
            return NULL;
        }
        series[i] = json_node_get_int(node);
    }
    return series;
}

/* A growth finding's "growth" member (--growth: judge/growth.h), into
 * @record's judged: the series as the report wrote it. A growth finding is
 * no leak, whatever its occurrence's kind says. */
static void read_growth(JsonObject *object, GlRecord *record)
{
    JsonObject *growth = object_member(object, GL_MEMBER_GROWTH);
    if (growth == NULL)
        return;
    record->leak_kind = GL_LEAK_NONE;
    gint64 n = int_member(growth, GL_MEMBER_REPETITIONS, 0);
    if (n <= 0 || n > GL_PROTO_GROWTH_MAX)
        return;
    GlJudged *judged = record->judged;
    gint64 *bytes = read_series(array_member(growth, GL_MEMBER_BYTES), (guint) n);
    gint64 *blocks = read_series(array_member(growth, GL_MEMBER_BLOCKS), (guint) n);
    if (bytes == NULL || blocks == NULL) {
        g_free(bytes);
        g_free(blocks);
        return;
    }
    judged->growth_repetitions = (guint) n;
    judged->growth_bytes = bytes;
    judged->growth_blocks = blocks;
    gint64 median = int_member(growth, GL_MEMBER_MEDIAN_BYTES, 0);
    judged->growth_median_bytes = median > 0 ? (guint64) median : 0;
    judged->growth_held = bool_member(growth, GL_MEMBER_HELD, FALSE);
    judged->growth_lost = bool_member(growth, GL_MEMBER_LOST, FALSE);
}

/* Returns: (transfer full): the record of the finding @object, the
 * @index-th of the report. */
static GlRecord *read_finding(JsonObject *object, guint index)
{
    const char *kind = string_member(object, GL_MEMBER_KIND);
    const char *what = string_member(object, GL_MEMBER_WHAT);
    if (what == NULL)
        what = string_member(object, GL_MEMBER_MESSAGE);
    GlRecord *record = read_record(object, kind, what, array_member(object, GL_MEMBER_FRAMES));
    record->unique = index;
    JsonArray *pids = array_member(object, GL_MEMBER_PIDS);
    record->pid = pids != NULL && json_array_get_length(pids) > 0
                      ? json_array_get_int_element(pids, 0) : 0;
    gboolean certain = bool_member(object, GL_MEMBER_CERTAIN, TRUE);
    record->uncertain = !certain;
    record->unnamed_frames = (guint) CLAMP(int_member(object, GL_MEMBER_UNNAMED_FRAMES, 0), 0,
                                           G_MAXUINT);
    record->unnamed_object = gl_record_intern(record,
                                              string_member(object, GL_MEMBER_UNNAMED_OBJECT));
    record->stack_cut = (guint) CLAMP(int_member(object, GL_MEMBER_STACK_CUT, 0), 0, G_MAXUINT);
    const char *rawtext = string_member(object, GL_MEMBER_SUPPRESSION);
    if (rawtext != NULL) {
        record->suppression = g_new0(GlSuppression, 1);
        record->suppression->rawtext = gl_record_intern(record, rawtext);
        record->suppression->frames = g_new0(const char *, 1);
    }

    GlJudged *judged = g_new0(GlJudged, 1);
    record->judged = judged;
    judged->occurrences = (guint) CLAMP(int_member(object, GL_MEMBER_OCCURRENCES, 1), 1, G_MAXUINT);
    gint64 bytes = int_member(object, GL_MEMBER_BYTES, 0);
    judged->total_bytes = bytes > 0 ? (guint64) bytes : 0;
    gint64 blocks = int_member(object, GL_MEMBER_BLOCKS, 0);
    judged->total_blocks = blocks > 0 ? (guint64) blocks : 0;
    gint64 direct = int_member(object, GL_MEMBER_DIRECT_BYTES, bytes);
    judged->direct_bytes = direct > 0 ? (guint64) direct : 0;
    judged->pids = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (guint i = 0; pids != NULL && i < json_array_get_length(pids); i++) {
        gint64 pid = json_array_get_int_element(pids, i);
        g_array_append_val(judged->pids, pid);
    }
    read_tests(object, judged);
    read_growth(object, record);
    /* Every place a freed block was used: the one shown is among them. */
    JsonArray *accesses = array_member(object, GL_MEMBER_ACCESSES);
    for (guint i = 0; accesses != NULL && i < json_array_get_length(accesses); i++) {
        JsonObject *access = object_element(accesses, i);
        if (access == NULL)
            continue;
        GlRecord *site = read_record(NULL, string_member(access, GL_MEMBER_KIND),
                                     string_member(access, GL_MEMBER_MESSAGE),
                                     array_member(access, GL_MEMBER_FRAMES));
        site->pid = record->pid;
        /* The one shown is there already, with its other stacks. */
        if (same_access(site, record)) {
            gl_record_free(site);
            continue;
        }
        if (judged->sites == NULL)
            judged->sites = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
        g_ptr_array_add(judged->sites, site);
    }
    return record;
}

/* ---- the report ------------------------------------------------------------------------ */

/* Returns: (transfer full) (nullable): the whole of @fd (at most MAX_SIZE
 * bytes of a regular file), *@length its size; NULL with @error set. */
static char *read_whole(int fd, const char *name, gsize *length, GError **error)
{
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || (guint64) info.st_size > MAX_SIZE) {
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "%s: not a regular file of at most %u MiB: "
                    "refused", name, (guint) (MAX_SIZE >> 20));
        return NULL;
    }
    GString *text = g_string_sized_new((gsize) info.st_size + 1);
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: %s", name, g_strerror(saved));
            g_string_free(text, TRUE);
            return NULL;
        }
        if (n == 0 || text->len + (gsize) n > MAX_SIZE)
            break;
        g_string_append_len(text, chunk, n);
    }
    *length = text->len;
    return g_string_free(text, FALSE);
}

/* Parses @text into @report->parser. Returns: FALSE with @error set. */
static gboolean parse(Report *report, const char *text, gsize length, const char *name,
                      GError **error)
{
    if (!gl_json_depth_within(text, length, GL_JSON_INPUT_MAX_DEPTH)) {
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT, "%s: JSON nested deeper than %d levels: not a "
                    "gemleak report, refused", name, GL_JSON_INPUT_MAX_DEPTH);
        return FALSE;
    }
    g_autoptr(GError) local = NULL;
    if (!json_parser_load_from_data(report->parser, text, (gssize) length, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_WRONG_FORMAT, "%s: not JSON that gemleak can read "
                    "(%s)", name, local->message);
        return FALSE;
    }
    return TRUE;
}

/* What the report's run could not check, so that a merge never passes
 * what a shard could not (INCOMPLETE in, INCOMPLETE out). A report that
 * says only that its gate was not complete (`gate.complete` false, no
 * counts, no problems) stands for one input not read in full. */
static void read_unchecked(JsonObject *object, JsonObject *summary, GlJudgedRun *run)
{
    add_strings(run->problems, array_member(summary, GL_MEMBER_PROBLEMS));
    add_strings(run->truncated_files, array_member(summary, GL_MEMBER_TRUNCATED_FILES));
    run->incomplete_files = (guint) CLAMP(int_member(summary, GL_MEMBER_INCOMPLETE_FILES, 0), 0,
                                          G_MAXUINT);
    run->unchecked_processes = (guint) CLAMP(int_member(summary, GL_MEMBER_UNCHECKED_PROCESSES, 0),
                                             0, G_MAXUINT);
    run->free_at_exit = (guint) CLAMP(int_member(summary, GL_MEMBER_FREE_AT_EXIT_PROCESSES, 0), 0,
                                      G_MAXUINT);
    run->recent_unkept = (guint) CLAMP(int_member(summary, GL_MEMBER_RECENT_UNKEPT_PROCESSES, 0), 0,
                                       G_MAXUINT);
    JsonObject *growth = object_member(summary, GL_MEMBER_GROWTH_MEASURES);
    if (growth != NULL) {
        run->growth_asked = TRUE;
        run->growth_repetitions = (guint) CLAMP(int_member(growth, GL_MEMBER_REPETITIONS, 0), 0,
                                                G_MAXUINT);
        run->growth_measured = (guint) CLAMP(int_member(growth, GL_MEMBER_TESTS_MEASURED, 0), 0,
                                             G_MAXUINT);
        add_strings(run->growth_unmeasured, array_member(growth, GL_MEMBER_TESTS_NOT_MEASURED));
        run->growth_unfinished = (guint) CLAMP(
            int_member(growth, GL_MEMBER_UNFINISHED_PROCESSES, 0), 0, G_MAXUINT);
    }
    JsonObject *gate = object_member(object, GL_MEMBER_GATE);
    gboolean complete = bool_member(gate, GL_MEMBER_COMPLETE, TRUE) && run->problems->len == 0 &&
                        run->incomplete_files == 0 && run->unchecked_processes == 0;
    if (complete)
        return;
    if (run->incomplete_files == 0 && run->unchecked_processes == 0)
        run->incomplete_files = 1;
    if (run->problems->len == 0) {
        const char *message = string_member(gate, GL_MEMBER_MESSAGE);
        g_ptr_array_add(run->problems,
                        g_strdup_printf("not everything was checked: %s",
                                        message != NULL ? message : "its gate is not complete"));
    }
}

/* Reads the report's own facts: its targets, counts and what its run
 * could not check. Returns: FALSE with @error set when it is no gemleak
 * report this gemleak reads. */
static gboolean read_report(Report *report, const char *name, GError **error)
{
    JsonNode *root = json_parser_get_root(report->parser);
    JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root)
                                                                       : NULL;
    JsonArray *list = array_member(object, GL_MEMBER_FINDINGS);
    if (g_strcmp0(string_member(object_member(object, GL_MEMBER_TOOL), GL_MEMBER_NAME),
                  GL_JSON_TOOL_NAME) != 0 ||
        list == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_WRONG_FORMAT, "%s: JSON, but not a gemleak report "
                    "(gemleak reads back what --format json writes)", name);
        return FALSE;
    }
    gint64 version = int_member(object, GL_MEMBER_REPORT_VERSION, 0);
    if (version > GL_JSON_REPORT_VERSION) {
        g_set_error(error, GL_ERROR, GL_ERROR_WRONG_FORMAT, "%s: a report of shape %" G_GINT64_FORMAT
                    ", newer than this gemleak reads (%d): use the gemleak that wrote it", name,
                    version, GL_JSON_REPORT_VERSION);
        return FALSE;
    }
    GlJudgedRun *run = &report->run;
    add_strings(run->targets, array_member(object, GL_MEMBER_TARGETS));
    JsonObject *summary = object_member(object, GL_MEMBER_SUMMARY);
    read_unchecked(object, summary, run);
    JsonObject *reasons = object_member(summary, GL_MEMBER_SKIPPED_BY_REASON);
    run->processes = (guint) CLAMP(int_member(summary, GL_MEMBER_FILES, 0), 0, G_MAXUINT);
    run->errors_seen = count_member(summary, GL_MEMBER_ERRORS_SEEN);
    run->other_leak_kinds = count_member(reasons, GL_MEMBER_OTHER_LEAK_KINDS);
    run->not_in_target = count_member(reasons, GL_MEMBER_NOT_IN_TARGET);
    run->ruby_memory = count_member(reasons, GL_MEMBER_RUBY_MEMORY);
    run->in_init = count_member(reasons, GL_MEMBER_IN_INIT);
    run->unjudged_process = count_member(reasons, GL_MEMBER_UNJUDGED_PROCESS);
    run->repeated = count_member(reasons, GL_MEMBER_REPEATED_BY_LATER_CHECK);
    run->inherited = count_member(reasons, GL_MEMBER_INHERITED_FROM_PARENT);
    report->findings = list;
    report->process.stands_for = run->processes;
    report->process.judged = run;
    return TRUE;
}

/* ---- the input seam (input_int.h) ------------------------------------------------- */

/* A JSON object, '{' after blanks: a report, not Valgrind's XML. Never one
 * found in a directory, where only an engine's files are listed. */
static gboolean detect_json(const char *head, gsize length, gboolean listed)
{
    gsize i = 0;
    while (i < length && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    return !listed && i < length && head[i] == '{';
}

static gpointer open_json(int fd, const char *data, gsize size, const char *name)
{
    Report *report = g_new0(Report, 1);
    report->parser = json_parser_new();
    report->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    report->run.targets = g_ptr_array_new_with_free_func(g_free);
    report->run.problems = g_ptr_array_new_with_free_func(g_free);
    report->run.truncated_files = g_ptr_array_new_with_free_func(g_free);
    report->run.growth_unmeasured = g_ptr_array_new_with_free_func(g_free);
    GError *error = NULL;
    g_autofree char *text = NULL;
    gsize length = size;
    if (fd >= 0) {
        text = read_whole(fd, name, &length, &error);
        close(fd);
    } else if (size > MAX_SIZE) {
        g_set_error(&error, GL_ERROR, GL_ERROR_LIMIT, "%s: not a regular file of at most %u MiB: "
                    "refused", name, (guint) (MAX_SIZE >> 20));
    }
    const char *bytes = fd >= 0 ? text : data;
    if (error == NULL && bytes != NULL && parse(report, bytes, length, name, &error))
        read_report(report, name, &error);
    if (error != NULL)
        g_ptr_array_add(report->problems, error);
    return report;
}

static GlRecord *next_json(gpointer state)
{
    Report *report = state;
    while (report->findings != NULL && report->next < json_array_get_length(report->findings)) {
        guint index = report->next++;
        JsonObject *object = object_element(report->findings, index);
        if (object != NULL) {
            report->process.n_errors++;
            return read_finding(object, index);
        }
    }
    return NULL;
}

static const GlProcess *process_json(gconstpointer state)
{
    return &((const Report *) state)->process;
}

static const GPtrArray *problems_json(gconstpointer state)
{
    return ((const Report *) state)->problems;
}

static void free_json(gpointer state)
{
    Report *report = state;
    if (report == NULL)
        return;
    g_object_unref(report->parser);
    g_ptr_array_unref(report->problems);
    g_ptr_array_unref(report->run.targets);
    g_ptr_array_unref(report->run.problems);
    g_ptr_array_unref(report->run.truncated_files);
    g_ptr_array_unref(report->run.growth_unmeasured);
    g_free(report);
}

const GlInputFormat gl_input_json_report = {
    .name = "gemleak-json",
    .reads = "gemleak's own JSON reports (--format json): the shards of a CI matrix\n"
             "merge as one run",
    .named = NULL,
    .detect = detect_json,
    .open = open_json,
    .next = next_json,
    .process = process_json,
    .problems = problems_json,
    .free = free_json,
};
