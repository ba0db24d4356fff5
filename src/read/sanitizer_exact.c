/* The exact pass's reports (sanitizer_exact.h): the walk over a report's
 * leak records, their frames, and the fast pass's sites. Only gemleak's
 * frame format: both passes are runs gemleak made. The exact pass's
 * stacks, and the fast report rewritten with them: sanitizer_exact_rewrite.c. */
#include "gemleak/read/sanitizer_exact.h"
#include "sanitizer_exact_int.h"
#include "sanitizer_owners_int.h"

#include <string.h>

void gl_exact_frame_free(gpointer data)
{
    GlExactFrame *frame = data;
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
    g_free(((GlExactObject *) data)->line);
}

GArray *gl_exact_objects_new(void)
{
    GArray *objects = g_array_new(FALSE, TRUE, sizeof(GlExactObject));
    g_array_set_clear_func(objects, object_clear);
    return objects;
}

void gl_exact_record_free(GlExactRecord *record)
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
gboolean gl_exact_frame_line(GPtrArray *frames, const char *line)
{
    GlExactFrame *last = frames->len > 0 ? g_ptr_array_index(frames, frames->len - 1) : NULL;
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
    GlExactFrame *frame = g_new0(GlExactFrame, 1);
    frame->number = number;
    frame->fields[0] = g_string_new(module);
    frame->stage = 1;
    g_ptr_array_add(frames, frame);
    return TRUE;
}

guint64 gl_exact_frame_number(const GlExactFrame *frame, guint word)
{
    if (frame->numbers == NULL)
        return 0;
    g_auto(GStrv) words = g_strsplit(frame->numbers, " ", -1);
    return word < g_strv_length(words) ? g_ascii_strtoull(words[word], NULL, 16) : 0;
}

/* Drops a frame left open at the end of @frames (a report cut short). */
void gl_exact_close_frames(GPtrArray *frames)
{
    if (frames->len > 0 && ((GlExactFrame *) g_ptr_array_index(frames, frames->len - 1))->stage < 4)
        g_ptr_array_remove_index(frames, frames->len - 1);
}

/* Returns: how many frames of @frames are the allocator's: the first, and
 * those inlined at its program counter. */
guint gl_exact_allocator_frames(GPtrArray *frames)
{
    if (frames->len == 0)
        return 0;
    guint64 allocator = gl_exact_frame_number(g_ptr_array_index(frames, 0), 0);
    guint n = 1;
    while (n < frames->len && gl_exact_frame_number(g_ptr_array_index(frames, n), 0) == allocator)
        n++;
    return n;
}

gboolean gl_exact_gemleak_frame(const GlExactFrame *frame, gboolean *via, gboolean *exact)
{
    const char *slash = strrchr(frame->fields[0]->str, '/');
    const char *base = slash != NULL ? slash + 1 : frame->fields[0]->str;
    if (!g_str_has_prefix(base, GL_PROTO_LIBRARY_PREFIX) || !g_str_has_suffix(base, ".so"))
        return FALSE;
    const char *fn = frame->fields[1] != NULL ? frame->fields[1]->str : "";
    if (via != NULL && strcmp(fn, GL_PROTO_VIA_FUNCTION) == 0)
        *via = TRUE;
    if (exact != NULL && strcmp(fn, GL_PROTO_EXACT_FUNCTION) == 0)
        *exact = TRUE;
    return TRUE;
}

/* Returns: the index of the allocating call's frame in @frames: the first
 * after the allocator's that is not in a library of gemleak's; -1 when none. */
gint gl_exact_site_frame(GPtrArray *frames)
{
    guint i = gl_exact_allocator_frames(frames);
    while (i < frames->len && gl_exact_gemleak_frame(g_ptr_array_index(frames, i), NULL, NULL))
        i++;
    return i < frames->len ? (gint) i : -1;
}

