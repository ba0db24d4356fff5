/* The engines gemleak can run a suite under (engine.h): the one place
 * where they are listed. */
#include "gemleak/run/engine.h"
#include "gemleak/base/run_files.h"

#include <string.h>

/* Each defined in its own file, which exports nothing else; the first is
 * the default. */
extern const GlEngine gl_engine_valgrind;   /* engine_valgrind.c */
extern const GlEngine gl_engine_lsan;       /* engine_lsan.c */
extern const GlEngine gl_engine_asan;       /* engine_asan.c */

static const GlEngine *const engines[] = {
    &gl_engine_valgrind,
    &gl_engine_lsan,
    &gl_engine_asan,
};

gboolean gl_engine_supports(const GlEngine *engine, guint caps)
{
    return gl_engine_facts_say(&engine->facts, caps);
}

const char *gl_engine_names(void)
{
    static char *names;
    if (names == NULL) {
        GString *joined = g_string_new(NULL);
        for (guint i = 0; i < G_N_ELEMENTS(engines); i++)
            g_string_append_printf(joined, "%s%s", i > 0 ? ", " : "", engines[i]->facts.name);
        names = g_string_free(joined, FALSE);
    }
    return names;
}

const char *gl_engine_help(void)
{
    static char *help;
    if (help == NULL) {
        GString *joined = g_string_new(NULL);
        guint n = G_N_ELEMENTS(engines);
        for (guint i = 0; i < n; i++)
            g_string_append_printf(joined, "%s%s (%s%s)",
                                   i == 0 ? "" : i + 1 == n ? " or " : ", ", engines[i]->facts.name,
                                   i == 0 ? "the default: " : "", engines[i]->sees);
        help = g_string_free(joined, FALSE);
    }
    return help;
}

const GlEngine *gl_engine_find(const char *name)
{
    if (name == NULL)
        return engines[0];
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++)
        if (strcmp(engines[i]->facts.name, name) == 0)
            return engines[i];
    return NULL;
}

gboolean gl_engine_is_log(const char *name, gint64 *pid)
{
    for (guint i = 0; i < G_N_ELEMENTS(engines); i++) {
        const char *log = engines[i]->facts.log;
        gsize n = log != NULL ? strlen(log) : 0;
        if (n > 0 && strncmp(name, log, n) == 0 && name[n] == '.' &&
            gl_run_file_pid(name, pid, NULL))
            return TRUE;
    }
    return FALSE;
}
