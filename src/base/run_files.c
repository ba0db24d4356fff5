/* The names of the files engines write in a run directory (run_files.h). */
#include "gemleak/base/run_files.h"

#include <string.h>

/* Returns: TRUE if @text (@length bytes) is "DIGITS" or "DIGITS.DIGITS",
 * with the numbers in *@pid and *@image (0 without the second). */
static gboolean pid_and_image(const char *text, gsize length, gint64 *pid, guint *image)
{
    g_autofree char *copy = g_strndup(text, length);
    char *dot = strchr(copy, '.');
    guint64 first = 0, second = 0;
    if (dot != NULL)
        *dot = '\0';
    if (!g_ascii_string_to_unsigned(copy, 10, 1, G_MAXINT32, &first, NULL) ||
        strspn(copy, "0123456789") != strlen(copy))
        return FALSE;
    if (dot != NULL && (!g_ascii_string_to_unsigned(dot + 1, 10, 1, G_MAXINT32, &second, NULL) ||
                        strspn(dot + 1, "0123456789") != strlen(dot + 1)))
        return FALSE;
    if (pid != NULL)
        *pid = (gint64) first;
    if (image != NULL)
        *image = (guint) second;
    return TRUE;
}

gboolean gl_run_file_pid(const char *name, gint64 *pid, guint *image)
{
    if (name == NULL)
        return FALSE;
    gsize length = strlen(name);
    if (g_str_has_suffix(name, ".xml"))
        return pid_and_image(name, length - strlen(".xml"), pid, image);
    if (g_str_has_suffix(name, ".xml.gz"))
        return pid_and_image(name, length - strlen(".xml.gz"), pid, image);
    const char *dot = strchr(name, '.');
    if (dot == NULL || dot == name)
        return FALSE;
    return pid_and_image(dot + 1, strlen(dot + 1), pid, image);
}

GPtrArray *gl_run_dirs(const char *const *inputs)
{
    GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (const char *const *input = inputs; *input != NULL; input++) {
        if (strcmp(*input, "-") == 0)
            continue;
        char *dir = g_file_test(*input, G_FILE_TEST_IS_DIR) ? g_strdup(*input)
                                                             : g_path_get_dirname(*input);
        /* add() replaces a key already there with the one given: ask first */
        if (g_hash_table_contains(seen, dir)) {
            g_free(dir);
            continue;
        }
        g_hash_table_add(seen, dir);
        g_ptr_array_add(dirs, dir);
    }
    return dirs;
}
