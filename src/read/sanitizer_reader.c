/* LeakSanitizer and AddressSanitizer reports, read a line at a time into
 * records (sanitizer_reader.h). The text is line based: a report starts
 * "==PID==ERROR: TOOL: ...", its records are separated by blank lines, each
 * a heading line and frame lines (sanitizer_frames.c), and it ends with
 * "SUMMARY: TOOL: ...". What is held is one buffer of the file and the
 * report in hand, whatever the file's size: a 600 MB log read whole
 * peaked at 1.78 GB. */
#include "gemleak/read/sanitizer_reader.h"
#include "input_int.h"
#include "sanitizer_int.h"
#include "sanitizer_owners_int.h"
#include "lines_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/run_files.h"

#include <string.h>

/* The runtimes' lines are short: a frame's path, a marker of the helper's
 * (the client library cuts its "owned" lines at 4 KiB, as the runtime's
 * Printf does). A longer line is kept to this and the rest dropped. */
#define MAX_LINE ((gsize) 1024 * 1024)

typedef struct {
    GlLines lines;
    char *name;            /* nullable: the file's path, or the input's name */
    GPtrArray *problems;   /* GError* */
    GlProcess process;
    GStringChunk *strings; /* the process's strings */
    GQueue ready;          /* records to hand out, in order */
    gboolean finished;

    /* the report being read */
    GPtrArray *report;     /* its records read so far, until it is settled */
    gboolean report_open;  /* a report since the last marker, not yet settled */
    GlRecord *record;      /* the record being read, nullable */
    GArray *frames;        /* of GlFrame: the stack being read */
    GlPendingFrame pending;
    gint stack_aux;        /* where the frames go: -1 the primary stack, else an aux index */
    gboolean in_report;    /* between an ERROR header and its SUMMARY */
    gboolean asan_report;
    gint64 report_pid;
    gboolean seen_runtime; /* a line of either runtime, report or not */
    gboolean tracer_fault; /* "Tracer caught signal N": the check's scan faulted */
    guint64 n_records;
    GlRecord *objects_of;  /* the record whose objects are being listed, nullable */
    gboolean too_many;     /* the report said "Too many leaks", or it omitted some */
    gboolean omitted;      /* it said "Omitting N more leak(s)." (max_leaks) */
    gboolean live;         /* "gemleak:live": the report in hand is of a check while Ruby ran */
    char *marker;          /* the last marker but "checked" and "exit", nullable */
    GHashTable *owned;     /* the owners' markers, a set of the strings owners points at */
    GlOwnerFrames *owner_frames;  /* the owners the stacks carry, by their index */
    const char *record_owner;     /* the owner the record in hand's stack carries (in owned) */
    const char *last_owner;       /* the one the record last kept carries (in owned) */
    const char *objects_owner;    /* the one objects_of's stack carries (in owned) */
    gboolean report_owned;        /* a record of the report in hand carried one */
    gboolean helper;       /* a marker of gemleak's helper was read: a gemleak run's output */
    gboolean default_frames;  /* the record in hand has a frame of the default format */
    /* --growth: the sites of the client library's counting, each once a
     * process ("gemleak:site\tSITE" and its frames): SITE (owned) ->
     * GlRecord* (owned), the stack its "gemleak:grew" lines' records get */
    GHashTable *sites;
    GlRecord *site;        /* the site whose frame lines are being read, nullable */
    GArray *site_frames;   /* of GlFrame: its frames so far */
    gboolean site_pending; /* the frame in hand (gemleak's format) is the site's */
    guint unknown_sites;   /* "gemleak:grew" lines of a site no "gemleak:site" gave */
    char *unknown_site;    /* the first such SITE, nullable */
} Reader;

/* What makes the stacks of a log no gemleak run wrote whole (a suite run
 * under the runtime by hand): the runtime's own options, which decide its
 * next log, as gemleak run --engine lsan sets them. Its default depth,
 * malloc_context_size=30, stops a Ruby stack short of main, its fast
 * unwinder stops at the first frame without a frame pointer, and 255 is
 * the deepest the runtimes keep (kStackTraceMax); for a log in its default
 * frame format, which names no module for a frame with a source line, the
 * format gemleak reads whole too. */
#define RUNTIME_OPTIONS "the runtime's own options for the next run, " \
    "LSAN_OPTIONS=fast_unwind_on_malloc=0:malloc_context_size=255"
#define RUNTIME_FORMAT ":stack_trace_format='" GL_SANITIZER_FRAME_FORMAT "'"
#define RUNTIME_WHY " (ASAN_OPTIONS under AddressSanitizer): every allocation unwound " \
    "exactly, as deep as the runtime goes (its default, 30 frames, stops a Ruby stack short " \
    "of main)"
#define RUNTIME_FORMAT_WHY ", every frame with its module (its default format names none " \
    "for a frame with a source line)"
#define RUNTIME_END "; gemleak run --engine lsan sets them"

/* ---- records ------------------------------------------------------------------ */

/* Returns: (transfer none): the marker that names the owner @test
 * ("NAME<TAB>LOCATION", "<TAB>": before the first test) in
 * process.owners, kept in r->owned. */
static const char *owned_marker(Reader *r, const char *test)
{
    char *owner = test[0] == '\t' && test[1] == '\0'
        ? g_strdup(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED)
        : g_strconcat(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED "\t", test, NULL);
    const char *kept = g_hash_table_lookup(r->owned, owner);
    if (kept == NULL) {
        g_hash_table_add(r->owned, owner);
        kept = owner;
    } else {
        g_free(owner);
    }
    return kept;
}

