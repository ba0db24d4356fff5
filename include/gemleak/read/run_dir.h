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
    gboolean recent_unkept;  /* the allocation front could not keep the extensions'
                              * blocks from addresses freed of late */
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
 * loaded /x/y.so outside Valgrind" for each (one cut short: "process 7:
 * below a launcher, it ran outside " and the engine's title, as engine.txt
 * gives it), sorted; empty when there are none. */
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

/* What an engine can do, a bit each, in GlEngineFacts.caps: asked with
 * gl_engine_supports() of an engine (gemleak/run/engine.h), as curl's
 * backends answer Curl_ssl_supports(), and with gl_engine_facts_say() of
 * what a run directory recorded (the bits with a line in
 * GL_ENGINE_FILE_KEYS below). */
typedef enum {
    /* version() says a version ("3.19.0"); without it, the path of the
     * runtime it found, said in brackets after the title */
    GL_ENGINE_FOUND_IS_VERSION = 1u << 0,
    /* it reads suppression files (gemleak passes its own and the
     * project's) and has a program of its own that --valgrind names and
     * --valgrind-opt gives options to */
    GL_ENGINE_OWN_PROGRAM = 1u << 1,
    /* it writes nothing for a process without leaks (the helper's
     * engine-PID.txt accounts for such a process): a clean run of it
     * leaves no report at all */
    GL_ENGINE_SILENT_WHEN_CLEAN = 1u << 2,
    /* it unwinds by frame pointers when Ruby keeps them
     * (GlRunOptions.fast_stacks), exactly otherwise */
    GL_ENGINE_FAST_WITH_FRAME_POINTERS = 1u << 3,
    /* it unwinds by frame pointers whatever Ruby is, and pays exact stacks
     * only where a leak's stack was cut: the commands run again, the
     * engine unwinding exactly at those leaks' sites only
     * (GlRunOptions.exact_sites; gemleak/run/exact.h) */
    GL_ENGINE_EXACT_WHERE_LEAKED = 1u << 4,
    /* its runtime's leak check can be made at exit by the library gemleak
     * preloads into every process (src/agent/proof.c), which then
     * says it ran to its end ("gemleak:done"): a process of such a run
     * that loaded a target without it was not checked. In engine.txt, the
     * run's: set when that library was preloaded, and then each process's
     * report ends with "gemleak:done" once its check ran to its end */
    GL_ENGINE_PROVES_CHECKS = 1u << 5,
    /* it answers Valgrind's client requests: the helper then checks for
     * leaks right after a fork, in every run, so that what a child
     * inherited is told from what it lost itself (attribute.h) */
    GL_ENGINE_CLIENT_REQUESTS = 1u << 6,
    /* it follows every exec itself, whatever the program (Valgrind traces
     * a static program, and what it starts); without it, it is in a
     * process through LD_PRELOAD, which a static program never loads, and
     * gemleak's guard follows such a program (GL_PROTO_GUARD_VARIABLE) */
    GL_ENGINE_FOLLOWS_EXEC = 1u << 7,
    /* its runtime leaves frames unnamed (LeakSanitizer's all of them,
     * symbolize=0: the module and offset alone, which cost nothing in the
     * process; AddressSanitizer's those it cannot name): gemleak names them
     * from the objects once a run, in the run directory's reports, before
     * it reads them (gemleak/read/sanitizer_names.h). In engine.txt, so
     * that gemleak filter names what a run cut short left unnamed */
    GL_ENGINE_NAMES_FRAMES = 1u << 8,
} GlEngineCaps;

/* What a run's engine.txt says of the engine that ran it: what the engine
 * says of itself (its GlEngine.facts, gemleak/run/engine.h) and what the
 * run adds (the version it found, whether its checks were proved).
 * gemleak run writes it (gl_rundir_write_engine(), gemleak/run/rundir.h)
 * and every reading of the directory reads it back
 * (gl_engine_facts_read()), both by GL_ENGINE_FILE_KEYS. In an engine the
 * strings are its own; read back, they are @facts' (transfer full). */
