/* Documents and top-level elements of an XML byte stream (see splitter.h).
 *
 * The scan looks at each '<' once: it tells tags from comments, CDATA
 * sections and processing instructions, and follows an element to the end
 * tag of its own name, counting nested elements of that name. Everything
 * else inside an element is the parser's business. Bytes are dropped once
 * the scan has passed them, so memory holds one element and a read chunk,
 * however many comments or documents the input holds. */
#define _GNU_SOURCE  /* memmem */
#include "gemleak/read/splitter.h"
#include "splitter_int.h"
#include "gemleak/base/errors.h"

#include <string.h>

gboolean gl_splitter_saw_markup(const GlSplitter *splitter)
{
    return splitter->saw_markup;
}

static gboolean is_space(guint8 c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static gboolean ends_name(guint8 c)
{
    return is_space(c) || c == '>' || c == '/';
}

/* TRUE when @p (@avail bytes) starts with @name followed by what ends a
 * name in a tag. */
static gboolean name_at(const guint8 *p, gsize avail, const char *name, gsize name_len)
{
    return name_len > 0 && avail > name_len && memcmp(p, name, name_len) == 0 &&
           ends_name(p[name_len]);
}

/* Returns: the index of the '>' that ends the tag starting at @at (quotes
 * respected), or NONE. */
static gsize tag_end(GlSplitter *s, gsize at, gsize limit)
{
    guint8 quote = 0;
    for (gsize i = at + 1;; i++) {
        if (i >= s->len && (i >= limit || !gl_split_more(s)))
            return NONE;
        guint8 c = s->data[i];
        if (quote != 0) {
            if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '>') {
            return i;
        }
    }
}

/* Copies the element name that starts at @at into s->name.
 * Returns: its length, 0 when none starts there. */
static gsize read_name(GlSplitter *s, gsize at)
{
    gsize avail = gl_split_have(s, at, MAX_NAME + 1);
    gsize n = 0;
    while (n < avail && !ends_name(s->data[at + n]) && s->data[at + n] != '<')
        n++;
    if (n == 0 || n > MAX_NAME || (n == avail && !s->eof))
        return 0;
    guint8 first = s->data[at];
    if (!(g_ascii_isalpha(first) || first == '_' || first == ':' || first >= 0x80))
        return 0;
    memcpy(s->name, s->data + at, n);
    s->name[n] = '\0';
    return n;
}

static gboolean is_xml_declaration(const guint8 *p, gsize avail)
{
    return avail >= 6 && memcmp(p, "<?xml", 5) == 0 && (is_space(p[5]) || p[5] == '?');
}

/* ---- elements ---------------------------------------------------------------- */

typedef enum { END_FOUND, END_CUT, END_NEW_DOCUMENT, END_OVERSIZED } EndScan;

/* Follows the element named s->name whose start tag begins at @start and
 * ends before @body, to just past its end tag (s->pos). Elements of the
 * same name inside count (*nested); a new document's start ends it early
 * (*at). */
static EndScan scan_element(GlSplitter *s, gsize start, gsize body, gboolean *nested, gsize *at)
{
    const char *name = s->name;
    gsize name_len = strlen(name);
    gsize root_len = strlen(s->root);
    gsize limit = start + GL_SPLITTER_MAX_ELEMENT;
    guint depth = 1;
    gsize i = body;
    for (;;) {
        const guint8 *lt = i < s->len ? memchr(s->data + i, '<', s->len - i) : NULL;
        if (lt == NULL) {
            i = MAX(i, s->len);
            if (i >= limit) {
                s->pos = i;
                return END_OVERSIZED;
            }
            if (!gl_split_more(s))
                return END_CUT;
            continue;
        }
        i = (gsize) (lt - s->data);
        if (i >= limit) {
            s->pos = i;
            return END_OVERSIZED;
        }
        gsize avail = gl_split_have(s, i, LOOKAHEAD + MAX(name_len, root_len));
        const guint8 *p = s->data + i;
        gsize next;
        if (avail >= 2 && p[1] == '/') {
            if (name_at(p + 2, avail - 2, name, name_len)) {
                next = gl_split_find(s, i + 2 + name_len, ">", limit);
                if (next == NONE)
                    return s->len >= limit ? END_OVERSIZED : END_CUT;
                if (--depth == 0) {
                    s->pos = next + 1;
                    return END_FOUND;
                }
                i = next + 1;
            } else {
                i += 2;
            }
        } else if (avail >= 4 && memcmp(p, "<!--", 4) == 0) {
            next = gl_split_find(s, i + 4, "-->", limit);
            if (next == NONE)
                return s->len >= limit ? END_OVERSIZED : END_CUT;
            i = next + 3;
        } else if (avail >= 9 && memcmp(p, "<![CDATA[", 9) == 0) {
            next = gl_split_find(s, i + 9, "]]>", limit);
            if (next == NONE)
                return s->len >= limit ? END_OVERSIZED : END_CUT;
            i = next + 3;
        } else if (avail >= 2 && p[1] == '?') {
            if (is_xml_declaration(p, avail)) {
                *at = i;
                return END_NEW_DOCUMENT;
            }
            next = gl_split_find(s, i + 2, "?>", limit);
            if (next == NONE)
                return s->len >= limit ? END_OVERSIZED : END_CUT;
            i = next + 2;
        } else if (name_at(p + 1, avail - 1, name, name_len)) {
            next = tag_end(s, i, limit);
            if (next == NONE)
                return s->len >= limit ? END_OVERSIZED : END_CUT;
            if (s->data[next - 1] != '/') {
                depth++;
                *nested = TRUE;
            }
            i = next + 1;
        } else if (root_len > 0 && name_at(p + 1, avail - 1, s->root, root_len)) {
            *at = i;
            return END_NEW_DOCUMENT;
        } else {
            i++;
        }
    }
}

/* Drops an oversized element up to its end tag (nested elements and
 * comments are not followed: such an element is refused anyway).
 * Returns: FALSE when the input ends first. */
static gboolean skip_oversized(GlSplitter *s, const char *name)
{
    g_autofree char *needle = g_strconcat("</", name, NULL);
    for (;;) {
        if (!gl_split_skip_past(s, s->pos, needle))
            return FALSE;
        gsize avail = gl_split_have(s, s->pos, 1);
        if (avail == 0)
            return FALSE;
        if (ends_name(s->data[s->pos])) {
            gsize end = gl_split_find(s, s->pos, ">", G_MAXSIZE);
            if (end == NONE) {
                s->pos = s->len;
                return FALSE;
            }
            s->pos = end + 1;
            return TRUE;
        }
    }
}

/* ---- parts ------------------------------------------------------------------------ */

static void set_part(GlSplitter *s, GlPart *part, GlPartKind kind, gsize at)
{
    part->kind = kind;
    part->offset = s->base + at;
}

/* The input ended, or another document began, before the root closed. */
static void cut(GlSplitter *s, GlPart *part, gsize at, gboolean in_element, gboolean by_document)
{
    set_part(s, part, GL_PART_CUT, at);
    part->in_element = in_element;
    part->by_document = by_document;
    s->in_root = FALSE;
}

/* An element whose start tag is [at, tag_close]: its end, then the part. */
static void element(GlSplitter *s, GlPart *part, gsize at, gsize tag_close)
{
    part->name = s->name;
    if (s->data[tag_close - 1] == '/') {
        s->pos = tag_close + 1;
    } else {
        gsize new_doc = 0;
        switch (scan_element(s, at, tag_close + 1, &part->nested, &new_doc)) {
        case END_FOUND:
            break;
        case END_CUT:
            s->pos = s->len;
            cut(s, part, at, TRUE, FALSE);
            return;
        case END_NEW_DOCUMENT:
            s->pos = new_doc;
            cut(s, part, at, TRUE, TRUE);
            return;
        case END_OVERSIZED:
            set_part(s, part, GL_PART_OVERSIZED, at);
            skip_oversized(s, s->name);
            return;
        }
    }
    set_part(s, part, GL_PART_ELEMENT, at);
    part->outside_root = !s->in_root;
    part->data = (const char *) s->data + at;
    part->length = s->pos - at;
}

/* Text (or stray markup) at the top level from @at: passes it, as one part. */
static void text(GlSplitter *s, GlPart *part, gsize at)
{
    set_part(s, part, GL_PART_TEXT, at);
    s->pos = at + 1;
}

static void next_part(GlSplitter *s, GlPart *part);

gboolean gl_splitter_next(GlSplitter *s, GlPart *part, GError **error)
{
    next_part(s, part);
    /* A read that failed ends the input: what came before it is handed
     * out whole, and where the input would end or be cut, the failure is
     * told instead. */
    gboolean at_end = part->kind == GL_PART_END ||
                      (part->kind == GL_PART_CUT && !part->by_document);
    if (s->failure != NULL && at_end) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "read error: %s", s->failure);
        return FALSE;
    }
    return TRUE;
}

