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

/* One variable of the run, as GEMLEAK_RESTORE gives it. */
typedef struct {
    char how;            /* GL_PROTO_RESTORE_SET, _FRONT or _BACK */
    const char *name;
    size_t name_length;
    const char *value;
} Entry;

#define MAX_ENTRIES 32
static Entry entries[MAX_ENTRIES];
static size_t n_entries;

/* Reads GEMLEAK_RESTORE as the process started: the suite may clear its
 * own environment later, and an exec in a vfork child allocates nothing.
 * GEMLEAK_RESTORE lists itself, so that it reaches what the program
 * starts in turn. */
/* GEMLEAK_RESTORE's value as the process started, split in place into
 * the entries, which point into it: kept for the process's life. */
static char *restore_list;

__attribute__((constructor)) static void restore_start(void)
{
    real_execve = (Execve) (uintptr_t) dlsym(RTLD_NEXT, "execve");
    real_execvpe = (Execve) (uintptr_t) dlsym(RTLD_NEXT, "execvpe");
    real_fexecve = (Fexecve) (uintptr_t) dlsym(RTLD_NEXT, "fexecve");
    real_posix_spawn = (Spawn) (uintptr_t) dlsym(RTLD_NEXT, "posix_spawn");
    real_posix_spawnp = (Spawn) (uintptr_t) dlsym(RTLD_NEXT, "posix_spawnp");
    const char *list = getenv(GL_PROTO_RESTORE_VARIABLE);
    restore_list = list != NULL && *list != '\0' ? strdup(list) : NULL;
    char *copy = restore_list;
    for (char *item = copy; item != NULL && n_entries < MAX_ENTRIES;) {
        char *next = strchr(item, GL_PROTO_RESTORE_SEPARATOR[0]);
        if (next != NULL)
            *next++ = '\0';
        char *equals = *item != '\0' ? strchr(item + 1, '=') : NULL;
        if (equals != NULL && equals > item + 1 &&
            (item[0] == GL_PROTO_RESTORE_SET || item[0] == GL_PROTO_RESTORE_FRONT ||
             item[0] == GL_PROTO_RESTORE_BACK)) {
            Entry *entry = &entries[n_entries++];
            entry->how = item[0];
            entry->name = item + 1;
            entry->name_length = (size_t) (equals - item - 1);
            entry->value = equals + 1;
        }
        item = next;
    }
    if (copy != NULL && n_entries < MAX_ENTRIES) {
        Entry *itself = &entries[n_entries++];
        itself->how = GL_PROTO_RESTORE_SET;
        itself->name = GL_PROTO_RESTORE_VARIABLE;
        itself->name_length = strlen(GL_PROTO_RESTORE_VARIABLE);
        itself->value = strdup(list);
        if (itself->value == NULL)
            n_entries--;
    }
}

/* Returns: the value of @entry's variable in @envp, NULL when unset. */
static const char *lookup(char *const envp[], const Entry *entry)
{
    for (char *const *var = envp; var != NULL && *var != NULL; var++)
        if (strncmp(*var, entry->name, entry->name_length) == 0 &&
            (*var)[entry->name_length] == '=')
            return *var + entry->name_length + 1;
    return NULL;
}

/* Returns: nonzero when @value holds @part whole, between @separators (or
 * its ends). */
static int holds(const char *value, const char *part, const char *separators)
{
    size_t length = strlen(part);
    for (const char *at = strstr(value, part); at != NULL; at = strstr(at + 1, part)) {
        int starts = at == value || strchr(separators, at[-1]) != NULL;
        int ends = at[length] == '\0' || strchr(separators, at[length]) != NULL;
        if (starts && ends)
            return 1;
    }
    return 0;
}

/* Returns: how many bytes "NAME=VALUE" of @entry needs once restored in
 * @envp, its NUL included; 0 when @envp needs nothing of it. */
static size_t needs(char *const envp[], const Entry *entry)
{
    const char *theirs = lookup(envp, entry);
    size_t ours = entry->name_length + 1 + strlen(entry->value) + 1;
    if (theirs == NULL)
        return ours;
    switch (entry->how) {
    case GL_PROTO_RESTORE_FRONT:
        return holds(theirs, entry->value, " \t") ? 0 : ours + strlen(theirs) + 1;
    case GL_PROTO_RESTORE_BACK:
        return holds(theirs, entry->value, ": ") ? 0 : ours + strlen(theirs) + 1;
    default:
        return 0;
    }
}

/* Writes @entry's "NAME=VALUE" at @out (needs() bytes), as restored in
 * @envp. */
static void write_entry(char *out, char *const envp[], const Entry *entry)
{
    const char *theirs = lookup(envp, entry);
    memcpy(out, entry->name, entry->name_length);
    out += entry->name_length;
    *out++ = '=';
    if (entry->how == GL_PROTO_RESTORE_BACK && theirs != NULL) {
        out = stpcpy(out, theirs);
        *out++ = ':';
    }
    out = stpcpy(out, entry->value);
    if (entry->how == GL_PROTO_RESTORE_FRONT && theirs != NULL) {
        *out++ = ' ';
        stpcpy(out, theirs);
    }
}

/* Returns: nonzero when @var ("NAME=VALUE" of @envp) is one a restored
 * entry replaces. */
static int replaced(char *const envp[], const char *var)
{
    for (size_t i = 0; i < n_entries; i++)
        if (strncmp(var, entries[i].name, entries[i].name_length) == 0 &&
            var[entries[i].name_length] == '=' && needs(envp, &entries[i]) > 0)
            return 1;
    return 0;
}

/* Returns: how many bytes @envp's restored variables need (0: none), and
 * in *@count how many variables @envp has. */
static size_t restored_size(char *const envp[], size_t *count)
{
    size_t bytes = 0;
    *count = 0;
    for (char *const *var = envp; var != NULL && *var != NULL; var++)
        (*count)++;
    for (size_t i = 0; i < n_entries; i++)
        bytes += needs(envp, &entries[i]);
    return bytes;
}

/* Fills @vars (count + n_entries + 1 slots) and @text (bytes) with @envp,
 * its run variables restored. */
static void restore(char *const envp[], char **vars, char *text)
{
    size_t n = 0;
    for (char *const *var = envp; var != NULL && *var != NULL; var++)
        if (!replaced(envp, *var))
            vars[n++] = *var;
    for (size_t i = 0; i < n_entries; i++) {
        size_t need = needs(envp, &entries[i]);
        if (need == 0)
            continue;
        write_entry(text, envp, &entries[i]);
        vars[n++] = text;
        text += need;
    }
    vars[n] = NULL;
}

/* Runs the statement @call with `restored`, @envp with the run's variables
 * back, on this stack: @envp itself when it lacks none. */
#define WITH_RESTORED(envp, call)                                                                \
    do {                                                                                         \
        size_t count_ = 0;                                                                       \
        size_t bytes_ = restored_size((envp), &count_);                                          \
        if (bytes_ == 0) {                                                                       \
            char *const *restored = (envp);                                                      \
            call;                                                                                \
        }                                                                                        \
        char *vars_[count_ + n_entries + 1];                                                     \
        char text_[bytes_];                                                                      \
        restore((envp), vars_, text_);                                                           \
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
