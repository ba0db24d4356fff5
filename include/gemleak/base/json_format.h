/* The shape of gemleak's JSON report (--format json), which the report
 * writes (report_json.c) and gemleak reads back as an input
 * (read/json_report.c), and what every JSON file gemleak reads is held to:
 * what both sides of the format share lives here, below both, so that an
 * input never includes a report's header. */
#ifndef GEMLEAK_JSON_FORMAT_H
#define GEMLEAK_JSON_FORMAT_H

/* Raised when a change would mislead an older reader. */
#define GL_JSON_REPORT_VERSION 1

#include <glib.h>

/* gemleak's reports nest six deep; anything much deeper is not one. */
#define GL_JSON_INPUT_MAX_DEPTH 32

/* Returns: TRUE when @text (@length bytes) nests arrays and objects no
 * deeper than @max (brackets in strings do not count). json-glib recurses
 * once a level, and a hostile file of 80,000 '[' overflows the stack: a
 * JSON file gemleak did not write is checked with this first. */
gboolean gl_json_depth_within(const char *text, gsize length, guint max);

#endif
