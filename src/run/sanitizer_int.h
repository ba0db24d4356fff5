/* What the sanitizer engines (engine_lsan.c, engine_asan.c) share: a
 * runtime Debian's gcc installs, found by the compiler or the dynamic
 * linker's cache, preloaded into Ruby only, writing one report a process
 * to an absolute log_path in the run directory. src/run/ only. */
#ifndef GEMLEAK_SANITIZER_INT_H
#define GEMLEAK_SANITIZER_INT_H

#include <stdio.h>
#include <glib.h>

#include "gemleak/run/runner.h"

/* One sanitizer's runtime. */
typedef struct {
    const char *engine;    /* --engine's name: "lsan" */
    const char *title;     /* "LeakSanitizer" */
    const char *library;   /* what `cc -print-file-name=` is asked: "liblsan.so" */
    const char *variable;  /* that names it instead: "GEMLEAK_LSAN_RUNTIME" */
    const char *install;   /* "Debian and Ubuntu: apt-get install liblsan0; Fedora: ..." */
    const char *log;       /* log_path's last name in the run directory: "lsan" (lsan.PID) */
} GlSanitizerRuntime;

/* Returns: (transfer full): the absolute path of @runtime's library, as
 * its variable names it, else as the C compiler's `-print-file-name` or
 * ldconfig finds it; NULL with GL_ERROR_ENVIRONMENT set, naming the
 * package. */
char *gl_sanitizer_runtime(const GlSanitizerRuntime *runtime, GError **error);

/* The engine's output_too_long() for @runtime's log name.
 * Returns: (transfer full) (nullable): as GlEngine's. */
char *gl_sanitizer_log_too_long(const GlSanitizerRuntime *runtime, const char *run_dir,
                                gsize *max);

/* The engine's argv(): a Ruby (or launcher) @command starts with the
 * runtime in LD_PRELOAD (after @first, nullable: a library whose symbols
 * come before the runtime's; and before the library every process of the
 * run gets, from @helper_dir), another as it is.
 * Returns: (transfer full): the NULL-terminated command line. */
/* Returns: (transfer full) (nullable): what is preloaded before the
 * runtime, ':'-separated: the allocation front when the runtime unwinds by
 * frame pointers (src/agent/alloc.c), whose allocation functions see
 * the allocating call; per test and @client, the client library, whose
 * realloc records the test that reallocated a block (LeakSanitizer's
 * realloc calls no hook; the front, when it is there, tells the client of
 * each block reallocated itself). */
char *gl_sanitizer_first(const GlRunOptions *options, const char *helper_dir, gboolean client);

GPtrArray *gl_sanitizer_argv(const GlSanitizerRuntime *runtime, const char *first,
                             const char *helper_dir, char *const *command, char ***env);

/* The engine's handover(): "env<SEP>LD_PRELOAD=[FIRST:]RUNTIME[:...]", as
 * gl_sanitizer_argv() preloads it.
 * Returns: (transfer full) (nullable). */
char *gl_sanitizer_handover(const GlSanitizerRuntime *runtime, const char *first,
                            const char *helper_dir);

/* The engine's watch_mark().
 * Returns: (transfer full). */
char *gl_sanitizer_watch_mark(const GlSanitizerRuntime *runtime, const char *run_dir);

/* Returns: (transfer full): @env (consumed) with the runtime's options
 * variable @options_variable ("LSAN_OPTIONS") set to what the user gave
 * then "exitcode=0:log_path=\"RUN_DIR/LOG\":...:stack_trace_format=\"..\":" and
 * @ours (gemleak's come last: the runtimes take the last of an option
 * given twice; what of the user's they override is said on @messages,
 * nullable), and the helper told which runtime is @found
 * (GL_PROTO_RUNTIME_VARIABLE). */
char **gl_sanitizer_environment(const GlSanitizerRuntime *runtime, const char *options_variable,
                                const char *run_dir, const char *found, const char *ours,
                                FILE *messages, char **env);

/* Returns: (transfer full): @env (consumed) with LSAN_OPTIONS, LeakSanitizer's
 * own flags that AddressSanitizer reads there too, ending with @ours. */
char **gl_sanitizer_leak_options(char **env, const char *ours, FILE *messages);

/* The runtimes' leak check wants Ruby to free its memory at exit (what the
 * extension lost among Ruby's own blocks is then few to read): gemleak's
 * value is set where the user set none; a value of the user's stays, and
 * their RUBY_FREE_AT_EXIT=0, which gl_run_child_environment() took out of
 * @env, stays out, as under every engine (Ruby as it runs in production:
 * its own blocks are judged Ruby's by their allocating call).
 * Returns: (transfer full): @env (consumed). */
char **gl_sanitizer_free_at_exit(char **env);

#endif
