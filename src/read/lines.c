/* A line at a time, in bounded memory (lines_int.h). */
#include "lines_int.h"
#include "gemleak/base/errors.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void gl_lines_init(GlLines *lines, int fd, const char *data, gsize size, const char *name,
                   GPtrArray *problems)
{
    memset(lines, 0, sizeof *lines);
    lines->fd = fd;
    lines->data = data != NULL ? data : "";
    lines->size = data != NULL ? size : 0;
    lines->buffer = g_malloc(GL_LINES_BUFFER + 1);
    lines->blank = TRUE;
    lines->name = g_strdup(name);
    lines->problems = problems;
}

void gl_lines_clear(GlLines *lines)
{
    if (lines->fd >= 0)
        close(lines->fd);
    lines->fd = -1;
    g_clear_pointer(&lines->buffer, g_free);
    if (lines->long_line != NULL)
        g_string_free(lines->long_line, TRUE);
    lines->long_line = NULL;
    g_clear_pointer(&lines->name, g_free);
}

/* Reads more of the input into the buffer after its end. Returns: FALSE
 * at the end of the input, or when it cannot be read (a problem). */
static gboolean fill(GlLines *lines)
{
    gsize room = GL_LINES_BUFFER - lines->end;
    gssize n;
    if (lines->fd < 0) {
        n = (gssize) MIN(room, lines->size - lines->offset);
        memcpy(lines->buffer + lines->end, lines->data + lines->offset, (gsize) n);
        lines->offset += (gsize) n;
    } else {
        do
            n = read(lines->fd, lines->buffer + lines->end, room);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
            int saved = errno;
            g_ptr_array_add(lines->problems,
                            g_error_new(GL_ERROR, GL_ERROR_IO, "%s: %s",
                                        lines->name != NULL ? lines->name : "input",
                                        g_strerror(saved)));
            return FALSE;
        }
    }
    for (gssize i = 0; i < n && lines->blank; i++)
        lines->blank = g_ascii_isspace(lines->buffer[lines->end + (gsize) i]);
    lines->end += (gsize) n;
    return n > 0;
}

/* Keeps @n more bytes of a line longer than the buffer, up to @max. */
static void keep_long(GlLines *lines, const char *bytes, gsize n, gsize max)
{
    if (lines->long_line == NULL)
        lines->long_line = g_string_new(NULL);
    gsize room = max - MIN(lines->long_line->len, max);
    g_string_append_len(lines->long_line, bytes, (gssize) MIN(n, room));
}

char *gl_lines_next(GlLines *lines, gsize max, gboolean *last)
{
    if (lines->long_line != NULL) {
        /* the last line handed out was a long one: done with */
        g_string_free(lines->long_line, TRUE);
        lines->long_line = NULL;
    }
    for (;;) {
        char *newline = memchr(lines->buffer + lines->start, '\n', lines->end - lines->start);
        char *line = NULL;
        if (newline != NULL) {
            *newline = '\0';
            line = lines->buffer + lines->start;
            lines->start = (gsize) (newline - lines->buffer) + 1;
            *last = FALSE;
        } else if (lines->at_end) {
            if (lines->start == lines->end && lines->long_line == NULL)
                return NULL;
            lines->buffer[lines->end] = '\0';
            line = lines->buffer + lines->start;
            lines->start = lines->end;
            *last = TRUE;
        }
        if (line != NULL) {
            if (lines->long_line != NULL) {
                keep_long(lines, line, strlen(line), max);
                line = lines->long_line->str;
            }
            /* NULs and a trailing CR are no part of a line a program writes */
            gsize length = strlen(line);
            if (length > max)
                line[length = max] = '\0';
            if (length > 0 && line[length - 1] == '\r')
                line[length - 1] = '\0';
            return line;
        }
        /* no newline in what is left: keep it, and read more */
        if (lines->start > 0) {
            memmove(lines->buffer, lines->buffer + lines->start, lines->end - lines->start);
            lines->end -= lines->start;
            lines->start = 0;
        }
        if (lines->end == GL_LINES_BUFFER) {
            keep_long(lines, lines->buffer, lines->end, max);
            lines->end = 0;
        }
        if (!fill(lines))
            lines->at_end = TRUE;
    }
}
