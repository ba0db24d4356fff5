/* A command's child (runner_int.h): the environment it runs with (the
 * helper on RUBYOPT, the run directory, gemleak's variables, the library
 * preloaded into every process, what the engine adds, and what that
 * library gives back to a program started with an environment of its
 * own), and what it sets between fork and exec (limits, death with
 * gemleak). */
#define _GNU_SOURCE  /* vfork, NSIG */
#include "gemleak/run/runner.h"
#include "runner_int.h"
#include "gemleak/base/protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

/* Ruby's main thread needs a large stack under Valgrind; Valgrind 3.21+
 * refuses to start when the descriptor limit is in the millions (it sizes
 * tables by it), which some CI containers set. */
#define CHILD_MAX_FILES 8192

/* The run's variables the preloaded library gives back to a program a
 * process execs with an environment of its own (src/agent/restore.c,
 * GL_PROTO_RESTORE_VARIABLE): each as @env has it, but RUBYOPT, where the
 * helper (@require) goes in front of the program's own switches, and
 * LD_PRELOAD and RUBYLIB, where gemleak's part goes after the program's.
 * Returns: (transfer full): @env (consumed) with GEMLEAK_RESTORE set. */
static char **with_restore(char **env, const char *require, const char *preload)
{
    static const char *const set[] = {
        GL_PROTO_RUNNING_VARIABLE, GL_PROTO_RUN_DIR_VARIABLE, GL_PROTO_PID_VARIABLE, GL_PROTO_CLIENT_VARIABLE,
        GL_PROTO_DURATIONS_VARIABLE, GL_PROTO_PER_TEST_VARIABLE, GL_PROTO_LEAK_KINDS_VARIABLE, GL_PROTO_ENGINE_COMMAND_VARIABLE,
        GL_PROTO_RUNTIME_VARIABLE, GL_PROTO_PROOF_VARIABLE, GL_PROTO_EXACT_VARIABLE,
        GL_PROTO_ALLOC_LIBRARY_VARIABLE, GL_PROTO_ALLOC_MODE_VARIABLE, GL_PROTO_ALLOC_APIS_VARIABLE,
        GL_PROTO_EXACT_TESTS_VARIABLE, GL_PROTO_INSTRUMENTED_VARIABLE, GL_PROTO_GUARD_VARIABLE,
        GL_PROTO_GROWTH_VARIABLE,
    };
    static const char *const after[] = { "LSAN_OPTIONS", "ASAN_OPTIONS" };
    g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(items, g_strdup_printf("%cRUBYOPT=%s", GL_PROTO_RESTORE_FRONT, require));
    g_ptr_array_add(items, g_strdup_printf("%cLD_PRELOAD=%s", GL_PROTO_RESTORE_BACK, preload));
    if (strcmp(require, "-rgemleak_helper") == 0) {
        g_autofree char *lib = g_path_get_dirname(preload);
        g_ptr_array_add(items, g_strdup_printf("%cRUBYLIB=%s", GL_PROTO_RESTORE_BACK, lib));
    }
    const char *free_at_exit = g_environ_getenv(env, "RUBY_FREE_AT_EXIT");
    if (g_strcmp0(free_at_exit, GL_PROTO_FREE_AT_EXIT_VALUE) == 0)
        g_ptr_array_add(items, g_strdup_printf("%cRUBY_FREE_AT_EXIT=%s", GL_PROTO_RESTORE_SET,
                                               free_at_exit));
    for (guint i = 0; i < G_N_ELEMENTS(set); i++) {
        const char *value = g_environ_getenv(env, set[i]);
        if (value != NULL)
            g_ptr_array_add(items, g_strdup_printf("%c%s=%s", GL_PROTO_RESTORE_SET, set[i], value));
    }
    for (guint i = 0; i < G_N_ELEMENTS(after); i++) {
        const char *value = g_environ_getenv(env, after[i]);
        if (value != NULL)
            g_ptr_array_add(items, g_strdup_printf("%c%s=%s", GL_PROTO_RESTORE_BACK, after[i],
                                                   value));
    }
    /* a value that holds the separator cannot be given back */
    for (guint i = items->len; i > 0; i--)
        if (strchr(g_ptr_array_index(items, i - 1), GL_PROTO_RESTORE_SEPARATOR[0]) != NULL)
            g_ptr_array_remove_index(items, i - 1);
    g_ptr_array_add(items, NULL);
    g_autofree char *value = g_strjoinv(GL_PROTO_RESTORE_SEPARATOR, (char **) items->pdata);
    return g_environ_setenv(env, GL_PROTO_RESTORE_VARIABLE, value, TRUE);
}

