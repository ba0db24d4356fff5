/* --format json: one object with the findings and a summary, for programs
 * (and for --baseline, which reads the fingerprints back). */
#include "gemleak/report/report.h"
#include "gemleak/report/json_helpers.h"
#include "gemleak/report/wording.h"
#include "gemleak/base/json_format.h"
#include "gemleak/judge/project_paths.h"

#include "gemleak/base/json.h"

typedef struct {
    const GlReportContext *context;
    FILE *out;
    JsonBuilder *builder;
    JsonBuilder *groups;   /* the "groups" array, built beside the findings */
    guint group;           /* the id of the group whose findings are written */
} JsonState;

static void add_frames(JsonBuilder *builder, const GlStack *stack, const char *project_root)
{
    gboolean own_source = gl_stack_has_own_source(stack);
    json_builder_set_member_name(builder, GL_MEMBER_FRAMES);
    json_builder_begin_array(builder);
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        g_autofree char *ip = g_strdup_printf("0x%" G_GINT64_MODIFIER "X", frame->ip);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, GL_MEMBER_FN, frame->fn);
        gl_json_add_string(builder, GL_MEMBER_OBJ, frame->obj);
        gl_json_add_string(builder, GL_MEMBER_DIR, frame->dir);
        gl_json_add_string(builder, GL_MEMBER_FILE, frame->file);
        g_autofree char *path = gl_frame_source_path(frame, project_root, NULL);
        gl_json_add_string(builder, GL_MEMBER_PATH, path);
        json_builder_set_member_name(builder, GL_MEMBER_LINE);
        if (frame->line > 0)
            json_builder_add_int_value(builder, frame->line);
        else
            json_builder_add_null_value(builder);
        gl_json_add_string(builder, GL_MEMBER_IP, ip);
        json_builder_set_member_name(builder, GL_MEMBER_IN_TARGET);
        json_builder_add_boolean_value(builder, frame->in_target);
        /* in the target, but not the project's own source (project_paths.h) */
        json_builder_set_member_name(builder, GL_MEMBER_LINKED);
        json_builder_add_boolean_value(builder, frame->in_target &&
                                                    !gl_frame_is_own(frame, own_source));
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
}

/* Adds "fn", "file" (relative to @project_root when under it) and "line"
 * of @frame to the object being built. */
static void add_place(JsonBuilder *builder, const GlFrame *frame, const char *project_root)
{
    g_autofree char *path = gl_frame_source_path(frame, project_root, NULL);
    gl_json_add_string(builder, GL_MEMBER_FN, frame->fn);
    gl_json_add_string(builder, GL_MEMBER_FILE, path);
    json_builder_set_member_name(builder, GL_MEMBER_LINE);
    if (frame->line > 0)
        json_builder_add_int_value(builder, frame->line);
    else
        json_builder_add_null_value(builder);
}

static void add_string_list(JsonBuilder *builder, const char *name, const char *const *values,
                            guint n)
{
    json_builder_set_member_name(builder, name);
    json_builder_begin_array(builder);
    for (guint i = 0; i < n && values != NULL && values[i] != NULL; i++)
        gl_json_add_string_value(builder, values[i]);
    json_builder_end_array(builder);
}

static gpointer json_begin(const GlReportContext *context, FILE *out)
{
    JsonState *state = g_new0(JsonState, 1);
    state->context = context;
    state->out = out;
    state->builder = json_builder_new();
    JsonBuilder *builder = state->builder;
    json_builder_begin_object(builder);
    gl_json_add_tool(builder);
    /* What `gemleak filter` checks before it reads a report back (shards). */
    gl_json_add_int(builder, GL_MEMBER_REPORT_VERSION, GL_JSON_REPORT_VERSION);
    /* What --baseline checks before it matches them. */
    gl_json_add_int(builder, GL_MEMBER_FINGERPRINT_VERSION, GL_FINGERPRINT_VERSION);
    add_string_list(builder, GL_MEMBER_TARGETS, context->targets, G_MAXUINT);
    json_builder_set_member_name(builder, GL_MEMBER_FINDINGS);
    json_builder_begin_array(builder);
    state->groups = json_builder_new();
    json_builder_begin_array(state->groups);
    return state;
}

