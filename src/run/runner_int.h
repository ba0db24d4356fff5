/* Between the preparing of a run (rundir_make.c: the run directory;
 * helper_dir.c: the helper and the libraries written; child.c: the
 * commands' environment and limits) and its running (runner.c). src/run/
 * only. */
#ifndef GEMLEAK_RUNNER_INT_H
#define GEMLEAK_RUNNER_INT_H

#include <glib.h>
#include "gemleak/run/runner.h"

/* Makes the run directory, or the --keep-xml one, and locks it first.
 * Returns: (transfer full): the directory, *lock the descriptor that holds
 * its lock; NULL with @error set. */
char *gl_run_make_dir(const GlRunOptions *options, int *lock, GError **error);

/* What the exact pass writes in the helper's directory (exact.c): the
 * allocation sites it unwinds exactly, the tests it runs again. */
#define GL_RUN_EXACT_SITES_FILE "exact-sites.txt"
#define GL_RUN_EXACT_TESTS_FILE "exact-tests.txt"

/* Returns: TRUE if @name is a file gemleak, or a Ruby of a run, writes in
 * a helper directory: what gl_run_write_helper() writes, the exact pass's
 * lists, the helper compiled by a Ruby of the run (and its half-written
 * file). gemleak clean removes a directory that holds nothing else. */
gboolean gl_run_is_helper_file(const char *name);

/* The name of this build's directory in gemleak's cache ("helper-" and
 * the start of the SHA-256 of the helper's files): every other "helper-"
 * directory there is another build's. */
#define GL_RUN_HELPER_CACHE_PREFIX "helper-"
const char *gl_run_helper_cache_name(void);

/* Keeps what the Rubies of the run compiled and read in @helper_dir
 * (nullable), for the runs after it (gemleak/run/cache.h): before the
 * directory is removed. */
void gl_run_keep_helper(const char *helper_dir);

/* Writes the Ruby helper, the library preloaded into the run's processes
 * (and, with @client, the client library) to a private directory of
 * gemleak's own.
 * Returns: (transfer full): the directory, locked (*lock); the caller
 * removes it (gl_remove_tree) and frees the name. NULL with @error set. */
char *gl_run_write_helper(gboolean client, int *lock, GError **error);

/* The library preloaded into every process of the run, which keeps Ruby
 * 3.4's warning about gemleak's RUBY_FREE_AT_EXIT out of the suite's
 * output (src/agent/quiet.c). With @why_not, once, when the run
 * starts: the dynamic loader is tried on it, and a library it refuses (it
 * would say so in every process) is removed, *why_not (transfer full)
 * saying why.
 * Returns: (transfer full) (nullable): its path in @helper_dir
 * (nullable), NULL when there is none to preload. */
char *gl_run_preload_library(const char *helper_dir, char **why_not);

/* Returns: (transfer full) (nullable): the client library
 * gl_run_write_helper() wrote in @helper_dir (nullable), NULL when it
 * wrote none. */
char *gl_run_client_library(const char *helper_dir);

/* Returns: (transfer full) (nullable): the allocation front
 * (src/agent/alloc.c) gl_run_write_helper() wrote in @helper_dir
 * (nullable), NULL when there is none. */
char *gl_run_alloc_library(const char *helper_dir);

/* Returns: (transfer full) (nullable): the file of the functions of Ruby's
 * that allocate for their caller (gl_rules_allocator_globs()), which the
 * allocation front watches, gl_run_write_helper() wrote in @helper_dir
 * (nullable); NULL when there is none. */
char *gl_run_alloc_apis(const char *helper_dir);

/* Returns: (transfer full) (nullable): the guard that follows a static
 * program (src/agent/guard.c) gl_run_write_helper() wrote in
 * @helper_dir (nullable); NULL when there is none (gemleak was built
 * without it). */
char *gl_run_guard(const char *helper_dir);

/* Returns: (transfer full): the environment of the commands: the helper,
 * the run directory, GEMLEAK_ENGINE_COMMAND (@handover, nullable: the
 * engine's handover()) for a Ruby that starts outside the engine, below a
 * launcher, and what @engine needs (its environment(), given @found, what
 * its version() returned). Free with g_strfreev(). */
char **gl_run_child_environment(const GlRunOptions *options, const GlEngine *engine,
                                const char *found, const char *run_dir,
                                const char *helper_lib, const char *handover);

/* Runs in a command's child between fork and exec (async-signal-safe):
 * dies with gemleak (@parent: its pid), a large stack, a bounded number
 * of descriptors. */
void gl_run_child_setup(gpointer parent);

/* Closes the descriptors from @low to @high (both included): close_range
 * where the kernel has it (5.9 and later), one at a time below
 * @fallback_end where not. System calls only: for a child before exec
 * (gl_run_spawn()) and the watchdog. */
void gl_run_close_between(int low, int high, int fallback_end);

/* Starts @argv (its first word found as execvp(3) finds it, on the PATH
 * @env holds, as env(1) in the command line would look) with the
 * environment @env, in a process vfork()ed from gemleak's (nothing of
 * gemleak's memory copied: a fork copied it, and gemleak then paid a fault
 * for each page it wrote while the run went on): gl_run_child_setup()'s
 * limits, no descriptor but the standard three, standard input from
 * /dev/null unless @keep_input, standard output and error to /dev/null
 * when @quiet. The child is not reaped. Returns: FALSE with @error set
 * (G_SPAWN_ERROR) when it could not start (and was reaped), else TRUE with
 * *@pid set. */
gboolean gl_run_spawn(char **argv, char **env, gboolean quiet, gboolean keep_input,
                      pid_t parent, pid_t *pid, GError **error);

#endif
