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
 * A new capability of an engine is a field and a line: a GlEngineCaps bit
 * (or a string of GlEngineFacts) that the engines set in their .facts, and,
 * when whoever reads a run directory later needs it, its line in
 * GL_ENGINE_FILE_KEYS (gemleak/read/run_dir.h), which engine.txt's writer
 * and reader both go by (doc/guide.md, "A new engine capability").
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
#include "gemleak/read/run_dir.h"

struct GlRunOptions;

typedef struct {
    /* What it is, what it can do (GlEngineCaps), and what a run of it
     * records in engine.txt for whoever reads the run directory later
     * (gemleak/read/run_dir.h): its name, its title, what it writes... */
    GlEngineFacts facts;
    const char *sees;    /* in run's --help: what it checks, and at what cost */
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
     * @helper_dir holds the helper and the client library. @env (nullable):
     * the command's environment, which it may replace (*@env consumed)
     * with the variables only the command's own process gets: set there,
     * not by env(1) in the command line, an exec less for every run. */
    GPtrArray *(*argv)(const struct GlRunOptions *options, const char *program,
                       const char *run_dir, const char *helper_dir, char *const *command,
                       char ***env);
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
    /* What mkmf is to add to Ruby's CFLAGS and LDFLAGS for a build the
     * engine sees into (facts.instrumented_prefix). */
    const char *instrumented_cflags;
    const char *instrumented_ldflags;
} GlEngine;

/* Returns: TRUE if @engine can do all of @caps (GlEngineCaps bits,
 * gemleak/read/run_dir.h). */
gboolean gl_engine_supports(const GlEngine *engine, guint caps);

/* Returns: (transfer none): "valgrind, lsan, asan": every engine's name. */
const char *gl_engine_names(void);

/* Returns: (transfer none): the engines for run's --help, from the table:
 * "valgrind (the default: ...), lsan (...) or asan (...)". */
const char *gl_engine_help(void);

/* Returns: (transfer none) (nullable): the engine called @name (nullable:
 * the default, Valgrind); NULL when none is. */
const GlEngine *gl_engine_find(const char *name);

/* Returns: TRUE if @name is one an engine writes in a run directory
 * ("lsan.123", "asan.123"), with *pid (nullable) its process. */
gboolean gl_engine_is_log(const char *name, gint64 *pid);

#endif
