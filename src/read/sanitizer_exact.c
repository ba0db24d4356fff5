/* The exact pass's reports (sanitizer_exact.h): the fast pass's leak
 * records, their sites, the exact pass's stacks, and the fast report
 * rewritten with them. Only gemleak's frame format: both passes are runs
 * gemleak made. */
#include "gemleak/read/sanitizer_exact.h"
#include "gemleak/base/protocol.h"

#include <string.h>

/* A frame of GL_SANITIZER_FRAME_FORMAT: "Gm N MODULE", "Gf N FUNCTION",
 * "Gs N SOURCE", "G N PC OFFSET FUNCTION-OFFSET LINE COLUMN". */
typedef struct {
    char *number;
    GString *fields[3];   /* module, function, source: may hold newlines */
    char *numbers;        /* what follows "G N " */
    guint stage;          /* 1 to 3: that many fields read; 4: closed */
} Frame;

typedef struct {
    guint64 address;
    guint64 bytes;
    char *line;           /* as the runtime wrote it */
} Object;

/* A leak record: its heading, frames and objects, and where it lies. */
typedef struct {
    gsize start, end;     /* its bytes in the report: heading to the end of its objects */
    char *kind;           /* "Direct", "Indirect" */
    GPtrArray *frames;    /* Frame* */
    GArray *objects;      /* Object */
} Record;

/* The exact pass's stacks: a stack is a GPtrArray of Frame* (the frames
 * after the allocator's), shared by its blocks. */
struct GlExactDonors {
    GHashTable *by_site;  /* "SIZE\tOFFSET\tMODULE" -> GQueue of stacks (a ref each) */
};

static void frame_free(gpointer data)
{
    Frame *frame = data;
    if (frame == NULL)
        return;
    for (guint i = 0; i < G_N_ELEMENTS(frame->fields); i++)
        if (frame->fields[i] != NULL)
            g_string_free(frame->fields[i], TRUE);
    g_free(frame->number);
    g_free(frame->numbers);
    g_free(frame);
}

static void object_clear(gpointer data)
{
    g_free(((Object *) data)->line);
}

static GArray *objects_new(void)
{
    GArray *objects = g_array_new(FALSE, TRUE, sizeof(Object));
    g_array_set_clear_func(objects, object_clear);
    return objects;
}

static void record_free(Record *record)
{
    if (record == NULL)
        return;
    g_free(record->kind);
    g_ptr_array_unref(record->frames);
    g_array_unref(record->objects);
    g_free(record);
}

/* ---- frames --------------------------------------------------------------------- */

/* Returns: (transfer none) (nullable): what follows "@tag N " in @line, N
 * (transfer full) in *number when @number is NULL on entry, else N must be
 * *number. */
static const char *tagged(const char *line, const char *tag, char **number)
{
    gsize n = strlen(tag);
    if (strncmp(line, tag, n) != 0 || line[n] != ' ')
        return NULL;
    const char *digits = line + n + 1;
    const char *end = digits;
    while (g_ascii_isdigit(*end))
        end++;
    if (end == digits || *end != ' ')
        return NULL;
    if (*number == NULL)
        *number = g_strndup(digits, (gsize) (end - digits));
    else if (strlen(*number) != (gsize) (end - digits) ||
             strncmp(*number, digits, (gsize) (end - digits)) != 0)
        return NULL;
    return end + 1;
}

/* Reads @line into the frames of @frames: a frame's next line, more of
 * the field before it (a newline in a path), or a new frame.
 * Returns: FALSE if @line is none of those. */
