/* The helper's directory (runner_int.h): the Ruby helper, the library
 * preloaded into every process of a run, the allocation front (and the
 * functions it watches), the client library and the guard that follows a
 * static program, compiled into gemleak (gemleak/base/resources.h) and
 * put in a private directory of gemleak's own, on a filesystem the
 * dynamic loader loads from, before the commands start (a
 * second name of the file gemleak's cache holds for this build, or the
 * bytes written again); the preloaded library tried on the dynamic loader
 * first. */
#define _GNU_SOURCE  /* ST_NOEXEC */
#include "gemleak/run/runner.h"
#include "runner_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/resources.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/rules.h"
#include "gemleak/run/cache.h"
#include "gemleak/run/rundir.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "helper_sum.h"

/* What the dynamic loader says of a library it refuses: a line. */
#define PROBE_MAX_BYTES 4096
/* A shell and env(1), which start at once but for a loaded machine. */
#define PRELOAD_PROBE_TIMEOUT_MS 20000

/* The library preloaded into every process of a run (src/agent/quiet.c). */
#define PRELOAD_LIBRARY "gemleak_preload.so"
#define ALLOC_LIBRARY "gemleak_alloc.so"
#define ALLOC_APIS "alloc-apis.txt"
/* in the cache: the preload library the dynamic loader took (refused_preload) */
#define PRELOAD_TAKEN "preload-taken.txt"
/* A static program, empty when gemleak was built without a static C
 * library (src/agent/guard.c). */
#define GUARD_PROGRAM "gemleak_guard"

/* What RUBYOPT's -r loads (src/agent/helper_loader.rb), the helper it
 * loads, the parts the helper loads when a process needs them
 * (GemLeakHelper.later), and the start of the name of one of those
 * compiled by a Ruby of the run, which the helper writes beside it
 * (gemleak_helper_body-KEY.iseq). */
#define HELPER_LOADER "gemleak_helper.rb"
#define HELPER_BODY "gemleak_helper_body.rb"
/* The parts loaded later, HELPER_LATER in the Makefile, in its order. */
static const char *const helper_later[] = {
    "gemleak_helper_checks.rb", "gemleak_helper_per_test_again.rb",
    "gemleak_helper_launch_outside.rb", "gemleak_helper_growth_run.rb",
    "gemleak_helper_per_test_frameworks.rb",
};
#define HELPER_COMPILED_PREFIX "gemleak_helper_"
#define HELPER_COMPILED_SUFFIX ".iseq"
#define CLIENT_LIBRARY "gemleak_client.so"

/* Returns: TRUE if @name is a file a Ruby of a run writes in the helper's
 * directory: the helper it compiled (NAME.iseq), what it read of its
 * RbConfig (rbconfig-DEV-INO.txt); with @partial, either half-written too
 * (NAME.PID, before its rename). */
static gboolean written_by_ruby(const char *name, gboolean partial)
{
    const char *suffix = NULL;
    if (g_str_has_prefix(name, HELPER_COMPILED_PREFIX))
        suffix = strstr(name, HELPER_COMPILED_SUFFIX);
    else if (g_str_has_prefix(name, GL_PROTO_RBCONFIG_PREFIX))
        suffix = strstr(name, GL_PROTO_FILE_SUFFIX);
    else
        return FALSE;
    /* NAME.iseq (NAME.txt), or the helper's NAME.iseq.PID before its rename */
    if (suffix == NULL || strchr(name, '/') != NULL)
        return FALSE;
    const char *rest = suffix + strlen(g_str_has_prefix(name, GL_PROTO_RBCONFIG_PREFIX)
                                           ? GL_PROTO_FILE_SUFFIX : HELPER_COMPILED_SUFFIX);
    if (*rest == '\0')
        return TRUE;
    if (!partial || *rest != '.' || rest[1] == '\0')
        return FALSE;
    for (const char *c = rest + 1; *c != '\0'; c++)
        if (!g_ascii_isdigit(*c))
            return FALSE;
    return TRUE;
}

gboolean gl_run_is_helper_file(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(helper_later); i++)
        if (strcmp(name, helper_later[i]) == 0)
            return TRUE;
    static const char *const names[] = { HELPER_LOADER, HELPER_BODY, CLIENT_LIBRARY,
                                         PRELOAD_LIBRARY, ALLOC_LIBRARY, ALLOC_APIS,
                                         GUARD_PROGRAM, GL_RUN_EXACT_SITES_FILE, GL_RUN_EXACT_TESTS_FILE,
                                         PRELOAD_TAKEN };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        if (strcmp(name, names[i]) == 0)
            return TRUE;
    return written_by_ruby(name, TRUE);
}