/* The block at @address is @owner's (owned_marker()). */
static void own_block(Reader *r, guint64 address, const char *owner)
{
    if (address == 0)
        return;
    if (r->process.owners == NULL)
        r->process.owners = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    gint64 key = (gint64) address;
    g_hash_table_insert(r->process.owners, g_memdup2(&key, sizeof key), (gpointer) owner);
}

/* Returns: TRUE if @frame is in one of gemleak's own libraries (its
 * allocation functions, before the runtime's). */
static gboolean gemleak_frame(const GlFrame *frame)
{
    if (frame->obj == NULL)
        return FALSE;
    const char *slash = strrchr(frame->obj, '/');
    const char *base = slash != NULL ? slash + 1 : frame->obj;
    return g_str_has_prefix(base, GL_PROTO_LIBRARY_PREFIX) && g_str_has_suffix(base, ".so");
}

/* Returns: the end of the frames of @frames from @start on that share its
 * program counter (a frame and those inlined at it). */
static guint group_end(const GArray *frames, guint start)
{
    guint end = start + 1;
    while (end < frames->len && g_array_index(frames, GlFrame, end).ip ==
                                    g_array_index(frames, GlFrame, start).ip)
        end++;
    return end;
}

/* Takes the frames of gemleak's libraries out of the stack being read,
 * noting on the record, for its primary stack, how many (the engine's
 * depth limit counted them) and whether one was gemleak_via (the
 * allocation ran below an extension's call of Ruby's allocation
 * functions). Where the process's stacks were made to stop at the
 * allocating call (GL_UNWOUND_CALL), what the runtime's fast unwinder
 * walked past it is not the process's: only the runtime's frame, the
 * allocating call and, below such a call, the function called and the
 * extension's call are kept; but in a record the exact pass gave its stack
 * (its mark, GL_PROTO_EXACT_FUNCTION, first after the runtime's frame). */
static void settle_frames(Reader *r, gboolean primary)
{
    GArray *frames = r->frames;
    guint kept = 0, dropped = 0;
    gint via_at = -1;
    gboolean exact = FALSE;
    for (guint i = 0; i < frames->len; i++) {
        GlFrame *frame = &g_array_index(frames, GlFrame, i);
        if (gemleak_frame(frame)) {
            /* the owner the block carries in its stack (the front's) */
            if (primary && gl_owner_frames_is_owner(r->owner_frames, frame->obj, frame->offset)) {
                const char *owner = gl_owner_frames_owner(r->owner_frames, frame->obj, frame->offset);
                r->record_owner = owner != NULL ? owned_marker(r, owner) : NULL;
                r->report_owned = TRUE;
            }
            /* the exact pass's mark: the stack is whole as written */
            if (g_strcmp0(frame->fn, GL_PROTO_EXACT_FUNCTION) == 0) {
                exact = TRUE;
                continue;
            }
            dropped++;
            if (via_at < 0 && g_strcmp0(frame->fn, GL_PROTO_VIA_FUNCTION) == 0)
                via_at = (gint) kept;
            continue;
        }
        g_array_index(frames, GlFrame, kept++) = *frame;
    }
    g_array_set_size(frames, kept);
    if (!primary)
        return;
    r->record->dropped_frames += dropped;
    r->record->via |= via_at >= 0;
    if (r->process.traits.unwound != GL_UNWOUND_CALL || exact ||
        r->record->leak_kind == GL_LEAK_NONE || kept == 0)
        return;
    guint caller = group_end(frames, 0);
    guint end = caller < kept ? group_end(frames, caller) : kept;
    if (via_at >= (gint) end && (guint) via_at < kept)
        end = group_end(frames, (guint) via_at);
    g_array_set_size(frames, end);
}

/* Moves the frames read into the stack they belong to. */
static void close_stack(Reader *r)
{
    if (r->record == NULL || r->frames->len == 0)
        return;
    settle_frames(r, r->stack_aux < 0);
    if (r->frames->len == 0)
        return;
    GlStack *stack = r->stack_aux < 0 ? &r->record->stack
                                      : &g_array_index(r->record->aux, GlAux, r->stack_aux).stack;
    if (stack->n_frames == 0) {
        stack->n_frames = r->frames->len;
        stack->frames = (GlFrame *) g_array_free(r->frames, FALSE);
        r->frames = g_array_new(FALSE, TRUE, sizeof(GlFrame));
    }
    g_array_set_size(r->frames, 0);
}

static void add_aux(Reader *r, const char *text)
{
    close_stack(r);
    GlAux aux = { .text = gl_record_intern(r->record, text) };
    g_array_append_val(r->record->aux, aux);
    r->stack_aux = (gint) r->record->aux->len - 1;
}

