/* A run's directory, from before anything runs to `gemleak clean`: made
 * and locked (a lock says a gemleak is using it) and marked as a run's,
 * what gemleak writes there of the run (src/run/rundir.c); the XML of the
 * processes that left Valgrind for an untraced program dropped
 * (rundir_untraced.c); the XML compressed when the run is kept
 * (rundir_compress.c), and `gemleak clean`, which removes old ones
 * (rundir_clean.c). Reading one is gemleak/read/run_dir.h's. Calls
 * nothing of the runner's. */
#ifndef GEMLEAK_RUNDIR_H
#define GEMLEAK_RUNDIR_H

#include <stdio.h>
#include <glib.h>
#include "gemleak/run/engine.h"

/* Holds a lock on @dir that says a gemleak is using it, for as long as the
 * returned descriptor is open (also across a SIGKILL: the kernel drops it).
 * Returns: the descriptor (close-on-exec), or -1 when the lock cannot be taken. */
int gl_rundir_lock(const char *dir);

/* Makes a new directory @prefix followed by six random characters under
 * @tmpdir, mode 0700, already locked (gl_rundir_lock()) when it appears
 * under that name: gemleak clean never sees it unlocked.
 * Returns: (transfer full): its path, with *lock the lock's descriptor;
 * NULL with GL_ERROR_ENVIRONMENT set. */
char *gl_rundir_make_locked(const char *tmpdir, const char *prefix, int *lock, GError **error);

/* Removes the XML of processes that were forked under Valgrind and then
 * ran a program Valgrind does not trace (--trace-children-skip): their
 * file ends after its preamble, with no error and no status, and would
 * read as XML cut short. Nothing was written there to lose. The files of
 * the pids in @killed (nullable: pid -> signal, GINT_TO_POINTER) stay:
 * gemleak says those processes were killed.
 * Returns: how many files were removed. */
guint gl_rundir_drop_untraced(const char *dir, GHashTable *killed);

/* Writes what the run in @dir used into its engine.txt
 * (GL_PROTO_ENGINE_FILE): @engine's facts (its title, name and needs),
 * @version (nullable: what engine->version() said), and @proof: each
 * process's report says whether its leak check ran to its end
 * (GL_ENGINE_PROVES_CHECKS, gemleak/read/run_dir.h), and @growth, the
 * repetitions --growth asked for (0: none).
 * Returns: FALSE with GL_ERROR_ENVIRONMENT when it cannot. */
gboolean gl_rundir_write_engine(const char *dir, const GlEngine *engine, const char *version,
                                gboolean proof, guint growth, GError **error);

/* Writes @facts into engine.txt in @dir, a line for each row of
 * GL_ENGINE_FILE_KEYS (gemleak/read/run_dir.h) that has a value, as
 * gl_engine_facts_read() reads them back.
 * Returns: FALSE with GL_ERROR_ENVIRONMENT when it cannot. */
gboolean gl_rundir_write_engine_facts(const char *dir, const GlEngineFacts *facts,
                                      GError **error);

/* Writes GL_PROTO_RUN_MARKER into @dir.
 * Returns: FALSE with GL_ERROR_ENVIRONMENT when it cannot. */
gboolean gl_rundir_mark(const char *dir, GError **error);

/* Writes GL_PROTO_INTERRUPTED_FILE into @dir: signal @signo interrupted
 * the run, so that whoever reads the directory (gemleak filter too) knows
 * that what the command had not run by then was not checked.
 * Returns: FALSE with GL_ERROR_ENVIRONMENT when it cannot. */
gboolean gl_rundir_mark_interrupted(const char *dir, int signo, GError **error);

typedef struct {
    guint files;          /* XML files now compressed */
    guint64 plain_bytes;  /* their size before */
    guint64 kept_bytes;   /* the size of every XML file (compressed or not) and sanitizer report kept */
    GPtrArray *failures;  /* char*: files kept plain, and why */
} GlCompressed;

/* Compresses each NNN.xml in @dir to NNN.xml.gz (gzip, which gemleak
 * filter reads as it reads XML), @jobs at once: through a temporary file
 * and a rename, the plain file removed only once its copy is whole. A
 * file that cannot be compressed stays as it is, and @result says so.
 * Free @result with gl_compressed_clear(). */
void gl_rundir_compress(const char *dir, guint jobs, GlCompressed *result);

void gl_compressed_clear(GlCompressed *result);

/* Returns: (transfer full): @bytes as "12.3 MB" (powers of 1000, as df -H). */
char *gl_format_bytes(guint64 bytes);

/* Removes gemleak's own run and helper directories under @tmpdir that no
 * running gemleak holds: named as gemleak names them, directories (not
 * links) of this user's with mode 0700, holding only what gemleak writes
 * there, and not locked. Says on @out what it removed and what it left,
 * and why. @dry_run: says, removes nothing.
 * Returns: how many were (or would be) removed. */
guint gl_rundir_clean(const char *tmpdir, gboolean dry_run, FILE *out);

/* Removes what gemleak's cache keeps for other builds of gemleak (each
 * build's helper files, and the helper the Rubies of its runs compiled:
 * some 1.3 MB a build, kept until now), as gl_rundir_clean() removes a
 * helper directory: this user's, mode 0700, holding only what gemleak
 * writes there. This build's stays. Says on @out what it removed and
 * what it left; @dry_run: says, removes nothing.
 * Returns: how many were (or would be) removed. */
guint gl_rundir_clean_cache(gboolean dry_run, FILE *out);

#endif
