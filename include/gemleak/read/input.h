/* The input seam: every format gemleak reads (Valgrind's XML, the
 * LeakSanitizer and AddressSanitizer reports, gemleak's own JSON report
 * read back) reads into the same things, and the stages after read/ see
 * nothing else:
 *   - a stream of GlRecord (gemleak/base/record.h), one at a time, (transfer
 *     full), NULL at the end;
 *   - what the input says of its process (GlProcess, gemleak/read/process.h),
 *     filled in as reading goes;
 *   - the problems met (GError*, GL_ERROR domain: an input cut short, not the
 *     format it should be), notes, and how many errors each suppression
 *     removed.
 * Which format an input is, its first bytes say (input.c asks each format
 * in turn); a format is one file of src/read/ that fills in a
 * GlInputFormat (src/read/input_int.h) and one line in input.c's table. As
 * curl's vtls.c stands before its TLS backends, this file is all the rest
 * of gemleak calls. */
#ifndef GEMLEAK_INPUT_H
#define GEMLEAK_INPUT_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/read/process.h"

typedef struct GlInput GlInput;
typedef struct GlInputFormat GlInputFormat;

/* How much of a file's start the formats look at to tell it is theirs. */
#define GL_INPUT_HEAD_BYTES ((gsize) 64 * 1024)

/* Returns: (transfer none) (nullable): the format named @name
 * ("valgrind-xml", "sanitizer", "gemleak-json"), NULL for none. */
const GlInputFormat *gl_input_format_find(const char *name);

/* Returns: (transfer none): @format's name. */
const char *gl_input_format_name(const GlInputFormat *format);

/* Returns: (transfer full): what gemleak reads, for help: a line "  - "
 * for each format (the one that reads what no other claims first, then
 * the table's order), with its continuation lines indented to match. */
char *gl_input_formats_help(void);

/* Opens @path, "-" for standard input, read as Valgrind's XML (the first
 * bytes of a pipe are gone once read); a regular file is read by the
 * format its first bytes say, Valgrind's XML when no other claims it.
 * @listed: the file was found in a directory, not named by the user: it
 * is opened without waiting (a FIFO put there after it was listed must not
 * block), only a regular file is read (another gets *@skipped (transfer
 * full), a note that says why), and it is never taken for a JSON report.
 * A file the user named is read whatever it is: gemleak filter
 * <(zcat 123.xml.gz).
 * Returns: (transfer full) (nullable): the input, to free with
 * gl_input_free(); NULL with @error set (GL_ERROR_IO) when it cannot be
 * opened, or with *@skipped set. */
GlInput *gl_input_open(const char *path, gboolean listed, char **skipped, GError **error);

/* Reads @size bytes of @data, which must outlive the input (tests, the
 * fuzzer), as @format (nullable: as gl_input_open() tells a file's);
 * @name names it in messages.
 * Returns: (transfer full). */
GlInput *gl_input_open_memory(const GlInputFormat *format, const char *data, gsize size,
                              const char *name);

void gl_input_free(GlInput *input);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlInput, gl_input_free)

/* Returns: (transfer full) (nullable): the next record, as soon as it is
 * complete, or NULL at the end of the input. What is wrong in the input is
 * a problem (gl_input_problems()), and reading goes on after it. */
GlRecord *gl_input_next(GlInput *input);

/* Returns: (transfer none): what the input said of its process so far;
 * all of it once gl_input_next() has returned NULL. */
const GlProcess *gl_input_process(const GlInput *input);

/* Returns: (transfer none): the problems met so far (GError*), in order. */
const GPtrArray *gl_input_problems(const GlInput *input);

/* Returns: (transfer none): what is worth saying but lost nothing (char*). */
const GPtrArray *gl_input_notes(const GlInput *input);

/* Returns: (transfer none) (nullable): how many errors each suppression
 * removed (name -> guint64 in a pointer). */
GHashTable *gl_input_suppression_counts(const GlInput *input);

/* Returns: (transfer none): the format @input is read as. */
const GlInputFormat *gl_input_format(const GlInput *input);

/* Returns: (transfer none) (nullable): the directory the input's file is
 * in, where gemleak's helper wrote what it knew of the process; NULL for
 * standard input and memory. */
const char *gl_input_dir(const GlInput *input);

/* Returns: (transfer full): the files of @dir that some format reads
 * (Valgrind's *.xml and *.xml.gz by their names, a sanitizer's report by
 * its first bytes, whatever its name), sorted, or NULL with @error set
 * when the directory cannot be read. The names that are not regular files
 * (a FIFO would block the reader for ever, a symbolic link to /dev/zero
 * never ends) are left out, each with a note added to @skipped (nullable).
 * A name that cannot be looked at is listed: opening it says why not. */
GPtrArray *gl_input_list(const char *dir, GPtrArray *skipped, GError **error);

/* Returns: TRUE if @dir holds at least one file gl_input_list() lists: a
 * file of any format gemleak reads. */
gboolean gl_input_dir_has_inputs(const char *dir);

#endif
