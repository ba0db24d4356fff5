/* Where a run writes (runner.h, runner_int.h): a private directory in
 * TMPDIR, or the user's --keep-xml one, checked before anything runs
 * (short enough for the engine's file names; a --keep-xml directory the
 * user's own, that nobody else can write to or swap, empty of another
 * run's reports and not locked by one), then made and locked first. */
#include "gemleak/run/runner.h"
#include "runner_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/read/input.h"
#include "gemleak/run/rundir.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

gboolean gl_run_check_tmpdir(GError **error)
{
    const GlEngine *engine = gl_engine_find(NULL);
    g_autofree char *dir = g_build_filename(g_get_tmp_dir(), GL_PROTO_RUN_DIR "XXXXXX", NULL);
    gsize max = 0;
    g_autofree char *name = engine->output_too_long(dir, &max);
    if (name == NULL)
        return TRUE;
    g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                "TMPDIR is too long for %s: its XML files would be named %s, %zu "
                "characters, and %s takes at most %zu: set TMPDIR to a shorter directory",
                engine->facts.title, name, strlen(name), engine->facts.title, max);
    return FALSE;
}

/* Checks a --keep-xml directory (see gl_run_check_keep_dir()); @probe_lock:
 * also that no run holds it, when the caller does not hold it itself. */
static gboolean check_keep_dir(const char *dir, gboolean probe_lock, GError **error)
{
    if (dir == NULL || *dir == '\0') {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--keep-xml: the value is empty");
        return FALSE;
    }
    g_autofree char *resolved = gl_path_resolve(dir);
    const GlEngine *engine = gl_engine_find(NULL);
    gsize max = 0;
    g_autofree char *name = engine->output_too_long(resolved, &max);
    if (name != NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--keep-xml %s: too long for %s: its XML files would be named %s, %zu "
                    "characters, and %s takes at most %zu: give a shorter directory", dir,
                    engine->facts.title, name, strlen(name), engine->facts.title, max);
        return FALSE;
    }
    struct stat st;
    /* Whoever may write to a directory above it, without the sticky bit
     * (as /tmp has), may rename it and put one of theirs in its place
     * after this check. */
    g_autofree char *above = g_path_get_dirname(resolved);
    for (;;) {
        if (stat(above, &st) == 0 && (st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                        "--keep-xml %s: others can write to %s, above it, without the sticky bit "
                        "(mode %04o): they could put a directory of theirs in its place; give one "
                        "under directories only you can write to", dir, above,
                        (unsigned) (st.st_mode & 07777));
            return FALSE;
        }
        if (strcmp(above, "/") == 0 || strcmp(above, ".") == 0)
            break;
        char *next = g_path_get_dirname(above);
        g_free(above);
        above = next;
    }
    if (stat(dir, &st) != 0)
        return TRUE;  /* made, ours and private, when the run starts */
    if (!S_ISDIR(st.st_mode)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--keep-xml %s: not a directory", dir);
        return FALSE;
    }
    /* Valgrind writes there, the command's Ruby processes too: a directory
     * someone else owns or may write to would let them change the XML
     * gemleak reads. */
    if (st.st_uid != geteuid()) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--keep-xml %s: owned by another user (uid %ju): give a directory of your "
                    "own, or a new one", dir, (uintmax_t) st.st_uid);
        return FALSE;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--keep-xml %s: others can write to it (mode %04o): give a directory only "
                    "you can write to (chmod go-w), or a new one", dir,
                    (unsigned) (st.st_mode & 07777));
        return FALSE;
    }
    /* Reports left by another run would be read as this run's. */
    if (gl_input_dir_has_inputs(dir)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--keep-xml %s already holds the reports of another run: give an empty "
                    "or new directory", dir);
        return FALSE;
    }
    int lock = probe_lock ? gl_rundir_lock(dir) : -1;
    if (probe_lock && lock < 0 && errno == EWOULDBLOCK) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--keep-xml %s: another gemleak run is using "
                    "it: give each run a directory of its own", dir);
        return FALSE;
    }
    if (lock >= 0)
        close(lock);
    return TRUE;
}

gboolean gl_run_check_keep_dir(const char *dir, GError **error)
{
    return check_keep_dir(dir, TRUE, error);
}

/* Makes the run directory, or the --keep-xml one, and locks it first: a
 * run that found a --keep-xml directory empty before another run locked
 * it would read that run's XML as its own.
 * Returns: (transfer full): the directory, *lock the descriptor that holds
 * its lock; NULL with @error set. */
char *gl_run_make_dir(const GlRunOptions *options, int *lock, GError **error)
{
    *lock = -1;
    if (options->keep_dir == NULL) {
        g_autoptr(GError) local = NULL;
        char *dir = gl_rundir_make_locked(g_get_tmp_dir(), GL_PROTO_RUN_DIR, lock, &local);
        const GlEngine *engine = options->engine != NULL ? options->engine : gl_engine_find(NULL);
        if (dir == NULL)
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot make a private directory "
                        "for %s: %s", engine->facts.reports, local->message);
        return dir;
    }
    /* The real directory, once: a symlink changed during the run changes nothing. */
    char *dir = gl_path_resolve(options->keep_dir);
    if (g_mkdir_with_parents(dir, 0700) != 0) {
        int saved = errno;
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "--keep-xml %s: %s", dir,
                    g_strerror(saved));
        g_free(dir);
        return NULL;
    }
    *lock = gl_rundir_lock(dir);
    if (*lock < 0) {
        int saved = errno;
        if (saved == EWOULDBLOCK)
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--keep-xml %s: another gemleak run is "
                        "using it: give each run a directory of its own", dir);
        else
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "--keep-xml %s: %s", dir,
                        g_strerror(saved));
        g_free(dir);
        return NULL;
    }
    if (!check_keep_dir(dir, FALSE, error)) {
        close(*lock);
        *lock = -1;
        g_free(dir);
        return NULL;
    }
    return dir;
}
