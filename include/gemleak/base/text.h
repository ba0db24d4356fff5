/* Text from outside (file names, test names, command lines, what Ruby or a
 * runtime printed) as one line of gemleak's own output can show it: every
 * stage that prints such a string escapes it here first, so that no raw
 * control character reaches a terminal or forges a line. */
#ifndef GEMLEAK_TEXT_H
#define GEMLEAK_TEXT_H

#include <glib.h>

/* Appends @text to @out as a line of text can show it: bytes that are not
 * UTF-8 become U+FFFD; control characters, which would end the line (a
 * test named "x\ngemleak: pass: no findings" would forge a line of the
 * report) or reach the terminal, are escaped: \n, \r, \t (kept as it is
 * when @keep_tabs), \xHH, and \u0080 to \u009f; printable UTF-8 stays as
 * it is. */
void gl_text_append_escaped(GString *out, const char *text, gboolean keep_tabs);

/* Returns: (transfer full): @text escaped as gl_text_append_escaped()
 * does, tabs too. */
char *gl_text_escape(const char *text);

/* Returns: (transfer none): the last component of @path, in @path ("x.so"
 * of "/a/b/x.so"; @path itself when it has no slash). */
const char *gl_base_name(const char *path);

/* gemleak's reports nest six deep; anything much deeper is not one. */
#define GL_JSON_INPUT_MAX_DEPTH 32

/* Returns: TRUE when @text (@length bytes) nests arrays and objects no
 * deeper than @max (brackets in strings do not count). json-glib recurses
 * once a level, and a hostile file of 80,000 '[' overflows the stack: a
 * JSON file gemleak did not write is checked with this first. */
gboolean gl_json_depth_within(const char *text, gsize length, guint max);

#endif
