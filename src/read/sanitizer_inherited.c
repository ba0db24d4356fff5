/* What a forked child inherited, written into its report as the check at
 * the fork it did not make (sanitizer_inherited.h). */
#include "sanitizer_exact_int.h"
#include "gemleak/read/sanitizer_inherited.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/run_files.h"
#include "gemleak/read/run_dir.h"

#include <string.h>

#define PARENT GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_PARENT "\t"

/* Returns: (transfer full): the stack @record's blocks were allocated by,
 * as a key: its frames' program counters and offsets, in order (the same
 * in a child as in its parent: the child's memory is a copy). */
static char *stack_key(const GlExactRecord *record)
{
    GString *key = g_string_new(record->kind);
    for (guint i = 0; i < record->frames->len; i++) {
        const GlExactFrame *frame = g_ptr_array_index(record->frames, i);
        g_string_append_printf(key, "\n%s", frame->numbers != NULL ? frame->numbers : "");
    }
    return g_string_free(key, FALSE);
}

/* Returns: (transfer full): the key of a block: where, how large, and by
 * which stack (@stack, stack_key()). */
static char *block_key(const GlExactObject *object, const char *stack)
{
    return g_strdup_printf("%" G_GINT64_MODIFIER "x\t%" G_GUINT64_FORMAT "\t%s", object->address,
                           object->bytes, stack);
}

/* Returns: (transfer full): the key of a block where and how large
 * (gl_exact_block_key()). */
static char *address_key(const GlExactObject *object)
{
    return gl_exact_block_key(object->address, object->bytes);
}

static void drop_record(GlExactRecord *record, gpointer data)
{
    (void) data;
    gl_exact_record_free(record);
}

/* ---- the blocks inherited ------------------------------------------------------- */

static void parent_record(GlExactRecord *record, gpointer data)
{
    GHashTable *lost = data;
    g_autofree char *stack = stack_key(record);
    for (guint i = 0; i < record->objects->len; i++)
        g_hash_table_add(lost, block_key(&g_array_index(record->objects, GlExactObject, i), stack));
    gl_exact_record_free(record);
}

/* A child's report as walked: its "gemleak:parent" line, and the blocks
 * inherited. */
typedef struct {
    gint64 ppid;
    gsize line_start, line_end;  /* the "gemleak:parent" line */
    GHashTable *lost;            /* the parent's block keys (block_key()), nullable */
    GHashTable *blocks;          /* address_key(): the blocks inherited */
} Child;

static void child_line(const char *line, gsize start, gsize end, gpointer data)
{
    Child *child = data;
    if (child->ppid != 0 || !g_str_has_prefix(line, PARENT))
        return;
    char *stop = NULL;
    gint64 ppid = g_ascii_strtoll(line + strlen(PARENT), &stop, 10);
    if (stop == line + strlen(PARENT) || *stop != '\0' || ppid <= 0)
        return;
    child->ppid = ppid;
    child->line_start = start;
    child->line_end = end;
}

/* A record of the child's: its blocks the parent lost too. */
static void find_record(GlExactRecord *record, gpointer data)
{
    Child *child = data;
    if (child->ppid != 0 && child->lost != NULL && record->start >= child->line_end) {
        g_autofree char *stack = stack_key(record);
        for (guint i = 0; i < record->objects->len; i++) {
            const GlExactObject *object = &g_array_index(record->objects, GlExactObject, i);
            g_autofree char *key = block_key(object, stack);
            if (g_hash_table_contains(child->lost, key))
                g_hash_table_add(child->blocks, address_key(object));
        }
    }
    gl_exact_record_free(record);
}

gint64 gl_sanitizer_parent_of(const char *data, gsize length)
{
    Child child = { 0 };
    GlExactWalker walker = { .record = drop_record, .line = child_line, .data = &child };
    /* most reports have none: not walked */
    if (data == NULL || g_strstr_len(data, (gssize) length, PARENT) == NULL)
        return 0;
    gl_exact_walk(data, length, &walker);
    return child.ppid;
}

/* Returns: (transfer full): the keys (block_key()) of the blocks
 * @parent (nullable) lists lost. */
static GHashTable *lost_blocks(const char *parent, gsize parent_length)
{
    GHashTable *lost = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (parent != NULL) {
        GlExactWalker walker = { .record = parent_record, .data = lost };
        gl_exact_walk(parent, parent_length, &walker);
    }
    return lost;
}

/* gl_sanitizer_inherited_blocks(), the parent's lost blocks (@lost) read. */
static GHashTable *inherited_blocks(const char *child_data, gsize child_length, GHashTable *lost,
                                    gint64 *ppid)
{
    Child child = {
        .lost = lost,
        .blocks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    };
    GlExactWalker walker = { .record = find_record, .line = child_line, .data = &child };
    gl_exact_walk(child_data, child_length, &walker);
    *ppid = child.ppid;
    return child.blocks;
}