/* Adds whether @finding is certain, why not, and where it is reported at
 * ("location": the frame, and which of its stacks it is in). */
static void add_certainty_and_location(JsonBuilder *builder, const GlFinding *finding,
                                       const char *project_root)
{
    const GlRecord *record = finding->record;
    json_builder_set_member_name(builder, GL_MEMBER_CERTAIN);
    json_builder_add_boolean_value(builder, finding->certain);
    g_autofree char *uncertainty = gl_finding_uncertainty(finding);
    gl_json_add_string(builder, GL_MEMBER_UNCERTAINTY, uncertainty);
    if (!finding->certain) {
        gl_json_add_int(builder, GL_MEMBER_UNNAMED_FRAMES, record->unnamed_frames);
        if (record->stack_cut > 0)
            gl_json_add_int(builder, GL_MEMBER_STACK_CUT, record->stack_cut);
        gl_json_add_string(builder, GL_MEMBER_UNNAMED_OBJECT, record->unnamed_object);
    }
    const char *stack = NULL;
    const GlFrame *at = gl_finding_location_in(finding, &stack);
    json_builder_set_member_name(builder, GL_MEMBER_LOCATION);
    if (at != NULL) {
        g_autofree char *path = gl_frame_source_path(at, project_root, NULL);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, GL_MEMBER_FN, at->fn);
        gl_json_add_string(builder, GL_MEMBER_FILE, path);
        json_builder_set_member_name(builder, GL_MEMBER_LINE);
        if (at->line > 0)
            json_builder_add_int_value(builder, at->line);
        else
            json_builder_add_null_value(builder);
        gl_json_add_string(builder, GL_MEMBER_STACK, stack);
        json_builder_end_object(builder);
    } else {
        json_builder_add_null_value(builder);
    }
}

/* Adds @finding's stacks: its own frames, its other stacks ("stacks":
 * where the block was allocated, freed...), and every place its freed
 * block was used. */
static void add_stacks(JsonBuilder *builder, const GlFinding *finding, const char *project_root)
{
    const GlRecord *record = finding->record;
    add_frames(builder, &record->stack, project_root);
    json_builder_set_member_name(builder, GL_MEMBER_STACKS);
    json_builder_begin_array(builder);
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, GL_MEMBER_TEXT, aux->text);
        add_frames(builder, &aux->stack, project_root);
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
    if (finding->freed_block && finding->sites != NULL) {
        /* Every place the freed block was used, the one shown first. */
        json_builder_set_member_name(builder, GL_MEMBER_ACCESSES);
        json_builder_begin_array(builder);
        for (guint i = 0; i < finding->sites->len; i++) {
            const GlRecord *site = g_ptr_array_index(finding->sites, i);
            json_builder_begin_object(builder);
            gl_json_add_string(builder, GL_MEMBER_KIND, site->kind);
            gl_json_add_string(builder, GL_MEMBER_MESSAGE, site->what);
            add_frames(builder, &site->stack, project_root);
            json_builder_end_object(builder);
        }
        json_builder_end_array(builder);
    }
}

/* Returns: (transfer none) (nullable): the "leak_kind" of a finding shown
 * by @finding: "growth" for growth (whatever kinds its samples were), a
 * leak's kind, else none. */
static const char *leak_kind_name(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (finding->growth != NULL)
        return GL_JSON_LEAK_KIND_GROWTH;
    return record->leak_kind != GL_LEAK_NONE ? gl_leak_kind_to_string(record->leak_kind) : NULL;
}

static void add_changes(JsonBuilder *builder, const char *name, const gint64 *changes, guint n)
{
    json_builder_set_member_name(builder, name);
    json_builder_begin_array(builder);
    for (guint i = 0; i < n; i++)
        json_builder_add_int_value(builder, changes[i]);
    json_builder_end_array(builder);
}

