/* A run's record of what lies outside its directory (run_record.h). */
#include "gemleak/read/run_record.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"

#include <string.h>

/* What this gemleak writes and reads; a record of a later version is not
 * read (it may mean something else by the same keys). */
#define RECORD_VERSION 1

/* A run's findings need a few lines each; far above that is no record. */
#define RECORD_MAX_BYTES ((gsize) 64 * 1024 * 1024)

/* The file's keys, the one description its writer and reader share. */
typedef enum {
    KEY_VERSION,
    KEY_ROOT,
    KEY_OBJECT,        /* opens an object */
    KEY_IDENTITY,
    KEY_INSTRUMENTED,
    KEY_AT,            /* opens an offset of the object */
    KEY_SYMBOL,
    KEY_COMP_DIR,
    KEY_INLINED,       /* repeated, innermost first */
    KEY_UNIT_FILE,     /* repeated */
    KEY_SOURCE,        /* opens a source file */
    KEY_LINE,          /* "N TEXT" */
    N_KEYS,
} Key;

static const char *const key_names[N_KEYS] = {
    [KEY_VERSION] = "version",
    [KEY_ROOT] = "root",
    [KEY_OBJECT] = "object",
    [KEY_IDENTITY] = "identity",
    [KEY_INSTRUMENTED] = "instrumented",
    [KEY_AT] = "at",
    [KEY_SYMBOL] = "symbol",
    [KEY_COMP_DIR] = "comp-dir",
    [KEY_INLINED] = "inlined",
    [KEY_UNIT_FILE] = "unit-file",
    [KEY_SOURCE] = "source",
    [KEY_LINE] = "line",
};

typedef struct {
    char *symbol;
    char *comp_dir;
    GPtrArray *inlined;     /* char*, NULL-terminated */
    GPtrArray *unit_files;  /* char*, NULL-terminated */
} At;

typedef struct {
    char *identity;         /* nullable */
    int instrumented;       /* -1: not said */
    GHashTable *ats;        /* guint64* offset -> At* */
} Object;

struct GlRunRecord {
    char *root;
    GHashTable *objects;    /* path -> Object* */
    GHashTable *sources;    /* path -> GHashTable (GUINT_TO_POINTER(line) -> text) */
};

/* Returns: (transfer container): the keys of @table, in no order
 * (g_hash_table_get_keys_as_ptr_array() is GLib 2.76's). */
static GPtrArray *keys_of(GHashTable *table)
{
    GPtrArray *keys = g_ptr_array_sized_new(g_hash_table_size(table));
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, table);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        g_ptr_array_add(keys, key);
    return keys;
}

static void at_free(gpointer data)
{
    At *at = data;
    g_free(at->symbol);
    g_free(at->comp_dir);
    g_ptr_array_unref(at->inlined);
    g_ptr_array_unref(at->unit_files);
    g_free(at);
}

static void object_free(gpointer data)
{
    Object *object = data;
    g_free(object->identity);
    g_hash_table_unref(object->ats);
    g_free(object);
}

GlRunRecord *gl_run_record_new(void)
{
    GlRunRecord *record = g_new0(GlRunRecord, 1);
    record->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, object_free);
    record->sources = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify) g_hash_table_unref);
    return record;
}

void gl_run_record_free(GlRunRecord *record)
{
    if (record == NULL)
        return;
    g_free(record->root);
    g_hash_table_unref(record->objects);
    g_hash_table_unref(record->sources);
    g_free(record);
}

gboolean gl_run_record_is_empty(const GlRunRecord *record)
{
    return record->root == NULL && g_hash_table_size(record->objects) == 0 &&
           g_hash_table_size(record->sources) == 0;
}

void gl_run_record_set_root(GlRunRecord *record, const char *root)
{
    g_free(record->root);
    record->root = g_strdup(root);
}

const char *gl_run_record_root(const GlRunRecord *record)
{
    return record->root;
}

/* Returns: (transfer none): the object at @path, made when new. */
static Object *object_at(GlRunRecord *record, const char *path)
{
    Object *object = g_hash_table_lookup(record->objects, path);
    if (object == NULL) {
        object = g_new0(Object, 1);
        object->instrumented = -1;
        object->ats = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, at_free);
        g_hash_table_insert(record->objects, g_strdup(path), object);
    }
    return object;
}

void gl_run_record_add_object(GlRunRecord *record, const char *path, const char *identity)
{
    Object *object = object_at(record, path);
    g_free(object->identity);
    object->identity = g_strdup(identity);
}

const char *gl_run_record_object_identity(const GlRunRecord *record, const char *path)
{
    const Object *object = path != NULL ? g_hash_table_lookup(record->objects, path) : NULL;
    return object != NULL ? object->identity : NULL;
}

