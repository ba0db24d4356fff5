/* The exact pass's stacks, and the fast pass's report rewritten with them
 * (sanitizer_exact.h). */
#include "sanitizer_exact_int.h"
#include "sanitizer_owners_int.h"

#include <string.h>

/* The exact pass's stacks: a stack is a GPtrArray of GlExactFrame* (the frames
 * after the allocator's), shared by its blocks. */
struct GlExactDonors {
    GHashTable *by_site;  /* "SIZE\tOFFSET\tMODULE" -> GQueue of stacks (a ref each) */
};

/* ---- the exact pass's stacks ---------------------------------------------------- */

/* A stack the exact pass found a block lost at: its frames after the
 * allocator's, and the allocator's frames and the record's kind when a
 * whole record of the runtime's gave it (nullable: the library's table). */
typedef struct {
    GPtrArray *frames;     /* GlExactFrame*, a ref */
    GPtrArray *allocator;  /* GlExactFrame*, a ref, nullable */
    char *kind;            /* "Direct", "Indirect", nullable */
} Donor;

static Donor *donor_new(GPtrArray *frames, GPtrArray *allocator, const char *kind)
{
    Donor *donor = g_new0(Donor, 1);
    donor->frames = g_ptr_array_ref(frames);
    donor->allocator = allocator != NULL ? g_ptr_array_ref(allocator) : NULL;
    donor->kind = g_strdup(kind);
    return donor;
}

static void donor_free(gpointer data)
{
    Donor *donor = data;
    if (donor == NULL)
        return;
    g_ptr_array_unref(donor->frames);
    if (donor->allocator != NULL)
        g_ptr_array_unref(donor->allocator);
    g_free(donor->kind);
    g_free(donor);
}

static void free_queue(gpointer data)
{
    g_queue_free_full(data, donor_free);
}

GlExactDonors *gl_exact_donors_new(void)
{
    GlExactDonors *donors = g_new0(GlExactDonors, 1);
    donors->by_site = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_queue);
    return donors;
}

void gl_exact_donors_free(GlExactDonors *donors)
{
    if (donors == NULL)
        return;
    g_hash_table_unref(donors->by_site);
    g_free(donors);
}

GlExactDonors *gl_exact_donors_copy(const GlExactDonors *donors)
{
    GlExactDonors *copy = gl_exact_donors_new();
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, donors->by_site);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        GQueue *queue = g_queue_new();
        for (GList *link = ((GQueue *) value)->head; link != NULL; link = link->next) {
            const Donor *donor = link->data;
            g_queue_push_tail(queue, donor_new(donor->frames, donor->allocator, donor->kind));
        }
        g_hash_table_insert(copy->by_site, g_strdup(key), queue);
    }
    return copy;
}

/* Adds @donor under @key (transfer full). */
static void add_donor(GlExactDonors *donors, char *key, Donor *donor)
{
    GQueue *queue = g_hash_table_lookup(donors->by_site, key);
    if (queue == NULL) {
        queue = g_queue_new();
        g_hash_table_insert(donors->by_site, key, queue);
    } else {
        g_free(key);
    }
    g_queue_push_tail(queue, donor);
}

/* What the walk over an exact pass's report keeps. */
typedef struct {
    GlExactDonors *donors;
    GlExactCut cut;
    GlUnwound unwound;       /* how the report's stacks were made, as far as read */
    GHashTable *frames;      /* K (gint64*, owned) -> GPtrArray of GlExactFrame*: one program counter's */
    GHashTable *stacks;      /* N (gint64*, owned) -> GPtrArray of GlExactFrame*, made from the frames */
    GHashTable *at;          /* address (gint64*, owned) -> N (GINT_TO_POINTER) */
    GPtrArray *reading;      /* the frames whose lines come, nullable */
    guint added;
} Exact;

static GlExactFrame *frame_copy(const GlExactFrame *frame)
{
    GlExactFrame *copy = g_new0(GlExactFrame, 1);
    copy->number = g_strdup(frame->number);
    for (guint i = 0; i < G_N_ELEMENTS(frame->fields); i++)
        copy->fields[i] = frame->fields[i] != NULL ? g_string_new(frame->fields[i]->str) : NULL;
    copy->numbers = g_strdup(frame->numbers);
    copy->stage = frame->stage;
    return copy;
}