char *gl_exact_site_key(GPtrArray *frames, gint first, guint64 bytes)
{
    if (first < 0 || (guint) first >= frames->len)
        return NULL;
    /* below an extension's call of Ruby's allocation functions: that call */
    const GlExactFrame *site = g_ptr_array_index(frames, first);
    gboolean via = FALSE;
    for (guint i = (guint) first; i + 1 < frames->len && !via; i++) {
        gl_exact_gemleak_frame(g_ptr_array_index(frames, i), &via, NULL);
        if (via)
            site = g_ptr_array_index(frames, i + 1);
    }
    const char *module = site->fields[0]->str;
    if (*module == '\0' || strchr(module, '\n') != NULL ||
        gl_exact_gemleak_frame(site, NULL, NULL))
        return NULL;
    return g_strdup_printf("%" G_GUINT64_FORMAT "\t%" G_GINT64_MODIFIER "x\t%s%s", bytes,
                           gl_exact_frame_number(site, 1), module, via ? "\tvia" : "");
}

gboolean gl_exact_record_cut(const GlExactRecord *record, GlExactCut cut, GlUnwound unwound)
{
    guint n = record->frames->len;
    g_autofree GlFrame *frames = g_new0(GlFrame, MAX(n, 1));
    GlExactStack stack = { .unwound = unwound, .via_frame = -1 };
    guint kept = 0;
    for (guint i = 0; i < n; i++) {
        const GlExactFrame *frame = g_ptr_array_index(record->frames, i);
        gboolean via = FALSE;
        if (gl_exact_gemleak_frame(frame, &via, &stack.exact)) {
            stack.dropped++;
            if (via && !stack.via) {
                stack.via = TRUE;
                stack.via_frame = (gint) kept;
            }
            continue;
        }
        frames[kept].ip = gl_exact_frame_number(frame, 0);
        frames[kept].obj = frame->fields[0]->len > 0 ? frame->fields[0]->str : NULL;
        frames[kept].fn = frame->fields[1]->len > 0 ? frame->fields[1]->str : NULL;
        kept++;
    }
    GlStack whole = { .frames = frames, .n_frames = kept };
    stack.stack = &whole;
    if (stack.via_frame >= (gint) kept)
        stack.via_frame = -1;
    return cut(&stack);
}

GlUnwound gl_exact_unwound_line(const char *line, GlUnwound now)
{
    static const char unwound[] = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_UNWOUND "\t";
    if (!g_str_has_prefix(line, unwound))
        return now;
    const char *how = line + strlen(unwound);
    return strcmp(how, GL_PROTO_UNWOUND_CALL) == 0     ? GL_UNWOUND_CALL
           : strcmp(how, GL_PROTO_UNWOUND_FRAMES) == 0 ? GL_UNWOUND_FRAMES
                                                       : GL_UNWOUND_RUNTIME;
}

/* ---- records -------------------------------------------------------------------- */

typedef enum { OUTSIDE, FRAMES, AFTER_FRAMES, OBJECTS } State;

/* Returns: (transfer full) (nullable): a record, when @line is a leak
 * record's heading ("Direct leak of 6 byte(s) in 1 object(s) allocated
 * from:"). */
static GlExactRecord *heading(const char *line)
{
    const char *kinds[] = { "Direct", "Indirect" };
    for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
        gsize n = strlen(kinds[i]);
        if (strncmp(line, kinds[i], n) == 0 && g_str_has_prefix(line + n, " leak of ")) {
            GlExactRecord *record = g_new0(GlExactRecord, 1);
            record->kind = g_strdup(kinds[i]);
            record->frames = g_ptr_array_new_with_free_func(gl_exact_frame_free);
            record->objects = gl_exact_objects_new();
            return record;
        }
    }
    return NULL;
}

/* Returns: TRUE if @line is a block of report_objects' list
 * ("0x602000000010 (24 bytes)"), added to @record. */
static gboolean object_line(GlExactRecord *record, const char *line)
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
    GlExactObject object = { .address = address, .bytes = bytes, .line = g_strdup(line) };
    g_array_append_val(record->objects, object);
    return TRUE;
}

/* Walks the lines of @data: records to @walker->record, the rest to
 * @walker->line. */
