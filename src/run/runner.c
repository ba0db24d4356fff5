/* Commands under Valgrind: environment, run directory, signals. */
#define _GNU_SOURCE  /* syscall */
#include "gemleak/run/runner.h"
#include "gemleak/base/protocol.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/base/errors.h"
#include "gemleak/run/rundir.h"
#include "gemleak/run/watchdog.h"
#include "gemleak/base/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "resources.h"

/* Ruby's main thread needs a large stack under Valgrind; Valgrind 3.21+
 * refuses to start when the descriptor limit is in the millions (it sizes
 * tables by it), which some CI containers set. */
#define CHILD_MAX_FILES 8192

/* ---- Valgrind and Ruby ---------------------------------------------------- */

/* Ruby prints its version at once; it takes longer to start than Valgrind,
 * and more on a loaded CI machine. */
#define PROBE_MAX_BYTES 4096
#define RUBY_PROBE_TIMEOUT_MS 20000

char *gl_ruby_version(const char *ruby)
{
    const char *argv[] = { ruby, "--disable-gems", "-e", "print RUBY_VERSION", NULL };
    char *out = NULL;
    int wait_status = 0;
    /* RUBYOPT could load anything (bundler/setup): not for this question. */
    g_auto(GStrv) env = g_environ_unsetenv(g_get_environ(), "RUBYOPT");
    if (!gl_probe_command(argv, env, PROBE_MAX_BYTES, RUBY_PROBE_TIMEOUT_MS, &out, &wait_status,
                          NULL) ||
        !g_spawn_check_wait_status(wait_status, NULL) ||
        !g_regex_match_simple("^[0-9]+\\.[0-9]+\\.[0-9]+$", out, 0, 0)) {
        g_free(out);
        return NULL;
    }
    return out;
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
                    "--keep-xml %s already holds Valgrind XML from another run: give an empty "
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
static char *make_run_dir(const GlRunOptions *options, int *lock, GError **error)
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

/* The helper is compiled into gemleak (src/run/helper/) and written, alone, to
 * a directory of gemleak's own (mode 0700), never to the run directory: a
 * --keep-xml directory is the user's, and what else it held could come
 * first on RUBYLIB (see child_environment), for every Ruby process of the
 * run to load. --per-test
 * adds the client library beside it, for Fiddle to load.
 * Returns: (transfer full): the directory, for RUBYOPT, locked before
 * anything is written (*lock: the lock's descriptor); the caller removes
 * it (gl_remove_tree) and frees the name. */
static char *write_helper(gboolean per_test, int *lock, GError **error)
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
        (per_test && !write_resource("client/gemleak_client.so", lib, "per-test library", error))) {
        gl_remove_tree(lib);
        close(*lock);
        *lock = -1;
        return NULL;
    }
    return g_steal_pointer(&lib);
}

/* ---- the child's environment ------------------------------------------------ */

/* @valgrind (nullable): GEMLEAK_VALGRIND's value, when a launcher runs
 * outside Valgrind. */
