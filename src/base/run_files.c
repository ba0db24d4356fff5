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
