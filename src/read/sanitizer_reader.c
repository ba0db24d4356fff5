/* LeakSanitizer and AddressSanitizer reports, read into records. The text
 * is line based: a report starts "==PID==ERROR: TOOL: ...", its records are
 * separated by blank lines, each a heading line and frame lines, and it
 * ends with "SUMMARY: TOOL: ...". */
#include "gemleak/read/sanitizer_reader.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/run_files.h"

#include <stdlib.h>
#include <string.h>

/* Far above any real report (5000 leaks of 30 frames is ~40 MB). */
#define MAX_REPORT_SIZE (G_GUINT64_CONSTANT(1) << 30)
#define DETECT_WINDOW (64 * 1024)

/* One object of a record, as report_objects=1 lists it under the record
 * ("Objects leaked above:", "0x602000000010 (24 bytes)"). */
typedef struct {
    guint64 address;
    guint64 bytes;
} Object;

/* A frame of GL_SANITIZER_FRAME_FORMAT being read: its text fields so far. */
typedef struct {
    guint stage;          /* 0: none; 1, 2, 3: its module, function, source file read */
    char *number;         /* its "%n", which every line of it repeats */
    GString *fields[3];   /* module, function, source file */
} PendingFrame;

/* A field that grows longer than any path or name: not a frame. */
#define MAX_FIELD_BYTES ((gsize) 64 * 1024)

/* What the mid-run checks of one loss record have found so far. */
typedef struct {
    GHashTable *addresses;  /* of its objects (gint64 *, owned) */
    guint64 bytes;
    guint64 blocks;
} Totals;

typedef struct {
    GPtrArray *records;
    GPtrArray *objects;   /* beside records: a GArray of Object each, or NULL */
    GlSanitizerFacts *facts;
    GlRecord *record;     /* the record being read, nullable */
    GArray *frames;       /* of GlFrame: the stack being read */
    PendingFrame pending; /* a frame of gemleak's format being read */
    gint stack_aux;       /* where the frames go: -1 the primary stack, else an aux index */
    gboolean in_report;   /* between an ERROR header and its SUMMARY */
    gboolean asan_report; /* the report in hand is AddressSanitizer's */
    gint64 report_pid;
    gboolean seen_runtime; /* a line of either runtime, report or not */
    /* --per-test: the helper's markers are lines of the report file. */
    char *marker;          /* the last one but "checked" and "exit" (owned), nullable */
    gint report_start;     /* where the records of the last report since a marker
                            * line begin; -1: none */
    gboolean too_many;     /* the report in hand said "Too many leaks", or it omitted some */
    gboolean omitted;      /* it said "Omitting N more leak(s)." (max_leaks) */
    gint objects_of;       /* the record whose objects are being listed, -1: none */
    gboolean exit_marker;  /* "gemleak:exit": the helper was done at exit */
    gboolean live;         /* "gemleak:live": the report in hand is of a check while Ruby ran */
    gboolean exit_report;  /* a report outside any check: the runtime's at exit */
    GHashTable *totals;    /* loss key (owned) -> Totals* (owned): what the mid-run
                            * checks saw of each loss record */
    /* --per-test under a sanitizer: "gemleak:owned" lines, read. */
    GHashTable *owner_of;  /* address (gint64*, owned) -> its owner's marker (in owners) */
    GHashTable *owners;    /* marker "gemleak:owned\tNAME\tLOCATION" (owned), a set */
} Parser;

/* Returns: the pid of "==PID==" at the start of @line, 0 when it has none;
 * *rest the text after it. */
static gint64 line_pid(const char *line, const char **rest)
{
    if (strncmp(line, "==", 2) != 0)
        return 0;
    char *end = NULL;
    guint64 pid = g_ascii_strtoull(line + 2, &end, 10);
    if (end == line + 2 || strncmp(end, "==", 2) != 0 || pid == 0 || pid > G_MAXINT32)
        return 0;
    *rest = end + 2;
    return (gint64) pid;
}

gboolean gl_sanitizer_detect(const char *data, gsize length)
{
    gsize window = MIN(length, (gsize) DETECT_WINDOW);
    const char *end = data + window;
    /* --per-test under LeakSanitizer: the helper's first marker opens the
     * file, and a report may come after many more. */
    if (length >= strlen(GL_PROTO_MARKER_PREFIX) &&
        strncmp(data, GL_PROTO_MARKER_PREFIX, strlen(GL_PROTO_MARKER_PREFIX)) == 0)
        return TRUE;
    for (const char *line = data; line < end;) {
        const char *newline = memchr(line, '\n', (gsize) (end - line));
        gsize n = newline != NULL ? (gsize) (newline - line) : (gsize) (end - line);
        g_autofree char *text = g_strndup(line, n);
        const char *rest = NULL;
        /* A report's header, or any other line of a runtime's: a fatal
         * error of its own ("==PID==LeakSanitizer has encountered a fatal
         * error.", under ptrace) is the only thing it wrote then, and a
         * file that says the check did not run must be read, not skipped. */
        if (line_pid(text, &rest) != 0 &&
            (strstr(rest, "LeakSanitizer") != NULL || strstr(rest, "AddressSanitizer") != NULL))
            return TRUE;
        if (newline == NULL)
            break;
        line = newline + 1;
    }
    return FALSE;
}

/* ---- frames ------------------------------------------------------------------- */

/* Returns: (transfer none): @s interned in @record, or NULL for what the
 * runtime prints when it does not know ("<null>", "", "??"). */
static const char *known(GlRecord *record, const char *s)
{
    if (s == NULL || *s == '\0' || strcmp(s, "<null>") == 0 || strcmp(s, "??") == 0)
        return NULL;
    return gl_record_intern(record, s);
}

