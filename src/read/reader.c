/* The Valgrind memcheck XML reader (protocols 4 to 6).
 *
 * The splitter (splitter.c) cuts the input into documents and the elements
 * of each root; each element we need is parsed on its own by a reused
 * libxml2 xmlTextReader over its bytes, and turned into a GlRecord or into
 * what the document says of its process. An element that does not parse
 * is retried once with its bytes made valid UTF-8 (Valgrind copies
 * arguments, paths and names raw); one that still fails is a problem, and
 * reading goes on after it. Elements gemleak does not use are never parsed:
 * Valgrind adds some in every release (and 3.26 leaves one unclosed in its
 * leak summary). */
#include "gemleak/read/reader.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/splitter.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <libxml/parser.h>
#include <libxml/xmlreader.h>

/* Bounds that only hostile input reaches: Valgrind writes at most 500
 * frames a stack and its texts are short; the element's own size
 * (GL_SPLITTER_MAX_ELEMENT) bounds the frames of one record. */
#define MAX_TEXT ((gsize) 1024 * 1024)
#define MAX_ARGS 65536

/* The root element of a Valgrind document. */
#define ROOT "valgrindoutput"

/* Element names, interned in the reader's dictionary so that the parse
 * compares pointers, not strings. */
typedef struct {
    const xmlChar *valgrindoutput, *protocolversion, *protocoltool, *pid, *ppid,
        *tool, *args, *vargv, *argv, *exe, *arg, *status, *state, *error,
        *fatal_signal, *unique, *tid, *threadname, *kind, *what, *xwhat, *text,
        *leakedbytes, *leakedblocks, *stack, *frame, *ip, *obj, *fn, *dir, *file,
        *line, *auxwhat, *xauxwhat, *origin, *suppression, *sname, *skind, *skaux,
        *sframe, *fun, *rawtext, *fd, *path, *signo, *signame, *clientmsg,
        *suppcounts, *pair, *count, *name;
} Names;

struct GlReader {
    char *name;
    int owned_fd;          /* an fd the reader opened itself, or -1 */
    GlSplitter *splitter;
    xmlTextReaderPtr xml;  /* reused for every element */
    Names n;
    GlDocument doc;
    GStringChunk *doc_strings;
    char *marker_prefix;   /* nullable: only client messages with it are markers */
    GString *marker;       /* the last marker, which doc.marker points into: a
                            * suite writes two a test, too many to keep them all */
    GString *text;         /* scratch: the text of the element being read */
    GArray *frames;        /* scratch: the frames of the stack being read */
    GString *repaired;     /* scratch: an element with its bad bytes replaced */
    GPtrArray *problems;   /* GError* */
    GPtrArray *notes;      /* char* */
    GHashTable *suppressed;/* suppression name -> count */
    GQueue pending;        /* records separated from one element, not yet handed out */
    gboolean finished;
    gboolean seen_document;   /* a Valgrind document began */
    gboolean ignoring;        /* the current document is not one to read */
    gboolean text_reported;   /* stray text was reported once already */
    gboolean shared;          /* signs that several processes wrote the input */
    guint n_repaired;         /* elements whose bytes had to be made valid */
    guint n_separated;        /* elements recovered from interleaved writes */
    /* the first error libxml2 reported for the element being parsed */
    int xml_code;
    char *xml_message;
    /* char*: the leak sizes of the element being read that Valgrind could
     * not have written ("<leakedbytes> -5, not a count: read as 0") */
    GPtrArray *bad_counts;
};

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

/* libxml2 prints to stderr unless told otherwise; the reader reports
 * through its problems instead. */
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

/* Returns: (transfer full): @message on one line, without libxml2's
 * newlines. */