/* A DOCTYPE declaration at @at: passes it, as one part. */
static void doctype(GlSplitter *s, GlPart *part, gsize at)
{
    set_part(s, part, GL_PART_DOCTYPE, at);
    /* An internal subset ends with "]>", else the first '>' does. */
    gsize end = gl_split_find(s, at, ">", at + GL_SPLITTER_MAX_ELEMENT);
    gsize open = gl_split_find(s, at, "[", end == NONE ? at + GL_SPLITTER_MAX_ELEMENT : end);
    if (open != NONE && (end == NONE || open < end))
        end = gl_split_find(s, open, "]>", open + GL_SPLITTER_MAX_ELEMENT);
    s->pos = end == NONE ? s->len : end + 1;
}

/* An end tag at the top level at @at: the root's, or stray markup. */
static void end_tag(GlSplitter *s, GlPart *part, gsize at)
{
    gsize n = read_name(s, at + 2);
    gsize end = gl_split_find(s, at + 2, ">", at + 2 + MAX_NAME + LOOKAHEAD);
    /* The root's end tag; outside the root, that of a process that
     * went on writing into the file after another closed it. */
    if (s->seen_root && n > 0 && strcmp(s->name, s->root) == 0 && end != NONE) {
        s->pos = end + 1;
        s->in_root = FALSE;
        set_part(s, part, GL_PART_DOCUMENT_END, at);
        return;
    }
    if (end == NONE) {
        s->pos = s->len;
        cut(s, part, at, FALSE, FALSE);
        return;
    }
    text(s, part, at);
    s->pos = end + 1;
}