/* Adds "growth": what the site's live memory did over its test's
 * repetitions, when @finding is growth (json_format.h). */
static void add_growth(JsonBuilder *builder, const GlFinding *finding)
{
    const GlGrowth *growth = finding->growth;
    if (growth == NULL)
        return;
    guint k = growth->bytes != NULL && growth->blocks != NULL ? growth->repetitions : 0;
    json_builder_set_member_name(builder, GL_MEMBER_GROWTH);
    json_builder_begin_object(builder);
    gl_json_add_int(builder, GL_MEMBER_REPETITIONS, k);
    add_changes(builder, GL_MEMBER_BYTES, growth->bytes, k);
    add_changes(builder, GL_MEMBER_BLOCKS, growth->blocks, k);
    gl_json_add_int(builder, GL_MEMBER_MEDIAN_BYTES,
                    (gint64) MIN(growth->median_bytes, (guint64) G_MAXINT64));
    json_builder_set_member_name(builder, GL_MEMBER_HELD);
    json_builder_add_boolean_value(builder, growth->held);
    json_builder_set_member_name(builder, GL_MEMBER_LOST);
    json_builder_add_boolean_value(builder, growth->lost);
    json_builder_end_object(builder);
}

static void json_finding(gpointer data, const GlFinding *finding, guint index)
{
    JsonState *state = data;
    JsonBuilder *builder = state->builder;
    const GlRecord *record = finding->record;
    (void) index;
    g_autofree char *message = gl_finding_message(finding);

    json_builder_begin_object(builder);
    gl_json_add_string(builder, GL_MEMBER_KIND, record->kind);
    gl_json_add_string(builder, GL_MEMBER_LEAK_KIND, leak_kind_name(finding));
    gl_json_add_string(builder, GL_MEMBER_MESSAGE, message);
    gl_json_add_string(builder, GL_MEMBER_WHAT, record->what);
    gl_json_add_int(builder, GL_MEMBER_BYTES, (gint64) finding->total_bytes);
    gl_json_add_int(builder, GL_MEMBER_DIRECT_BYTES, (gint64) finding->direct_bytes);
    gl_json_add_int(builder, GL_MEMBER_BLOCKS, (gint64) finding->total_blocks);
    gl_json_add_int(builder, GL_MEMBER_OCCURRENCES, finding->occurrences);
    json_builder_set_member_name(builder, GL_MEMBER_PIDS);
    json_builder_begin_array(builder);
    for (guint i = 0; i < finding->pids->len; i++)
        json_builder_add_int_value(builder, g_array_index(finding->pids, gint64, i));
    json_builder_end_array(builder);
    gl_json_add_tests(builder, finding, state->context->project_root);
    json_builder_set_member_name(builder, GL_MEMBER_MORE_TESTS);
    json_builder_add_boolean_value(builder, finding->more_tests);
    json_builder_set_member_name(builder, GL_MEMBER_LOST_BEFORE_TESTS);
    json_builder_add_boolean_value(builder, finding->lost_before_tests);
    json_builder_set_member_name(builder, GL_MEMBER_LOST_AT_EXIT);
    json_builder_add_boolean_value(builder, finding->lost_at_exit);
    gl_json_add_string(builder, GL_MEMBER_FINGERPRINT, finding->fingerprint);
    if (state->group > 0)
        gl_json_add_int(builder, GL_MEMBER_GROUP, state->group);
    gl_json_add_other_fingerprints(builder, finding);
    add_certainty_and_location(builder, finding, state->context->project_root);
    add_stacks(builder, finding, state->context->project_root);
    gl_json_add_string(builder, GL_MEMBER_SUPPRESSION,
               record->suppression != NULL ? record->suppression->rawtext : NULL);
    add_growth(builder, finding);
    json_builder_end_object(builder);
}

/* Adds @group's ways in ("entries") and what its structures owned
 * ("owned"), each block with its fingerprint and place (group.h). */
