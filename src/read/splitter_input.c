/* The splitter's byte window (see splitter_int.h): what is at hand of the
 * input, read a chunk at a time from a descriptor (plain, or gzip members
 * one after another, inflated) or held in memory, and dropped once the
 * scan (splitter.c) has passed it. */
#define _GNU_SOURCE  /* memmem */
#include "splitter_int.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK ((gsize) 256 * 1024)

/* What is read from the descriptor before it is inflated (or, plain,
 * handed on): a gzip member's header and trailer fit many times over. */
#define IN_CHUNK ((gsize) 64 * 1024)

static GlSplitter *splitter_new(void)
{
    GlSplitter *s = g_new0(GlSplitter, 1);
    return s;
}

GlSplitter *gl_splitter_new_for_fd(int fd)
{
    GlSplitter *s = splitter_new();
    s->fd = fd;
    s->in = g_malloc(IN_CHUNK);
    s->z.next_in = s->in;
    s->buffer = g_byte_array_sized_new((guint) (READ_CHUNK + LOOKAHEAD));
    s->data = s->buffer->data;
    return s;
}

GlSplitter *gl_splitter_new_for_memory(const char *data, gsize size)
{
    GlSplitter *s = splitter_new();
    s->fd = -1;
    static const guint8 nothing[1];
    s->data = data != NULL ? (const guint8 *) data : nothing;
    s->len = data != NULL ? size : 0;
    s->eof = TRUE;
    return s;
}

void gl_splitter_free(GlSplitter *splitter)
{
    if (splitter == NULL)
        return;
    if (splitter->source == SOURCE_GZIP)
        inflateEnd(&splitter->z);
    g_free(splitter->in);
    if (splitter->buffer != NULL)
        g_byte_array_unref(splitter->buffer);
    g_free(splitter->failure);
    g_free(splitter);
}


/* Reading fails once: the first failure is the one told. */
void gl_split_fail(GlSplitter *s, char *why)
{
    if (s->failure == NULL)
        s->failure = why;
    else
        g_free(why);
    s->eof = TRUE;
}

/* read(2), again when a signal came, and waiting when the descriptor was
 * left non-blocking by whoever gave it (a pipe, a terminal).
 * Returns: as read(2). */
static ssize_t read_fd(int fd, void *out, gsize room)
{
    for (;;) {
        ssize_t n = read(fd, out, room);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        struct pollfd wait = { .fd = fd, .events = POLLIN };
        if (poll(&wait, 1, -1) < 0 && errno != EINTR)
            return -1;
    }
}

/* Reads more of the descriptor after the input bytes not yet used.
 * Returns: FALSE when none came (the end, or a failure). */
static gboolean refill(GlSplitter *s)
{
    if (s->in_eof || s->failure != NULL)
        return FALSE;
    if (s->z.avail_in > 0 && s->z.next_in != s->in)
        memmove(s->in, s->z.next_in, s->z.avail_in);
    s->z.next_in = s->in;
    if (s->z.avail_in >= IN_CHUNK)
        return FALSE;
    ssize_t n = read_fd(s->fd, s->in + s->z.avail_in, IN_CHUNK - s->z.avail_in);
    if (n < 0) {
        gl_split_fail(s, g_strdup(g_strerror(errno)));
        return FALSE;
    }
    s->z.avail_in += (uInt) n;
    s->in_eof = n == 0;
    return n > 0;
}

/* Hands on plain input: what was read to tell it from gzip, then the
 * descriptor's bytes straight into @out. Returns: how many. */
static gsize read_plain(GlSplitter *s, guint8 *out, gsize room)
{
    if (s->z.avail_in > 0) {
        gsize n = MIN(room, (gsize) s->z.avail_in);
        memcpy(out, s->z.next_in, n);
        s->z.next_in += n;
        s->z.avail_in -= (uInt) n;
        return n;
    }
    ssize_t n = s->in_eof ? 0 : read_fd(s->fd, out, room);
    if (n < 0) {
        gl_split_fail(s, g_strdup(g_strerror(errno)));
        return 0;
    }
    s->in_eof = n == 0;
    return (gsize) n;
}

/* Inflates into @out as far as the input goes, member after member. zlib's
 * gzread cannot be used: it takes whatever follows a member that is not a
 * gzip header for the end of the input, and drops the bytes of the read
 * in which a member's CRC does not match. Here every such problem is a
 * failure, told after the bytes that came before it.
 * Returns: how many bytes were inflated. */