/* Splits a source path into Valgrind's dir and file. */
static void set_source(GlRecord *record, GlFrame *frame, const char *path)
{
    if (path == NULL || *path == '\0' || strcmp(path, "<null>") == 0)
        return;
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        frame->file = gl_record_intern(record, path);
        return;
    }
    g_autofree char *dir = g_strndup(path, (gsize) (slash - path));
    frame->dir = *dir != '\0' ? gl_record_intern(record, dir) : gl_record_intern(record, "/");
    frame->file = known(record, slash + 1);
}

static guint parse_line_number(const char *s)
{
    char *end = NULL;
    guint64 n = g_ascii_strtoull(s, &end, 10);
    return end != s && n <= G_MAXUINT ? (guint) n : 0;
}

static guint64 parse_hex(const char *s)
{
    if (g_str_has_prefix(s, "0x") || g_str_has_prefix(s, "0X"))
        s += 2;
    return g_ascii_strtoull(s, NULL, 16);
}

/* "F|%n|%p|%m|%o|%f|%q|%s|%l|%c". A '|' inside a function name (C++'s
 * operator|) makes more fields: the module comes from the left, the source
 * from the right, the name is what is between. */
static gboolean parse_format_frame(GlRecord *record, const char *line, GlFrame *frame)
{
    g_auto(GStrv) fields = g_strsplit(line, "|", -1);
    guint n = g_strv_length(fields);
    if (n < 10)
        return FALSE;
    frame->ip = parse_hex(fields[2]);
    frame->obj = known(record, fields[3]);
    frame->offset = parse_hex(fields[4]);
    GString *name = g_string_new(fields[5]);
    for (guint i = 6; i + 4 < n; i++)
        g_string_append_printf(name, "|%s", fields[i]);
    frame->fn = known(record, name->str);
    g_string_free(name, TRUE);
    set_source(record, frame, fields[n - 3]);
    frame->line = parse_line_number(fields[n - 2]);
    return TRUE;
}

/* "(module+0xoffset)" or "(module)", possibly followed by " (BuildId: ...)". */
static void parse_module(GlRecord *record, const char *text, GlFrame *frame)
{
    g_autofree char *copy = g_strdup(text);
    char *close = strrchr(copy, ')');
    if (close != NULL)
        *close = '\0';
    char *plus = strrchr(copy, '+');
    if (plus != NULL && g_str_has_prefix(plus, "+0x")) {
        frame->offset = parse_hex(plus + 1);
        *plus = '\0';
    }
    frame->obj = known(record, copy);
}

/* ---- gemleak's frame format (GL_SANITIZER_FRAME_FORMAT) ---------------------- */

static void pending_clear(PendingFrame *pending)
{
    for (guint i = 0; i < G_N_ELEMENTS(pending->fields); i++)
        if (pending->fields[i] != NULL)
            g_string_free(g_steal_pointer(&pending->fields[i]), TRUE);
    g_clear_pointer(&pending->number, g_free);
    pending->stage = 0;
}

/* Returns: (transfer none) (nullable): what follows "@tag @number " at the
 * start of @line, or NULL when @line does not start so. */
static const char *after_tag(const char *line, const char *tag, const char *number)
{
    gsize n = strlen(tag);
    if (strncmp(line, tag, n) != 0 || line[n] != ' ')
        return NULL;
    line += n + 1;
    gsize digits = strlen(number);
    if (strncmp(line, number, digits) != 0 || line[digits] != ' ')
        return NULL;
    return line + digits + 1;
}

/* Returns: TRUE if @text is "0x" and hex digits, or digits (@hex FALSE),
 * and no more; *value what it says. */
static gboolean number_field(const char *text, gboolean hex, guint64 *value)
{
    if (hex && !g_str_has_prefix(text, "0x"))
        return FALSE;
    const char *digits = hex ? text + 2 : text;
    if (*digits == '-')  /* a line or column of -1: unknown */
        digits++;
    if (*digits == '\0')
        return FALSE;
    for (const char *c = digits; *c != '\0'; c++)
        if (hex ? !g_ascii_isxdigit(*c) : !g_ascii_isdigit(*c))
            return FALSE;
    *value = *text == '-' ? 0 : g_ascii_strtoull(digits, NULL, hex ? 16 : 10);
    return TRUE;
}

/* Returns: TRUE if @line is the line that closes the frame in hand
 * ("G N PC OFFSET FN-OFFSET LINE COLUMN"); *@frame gets its numbers. */
static gboolean closing_line(const char *line, const char *number, GlFrame *frame)
{
    const char *rest = after_tag(line, "G", number);
    if (rest == NULL)
        return FALSE;
    g_auto(GStrv) words = g_strsplit(rest, " ", -1);
    guint64 pc = 0, offset = 0, in_function = 0, source_line = 0, column = 0;
    if (g_strv_length(words) != 5 || !number_field(words[0], TRUE, &pc) ||
        !number_field(words[1], TRUE, &offset) || !number_field(words[2], TRUE, &in_function) ||
        !number_field(words[3], FALSE, &source_line) || !number_field(words[4], FALSE, &column))
        return FALSE;
    frame->ip = pc;
    frame->offset = offset;
    frame->line = source_line <= G_MAXUINT ? (guint) source_line : 0;
    return TRUE;
}

/* Returns: TRUE if @line starts a frame of gemleak's format ("Gm N MODULE"),
 * which the lines after it go on. */
