/* Between the splitter's byte window (splitter_input.c: a descriptor,
 * plain or gzip, or memory) and its scan of the markup (splitter.c).
 * src/read/ only. */
#ifndef GEMLEAK_SPLITTER_INT_H
#define GEMLEAK_SPLITTER_INT_H

#include <glib.h>
#include <zlib.h>
#include "gemleak/read/splitter.h"

/* Enough to tell "<![CDATA[", "<!DOCTYPE", "<?xml " and a name apart. */
#define LOOKAHEAD 16
#define MAX_NAME 255
#define NONE G_MAXSIZE

typedef enum { SOURCE_UNKNOWN, SOURCE_PLAIN, SOURCE_GZIP } SourceKind;

struct GlSplitter {
    int fd;                /* fd input, the caller's; -1 for memory */
    SourceKind source;     /* plain or gzip: the first two bytes tell */
    guint8 *in;            /* fd input: bytes read, not yet used */
    gboolean in_eof;       /* the descriptor has no more */
    guint64 in_used;       /* input bytes used: where a gzip problem is */
    z_stream z;            /* SOURCE_GZIP: next_in/avail_in are in's */
    gboolean member_done;  /* SOURCE_GZIP: a member ended; another may follow */
    GByteArray *buffer;    /* fd input: what is at hand */
    const guint8 *data;    /* buffer->data, or the memory */
    gsize len;
    gsize pos;             /* the scan stands here */
    guint64 base;          /* input offset of data[0] */
    gboolean eof;
    char *failure;         /* why reading failed, once it did */
    gboolean in_root;
    gboolean seen_root;
    gboolean pending_end;  /* a self-closing root was handed out: its end comes next */
    gboolean saw_markup;   /* a '<' was met: the input is not blank */
    char root[MAX_NAME + 1];
    char name[MAX_NAME + 1];
};

/* Reading fails once: the first failure (@why, consumed) is the one told;
 * the input ends there. */
void gl_split_fail(GlSplitter *s, char *why);

/* Reads a chunk more after what is at hand; indexes stay valid.
 * Returns: FALSE at the end of the input or on failure. */
gboolean gl_split_more(GlSplitter *s);

/* Drops the bytes before the scan position once they are half of what is
 * at hand. Only where no index into the bytes is held. */
void gl_split_compact(GlSplitter *s);

/* Makes sure @n bytes from @at are at hand, if the input has them.
 * Returns: how many of them there are. */
gsize gl_split_have(GlSplitter *s, gsize at, gsize n);

/* Returns: the index of @needle at or after @from, reading on as needed
 * but not past @limit; NONE when the input ends (or the limit comes)
 * first. */
gsize gl_split_find(GlSplitter *s, gsize from, const char *needle, gsize limit);

/* Moves the scan just past @needle, dropping what it passes.
 * Returns: FALSE when the input ends first (the scan stands at its end). */
gboolean gl_split_skip_past(GlSplitter *s, gsize from, const char *needle);

#endif
