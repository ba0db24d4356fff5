/* Baselines: written with what identifies each finding, read back from
 * them or from any JSON report. */
#include "gemleak/judge/baseline.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/json_format.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/merge.h"
#include "gemleak/base/sys.h"

#include <string.h>

#include "gemleak/base/json.h"

/* A baseline is a JSON report gemleak wrote: a few kilobytes a finding, six
 * levels deep. The bounds keep a wrong file (/dev/zero, a core dump, 80,000
 * nested arrays that would overflow json-glib's recursive parser) from
 * costing more than a clear refusal. */
#define BASELINE_MAX_BYTES (64u << 20)
#define BASELINE_MAX_DEPTH 64

struct GlBaseline {
    GHashTable *fingerprints;  /* char* set: its findings' and their kind_fingerprints */
    GHashTable *structures;    /* char* set: the structure_fingerprint of its findings */
    int version;               /* its GL_FINGERPRINT_VERSION: an earlier one is matched by
                                * GlFinding's earlier_fingerprints */
};

/* Returns: (transfer full): @data, @length bytes, with each JSON escape of
 * a NUL (\u0000) made U+FFFD's (\ufffd, as long): json-glib hands out
 * C strings, which would end at the NUL, so that "FINGERPRINT\u0000..." would
 * match FINGERPRINT. A fingerprint is 16 hex digits: one that holds
 * anything else matches only itself, which no finding has. */
static char *without_nul_escapes(const char *data, gsize length)
{
    char *copy = g_memdup2(data, length);
    gboolean in_string = FALSE;
    for (gsize i = 0; i < length; i++) {
        if (copy[i] == '"') {
            in_string = !in_string;
        } else if (in_string && copy[i] == '\\' && i + 1 < length) {
            if (copy[i + 1] == 'u' && i + 5 < length && strncmp(copy + i + 2, "0000", 4) == 0)
                memcpy(copy + i + 2, "fffd", 4);
            i++;  /* the escaped character, whichever */
        }
    }
    return copy;
}

/* Adds the string member @name of @object, if it is one, to @set. */
static void add_member(GHashTable *set, JsonObject *object, const char *name)
{
    JsonNode *node = json_object_get_member(object, name);
    if (node != NULL && json_node_get_value_type(node) == G_TYPE_STRING)
        g_hash_table_add(set, g_strdup(json_node_get_string(node)));
}

GlBaseline *gl_baseline_load_from_data(const char *data, gsize length, const char *name,
                                       GError **error)
{
    if (!gl_json_depth_within(data, length, BASELINE_MAX_DEPTH)) {
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT,
                    "--baseline %s: nested more than %d levels deep: not a gemleak JSON report",
                    name, BASELINE_MAX_DEPTH);
        return NULL;
    }
    g_autoptr(GlJsonParser) parser = json_parser_new();
    g_autoptr(GError) local = NULL;
    g_autofree char *plain = without_nul_escapes(data, length);
    if (!json_parser_load_from_data(parser, plain, (gssize) length, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "--baseline %s: %s", name, local->message);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *findings = object != NULL ? json_object_get_member(object, GL_MEMBER_FINDINGS) : NULL;
    if (findings == NULL || !JSON_NODE_HOLDS_ARRAY(findings)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO,
                    "--baseline %s: not a gemleak JSON report (no \"" GL_MEMBER_FINDINGS "\" "
                    "array); write one with --write-baseline FILE", name);
        return NULL;
    }
    /* Without a version: written by gemleak 0.1, whose fingerprints held
     * Ruby's frames too (version 1). */
    JsonNode *version = json_object_get_member(object, GL_MEMBER_FINGERPRINT_VERSION);
    gint64 number = version == NULL ? 1
                    : json_node_get_value_type(version) == G_TYPE_INT64 ? json_node_get_int(version)
                                                                        : 0;
    if (number < 1 || number > GL_FINGERPRINT_VERSION) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO,
                    "--baseline %s: fingerprints of another kind than this gemleak's (version "
                    "%d); a newer gemleak wrote it?", name, GL_FINGERPRINT_VERSION);
        return NULL;
    }
    GlBaseline *baseline = g_new0(GlBaseline, 1);
    baseline->version = (int) number;
    baseline->fingerprints = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    baseline->structures = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    JsonArray *array = json_node_get_array(findings);
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonNode *element = json_array_get_element(array, i);
        if (!JSON_NODE_HOLDS_OBJECT(element))
            continue;
        JsonObject *finding = json_node_get_object(element);
        add_member(baseline->fingerprints, finding, GL_MEMBER_FINGERPRINT);
        add_member(baseline->structures, finding, GL_MEMBER_STRUCTURE_FINGERPRINT);
        /* An error on a freed block of several kinds: each kind alone is known */
        JsonNode *kinds = json_object_get_member(finding, GL_MEMBER_KIND_FINGERPRINTS);
        JsonArray *list = kinds != NULL && JSON_NODE_HOLDS_ARRAY(kinds) ? json_node_get_array(kinds)
                                                                        : NULL;
        for (guint k = 0; list != NULL && k < json_array_get_length(list); k++) {
            JsonNode *kind = json_array_get_element(list, k);
            if (json_node_get_value_type(kind) == G_TYPE_STRING)
                g_hash_table_add(baseline->fingerprints, g_strdup(json_node_get_string(kind)));
        }
    }
    return baseline;
}