/* Returns: @env (consumed) with @name set to @value, or without @name
 * when @value is NULL: a variable an outer run left must not reach this
 * one's processes. */
static char **set_or_unset(char **env, const char *name, const char *value)
{
    return value != NULL ? g_environ_setenv(env, name, value, TRUE)
                         : g_environ_unsetenv(env, name);
}

/* Returns: @env (consumed) with the helper on RUBYOPT, and *@require
 * (transfer full) set to what RUBYOPT requires it by. The helper goes by
 * its absolute path, not by name through RUBYLIB: a child given a RUBYLIB
 * of its own (system({"RUBYLIB" => ...}, ...)) loads it all the same.
 * Ruby splits RUBYOPT at white space, which a TMPDIR may hold: such a
 * path goes by name. */
static char **with_helper(char **env, const char *helper_lib, char **require)
{
    const char *rubyopt = g_environ_getenv(env, "RUBYOPT");
    g_autofree char *helper = g_build_filename(helper_lib, "gemleak_helper.rb", NULL);
    *require = strpbrk(helper, " \t\n\v\f\r") == NULL
        ? g_strconcat("-r", helper, NULL) : g_strdup("-rgemleak_helper");
    g_autofree char *new_rubyopt = rubyopt != NULL && *rubyopt != '\0'
        ? g_strconcat(*require, " ", rubyopt, NULL) : g_strdup(*require);
    if (strcmp(*require, "-rgemleak_helper") == 0) {
        const char *rubylib = g_environ_getenv(env, "RUBYLIB");
        g_autofree char *new_rubylib = rubylib != NULL && *rubylib != '\0'
            ? g_strconcat(helper_lib, ":", rubylib, NULL) : g_strdup(helper_lib);
        env = g_environ_setenv(env, "RUBYLIB", new_rubylib, TRUE);
    }
    return g_environ_setenv(env, "RUBYOPT", new_rubyopt, TRUE);
}

/* Returns: @env (consumed) with Ruby freeing its own memory at exit. Ruby
 * 3.4+ does; older Rubies ignore it. Ruby turns it on when the variable
 * is set at all, so a user's RUBY_FREE_AT_EXIT=0 (to see Ruby as it runs
 * in production) means removing it; another value of theirs is left
 * alone. gemleak's own value tells the preloaded library which warning
 * is gemleak's to hide. */
static char **with_free_at_exit(char **env)
{
    const char *free_at_exit = g_environ_getenv(env, "RUBY_FREE_AT_EXIT");
    if (free_at_exit == NULL)
        return g_environ_setenv(env, "RUBY_FREE_AT_EXIT", GL_PROTO_FREE_AT_EXIT_VALUE, TRUE);
    if (*free_at_exit == '\0' || strcmp(free_at_exit, "0") == 0)
        return g_environ_unsetenv(env, "RUBY_FREE_AT_EXIT");
    return env;
}

/* Returns: @env (consumed) with what the helper is asked to do: time the
 * test files, follow each test (only when asked: a variable left in the
 * environment by an outer run must not slow this one down), and where
 * the client library is, when the run needs it: for --per-test (under a
 * sanitizer's engine, what records which test allocated each block) and
 * for the check a forked child makes of what it inherited (an engine that
 * answers client requests: Valgrind; under a sanitizer the helper calls
 * the runtime). */
