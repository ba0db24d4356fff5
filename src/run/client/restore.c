/* Part of the library gemleak preloads into every process of a run
 * (gemleak_preload.so): what a process execs stays in the run, whatever
 * environment it gives the program.
 *
 * A suite starts child Rubies with environments of their own: `env -i ruby
 * ...`, system({"RUBYOPT" => nil}, ...), Process.spawn(..., unsetenv_others:
 * true), its own LD_PRELOAD. Valgrind follows every exec whatever the
 * environment; an engine preloaded into Ruby (LeakSanitizer) and gemleak's
 * helper (RUBYOPT) would be lost, and the child would load the extension
 * unchecked. So each exec* and posix_spawn* of a process that has this
 * library gives the program it starts the run's variables back, as
 * GEMLEAK_RESTORE lists them (gemleak/base/protocol.h): a variable the
 * program's environment lacks is set, RUBYOPT gets the helper in front of
 * its own switches, LD_PRELOAD this library after its own libraries, and
 * a runtime's options gemleak's after the program's (the runtimes read the
 * last value of an option). Nothing else changes: the program's arguments
 * and its own variables are as given; a setuid program ignores LD_PRELOAD
 * as ever; nothing here needs gemleak to be alive.
 *
 * An exec may run in the child of a vfork (Ruby's spawn): no allocation
 * there. What is read from the environment is copied at load, and each
 * exec builds its new environment on its own stack. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gemleak/base/protocol.h"
#include "gemleak/run/restore_env.h"

extern char **environ;

/* Not in a header: the C library's, replaced. */
int execve(const char *path, char *const argv[], char *const envp[]);
int execv(const char *path, char *const argv[]);
int execvp(const char *file, char *const argv[]);
int execvpe(const char *file, char *const argv[], char *const envp[]);
int execl(const char *path, const char *arg, ...);
int execlp(const char *file, const char *arg, ...);
int execle(const char *path, const char *arg, ...);
int fexecve(int fd, char *const argv[], char *const envp[]);
int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);
int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]);

typedef int (*Execve)(const char *, char *const[], char *const[]);
typedef int (*Fexecve)(int, char *const[], char *const[]);
typedef int (*Spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                     const posix_spawnattr_t *, char *const[], char *const[]);

static Execve real_execve;
static Execve real_execvpe;
static Fexecve real_fexecve;
static Spawn real_posix_spawn;
static Spawn real_posix_spawnp;

static GlRestoreSet set;

/* Reads GEMLEAK_RESTORE as the process started: the suite may clear its
 * own environment later, and an exec in a vfork child allocates nothing.
 * Its value, split in place into the entries, which point into it, and
 * kept whole (GEMLEAK_RESTORE lists itself, so that it reaches what the
 * program starts in turn): kept for the process's life. */
static char *restore_list;
static char *restore_whole;

__attribute__((constructor)) static void restore_start(void)
{
    real_execve = (Execve) (uintptr_t) dlsym(RTLD_NEXT, "execve");
    real_execvpe = (Execve) (uintptr_t) dlsym(RTLD_NEXT, "execvpe");
    real_fexecve = (Fexecve) (uintptr_t) dlsym(RTLD_NEXT, "fexecve");
    real_posix_spawn = (Spawn) (uintptr_t) dlsym(RTLD_NEXT, "posix_spawn");
    real_posix_spawnp = (Spawn) (uintptr_t) dlsym(RTLD_NEXT, "posix_spawnp");
    const char *list = getenv(GL_PROTO_RESTORE_VARIABLE);
    if (list == NULL || *list == '\0')
        return;
    restore_list = strdup(list);
    restore_whole = strdup(list);
    if (restore_list != NULL)
        gl_restore_parse(&set, restore_list, restore_whole);
}

/* Runs the statement @call with `restored`, @envp with the run's variables
 * back, on this stack: @envp itself when it lacks none. */
#define WITH_RESTORED(envp, call)                                                                \
    do {                                                                                         \
        size_t count_ = 0;                                                                       \
        size_t bytes_ = gl_restore_size(&set, (envp), &count_);                                  \
        if (bytes_ == 0) {                                                                       \
            char *const *restored = (envp);                                                      \
            call;                                                                                \
        }                                                                                        \
        char *vars_[count_ + set.n + 1];                                                         \
        char text_[bytes_];                                                                      \
        gl_restore_fill(&set, (envp), vars_, text_);                                             \
        char *const *restored = vars_;                                                           \
        call;                                                                                    \
    } while (0)

int execve(const char *path, char *const argv[], char *const envp[])
{
    if (real_execve == NULL)
        return -1;
    WITH_RESTORED(envp, return real_execve(path, argv, restored));
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (real_execvpe == NULL)
        return -1;
    WITH_RESTORED(envp, return real_execvpe(file, argv, restored));
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    if (real_fexecve == NULL)
        return -1;
    WITH_RESTORED(envp, return real_fexecve(fd, argv, restored));
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (real_posix_spawn == NULL)
        return -1;
    WITH_RESTORED(envp, return real_posix_spawn(pid, path, actions, attr, argv, restored));
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (real_posix_spawnp == NULL)
        return -1;
    WITH_RESTORED(envp, return real_posix_spawnp(pid, file, actions, attr, argv, restored));
}

/* Sets @n to how many arguments the execl* call whose first is @first
 * holds, the NULL that ends them aside: a pass of its own over the
 * arguments, before the one that copies them. */
#define COUNT_ARGS(first, n)                                   \
    do {                                                       \
        va_list count;                                         \
        va_start(count, first);                                \
        (n) = 1;                                               \
        while (va_arg(count, const char *) != NULL)            \
            (n)++;                                             \
        va_end(count);                                         \
    } while (0)

int execl(const char *path, const char *arg, ...)
{
    size_t n;
    COUNT_ARGS(arg, n);
    va_list ap;
    va_start(ap, arg);
    char *argv[n + 1];
    argv[0] = (char *) arg;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    return execve(path, argv, environ);
}

int execlp(const char *file, const char *arg, ...)
{
    size_t n;
    COUNT_ARGS(arg, n);
    va_list ap;
    va_start(ap, arg);
    char *argv[n + 1];
    argv[0] = (char *) arg;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    return execvpe(file, argv, environ);
}

int execle(const char *path, const char *arg, ...)
{
    size_t n;
    COUNT_ARGS(arg, n);
    va_list ap;
    va_start(ap, arg);
    char *argv[n + 1];
    argv[0] = (char *) arg;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
