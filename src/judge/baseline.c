/* Baselines: written with what identifies each finding, read back from
 * them or from any JSON report. */
#include "gemleak/judge/baseline.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/json_input.h"
#include "gemleak/judge/merge.h"
#include "gemleak/base/sys.h"

#include <string.h>

#include <json-glib/json-glib.h>

/* A baseline is a JSON report gemleak wrote: a few kilobytes a finding, six
 * levels deep. The bounds keep a wrong file (/dev/zero, a core dump, 80,000
 * nested arrays that would overflow json-glib's recursive parser) from
 * costing more than a clear refusal. */
#define BASELINE_MAX_BYTES (64u << 20)
#define BASELINE_MAX_DEPTH 64

struct GlBaseline {
    GHashTable *fingerprints;  /* char* set */
    GHashTable *structures;    /* char* set: the structure_fingerprint of its findings */
    gboolean legacy;           /* fingerprinted before GL_FINGERPRINT_VERSION: match
                                * GlFinding's legacy_fingerprint */
};

GlBaseline *gl_baseline_load_from_data(const char *data, gsize length, const char *name,
                                       GError **error)
{
    if (!gl_json_depth_within(data, length, BASELINE_MAX_DEPTH)) {
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT,
                    "--baseline %s: nested more than %d levels deep: not a gemleak JSON report",
                    name, BASELINE_MAX_DEPTH);
        return NULL;
    }
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (!json_parser_load_from_data(parser, data, (gssize) length, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "--baseline %s: %s", name, local->message);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *findings = object != NULL ? json_object_get_member(object, "findings") : NULL;
    if (findings == NULL || !JSON_NODE_HOLDS_ARRAY(findings)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO,
                    "--baseline %s: not a gemleak JSON report (no \"findings\" array); write one "
                    "with --write-baseline FILE", name);
        return NULL;
    }
    /* Written before fingerprints had a version: by gemleak 0.1, whose
     * fingerprints held Ruby's frames too. */
    JsonNode *version = json_object_get_member(object, "fingerprint_version");
    gboolean legacy = version == NULL;
    if (version != NULL && (json_node_get_value_type(version) != G_TYPE_INT64 ||
                            json_node_get_int(version) != GL_FINGERPRINT_VERSION)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO,
                    "--baseline %s: fingerprints of another kind than this gemleak's (version "
                    "%d); a newer gemleak wrote it?", name, GL_FINGERPRINT_VERSION);
        return NULL;
    }
    GlBaseline *baseline = g_new0(GlBaseline, 1);
    baseline->legacy = legacy;
    baseline->fingerprints = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    baseline->structures = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    JsonArray *array = json_node_get_array(findings);
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonNode *element = json_array_get_element(array, i);
        if (!JSON_NODE_HOLDS_OBJECT(element))
            continue;
        JsonNode *fingerprint = json_object_get_member(json_node_get_object(element), "fingerprint");
        if (fingerprint != NULL && json_node_get_value_type(fingerprint) == G_TYPE_STRING)
            g_hash_table_add(baseline->fingerprints, g_strdup(json_node_get_string(fingerprint)));
        JsonNode *structure = json_object_get_member(json_node_get_object(element),
                                                     "structure_fingerprint");
        if (structure != NULL && json_node_get_value_type(structure) == G_TYPE_STRING)
            g_hash_table_add(baseline->structures, g_strdup(json_node_get_string(structure)));
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

gboolean gl_baseline_is_legacy(const GlBaseline *baseline)
{
    return baseline->legacy;
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
        const char *print = baseline->legacy ? finding->legacy_fingerprint : finding->fingerprint;
        /* A block of a lost cycle that the baseline had under another of
         * the cycle's blocks' names: its site was lost in a structure then. */
        if ((print != NULL && gl_baseline_knows(baseline, print)) ||
            (finding->structure_fingerprint != NULL &&
             g_hash_table_contains(baseline->structures, finding->structure_fingerprint)))
            (*known)++;
        else
            g_ptr_array_add(fresh, finding);
    }
    return fresh;
}