GlBaseline *gl_baseline_load(const char *path, GError **error)
{
    g_autofree char *data = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!gl_file_read_bounded(path, BASELINE_MAX_BYTES, &data, &length, &local)) {
        g_set_error(error, GL_ERROR, local->code, "--baseline %s%s", local->message,
                    local->code == GL_ERROR_LIMIT ? ": not a gemleak JSON report" : "");
        return NULL;
    }
    return gl_baseline_load_from_data(data, length, path, error);
}

void gl_baseline_free(GlBaseline *baseline)
{
    if (baseline == NULL)
        return;
    g_hash_table_unref(baseline->fingerprints);
    g_hash_table_unref(baseline->structures);
    g_free(baseline);
}

gboolean gl_baseline_knows(const GlBaseline *baseline, const char *fingerprint)
{
    return g_hash_table_contains(baseline->fingerprints, fingerprint);
}

int gl_baseline_version(const GlBaseline *baseline)
{
    return baseline->version;
}

guint gl_baseline_size(const GlBaseline *baseline)
{
    return g_hash_table_size(baseline->fingerprints);
}

GPtrArray *gl_baseline_filter(const GlBaseline *baseline, const GPtrArray *findings, guint *known)
{
    GPtrArray *fresh = g_ptr_array_sized_new(findings->len);
    *known = 0;
    for (guint i = 0; i < findings->len; i++) {
        GlFinding *finding = g_ptr_array_index(findings, i);
        gboolean current = baseline->version == GL_FINGERPRINT_VERSION;
        const char *print = current ? finding->fingerprint
                                    : finding->earlier_fingerprints[baseline->version - 1];
        const char *structure = current
            ? finding->structure_fingerprint
            : finding->earlier_structure_fingerprints[baseline->version - 1];
        /* Errors of several kinds on one freed block: known when the
         * baseline knows each kind there (one fixed, the others known). */
        char **kinds = current ? finding->kind_fingerprints
                               : finding->earlier_kind_fingerprints[baseline->version - 1];
        gboolean every_kind = kinds != NULL;
        for (char **kind = kinds; every_kind && *kind != NULL; kind++)
            every_kind = gl_baseline_knows(baseline, *kind);
        /* A block of a lost cycle that the baseline had under another of
         * the cycle's blocks' names: its site was lost in a structure then. */
        if ((print != NULL && gl_baseline_knows(baseline, print)) || every_kind ||
            (structure != NULL && g_hash_table_contains(baseline->structures, structure)))
            (*known)++;
        else
            g_ptr_array_add(fresh, finding);
    }
    return fresh;
}
