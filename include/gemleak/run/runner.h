/* Running commands under an engine (gemleak/run/engine.h: Valgrind
 * memcheck by default): the environment Ruby needs, the engine's reports,
 * one file per process, in a private run directory, and the signals a user
 * or a CI system sends. Knows nothing of how the reports are read. */
#ifndef GEMLEAK_RUNNER_H
#define GEMLEAK_RUNNER_H

#include <stdio.h>
#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/read/debuginfo.h"
#include "gemleak/run/engine.h"

/* A launcher only starts the processes that run a suite (bundle, rake).
 * With --spare-launchers gemleak runs one given as the command outside
 * the engine: each Ruby process it starts puts itself under the engine,
 * through the helper, and a launcher that loads an extension itself starts
 * again under it.
 * Returns: TRUE if @program (a name or a path) is one. */
gboolean gl_is_launcher(const char *program);


typedef struct GlRunOptions {
    const GlEngine *engine;        /* nullable: the default, Valgrind */
    /* The engine's own program (GL_ENGINE_OWN_PROGRAM; --valgrind:
     * "valgrind" on PATH by default), and the options to give it as they
     * are (--valgrind-opt; NULL-terminated, nullable); an engine without
     * a program of its own has none to run. */
    const char *program;
    const char *const *program_options;
    const char *const *suppressions;      /* .supp files to pass, NULL-terminated, nullable */
    GlLeakKind leak_kinds;         /* for --show-leak-kinds */
    gboolean gen_suppressions;
    const char *keep_dir;          /* --keep-xml: write there and keep it; NULL: a private one */
    FILE *messages;                /* nullable: where to say that the run waits for processes */
    const char *per_test;          /* --per-test: "test" or "file"; NULL: off */
    guint growth;                  /* --growth: each test's repetitions after the suite
                                    * (GL_PROTO_GROWTH_VARIABLE); 0: off */
    gboolean time_files;           /* the helper times each test file's tests */
    gboolean spare_launchers;      /* run a launcher command (rake, bundle) outside the
                                    * engine: the Ruby processes it starts put themselves
                                    * under it */
    gboolean fast_stacks;          /* the engine unwinds by frame pointers */
    gboolean frame_pointers;       /* Ruby (and, built by its flags, the extensions) keeps
                                    * them: the fast unwinder's stacks are whole */
    gboolean leaks_unchecked;      /* the engine checks no leaks: Ruby is older than its
                                    * leaks_min_ruby */
    const char *exact_sites;       /* the exact pass (exact.h): the file of the sites the
                                    * engine unwinds exactly at; NULL: not that pass */
    const char *exact_tests;       /* the exact pass: the file of the tests to run (the helper
                                    * skips the others); NULL: all */
    gboolean quiet;                /* the commands' output goes to /dev/null, their input
                                    * comes from it: a run the suite's output is not of */
    guint deadline;                /* seconds the commands may run, then they are ended
                                    * (SIGTERM, SIGKILL ten seconds later); 0: no limit */
    /* A quiet run's input: gemleak's standard input again, from this
     * offset (a regular file read by the first run); -1: /dev/null */
    gint64 input_offset;
    /* (nullable) where the run names the frames its engine's runtime left
     * unnamed (GL_ENGINE_NAMES_FRAMES) from: shared by its passes and its
     * analysis, each object read once; NULL: a cache of the pass's own */
    GlDebugInfo *objects;
} GlRunOptions;

typedef struct {
    char *dir;             /* the run directory: the engine's reports, the helper's files */
    gboolean kept_by_user; /* --keep-xml */
    int status;            /* the first failing command's exit status, 128+N when killed by N */
    int killed_by;         /* that signal, or 0 */
    int interrupted_by;    /* the signal gemleak itself received, or 0 */
    gboolean timed_out;    /* the commands ran past GlRunOptions.deadline and were ended */
    gboolean descendants_left; /* processes the command started still ran past the grace period */
    GlDebugInfo *objects;  /* (nullable) GlRunOptions.objects, the run's */
    GHashTable *killed;    /* every process gemleak reaped (the commands, and the orphans
                            * re-parented to it) that a signal killed: pid -> signal, both
                            * GINT_TO_POINTER; a pid's report names it (PID.xml,
                            * lsan.PID) */
    GArray *seconds;       /* gdouble: how long each command ran, in the order given */
    guint untraced;        /* processes forked under Valgrind that then ran a program it skips
                            * (a compiler, make): their empty XML was removed */
    int locks[2];          /* gl_rundir_lock()s on the run and helper directories */
    guint n_locks;
    char *engine_found;    /* what the engine's version() said: Valgrind's version, a
                            * sanitizer runtime's path */
    char *helper_dir;      /* gemleak's private directory for the Ruby helper, removed at the end */
    char *launcher;        /* the first launcher that ran outside the engine ("rake"), or NULL */
    char *helper_moved;    /* TMPDIR, when it is mounted noexec and gemleak's helper and
                            * libraries went elsewhere (helper_dir), else NULL */
    char *unquiet;         /* why the library that keeps Ruby 3.4's warning about gemleak's
                            * RUBY_FREE_AT_EXIT out of the suite's output was not preloaded
                            * (the dynamic loader's words), or NULL */
    /* Where the commands' standard input started when it is a regular file
     * (a script on it can be read again from there), else -1 (a pipe, a
     * terminal: what the commands read is gone); /dev/null counts as 0 */
    gint64 input_offset;
    GPtrArray *outside;    /* char*: what ran outside the engine and should not have, a
                            * sentence each ("process 12: forked from the launcher rake,
                            * it loaded /x/y.so outside Valgrind") */
} GlRunResult;