static char **child_environment(const GlRunOptions *options, const GlEngine *engine,
                                const char *found, const char *run_dir,
                                const char *helper_lib, const char *valgrind)
{
    char **env = g_get_environ();
    const char *rubyopt = g_environ_getenv(env, "RUBYOPT");
    /* The helper by its absolute path, not by name through RUBYLIB: a
     * child given a RUBYLIB of its own (system({"RUBYLIB" => ...}, ...))
     * loads it all the same. Ruby splits RUBYOPT at white space, which a
     * TMPDIR may hold: such a path goes by name. */
    g_autofree char *helper = g_build_filename(helper_lib, "gemleak_helper.rb", NULL);
    g_autofree char *require = strpbrk(helper, " \t\n\v\f\r") == NULL
        ? g_strconcat("-r", helper, NULL) : g_strdup("-rgemleak_helper");
    g_autofree char *new_rubyopt = rubyopt != NULL && *rubyopt != '\0'
        ? g_strconcat(require, " ", rubyopt, NULL) : g_strdup(require);
    if (strcmp(require, "-rgemleak_helper") == 0) {
        const char *rubylib = g_environ_getenv(env, "RUBYLIB");
        g_autofree char *new_rubylib = rubylib != NULL && *rubylib != '\0'
            ? g_strconcat(helper_lib, ":", rubylib, NULL) : g_strdup(helper_lib);
        env = g_environ_setenv(env, "RUBYLIB", new_rubylib, TRUE);
    }
    env = g_environ_setenv(env, "RUBYOPT", new_rubyopt, TRUE);
    env = g_environ_setenv(env, "GEMLEAK_RUNNING", "1", TRUE);
    env = g_environ_setenv(env, "GEMLEAK_RUN_DIR", run_dir, TRUE);
    /* Ruby 3.4+ frees its own memory at exit; older Rubies ignore it. Ruby
     * turns it on when the variable is set at all, so a user's
     * RUBY_FREE_AT_EXIT=0 (to see Ruby as it runs in production) means
     * removing it; another value of theirs is left alone. */
    const char *free_at_exit = g_environ_getenv(env, "RUBY_FREE_AT_EXIT");
    if (free_at_exit == NULL)
        env = g_environ_setenv(env, "RUBY_FREE_AT_EXIT", "1", TRUE);
    else if (*free_at_exit == '\0' || strcmp(free_at_exit, "0") == 0)
        env = g_environ_unsetenv(env, "RUBY_FREE_AT_EXIT");
    if (options->time_files)
        env = g_environ_setenv(env, "GEMLEAK_DURATIONS", "1", TRUE);
    else
        env = g_environ_unsetenv(env, "GEMLEAK_DURATIONS");
    /* Per test only when asked: a variable left in the environment by an
     * outer run must not slow this one down. */
    if (options->per_test != NULL) {
        g_autofree char *client = g_build_filename(helper_lib, "gemleak_client.so", NULL);
        env = g_environ_setenv(env, "GEMLEAK_PER_TEST", options->per_test, TRUE);
        env = g_environ_setenv(env, "GEMLEAK_CLIENT", client, TRUE);
    } else {
        env = g_environ_unsetenv(env, "GEMLEAK_PER_TEST");
        env = g_environ_unsetenv(env, "GEMLEAK_CLIENT");
    }
    /* The helper looks for build tools among a process's ancestors up to
     * gemleak, not past it (gemleak run from make). */
    g_autofree char *pid = g_strdup_printf("%d", (int) getpid());
    env = g_environ_setenv(env, "GEMLEAK_PID", pid, TRUE);
    if (valgrind != NULL)
        env = g_environ_setenv(env, GL_PROTO_VALGRIND_VARIABLE, valgrind, TRUE);
    else
        env = g_environ_unsetenv(env, GL_PROTO_VALGRIND_VARIABLE);
    if (engine->environment != NULL)
        env = engine->environment(options, run_dir, found, env);
    return env;
}

/* Runs in the child between fork and exec: only async-signal-safe calls.
 * @parent is gemleak's pid. */
static void child_setup(gpointer parent)
{
#ifdef __linux__
    /* gemleak SIGKILLed (a CI timeout) must not leave Valgrind running on,
     * unseen: the kernel kills the child when gemleak goes. The signal is
     * kept across exec, and Valgrind's --trace-children execs keep it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != (pid_t) GPOINTER_TO_INT(parent))
        _exit(127);  /* gemleak died before the line above */
#else
    (void) parent;
#endif
    struct rlimit limit;
    if (getrlimit(RLIMIT_STACK, &limit) == 0) {
        struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
        if (setrlimit(RLIMIT_STACK, &unlimited) != 0) {
            limit.rlim_cur = limit.rlim_max;  /* not allowed to raise the hard limit */
            setrlimit(RLIMIT_STACK, &limit);
        }
    }
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max > CHILD_MAX_FILES)
            limit.rlim_max = CHILD_MAX_FILES;
        if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > limit.rlim_max)
            limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

gboolean gl_is_launcher(const char *program)
{
    g_autofree char *name = g_path_get_basename(program);
    g_auto(GStrv) launchers = g_strsplit(GL_PROTO_LAUNCHERS, " ", -1);
    return g_strv_contains((const char *const *) launchers, name);
}

/* ---- signals --------------------------------------------------------------- */

/* The children's pids, for the handler: written before the handlers are
 * installed, read only by them; a reaped child's entry is set to 0. */