void gl_exact_write_frame(GString *out, const GlExactFrame *frame, guint number)
{
    g_string_append_printf(out, "Gm %u %s\nGf %u %s\nGs %u %s\nG %u %s\n", number,
                           frame->fields[0]->str, number, frame->fields[1]->str, number,
                           frame->fields[2]->str, number, frame->numbers);
}

guint64 gl_exact_write_record(GString *out, const char *kind, const char *frames,
                              const GPtrArray *objects)
{
    guint64 bytes = 0;
    for (guint i = 0; i < objects->len; i++)
        bytes = gl_add_saturating(bytes, ((const GlExactObject *) g_ptr_array_index(objects, i))->bytes);
    g_string_append_printf(out, "%s leak of %" G_GUINT64_FORMAT " byte(s) in %u object(s) "
                           "allocated from:\n%s\nObjects leaked above:\n", kind, bytes,
                           objects->len, frames);
    for (guint i = 0; i < objects->len; i++)
        g_string_append_printf(out, "%s\n",
                               ((const GlExactObject *) g_ptr_array_index(objects, i))->line);
    g_string_append_c(out, '\n');
    return bytes;
}

void gl_exact_walk(const char *data, gsize length, const GlExactWalker *walker)
{
    State state = OUTSIDE;
    GlExactRecord *record = NULL;
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
                gl_exact_close_frames(record->frames);
                record->end = next;
                state = AFTER_FRAMES;
            } else if ((state == FRAMES && gl_exact_frame_line(record->frames, line)) ||
                       (state == OBJECTS && object_line(record, line))) {
                record->end = next;
            } else if (state == AFTER_FRAMES && strcmp(line, "Objects leaked above:") == 0) {
                record->end = next;
                state = OBJECTS;
            } else if (state == OBJECTS && *line == '\0') {
                record->end = next;
                walker->record(g_steal_pointer(&record), walker->data);
                state = OUTSIDE;
            } else {
                /* the record ended before this line */
                gl_exact_close_frames(record->frames);
                walker->record(g_steal_pointer(&record), walker->data);
                state = OUTSIDE;
                again = TRUE;
            }
        } while (again);
        at = next;
    }
    if (record != NULL) {
        gl_exact_close_frames(record->frames);
        walker->record(record, walker->data);
    }
}

/* ---- the fast pass's sites ------------------------------------------------------ */

/* "gemleak:hidden" (a list begins: the last one counts) and
 * "gemleak:hidden<TAB>SIZE<TAB>ADDRESS" into @hidden (of GlExactObject, nullable).
 * Returns: TRUE if @line is one. */
gboolean gl_exact_hidden_line(const char *line, GArray *hidden)
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
    GlExactObject object = { .address = address, .bytes = bytes,
                      .line = g_strdup_printf("0x%" G_GINT64_MODIFIER "x (%" G_GUINT64_FORMAT
                                              " bytes)", address, bytes) };
    g_array_append_val(hidden, object);
    return TRUE;
}


typedef struct {
    GlExactCut cut;
    GlUnwound unwound;       /* how the report's stacks were made, as far as read */
    GHashTable *sites;
    GHashTable *tests;       /* nullable */
    GHashTable *owner_of;    /* address (gint64*, owned) -> owner "NAME\tLOCATION" (in owners) */
    GHashTable *owners;      /* the owners, a set (owned) */
    GlOwnerFrames *owner_frames;  /* the owners the stacks carry, by their index */
    GHashTable *skip;        /* blocks left out (gl_exact_block_key()), nullable */
    gboolean any_test;       /* a block is a test's */
    char *origin;            /* "NAME\tLOCATION": the test that started the process, nullable */
    gboolean cut_here;       /* the report has a cut block */
    GHashTable *shared;      /* nullable: the marked blocks at these sites, not the cut ones */
    GArray *hidden;          /* GlExactObject: the blocks its check could not judge */
    GlExactFound *found;
} Sites;

/* Returns: (transfer none): @owner ("NAME<TAB>LOCATION"), kept in
 * @sites->owners. */