static gboolean start_pending_frame(Parser *parser, const char *line)
{
    if (!g_str_has_prefix(line, "Gm "))
        return FALSE;
    const char *number = line + 3;
    const char *space = strchr(number, ' ');
    if (space == NULL || space == number)
        return FALSE;
    for (const char *c = number; c < space; c++)
        if (!g_ascii_isdigit(*c))
            return FALSE;
    pending_clear(&parser->pending);
    parser->pending.number = g_strndup(number, (gsize) (space - number));
    parser->pending.fields[0] = g_string_new(space + 1);
    parser->pending.stage = 1;
    return TRUE;
}

/* Reads @line as the next line of the frame in hand: the tag due next
 * (its function, its source file, then the numbers that close it), or
 * more of the field before it, a path or name that holds a newline. */
static void read_pending_frame(Parser *parser, const char *line)
{
    PendingFrame *pending = &parser->pending;
    static const char *const tags[] = { "Gf", "Gs" };
    GlFrame frame = { 0 };
    if (pending->stage < 3) {
        const char *field = after_tag(line, tags[pending->stage - 1], pending->number);
        if (field != NULL) {
            pending->fields[pending->stage] = g_string_new(field);
            pending->stage++;
            return;
        }
    } else if (closing_line(line, pending->number, &frame)) {
        frame.obj = known(parser->record, pending->fields[0]->str);
        frame.fn = known(parser->record, pending->fields[1]->str);
        set_source(parser->record, &frame, pending->fields[2]->str);
        g_array_append_val(parser->frames, frame);
        pending_clear(pending);
        return;
    }
    GString *field = pending->fields[pending->stage - 1];
    g_string_append_printf(field, "\n%s", line);
    if (field->len > MAX_FIELD_BYTES) {
        /* no path is that long: the frame is lost, and the report with it */
        pending_clear(pending);
        parser->facts->incomplete = TRUE;
        parser->facts->incomplete_reason = "a frame of the report could not be read";
    }
}

/* "#N 0xPC in FUNCTION FILE:LINE[:COL]", "#N 0xPC in FUNCTION (MODULE+0xOFF)",
 * "#N 0xPC (MODULE+0xOFF)": the runtimes' default "    #%n %p %F %L". */
static gboolean parse_default_frame(GlRecord *record, const char *line, GlFrame *frame)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '#' || !g_ascii_isdigit(p[1]))
        return FALSE;
    p++;
    while (g_ascii_isdigit(*p))
        p++;
    if (*p != ' ')
        return FALSE;
    p++;
    if (!g_str_has_prefix(p, "0x"))
        return FALSE;
    frame->ip = parse_hex(p);
    p += 2;
    while (g_ascii_isxdigit(*p))
        p++;
    g_autofree char *rest = g_strstrip(g_strdup(p));
    /* A build id, as newer runtimes add it: not part of the location. */
    char *build_id = strstr(rest, " (BuildId: ");
    if (build_id != NULL)
        *build_id = '\0';
    char *text = rest;
    if (g_str_has_prefix(text, "in ")) {
        text += 3;
    } else {
        if (*text == '(')
            parse_module(record, text + 1, frame);
        return TRUE;
    }
    gsize length = strlen(text);
    char *open = strrchr(text, '(');
    if (length > 0 && text[length - 1] == ')' && open != NULL && open > text && open[-1] == ' ' &&
        strstr(open, "+0x") != NULL) {
        parse_module(record, open + 1, frame);
        open[-1] = '\0';
        frame->fn = known(record, text);
        return TRUE;
    }
    /* FUNCTION FILE:LINE[:COL]: the location is the last word, when it
     * ends in numbers after a ':'. */
    char *space = strrchr(text, ' ');
    if (space != NULL) {
        char *location = space + 1;
        char *colon = strrchr(location, ':');
        if (colon != NULL && g_ascii_isdigit(colon[1])) {
            *colon = '\0';
            guint number = parse_line_number(colon + 1);
            char *second = strrchr(location, ':');
            if (second != NULL && g_ascii_isdigit(second[1])) {
                /* FILE:LINE:COL */
                number = parse_line_number(second + 1);
                *second = '\0';
            }
            *space = '\0';
            frame->fn = known(record, text);
            set_source(record, frame, location);
            frame->line = number;
            return TRUE;
        }
    }
    frame->fn = known(record, text);
    return TRUE;
}

/* Returns: TRUE if @line is a frame; the frame is added to the stack in hand. */
static gboolean parse_frame(Parser *parser, const char *line)
{
    GlFrame frame = { 0 };
    gboolean ok;
    if (g_str_has_prefix(line, "F|"))
        ok = parse_format_frame(parser->record, line, &frame);
    else
        ok = parse_default_frame(parser->record, line, &frame);
    if (ok)
        g_array_append_val(parser->frames, frame);
    return ok;
}

/* ---- records ------------------------------------------------------------------ */

/* Moves the frames read into the stack they belong to. */
static void close_stack(Parser *parser)
{
    if (parser->record == NULL || parser->frames->len == 0)
        return;
    GlStack *stack = parser->stack_aux < 0
                         ? &parser->record->stack
                         : &g_array_index(parser->record->aux, GlAux, parser->stack_aux).stack;
    if (stack->n_frames == 0) {
        stack->n_frames = parser->frames->len;
        stack->frames = (GlFrame *) g_array_free(parser->frames, FALSE);
        parser->frames = g_array_new(FALSE, TRUE, sizeof(GlFrame));
    }
    g_array_set_size(parser->frames, 0);
}

static void add_aux(Parser *parser, const char *text)
{
    close_stack(parser);
    GlAux aux = { .text = gl_record_intern(parser->record, text) };
    g_array_append_val(parser->record->aux, aux);
    parser->stack_aux = (gint) parser->record->aux->len - 1;
}

