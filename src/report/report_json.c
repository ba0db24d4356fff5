/* --format json: one object with the findings and a summary, for programs
 * (and for --baseline, which reads the fingerprints back). */
#include "gemleak/report/report.h"
#include "gemleak/judge/project_paths.h"

#include <json-glib/json-glib.h>

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
    json_builder_set_member_name(builder, "frames");
    json_builder_begin_array(builder);
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        g_autofree char *ip = g_strdup_printf("0x%" G_GINT64_MODIFIER "X", frame->ip);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, "fn", frame->fn);
        gl_json_add_string(builder, "obj", frame->obj);
        gl_json_add_string(builder, "dir", frame->dir);
        gl_json_add_string(builder, "file", frame->file);
        g_autofree char *path = gl_frame_source_path(frame, project_root, NULL);
        gl_json_add_string(builder, "path", path);
        json_builder_set_member_name(builder, "line");
        if (frame->line > 0)
            json_builder_add_int_value(builder, frame->line);
        else
            json_builder_add_null_value(builder);
        gl_json_add_string(builder, "ip", ip);
        json_builder_set_member_name(builder, "in_target");
        json_builder_add_boolean_value(builder, frame->in_target);
        /* in the target, but not the project's own source (project_paths.h) */
        json_builder_set_member_name(builder, "linked");
        json_builder_add_boolean_value(builder, frame->in_target &&
                                                    !gl_frame_is_own(frame, own_source));
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
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
    gl_json_add_int(builder, "report_version", GL_JSON_REPORT_VERSION);
    /* What --baseline checks before it matches them. */
    gl_json_add_int(builder, "fingerprint_version", GL_FINGERPRINT_VERSION);
    add_string_list(builder, "targets", context->targets, G_MAXUINT);
    json_builder_set_member_name(builder, "findings");
    json_builder_begin_array(builder);
    state->groups = json_builder_new();
    json_builder_begin_array(state->groups);
    return state;
}