static const char *kept_owner(Sites *sites, const char *owner)
{
    sites->any_test |= strcmp(owner, "\t") != 0;
    const char *kept = g_hash_table_lookup(sites->owners, owner);
    if (kept == NULL) {
        kept = g_strdup(owner);
        g_hash_table_add(sites->owners, (gpointer) kept);
    }
    return kept;
}

/* "gemleak:owned<TAB>NAME<TAB>LOCATION<TAB>ADDRESS ...": whose those
 * blocks are; and the lines that name the owners the stacks carry. */
static void owned_line(const char *line, gsize start, gsize end, gpointer data)
{
    Sites *sites = data;
    (void) start;
    (void) end;
    sites->unwound = gl_exact_unwound_line(line, sites->unwound);
    gl_exact_hidden_line(line, sites->hidden);
    if (gl_owner_frames_line(sites->owner_frames, line)) {
        sites->any_test |= gl_owner_frames_any_test(sites->owner_frames);
        return;
    }
    if (g_str_has_prefix(line, ORIGIN) && strchr(line + strlen(ORIGIN), '\t') != NULL) {
        g_free(sites->origin);
        sites->origin = g_strdup(line + strlen(ORIGIN));
        sites->any_test = TRUE;
        return;
    }
    if (!g_str_has_prefix(line, OWNED))
        return;
    const char *fields = line + strlen(OWNED);
    const char *tab = strchr(fields, '\t');
    const char *tab2 = tab != NULL ? strchr(tab + 1, '\t') : NULL;
    if (tab2 == NULL)
        return;
    g_autofree char *owner = g_strndup(fields, (gsize) (tab2 - fields));
    const char *kept = kept_owner(sites, owner);
    g_auto(GStrv) addresses = g_strsplit(tab2 + 1, " ", -1);
    for (char **address = addresses; *address != NULL; address++) {
        gint64 value = (gint64) g_ascii_strtoull(*address, NULL, 16);
        if (value != 0)
            g_hash_table_insert(sites->owner_of, g_memdup2(&value, sizeof value), (gpointer) kept);
    }
}

gboolean gl_exact_record_marked(const GlExactRecord *record)
{
    gboolean exact = FALSE;
    for (guint i = 0; i < record->frames->len && !exact; i++)
        gl_exact_gemleak_frame(g_ptr_array_index(record->frames, i), NULL, &exact);
    return exact;
}

/* A record's blocks: under @sites->shared, those of a marked record at its
 * sites; else those of a cut record. */
static void add_sites(GlExactRecord *record, gpointer data)
{
    Sites *sites = data;
    gint first = gl_exact_site_frame(record->frames);
    gboolean wanted = first >= 0 &&
                      (sites->shared != NULL ? gl_exact_record_marked(record)
                                             : sites->cut != NULL &&
                                                   gl_exact_record_cut(record, sites->cut,
                                                                       sites->unwound));
    if (wanted)
        for (guint i = 0; i < record->objects->len; i++) {
            const GlExactObject *object = &g_array_index(record->objects, GlExactObject, i);
            if (sites->skip != NULL) {
                g_autofree char *block = gl_exact_block_key(object->address, object->bytes);
                if (g_hash_table_contains(sites->skip, block))
                    continue;
            }
            char *key = gl_exact_site_key(record->frames, first, object->bytes);
            if (key == NULL)
                continue;
            if (sites->shared != NULL) {
                gboolean at_shared = g_hash_table_contains(sites->shared, key);
                g_free(key);
                if (!at_shared)
                    continue;
            } else {
                g_hash_table_add(sites->sites, key);
                sites->found->blocks++;
                sites->cut_here = TRUE;
            }
            gint64 address = (gint64) object->address;
            const char *owner = g_hash_table_lookup(sites->owner_of, &address);
            if (owner == NULL || strcmp(owner, "\t") == 0)
                owner = sites->origin;  /* the test that started the process, if one did */
            if (owner != NULL && sites->tests != NULL)
                g_hash_table_add(sites->tests, g_strdup(owner));
        }
    gl_exact_record_free(record);
}

