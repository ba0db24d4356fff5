/* Where reports go. Each report is a sink: a format and a destination (the
 * command's stream, standard output, a descriptor path such as /dev/stdout,
 * a file). Sinks are settled and checked before anything is read or run,
 * so that a report that could never be written, or would destroy what
 * gemleak reads, costs one line and not a suite's run under Valgrind; they
 * are written once the findings are known. Knows nothing of options. */
#ifndef GEMLEAK_SINKS_H
#define GEMLEAK_SINKS_H

#include <stdio.h>
#include <glib.h>
#include "gemleak/report/report.h"

typedef struct GlSinks GlSinks;

/* A sink with no path writes to @stream (standard output for filter,
 * standard error for run); one with the path "-" to @out. Both outlive
 * the sinks.
 * Returns: (transfer full): no sinks yet; the caller frees it with
 * gl_sinks_free(). */
GlSinks *gl_sinks_new(FILE *stream, FILE *out);

void gl_sinks_free(GlSinks *sinks);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlSinks, gl_sinks_free)

/* Adds a report, in the order they will be written. @label (transfer
 * full) names it in messages: "the json report (r.json)". @path (transfer
 * none, outlives @sinks; nullable: the stream) is as the user gave it.
 * @color is --color's value ("auto", "always", "never"). @every_finding:
 * the report gets every finding, the ones the baseline knows too
 * (--write-baseline). */
void gl_sinks_add(GlSinks *sinks, const GlReporter *reporter, char *label, const char *path,
                  const char *color, gboolean every_finding);

/* What gemleak will read, which no report may overwrite or go inside. */
typedef struct {
    const char *const *inputs;        /* files and directories, NULL-terminated (nullable) */
    const char *skip_functions_file;  /* nullable */
    const char *keep_dir;             /* --keep-xml (nullable; may not exist yet) */
    const char *baseline;             /* --baseline (nullable): an every_finding sink
                                       * may refresh it, as it is read first */
} GlSinkReads;

/* Refuses, with GL_ERROR_USAGE: two reports in one stream (unreadable) or
 * one file (one lost); a report over a file of @reads or inside one of its
 * directories (the input would be lost, or the next run would read the
 * report as XML); a report that is a directory, whose directory does not
 * exist, or in which no file can be made (tried: root, ACLs and read-only
 * mounts say it only then). */
gboolean gl_sinks_check(const GlSinks *sinks, const GlSinkReads *reads, GError **error);

/* Writes every report with @context; every_finding sinks get @all_findings
 * and no baseline count. A regular file is replaced whole
 * (gl_file_replace(), through a symbolic link to its target), anything
 * else (a FIFO, /dev/null, a stream) written as it is. Every report is
 * tried: one that cannot be written is said on @err. The gate's line and
 * @context's exit_line are said once on gemleak's streams: by a text
 * report in the command's stream (else on @err, standard error), or by
 * the sinks on @err after the reports; other reports written to a stream
 * leave them out, and reports in files keep theirs.
 * Returns: FALSE when a report could not be written. */
gboolean gl_sinks_write(const GlSinks *sinks, const GlReportContext *context,
                        const GPtrArray *all_findings, FILE *err);

/* Writes @text (@length bytes) instead of the @format report ("json") to
 * each sink of that format that is a file, as the report would have been
 * (a symbolic link's target, gl_file_replace() for a regular file): what
 * gemleak says when it stops before its reports. Standard output, the
 * command's stream and descriptors get nothing.
 * Returns: FALSE with @error set (the first failure) when one could not
 * be written; the others are. */
gboolean gl_sinks_write_instead(const GlSinks *sinks, const char *format, const char *text,
                                gsize length, GError **error);

#endif
