/* The engine seam: what is the checking tool's own in running a suite
 * (Valgrind's command line, its %p XML files, its version check, the
 * variable that hands its command line down), behind one small table of
 * functions that the runner calls and never looks past, as curl's vtls
 * backends sit behind struct Curl_ssl.
 *
 * Adding an engine (LeakSanitizer: its runtime preloaded into Ruby,
 * LSAN_OPTIONS, log_path=DIR/lsan.PID; AddressSanitizer alike, both on
 * src/run/sanitizer.c) is, in the code, a new file and two lines:
 *   src/run/engine_NAME.c   fills in a GlEngine below, exporting only it
 *   src/run/engine.c        declares it and lists it in engines[]
 * and, when it writes a format gemleak does not read yet, that format's
 * (see "The reader side" below). What else names the engines (run's
 * help, the Rake tasks, the manual, a test) is in doc/guide.md,
 * "Adding an engine".
 *
 * The run side. runner.c, for each run:
 *   version()          first, before a directory is made: the tool runs
 *                      and is recent enough
 *   output_too_long()  before anything runs (gemleak run's usage checks):
 *                      the run directory leaves room for the tool's names
 *   argv()             each command's command line under the tool
 *   handover()         GEMLEAK_ENGINE_COMMAND's value, for a Ruby started outside
 *                      the tool (below a spared launcher) to start again
 *                      under it: NULL when it cannot be handed over
 *   watch_mark()       what in a process's command line says it is one of
 *                      this run's, for the watchdog that outlives gemleak
 *   environment()      (nullable) the variables the tool needs in every
 *                      process of the run (LSAN_OPTIONS)
 * The tool writes one file per process into the run directory; what else
 * the run directory holds is its protocol (gemleak/base/protocol.h).
 *
 * The reader side. Whatever an engine writes is read behind the input seam
 * (gemleak/read/input.h) into the same things, independent of the format,
 * and the stages after it (judge/, report/) see only those: a stream of
 * GlRecord (gemleak/base/record.h), one model of the process (GlProcess,
 * gemleak/read/process.h), the problems met. An engine whose format gemleak
 * reads already needs nothing there; a new format's code is one file of
 * src/read/ and its line in src/read/input.c (doc/guide.md, "Adding an
 * input format", names the rest it touches). */
#ifndef GEMLEAK_ENGINE_H
#define GEMLEAK_ENGINE_H

#include <glib.h>

struct GlRunOptions;

/* What an engine can do, a bit each, in GlEngine.caps: asked with
 * gl_engine_supports(), as curl's backends answer Curl_ssl_supports(). */
typedef enum {
    /* version() says a version ("3.19.0"); without it, the path of the
     * runtime it found, said in brackets after the title */
    GL_ENGINE_FOUND_IS_VERSION = 1u << 0,
    /* it reads suppression files (gemleak passes its own and the
     * project's) and has a program of its own that --valgrind names and
     * --valgrind-opt gives options to */
    GL_ENGINE_OWN_PROGRAM = 1u << 1,
    /* it writes nothing for a process without leaks (the helper's
     * engine-PID.txt accounts for such a process) */
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
     * preloads into every process (src/run/client/proof.c), which then
     * says it ran to its end ("gemleak:done"): a process of such a run
     * that loaded a target without it was not checked */
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
} GlEngineCaps;

