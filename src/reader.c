/* Streaming reader of Valgrind memcheck XML (protocols 4 to 6).
 *
 * libxml2's xmlTextReader walks the document one node at a time and frees
 * what lies behind it, so memory stays flat whatever the file size. The
 * reader pulls one <error> at a time into a GlRecord; a document that breaks
 * off (Valgrind killed by a CI timeout) has already yielded every complete
 * error before the break. Elements it does not know are skipped: Valgrind
 * adds some in every release. */
#define _GNU_SOURCE  /* memmem */
#include "gemleak/reader.h"
#include "gemleak/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <libxml/parser.h>
#include <libxml/xmlreader.h>

/* Valgrind's --num-callers stops at 500 and an error has at most a handful
 * of auxiliary parts; these bounds only stop hostile input from growing one
 * record without end. Whatever lies beyond them is read and dropped. */
#define MAX_FRAMES 4096
#define MAX_AUX 256
#define MAX_TEXT ((gsize) 1024 * 1024)

/* Our own read callbacks, so that we know how much was read and whether the
 * input ended (a parse error after the end of input is a truncated file),
 * and so that we keep the bytes a parse failure could otherwise lose.
 *
 * xmlTextReader parses a chunk ahead of what it hands out; when that chunk
 * holds the break, the complete errors parsed just before it are never
 * delivered. The source therefore keeps a window of the bytes read since the
 * end of the last record handed out, and notes where each </error> and
 * </fatal_signal> ends; on failure the reader parses the complete elements
 * left in the window on their own (see recover_lost_records). */
typedef struct {
    int fd;
    const char *mem;
    gsize mem_size;
    gsize mem_pos;
    GByteArray *replay;    /* bytes to serve again before reading on (a next document) */
    gsize replay_pos;
    guint64 bytes;         /* read from the fd or memory, replays not counted */
    gboolean eof;
    int read_errno;
    GByteArray *window;    /* recent bytes; window->data[0] is at offset window_start */
    guint64 window_start;
    guint64 window_end;    /* offset just past the last byte served */
    GQueue ends;           /* offsets just past each </error> or </fatal_signal> not yet matched */
} Source;

/* A Valgrind error is a few kilobytes; a window that grows past this without
 * a record being handed out is hostile or not Valgrind's, and its front is
 * dropped (recovery then needs what is left). */
#define WINDOW_MAX (2 * 1024 * 1024)

static const char END_ERROR[] = "</error>";
static const char END_FATAL[] = "</fatal_signal>";

static gint compare_offsets(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void) unused;
    gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y;
}

static void note_ends(Source *source, gsize scan_from, const char *tag, gsize tag_len)
{
    const guint8 *data = source->window->data;
    gsize len = source->window->len;
    if (len == 0)
        return;
    const guint8 *at = data + scan_from;
    while ((at = memmem(at, len - (gsize) (at - data), tag, tag_len)) != NULL) {
        guint64 end = source->window_start + (guint64) (at - data) + tag_len;
        g_queue_insert_sorted(&source->ends, GSIZE_TO_POINTER((gsize) end), compare_offsets, NULL);
        at += tag_len;
    }
}

/* Keeps the bytes just served, and notes the end tags that finish in them
 * (one may straddle two reads, hence the look back). */
static void window_add(Source *source, const char *buffer, gsize n)
{
    gsize old_len = source->window->len;
    g_byte_array_append(source->window, (const guint8 *) buffer, (guint) n);
    source->window_end += n;
    /* Only </error> is looked for as the bytes come: a </fatal_signal>, at
     * most one a document, is looked for when one is handed out or lost. */
    gsize back = sizeof END_ERROR - 2;
    gsize scan_from = old_len > back ? old_len - back : 0;
    note_ends(source, scan_from, END_ERROR, sizeof END_ERROR - 1);
    if (source->window->len > WINDOW_MAX) {
        gsize drop = source->window->len - WINDOW_MAX / 2;
        g_byte_array_remove_range(source->window, 0, (guint) drop);
        source->window_start += drop;
    }
}

/* Forgets the bytes before @offset: the record that ends there was handed out. */
static void window_forget_before(Source *source, guint64 offset)
{
    if (offset <= source->window_start)
        return;
    gsize drop = (gsize) MIN(offset - source->window_start, (guint64) source->window->len);
    g_byte_array_remove_range(source->window, 0, (guint) drop);
    source->window_start += drop;
}

static int source_read(void *context, char *buffer, int len)
{
    Source *source = context;
    gsize n = 0;
    if (len <= 0)
        return 0;
    if (source->replay != NULL && source->replay_pos < source->replay->len) {
        n = MIN((gsize) len, source->replay->len - source->replay_pos);
        memcpy(buffer, source->replay->data + source->replay_pos, n);
        source->replay_pos += n;
    } else if (source->mem != NULL) {
        n = MIN((gsize) len, source->mem_size - source->mem_pos);
        memcpy(buffer, source->mem + source->mem_pos, n);
        source->mem_pos += n;
        source->bytes += n;
        source->eof = n == 0;
    } else {
        ssize_t got;
        do
            got = read(source->fd, buffer, (size_t) len);
        while (got < 0 && errno == EINTR);
        if (got < 0) {
            source->read_errno = errno;
            return -1;
        }
        n = (gsize) got;
        source->bytes += n;
        source->eof = n == 0;
    }
    window_add(source, buffer, n);
    return (int) n;
}

/* Element names, interned in the reader's dictionary so that the parse
 * compares pointers, not strings. */
typedef struct {
    const xmlChar *valgrindoutput, *protocolversion, *protocoltool, *pid, *ppid,
        *tool, *args, *vargv, *argv, *exe, *arg, *status, *state, *error,
        *fatal_signal, *unique, *tid, *threadname, *kind, *what, *xwhat, *text,
        *leakedbytes, *leakedblocks, *stack, *frame, *ip, *obj, *fn, *dir, *file,
        *line, *auxwhat, *xauxwhat, *origin, *suppression, *sname, *skind, *skaux,
        *sframe, *fun, *rawtext, *fd, *path, *signo, *signame;
} Names;

