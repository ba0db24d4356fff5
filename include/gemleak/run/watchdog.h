/* The watchdog of a run: a process, forked before anything runs, that
 * outlives a gemleak killed outright (SIGKILL, a CI job's hard timeout) and
 * then kills what the run left running, holding the run's locks. One run
 * at a time. */
#ifndef GEMLEAK_WATCHDOG_H
#define GEMLEAK_WATCHDOG_H

#include <glib.h>

/* Starts the watchdog of the run in @run_dir, not a child of gemleak
 * (whose waitpid(-1) would wait for it): forked twice, before gemleak is
 * a child subreaper. It keeps the run's @locks, and kills the processes
 * whose environment holds the run's GEMLEAK_RUN_DIR or an argument of
 * which begins with @mark (the engine's, GlEngine.watch_mark()). */
void gl_watchdog_start(const char *run_dir, const char *mark, const int *locks, guint n_locks);

/* Tells the watchdog that the run is over: it ends, killing nothing. */
void gl_watchdog_stop(void);

#endif
