/* json-glib, loaded the first time gemleak reads or writes JSON: a
 * baseline, --format json or sarif, --jobs' durations, a JSON report read
 * back. A clean run under a sanitizer's engine does none of these, and no
 * longer pays for json-glib at each start: linked, it brought GObject and
 * GIO (and, through GIO, libmount, libselinux and libblkid, whose
 * constructors read /proc and /etc) into every gemleak process, and into
 * each of its forks: `gemleak --version` ran 3.66M instructions, 0.85M
 * without them (Callgrind), and `gemleak run --engine lsan -- ruby -e 0`
 * took 2.2 to 2.5 ms less (medians of 60 runs in turn).
 *
 * Include this header, never <json-glib/json-glib.h>: each json-glib and
 * GObject function gemleak calls is a macro here that calls it through
 * gl_jsonlib(). Its types and enums are json-glib's own. g_autoptr() takes
 * the GlJson* names below (json-glib's own cleanups call GObject by its
 * linked name). */
#ifndef GEMLEAK_BASE_JSON_H
#define GEMLEAK_BASE_JSON_H

#include <glib.h>
#include <json-glib/json-glib.h>

/* json-glib's soname, as Debian's libjson-glib-1.0-0 package installs it:
 * it loads GObject and GIO itself. */
#define GL_JSONLIB_LIBRARY "libjson-glib-1.0.so.0"

/* Each function gemleak calls, by its name (g_object_unref is GObject's). */
#define GL_JSONLIB_FUNCTIONS(X)                                                            \
    X(g_object_unref)                                                                     \
    X(json_array_get_element) X(json_array_get_int_element) X(json_array_get_length)      \
    X(json_array_get_object_element) X(json_array_get_string_element) X(json_array_new)   \
    X(json_array_add_int_element) X(json_builder_add_boolean_value)                      \
    X(json_builder_add_int_value) X(json_builder_add_null_value)                         \
    X(json_builder_add_string_value) X(json_builder_add_value) X(json_builder_begin_array) \
    X(json_builder_begin_object) X(json_builder_end_array) X(json_builder_end_object)    \
    X(json_builder_get_root) X(json_builder_new) X(json_builder_set_member_name)         \
    X(json_generator_new) X(json_generator_set_pretty) X(json_generator_set_root)        \
    X(json_generator_to_data) X(json_generator_to_file) X(json_node_copy)                \
    X(json_node_get_array) X(json_node_get_boolean) X(json_node_get_double)              \
    X(json_node_get_int) X(json_node_get_node_type) X(json_node_get_object)              \
    X(json_node_get_string) X(json_node_get_value_type) X(json_node_ref)                 \
    X(json_node_unref) X(json_object_get_array_member) X(json_object_get_boolean_member) \
    X(json_object_get_int_member) X(json_object_get_int_member_with_default)             \
    X(json_object_get_member) X(json_object_get_members) X(json_object_get_null_member)  \
    X(json_object_get_object_member) X(json_object_get_size)                             \
    X(json_object_get_string_member) X(json_object_get_string_member_with_default)       \
    X(json_object_get_values) X(json_object_has_member) X(json_object_new)               \
    X(json_object_remove_member) X(json_object_set_array_member)                         \
    X(json_object_set_boolean_member) X(json_object_set_int_member)                      \
    X(json_object_set_object_member) X(json_parser_get_root) X(json_parser_load_from_data) \
    X(json_parser_load_from_file) X(json_parser_new)

/* NOLINTNEXTLINE(bugprone-macro-parentheses): @name is a member's name, and the function's */
#define GL_JSONLIB_MEMBER(name) __typeof__(name) *name;
typedef struct {
    GL_JSONLIB_FUNCTIONS(GL_JSONLIB_MEMBER)
} GlJsonLib;
#undef GL_JSONLIB_MEMBER

/* Returns: json-glib's functions, loaded once (thread-safe) and kept for
 * the life of the process. Where json-glib cannot be loaded (an
 * installation without it, which the dynamic loader refused to start
 * before), says so on standard error and exits with status 3. */
const GlJsonLib *gl_jsonlib(void);

/* What g_autoptr() takes for json-glib's objects and nodes: json-glib's
 * types, freed through gl_jsonlib(). */
typedef JsonParser GlJsonParser;
typedef JsonBuilder GlJsonBuilder;
typedef JsonGenerator GlJsonGenerator;
typedef JsonNode GlJsonNode;
void gl_jsonlib_object_unref(void *object);
void gl_jsonlib_node_unref(GlJsonNode *node);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlJsonParser, gl_jsonlib_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlJsonBuilder, gl_jsonlib_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlJsonGenerator, gl_jsonlib_object_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlJsonNode, gl_jsonlib_node_unref)

/* The calls, through the loaded library (a name missing here would link
 * against json-glib, which gemleak's link leaves out and so refuses).
 * src/base/json.c, which loads them, calls none. */
