/* Reading a set of inputs (Valgrind XML files, directories of %p.xml files,
 * standard input; LeakSanitizer and AddressSanitizer reports, files or in
 * directories, told by their content; gemleak's own JSON reports), each
 * through the input seam (gemleak/read/input.h) and the one loop of the
 * judges (judgement.h), into merged findings, on several threads, with
 * the same result as one. */
#ifndef GEMLEAK_ANALYZE_H
#define GEMLEAK_ANALYZE_H

#include <glib.h>
#include "gemleak/base/sys.h"
#include "gemleak/judge/classify.h"
#include "gemleak/judge/merge.h"
#include "gemleak/read/input.h"
#include "gemleak/read/debuginfo.h"
#include "gemleak/read/run_record.h"
#include "gemleak/read/source.h"

typedef struct {
    guint processes;                     /* processes read: one an XML input, a shard's
                                          * report its own count (its "files") */
    guint64 errors_seen;                 /* errors and fatal signals read */
    guint64 by_verdict[GL_N_VERDICTS];   /* [GL_VERDICT_KEEP] counts kept records, each
                                          * an occurrence of a finding */
    guint64 repeated;                    /* kept, but a later leak check of the same
                                          * process reported the same leak again
                                          * (--per-test): counted once, there */
    guint64 inherited;                   /* kept, but every block of it a forked child
                                          * inherited: its parent's, counted there */
    GPtrArray *truncated_files;          /* char*: inputs that stopped short */
    guint incomplete_files;              /* inputs with a problem: not read in full (a
                                          * shard's report: its own count) */
    guint unchecked_processes;           /* processes that loaded an extension outside
                                          * Valgrind: gemleak run's, and those the shard
                                          * reports read name */
    guint halted_processes;              /* processes the engine stopped at an error:
                                          * the rest of what they ran did not run */
    guint marked_files;                  /* inputs whose process wrote gemleak's markers
                                          * (--per-test): it ran tests under them */
    guint free_at_exit;                  /* processes whose Ruby freed its own memory at
                                          * exit (the helper said): rules 2 and 3 were off
                                          * for them */
    guint recent_unkept;                 /* processes whose allocation front could not keep
                                          * the extensions' blocks from addresses freed of
                                          * late (the helper said): a leak at such an
                                          * address may read as reachable */
    /* --growth (judge/growth.h): asked, by a run directory's engine.txt or
     * a process's markers; the tests measured, the most repetitions one
     * ran, the processes whose measures stopped short, and the tests the
     * helper could not measure ("NAME (LOCATION): WHY", owned). */
    gboolean growth_asked;
    guint growth_measured;
    guint growth_repetitions;
    guint growth_unfinished;
    GPtrArray *growth_unmeasured;
} GlSummary;

typedef struct {
    GPtrArray *findings;   /* GlFinding*, most bytes first; owned by the table */
    GlSummary summary;
    GPtrArray *problems;   /* GError*: inputs not read in full, and gemleak run's
                            * processes not checked (exit status 3) */
    GPtrArray *notes;      /* char*: worth saying, but the run is sound */
    GHashTable *suppressed;/* suppression name -> errors it removed (guint64 in a pointer) */
    GHashTable *objects;   /* every object path a frame named (a set) */
    /* What the reports say of each process's leak check (a sanitizer's,
     * whose report says when it ran to its end: GL_PROTO_MARKER_DONE, or
     * GL_PROTO_MARKER_EXEC for an image that exec'd): pid -> TRUE when
     * every report of the process says so, FALSE when one does not; both
     * GINT_TO_POINTER. A process without any report is not in it. */
    GHashTable *checked_to_end;
    GlFindings *table;
    GlDebugInfo *debuginfo;  /* the objects the sanitizers' frames named, as read */
    GlSources *sources;      /* the source lines the findings name: as each run read
                              * them where it recorded them, else as the files are */
    GlRunRecords *records;   /* the record of each run directory read (run_record.h) */
} GlAnalysis;


/* Reads @paths (files, directories of *.xml, "-" for standard input) with
 * @jobs threads (0: one per processor; at most GL_MAX_JOBS, and fewer when
 * the system will not start more or the address space will not hold their
 * memory: a note says so). Inputs that cannot be read become
 * problems; the others are read all the same.
 * Returns: (transfer full): free with gl_analysis_free(). */
GlAnalysis *gl_analyze(const char *const *paths, const GlRules *rules, guint jobs);

/* As gl_analyze(), knowing which processes a signal killed: @killed
 * (nullable) maps a pid to the signal that killed it (both
 * GINT_TO_POINTER; gemleak run's GlRunResult.killed). An input named
 * "<pid>.xml" of such a process that stops short (the reader's
 * GL_ERROR_TRUNCATED) is a note, "PATH: process 123 was killed by SIGKILL;
 * its XML ends early", not a problem: the process never finished writing
 * it. It still counts in summary.truncated_files. @objects (nullable):
 * the objects a run read already, naming its reports' frames (the
 * analysis keeps a reference), read again otherwise. */
GlAnalysis *gl_analyze_with_killed(const char *const *paths, const GlRules *rules, guint jobs,
                                   GHashTable *killed, GlDebugInfo *objects);
void gl_analysis_free(GlAnalysis *analysis);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlAnalysis, gl_analysis_free)

/* Returns: how many records were read and not kept: skipped by a rule,
 * repeated by a later leak check, or inherited by a forked child. */
guint64 gl_summary_skipped(const GlSummary *summary);

/* Adds to @record (the run directory's, which gemleak run writes) what
 * the findings of @analysis needed from outside the directory, as they
 * were read: @project_root, each sanitizer frame's object (its identity)
 * and what it said of the frame's offset, and the text of each source line
 * their frames in a target name. Nothing of what was skipped: its size
 * goes with the findings. */
void gl_analysis_record(GlAnalysis *analysis, GlRunRecord *record, const char *project_root);

#endif