static void json_finding(gpointer data, const GlFinding *finding, guint index)
{
    JsonState *state = data;
    JsonBuilder *builder = state->builder;
    const GlRecord *record = finding->record;
    (void) index;
    g_autofree char *message = gl_finding_message(finding);

    json_builder_begin_object(builder);
    gl_json_add_string(builder, "kind", record->kind);
    gl_json_add_string(builder, "leak_kind",
               record->leak_kind != GL_LEAK_NONE ? gl_leak_kind_to_string(record->leak_kind) : NULL);
    gl_json_add_string(builder, "message", message);
    gl_json_add_string(builder, "what", record->what);
    gl_json_add_int(builder, "bytes", (gint64) finding->total_bytes);
    gl_json_add_int(builder, "direct_bytes", (gint64) finding->direct_bytes);
    gl_json_add_int(builder, "blocks", (gint64) finding->total_blocks);
    gl_json_add_int(builder, "occurrences", finding->occurrences);
    json_builder_set_member_name(builder, "pids");
    json_builder_begin_array(builder);
    for (guint i = 0; i < finding->pids->len; i++)
        json_builder_add_int_value(builder, g_array_index(finding->pids, gint64, i));
    json_builder_end_array(builder);
    gl_json_add_tests(builder, finding, state->context->project_root);
    json_builder_set_member_name(builder, "more_tests");
    json_builder_add_boolean_value(builder, finding->more_tests);
    json_builder_set_member_name(builder, "lost_before_tests");
    json_builder_add_boolean_value(builder, finding->lost_before_tests);
    json_builder_set_member_name(builder, "lost_at_exit");
    json_builder_add_boolean_value(builder, finding->lost_at_exit);
    gl_json_add_string(builder, "fingerprint", finding->fingerprint);
    if (state->group > 0)
        gl_json_add_int(builder, "group", state->group);
    gl_json_add_other_fingerprints(builder, finding);
    json_builder_set_member_name(builder, "certain");
    json_builder_add_boolean_value(builder, finding->certain);
    g_autofree char *uncertainty = gl_finding_uncertainty(finding);
    gl_json_add_string(builder, "uncertainty", uncertainty);
    if (!finding->certain) {
        gl_json_add_int(builder, "unnamed_frames", record->unnamed_frames);
        if (record->stack_cut > 0)
            gl_json_add_int(builder, "stack_cut", record->stack_cut);
        gl_json_add_string(builder, "unnamed_object", record->unnamed_object);
    }
    const char *stack = NULL;
    const GlFrame *at = gl_finding_location_in(finding, &stack);
    json_builder_set_member_name(builder, "location");
    if (at != NULL) {
        g_autofree char *path = gl_frame_source_path(at, state->context->project_root, NULL);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, "fn", at->fn);
        gl_json_add_string(builder, "file", path);
        json_builder_set_member_name(builder, "line");
        if (at->line > 0)
            json_builder_add_int_value(builder, at->line);
        else
            json_builder_add_null_value(builder);
        gl_json_add_string(builder, "stack", stack);
        json_builder_end_object(builder);
    } else {
        json_builder_add_null_value(builder);
    }
    add_frames(builder, &record->stack, state->context->project_root);
    json_builder_set_member_name(builder, "stacks");
    json_builder_begin_array(builder);
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        json_builder_begin_object(builder);
        gl_json_add_string(builder, "text", aux->text);
        add_frames(builder, &aux->stack, state->context->project_root);
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
    if (finding->freed_block && finding->sites != NULL) {
        /* Every place the freed block was used, the one shown first. */
        json_builder_set_member_name(builder, "accesses");
        json_builder_begin_array(builder);
        for (guint i = 0; i < finding->sites->len; i++) {
            const GlRecord *site = g_ptr_array_index(finding->sites, i);
            json_builder_begin_object(builder);
            gl_json_add_string(builder, "kind", site->kind);
            gl_json_add_string(builder, "message", site->what);
            add_frames(builder, &site->stack, state->context->project_root);
            json_builder_end_object(builder);
        }
        json_builder_end_array(builder);
    }
    gl_json_add_string(builder, "suppression",
               record->suppression != NULL ? record->suppression->rawtext : NULL);
    json_builder_end_object(builder);
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
    gl_json_add_int(builder, "id", group->id);
    gl_json_add_string(builder, "kind", record->kind);
    gl_json_add_string(builder, "leak_kind",
               record->leak_kind != GL_LEAK_NONE ? gl_leak_kind_to_string(record->leak_kind) : NULL);
    gl_json_add_string(builder, "message", message);
    gl_json_add_string(builder, "reason", reason);
    gl_json_add_string(builder, "function", group->function);
    gl_json_add_string(builder, "entry", group->entry);
    gl_json_add_int(builder, "bytes", (gint64) group->total_bytes);
    gl_json_add_int(builder, "direct_bytes", (gint64) group->direct_bytes);
    gl_json_add_int(builder, "blocks", (gint64) group->total_blocks);
    gl_json_add_int(builder, "occurrences", (gint64) group->occurrences);
    json_builder_set_member_name(builder, "certain");
    json_builder_add_boolean_value(builder, group->certain);
    json_builder_set_member_name(builder, "fingerprints");
    json_builder_begin_array(builder);
    for (guint i = 0; i < group->findings->len; i++)
        gl_json_add_string_value(builder,
                                 ((const GlFinding *) g_ptr_array_index(group->findings, i))
                                     ->fingerprint);
    json_builder_end_array(builder);
    json_builder_end_object(builder);
}