static gboolean frame_line(GPtrArray *frames, const char *line)
{
    Frame *last = frames->len > 0 ? g_ptr_array_index(frames, frames->len - 1) : NULL;
    if (last != NULL && last->stage < 4) {
        static const char *const tags[] = { "Gf", "Gs", "G" };
        const char *rest = tagged(line, tags[last->stage - 1], &last->number);
        if (rest != NULL && last->stage < 3) {
            last->fields[last->stage] = g_string_new(rest);
            last->stage++;
        } else if (rest != NULL) {
            last->numbers = g_strdup(rest);
            last->stage = 4;
        } else {
            g_string_append_printf(last->fields[last->stage - 1], "\n%s", line);
        }
        return TRUE;
    }
    char *number = NULL;
    const char *module = tagged(line, "Gm", &number);
    if (module == NULL)
        return FALSE;
    Frame *frame = g_new0(Frame, 1);
    frame->number = number;
    frame->fields[0] = g_string_new(module);
    frame->stage = 1;
    g_ptr_array_add(frames, frame);
    return TRUE;
}

/* Returns: the @word-th (from 0) hexadecimal number of @frame's closing
 * line: 0 the program counter, 1 its offset in its module. */
static guint64 frame_number(const Frame *frame, guint word)
{
    if (frame->numbers == NULL)
        return 0;
    g_auto(GStrv) words = g_strsplit(frame->numbers, " ", -1);
    return word < g_strv_length(words) ? g_ascii_strtoull(words[word], NULL, 16) : 0;
}

/* Drops a frame left open at the end of @frames (a report cut short). */
static void close_frames(GPtrArray *frames)
{
    if (frames->len > 0 && ((Frame *) g_ptr_array_index(frames, frames->len - 1))->stage < 4)
        g_ptr_array_remove_index(frames, frames->len - 1);
}

/* Returns: how many frames of @frames are the allocator's: the first, and
 * those inlined at its program counter. */
static guint allocator_frames(GPtrArray *frames)
{
    if (frames->len == 0)
        return 0;
    guint64 allocator = frame_number(g_ptr_array_index(frames, 0), 0);
    guint n = 1;
    while (n < frames->len && frame_number(g_ptr_array_index(frames, n), 0) == allocator)
        n++;
    return n;
}

/* Returns: TRUE if @frame is in a library gemleak preloads (its realloc,
 * before the runtime's, in the stack of every reallocation). */
static gboolean gemleak_frame(const Frame *frame)
{
    const char *slash = strrchr(frame->fields[0]->str, '/');
    const char *base = slash != NULL ? slash + 1 : frame->fields[0]->str;
    return g_str_has_prefix(base, GL_PROTO_LIBRARY_PREFIX) && g_str_has_suffix(base, ".so");
}

/* Returns: the index of the allocating call's frame in @frames: the first
 * after the allocator's that is not in a library of gemleak's; -1 when none. */
static gint site_frame(GPtrArray *frames)
{
    guint i = allocator_frames(frames);
    while (i < frames->len && gemleak_frame(g_ptr_array_index(frames, i)))
        i++;
    return i < frames->len ? (gint) i : -1;
}

/* Returns: (transfer full) (nullable): the key of a block of @bytes
 * allocated at the site of @frames (from @first), NULL when it has none
 * that can be named. */
static char *site_key(GPtrArray *frames, gint first, guint64 bytes)
{
    if (first < 0 || (guint) first >= frames->len)
        return NULL;
    const Frame *site = g_ptr_array_index(frames, first);
    const char *module = site->fields[0]->str;
    if (*module == '\0' || strchr(module, '\n') != NULL)
        return NULL;
    return g_strdup_printf("%" G_GUINT64_FORMAT "\t%" G_GINT64_MODIFIER "x\t%s", bytes,
                           frame_number(site, 1), module);
}

/* Returns: TRUE if @cut says @record's stack was cut. */
static gboolean record_cut(const Record *record, GlExactCut cut)
{
    guint n = record->frames->len;
    g_autofree GlFrame *frames = g_new0(GlFrame, MAX(n, 1));
    for (guint i = 0; i < n; i++) {
        const Frame *frame = g_ptr_array_index(record->frames, i);
        frames[i].ip = frame_number(frame, 0);
        frames[i].obj = frame->fields[0]->len > 0 ? frame->fields[0]->str : NULL;
        frames[i].fn = frame->fields[1]->len > 0 ? frame->fields[1]->str : NULL;
    }
    GlStack stack = { .frames = frames, .n_frames = n };
    return cut(&stack);
}

