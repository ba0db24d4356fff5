/* A run's directory made, locked and marked as a run's, and what gemleak
 * writes there of the run (its engine, the signal that interrupted it);
 * how the engine's files in it are named (rundir_int.h). The XML of forks
 * that ran an untraced program is rundir_untraced.c's to drop, its
 * compression rundir_compress.c's, gemleak clean rundir_clean.c's; what
 * the run's processes left there is read by gemleak/read/run_dir.h. */
#define _GNU_SOURCE 1  /* renameat2 */
#include "gemleak/run/rundir.h"
#include "rundir_int.h"
#include "gemleak/run/engine.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/run_files.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

int gl_rundir_lock(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Renames the directory @from to @to unless @to exists.
 * Returns: 0, or -1 with errno set (EEXIST: @to exists). */
static int rename_new(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)  /* a file system, a kernel without it */
        return -1;
#endif
    struct stat st;
    if (lstat(to, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

char *gl_rundir_make_locked(const char *tmpdir, const char *prefix, int *lock, GError **error)
{
    *lock = -1;
    /* Made and locked under a name gemleak clean does not look at, then
     * renamed: the lock goes with the directory, so that clean never sees
     * it unlocked under gemleak's name. */
    for (guint attempt = 0; attempt < 100; attempt++) {
        g_autofree char *hidden = g_strdup_printf("%s/.%sXXXXXX", tmpdir, prefix);
        if (g_mkdtemp_full(hidden, 0700) == NULL) {
            int saved = errno;
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot make a directory in %s: %s",
                        tmpdir, g_strerror(saved));
            return NULL;
        }
        int fd = gl_rundir_lock(hidden);
        if (fd < 0) {
            int saved = errno;
            g_rmdir(hidden);
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot lock %s: %s", hidden,
                        g_strerror(saved));
            return NULL;
        }
        g_autofree char *base = g_path_get_basename(hidden);
        char *dir = g_build_filename(tmpdir, base + 1, NULL);
        if (rename_new(hidden, dir) == 0) {
            *lock = fd;
            return dir;
        }
        int saved = errno;
        close(fd);
        g_rmdir(hidden);
        if (saved != EEXIST) {
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot make %s: %s", dir,
                        g_strerror(saved));
            g_free(dir);
            return NULL;
        }
        g_free(dir);
    }
    g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot make a directory of a new name "
                "in %s", tmpdir);
    return NULL;
}

gboolean gl_rundir_is_xml_file(const char *name, gboolean compressed)
{
    return g_str_has_suffix(name, compressed ? ".xml.gz" : ".xml") &&
           gl_run_file_pid(name, NULL, NULL);
}

gboolean gl_rundir_mark(const char *dir, GError **error)
{
    g_autofree char *path = g_build_filename(dir, GL_PROTO_RUN_MARKER, NULL);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, "gemleak run: the engine's reports, a file a process, and what "
                                   "gemleak's helper said of each process\n", -1, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write in the run directory "
                    "%s: %s", dir, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean gl_rundir_mark_interrupted(const char *dir, int signo, GError **error)
{
    g_autofree char *path = g_build_filename(dir, GL_PROTO_INTERRUPTED_FILE, NULL);
    g_autofree char *name = g_strdup_printf("%s\n", gl_signal_name(signo));
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, name, -1, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write in the run directory "
                    "%s: %s", dir, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean gl_rundir_write_engine_facts(const char *dir, const GlEngineFacts *facts,
                                      GError **error)
{
    g_autoptr(GString) text = g_string_new(facts->title);
    g_string_append_c(text, '\n');
    guint n = 0;
    const GlEngineKey *keys = gl_engine_keys(&n);
    for (guint i = 0; i < n; i++) {
        const char *value = keys[i].flag || keys[i].number
                                ? NULL : gl_engine_facts_text(facts, &keys[i]);
        guint number = keys[i].number ? gl_engine_facts_number(facts, &keys[i]) : 0;
        if (number > 0)
            g_string_append_printf(text, "%s %u\n", keys[i].key, number);
        else if (keys[i].flag && gl_engine_facts_say(facts, keys[i].bit))
            g_string_append_printf(text, "%s yes\n", keys[i].key);
        /* one line each: a runtime's path has no newline gemleak would keep */
        else if (value != NULL && strchr(value, '\n') == NULL)
            g_string_append_printf(text, "%s %s\n", keys[i].key, value);
    }
    g_autofree char *path = g_build_filename(dir, GL_PROTO_ENGINE_FILE, NULL);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, text->str, (gssize) text->len, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write in the run directory "
                    "%s: %s", dir, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean gl_rundir_write_engine(const char *dir, const GlEngine *engine, const char *version,
                                gboolean proof, GError **error)
{
    GlEngineFacts facts = engine->facts;
    facts.version = version;
    /* The run's, not the engine's: whether each process says that its
     * check ran to its end, after which a clean one is no longer silent. */
    facts.caps &= ~(guint) GL_ENGINE_PROVES_CHECKS;
    if (proof)
        facts.caps = (facts.caps & ~(guint) GL_ENGINE_SILENT_WHEN_CLEAN) | GL_ENGINE_PROVES_CHECKS;
    return gl_rundir_write_engine_facts(dir, &facts, error);
}