static void json_end(gpointer data)
{
    JsonState *state = data;
    JsonBuilder *builder = state->builder;
    const GlReportContext *context = state->context;
    const GlSummary *summary = &context->analysis->summary;
    json_builder_end_array(builder);
    json_builder_end_array(state->groups);
    json_builder_set_member_name(builder, "groups");
    json_builder_add_value(builder, json_builder_get_root(state->groups));
    g_object_unref(state->groups);

    json_builder_set_member_name(builder, "summary");
    json_builder_begin_object(builder);
    gl_json_add_int(builder, "files", summary->processes);
    gl_json_add_int(builder, "clean_processes", gl_report_clean_processes(context));
    gl_json_add_int(builder, "errors_seen", (gint64) summary->errors_seen);
    gl_json_add_int(builder, "findings", context->findings->len);
    {
        g_autoptr(GPtrArray) groups = gl_findings_group(context->findings);
        gl_json_add_int(builder, "groups", groups->len);
    }
    /* errors_seen = occurrences + baseline_known_occurrences + skipped */
    guint uncertain = 0;
    guint64 occurrences = 0, all_occurrences = 0;
    gl_report_counts(context, &occurrences, &all_occurrences, &uncertain);
    gl_json_add_int(builder, "occurrences", (gint64) occurrences);
    gl_json_add_int(builder, "uncertain", uncertain);
    gl_json_add_int(builder, "skipped", (gint64) gl_summary_skipped(summary));
    json_builder_set_member_name(builder, "skipped_by_reason");
    json_builder_begin_object(builder);
    gl_json_add_int(builder, "other_leak_kinds", (gint64) summary->by_verdict[GL_VERDICT_SKIP_KIND]);
    gl_json_add_int(builder, "not_in_target", (gint64) summary->by_verdict[GL_VERDICT_SKIP_NO_TARGET]);
    gl_json_add_int(builder, "ruby_memory", (gint64) summary->by_verdict[GL_VERDICT_SKIP_RUBY]);
    gl_json_add_int(builder, "in_init", (gint64) summary->by_verdict[GL_VERDICT_SKIP_INIT]);
    gl_json_add_int(builder, "unjudged_process",
                    (gint64) summary->by_verdict[GL_VERDICT_SKIP_UNJUDGED]);
    gl_json_add_int(builder, "repeated_by_later_check", (gint64) summary->repeated);
    gl_json_add_int(builder, "inherited_from_parent", (gint64) summary->inherited);
    json_builder_end_object(builder);
    gl_json_add_int(builder, "baseline_known", context->baseline_known);
    gl_json_add_int(builder, "baseline_known_occurrences", (gint64) (all_occurrences - occurrences));
    add_string_list(builder, "truncated_files",
                    (const char *const *) summary->truncated_files->pdata,
                    summary->truncated_files->len);
    /* What was not checked, for a merge of shards to carry: `gemleak
     * filter` reads these back (read/json_report.c). */
    gl_json_add_int(builder, "incomplete_files", summary->incomplete_files);
    gl_json_add_int(builder, "unchecked_processes", summary->unchecked_processes);
    gl_json_add_int(builder, "free_at_exit_processes", summary->free_at_exit);
    json_builder_set_member_name(builder, "problems");
    json_builder_begin_array(builder);
    for (guint i = 0; i < context->analysis->problems->len; i++)
        gl_json_add_string_value(builder,
                                 ((const GError *) g_ptr_array_index(context->analysis->problems,
                                                                     i))->message);
    json_builder_end_array(builder);
    json_builder_end_object(builder);

    /* gemleak run: how the command ended, beside what the gate says. */
    if (context->ran_command) {
        json_builder_set_member_name(builder, "command");
        json_builder_begin_object(builder);
        gl_json_add_int(builder, "status", context->command_status);
        json_builder_end_object(builder);
    }

    json_builder_set_member_name(builder, "gate");
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "failed");
    json_builder_add_boolean_value(builder, context->gate != NULL && context->gate->failed);
    json_builder_set_member_name(builder, "complete");
    json_builder_add_boolean_value(builder, context->gate == NULL || context->gate->complete);
    gl_json_add_string(builder, "message", context->gate != NULL ? context->gate->line : NULL);
    json_builder_end_object(builder);
    json_builder_end_object(builder);

    gl_json_write(builder, state->out);
    g_object_unref(builder);
    g_free(state);
}

const GlReporter gl_report_json = {
    .name = "json",
    .summary = "one JSON object: findings (kind, message, bytes, pids, frames...) and summary",
    .begin = json_begin,
    .finding = json_finding,
    .group = json_group,
    .end = json_end,
};
