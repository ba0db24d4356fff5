/* --write-baseline: what identifies each finding, in fingerprint order,
 * for a baseline to commit (see gemleak/judge/baseline.h for how it is
 * read back). */
#include "gemleak/report/report.h"
#include "gemleak/report/json_helpers.h"
#include "gemleak/report/wording.h"
#include "gemleak/base/json_format.h"
#include "gemleak/judge/fingerprint.h"
#include "gemleak/read/source.h"

#include <string.h>

#include "gemleak/base/json.h"

typedef struct {
    char *fingerprint;
    JsonNode *node;
} Entry;

static void entry_free(gpointer data)
{
    Entry *entry = data;
    g_free(entry->fingerprint);
    if (entry->node != NULL)
        json_node_unref(entry->node);
    g_free(entry);
}

static gint compare_entries(gconstpointer a, gconstpointer b)
{
    return strcmp((*(const Entry *const *) a)->fingerprint, (*(const Entry *const *) b)->fingerprint);
}

typedef struct {
    const GlReportContext *context;
    FILE *out;
    GPtrArray *entries;  /* Entry* */
} BaselineState;

static gpointer baseline_begin(const GlReportContext *context, FILE *out)
{
    BaselineState *state = g_new0(BaselineState, 1);
    state->context = context;
    state->out = out;
    state->entries = g_ptr_array_new_with_free_func(entry_free);
    return state;
}

/* Returns: (transfer full) (nullable): where @finding is, as a repository
 * holds it: "ext/x/x.c:12" relative to @project_root; the file's name alone
 * when its source lies elsewhere (another checkout's build), so that no
 * machine's paths get in; NULL when no frame has a source file. */
static char *baseline_location(const GlFinding *finding, const char *project_root)
{
    const GlFrame *at = gl_finding_location(finding);
    gboolean under_root = FALSE;
    g_autofree char *path = at != NULL ? gl_frame_source_path(at, project_root, &under_root) : NULL;
    if (path == NULL)
        return NULL;
    const char *slash = strrchr(path, '/');
    const char *shown = under_root || slash == NULL ? path : slash + 1;
    return at->line > 0 ? g_strdup_printf("%s:%u", shown, at->line) : g_strdup(shown);
}

static void baseline_finding(gpointer data, const GlFinding *finding, guint index)
{
    BaselineState *state = data;
    (void) index;
    g_autoptr(GlJsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    gl_json_add_string(builder, GL_MEMBER_KIND, finding->record->kind);
    gl_json_add_string(builder, GL_MEMBER_FINGERPRINT, finding->fingerprint);
    gl_json_add_other_fingerprints(builder, finding);
    g_autofree char *location = baseline_location(finding, state->context->project_root);
    gl_json_add_string(builder, GL_MEMBER_LOCATION, location);
    g_auto(GStrv) functions = gl_finding_functions(finding);
    json_builder_set_member_name(builder, GL_MEMBER_FUNCTIONS);
    json_builder_begin_array(builder);
    for (char **fn = functions; *fn != NULL; fn++)
        gl_json_add_string_value(builder, *fn);
    json_builder_end_array(builder);
    json_builder_end_object(builder);
    Entry *entry = g_new0(Entry, 1);
    entry->fingerprint = g_strdup(finding->fingerprint != NULL ? finding->fingerprint : "");
    entry->node = json_builder_get_root(builder);
    g_ptr_array_add(state->entries, entry);
}

static void baseline_end(gpointer data)
{
    BaselineState *state = data;
    /* In fingerprint order, not by size: the same leaks, the same bytes,
     * whatever each run lost. */
    g_ptr_array_sort(state->entries, compare_entries);
    g_autoptr(GlJsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    gl_json_add_int(builder, GL_MEMBER_FINGERPRINT_VERSION, GL_FINGERPRINT_VERSION);
    json_builder_set_member_name(builder, GL_MEMBER_FINDINGS);
    json_builder_begin_array(builder);
    for (guint i = 0; i < state->entries->len; i++) {
        Entry *entry = g_ptr_array_index(state->entries, i);
        json_builder_add_value(builder, g_steal_pointer(&entry->node));
    }
    json_builder_end_array(builder);
    json_builder_end_object(builder);
    gl_json_write(builder, state->out);
    g_ptr_array_unref(state->entries);
    g_free(state);
}

const GlReporter gl_report_baseline = {
    .name = "baseline",
    .begin = baseline_begin,
    .finding = baseline_finding,
    .end = baseline_end,
};
