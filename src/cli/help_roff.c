/* gemleak(1) as plain text, for `gemleak help` where man cannot show it (a
 * gem install puts the page nowhere man looks; a slim container has no
 * man or groff). It reads the few man(7) macros the page uses (.SH .SS .TP
 * .IP .PP .RS .RE .nf .fi .EX .EE .br, the font macros and escapes) and
 * lays the text out as man does on an 80-column terminal: headings at the
 * margin, subheadings at 3, text at 7, tagged paragraphs 7 further. */
#include "cli_int.h"

#include <string.h>

/* man's layout on 80 columns: text within 78, body at 7, subheadings at 3. */
#define LINE_WIDTH 78
#define BODY_INDENT 7
#define SUBHEADING_INDENT 3
#define DEFAULT_ITEM_INDENT 7
#define MAX_DEPTH 16

/* Stands for a space that does not break ("\ "), until the line is written. */
#define UNBREAKABLE '\x01'

typedef struct {
    GString *out;
    GString *line;          /* the line being filled, from the margin */
    guint line_width;       /* its width in characters */
    gboolean has_words;     /* a word is on it (not only its indent and tag) */
    guint indent;           /* where the text of the paragraph starts */
    guint base;             /* the margin .RS moved (BODY_INDENT at first) */
    guint bases[MAX_DEPTH]; /* the margins .RE goes back to */
    guint depth;
    guint item_indent;      /* the last .TP's or .IP's indent, which .RS takes */
    gboolean fill;
    gboolean want_tag;      /* after .TP: the next line is the tag */
    char *tag;              /* (nullable) the tag to put before the paragraph's text */
    gboolean blank_before;  /* a paragraph ended: a blank line before the next text */
} Layout;