struct GlReader {
    xmlTextReaderPtr xml;
    char *name;
    int owned_fd;          /* an fd the reader opened itself, or -1 */
    Source source;
    Names n;
    GlDocument doc;
    GStringChunk *doc_strings;
    GString *text;         /* scratch: the text of the element being read */
    GArray *frames;        /* scratch: the frames of the stack being read */
    gboolean root_seen;
    gboolean finished;     /* no more records will be parsed: at the end or failed */
    gboolean fragment;     /* parses one element cut from another reader's window */
    GQueue pending;        /* records recovered after a failure, not yet handed out */
    GError *failure;       /* kept so that later calls fail the same way */
    GError *check;         /* a check of ours that failed inside a walk */
    /* the first error libxml2 reported */
    int xml_code;
    int xml_line;
    char *xml_message;
};

static int source_close(void *context)
{
    (void) context;  /* the GlReader closes what it opened */
    return 0;
}

/* External entities and DTDs are never wanted in Valgrind output: refusing
 * them all keeps a hostile file from reading local files or the network. */
static xmlParserInputPtr refuse_external_entity(const char *url, const char *id,
                                                xmlParserCtxtPtr context)
{
    (void) url;
    (void) id;
    (void) context;
    return NULL;
}

/* libxml2 prints to stderr unless told otherwise; the reader reports through
 * GError instead. */
static void ignore_generic_error(void *context, const char *message, ...)
{
    (void) context;
    (void) message;
}

static gpointer global_init_once(gpointer data)
{
    (void) data;
    xmlInitParser();
    xmlSetExternalEntityLoader(refuse_external_entity);
    return NULL;
}

void gl_reader_global_init(void)
{
    static GOnce once = G_ONCE_INIT;
    g_once(&once, global_init_once, NULL);
}

static void on_xml_error(void *context, xmlErrorPtr error)
{
    GlReader *reader = context;
    if (error == NULL || error->level < XML_ERR_ERROR || reader->xml_message != NULL)
        return;
    reader->xml_code = error->code;
    reader->xml_line = error->line;
    reader->xml_message = g_strchomp(g_strdup(error->message ? error->message : "unknown error"));
}

static void intern_names(GlReader *reader)
{
    Names *n = &reader->n;
#define NAME(field) n->field = xmlTextReaderConstString(reader->xml, BAD_CAST #field)
    NAME(valgrindoutput); NAME(protocolversion); NAME(protocoltool); NAME(pid);
    NAME(ppid); NAME(tool); NAME(args); NAME(vargv); NAME(argv); NAME(exe);
    NAME(arg); NAME(status); NAME(state); NAME(error); NAME(fatal_signal);
    NAME(unique); NAME(tid); NAME(threadname); NAME(kind); NAME(what);
    NAME(xwhat); NAME(text); NAME(leakedbytes); NAME(leakedblocks); NAME(stack);
    NAME(frame); NAME(ip); NAME(obj); NAME(fn); NAME(dir); NAME(file);
    NAME(line); NAME(auxwhat); NAME(xauxwhat); NAME(origin); NAME(suppression);
    NAME(sname); NAME(skind); NAME(skaux); NAME(sframe); NAME(fun);
    NAME(rawtext); NAME(fd); NAME(path); NAME(signo); NAME(signame);
#undef NAME
}

/* COMPACT keeps short text inside its node (fewer allocations); NONET and
 * the absence of NOENT, DTDLOAD and HUGE keep libxml2's limits on entity
 * expansion, depth and text size in force. */
#define READER_OPTIONS (XML_PARSE_NONET | XML_PARSE_COMPACT | XML_PARSE_NOBLANKS)

/* Starts (or, for a next document in the same file, restarts) libxml2's
 * reader on the source. */
static gboolean start_xml(GlReader *reader)
{
    if (reader->xml != NULL)
        xmlFreeTextReader(reader->xml);
    reader->xml = xmlReaderForIO(source_read, source_close, &reader->source, reader->name,
                                 NULL, READER_OPTIONS);
    if (reader->xml == NULL)
        return FALSE;
    xmlTextReaderSetStructuredErrorHandler(reader->xml, on_xml_error, reader);
    intern_names(reader);
    return TRUE;
}

static GlReader *reader_new(const char *name, int owned_fd, int fd, const char *mem, gsize size)
{
    gl_reader_global_init();
    xmlSetGenericErrorFunc(NULL, ignore_generic_error);

    GlReader *reader = g_new0(GlReader, 1);
    reader->name = g_strdup(name);
    reader->owned_fd = owned_fd;
    reader->source.fd = fd;
    reader->source.mem = mem;
    reader->source.mem_size = size;
    reader->source.window = g_byte_array_new();
    g_queue_init(&reader->source.ends);
    g_queue_init(&reader->pending);
    reader->doc_strings = g_string_chunk_new(512);
    reader->doc.argv = g_ptr_array_new();
    reader->doc.vargv = g_ptr_array_new();
    reader->text = g_string_sized_new(256);
    reader->frames = g_array_sized_new(FALSE, TRUE, sizeof(GlFrame), 64);
    if (!start_xml(reader)) {
        /* Only fails when libxml2 cannot allocate. */
        g_set_error(&reader->failure, GL_ERROR, GL_ERROR_IO,
                    "%s: cannot start the XML parser", name);
        reader->finished = TRUE;
    }
    return reader;
}

GlReader *gl_reader_new_for_path(const char *path, GError **error)
{
    if (g_strcmp0(path, "-") == 0)
        return reader_new("<stdin>", -1, STDIN_FILENO, NULL, 0);
    int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        int saved = errno;
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot open: %s", path,
                    g_strerror(saved));
        return NULL;
    }
    return reader_new(path, fd, fd, NULL, 0);
}

