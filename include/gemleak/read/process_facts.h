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

/* Returns: TRUE if @version ("3.1.2") is @min ("3.3") or newer: FALSE for
 * an empty or unparsable one. */
gboolean gl_ruby_version_at_least(const char *version, const char *min);

#endif
