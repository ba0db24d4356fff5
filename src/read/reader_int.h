/* What the files of the Valgrind XML reader share (src/read/ only): the
 * reader's state, and the calls between the document handling (reader.c),
 * the elements (reader_elements.c) and the Valgrind protocol
 * (reader_valgrind.c, and what the document says of its process:
 * reader_document.c). Not for other stages: they use reader.h. */
#ifndef GEMLEAK_READER_INT_H
#define GEMLEAK_READER_INT_H

#include "gemleak/base/errors.h"
#include "gemleak/read/reader.h"
#include "gemleak/read/splitter.h"

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
    GlProcess doc;
    GStringChunk *doc_strings;
    char *marker_prefix;   /* nullable: only client messages with it are markers */
    /* The last element read was gemleak's marker that the process checked
     * itself before it exec'd (GL_PROTO_MARKER_EXEC): its image's XML ends
     * there, whole, and the new image's goes to a file of its own. */
    gboolean exec_marker_last;
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

/* ---- between the files ---- */

/* reader_elements.c: a problem of the input, said with its name */
void gl_reader_add_problem(GlReader *reader, GlErrorCode code, const char *format, ...)
    G_GNUC_PRINTF(3, 4);
/* reader_elements.c */
char *gl_reader_one_line(const char *message);
/* reader_elements.c */
gboolean gl_reader_is_header_element(const char *name);
/* reader_elements.c */
gboolean gl_reader_is_record_element(const char *name);
/* reader_document.c */
/* Returns: TRUE if the last marker read is gemleak's @word
 * (GL_PROTO_MARKER_EXEC), blanks after it aside. */
gboolean gl_reader_marker_is(const GlReader *reader, const char *word);

GlRecord *gl_reader_read_element(GlReader *reader, const char *name, const char *data, gsize length,
                              guint64 offset);
/* reader_elements.c */
void gl_reader_separate_nested(GlReader *reader, GQueue *pending, const GlPart *part);
/* reader_valgrind.c: moves to the next child element of the element at
 * @depth. Returns: 1 at a child (its local name in *name), 0 at the
 * parent's end, -1 when the parse failed. */
int gl_vg_next_child(GlReader *reader, int depth, const xmlChar **name);
/* reader_valgrind.c: the text directly inside the current element into
 * reader->text, the element consumed. */
gboolean gl_vg_read_text(GlReader *reader);
/* reader_document.c */
gboolean gl_vg_read_args(GlReader *reader);
/* reader_document.c */
gboolean gl_vg_read_child_texts(GlReader *reader, const xmlChar *child,
                                 void (*take)(GlReader *reader));
/* reader_valgrind.c */
gboolean gl_vg_read_doc_text(GlReader *reader, const char **out);
/* reader_valgrind.c */
GlRecord *gl_vg_read_error(GlReader *reader);
/* reader_valgrind.c */
GlRecord *gl_vg_read_fatal_signal(GlReader *reader);
/* reader_valgrind.c */
gboolean gl_vg_read_int(GlReader *reader, gint *out);
/* reader_document.c */
gboolean gl_vg_read_suppcounts(GlReader *reader);
/* reader_document.c */
void gl_vg_take_marker(GlReader *reader);
/* reader_document.c */
void gl_vg_take_state(GlReader *reader);
/* reader_valgrind.c */
gboolean gl_vg_read_i64(GlReader *reader, gint64 *out);
/* reader_valgrind.c */
gboolean gl_vg_read_u64(GlReader *reader, guint64 *out);
/* reader_valgrind.c */
gboolean gl_vg_skip_element(GlReader *reader);

#endif
