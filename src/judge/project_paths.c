/* The project's own frames (see project_paths.h). */
#include "gemleak/judge/project_paths.h"
#include "gemleak/read/debuginfo.h"
#include "gemleak/read/source.h"

#include <string.h>

gboolean gl_frame_from_a_runtime(const GlFrame *frame)
{
    g_autofree char *path = gl_frame_path(frame);
    if (path == NULL)
        return FALSE;
    /* rustc records its standard library's sources under the commit it
     * was built from (--remap-path-prefix), whatever the machine */
    return g_str_has_prefix(path, "/rustc/") || g_str_has_prefix(path, "/rust/deps/") ||
           strstr(path, "/.cargo/registry/src/") != NULL ||
           strstr(path, "/.cargo/git/checkouts/") != NULL ||
           strstr(path, "/.rustup/toolchains/") != NULL;
}

gboolean gl_frame_linked_in(const GlFrame *frame)
{
    return gl_frame_from_a_header(frame) || gl_frame_from_a_runtime(frame);
}

gboolean gl_stack_has_own_source(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->in_target && frame->file != NULL && !gl_frame_linked_in(frame))
            return TRUE;
    }
    return FALSE;
}

gboolean gl_frame_is_own(const GlFrame *frame, gboolean own_source)
{
    if (!frame->in_target)
        return FALSE;
    if (own_source)
        return frame->file != NULL && !gl_frame_linked_in(frame);
    return !gl_frame_from_a_header(frame);
}

/* The source files of a project by their names, read once: name -> its
 * path, or "" for a name two files have. */
typedef struct {
    const char *root;
    GHashTable *by_name;   /* nullable until first asked */
} Tree;

/* How far the search goes: a project's own sources are near its root. */
#define TREE_DEPTH 8
#define TREE_ENTRIES 50000

static void tree_scan(GHashTable *by_name, const char *dir, guint depth, guint *entries)
{
    g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
    if (listing == NULL || depth > TREE_DEPTH)
        return;
    for (const char *name; (name = g_dir_read_name(listing)) != NULL && *entries < TREE_ENTRIES;) {
        (*entries)++;
        /* not the project's sources: hidden, vendored, built, packaged */
        if (name[0] == '.' || strcmp(name, "vendor") == 0 || strcmp(name, "node_modules") == 0 ||
            strcmp(name, "tmp") == 0 || strcmp(name, "pkg") == 0)
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_SYMLINK))
            continue;
        if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
            tree_scan(by_name, path, depth + 1, entries);
        } else if (g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
            if (g_hash_table_contains(by_name, name))
                g_hash_table_insert(by_name, g_strdup(name), g_strdup(""));
            else
                g_hash_table_insert(by_name, g_strdup(name), g_steal_pointer(&path));
        }
    }
}

/* Returns: (transfer none) (nullable): the one file of the project named
 * @name. */
static const char *tree_find(Tree *tree, const char *name)
{
    if (tree->root == NULL)
        return NULL;
    if (tree->by_name == NULL) {
        tree->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        guint entries = 0;
        tree_scan(tree->by_name, tree->root, 0, &entries);
    }
    const char *found = g_hash_table_lookup(tree->by_name, name);
    return found != NULL && *found != '\0' ? found : NULL;
}

/* Returns: (transfer full) (nullable): the file @unit names (the source
 * file an object's symbol table gives, as the compiler was given it: GCC
 * keeps the file's name alone), found on disk: as it is when absolute;
 * beside @obj (an extension built where its sources are); under the
 * project, the leading ../ of an out-of-tree build left out; else the one
 * file of the project of that name (rake-compiler builds in
 * tmp/<platform>/x/<ruby>/ from ext/x/). */
static char *unit_on_disk(const char *unit, const char *obj, Tree *tree)
{
    if (g_path_is_absolute(unit))
        return g_file_test(unit, G_FILE_TEST_IS_REGULAR) ? gl_path_normalize(unit) : NULL;
    g_autofree char *dir = g_path_get_dirname(obj);
    const char *tail = unit;
    while (g_str_has_prefix(tail, "../"))
        tail += 3;
    g_autofree char *beside = g_build_filename(dir, unit, NULL);
    if (g_file_test(beside, G_FILE_TEST_IS_REGULAR))
        return gl_path_normalize(beside);
    g_autofree char *under = tree->root != NULL ? g_build_filename(tree->root, tail, NULL) : NULL;
    if (under != NULL && g_file_test(under, G_FILE_TEST_IS_REGULAR))
        return gl_path_normalize(under);
    const char *found = strchr(unit, '/') == NULL ? tree_find(tree, unit) : NULL;
    return found != NULL ? gl_path_normalize(found) : NULL;
}

static void place_stack(GlRecord *record, GlStack *stack, Tree *tree, GlDebugInfo *info)
{
    for (guint i = 0; i < stack->n_frames; i++) {
        GlFrame *frame = &stack->frames[i];
        if (!frame->in_target || frame->file != NULL || frame->fn == NULL || frame->obj == NULL ||
            frame->unit != NULL)
            continue;
        const char *unit = gl_debuginfo_symbol_unit(info, frame->obj, frame->fn);
        g_autofree char *path = unit != NULL ? unit_on_disk(unit, frame->obj, tree) : NULL;
        frame->unit = gl_record_intern(record, path);
    }
}

static void place_record(GlRecord *record, Tree *tree, GlDebugInfo *info)
{
    place_stack(record, &record->stack, tree, info);
    for (guint a = 0; a < record->aux->len; a++)
        place_stack(record, &g_array_index(record->aux, GlAux, a).stack, tree, info);
}

GPtrArray *gl_findings_place_units(const GPtrArray *findings, const char *project_root)
{
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    Tree tree = { .root = project_root };
    GPtrArray *objects = g_ptr_array_new_with_free_func(g_free);
    for (guint f = 0; f < findings->len; f++) {
        const GlFinding *finding = g_ptr_array_index(findings, f);
        place_record(finding->record, &tree, info);
        for (guint s = 0; finding->sites != NULL && s < finding->sites->len; s++)
            if (g_ptr_array_index(finding->sites, s) != finding->record)
                place_record(g_ptr_array_index(finding->sites, s), &tree, info);
        const GlStack *stack = &finding->record->stack;
        for (guint i = 0; i < stack->n_frames; i++) {
            const GlFrame *frame = &stack->frames[i];
            if (frame->in_target && frame->file == NULL && frame->fn != NULL &&
                frame->obj != NULL &&
                !g_ptr_array_find_with_equal_func(objects, frame->obj, g_str_equal, NULL))
                g_ptr_array_add(objects, g_strdup(frame->obj));
        }
    }
    if (tree.by_name != NULL)
        g_hash_table_unref(tree.by_name);
    return objects;
}