GPtrArray *gl_run_record_objects(const GlRunRecord *record)
{
    GPtrArray *paths = keys_of(record->objects);
    g_ptr_array_sort(paths, gl_compare_strings);
    return paths;
}

/* Returns: (transfer full): a NULL-terminated copy of @strings (nullable). */
static GPtrArray *strings_copy(const char *const *strings)
{
    GPtrArray *copy = g_ptr_array_new_null_terminated(0, g_free, TRUE);
    for (const char *const *s = strings; s != NULL && *s != NULL; s++)
        g_ptr_array_add(copy, g_strdup(*s));
    return copy;
}

/* Returns: (transfer none): @object's record of @offset, made when new. */
static At *at_of(Object *object, guint64 offset)
{
    At *at = g_hash_table_lookup(object->ats, &offset);
    if (at == NULL) {
        at = g_new0(At, 1);
        at->inlined = strings_copy(NULL);
        at->unit_files = strings_copy(NULL);
        gint64 *key = g_new(gint64, 1);
        *key = (gint64) offset;
        g_hash_table_insert(object->ats, key, at);
    }
    return at;
}

void gl_run_record_add_at(GlRunRecord *record, const char *path, guint64 offset,
                          const GlRecordedAt *recorded)
{
    At *at = at_of(object_at(record, path), offset);
    g_free(at->symbol);
    at->symbol = g_strdup(recorded->symbol);
    g_free(at->comp_dir);
    at->comp_dir = g_strdup(recorded->comp_dir);
    g_ptr_array_unref(at->inlined);
    at->inlined = strings_copy(recorded->inlined);
    g_ptr_array_unref(at->unit_files);
    at->unit_files = strings_copy(recorded->unit_files);
}

gboolean gl_run_record_at(const GlRunRecord *record, const char *path, guint64 offset,
                          GlRecordedAt *recorded)
{
    memset(recorded, 0, sizeof *recorded);
    const Object *object = path != NULL ? g_hash_table_lookup(record->objects, path) : NULL;
    const At *at = object != NULL ? g_hash_table_lookup(object->ats, &offset) : NULL;
    if (at == NULL)
        return FALSE;
    recorded->symbol = at->symbol;
    recorded->comp_dir = at->comp_dir;
    recorded->inlined = at->inlined->len > 0 ? (const char *const *) at->inlined->pdata : NULL;
    recorded->unit_files = (const char *const *) at->unit_files->pdata;
    return TRUE;
}

void gl_run_record_set_instrumented(GlRunRecord *record, const char *path, gboolean instrumented)
{
    object_at(record, path)->instrumented = instrumented ? 1 : 0;
}

gboolean gl_run_record_instrumented(const GlRunRecord *record, const char *path,
                                    gboolean *instrumented)
{
    const Object *object = g_hash_table_lookup(record->objects, path);
    if (object == NULL || object->instrumented < 0)
        return FALSE;
    *instrumented = object->instrumented == 1;
    return TRUE;
}

/* Returns: (transfer none): the lines of @path, made when new. */
static GHashTable *lines_of(GlRunRecord *record, const char *path)
{
    GHashTable *lines = g_hash_table_lookup(record->sources, path);
    if (lines == NULL) {
        lines = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        g_hash_table_insert(record->sources, g_strdup(path), lines);
    }
    return lines;
}

void gl_run_record_add_line(GlRunRecord *record, const char *path, guint line, const char *text)
{
    if (line == 0)
        return;
    g_hash_table_insert(lines_of(record, path), GUINT_TO_POINTER(line), g_strdup(text));
}

static gint compare_uints(gconstpointer a, gconstpointer b)
{
    guint x = GPOINTER_TO_UINT(*(gconstpointer const *) a);
    guint y = GPOINTER_TO_UINT(*(gconstpointer const *) b);
    return x < y ? -1 : x > y;
}

/* Returns: (transfer container): the line numbers of @lines, ascending. */
static GPtrArray *sorted_lines(GHashTable *lines)
{
    GPtrArray *numbers = keys_of(lines);
    g_ptr_array_sort(numbers, compare_uints);
    return numbers;
}

void gl_run_record_foreach_line(const GlRunRecord *record,
                                void (*each)(const char *path, guint line, const char *text,
                                             gpointer data),
                                gpointer data)
{
    g_autoptr(GPtrArray) paths = keys_of(record->sources);
    g_ptr_array_sort(paths, gl_compare_strings);
    for (guint i = 0; i < paths->len; i++) {
        const char *path = g_ptr_array_index(paths, i);
        GHashTable *lines = g_hash_table_lookup(record->sources, path);
        g_autoptr(GPtrArray) numbers = sorted_lines(lines);
        for (guint n = 0; n < numbers->len; n++) {
            gpointer line = g_ptr_array_index(numbers, n);
            each(path, GPOINTER_TO_UINT(line), g_hash_table_lookup(lines, line), data);
        }
    }
}