GlReader *gl_reader_new_for_fd(int fd, const char *name)
{
    return reader_new(name, -1, fd, NULL, 0);
}

GlReader *gl_reader_new_for_memory(const char *data, gsize size, const char *name)
{
    /* An empty buffer must still read as empty, not as "no source". */
    static const char nothing[1] = "";
    return reader_new(name, -1, -1, data != NULL ? data : nothing, size);
}

void gl_reader_free(GlReader *reader)
{
    if (reader == NULL)
        return;
    if (reader->xml != NULL)
        xmlFreeTextReader(reader->xml);
    if (reader->owned_fd >= 0)
        close(reader->owned_fd);
    g_queue_clear_full(&reader->pending, (GDestroyNotify) gl_record_free);
    g_queue_clear(&reader->source.ends);
    g_byte_array_unref(reader->source.window);
    if (reader->source.replay != NULL)
        g_byte_array_unref(reader->source.replay);
    g_ptr_array_unref(reader->doc.argv);
    g_ptr_array_unref(reader->doc.vargv);
    g_string_chunk_free(reader->doc_strings);
    g_string_free(reader->text, TRUE);
    g_array_unref(reader->frames);
    g_clear_error(&reader->failure);
    g_clear_error(&reader->check);
    g_free(reader->xml_message);
    g_free(reader->name);
    g_free(reader);
}

const GlDocument *gl_reader_document(const GlReader *reader)
{
    return &reader->doc;
}

const char *gl_reader_name(const GlReader *reader)
{
    return reader->name;
}

/* ---- walking the tree ---------------------------------------------------- */

/* Moves to the next child element of the element at @depth, which the
 * caller has entered and whose earlier children it consumed in full.
 * Returns: 1 at a child (its local name in *name), 0 at the parent's end,
 * -1 when the parse failed. */
static int next_child(GlReader *reader, int depth, const xmlChar **name)
{
    for (;;) {
        int ret = xmlTextReaderRead(reader->xml);
        if (ret != 1)
            return -1;  /* the end of input inside an element is an error too */
        int type = xmlTextReaderNodeType(reader->xml);
        if (type == XML_READER_TYPE_ELEMENT) {
            *name = xmlTextReaderConstLocalName(reader->xml);
            return 1;
        }
        if (type == XML_READER_TYPE_END_ELEMENT && xmlTextReaderDepth(reader->xml) == depth)
            return 0;
    }
}

/* Consumes the element the reader is on, with everything inside it. */
static gboolean skip_element(GlReader *reader)
{
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    for (;;) {
        if (xmlTextReaderRead(reader->xml) != 1)
            return FALSE;
        if (xmlTextReaderNodeType(reader->xml) == XML_READER_TYPE_END_ELEMENT &&
            xmlTextReaderDepth(reader->xml) == depth)
            return TRUE;
    }
}

/* Reads the text directly inside the current element into reader->text
 * (text and CDATA, up to MAX_TEXT bytes) and consumes the element. */
static gboolean read_text(GlReader *reader)
{
    g_string_truncate(reader->text, 0);
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    for (;;) {
        if (xmlTextReaderRead(reader->xml) != 1)
            return FALSE;
        switch (xmlTextReaderNodeType(reader->xml)) {
        case XML_READER_TYPE_TEXT:
        case XML_READER_TYPE_CDATA:
        case XML_READER_TYPE_WHITESPACE:
        case XML_READER_TYPE_SIGNIFICANT_WHITESPACE: {
            const char *value = (const char *) xmlTextReaderConstValue(reader->xml);
            if (value != NULL && reader->text->len < MAX_TEXT)
                g_string_append_len(reader->text, value,
                                    (gssize) MIN(strlen(value), MAX_TEXT - reader->text->len));
            break;
        }
        case XML_READER_TYPE_ELEMENT:
            if (!skip_element(reader))
                return FALSE;
            break;
        case XML_READER_TYPE_END_ELEMENT:
            if (xmlTextReaderDepth(reader->xml) == depth)
                return TRUE;
            break;
        default:
            break;
        }
    }
}

/* Reads the current element's text; the value lives in the record's strings. */
static gboolean read_record_text(GlReader *reader, GlRecord *record, const char **out)
{
    if (!read_text(reader))
        return FALSE;
    *out = gl_record_intern(record, reader->text->str);
    return TRUE;
}

static gboolean read_doc_text(GlReader *reader, const char **out)
{
    if (!read_text(reader))
        return FALSE;
    *out = g_string_chunk_insert(reader->doc_strings, reader->text->str);
    return TRUE;
}

/* Numbers: Valgrind writes ids and addresses as 0x..., counts in decimal.
 * A number that does not parse reads as 0, as a missing one would. A loop
 * is faster than strtoull's locale-aware generality, and an address comes
 * with every frame. */
static guint64 parse_number(const char *text)
{
    while (g_ascii_isspace(*text))
        text++;
    guint64 value = 0;
    if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        for (text += 2; g_ascii_isxdigit(*text); text++)
            value = (value << 4) | (guint64) g_ascii_xdigit_value(*text);
    } else {
        for (; g_ascii_isdigit(*text); text++)
            value = value * 10 + (guint64) (*text - '0');
    }
    return value;
}

static gboolean read_u64(GlReader *reader, guint64 *out)
{
    if (!read_text(reader))
        return FALSE;
    *out = parse_number(reader->text->str);
    return TRUE;
}

static gboolean read_i64(GlReader *reader, gint64 *out)
{
    if (!read_text(reader))
        return FALSE;
    const char *text = reader->text->str;
    while (g_ascii_isspace(*text))
        text++;
    gboolean negative = *text == '-';
    gint64 magnitude = (gint64) MIN(parse_number(negative ? text + 1 : text), (guint64) G_MAXINT64);
    *out = negative ? -magnitude : magnitude;
    return TRUE;
}