static char **with_helper_tasks(char **env, const GlRunOptions *options, const char *helper_lib)
{
    env = set_or_unset(env, GL_PROTO_DURATIONS_VARIABLE, options->time_files ? "1" : NULL);
    env = set_or_unset(env, GL_PROTO_PER_TEST_VARIABLE, options->per_test);
    /* --growth: the repetitions of each test after the suite. */
    g_autofree char *growth = options->growth > 0 ? g_strdup_printf("%u", options->growth) : NULL;
    env = set_or_unset(env, GL_PROTO_GROWTH_VARIABLE, growth);
    /* Whether the helper counts possibly lost memory as lost when it
     * looks for the test that lost it. */
    env = set_or_unset(env, GL_PROTO_LEAK_KINDS_VARIABLE,
                       options->per_test == NULL ? NULL
                       : (options->leak_kinds & GL_LEAK_POSSIBLE) ? "possible" : "");
    g_autofree char *client = gl_run_client_library(helper_lib);
    return set_or_unset(env, GL_PROTO_CLIENT_VARIABLE, client);
}

/* Returns: @env (consumed) with fast stacks' allocation front, before the
 * runtime (the engine's argv() puts it there; the helper takes it out of
 * LD_PRELOAD, with the runtime, for what Ruby starts), which gives the
 * runtime stacks gemleak can judge, and in the exact pass unwinds exactly
 * at the sites. */
static char **with_alloc(char **env, const GlRunOptions *options, const GlEngine *engine,
                         const char *helper_lib)
{
    g_autofree char *alloc = options->fast_stacks &&
                             gl_engine_supports(engine, GL_ENGINE_PROVES_CHECKS)
                                 ? gl_run_alloc_library(helper_lib) : NULL;
    /* What the front watches, and what the client library counts under a
     * sanitizer (--growth, src/agent/growth.c), with the front or without. */
    g_autofree char *apis = gl_engine_supports(engine, GL_ENGINE_PROVES_CHECKS)
                                ? gl_run_alloc_apis(helper_lib) : NULL;
    env = set_or_unset(env, GL_PROTO_ALLOC_LIBRARY_VARIABLE, alloc);
    env = set_or_unset(env, GL_PROTO_ALLOC_MODE_VARIABLE,
                       alloc == NULL ? NULL
                       : options->frame_pointers ? GL_PROTO_UNWOUND_FRAMES : GL_PROTO_UNWOUND_CALL);
    env = set_or_unset(env, GL_PROTO_ALLOC_APIS_VARIABLE, apis);
    const char *exact = alloc != NULL ? options->exact_sites : NULL;
    env = set_or_unset(env, GL_PROTO_EXACT_VARIABLE, exact);
    return set_or_unset(env, GL_PROTO_EXACT_TESTS_VARIABLE,
                        exact != NULL ? options->exact_tests : NULL);
}

/* @handover (nullable): GEMLEAK_ENGINE_COMMAND's value, when a launcher
 * runs outside the engine.
 * Returns: (transfer full): the commands' environment; free with g_strfreev(). */
char **gl_run_child_environment(const GlRunOptions *options, const GlEngine *engine,
                                const char *found, const char *run_dir,
                                const char *helper_lib, const char *handover)
{
    char **env = g_get_environ();
    g_autofree char *require = NULL;
    env = with_helper(env, helper_lib, &require);
    env = g_environ_setenv(env, GL_PROTO_RUNNING_VARIABLE, "1", TRUE);
    env = g_environ_setenv(env, GL_PROTO_RUN_DIR_VARIABLE, run_dir, TRUE);
    env = with_free_at_exit(env);
    /* Every process, not only Ruby: a Ruby started by a shell, make or env
     * prints Ruby 3.4's warning about that variable as it starts, before
     * anything of gemleak's runs in it. Last, after the user's own (a
     * sanitizer runtime of theirs must come first). */
    g_autofree char *quiet = gl_run_preload_library(helper_lib, NULL);
    if (quiet != NULL) {
        const char *theirs = g_environ_getenv(env, "LD_PRELOAD");
        g_autofree char *preload = theirs != NULL && *theirs != '\0'
            ? g_strconcat(theirs, ":", quiet, NULL) : g_strdup(quiet);
        env = g_environ_setenv(env, "LD_PRELOAD", preload, TRUE);
    }
    env = with_helper_tasks(env, options, helper_lib);
    env = with_alloc(env, options, engine, helper_lib);
    /* The helper looks for build tools among a process's ancestors up to
     * gemleak, not past it (gemleak run from make). */
    g_autofree char *pid = g_strdup_printf("%d", (int) getpid());
    env = g_environ_setenv(env, GL_PROTO_PID_VARIABLE, pid, TRUE);
    env = set_or_unset(env, GL_PROTO_ENGINE_COMMAND_VARIABLE, handover);
    /* The preloaded library makes the engine's leak check at exit and says
     * it ran (src/agent/proof.c). */
    env = set_or_unset(env, GL_PROTO_PROOF_VARIABLE,
                       quiet != NULL && gl_engine_supports(engine, GL_ENGINE_PROVES_CHECKS)
                           ? "1" : NULL);
    /* A static program, which LD_PRELOAD does not reach, runs under the
     * guard, where the engine does not follow every exec itself: "" when
     * gemleak has no guard, for the preloaded library to say so. */
    gboolean guarded = quiet != NULL && !gl_engine_supports(engine, GL_ENGINE_FOLLOWS_EXEC);
    g_autofree char *guard = guarded ? gl_run_guard(helper_lib) : NULL;
    env = set_or_unset(env, GL_PROTO_GUARD_VARIABLE,
                       !guarded ? NULL : guard != NULL ? guard : "");
    if (engine->environment != NULL)
        env = engine->environment(options, run_dir, found, env);
    if (quiet != NULL)
        env = with_restore(env, require, quiet);
    return env;
}

