/* A line reader in bounded memory, for the formats of src/read/ that are
 * line based (sanitizer_reader.c): a buffer of the input at a time, from a
 * descriptor or memory, never the whole. src/read/ only. */
#ifndef GEMLEAK_LINES_INT_H
#define GEMLEAK_LINES_INT_H

#include <glib.h>

typedef struct {
    int fd;                /* -1: read @data */
    const char *data;
    gsize size;
    gsize offset;
    char *buffer;          /* GL_LINES_BUFFER + 1 bytes, room for a NUL */
    gsize start, end;      /* the bytes of the buffer not yet cut into lines */
    GString *long_line;    /* a line longer than the buffer, so far */
    gboolean at_end;
    gboolean blank;        /* every byte read so far is white space */
    char *name;            /* nullable: names the input in messages */
    GPtrArray *problems;   /* GError*, not owned: a read that fails is said there */
} GlLines;

/* The bytes read at once. */
#define GL_LINES_BUFFER ((gsize) 64 * 1024)

/* Sets @lines up to read @fd (closed by gl_lines_clear(); -1: none) or
 * else the @size bytes of @data, which must outlive it. */
void gl_lines_init(GlLines *lines, int fd, const char *data, gsize size, const char *name,
                   GPtrArray *problems);
void gl_lines_clear(GlLines *lines);

/* Returns: (transfer none) (nullable): the next line, without its newline,
 * cut at a NUL and a trailing CR, and at @max bytes (the rest of a longer
 * one is dropped), valid until the next call; *@last TRUE when no newline
 * ends it (the end of a file cut short). NULL at the end of the input. */
char *gl_lines_next(GlLines *lines, gsize max, gboolean *last);

#endif
