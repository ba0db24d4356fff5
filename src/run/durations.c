/* The durations file (commands.h): what each test file cost under
 * gemleak, which --jobs deals shares by. A JSON file of gemleak's, read
 * within the limits of every JSON file gemleak reads, and replaced
 * through a file beside it. */
#include "gemleak/run/commands.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/json_format.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"

#include <errno.h>
#include <math.h>  /* isfinite, a macro */
#include <string.h>
#include <sys/stat.h>

#include "gemleak/base/json.h"

/* The durations file: a JSON object that says it is gemleak's. */
#define DURATIONS_FORMAT "gemleak-durations"
#define DURATIONS_VERSION 1
/* More than this is no durations file of ours (a test suite has
 * thousands of files, a few hundred KiB of names). */
#define DURATIONS_MAX_BYTES ((gsize) 16 * 1024 * 1024)
/* What gemleak writes stays well below what it reads: a file it could not
 * read again would never be updated again. */
#define DURATIONS_WRITE_MAX_BYTES (DURATIONS_MAX_BYTES / 2)
/* A test file that took more than a week is no duration (1e300 would not
 * even fit the whole milliseconds it is written back as). */
#define DURATIONS_MAX_MS (7.0 * 24 * 3600 * 1000)

/* Returns: (transfer full) (nullable): the file's "files" as a table, or
 * NULL with *why (transfer full) saying what it is instead; *why NULL
 * too when there is no file. */
static GHashTable *read_durations(const char *path, char **why)
{
    *why = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        int saved = errno;
        *why = saved == ENOENT ? NULL : g_strdup_printf("%s: %s", path, g_strerror(saved));
        return NULL;
    }
    /* A FIFO would wait for a writer before the command starts. */
    if (!S_ISREG(st.st_mode)) {
        *why = g_strdup("not a regular file");
        return NULL;
    }
    g_autofree char *text = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!gl_file_read_bounded(path, DURATIONS_MAX_BYTES, &text, &length, &local)) {
        *why = g_strdup(local->message);
        return NULL;
    }
    /* the depth every JSON file gemleak reads is held to */
    if (!gl_json_depth_within(text, length, GL_JSON_INPUT_MAX_DEPTH)) {
        *why = g_strdup_printf("nested deeper than %d levels", GL_JSON_INPUT_MAX_DEPTH);
        return NULL;
    }
    g_autoptr(GlJsonParser) parser = json_parser_new();
    if (!json_parser_load_from_data(parser, text, (gssize) length, NULL)) {
        *why = g_strdup("not JSON");
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT(root)
        ? json_node_get_object(root) : NULL;
    if (object == NULL ||
        g_strcmp0(json_object_get_string_member_with_default(object, GL_MEMBER_FORMAT, NULL),
                  DURATIONS_FORMAT) != 0) {
        *why = g_strdup("no \"" GL_MEMBER_FORMAT "\": \"" DURATIONS_FORMAT "\" in it");
        return NULL;
    }
    gint64 version = json_object_get_int_member_with_default(object, GL_MEMBER_VERSION, 0);
    JsonNode *files_node = json_object_get_member(object, GL_MEMBER_FILES);
    if (version != DURATIONS_VERSION || files_node == NULL || !JSON_NODE_HOLDS_OBJECT(files_node)) {
        *why = g_strdup_printf("version %" G_GINT64_FORMAT ", or no \"" GL_MEMBER_FILES "\" "
                               "object: this gemleak reads version %d", version,
                               DURATIONS_VERSION);
        return NULL;
    }
    GHashTable *durations = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    JsonObject *files = json_node_get_object(files_node);
    g_autoptr(GList) names = json_object_get_members(files);
    for (GList *name = names; name != NULL; name = name->next) {
        JsonNode *value = json_object_get_member(files, name->data);
        if (!JSON_NODE_HOLDS_VALUE(value) ||
            (json_node_get_value_type(value) != G_TYPE_DOUBLE &&
             json_node_get_value_type(value) != G_TYPE_INT64))
            continue;   /* one bad entry costs itself */
        gdouble ms = json_node_get_double(value);
        if (!isfinite(ms) || ms < 0 || ms > DURATIONS_MAX_MS)
            continue;
        gdouble seconds = ms / 1000;
        g_hash_table_insert(durations, g_strdup(name->data), g_memdup2(&seconds, sizeof seconds));
    }
    return durations;
}

GHashTable *gl_durations_load(const char *path, char **note)
{
    g_autofree char *why = NULL;
    GHashTable *durations = read_durations(path, &why);
    if (note != NULL)
        *note = why != NULL
            ? g_strdup_printf("%s is not gemleak's durations file (%s): it is ignored and left as "
                              "it is, and --jobs shares are balanced by file size (remove it, or "
                              "name another file with --durations)", path, why)
            : NULL;
    return durations;
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(a, b);
}

