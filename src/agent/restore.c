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
 * A static program ignores LD_PRELOAD too, and may clear the environment
 * of what it starts (busybox's env -i; Go's and Rust's launchers are
 * static). Where the run asks for it (GL_PROTO_GUARD_VARIABLE: under the
 * sanitizers' engines), an exec of one is an exec of gemleak's guard
 * (src/agent/guard.c), which runs it in the same process and gives
 * what it execs the run's variables back as this library does; where
 * there is no guard, or it cannot start, the run directory says which
 * program ran unfollowed (outside-PID.txt), and the run is INCOMPLETE.
 *
 * Under a sanitizer's engine, a program exec'd while a test runs is also
 * told which (GL_PROTO_ORIGIN_VARIABLE), and passes it on: what it leaks,
 * the exact pass finds again by running that test again. And a Ruby
 * exec'd (a dynamic program named as Ruby's executable is, running no
 * launcher or build step) starts with the engine's runtime preloaded, as
 * gemleak starts the command: the helper takes the runtime out of what
 * Ruby starts (a compiler under LeakSanitizer leaks or crashes), and a
 * Ruby started without it starts again with it (src/agent/helper/
 * launch.rb), a Ruby's start more (30 ms), what its -r loaded run twice.
 *
 * An exec may run in the child of a vfork (Ruby's spawn): no allocation
 * there. What is read from the environment is copied at load, and each
 * exec builds its new environment on its own stack. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemleak/base/protocol.h"
#include "gemleak/agent/program_kind.h"
#include "gemleak/agent/restore_env.h"

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

/* The test this process was started in (GL_PROTO_ORIGIN_VARIABLE), as it
 * started: the helper takes it out of what Ruby shows the suite. */
static char *own_origin;
/* Under a sanitizer's engine, the LD_PRELOAD a Ruby starts with
 * (gl_restore_engine_preload()), pointing into restore_list; NULL under
 * Valgrind, which follows every exec itself. */
static const char *ruby_preload;

/* The client library's test running now (src/agent/owners.c), when the
 * process has it. */
typedef const char *(*CurrentTest)(void);
static CurrentTest current_test;

__attribute__((constructor)) static void restore_start(void)
{
    real_execve = (Execve) (uintptr_t) dlsym(RTLD_NEXT, "execve");
    real_execvpe = (Execve) (uintptr_t) dlsym(RTLD_NEXT, "execvpe");
    real_fexecve = (Fexecve) (uintptr_t) dlsym(RTLD_NEXT, "fexecve");
    real_posix_spawn = (Spawn) (uintptr_t) dlsym(RTLD_NEXT, "posix_spawn");
    real_posix_spawnp = (Spawn) (uintptr_t) dlsym(RTLD_NEXT, "posix_spawnp");
    current_test = (CurrentTest) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_client_current_test");
    const char *origin = getenv(GL_PROTO_ORIGIN_VARIABLE);
    if (origin != NULL && *origin != '\0')
        own_origin = strdup(origin);
    const char *list = getenv(GL_PROTO_RESTORE_VARIABLE);
    if (list == NULL || *list == '\0')
        return;
    restore_list = strdup(list);
    restore_whole = strdup(list);
    if (restore_list != NULL)
        gl_restore_parse(&set, restore_list, restore_whole);
    ruby_preload = gl_restore_engine_preload(gl_restore_value(&set, GL_PROTO_ENGINE_COMMAND_VARIABLE));
}

/* Returns: nonzero when an exec of @program (as the exec finds it,
 * nullable) with @argv starts a Ruby that runs under the engine from its
 * start: a Ruby (gl_program_is_ruby()) none of whose arguments names a
 * launcher or a build step, which the helper runs outside it. Any doubt
 * leaves the Ruby to the helper, which starts it again when it is to run
 * under the engine. */
static int starts_ruby(const char *program, char *const argv[])
{
    if (ruby_preload == NULL || program == NULL || !gl_program_is_ruby(program))
        return 0;
    for (size_t i = 1; argv != NULL && argv[0] != NULL && argv[i] != NULL; i++)
        if (gl_program_name_in(argv[i], GL_PROTO_LAUNCHERS) ||
            gl_program_name_in(argv[i], GL_PROTO_BUILD_STEPS))
            return 0;
    return 1;
}

/* Fills @with with the run's variables for an exec of @program
 * (nullable: not known) with @argv: the engine's LD_PRELOAD in place of
 * the program's own for a Ruby that starts under it (starts_ruby()), and
 * the test it starts in: the one running (the client library says), else
 * the one this process was started in; none outside any. */
static void with_run(GlRestoreSet *with, const char *program, char *const argv[])
{
    *with = set;
    if (set.n == 0)
        return;  /* not in a run */
    GlRestoreEntry *preload =
        starts_ruby(program, argv) ? gl_restore_entry(with, "LD_PRELOAD") : NULL;
    if (preload != NULL) {
        preload->how = GL_PROTO_RESTORE_REPLACE;
        preload->value = ruby_preload;
    }
    const char *test = current_test != NULL ? current_test() : NULL;
    if (test == NULL)
        test = own_origin;
    if (test == NULL || with->n >= GL_RESTORE_MAX_ENTRIES)
        return;
    GlRestoreEntry *entry = &with->entries[with->n++];
    entry->how = GL_PROTO_RESTORE_REPLACE;
    entry->name = GL_PROTO_ORIGIN_VARIABLE;
    entry->name_length = strlen(GL_PROTO_ORIGIN_VARIABLE);
    entry->value = test;
}

/* Runs the statement @call with `restored`, @envp with the run's variables
 * back for an exec of @program with @argv (with_run()), on this stack:
 * @envp itself when it lacks none. */
#define WITH_RESTORED(program, argv, envp, call)                                                 \
    do {                                                                                         \
        GlRestoreSet with_;                                                                      \
        with_run(&with_, (program), (argv));                                                     \
        size_t count_ = 0;                                                                       \
        size_t bytes_ = gl_restore_size(&with_, (envp), &count_);                                \
        if (bytes_ == 0) {                                                                       \
            char *const *restored = (envp);                                                      \
            call;                                                                                \
        }                                                                                        \
        char *vars_[count_ + with_.n + 1];                                                       \
        char text_[bytes_];                                                                      \
        gl_restore_fill(&with_, (envp), vars_, text_);                                           \
        char *const *restored = vars_;                                                           \
        call;                                                                                    \
    } while (0)

/* The guard (src/agent/guard.c), by its path as the run gives it
 * (GL_PROTO_GUARD_VARIABLE): "" when this gemleak has none; NULL when the
 * run follows every exec itself (Valgrind). */
static const char *guard(void)
{
    return gl_restore_value(&set, GL_PROTO_GUARD_VARIABLE);
}

#define NO_GUARD "this gemleak was built without its guard: the C compiler had no static C library"
#define GUARD_FAILED "its guard could not start"

/* Fills @guarded (@argv's length + 3 slots) with the guard's command line
 * that runs @program with @argv: "GUARD PROGRAM ARGV...". */
static void guarded_argv(char **guarded, const char *program, char *const argv[])
{
    size_t n = 0;
    guarded[0] = (char *) guard();
    guarded[1] = (char *) program;
    for (; argv != NULL && argv[n] != NULL; n++)
        guarded[n + 2] = argv[n];
    guarded[n + 2] = NULL;
}

/* Returns: how many arguments @argv (nullable) holds. */
static size_t count_args(char *const argv[])
{
    size_t n = 0;
    while (argv != NULL && argv[n] != NULL)
        n++;
    return n;
}

/* An exec of the static @program (as the exec finds it), which ignores
 * LD_PRELOAD and could clear the environment of a Ruby it starts, becomes
 * one of the guard, which runs it in this process, following what it
 * starts. Returns only when it does not: not asked, @program not static,
 * the guard missing or failing (said); the caller then execs as asked. */
static void exec_guarded(const char *program, char *const argv[], char *const envp[])
{
    const char *with = guard();
    if (with == NULL || program == NULL || !gl_program_is_static(program))
        return;
    if (*with == '\0') {
        gl_restore_say_unfollowed(&set, (long) getpid(), program, NO_GUARD);
        return;
    }
    char *guarded[count_args(argv) + 3];
    guarded_argv(guarded, program, argv);
    real_execve(with, guarded, envp);
    gl_restore_say_unfollowed(&set, (long) getpid(), program, GUARD_FAILED);
}

/* execve(@path...), guarded when static. */
static int exec_file(const char *path, char *const argv[], char *const envp[])
{
    exec_guarded(path, argv, envp);
    return real_execve(path, argv, envp);
}

/* execvpe(@file...), guarded when what it finds on PATH, @program
 * (nullable: nothing, or not looked for), is static. */
static int exec_search(const char *file, const char *program, char *const argv[],
                       char *const envp[])
{
    if (program != NULL)
        exec_guarded(program, argv, envp);
    return real_execvpe(file, argv, envp);
}

/* Finds @file on PATH (the process's own, as the C library searches it)
 * into @found (PATH_MAX bytes) when the run needs to know what an exec of
 * it starts: a static program to guard, a Ruby to start under the engine.
 * Returns: (transfer none) (nullable): @found, NULL when not looked for
 * or not found. */
static const char *program_on_path(const char *file, char *found)
{
    if (guard() == NULL && ruby_preload == NULL)
        return NULL;
    return gl_program_find(file, getenv("PATH"), found, PATH_MAX) == 0 ? found : NULL;
}

/* fexecve(@fd...), guarded when @fd is a static program the guard can
 * exec by its path (the file's, when it still names it); said when it
 * names none (a memfd's). */
static int exec_fd(int fd, char *const argv[], char *const envp[])
{
    if (guard() != NULL) {
        char link[64] = "/proc/self/fd/";
        char *end = link + strlen(link);
        char digits[16];
        size_t n = 0;
        for (unsigned value = (unsigned) fd; n == 0 || value > 0; value /= 10)
            digits[n++] = (char) ('0' + value % 10);
        while (n > 0)
            *end++ = digits[--n];
        *end = '\0';
        char path[PATH_MAX];
        ssize_t length = readlink(link, path, sizeof path - 1);
        path[length > 0 ? length : 0] = '\0';
        struct stat named, opened;
        if (path[0] == '/' && stat(path, &named) == 0 && fstat(fd, &opened) == 0 &&
            named.st_dev == opened.st_dev && named.st_ino == opened.st_ino)
            exec_guarded(path, argv, envp);
        else if (gl_program_fd_is_static(fd))
            gl_restore_say_unfollowed(&set, (long) getpid(), link,
                                      "exec'd by a descriptor that names no file");
    }
    return real_fexecve(fd, argv, envp);
}

/* @spawn(@pid, @path...) (posix_spawn or posix_spawnp), the guard's in
 * place of the static @program's (what @path names, nullable when
 * nothing). */
static int spawn_program(Spawn spawn, pid_t *pid, const char *path, const char *program,
                         const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
                         char *const argv[], char *const envp[])
{
    const char *with = guard();
    if (with == NULL || program == NULL || !gl_program_is_static(program))
        return spawn(pid, path, actions, attr, argv, envp);
    pid_t child = 0;
    if (*with != '\0' && real_posix_spawn != NULL) {
        char *guarded[count_args(argv) + 3];
        guarded_argv(guarded, program, argv);
        if (real_posix_spawn(&child, with, actions, attr, guarded, envp) == 0) {
            if (pid != NULL)
                *pid = child;
            return 0;
        }
    }
    int error = spawn(&child, path, actions, attr, argv, envp);
    if (error == 0) {
        gl_restore_say_unfollowed(&set, (long) child, program,
                                  *with == '\0' ? NO_GUARD : GUARD_FAILED);
        if (pid != NULL)
            *pid = child;
    }
    return error;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    if (real_execve == NULL)
        return -1;
    WITH_RESTORED(path, argv, envp, return exec_file(path, argv, restored));
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (real_execvpe == NULL || real_execve == NULL)
        return -1;
    char found[PATH_MAX];
    const char *program = program_on_path(file, found);
    WITH_RESTORED(program, argv, envp, return exec_search(file, program, argv, restored));
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    if (real_fexecve == NULL || real_execve == NULL)
        return -1;
    WITH_RESTORED(NULL, argv, envp, return exec_fd(fd, argv, restored));
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (real_posix_spawn == NULL)
        return -1;
    WITH_RESTORED(path, argv, envp,
                  return spawn_program(real_posix_spawn, pid, path, path, actions, attr, argv,
                                       restored));
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (real_posix_spawnp == NULL)
        return -1;
    char found[PATH_MAX];
    const char *program = program_on_path(file, found);
    WITH_RESTORED(program, argv, envp,
                  return spawn_program(real_posix_spawnp, pid, file, program, actions, attr, argv,
                                       restored));
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
    for (size_t i = 1; i < n; i++)
        argv[i] = va_arg(ap, char *);
    (void) va_arg(ap, char *);  /* the NULL that ends them */
    argv[n] = NULL;
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
    for (size_t i = 1; i < n; i++)
        argv[i] = va_arg(ap, char *);
    (void) va_arg(ap, char *);  /* the NULL that ends them */
    argv[n] = NULL;
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
    for (size_t i = 1; i < n; i++)
        argv[i] = va_arg(ap, char *);
    (void) va_arg(ap, char *);  /* the NULL that ends them */
    argv[n] = NULL;
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
