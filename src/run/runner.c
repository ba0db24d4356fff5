/* Running a run's commands under the engine: spawning them (prepare.c,
 * rundir_make.c, helper_dir.c and child.c ready what they need),
 * forwarding signals, reaping orphans, waiting, and ending the run. */
#define _GNU_SOURCE  /* syscall */
#include "gemleak/run/runner.h"
#include "runner_int.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/read/sanitizer_names.h"
#include "gemleak/run/rundir.h"
#include "gemleak/run/watchdog.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"

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

#include <glib/gstdio.h>

/* ---- signals --------------------------------------------------------------- */

/* The children's pids, for the handler: written before the handlers are
 * installed, read only by them; a reaped child's entry is set to 0. */
#define MAX_CHILDREN GL_MAX_JOBS
static volatile pid_t children[MAX_CHILDREN];
static volatile sig_atomic_t n_children;
static volatile sig_atomic_t interrupted_by;
static volatile sig_atomic_t interrupted_at_terminal;
static volatile sig_atomic_t timed_out;

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

/* How long commands that ran past their deadline have after SIGTERM. */
#define DEADLINE_GRACE_S 10

/* GlRunOptions.deadline: the commands are asked to end, then made to. */
static void deadline_passed(int signo)
{
    (void) signo;
    int ending = timed_out ? SIGKILL : SIGTERM;
    timed_out = 1;
    for (sig_atomic_t i = 0; i < n_children; i++)
        if (children[i] > 0)
            kill(children[i], ending);
    if (ending == SIGTERM)
        alarm(DEADLINE_GRACE_S);
}

static void start_deadline(guint seconds, struct sigaction *saved)
{
    timed_out = 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = deadline_passed;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, saved);
    if (seconds > 0)
        alarm(seconds);
}