/* Hands out the record in hand (@keep) or drops it. */
static void finish_record(Parser *parser, gboolean keep)
{
    if (parser->record == NULL)
        return;
    close_stack(parser);
    if (keep) {
        parser->record->unique = parser->records->len + 1;
        parser->record->marker = gl_record_intern(parser->record, parser->marker);
        g_ptr_array_add(parser->records, parser->record);
        g_ptr_array_add(parser->objects, NULL);
    } else {
        gl_record_free(parser->record);
    }
    parser->record = NULL;
    parser->stack_aux = -1;
    g_array_set_size(parser->frames, 0);
}

static GlRecord *start_record(Parser *parser)
{
    finish_record(parser, TRUE);
    GlRecord *record = gl_record_new();
    record->pid = parser->report_pid;
    record->while_running = parser->live;
    /* LeakSanitizer does not say which thread allocated: 0, unknown. */
    record->tid = 0;
    parser->record = record;
    parser->stack_aux = -1;
    parser->objects_of = -1;
    return record;
}

/* "Direct leak of 101 byte(s) in 1 object(s) allocated from:" */
static gboolean parse_leak_heading(Parser *parser, const char *line)
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
    GlRecord *record = start_record(parser);
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

/* Valgrind's kind for an AddressSanitizer bug type and access. */
static const char *asan_kind(const char *bug, const char *access)
{
    static const char *const fatal[] = { "SEGV", "BUS", "FPE", "ILL", "ABRT", "stack-overflow",
                                         "unknown-crash on address 0x0", NULL };
    for (const char *const *f = fatal; *f != NULL; f++)
        if (g_str_has_prefix(bug, *f))
            return GL_KIND_FATAL_SIGNAL;
    if (g_str_has_prefix(bug, "attempting double-free") ||
        g_str_has_prefix(bug, "attempting free on address which was not malloc()-ed") ||
        g_str_has_prefix(bug, "bad-free"))
        return "InvalidFree";
    if (g_str_has_prefix(bug, "alloc-dealloc-mismatch") ||
        g_str_has_prefix(bug, "new-delete-type-mismatch"))
        return "MismatchedFree";
    if (strstr(bug, "-param-overlap") != NULL)
        return "Overlap";
    if (access != NULL && g_str_has_prefix(access, "WRITE"))
        return "InvalidWrite";
    return "InvalidRead";
}

/* "==PID==ERROR: AddressSanitizer: heap-use-after-free on address 0x... at pc ..." */
static void start_asan_error(Parser *parser, const char *bug)
{
    GlRecord *record = start_record(parser);
    g_autofree char *copy = g_strstrip(g_strdup(bug));
    /* the registers say nothing a user needs */
    char *at_pc = strstr(copy, " at pc 0x");
    if (at_pc == NULL)
        at_pc = strstr(copy, " (pc 0x");
    if (at_pc != NULL)
        *at_pc = '\0';
    gsize n = strlen(copy);
    if (n > 0 && copy[n - 1] == ':')
        copy[n - 1] = '\0';
    /* "attempting double-free on 0x... in thread T0:" */
    const char *thread = strstr(copy, " in thread T");
    if (thread != NULL)
        record->tid = (gint) MIN(parse_line_number(thread + strlen(" in thread T")), G_MAXINT - 1) + 1;
    record->kind = gl_record_intern(record, asan_kind(copy, NULL));
    record->leak_kind = GL_LEAK_NONE;
    record->what = gl_record_intern(record, copy);
}

/* "READ of size 1 at 0x6020000000b0 thread T0": the access, whose stack
 * follows, and the thread (T0 is Valgrind's thread 1). */
static gboolean parse_access(Parser *parser, const char *line)
{
    gboolean read = g_str_has_prefix(line, "READ of size ");
    if (!read && !g_str_has_prefix(line, "WRITE of size "))
        return FALSE;
    GlRecord *record = parser->record;
    const char *size = line + strlen(read ? "READ of size " : "WRITE of size ");
    char *end = NULL;
    guint64 n = g_ascii_strtoull(size, &end, 10);
    if (record->kind != NULL && (strcmp(record->kind, "InvalidRead") == 0 ||
                                 strcmp(record->kind, "InvalidWrite") == 0)) {
        record->kind = gl_record_intern(record, read ? "InvalidRead" : "InvalidWrite");
        g_autofree char *what = g_strdup_printf("Invalid %s of size %" G_GUINT64_FORMAT " (%s)",
                                                read ? "read" : "write", n, record->what);
        record->what = gl_record_intern(record, what);
    }
    const char *thread = strstr(line, " thread T");
    if (thread != NULL)
        record->tid = (gint) MIN(parse_line_number(thread + strlen(" thread T")), G_MAXINT - 1) + 1;
    return TRUE;
}

static void finish_report(Parser *parser, gboolean summary)
{
    /* A record with no frame after it is one the process never finished
     * writing. */
    if (!summary && parser->record != NULL)
        finish_record(parser, FALSE);
    else
        finish_record(parser, TRUE);
    if (!summary)
        parser->facts->complete = FALSE;
    parser->in_report = FALSE;
}

/* ---- leak checks while the process runs (--per-test) --------------------------- */

static void free_objects(gpointer data)
{
    if (data != NULL)
        g_array_unref(data);
}

static void free_totals(gpointer data)
{
    Totals *totals = data;
    g_hash_table_unref(totals->addresses);
    g_free(totals);
}

/* "Objects leaked above:" and "0x602000000010 (24 bytes)" lines under the
 * record just read (report_objects=1). */
