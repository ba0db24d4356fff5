/* Before a run's commands start: Ruby's version and the suppressions for
 * it, where gemleak's data is, and the run directory (checked, made,
 * locked); the helper written where Ruby loads it is helper_dir.c's, the
 * environment and limits the commands run with child.c's. runner.c then
 * runs them. */
#include "gemleak/run/runner.h"
#include "runner_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/run/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- Valgrind and Ruby ---------------------------------------------------- */

/* Ruby prints its version at once; it takes longer to start than Valgrind,
 * and more on a loaded CI machine. */
#define PROBE_MAX_BYTES 4096
#define RUBY_PROBE_TIMEOUT_MS 20000

/* Returns: (transfer full) (nullable): what @ruby prints running @code
 * (with --disable-gems, and -r@library when not NULL), or NULL when it
 * cannot be run or fails. RUBYOPT could load anything (bundler/setup): not
 * for these questions. */
static char *ruby_prints(const char *ruby, const char *library, const char *code)
{
    g_autofree char *require = library != NULL ? g_strconcat("-r", library, NULL) : NULL;
    const char *with_library[] = { ruby, "--disable-gems", require, "-e", code, NULL };
    const char *alone[] = { ruby, "--disable-gems", "-e", code, NULL };
    const char *const *argv = require != NULL ? with_library : alone;
    char *out = NULL;
    int wait_status = 0;
    /* nor LD_PRELOAD: a runtime preloaded by hand (LD_PRELOAD=libasan.so)
     * makes Ruby refuse to start outside its order, and a question about
     * Ruby's version has no need of it */
    g_auto(GStrv) env = g_environ_unsetenv(g_environ_unsetenv(g_get_environ(), "RUBYOPT"),
                                           "LD_PRELOAD");
    if (!gl_probe_command(argv, env, PROBE_MAX_BYTES, RUBY_PROBE_TIMEOUT_MS, &out, &wait_status,
                          NULL) ||
        !g_spawn_check_wait_status(wait_status, NULL)) {
        g_free(out);
        return NULL;
    }
    return out;
}

/* What a run asks of the command's Ruby, asked of it once: each start of
 * a Ruby costs about 30 ms, and a run of a short suite under a fast engine
 * must not pay it twice before the suite starts. The last Ruby asked. */
static struct {
    char ruby[PATH_MAX];
    gboolean asked;
    char version[32];          /* "3.4.5", or empty when it did not say */
    gboolean frame_pointers;   /* its CFLAGS keep them */
} asked_ruby;

/* Asks @ruby its version and CFLAGS, unless it was the last Ruby asked. */
static void ask_ruby(const char *ruby)
{
    if (asked_ruby.asked && strcmp(asked_ruby.ruby, ruby) == 0)
        return;
    memset(&asked_ruby, 0, sizeof asked_ruby);
    if (strlen(ruby) < sizeof asked_ruby.ruby) {
        g_strlcpy(asked_ruby.ruby, ruby, sizeof asked_ruby.ruby);
        asked_ruby.asked = TRUE;
    }
    g_autofree char *out = ruby_prints(ruby, "rbconfig",
                                       "print RUBY_VERSION, 10.chr, RbConfig::CONFIG['CFLAGS']");
    if (out == NULL)  /* a Ruby without rbconfig still has a version */
        out = ruby_prints(ruby, NULL, "print RUBY_VERSION");
    if (out == NULL)
        return;
    char *flags_text = strchr(out, '\n');
    if (flags_text != NULL)
        *flags_text++ = '\0';
    if (g_regex_match_simple("^[0-9]+\\.[0-9]+\\.[0-9]+$", out, 0, 0))
        g_strlcpy(asked_ruby.version, out, sizeof asked_ruby.version);
    /* the last of the two flags wins, as with the compiler */
    g_auto(GStrv) flags = g_strsplit_set(flags_text != NULL ? flags_text : "", " \t\n", -1);
    for (char **flag = flags; *flag != NULL; flag++) {
        if (strcmp(*flag, "-fno-omit-frame-pointer") == 0)
            asked_ruby.frame_pointers = TRUE;
        else if (strcmp(*flag, "-fomit-frame-pointer") == 0)
            asked_ruby.frame_pointers = FALSE;
    }
}

char *gl_ruby_version(const char *ruby)
{
    ask_ruby(ruby);
    return asked_ruby.version[0] != '\0' ? g_strdup(asked_ruby.version) : NULL;
}

gboolean gl_ruby_frame_pointers(const char *ruby)
{
    ask_ruby(ruby);
    return asked_ruby.frame_pointers;
}

GPtrArray *gl_suppression_files(const char *const *dirs, const char *version)
{
    /* ruby.supp, then ruby-3.supp, ruby-3.1.supp, ruby-3.1.2.supp */
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(names, g_strdup("ruby.supp"));
    if (version != NULL) {
        g_auto(GStrv) parts = g_strsplit(version, ".", 3);
        g_autoptr(GString) prefix = g_string_new("ruby");
        for (char **part = parts; *part != NULL; part++) {
            g_string_append_printf(prefix, "%s%s", part == parts ? "-" : ".", *part);
            g_ptr_array_add(names, g_strconcat(prefix->str, ".supp", NULL));
        }
    }
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *dir = dirs; dir != NULL && *dir != NULL; dir++) {
        for (guint i = 0; i < names->len; i++) {
            char *file = g_build_filename(*dir, g_ptr_array_index(names, i), NULL);
            if (g_file_test(file, G_FILE_TEST_IS_REGULAR))
                g_ptr_array_add(files, file);
            else
                g_free(file);
        }
    }
    return files;
}

/* Returns: TRUE if @dir holds gemleak's suppressions. */
static gboolean holds_data(const char *dir)
{
    g_autofree char *supp = g_build_filename(dir, "suppressions", "ruby.supp", NULL);
    return g_file_test(supp, G_FILE_TEST_IS_REGULAR);
}

char *gl_data_dir(void)
{
    const char *env = g_getenv("GEMLEAK_DATADIR");
    if (env != NULL && *env != '\0')
        return g_strdup(env);
    /* Where the binary is, not where make guessed it would be installed: a
     * binary built before `make install PREFIX=...` holds the default
     * prefix. PREFIX/bin/gemleak reads PREFIX/share/gemleak; a checkout's
     * build/gemleak, and the gem's libexec/gemleak, the directory above. */
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe != NULL) {
        g_autofree char *bin_dir = g_path_get_dirname(exe);
        g_autofree char *prefix = g_path_get_dirname(bin_dir);
        g_autofree char *share = g_build_filename(prefix, "share", "gemleak", NULL);
        if (holds_data(share))
            return g_steal_pointer(&share);
        if (holds_data(prefix))
            return g_steal_pointer(&prefix);
    }
    return g_strdup(GEMLEAK_DATADIR);
}

/* ---- the run directory ------------------------------------------------------ */

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
                engine->title, name, strlen(name), engine->title, max);
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
                    engine->title, name, strlen(name), engine->title, max);
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
    /* XML left by another run would be read as this run's. */
    if (gl_list_xml_files_any(dir)) {
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
        if (dir == NULL)
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                        "cannot make a private directory for Valgrind's XML: %s", local->message);
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

gboolean gl_is_launcher(const char *program)
{
    g_autofree char *name = g_path_get_basename(program);
    g_auto(GStrv) launchers = g_strsplit(GL_PROTO_LAUNCHERS, " ", -1);
    return g_strv_contains((const char *const *) launchers, name);
}