/* ---- the file ------------------------------------------------------------------ */

/* Appends "KEY VALUE\n", @value escaped so that it holds no line end:
 * control bytes and backslashes as g_strescape() writes them, bytes above
 * 0x7f (a UTF-8 path, a comment in another language) as they are. */
static void put(GString *out, Key key, const char *value)
{
    static char high[129];
    if (high[0] == '\0')
        for (int c = 0x80; c <= 0xff; c++)
            high[c - 0x80] = (char) c;
    g_autofree char *escaped = g_strescape(value, high);
    g_string_append_printf(out, "%s %s\n", key_names[key], escaped);
}

static gint compare_offsets(gconstpointer a, gconstpointer b)
{
    guint64 x = **(const guint64 *const *) a, y = **(const guint64 *const *) b;
    return x < y ? -1 : x > y;
}

static void put_object(GString *out, const char *path, const Object *object)
{
    put(out, KEY_OBJECT, path);
    if (object->identity != NULL)
        put(out, KEY_IDENTITY, object->identity);
    if (object->instrumented >= 0)
        put(out, KEY_INSTRUMENTED, object->instrumented ? "yes" : "no");
    g_autoptr(GPtrArray) offsets = keys_of(object->ats);
    g_ptr_array_sort(offsets, compare_offsets);
    for (guint i = 0; i < offsets->len; i++) {
        const guint64 *offset = g_ptr_array_index(offsets, i);
        const At *at = g_hash_table_lookup(object->ats, offset);
        g_autofree char *hex = g_strdup_printf("0x%" G_GINT64_MODIFIER "x", *offset);
        put(out, KEY_AT, hex);
        if (at->symbol != NULL)
            put(out, KEY_SYMBOL, at->symbol);
        if (at->comp_dir != NULL)
            put(out, KEY_COMP_DIR, at->comp_dir);
        for (guint n = 0; n < at->inlined->len; n++)
            put(out, KEY_INLINED, g_ptr_array_index(at->inlined, n));
        for (guint n = 0; n < at->unit_files->len; n++)
            put(out, KEY_UNIT_FILE, g_ptr_array_index(at->unit_files, n));
    }
}

gboolean gl_run_record_write(const GlRunRecord *record, const char *dir, GError **error)
{
    g_autoptr(GString) out = g_string_new(NULL);
    g_autofree char *version = g_strdup_printf("%d", RECORD_VERSION);
    put(out, KEY_VERSION, version);
    if (record->root != NULL)
        put(out, KEY_ROOT, record->root);
    g_autoptr(GPtrArray) objects = gl_run_record_objects(record);
    for (guint i = 0; i < objects->len; i++) {
        const char *path = g_ptr_array_index(objects, i);
        put_object(out, path, g_hash_table_lookup(record->objects, path));
    }
    g_autoptr(GPtrArray) paths = keys_of(record->sources);
    g_ptr_array_sort(paths, gl_compare_strings);
    for (guint i = 0; i < paths->len; i++) {
        const char *path = g_ptr_array_index(paths, i);
        GHashTable *lines = g_hash_table_lookup(record->sources, path);
        put(out, KEY_SOURCE, path);
        g_autoptr(GPtrArray) numbers = sorted_lines(lines);
        for (guint n = 0; n < numbers->len; n++) {
            gpointer line = g_ptr_array_index(numbers, n);
            g_autofree char *numbered = g_strdup_printf("%u %s", GPOINTER_TO_UINT(line),
                                                        (const char *) g_hash_table_lookup(lines,
                                                                                           line));
            put(out, KEY_LINE, numbered);
        }
    }
    g_autofree char *path = g_build_filename(dir, GL_PROTO_RECORD_FILE, NULL);
    g_autoptr(GError) local = NULL;
    if (!gl_file_replace_unsynced(path, out->str, out->len, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write in the run directory "
                    "%s: %s", dir, local->message);
        return FALSE;
    }
    return TRUE;
}

/* What the reader is in: the object, offset and source file the lines
 * after an "object", "at" or "source" line speak of. */
typedef struct {
    GlRunRecord *record;
    Object *object;
    At *at;
    GHashTable *lines;
} Reading;

/* Takes one "KEY VALUE" line. Returns: FALSE when it says the record is
 * of a version this gemleak does not read. */