static void parse_objects(Parser *parser, const char *line)
{
    if (strcmp(line, "Objects leaked above:") == 0) {
        parser->objects_of = (gint) parser->records->len - 1;
        return;
    }
    if (parser->objects_of < 0 || parser->objects_of >= (gint) parser->records->len ||
        !g_str_has_prefix(line, "0x"))
        return;
    char *end = NULL;
    guint64 address = g_ascii_strtoull(line + 2, &end, 16);
    if (end == line + 2 || !g_str_has_prefix(end, " ("))
        return;
    const char *size = end + 2;
    guint64 bytes = g_ascii_strtoull(size, &end, 10);
    if (end == size || !g_str_has_prefix(end, " byte"))
        return;
    GArray *objects = g_ptr_array_index(parser->objects, parser->objects_of);
    if (objects == NULL) {
        objects = g_array_new(FALSE, FALSE, sizeof(Object));
        parser->objects->pdata[parser->objects_of] = objects;
    }
    Object object = { address, bytes };
    g_array_append_val(objects, object);
}

/* Cuts the records (and their objects) to the first @length, freeing none
 * of those past it (the caller moved them), and numbers them again. */
static void cut_moved(Parser *parser, guint length)
{
    g_ptr_array_set_free_func(parser->objects, NULL);
    g_ptr_array_set_size(parser->objects, (gint) length);
    g_ptr_array_set_free_func(parser->objects, free_objects);
    g_ptr_array_set_free_func(parser->records, NULL);
    g_ptr_array_set_size(parser->records, (gint) length);
    g_ptr_array_set_free_func(parser->records, (GDestroyNotify) gl_record_free);
    for (guint i = 0; i < parser->records->len; i++)
        ((GlRecord *) g_ptr_array_index(parser->records, i))->unique = i + 1;
}

/* Removes the records whose @drop is set, and numbers the rest again. */
static void remove_records(Parser *parser, const gboolean *drop, guint from)
{
    guint kept = from;
    for (guint i = from; i < parser->records->len; i++) {
        if (drop[i - from]) {
            gl_record_free(g_ptr_array_index(parser->records, i));
            free_objects(g_ptr_array_index(parser->objects, i));
            continue;
        }
        parser->records->pdata[kept] = parser->records->pdata[i];
        parser->objects->pdata[kept] = parser->objects->pdata[i];
        kept++;
    }
    cut_moved(parser, kept);  /* their pointers moved down */
}

/* The report of a check the helper asked for ("gemleak:checked" after it):
 * LeakSanitizer reports every object lost so far, again in each check;
 * what the attribution reads is Valgrind's added check, the loss records
 * that grew since the last check with the numbers of every block of them
 * seen so far. A loss record is kept when it has objects (by their
 * addresses) no earlier check of the process saw; without addresses
 * (report_objects=0), when its numbers grew. */
static void close_check(Parser *parser)
{
    guint from = (guint) parser->report_start;
    parser->report_start = -1;
    parser->too_many = FALSE;
    if (from >= parser->records->len)
        return;
    gboolean *drop = g_new0(gboolean, parser->records->len - from);
    for (guint i = from; i < parser->records->len; i++) {
        GlRecord *record = g_ptr_array_index(parser->records, i);
        if (record->leak_kind == GL_LEAK_NONE)
            continue;
        record->at_exit = FALSE;
        record->while_running = TRUE;
        g_autofree char *key = gl_record_loss_key(record);
        Totals *totals = g_hash_table_lookup(parser->totals, key);
        if (totals == NULL) {
            totals = g_new0(Totals, 1);
            totals->addresses = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
            g_hash_table_insert(parser->totals, g_strdup(key), totals);
        }
        gboolean grew = FALSE;
        GArray *objects = g_ptr_array_index(parser->objects, i);
        if (objects != NULL) {
            for (guint j = 0; j < objects->len; j++) {
                const Object *object = &g_array_index(objects, Object, j);
                gint64 address = (gint64) object->address;
                if (g_hash_table_contains(totals->addresses, &address))
                    continue;
                g_hash_table_add(totals->addresses, g_memdup2(&address, sizeof address));
                totals->bytes += object->bytes;
                totals->blocks++;
                grew = TRUE;
            }
        } else if (record->leaked_blocks > totals->blocks || record->leaked_bytes > totals->bytes) {
            totals->bytes = MAX(totals->bytes, record->leaked_bytes);
            totals->blocks = MAX(totals->blocks, record->leaked_blocks);
            grew = TRUE;
        }
        if (!grew) {
            drop[i - from] = TRUE;
            continue;
        }
        record->leaked_bytes = totals->bytes;
        record->leaked_blocks = totals->blocks;
        g_autofree char *what = g_strdup_printf(
            "%s leak of %" G_GUINT64_FORMAT " byte(s) in %" G_GUINT64_FORMAT " object(s)",
            record->leak_kind == GL_LEAK_DEFINITE ? "Direct" : "Indirect", totals->bytes,
            totals->blocks);
        record->what = gl_record_intern(record, what);
    }
    remove_records(parser, drop, from);
    g_free(drop);
}

/* "NAME<TAB>LOCATION<TAB>ADDRESS ADDRESS ...", after "gemleak:owned\t": the
 * blocks still allocated at exit that were allocated while that test ran
 * (NAME and LOCATION empty: before the first test). */