#ifndef GL_JSONLIB_LOADER
#define g_object_unref (gl_jsonlib()->g_object_unref)
#define json_array_get_element (gl_jsonlib()->json_array_get_element)
#define json_array_get_int_element (gl_jsonlib()->json_array_get_int_element)
#define json_array_get_length (gl_jsonlib()->json_array_get_length)
#define json_array_get_object_element (gl_jsonlib()->json_array_get_object_element)
#define json_array_get_string_element (gl_jsonlib()->json_array_get_string_element)
#define json_array_new (gl_jsonlib()->json_array_new)
#define json_array_add_int_element (gl_jsonlib()->json_array_add_int_element)
#define json_builder_add_boolean_value (gl_jsonlib()->json_builder_add_boolean_value)
#define json_builder_add_int_value (gl_jsonlib()->json_builder_add_int_value)
#define json_builder_add_null_value (gl_jsonlib()->json_builder_add_null_value)
#define json_builder_add_string_value (gl_jsonlib()->json_builder_add_string_value)
#define json_builder_add_value (gl_jsonlib()->json_builder_add_value)
#define json_builder_begin_array (gl_jsonlib()->json_builder_begin_array)
#define json_builder_begin_object (gl_jsonlib()->json_builder_begin_object)
#define json_builder_end_array (gl_jsonlib()->json_builder_end_array)
#define json_builder_end_object (gl_jsonlib()->json_builder_end_object)
#define json_builder_get_root (gl_jsonlib()->json_builder_get_root)
#define json_builder_new (gl_jsonlib()->json_builder_new)
#define json_builder_set_member_name (gl_jsonlib()->json_builder_set_member_name)
#define json_generator_new (gl_jsonlib()->json_generator_new)
#define json_generator_set_pretty (gl_jsonlib()->json_generator_set_pretty)
#define json_generator_set_root (gl_jsonlib()->json_generator_set_root)
#define json_generator_to_data (gl_jsonlib()->json_generator_to_data)
#define json_generator_to_file (gl_jsonlib()->json_generator_to_file)
#define json_node_copy (gl_jsonlib()->json_node_copy)
#define json_node_get_array (gl_jsonlib()->json_node_get_array)
#define json_node_get_boolean (gl_jsonlib()->json_node_get_boolean)
#define json_node_get_double (gl_jsonlib()->json_node_get_double)
#define json_node_get_int (gl_jsonlib()->json_node_get_int)
#define json_node_get_node_type (gl_jsonlib()->json_node_get_node_type)
#define json_node_get_object (gl_jsonlib()->json_node_get_object)
#define json_node_get_string (gl_jsonlib()->json_node_get_string)
#define json_node_get_value_type (gl_jsonlib()->json_node_get_value_type)
#define json_node_ref (gl_jsonlib()->json_node_ref)
#define json_node_unref (gl_jsonlib()->json_node_unref)
#define json_object_get_array_member (gl_jsonlib()->json_object_get_array_member)
#define json_object_get_boolean_member (gl_jsonlib()->json_object_get_boolean_member)
#define json_object_get_int_member (gl_jsonlib()->json_object_get_int_member)
#define json_object_get_int_member_with_default \
    (gl_jsonlib()->json_object_get_int_member_with_default)
#define json_object_get_member (gl_jsonlib()->json_object_get_member)
#define json_object_get_members (gl_jsonlib()->json_object_get_members)
#define json_object_get_null_member (gl_jsonlib()->json_object_get_null_member)
#define json_object_get_object_member (gl_jsonlib()->json_object_get_object_member)
#define json_object_get_size (gl_jsonlib()->json_object_get_size)
#define json_object_get_string_member (gl_jsonlib()->json_object_get_string_member)
#define json_object_get_string_member_with_default \
    (gl_jsonlib()->json_object_get_string_member_with_default)
#define json_object_get_values (gl_jsonlib()->json_object_get_values)
#define json_object_has_member (gl_jsonlib()->json_object_has_member)
#define json_object_new (gl_jsonlib()->json_object_new)
#define json_object_remove_member (gl_jsonlib()->json_object_remove_member)
#define json_object_set_array_member (gl_jsonlib()->json_object_set_array_member)
#define json_object_set_boolean_member (gl_jsonlib()->json_object_set_boolean_member)
#define json_object_set_int_member (gl_jsonlib()->json_object_set_int_member)
#define json_object_set_object_member (gl_jsonlib()->json_object_set_object_member)
#define json_parser_get_root (gl_jsonlib()->json_parser_get_root)
#define json_parser_load_from_data (gl_jsonlib()->json_parser_load_from_data)
#define json_parser_load_from_file (gl_jsonlib()->json_parser_load_from_file)
#define json_parser_new (gl_jsonlib()->json_parser_new)
#endif

#endif
