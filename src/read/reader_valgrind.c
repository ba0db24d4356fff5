/* The Valgrind memcheck XML protocol (4 to 6): an <error> or <fatal_signal>
 * element into a GlRecord (frames, stacks, auxiliary texts, suppressions);
 * what the document's other elements say of its process is
 * reader_document.c's. libxml2 stands on the element; the document
 * handling around it (which elements, repair, cuts) is reader.c's and
 * reader_elements.c's. */
#include "gemleak/base/xml.h"
#include "reader_int.h"
#include "gemleak/base/protocol.h"

#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

/* ---- walking the tree ---------------------------------------------------- */

/* Moves to the next child element of the element at @depth, which the
 * caller has entered and whose earlier children it consumed in full.
 * Returns: 1 at a child (its local name in *name), 0 at the parent's end,
 * -1 when the parse failed. */
int gl_vg_next_child(GlReader *reader, int depth, const xmlChar **name)
{
    for (;;) {
        int ret = gl_xml()->TextReaderRead(reader->xml);
        if (ret != 1)
            return -1;  /* the end of input inside an element is an error too */
        int type = gl_xml()->TextReaderNodeType(reader->xml);
        if (type == XML_READER_TYPE_ELEMENT) {
            *name = gl_xml()->TextReaderConstLocalName(reader->xml);
            return 1;
        }
        if (type == XML_READER_TYPE_END_ELEMENT && gl_xml()->TextReaderDepth(reader->xml) == depth)
            return 0;
    }
}

/* Consumes the element the reader is on, with everything inside it. */
gboolean gl_vg_skip_element(GlReader *reader)
{
    if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    for (;;) {
        if (gl_xml()->TextReaderRead(reader->xml) != 1)
            return FALSE;
        if (gl_xml()->TextReaderNodeType(reader->xml) == XML_READER_TYPE_END_ELEMENT &&
            gl_xml()->TextReaderDepth(reader->xml) == depth)
            return TRUE;
    }
}

/* Reads the text directly inside the current element into reader->text
 * (text and CDATA, up to MAX_TEXT bytes) and consumes the element. */