/* ---- records -------------------------------------------------------------------- */

typedef enum { OUTSIDE, FRAMES, AFTER_FRAMES, OBJECTS } State;

/* What the walk over a report calls: each record once read whole, each
 * line outside records. */
typedef struct {
    void (*record)(Record *record, gpointer data);  /* takes the record */
    /* (nullable) a line, and where it lies in the report: [start, end) */
    void (*line)(const char *line, gsize start, gsize end, gpointer data);
    gpointer data;
} Walker;

/* Returns: (transfer full) (nullable): a record, when @line is a leak
 * record's heading ("Direct leak of 6 byte(s) in 1 object(s) allocated
 * from:"). */
static Record *heading(const char *line)
{
    const char *kinds[] = { "Direct", "Indirect" };
    for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
        gsize n = strlen(kinds[i]);
        if (strncmp(line, kinds[i], n) == 0 && g_str_has_prefix(line + n, " leak of ")) {
            Record *record = g_new0(Record, 1);
            record->kind = g_strdup(kinds[i]);
            record->frames = g_ptr_array_new_with_free_func(frame_free);
            record->objects = objects_new();
            return record;
        }
    }
    return NULL;
}

/* Returns: TRUE if @line is a block of report_objects' list
 * ("0x602000000010 (24 bytes)"), added to @record. */
static gboolean object_line(Record *record, const char *line)
{
    if (!g_str_has_prefix(line, "0x"))
        return FALSE;
    char *end = NULL;
    guint64 address = g_ascii_strtoull(line + 2, &end, 16);
    if (end == line + 2 || !g_str_has_prefix(end, " ("))
        return FALSE;
    const char *size = end + 2;
    guint64 bytes = g_ascii_strtoull(size, &end, 10);
    if (end == size || !g_str_has_prefix(end, " byte"))
        return FALSE;
    Object object = { .address = address, .bytes = bytes, .line = g_strdup(line) };
    g_array_append_val(record->objects, object);
    return TRUE;
}

/* Walks the lines of @data: records to @walker->record, the rest to
 * @walker->line. */
static void walk(const char *data, gsize length, const Walker *walker)
{
    State state = OUTSIDE;
    Record *record = NULL;
    for (gsize at = 0; at < length;) {
        const char *newline = memchr(data + at, '\n', length - at);
        gsize next = newline != NULL ? (gsize) (newline - data) + 1 : length;
        g_autofree char *line = g_strndup(data + at, next - at - (newline != NULL ? 1 : 0));
        gboolean again;
        do {
            again = FALSE;
            if (state == OUTSIDE) {
                record = heading(line);
                if (record != NULL) {
                    record->start = at;
                    record->end = next;
                    state = FRAMES;
                } else if (walker->line != NULL) {
                    walker->line(line, at, next, walker->data);
                }
            } else if (state == FRAMES && *line == '\0') {
                close_frames(record->frames);
                record->end = next;
                state = AFTER_FRAMES;
            } else if (state == FRAMES && frame_line(record->frames, line)) {
                record->end = next;
            } else if (state == AFTER_FRAMES && strcmp(line, "Objects leaked above:") == 0) {
                record->end = next;
                state = OBJECTS;
            } else if (state == OBJECTS && object_line(record, line)) {
                record->end = next;
            } else if (state == OBJECTS && *line == '\0') {
                record->end = next;
                walker->record(g_steal_pointer(&record), walker->data);
                state = OUTSIDE;
            } else {
                /* the record ended before this line */
                close_frames(record->frames);
                walker->record(g_steal_pointer(&record), walker->data);
                state = OUTSIDE;
                again = TRUE;
            }
        } while (again);
        at = next;
    }
    if (record != NULL) {
        close_frames(record->frames);
        walker->record(record, walker->data);
    }
}