/* Appends to @text the character that the escape \(@name stands for. */
static void special_character(GString *text, const char *name)
{
    static const struct {
        const char *name;
        const char *text;
    } names[] = {
        { "aq", "'" }, { "dq", "\"" }, { "lq", "\xe2\x80\x9c" }, { "rq", "\xe2\x80\x9d" },
        { "bu", "\xc2\xb7" }, { "rs", "\\" }, { "em", "\xe2\x80\x94" }, { "en", "\xe2\x80\x93" },
        { "co", "\xc2\xa9" }, { "mi", "-" }, { "hy", "-" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        if (strncmp(name, names[i].name, 2) == 0) {
            g_string_append(text, names[i].text);
            return;
        }
}

/* Returns: (transfer full): @source with its escapes read: fonts dropped
 * (text has none), \- a hyphen, \e a backslash, \& nothing, \(xx its
 * character, "\ " a space that does not break. */
static char *unescape(const char *source)
{
    GString *text = g_string_new(NULL);
    for (const char *p = source; *p != '\0'; p++) {
        if (*p != '\\') {
            g_string_append_c(text, *p);
            continue;
        }
        p++;
        switch (*p) {
        case '\0':
            p--;
            break;
        case 'f':  /* \fB, \f(XX, \f[X] */
            if (p[1] == '(' && p[2] != '\0' && p[3] != '\0')
                p += 3;
            else if (p[1] == '[' && strchr(p, ']') != NULL)
                p = strchr(p, ']');
            else if (p[1] != '\0')
                p++;
            break;
        case '(':
            if (p[1] != '\0' && p[2] != '\0') {
                special_character(text, p + 1);
                p += 2;
            }
            break;
        case '-':
            g_string_append_c(text, '-');
            break;
        case 'e':
        case '\\':
            g_string_append_c(text, '\\');
            break;
        case ' ':
        case '~':
            g_string_append_c(text, UNBREAKABLE);
            break;
        case '&':
        case 'c':
        case ':':
            break;
        default:
            g_string_append_c(text, *p);
        }
    }
    return g_string_free(text, FALSE);
}

/* Returns: (transfer full): the arguments of a request line after its
 * name, as roff splits them: at spaces, but within double quotes ("" in
 * them is one quote), an escaped space kept in its argument. */
static GPtrArray *arguments(const char *rest)
{
    GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
    const char *p = rest;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        GString *arg = g_string_new(NULL);
        if (*p == '"') {
            for (p++; *p != '\0'; p++) {
                if (*p == '"' && p[1] == '"') {
                    g_string_append_c(arg, '"');
                    p++;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    g_string_append_c(arg, *p);
                }
            }
        } else {
            while (*p != '\0' && *p != ' ' && *p != '\t') {
                /* an escape goes whole: "\ " is no end of the argument */
                if (*p == '\\' && p[1] != '\0')
                    g_string_append_c(arg, *p++);
                g_string_append_c(arg, *p++);
            }
        }
        g_ptr_array_add(args, g_string_free(arg, FALSE));
    }
    return args;
}

static guint text_width(const char *text)
{
    return (guint) g_utf8_strlen(text, -1);
}

/* Writes @text to the output after @indent spaces, as a line of its own. */
static void put_line(Layout *layout, guint indent, const char *text)
{
    if (layout->blank_before && layout->out->len > 0)
        g_string_append_c(layout->out, '\n');
    layout->blank_before = FALSE;
    for (guint i = 0; i < indent; i++)
        g_string_append_c(layout->out, ' ');
    for (const char *p = text; *p != '\0'; p++)
        g_string_append_c(layout->out, *p == UNBREAKABLE ? ' ' : *p);
    g_string_append_c(layout->out, '\n');
}

/* Ends the line being filled. */
static void flush(Layout *layout)
{
    if (layout->has_words)
        put_line(layout, 0, layout->line->str);
    g_string_truncate(layout->line, 0);
    layout->line_width = 0;
    layout->has_words = FALSE;
}

/* Ends the paragraph: what comes next follows a blank line. */
static void paragraph(Layout *layout)
{
    flush(layout);
    g_clear_pointer(&layout->tag, g_free);
    layout->want_tag = FALSE;
    if (layout->out->len > 0)
        layout->blank_before = TRUE;
}

static void pad(Layout *layout, guint to)
{
    for (; layout->line_width < to; layout->line_width++)
        g_string_append_c(layout->line, ' ');
}

/* Starts a line at the paragraph's indent, after its tag when it has one:
 * the tag on the same line when it leaves a space before the text, else
 * on a line of its own. */
static void start_line(Layout *layout)
{
    g_string_truncate(layout->line, 0);
    layout->line_width = 0;
    if (layout->tag != NULL) {
        guint tag_indent = layout->indent - MIN(layout->item_indent, layout->indent);
        if (text_width(layout->tag) + 1 <= layout->indent - tag_indent) {
            pad(layout, tag_indent);
            g_string_append(layout->line, layout->tag);
            layout->line_width += text_width(layout->tag);
        } else {
            put_line(layout, tag_indent, layout->tag);
        }
        g_clear_pointer(&layout->tag, g_free);
    }
    pad(layout, layout->indent);
}

/* Adds @text to the paragraph: its words, breaking lines as they fill; in
 * no-fill mode, the line as it is. After .TP it is the tag. */
static void add_text(Layout *layout, const char *text)
{
    if (layout->want_tag) {
        layout->want_tag = FALSE;
        g_free(layout->tag);
        layout->tag = g_strdup(text);
        return;
    }
    if (!layout->fill) {
        flush(layout);
        start_line(layout);
        g_string_append(layout->line, text);
        layout->has_words = TRUE;
        flush(layout);
        return;
    }
    g_auto(GStrv) words = g_strsplit_set(text, " \t", -1);
    for (char **word = words; *word != NULL; word++) {
        if (**word == '\0')
            continue;
        guint width = text_width(*word);
        if (!layout->has_words && layout->line_width == 0)
            start_line(layout);
        if (layout->has_words && layout->line_width + 1 + width > LINE_WIDTH) {
            flush(layout);
            start_line(layout);
        }
        if (layout->has_words) {
            g_string_append_c(layout->line, ' ');
            layout->line_width++;
        }
        g_string_append(layout->line, *word);
        layout->line_width += width;
        layout->has_words = TRUE;
    }
}

/* The font macros: .B and .I join their arguments with spaces, .BR and
 * the other alternating ones without. */
static char *font_macro(const char *name, const char *rest)
{
    g_autoptr(GPtrArray) args = arguments(rest);
    g_ptr_array_add(args, NULL);
    gboolean alternating = strlen(name) == 2;
    return g_strjoinv(alternating ? "" : " ", (char **) args->pdata);
}

/* A request (a line that starts with a dot): its effect on the layout. */
static void request(Layout *layout, const char *line)
{
    const char *p = line + 1;
    while (*p == ' ' || *p == '\t')
        p++;
    gsize n = strcspn(p, " \t");
    g_autofree char *name = g_strndup(p, n);
    const char *rest = p + n;
    if (strcmp(name, "SH") == 0 || strcmp(name, "SS") == 0) {
        paragraph(layout);
        layout->depth = 0;
        layout->base = BODY_INDENT;
        layout->item_indent = DEFAULT_ITEM_INDENT;
        g_autoptr(GPtrArray) args = arguments(rest);
        g_ptr_array_add(args, NULL);
        g_autofree char *joined = g_strjoinv(" ", (char **) args->pdata);
        g_autofree char *heading = unescape(joined);
        put_line(layout, name[1] == 'H' ? 0 : SUBHEADING_INDENT, heading);
        layout->indent = layout->base;
    } else if (strcmp(name, "PP") == 0 || strcmp(name, "LP") == 0 || strcmp(name, "P") == 0) {
        paragraph(layout);
        layout->indent = layout->base;
    } else if (strcmp(name, "TP") == 0 || strcmp(name, "IP") == 0) {
        paragraph(layout);
        g_autoptr(GPtrArray) args = arguments(rest);
        guint width_at = name[0] == 'T' ? 0 : 1;
        if (args->len > width_at)
            layout->item_indent = (guint) g_ascii_strtoull(g_ptr_array_index(args, width_at), NULL, 10);
        if (layout->item_indent == 0)
            layout->item_indent = DEFAULT_ITEM_INDENT;
        layout->indent = layout->base + layout->item_indent;
        if (name[0] == 'T')
            layout->want_tag = TRUE;
        else if (args->len > 0)
            layout->tag = unescape(g_ptr_array_index(args, 0));
    } else if (strcmp(name, "RS") == 0) {
        flush(layout);
        g_autoptr(GPtrArray) args = arguments(rest);
        guint shift = args->len > 0 ? (guint) g_ascii_strtoull(g_ptr_array_index(args, 0), NULL, 10)
                                    : layout->item_indent;
        if (layout->depth < MAX_DEPTH)
            layout->bases[layout->depth++] = layout->base;
        layout->base += shift;
        layout->indent = layout->base;
        layout->item_indent = DEFAULT_ITEM_INDENT;
    } else if (strcmp(name, "RE") == 0) {
        flush(layout);
        if (layout->depth > 0)
            layout->base = layout->bases[--layout->depth];
        layout->indent = layout->base;
    } else if (strcmp(name, "nf") == 0 || strcmp(name, "EX") == 0) {
        flush(layout);
        layout->fill = FALSE;
    } else if (strcmp(name, "fi") == 0 || strcmp(name, "EE") == 0) {
        layout->fill = TRUE;
    } else if (strcmp(name, "br") == 0) {
        flush(layout);
    } else if (strcmp(name, "sp") == 0) {
        paragraph(layout);
    } else if (strchr("BI", name[0]) != NULL && strlen(name) <= 2 &&
               (name[1] == '\0' || strchr("BIR", name[1]) != NULL)) {
        g_autofree char *joined = font_macro(name, rest);
        g_autofree char *text = unescape(joined);
        add_text(layout, text);
    } else if (name[0] == 'R' && (name[1] == 'B' || name[1] == 'I') && name[2] == '\0') {
        g_autofree char *joined = font_macro(name, rest);
        g_autofree char *text = unescape(joined);
        add_text(layout, text);
    }
    /* .TH, comments and the rest: nothing to lay out */
}

char *gl_cli_roff_to_text(const char *roff)
{
    Layout layout = { .out = g_string_new(NULL), .line = g_string_new(NULL), .fill = TRUE,
                      .base = BODY_INDENT, .indent = BODY_INDENT,
                      .item_indent = DEFAULT_ITEM_INDENT };
    g_auto(GStrv) lines = g_strsplit(roff, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        if ((*line)[0] == '.' || (*line)[0] == '\'') {
            request(&layout, *line);
        } else if ((*line)[0] == '\0') {
            if (layout.fill)
                paragraph(&layout);
            else
                put_line(&layout, 0, "");
        } else {
            g_autofree char *text = unescape(*line);
            add_text(&layout, text);
        }
    }
    flush(&layout);
    g_free(layout.tag);
    g_string_free(layout.line, TRUE);
    return g_string_free(layout.out, FALSE);
}