static char *one_line(const char *message)
{
    char *line = g_strstrip(g_strdup(message != NULL ? message : "unknown error"));
    for (char *c = line; *c != '\0'; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    return line;
}

static void on_xml_error(void *context, xmlErrorPtr error)
{
    GlReader *reader = context;
    if (error == NULL || error->level < XML_ERR_ERROR || reader->xml_message != NULL)
        return;
    reader->xml_code = error->code;
    reader->xml_message = one_line(error->message);
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
    NAME(clientmsg); NAME(suppcounts); NAME(pair); NAME(count); NAME(name);
#undef NAME
}

/* COMPACT keeps short text inside its node (fewer allocations); NONET and
 * the absence of NOENT, DTDLOAD and HUGE keep libxml2's limits on entity
 * expansion, depth and text size in force. */
#define READER_OPTIONS (XML_PARSE_NONET | XML_PARSE_COMPACT | XML_PARSE_NOBLANKS)

static GlReader *reader_new(const char *name, int owned_fd, GlSplitter *splitter)
{
    gl_reader_global_init();
    xmlSetGenericErrorFunc(NULL, ignore_generic_error);

    GlReader *reader = g_new0(GlReader, 1);
    reader->name = g_strdup(name);
    reader->owned_fd = owned_fd;
    reader->splitter = splitter;
    reader->doc_strings = g_string_chunk_new(512);
    reader->marker = g_string_new(NULL);
    reader->doc.argv = g_ptr_array_new();
    reader->doc.vargv = g_ptr_array_new();
    reader->text = g_string_sized_new(256);
    reader->frames = g_array_sized_new(FALSE, TRUE, sizeof(GlFrame), 64);
    reader->repaired = g_string_new(NULL);
    reader->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    reader->bad_counts = g_ptr_array_new_with_free_func(g_free);
    reader->notes = g_ptr_array_new_with_free_func(g_free);
    reader->suppressed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_queue_init(&reader->pending);
    return reader;
}

GlReader *gl_reader_new_for_path(const char *path, GError **error)
{
    if (g_strcmp0(path, "-") == 0)
        return gl_reader_new_for_fd(STDIN_FILENO, "<stdin>");
    int fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        int saved = errno;
        g_autofree char *shown = g_utf8_make_valid(path, -1);
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot open: %s", shown,
                    g_strerror(saved));
        return NULL;
    }
    return reader_new(path, fd, gl_splitter_new_for_fd(fd));
}

GlReader *gl_reader_new_for_fd(int fd, const char *name)
{
    return reader_new(name, -1, gl_splitter_new_for_fd(fd));
}

GlReader *gl_reader_new_for_memory(const char *data, gsize size, const char *name)
{
    return reader_new(name, -1, gl_splitter_new_for_memory(data, size));
}