static gint64 *boxed(gint64 value)
{
    return g_memdup2(&value, sizeof value);
}

/* "gemleak:stack<TAB>N<TAB>K K ...": stack N, made of the frames known by
 * their numbers (a number not known leaves the stack out). */
static void read_stack(Exact *exact, const char *fields)
{
    char *end = NULL;
    gint64 n = g_ascii_strtoll(fields, &end, 10);
    if (end == NULL || *end != '\t')
        return;
    GPtrArray *frames = g_ptr_array_new_with_free_func(gl_exact_frame_free);
    g_auto(GStrv) numbers = g_strsplit(end + 1, " ", -1);
    for (char **number = numbers; *number != NULL; number++) {
        gint64 k = g_ascii_strtoll(*number, NULL, 10);
        GPtrArray *pc = g_hash_table_lookup(exact->frames, &k);
        if (pc == NULL) {
            g_ptr_array_unref(frames);
            return;
        }
        for (guint i = 0; i < pc->len; i++)
            g_ptr_array_add(frames, frame_copy(g_ptr_array_index(pc, i)));
    }
    g_hash_table_insert(exact->stacks, boxed(n), frames);
}

static void exact_line(const char *line, gsize start, gsize stop, gpointer data)
{
    Exact *exact = data;
    (void) start;
    (void) stop;
    exact->unwound = gl_exact_unwound_line(line, exact->unwound);
    static const char stacks[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_STACKS;
    static const char stack[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_STACK "\t";
    static const char frame[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_FRAME "\t";
    static const char at[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_AT "\t";
    if (exact->reading != NULL && !g_str_has_prefix(line, GL_PROTO_MARKER_PREFIX) &&
        gl_exact_frame_line(exact->reading, line))
        return;
    if (exact->reading != NULL)
        gl_exact_close_frames(exact->reading);
    exact->reading = NULL;
    if (strcmp(line, stacks) == 0) {
        g_hash_table_remove_all(exact->at);
    } else if (g_str_has_prefix(line, frame)) {
        GPtrArray *frames = g_ptr_array_new_with_free_func(gl_exact_frame_free);
        g_hash_table_insert(exact->frames, boxed(g_ascii_strtoll(line + strlen(frame), NULL, 10)),
                            frames);
        exact->reading = frames;
    } else if (g_str_has_prefix(line, stack)) {
        read_stack(exact, line + strlen(stack));
    } else if (g_str_has_prefix(line, at)) {
        char *end = NULL;
        gint64 n = g_ascii_strtoll(line + strlen(at), &end, 10);
        if (end == NULL || *end != '\t')
            return;
        g_auto(GStrv) addresses = g_strsplit(end + 1, " ", -1);
        for (char **address = addresses; *address != NULL; address++)
            if (**address != '\0')
                g_hash_table_insert(exact->at,
                                    boxed((gint64) g_ascii_strtoull(*address, NULL, 16)),
                                    GINT_TO_POINTER((gint) n));
    }
}

/* Moves @record's frames from @from on (transfer: the record keeps none of
 * them) into a new array. */
static GPtrArray *take_frames(GlExactRecord *record, guint from)
{
    GPtrArray *taken = g_ptr_array_new_with_free_func(gl_exact_frame_free);
    for (guint i = from; i < record->frames->len; i++) {
        g_ptr_array_add(taken, record->frames->pdata[i]);
        record->frames->pdata[i] = NULL;
    }
    g_ptr_array_set_size(record->frames, (gint) from);
    return taken;
}

/* A record of the exact pass's check: each block the table gives a stack
 * is given that; the others, when the record's own stack is whole (the
 * exact pass unwound every allocation exactly), that one. */
static void exact_record(GlExactRecord *record, gpointer data)
{
    Exact *exact = data;
    exact->reading = NULL;
    gint first = gl_exact_site_frame(record->frames);
    g_autoptr(GPtrArray) own = NULL;
    g_autoptr(GPtrArray) allocator = NULL;
    if (first >= 0 && !gl_exact_record_cut(record, exact->cut, exact->unwound)) {
        guint end = gl_exact_allocator_frames(record->frames);
        own = take_frames(record, (guint) first);
        allocator = take_frames(record, 0);
        g_ptr_array_set_size(allocator, (gint) end);
    }
    for (guint i = 0; i < record->objects->len; i++) {
        const GlExactObject *object = &g_array_index(record->objects, GlExactObject, i);
        gint64 address = (gint64) object->address;
        gpointer n = NULL;
        GPtrArray *frames = own;
        if (g_hash_table_lookup_extended(exact->at, &address, NULL, &n)) {
            gint64 key_n = GPOINTER_TO_INT(n);
            frames = g_hash_table_lookup(exact->stacks, &key_n);
        }
        char *key = frames != NULL ? gl_exact_site_key(frames, 0, object->bytes) : NULL;
        if (key == NULL)
            continue;
        add_donor(exact->donors, key,
                  donor_new(frames, frames == own ? allocator : NULL, record->kind));
        exact->added++;
    }
    gl_exact_record_free(record);
}

guint gl_exact_donors_add(GlExactDonors *donors, const char *data, gsize length, GlExactCut cut)
{
    Exact exact = {
        .donors = donors,
        .cut = cut,
        .frames = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                        (GDestroyNotify) g_ptr_array_unref),
        .stacks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                        (GDestroyNotify) g_ptr_array_unref),
        .at = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
    };
    GlExactWalker walker = { .record = exact_record, .line = exact_line, .data = &exact };
    gl_exact_walk(data, length, &walker);
    g_hash_table_unref(exact.frames);
    g_hash_table_unref(exact.stacks);
    g_hash_table_unref(exact.at);
    return exact.added;
}

/* ---- the fast pass's report, rewritten ------------------------------------------ */

/* A record to write: its kind, frames and blocks. */
typedef struct {
    char *kind;
    GString *frames;       /* written, numbered from 0 */
    GPtrArray *objects;    /* const GlExactObject* (the walk's records own them) */
} Group;

static void group_free(gpointer data)
{
    Group *group = data;
    g_free(group->kind);
    g_string_free(group->frames, TRUE);
    g_ptr_array_unref(group->objects);
    g_free(group);
}

static void write_group(GString *out, const Group *group)
{
    gl_exact_write_record(out, group->kind, group->frames->str, group->objects);
}

typedef struct {
    const char *data;
    GString *out;
    gsize copied;            /* @data is in @out up to here */
    GlExactCut cut;
    GlUnwound unwound;       /* how the report's stacks were made, as far as read */
    GlExactDonors *donors;
    gint64 pid;
    gboolean strip_owners;
    GHashTable *skip;        /* blocks left as they are (gl_exact_block_key()), nullable */
    GHashTable *shared;      /* sites where marked blocks take stacks too, nullable */
    GHashTable *group_of;    /* kind and frames -> Group (in groups) */
    GHashTable *made_of;     /* Made* -> Group (in groups): what a group's frames were written from */
    GPtrArray *groups;       /* Group*, to write where the records end */
    GPtrArray *records;      /* GlExactRecord*: those the groups' objects are of */
    GArray *hidden;          /* GlExactObject: the blocks the check could not judge */
    GlOwnerFrames *owner_frames;  /* the owners the stacks carry */
    /* the frame of the record in hand that carries its owner, nullable */
    const GlExactFrame *owner;
    GlExactCount count;
} Rewrite;

/* What add_to_group() writes a group's frames from, by identity: a block
 * whose stack is made of the same arrays (a record's own, or a stack of
 * the exact pass's, which its blocks share) joins the group without its
 * frames written again. Written and hashed for each block, a suite that
 * lost 385,000 blocks at one site had gemleak spend 30 s there (issue
 * 36: bigdecimal's suite, a leak planted in a method it calls often).
 * Holds a ref to each array until the groups are written. */
typedef struct {
    char *kind;
    GPtrArray *allocator;          /* a ref, nullable */
    guint first;
    const GlExactFrame *owner;     /* in a record the rewrite keeps, nullable */
    gboolean exact;
    GPtrArray *frames;             /* a ref */
    guint from;
} Made;

static guint made_hash(gconstpointer data)
{
    const Made *made = data;
    guint hash = g_str_hash(made->kind);
    hash = hash * 31u + g_direct_hash(made->allocator);
    hash = hash * 31u + made->first;
    hash = hash * 31u + g_direct_hash(made->owner);
    hash = hash * 31u + (guint) made->exact;
    hash = hash * 31u + g_direct_hash(made->frames);
    return hash * 31u + made->from;
}

static gboolean made_equal(gconstpointer a, gconstpointer b)
{
    const Made *x = a, *y = b;
    return x->allocator == y->allocator && x->first == y->first && x->owner == y->owner &&
           x->exact == y->exact && x->frames == y->frames && x->from == y->from &&
           strcmp(x->kind, y->kind) == 0;
}

static void made_free(gpointer data)
{
    Made *made = data;
    g_free(made->kind);
    if (made->allocator != NULL)
        g_ptr_array_unref(made->allocator);
    g_ptr_array_unref(made->frames);
    g_free(made);
}

/* Writes the frame that marks a stack the exact pass gave (GL_PROTO_EXACT_FUNCTION). */
static void write_mark(GString *out, guint number)
{
    g_string_append_printf(out, "Gm %u " GL_EXACT_MARK_MODULE "\nGf %u " GL_PROTO_EXACT_FUNCTION
                           "\nGs %u \nG %u 0x0 0x0 0x0 0 0\n", number, number, number, number);
}

/* Adds @object to the group of @kind and the frames @allocator (to @first),
 * the frame that carries the record's owner (rewrite->owner, if any), then
 * @frames (from @from), with the exact pass's mark before them when
 * @exact. */
static void add_to_group(Rewrite *rewrite, const char *kind, GPtrArray *allocator, guint first,
                         GPtrArray *frames, guint from, gboolean exact, const GlExactObject *object)
{
    Made wanted = { .kind = (char *) kind, .allocator = allocator, .first = first,
                    .owner = rewrite->owner, .exact = exact, .frames = frames, .from = from };
    Group *made = g_hash_table_lookup(rewrite->made_of, &wanted);
    if (made != NULL) {
        g_ptr_array_add(made->objects, (gpointer) object);
        return;
    }
    GString *text = g_string_new(NULL);
    guint number = 0;
    for (guint i = 0; allocator != NULL && i < first; i++)
        gl_exact_write_frame(text, g_ptr_array_index(allocator, i), number++);
    if (rewrite->owner != NULL)
        gl_exact_write_frame(text, rewrite->owner, number++);
    if (exact)
        write_mark(text, number++);
    for (guint i = from; i < frames->len; i++)
        gl_exact_write_frame(text, g_ptr_array_index(frames, i), number++);
    g_autofree char *key = g_strconcat(kind, "\n", text->str, NULL);
    Group *group = g_hash_table_lookup(rewrite->group_of, key);
    if (group == NULL) {
        group = g_new0(Group, 1);
        group->kind = g_strdup(kind);
        group->frames = text;
        group->objects = g_ptr_array_new();
        g_hash_table_insert(rewrite->group_of, g_steal_pointer(&key), group);
        g_ptr_array_add(rewrite->groups, group);
    } else {
        g_string_free(text, TRUE);
    }
    g_ptr_array_add(group->objects, (gpointer) object);
    Made *from_arrays = g_memdup2(&wanted, sizeof wanted);
    from_arrays->kind = g_strdup(kind);
    from_arrays->allocator = allocator != NULL ? g_ptr_array_ref(allocator) : NULL;
    from_arrays->frames = g_ptr_array_ref(frames);
    g_hash_table_insert(rewrite->made_of, from_arrays, group);
}

/* Writes the groups gathered, at @at of the report. */
static void flush_groups(Rewrite *rewrite, gsize at)
{
    if (rewrite->groups->len == 0)
        return;
    g_string_append_len(rewrite->out, rewrite->data + rewrite->copied,
                        (gssize) (at - rewrite->copied));
    rewrite->copied = at;
    for (guint i = 0; i < rewrite->groups->len; i++)
        write_group(rewrite->out, g_ptr_array_index(rewrite->groups, i));
    g_hash_table_remove_all(rewrite->group_of);
    g_hash_table_remove_all(rewrite->made_of);
    g_ptr_array_set_size(rewrite->groups, 0);
}

/* Returns: TRUE if a block of @record, whose stack the fast pass unwound
 * exactly itself, is at a site of @rewrite->shared (its allocating call's
 * frame @first). */
static gboolean at_shared(const Rewrite *rewrite, GlExactRecord *record, gint first)
{
    if (rewrite->shared == NULL || !gl_exact_record_marked(record))
        return FALSE;
    for (guint i = 0; i < record->objects->len; i++) {
        g_autofree char *key = gl_exact_site_key(
            record->frames, first, g_array_index(record->objects, GlExactObject, i).bytes);
        if (key != NULL && g_hash_table_contains(rewrite->shared, key))
            return TRUE;
    }
    return FALSE;
}

/* A cut record: its blocks by the stack each is given, those none is
 * found for with the record's own; written where the report's records
 * end, one record a stack, as the runtime writes them. A record the fast
 * pass unwound exactly at a shared site (at_shared()) likewise, its own
 * stack marked as it was, and counted nowhere. */
static void rewrite_record(GlExactRecord *record, gpointer data)
{
    Rewrite *rewrite = data;
    gint first = gl_exact_site_frame(record->frames);
    gboolean cut = first >= 0 && record->objects->len > 0 &&
                   gl_exact_record_cut(record, rewrite->cut, rewrite->unwound);
    gboolean shared = first >= 0 && record->objects->len > 0 && !cut &&
                      at_shared(rewrite, record, first);
    if (!cut && !shared) {
        gl_exact_record_free(record);
        return;
    }
    if (cut)
        rewrite->count.records++;
    guint allocator = gl_exact_allocator_frames(record->frames);
    rewrite->owner = NULL;
    for (guint i = allocator; i < (guint) first && rewrite->owner == NULL; i++) {
        const GlExactFrame *frame = g_ptr_array_index(record->frames, i);
        if (gl_owner_frames_is_owner(rewrite->owner_frames, frame->fields[0]->str,
                                     gl_exact_frame_number(frame, 1)))
            rewrite->owner = frame;
    }
    g_string_append_len(rewrite->out, rewrite->data + rewrite->copied,
                        (gssize) (record->start - rewrite->copied));
    rewrite->copied = record->end;
    for (guint i = 0; i < record->objects->len; i++) {
        const GlExactObject *object = &g_array_index(record->objects, GlExactObject, i);
        if (rewrite->skip != NULL) {
            g_autofree char *block = gl_exact_block_key(object->address, object->bytes);
            if (g_hash_table_contains(rewrite->skip, block)) {
                add_to_group(rewrite, record->kind, record->frames, allocator, record->frames,
                             (guint) first, shared, object);
                continue;
            }
        }
        g_autofree char *key = gl_exact_site_key(record->frames, first, object->bytes);
        if (shared && (key == NULL || !g_hash_table_contains(rewrite->shared, key))) {
            add_to_group(rewrite, record->kind, record->frames, allocator, record->frames,
                         (guint) first, TRUE, object);
            continue;
        }
        if (cut)
            rewrite->count.blocks++;
        GQueue *queue = key != NULL ? g_hash_table_lookup(rewrite->donors->by_site, key) : NULL;
        Donor *donor = queue != NULL ? g_queue_pop_head(queue) : NULL;
        if (donor == NULL) {
            add_to_group(rewrite, record->kind, record->frames, allocator, record->frames,
                         (guint) first, shared, object);
            continue;
        }
        if (cut)
            rewrite->count.given++;
        add_to_group(rewrite, record->kind, record->frames, allocator, donor->frames, 0, TRUE,
                     object);
        donor_free(donor);
    }
    rewrite->owner = NULL;
    g_ptr_array_add(rewrite->records, record);
}

/* Returns: (transfer full) (nullable): a stack the exact run found a block
 * of @bytes lost at that no record took, with its allocator's frames. */
static Donor *leftover(GlExactDonors *donors, guint64 bytes)
{
    g_autofree char *prefix = g_strdup_printf("%" G_GUINT64_FORMAT "\t", bytes);
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, donors->by_site);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        if (!g_str_has_prefix(key, prefix))
            continue;
        for (GList *link = ((GQueue *) value)->head; link != NULL; link = link->next) {
            Donor *donor = link->data;
            if (donor->allocator != NULL && donor->kind != NULL) {
                g_queue_delete_link(value, link);
                return donor;
            }
        }
    }
    return NULL;
}