/* Adds the record in hand to the report (@keep) or drops it. */
static void finish_record(Reader *r, gboolean keep)
{
    if (r->record == NULL)
        return;
    close_stack(r);
    if (keep) {
        r->record->unique = ++r->n_records;
        r->record->marker = gl_record_intern(r->record, r->marker);
        /* A log gemleak's helper marked nothing in was not a gemleak run's:
         * what makes its stacks whole is the runtime's options. */
        if (!r->helper)
            r->record->whole_stacks = gl_record_intern(
                r->record, r->default_frames
                               ? RUNTIME_OPTIONS RUNTIME_FORMAT RUNTIME_WHY RUNTIME_FORMAT_WHY RUNTIME_END
                               : RUNTIME_OPTIONS RUNTIME_WHY RUNTIME_END);
        g_ptr_array_add(r->report, r->record);
    } else {
        gl_record_free(r->record);
    }
    r->last_owner = keep ? r->record_owner : NULL;
    r->record_owner = NULL;
    r->record = NULL;
    r->stack_aux = -1;
    r->default_frames = FALSE;
    g_array_set_size(r->frames, 0);
}

static GlRecord *start_record(Reader *r)
{
    finish_record(r, TRUE);
    GlRecord *record = gl_record_new();
    record->pid = r->report_pid;
    record->while_running = r->live;
    /* LeakSanitizer does not say which thread allocated: 0, unknown. */
    record->tid = 0;
    r->record = record;
    r->stack_aux = -1;
    r->objects_of = NULL;
    return record;
}

/* "Direct leak of 101 byte(s) in 1 object(s) allocated from:" */
static gboolean parse_leak_heading(Reader *r, const char *line)
{
    GlLeakKind kind;
    const char *p;
    if (g_str_has_prefix(line, "Direct leak of ")) {
        kind = GL_LEAK_DEFINITE;
        p = line + strlen("Direct leak of ");
    } else if (g_str_has_prefix(line, "Indirect leak of ")) {
        kind = GL_LEAK_INDIRECT;
        p = line + strlen("Indirect leak of ");
    } else {
        return FALSE;
    }
    char *end = NULL;
    guint64 bytes = g_ascii_strtoull(p, &end, 10);
    if (end == p || !g_str_has_prefix(end, " byte(s) in "))
        return FALSE;
    p = end + strlen(" byte(s) in ");
    guint64 blocks = g_ascii_strtoull(p, &end, 10);
    if (end == p || !g_str_has_prefix(end, " object(s)"))
        return FALSE;
    GlRecord *record = start_record(r);
    record->kind = gl_record_intern(record, kind == GL_LEAK_DEFINITE ? "Leak_DefinitelyLost"
                                                                      : "Leak_IndirectlyLost");
    record->leak_kind = kind;
    g_autofree char *what = g_strndup(line, (gsize) (end + strlen(" object(s)") - line));
    record->what = gl_record_intern(record, what);
    record->has_leak_size = TRUE;
    record->leaked_bytes = bytes;
    record->leaked_blocks = blocks;
    /* LeakSanitizer checks once the process has finished, as Valgrind's
     * exit leak check. */
    record->at_exit = TRUE;
    return TRUE;
}

static void finish_report(Reader *r, gboolean summary)
{
    /* A record with no frame after it is one the process never finished
     * writing. */
    finish_record(r, summary || r->record == NULL);
    if (!summary)
        r->process.complete = FALSE;
    r->in_report = FALSE;
}

/* "Objects leaked above:" and "0x602000000010 (24 bytes)" lines under the
 * record just read (report_objects=1): the blocks of its loss record. */
static void parse_objects(Reader *r, const char *line)
{
    if (strcmp(line, "Objects leaked above:") == 0) {
        r->objects_of = r->report->len > 0 ? g_ptr_array_index(r->report, r->report->len - 1)
                                           : NULL;
        r->objects_owner = r->last_owner;
        return;
    }
    if (r->objects_of == NULL || !g_str_has_prefix(line, "0x"))
        return;
    char *end = NULL;
    guint64 address = g_ascii_strtoull(line + 2, &end, 16);
    if (end == line + 2 || !g_str_has_prefix(end, " ("))
        return;
    const char *size = end + 2;
    guint64 bytes = g_ascii_strtoull(size, &end, 10);
    if (end == size || !g_str_has_prefix(end, " byte"))
        return;
    if (r->objects_of->blocks == NULL)
        r->objects_of->blocks = g_array_new(FALSE, FALSE, sizeof(GlBlock));
    GlBlock block = { address, bytes };
    g_array_append_val(r->objects_of->blocks, block);
    if (r->objects_owner != NULL)
        own_block(r, address, r->objects_owner);
}

/* ---- reports and the helper's lines -------------------------------------------- */

/* Hands out the records of the report since the last marker: a check the
 * helper asked for (@check: "gemleak:checked" followed it), whose leaks
 * were found while the process ran, or the runtime's own at exit. */
/* The records of the report whose stacks carried their owners (the
 * allocation front's frames, settle_frames()) as one, where the runtime
 * wrote one for each test of a stack: a loss record for each stack, as
 * without the owners, its blocks each still its test's (by address). */