static void unwound_line(const char *line, gsize start, gsize end, gpointer data)
{
    Sites *sites = data;
    (void) start;
    (void) end;
    sites->unwound = gl_exact_unwound_line(line, sites->unwound);
}

/* A record whose stack carries its owner (sanitizer_owners_int.h): its
 * blocks are that owner's. */
static void owner_record(GlExactRecord *record, gpointer data)
{
    Sites *sites = data;
    for (guint i = 0; i < record->frames->len; i++) {
        const GlExactFrame *frame = g_ptr_array_index(record->frames, i);
        if (!gl_exact_gemleak_frame(frame, NULL, NULL))
            continue;
        const char *owner = gl_owner_frames_owner(sites->owner_frames, frame->fields[0]->str,
                                                  gl_exact_frame_number(frame, 1));
        if (owner == NULL)
            continue;
        const char *kept = kept_owner(sites, owner);
        for (guint k = 0; k < record->objects->len; k++) {
            gint64 address = (gint64) g_array_index(record->objects, GlExactObject, k).address;
            if (address != 0)
                g_hash_table_insert(sites->owner_of, g_memdup2(&address, sizeof address),
                                    (gpointer) kept);
        }
        break;
    }
    gl_exact_record_free(record);
}

char *gl_exact_block_key(guint64 address, guint64 bytes)
{
    return g_strdup_printf("%" G_GINT64_MODIFIER "x\t%" G_GUINT64_FORMAT, address, bytes);
}

/* gl_exact_sites(), and with @shared, gl_exact_shared_tests(). */
static void walk_sites(const char *data, gsize length, GlExactCut cut, GHashTable *sites,
                       GHashTable *tests, GlExactFound *found, GHashTable *skip,
                       GHashTable *shared)
{
    Sites walk = {
        .shared = shared,
        .skip = skip,
        .cut = cut,
        .sites = sites,
        .tests = tests,
        .owner_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
        .owners = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .owner_frames = gl_owner_frames_new(),
        .hidden = gl_exact_objects_new(),
        .found = found,
    };
    /* the owners first: they are written before the check that lists the blocks */
    GlExactWalker owners = { .record = owner_record, .line = owned_line, .data = &walk };
    gl_exact_walk(data, length, &owners);
    walk.unwound = GL_UNWOUND_RUNTIME;
    GlExactWalker records = { .record = add_sites, .line = unwound_line, .data = &walk };
    gl_exact_walk(data, length, &records);
    /* the blocks the check could not judge: the tests that allocated them
     * (gl_exact_sites()'s alone) */
    for (guint i = 0; shared == NULL && i < walk.hidden->len; i++) {
        gint64 address = (gint64) g_array_index(walk.hidden, GlExactObject, i).address;
        const char *owner = g_hash_table_lookup(walk.owner_of, &address);
        if (owner == NULL || strcmp(owner, "\t") == 0)
            owner = walk.origin;
        if (owner != NULL && tests != NULL)
            g_hash_table_add(tests, g_strdup(owner));
    }
    found->hidden += shared == NULL ? walk.hidden->len : 0;
    found->untested |= (walk.cut_here || walk.hidden->len > 0) && !walk.any_test;
    g_array_unref(walk.hidden);
    g_free(walk.origin);
    g_hash_table_unref(walk.owner_of);
    g_hash_table_unref(walk.owners);
    gl_owner_frames_free(walk.owner_frames);
}

void gl_exact_sites(const char *data, gsize length, GlExactCut cut, GHashTable *sites,
                    GHashTable *tests, GlExactFound *found, GHashTable *skip)
{
    walk_sites(data, length, cut, sites, tests, found, skip, NULL);
}

void gl_exact_shared_tests(const char *data, gsize length, GHashTable *sites, GHashTable *tests,
                           GHashTable *skip)
{
    GlExactFound ignored = { 0 };
    walk_sites(data, length, NULL, NULL, tests, &ignored, skip, sites);
}
