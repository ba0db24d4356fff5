/* The tests a leak's blocks were allocated in (owners.h). */
#include "gemleak/judge/owners.h"

/* One test's share of a record: its blocks allocated in that test. */
typedef struct {
    const char *owner;
    guint64 bytes;
    guint64 blocks;
} Share;

GPtrArray *gl_owners_copies(const GlRecord *record, GHashTable *owners, const char *origin,
                            const GlChecks *checks)
{
    if (((owners == NULL || g_hash_table_size(owners) == 0) && origin == NULL) ||
        record->leak_kind == GL_LEAK_NONE || !record->at_exit || record->blocks == NULL)
        return NULL;
    g_autoptr(GArray) shares = g_array_new(FALSE, FALSE, sizeof(Share));
    for (guint j = 0; j < record->blocks->len; j++) {
        const GlBlock *block = &g_array_index(record->blocks, GlBlock, j);
        gint64 address = (gint64) block->address;
        const char *owner = owners != NULL ? g_hash_table_lookup(owners, &address) : NULL;
        if (owner == NULL)
            owner = origin;
        if (owner == NULL || (checks != NULL && gl_checks_saw(checks, record, block->address)))
            continue;
        guint k = 0;
        while (k < shares->len && g_array_index(shares, Share, k).owner != owner)
            k++;
        if (k == shares->len) {
            Share share = { owner, 0, 0 };
            g_array_append_val(shares, share);
        }
        g_array_index(shares, Share, k).bytes += block->bytes;
        g_array_index(shares, Share, k).blocks++;
    }
    if (shares->len == 0)
        return NULL;
    GPtrArray *copies = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
    for (guint k = 0; k < shares->len; k++) {
        const Share *share = &g_array_index(shares, Share, k);
        GlRecord *copy = gl_record_copy(record);
        /* Not g_clear_pointer: clang-tidy takes its size check for a mistake. */
        g_array_unref(copy->blocks);
        copy->blocks = NULL;
        copy->marker = gl_record_intern(copy, share->owner);
        copy->at_exit = FALSE;
        copy->attribution_only = TRUE;
        copy->leaked_bytes = share->bytes;
        copy->leaked_blocks = share->blocks;
        g_ptr_array_add(copies, copy);
    }
    return copies;
}
