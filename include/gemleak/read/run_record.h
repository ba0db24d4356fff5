/* What a run recorded of what lies outside its directory, so that the
 * directory reads the same anywhere and any time (a CI artifact read on
 * another machine, a kept directory read after the extension was rebuilt
 * or the checkout moved on): GL_PROTO_RECORD_FILE, written by gemleak run
 * once it has judged the run, read by every later reading of it.
 *
 * It holds only what the run's findings needed:
 * - the project root the run's reports were relative to;
 * - for each object a finding's frames are in, as a sanitizer named them:
 *   its identity (its GNU build id; the SHA-256 of its bytes when it has
 *   none), and, at each of those frames' offsets, what the object said of
 *   it (debuginfo.h): its function symbol, its compilation unit's
 *   directory, the functions inlined there, and which of the source paths
 *   asked about that unit holds;
 * - whether each extension the run loaded was built for the engine, when
 *   the engine asks (gemleak/judge/coverage.h);
 * - the text of each source line a finding's own frames name, which the
 *   fingerprint hashes and the text report shows.
 * A directory an older gemleak wrote has none: it reads as it did, from
 * the objects and the checkout as they are.
 *
 * The file is text, a fact a line, "KEY VALUE", the value escaped as
 * g_strescape() escapes (but for bytes above 0x7f, kept as they are); an
 * "object", "at" or "source" line opens what the lines after it say:
 *
 *   version 1
 *   root /home/me/gem
 *   object /home/me/gem/lib/tally/tally.so
 *   identity build-id:3f0c...
 *   instrumented no
 *   at 0x1189
 *   symbol copy_text.cold
 *   comp-dir /home/me/gem/tmp/x86_64-linux/tally/3.4.5
 *   inlined NAME                 (one line each, innermost first)
 *   unit-file ../../../../ext/tally/tally.c
 *   source /home/me/gem/ext/tally/tally.c
 *   line 13     char *copy = malloc((size_t) length + 1);
 *
 * Lines of another key are passed over (a newer gemleak's). This module
 * reads and writes the file; what it means is the callers'. */
#ifndef GEMLEAK_RUN_RECORD_H
#define GEMLEAK_RUN_RECORD_H

#include <glib.h>

typedef struct GlRunRecord GlRunRecord;

/* Returns: (transfer full): an empty record; free with gl_run_record_free(). */
GlRunRecord *gl_run_record_new(void);
void gl_run_record_free(GlRunRecord *record);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlRunRecord, gl_run_record_free)

/* Reads the record of the run directory @dir.
 * Returns: (transfer full) (nullable): NULL when it has none (an older
 * gemleak's directory, or not a run's), and, with @error set
 * (GL_ERROR_IO), when it cannot be read or is of a newer version. */
GlRunRecord *gl_run_record_read(const char *dir, GError **error);

/* Writes @record into the run directory @dir, in one order whatever the
 * order things were added in.
 * Returns: FALSE with GL_ERROR_ENVIRONMENT when it cannot. */
gboolean gl_run_record_write(const GlRunRecord *record, const char *dir, GError **error);

/* Returns: TRUE if @record holds nothing. */
gboolean gl_run_record_is_empty(const GlRunRecord *record);

void gl_run_record_set_root(GlRunRecord *record, const char *root);
/* Returns: (transfer none) (nullable): the project root of the run. */
const char *gl_run_record_root(const GlRunRecord *record);

/* The object at @path, as the run saw it: @identity, "build-id:HEX" or
 * "sha256:HEX". */
void gl_run_record_add_object(GlRunRecord *record, const char *path, const char *identity);
/* Returns: (transfer none) (nullable): the identity @record holds of the
 * object at @path; NULL when it holds none. */
const char *gl_run_record_object_identity(const GlRunRecord *record, const char *path);
/* Returns: (transfer container): the paths of the objects @record holds
 * (char*, owned by @record), sorted. */
GPtrArray *gl_run_record_objects(const GlRunRecord *record);

/* What an object said of one of its offsets (debuginfo.h's GlDebugFrame,
 * and the source files of its unit that were asked about and found). */
typedef struct {
    const char *symbol;          /* nullable */
    const char *comp_dir;        /* nullable */
    const char *const *inlined;  /* nullable: NULL-terminated, innermost first */
    const char *const *unit_files; /* nullable: NULL-terminated, normalized */
} GlRecordedAt;

/* Records what the object at @path (added first) said of @offset. */
void gl_run_record_add_at(GlRunRecord *record, const char *path, guint64 offset,
                          const GlRecordedAt *at);
/* Returns: TRUE with *@at filled (its strings live as long as @record)
 * when @record holds what the object at @path said of @offset. */
gboolean gl_run_record_at(const GlRunRecord *record, const char *path, guint64 offset,
                          GlRecordedAt *at);

/* Whether the extension at @path was built for the run's engine (its
 * symbols have the engine's prefix). */
void gl_run_record_set_instrumented(GlRunRecord *record, const char *path, gboolean instrumented);
/* Returns: TRUE when @record says, with *@instrumented what it says. */
gboolean gl_run_record_instrumented(const GlRunRecord *record, const char *path,
                                    gboolean *instrumented);

/* Line @line (from 1) of the source file at @path, as the run read it. */
void gl_run_record_add_line(GlRunRecord *record, const char *path, guint line, const char *text);
/* Calls @each for every source line @record holds. */
void gl_run_record_foreach_line(const GlRunRecord *record,
                                void (*each)(const char *path, guint line, const char *text,
                                             gpointer data),
                                gpointer data);

/* The records of the run directories an analysis reads, each read once. */
typedef struct GlRunRecords GlRunRecords;

/* Returns: (transfer full): none yet; free with gl_run_records_free(). */
GlRunRecords *gl_run_records_new(void);
void gl_run_records_free(GlRunRecords *records);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlRunRecords, gl_run_records_free)

/* Returns: (transfer none): the record of the run directory @dir, read
 * from it when first asked (one that cannot be read adds why to @notes,
 * nullable, and is empty), empty when it has none: the one gemleak run
 * fills. Not for two threads at once. */
GlRunRecord *gl_run_records_of(GlRunRecords *records, const char *dir, GPtrArray *notes);

/* Calls @each for every record asked for, by directory, in order. */
void gl_run_records_foreach(GlRunRecords *records,
                            void (*each)(const char *dir, GlRunRecord *record, gpointer data),
                            gpointer data);

#endif