gboolean gl_vg_read_text(GlReader *reader)
{
    g_string_truncate(reader->text, 0);
    if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    for (;;) {
        if (gl_xml()->TextReaderRead(reader->xml) != 1)
            return FALSE;
        switch (gl_xml()->TextReaderNodeType(reader->xml)) {
        case XML_READER_TYPE_TEXT:
        case XML_READER_TYPE_CDATA:
        case XML_READER_TYPE_WHITESPACE:
        case XML_READER_TYPE_SIGNIFICANT_WHITESPACE: {
            const char *value = (const char *) gl_xml()->TextReaderConstValue(reader->xml);
            if (value != NULL && reader->text->len < MAX_TEXT)
                g_string_append_len(reader->text, value,
                                    (gssize) MIN(strlen(value), MAX_TEXT - reader->text->len));
            break;
        }
        case XML_READER_TYPE_ELEMENT:
            if (!gl_vg_skip_element(reader))
                return FALSE;
            break;
        case XML_READER_TYPE_END_ELEMENT:
            if (gl_xml()->TextReaderDepth(reader->xml) == depth)
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
    if (!gl_vg_read_text(reader))
        return FALSE;
    *out = gl_record_intern(record, reader->text->str);
    return TRUE;
}

gboolean gl_vg_read_doc_text(GlReader *reader, const char **out)
{
    if (!gl_vg_read_text(reader))
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

gboolean gl_vg_read_u64(GlReader *reader, guint64 *out)
{
    if (!gl_vg_read_text(reader))
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
    if (!gl_vg_read_text(reader))
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

gboolean gl_vg_read_i64(GlReader *reader, gint64 *out)
{
    if (!gl_vg_read_text(reader))
        return FALSE;
    const char *text = reader->text->str;
    while (g_ascii_isspace(*text))
        text++;
    gboolean negative = *text == '-';
    gint64 magnitude = (gint64) MIN(parse_number(negative ? text + 1 : text), (guint64) G_MAXINT64);
    *out = negative ? -magnitude : magnitude;
    return TRUE;
}

gboolean gl_vg_read_int(GlReader *reader, gint *out)
{
    gint64 value = 0;
    if (!gl_vg_read_i64(reader, &value))
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
    if (!gl_vg_read_text(reader))
        return FALSE;
    *out = previous != NULL && strcmp(previous, reader->text->str) == 0
               ? previous : gl_record_intern(record, reader->text->str);
    return TRUE;
}

static gboolean read_frame(GlReader *reader, GlRecord *record, GlFrame *frame,
                           const GlFrame *previous)
{
    const Names *n = &reader->n;
    if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
        gboolean ok;
        if (name == n->ip) {
            ok = gl_vg_read_u64(reader, &frame->ip);
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
            ok = gl_vg_read_i64(reader, &line);
            frame->line = (guint) CLAMP(line, 0, G_MAXUINT);
        } else {
            ok = gl_vg_skip_element(reader);
        }
        if (!ok)
            return FALSE;
    }
    return rc == 0;
}

static gboolean read_stack(GlReader *reader, GlRecord *record, GlStack *stack)
{
    g_array_set_size(reader->frames, 0);
    if (!gl_xml()->TextReaderIsEmptyElement(reader->xml)) {
        int depth = gl_xml()->TextReaderDepth(reader->xml);
        const xmlChar *name;
        int rc;
        while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
            gboolean ok;
            if (name == reader->n.frame) {
                GlFrame frame = { 0 };
                const GlFrame *previous = reader->frames->len > 0
                    ? &g_array_index(reader->frames, GlFrame, reader->frames->len - 1) : NULL;
                ok = read_frame(reader, record, &frame, previous);
                g_array_append_val(reader->frames, frame);
            } else {
                ok = gl_vg_skip_element(reader);
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
    if (gl_xml()->TextReaderIsEmptyElement(reader->xml))
        return TRUE;
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    const xmlChar *name;
    int rc;
    while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
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
            ok = gl_vg_skip_element(reader);
        }
        if (!ok)
            return FALSE;
    }
    return rc == 0;
}

/* Reads " (+D)" or " (-D)" at *@p, after a count of a changed leak
 * check's text, into @delta, moving *@p past it.
 * Returns: FALSE when there is none. */
static gboolean read_delta(const char **p, gint64 *delta)
{
    const char *s = *p;
    if (!g_str_has_prefix(s, " (") || (s[2] != '+' && s[2] != '-') || !g_ascii_isdigit(s[3]))
        return FALSE;
    /* Valgrind groups thousands: "1,704 (+1,024) bytes" */
    guint64 n = 0;
    const char *c = s + 3;
    for (; g_ascii_isdigit(*c) || *c == ','; c++)
        if (*c != ',')
            n = n > (guint64) G_MAXINT64 / 10 ? (guint64) G_MAXINT64 : n * 10 + (guint64) (*c - '0');
    if (*c != ')')
        return FALSE;
    n = MIN(n, (guint64) G_MAXINT64);
    *delta = s[2] == '-' ? -(gint64) n : (gint64) n;
    *p = c + 1;
    return TRUE;
}

/* A loss record of a changed leak check (VALGRIND_DO_CHANGED_LEAK_CHECK,
 * --growth's measure under Valgrind) says what changed since the check
 * before: "64 (+64) bytes in 1 (+1) blocks are still reachable in ...",
 * "0 (-100) bytes in 0 (-1) blocks ...", "1,704 (+1,024) bytes in 2 (+1)
 * blocks ...", with indirect bytes "152 (+152)
 * (56 (+56) direct, 96 (+96) indirect) bytes in 1 (+1) blocks ..." (as
 * real Valgrind 3.19 output in fixtures/xml/growth-changed-check.xml
 * shows). Any other check's text has no change. */
static void read_change(GlRecord *record)
{
    const char *p = record->what;
    gint64 bytes = 0, blocks = 0;
    if (p == NULL || !g_ascii_isdigit(*p))
        return;
    while (g_ascii_isdigit(*p) || *p == ',')
        p++;
    if (!read_delta(&p, &bytes))
        return;
    /* Its indirect bytes are other loss records' (theirs, with their own
     * changes): what grew here is the direct part. */
    if (g_str_has_prefix(p, " (") && g_ascii_isdigit(p[2])) {
        const char *direct = p + 2;
        while (g_ascii_isdigit(*direct) || *direct == ',')
            direct++;
        gint64 direct_bytes = 0;
        if (read_delta(&direct, &direct_bytes) && g_str_has_prefix(direct, " direct"))
            bytes = direct_bytes;
    }
    const char *in = strstr(p, " bytes in ");
    if (in == NULL)
        return;
    p = in + strlen(" bytes in ");
    if (!g_ascii_isdigit(*p))
        return;
    while (g_ascii_isdigit(*p) || *p == ',')
        p++;
    if (!read_delta(&p, &blocks))
        return;
    record->has_change = TRUE;
    record->change_bytes = bytes;
    record->change_blocks = blocks;
}

static gboolean read_suppression(GlReader *reader, GlRecord *record)
{
    const Names *n = &reader->n;
    GlSuppression *supp = g_new0(GlSuppression, 1);
    g_autoptr(GPtrArray) frames = g_ptr_array_new();
    record->suppression = supp;
    if (!gl_xml()->TextReaderIsEmptyElement(reader->xml)) {
        int depth = gl_xml()->TextReaderDepth(reader->xml);
        const xmlChar *name;
        int rc;
        while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
            gboolean ok = TRUE;
            if (name == n->sname) {
                ok = read_record_text(reader, record, &supp->name);
            } else if (name == n->skind) {
                ok = read_record_text(reader, record, &supp->kind);
            } else if (name == n->skaux) {
                ok = read_record_text(reader, record, &supp->aux);
            } else if (name == n->rawtext) {
                ok = read_record_text(reader, record, &supp->rawtext);
            } else if (name == n->sframe && !gl_xml()->TextReaderIsEmptyElement(reader->xml)) {
                int sdepth = gl_xml()->TextReaderDepth(reader->xml);
                const xmlChar *sname;
                int src;
                while (ok && (src = gl_vg_next_child(reader, sdepth, &sname)) == 1) {
                    if (sname == n->fun || sname == n->obj) {
                        ok = gl_vg_read_text(reader);
                        g_autofree char *line = g_strconcat(sname == n->fun ? "fun:" : "obj:",
                                                            reader->text->str, NULL);
                        g_ptr_array_add(frames, (gpointer) gl_record_intern(record, line));
                    } else {
                        ok = gl_vg_skip_element(reader);
                    }
                }
                ok = ok && src == 0;
            } else {
                ok = gl_vg_skip_element(reader);
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

GlRecord *gl_vg_read_error(GlReader *reader)
{
    const Names *n = &reader->n;
    g_autoptr(GlRecord) record = gl_record_new();
    int depth = gl_xml()->TextReaderDepth(reader->xml);
    gboolean have_stack = FALSE;
    const xmlChar *name;
    int rc = gl_xml()->TextReaderIsEmptyElement(reader->xml) ? 0 : 1;
    while (rc == 1 && (rc = gl_vg_next_child(reader, depth, &name)) == 1) {
        gboolean ok;
        if (name == n->unique) {
            ok = gl_vg_read_u64(reader, &record->unique);
        } else if (name == n->tid) {
            ok = gl_vg_read_int(reader, &record->tid);
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
            ok = gl_vg_read_int(reader, &record->fd);
        } else if (name == n->path) {
            ok = read_record_text(reader, record, &record->fd_path);
        } else {
            ok = gl_vg_skip_element(reader);
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
    if (record->leak_kind != GL_LEAK_NONE)
        read_change(record);
    return g_steal_pointer(&record);
}

GlRecord *gl_vg_read_fatal_signal(GlReader *reader)
{
    const Names *n = &reader->n;
    g_autoptr(GlRecord) record = gl_record_new();
    record->kind = gl_record_intern(record, GL_KIND_FATAL_SIGNAL);
    gint signo = 0;
    const char *signame = NULL;
    if (!gl_xml()->TextReaderIsEmptyElement(reader->xml)) {
        int depth = gl_xml()->TextReaderDepth(reader->xml);
        const xmlChar *name;
        int rc;
        while ((rc = gl_vg_next_child(reader, depth, &name)) == 1) {
            gboolean ok;
            if (name == n->tid)
                ok = gl_vg_read_int(reader, &record->tid);
            else if (name == n->threadname)
                ok = read_record_text(reader, record, &record->threadname);
            else if (name == n->signo)
                ok = gl_vg_read_int(reader, &signo);
            else if (name == n->signame)
                ok = read_record_text(reader, record, &signame);
            else if (name == n->stack && record->stack.n_frames == 0)
                ok = read_stack(reader, record, &record->stack);
            else
                ok = gl_vg_skip_element(reader);
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
