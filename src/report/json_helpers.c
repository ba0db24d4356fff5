/* What the JSON formats share (report_json.c, report_sarif.c,
 * report_baseline.c) and the command line's JSON error: see
 * gemleak/report/json_helpers.h. */
#include "gemleak/report/json_helpers.h"
#include "gemleak/base/json_format.h"
#include "gemleak/report/wording.h"

void gl_json_add_string_value(JsonBuilder *builder, const char *value)
{
    if (value == NULL) {
        json_builder_add_null_value(builder);
    } else if (g_utf8_validate(value, -1, NULL)) {
        json_builder_add_string_value(builder, value);
    } else {
        /* Valgrind copies bytes as they are (paths, arguments, names), and
         * json-glib would write them so: JSON must be UTF-8. */
        g_autofree char *valid = g_utf8_make_valid(value, -1);
        json_builder_add_string_value(builder, valid);
    }
}

void gl_json_add_tool(JsonBuilder *builder)
{
    json_builder_set_member_name(builder, GL_MEMBER_TOOL);
    json_builder_begin_object(builder);
    gl_json_add_string(builder, GL_MEMBER_NAME, GL_JSON_TOOL_NAME);
    gl_json_add_string(builder, GL_MEMBER_VERSION, GEMLEAK_VERSION);
    json_builder_end_object(builder);
}

/* Adds { "name": ..., "location": ... } for @test. */
static void add_test_object(JsonBuilder *builder, const GlTest *test, const char *project_root)
{
    g_autofree char *name = gl_test_name(test, project_root);
    g_autofree char *location = gl_test_location(test, project_root);
    json_builder_begin_object(builder);
    gl_json_add_string(builder, GL_MEMBER_NAME, name);
    gl_json_add_string(builder, GL_MEMBER_LOCATION, location);
    json_builder_end_object(builder);
}

void gl_json_add_tests(JsonBuilder *builder, const GlFinding *finding, const char *project_root)
{
    json_builder_set_member_name(builder, GL_MEMBER_TESTS);
    json_builder_begin_array(builder);
    for (guint i = 0; i < finding->tests->len; i++)
        add_test_object(builder, g_ptr_array_index(finding->tests, i), project_root);
    json_builder_end_array(builder);
    json_builder_set_member_name(builder, GL_MEMBER_FOUND_AGAIN);
    json_builder_add_boolean_value(builder, finding->found_again);
    json_builder_set_member_name(builder, GL_MEMBER_ALLOCATED_IN_TESTS);
    json_builder_add_boolean_value(builder, finding->allocated_in_tests);
    if (finding->among > 0 && finding->among_first != NULL && finding->among_last != NULL) {
        json_builder_set_member_name(builder, GL_MEMBER_LOST_AMONG);
        json_builder_begin_object(builder);
        gl_json_add_int(builder, GL_MEMBER_TESTS,
                        (gint64) MIN(finding->among, (guint64) G_MAXINT64));
        json_builder_set_member_name(builder, GL_MEMBER_FIRST);
        add_test_object(builder, finding->among_first, project_root);
        json_builder_set_member_name(builder, GL_MEMBER_LAST);
        add_test_object(builder, finding->among_last, project_root);
        json_builder_end_object(builder);
    }
}

void gl_json_add_string(JsonBuilder *builder, const char *name, const char *value)
{
    json_builder_set_member_name(builder, name);
    gl_json_add_string_value(builder, value);
}

void gl_json_add_int(JsonBuilder *builder, const char *name, gint64 value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_int_value(builder, value);
}

void gl_json_add_other_fingerprints(JsonBuilder *builder, const GlFinding *finding)
{
    if (finding->structure_fingerprint != NULL)
        gl_json_add_string(builder, GL_MEMBER_STRUCTURE_FINGERPRINT,
                           finding->structure_fingerprint);
    if (finding->kind_fingerprints == NULL)
        return;
    json_builder_set_member_name(builder, GL_MEMBER_KIND_FINGERPRINTS);
    json_builder_begin_array(builder);
    for (char **print = finding->kind_fingerprints; *print != NULL; print++)
        gl_json_add_string_value(builder, *print);
    json_builder_end_array(builder);
}

void gl_json_write(JsonBuilder *builder, FILE *out)
{
    g_autoptr(GlJsonNode) root = json_builder_get_root(builder);
    g_autoptr(GlJsonGenerator) generator = json_generator_new();
    json_generator_set_pretty(generator, TRUE);
    json_generator_set_root(generator, root);
    g_autofree char *text = json_generator_to_data(generator, NULL);
    fputs(text, out);
    fputc('\n', out);
}