static gboolean take(Reading *r, const char *line)
{
    const char *space = strchr(line, ' ');
    if (space == NULL)
        return TRUE;
    Key key = N_KEYS;
    for (guint k = 0; k < N_KEYS; k++)
        if (strlen(key_names[k]) == (gsize) (space - line) &&
            strncmp(line, key_names[k], (gsize) (space - line)) == 0)
            key = (Key) k;
    const char *raw = space + 1;
    if (key == KEY_LINE) {
        char *end = NULL;
        guint64 number = g_ascii_strtoull(raw, &end, 10);
        if (end == raw || *end != ' ' || number == 0 || number > G_MAXUINT || r->lines == NULL)
            return TRUE;
        g_hash_table_insert(r->lines, GUINT_TO_POINTER((guint) number), g_strcompress(end + 1));
        return TRUE;
    }
    g_autofree char *value = g_strcompress(raw);
    switch (key) {
    case KEY_VERSION:
        return g_ascii_strtoll(value, NULL, 10) <= RECORD_VERSION;
    case KEY_ROOT:
        gl_run_record_set_root(r->record, value);
        break;
    case KEY_OBJECT:
        r->object = object_at(r->record, value);
        r->at = NULL;
        r->lines = NULL;
        break;
    case KEY_SOURCE:
        r->lines = lines_of(r->record, value);
        r->object = NULL;
        r->at = NULL;
        break;
    case KEY_IDENTITY:
        if (r->object != NULL) {
            g_free(r->object->identity);
            r->object->identity = g_steal_pointer(&value);
        }
        break;
    case KEY_INSTRUMENTED:
        if (r->object != NULL)
            r->object->instrumented = strcmp(value, "yes") == 0;
        break;
    case KEY_AT: {
        char *end = NULL;
        guint64 offset = g_ascii_strtoull(value, &end, 16);
        r->at = r->object != NULL && end != value && *end == '\0' ? at_of(r->object, offset)
                                                                  : NULL;
        break;
    }
    case KEY_SYMBOL:
        if (r->at != NULL) {
            g_free(r->at->symbol);
            r->at->symbol = g_steal_pointer(&value);
        }
        break;
    case KEY_COMP_DIR:
        if (r->at != NULL) {
            g_free(r->at->comp_dir);
            r->at->comp_dir = g_steal_pointer(&value);
        }
        break;
    case KEY_INLINED:
        if (r->at != NULL)
            g_ptr_array_add(r->at->inlined, g_steal_pointer(&value));
        break;
    case KEY_UNIT_FILE:
        if (r->at != NULL)
            g_ptr_array_add(r->at->unit_files, g_steal_pointer(&value));
        break;
    case KEY_LINE:
    case N_KEYS:
        break;
    }
    return TRUE;
}

GlRunRecord *gl_run_record_read(const char *dir, GError **error)
{
    g_autofree char *path = g_build_filename(dir, GL_PROTO_RECORD_FILE, NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS))
        return NULL;
    g_autofree char *text = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!gl_file_read_bounded(path, RECORD_MAX_BYTES, &text, &length, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s", local->message);
        return NULL;
    }
    g_autoptr(GlRunRecord) record = gl_run_record_new();
    Reading reading = { .record = record };
    /* a NUL ends what is read: no line of the writer's holds one */
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        if (!take(&reading, *line)) {
            g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: written by a newer gemleak, not read: "
                        "what the run recorded of its objects and sources is not used", path);
            return NULL;
        }
    }
    return g_steal_pointer(&record);
}

/* ---- the records of an analysis ------------------------------------------------ */

struct GlRunRecords {
    GHashTable *by_dir;     /* canonical path -> GlRunRecord* */
};

GlRunRecords *gl_run_records_new(void)
{
    GlRunRecords *records = g_new0(GlRunRecords, 1);
    records->by_dir = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                            (GDestroyNotify) gl_run_record_free);
    return records;
}

void gl_run_records_free(GlRunRecords *records)
{
    if (records == NULL)
        return;
    g_hash_table_unref(records->by_dir);
    g_free(records);
}

GlRunRecord *gl_run_records_of(GlRunRecords *records, const char *dir, GPtrArray *notes)
{
    /* "run/" and "run" are one directory */
    g_autofree char *key = g_canonicalize_filename(dir, NULL);
    GlRunRecord *record = g_hash_table_lookup(records->by_dir, key);
    if (record != NULL)
        return record;
    g_autoptr(GError) error = NULL;
    record = gl_run_record_read(dir, &error);
    if (error != NULL && notes != NULL)
        g_ptr_array_add(notes, g_strdup(error->message));
    if (record == NULL)
        record = gl_run_record_new();
    g_hash_table_insert(records->by_dir, g_steal_pointer(&key), record);
    return record;
}

void gl_run_records_foreach(GlRunRecords *records,
                            void (*each)(const char *dir, GlRunRecord *record, gpointer data),
                            gpointer data)
{
    g_autoptr(GPtrArray) dirs = keys_of(records->by_dir);
    g_ptr_array_sort(dirs, gl_compare_strings);
    for (guint i = 0; i < dirs->len; i++) {
        const char *dir = g_ptr_array_index(dirs, i);
        each(dir, g_hash_table_lookup(records->by_dir, dir), data);
    }
}
