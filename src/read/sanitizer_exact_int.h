/* What the exact pass's files share (src/read/ only): a report's leak
 * records as the walk over it reads them, their frames and blocks
 * (sanitizer_exact.c), for the exact pass's stacks and the fast report
 * rewritten with them (sanitizer_exact_rewrite.c). */
#ifndef GEMLEAK_SANITIZER_EXACT_INT_H
#define GEMLEAK_SANITIZER_EXACT_INT_H

#include "gemleak/read/sanitizer_exact.h"
#include "gemleak/base/protocol.h"

/* A frame of GL_SANITIZER_FRAME_FORMAT: "Gm N MODULE", "Gf N FUNCTION",
 * "Gs N SOURCE", "G N PC OFFSET FUNCTION-OFFSET LINE COLUMN". */
typedef struct {
    char *number;
    GString *fields[3];   /* module, function, source: may hold newlines */
    char *numbers;        /* what follows "G N " */
    guint stage;          /* 1 to 3: that many fields read; 4: closed */
} GlExactFrame;

typedef struct {
    guint64 address;
    guint64 bytes;
    char *line;           /* as the runtime wrote it */
} GlExactObject;

/* A leak record: its heading, frames and objects, and where it lies. */
typedef struct {
    gsize start, end;     /* its bytes in the report: heading to the end of its objects */
    char *kind;           /* "Direct", "Indirect" */
    GPtrArray *frames;    /* GlExactFrame* */
    GArray *objects;      /* GlExactObject */
} GlExactRecord;

/* What the walk over a report calls: each record once read whole, each
 * line outside records. */
typedef struct {
    void (*record)(GlExactRecord *record, gpointer data);  /* takes the record */
    /* (nullable) a line, and where it lies in the report: [start, end) */
    void (*line)(const char *line, gsize start, gsize end, gpointer data);
    gpointer data;
} GlExactWalker;

/* The helper's lines the reports hold: whose blocks are whose, and the
 * blocks a check could not judge. */
#define OWNED GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED "\t"
#define ORIGIN GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_ORIGIN "\t"
#define HIDDEN GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_HIDDEN

void gl_exact_frame_free(gpointer data);

/* Returns: (transfer full): an array of GlExactObject that frees their lines. */
GArray *gl_exact_objects_new(void);

void gl_exact_record_free(GlExactRecord *record);

/* Reads @line into the frames of @frames: a frame's next line, more of
 * the field before it (a newline in a path), or a new frame.
 * Returns: FALSE if @line is none of those. */
gboolean gl_exact_frame_line(GPtrArray *frames, const char *line);

/* Returns: the @word-th (from 0) hexadecimal number of @frame's closing
 * line: 0 the program counter, 1 its offset in its module. */
guint64 gl_exact_frame_number(const GlExactFrame *frame, guint word);

/* Drops a frame left open at the end of @frames (a report cut short). */
void gl_exact_close_frames(GPtrArray *frames);

/* Returns: how many frames of @frames are the allocator's: the first, and
 * those inlined at its program counter. */
guint gl_exact_allocator_frames(GPtrArray *frames);

/* Returns: the index of the allocating call's frame in @frames: the first
 * after the allocator's that is not in a library of gemleak's; -1 when none. */
gint gl_exact_site_frame(GPtrArray *frames);

/* Returns: TRUE if @frame is in one of gemleak's libraries; *@via, when it
 * is their gemleak_via, *@exact, the exact pass's mark (nullable both). */
gboolean gl_exact_gemleak_frame(const GlExactFrame *frame, gboolean *via, gboolean *exact);

/* Returns: (transfer full) (nullable): the key of a block of @bytes
 * allocated at the site of @frames (from @first): below a gemleak_via
 * frame, the call after it ("...<TAB>via"); NULL when it has none that can
 * be named. */
char *gl_exact_site_key(GPtrArray *frames, gint first, guint64 bytes);

/* Returns: TRUE if @cut says @record's stack was cut, its report's stacks
 * made @unwound. */
gboolean gl_exact_record_cut(const GlExactRecord *record, GlExactCut cut, GlUnwound unwound);

/* Returns: TRUE if @record's stack holds the mark of a stack unwound
 * exactly (GL_PROTO_EXACT_FUNCTION): the fast pass's own, or the exact
 * pass's. */
gboolean gl_exact_record_marked(const GlExactRecord *record);

/* Returns: how a "gemleak:unwound<TAB>HOW" line says the report's stacks
 * were made, or @now when @line is not one. */
GlUnwound gl_exact_unwound_line(const char *line, GlUnwound now);

/* What the exact pass writes after the allocator's frames of a record it
 * gave a stack: a frame of gemleak's, which the reader takes out, saying
 * the stack is whole as it is written. */
#define GL_EXACT_MARK_MODULE GL_PROTO_LIBRARY_PREFIX "alloc.so"

/* Appends @frame, numbered @number, in GL_SANITIZER_FRAME_FORMAT. */
void gl_exact_write_frame(GString *out, const GlExactFrame *frame, guint number);

/* Appends a leak record as the runtime writes one: @kind ("Direct"...),
 * @frames (written, numbered from 0), then @objects (const GlExactObject*)
 * listed, their bytes summed in its heading. Returns: those bytes. */
guint64 gl_exact_write_record(GString *out, const char *kind, const char *frames,
                              const GPtrArray *objects);

/* Walks the lines of @data: records to @walker->record, the rest to
 * @walker->line. */
void gl_exact_walk(const char *data, gsize length, const GlExactWalker *walker);

/* "gemleak:hidden" (a list begins: the last one counts) and
 * "gemleak:hidden<TAB>SIZE<TAB>ADDRESS" into @hidden (of GlExactObject,
 * nullable).
 * Returns: TRUE if @line is one. */
gboolean gl_exact_hidden_line(const char *line, GArray *hidden);

#endif
