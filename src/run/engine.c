/* The engines gemleak can run a suite under (engine.h): the one place
 * where they are listed. */
#include "gemleak/run/engine.h"

#include <string.h>

static const GlEngine *const engines[] = {
    &gl_engine_valgrind,
    &gl_engine_lsan,
};

const char *gl_engine_names(void)
{
    static char *names;
    if (names == NULL) {
        GString *joined = g_string_new(NULL);
        for (guint i = 0; i < G_N_ELEMENTS(engines); i++)
            g_string_append_printf(joined, "%s%s", i > 0 ? ", " : "", engines[i]->name);
        names = g_string_free(joined, FALSE);
    }
    return names;
}

const GlEngine *gl_engine_find(const char *name)
{
    if (name == NULL)
        return engines[0];
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++)
        if (strcmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}