#define MAX_CHILDREN GL_MAX_JOBS
static volatile pid_t children[MAX_CHILDREN];
static volatile sig_atomic_t n_children;
static volatile sig_atomic_t interrupted_by;
static volatile sig_atomic_t interrupted_at_terminal;

/* A Ctrl-C at the terminal reaches the children too (they share our
 * process group): forwarding it would interrupt Ruby twice. A signal sent
 * to gemleak alone (kill, a CI job cancelled) is passed on. */
static void forward_signal(int signo, siginfo_t *info, void *context)
{
    (void) context;
    interrupted_by = signo;
    if (info != NULL && info->si_code == SI_KERNEL) {
        interrupted_at_terminal = 1;
        return;
    }
    for (sig_atomic_t i = 0; i < n_children; i++)
        if (children[i] > 0)
            kill(children[i], signo);
}

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void install_handlers(struct sigaction *saved)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = forward_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (guint i = 0; i < G_N_ELEMENTS(forwarded_signals); i++)
        sigaction(forwarded_signals[i], &action, &saved[i]);
}

static void restore_handlers(const struct sigaction *saved)
{
    for (guint i = 0; i < G_N_ELEMENTS(forwarded_signals); i++)
        sigaction(forwarded_signals[i], &saved[i], NULL);
}

/* ---- running ------------------------------------------------------------------ */

/* How long processes the command left behind (forked, not waited for) may
 * go on writing their XML once the command itself is done. */
#define DESCENDANTS_GRACE_MS 60000
/* Once gemleak is interrupted, how long those processes have to finish
 * after they were passed the signal: Valgrind writes its leak summary at
 * a fatal signal, which takes a second or two for a Ruby. */
#define INTERRUPTED_GRACE_MS 3000
/* How often the grace wait looks for processes that ended. */
#define REAP_INTERVAL_US 20000

/* Notes how a process gemleak reaped ended: those a signal killed go in
 * result->killed (their XML stops where the signal came). */
static void reaped(GlRunResult *result, pid_t pid, int wait_status)
{
    if (WIFSIGNALED(wait_status))
        g_hash_table_insert(result->killed, GINT_TO_POINTER(pid),
                            GINT_TO_POINTER(WTERMSIG(wait_status)));
}

/* Passes @signo to gemleak's children that are not commands: the
 * processes the commands left running, re-parented to gemleak. */
