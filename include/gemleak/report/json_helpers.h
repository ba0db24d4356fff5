/* What the JSON formats share (report_json.c, report_sarif.c,
 * report_baseline.c) and the command line's JSON error: a member added,
 * and the document written, the same way in each. */
#ifndef GEMLEAK_REPORT_JSON_HELPERS_H
#define GEMLEAK_REPORT_JSON_HELPERS_H

#include <stdio.h>
#include <glib.h>
#include "gemleak/base/json.h"
#include "gemleak/judge/merge.h"

/* Adds the member @name to the object @builder is in: a string, or null
 * when @value is NULL. Bytes that are not UTF-8 become U+FFFD: JSON is
 * UTF-8 whatever the input held. */
void gl_json_add_string(JsonBuilder *builder, const char *name, const char *value);
/* The same for an array element. */
void gl_json_add_string_value(JsonBuilder *builder, const char *value);

/* Adds the member @name: an integer. */
void gl_json_add_int(JsonBuilder *builder, const char *name, gint64 value);

/* Adds what else a baseline knows @finding by: "structure_fingerprint"
 * (a block of a lost structure) and "kind_fingerprints" (errors of several
 * kinds on one freed block), when it has them. */
void gl_json_add_other_fingerprints(JsonBuilder *builder, const GlFinding *finding);

/* Adds the member "tool": gemleak's name and version, by which a JSON
 * file is known as gemleak's. */
void gl_json_add_tool(JsonBuilder *builder);

/* Adds the member "tests": an array of {"name", "location"}, the tests
 * @finding was lost in, first seen first. */
void gl_json_add_tests(JsonBuilder *builder, const GlFinding *finding, const char *project_root);

/* Writes the document @builder built to @out, indented, with a final
 * newline. The builder stays the caller's. */
void gl_json_write(JsonBuilder *builder, FILE *out);

#endif