typedef struct {
    const char *name;    /* as a user would name it: "valgrind" */
    const char *title;   /* in messages: "Valgrind" */
    const char *sees;    /* in run's --help: what it checks, and at what cost */
    /* What it writes, in messages: "Valgrind's XML", "LeakSanitizer's
     * reports" ("... could not all be read", "... is kept in DIR"). */
    const char *reports;
    /* Why a process that loaded a target and left no report ran outside
     * it: "it has no XML: a program Valgrind does not trace started it". */
    const char *outside;
    /* (nullable) What it writes in the run directory, one file a process:
     * "lsan" for lsan.PID (a sanitizer's log_path); NULL: PID.xml. */
    const char *log;
    /* Checks that @program (nullable: the engine's own on PATH) runs and is
     * recent enough.
     * Returns: (transfer full): its version ("3.19.0"), or NULL with
     * GL_ERROR_ENVIRONMENT set. */
    char *(*version)(const char *program, GError **error);
    /* Returns: (transfer full) (nullable): the file name the tool would be
     * given in @run_dir when it is longer than the tool takes (and @max
     * set to what it takes); NULL when it fits. */
    char *(*output_too_long)(const char *run_dir, gsize *max);
    /* Returns: (transfer full): the NULL-terminated command line that runs
     * @command (nullable: the options alone, for the helper to put a
     * command after) under the tool @program, writing into @run_dir;
     * @helper_dir holds the helper and the client library. */
    GPtrArray *(*argv)(const struct GlRunOptions *options, const char *program,
                       const char *run_dir, const char *helper_dir, char *const *command);
    /* Returns: (transfer full) (nullable): the tool's command line as one
     * value (GL_PROTO_ENGINE_COMMAND_VARIABLE), or NULL when it cannot be. */
    char *(*handover)(const struct GlRunOptions *options, const char *run_dir,
                      const char *helper_dir);
    /* Returns: (transfer full): what a process of the run in @run_dir has in
     * its command line. */
    char *(*watch_mark)(const char *run_dir);
    /* (nullable) Returns: (transfer full): @env (consumed) with the
     * variables the tool needs set; @found is what version() returned. */
    char **(*environment)(const struct GlRunOptions *options, const char *run_dir,
                          const char *found, char **env);
    /* (nullable) What the engine cannot see and which engine does, for
     * the run to say after its title: "sees leaks only, not invalid reads
     * and writes, ...: the Valgrind engine does (...)" */
    const char *blind_to;
    /* (nullable) The oldest Ruby it gives true verdicts on ("3.3"), and
     * why: a process of the run on an older Ruby (its helper says which
     * it ran) makes the run INCOMPLETE. */
    const char *min_ruby;
    const char *min_ruby_why;
    /* (nullable) The oldest Ruby it checks leaks on ("3.3"), and why: on
     * an older one it runs with GlRunOptions.leaks_unchecked, and the run
     * says that leaks were not checked. */
    const char *leaks_min_ruby;
    const char *leaks_min_ruby_why;
    /* (nullable) What every dynamic symbol table of an extension compiled
     * for the engine holds ("__asan_"): a target without it is named, its
     * invalid accesses unseen. */
    const char *instrumented_prefix;
    /* What mkmf is to add to Ruby's CFLAGS and LDFLAGS for such a build. */
    const char *instrumented_cflags;
    const char *instrumented_ldflags;
    /* What it can do, GlEngineCaps bits: asked with gl_engine_supports(). */
    guint caps;
} GlEngine;

/* Returns: TRUE if @engine can do all of @caps (GlEngineCaps bits). */
gboolean gl_engine_supports(const GlEngine *engine, guint caps);

/* Returns: (transfer none): "valgrind, lsan, asan": every engine's name. */
const char *gl_engine_names(void);

/* Returns: (transfer none): the engines for run's --help, from the table:
 * "valgrind (the default: ...), lsan (...) or asan (...)". */
const char *gl_engine_help(void);

/* Returns: (transfer none) (nullable): the engine called @name (nullable:
 * the default, Valgrind); NULL when none is. */
const GlEngine *gl_engine_find(const char *name);

/* ---- LeakSanitizer's ---- */

/* Returns: (transfer full): the absolute path of LeakSanitizer's runtime
 * (liblsan.so, as the C compiler's `-print-file-name` or ldconfig finds
 * it), or NULL with GL_ERROR_ENVIRONMENT set, naming the package. */
char *gl_lsan_runtime(GError **error);

/* ---- AddressSanitizer's ---- */

/* Returns: (transfer full): the absolute path of AddressSanitizer's runtime
 * (libasan.so, found as LeakSanitizer's is), or NULL with
 * GL_ERROR_ENVIRONMENT set, naming the package (libasan8). */
char *gl_asan_runtime(GError **error);

/* Returns: TRUE if @name is one an engine writes in a run directory
 * ("lsan.123", "asan.123"), with *pid (nullable) its process. */
gboolean gl_engine_is_log(const char *name, gint64 *pid);

/* ---- the Valgrind engine's own calls, for its tests and for run ---- */

/* The oldest Valgrind whose options and XML gemleak relies on. */
#define GL_VALGRIND_MIN_MAJOR 3
#define GL_VALGRIND_MIN_MINOR 10

/* Checks that @valgrind runs and is recent enough; '--version' gets 5
 * seconds and 4 KiB of output to say so.
 * Returns: (transfer full): its version ("3.19.0"), or NULL with
 * GL_ERROR_ENVIRONMENT set. */
char *gl_valgrind_version(const char *valgrind, GError **error);

/* The programs gemleak keeps out of Valgrind (--trace-children-skip), as
 * Valgrind's patterns: compilers, linkers and the small tools of a build
 * that start no other program, each of which would cost a Valgrind start.
 * Whatever can start a Ruby stays traced (a shell, env, make, xargs, find,
 * git, awk): Valgrind then follows every Ruby below it, whatever its
 * environment says.
 * Returns: (transfer full): "PATTERN,PATTERN,...". */
char *gl_trace_children_skip(void);

/* Returns: (transfer full): @text with every % doubled, as Valgrind's
 * --xml-file and --log-file want a literal %. */
char *gl_valgrind_escape_percent(const char *text);

#endif