/* A start tag at the top level at @at: a document's root, an element, or
 * text when it is no tag. */
static void start_tag(GlSplitter *s, GlPart *part, gsize at)
{
    gsize n = read_name(s, at + 1);
    if (n == 0) {
        text(s, part, at);
        return;
    }
    gboolean is_root = s->in_root ? strcmp(s->name, s->root) == 0
                                  : !s->seen_root || strcmp(s->name, s->root) == 0;
    if (is_root && s->in_root) {
        /* A new document inside this one: this one was cut. */
        cut(s, part, at, FALSE, TRUE);
        s->pos = at;
        return;
    }
    gsize close = tag_end(s, at, at + GL_SPLITTER_MAX_ELEMENT);
    if (close == NONE) {
        if (s->len >= at + GL_SPLITTER_MAX_ELEMENT) {
            set_part(s, part, GL_PART_OVERSIZED, at);
            part->name = s->name;
            s->pos = s->len;
            gl_split_skip_past(s, s->pos, ">");
            return;
        }
        s->pos = s->len;
        if (s->in_root || is_root) {
            cut(s, part, at, TRUE, FALSE);
            return;
        }
        text(s, part, at);
        s->pos = s->len;
        return;
    }
    if (is_root) {
        set_part(s, part, GL_PART_DOCUMENT, at);
        memcpy(s->root, s->name, n + 1);
        s->seen_root = TRUE;
        part->name = s->root;
        part->data = (const char *) s->data + at;
        part->length = close + 1 - at;
        s->pos = close + 1;
        if (s->data[close - 1] == '/')
            s->pending_end = TRUE;
        else
            s->in_root = TRUE;
        return;
    }
    element(s, part, at, close);
}