/* Returns: (transfer full): the durations file for @durations (file ->
 * gdouble* seconds), the files of @only alone when it is not NULL (a
 * GHashTable used as a set); *length is its length. */
static char *durations_text(GHashTable *durations, GHashTable *only, gsize *length)
{
    /* Sorted, so that a committed file changes line by line. */
    g_autoptr(GList) names = g_hash_table_get_keys(durations);
    names = g_list_sort(names, compare_names);
    g_autoptr(GlJsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, GL_MEMBER_FORMAT);
    json_builder_add_string_value(builder, DURATIONS_FORMAT);
    json_builder_set_member_name(builder, GL_MEMBER_VERSION);
    json_builder_add_int_value(builder, DURATIONS_VERSION);
    json_builder_set_member_name(builder, GL_MEMBER_ABOUT);
    json_builder_add_string_value(builder, "Milliseconds each test file took under gemleak "
                                  "run (Valgrind), written by gemleak to balance --jobs; see "
                                  "gemleak(1), DURATIONS");
    json_builder_set_member_name(builder, GL_MEMBER_FILES);
    json_builder_begin_object(builder);
    for (GList *name = names; name != NULL; name = name->next) {
        if (only != NULL && !g_hash_table_contains(only, name->data))
            continue;
        json_builder_set_member_name(builder, name->data);
        /* whole milliseconds: plenty, and short lines in a committed file */
        gdouble kept = *(const gdouble *) g_hash_table_lookup(durations, name->data);
        json_builder_add_int_value(builder, (gint64) (MIN(kept * 1000, DURATIONS_MAX_MS) + 0.5));
    }
    json_builder_end_object(builder);
    json_builder_end_object(builder);
    g_autoptr(GlJsonGenerator) generator = json_generator_new();
    g_autoptr(GlJsonNode) root = json_builder_get_root(builder);
    json_generator_set_root(generator, root);
    json_generator_set_pretty(generator, TRUE);
    g_autofree char *text = json_generator_to_data(generator, length);
    (*length)++;
    return g_strconcat(text, "\n", NULL);
}

gboolean gl_durations_update(const char *path, const GlCommandPlan *plan, const double *seconds,
                             GHashTable *measured, GError **error)
{
    g_autofree char *why = NULL;
    g_autoptr(GHashTable) durations = read_durations(path, &why);
    if (why != NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO,
                    "%s is not gemleak's durations file (%s): left as it is", path, why);
        return FALSE;
    }
    if (durations == NULL)
        durations = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (guint c = 0; c < plan->shares->len; c++) {
        GPtrArray *share = g_ptr_array_index(plan->shares, c);
        /* What the helper timed is the file's; the rest of the command's
         * time (Ruby's start, loading, exit) goes to the files it did not
         * time, in proportion to their planned cost. */
        gdouble planned = 0, timed = 0;
        const gdouble **own = g_new0(const gdouble *, MAX(share->len, 1));
        for (guint i = 0; i < share->len; i++) {
            const char *file = g_ptr_array_index(share, i);
            g_autofree char *absolute = g_canonicalize_filename(file, NULL);
            own[i] = measured != NULL ? g_hash_table_lookup(measured, absolute) : NULL;
            if (own[i] != NULL)
                timed += *own[i];
            else
                planned += *(const gdouble *) g_hash_table_lookup(plan->costs, file);
        }
        gdouble rest = MAX(seconds[c] - timed, 0);
        for (guint i = 0; i < share->len; i++) {
            const char *file = g_ptr_array_index(share, i);
            gdouble part;
            if (own[i] != NULL)
                part = *own[i];
            else if (planned > 0)
                part = rest * *(const gdouble *) g_hash_table_lookup(plan->costs, file) / planned;
            else
                continue;
            g_hash_table_insert(durations, g_strdup(file), g_memdup2(&part, sizeof part));
        }
        g_free((gpointer) own);
    }
    gsize length = 0;
    g_autofree char *text = durations_text(durations, NULL, &length);
    if (length > DURATIONS_WRITE_MAX_BYTES) {
        /* This run's files alone: those of earlier runs are what grew it. */
        g_autoptr(GHashTable) ran = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint c = 0; c < plan->shares->len; c++) {
            GPtrArray *share = g_ptr_array_index(plan->shares, c);
            for (guint i = 0; i < share->len; i++)
                g_hash_table_add(ran, g_ptr_array_index(share, i));
        }
        g_free(text);
        text = durations_text(durations, ran, &length);
    }
    if (length > DURATIONS_WRITE_MAX_BYTES) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s would be larger than %" G_GSIZE_FORMAT
                    " MiB, more than gemleak reads: left as it is", path,
                    DURATIONS_WRITE_MAX_BYTES >> 20);
        return FALSE;
    }
    /* Through a symbolic link to its target: the link stays (a file kept
     * elsewhere, in a cache the CI restores). */
    g_autofree char *target = gl_path_resolve(path);
    return gl_file_replace(target, text, length, error);
}