/* Returns: (transfer full) (nullable): RUBY_VERSION of @ruby (a path or a
 * name on PATH), or NULL when it cannot be run. */
char *gl_ruby_version(const char *ruby);

/* Returns: TRUE if @ruby (a path or a name on PATH) was compiled keeping
 * frame pointers (-fno-omit-frame-pointer in RbConfig's CFLAGS, which
 * mkmf gives extensions too); FALSE when not, or when it cannot tell. */
gboolean gl_ruby_frame_pointers(const char *ruby);

/* Returns: (transfer full): the .supp files that apply to Ruby @version
 * (nullable: only ruby.supp): ruby.supp, ruby-3.supp, ruby-3.1.supp,
 * ruby-3.1.2.supp, looked for in each of @dirs in turn. */
GPtrArray *gl_suppression_files(const char *const *dirs, const char *version);

/* Returns: (transfer full): where gemleak's own data (suppressions/) lives:
 * $GEMLEAK_DATADIR; else, from where the binary is, PREFIX/share/gemleak
 * for PREFIX/bin/gemleak, or the directory above the binary's (a
 * checkout's build/gemleak, the gem's libexec/gemleak) when it holds
 * suppressions/ruby.supp; else the share directory compiled in. The
 * directory may not exist: the caller says so. */
char *gl_data_dir(void);

/* Returns: TRUE if gemleak was built with Valgrind's headers, which the
 * library --per-test loads into the traced processes needs. */
gboolean gl_per_test_available(void);

/* Runs each of @commands (a GStrv each) at once under the engine, waits for
 * all, forwarding SIGINT, SIGTERM and SIGHUP sent to gemleak, reaping the
 * processes they leave behind as they end, and waiting for those (up to a
 * minute, or a few seconds once interrupted). Every process of the run
 * dies with gemleak, until gl_run_finish(): the commands through
 * PR_SET_PDEATHSIG, the rest (the engine the helper starts below a
 * launcher) through a watchdog process that gemleak's death wakes
 * (watchdog.h). Under the engine's command line (engine.h), except a
 * launcher that --spare-launchers runs outside it. gemleak is the child
 * subreaper of the commands' orphans until it returns, not after.
 * Returns: FALSE with @error set when nothing could be run (the run
 * directory, if made, is in @result->dir all the same). */
gboolean gl_run_commands(const GlRunOptions *options, GPtrArray *commands, GlRunResult *result,
                         GError **error);

/* Checks a --keep-xml directory before anything runs: a new one is fine
 * (gemleak makes it, mode 0700); an existing one must be a directory of
 * the user's own that nobody else can write to, without XML of another run
 * and not locked by one, and short enough for Valgrind's file names; no
 * directory above it may be writable by others without the sticky bit.
 * The run checks it again once it holds its lock.
 * Returns: FALSE with GL_ERROR_USAGE otherwise. */
gboolean gl_run_check_keep_dir(const char *dir, GError **error);

/* Checks, before anything runs, that the run directory gemleak makes in
 * TMPDIR gives Valgrind an XML file name it takes (--keep-xml directories:
 * gl_run_check_keep_dir()).
 * Returns: FALSE with GL_ERROR_ENVIRONMENT when TMPDIR is too long. */
gboolean gl_run_check_tmpdir(GError **error);

/* Ends the run: tells its watchdog that gemleak ends normally, removes the
 * helper's directory, and the run directory when @remove_dir unless the
 * user asked to keep it, lets go of its locks, and frees what @result
 * holds. (Not a _clear(): it removes directories.) */
void gl_run_finish(GlRunResult *result, gboolean remove_dir);

#endif