/* Runs in the child between fork and exec: only async-signal-safe calls.
 * @parent is gemleak's pid. */
void gl_run_child_setup(gpointer parent)
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

/* Returns: (transfer full): the paths @program may be, in the order
 * execvp(3) tries them, on the PATH @env holds (the parent's, and
 * "/bin:/usr/bin" where neither has one): @program alone when it holds a
 * slash. Free with g_strfreev(). */
static char **candidates(const char *program, char **env)
{
    GStrvBuilder *paths = g_strv_builder_new();
    if (strchr(program, '/') != NULL) {
        g_strv_builder_add(paths, program);
    } else {
        const char *path = g_environ_getenv(env, "PATH");
        if (path == NULL)
            path = g_getenv("PATH");
        if (path == NULL)
            path = "/bin:/usr/bin";
        g_auto(GStrv) dirs = g_strsplit(path, ":", -1);
        for (char **dir = dirs; *dir != NULL; dir++) {
            g_autofree char *full = g_build_filename(**dir != '\0' ? *dir : ".", program, NULL);
            g_strv_builder_add(paths, full);
        }
    }
    char **result = g_strv_builder_end(paths);
    g_strv_builder_unref(paths);
    return result;
}

void gl_run_close_between(int low, int high, int fallback_end)
{
    if (low > high)
        return;
#if defined(__linux__) && defined(SYS_close_range)
    if (syscall(SYS_close_range, (unsigned int) low, (unsigned int) high, 0U) == 0)
        return;
#endif
    for (int fd = low; fd <= high && fd < fallback_end; fd++)
        close(fd);
}

/* Closes every descriptor from 3 on but @kept (one of them), after
 * gl_run_child_setup() bounded them to CHILD_MAX_FILES. */
static void close_range_but(int kept)
{
    gl_run_close_between(3, kept - 1, CHILD_MAX_FILES);
    gl_run_close_between(kept + 1, G_MAXINT, CHILD_MAX_FILES);
}

/* What the vfork()ed child of gl_run_spawn() needs, made before it. */
typedef struct {
    char **argv;
    char **env;
    char **paths;           /* where argv[0] may be (candidates()) */
    char **script;          /* /bin/sh, a path, argv[1]...: a script without "#!" */
    int null;               /* /dev/null, or -1 */
    gboolean quiet;
    gboolean keep_input;
    pid_t parent;
    const sigset_t *mask;   /* gemleak's, for the program */
    int report;             /* the write end of a pipe closed at exec: why none worked */
} Exec;

/* The child of gl_run_spawn(), in gemleak's memory until it execs: system
 * calls only, nothing allocated. Never returns. */