GHashTable *gl_sanitizer_inherited_blocks(const char *child_data, gsize child_length,
                                          const char *parent, gsize parent_length, gint64 *ppid)
{
    g_autoptr(GHashTable) lost = lost_blocks(parent, parent_length);
    return inherited_blocks(child_data, child_length, lost, ppid);
}

/* ---- the check written in ------------------------------------------------------- */

/* Returns: (transfer full): @record's kind and frames as written
 * ("KIND\nFRAMES"): the record its blocks go to. */
static char *written_stack(const GlExactRecord *record)
{
    GString *text = g_string_new(record->kind);
    g_string_append_c(text, '\n');
    for (guint i = 0; i < record->frames->len; i++)
        gl_exact_write_frame(text, g_ptr_array_index(record->frames, i), i);
    return g_string_free(text, FALSE);
}

/* The parent's records as the exact pass left them: each block's stack. */
static void parent_stack(GlExactRecord *record, gpointer data)
{
    GHashTable *stacks = data;  /* address_key() -> written_stack() */
    g_autofree char *stack = written_stack(record);
    for (guint i = 0; i < record->objects->len; i++) {
        const GlExactObject *object = &g_array_index(record->objects, GlExactObject, i);
        g_hash_table_insert(stacks, address_key(object), g_strdup(stack));
    }
    gl_exact_record_free(record);
}

/* Blocks gathered by stack, in the order their stacks came. */
typedef struct {
    GHashTable *of;      /* written_stack() (owned) -> GPtrArray of const GlExactObject* */
    GPtrArray *order;    /* the keys, in order (the table's) */
} Groups;

static void groups_init(Groups *groups)
{
    groups->of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify) g_ptr_array_unref);
    groups->order = g_ptr_array_new();
}

static void groups_clear(Groups *groups)
{
    g_ptr_array_unref(groups->order);
    g_hash_table_unref(groups->of);
}

static void groups_add(Groups *groups, const char *stack, const GlExactObject *object)
{
    GPtrArray *objects = g_hash_table_lookup(groups->of, stack);
    if (objects == NULL) {
        char *key = g_strdup(stack);
        objects = g_ptr_array_new();
        g_hash_table_insert(groups->of, key, objects);
        g_ptr_array_add(groups->order, key);
    }
    g_ptr_array_add(objects, (gpointer) object);
}

/* Writes each group as a record of the runtime's. Returns: their bytes;
 * *@blocks gets how many blocks. */
static guint64 groups_write(GString *out, const Groups *groups, guint64 *blocks)
{
    guint64 bytes = 0;
    *blocks = 0;
    for (guint i = 0; i < groups->order->len; i++) {
        const char *stack = g_ptr_array_index(groups->order, i);
        const GPtrArray *objects = g_hash_table_lookup(groups->of, stack);
        const char *frames = strchr(stack, '\n');
        g_autofree char *kind = g_strndup(stack, (gsize) (frames - stack));
        bytes = gl_add_saturating(bytes, gl_exact_write_record(out, kind, frames + 1, objects));
        *blocks += objects->len;
    }
    return bytes;
}

/* Rewriting a child's report: the check at the fork written in, and each
 * inherited block with its parent's stack. */
typedef struct {
    Child child;
    const char *data;
    GString *out;                /* NULL: the first walk, which only gathers the check */
    gsize copied;                /* @data is in @out up to here */
    GHashTable *stacks;          /* the parent's: address_key() -> written_stack() */
    GHashTable *taken;           /* the blocks in the check (each once) */
    Groups check;
    GPtrArray *records;          /* GlExactRecord*: those the check's objects are of */
} Writer;

/* A record after the "gemleak:parent" line: its inherited blocks, by the
 * parent's stacks, to the check (first walk), and in the report its own
 * blocks as they were, then the inherited ones by the parent's stacks
 * (second walk). A record with none stays as it is. */