static void join_owned_records(Reader *r)
{
    g_autoptr(GHashTable) first = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    guint kept = 0;
    for (guint i = 0; i < r->report->len; i++) {
        GlRecord *record = g_ptr_array_index(r->report, i);
        char *key = record->leak_kind != GL_LEAK_NONE && (record->aux == NULL || record->aux->len == 0)
                        ? gl_record_loss_key(record) : NULL;
        GlRecord *into = key != NULL ? g_hash_table_lookup(first, key) : NULL;
        if (into == NULL) {
            if (key != NULL)
                g_hash_table_insert(first, key, record);
            g_ptr_array_index(r->report, kept++) = record;
            continue;
        }
        g_free(key);
        into->leaked_bytes += record->leaked_bytes;
        into->leaked_blocks += record->leaked_blocks;
        if (record->blocks != NULL) {
            if (into->blocks == NULL)
                into->blocks = g_array_new(FALSE, FALSE, sizeof(GlBlock));
            g_array_append_vals(into->blocks, record->blocks->data, record->blocks->len);
        }
        into->dropped_frames = MAX(into->dropped_frames, record->dropped_frames);
        into->via |= record->via;
        g_autofree char *what = g_strdup_printf(
            "%s leak of %" G_GUINT64_FORMAT " byte(s) in %" G_GUINT64_FORMAT " object(s)",
            into->leak_kind == GL_LEAK_DEFINITE ? "Direct" : "Indirect", into->leaked_bytes,
            into->leaked_blocks);
        into->what = gl_record_intern(into, what);
        gl_record_free(record);
    }
    g_ptr_array_set_size(r->report, (gint) kept);
}

static void hand_out_report(Reader *r, gboolean check)
{
    if (r->report_owned)
        join_owned_records(r);
    r->report_owned = FALSE;
    for (guint i = 0; i < r->report->len; i++) {
        GlRecord *record = g_ptr_array_index(r->report, i);
        if (check && record->leak_kind != GL_LEAK_NONE) {
            record->at_exit = FALSE;
            record->while_running = TRUE;
        }
        g_queue_push_tail(&r->ready, record);
    }
    g_ptr_array_set_size(r->report, 0);
    r->report_open = FALSE;
    r->objects_of = NULL;
    r->too_many = FALSE;
}

/* The report since the last marker, if any, was no check the helper asked
 * for: the runtime's own, at exit. */
static void settle_report(Reader *r)
{
    if (!r->report_open)
        return;
    r->process.reached_exit = TRUE;
    if (r->too_many) {
        r->process.incomplete = TRUE;
        r->process.incomplete_reason =
            r->omitted ? "LeakSanitizer left leaks out of its report (\"Omitting N more "
                         "leak(s)\": max_leaks in the runtime's options)"
                       : "Too many leaks: LeakSanitizer reported only the first ones";
        r->process.incomplete_hint =
            r->omitted ? "run it without max_leaks" : "on Ruby 3.3 or newer, run it with "
                                                      "RUBY_FREE_AT_EXIT=1, as gemleak run does";
    }
    hand_out_report(r, FALSE);
    r->omitted = FALSE;
}

/* "NAME<TAB>LOCATION<TAB>ADDRESS ADDRESS ...", after "gemleak:owned\t": the
 * blocks still allocated at exit that were allocated while that test ran
 * (NAME and LOCATION empty: before the first test). */
static void read_owned(Reader *r, const char *fields)
{
    const char *tab = strchr(fields, '\t');
    const char *tab2 = tab != NULL ? strchr(tab + 1, '\t') : NULL;
    if (tab2 == NULL)
        return;
    r->process.marked = TRUE;
    g_autofree char *test = g_strndup(fields, (gsize) (tab2 - fields));
    const char *kept = owned_marker(r, test);
    for (const char *p = tab2 + 1; *p != '\0';) {
        char *end = NULL;
        guint64 address = g_ascii_strtoull(p, &end, 16);
        if (end == p)
            break;
        own_block(r, address, kept);
        p = end;
        while (*p == ' ')
            p++;
    }
}

/* ---- --growth: the client library's counting per site ---------------------------- */

static gint64 name_pid(const char *name);

/* The frame lines of the site in hand are over: they are its stack. */
static void close_site(Reader *r)
{
    if (r->site == NULL)
        return;
    r->site->stack.n_frames = r->site_frames->len;
    r->site->stack.frames = r->site_frames->len > 0
        ? g_memdup2(r->site_frames->data, r->site_frames->len * sizeof(GlFrame)) : NULL;
    g_array_set_size(r->site_frames, 0);
    r->site = NULL;
}

/* "gemleak:site<TAB>SITE": the frames after it, in gemleak's frame format
 * as the runtime symbolized them (GL_SANITIZER_FRAME_FORMAT), or the
 * runtime's own unsymbolized lines ("    #N 0xPC (MODULE+0xOFFSET)"), are
 * the site's stack: #0 the function the target called, #1 the target's
 * call. A site
 * is given once a process; given again, the later stack is kept. */
static void read_site(Reader *r, const char *site)
{
    if (*site == '\0')
        return;
    GlRecord *record = gl_record_new();
    g_hash_table_replace(r->sites, g_strdup(site), record);
    r->site = record;
    g_array_set_size(r->site_frames, 0);
}

/* Returns: TRUE if @text is a whole signed decimal, in *@value. */
static gboolean parse_signed(const char *text, gint64 *value)
{
    return g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, value, NULL);
}

/* "gemleak:grew<TAB>SITE<TAB>LIVE-BYTES<TAB>CHANGE-BYTES<TAB>LIVE-BLOCKS<TAB>
 * CHANGE-BLOCKS": what is live at the site, and its change since the
 * measure before. It is a record as a loss record of Valgrind's changed
 * leak check is: still reachable, the live bytes and blocks its size, the
 * site's stack, found while Ruby ran, after the growth marker it follows.
 * A site no "gemleak:site" line gave is the input's problem, said once. */
