/* The lines of LeakSanitizer's and AddressSanitizer's reports, one at a
 * time: a runtime's own ("==PID==..."), AddressSanitizer's error, and the
 * frames, in the runtimes' default format ("    #0 0x... in fn file:line:col",
 * "(module+0xoffset)"), the one gemleak asks for
 * (GL_SANITIZER_FRAME_FORMAT, a frame on four lines) and the one it asked
 * for before (F|%n|%p|%m|%o|%f|%q|%s|%l|%c), which kept run directories
 * hold. */
#include "sanitizer_int.h"
#include "gemleak/base/protocol.h"
#include "gemleak/read/sanitizer_reader.h"

#include <string.h>

/* A field that grows longer than any path or name: not a frame. */
#define MAX_FIELD_BYTES ((gsize) 64 * 1024)

/* ---- a runtime's lines ------------------------------------------------------- */

gint64 gl_sanitizer_line_pid(const char *line, const char **rest)
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
    gsize window = MIN(length, GL_SANITIZER_DETECT_BYTES);
    const char *end = data + window;
    for (const char *line = data; line < end;) {
        const char *newline = memchr(line, '\n', (gsize) (end - line));
        gsize n = newline != NULL ? (gsize) (newline - line) : (gsize) (end - line);
        g_autofree char *text = g_strndup(line, n);
        /* A marker of the helper's: --per-test's first opens the file, and
         * a report may come after many more; a clean process's proof
         * (gemleak:done) may follow the runtime's lines alone. */
        if (g_str_has_prefix(text, GL_PROTO_MARKER_PREFIX))
            return TRUE;
        /* A report's header, or any other line of a runtime's: a fatal
         * error of its own ("==PID==LeakSanitizer has encountered a fatal
         * error.", under ptrace) is the only thing it wrote then, and a
         * file that says the check did not run must be read, not skipped;
         * the check's tracer going through the threads (log_threads=1,
         * gemleak's) writes before anything else, with its own pid. */
        const char *rest = NULL;
        if (gl_sanitizer_line_pid(text, &rest) != 0 &&
            (strstr(rest, "LeakSanitizer") != NULL || strstr(rest, "AddressSanitizer") != NULL ||
             g_str_has_prefix(rest, "Processing thread ")))
            return TRUE;
        if (newline == NULL)
            break;
        line = newline + 1;
    }
    return FALSE;
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

void gl_sanitizer_asan_error(GlRecord *record, const char *bug)
{
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
        record->tid = (gint) MIN(gl_sanitizer_parse_number(thread + strlen(" in thread T")),
                                 G_MAXINT - 1) + 1;
    record->kind = gl_record_intern(record, asan_kind(copy, NULL));
    record->leak_kind = GL_LEAK_NONE;
    record->what = gl_record_intern(record, copy);
}

gboolean gl_sanitizer_parse_access(GlRecord *record, const char *line)
{
    gboolean read = g_str_has_prefix(line, "READ of size ");
    if (!read && !g_str_has_prefix(line, "WRITE of size "))
        return FALSE;
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
        record->tid = (gint) MIN(gl_sanitizer_parse_number(thread + strlen(" thread T")),
                                 G_MAXINT - 1) + 1;
    return TRUE;
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

guint gl_sanitizer_parse_number(const char *s)
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
    frame->line = gl_sanitizer_parse_number(fields[n - 2]);
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

void gl_sanitizer_pending_clear(GlPendingFrame *pending)
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

gboolean gl_sanitizer_pending_start(GlPendingFrame *pending, const char *line)
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
    gl_sanitizer_pending_clear(pending);
    pending->number = g_strndup(number, (gsize) (space - number));
    pending->fields[0] = g_string_new(space + 1);
    pending->stage = 1;
    return TRUE;
}

GlPendingStep gl_sanitizer_pending_read(GlPendingFrame *pending, GlRecord *record, GArray *frames,
                                        const char *line)
{
    static const char *const tags[] = { "Gf", "Gs" };
    GlFrame frame = { 0 };
    if (pending->stage < 3) {
        const char *field = after_tag(line, tags[pending->stage - 1], pending->number);
        if (field != NULL) {
            pending->fields[pending->stage] = g_string_new(field);
            pending->stage++;
            return GL_PENDING_GOES_ON;
        }
    } else if (closing_line(line, pending->number, &frame)) {
        frame.obj = known(record, pending->fields[0]->str);
        frame.fn = known(record, pending->fields[1]->str);
        set_source(record, &frame, pending->fields[2]->str);
        g_array_append_val(frames, frame);
        gl_sanitizer_pending_clear(pending);
        return GL_PENDING_CLOSED;
    }
    GString *field = pending->fields[pending->stage - 1];
    g_string_append_printf(field, "\n%s", line);
    if (field->len <= MAX_FIELD_BYTES)
        return GL_PENDING_GOES_ON;
    /* no path is that long: the frame is lost */
    gl_sanitizer_pending_clear(pending);
    return GL_PENDING_LOST;
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
            guint number = gl_sanitizer_parse_number(colon + 1);
            char *second = strrchr(location, ':');
            if (second != NULL && g_ascii_isdigit(second[1])) {
                /* FILE:LINE:COL */
                number = gl_sanitizer_parse_number(second + 1);
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

gboolean gl_sanitizer_parse_frame(GlRecord *record, const char *line, GlFrame *frame)
{
    if (g_str_has_prefix(line, "F|"))
        return parse_format_frame(record, line, frame);
    return parse_default_frame(record, line, frame);
}