static gboolean read_int(GlReader *reader, gint *out)
{
    gint64 value = 0;
    if (!read_i64(reader, &value))
        return FALSE;
    *out = (gint) CLAMP(value, G_MININT, G_MAXINT);
    return TRUE;
}

/* ---- errors -------------------------------------------------------------- */

/* Reads the current element's text; when it equals @previous (the same
 * field of the frame before), shares that string: a stack's frames mostly
 * repeat one object path and directory. */
static gboolean read_shared_text(GlReader *reader, GlRecord *record, const char *previous,
                                 const char **out)
{
    if (!read_text(reader))
        return FALSE;
    *out = previous != NULL && strcmp(previous, reader->text->str) == 0
               ? previous : gl_record_intern(record, reader->text->str);
    return TRUE;
}

static gboolean read_frame(GlReader *reader, GlRecord *record, GlFrame *frame,
                           const GlFrame *previous)
{
    const Names *n = &reader->n;
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = next_child(reader, depth, &name)) == 1) {
        gboolean ok;
        if (name == n->ip) {
            ok = read_u64(reader, &frame->ip);
        } else if (name == n->obj) {
            ok = read_shared_text(reader, record, previous != NULL ? previous->obj : NULL,
                                  &frame->obj);
        } else if (name == n->fn) {
            ok = read_record_text(reader, record, &frame->fn);
        } else if (name == n->dir) {
            ok = read_shared_text(reader, record, previous != NULL ? previous->dir : NULL,
                                  &frame->dir);
        } else if (name == n->file) {
            ok = read_record_text(reader, record, &frame->file);
        } else if (name == n->line) {
            gint64 line = 0;
            ok = read_i64(reader, &line);
            frame->line = (guint) CLAMP(line, 0, G_MAXUINT);
        } else {
            ok = skip_element(reader);
        }
        if (!ok)
            return FALSE;
    }
    return rc == 0;
}

static gboolean read_stack(GlReader *reader, GlRecord *record, GlStack *stack)
{
    g_array_set_size(reader->frames, 0);
    if (!xmlTextReaderIsEmptyElement(reader->xml)) {
        int depth = xmlTextReaderDepth(reader->xml);
        const xmlChar *name;
        int rc;
        while ((rc = next_child(reader, depth, &name)) == 1) {
            gboolean ok;
            if (name == reader->n.frame && reader->frames->len < MAX_FRAMES) {
                GlFrame frame = { 0 };
                const GlFrame *previous = reader->frames->len > 0
                    ? &g_array_index(reader->frames, GlFrame, reader->frames->len - 1) : NULL;
                ok = read_frame(reader, record, &frame, previous);
                g_array_append_val(reader->frames, frame);
            } else {
                ok = skip_element(reader);
            }
            if (!ok)
                return FALSE;
        }
        if (rc < 0)
            return FALSE;
    }
    stack->n_frames = reader->frames->len;
    stack->frames = stack->n_frames > 0
        ? g_memdup2(reader->frames->data, stack->n_frames * sizeof(GlFrame))
        : NULL;
    return TRUE;
}

static GlAux *add_aux(GlRecord *record, const char *text)
{
    if (record->aux->len >= MAX_AUX)
        return NULL;
    GlAux aux = { .text = text };
    g_array_append_val(record->aux, aux);
    return &g_array_index(record->aux, GlAux, record->aux->len - 1);
}

/* A stack after the primary one belongs to the auxwhat just before it
 * ("Block was alloc'd at"); a stack with no text before it stands alone. */
static gboolean read_extra_stack(GlReader *reader, GlRecord *record)
{
    GlStack stack = { 0 };
    if (!read_stack(reader, record, &stack))
        return FALSE;
    GlAux *last = record->aux->len > 0
        ? &g_array_index(record->aux, GlAux, record->aux->len - 1) : NULL;
    if (last == NULL || last->stack.n_frames > 0)
        last = add_aux(record, NULL);
    if (last == NULL) {
        g_free(stack.frames);
        return TRUE;
    }
    last->stack = stack;
    return TRUE;
}

/* <xwhat>, <xauxwhat> and <origin> hold a text (<text> or <what>), leak
 * sizes (xwhat) or a stack (origin) among tool-specific extras. */
static gboolean read_extended(GlReader *reader, GlRecord *record, const char **text,
                              GlStack *stack)
{
    const Names *n = &reader->n;
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = next_child(reader, depth, &name)) == 1) {
        gboolean ok;
        if (name == n->text || name == n->what) {
            ok = read_record_text(reader, record, text);
        } else if (name == n->leakedbytes) {
            record->has_leak_size = TRUE;
            ok = read_u64(reader, &record->leaked_bytes);
        } else if (name == n->leakedblocks) {
            record->has_leak_size = TRUE;
            ok = read_u64(reader, &record->leaked_blocks);
        } else if (name == n->stack && stack != NULL && stack->n_frames == 0) {
            ok = read_stack(reader, record, stack);
        } else {
            ok = skip_element(reader);
        }
        if (!ok)
            return FALSE;
    }
    return rc == 0;
}

