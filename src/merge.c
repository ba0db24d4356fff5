/* Findings: kept records merged by identity. */
#include "gemleak/merge.h"

#include <string.h>

struct GlFindings {
    GHashTable *by_key;  /* merge key (owned) -> GlFinding* (owned) */
};

static void finding_free(gpointer data)
{
    GlFinding *finding = data;
    gl_record_free(finding->record);
    g_array_unref(finding->pids);
    g_free(finding->fingerprint);
    g_free(finding);
}

GlFindings *gl_findings_new(void)
{
    GlFindings *findings = g_new0(GlFindings, 1);
    findings->by_key = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, finding_free);
    return findings;
}

void gl_findings_free(GlFindings *findings)
{
    if (findings == NULL)
        return;
    g_hash_table_unref(findings->by_key);
    g_free(findings);
}

guint gl_stack_relevant_frames(const GlStack *stack)
{
    for (guint i = stack->n_frames; i > 0; i--)
        if (stack->frames[i - 1].in_target)
            return i;
    return stack->n_frames;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static void append_stack_key(GString *key, const GlStack *stack)
{
    guint n = gl_stack_relevant_frames(stack);
    for (guint i = 0; i < n; i++) {
        const GlFrame *frame = &stack->frames[i];
        /* A stripped frame has only its object to tell it apart. */
        g_string_append(key, frame->fn != NULL ? frame->fn
                                               : frame->obj != NULL ? base_name(frame->obj) : "?");
        if (frame->file != NULL)
            g_string_append_printf(key, "@%s:%u", frame->file, frame->line);
        g_string_append_c(key, '\n');
    }
}

char *gl_record_merge_key(const GlRecord *record)
{
    GString *key = g_string_new(record->kind);
    g_string_append_c(key, '\n');
    append_stack_key(key, &record->stack);
    for (guint i = 0; i < record->aux->len; i++) {
        g_string_append(key, "--\n");
        append_stack_key(key, &g_array_index(record->aux, GlAux, i).stack);
    }
    return g_string_free(key, FALSE);
}

char *gl_record_fingerprint(const GlRecord *record)
{
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(sum, (const guchar *) record->kind, -1);
    const GlStack *stack = &record->stack;
    guint n = gl_stack_relevant_frames(stack);
    for (guint i = 0; i < n; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->fn == NULL)
            continue;
        g_checksum_update(sum, (const guchar *) "\n", 1);
        g_checksum_update(sum, (const guchar *) frame->fn, -1);
        if (frame->in_target && frame->obj != NULL) {
            g_checksum_update(sum, (const guchar *) "@", 1);
            g_checksum_update(sum, (const guchar *) base_name(frame->obj), -1);
        }
    }
    /* 64 bits tell apart every leak a suite will ever have. */
    return g_strndup(g_checksum_get_string(sum), 16);
}

static void add_pid(GArray *pids, gint64 pid)
{
    for (guint i = 0; i < pids->len; i++)
        if (g_array_index(pids, gint64, i) == pid)
            return;
    g_array_append_val(pids, pid);
}

void gl_findings_add(GlFindings *findings, GlRecord *record, guint64 order)
{
    char *key = gl_record_merge_key(record);
    GlFinding *finding = g_hash_table_lookup(findings->by_key, key);
    if (finding == NULL) {
        finding = g_new0(GlFinding, 1);
        finding->record = record;
        finding->pids = g_array_new(FALSE, FALSE, sizeof(gint64));
        finding->fingerprint = gl_record_fingerprint(record);
        finding->order = order;
        g_hash_table_insert(findings->by_key, key, finding);
    } else {
        g_free(key);
        /* Keep the first occurrence in reading order as the one shown. */
        if (order < finding->order) {
            GlRecord *older = finding->record;
            finding->record = record;
            finding->order = order;
            record = older;
        }
    }
    finding->occurrences++;
    add_pid(finding->pids, record->pid);
    finding->total_bytes += record->leaked_bytes;
    finding->total_blocks += record->leaked_blocks;
    if (finding->record != record)
        gl_record_free(record);
}

void gl_findings_absorb(GlFindings *into, GlFindings *from)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, from->by_key);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        GlFinding *theirs = value;
        GlFinding *ours = g_hash_table_lookup(into->by_key, key);
        g_hash_table_iter_steal(&iter);
        if (ours == NULL) {
            g_hash_table_insert(into->by_key, key, theirs);
            continue;
        }
        g_free(key);
        if (theirs->order < ours->order) {
            /* Theirs was read first: its record is shown and its pids lead. */
            GlRecord *record = ours->record;
            ours->record = theirs->record;
            theirs->record = record;
            GArray *pids = ours->pids;
            ours->pids = theirs->pids;
            theirs->pids = pids;
            ours->order = theirs->order;
        }
        ours->occurrences += theirs->occurrences;
        ours->total_bytes += theirs->total_bytes;
        ours->total_blocks += theirs->total_blocks;
        for (guint i = 0; i < theirs->pids->len; i++)
            add_pid(ours->pids, g_array_index(theirs->pids, gint64, i));
        finding_free(theirs);
    }
}

guint gl_findings_count(const GlFindings *findings)
{
    return g_hash_table_size(findings->by_key);
}

static gint compare_findings(gconstpointer a, gconstpointer b)
{
    const GlFinding *x = *(const GlFinding *const *) a;
    const GlFinding *y = *(const GlFinding *const *) b;
    if (x->total_bytes != y->total_bytes)
        return x->total_bytes > y->total_bytes ? -1 : 1;
    if (x->occurrences != y->occurrences)
        return x->occurrences > y->occurrences ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

GPtrArray *gl_findings_sorted(GlFindings *findings)
{
    GPtrArray *sorted = g_ptr_array_sized_new(g_hash_table_size(findings->by_key));
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, findings->by_key);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        g_ptr_array_add(sorted, value);
    g_ptr_array_sort(sorted, compare_findings);
    return sorted;
}