/* What gemleak's cache keeps of a run's helper directory: what its Rubies
 * wrote there, whole. */
static gboolean kept_between_runs(const char *name)
{
    return written_by_ruby(name, FALSE);
}

/* Returns: (transfer full) (nullable): the cache's directory for this
 * helper ("helper-" and the start of the SHA-256 of its files, summed as
 * gemleak was built: GL_HELPER_SUM): what a Ruby compiled of another
 * helper is never this one's, and the helper's files it holds are this
 * build's. */
static char *helper_cache(void)
{
    return gl_cache_dir(gl_run_helper_cache_name());
}

const char *gl_run_helper_cache_name(void)
{
    return GL_RUN_HELPER_CACHE_PREFIX GL_HELPER_SUM;
}

void gl_run_keep_helper(const char *helper_dir)
{
    g_autofree char *cache = helper_dir != NULL ? helper_cache() : NULL;
    if (cache != NULL)
        gl_cache_copy(helper_dir, cache, kept_between_runs);
}

/* Returns: TRUE if @path is a regular file of @size bytes, @mode's
 * permissions (a file of the cache as a run left it). */
static gboolean cached_as(const char *path, gsize size, mode_t mode)
{
    GStatBuf st;
    return g_lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (gsize) st.st_size == size &&
           (st.st_mode & 07777) == mode;
}

/* Writes @size bytes of @data to @file, with @mode's permissions.
 * Returns: FALSE, with @error set (GLib's), when it cannot. */
