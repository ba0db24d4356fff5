/* What gemleak's helper wrote of a process into the run directory beside
 * the engine's report (gemleak/base/protocol.h): the Ruby it ran, and
 * whether that Ruby freed its own memory at exit. Read by the analysis,
 * for the rules, and by the run's coverage, for the engine's needs. */
#ifndef GEMLEAK_PROCESS_FACTS_H
#define GEMLEAK_PROCESS_FACTS_H

#include <glib.h>

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

/* What a run's directories say of its processes, beyond their XML: which
 * ran under gemleak's helper, which of those loaded an extension of the
 * project and have XML (they were checked), and which ran outside
 * Valgrind: a list naming an extension and no XML beside it (a program
 * Valgrind skips started the process), or the helper's outside-PID.txt. */
typedef struct {
    guint runs;            /* directories marked as a gemleak run's */
    guint lists;           /* loaded-PID.txt files: processes the helper ran in */
    guint checked;         /* of those, the ones that loaded an extension and have XML */
    guint unlisted;        /* XML files of processes without a list: not Ruby, or a Ruby
                            * whose environment lost the helper (RUBYOPT replaced) */
    GPtrArray *unchecked;  /* char*: a sentence per process that loaded an extension outside
                            * Valgrind ("process 12: it loaded /x/y.so outside Valgrind..."),
                            * sorted */
    char *engine;          /* the title of the runs' engine (engine.txt): a runtime's
                            * when one ran, else a tracer's ("Valgrind") */
    char *reports;         /* what it writes, as messages name it: "Valgrind's XML" */
    char *interrupted;     /* nullable: the signal that interrupted a run of these
                            * directories ("SIGTERM", interrupted.txt) */
} GlRunCoverage;

void gl_run_coverage_clear(GlRunCoverage *coverage);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GlRunCoverage, gl_run_coverage_clear)

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

/* Returns: TRUE if @version ("3.1.2") is @min ("3.3") or newer: FALSE for
 * an empty or unparsable one. */
gboolean gl_ruby_version_at_least(const char *version, const char *min);

#endif
