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
#include "gemleak/base/xml.h"
#include "gemleak/read/reader.h"
#include "reader_int.h"
#include "input_int.h"
#include "gemleak/base/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <libxml/parser.h>
#include <libxml/xmlreader.h>
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
    gl_xml()->InitParser();
    gl_xml()->SetExternalEntityLoader(refuse_external_entity);
    return NULL;
}

void gl_reader_global_init(void)
{
    static GOnce once = G_ONCE_INIT;
    g_once(&once, global_init_once, NULL);
}

static GlReader *reader_new(const char *name, int owned_fd, GlSplitter *splitter)
{
    gl_reader_global_init();
    gl_xml()->SetGenericErrorFunc(NULL, ignore_generic_error);

    GlReader *reader = g_new0(GlReader, 1);
    reader->name = g_strdup(name);
    reader->owned_fd = owned_fd;
    reader->splitter = splitter;
    reader->doc_strings = g_string_chunk_new(512);
    reader->marker = g_string_new(NULL);
    reader->doc.argv = g_ptr_array_new();
    reader->doc.vargv = g_ptr_array_new();
    reader->doc.stands_for = 1;
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
        gl_xml()->FreeTextReader(reader->xml);
    gl_splitter_free(reader->splitter);
    if (reader->owned_fd >= 0)
        close(reader->owned_fd);
    g_ptr_array_unref(reader->doc.argv);
    g_ptr_array_unref(reader->doc.vargv);
    if (reader->doc.test_order != NULL)
        g_hash_table_unref(reader->doc.test_order);
    if (reader->doc.growth_markers != NULL)
        g_ptr_array_unref(reader->doc.growth_markers);
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

const GlProcess *gl_reader_process(const GlReader *reader)
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

/* ---- problems and notes ------------------------------------------------------ */

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

/* ---- documents ------------------------------------------------------------------- */

/* A new document: what the last one said of its process is forgotten. */
static void begin_document(GlReader *reader)
{
    GlProcess *doc = &reader->doc;
    guint documents = reader->seen_document ? doc->n_documents + 1 : 0;
    guint n_errors = doc->n_errors;
    gboolean fatal = doc->fatal_signal;
    GPtrArray *argv = doc->argv;
    GPtrArray *vargv = doc->vargv;
    g_ptr_array_set_size(argv, 0);
    g_ptr_array_set_size(vargv, 0);
    if (doc->test_order != NULL)
        g_hash_table_unref(doc->test_order);
    if (doc->growth_markers != NULL)
        g_ptr_array_unref(doc->growth_markers);
    memset(doc, 0, sizeof *doc);
    doc->argv = argv;
    doc->vargv = vargv;
    doc->n_documents = documents;
    doc->n_errors = n_errors;
    doc->fatal_signal = fatal;
    doc->stands_for = 1;
    /* The strings of the document before go too (the records copied theirs). */
    g_string_chunk_clear(reader->doc_strings);
    reader->seen_document = TRUE;
    reader->ignoring = FALSE;
}

static void say_cut(GlReader *reader, const GlPart *part)
{
    const GlProcess *doc = &reader->doc;
    if (part->by_document)
        gl_reader_add_problem(reader, GL_ERROR_TRUNCATED, "a document stops at byte %" G_GUINT64_FORMAT
                    " where another begins, after %u complete errors in all: the process "
                    "that wrote it stopped before it finished (killed?)", part->offset,
                    doc->n_errors);
    else if (doc->n_errors == 0 && !doc->started)
        gl_reader_add_problem(reader, GL_ERROR_TRUNCATED, "truncated before its first error: Valgrind "
                    "stopped before it finished writing (killed, or out of disk?)");
    else
        gl_reader_add_problem(reader, GL_ERROR_TRUNCATED, "truncated at byte %" G_GUINT64_FORMAT
                    " after %u complete errors: Valgrind stopped before it finished writing "
                    "(killed, or out of disk?)", part->offset, doc->n_errors);
}

/* The notes that sum up the input, once it is read. */
static void finish(GlReader *reader)
{
    reader->finished = TRUE;
    /* Elements of one process inside another's, or after its end: what
     * could not be read is then most likely that, whatever broke first.
     * Known only at the end, so each such problem is replaced by one that
     * says so (a GError is never edited once set). */
    for (guint i = 0; reader->shared && i < reader->problems->len; i++) {
        GError *problem = g_ptr_array_index(reader->problems, i);
        if (problem->code != GL_ERROR_MALFORMED && problem->code != GL_ERROR_TRUNCATED)
            continue;
        g_ptr_array_index(reader->problems, i) =
            g_error_new(problem->domain, problem->code, "%s; " SHARED_FILE_ADVICE, problem->message);
        g_error_free(problem);
    }
    const GlProcess *doc = &reader->doc;
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

/* A document starts: Valgrind's begins, another's is refused or skipped. */
static void take_document(GlReader *reader, const GlPart *part)
{
    if (strcmp(part->name, ROOT) != 0) {
        if (!reader->seen_document) {
            gl_reader_add_problem(reader, GL_ERROR_WRONG_FORMAT,
                        "XML, but not Valgrind output (its root element is <%s>)", part->name);
            reader->finished = TRUE;
            return;
        }
        gl_reader_add_problem(reader, GL_ERROR_MALFORMED, "a document with the root element <%s> at "
                    "byte %" G_GUINT64_FORMAT " is not Valgrind's: skipped", part->name,
                    part->offset);
        reader->ignoring = TRUE;
        return;
    }
    begin_document(reader);
}

/* An element of the document: read, or its nested records separated.
 * Returns: (transfer full) (nullable): a record to hand out. */
static GlRecord *take_element(GlReader *reader, GQueue *pending, const GlPart *part)
{
    GlProcess *doc = &reader->doc;
    if (reader->ignoring)
        return NULL;
    if (part->outside_root && !doc->interleaved) {
        doc->interleaved = TRUE;
        reader->shared = TRUE;
        add_note(reader, "errors follow the end of a document at byte %" G_GUINT64_FORMAT
                 ", and were read: " SHARED_FILE_ADVICE, part->offset);
    }
    if (part->nested && gl_reader_is_record_element(part->name)) {
        reader->shared = TRUE;
        gl_reader_separate_nested(reader, pending, part);
        return NULL;
    }
    return gl_reader_read_element(reader, part->name, part->data, part->length, part->offset);
}

/* Text where an element should be: not XML at the start, else out of place. */
static void take_text(GlReader *reader, const GlPart *part)
{
    if (!reader->seen_document) {
        gl_reader_add_problem(reader, GL_ERROR_NOT_XML, "not XML (text where an element should be, "
                    "at byte %" G_GUINT64_FORMAT ")", part->offset);
        reader->finished = TRUE;
    } else if (!reader->text_reported) {
        /* Valgrind writes nothing between its elements: only another
         * process writing into the same file does. */
        reader->text_reported = TRUE;
        reader->shared = TRUE;
        gl_reader_add_problem(reader, GL_ERROR_MALFORMED, "text or markup out of place at byte %"
                    G_GUINT64_FORMAT, part->offset);
    }
}

/* Acts on one part of the input.
 * Returns: (transfer full) (nullable): a record to hand out. */
static GlRecord *take_part(GlReader *reader, GQueue *pending, const GlPart *part)
{
    GlProcess *doc = &reader->doc;
    switch (part->kind) {
    case GL_PART_DOCUMENT:
        take_document(reader, part);
        return NULL;
    case GL_PART_ELEMENT:
        return take_element(reader, pending, part);
    case GL_PART_DOCUMENT_END:
        if (!reader->ignoring)
            doc->complete = TRUE;
        return NULL;
    case GL_PART_CUT:
        if (!reader->ignoring && reader->exec_marker_last && !part->by_document) {
            /* Checked before it exec'd: nothing more was to come. */
            doc->complete = TRUE;
            doc->exec = TRUE;
        } else if (!reader->ignoring) {
            say_cut(reader, part);
        }
        return NULL;
    case GL_PART_OVERSIZED:
        if (!reader->ignoring && part->name != NULL &&
            (gl_reader_is_record_element(part->name) || gl_reader_is_header_element(part->name)))
            gl_reader_add_problem(reader, GL_ERROR_LIMIT, "the <%s> at byte %" G_GUINT64_FORMAT " is larger "
                        "than %u MiB and was refused (Valgrind's largest are a few hundred KiB)",
                        part->name, part->offset, (guint) (GL_SPLITTER_MAX_ELEMENT >> 20));
        return NULL;
    case GL_PART_TEXT:
        take_text(reader, part);
        return NULL;
    case GL_PART_DOCTYPE:
        gl_reader_add_problem(reader, GL_ERROR_WRONG_FORMAT,
                    "has a DOCTYPE, which Valgrind never writes: refused (gemleak reads no "
                    "DTD and expands no entity)");
        reader->finished = TRUE;
        return NULL;
    case GL_PART_END:
        if (!reader->seen_document && reader->problems->len == 0) {
            /* An XML declaration alone is how Valgrind starts a file. */
            if (!gl_splitter_saw_markup(reader->splitter))
                gl_reader_add_problem(reader, GL_ERROR_EMPTY, "empty file: Valgrind wrote nothing (was it "
                            "killed before it started?)");
            else
                gl_reader_add_problem(reader, GL_ERROR_TRUNCATED, "truncated before its first error: "
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
            gl_reader_add_problem(reader, GL_ERROR_IO, "%s", local->message);
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

/* ---- the input seam (input_int.h) --------------------------------------------- */

static gboolean named_xml(const char *name)
{
    return g_str_has_suffix(name, ".xml") || g_str_has_suffix(name, ".xml.gz");
}

static gpointer open_xml(int fd, const char *data, gsize size, const char *name)
{
    GlReader *reader = fd >= 0 ? reader_new(name, fd, gl_splitter_new_for_fd(fd))
                               : gl_reader_new_for_memory(data != NULL ? data : "", size, name);
    /* gemleak's own client messages are the markers of the records */
    gl_reader_set_marker_prefix(reader, GL_PROTO_MARKER_PREFIX);
    return reader;
}

static GlRecord *next_xml(gpointer state)
{
    return gl_reader_next(state, NULL);
}

static const GlProcess *process_xml(gconstpointer state)
{
    return gl_reader_process(state);
}

static const GPtrArray *problems_xml(gconstpointer state)
{
    return gl_reader_problems(state);
}

static const GPtrArray *notes_xml(gconstpointer state)
{
    return gl_reader_notes(state);
}

static GHashTable *suppressed_xml(gconstpointer state)
{
    return gl_reader_suppression_counts(state);
}

static void free_xml(gpointer state)
{
    gl_reader_free(state);
}

const GlInputFormat gl_input_valgrind_xml = {
    .name = "valgrind-xml",
    .reads = "Valgrind memcheck XML: files, plain or gzip-compressed, directories of\n"
             "%p.xml files, or - for standard input",
    .named = named_xml,
    .detect = NULL,  /* what no other format claims */
    .open = open_xml,
    .next = next_xml,
    .process = process_xml,
    .problems = problems_xml,
    .notes = notes_xml,
    .suppressed = suppressed_xml,
    .free = free_xml,
};