static void read_grew(Reader *r, const char *fields)
{
    g_auto(GStrv) field = g_strsplit(fields, "\t", 6);
    gint64 live_bytes = 0, change_bytes = 0, live_blocks = 0, change_blocks = 0;
    if (g_strv_length(field) != 5 || !parse_signed(field[1], &live_bytes) ||
        !parse_signed(field[2], &change_bytes) || !parse_signed(field[3], &live_blocks) ||
        !parse_signed(field[4], &change_blocks) || live_bytes < 0 || live_blocks < 0) {
        r->process.incomplete = TRUE;
        r->process.incomplete_reason = "a gemleak:grew line of its growth measures could not be "
                                       "read";
        return;
    }
    const GlRecord *site = g_hash_table_lookup(r->sites, field[0]);
    if (site == NULL) {
        if (r->unknown_sites++ == 0)
            r->unknown_site = g_strdup(field[0]);
        return;
    }
    GlRecord *record = gl_record_copy(site);
    record->unique = ++r->n_records;
    record->pid = r->process.pid != 0 ? r->process.pid : name_pid(r->name);
    record->kind = gl_record_intern(record, "Leak_StillReachable");
    record->leak_kind = GL_LEAK_REACHABLE;
    g_autofree char *what = g_strdup_printf(
        "%" G_GINT64_FORMAT " (%+" G_GINT64_FORMAT ") bytes in %" G_GINT64_FORMAT " (%+"
        G_GINT64_FORMAT ") blocks are still reachable", live_bytes, change_bytes, live_blocks,
        change_blocks);
    record->what = gl_record_intern(record, what);
    record->has_leak_size = TRUE;
    record->leaked_bytes = (guint64) live_bytes;
    record->leaked_blocks = (guint64) live_blocks;
    record->has_change = TRUE;
    record->change_bytes = change_bytes;
    record->change_blocks = change_blocks;
    record->while_running = TRUE;
    record->at_exit = FALSE;
    record->marker = gl_record_intern(record, r->marker);
    g_queue_push_tail(&r->ready, record);
}

/* A line the helper wrote ("gemleak:..."): the records after it carry it,
 * but "gemleak:checked", which closes a check, and "gemleak:exit". */
static void read_marker(Reader *r, const char *line)
{
    r->seen_runtime = TRUE;
    r->helper = TRUE;
    if (r->in_report)
        finish_report(r, FALSE);
    close_site(r);
    const char *word = line + strlen(GL_PROTO_MARKER_PREFIX);
    if (g_str_has_prefix(word, GL_PROTO_MARKER_SITE "\t")) {
        read_site(r, word + strlen(GL_PROTO_MARKER_SITE "\t"));
        return;
    }
    if (g_str_has_prefix(word, GL_PROTO_MARKER_GREW "\t")) {
        read_grew(r, word + strlen(GL_PROTO_MARKER_GREW "\t"));
        return;
    }
    if (g_str_has_prefix(word, GL_PROTO_MARKER_OWNED "\t")) {
        read_owned(r, word + strlen(GL_PROTO_MARKER_OWNED "\t"));
        return;
    }
    /* the owners the stacks carry: where their frames point, their names */
    if (gl_owner_frames_line(r->owner_frames, line)) {
        r->process.marked |= gl_owner_frames_any_test(r->owner_frames);
        return;
    }
    /* The test that started the process: the owner of its blocks no test
     * of its own allocated, as an "owned" line would name it. */
    if (g_str_has_prefix(word, GL_PROTO_MARKER_ORIGIN "\t") &&
        strchr(word + strlen(GL_PROTO_MARKER_ORIGIN "\t"), '\t') != NULL) {
        g_autofree char *owner = g_strconcat(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED "\t",
                                             word + strlen(GL_PROTO_MARKER_ORIGIN "\t"), NULL);
        const char *kept = g_hash_table_lookup(r->owned, owner);
        if (kept == NULL) {
            kept = g_steal_pointer(&owner);
            g_hash_table_add(r->owned, (gpointer) kept);
        }
        r->process.origin = kept;
        r->process.marked = TRUE;
        return;
    }
    /* The allocation front's lines before a check (src/agent/alloc.c):
     * how its stacks were made; the blocks its check cannot judge, the list
     * anew each check ("hidden" begins it); the exact pass's tables, which
     * only the exact pass reads (src/run/exact.c takes them out). None is a
     * test's marker. */
    if (g_str_has_prefix(word, GL_PROTO_MARKER_UNWOUND "\t")) {
        const char *how = word + strlen(GL_PROTO_MARKER_UNWOUND "\t");
        r->process.traits.unwound = strcmp(how, GL_PROTO_UNWOUND_CALL) == 0     ? GL_UNWOUND_CALL
                                    : strcmp(how, GL_PROTO_UNWOUND_FRAMES) == 0 ? GL_UNWOUND_FRAMES
                                                                                : GL_UNWOUND_RUNTIME;
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_HIDDEN) == 0) {
        r->process.hidden_blocks = 0;
        return;
    }
    if (g_str_has_prefix(word, GL_PROTO_MARKER_HIDDEN "\t")) {
        r->process.hidden_blocks++;
        return;
    }
    /* A forked child's parent, where gemleak run had not yet written the
     * check of what the child inherited (sanitizer_inherited.h). */
    if (g_str_has_prefix(word, GL_PROTO_MARKER_PARENT "\t"))
        return;
    if (g_str_has_prefix(word, GL_PROTO_MARKER_FRAME "\t") || g_str_has_prefix(word, GL_PROTO_MARKER_STACK "\t") ||
        strcmp(word, GL_PROTO_MARKER_STACKS) == 0 || g_str_has_prefix(word, GL_PROTO_MARKER_AT "\t"))
        return;
    if (strcmp(word, GL_PROTO_MARKER_CHECKED) == 0) {
        if (r->report_open)
            hand_out_report(r, TRUE);
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_LIVE) == 0) {
        settle_report(r);
        r->live = TRUE;
        return;
    }
    settle_report(r);
    if (strcmp(word, GL_PROTO_MARKER_EXIT) == 0) {
        r->process.reached_exit = TRUE;
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_DONE) == 0 || strcmp(word, GL_PROTO_MARKER_EXEC) == 0) {
        r->process.reached_exit = TRUE;
        r->live = FALSE;
        if (strcmp(word, GL_PROTO_MARKER_DONE) == 0)
            r->process.done = TRUE;
        else
            r->process.exec = TRUE;
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_FORKED) != 0)
        r->process.marked = TRUE;
    gl_process_note_marker(&r->process, line);
    g_free(r->marker);
    r->marker = g_strdup(line);
    r->process.marker = g_string_chunk_insert(r->strings, line);
}

