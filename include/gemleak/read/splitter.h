/* Splitting a byte stream of XML into documents and the elements directly
 * inside each root, without parsing them.
 *
 * Valgrind's XML reaches gemleak in shapes no XML parser reads whole: files
 * concatenated (cat a.xml b.xml), a document cut off by a killed process
 * and followed by another, several processes writing one file (--xml-file
 * without %p), gzip-compressed files. The splitter finds the boundaries
 * with a linear scan that knows tags, comments, CDATA sections and
 * processing instructions, and hands out one complete element at a time;
 * the reader parses each on its own, so a broken one costs only itself.
 * It knows nothing of Valgrind but that a document's root may repeat. */
#ifndef GEMLEAK_SPLITTER_H
#define GEMLEAK_SPLITTER_H

#include <glib.h>

/* An element larger than this is skipped, not held: Valgrind's largest
 * (an error with 500 frames) is about 200 KiB. */
#define GL_SPLITTER_MAX_ELEMENT ((gsize) 8 * 1024 * 1024)

typedef enum {
    GL_PART_DOCUMENT,     /* a root element starts a document: name, offset */
    GL_PART_ELEMENT,      /* a complete element inside the root, or after it closed */
    GL_PART_DOCUMENT_END, /* the root element closed */
    GL_PART_CUT,          /* the document stopped before its root closed: at the
                           * end of the input, or where another document began */
    GL_PART_OVERSIZED,    /* an element over GL_SPLITTER_MAX_ELEMENT, skipped */
    GL_PART_TEXT,         /* text that is not markup, outside any element */
    GL_PART_DOCTYPE,      /* a <!DOCTYPE ...> declaration */
    GL_PART_END,          /* the end of the input */
} GlPartKind;

typedef struct {
    GlPartKind kind;
    /* ELEMENT: the element's bytes; DOCUMENT: its start tag. Valid until
     * the next call. */
    const char *data;
    gsize length;
    const char *name;       /* ELEMENT, DOCUMENT: the element's name (NUL-terminated) */
    guint64 offset;         /* where the part starts in the input */
    gboolean outside_root;  /* ELEMENT: its document's root had already closed */
    gboolean nested;        /* ELEMENT: holds an element of its own name (writes interleaved) */
    gboolean in_element;    /* CUT: the cut fell inside an element */
    gboolean by_document;   /* CUT: another document began there */
} GlPart;

typedef struct GlSplitter GlSplitter;

/* Reads @fd, plain or gzip-compressed (the first two bytes tell them
 * apart; one gzip member after another); the fd stays the caller's, to
 * close after the splitter is freed.
 * Returns: (transfer full): free with gl_splitter_free(). */
GlSplitter *gl_splitter_new_for_fd(int fd);

/* Splits @size bytes at @data, which must outlive the splitter.
 * Returns: (transfer full): free with gl_splitter_free(). */
GlSplitter *gl_splitter_new_for_memory(const char *data, gsize size);

void gl_splitter_free(GlSplitter *splitter);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlSplitter, gl_splitter_free)

/* Fills @part with the next part of the input.
 * Returns: FALSE with GL_ERROR_IO when reading failed (a read error; gzip
 * data that is cut, corrupt, has a wrong CRC, or is followed by bytes
 * that are not gzip); every whole part read before it was handed out. */
gboolean gl_splitter_next(GlSplitter *splitter, GlPart *part, GError **error);

/* Returns: TRUE once a '<' was met: the input is more than blanks and text. */
gboolean gl_splitter_saw_markup(const GlSplitter *splitter);

#endif