static void stop_deadline(const struct sigaction *saved)
{
    alarm(0);
    sigaction(SIGALRM, saved, NULL);
}

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
        if ((interrupted_by != 0 || timed_out) && !passed_on) {
            if (timed_out)
                signal_orphans(SIGTERM);
            else if (!interrupted_at_terminal)
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
        if (now >= deadline) {
            /* past the commands' deadline and the grace: what SIGTERM did
             * not end (a Ruby whose main thread never takes the signal) is
             * made to, not left running for ever */
            if (timed_out)
                signal_orphans(SIGKILL);
            return TRUE;
        }
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
static gboolean prepare_run_dir(const GlRunOptions *options, const GlEngine *engine,
                                GlRunResult *result, GError **error)
{
    int lock = -1;
    result->dir = gl_run_make_dir(options, &lock, error);
    if (result->dir == NULL)
        return FALSE;
    result->locks[result->n_locks++] = lock;
    result->kept_by_user = options->keep_dir != NULL;
    if (!gl_rundir_mark(result->dir, error))
        return FALSE;
    /* The client library: Valgrind's client requests; under a sanitizer's
     * engine, the runtime's interface and, per test, which test allocated
     * what; the helper calls it natively (GemLeakHelper::Native). */
    result->helper_dir = gl_run_write_helper(TRUE, &lock, error);
    if (result->helper_dir == NULL)
        return FALSE;
    result->locks[result->n_locks++] = lock;
    g_autofree char *parent = g_path_get_dirname(result->helper_dir);
    if (strcmp(parent, g_get_tmp_dir()) != 0)
        result->helper_moved = g_strdup(g_get_tmp_dir());
    /* tried once, here: a library the dynamic loader refuses is removed */
    g_free(gl_run_preload_library(result->helper_dir, &result->unquiet));
    /* Under a sanitizer's engine the libraries are what judges what the
     * runtime's check cannot, and says each check ran to its end: a run
     * without them would pass on what nobody checked. */
    if (result->unquiet != NULL && gl_engine_supports(engine, GL_ENGINE_PROVES_CHECKS)) {
        g_autofree char *why = gl_text_escape(result->unquiet);
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT, "the dynamic loader refuses gemleak's "
                    "libraries from %s (%s), which %s needs in every Ruby process: set TMPDIR to "
                    "a directory on a filesystem not mounted noexec", parent, why, engine->facts.title);
        return FALSE;
    }
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
    pid_t parent = getpid();
    g_array_set_size(result->seconds, commands->len);
    for (guint i = 0; i < commands->len; i++) {
        char **command = g_ptr_array_index(commands, i);
        gboolean outside = options->spare_launchers && can_hand_over &&
                           gl_is_launcher(command[0]);
        g_auto(GStrv) own_env = g_strdupv(env);
        g_autoptr(GPtrArray) argv = outside ? NULL
            : engine->argv(options, options->program, result->dir, result->helper_dir, command,
                           &own_env);
        char **spawned = outside ? command : (char **) argv->pdata;
        if (outside && result->launcher == NULL)
            result->launcher = g_path_get_basename(command[0]);
        g_autoptr(GError) local = NULL;
        /* A run the suite's output is not of (the exact pass) keeps its own
         * from the terminal and from the suite's streams; its input is the
         * first run's again where that was a file (ruby - < script.rb),
         * from where that started, else /dev/null. */
        struct stat in;
        gboolean again = options->quiet && options->input_offset >= 0 &&
                         fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode) &&
                         lseek(STDIN_FILENO, (off_t) options->input_offset, SEEK_SET) >= 0;
        /* the command's PATH, as env(1) in its command line would look */
        pid_t pid = 0;
        if (!gl_run_spawn(spawned, own_env, options->quiet, !options->quiet || again, parent, &pid,
                          &local)) {
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

/* Returns: where gemleak's standard input is now, when it can be read
 * again from there (a regular file; /dev/null, 0), else -1. */
static gint64 input_offset(void)
{
    struct stat st;
    if (fstat(STDIN_FILENO, &st) != 0)
        return 0;  /* closed: the commands read nothing */
    if (S_ISREG(st.st_mode)) {
        off_t at = lseek(STDIN_FILENO, 0, SEEK_CUR);
        return at >= 0 ? (gint64) at : -1;
    }
    struct stat null;
    if (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 && null.st_rdev == st.st_rdev)
        return 0;
    return -1;
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
    result->input_offset = input_offset();
    result->objects = options->objects;
    result->engine_found = engine->version(options->program, error);
    if (result->engine_found == NULL)
        return FALSE;
    if (!prepare_run_dir(options, engine, result, error))
        return FALSE;
    /* What ran, for gemleak filter on a kept directory: an engine that
     * writes nothing for a clean process leaves a run without reports. */
    g_autofree char *preload = gl_run_preload_library(result->helper_dir, NULL);
    if (!gl_rundir_write_engine(result->dir, engine, result->engine_found,
                                gl_engine_supports(engine, GL_ENGINE_PROVES_CHECKS) &&
                                    preload != NULL, options->growth, error))
        return FALSE;
    /* The engine's command line, for a Ruby that finds itself outside it
     * (below a launcher gemleak spares, extconf.rb) to put itself under it. */
    g_autofree char *handover = engine->handover(options, result->dir, result->helper_dir);
    g_auto(GStrv) env = gl_run_child_environment(options, engine, result->engine_found,
                                                 result->dir, result->helper_dir, handover);

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
    struct sigaction saved_alarm;
    /* Spared, a launcher hands the engine down to what it starts; gemleak's
     * library, preloaded, gives a program started with an environment of
     * its own the run's variables back: without it a Ruby below the
     * launcher could start unseen, and the launcher is traced. */
    gboolean ok = spawn_commands(options, engine, commands, env, handover != NULL && preload != NULL,
                                 result, error);
    start_deadline(options->deadline, &saved_alarm);
    wait_for_commands(result, started);
    result->descendants_left = wait_for_descendants(result, options->messages);
    /* Not while processes may still be writing: a preamble may be all
     * that is there yet. */
    if (!result->descendants_left)
        result->untraced = gl_rundir_drop_untraced(result->dir, result->killed);
    result->outside = gl_run_dir_outside(result->dir);
    stop_deadline(&saved_alarm);
    /* Not while processes may still be writing: a report renamed over
     * would lose what they write after. */
    if (gl_engine_supports(engine, GL_ENGINE_NAMES_FRAMES) && !result->descendants_left) {
        g_autoptr(GlDebugInfo) objects = options->objects != NULL
                                             ? gl_debuginfo_ref(options->objects)
                                             : gl_debuginfo_new();
        gl_sanitizer_name_run_dir(objects, result->dir, options->messages);
    }
    result->timed_out = timed_out;
    restore_handlers(saved);
#ifdef __linux__
    /* The run's descendants are reaped or left to the watchdog: what the
     * program that called gemleak orphans later (the tests, in-process) is
     * init's again. */
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
#endif
    n_children = 0;
    result->interrupted_by = interrupted_by;
    /* Said in the directory too: gemleak filter of it must not pass what
     * the signal kept from running. */
    g_autoptr(GError) unmarked = NULL;
    if (interrupted_by != 0 && !gl_rundir_mark_interrupted(result->dir, interrupted_by, &unmarked) &&
        options->messages != NULL) {
        g_autofree char *why = gl_text_escape(unmarked->message);
        fprintf(options->messages, "gemleak: warning: %s\n", why);
    }
    return ok;
}

void gl_run_finish(GlRunResult *result, gboolean remove_dir)
{
    /* Until now, processes left running past the grace die with gemleak. */
    gl_watchdog_stop();
    gl_run_keep_helper(result->helper_dir);
    gl_remove_tree(result->helper_dir);
    g_clear_pointer(&result->helper_dir, g_free);
    if (remove_dir && result->dir != NULL && !result->kept_by_user)
        gl_remove_tree(result->dir);
    g_clear_pointer(&result->dir, g_free);
    g_clear_pointer(&result->engine_found, g_free);
    result->objects = NULL;
    g_clear_pointer(&result->launcher, g_free);
    g_clear_pointer(&result->unquiet, g_free);
    g_clear_pointer(&result->helper_moved, g_free);
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
