/* What the sanitizer reader's files share (src/read/ only): the lines of a
 * report one at a time, the runtimes' own and the frames in their formats
 * (sanitizer_text.c), for the reader of a report (sanitizer_reader.c). */
#ifndef GEMLEAK_SANITIZER_INT_H
#define GEMLEAK_SANITIZER_INT_H

#include "gemleak/base/record.h"

/* A frame of GL_SANITIZER_FRAME_FORMAT being read, over its lines: its
 * text fields so far. */
typedef struct {
    guint stage;          /* 0: none; 1, 2, 3: its module, function, source file read */
    char *number;         /* its "%n", which every line of it repeats */
    GString *fields[3];   /* module, function, source file */
} GlPendingFrame;

/* What a line did to the frame in hand. */
typedef enum {
    GL_PENDING_GOES_ON,   /* a field read, or more of one: the frame goes on */
    GL_PENDING_CLOSED,    /* its numbers closed it: the frame is in @frames */
    GL_PENDING_LOST,      /* a field grew longer than any path or name: no frame */
} GlPendingStep;

void gl_sanitizer_pending_clear(GlPendingFrame *pending);

/* Returns: TRUE if @line starts a frame of gemleak's format ("Gm N
 * MODULE"), which the lines after it go on; @pending holds it. */
gboolean gl_sanitizer_pending_start(GlPendingFrame *pending, const char *line);

/* Reads @line as the next line of the frame in hand: the tag due next (its
 * function, its source file, then the numbers that close it, appending
 * the frame, its strings in @record, to @frames), or more of the field
 * before it, a path or name that holds a newline. */
GlPendingStep gl_sanitizer_pending_read(GlPendingFrame *pending, GlRecord *record, GArray *frames,
                                        const char *line);

/* Returns: TRUE if @line is a frame of the runtimes' default format
 * ("    #N 0xPC in FUNCTION FILE:LINE") or of the one gemleak asked for
 * before (F|...); *@frame gets it, its strings in @record. */
gboolean gl_sanitizer_parse_frame(GlRecord *record, const char *line, GlFrame *frame);

/* Returns: the pid of "==PID==" at the start of @line, 0 when it has none;
 * *@rest the text after it. */
gint64 gl_sanitizer_line_pid(const char *line, const char **rest);

/* Fills in @record, just started, as the AddressSanitizer error @bug
 * ("heap-use-after-free on address 0x... at pc ..."): its kind (Valgrind's
 * name for it), its message and thread. */
void gl_sanitizer_asan_error(GlRecord *record, const char *bug);

/* Returns: TRUE if @line is an AddressSanitizer error's access ("READ of
 * size 1 at 0x6020000000b0 thread T0"), which @record then says. */
gboolean gl_sanitizer_parse_access(GlRecord *record, const char *line);

/* Returns: a line's number, 0 when @s holds none. */
guint gl_sanitizer_parse_number(const char *s);

#endif
