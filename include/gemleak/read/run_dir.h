/* Everything gemleak reads of a run directory (its files are
 * gemleak/base/protocol.h's): what the helper wrote of each process (the
 * Ruby it ran, the extensions it loaded, what ran outside the engine, what
 * its test files took), what gemleak wrote of the run (engine.txt,
 * interrupted.txt), and from all of it the run's coverage: which processes
 * were checked. Every file is read bounded, and only when it is a regular
 * file (gl_file_read_regular()). gemleak run and gemleak filter read a
 * directory alike; making, locking, writing, compressing and cleaning one
 * is gemleak/run/rundir.h's. */
#ifndef GEMLEAK_RUN_DIR_H
#define GEMLEAK_RUN_DIR_H

#include <glib.h>

/* Returns: TRUE if @name is @prefix, one or more digits (a pid), @suffix:
 * "loaded-12.txt" for GL_PROTO_LOADED_PREFIX and GL_PROTO_FILE_SUFFIX,
 * "12.xml" for "" and ".xml". */
gboolean gl_run_dir_is_pid_file(const char *name, const char *prefix, const char *suffix);

/* ---- what the helper wrote of a process ---- */

typedef struct {
    gboolean known;          /* the helper said (ruby-PID.txt was read) */
    char ruby_version[32];   /* "3.4.5"; empty when unknown */
    gboolean free_at_exit;   /* Ruby freed its own memory at exit */
    gboolean frame_pointers; /* its Ruby was built keeping frame pointers */
} GlProcessFacts;

/* Reads what the helper wrote of process @pid in the run directory @dir.
 * Returns: TRUE if it wrote anything, with @facts filled in; FALSE, with
 * @facts zeroed, when it did not (no helper in that process, or not a
 * run directory). */
gboolean gl_process_facts_read(const char *dir, gint64 pid, GlProcessFacts *facts);

/* Returns: (transfer full) (nullable): the extensions process @pid loaded,
 * as the helper listed them in the run directory @dir (loaded-PID.txt),
 * "A, B", valid UTF-8 (a path's raw bytes); NULL when it loaded none. */
char *gl_process_loaded(const char *dir, gint64 pid);

/* Returns: (transfer full): the paths of the extensions process @pid
 * loaded (char*, raw bytes), as the helper listed them in the run
 * directory @dir; empty when it loaded none. */
GPtrArray *gl_process_loaded_paths(const char *dir, gint64 pid);

/* Returns: (transfer full): the pids (gint64) of the processes the helper
 * ran in, in the run directory @dir (its loaded-PID.txt files), in the
 * order the directory lists them. */
GArray *gl_process_listed(const char *dir);

/* Reads the outside-PID.txt files the helper wrote in @dir, a sentence
 * each, for processes that ran outside the engine and could not start
 * again under it (forked from a launcher, a launcher seen at its exit):
 * what they ran was not checked.
 * Returns: (transfer full): "process 12: forked from the launcher rake, it
 * loaded /x/y.so outside Valgrind" for each, sorted; empty when there are
 * none. */
GPtrArray *gl_run_dir_outside(const char *dir);

/* Returns: (transfer full) (nullable): the versions of Ruby the processes
 * of the run in @dir ran, as their helper said ("3.1.2, 3.4.5"), sorted;
 * NULL when none said. */
char *gl_run_dir_ruby_versions(const char *dir);

/* Reads the durations-PID.txt files the helper wrote in @dir: the
 * milliseconds the tests of each file took, by its absolute path.
 * Returns: (transfer full): path -> gdouble* seconds, summed over the
 * processes; empty when no process timed any test. */
GHashTable *gl_run_dir_test_durations(const char *dir);

/* ---- what gemleak wrote of the run ---- */

/* What a run directory says of the engine that wrote it (engine.txt). */
typedef struct {
    char *title;         /* "Valgrind", "LeakSanitizer" */
    char *name;          /* "valgrind", "lsan" */
    char *version;       /* nullable: "3.19.0", or the runtime's path */
    char *reports;       /* what it writes, in messages: "Valgrind's XML" */
    char *outside;       /* why a process with no report of it ran outside it */
    char *log;           /* nullable: "lsan" for reports named lsan.PID; NULL: PID.xml */
    char *instrumented;  /* nullable: "__asan_": what an extension built for it holds */
    char *min_ruby;      /* nullable: "3.3" */
    char *min_ruby_why;  /* nullable */
    char *leaks_min_ruby;      /* nullable: the oldest Ruby it checks leaks on */
    char *leaks_min_ruby_why;  /* nullable */
    /* It writes nothing for a process without leaks: a clean run of it
     * leaves no report at all. */
    gboolean silent_when_clean;
    /* Each process's report ends with "gemleak:done" once its leak check at
     * exit ran to its end (GL_PROTO_ENGINE_PROOF). */
    gboolean proof;
} GlRunFacts;

/* Reads engine.txt in the run directory @dir; Valgrind's when there is
 * none (gemleak wrote none for Valgrind before). Clear @facts with
 * gl_run_facts_clear(). */
void gl_run_facts_read(const char *dir, GlRunFacts *facts);
void gl_run_facts_clear(GlRunFacts *facts);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GlRunFacts, gl_run_facts_clear)

/* ---- which processes were checked ---- */

/* What a run's directories say of its processes, beyond their reports:
 * which ran under gemleak's helper, which of those loaded an extension of
 * the project and have a report (they were checked), and which ran
 * outside the engine: a list naming an extension and no report beside it
 * (a program the engine skips started the process), or the helper's
 * outside-PID.txt. */
typedef struct {
    guint runs;            /* directories marked as a gemleak run's */
    guint lists;           /* loaded-PID.txt files: processes the helper ran in */
    guint checked;         /* of those, the ones that loaded an extension and have a report */
    guint unlisted;        /* XML files of processes without a list: not Ruby, or a Ruby
                            * whose environment lost the helper (RUBYOPT replaced) */
    GPtrArray *unchecked;  /* char*: a sentence per process that loaded an extension outside
                            * the engine ("process 12: it loaded /x/y.so outside Valgrind..."),
                            * sorted */
    char *engine;          /* the title of the runs' engine (engine.txt): a runtime's
                            * when one ran, else a tracer's ("Valgrind") */
    char *reports;         /* what it writes, as messages name it: "Valgrind's XML" */
    char *interrupted;     /* nullable: the signal that interrupted a run of these
                            * directories ("SIGTERM", interrupted.txt) */
} GlRunCoverage;

/* Fills @coverage from the directories of @inputs (directories, or the
 * directory of each file; "-" has none). Clear it with
 * gl_run_coverage_clear(); what it means for the run is the judges'
 * (gemleak/judge/coverage.h). */
void gl_run_dir_coverage(const char *const *inputs, GlRunCoverage *coverage);
void gl_run_coverage_clear(GlRunCoverage *coverage);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GlRunCoverage, gl_run_coverage_clear)

/* Returns: TRUE if @version ("3.1.2") is @min ("3.3") or newer: FALSE for
 * an empty or unparsable one. */
gboolean gl_ruby_version_at_least(const char *version, const char *min);

#endif
