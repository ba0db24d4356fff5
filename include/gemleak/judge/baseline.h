/* Baselines: the findings of an earlier run, known and accepted, so that a
 * gem that already leaks can adopt gemleak and fail only on what is new.
 * Findings are matched by fingerprint, which leaves out line numbers,
 * addresses, pids and Ruby's frames. --write-baseline writes a file to
 * commit: what identifies each finding, nothing a run or a machine
 * changes; any JSON report reads as one too. */
#ifndef GEMLEAK_BASELINE_H
#define GEMLEAK_BASELINE_H

#include <glib.h>

typedef struct GlBaseline GlBaseline;

/* Reads the "fingerprint" (and "kind_fingerprints", "structure_fingerprint")
 * of every finding of a baseline or a JSON report (--format json). One of
 * an earlier "fingerprint_version" (none: gemleak 0.1's, version 1) is
 * matched by the fingerprints of then (gl_baseline_version()).
 * Returns: (transfer full): free with gl_baseline_free(); NULL with
 * GL_ERROR_IO when it cannot be read or is not such a report, GL_ERROR_LIMIT
 * when it is far larger (64 MiB) or deeper than a report. */
GlBaseline *gl_baseline_load(const char *path, GError **error);
/* As gl_baseline_load(), from @length bytes of @data; @name names them in
 * errors. Refuses with GL_ERROR_LIMIT what nests deeper than any report. */
GlBaseline *gl_baseline_load_from_data(const char *data, gsize length, const char *name,
                                       GError **error);
void gl_baseline_free(GlBaseline *baseline);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlBaseline, gl_baseline_free)

gboolean gl_baseline_knows(const GlBaseline *baseline, const char *fingerprint);
/* Returns: the GL_FINGERPRINT_VERSION @baseline was written with: when
 * earlier, its findings are matched by each finding's earlier_fingerprints. */
int gl_baseline_version(const GlBaseline *baseline);
guint gl_baseline_size(const GlBaseline *baseline);

/* Returns: (transfer container): the findings (GlFinding*) of @findings that
 * @baseline does not know, in order; *known counts the others. A finding
 * is known by its fingerprint; an error on a freed block of several kinds
 * also when the baseline knows each of its kind_fingerprints; a block of a
 * lost structure also by its structure_fingerprint. */
GPtrArray *gl_baseline_filter(const GlBaseline *baseline, const GPtrArray *findings, guint *known);

#endif
