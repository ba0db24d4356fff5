/* Valgrind's added leak checks, from checks that report everything
 * (checks.h). */
#include "gemleak/judge/checks.h"

/* What the checks while the process ran have found so far of one loss
 * record. */
typedef struct {
    GHashTable *addresses;  /* of its blocks (gint64 *, owned) */
    guint64 bytes;
    guint64 blocks;
} Totals;

struct GlChecks {
    GHashTable *totals;     /* loss key (owned) -> Totals* (owned) */
    GArray *held;           /* GlOrdered: the checks' records kept, in order */
    GHashTable *at_exit;    /* the loss keys the exit check reported (owned), a set */
    guint not_lost;
};

static void free_totals(gpointer data)
{
    Totals *totals = data;
    g_hash_table_unref(totals->addresses);
    g_free(totals);
}

static void clear_ordered(gpointer data)
{
    gl_record_free(((GlOrdered *) data)->record);
}

GlChecks *gl_checks_new(void)
{
    GlChecks *checks = g_new0(GlChecks, 1);
    checks->totals = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_totals);
    checks->held = g_array_new(FALSE, FALSE, sizeof(GlOrdered));
    g_array_set_clear_func(checks->held, clear_ordered);
    checks->at_exit = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return checks;
}

void gl_checks_free(GlChecks *checks)
{
    if (checks == NULL)
        return;
    g_hash_table_unref(checks->totals);
    g_array_unref(checks->held);
    g_hash_table_unref(checks->at_exit);
    g_free(checks);
}

/* Returns: TRUE if @record, of a check while the process ran, found what
 * no earlier check had (its totals then grew). */
static gboolean grew(GlChecks *checks, GlRecord *record, const char *key)
{
    Totals *totals = g_hash_table_lookup(checks->totals, key);
    if (totals == NULL) {
        totals = g_new0(Totals, 1);
        totals->addresses = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
        g_hash_table_insert(checks->totals, g_strdup(key), totals);
    }
    gboolean more = FALSE;
    if (record->blocks != NULL) {
        for (guint j = 0; j < record->blocks->len; j++) {
            const GlBlock *block = &g_array_index(record->blocks, GlBlock, j);
            gint64 address = (gint64) block->address;
            if (g_hash_table_contains(totals->addresses, &address))
                continue;
            g_hash_table_add(totals->addresses, g_memdup2(&address, sizeof address));
            totals->bytes += block->bytes;
            totals->blocks++;
            more = TRUE;
        }
    } else if (record->leaked_blocks > totals->blocks || record->leaked_bytes > totals->bytes) {
        totals->bytes = MAX(totals->bytes, record->leaked_bytes);
        totals->blocks = MAX(totals->blocks, record->leaked_blocks);
        more = TRUE;
    }
    if (!more)
        return FALSE;
    record->leaked_bytes = totals->bytes;
    record->leaked_blocks = totals->blocks;
    g_autofree char *what = g_strdup_printf(
        "%s leak of %" G_GUINT64_FORMAT " byte(s) in %" G_GUINT64_FORMAT " object(s)",
        record->leak_kind == GL_LEAK_DEFINITE ? "Direct" : "Indirect", totals->bytes,
        totals->blocks);
    record->what = gl_record_intern(record, what);
    return TRUE;
}

GlRecord *gl_checks_take(GlChecks *checks, GlRecord *record, guint64 order)
{
    if (record->leak_kind == GL_LEAK_NONE)
        return record;
    g_autofree char *key = gl_record_loss_key(record);
    if (record->at_exit) {
        g_hash_table_add(checks->at_exit, g_steal_pointer(&key));
        return record;
    }
    if (!grew(checks, record, key)) {
        gl_record_free(record);
        return NULL;
    }
    GlOrdered held = { record, order };
    g_array_append_val(checks->held, held);
    return NULL;
}

guint gl_checks_held(const GlChecks *checks)
{
    return checks->held->len;
}

gboolean gl_checks_saw(const GlChecks *checks, const GlRecord *record, guint64 address)
{
    g_autofree char *key = gl_record_loss_key(record);
    const Totals *totals = g_hash_table_lookup(checks->totals, key);
    gint64 wanted = (gint64) address;
    return totals != NULL && g_hash_table_contains(totals->addresses, &wanted);
}

GArray *gl_checks_finish(GlChecks *checks, gboolean reached_exit)
{
    GArray *kept = g_array_new(FALSE, FALSE, sizeof(GlOrdered));
    g_array_set_clear_func(kept, clear_ordered);
    for (guint i = 0; i < checks->held->len; i++) {
        GlOrdered *held = &g_array_index(checks->held, GlOrdered, i);
        g_autofree char *key = gl_record_loss_key(held->record);
        if (reached_exit && !g_hash_table_contains(checks->at_exit, key)) {
            checks->not_lost++;
            gl_record_free(held->record);
        } else {
            g_array_append_val(kept, *held);
        }
        held->record = NULL;
    }
    g_array_set_size(checks->held, 0);
    return kept;
}

guint gl_checks_not_lost(const GlChecks *checks)
{
    return checks->not_lost;
}