static gboolean read_suppression(GlReader *reader, GlRecord *record)
{
    const Names *n = &reader->n;
    GlSuppression *supp = g_new0(GlSuppression, 1);
    g_autoptr(GPtrArray) frames = g_ptr_array_new();
    record->suppression = supp;
    if (!xmlTextReaderIsEmptyElement(reader->xml)) {
        int depth = xmlTextReaderDepth(reader->xml);
        const xmlChar *name;
        int rc;
        while ((rc = next_child(reader, depth, &name)) == 1) {
            gboolean ok = TRUE;
            if (name == n->sname) {
                ok = read_record_text(reader, record, &supp->name);
            } else if (name == n->skind) {
                ok = read_record_text(reader, record, &supp->kind);
            } else if (name == n->skaux) {
                ok = read_record_text(reader, record, &supp->aux);
            } else if (name == n->rawtext) {
                ok = read_record_text(reader, record, &supp->rawtext);
            } else if (name == n->sframe && !xmlTextReaderIsEmptyElement(reader->xml)) {
                int sdepth = xmlTextReaderDepth(reader->xml);
                const xmlChar *sname;
                int src;
                while (ok && (src = next_child(reader, sdepth, &sname)) == 1) {
                    if ((sname == n->fun || sname == n->obj) && frames->len < MAX_FRAMES) {
                        ok = read_text(reader);
                        g_autofree char *line = g_strconcat(sname == n->fun ? "fun:" : "obj:",
                                                            reader->text->str, NULL);
                        g_ptr_array_add(frames, (gpointer) gl_record_intern(record, line));
                    } else {
                        ok = skip_element(reader);
                    }
                }
                ok = ok && src == 0;
            } else {
                ok = skip_element(reader);
            }
            if (!ok)
                return FALSE;
        }
        if (rc < 0)
            return FALSE;
    }
    g_ptr_array_add(frames, NULL);
    supp->frames = (const char **) g_ptr_array_steal(frames, NULL);
    return TRUE;
}

static GlRecord *read_error(GlReader *reader)
{
    const Names *n = &reader->n;
    g_autoptr(GlRecord) record = gl_record_new();
    record->pid = reader->doc.pid;
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return g_steal_pointer(&record);
    int depth = xmlTextReaderDepth(reader->xml);
    gboolean have_stack = FALSE;
    const xmlChar *name;
    int rc;
    while ((rc = next_child(reader, depth, &name)) == 1) {
        gboolean ok;
        if (name == n->unique) {
            ok = read_u64(reader, &record->unique);
        } else if (name == n->tid) {
            ok = read_int(reader, &record->tid);
        } else if (name == n->threadname) {
            ok = read_record_text(reader, record, &record->threadname);
        } else if (name == n->kind) {
            ok = read_record_text(reader, record, &record->kind);
            record->leak_kind = gl_leak_kind_from_name(record->kind);
        } else if (name == n->what || name == n->xwhat) {
            const char *text = NULL;
            ok = name == n->what ? read_record_text(reader, record, &text)
                                 : read_extended(reader, record, &text, NULL);
            /* Protocol 4 allows a second line of description. */
            if (record->what == NULL)
                record->what = text;
            else if (text != NULL)
                add_aux(record, text);
        } else if (name == n->leakedbytes) {  /* protocols before 4 */
            record->has_leak_size = TRUE;
            ok = read_u64(reader, &record->leaked_bytes);
        } else if (name == n->leakedblocks) {
            record->has_leak_size = TRUE;
            ok = read_u64(reader, &record->leaked_blocks);
        } else if (name == n->stack) {
            if (!have_stack) {
                ok = read_stack(reader, record, &record->stack);
                have_stack = TRUE;
            } else {
                ok = read_extra_stack(reader, record);
            }
        } else if (name == n->auxwhat || name == n->xauxwhat) {
            const char *text = NULL;
            ok = name == n->auxwhat ? read_record_text(reader, record, &text)
                                    : read_extended(reader, record, &text, NULL);
            add_aux(record, text);
        } else if (name == n->origin) {
            GlAux *aux = add_aux(record, NULL);
            GlStack scratch = { 0 };
            const char *text = NULL;
            ok = read_extended(reader, record, &text, aux != NULL ? &aux->stack : &scratch);
            g_free(scratch.frames);
            /* add_aux may not have moved the array since: nothing was added. */
            if (aux != NULL)
                aux->text = text;
        } else if (name == n->suppression && record->suppression == NULL) {
            ok = read_suppression(reader, record);
        } else if (name == n->fd) {
            ok = read_int(reader, &record->fd);
        } else if (name == n->path) {
            ok = read_record_text(reader, record, &record->fd_path);
        } else {
            ok = skip_element(reader);
        }
        if (!ok)
            return NULL;
    }
    if (rc < 0)
        return NULL;
    if (record->kind == NULL)
        record->kind = gl_record_intern(record, "Unknown");
    if (record->what == NULL)
        record->what = gl_record_intern(record, record->kind);
    return g_steal_pointer(&record);
}

static GlRecord *read_fatal_signal(GlReader *reader)
{
    const Names *n = &reader->n;
    g_autoptr(GlRecord) record = gl_record_new();
    record->pid = reader->doc.pid;
    record->kind = gl_record_intern(record, GL_KIND_FATAL_SIGNAL);
    gint signo = 0;
    const char *signame = NULL;
    if (!xmlTextReaderIsEmptyElement(reader->xml)) {
        int depth = xmlTextReaderDepth(reader->xml);
        const xmlChar *name;
        int rc;
        while ((rc = next_child(reader, depth, &name)) == 1) {
            gboolean ok;
            if (name == n->tid)
                ok = read_int(reader, &record->tid);
            else if (name == n->threadname)
                ok = read_record_text(reader, record, &record->threadname);
            else if (name == n->signo)
                ok = read_int(reader, &signo);
            else if (name == n->signame)
                ok = read_record_text(reader, record, &signame);
            else if (name == n->stack && record->stack.n_frames == 0)
                ok = read_stack(reader, record, &record->stack);
            else
                ok = skip_element(reader);
            if (!ok)
                return NULL;
        }
        if (rc < 0)
            return NULL;
    }
    /* Valgrind's own words for it in its text output. */
    g_autofree char *what = g_strdup_printf(
        "Process terminating with default action of signal %d (%s)", signo,
        signame != NULL ? signame : "unknown");
    record->what = gl_record_intern(record, what);
    return g_steal_pointer(&record);
}

/* ---- the document -------------------------------------------------------- */