/* "==PID==ERROR: ...": a report begins. */
static void start_report(Reader *r, gint64 pid, const char *rest)
{
    if (r->in_report)
        finish_report(r, FALSE);
    settle_report(r);
    r->report_open = TRUE;
    gboolean asan = g_str_has_prefix(rest, "ERROR: AddressSanitizer:");
    r->in_report = TRUE;
    r->seen_runtime = TRUE;
    r->asan_report = asan;
    r->report_pid = pid;
    r->process.n_reports++;
    if (r->process.pid == 0)
        r->process.pid = pid;
    if (asan)
        r->process.tool = "AddressSanitizer";
    else if (r->process.tool == NULL)
        r->process.tool = "LeakSanitizer";
    if (asan)
        gl_sanitizer_asan_error(start_record(r), rest + strlen("ERROR: AddressSanitizer:"));
}

/* A line of a runtime's outside a report ("==PID==WARNING: ..."). */
static void runtime_line(Reader *r, gint64 pid, const char *rest)
{
    /* AddressSanitizer's last line when it stops the process after an
     * error (an extension built without -fsanitize-recover=address): what
     * the process would have done next did not run. */
    if (strcmp(rest, "ABORTING") == 0 && g_strcmp0(r->process.tool, "AddressSanitizer") == 0) {
        r->process.halted = TRUE;
        return;
    }
    /* The check's tracer, as it goes through the threads (log_threads=1,
     * gemleak's; its own pid on the lines): a thread it found off its
     * stack, inside a Fiber or a coroutine (exit! or exec there, a fork's
     * end inside one, another thread inside one then), has the whole of
     * its stack counted reachable, the words its dead frames left too,
     * where a lost block's address hid it (a hostile trial: a leak passed
     * in every run). What the check found stands; its "nothing lost"
     * does not. */
    if (strcmp(rest, "WARNING: stack pointer not in stack range.") == 0) {
        r->process.incomplete = TRUE;
        r->process.incomplete_reason =
            "its leak check found a thread off its stack (inside a Fiber or a coroutine: exit! or "
            "exec there, a fork's end inside one) and counted the whole of that stack reachable, "
            "what its dead frames left too: a block lost in the process may look reachable";
        r->process.incomplete_hint = "Valgrind's engine scans a thread's stack from where it is";
        return;
    }
    /* The runtime's other lines say it ran in this process, even with
     * nothing to report. */
    gboolean lsan = strstr(rest, "LeakSanitizer") != NULL;
    if (!lsan && strstr(rest, "AddressSanitizer") == NULL)
        return;
    r->seen_runtime = TRUE;
    if (r->process.pid == 0)
        r->process.pid = pid;
    if (r->process.tool == NULL)
        r->process.tool = lsan ? "LeakSanitizer" : "AddressSanitizer";
    /* "==PID==LeakSanitizer has encountered a fatal error" (no ptrace,
     * no /proc): the leak check did not run. */
    if (strstr(rest, "LeakSanitizer has encountered a fatal error") != NULL) {
        r->process.incomplete = TRUE;
        r->process.incomplete_reason = "LeakSanitizer has encountered a fatal error: its "
                                       "leak check did not run";
        /* the tracer that stops the threads and scans their memory says
         * why, on a line of its own, when a signal stopped it */
        r->process.incomplete_hint =
            r->tracer_fault ? "its scan of the process's memory took a fault (\"Tracer caught "
                              "signal\"): memory it was told to scan could not be read"
                            : "it does not work under ptrace: strace, gdb, some sandboxes";
    }
}