static G_GNUC_NORETURN void exec_child(const Exec *exec)
{
    for (int signo = 1; signo < NSIG; signo++) {
        struct sigaction now;
        if (sigaction(signo, NULL, &now) == 0 && now.sa_handler != SIG_DFL &&
            now.sa_handler != SIG_IGN) {
            struct sigaction reset = { .sa_handler = SIG_DFL };
            sigaction(signo, &reset, NULL);
        }
    }
    gl_run_child_setup(GINT_TO_POINTER(exec->parent));
    if (exec->null >= 0) {
        if (!exec->keep_input)
            dup2(exec->null, STDIN_FILENO);
        if (exec->quiet) {
            dup2(exec->null, STDOUT_FILENO);
            dup2(exec->null, STDERR_FILENO);
        }
    }
    /* every descriptor from 3 on but the report's end, which the exec closes */
    close_range_but(exec->report);
    pthread_sigmask(SIG_SETMASK, exec->mask, NULL);
    int why = ENOENT;
    for (char **path = exec->paths; *path != NULL; path++) {
        execve(*path, exec->argv, exec->env);
        if (errno == ENOEXEC) {
            exec->script[1] = *path;
            execve(exec->script[0], exec->script, exec->env);
        }
        /* execvp(3): a file found but not run says why; a directory of
         * the PATH without it, or none at all, does not */
        if (errno != ENOENT && errno != ENOTDIR && errno != ENOEXEC)
            why = errno;
    }
    ssize_t written;
    do
        written = write(exec->report, &why, sizeof why);
    while (written < 0 && errno == EINTR);
    _exit(127);
}

gboolean gl_run_spawn(char **argv, char **env, gboolean quiet, gboolean keep_input,
                      pid_t parent, pid_t *pid, GError **error)
{
    g_auto(GStrv) paths = candidates(argv[0], env);
    guint argc = g_strv_length(argv);
    /* a file execve(2) finds no format of (a script without "#!") runs
     * under /bin/sh, as execvp(3) runs it (freed here; the child, which
     * execs or _exits, frees nothing) */
    g_autofree char **script = g_new0(char *, argc + 2); /* NOLINT(clang-analyzer-unix.Malloc) */
    script[0] = (char *) "/bin/sh";
    for (guint i = 1; i < argc; i++)
        script[i + 1] = argv[i];
    int null = -1;
    if (quiet || !keep_input) {
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0) {
            int saved = errno;
            g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "cannot open /dev/null: %s",
                        g_strerror(saved));
            return FALSE;
        }
    }
    /* No handler of gemleak's runs in the child, which shares its memory
     * until it execs: every signal is held from vfork to exec, and the
     * child's handlers are the defaults before the mask is given back. */
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    /* why the exec failed, through a pipe the exec closes: the child
     * shares gemleak's memory under vfork, but not where vfork is a fork
     * (under Valgrind) */
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        int saved = errno;
        pthread_sigmask(SIG_SETMASK, &before, NULL);
        if (null >= 0)
            close(null);
        g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "cannot make a pipe: %s",
                    g_strerror(saved));
        return FALSE;
    }
    const Exec exec = { argv, env, paths, script, null, quiet, keep_input, parent, &before, report[1] };
    /* vfork, as posix_spawn(3) does it, for what posix_spawn cannot set
     * (the death signal, the parent's check): the child only makes system
     * calls, then execs or _exits */
    pid_t child = vfork(); /* NOLINT(clang-analyzer-security.insecureAPI.vfork) */
    if (child == 0)
        exec_child(&exec); /* NOLINT(clang-analyzer-unix.Vfork) */
    int spawn_errno = errno;
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    if (null >= 0)
        close(null);
    close(report[1]);
    int failed = 0;
    ssize_t got;
    do
        got = child > 0 ? read(report[0], &failed, sizeof failed) : 0;
    while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got != (ssize_t) sizeof failed)
        failed = 0;  /* the pipe closed at exec: it ran */
    if (child < 0) {
        g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FORK, "Failed to fork (%s)",
                    g_strerror(spawn_errno));
        return FALSE;
    }
    if (failed != 0) {
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
            ;
        g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED,
                    "Failed to execute child process \u201c%s\u201d (%s)", argv[0],
                    g_strerror(failed));
        return FALSE;
    }
    *pid = child;
    return TRUE;
}
