/* What the suites of run/ that need a run's helper directory share
 * (check_cache.c, check_rundir_clean.c, check_runner.c). */
#ifndef GEMLEAK_TESTS_HELPER_UTIL_H
#define GEMLEAK_TESTS_HELPER_UTIL_H

#include <glib.h>

/* Writes a helper directory as a run does (gl_run_write_helper(), with
 * the client library when @client), which must succeed, and lets go of its
 * lock: the gemleak that wrote it is gone.
 * Returns: (transfer full): the directory; the caller removes it. */
char *gl_test_written_helper(gboolean client);

#endif