/* A line inside a report. */
static void report_line(Reader *r, const char *line, gboolean last_line)
{
    if (g_str_has_prefix(line, "SUMMARY: ")) {
        finish_report(r, TRUE);
        return;
    }
    /* max_leaks (the user's LSAN_OPTIONS) cut the report: "Omitting 3
     * more leak(s)." What it left out may be the extension's. */
    gboolean omitted = g_str_has_prefix(line, "Omitting ") && g_str_has_suffix(line, " more leak(s).");
    if (g_str_has_prefix(line, "Too many leaks!") || omitted) {
        r->omitted |= omitted;
        /* The exit report's records decide; a mid-run check's only say
         * when a leak was lost (settle_report). */
        r->too_many = TRUE;
        return;
    }
    if (*line == '\0') {
        /* A blank line ends a LeakSanitizer record; an AddressSanitizer
         * error goes on over blank lines until its SUMMARY. */
        if (!r->asan_report || r->record == NULL || r->record->leak_kind != GL_LEAK_NONE)
            finish_record(r, TRUE);
        else
            close_stack(r);
        return;
    }
    if (parse_leak_heading(r, line))
        return;
    if (r->record == NULL) {
        parse_objects(r, line);
        return;
    }
    /* The last line of a file cut short may be half a frame. */
    if (last_line)
        return;
    GlFrame frame = { 0 };
    if (gl_sanitizer_pending_start(&r->pending, line))
        return;
    if (gl_sanitizer_parse_frame(r->record, line, &frame)) {
        r->default_frames |= !g_str_has_prefix(line, "F|");
        g_array_append_val(r->frames, frame);
        return;
    }
    if (r->record->leak_kind != GL_LEAK_NONE || gl_sanitizer_parse_access(r->record, line))
        return;
    /* "0x... is located 0 bytes inside of 115-byte region [...)", "freed
     * by thread T0 here:", "previously allocated by thread T0 here:",
     * "Thread T1 created by T0 here:": Valgrind's auxwhat, each with the
     * stack that follows it, if any. */
    g_autofree char *text = g_strstrip(g_strdup(line));
    gsize n = strlen(text);
    if (n > 0 && text[n - 1] == ':')
        text[n - 1] = '\0';
    if (*text != '\0')
        add_aux(r, text);
}

static void parse_line(Reader *r, const char *line, gboolean last_line)
{
    /* A frame of gemleak's format, on its lines whatever they hold (the
     * last line of a file cut short is half of one: dropped). */
    if (r->pending.stage > 0) {
        if (!last_line) {
            GlPendingStep step = r->site_pending
                ? gl_sanitizer_pending_read(&r->pending, r->site, r->site_frames, line)
                : gl_sanitizer_pending_read(&r->pending, r->record, r->frames, line);
            if (r->pending.stage == 0)
                r->site_pending = FALSE;
            if (step == GL_PENDING_LOST) {
                r->process.incomplete = TRUE;
                r->process.incomplete_reason = "a frame of the report could not be read";
            }
            return;
        }
        gl_sanitizer_pending_clear(&r->pending);
    }
    if (g_str_has_prefix(line, GL_PROTO_MARKER_PREFIX) && !last_line) {
        read_marker(r, line);
        return;
    }
    /* a growth site's frames, outside any report */
    if (r->site != NULL && !r->in_report) {
        GlFrame frame = { 0 };
        if (!last_line && gl_sanitizer_pending_start(&r->pending, line)) {
            r->site_pending = TRUE;
            return;
        }
        if (!last_line && gl_sanitizer_parse_frame(r->site, line, &frame)) {
            g_array_append_val(r->site_frames, frame);
            return;
        }
        close_site(r);
    }
    if (!r->in_report && g_str_has_prefix(line, "Tracer caught signal ")) {
        r->tracer_fault = TRUE;
        return;
    }
    const char *rest = NULL;
    gint64 pid = gl_sanitizer_line_pid(line, &rest);
    if (pid != 0 && last_line && !r->in_report &&
        (g_str_has_prefix(rest, "ERROR") || g_str_has_prefix("ERROR: ", rest))) {
        /* A header the process did not finish writing. */
        r->seen_runtime = TRUE;
        r->process.complete = FALSE;
        if (r->process.pid == 0)
            r->process.pid = pid;
        return;
    }
    if (pid != 0 && (g_str_has_prefix(rest, "ERROR: LeakSanitizer:") ||
                     g_str_has_prefix(rest, "ERROR: AddressSanitizer:")))
        start_report(r, pid, rest);
    else if (pid != 0)
        runtime_line(r, pid, rest);
    else if (r->in_report)
        report_line(r, line, last_line);
}

/* Returns: the ".PID" at the end of @name (log_path=DIR/lsan writes
 * DIR/lsan.PID), 0 when it has none. */
static gint64 name_pid(const char *name)
{
    if (name == NULL)
        return 0;
    g_autofree char *base = g_path_get_basename(name);
    gint64 pid = 0;
    return gl_run_file_pid(base, &pid, NULL) ? pid : 0;
}

/* The end of the input: what is left of the report, and what the whole
 * says of the process. */