void gl_reader_free(GlReader *reader)
{
    if (reader == NULL)
        return;
    if (reader->xml != NULL)
        xmlFreeTextReader(reader->xml);
    gl_splitter_free(reader->splitter);
    if (reader->owned_fd >= 0)
        close(reader->owned_fd);
    g_ptr_array_unref(reader->doc.argv);
    g_ptr_array_unref(reader->doc.vargv);
    g_string_chunk_free(reader->doc_strings);
    g_free(reader->marker_prefix);
    g_string_free(reader->marker, TRUE);
    g_string_free(reader->text, TRUE);
    g_array_unref(reader->frames);
    g_string_free(reader->repaired, TRUE);
    g_ptr_array_unref(reader->problems);
    g_ptr_array_unref(reader->bad_counts);
    g_ptr_array_unref(reader->notes);
    g_hash_table_unref(reader->suppressed);
    g_queue_clear_full(&reader->pending, (GDestroyNotify) gl_record_free);
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

void gl_reader_set_marker_prefix(GlReader *reader, const char *prefix)
{
    g_free(reader->marker_prefix);
    reader->marker_prefix = g_strdup(prefix);
}

const GPtrArray *gl_reader_problems(const GlReader *reader)
{
    return reader->problems;
}

const GPtrArray *gl_reader_notes(const GlReader *reader)
{
    return reader->notes;
}

GHashTable *gl_reader_suppression_counts(const GlReader *reader)
{
    return reader->suppressed;
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

/* A leak size: a count in decimal, as Valgrind writes its 64-bit SizeT.
 * What it cannot have written (a sign, more than 64 bits, no digits) is
 * kept in reader->bad_counts to be said, not read as another number: one
 * too large reads as the largest, anything else as 0. */
static gboolean read_count(GlReader *reader, const char *name, guint64 *out)
{
    if (!read_text(reader))
        return FALSE;
    g_autofree char *text = g_strstrip(g_strdup(reader->text->str));
    gboolean digits = *text != '\0', over = FALSE;
    guint64 value = 0;
    for (const char *c = text; *c != '\0' && digits; c++) {
        guint digit = (guint) (*c - '0');
        if (!g_ascii_isdigit(*c))
            digits = FALSE;
        else if (value > (G_MAXUINT64 - digit) / 10)
            over = TRUE;
        else if (!over)
            value = value * 10 + digit;
    }
    *out = !digits ? 0 : over ? G_MAXUINT64 : value;
    if (digits && !over)
        return TRUE;
    g_autofree char *cut = strlen(text) > 40 ? g_strdup_printf("%.37s...", text) : g_strdup(text);
    g_autofree char *shown = g_utf8_make_valid(cut, -1);
    g_ptr_array_add(reader->bad_counts,
                    g_strdup_printf("<%s> %s, %s: read as %" G_GUINT64_FORMAT, name, shown,
                                    digits ? "more than Valgrind can count" : "not a count",
                                    *out));
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
            if (name == reader->n.frame) {
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
            ok = read_count(reader, "leakedbytes", &record->leaked_bytes);
        } else if (name == n->leakedblocks) {
            record->has_leak_size = TRUE;
            ok = read_count(reader, "leakedblocks", &record->leaked_blocks);
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
                    if (sname == n->fun || sname == n->obj) {
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
    int depth = xmlTextReaderDepth(reader->xml);
    gboolean have_stack = FALSE;
    const xmlChar *name;
    int rc = xmlTextReaderIsEmptyElement(reader->xml) ? 0 : 1;
    while (rc == 1 && (rc = next_child(reader, depth, &name)) == 1) {
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
            ok = read_count(reader, "leakedbytes", &record->leaked_bytes);
        } else if (name == n->leakedblocks) {
            record->has_leak_size = TRUE;
            ok = read_count(reader, "leakedblocks", &record->leaked_blocks);
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
    /* Read again after a repair: from the start. */
    g_ptr_array_set_size(reader->doc.argv, 0);
    g_ptr_array_set_size(reader->doc.vargv, 0);
    reader->doc.exe = NULL;
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
                else if (list->len < MAX_ARGS)
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

/* Reads the children of the element at the cursor: the text of each one
 * named @child goes to @take (in reader->text), the others are skipped. */
static gboolean read_child_texts(GlReader *reader, const xmlChar *child,
                                 void (*take)(GlReader *reader))
{
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = next_child(reader, depth, &name)) == 1) {
        if (name == child) {
            if (!read_text(reader))
                return FALSE;
            take(reader);
        } else if (!skip_element(reader)) {
            return FALSE;
        }
    }
    return rc == 0;
}

/* <status><state>RUNNING|FINISHED</state>...</status> */
static void take_state(GlReader *reader)
{
    g_strstrip(reader->text->str);
    if (strcmp(reader->text->str, "RUNNING") == 0)
        reader->doc.started = TRUE;
    else if (strcmp(reader->text->str, "FINISHED") == 0)
        reader->doc.finished = TRUE;
}

/* <clientmsg><text>gemleak:...</text>...</clientmsg> */
static void take_marker(GlReader *reader)
{
    if (reader->marker_prefix == NULL ||
        g_str_has_prefix(reader->text->str, reader->marker_prefix)) {
        g_string_assign(reader->marker, reader->text->str);
        reader->doc.marker = reader->marker->str;
    }
}

/* <suppcounts><pair><count>N</count><name>NAME</name></pair>...</suppcounts> */
static gboolean read_suppcounts(GlReader *reader)
{
    const Names *n = &reader->n;
    if (xmlTextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = xmlTextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = next_child(reader, depth, &name)) == 1) {
        if (name != n->pair || xmlTextReaderIsEmptyElement(reader->xml)) {
            if (!skip_element(reader))
                return FALSE;
            continue;
        }
        guint64 count = 0;
        g_autofree char *supp = NULL;
        int pdepth = xmlTextReaderDepth(reader->xml);
        const xmlChar *pname;
        int prc;
        while ((prc = next_child(reader, pdepth, &pname)) == 1) {
            gboolean ok;
            if (pname == n->count) {
                ok = read_u64(reader, &count);
            } else if (pname == n->name) {
                ok = read_text(reader);
                g_free(supp);
                supp = g_strdup(reader->text->str);
            } else {
                ok = skip_element(reader);
            }
            if (!ok)
                return FALSE;
        }
        if (prc < 0)
            return FALSE;
        if (supp != NULL)
            gl_counts_add(reader->suppressed, g_steal_pointer(&supp), count);
    }
    return rc == 0;
}

/* ---- problems and notes ------------------------------------------------------ */

static void add_problem(GlReader *reader, GlErrorCode code, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static void add_problem(GlReader *reader, GlErrorCode code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_autofree char *line = one_line(message);
    g_autofree char *shown = g_utf8_make_valid(reader->name, -1);
    g_ptr_array_add(reader->problems, g_error_new(GL_ERROR, code, "%s: %s", shown, line));
}

static void add_note(GlReader *reader, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void add_note(GlReader *reader, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_autofree char *shown = g_utf8_make_valid(reader->name, -1);
    g_ptr_array_add(reader->notes, g_strdup_printf("%s: %s", shown, message));
}

/* The advice for every file that several processes wrote at once. */
#define SHARED_FILE_ADVICE                                                              \
    "several processes wrote this one file (Valgrind's --xml-file without %%p): give "  \
    "Valgrind --xml-file=DIR/%%p.xml, as gemleak run does, so that each writes its own"

/* ---- elements ------------------------------------------------------------------ */

/* Points libxml2 at @data and moves it to the element's start.
 * Returns: FALSE when not even that parses. */
static gboolean begin_element(GlReader *reader, const char *data, gsize length)
{
    g_clear_pointer(&reader->xml_message, g_free);
    reader->xml_code = 0;
    if (reader->xml == NULL) {
        reader->xml = xmlReaderForMemory(data, (int) length, reader->name, "UTF-8",
                                         READER_OPTIONS);
        if (reader->xml == NULL)
            return FALSE;
        intern_names(reader);
    } else if (xmlReaderNewMemory(reader->xml, data, (int) length, reader->name, "UTF-8",
                                  READER_OPTIONS) != 0) {
        return FALSE;
    } else if (xmlTextReaderConstString(reader->xml, BAD_CAST "error") != reader->n.error) {
        intern_names(reader);  /* a new dictionary: the names are new pointers */
    }
    xmlTextReaderSetStructuredErrorHandler(reader->xml, on_xml_error, reader);
    for (;;) {
        if (xmlTextReaderRead(reader->xml) != 1)
            return FALSE;
        switch (xmlTextReaderNodeType(reader->xml)) {
        case XML_READER_TYPE_ELEMENT:
            return TRUE;
        case XML_READER_TYPE_DOCUMENT_TYPE:
            return FALSE;
        default:
            break;
        }
    }
}

/* Reads one kind of element, libxml2 standing on its start; @result is
 * where it puts what it read. */
typedef gboolean (*ReadElement)(GlReader *reader, gpointer result);

static gboolean read_error_into(GlReader *reader, gpointer result)
{
    GlRecord **record = result;
    *record = xmlTextReaderConstLocalName(reader->xml) == reader->n.fatal_signal
                  ? read_fatal_signal(reader) : read_error(reader);
    return *record != NULL;
}

/* Every other element the reader uses says something of the process. */
static gboolean read_header_into(GlReader *reader, gpointer result)
{
    (void) result;
    const Names *n = &reader->n;
    GlDocument *doc = &reader->doc;
    const xmlChar *name = xmlTextReaderConstLocalName(reader->xml);
    if (name == n->protocolversion)
        return read_int(reader, &doc->protocol_version);
    if (name == n->protocoltool || name == n->tool)
        return read_doc_text(reader, &doc->tool);
    if (name == n->pid)
        return read_i64(reader, &doc->pid);
    if (name == n->ppid)
        return read_i64(reader, &doc->ppid);
    if (name == n->args)
        return read_args(reader);
    if (name == n->status)
        return read_child_texts(reader, n->state, take_state);
    if (name == n->clientmsg)
        return read_child_texts(reader, n->text, take_marker);
    if (name == n->suppcounts)
        return read_suppcounts(reader);
    return skip_element(reader);
}

/* Copies @data into @out with each byte sequence that is not UTF-8, and
 * each character XML forbids (controls but tab, newline and return;
 * U+FFFE, U+FFFF), replaced by U+FFFD.
 * Returns: how many were replaced. */
static guint repair_bytes(const char *data, gsize length, GString *out)
{
    static const char replacement[] = "\xEF\xBF\xBD";
    g_string_truncate(out, 0);
    guint replaced = 0;
    const char *p = data;
    const char *end = data + length;
    while (p < end) {
        const char *valid_end = end;
        g_utf8_validate_len(p, (gsize) (end - p), &valid_end);
        for (const char *q = p; q < valid_end; q++) {
            guchar c = (guchar) *q;
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                g_string_append(out, replacement);
                replaced++;
            } else if (c == 0xEF && valid_end - q >= 3 && (guchar) q[1] == 0xBF &&
                       ((guchar) q[2] == 0xBE || (guchar) q[2] == 0xBF)) {
                g_string_append(out, replacement);
                replaced++;
                q += 2;
            } else {
                g_string_append_c(out, (char) c);
            }
        }
        p = valid_end;
        if (p < end) {
            g_string_append(out, replacement);
            replaced++;
            p++;
        }
    }
    return replaced;
}

/* Parses the element @data with @read; when that fails, once more with
 * its bytes repaired.
 * Returns: FALSE when it does not parse (reader->xml_message says why). */
static gboolean parse_element(GlReader *reader, const char *data, gsize length, ReadElement read,
                              gpointer result)
{
    if (begin_element(reader, data, length) && read(reader, result))
        return TRUE;
    g_autofree char *why = g_steal_pointer(&reader->xml_message);
    int code = reader->xml_code;
    guint replaced = repair_bytes(data, length, reader->repaired);
    if (replaced > 0) {
        g_ptr_array_set_size(reader->bad_counts, 0);  /* read again, said once */
        if (begin_element(reader, reader->repaired->str, reader->repaired->len) &&
            read(reader, result)) {
            reader->n_repaired++;
            return TRUE;
        }
    }
    if (reader->xml_message == NULL) {
        reader->xml_message = g_steal_pointer(&why);
        reader->xml_code = code;
    }
    return FALSE;
}

/* Says why the element at @offset was skipped. */
static void element_failed(GlReader *reader, const char *name, guint64 offset)
{
    const char *why = reader->xml_message != NULL ? reader->xml_message : "unknown parse error";
    switch (reader->xml_code) {
    case XML_ERR_ENTITY_LOOP:
    case XML_ERR_INTERNAL_ERROR:  /* "Excessive depth in document" */
    case XML_ERR_NO_MEMORY:       /* "xmlSAX2Characters: huge text node" */
        add_problem(reader, GL_ERROR_LIMIT, "the <%s> at byte %" G_GUINT64_FORMAT
                    " was refused: %s", name, offset, why);
        return;
    default:
        break;
    }
    add_problem(reader, GL_ERROR_MALFORMED, "the <%s> at byte %" G_GUINT64_FORMAT
                " is not well-formed (%s) and was skipped", name, offset, why);
}

/* Returns: TRUE if @name is an element the reader turns into a record. */
static gboolean is_record_element(const char *name)
{
    return strcmp(name, "error") == 0 || strcmp(name, "fatal_signal") == 0;
}

static gboolean is_header_element(const char *name)
{
    static const char *const used[] = {
        "protocolversion", "protocoltool", "tool", "pid", "ppid", "args", "status",
        "clientmsg", "suppcounts", NULL,
    };
    for (const char *const *u = used; *u != NULL; u++)
        if (strcmp(name, *u) == 0)
            return TRUE;
    return FALSE;
}

/* Hands @record out: where it stands in the run, and the counts. */
static GlRecord *hand_out(GlReader *reader, GlRecord *record)
{
    GlDocument *doc = &reader->doc;
    record->pid = doc->pid;
    record->marker = gl_record_intern(record, doc->marker);
    record->at_exit = doc->finished;
    if (strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0)
        doc->fatal_signal = TRUE;
    doc->n_errors++;
    return record;
}

/* Parses one element of a document: a record for gl_reader_next(), or
 * what the document says of its process (NULL).
 * Returns: (transfer full) (nullable). */
static GlRecord *read_element(GlReader *reader, const char *name, const char *data, gsize length,
                              guint64 offset)
{
    if (is_record_element(name)) {
        GlRecord *record = NULL;
        g_ptr_array_set_size(reader->bad_counts, 0);
        gboolean parsed = parse_element(reader, data, length, read_error_into, &record);
        for (guint i = 0; parsed && i < reader->bad_counts->len; i++)
            add_problem(reader, GL_ERROR_MALFORMED, "the <%s> at byte %" G_GUINT64_FORMAT
                        " has %s", name, offset,
                        (const char *) g_ptr_array_index(reader->bad_counts, i));
        g_ptr_array_set_size(reader->bad_counts, 0);
        if (parsed)
            return hand_out(reader, record);
        element_failed(reader, name, offset);
        return NULL;
    }
    if (is_header_element(name)) {
        if (!parse_element(reader, data, length, read_header_into, NULL)) {
            element_failed(reader, name, offset);
        } else if ((strcmp(name, "protocoltool") == 0 || strcmp(name, "tool") == 0) &&
                   g_strcmp0(reader->doc.tool, "memcheck") != 0) {
            add_problem(reader, GL_ERROR_WRONG_TOOL, "Valgrind %s output, not memcheck: gemleak "
                        "reads what valgrind --tool=memcheck writes", reader->doc.tool);
            reader->ignoring = TRUE;
        }
    }
    return NULL;
}

/* Returns: the end (just past the end tag) of the element named @name
 * that starts at @from in @data, counting nested ones; 0 when it does not
 * end there. */
static gsize element_end(const char *data, gsize length, gsize from, const char *name)
{
    gsize name_len = strlen(name);
    guint depth = 0;
    for (gsize i = from; i + 1 < length; i++) {
        if (data[i] != '<')
            continue;
        gboolean closing = data[i + 1] == '/';
        gsize at = i + 1 + (closing ? 1 : 0);
        if (length - at <= name_len || memcmp(data + at, name, name_len) != 0)
            continue;
        char after = data[at + name_len];
        if (after != '>' && after != '/' && !g_ascii_isspace(after))
            continue;
        const char *gt = memchr(data + at, '>', length - at);
        if (gt == NULL)
            return 0;
        if (closing) {
            if (depth == 0 || --depth == 0)
                return (gsize) (gt - data) + 1;
        } else if (gt[-1] != '/') {
            depth++;
        }
        i = (gsize) (gt - data);
    }
    return 0;
}

/* An element that holds elements of its own name: two processes wrote
 * into one file at the same time. The inner ones are parsed on their own,
 * and the outer one without them, as far as their bytes allow; each goes
 * to reader->pending. */
static void separate_nested(GlReader *reader, GQueue *pending, const GlPart *part)
{
    const char *data = part->data;
    gsize length = part->length;
    GString *outer = g_string_sized_new(length);
    g_autoptr(GPtrArray) inner = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) offsets = g_array_new(FALSE, FALSE, sizeof(gsize));
    gsize name_len = strlen(part->name);
    gsize copied = 0;
    for (gsize i = 1; i + name_len + 1 < length; i++) {
        if (data[i] != '<' || memcmp(data + i + 1, part->name, name_len) != 0)
            continue;
        char after = data[i + 1 + name_len];
        if (after != '>' && after != '/' && !g_ascii_isspace(after))
            continue;
        gsize end = element_end(data, length, i, part->name);
        if (end == 0 || end >= length)
            break;
        g_string_append_len(outer, data + copied, (gssize) (i - copied));
        g_ptr_array_add(inner, g_strndup(data + i, end - i));
        g_array_append_val(offsets, i);
        copied = end;
        i = end - 1;
    }
    g_string_append_len(outer, data + copied, (gssize) (length - copied));

    GlRecord *record = read_element(reader, part->name, outer->str, outer->len, part->offset);
    if (record != NULL)
        g_queue_push_tail(pending, record);
    for (guint i = 0; i < inner->len; i++) {
        const char *element = g_ptr_array_index(inner, i);
        record = read_element(reader, part->name, element, strlen(element),
                              part->offset + g_array_index(offsets, gsize, i));
        if (record != NULL)
            g_queue_push_tail(pending, record);
    }
    reader->n_separated += inner->len;
    g_string_free(outer, TRUE);
}

/* ---- documents ------------------------------------------------------------------- */

/* A new document: what the last one said of its process is forgotten. */
static void begin_document(GlReader *reader)
{
    GlDocument *doc = &reader->doc;
    guint documents = reader->seen_document ? doc->n_documents + 1 : 0;
    guint n_errors = doc->n_errors;
    gboolean fatal = doc->fatal_signal;
    GPtrArray *argv = doc->argv;
    GPtrArray *vargv = doc->vargv;
    g_ptr_array_set_size(argv, 0);
    g_ptr_array_set_size(vargv, 0);
    memset(doc, 0, sizeof *doc);
    doc->argv = argv;
    doc->vargv = vargv;
    doc->n_documents = documents;
    doc->n_errors = n_errors;
    doc->fatal_signal = fatal;
    /* The strings of the document before go too (the records copied theirs). */
    g_string_chunk_clear(reader->doc_strings);
    reader->seen_document = TRUE;
    reader->ignoring = FALSE;
}

static void say_cut(GlReader *reader, const GlPart *part)
{
    const GlDocument *doc = &reader->doc;
    if (part->by_document)
        add_problem(reader, GL_ERROR_TRUNCATED, "a document stops at byte %" G_GUINT64_FORMAT
                    " where another begins, after %u complete errors in all: the process "
                    "that wrote it stopped before it finished (killed?)", part->offset,
                    doc->n_errors);
    else if (doc->n_errors == 0 && !doc->started)
        add_problem(reader, GL_ERROR_TRUNCATED, "truncated before its first error: Valgrind "
                    "stopped before it finished writing (killed, or out of disk?)");
    else
        add_problem(reader, GL_ERROR_TRUNCATED, "truncated at byte %" G_GUINT64_FORMAT
                    " after %u complete errors: Valgrind stopped before it finished writing "
                    "(killed, or out of disk?)", part->offset, doc->n_errors);
}

/* The notes that sum up the input, once it is read. */
static void finish(GlReader *reader)
{
    reader->finished = TRUE;
    /* Elements of one process inside another's, or after its end: what
     * could not be read is then most likely that, whatever broke first. */
    for (guint i = 0; reader->shared && i < reader->problems->len; i++) {
        GError *problem = g_ptr_array_index(reader->problems, i);
        if (problem->code != GL_ERROR_MALFORMED && problem->code != GL_ERROR_TRUNCATED)
            continue;
        char *message = g_strdup_printf("%s; " SHARED_FILE_ADVICE, problem->message);
        g_free(problem->message);
        problem->message = message;
    }
    const GlDocument *doc = &reader->doc;
    if (doc->n_documents > 0)
        add_note(reader, "holds %u Valgrind documents, one after another (files concatenated, "
                 "or several processes wrote one file); all were read", doc->n_documents + 1);
    if (reader->n_repaired > 0)
        add_note(reader, "%u element%s held bytes that are not UTF-8 or not allowed in XML "
                 "(Valgrind copies command lines, paths and names as they are): they were "
                 "replaced by U+FFFD and the elements read", reader->n_repaired,
                 reader->n_repaired == 1 ? "" : "s");
    if (reader->n_separated > 0)
        add_note(reader, "%u error%s written into another process's error were separated from "
                 "it: " SHARED_FILE_ADVICE, reader->n_separated, reader->n_separated == 1 ? "" : "s");
}

/* Acts on one part of the input.
 * Returns: (transfer full) (nullable): a record to hand out. */
static GlRecord *take_part(GlReader *reader, GQueue *pending, const GlPart *part)
{
    GlDocument *doc = &reader->doc;
    switch (part->kind) {
    case GL_PART_DOCUMENT:
        if (strcmp(part->name, ROOT) != 0) {
            if (!reader->seen_document) {
                add_problem(reader, GL_ERROR_NOT_VALGRIND,
                            "XML, but not Valgrind output (its root element is <%s>)", part->name);
                reader->finished = TRUE;
                return NULL;
            }
            add_problem(reader, GL_ERROR_MALFORMED, "a document with the root element <%s> at "
                        "byte %" G_GUINT64_FORMAT " is not Valgrind's: skipped", part->name,
                        part->offset);
            reader->ignoring = TRUE;
            return NULL;
        }
        begin_document(reader);
        return NULL;
    case GL_PART_ELEMENT:
        if (reader->ignoring)
            return NULL;
        if (part->outside_root && !doc->interleaved) {
            doc->interleaved = TRUE;
            reader->shared = TRUE;
            add_note(reader, "errors follow the end of a document at byte %" G_GUINT64_FORMAT
                     ", and were read: " SHARED_FILE_ADVICE, part->offset);
        }
        if (part->nested && is_record_element(part->name)) {
            reader->shared = TRUE;
            separate_nested(reader, pending, part);
            return NULL;
        }
        return read_element(reader, part->name, part->data, part->length, part->offset);
    case GL_PART_DOCUMENT_END:
        if (!reader->ignoring)
            doc->complete = TRUE;
        return NULL;
    case GL_PART_CUT:
        if (!reader->ignoring)
            say_cut(reader, part);
        return NULL;
    case GL_PART_OVERSIZED:
        if (!reader->ignoring && part->name != NULL &&
            (is_record_element(part->name) || is_header_element(part->name)))
            add_problem(reader, GL_ERROR_LIMIT, "the <%s> at byte %" G_GUINT64_FORMAT " is larger "
                        "than %u MiB and was refused (Valgrind's largest are a few hundred KiB)",
                        part->name, part->offset, (guint) (GL_SPLITTER_MAX_ELEMENT >> 20));
        return NULL;
    case GL_PART_TEXT:
        if (!reader->seen_document) {
            add_problem(reader, GL_ERROR_NOT_XML, "not XML (text where an element should be, "
                        "at byte %" G_GUINT64_FORMAT ")", part->offset);
            reader->finished = TRUE;
        } else if (!reader->text_reported) {
            /* Valgrind writes nothing between its elements: only another
             * process writing into the same file does. */
            reader->text_reported = TRUE;
            reader->shared = TRUE;
            add_problem(reader, GL_ERROR_MALFORMED, "text or markup out of place at byte %"
                        G_GUINT64_FORMAT, part->offset);
        }
        return NULL;
    case GL_PART_DOCTYPE:
        add_problem(reader, GL_ERROR_NOT_VALGRIND,
                    "has a DOCTYPE, which Valgrind never writes: refused (gemleak reads no "
                    "DTD and expands no entity)");
        reader->finished = TRUE;
        return NULL;
    case GL_PART_END:
        if (!reader->seen_document && reader->problems->len == 0) {
            /* An XML declaration alone is how Valgrind starts a file. */
            if (!gl_splitter_saw_markup(reader->splitter))
                add_problem(reader, GL_ERROR_EMPTY, "empty file: Valgrind wrote nothing (was it "
                            "killed before it started?)");
            else
                add_problem(reader, GL_ERROR_TRUNCATED, "truncated before its first error: "
                            "Valgrind stopped before it finished writing (killed, or out of "
                            "disk?)");
        }
        finish(reader);
        return NULL;
    }
    return NULL;
}

GlRecord *gl_reader_next(GlReader *reader, GError **error)
{
    g_return_val_if_fail(reader != NULL, NULL);
    for (;;) {
        if (!g_queue_is_empty(&reader->pending))
            return g_queue_pop_head(&reader->pending);
        if (reader->finished)
            break;
        GlPart part;
        g_autoptr(GError) local = NULL;
        if (!gl_splitter_next(reader->splitter, &part, &local)) {
            add_problem(reader, GL_ERROR_IO, "%s", local->message);
            finish(reader);
            break;
        }
        GlRecord *record = take_part(reader, &reader->pending, &part);
        if (record != NULL)
            return record;
    }
    if (error != NULL && reader->problems->len > 0)
        *error = g_error_copy(g_ptr_array_index(reader->problems, 0));
    return NULL;
}