static void write_record(GlExactRecord *record, gpointer data)
{
    Writer *writer = data;
    if (writer->child.ppid == 0 || record->start < writer->child.line_end) {
        gl_exact_record_free(record);
        return;
    }
    g_autofree char *own_stack = written_stack(record);
    g_autoptr(GPtrArray) own = g_ptr_array_new();
    Groups inherited;
    groups_init(&inherited);
    gboolean kept = FALSE;
    for (guint i = 0; i < record->objects->len; i++) {
        const GlExactObject *object = &g_array_index(record->objects, GlExactObject, i);
        g_autofree char *key = address_key(object);
        if (!g_hash_table_contains(writer->child.blocks, key)) {
            g_ptr_array_add(own, (gpointer) object);
            continue;
        }
        const char *stack = g_hash_table_lookup(writer->stacks, key);
        if (stack == NULL)
            stack = own_stack;
        groups_add(&inherited, stack, object);
        if (writer->out == NULL && !g_hash_table_contains(writer->taken, key)) {
            g_hash_table_add(writer->taken, g_steal_pointer(&key));
            groups_add(&writer->check, stack, object);
            kept = TRUE;
        }
    }
    if (writer->out != NULL && inherited.order->len > 0) {
        g_string_append_len(writer->out, writer->data + writer->copied,
                            (gssize) (record->start - writer->copied));
        writer->copied = record->end;
        if (own->len > 0)
            gl_exact_write_record(writer->out, record->kind, strchr(own_stack, '\n') + 1, own);
        guint64 blocks = 0;
        groups_write(writer->out, &inherited, &blocks);
    }
    groups_clear(&inherited);
    if (kept)
        g_ptr_array_add(writer->records, record);  /* the check's objects are of it */
    else
        gl_exact_record_free(record);
}

static void write_line(const char *line, gsize start, gsize end, gpointer data)
{
    child_line(line, start, end, &((Writer *) data)->child);
}

/* Appends the check of what the child inherited, as the runtime and the
 * helper would have written it at the fork: the report (none when nothing
 * was), then "gemleak:checked". */
static void write_check(GString *out, gint64 pid, const Groups *check)
{
    if (check->order->len > 0) {
        g_string_append_printf(out, "=================================================================\n"
                               "==%" G_GINT64_FORMAT "==ERROR: LeakSanitizer: detected memory leaks\n\n",
                               pid);
        guint64 blocks = 0;
        guint64 bytes = groups_write(out, check, &blocks);
        g_string_append_printf(out, "SUMMARY: LeakSanitizer: %" G_GUINT64_FORMAT " byte(s) leaked "
                               "in %" G_GUINT64_FORMAT " allocation(s).\n", bytes, blocks);
    }
    g_string_append(out, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_CHECKED "\n");
}

GString *gl_sanitizer_inherited_check(const char *child_data, gsize child_length, gint64 pid,
                                      GHashTable *blocks, const char *parent, gsize parent_length)
{
    Writer writer = {
        .child = { .blocks = blocks },
        .data = child_data,
        .stacks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .taken = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_exact_record_free),
    };
    groups_init(&writer.check);
    if (parent != NULL) {
        GlExactWalker walker = { .record = parent_stack, .data = writer.stacks };
        gl_exact_walk(parent, parent_length, &walker);
    }
    /* first the check (each block once), then the report with it */
    GlExactWalker walker = { .record = write_record, .line = write_line, .data = &writer };
    gl_exact_walk(child_data, child_length, &walker);
    GString *out = g_string_sized_new(child_length + 256);
    if (writer.child.ppid == 0) {
        g_string_append_len(out, child_data, (gssize) child_length);
    } else {
        g_string_append_len(out, child_data, (gssize) writer.child.line_start);
        write_check(out, pid, &writer.check);
        writer.out = out;
        writer.copied = writer.child.line_end;
        writer.child = (Child) { .blocks = blocks };
        gl_exact_walk(child_data, child_length, &walker);
        g_string_append_len(out, child_data + writer.copied,
                            (gssize) (child_length - writer.copied));
    }
    groups_clear(&writer.check);
    g_ptr_array_unref(writer.records);
    g_hash_table_unref(writer.taken);
    g_hash_table_unref(writer.stacks);
    return out;
}

/* ---- a run directory ------------------------------------------------------------ */

/* A forked child's report, and what it inherited. */
typedef struct {
    gint64 pid, ppid;
    GHashTable *blocks;     /* address_key() (owned), a set */
} Found;

static void found_free(gpointer data)
{
    Found *one = data;
    g_hash_table_unref(one->blocks);
    g_free(one);
}

struct GlInherited {
    GHashTable *children;   /* report name (owned) -> Found* (owned) */
    GPtrArray *names;       /* the directory's reports (char*, owned) */
    GHashTable *pids;       /* report name (a key of names) -> its pid (gint64*, owned) */
};

void gl_sanitizer_inherited_free(GlInherited *found)
{
    if (found == NULL)
        return;
    g_hash_table_unref(found->children);
    g_hash_table_unref(found->pids);
    g_ptr_array_unref(found->names);
    g_free(found);
}

/* Returns: (transfer full) (nullable): the reports of process @pid in
 * @dir, joined (its exec'd images' too); NULL when it left none, or
 * (@error set) one could not be read. */
static GString *reports_of(const char *dir, const GlInherited *found, gint64 pid, GError **error)
{
    GString *joined = NULL;
    for (guint i = 0; i < found->names->len; i++) {
        const char *name = g_ptr_array_index(found->names, i);
        if (*(const gint64 *) g_hash_table_lookup(found->pids, name) != pid)
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize size = 0;
        if (!g_file_get_contents(path, &text, &size, error)) {
            if (joined != NULL)
                g_string_free(joined, TRUE);
            return NULL;
        }
        if (joined == NULL)
            joined = g_string_new(NULL);
        g_string_append_len(joined, text, (gssize) size);
        g_string_append_c(joined, '\n');
    }
    return joined;
}