static void signal_orphans(int signo)
{
#ifdef __linux__
    g_autoptr(GDir) proc = g_dir_open("/proc", 0, NULL);
    const char *name;
    pid_t self = getpid();
    while (proc != NULL && (name = g_dir_read_name(proc)) != NULL) {
        guint64 pid = 0;
        if (!g_ascii_string_to_unsigned(name, 10, 1, G_MAXINT, &pid, NULL))
            continue;
        g_autofree char *path = g_strdup_printf("/proc/%s/stat", name);
        g_autofree char *stat = NULL;
        if (!g_file_get_contents(path, &stat, NULL, NULL))
            continue;
        /* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
        const char *close = strrchr(stat, ')');
        char state = 0;
        long ppid = 0;
        if (close != NULL && sscanf(close + 1, " %c %ld", &state, &ppid) == 2 && ppid == self &&
            state != 'Z')
            kill((pid_t) pid, signo);
    }
#else
    (void) signo;
#endif
}

/* Processes the commands forked and did not wait for are re-parented to
 * gemleak (a child subreaper): they are reaped as they end, all along, and
 * once the commands are done, waited for too, or their XML would be read
 * half written. An interruption (now or during the wait) ends the wait:
 * they get the signal and a moment to finish writing.
 * Returns: TRUE if some were still running when the grace ended (the
 * kernel does not say how many). */
static gboolean wait_for_descendants(GlRunResult *result, FILE *messages)
{
#ifdef __linux__
    gint64 deadline = g_get_monotonic_time() + (gint64) DESCENDANTS_GRACE_MS * 1000;
    gboolean said = FALSE, passed_on = FALSE;
    for (;;) {
        int wait_status = 0;
        pid_t pid = waitpid(-1, &wait_status, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            return FALSE;  /* ECHILD: none left */
        if (pid > 0) {
            reaped(result, pid, wait_status);
            continue;
        }
        gint64 now = g_get_monotonic_time();
        if (interrupted_by != 0 && !passed_on) {
            if (!interrupted_at_terminal)
                signal_orphans(interrupted_by);
            passed_on = TRUE;
            deadline = MIN(deadline, now + (gint64) INTERRUPTED_GRACE_MS * 1000);
        }
        if (!said && !passed_on && messages != NULL) {
            fprintf(messages, "gemleak: the command is done; waiting up to %d s for the "
                    "processes it left running\n", DESCENDANTS_GRACE_MS / 1000);
            fflush(messages);
            said = TRUE;
        }
        if (now >= deadline)
            return TRUE;
        g_usleep(REAP_INTERVAL_US);
    }
#else
    (void) result;
    (void) messages;
    return FALSE;
#endif
}

/* The run's directory (made, locked: gemleak clean leaves alone what a
 * running gemleak holds, and marked) and the helper's, in @result.
 * Returns: FALSE with @error set. */
static gboolean prepare_run_dir(const GlRunOptions *options, GlRunResult *result, GError **error)
{
    int lock = -1;
    result->dir = make_run_dir(options, &lock, error);
    if (result->dir == NULL)
        return FALSE;
    result->locks[result->n_locks++] = lock;
    result->kept_by_user = options->keep_dir != NULL;
    if (!gl_rundir_mark(result->dir, error))
        return FALSE;
    result->helper_dir = write_helper(options->per_test != NULL, &lock, error);
    if (result->helper_dir == NULL)
        return FALSE;
    result->locks[result->n_locks++] = lock;
    return TRUE;
}

/* Starts each of @commands under @engine, in @env, but a launcher that
 * --spare-launchers runs outside it (when the engine's command line
 * @can_hand_over to what it starts). Spawned without reaping: gemleak
 * reaps every child itself, the commands and the orphans alike, with
 * waitpid(-1).
 * Returns: FALSE with @error set when one could not start (those before it
 * run all the same). */
static gboolean spawn_commands(const GlRunOptions *options, const GlEngine *engine,
                               GPtrArray *commands, char **env, gboolean can_hand_over,
                               GlRunResult *result, GError **error)
{
    gboolean ok = TRUE;
    gpointer parent = GINT_TO_POINTER(getpid());
    g_array_set_size(result->seconds, commands->len);
    for (guint i = 0; i < commands->len; i++) {
        char **command = g_ptr_array_index(commands, i);
        gboolean outside = options->spare_launchers && can_hand_over &&
                           gl_is_launcher(command[0]);
        g_autoptr(GPtrArray) argv = outside ? NULL
            : engine->argv(options, options->valgrind, result->dir, command);
        char **spawned = outside ? command : (char **) argv->pdata;
        if (outside && result->launcher == NULL)
            result->launcher = g_path_get_basename(command[0]);
        g_autoptr(GError) local = NULL;
        GPid pid = 0;
        if (!g_spawn_async(NULL, spawned, env,
                           G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                               G_SPAWN_CHILD_INHERITS_STDIN,
                           child_setup, parent, &pid, &local)) {
            g_set_error(error, GL_ERROR, GL_ERROR_CHILD, "cannot start %s: %s", spawned[0],
                        local->message);
            ok = FALSE;
            break;
        }
        children[n_children] = pid;
        n_children++;
    }
    return ok;
}

/* Waits for the commands, reaping what else ends meanwhile; the first
 * failing command, in the order given, is the run's status. */
static void wait_for_commands(GlRunResult *result, gint64 started)
{
    int statuses[MAX_CHILDREN] = { 0 };
    for (guint running = (guint) n_children; running > 0;) {
        int wait_status = 0;
        pid_t pid = waitpid(-1, &wait_status, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        reaped(result, pid, wait_status);
        for (sig_atomic_t i = 0; i < n_children; i++) {
            if (children[i] == pid) {
                children[i] = 0;
                statuses[i] = wait_status;
                g_array_index(result->seconds, gdouble, i) =
                    (gdouble) (g_get_monotonic_time() - started) / G_USEC_PER_SEC;
                running--;
            }
        }
    }
    for (sig_atomic_t i = 0; i < n_children && result->status == 0; i++) {
        if (WIFSIGNALED(statuses[i])) {
            result->killed_by = WTERMSIG(statuses[i]);
            result->status = 128 + result->killed_by;
        } else if (WIFEXITED(statuses[i])) {
            result->status = WEXITSTATUS(statuses[i]);
        }
    }
}

gboolean gl_run_commands(const GlRunOptions *options, GPtrArray *commands, GlRunResult *result,
                         GError **error)
{
    memset(result, 0, sizeof *result);
    result->killed = g_hash_table_new(g_direct_hash, g_direct_equal);
    result->seconds = g_array_new(FALSE, TRUE, sizeof(gdouble));
    g_return_val_if_fail(commands->len > 0, FALSE);
    if (commands->len > MAX_CHILDREN) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%u commands at once: gemleak runs at most %d",
                    commands->len, MAX_CHILDREN);
        return FALSE;
    }
    const GlEngine *engine = options->engine != NULL ? options->engine : gl_engine_find(NULL);
    result->valgrind_version = engine->version(options->valgrind, error);
    if (result->valgrind_version == NULL)
        return FALSE;
    if (!prepare_run_dir(options, result, error))
        return FALSE;
    /* What ran, for gemleak filter on a kept directory: an engine that
     * writes nothing for a clean process leaves a run without reports. */
    g_autofree char *engine_file = g_build_filename(result->dir, GL_PROTO_ENGINE_FILE, NULL);
    if (engine != &gl_engine_valgrind &&
        !g_file_set_contents(engine_file, engine->title, -1, error)) {
        g_prefix_error(error, "cannot write in the run directory: ");
        return FALSE;
    }
    /* Valgrind's command line, for a Ruby that finds itself outside it (below
     * a launcher gemleak spares, extconf.rb) to put itself under it. */
    g_autofree char *valgrind = engine->handover(options, result->dir);
    g_auto(GStrv) env = child_environment(options, engine, result->valgrind_version, result->dir,
                                          result->helper_dir, valgrind);

    gl_watchdog_stop();  /* an earlier run's, in this process, that was never cleared */
    g_autofree char *mark = engine->watch_mark(result->dir);
    gl_watchdog_start(result->dir, mark, result->locks, result->n_locks);
#ifdef __linux__
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
    struct sigaction saved[G_N_ELEMENTS(forwarded_signals)];
    interrupted_by = 0;
    interrupted_at_terminal = 0;
    n_children = 0;
    install_handlers(saved);

    gint64 started = g_get_monotonic_time();
    gboolean ok = spawn_commands(options, engine, commands, env, valgrind != NULL, result, error);
    wait_for_commands(result, started);
    result->descendants_left = wait_for_descendants(result, options->messages);
    /* Not while processes may still be writing: a preamble may be all
     * that is there yet. */
    if (!result->descendants_left)
        result->untraced = gl_rundir_drop_untraced(result->dir, result->killed);
    result->outside = gl_rundir_outside(result->dir);
    restore_handlers(saved);
#ifdef __linux__
    /* The run's descendants are reaped or left to the watchdog: what the
     * program that called gemleak orphans later (the tests, in-process) is
     * init's again. */
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
#endif
    n_children = 0;
    result->interrupted_by = interrupted_by;
    return ok;
}

void gl_run_finish(GlRunResult *result, gboolean remove_dir)
{
    /* Until now, processes left running past the grace die with gemleak. */
    gl_watchdog_stop();
    gl_remove_tree(result->helper_dir);
    g_clear_pointer(&result->helper_dir, g_free);
    if (remove_dir && result->dir != NULL && !result->kept_by_user)
        gl_remove_tree(result->dir);
    g_clear_pointer(&result->dir, g_free);
    g_clear_pointer(&result->valgrind_version, g_free);
    g_clear_pointer(&result->launcher, g_free);
    if (result->outside != NULL)
        g_ptr_array_unref(result->outside);
    result->outside = NULL;
    if (result->killed != NULL)
        g_hash_table_unref(result->killed);
    result->killed = NULL;
    if (result->seconds != NULL)
        g_array_unref(result->seconds);
    result->seconds = NULL;
    for (guint i = 0; i < result->n_locks; i++)
        close(result->locks[i]);
    result->n_locks = 0;
}