typedef struct {
    const char *title;         /* "Valgrind", "LeakSanitizer": messages say it */
    const char *name;          /* "valgrind", "lsan": as a user names it (--engine) */
    const char *version;       /* (nullable) the run's: "3.19.0", or the runtime's path */
    /* What it writes, in messages: "Valgrind's XML", "LeakSanitizer's
     * reports" ("... could not all be read", "... is kept in DIR"). */
    const char *reports;
    /* Why a process that loaded a target and left no report ran outside
     * it: "it has no XML: a program Valgrind does not trace started it". */
    const char *outside;
    /* (nullable) What it writes in the run directory, one file a process:
     * "lsan" for lsan.PID (a sanitizer's log_path); NULL: PID.xml. */
    const char *log;
    /* (nullable) What every dynamic symbol table of an extension compiled
     * for the engine holds ("__asan_"): a target without it is named, its
     * invalid accesses unseen (gemleak/judge/coverage.h). */
    const char *instrumented_prefix;
    /* (nullable) The oldest Ruby it checks leaks on ("3.3"), and why: on
     * an older one it runs with GlRunOptions.leaks_unchecked, and the run
     * says that leaks were not checked. */
    const char *leaks_min_ruby;
    const char *leaks_min_ruby_why;
    /* (nullable) The oldest Ruby it gives true verdicts on ("3.3"), and
     * why: a process of the run on an older Ruby (its helper says which
     * it ran) makes the run INCOMPLETE. */
    const char *min_ruby;
    const char *min_ruby_why;
    guint caps;                /* GlEngineCaps bits */
    /* The run's: --growth's repetitions of each test (GL_PROTO_GROWTH_VARIABLE);
     * 0: growth was not asked for */
    guint growth;
} GlEngineFacts;

/* engine.txt (GL_PROTO_ENGINE_FILE), described once: the title on its
 * first line, then a "KEY VALUE" line for each row below that has a value,
 * in this order. TEXT(KEY, FIELD): a string of GlEngineFacts, written when
 * it is not NULL and is one line; FLAG(KEY, BIT): a GlEngineCaps bit of
 * GlEngineFacts.caps, written "KEY yes" when set; NUMBER(KEY, FIELD): a
 * guint of GlEngineFacts, written in decimal when it is not 0. The writer
 * (gl_rundir_write_engine()) and the reader (gl_engine_facts_read()) both
 * go by these rows (gl_engine_keys()), and tests/read/check_run_dir.c
 * holds every row to both: a new fact of an engine that the readers of a
 * run directory need is a field (or a bit) and a line here (doc/guide.md,
 * "A new engine capability"). */
#define GL_ENGINE_FILE_KEYS(TEXT, FLAG, NUMBER)              \
    TEXT("name", name)                                       \
    TEXT("version", version)                                 \
    TEXT("reports", reports)                                 \
    TEXT("outside", outside)                                 \
    TEXT("log", log)                                         \
    TEXT("instrumented", instrumented_prefix)                \
    FLAG("silent-when-clean", GL_ENGINE_SILENT_WHEN_CLEAN)   \
    FLAG("proof", GL_ENGINE_PROVES_CHECKS)                   \
    FLAG("names-frames", GL_ENGINE_NAMES_FRAMES)             \
    TEXT("leaks-min-ruby", leaks_min_ruby)                   \
    TEXT("leaks-min-ruby-why", leaks_min_ruby_why)           \
    TEXT("min-ruby", min_ruby)                               \
    TEXT("min-ruby-why", min_ruby_why)                       \
    NUMBER("growth", growth)

/* A row of GL_ENGINE_FILE_KEYS. */
typedef struct {
    const char *key;    /* "min-ruby" */
    gsize offset;       /* TEXT, NUMBER: its field's offset in GlEngineFacts */
    gboolean flag;      /* FLAG's row */
    gboolean number;    /* NUMBER's row; neither: TEXT's */
    guint bit;          /* FLAG: its GlEngineCaps bit */
} GlEngineKey;

/* Returns: (transfer none): the rows of GL_ENGINE_FILE_KEYS, in order;
 * *@n their number. */
const GlEngineKey *gl_engine_keys(guint *n);

/* Returns: (transfer none) (nullable): @facts' string of the TEXT row @key. */
const char *gl_engine_facts_text(const GlEngineFacts *facts, const GlEngineKey *key);

/* Returns: @facts' number of the NUMBER row @key. */
guint gl_engine_facts_number(const GlEngineFacts *facts, const GlEngineKey *key);

/* Returns: TRUE if @facts have all of @caps (GlEngineCaps bits). */
gboolean gl_engine_facts_say(const GlEngineFacts *facts, guint caps);

/* Reads engine.txt in the run directory @dir; Valgrind's when there is
 * none (gemleak wrote none for Valgrind before 0.2). Clear @facts with
 * gl_engine_facts_clear(). */
void gl_engine_facts_read(const char *dir, GlEngineFacts *facts);
void gl_engine_facts_clear(GlEngineFacts *facts);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GlEngineFacts, gl_engine_facts_clear)

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