/* Returns: (transfer full): the reports of @dir, by the run's engine's
 * name for them ("lsan" for lsan.PID and lsan.PID.N): none under Valgrind. */
static GlInherited *reports_in(const char *dir, GError **error)
{
    g_autoptr(GDir) handle = g_dir_open(dir, 0, error);
    if (handle == NULL)
        return NULL;
    g_auto(GlEngineFacts) engine = { 0 };
    gl_engine_facts_read(dir, &engine);
    gsize log = engine.log != NULL ? strlen(engine.log) : 0;
    GlInherited *found = g_new0(GlInherited, 1);
    found->children = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, found_free);
    found->names = g_ptr_array_new_with_free_func(g_free);
    found->pids = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    const char *name;
    gint64 pid = 0;
    while ((name = g_dir_read_name(handle)) != NULL)
        if (log > 0 && strncmp(name, engine.log, log) == 0 && name[log] == '.' &&
            gl_run_file_pid(name, &pid, NULL)) {
            char *kept = g_strdup(name);
            g_ptr_array_add(found->names, kept);
            g_hash_table_insert(found->pids, kept, g_memdup2(&pid, sizeof pid));
        }
    return found;
}

GlInherited *gl_sanitizer_inherited_find(const char *dir, GError **error)
{
    GlInherited *found = reports_in(dir, error);
    if (found == NULL)
        return NULL;
    /* each parent's lost blocks, read once however many children it forked:
     * its pid (gint64*, owned) -> a set */
    g_autoptr(GHashTable) parents = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                                          (GDestroyNotify) g_hash_table_unref);
    for (guint i = 0; i < found->names->len; i++) {
        const char *report = g_ptr_array_index(found->names, i);
        g_autofree char *path = g_build_filename(dir, report, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        if (!g_file_get_contents(path, &text, &length, error)) {
            gl_sanitizer_inherited_free(found);
            return NULL;
        }
        gint64 ppid = gl_sanitizer_parent_of(text, length);
        if (ppid == 0)
            continue;
        GHashTable *lost = g_hash_table_lookup(parents, &ppid);
        if (lost == NULL) {
            GError *parent_error = NULL;
            GString *parent = reports_of(dir, found, ppid, &parent_error);
            if (parent_error != NULL) {
                g_propagate_error(error, parent_error);
                gl_sanitizer_inherited_free(found);
                return NULL;
            }
            lost = lost_blocks(parent != NULL ? parent->str : NULL, parent != NULL ? parent->len : 0);
            if (parent != NULL)
                g_string_free(parent, TRUE);
            g_hash_table_insert(parents, g_memdup2(&ppid, sizeof ppid), lost);
        }
        Found *one = g_new0(Found, 1);
        one->pid = *(const gint64 *) g_hash_table_lookup(found->pids, report);
        one->blocks = inherited_blocks(text, length, lost, &one->ppid);
        g_hash_table_insert(found->children, g_strdup(report), one);
    }
    return found;
}

gboolean gl_sanitizer_inherited_write(const char *dir, const GlInherited *found, guint *children,
                                      GError **error)
{
    if (children != NULL)
        *children = 0;
    GHashTableIter iter;
    gpointer name, value;
    g_hash_table_iter_init(&iter, found->children);
    while (g_hash_table_iter_next(&iter, &name, &value)) {
        const Found *one = value;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        if (!g_file_get_contents(path, &text, &length, error))
            return FALSE;
        /* the parent's reports as the exact pass left them */
        GError *parent_error = NULL;
        GString *parent = g_hash_table_size(one->blocks) > 0
            ? reports_of(dir, found, one->ppid, &parent_error) : NULL;
        if (parent_error != NULL) {
            g_propagate_error(error, parent_error);
            return FALSE;
        }
        g_autoptr(GString) rewritten = gl_sanitizer_inherited_check(
            text, length, one->pid, one->blocks, parent != NULL ? parent->str : NULL,
            parent != NULL ? parent->len : 0);
        if (parent != NULL)
            g_string_free(parent, TRUE);
        /* whole or as it was; unsynced: a run directory is made again */
        if (!gl_file_replace_unsynced(path, rewritten->str, rewritten->len, error))
            return FALSE;
        if (children != NULL)
            (*children)++;
    }
    return TRUE;
}

GHashTable *gl_sanitizer_inherited_of(const GlInherited *found, const char *report)
{
    const Found *one = found != NULL ? g_hash_table_lookup(found->children, report) : NULL;
    return one != NULL ? one->blocks : NULL;
}