static void read_owned(Parser *parser, const char *fields)
{
    const char *tab = strchr(fields, '\t');
    const char *tab2 = tab != NULL ? strchr(tab + 1, '\t') : NULL;
    if (tab2 == NULL)
        return;
    parser->facts->marked = TRUE;
    g_autofree char *test = g_strndup(fields, (gsize) (tab2 - fields));
    char *owner = *test == '\t' && test[1] == '\0'
        ? g_strdup(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED)
        : g_strconcat(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED "\t", test, NULL);
    const char *kept = g_hash_table_lookup(parser->owners, owner);
    if (kept == NULL) {
        g_hash_table_add(parser->owners, owner);
        kept = owner;
    } else {
        g_free(owner);
    }
    for (const char *p = tab2 + 1; *p != '\0';) {
        char *end = NULL;
        guint64 address = g_ascii_strtoull(p, &end, 16);
        if (end == p)
            break;
        if (address != 0) {
            gint64 key = (gint64) address;
            g_hash_table_insert(parser->owner_of, g_memdup2(&key, sizeof key), (gpointer) kept);
        }
        p = end;
        while (*p == ' ')
            p++;
    }
}

/* One test's share of a record: its blocks allocated in that test. */
typedef struct {
    const char *owner;
    guint64 bytes;
    guint64 blocks;
} Share;

/* --per-test under a sanitizer: before each record of the exit report
 * (from @from on), a copy for each test that allocated objects of it, with
 * their numbers and "gemleak:owned NAME LOCATION" for a marker, as a
 * mid-run check's record: the attribution names those tests (attribute.h).
 * Objects a check mid-run listed (a forked child's, of what it inherited)
 * are the parent's: they name no test of the child. */
static void add_owners(Parser *parser, guint from)
{
    if (g_hash_table_size(parser->owner_of) == 0 || from >= parser->records->len)
        return;
    GPtrArray *records = g_ptr_array_new();
    GPtrArray *objects = g_ptr_array_new();
    g_autoptr(GArray) shares = g_array_new(FALSE, FALSE, sizeof(Share));
    for (guint i = from; i < parser->records->len; i++) {
        GlRecord *record = g_ptr_array_index(parser->records, i);
        GArray *listed = g_ptr_array_index(parser->objects, i);
        g_array_set_size(shares, 0);
        if (record->leak_kind != GL_LEAK_NONE && listed != NULL) {
            g_autofree char *key = gl_record_loss_key(record);
            const Totals *seen = g_hash_table_lookup(parser->totals, key);
            for (guint j = 0; j < listed->len; j++) {
                const Object *object = &g_array_index(listed, Object, j);
                gint64 address = (gint64) object->address;
                const char *owner = g_hash_table_lookup(parser->owner_of, &address);
                if (owner == NULL || (seen != NULL && g_hash_table_contains(seen->addresses, &address)))
                    continue;
                guint k = 0;
                while (k < shares->len && g_array_index(shares, Share, k).owner != owner)
                    k++;
                if (k == shares->len) {
                    Share share = { owner, 0, 0 };
                    g_array_append_val(shares, share);
                }
                g_array_index(shares, Share, k).bytes += object->bytes;
                g_array_index(shares, Share, k).blocks++;
            }
        }
        for (guint k = 0; k < shares->len; k++) {
            const Share *share = &g_array_index(shares, Share, k);
            GlRecord *copy = gl_record_copy(record);
            copy->marker = gl_record_intern(copy, share->owner);
            copy->at_exit = FALSE;
            copy->attribution_only = TRUE;
            copy->leaked_bytes = share->bytes;
            copy->leaked_blocks = share->blocks;
            g_ptr_array_add(records, copy);
            g_ptr_array_add(objects, NULL);
        }
        g_ptr_array_add(records, record);
        g_ptr_array_add(objects, listed);
    }
    cut_moved(parser, from);  /* those from @from on moved into @records */
    for (guint i = 0; i < records->len; i++) {
        g_ptr_array_add(parser->records, g_ptr_array_index(records, i));
        g_ptr_array_add(parser->objects, g_ptr_array_index(objects, i));
        ((GlRecord *) g_ptr_array_index(records, i))->unique = parser->records->len;
    }
    g_ptr_array_unref(records);
    g_ptr_array_unref(objects);
}

/* The report since the last marker, if any, was no check the helper asked
 * for: the runtime's own, at exit. */
static void settle_report(Parser *parser)
{
    if (parser->report_start < 0)
        return;
    parser->exit_report = TRUE;
    add_owners(parser, (guint) parser->report_start);
    if (parser->too_many) {
        parser->facts->incomplete = TRUE;
        parser->facts->incomplete_reason =
            parser->omitted ? "LeakSanitizer left leaks out of its report (\"Omitting N more "
                              "leak(s)\": max_leaks in the runtime's options)"
                            : "Too many leaks: LeakSanitizer reported only the first ones";
        parser->facts->incomplete_hint =
            parser->omitted ? "run it without max_leaks" : "on Ruby 3.3 or newer, run it with "
                                                           "RUBY_FREE_AT_EXIT=1, as gemleak run does";
    }
    parser->report_start = -1;
    parser->too_many = FALSE;
    parser->omitted = FALSE;
}

/* A line the helper wrote ("gemleak:..."): the records after it carry it,
 * but "gemleak:checked", which closes a check, and "gemleak:exit". */
static void read_marker(Parser *parser, const char *line)
{
    parser->seen_runtime = TRUE;
    if (parser->in_report)
        finish_report(parser, FALSE);
    const char *word = line + strlen(GL_PROTO_MARKER_PREFIX);
    if (g_str_has_prefix(word, GL_PROTO_MARKER_OWNED "\t")) {
        read_owned(parser, word + strlen(GL_PROTO_MARKER_OWNED "\t"));
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_CHECKED) == 0) {
        if (parser->report_start >= 0)
            close_check(parser);
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_LIVE) == 0) {
        settle_report(parser);
        parser->live = TRUE;
        return;
    }
    settle_report(parser);
    if (strcmp(word, GL_PROTO_MARKER_EXIT) == 0) {
        parser->exit_marker = TRUE;
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_DONE) == 0 || strcmp(word, GL_PROTO_MARKER_EXEC) == 0) {
        parser->exit_marker = TRUE;
        parser->live = FALSE;
        if (strcmp(word, GL_PROTO_MARKER_DONE) == 0)
            parser->facts->done = TRUE;
        else
            parser->facts->exec = TRUE;
        return;
    }
    if (strcmp(word, GL_PROTO_MARKER_FORKED) != 0)
        parser->facts->marked = TRUE;
    g_free(parser->marker);
    parser->marker = g_strdup(line);
}

