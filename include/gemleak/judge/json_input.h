/* gemleak's own JSON reports read back as inputs: the shards of a CI
 * matrix, each a report of its own, merge as the processes of one run do.
 * A report's findings are already classified: they are merged, not judged
 * again, which is why this input lives with the findings (judge/) and not
 * with the readers of raw input (read/), which know nothing of findings. */
#ifndef GEMLEAK_JSON_INPUT_H
#define GEMLEAK_JSON_INPUT_H

#include <glib.h>

#include "gemleak/base/text.h"
#include "gemleak/judge/classify.h"
#include "gemleak/judge/merge.h"

/* Reports larger than this are refused (a finding takes a few KiB). */
#define GL_JSON_INPUT_MAX_SIZE ((gsize) 512 * 1024 * 1024)

/* What a report says of what it read. */
typedef struct {
    guint processes;       /* the processes it read: its summary's "files" */
    guint64 errors_seen;
    guint64 by_verdict[GL_N_VERDICTS];
    guint64 repeated;      /* leak reports a later leak check repeated (--per-test) */
    guint64 inherited;     /* leak reports of blocks a forked child inherited */
    guint free_at_exit;    /* processes whose Ruby freed its memory at exit */
    GPtrArray *targets;    /* char*, owned */
    /* What the report's run could not check: a report whose gate was not
     * complete always has a problem and incomplete_files or
     * unchecked_processes above 0 (a terse one gets them here). */
    guint incomplete_files;
    guint unchecked_processes;
    GPtrArray *problems;        /* char*, owned: one message each */
    GPtrArray *truncated_files; /* char*, owned */
} GlJsonInput;

void gl_json_input_clear(GlJsonInput *input);

/* Returns: TRUE if the file @path starts as a JSON object does ('{' after
 * blanks): a report, not Valgrind XML. */
gboolean gl_json_input_detect(const char *path);

/* Reads the report at @path: adds its findings to @findings (merging equal
 * ones; @order_base orders them among the other inputs) and fills @input
 * (cleared first) with its counts, targets, and what its run could not
 * check (its problems, truncated files, processes outside Valgrind);
 * @findings may be NULL to read the targets alone.
 * Returns: FALSE with GL_ERROR_IO when it cannot be read, GL_ERROR_LIMIT
 * when too large or deep, GL_ERROR_WRONG_FORMAT when it is JSON but not a
 * gemleak report (or of a newer shape). */
gboolean gl_json_input_read(const char *path, GlFindings *findings, guint64 order_base,
                            GlJsonInput *input, GError **error);

#endif
