/* Text from outside, escaped for a line of output (text.h). */
#include "gemleak/base/text.h"

#include <string.h>

void gl_text_append_escaped(GString *out, const char *text, gboolean keep_tabs)
{
    g_autofree char *valid = g_utf8_make_valid(text, -1);
    for (const char *p = valid; *p != '\0'; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        if (c == '\n')
            g_string_append(out, "\\n");
        else if (c == '\r')
            g_string_append(out, "\\r");
        else if (c == '\t' && !keep_tabs)
            g_string_append(out, "\\t");
        else if ((c < 0x20 && c != '\t') || c == 0x7f)
            g_string_append_printf(out, "\\x%02x", c);
        else if (c >= 0x80 && c <= 0x9f)
            g_string_append_printf(out, "\\u%04x", c);
        else
            g_string_append_len(out, p, g_utf8_next_char(p) - p);
    }
}

char *gl_text_escape(const char *text)
{
    GString *out = g_string_new(NULL);
    gl_text_append_escaped(out, text, FALSE);
    return g_string_free(out, FALSE);
}

const char *gl_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

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