/* Once the process got to its exit check, a loss record a mid-run check
 * reported and the exit check did not was never lost: its objects were
 * referenced from memory LeakSanitizer does not scan (Ruby's object pages
 * it was not told of, its shape tree, a fiber's stack), and were freed by
 * exit. A block truly lost stays lost. */
static void keep_confirmed(Parser *parser)
{
    if (!parser->exit_report && !parser->exit_marker)
        return;
    g_autoptr(GHashTable) at_exit = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gboolean mid_run = FALSE;
    for (guint i = 0; i < parser->records->len; i++) {
        const GlRecord *record = g_ptr_array_index(parser->records, i);
        if (record->leak_kind != GL_LEAK_NONE && record->at_exit)
            g_hash_table_add(at_exit, gl_record_loss_key(record));
        mid_run |= record->leak_kind != GL_LEAK_NONE && !record->at_exit;
    }
    if (!mid_run)
        return;
    gboolean *drop = g_new0(gboolean, parser->records->len);
    for (guint i = 0; i < parser->records->len; i++) {
        const GlRecord *record = g_ptr_array_index(parser->records, i);
        if (record->leak_kind == GL_LEAK_NONE || record->at_exit)
            continue;
        g_autofree char *key = gl_record_loss_key(record);
        drop[i] = !g_hash_table_contains(at_exit, key);
        parser->facts->n_not_lost += drop[i] ? 1 : 0;
    }
    remove_records(parser, drop, 0);
    g_free(drop);
}

