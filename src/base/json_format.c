/* What every JSON file gemleak reads is held to (json_format.h). */
#include "gemleak/base/json_format.h"

gboolean gl_json_depth_within(const char *text, gsize length, guint max)
{
    guint depth = 0;
    gboolean in_string = FALSE;
    for (gsize i = 0; i < length; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = FALSE;
        } else if (c == '"') {
            in_string = TRUE;
        } else if (c == '{' || c == '[') {
            if (++depth > max)
                return FALSE;
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        }
    }
    return TRUE;
}