/* The markup that starts at @at (a '<'): fills @part, or passes a comment
 * or processing instruction.
 * Returns: FALSE when it passed one and the scan goes on. */
static gboolean markup(GlSplitter *s, GlPart *part, gsize at)
{
    gsize avail = gl_split_have(s, at, LOOKAHEAD);
    const guint8 *p = s->data + at;
    s->saw_markup = TRUE;
    if (avail < 2) {
        cut(s, part, at, FALSE, FALSE);  /* a lone '<' at the end */
        s->pos = s->len;
        return TRUE;
    }
    if (avail >= 4 && memcmp(p, "<!--", 4) == 0) {
        if (gl_split_skip_past(s, at + 4, "-->"))
            return FALSE;
        cut(s, part, at, FALSE, FALSE);
        return TRUE;
    }
    if (avail >= 9 && memcmp(p, "<!DOCTYPE", 9) == 0) {
        doctype(s, part, at);
        return TRUE;
    }
    if (avail >= 2 && p[1] == '!') {
        /* CDATA or a declaration at the top level: not where Valgrind puts them. */
        const char *close = avail >= 9 && memcmp(p, "<![CDATA[", 9) == 0 ? "]]>" : ">";
        set_part(s, part, GL_PART_TEXT, at);
        gl_split_skip_past(s, at + 2, close);
        return TRUE;
    }
    if (avail >= 2 && p[1] == '?') {
        if (s->in_root && is_xml_declaration(p, avail)) {
            cut(s, part, at, FALSE, TRUE);
            s->pos = at;
            return TRUE;
        }
        if (gl_split_skip_past(s, at + 2, "?>"))
            return FALSE;
        cut(s, part, at, FALSE, FALSE);
        return TRUE;
    }
    if (avail >= 2 && p[1] == '/')
        end_tag(s, part, at);
    else
        start_tag(s, part, at);
    return TRUE;
}

/* Fills @part with the next part of the input, as if the input ended
 * where a read failed. */
static void next_part(GlSplitter *s, GlPart *part)
{
    memset(part, 0, sizeof *part);
    if (s->pending_end) {
        s->pending_end = FALSE;
        set_part(s, part, GL_PART_DOCUMENT_END, s->pos);
        return;
    }
    guint64 text_at = G_MAXUINT64;  /* the first byte of text that is not blank, if any */
    for (;;) {
        gl_split_compact(s);
        gsize i = s->pos;
        if (s->base == 0 && i == 0 && gl_split_have(s, 0, 3) == 3 && memcmp(s->data, "\xEF\xBB\xBF", 3) == 0)
            i = s->pos = 3;  /* a UTF-8 byte order mark */
        const guint8 *lt = i < s->len ? memchr(s->data + i, '<', s->len - i) : NULL;
        gsize stop = lt != NULL ? (gsize) (lt - s->data) : s->len;
        for (gsize j = i; text_at == G_MAXUINT64 && j < stop; j++)
            if (!is_space(s->data[j]))
                text_at = s->base + j;
        if (lt == NULL) {
            /* Text runs on: one part for all of it, up to the next '<';
             * but text before any markup says at once that the input is
             * not XML, however much follows (a device such as /dev/zero
             * never ends, a large binary file need not be read). */
            s->pos = s->len;
            if (!(text_at != G_MAXUINT64 && !s->saw_markup) && gl_split_more(s))
                continue;
        }
        if (text_at != G_MAXUINT64) {
            part->kind = GL_PART_TEXT;
            part->offset = text_at;
            s->pos = stop;
            return;
        }
        if (lt == NULL) {
            if (s->in_root) {
                cut(s, part, s->len, FALSE, FALSE);
                return;
            }
            set_part(s, part, GL_PART_END, s->len);
            return;
        }
        if (markup(s, part, stop))
            return;
    }
}
