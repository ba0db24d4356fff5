/* Integration tests, gemleak run: an extension built without debug
 * information (fixtures/ext/nodebug, -O3 and no -g, as zstd-ruby's
 * extconf.rb builds it), under real Valgrind (issue 40, item 2). Its frames
 * have a function and an object, no file or line: the reports place them at
 * the source file the object's symbol table names, else at the object
 * relative to the project, and say once how to get file and line. */
#include <string.h>

#include "harness.h"

/* Returns: (transfer none): the artifactLocation of @result's first location. */
static JsonObject *artifact(JsonObject *result)
{
    JsonObject *location = json_array_get_object_element(
        json_object_get_array_member(result, "locations"), 0);
    return json_object_get_object_member(
        json_object_get_object_member(location, "physicalLocation"), "artifactLocation");
}

START_TEST(test_no_debug_information_gives_valid_places)
{
    g_autofree char *root = g_build_filename(ext_dir, "nodebug", NULL);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *sarif = g_build_filename(dir, "gemleak.sarif", NULL);
    g_autofree char *github = g_build_filename(dir, "annotations.txt", NULL);
    g_autofree char *sarif_arg = g_strconcat("sarif:", sarif, NULL);
    g_autofree char *github_arg = g_strconcat("github:", github, NULL);
    g_autofree char *code = g_strdup_printf("require '%s/nodebug'; Nodebug.leak; "
                                            "Nodebug.leak_exported", root);
    Result r = { 0 };
    gemleak_run(&r, root, NULL, ARGS("-O", "nodebug", "--format", "text", "--format", sarif_arg,
                                     "--format", github_arg), code);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    /* one line, once, that says how to get file and line */
    ck_assert_uint_eq(gl_test_count(r.err, strlen(r.err), "without debug information"), 1);
    gl_assert_line(r.err, "^gemleak: note: nodebug\\.so was built without debug information "
                          "\\(no -g\\): its frames have no file or line; .*-g.* gives them$");
    /* C++ sources take their flags from $CXXFLAGS: a trial on a C++ gem
     * followed "$CFLAGS << \" -g\"" and still had no debug information */
    gl_assert_line(r.err, "^gemleak: note: nodebug\\.so .*\\$CFLAGS << \" -g\" for C sources, "
                          "\\$CXXFLAGS << \" -g\" for C\\+\\+\\) gives them$");
    /* the local helper at its source file, the global function at the
     * object, each relative to the project */
    gl_assert_line(r.err, "^ \\*nodebug_copy(\\.constprop\\.0)? \\(nodebug\\.c\\)$");
    gl_assert_line(r.err, "^ \\*nodebug_exported_alloc \\(at nodebug\\.so\\)$");

    gl_test_assert_sarif_file_valid(sarif);
    g_autofree char *text = gl_test_read(sarif, NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, text, -1, NULL));
    JsonObject *run = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs"), 0);
    JsonArray *results = json_object_get_array_member(run, "results");
    ck_assert_uint_eq(json_array_get_length(results), 2);
    gboolean source = FALSE, object = FALSE;
    for (guint i = 0; i < 2; i++) {
        JsonObject *at = artifact(json_array_get_object_element(results, i));
        ck_assert_str_eq(json_object_get_string_member(at, "uriBaseId"), "PROJECTROOT");
        const char *uri = json_object_get_string_member(at, "uri");
        source |= strcmp(uri, "nodebug.c") == 0;
        object |= strcmp(uri, "nodebug.so") == 0;
    }
    ck_assert_msg(source && object, "%s", text);

    g_autofree char *annotations = gl_test_read(github, NULL);
    g_auto(GStrv) lines = g_strsplit(annotations, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        const char *title = strstr(*line, "title=");
        if (title == NULL)
            continue;
        const char *end = strstr(title, "::");
        g_autofree char *shown = g_strndup(title, end != NULL ? (gsize) (end - title) : strlen(title));
        ck_assert_msg(strstr(shown, root) == NULL && gl_test_count(shown, strlen(shown), ".so") <= 1,
                      "a title with the object's path: %s", shown);
    }
    gl_assert_line(annotations, "^::error file=nodebug\\.c,title=gemleak%3A definite leak in "
                                "nodebug_copy(\\.constprop\\.0)? \\(nodebug\\.c\\) via nodebug_leak::");
    result_discard(&r);
    gl_remove_tree(dir);
}
END_TEST

void integration_nodebug(TCase *tcase)
{
    tcase_add_test(tcase, test_no_debug_information_gives_valid_places);
}