static gboolean write_file(const char *file, const char *data, gsize size, mode_t mode,
                           GError **error)
{
    if (!g_file_set_contents(file, data, (gssize) size, error))
        return FALSE;
    if (g_chmod(file, mode) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s",
                    g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* Writes the resource @name into @dir, with @mode's permissions, as @what
 * says it: a second name of the file in the helper's @cache directory
 * (nullable), written there by the first run of this build; the bytes
 * themselves where the cache is elsewhere (another filesystem) or
 * cannot be written. A run wrote 1 MB a run otherwise, the guard most of
 * it: some 4 ms of `gemleak run -- true`'s 26.
 * Returns: FALSE, with @error set, when it cannot. */
static gboolean write_resource(const char *name, const char *dir, const char *cache,
                               mode_t mode, const char *what, GError **error)
{
    g_autoptr(GBytes) bytes = gl_resource(name);
    g_autofree char *base = g_path_get_basename(name);
    g_autofree char *file = g_build_filename(dir, base, NULL);
    gsize size = 0;
    const char *data = g_bytes_get_data(bytes, &size);
    if (cache != NULL) {
        g_autofree char *cached = g_build_filename(cache, base, NULL);
        if ((cached_as(cached, size, mode) || write_file(cached, data, size, mode, NULL)) &&
            link(cached, file) == 0)
            return TRUE;
    }
    g_autoptr(GError) local = NULL;
    if (!write_file(file, data, size, mode, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write the %s to %s: %s", what,
                    file, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean gl_per_test_available(void)
{
    g_autoptr(GBytes) bytes = gl_resource("client/" CLIENT_LIBRARY);
    if (bytes == NULL)
        return FALSE;
    gsize size = 0;
    const char *data = g_bytes_get_data(bytes, &size);
    static const char mark[] = GL_PROTO_CLIENT_REQUESTS_MARK "1";
    return memmem(data, size, mark, sizeof mark - 1) != NULL;
}

/* Writes the guard into @dir (through @cache, nullable), a program its
 * owner runs, when gemleak has one (its resource is not empty).
 * Returns: FALSE, with @error set, when it cannot. */
static gboolean write_guard(const char *dir, const char *cache, GError **error)
{
    g_autoptr(GBytes) bytes = gl_resource("client/" GUARD_PROGRAM);
    if (bytes == NULL || g_bytes_get_size(bytes) == 0)
        return TRUE;
    return write_resource("client/" GUARD_PROGRAM, dir, cache, 0700, "guard", error);
}

/* Writes the functions of Ruby's that allocate for their caller, a glob a
 * line, as the rules name them (rule 2), for the allocation front to watch
 * an extension's calls of: the rule and what is watched are one list.
 * Returns: FALSE, with @error set, when it cannot. */
static gboolean write_apis(const char *dir, GError **error)
{
    g_autoptr(GString) text = g_string_new(NULL);
    for (const char *const *glob = gl_rules_allocator_globs(); *glob != NULL; glob++)
        g_string_append_printf(text, "%s\n", *glob);
    g_autofree char *file = g_build_filename(dir, ALLOC_APIS, NULL);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(file, text->str, (gssize) text->len, &local)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "cannot write %s: %s", file,
                    local->message);
        return FALSE;
    }
    return TRUE;
}

/* Returns: TRUE if programs can load libraries from @dir's filesystem (it
 * is not mounted noexec) and it is a directory gemleak can write to. */
static gboolean loadable_from(const char *dir)
{
    struct statvfs vfs;
    return dir != NULL && *dir != '\0' && g_file_test(dir, G_FILE_TEST_IS_DIR) &&
           access(dir, W_OK | X_OK) == 0 && statvfs(dir, &vfs) == 0 && !(vfs.f_flag & ST_NOEXEC);
}

/* Returns: (transfer full): where the helper's directory goes: TMPDIR,
 * unless its filesystem is mounted noexec (the dynamic loader refuses a
 * library from there, and with it everything gemleak loads into the
 * suite's processes: under a sanitizer's engine, what judges what the
 * runtime's check cannot), then the user's runtime directory, gemleak's in
 * the user's cache, /var/tmp, /tmp; TMPDIR when none of them will do. */
static char *helper_parent(void)
{
    const char *tmp = g_get_tmp_dir();
    if (loadable_from(tmp))
        return g_strdup(tmp);
    g_autofree char *cache = g_build_filename(g_get_user_cache_dir(), "gemleak", NULL);
    const char *const others[] = { g_getenv("XDG_RUNTIME_DIR"), cache, "/var/tmp", "/tmp" };
    for (guint i = 0; i < G_N_ELEMENTS(others); i++) {
        if (others[i] == cache)
            g_mkdir_with_parents(cache, 0700);
        if (loadable_from(others[i]))
            return g_strdup(others[i]);
    }
    return g_strdup(tmp);
}

/* The helper is compiled into gemleak (src/agent/helper/) and written, alone,
 * to a directory of gemleak's own (mode 0700), never to the run directory:
 * a --keep-xml directory is the user's, and what else it held could come
 * first on RUBYLIB (see gl_run_child_environment), for every Ruby process
 * of the run to load. The library preloaded into every process of the run
 * goes beside it; @client adds the client library, which the helper
 * requires as a Ruby extension (GemLeakHelper::Native: --per-test, the
 * checks at fork, exit! and exec, the sanitizers' owners).
 * Returns: (transfer full): the directory, for RUBYOPT, locked before
 * anything is written (*lock: the lock's descriptor); the caller removes
 * it (gl_remove_tree) and frees the name. */
char *gl_run_write_helper(gboolean client, int *lock, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autofree char *parent = helper_parent();
    g_autofree char *lib = gl_rundir_make_locked(parent, GL_PROTO_HELPER_DIR, lock, &local);
    if (lib == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "cannot make a private directory for the Ruby helper: %s", local->message);
        return NULL;
    }
    /* the helper's files, the cache's (cache.h); and what the Rubies of
     * the runs before compiled and read */
    g_autofree char *cache = helper_cache();
    gboolean later = TRUE;
    for (guint i = 0; later && i < G_N_ELEMENTS(helper_later); i++) {
        g_autofree char *resource = g_strconcat("helper/", helper_later[i], NULL);
        later = write_resource(resource, lib, cache, 0644, "Ruby helper", error);
    }
    if (!later || !write_resource("helper/" HELPER_LOADER, lib, cache, 0644, "Ruby helper", error) ||
        !write_resource("helper/" HELPER_BODY, lib, cache, 0644, "Ruby helper", error) ||
        !write_resource("client/" PRELOAD_LIBRARY, lib, cache, 0644, "preloaded library",
                        error) ||
        !write_resource("client/" ALLOC_LIBRARY, lib, cache, 0644, "allocation front", error) ||
        !write_apis(lib, error) || !write_guard(lib, cache, error) ||
        (client && !write_resource("client/" CLIENT_LIBRARY, lib, cache, 0644, "client library",
                                   error))) {
        gl_remove_tree(lib);
        close(*lock);
        *lock = -1;
        return NULL;
    }
    if (cache != NULL)
        gl_cache_copy(cache, lib, kept_between_runs);
    return g_steal_pointer(&lib);
}

/* Returns: (transfer full): the environment true(1) is asked in, with
 * @library preloaded: gemleak's own less what the user asked the dynamic
 * loader to print or do of itself (LD_DEBUG, LD_SHOW_AUXV,
 * LD_TRACE_LOADED_OBJECTS, ...), which would read as its refusal. */
static char **probe_environment(const char *library)
{
    g_auto(GStrv) own = g_get_environ();
    GPtrArray *kept = g_ptr_array_new();
    for (char **v = own; *v != NULL; v++)
        if (!g_str_has_prefix(*v, "LD_"))
            g_ptr_array_add(kept, g_strdup(*v));
    g_ptr_array_add(kept, NULL);
    char **env = (char **) g_ptr_array_free(kept, FALSE);
    return g_environ_setenv(env, "LD_PRELOAD", library, TRUE);
}

/* Returns: (transfer full) (nullable): what the loader's answer for
 * @library holds for: the file (device, inode, size, when it was written;
 * not its change time, which each run's second name of it moves) and how
 * its filesystem is mounted (noexec among the flags). A run's library is
 * a second name of the cache's (the same inode), so the answer holds from
 * run to run of one build; NULL when the library cannot be looked at. */
static char *taken_key(const char *library)
{
    struct stat st;
    struct statvfs vfs;
    if (stat(library, &st) != 0 || statvfs(library, &vfs) != 0)
        return NULL;
    return g_strdup_printf("%ju %ju %jd %jd.%09ld %lu", (uintmax_t) st.st_dev,
                           (uintmax_t) st.st_ino, (intmax_t) st.st_size,
                           (intmax_t) st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                           (unsigned long) vfs.f_flag);
}

/* Returns: (transfer full) (nullable): why the dynamic loader refuses to
 * preload @library into a program (a TMPDIR mounted noexec), in its words;
 * NULL when it takes it without a word. Every process of the run would
 * print that word otherwise. One program is started, true(1), with
 * @library preloaded (a shell and env(1) on the way cost a run some 3 ms),
 * once for a library: what the loader took is kept in the cache
 * (PRELOAD_TAKEN, with taken_key()), and not asked of again (the program
 * cost a run some 2 ms). */
static char *refused_preload(const char *library)
{
    g_autofree char *key = taken_key(library);
    g_autofree char *taken = key != NULL ? gl_cache_get(gl_run_helper_cache_name(),
                                                        PRELOAD_TAKEN, key)
                                         : NULL;
    if (taken != NULL)
        return NULL;
    const char *argv[] = { "true", NULL };
    g_auto(GStrv) env = probe_environment(library);
    g_autofree char *out = NULL;
    int wait_status = 0;
    g_autoptr(GError) local = NULL;
    if (!gl_probe_command_both_streams(argv, env, PROBE_MAX_BYTES, PRELOAD_PROBE_TIMEOUT_MS,
                                       &out, &wait_status, &local))
        return g_strdup(local->message);
    if (g_spawn_check_wait_status(wait_status, NULL) && *g_strstrip(out) == '\0') {
        if (key != NULL)
            gl_cache_put(gl_run_helper_cache_name(), PRELOAD_TAKEN, key, "taken");
        return NULL;
    }
    if (*out == '\0')
        return g_strdup("a program failed with it");
    /* its first line: the loader's */
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
    char *client = g_build_filename(helper_dir, CLIENT_LIBRARY, NULL);
    if (!g_file_test(client, G_FILE_TEST_IS_REGULAR))
        g_clear_pointer(&client, g_free);
    return client;
}

/* Returns: (transfer full) (nullable): @name in @helper_dir (nullable),
 * when it is a file there. */
static char *in_helper_dir(const char *helper_dir, const char *name)
{
    if (helper_dir == NULL)
        return NULL;
    char *path = g_build_filename(helper_dir, name, NULL);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR))
        g_clear_pointer(&path, g_free);
    return path;
}

char *gl_run_alloc_library(const char *helper_dir)
{
    return in_helper_dir(helper_dir, ALLOC_LIBRARY);
}

char *gl_run_alloc_apis(const char *helper_dir)
{
    return in_helper_dir(helper_dir, ALLOC_APIS);
}

char *gl_run_guard(const char *helper_dir)
{
    return in_helper_dir(helper_dir, GUARD_PROGRAM);
}
