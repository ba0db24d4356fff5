/* The targets of the pipeline (pipeline.c): --object, else the
 * extensions the run loaded, else the project's own; an --object that
 * matches nothing the run loaded, said in the JSON reports too; and one
 * that matches nothing in the errors read, warned of. */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/json_format.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/targets.h"
#include "gemleak/read/input.h"
#include "gemleak/report/json_helpers.h"

#include <stdlib.h>
#include <string.h>

/* An --object that matches nothing the run loaded stops gemleak before its
 * reports: each JSON report file then says what went wrong, for a program
 * that runs gemleak (the Rake tasks) to tell its user in its own words.
 * This is on the way out with a usage error: a file that cannot be written
 * is left unwritten, as the reports would have been. */
static void write_target_error(const GlSinks *sinks, const char *message, const char *pattern,
                               const char *const *loaded)
{
    g_autoptr(GlJsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    gl_json_add_tool(builder);
    json_builder_set_member_name(builder, GL_MEMBER_ERROR);
    json_builder_begin_object(builder);
    gl_json_add_string(builder, GL_MEMBER_MESSAGE, message);
    gl_json_add_string(builder, GL_MEMBER_UNMATCHED_OBJECT, pattern);
    json_builder_set_member_name(builder, GL_MEMBER_LOADED);
    json_builder_begin_array(builder);
    for (const char *const *path = loaded; *path != NULL; path++)
        json_builder_add_string_value(builder, *path);
    json_builder_end_array(builder);
    json_builder_end_object(builder);
    json_builder_end_object(builder);

    char *buffer = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&buffer, &size);
    if (memory == NULL)
        return;
    gl_json_write(builder, memory);
    fclose(memory);
    /* on the way out with a usage error, which is what the user sees */
    (void) gl_sinks_write_instead(sinks, "json", buffer, size, NULL);
    free(buffer);
}

/* Sets the targets of --object: with the run's lists (@have_lists, the
 * extensions it @loaded), each must match one of those, and the targets
 * shown are the paths they matched. */
static gboolean resolve_objects(const Options *options, const GlSinks *sinks, GPtrArray *loaded,
                                gboolean have_lists, GlRules *rules, GPtrArray *shown,
                                GError **error)
{
    for (char **p = options->objects; *p != NULL; p++) {
        if (!gl_rules_add_target(rules, *p, error))
            return FALSE;
    }
    /* With the run's lists at hand, a name that matches nothing it
     * loaded is a typo, or an extension that never loaded: never a
     * clean run. */
    for (guint t = 0; have_lists && t < gl_rules_n_targets(rules); t++) {
        gboolean seen = FALSE;
        for (guint i = 0; i < loaded->len && !seen; i++)
            seen = gl_rules_target_matches(rules, t, g_ptr_array_index(loaded, i));
        if (seen)
            continue;
        g_autofree char *message = NULL;
        gboolean none = loaded->len == 0;
        g_ptr_array_add(loaded, NULL);
        if (none) {
            message = g_strdup_printf("--object %s matches no extension the run loaded: it "
                                      "loaded none (was the extension built? a LoadError in "
                                      "the suite's output says what Ruby could not load)",
                                      gl_rules_target_pattern(rules, t));
        } else {
            g_autofree char *list = g_strjoinv(", ", (char **) loaded->pdata);
            message = g_strdup_printf("--object %s matches no extension the run loaded (it "
                                      "loaded: %s)", gl_rules_target_pattern(rules, t), list);
        }
        write_target_error(sinks, message, gl_rules_target_pattern(rules, t),
                           (const char *const *) loaded->pdata);
        /* A run that loaded no extension at all checked nothing, and
         * the name may be right: trouble (3), or the command's failure
         * (4) when it failed before loading one; a name among others
         * the run loaded is a typo (2). */
        g_set_error_literal(error, GL_ERROR, none ? GL_ERROR_CHILD : GL_ERROR_USAGE, message);
        return FALSE;
    }
    /* The targets as they resolved: the paths the run loaded. */
    for (guint i = 0; i < loaded->len; i++)
        for (guint t = 0; t < gl_rules_n_targets(rules); t++)
            if (gl_rules_target_matches(rules, t, g_ptr_array_index(loaded, i))) {
                g_ptr_array_add(shown, g_strdup(g_ptr_array_index(loaded, i)));
                break;
            }
    if (loaded->len == 0)
        for (char **p = options->objects; *p != NULL; p++)
            g_ptr_array_add(shown, g_strdup(*p));
    return TRUE;
}

/* Adds to @found what gemleak's own reports among @inputs (CI shards) say
 * their targets were, each once; one that cannot be read (a newer shape)
 * says why there are none in *unreadable, the first. */
static void add_targets_of_reports(const char *const *inputs, GPtrArray *found,
                                   GError **unreadable)
{
    for (const char *const *input = inputs; *input != NULL; input++) {
        /* only a regular file is looked into before it is read */
        if (strcmp(*input, "-") == 0 || !g_file_test(*input, G_FILE_TEST_IS_REGULAR))
            continue;
        g_autoptr(GlInput) report = gl_input_open(*input, FALSE, NULL, NULL);
        if (report == NULL ||
            gl_input_format(report) != gl_input_format_find("gemleak-json"))
            continue;
        const GlJudgedRun *run = gl_input_process(report)->judged;
        const GPtrArray *problems = gl_input_problems(report);
        if (run == NULL && *unreadable == NULL && problems->len > 0)
            *unreadable = g_error_copy(g_ptr_array_index(problems, 0));
        for (guint i = 0; run != NULL && i < run->targets->len; i++)
            if (!g_ptr_array_find_with_equal_func(found, g_ptr_array_index(run->targets, i),
                                                  g_str_equal, NULL))
                g_ptr_array_add(found, g_strdup(g_ptr_array_index(run->targets, i)));
    }
}

