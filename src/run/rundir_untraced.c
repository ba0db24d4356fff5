/* The XML of forks that ran a program Valgrind does not trace, dropped
 * from a run's directory once its commands ended (rundir.h). What the
 * processes left there is read by gemleak/read/run_dir.h. */
#include "gemleak/run/rundir.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/read/run_dir.h"

#include <string.h>

#include <glib/gstdio.h>

/* A preamble is a few KiB; its argv may be long (a ruby given a thousand
 * test files), but not this long. */
#define PREAMBLE_MAX_BYTES ((gsize) 4 * 1024 * 1024)

/* Returns: TRUE if the XML file @path ends after its preamble: a process
 * forked under Valgrind writes its preamble at once, and then, having
 * exec'd a program Valgrind skips, nothing more. */
static gboolean ends_after_preamble(const char *path)
{
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_regular(path, PREAMBLE_MAX_BYTES, &text, &length, NULL))
        return FALSE;
    if (memchr(text, '\0', length) != NULL || strstr(text, "<status>") != NULL ||
        strstr(text, "<error>") != NULL || strstr(text, "<valgrindoutput>") == NULL)
        return FALSE;
    const char *args = g_strrstr(text, "</args>");
    if (args == NULL)
        return FALSE;
    for (const char *c = args + strlen("</args>"); *c != '\0'; c++)
        if (!g_ascii_isspace(*c))
            return FALSE;
    return TRUE;
}

guint gl_rundir_drop_untraced(const char *dir, GHashTable *killed)
{
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    guint dropped = 0;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!gl_run_dir_is_pid_file(name, "", ".xml"))
            continue;
        gint pid = (gint) g_ascii_strtoll(name, NULL, 10);
        if (killed != NULL && g_hash_table_contains(killed, GINT_TO_POINTER(pid)))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (ends_after_preamble(path) && g_unlink(path) == 0) {
            /* What it loaded went with the exec: nothing of it was left to
             * check, and its list must not read as a process that ran
             * outside Valgrind. */
            g_autofree char *list = g_strdup_printf("%s/" GL_PROTO_LOADED_PREFIX "%d" GL_PROTO_FILE_SUFFIX,
                                                    dir, pid);
            g_unlink(list);
            dropped++;
        }
    }
    return dropped;
}
