/* Before a run's commands start: Ruby's version and the suppressions for
 * it, where gemleak's data is, the run directory (checked, made, locked),
 * and the helper written where Ruby loads it; the environment and limits
 * the commands run with are child.c's. runner.c then runs them. */
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

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "resources.h"

/* ---- Valgrind and Ruby ---------------------------------------------------- */

/* Ruby prints its version at once; it takes longer to start than Valgrind,
 * and more on a loaded CI machine. */
#define PROBE_MAX_BYTES 4096
#define RUBY_PROBE_TIMEOUT_MS 20000
/* A shell and env(1), which start at once but for a loaded machine. */
#define PRELOAD_PROBE_TIMEOUT_MS 20000

/* The library preloaded into every process of a run (src/run/client/quiet.c). */
#define PRELOAD_LIBRARY "gemleak_preload.so"
#define EXACT_LIBRARY "gemleak_exact.so"

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

/* Writes the resource @name into @dir, as @what says it.
 * Returns: FALSE, with @error set, when it cannot. */
static gboolean write_resource(const char *name, const char *dir, const char *what,
                               GError **error)
{
    g_autofree char *path = g_strconcat("/gemleak/", name, NULL);
    g_autoptr(GBytes) bytes = g_resource_lookup_data(gl_resources_get_resource(), path,
                                                     G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
    g_autofree char *base = g_path_get_basename(name);
    g_autofree char *file = g_build_filename(dir, base, NULL);
    gsize size = 0;
    const char *data = g_bytes_get_data(bytes, &size);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(file, data, (gssize) size, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write the %s to %s: %s", what,
                    file, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean gl_per_test_available(void)
{
    gsize size = 0;
    return g_resource_get_info(gl_resources_get_resource(), "/gemleak/client/gemleak_client.so",
                               G_RESOURCE_LOOKUP_FLAGS_NONE, &size, NULL, NULL) &&
           size > 0;
}

/* The helper is compiled into gemleak (src/run/helper/) and written, alone,
 * to a directory of gemleak's own (mode 0700), never to the run directory:
 * a --keep-xml directory is the user's, and what else it held could come
 * first on RUBYLIB (see gl_run_child_environment), for every Ruby process
 * of the run to load. The library preloaded into every process of the run
 * goes beside it; @client adds the client library, for Fiddle to load
 * (--per-test, and the check at fork under Valgrind).
 * Returns: (transfer full): the directory, for RUBYOPT, locked before
 * anything is written (*lock: the lock's descriptor); the caller removes
 * it (gl_remove_tree) and frees the name. */
char *gl_run_write_helper(gboolean client, int *lock, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autofree char *lib = gl_rundir_make_locked(g_get_tmp_dir(), GL_PROTO_HELPER_DIR, lock,
                                                 &local);
    if (lib == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "cannot make a private directory for the Ruby helper: %s", local->message);
        return NULL;
    }
    if (!write_resource("helper/gemleak_helper.rb", lib, "Ruby helper", error) ||
        !write_resource("client/" PRELOAD_LIBRARY, lib, "preloaded library", error) ||
        !write_resource("client/" EXACT_LIBRARY, lib, "exact pass's library", error) ||
        (client && gl_per_test_available() &&
         !write_resource("client/gemleak_client.so", lib, "client library", error))) {
        gl_remove_tree(lib);
        close(*lock);
        *lock = -1;
        return NULL;
    }
    return g_steal_pointer(&lib);
}

/* Returns: (transfer full) (nullable): why the dynamic loader refuses to
 * preload @library into a program (a TMPDIR mounted noexec), in its words;
 * NULL when it takes it without a word. Every process of the run would
 * print that word otherwise. */
static char *refused_preload(const char *library)
{
    const char *argv[] = { "sh", "-c", "LD_PRELOAD=\"$0\" exec env true 2>&1", library, NULL };
    g_autofree char *out = NULL;
    int wait_status = 0;
    g_autoptr(GError) local = NULL;
    if (!gl_probe_command(argv, NULL, PROBE_MAX_BYTES, PRELOAD_PROBE_TIMEOUT_MS, &out,
                          &wait_status, &local))
        return g_strdup(local->message);
    if (g_spawn_check_wait_status(wait_status, NULL) && *g_strstrip(out) == '\0')
        return NULL;
    if (*out == '\0')
        return g_strdup("a program failed with it");
    /* each program on the way says the same */
    char *newline = strchr(out, '\n');
    if (newline != NULL)
        *newline = '\0';
    return g_steal_pointer(&out);
}

char *gl_run_preload_library(const char *helper_dir, char **why_not)
{
    if (why_not != NULL)
        *why_not = NULL;
    if (helper_dir == NULL)
        return NULL;
    char *library = g_build_filename(helper_dir, PRELOAD_LIBRARY, NULL);
    if (!g_file_test(library, G_FILE_TEST_IS_REGULAR)) {
        g_free(library);
        return NULL;
    }
    if (why_not == NULL)
        return library;
    char *why = refused_preload(library);
    if (why != NULL) {
        /* gone: the engines and the environment leave it out */
        g_unlink(library);
        g_clear_pointer(&library, g_free);
        *why_not = why;
    }
    return library;
}

char *gl_run_client_library(const char *helper_dir)
{
    if (helper_dir == NULL)
        return NULL;
    char *client = g_build_filename(helper_dir, "gemleak_client.so", NULL);
    if (!g_file_test(client, G_FILE_TEST_IS_REGULAR))
        g_clear_pointer(&client, g_free);
    return client;
}

char *gl_run_exact_library(const char *helper_dir)
{
    if (helper_dir == NULL)
        return NULL;
    char *library = g_build_filename(helper_dir, EXACT_LIBRARY, NULL);
    if (!g_file_test(library, G_FILE_TEST_IS_REGULAR))
        g_clear_pointer(&library, g_free);
    return library;
}

gboolean gl_is_launcher(const char *program)
{
    g_autofree char *name = g_path_get_basename(program);
    g_auto(GStrv) launchers = g_strsplit(GL_PROTO_LAUNCHERS, " ", -1);
    return g_strv_contains((const char *const *) launchers, name);
}