static void add_ways_and_owned(JsonBuilder *builder, const GlGroup *group,
                               const char *project_root)
{
    json_builder_set_member_name(builder, GL_MEMBER_ENTRIES);
    json_builder_begin_array(builder);
    for (guint w = 0; w < group->ways->len; w++) {
        const GlWayIn *way = &g_array_index(group->ways, GlWayIn, w);
        json_builder_begin_object(builder);
        add_place(builder, way->frame, project_root);
        gl_json_add_int(builder, GL_MEMBER_CALL_PATHS, way->call_paths);
        gl_json_add_int(builder, GL_MEMBER_BYTES, (gint64) way->bytes);
        gl_json_add_int(builder, GL_MEMBER_BLOCKS, (gint64) way->blocks);
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
    json_builder_set_member_name(builder, GL_MEMBER_OWNED);
    json_builder_begin_array(builder);
    for (guint o = 0; o < group->owned->len; o++) {
        const GlOwned *owned = &g_array_index(group->owned, GlOwned, o);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, GL_MEMBER_FINGERPRINT,
                           owned->finding != NULL ? owned->finding->fingerprint : NULL);
        gl_json_add_int(builder, GL_MEMBER_BYTES, (gint64) owned->bytes);
        gl_json_add_int(builder, GL_MEMBER_BLOCKS, (gint64) owned->blocks);
        json_builder_set_member_name(builder, GL_MEMBER_LOCATION);
        const GlFrame *at = gl_finding_location(owned->finding);
        if (at != NULL) {
            json_builder_begin_object(builder);
            add_place(builder, at, project_root);
            json_builder_end_object(builder);
        } else {
            json_builder_add_null_value(builder);
        }
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
}

/* A group's findings, each with its id, and the group in "groups": its
 * totals and the fingerprints of its findings (group.h). */
static void json_group(gpointer data, const GlGroup *group, guint index)
{
    JsonState *state = data;
    state->group = group->id;
    for (guint i = 0; i < group->findings->len; i++)
        json_finding(state, g_ptr_array_index(group->findings, i), index);
    const GlFinding *first = g_ptr_array_index(group->findings, 0);
    const GlRecord *record = first->record;
    JsonBuilder *builder = state->groups;
    g_autofree char *message = gl_group_message(group);
    g_autofree char *reason = gl_group_reason(group);
    json_builder_begin_object(builder);
    gl_json_add_int(builder, GL_MEMBER_ID, group->id);
    gl_json_add_string(builder, GL_MEMBER_KIND, record->kind);
    gl_json_add_string(builder, GL_MEMBER_LEAK_KIND, leak_kind_name(first));
    gl_json_add_string(builder, GL_MEMBER_MESSAGE, message);
    gl_json_add_string(builder, GL_MEMBER_REASON, reason);
    gl_json_add_string(builder, GL_MEMBER_FUNCTION, group->function);
    gl_json_add_string(builder, GL_MEMBER_ENTRY, group->entry);
    gl_json_add_int(builder, GL_MEMBER_BYTES, (gint64) group->total_bytes);
    gl_json_add_int(builder, GL_MEMBER_DIRECT_BYTES, (gint64) group->direct_bytes);
    gl_json_add_int(builder, GL_MEMBER_BLOCKS, (gint64) group->total_blocks);
    gl_json_add_int(builder, GL_MEMBER_OCCURRENCES, (gint64) group->occurrences);
    json_builder_set_member_name(builder, GL_MEMBER_CERTAIN);
    json_builder_add_boolean_value(builder, group->certain);
    g_autofree char *uncertainty = gl_group_uncertainty(group);
    gl_json_add_string(builder, GL_MEMBER_UNCERTAINTY, uncertainty);
    json_builder_set_member_name(builder, GL_MEMBER_FINGERPRINTS);
    json_builder_begin_array(builder);
    for (guint i = 0; i < group->findings->len; i++)
        gl_json_add_string_value(builder,
                                 ((const GlFinding *) g_ptr_array_index(group->findings, i))
                                     ->fingerprint);
    json_builder_end_array(builder);
    /* Every function it was lost in, its ways in, and what its structures
     * owned (group.h). */
    json_builder_set_member_name(builder, GL_MEMBER_FUNCTIONS);
    json_builder_begin_array(builder);
    for (guint i = 0; i < group->functions->len; i++)
        gl_json_add_string_value(builder, g_ptr_array_index(group->functions, i));
    json_builder_end_array(builder);
    add_ways_and_owned(builder, group, state->context->project_root);
    json_builder_end_object(builder);
    /* the indirect leaks it owned that the report lists, in its group */
    for (guint o = 0; o < group->owned->len; o++) {
        const GlOwned *owned = &g_array_index(group->owned, GlOwned, o);
        if (owned->finding != NULL)
            json_finding(state, owned->finding, index);
    }
}

/* Adds "growth_measures" when the run asked for --growth: how many tests
 * were measured, those that were not and why, as the text note says;
 * `gemleak filter` reads them back, so that a merge of shards that
 * measured nothing is INCOMPLETE too. */
static void add_growth_measures(JsonBuilder *builder, const GlSummary *summary)
{
    if (!summary->growth_asked)
        return;
    json_builder_set_member_name(builder, GL_MEMBER_GROWTH_MEASURES);
    json_builder_begin_object(builder);
    gl_json_add_int(builder, GL_MEMBER_REPETITIONS, summary->growth_repetitions);
    gl_json_add_int(builder, GL_MEMBER_TESTS_MEASURED, summary->growth_measured);
    add_string_list(builder, GL_MEMBER_TESTS_NOT_MEASURED,
                    (const char *const *) summary->growth_unmeasured->pdata,
                    summary->growth_unmeasured->len);
    gl_json_add_int(builder, GL_MEMBER_UNFINISHED_PROCESSES, summary->growth_unfinished);
    json_builder_end_object(builder);
}

/* Adds "summary": the counts of what was read, found and skipped (they add
 * up: errors_seen = occurrences + baseline_known_occurrences + skipped),
 * and what was not checked. */
static void add_summary(JsonBuilder *builder, const GlReportContext *context)
{
    const GlSummary *summary = &context->analysis->summary;
    json_builder_set_member_name(builder, GL_MEMBER_SUMMARY);
    json_builder_begin_object(builder);
    gl_json_add_int(builder, GL_MEMBER_FILES, summary->processes);
    gl_json_add_int(builder, GL_MEMBER_CLEAN_PROCESSES, gl_report_clean_processes(context));
    gl_json_add_int(builder, GL_MEMBER_ERRORS_SEEN, (gint64) summary->errors_seen);
    gl_json_add_int(builder, GL_MEMBER_FINDINGS, context->findings->len);
    {
        g_autoptr(GPtrArray) groups = gl_findings_group(context->findings);
        gl_json_add_int(builder, GL_MEMBER_GROUPS, groups->len);
    }
    /* of the findings, those that are growth (--growth) */
    gl_json_add_int(builder, GL_MEMBER_GROWTH, gl_report_growth_count(context->findings, NULL));
    /* errors_seen = occurrences + baseline_known_occurrences + skipped */
    guint uncertain = 0;
    guint64 occurrences = 0, all_occurrences = 0;
    gl_report_counts(context, &occurrences, &all_occurrences, &uncertain);
    gl_json_add_int(builder, GL_MEMBER_OCCURRENCES, (gint64) occurrences);
    gl_json_add_int(builder, GL_MEMBER_UNCERTAIN, uncertain);
    gl_json_add_int(builder, GL_MEMBER_SKIPPED, (gint64) gl_summary_skipped(summary));
    json_builder_set_member_name(builder, GL_MEMBER_SKIPPED_BY_REASON);
    json_builder_begin_object(builder);
    gl_json_add_int(builder, GL_MEMBER_OTHER_LEAK_KINDS,
                    (gint64) summary->by_verdict[GL_VERDICT_SKIP_KIND]);
    gl_json_add_int(builder, GL_MEMBER_NOT_IN_TARGET,
                    (gint64) summary->by_verdict[GL_VERDICT_SKIP_NO_TARGET]);
    gl_json_add_int(builder, GL_MEMBER_RUBY_MEMORY,
                    (gint64) summary->by_verdict[GL_VERDICT_SKIP_RUBY]);
    gl_json_add_int(builder, GL_MEMBER_IN_INIT, (gint64) summary->by_verdict[GL_VERDICT_SKIP_INIT]);
    gl_json_add_int(builder, GL_MEMBER_UNJUDGED_PROCESS,
                    (gint64) summary->by_verdict[GL_VERDICT_SKIP_UNJUDGED]);
    gl_json_add_int(builder, GL_MEMBER_REPEATED_BY_LATER_CHECK, (gint64) summary->repeated);
    gl_json_add_int(builder, GL_MEMBER_INHERITED_FROM_PARENT, (gint64) summary->inherited);
    json_builder_end_object(builder);
    gl_json_add_int(builder, GL_MEMBER_BASELINE_KNOWN, context->baseline_known);
    gl_json_add_int(builder, GL_MEMBER_BASELINE_KNOWN_OCCURRENCES,
                    (gint64) (all_occurrences - occurrences));
    add_string_list(builder, GL_MEMBER_TRUNCATED_FILES,
                    (const char *const *) summary->truncated_files->pdata,
                    summary->truncated_files->len);
    /* What was not checked, for a merge of shards to carry: `gemleak
     * filter` reads these back (read/json_report.c). */
    gl_json_add_int(builder, GL_MEMBER_INCOMPLETE_FILES, summary->incomplete_files);
    gl_json_add_int(builder, GL_MEMBER_UNCHECKED_PROCESSES, summary->unchecked_processes);
    gl_json_add_int(builder, GL_MEMBER_FREE_AT_EXIT_PROCESSES, summary->free_at_exit);
    gl_json_add_int(builder, GL_MEMBER_RECENT_UNKEPT_PROCESSES, summary->recent_unkept);
    add_growth_measures(builder, summary);
    json_builder_set_member_name(builder, GL_MEMBER_PROBLEMS);
    json_builder_begin_array(builder);
    for (guint i = 0; i < context->analysis->problems->len; i++)
        gl_json_add_string_value(builder,
                                 ((const GError *) g_ptr_array_index(context->analysis->problems,
                                                                     i))->message);
    json_builder_end_array(builder);
    json_builder_end_object(builder);
}

static void json_end(gpointer data)
{
    JsonState *state = data;
    JsonBuilder *builder = state->builder;
    const GlReportContext *context = state->context;
    json_builder_end_array(builder);
    json_builder_end_array(state->groups);
    json_builder_set_member_name(builder, GL_MEMBER_GROUPS);
    json_builder_add_value(builder, json_builder_get_root(state->groups));
    g_object_unref(state->groups);
    add_summary(builder, context);

    /* gemleak run: how the command ended, beside what the gate says. */
    if (context->ran_command) {
        json_builder_set_member_name(builder, GL_MEMBER_COMMAND);
        json_builder_begin_object(builder);
        gl_json_add_int(builder, GL_MEMBER_STATUS, context->command_status);
        json_builder_end_object(builder);
    }

    json_builder_set_member_name(builder, GL_MEMBER_GATE);
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, GL_MEMBER_FAILED);
    json_builder_add_boolean_value(builder, context->gate != NULL && context->gate->failed);
    json_builder_set_member_name(builder, GL_MEMBER_COMPLETE);
    json_builder_add_boolean_value(builder, context->gate == NULL || context->gate->complete);
    gl_json_add_string(builder, GL_MEMBER_MESSAGE,
                       context->gate != NULL ? context->gate->line : NULL);
    json_builder_end_object(builder);
    json_builder_end_object(builder);

    gl_json_write(builder, state->out);
    g_object_unref(builder);
    g_free(state);
}

const GlReporter gl_report_json = {
    .name = "json",
    .begin = json_begin,
    .finding = json_finding,
    .group = json_group,
    .end = json_end,
};