static void parse_line(Parser *parser, const char *line, gboolean last_line)
{
    /* A frame of gemleak's format, on its lines whatever they hold (the
     * last line of a file cut short is half of one: dropped). */
    if (parser->pending.stage > 0) {
        if (!last_line) {
            read_pending_frame(parser, line);
            return;
        }
        pending_clear(&parser->pending);
    }
    if (g_str_has_prefix(line, GL_PROTO_MARKER_PREFIX) && !last_line) {
        read_marker(parser, line);
        return;
    }
    const char *rest = NULL;
    gint64 pid = line_pid(line, &rest);
    if (pid != 0 && last_line && !parser->in_report &&
        (g_str_has_prefix(rest, "ERROR") || g_str_has_prefix("ERROR: ", rest))) {
        /* A header the process did not finish writing. */
        parser->seen_runtime = TRUE;
        parser->facts->complete = FALSE;
        if (parser->facts->pid == 0)
            parser->facts->pid = pid;
        return;
    }
    if (pid != 0) {
        if (g_str_has_prefix(rest, "ERROR: LeakSanitizer:") ||
            g_str_has_prefix(rest, "ERROR: AddressSanitizer:")) {
            if (parser->in_report)
                finish_report(parser, FALSE);
            settle_report(parser);
            parser->report_start = (gint) parser->records->len;
            gboolean asan = g_str_has_prefix(rest, "ERROR: AddressSanitizer:");
            parser->in_report = TRUE;
            parser->seen_runtime = TRUE;
            parser->asan_report = asan;
            parser->report_pid = pid;
            parser->facts->n_reports++;
            if (parser->facts->pid == 0)
                parser->facts->pid = pid;
            if (asan)
                parser->facts->tool = GL_SANITIZER_ASAN;
            else if (parser->facts->tool == GL_SANITIZER_UNKNOWN)
                parser->facts->tool = GL_SANITIZER_LSAN;
            if (asan)
                start_asan_error(parser, rest + strlen("ERROR: AddressSanitizer:"));
            return;
        }
        /* AddressSanitizer's last line when it stops the process after an
         * error (an extension built without -fsanitize-recover=address):
         * what the process would have done next did not run. */
        if (strcmp(rest, "ABORTING") == 0 && parser->facts->tool == GL_SANITIZER_ASAN) {
            parser->facts->halted = TRUE;
            return;
        }
        /* The runtime's other lines ("==PID==WARNING: LeakSanitizer: ...")
         * say it ran in this process, even with nothing to report. */
        gboolean lsan = strstr(rest, "LeakSanitizer") != NULL;
        if (!lsan && strstr(rest, "AddressSanitizer") == NULL)
            return;
        parser->seen_runtime = TRUE;
        if (parser->facts->pid == 0)
            parser->facts->pid = pid;
        if (parser->facts->tool == GL_SANITIZER_UNKNOWN)
            parser->facts->tool = lsan ? GL_SANITIZER_LSAN : GL_SANITIZER_ASAN;
        /* "==PID==LeakSanitizer has encountered a fatal error" (no ptrace,
         * no /proc): the leak check did not run. */
        if (strstr(rest, "LeakSanitizer has encountered a fatal error") != NULL) {
            parser->facts->incomplete = TRUE;
            parser->facts->incomplete_reason = "LeakSanitizer has encountered a fatal error: its "
                                               "leak check did not run";
            parser->facts->incomplete_hint = "it does not work under ptrace: strace, gdb, some "
                                             "sandboxes";
        }
        return;
    }
    if (!parser->in_report)
        return;
    if (g_str_has_prefix(line, "SUMMARY: ")) {
        finish_report(parser, TRUE);
        return;
    }
    /* max_leaks (the user's LSAN_OPTIONS) cut the report: "Omitting 3
     * more leak(s)." What it left out may be the extension's. */
    gboolean omitted = g_str_has_prefix(line, "Omitting ") && g_str_has_suffix(line, " more leak(s).");
    if (g_str_has_prefix(line, "Too many leaks!") || omitted) {
        parser->omitted |= omitted;
        /* The exit report's records decide; a mid-run check's only say
         * when a leak was lost (settle_report). */
        parser->too_many = TRUE;
        return;
    }
    if (*line == '\0') {
        /* A blank line ends a LeakSanitizer record; an AddressSanitizer
         * error goes on over blank lines until its SUMMARY. */
        if (!parser->asan_report || parser->record == NULL ||
            parser->record->leak_kind != GL_LEAK_NONE)
            finish_record(parser, TRUE);
        else
            close_stack(parser);
        return;
    }
    if (parse_leak_heading(parser, line))
        return;
    if (parser->record == NULL) {
        parse_objects(parser, line);
        return;
    }
    /* The last line of a file cut short may be half a frame. */
    if (last_line)
        return;
    if (start_pending_frame(parser, line) || parse_frame(parser, line))
        return;
    if (parser->record->leak_kind != GL_LEAK_NONE)
        return;
    if (parse_access(parser, line))
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
        add_aux(parser, text);
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

gboolean gl_sanitizer_read_data(const char *data, gsize length, const char *name,
                                GPtrArray **records, GlSanitizerFacts *facts, GError **error)
{
    const char *label = name != NULL ? name : "input";
    memset(facts, 0, sizeof *facts);
    *records = NULL;
    gboolean blank = TRUE;
    for (gsize i = 0; i < length && blank; i++)
        blank = g_ascii_isspace(data[i]);
    if (blank) {
        g_set_error(error, GL_ERROR, GL_ERROR_EMPTY, "%s: empty (no sanitizer report)", label);
        return FALSE;
    }
    Parser parser = {
        .records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free),
        .facts = facts,
        .objects = g_ptr_array_new_with_free_func(free_objects),
        .frames = g_array_new(FALSE, TRUE, sizeof(GlFrame)),
        .stack_aux = -1,
        .report_start = -1,
        .objects_of = -1,
        .totals = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_totals),
        .owner_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
        .owners = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    };
    facts->complete = TRUE;
    const char *end = data + length;
    for (const char *line = data; line < end;) {
        const char *newline = memchr(line, '\n', (gsize) (end - line));
        gsize n = newline != NULL ? (gsize) (newline - line) : (gsize) (end - line);
        /* NULs and a trailing CR are no part of a line the runtimes write. */
        g_autofree char *text = g_strndup(line, n);
        gsize text_length = strlen(text);
        if (text_length > 0 && text[text_length - 1] == '\r')
            text[text_length - 1] = '\0';
        parse_line(&parser, text, newline == NULL);
        if (newline == NULL)
            break;
        line = newline + 1;
    }
    pending_clear(&parser.pending);
    if (parser.in_report)
        finish_report(&parser, FALSE);
    settle_report(&parser);
    keep_confirmed(&parser);
    g_array_unref(parser.frames);
    g_ptr_array_unref(parser.objects);
    g_hash_table_unref(parser.totals);
    g_hash_table_unref(parser.owner_of);
    g_hash_table_unref(parser.owners);
    g_free(parser.marker);
    if (!parser.seen_runtime) {
        g_ptr_array_unref(parser.records);
        g_set_error(error, GL_ERROR, GL_ERROR_MALFORMED,
                    "%s: not a LeakSanitizer or AddressSanitizer report", label);
        return FALSE;
    }
    if (facts->pid == 0)
        facts->pid = name_pid(name);
    for (guint i = 0; i < parser.records->len; i++) {
        GlRecord *record = g_ptr_array_index(parser.records, i);
        if (record->pid == 0)
            record->pid = facts->pid;
    }
    facts->n_records = 0;
    for (guint i = 0; i < parser.records->len; i++)
        facts->n_records += ((GlRecord *) g_ptr_array_index(parser.records, i))->attribution_only ? 0 : 1;
    *records = parser.records;
    return TRUE;
}

gboolean gl_sanitizer_read_file(const char *path, GPtrArray **records, GlSanitizerFacts *facts,
                                GError **error)
{
    memset(facts, 0, sizeof *facts);
    *records = NULL;
    g_autoptr(GMappedFile) file = NULL;
    GError *local = NULL;
    file = g_mapped_file_new(path, FALSE, &local);
    if (file == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: %s", path, local->message);
        g_error_free(local);
        return FALSE;
    }
    gsize length = g_mapped_file_get_length(file);
    if ((guint64) length > MAX_REPORT_SIZE) {
        g_set_error(error, GL_ERROR, GL_ERROR_LIMIT,
                    "%s: larger than 1 GiB, not a sanitizer report gemleak reads", path);
        return FALSE;
    }
    const char *contents = g_mapped_file_get_contents(file);
    g_autofree char *base = g_path_get_basename(path);
    /* Messages name the path; the pid comes from the file's own name. */
    if (!gl_sanitizer_read_data(contents != NULL ? contents : "", length, base, records, facts,
                                &local)) {
        const char *message = local->message;
        if (g_str_has_prefix(message, base) && message[strlen(base)] == ':')
            message += strlen(base) + 1;
        g_set_error(error, GL_ERROR, local->code, "%s:%s", path, message);
        g_error_free(local);
        return FALSE;
    }
    return TRUE;
}