/* Sets the targets: --object, else the run's loaded extensions, else the
 * Ruby extensions under the current directory. @shown receives what the
 * report says the targets are; *have_lists whether the inputs came with
 * the run's lists of loaded extensions. Where some process has XML and no
 * list (@coverage's unlisted: a Ruby whose environment lost gemleak's
 * helper may be among them), lists that name nothing do not settle the
 * targets. A run's directory without lists (no Ruby of the run got as far
 * as the helper: a test file not found, a command that starts no Ruby),
 * where the current directory holds no extension either, checked
 * nothing: that is the run's outcome, not a usage error, which would hide
 * how the command ended. */
gboolean gl_cli_resolve_targets(const Options *options, const GlSinks *sinks,
                                const char *const *inputs, const GlRunCoverage *coverage,
                                GlRules *rules, GPtrArray *shown, gboolean *have_lists,
                                GError **error)
{
    g_autoptr(GPtrArray) loaded = gl_targets_from_loaded_lists(inputs, have_lists);
    if (options->objects != NULL)
        return resolve_objects(options, sinks, loaded, *have_lists, rules, shown, error);
    g_autoptr(GPtrArray) found = g_steal_pointer(&loaded);
    /* gemleak's own reports (CI shards) say what their targets were. */
    g_autoptr(GError) unreadable = NULL;
    add_targets_of_reports(inputs, found, &unreadable);
    if (found->len == 0 && *have_lists && coverage->unlisted == 0) {
        /* nothing was checked: trouble (3), or the command's failure (4) */
        g_set_error(error, GL_ERROR, GL_ERROR_CHILD,
                    "nothing was checked: no Ruby process of the run loaded an extension of the "
                    "project (those of Ruby and of installed gems are not the project's): was it "
                    "built (rake compile), and does the suite load it from the project? A "
                    "LoadError in the suite's output says what Ruby could not load");
        return FALSE;
    }
    if (found->len == 0) {
        g_autofree char *cwd = g_get_current_dir();
        g_ptr_array_unref(found);
        found = gl_targets_from_tree(cwd);
    }
    if (found->len == 0 && unreadable != NULL) {
        g_propagate_error(error, g_steal_pointer(&unreadable));
        return FALSE;
    }
    if (found->len == 0 && !*have_lists && coverage->runs > 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_CHILD,
                    "nothing was checked: no Ruby process of the run ran with gemleak's helper "
                    "(a Ruby that failed before it loaded it, as on a test file not found; a "
                    "command that started no Ruby; a Ruby given a RUBYOPT of its own), and the "
                    "current directory holds no Ruby extension: what the command printed says "
                    "why; --object names the extension");
        return FALSE;
    }
    if (found->len == 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "no target extension known: name it with --object NAME (the name given "
                    "to create_makefile in extconf.rb), a path or a glob of its .so (without "
                    "the lists of a gemleak run, only the current directory's own Ruby "
                    "extensions are looked for, and no system directory)");
        return FALSE;
    }
    for (guint i = 0; i < found->len; i++) {
        const char *path = g_ptr_array_index(found, i);
        if (!gl_rules_add_target(rules, path, error))
            return FALSE;
        g_ptr_array_add(shown, g_strdup(path));
    }
    return TRUE;
}

/* On XML without the run's lists, a clean extension may be in no error at
 * all: a pattern that matches no object the errors show is worth a
 * warning, not a failure. */
void gl_cli_warn_unseen_targets(const GlRules *rules, const GlAnalysis *analysis, FILE *err)
{
    for (guint t = 0; t < gl_rules_n_targets(rules); t++) {
        GHashTableIter iter;
        gpointer key;
        gboolean seen = FALSE;
        g_hash_table_iter_init(&iter, analysis->objects);
        while (!seen && g_hash_table_iter_next(&iter, &key, NULL))
            seen = gl_rules_target_matches(rules, t, key);
        if (seen)
            continue;
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        g_hash_table_iter_init(&iter, analysis->objects);
        while (g_hash_table_iter_next(&iter, &key, NULL)) {
            const char *path = key;
            if (!g_str_has_suffix(path, ".so") || g_str_has_prefix(path, "/usr/") ||
                g_str_has_prefix(path, "/lib"))
                continue;
            g_ptr_array_add(names, g_path_get_basename(path));
        }
        g_ptr_array_sort(names, gl_compare_strings);
        while (names->len > 8)
            g_ptr_array_remove_index(names, names->len - 1);
        g_ptr_array_add(names, NULL);
        g_autofree char *joined = g_strjoinv(", ", (char **) names->pdata);
        /* The pattern is the user's and the names the XML's: escaped. */
        g_autofree char *list = gl_text_escape(joined);
        g_autofree char *pattern = gl_text_escape(gl_rules_target_pattern(rules, t));
        fprintf(err, "gemleak: warning: --object %s matches no object in the errors read%s%s%s: "
                "the extension may be clean, or the name wrong\n",
                pattern, *list != '\0' ? " (they show " : "", list, *list != '\0' ? ")" : "");
    }
}