/* ---- the fast pass's sites ------------------------------------------------------ */

#define OWNED GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED "\t"
#define HIDDEN GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_HIDDEN

/* "gemleak:hidden" (a list begins: the last one counts) and
 * "gemleak:hidden<TAB>SIZE<TAB>ADDRESS" into @hidden (of Object, nullable).
 * Returns: TRUE if @line is one. */
static gboolean hidden_line(const char *line, GArray *hidden)
{
    if (!g_str_has_prefix(line, HIDDEN) || (line[strlen(HIDDEN)] != '\0' &&
                                            line[strlen(HIDDEN)] != '\t'))
        return FALSE;
    if (hidden == NULL)
        return TRUE;
    if (line[strlen(HIDDEN)] == '\0') {
        g_array_set_size(hidden, 0);
        return TRUE;
    }
    char *end = NULL;
    guint64 bytes = g_ascii_strtoull(line + strlen(HIDDEN) + 1, &end, 10);
    if (end == NULL || *end != '\t')
        return TRUE;
    guint64 address = g_ascii_strtoull(end + 1, NULL, 16);
    Object object = { .address = address, .bytes = bytes,
                      .line = g_strdup_printf("0x%" G_GINT64_MODIFIER "x (%" G_GUINT64_FORMAT
                                              " bytes)", address, bytes) };
    g_array_append_val(hidden, object);
    return TRUE;
}


typedef struct {
    GlExactCut cut;
    GHashTable *sites;
    GHashTable *tests;       /* nullable */
    GHashTable *owner_of;    /* address (gint64*, owned) -> owner "NAME\tLOCATION" (in owners) */
    GHashTable *owners;      /* the owners, a set (owned) */
    gboolean any_test;       /* a block is a test's */
    gboolean cut_here;       /* the report has a cut block */
    GArray *hidden;          /* Object: the blocks its check could not judge */
    GlExactFound *found;
} Sites;

/* "gemleak:owned<TAB>NAME<TAB>LOCATION<TAB>ADDRESS ...": whose those blocks are. */
static void owned_line(const char *line, gsize start, gsize end, gpointer data)
{
    Sites *sites = data;
    (void) start;
    (void) end;
    hidden_line(line, sites->hidden);
    if (!g_str_has_prefix(line, OWNED))
        return;
    const char *fields = line + strlen(OWNED);
    const char *tab = strchr(fields, '\t');
    const char *tab2 = tab != NULL ? strchr(tab + 1, '\t') : NULL;
    if (tab2 == NULL)
        return;
    char *owner = g_strndup(fields, (gsize) (tab2 - fields));
    sites->any_test |= strcmp(owner, "\t") != 0;
    const char *kept = g_hash_table_lookup(sites->owners, owner);
    if (kept == NULL) {
        g_hash_table_add(sites->owners, owner);
        kept = owner;
    } else {
        g_free(owner);
    }
    g_auto(GStrv) addresses = g_strsplit(tab2 + 1, " ", -1);
    for (char **address = addresses; *address != NULL; address++) {
        gint64 value = (gint64) g_ascii_strtoull(*address, NULL, 16);
        if (value != 0)
            g_hash_table_insert(sites->owner_of, g_memdup2(&value, sizeof value), (gpointer) kept);
    }
}