static gsize read_gzip(GlSplitter *s, guint8 *out, gsize room)
{
    z_stream *z = &s->z;
    z->next_out = out;
    z->avail_out = (uInt) room;
    while (z->avail_out > 0 && s->failure == NULL) {
        if (z->avail_in == 0 && !refill(s)) {
            if (s->failure == NULL && !s->member_done)
                gl_split_fail(s, g_strdup_printf("the gzip data ends early, at compressed byte %"
                                        G_GUINT64_FORMAT " (the file was cut)", s->in_used));
            break;
        }
        if (s->member_done) {
            inflateReset(z);
            s->member_done = FALSE;
        }
        uInt had = z->avail_in;
        guint64 at = s->in_used;
        gboolean after_member = z->total_in == 0 && at > 0;
        int code = inflate(z, Z_NO_FLUSH);
        s->in_used += had - z->avail_in;
        const char *why = z->msg != NULL ? z->msg : zError(code);
        if (code == Z_STREAM_END)
            s->member_done = TRUE;
        else if (code != Z_OK && code != Z_BUF_ERROR && after_member)
            gl_split_fail(s, g_strdup_printf("what follows the gzip data, from compressed byte %"
                                    G_GUINT64_FORMAT ", is not gzip (%s)", at, why));
        else if (code != Z_OK && code != Z_BUF_ERROR)
            gl_split_fail(s, g_strdup_printf("corrupt gzip data at compressed byte %" G_GUINT64_FORMAT
                                    ": %s", s->in_used, why));
    }
    return room - z->avail_out;
}

/* Tells gzip from plain by the first two bytes, as zlib does.
 * Returns: FALSE when it cannot start. */
static gboolean start_source(GlSplitter *s)
{
    while (s->z.avail_in < 2 && refill(s))
        ;
    if (s->failure != NULL)
        return FALSE;
    if (s->z.avail_in < 2 || s->in[0] != 0x1f || s->in[1] != 0x8b) {
        s->source = SOURCE_PLAIN;
        return TRUE;
    }
    int code = inflateInit2(&s->z, 15 + 16);
    if (code != Z_OK) {
        gl_split_fail(s, g_strdup_printf("zlib cannot start: %s", zError(code)));
        return FALSE;
    }
    s->source = SOURCE_GZIP;
    return TRUE;
}

/* Reads a chunk more after what is at hand; indexes stay valid.
 * Returns: FALSE at the end of the input or on failure. */
gboolean gl_split_more(GlSplitter *s)
{
    if (s->eof)
        return FALSE;
    if (s->source == SOURCE_UNKNOWN && !start_source(s))
        return FALSE;
    gsize old = s->buffer->len;
    g_byte_array_set_size(s->buffer, (guint) (old + READ_CHUNK));
    guint8 *out = s->buffer->data + old;
    gsize n = s->source == SOURCE_GZIP ? read_gzip(s, out, READ_CHUNK)
                                       : read_plain(s, out, READ_CHUNK);
    g_byte_array_set_size(s->buffer, (guint) (old + n));
    s->data = s->buffer->data;
    s->len = s->buffer->len;
    if (n == 0)
        s->eof = TRUE;
    return n > 0;
}

/* Drops the bytes before the scan position once they are half of what is
 * at hand: the moves cost one copy of each byte at most. Only where no
 * index into the bytes is held. */
void gl_split_compact(GlSplitter *s)
{
    if (s->buffer == NULL || s->pos == 0 || s->pos < s->len / 2)
        return;
    g_byte_array_remove_range(s->buffer, 0, (guint) s->pos);
    s->base += s->pos;
    s->pos = 0;
    s->data = s->buffer->data;
    s->len = s->buffer->len;
}

/* Makes sure @n bytes from @at are at hand, if the input has them.
 * Returns: how many of them there are. */
gsize gl_split_have(GlSplitter *s, gsize at, gsize n)
{
    while (s->len < at + n && gl_split_more(s))
        ;
    return MIN(n, s->len - at);
}

/* Returns: the index of @needle at or after @from, reading on as needed
 * but not past @limit; NONE when the input ends (or the limit comes)
 * first. */
gsize gl_split_find(GlSplitter *s, gsize from, const char *needle, gsize limit)
{
    gsize n = strlen(needle);
    for (;;) {
        const guint8 *hit = from < s->len ? memmem(s->data + from, s->len - from, needle, n) : NULL;
        if (hit != NULL)
            return (gsize) (hit - s->data);
        if (s->len >= n)
            from = MAX(from, s->len - n + 1);
        if (s->len >= limit || !gl_split_more(s))
            return NONE;
    }
}

/* Moves the scan just past @needle, dropping what it passes: for things
 * at the top level that nothing keeps (comments, processing instructions).
 * Returns: FALSE when the input ends first (the scan stands at its end). */
gboolean gl_split_skip_past(GlSplitter *s, gsize from, const char *needle)
{
    gsize n = strlen(needle);
    for (;;) {
        const guint8 *hit = from < s->len ? memmem(s->data + from, s->len - from, needle, n) : NULL;
        if (hit != NULL) {
            s->pos = (gsize) (hit - s->data) + n;
            return TRUE;
        }
        s->pos = s->len >= n ? MAX(from, s->len - n + 1) : from;
        gl_split_compact(s);
        from = s->pos;
        if (!gl_split_more(s)) {
            s->pos = s->len;
            return FALSE;
        }
    }
}