static gboolean read_args(GlReader *reader)
{
    const Names *n = &reader->n;
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = next_child(reader, depth, &name)) == 1) {
        if (name != n->vargv && name != n->argv) {
            if (!skip_element(reader))
                return FALSE;
            continue;
        }
        gboolean client = name == n->argv;
        GPtrArray *list = client ? reader->doc.argv : reader->doc.vargv;
        if (xmlTextReaderIsEmptyElement(reader->xml))
            continue;
        int adepth = xmlTextReaderDepth(reader->xml);
        const xmlChar *aname;
        int arc;
        while ((arc = next_child(reader, adepth, &aname)) == 1) {
            const char *value = NULL;
            if (aname == n->exe || aname == n->arg) {
                if (!read_doc_text(reader, &value))
                    return FALSE;
                if (aname == n->exe && client)
                    reader->doc.exe = value;
                else if (list->len < MAX_FRAMES)
                    g_ptr_array_add(list, (gpointer) value);
            } else if (!skip_element(reader)) {
                return FALSE;
            }
        }
        if (arc < 0)
            return FALSE;
    }
    return rc == 0;
}

static gboolean read_status(GlReader *reader)
{
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = next_child(reader, depth, &name)) == 1) {
        if (name == reader->n.state) {
            if (!read_text(reader))
                return FALSE;
            g_strstrip(reader->text->str);
            if (strcmp(reader->text->str, "RUNNING") == 0)
                reader->doc.started = TRUE;
            else if (strcmp(reader->text->str, "FINISHED") == 0)
                reader->doc.finished = TRUE;
        } else if (!skip_element(reader)) {
            return FALSE;
        }
    }
    return rc == 0;
}