static void add_sites(Record *record, gpointer data)
{
    Sites *sites = data;
    gint first = site_frame(record->frames);
    if (first >= 0 && record_cut(record, sites->cut))
        for (guint i = 0; i < record->objects->len; i++) {
            const Object *object = &g_array_index(record->objects, Object, i);
            char *key = site_key(record->frames, first, object->bytes);
            if (key == NULL)
                continue;
            g_hash_table_add(sites->sites, key);
            sites->found->blocks++;
            sites->cut_here = TRUE;
            gint64 address = (gint64) object->address;
            const char *owner = g_hash_table_lookup(sites->owner_of, &address);
            if (owner != NULL && strcmp(owner, "\t") != 0 && sites->tests != NULL)
                g_hash_table_add(sites->tests, g_strdup(owner));
        }
    record_free(record);
}

static void drop_record(Record *record, gpointer data)
{
    (void) data;
    record_free(record);
}

void gl_exact_sites(const char *data, gsize length, GlExactCut cut, GHashTable *sites,
                    GHashTable *tests, GlExactFound *found)
{
    Sites walk_sites = {
        .cut = cut,
        .sites = sites,
        .tests = tests,
        .owner_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
        .owners = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .hidden = objects_new(),
        .found = found,
    };
    /* the owners first: they are written before the check that lists the blocks */
    Walker owners = { .record = drop_record, .line = owned_line, .data = &walk_sites };
    walk(data, length, &owners);
    Walker records = { .record = add_sites, .data = &walk_sites };
    walk(data, length, &records);
    /* the blocks the check could not judge: the tests that allocated them */
    for (guint i = 0; i < walk_sites.hidden->len; i++) {
        gint64 address = (gint64) g_array_index(walk_sites.hidden, Object, i).address;
        const char *owner = g_hash_table_lookup(walk_sites.owner_of, &address);
        if (owner != NULL && strcmp(owner, "\t") != 0 && tests != NULL)
            g_hash_table_add(tests, g_strdup(owner));
    }
    found->hidden += walk_sites.hidden->len;
    found->untested |= (walk_sites.cut_here || walk_sites.hidden->len > 0) && !walk_sites.any_test;
    g_array_unref(walk_sites.hidden);
    g_hash_table_unref(walk_sites.owner_of);
    g_hash_table_unref(walk_sites.owners);
}

/* ---- the exact pass's stacks ---------------------------------------------------- */

/* A stack the exact pass found a block lost at: its frames after the
 * allocator's, and the allocator's frames and the record's kind when a
 * whole record of the runtime's gave it (nullable: the library's table). */
typedef struct {
    GPtrArray *frames;     /* Frame*, a ref */
    GPtrArray *allocator;  /* Frame*, a ref, nullable */
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
    GHashTable *frames;      /* K (gint64*, owned) -> GPtrArray of Frame*: one program counter's */
    GHashTable *stacks;      /* N (gint64*, owned) -> GPtrArray of Frame*, made from the frames */
    GHashTable *at;          /* address (gint64*, owned) -> N (GINT_TO_POINTER) */
    GPtrArray *reading;      /* the frames whose lines come, nullable */
    guint added;
} Exact;

