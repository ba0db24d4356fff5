/* Default targets: what the run loaded, or what the project built. */
#include "gemleak/targets.h"

#include <string.h>

/* Deep enough for rake-compiler's tmp/<platform>/<ext>/<ruby>/ layout. */
#define TREE_DEPTH 8

static gint compare_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static GPtrArray *sorted_keys(GHashTable *set)
{
    GPtrArray *list = g_ptr_array_new_with_free_func(g_free);
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, set);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        g_ptr_array_add(list, g_strdup(key));
    g_ptr_array_sort(list, compare_strings);
    return list;
}

static void read_lists_in(const char *dir, GHashTable *dirs_done, GHashTable *paths)
{
    if (!g_hash_table_add(dirs_done, g_strdup(dir)))
        return;
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    if (handle == NULL)
        return;
    const char *name;
    while ((name = g_dir_read_name(handle)) != NULL) {
        if (!g_str_has_prefix(name, GL_LOADED_PREFIX) || !g_str_has_suffix(name, GL_LOADED_SUFFIX))
            continue;
        g_autofree char *file = g_build_filename(dir, name, NULL);
        g_autofree char *contents = NULL;
        if (!g_file_get_contents(file, &contents, NULL, NULL))
            continue;
        g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
        for (char **line = lines; *line != NULL; line++)
            if (**line != '\0')
                g_hash_table_add(paths, g_strdup(*line));
    }
}

GPtrArray *gl_targets_from_loaded_lists(const char *const *inputs)
{
    g_autoptr(GHashTable) dirs_done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (const char *const *input = inputs; *input != NULL; input++) {
        if (strcmp(*input, "-") == 0)
            continue;
        if (g_file_test(*input, G_FILE_TEST_IS_DIR)) {
            read_lists_in(*input, dirs_done, paths);
        } else {
            g_autofree char *dir = g_path_get_dirname(*input);
            read_lists_in(dir, dirs_done, paths);
        }
    }
    return sorted_keys(paths);
}

static void find_shared_objects(const char *dir, int depth, GHashTable *found)
{
    if (depth > TREE_DEPTH)
        return;
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    if (handle == NULL)
        return;
    const char *name;
    while ((name = g_dir_read_name(handle)) != NULL) {
        if (name[0] == '.')
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_SYMLINK))
            continue;
        if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
            /* Installed dependencies are not the project's own code. */
            if (g_str_has_suffix(path, "/vendor/bundle") || strcmp(name, "node_modules") == 0)
                continue;
            find_shared_objects(path, depth + 1, found);
        } else if (g_str_has_suffix(name, ".so")) {
            g_hash_table_add(found, g_canonicalize_filename(path, NULL));
        }
    }
}

GPtrArray *gl_targets_from_tree(const char *dir)
{
    g_autoptr(GHashTable) found = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    find_shared_objects(dir, 0, found);
    return sorted_keys(found);
}