static void finish(Reader *r)
{
    r->finished = TRUE;
    gl_sanitizer_pending_clear(&r->pending);
    close_site(r);
    if (r->in_report)
        finish_report(r, FALSE);
    settle_report(r);
    const char *label = r->name != NULL ? r->name : "input";
    if (r->lines.blank || !r->seen_runtime) {
        g_ptr_array_add(r->problems,
                        r->lines.blank ? g_error_new(GL_ERROR, GL_ERROR_EMPTY,
                                               "%s: empty (no sanitizer report)", label)
                                 : g_error_new(GL_ERROR, GL_ERROR_MALFORMED, "%s: not a "
                                               "LeakSanitizer or AddressSanitizer report", label));
        r->process.stands_for = 0;
        g_queue_clear_full(&r->ready, (GDestroyNotify) gl_record_free);
        return;
    }
    if (r->process.pid == 0)
        r->process.pid = name_pid(r->name);
    r->process.finished = r->process.complete;
    if (r->unknown_sites > 0) {
        g_autofree char *shown = g_utf8_make_valid(label, -1);
        g_autofree char *site = g_utf8_make_valid(r->unknown_site, -1);
        g_ptr_array_add(r->problems, g_error_new(
            GL_ERROR, GL_ERROR_MALFORMED, "%s: process %" G_GINT64_FORMAT ": %u growth measure%s "
            "(gemleak:grew) of a site no gemleak:site line named (%s%s): %s growth is not known",
            shown, r->process.pid, r->unknown_sites, r->unknown_sites == 1 ? "" : "s", site,
            r->unknown_sites > 1 ? ", ..." : "", r->unknown_sites == 1 ? "its" : "their"));
    }
    if (!r->process.complete) {
        g_autofree char *shown = g_utf8_make_valid(label, -1);
        g_ptr_array_add(r->problems,
                        g_error_new(GL_ERROR, GL_ERROR_TRUNCATED,
                                    "%s: the report of process %" G_GINT64_FORMAT " stops short: "
                                    "the process died or was killed while writing it", shown,
                                    r->process.pid));
    }
}

/* ---- the input seam (input_int.h) ------------------------------------------------- */

static gboolean detect_sanitizer(const char *head, gsize length, gboolean listed)
{
    (void) listed;
    return length > 0 && gl_sanitizer_detect(head, length);
}

static gpointer open_sanitizer(int fd, const char *data, gsize size, const char *name)
{
    Reader *r = g_new0(Reader, 1);
    r->name = g_strdup(name);
    r->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    gl_lines_init(&r->lines, fd, data, size, name, r->problems);
    r->strings = g_string_chunk_new(256);
    g_queue_init(&r->ready);
    r->report = g_ptr_array_new();
    r->frames = g_array_new(FALSE, TRUE, sizeof(GlFrame));
    r->stack_aux = -1;
    r->owned = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->owner_frames = gl_owner_frames_new();
    r->sites = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify) gl_record_free);
    r->site_frames = g_array_new(FALSE, TRUE, sizeof(GlFrame));
    r->process.stands_for = 1;
    r->process.complete = TRUE;
    r->process.started = TRUE;
    r->process.traits = (GlOutputTraits) {
        .full_checks = TRUE,
        .stack_limit = GL_SANITIZER_STACK_LIMIT,
        .hidden_frames = GL_SANITIZER_HIDDEN_FRAMES,
        .cycles_indirect = TRUE,
        .modules_hidden = " (the runtime's default frame format): gemleak cannot tell whether "
                          "they are the extension's; run with stack_trace_format='"
                          GL_SANITIZER_FRAME_FORMAT "' in the runtime's options, as gemleak run "
                          "--engine lsan does",
        .halted_why = "AddressSanitizer stops there unless the code was built with "
                      "-fsanitize-recover=address, as gemleak's Rake task builds it",
        .one_process = TRUE,
        .says_done = TRUE,
        .named_by_runtime = TRUE,
    };
    return r;
}

static GlRecord *next_sanitizer(gpointer state)
{
    Reader *r = state;
    while (g_queue_is_empty(&r->ready) && !r->finished) {
        gboolean last = FALSE;
        const char *line = gl_lines_next(&r->lines, MAX_LINE, &last);
        if (line == NULL)
            finish(r);
        else
            parse_line(r, line, last);
    }
    GlRecord *record = g_queue_pop_head(&r->ready);
    if (record != NULL)
        r->process.n_errors++;
    return record;
}

static const GlProcess *process_sanitizer(gconstpointer state)
{
    return &((const Reader *) state)->process;
}

static const GPtrArray *problems_sanitizer(gconstpointer state)
{
    return ((const Reader *) state)->problems;
}

static void free_sanitizer(gpointer state)
{
    Reader *r = state;
    if (r == NULL)
        return;
    gl_lines_clear(&r->lines);
    g_free(r->name);
    g_ptr_array_unref(r->problems);
    g_string_chunk_free(r->strings);
    g_queue_clear_full(&r->ready, (GDestroyNotify) gl_record_free);
    g_ptr_array_set_free_func(r->report, (GDestroyNotify) gl_record_free);
    g_ptr_array_unref(r->report);
    gl_record_free(r->record);
    g_array_unref(r->frames);
    gl_sanitizer_pending_clear(&r->pending);
    g_free(r->marker);
    if (r->process.owners != NULL)
        g_hash_table_unref(r->process.owners);
    if (r->process.test_order != NULL)
        g_hash_table_unref(r->process.test_order);
    if (r->process.growth_markers != NULL)
        g_ptr_array_unref(r->process.growth_markers);
    g_hash_table_unref(r->owned);
    gl_owner_frames_free(r->owner_frames);
    g_hash_table_unref(r->sites);
    g_array_unref(r->site_frames);
    g_free(r->unknown_site);
    g_free(r);
}

const GlInputFormat gl_input_sanitizer = {
    .name = "sanitizer",
    .reads = "LeakSanitizer and AddressSanitizer reports (log_path=): files, or\n"
             "directories of them",
    .named = NULL,  /* log_path=DIR/NAME: any name */
    .detect = detect_sanitizer,
    .open = open_sanitizer,
    .next = next_sanitizer,
    .process = process_sanitizer,
    .problems = problems_sanitizer,
    .free = free_sanitizer,
};