static Frame *frame_copy(const Frame *frame)
{
    Frame *copy = g_new0(Frame, 1);
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
    GPtrArray *frames = g_ptr_array_new_with_free_func(frame_free);
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
    static const char stacks[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_STACKS;
    static const char stack[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_STACK "\t";
    static const char frame[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_FRAME "\t";
    static const char at[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_AT "\t";
    if (exact->reading != NULL && !g_str_has_prefix(line, GL_PROTO_MARKER_PREFIX) &&
        frame_line(exact->reading, line))
        return;
    if (exact->reading != NULL)
        close_frames(exact->reading);
    exact->reading = NULL;
    if (strcmp(line, stacks) == 0) {
        g_hash_table_remove_all(exact->at);
    } else if (g_str_has_prefix(line, frame)) {
        GPtrArray *frames = g_ptr_array_new_with_free_func(frame_free);
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
static GPtrArray *take_frames(Record *record, guint from)
{
    GPtrArray *taken = g_ptr_array_new_with_free_func(frame_free);
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
static void exact_record(Record *record, gpointer data)
{
    Exact *exact = data;
    exact->reading = NULL;
    gint first = site_frame(record->frames);
    g_autoptr(GPtrArray) own = NULL;
    g_autoptr(GPtrArray) allocator = NULL;
    if (first >= 0 && !record_cut(record, exact->cut)) {
        guint end = allocator_frames(record->frames);
        own = take_frames(record, (guint) first);
        allocator = take_frames(record, 0);
        g_ptr_array_set_size(allocator, (gint) end);
    }
    for (guint i = 0; i < record->objects->len; i++) {
        const Object *object = &g_array_index(record->objects, Object, i);
        gint64 address = (gint64) object->address;
        gpointer n = NULL;
        GPtrArray *frames = own;
        if (g_hash_table_lookup_extended(exact->at, &address, NULL, &n)) {
            gint64 key_n = GPOINTER_TO_INT(n);
            frames = g_hash_table_lookup(exact->stacks, &key_n);
        }
        char *key = frames != NULL ? site_key(frames, 0, object->bytes) : NULL;
        if (key == NULL)
            continue;
        add_donor(exact->donors, key,
                  donor_new(frames, frames == own ? allocator : NULL, record->kind));
        exact->added++;
    }
    record_free(record);
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
    Walker walker = { .record = exact_record, .line = exact_line, .data = &exact };
    walk(data, length, &walker);
    g_hash_table_unref(exact.frames);
    g_hash_table_unref(exact.stacks);
    g_hash_table_unref(exact.at);
    return exact.added;
}

/* ---- the fast pass's report, rewritten ------------------------------------------ */

static void write_frame(GString *out, const Frame *frame, guint number)
{
    g_string_append_printf(out, "Gm %u %s\nGf %u %s\nGs %u %s\nG %u %s\n", number,
                           frame->fields[0]->str, number, frame->fields[1]->str, number,
                           frame->fields[2]->str, number, frame->numbers);
}

/* A record to write: its kind, frames and blocks. */
typedef struct {
    char *kind;
    GString *frames;       /* written, numbered from 0 */
    GPtrArray *objects;    /* const Object* (the walk's records own them) */
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
    guint64 bytes = 0;
    for (guint i = 0; i < group->objects->len; i++)
        bytes = gl_add_saturating(bytes, ((const Object *) g_ptr_array_index(group->objects, i))->bytes);
    g_string_append_printf(out, "%s leak of %" G_GUINT64_FORMAT " byte(s) in %u object(s) "
                           "allocated from:\n%s\nObjects leaked above:\n", group->kind, bytes,
                           group->objects->len, group->frames->str);
    for (guint i = 0; i < group->objects->len; i++)
        g_string_append_printf(out, "%s\n",
                               ((const Object *) g_ptr_array_index(group->objects, i))->line);
    g_string_append_c(out, '\n');
}

typedef struct {
    const char *data;
    GString *out;
    gsize copied;            /* @data is in @out up to here */
    GlExactCut cut;
    GlExactDonors *donors;
    gint64 pid;
    gboolean strip_owners;
    GHashTable *group_of;    /* kind and frames -> Group (in groups) */
    GPtrArray *groups;       /* Group*, to write where the records end */
    GPtrArray *records;      /* Record*: those the groups' objects are of */
    GArray *hidden;          /* Object: the blocks the check could not judge */
    GlExactCount count;
} Rewrite;

/* Adds @object to the group of @kind and the frames @allocator (to @first)
 * then @frames (from @from). */
static void add_to_group(Rewrite *rewrite, const char *kind, GPtrArray *allocator, guint first,
                         GPtrArray *frames, guint from, const Object *object)
{
    GString *text = g_string_new(NULL);
    guint number = 0;
    for (guint i = 0; allocator != NULL && i < first; i++)
        write_frame(text, g_ptr_array_index(allocator, i), number++);
    for (guint i = from; i < frames->len; i++)
        write_frame(text, g_ptr_array_index(frames, i), number++);
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
    g_ptr_array_set_size(rewrite->groups, 0);
}

/* A cut record: its blocks by the stack each is given, those none is
 * found for with the record's own; written where the report's records
 * end, one record a stack, as the runtime writes them. */
static void rewrite_record(Record *record, gpointer data)
{
    Rewrite *rewrite = data;
    gint first = site_frame(record->frames);
    if (first < 0 || record->objects->len == 0 || !record_cut(record, rewrite->cut)) {
        record_free(record);
        return;
    }
    rewrite->count.records++;
    guint allocator = allocator_frames(record->frames);
    g_string_append_len(rewrite->out, rewrite->data + rewrite->copied,
                        (gssize) (record->start - rewrite->copied));
    rewrite->copied = record->end;
    for (guint i = 0; i < record->objects->len; i++) {
        const Object *object = &g_array_index(record->objects, Object, i);
        rewrite->count.blocks++;
        g_autofree char *key = site_key(record->frames, first, object->bytes);
        GQueue *queue = key != NULL ? g_hash_table_lookup(rewrite->donors->by_site, key) : NULL;
        Donor *donor = queue != NULL ? g_queue_pop_head(queue) : NULL;
        if (donor == NULL) {
            add_to_group(rewrite, record->kind, record->frames, allocator, record->frames,
                         (guint) first, object);
            continue;
        }
        rewrite->count.given++;
        add_to_group(rewrite, record->kind, record->frames, allocator, donor->frames, 0, object);
        donor_free(donor);
    }
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
        const Object *object = &g_array_index(rewrite->hidden, Object, i);
        Donor *donor = leftover(rewrite->donors, object->bytes);
        if (donor == NULL)
            continue;
        rewrite->count.hidden_lost++;
        add_to_group(rewrite, donor->kind, donor->allocator, donor->allocator->len, donor->frames,
                     0, object);
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
            bytes += ((const Object *) g_ptr_array_index(group->objects, i))->bytes;
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
    flush_groups(rewrite, start);
    static const char done[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_DONE;
    if (strcmp(line, done) == 0 && rewrite->hidden->len > 0) {
        write_hidden(rewrite, start);
        g_array_set_size(rewrite->hidden, 0);
    }
    if (hidden_line(line, rewrite->hidden) ||
        (rewrite->strip_owners && g_str_has_prefix(line, OWNED))) {
        /* what the analysis is not to read: left out */
        g_string_append_len(rewrite->out, rewrite->data + rewrite->copied,
                            (gssize) (start - rewrite->copied));
        rewrite->copied = end;
    }
}

char *gl_exact_rewrite(const char *data, gsize length, GlExactCut cut, GlExactDonors *donors,
                       gint64 pid, gboolean strip_owners, GlExactCount *count)
{
    Rewrite rewrite = {
        .data = data,
        .out = g_string_sized_new(length + 1024),
        .cut = cut,
        .donors = donors,
        .pid = pid,
        .strip_owners = strip_owners,
        .group_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .groups = g_ptr_array_new_with_free_func(group_free),
        .records = g_ptr_array_new_with_free_func((GDestroyNotify) record_free),
        .hidden = objects_new(),
    };
    Walker walker = { .record = rewrite_record, .line = rewrite_line, .data = &rewrite };
    walk(data, length, &walker);
    flush_groups(&rewrite, length);
    if (rewrite.hidden->len > 0)
        write_hidden(&rewrite, length);
    g_string_append_len(rewrite.out, data + rewrite.copied, (gssize) (length - rewrite.copied));
    if (count != NULL)
        *count = rewrite.count;
    g_hash_table_unref(rewrite.group_of);
    g_ptr_array_unref(rewrite.groups);
    g_ptr_array_unref(rewrite.records);
    g_array_unref(rewrite.hidden);
    return g_string_free(rewrite.out, FALSE);
}