/* Records the failure, handed out once the recovered records are. */
static void set_failure(GlReader *reader, GlErrorCode code, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static void set_failure(GlReader *reader, GlErrorCode code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    reader->finished = TRUE;
    g_clear_error(&reader->failure);
    reader->failure = g_error_new(GL_ERROR, code, "%s: %s", reader->name, message);
}

/* Parses one element cut out of the window as a document of its own. */
static GlRecord *parse_fragment(GlReader *reader, const guint8 *data, gsize len)
{
    static const char open[] = "<valgrindoutput>";
    static const char close[] = "</valgrindoutput>";
    g_autoptr(GByteArray) doc = g_byte_array_sized_new((guint) (len + sizeof open + sizeof close));
    g_byte_array_append(doc, (const guint8 *) open, sizeof open - 1);
    g_byte_array_append(doc, data, (guint) len);
    g_byte_array_append(doc, (const guint8 *) close, sizeof close - 1);
    g_autoptr(GlReader) sub = gl_reader_new_for_memory((const char *) doc->data, doc->len,
                                                       reader->name);
    sub->fragment = TRUE;
    GlRecord *record = gl_reader_next(sub, NULL);
    if (record != NULL)
        record->pid = reader->doc.pid;
    return record;
}

static const guint8 *find_last(const guint8 *data, gsize len, const char *needle)
{
    gsize n = strlen(needle);
    const guint8 *found = NULL;
    const guint8 *at = data;
    if (len == 0)
        return NULL;
    while ((at = memmem(at, len - (gsize) (at - data), needle, n)) != NULL)
        found = at++;
    return found;
}

/* After a parse failure: the complete <error>s and <fatal_signal>s that
 * libxml2 parsed ahead but never handed out, parsed again from the window
 * and queued, in document order. */
static void recover_lost_records(GlReader *reader)
{
    Source *source = &reader->source;
    if (reader->fragment || source->window->len == 0)
        return;
    /* The window was not scanned for </fatal_signal> as it came. */
    note_ends(source, 0, END_FATAL, sizeof END_FATAL - 1);
    guint64 from = source->window_start;
    /* What the parser read ahead may reach into a next document. */
    guint64 limit = source->window_end;
    const guint8 *root_end = memmem(source->window->data, source->window->len,
                                    "</valgrindoutput>", 17);
    if (root_end != NULL)
        limit = source->window_start + (guint64) (root_end - source->window->data);
    while (!g_queue_is_empty(&source->ends)) {
        guint64 end = GPOINTER_TO_SIZE(g_queue_pop_head(&source->ends));
        if (end <= from || end > limit)
            continue;
        const guint8 *base = source->window->data;
        const guint8 *seg = base + (from - source->window_start);
        gsize seg_len = (gsize) (end - from);
        const guint8 *error_at = find_last(seg, seg_len, "<error>");
        const guint8 *fatal_at = find_last(seg, seg_len, "<fatal_signal>");
        const guint8 *start = MAX(error_at, fatal_at);
        from = end;
        if (start == NULL)
            continue;
        GlRecord *record = parse_fragment(reader, start, (gsize) (seg + seg_len - start));
        if (record == NULL)
            break;  /* not an element of its own after all: stop guessing */
        g_queue_push_tail(&reader->pending, record);
    }
}

/* After "extra content at the end of the document": if another Valgrind
 * document follows the first (files concatenated, or several processes
 * writing one after the other), start reading it.
 * Returns: TRUE if the reader now stands at the start of the next document. */
static gboolean start_next_document(GlReader *reader)
{
    Source *source = &reader->source;
    const guint8 *data = source->window->data;
    gsize len = source->window->len;
    const guint8 *end = len > 0 ? find_last(data, len, "</valgrindoutput>") : NULL;
    if (end == NULL)
        return FALSE;
    end += strlen("</valgrindoutput>");
    gsize rest = len - (gsize) (end - data);
    const guint8 *next = memmem(end, rest, "<?xml", 5);
    if (next == NULL)
        next = memmem(end, rest, "<valgrindoutput", 15);
    if (next == NULL)
        return FALSE;

    /* The unread rest of the input follows whatever the replay still holds. */
    g_autoptr(GByteArray) replay = g_byte_array_new();
    g_byte_array_append(replay, next, (guint) (len - (gsize) (next - data)));
    if (source->replay != NULL) {
        g_byte_array_append(replay, source->replay->data + source->replay_pos,
                            source->replay->len - (guint) source->replay_pos);
        g_byte_array_unref(source->replay);
    }
    source->replay = g_steal_pointer(&replay);
    source->replay_pos = 0;
    source->window_start = source->window_end;
    g_byte_array_set_size(source->window, 0);
    g_queue_clear(&source->ends);

    GlDocument *doc = &reader->doc;
    guint documents = doc->n_documents + 1;
    guint n_errors = doc->n_errors;
    gboolean fatal = doc->fatal_signal;
    g_ptr_array_set_size(doc->argv, 0);
    g_ptr_array_set_size(doc->vargv, 0);
    GPtrArray *argv = doc->argv;
    GPtrArray *vargv = doc->vargv;
    memset(doc, 0, sizeof *doc);
    doc->argv = argv;
    doc->vargv = vargv;
    doc->n_documents = documents;
    doc->n_errors = n_errors;
    doc->fatal_signal = fatal;
    reader->root_seen = FALSE;
    g_clear_pointer(&reader->xml_message, g_free);
    reader->xml_code = 0;
    return start_xml(reader);
}

static const char *skip_blanks(const char *text, const char *end)
{
    while (text < end && g_ascii_isspace(*text))
        text++;
    return text;
}

/* The window still holds the start of the input while no record has been
 * handed out, which is when these two questions are asked. */
static gboolean input_is_blank(const Source *source)
{
    const char *end = (const char *) source->window->data + source->window->len;
    return source->window_start == 0 && skip_blanks((const char *) source->window->data, end) == end;
}

/* TRUE when @text[0..len) and @full agree over the shorter of the two:
 * one begins the other. */
static gboolean begins_alike(const char *text, gsize len, const char *full)
{
    return memcmp(text, full, MIN(len, strlen(full))) == 0;
}

/* A start cut short: an XML declaration (or part of one), then nothing, or
 * all or part of a <valgrindoutput> start tag. */
static gboolean input_starts_like_valgrind(const Source *source)
{
    if (source->window_start != 0)
        return FALSE;
    const char *end = (const char *) source->window->data + source->window->len;
    const char *text = skip_blanks((const char *) source->window->data, end);
    if (begins_alike(text, (gsize) (end - text), "<?xml")) {
        const char *close = g_strstr_len(text, end - text, "?>");
        if (close == NULL)
            return TRUE;
        text = skip_blanks(close + 2, end);
    }
    return begins_alike(text, (gsize) (end - text), "<valgrindoutput");
}

/* libxml2 may fail in the first chunk it parses, before it hands out even
 * the root element: the window tells whether a Valgrind document had begun,
 * and its pid, so that the errors complete before the failure are read. */
static gboolean window_shows_document(GlReader *reader)
{
    const Source *source = &reader->source;
    if (source->window_start != 0 || source->window->len == 0)
        return FALSE;
    const guint8 *data = source->window->data;
    gsize len = source->window->len;
    if (memmem(data, len, "<valgrindoutput>", 16) == NULL)
        return FALSE;
    const guint8 *tool = memmem(data, len, "<protocoltool>", 14);
    if (tool != NULL && (gsize) (tool - data) + 22 <= len && memcmp(tool + 14, "memcheck", 8) != 0)
        return FALSE;
    const guint8 *pid = memmem(data, len, "<pid>", 5);
    if (pid != NULL && reader->doc.pid == 0) {
        g_autofree char *digits = g_strndup((const char *) pid + 5,
                                            MIN((gsize) 20, len - (gsize) (pid - data) - 5));
        reader->doc.pid = (gint64) parse_number(digits);
    }
    return TRUE;
}

/* Turns a failed xmlTextReaderRead into the error a user can act on, after
 * queueing what can be saved. */
static void handle_parse_failure(GlReader *reader)
{
    if (reader->check != NULL) {
        set_failure(reader, (GlErrorCode) reader->check->code, "%s", reader->check->message);
        return;
    }
    if (reader->source.read_errno != 0) {
        recover_lost_records(reader);
        set_failure(reader, GL_ERROR_IO, "read error: %s",
                    g_strerror(reader->source.read_errno));
        return;
    }
    if (reader->doc.n_documents == 0 && reader->source.eof && input_is_blank(&reader->source)) {
        set_failure(reader, GL_ERROR_EMPTY,
                    "empty file: Valgrind wrote nothing (was it killed before it started?)");
        return;
    }

    const char *why = reader->xml_message != NULL ? reader->xml_message : "unknown parse error";
    int line = reader->xml_line;
    switch (reader->xml_code) {
    case XML_ERR_ENTITY_LOOP:
    case XML_ERR_INTERNAL_ERROR:  /* "Excessive depth in document" */
    case XML_ERR_NO_MEMORY:       /* "xmlSAX2Characters: huge text node" */
        recover_lost_records(reader);
        set_failure(reader, GL_ERROR_LIMIT, "line %d: refused: %s", line, why);
        return;
    default:
        break;
    }
    if (!reader->root_seen && window_shows_document(reader))
        reader->root_seen = TRUE;  /* parsed ahead, but not handed out */
    if (!reader->root_seen) {
        if (reader->source.eof && input_starts_like_valgrind(&reader->source))
            set_failure(reader, GL_ERROR_TRUNCATED,
                        "truncated before its first error: Valgrind stopped before it "
                        "finished writing (killed, or out of disk?)");
        else
            set_failure(reader, GL_ERROR_NOT_XML, "not XML (line %d: %s)", line, why);
        return;
    }
    recover_lost_records(reader);
    guint n_complete = reader->doc.n_errors + reader->pending.length;
    /* In push mode libxml2 also says "Extra content at the end of the
     * document" for a document cut short, so a next document must be seen. */
    if ((reader->xml_code == XML_ERR_DOCUMENT_END || reader->xml_code == XML_ERR_RESERVED_XML_NAME)
        && !reader->fragment && start_next_document(reader))
        return;
    if (reader->source.eof)
        set_failure(reader, GL_ERROR_TRUNCATED,
                    "truncated at line %d after %u complete errors: Valgrind stopped before "
                    "it finished writing (killed, or out of disk?)", line, n_complete);
    else
        set_failure(reader, GL_ERROR_MALFORMED, "line %d: not well-formed: %s", line, why);
}

static gboolean check_tool(GlReader *reader, const char *tool)
{
    if (g_strcmp0(tool, "memcheck") == 0)
        return TRUE;
    g_set_error(&reader->check, GL_ERROR, GL_ERROR_WRONG_TOOL,
                "Valgrind %s output, not memcheck: gemleak reads what "
                "valgrind --tool=memcheck writes", tool);
    return FALSE;
}

/* Reads one top-level element of <valgrindoutput> other than an error.
 * Everything else is skipped: errorcounts, suppcounts, protocol 6's
 * summaries, and the stray copy of each <suppression> that Valgrind 3.19
 * writes after its <error> under --gen-suppressions=all. */
static gboolean read_header_element(GlReader *reader, const xmlChar *name)
{
    const Names *n = &reader->n;
    GlDocument *doc = &reader->doc;
    if (name == n->protocolversion)
        return read_int(reader, &doc->protocol_version);
    if (name == n->protocoltool || (name == n->tool && doc->tool == NULL)) {
        if (!read_doc_text(reader, &doc->tool))
            return FALSE;
        return check_tool(reader, doc->tool);
    }
    if (name == n->pid)
        return read_i64(reader, &doc->pid);
    if (name == n->ppid)
        return read_i64(reader, &doc->ppid);
    if (name == n->args)
        return read_args(reader);
    if (name == n->status)
        return read_status(reader);
    return skip_element(reader);
}

/* Hands out a record: an error ends at the oldest </error> the source
 * noted, a fatal signal at the first </fatal_signal> in the window; the
 * window can forget everything before that end. */
static GlRecord *hand_out(GlReader *reader, GlRecord *record)
{
    Source *source = &reader->source;
    if (strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0) {
        reader->doc.fatal_signal = TRUE;
        const guint8 *end = source->window->len > 0
            ? memmem(source->window->data, source->window->len, END_FATAL, sizeof END_FATAL - 1)
            : NULL;
        if (end != NULL)
            window_forget_before(source, source->window_start +
                                             (guint64) (end - source->window->data) +
                                             sizeof END_FATAL - 1);
    } else if (!g_queue_is_empty(&source->ends)) {
        window_forget_before(source, GPOINTER_TO_SIZE(g_queue_pop_head(&source->ends)));
    }
    reader->doc.n_errors++;
    return record;
}

/* Parses on until the next record, the end, or a failure. */
static GlRecord *parse_next(GlReader *reader)
{
    for (;;) {
        int ret = xmlTextReaderRead(reader->xml);
        if (ret == 0) {
            reader->finished = TRUE;
            if (!reader->root_seen && reader->doc.n_documents == 0)
                set_failure(reader, GL_ERROR_EMPTY, "no XML element in it");
            return NULL;
        }
        if (ret < 0) {
            handle_parse_failure(reader);
            if (!reader->finished && g_queue_is_empty(&reader->pending))
                continue;  /* a next document started */
            return NULL;
        }

        int type = xmlTextReaderNodeType(reader->xml);
        if (type == XML_READER_TYPE_END_ELEMENT) {
            if (xmlTextReaderDepth(reader->xml) == 0)
                reader->doc.complete = TRUE;
            continue;
        }
        /* Valgrind writes no DOCTYPE, and every entity trick (billion laughs,
         * external entities, a DTD on the network) needs one: refused before
         * any entity can be used. */
        if (type == XML_READER_TYPE_DOCUMENT_TYPE) {
            set_failure(reader, GL_ERROR_NOT_VALGRIND,
                        "has a DOCTYPE, which Valgrind never writes: refused (gemleak reads no "
                        "DTD and expands no entity)");
            return NULL;
        }
        if (type != XML_READER_TYPE_ELEMENT)
            continue;

        const xmlChar *name = xmlTextReaderConstLocalName(reader->xml);
        if (xmlTextReaderDepth(reader->xml) == 0) {
            if (name != reader->n.valgrindoutput) {
                set_failure(reader, GL_ERROR_NOT_VALGRIND,
                            "XML, but not Valgrind output (its root element is <%s>)",
                            (const char *) name);
                return NULL;
            }
            reader->root_seen = TRUE;
            if (xmlTextReaderIsEmptyElement(reader->xml))
                reader->doc.complete = TRUE;
            continue;
        }

        if (name == reader->n.error || name == reader->n.fatal_signal) {
            GlRecord *record = name == reader->n.error ? read_error(reader)
                                                       : read_fatal_signal(reader);
            if (record != NULL)
                return hand_out(reader, record);
            handle_parse_failure(reader);
            if (!reader->finished && g_queue_is_empty(&reader->pending))
                continue;
            return NULL;
        }
        if (!read_header_element(reader, name)) {
            handle_parse_failure(reader);
            if (!reader->finished && g_queue_is_empty(&reader->pending))
                continue;
            return NULL;
        }
    }
}

GlRecord *gl_reader_next(GlReader *reader, GError **error)
{
    g_return_val_if_fail(reader != NULL, NULL);
    for (;;) {
        if (!g_queue_is_empty(&reader->pending)) {
            GlRecord *record = g_queue_pop_head(&reader->pending);
            reader->doc.n_errors++;
            if (strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0)
                reader->doc.fatal_signal = TRUE;
            return record;
        }
        if (reader->finished) {
            if (reader->failure != NULL && error != NULL)
                *error = g_error_copy(reader->failure);
            return NULL;
        }
        GlRecord *record = parse_next(reader);
        if (record != NULL)
            return record;
        /* NULL: the end, a failure, or records recovered before either. */
    }
}
