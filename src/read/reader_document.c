/* What a Valgrind document's elements other than its errors say of its
 * process (<args>, <status>, <clientmsg>, <suppcounts>): the facts of
 * GlProcess that Valgrind's XML gives. */
#include "gemleak/base/xml.h"
#include "reader_int.h"
#include "gemleak/base/protocol.h"

#include <string.h>

#include <libxml/xmlreader.h>

/* ---- the document -------------------------------------------------------- */

gboolean gl_vg_read_args(GlReader *reader)
{
    const Names *n = &reader->n;
    /* Read again after a repair: from the start. */
    g_ptr_array_set_size(reader->doc.argv, 0);
    g_ptr_array_set_size(reader->doc.vargv, 0);
    reader->doc.exe = NULL;
    if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
        if (name != n->vargv && name != n->argv) {
            if (!gl_vg_skip_element(reader))
                return FALSE;
            continue;
        }
        gboolean client = name == n->argv;
        GPtrArray *list = client ? reader->doc.argv : reader->doc.vargv;
        if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
            continue;
        int adepth = gl_xml()->TextReaderDepth(reader->xml);
        const xmlChar *aname;
        int arc;
        while ((arc = gl_vg_next_child(reader, adepth, &aname)) == 1) {
            const char *value = NULL;
            if (aname == n->exe || aname == n->arg) {
                if (!gl_vg_read_doc_text(reader, &value))
                    return FALSE;
                if (aname == n->exe && client)
                    reader->doc.exe = value;
                else if (list->len < MAX_ARGS)
                    g_ptr_array_add(list, (gpointer) value);
            } else if (!gl_vg_skip_element(reader)) {
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
gboolean gl_vg_read_child_texts(GlReader *reader, const xmlChar *child,
                                 void (*take)(GlReader *reader))
{
    if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
        if (name == child) {
            if (!gl_vg_read_text(reader))
                return FALSE;
            take(reader);
        } else if (!gl_vg_skip_element(reader)) {
            return FALSE;
        }
    }
    return rc == 0;
}

/* <status><state>RUNNING|FINISHED</state>...</status> */
void gl_vg_take_state(GlReader *reader)
{
    g_strstrip(reader->text->str);
    if (strcmp(reader->text->str, "RUNNING") == 0)
        reader->doc.started = TRUE;
    else if (strcmp(reader->text->str, "FINISHED") == 0)
        reader->doc.finished = TRUE;
}

gboolean gl_reader_marker_is(const GlReader *reader, const char *word)
{
    const char *marker = reader->doc.marker;
    if (reader->marker_prefix == NULL || marker == NULL ||
        !g_str_has_prefix(marker, reader->marker_prefix))
        return FALSE;
    const char *rest = marker + strlen(reader->marker_prefix);
    gsize length = strlen(word);
    /* VALGRIND_PRINTF's text comes padded with blanks */
    return strncmp(rest, word, length) == 0 && rest[length + strspn(rest + length, " \t\n")] == '\0';
}

/* <clientmsg><text>gemleak:...</text>...</clientmsg> */
void gl_vg_take_marker(GlReader *reader)
{
    if (reader->marker_prefix == NULL ||
        g_str_has_prefix(reader->text->str, reader->marker_prefix)) {
        g_string_assign(reader->marker, reader->text->str);
        reader->doc.marker = reader->marker->str;
        gl_process_note_marker(&reader->doc, reader->doc.marker);
        reader->exec_marker_last = gl_reader_marker_is(reader, GL_PROTO_MARKER_EXEC);
    }
}

/* <suppcounts><pair><count>N</count><name>NAME</name></pair>...</suppcounts> */
gboolean gl_vg_read_suppcounts(GlReader *reader)
{
    const Names *n = &reader->n;
    if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
        if (name != n->pair || gl_xml()->TextReaderIsEmptyElement(reader->xml)) {
            if (!gl_vg_skip_element(reader))
                return FALSE;
            continue;
        }
        guint64 count = 0;
        g_autofree char *supp = NULL;
        int pdepth = gl_xml()->TextReaderDepth(reader->xml);
        const xmlChar *pname;
        int prc;
        while ((prc = gl_vg_next_child(reader, pdepth, &pname)) == 1) {
            gboolean ok;
            if (pname == n->count) {
                ok = gl_vg_read_u64(reader, &count);
            } else if (pname == n->name) {
                ok = gl_vg_read_text(reader);
                g_free(supp);
                supp = g_strdup(reader->text->str);
            } else {
                ok = gl_vg_skip_element(reader);
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

