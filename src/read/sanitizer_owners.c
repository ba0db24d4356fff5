/* The owners in the stacks (sanitizer_owners_int.h). */
#include <string.h>

#include "gemleak/base/protocol.h"
#include "sanitizer_owners_int.h"

#define OWNER_LINE GL_OWNER_NAME_LINE
#define FRAMES_LINE GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNER_FRAMES "\t"
/* The library whose array the owners' frames point into. */
#define FRONT_LIBRARY GL_PROTO_LIBRARY_PREFIX "alloc.so"

struct GlOwnerFrames {
    gboolean placed;       /* "gemleak:owner-frames" read */
    guint64 base;          /* the array's offset in the library */
    GHashTable *names;     /* index (GUINT_TO_POINTER) -> "NAME\tLOCATION" (owned) */
    gboolean any_test;     /* an owner is a test (not "\t", before the first) */
};

GlOwnerFrames *gl_owner_frames_new(void)
{
    GlOwnerFrames *owners = g_new0(GlOwnerFrames, 1);
    owners->names = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    return owners;
}

void gl_owner_frames_free(GlOwnerFrames *owners)
{
    if (owners == NULL)
        return;
    g_hash_table_unref(owners->names);
    g_free(owners);
}

gboolean gl_owner_frames_line(GlOwnerFrames *owners, const char *line)
{
    char *end = NULL;
    if (g_str_has_prefix(line, FRAMES_LINE)) {
        const char *number = line + strlen(FRAMES_LINE);
        guint64 base = g_ascii_strtoull(number, &end, 16);
        if (end != number && *end == '\0') {
            owners->base = base;
            owners->placed = TRUE;
        }
        return TRUE;
    }
    if (!g_str_has_prefix(line, OWNER_LINE))
        return FALSE;
    const char *number = line + strlen(OWNER_LINE);
    guint64 index = g_ascii_strtoull(number, &end, 10);
    /* "INDEX<TAB>NAME<TAB>LOCATION" */
    if (end == number || *end != '\t' || index == 0 || index > G_MAXUINT32 ||
        strchr(end + 1, '\t') == NULL)
        return TRUE;
    const char *text = end + 1;
    owners->any_test |= strcmp(text, "\t") != 0;
    g_hash_table_replace(owners->names, GUINT_TO_POINTER((guint) index), g_strdup(text));
    return TRUE;
}

#define MAX_OWNERS ((guint64) GL_PROTO_OWNER_FRAMES_MAX)

/* Returns: the owner's index a frame in @module at @offset says; 0: none. */
static guint owner_index(const GlOwnerFrames *owners, const char *module, guint64 offset)
{
    if (owners == NULL || !owners->placed || module == NULL || offset < owners->base)
        return 0;
    const char *slash = strrchr(module, '/');
    if (strcmp(slash != NULL ? slash + 1 : module, FRONT_LIBRARY) != 0)
        return 0;
    guint64 index = (offset - owners->base) / 2;
    return index < MAX_OWNERS ? (guint) index : 0;
}

gboolean gl_owner_frames_is_owner(const GlOwnerFrames *owners, const char *module, guint64 offset)
{
    return owner_index(owners, module, offset) != 0;
}

const char *gl_owner_frames_owner(const GlOwnerFrames *owners, const char *module, guint64 offset)
{
    guint index = owner_index(owners, module, offset);
    return index != 0 ? g_hash_table_lookup(owners->names, GUINT_TO_POINTER(index)) : NULL;
}

gboolean gl_owner_frames_any_test(const GlOwnerFrames *owners)
{
    return owners != NULL && owners->any_test;
}