/* The blocks the check could not judge that the exact run found lost: a
 * report of their own, at @at (before the line that says the check ran
 * to its end). */
static void write_hidden(Rewrite *rewrite, gsize at)
{
    rewrite->count.hidden += rewrite->hidden->len;
    for (guint i = 0; i < rewrite->hidden->len; i++) {
        const GlExactObject *object = &g_array_index(rewrite->hidden, GlExactObject, i);
        Donor *donor = leftover(rewrite->donors, object->bytes);
        if (donor == NULL)
            continue;
        rewrite->count.hidden_lost++;
        add_to_group(rewrite, donor->kind, donor->allocator, donor->allocator->len, donor->frames,
                     0, TRUE, object);
        donor_free(donor);
    }
    if (rewrite->groups->len == 0)
        return;
    g_string_append_len(rewrite->out, rewrite->data + rewrite->copied,
                        (gssize) (at - rewrite->copied));
    rewrite->copied = at;
    guint64 bytes = 0;
    guint blocks = 0;
    for (guint g = 0; g < rewrite->groups->len; g++) {
        const Group *group = g_ptr_array_index(rewrite->groups, g);
        for (guint i = 0; i < group->objects->len; i++, blocks++)
            bytes += ((const GlExactObject *) g_ptr_array_index(group->objects, i))->bytes;
    }
    g_string_append_printf(rewrite->out, "=================================================="
                           "===============\n==%" G_GINT64_FORMAT "==ERROR: LeakSanitizer: "
                           "detected memory leaks\n\n", rewrite->pid);
    flush_groups(rewrite, at);
    g_string_append_printf(rewrite->out, "SUMMARY: LeakSanitizer: %" G_GUINT64_FORMAT
                           " byte(s) leaked in %u allocation(s).\n", bytes, blocks);
}

