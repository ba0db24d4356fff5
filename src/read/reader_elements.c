/* One element's bytes to what it says: libxml2 pointed at them (retried
 * once with its bytes made valid UTF-8), an element recovered from several
 * processes' interleaved writes, and the record handed out. */
#include "gemleak/base/xml.h"
#include "reader_int.h"
#include "gemleak/base/protocol.h"

#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

/* Returns: (transfer full): @message on one line, without libxml2's
 * newlines. */
char *gl_reader_one_line(const char *message)
{
    char *line = g_strstrip(g_strdup(message != NULL ? message : "unknown error"));
    for (char *c = line; *c != '\0'; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    return line;
}

void gl_reader_add_problem(GlReader *reader, GlErrorCode code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_autofree char *line = gl_reader_one_line(message);
    g_autofree char *shown = g_utf8_make_valid(reader->name, -1);
    g_ptr_array_add(reader->problems, g_error_new(GL_ERROR, code, "%s: %s", shown, line));
}

static void on_xml_error(void *context, xmlErrorPtr error)
{
    GlReader *reader = context;
    if (error == NULL || error->level < XML_ERR_ERROR || reader->xml_message != NULL)
        return;
    reader->xml_code = error->code;
    reader->xml_message = gl_reader_one_line(error->message);
}

static void intern_names(GlReader *reader)
{
    Names *n = &reader->n;
#define NAME(field) n->field = gl_xml()->TextReaderConstString(reader->xml, BAD_CAST #field)
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


/* ---- elements ------------------------------------------------------------------ */

/* Points libxml2 at @data and moves it to the element's start.
 * Returns: FALSE when not even that parses. */
static gboolean begin_element(GlReader *reader, const char *data, gsize length)
{
    g_clear_pointer(&reader->xml_message, g_free);
    reader->xml_code = 0;
    if (reader->xml == NULL) {
        reader->xml = gl_xml()->ReaderForMemory(data, (int) length, reader->name, "UTF-8",
                                         READER_OPTIONS);
        if (reader->xml == NULL)
            return FALSE;
        intern_names(reader);
    } else if (gl_xml()->ReaderNewMemory(reader->xml, data, (int) length, reader->name, "UTF-8",
                                  READER_OPTIONS) != 0) {
        return FALSE;
    } else if (gl_xml()->TextReaderConstString(reader->xml, BAD_CAST "error") != reader->n.error) {
        intern_names(reader);  /* a new dictionary: the names are new pointers */
    }
    gl_xml()->TextReaderSetStructuredErrorHandler(reader->xml, on_xml_error, reader);
    for (;;) {
        if (gl_xml()->TextReaderRead(reader->xml) != 1)
            return FALSE;
        switch (gl_xml()->TextReaderNodeType(reader->xml)) {
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
    *record = gl_xml()->TextReaderConstLocalName(reader->xml) == reader->n.fatal_signal
                  ? gl_vg_read_fatal_signal(reader) : gl_vg_read_error(reader);
    return *record != NULL;
}

/* Every other element the reader uses says something of the process. */
static gboolean read_header_into(GlReader *reader, gpointer result)
{
    (void) result;
    const Names *n = &reader->n;
    GlProcess *doc = &reader->doc;
    const xmlChar *name = gl_xml()->TextReaderConstLocalName(reader->xml);
    if (name == n->protocolversion)
        return gl_vg_read_int(reader, &doc->protocol_version);
    if (name == n->protocoltool || name == n->tool)
        return gl_vg_read_doc_text(reader, &doc->tool);
    if (name == n->pid)
        return gl_vg_read_i64(reader, &doc->pid);
    if (name == n->ppid)
        return gl_vg_read_i64(reader, &doc->ppid);
    if (name == n->args)
        return gl_vg_read_args(reader);
    if (name == n->status)
        return gl_vg_read_child_texts(reader, n->state, gl_vg_take_state);
    if (name == n->clientmsg)
        return gl_vg_read_child_texts(reader, n->text, gl_vg_take_marker);
    if (name == n->suppcounts)
        return gl_vg_read_suppcounts(reader);
    return gl_vg_skip_element(reader);
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
        gl_reader_add_problem(reader, GL_ERROR_LIMIT, "the <%s> at byte %" G_GUINT64_FORMAT
                    " was refused: %s", name, offset, why);
        return;
    default:
        break;
    }
    gl_reader_add_problem(reader, GL_ERROR_MALFORMED, "the <%s> at byte %" G_GUINT64_FORMAT
                " is not well-formed (%s) and was skipped", name, offset, why);
}

/* Returns: TRUE if @name is an element the reader turns into a record. */
gboolean gl_reader_is_record_element(const char *name)
{
    return strcmp(name, "error") == 0 || strcmp(name, "fatal_signal") == 0;
}

gboolean gl_reader_is_header_element(const char *name)
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
    GlProcess *doc = &reader->doc;
    record->pid = doc->pid;
    record->marker = gl_record_intern(record, doc->marker);
    /* After gemleak's "live" marker: the check the helper made while Ruby
     * still ran (before exec), its memory all there. */
    record->while_running = gl_reader_marker_is(reader, GL_PROTO_MARKER_LIVE);
    record->at_exit = doc->finished;
    if (strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0)
        doc->fatal_signal = TRUE;
    doc->n_errors++;
    return record;
}

/* Parses one element of a document: a record for gl_reader_next(), or
 * what the document says of its process (NULL).
 * Returns: (transfer full) (nullable). */
GlRecord *gl_reader_read_element(GlReader *reader, const char *name, const char *data, gsize length,
                              guint64 offset)
{
    reader->exec_marker_last = FALSE;
    if (gl_reader_is_record_element(name)) {
        GlRecord *record = NULL;
        g_ptr_array_set_size(reader->bad_counts, 0);
        gboolean parsed = parse_element(reader, data, length, read_error_into, &record);
        for (guint i = 0; parsed && i < reader->bad_counts->len; i++)
            gl_reader_add_problem(reader, GL_ERROR_MALFORMED, "the <%s> at byte %" G_GUINT64_FORMAT
                        " has %s", name, offset,
                        (const char *) g_ptr_array_index(reader->bad_counts, i));
        g_ptr_array_set_size(reader->bad_counts, 0);
        if (parsed)
            return hand_out(reader, record);
        element_failed(reader, name, offset);
        return NULL;
    }
    if (gl_reader_is_header_element(name)) {
        if (!parse_element(reader, data, length, read_header_into, NULL)) {
            element_failed(reader, name, offset);
        } else if ((strcmp(name, "protocoltool") == 0 || strcmp(name, "tool") == 0) &&
                   g_strcmp0(reader->doc.tool, "memcheck") != 0) {
            gl_reader_add_problem(reader, GL_ERROR_WRONG_TOOL, "Valgrind %s output, not memcheck: gemleak "
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
void gl_reader_separate_nested(GlReader *reader, GQueue *pending, const GlPart *part)
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

    GlRecord *record = gl_reader_read_element(reader, part->name, outer->str, outer->len, part->offset);
    if (record != NULL)
        g_queue_push_tail(pending, record);
    for (guint i = 0; i < inner->len; i++) {
        const char *element = g_ptr_array_index(inner, i);
        record = gl_reader_read_element(reader, part->name, element, strlen(element),
                              part->offset + g_array_index(offsets, gsize, i));
        if (record != NULL)
            g_queue_push_tail(pending, record);
    }
    reader->n_separated += inner->len;
    g_string_free(outer, TRUE);
}

