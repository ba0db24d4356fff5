/* What every reader notes of a process alike (process.h). */
#include "gemleak/read/process.h"
#include "gemleak/base/protocol.h"

#include <string.h>

gsize gl_process_test_key(const char *name, const char *location)
{
    /* FNV-1a over NAME, a tab and LOCATION: a suite of a hundred thousand
     * tests keeps a word a test, not its name (a two-test mix-up costs
     * only the order two tests are named in). */
    guint64 hash = 0xcbf29ce484222325u;
    for (const char *part[] = { name, "\t", location }, **p = part; p < part + 3; p++)
        for (const unsigned char *c = (const unsigned char *) *p; *c != '\0'; c++)
            hash = (hash ^ *c) * 0x100000001b3u;
    return (gsize) hash;
}

void gl_process_note_marker(GlProcess *process, const char *marker)
{
    static const char start[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_START "\t";
    static const char growth[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_GROWTH;
    if (marker != NULL && g_str_has_prefix(marker, growth) &&
        strchr("\t \n", marker[strlen(growth)]) != NULL) {
        if (process->growth_markers == NULL)
            process->growth_markers = g_ptr_array_new_with_free_func(g_free);
        char *copy = g_strdup(marker);  /* the array's */
        g_strchomp(copy);
        g_ptr_array_add(process->growth_markers, copy);
        return;
    }
    if (marker == NULL || !g_str_has_prefix(marker, start))
        return;
    /* Valgrind ends a client message's text with white space of its own;
     * the helper escapes any in the fields. */
    g_autofree char *fields = g_strchomp(g_strdup(marker + strlen(start)));
    char *tab = strchr(fields, '\t');
    if (tab == NULL)
        return;
    *tab = '\0';
    gpointer key = GSIZE_TO_POINTER(gl_process_test_key(fields, tab + 1));
    if (process->test_order == NULL)
        process->test_order = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (g_hash_table_contains(process->test_order, key))
        return;
    gsize seq = g_hash_table_size(process->test_order) + 1;
    g_hash_table_insert(process->test_order, key, GSIZE_TO_POINTER(seq));
}