static void rewrite_line(const char *line, gsize start, gsize end, gpointer data)
{
    Rewrite *rewrite = data;
    rewrite->unwound = gl_exact_unwound_line(line, rewrite->unwound);
    flush_groups(rewrite, start);
    static const char done[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_DONE;
    if (strcmp(line, done) == 0 && rewrite->hidden->len > 0) {
        write_hidden(rewrite, start);
        g_array_set_size(rewrite->hidden, 0);
    }
    gl_owner_frames_line(rewrite->owner_frames, line);
    /* the owners' names go with the owners; where their frames point
     * stays, for the reader to take those frames for what they are */
    if (gl_exact_hidden_line(line, rewrite->hidden) ||
        (rewrite->strip_owners &&
         (g_str_has_prefix(line, OWNED) || g_str_has_prefix(line, ORIGIN) ||
          g_str_has_prefix(line, GL_OWNER_NAME_LINE)))) {
        /* what the analysis is not to read: left out */
        g_string_append_len(rewrite->out, rewrite->data + rewrite->copied,
                            (gssize) (start - rewrite->copied));
        rewrite->copied = end;
    }
}

char *gl_exact_rewrite(const char *data, gsize length, GlExactCut cut, GlExactDonors *donors,
                       gint64 pid, gboolean strip_owners, GlExactCount *count, GHashTable *skip,
                       GHashTable *shared)
{
    Rewrite rewrite = {
        .skip = skip,
        .shared = shared,
        .data = data,
        .out = g_string_sized_new(length + 1024),
        .cut = cut,
        .donors = donors,
        .pid = pid,
        .strip_owners = strip_owners,
        .group_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .made_of = g_hash_table_new_full(made_hash, made_equal, made_free, NULL),
        .groups = g_ptr_array_new_with_free_func(group_free),
        .records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_exact_record_free),
        .hidden = gl_exact_objects_new(),
        .owner_frames = gl_owner_frames_new(),
    };
    GlExactWalker walker = { .record = rewrite_record, .line = rewrite_line, .data = &rewrite };
    gl_exact_walk(data, length, &walker);
    flush_groups(&rewrite, length);
    if (rewrite.hidden->len > 0)
        write_hidden(&rewrite, length);
    g_string_append_len(rewrite.out, data + rewrite.copied, (gssize) (length - rewrite.copied));
    if (count != NULL)
        *count = rewrite.count;
    g_hash_table_unref(rewrite.group_of);
    g_hash_table_unref(rewrite.made_of);
    g_ptr_array_unref(rewrite.groups);
    g_ptr_array_unref(rewrite.records);
    g_array_unref(rewrite.hidden);
    gl_owner_frames_free(rewrite.owner_frames);
    return g_string_free(rewrite.out, FALSE);
}
