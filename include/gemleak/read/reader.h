/* A streaming reader of Valgrind memcheck XML: the splitter cuts the input
 * into elements, libxml2's xmlTextReader parses each one, and the reader
 * hands out one complete error at a time, never holding more of the input
 * than the element it is reading. It knows XML and Valgrind's protocol
 * (versions 4 to 6), nothing about Ruby. */
#ifndef GEMLEAK_READER_H
#define GEMLEAK_READER_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/read/process.h"


typedef struct GlReader GlReader;

/* Opens @path for reading, plain or gzip-compressed; "-" is standard input.
 * Returns: (transfer full) (nullable): a reader to free with gl_reader_free(),
 * or NULL with @error set (GL_ERROR_IO) when the file cannot be opened. */
GlReader *gl_reader_new_for_path(const char *path, GError **error);

/* Reads from @fd, which stays the caller's to close; @name names it in messages.
 * Returns: (transfer full): a reader to free with gl_reader_free(). */
GlReader *gl_reader_new_for_fd(int fd, const char *name);

/* Reads from memory that must outlive the reader (tests, the fuzzer).
 * Returns: (transfer full): a reader to free with gl_reader_free(). */
GlReader *gl_reader_new_for_memory(const char *data, gsize size, const char *name);

void gl_reader_free(GlReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlReader, gl_reader_free)

/* Reads up to the end of the next <error> (or <fatal_signal>, given as a
 * record of kind "FatalSignal"). What is wrong in the input (a document
 * cut short, an element that is not well-formed) is noted as a problem and
 * reading goes on after it: every complete error is handed out.
 * Returns: (transfer full) (nullable): the record, or NULL at the end of the
 * input, with @error set to the first problem if there was one (EMPTY,
 * NOT_XML, NOT_VALGRIND, WRONG_TOOL, TRUNCATED, MALFORMED, LIMIT or IO). */
GlRecord *gl_reader_next(GlReader *reader, GError **error);

/* Returns: (transfer none): every problem met so far (GError*, domain
 * GL_ERROR, one line each, naming the input), in order. */
const GPtrArray *gl_reader_problems(const GlReader *reader);

/* Returns: (transfer none): what is worth saying about the input but lost
 * nothing (char*, naming the input): several documents in it, bytes that
 * were not UTF-8 and were replaced. Complete once gl_reader_next() has
 * returned NULL. */
const GPtrArray *gl_reader_notes(const GlReader *reader);

/* Returns: (transfer none): how many errors each suppression removed
 * (<suppcounts>: name -> guint64 in a pointer), over every document read. */
GHashTable *gl_reader_suppression_counts(const GlReader *reader);

/* Returns: (transfer none): what the document being read said of its
 * process so far (stands_for 1 from the start). */
const GlProcess *gl_reader_process(const GlReader *reader);

/* Returns: (transfer none): the name the reader uses for its input in messages. */
const char *gl_reader_name(const GlReader *reader);

/* Only client messages (VALGRIND_PRINTF) that begin with @prefix (nullable:
 * every one) become the marker of the records after them: a message of the
 * program's own between two of gemleak's then hides nothing. */
void gl_reader_set_marker_prefix(GlReader *reader, const char *prefix);

/* Loads libxml2 and sets it up once per process (no external entities),
 * in whichever thread comes first: the others wait until it is done.
 * gl_reader_new_* call it: a process that reads no Valgrind XML never
 * loads libxml2 (gemleak/base/xml.h). */
void gl_reader_global_init(void);

#endif
