/* gemleak's guard: `gemleak_guard PROGRAM [ARGV...]` runs the static
 * PROGRAM with ARGV, in this process, and follows what it starts, so that
 * no Ruby below it escapes the engine.
 *
 * Under the sanitizers' engines the run's processes stay in the run
 * through LD_PRELOAD: the library gemleak preloads gives what each exec*
 * starts the run's variables back (restore.c), the runtime and gemleak's
 * helper among them. A static program never loads it; one that clears the
 * environment (busybox's env -i; Go's and Rust's launchers are static)
 * would start a Ruby with nothing of gemleak's, whose leaks nobody sees,
 * and the run would pass. So that library execs such a program through
 * this one, a static program itself, built with `cc -static`. It:
 *
 *  - forks a tracer, which leaves this process's process tree (a double
 *    fork: the program never sees a child it did not make), attaches to
 *    this process with PTRACE_SEIZE, and is told whether it could;
 *  - execs PROGRAM in place, with the same pid, arguments, environment,
 *    descriptors and signals: the program's parent waits for the program,
 *    and its status is the program's;
 *  - and the tracer, at each execve or execveat a traced process makes,
 *    gives the program it starts the run's variables back, as restore.c
 *    does (gemleak/agent/restore_env.h: the same code), writing the new
 *    environment into memory it maps in the process for it; it follows
 *    forks, vforks and threads, lets go of a process once it has exec'd a
 *    dynamic program (that loads the library and carries on itself; a
 *    sanitizer's leak check needs the process untraced), and ends when no
 *    process is left to follow.
 *
 * When the process cannot be traced (ptrace refused: a seccomp profile,
 * Yama, another tracer such as strace; an architecture the tracer does not
 * know), PROGRAM runs all the same, and the run directory says that it ran
 * unfollowed (outside-PID.txt): the run is INCOMPLETE and names it. The
 * suite's output is never touched: the tracer's standard streams are
 * /dev/null. */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <sys/user.h>
#endif

#include "gemleak/base/protocol.h"
#include "gemleak/agent/program_kind.h"
#include "gemleak/agent/restore_env.h"

#ifndef PTRACE_GET_SYSCALL_INFO
#define PTRACE_GET_SYSCALL_INFO 0x420e
#endif
#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

/* The kernel's struct ptrace_syscall_info (Linux 5.3), as far as an
 * entry's stop fills it: not every C library declares it. */
typedef struct {
    uint8_t op;
    uint32_t arch __attribute__((aligned(4)));
    uint64_t instruction_pointer;
    uint64_t stack_pointer;
    struct {
        uint64_t nr;
        uint64_t args[6];
    } entry;
} SyscallInfo;

#define SYSCALL_INFO_ENTRY 1

#if defined(__x86_64__)
/* AUDIT_ARCH_X86_64 (<linux/audit.h>, whose EM_ names clash with <elf.h>'s) */
#define NATIVE_ARCH 0xc000003eU
#define NR_EXECVE 59
#define NR_EXECVEAT 322
#define NR_MMAP 9
/* the length of `syscall`, which the process runs again */
#define SYSCALL_LENGTH 2
typedef struct user_regs_struct Regs;
#endif

/* What a traced process's strings and environment may hold, at most:
 * beyond, the exec fails anyway (E2BIG: MAX_ARG_STRLEN, and the stack
 * limit's quarter for all of them). */
#define MAX_STRING ((size_t) 32 * 4096)
#define MAX_VARIABLES (1 << 20)

#define OPTIONS                                                                                  \
    (PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |     \
     PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXIT)

extern char **environ;

/* The run's variables, from GEMLEAK_RESTORE as this process got it. */
static GlRestoreSet set;

#if defined(__x86_64__)
/* The tracer knows x86-64's registers only: elsewhere the guard runs the
 * program unfollowed, and says so. */

/* Returns: 0 once @size bytes are read from @fd, -1 when they cannot be. */
static int read_all(int fd, void *data, size_t size)
{
    char *at = data;
    while (size > 0) {
        ssize_t n = read(fd, at, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        at += n;
        size -= (size_t) n;
    }
    return 0;
}

/* ---- the traced processes' memory ---- */

/* Reads @size bytes at @address of process @pid into @out.
 * Returns: how many it read (fewer at an unmapped page), -1 on error. */
static ssize_t peek(pid_t pid, uint64_t address, void *out, size_t size)
{
    struct iovec local = { out, size };
    struct iovec remote = { (void *) (uintptr_t) address, size };
    return process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

/* Returns: (transfer full) (nullable): the string at @address of @pid,
 * NULL when it cannot be read whole (free with free()). */
static char *peek_string(pid_t pid, uint64_t address)
{
    size_t size = 0, capacity = 256;
    char *text = malloc(capacity);
    while (text != NULL && size < MAX_STRING) {
        /* never across a page: the next one may not be mapped */
        size_t chunk = 4096 - (size_t) ((address + size) % 4096);
        if (size + chunk + 1 > capacity) {
            capacity = 2 * (size + chunk + 1);
            char *grown = realloc(text, capacity);
            if (grown == NULL)
                break;
            text = grown;
        }
        ssize_t n = peek(pid, address + size, text + size, chunk);
        if (n <= 0)
            break;
        char *end = memchr(text + size, '\0', (size_t) n);
        if (end != NULL)
            return text;
        size += (size_t) n;
    }
    free(text);
    return NULL;
}

/* A traced process's environment, as its execve gives it. */
typedef struct {
    char **vars;         /* copies, NULL-terminated */
    uint64_t *addresses; /* where each is in the process */
    size_t count;
} Environment;

static void environment_clear(Environment *env)
{
    for (size_t i = 0; env->vars != NULL && i < env->count; i++)
        free(env->vars[i]);
    free(env->vars);
    free(env->addresses);
    *env = (Environment) { 0 };
}

/* Reads the NULL-terminated array of strings at @address of @pid (0: an
 * empty one, as the kernel takes it) into @env.
 * Returns: 0, or -1 when it cannot be read. */
static int peek_environment(pid_t pid, uint64_t address, Environment *env)
{
    size_t capacity = 64;
    *env = (Environment) { calloc(capacity + 1, sizeof(char *)),
                           calloc(capacity + 1, sizeof(uint64_t)), 0 };
    if (env->vars == NULL || env->addresses == NULL)
        goto fail;
    for (; address != 0; env->count++) {
        uint64_t var = 0;
        if (env->count >= MAX_VARIABLES ||
            peek(pid, address + env->count * sizeof var, &var, sizeof var) != (ssize_t) sizeof var)
            goto fail;
        if (var == 0)
            break;
        if (env->count == capacity) {
            capacity *= 2;
            char **vars = realloc(env->vars, (capacity + 1) * sizeof(char *));
            if (vars != NULL)
                env->vars = vars;
            uint64_t *addresses = realloc(env->addresses, (capacity + 1) * sizeof(uint64_t));
            if (addresses != NULL)
                env->addresses = addresses;
            if (vars == NULL || addresses == NULL)
                goto fail;
        }
        env->vars[env->count] = peek_string(pid, var);
        env->addresses[env->count] = var;
        if (env->vars[env->count] == NULL)
            goto fail;
    }
    env->vars[env->count] = NULL;
    return 0;
fail:
    environment_clear(env);
    return -1;
}

/* ---- following the processes ---- */

/* A set of processes (threads, each by its id). */
typedef struct {
    pid_t *pids;
    size_t count;
} PidSet;

/* Returns: 1 when @set held @pid (which it no longer does), 0 otherwise. */
static int take(PidSet *set_of, pid_t pid)
{
    for (size_t i = 0; i < set_of->count; i++)
        if (set_of->pids[i] == pid) {
            set_of->pids[i] = set_of->pids[--set_of->count];
            return 1;
        }
    return 0;
}

static void add(PidSet *set_of, pid_t pid)
{
    for (size_t i = 0; i < set_of->count; i++)
        if (set_of->pids[i] == pid)
            return;
    pid_t *grown = realloc(set_of->pids, (set_of->count + 1) * sizeof(pid_t));
    if (grown == NULL)
        return;
    set_of->pids = grown;
    set_of->pids[set_of->count++] = pid;
}

/* The processes traced, and those whose next execve entry is their own
 * again (the exec the tracer made them run again with the run's
 * variables), not to be looked at twice. */
static PidSet traced;
static PidSet rerun;
/* Those let on from their exit's stop, to their end. */
static PidSet exiting;

/* Detaches @pid: it runs on untraced. The last one the tracer lets go by
 * ending (the kernel detaches it then): its parent, gemleak or the suite,
 * cannot learn that it ended before it learns that the tracer did. */
static void let_go(pid_t pid)
{
    if (traced.count == 1 && traced.pids[0] == pid)
        _exit(0);
    ptrace(PTRACE_DETACH, pid, 0, 0);
    take(&traced, pid);
    take(&rerun, pid);
    take(&exiting, pid);
}

/* The kernel's flag of a thread on its way out (PF_EXITING). */
#define EXITING_FLAG 0x4

/* Returns: 1 when @pid has an exit, or its exit's stop, waiting for the
 * tracer (looked at, left waiting), or is gone. */
static int exit_waiting(pid_t pid)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t) pid, &info, WSTOPPED | WEXITED | WNOHANG | WNOWAIT | __WALL) != 0)
        return errno == ECHILD;
    if (info.si_pid == 0)
        return 0;
    return info.si_code != CLD_TRAPPED ||
           info.si_status == (SIGTRAP | (PTRACE_EVENT_EXIT << 8));
}

/* Returns: 1 when the traced thread @pid is gone or going: past its
 * exit's stop (@exiting), at it, a zombie, on its way out, or SIGKILL
 * pending (how exit_group ends the other threads, which may not stop). */
static int dying(pid_t pid)
{
    for (size_t i = 0; i < exiting.count; i++)
        if (exiting.pids[i] == pid)
            return 1;
    if (exit_waiting(pid))
        return 1;
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 1;
    text[n] = '\0';
    /* "PID (COMM) STATE ...": COMM may hold anything, ')' too */
    char *field = strrchr(text, ')');
    char state = 0;
    unsigned long long flags = 0, pending = 0;
    for (int i = 3; field != NULL && i <= 31; i++) {
        field = strchr(field + 1, ' ');
        if (field == NULL)
            break;
        if (i == 3)
            state = field[1];
        else if (i == 9)
            flags = strtoull(field + 1, NULL, 10);
        else if (i == 31)
            pending = strtoull(field + 1, NULL, 10);
    }
    return state == 'Z' || state == 'X' || (flags & EXITING_FLAG) != 0 ||
           (pending & (1ULL << (SIGKILL - 1))) != 0;
}

/* Returns: 1 when every traced thread but @pid is gone or going. */
static int last_standing(pid_t pid)
{
    for (size_t i = 0; i < traced.count; i++)
        if (traced.pids[i] != pid && !dying(traced.pids[i]))
            return 0;
    return 1;
}

/* Returns: (transfer full): the path of what @pid's exec entry @info
 * names, for what gemleak says (free with free()). */
static char *exec_target(pid_t pid, const SyscallInfo *info)
{
    uint64_t path = info->entry.nr == NR_EXECVEAT ? info->entry.args[1] : info->entry.args[0];
    char *name = path != 0 ? peek_string(pid, path) : NULL;
    if (name != NULL && *name != '\0')
        return name;
    free(name);
    char fd[64];
    snprintf(fd, sizeof fd, "(descriptor %d)", (int) info->entry.args[0]);
    return strdup(fd);
}

/* Says that process @pid exec'd @target without the run's variables,
 * which the tracer could not give back because @why. */
static void say_lost(pid_t pid, const char *target, const char *why)
{
    static const char lost[] = " without the run's variables, and gemleak could not give them "
                               "back (";
    const char *const parts[] = { "a static program gemleak followed exec'd ",
                                  target != NULL ? target : "a program", lost, why, ")", NULL };
    gl_restore_say_outside(&set, (long) pid, parts);
}

/* Returns: 1 when the program @pid's exec entry @info starts is setuid or
 * setgid: it runs without its privileges while traced, so it is let go,
 * as it ignores LD_PRELOAD anyway. */
static int privileged(pid_t pid, const SyscallInfo *info, const char *target)
{
    char path[PATH_MAX];
    int at = info->entry.nr == NR_EXECVEAT;
    int dirfd = (int) info->entry.args[0];
    if (target[0] == '/')
        snprintf(path, sizeof path, "%s", target);
    else if (target[0] == '(' || target[0] == '\0')
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int) pid, dirfd);
    else if (at && dirfd != AT_FDCWD)
        snprintf(path, sizeof path, "/proc/%d/fd/%d/%s", (int) pid, dirfd, target);
    else
        snprintf(path, sizeof path, "/proc/%d/cwd/%s", (int) pid, target);
    struct stat st;
    return stat(path, &st) == 0 &&
           ((st.st_mode & S_ISUID) || ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP)));
}

/* Returns: 0 once @pid's next stop is its system call's exit; -1 when it
 * went instead (SIGKILL: nothing else comes between a system call's entry
 * and its exit), and is forgotten. */
static int to_syscall_exit(pid_t pid)
{
    int status = 0;
    if (ptrace(PTRACE_SYSCALL, pid, 0, 0) == 0)
        while (waitpid(pid, &status, __WALL) < 0)
            if (errno != EINTR)
                break;
    if (WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80))
        return 0;
    if (WIFSTOPPED(status))  /* not seen to happen: on it goes, as it is */
        ptrace(PTRACE_SYSCALL, pid, 0, (status >> 16) == 0 ? WSTOPSIG(status) : 0);
    take(&traced, pid);
    take(&rerun, pid);
    take(&exiting, pid);
    return -1;
}

/* At @pid's execve (or execveat) entry (@saved, its registers), runs
 * mmap in its place for @size bytes, then sets @pid up to run the exec
 * again (@saved, and the instruction again), for the caller to change.
 * Returns: the mapping's address, 0 when there is none (the exec runs
 * again as it was; 1 in *@gone when the process went instead). */
static uint64_t map_in(pid_t pid, const Regs *saved, size_t size, int *gone)
{
    Regs call = *saved;
    call.orig_rax = NR_MMAP;
    call.rdi = 0;
    call.rsi = size;
    call.rdx = PROT_READ | PROT_WRITE;
    call.r10 = MAP_PRIVATE | MAP_ANONYMOUS;
    call.r8 = (unsigned long long) -1;
    call.r9 = 0;
    *gone = 0;
    if (ptrace(PTRACE_SETREGS, pid, 0, &call) != 0)
        return 0;
    Regs after;
    if (to_syscall_exit(pid) != 0) {
        *gone = 1;
        return 0;
    }
    if (ptrace(PTRACE_GETREGS, pid, 0, &after) != 0) {
        *gone = 1;
        return 0;
    }
    uint64_t address = after.rax;
    /* the exec again, as it was, until the caller changes it; its entry
     * then is not looked at again */
    Regs again = *saved;
    again.rax = saved->orig_rax;
    again.rip -= SYSCALL_LENGTH;
    if (ptrace(PTRACE_SETREGS, pid, 0, &again) != 0) {
        *gone = 1;
        return 0;
    }
    add(&rerun, pid);
    return address >= (uint64_t) -4095 ? 0 : address;
}

/* Gives @pid's exec (at its entry, @info) the run's variables back, when
 * its environment lacks any: writes the new environment into memory
 * mapped for it in the process and runs the exec again with it. What it
 * cannot do it says (outside-PID.txt).
 * Returns: 1 when it let @pid go (a setuid program), 0 otherwise. */
static int restore_exec(pid_t pid, const SyscallInfo *info)
{
    int arg = info->entry.nr == NR_EXECVEAT ? 3 : 2;
    char *target = exec_target(pid, info);
    Environment env = { 0 };
    char **vars = NULL;
    char *block = NULL;
    int gone = 0;
    if (target != NULL && privileged(pid, info, target)) {
        let_go(pid);
        gone = 1;
        goto done;
    }
    if (peek_environment(pid, info->entry.args[arg], &env) != 0) {
        say_lost(pid, target, "its environment could not be read");
        goto done;
    }
    size_t count = 0;
    size_t bytes = gl_restore_size(&set, env.vars, &count);
    if (bytes == 0)
        goto done;
    vars = calloc(count + set.n + 1, sizeof(char *));
    size_t text_size = (bytes + 7) & ~(size_t) 7;
    size_t size = text_size + (count + set.n + 1) * sizeof(uint64_t);
    block = calloc(1, size);
    if (vars == NULL || block == NULL) {
        say_lost(pid, target, "out of memory");
        goto done;
    }
    gl_restore_fill(&set, env.vars, vars, block);
    Regs regs;
    if (ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0) {
        say_lost(pid, target, "its registers could not be read");
        goto done;
    }
    uint64_t address = map_in(pid, &regs, size, &gone);
    if (gone)
        goto done;
    if (address == 0) {
        say_lost(pid, target, "no memory could be mapped in it");
        goto done;
    }
    /* the array after the strings: ours where they are in the block, the
     * process's own where they are its (in their order) */
    uint64_t *array = (uint64_t *) (void *) (block + text_size);
    size_t next = 0;
    for (size_t i = 0; vars[i] != NULL; i++) {
        if (vars[i] >= block && vars[i] < block + bytes) {
            array[i] = address + (uint64_t) (vars[i] - block);
            continue;
        }
        while (next < env.count && env.vars[next] != vars[i])
            next++;
        array[i] = next < env.count ? env.addresses[next] : 0;
    }
    struct iovec local = { block, size };
    struct iovec remote = { (void *) (uintptr_t) address, size };
    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t) size) {
        say_lost(pid, target, "its memory could not be written");
        goto done;
    }
    uint64_t envp = address + text_size;
    if (arg == 2)
        regs.rdx = envp;
    else
        regs.r10 = envp;
    regs.rax = regs.orig_rax;
    regs.rip -= SYSCALL_LENGTH;
    if (ptrace(PTRACE_SETREGS, pid, 0, &regs) != 0)
        say_lost(pid, target, "its registers could not be written");
done:
    free(block);
    free(vars);
    environment_clear(&env);
    free(target);
    return gone;
}

/* At a system call's stop of @pid: an exec's entry gets the run's
 * variables back.
 * Returns: 1 when @pid is no longer to be resumed (let go, or gone). */
static int at_syscall(pid_t pid)
{
    SyscallInfo info;
    memset(&info, 0, sizeof info);
    long got = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *) sizeof info, &info);
    if (got < 0) {
        /* Linux before 5.3: the tracer cannot tell an exec's entry */
        static int said;
        char exe[64], program[PATH_MAX];
        snprintf(exe, sizeof exe, "/proc/%d/exe", (int) pid);
        ssize_t n = readlink(exe, program, sizeof program - 1);
        program[n > 0 ? n : 0] = '\0';
        if (!said)
            gl_restore_say_unfollowed(&set, (long) pid, program,
                                      "this kernel cannot say which system call a process makes: "
                                      "Linux 5.3 can");
        said = 1;
        let_go(pid);
        return 1;
    }
    if (info.op != SYSCALL_INFO_ENTRY)
        return 0;
    if (info.arch == NATIVE_ARCH && (info.entry.nr == NR_EXECVE || info.entry.nr == NR_EXECVEAT))
        return take(&rerun, pid) ? 0 : restore_exec(pid, &info);
    /* i386's execve and execveat (11, 358), x32's (520, 545): not rewritten */
    uint64_t x32 = info.entry.nr & ~(uint64_t) 0x40000000;
    if ((info.arch != NATIVE_ARCH && (info.entry.nr == 11 || info.entry.nr == 358)) ||
        (info.arch == NATIVE_ARCH && x32 != info.entry.nr && (x32 == 520 || x32 == 545)))
        say_lost(pid, "a program", "gemleak's guard does not follow a 32-bit program's exec");
    return 0;
}

/* Returns: 1 when the program @pid has just exec'd is static (the tracer
 * follows it on), 0 when the dynamic loader runs it (it loads gemleak's
 * library, and carries the run's variables on itself). */
static int execd_static(pid_t pid)
{
    char exe[64];
    snprintf(exe, sizeof exe, "/proc/%d/exe", (int) pid);
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int is = gl_program_fd_is_static(fd);
    close(fd);
    return is;
}

/* Follows every process traced from here on until none is left. The
 * tracer ends at the last one's exit (PTRACE_EVENT_EXIT), before its
 * parent can know of it: gemleak, which reaps what the suite orphans
 * (the tracer among them), then finds no process of the run left
 * running. */
static void follow_all(void)
{
    while (traced.count > 0) {
        int status = 0;
        pid_t pid = waitpid(-1, &status, __WALL);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            return;  /* ECHILD: none left */
        if (!WIFSTOPPED(status)) {
            take(&traced, pid);
            take(&rerun, pid);  /* gone: its pid may come again */
            take(&exiting, pid);
            continue;
        }
        add(&traced, pid);  /* a new process's first stop may come first */
        int signal = WSTOPSIG(status);
        int event = (status >> 16) & 0xff;
        int forward = 0;
        unsigned long message = 0;
        if (signal == (SIGTRAP | 0x80)) {
            if (at_syscall(pid))
                continue;
        } else if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
                   event == PTRACE_EVENT_CLONE) {
            if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &message) == 0)
                add(&traced, (pid_t) message);
        } else if (event == PTRACE_EVENT_EXEC) {
            /* the thread that exec'd took the process's id */
            if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &message) == 0 && (pid_t) message != pid)
                take(&traced, (pid_t) message);
            take(&rerun, pid);
            if (!execd_static(pid)) {
                let_go(pid);
                continue;
            }
        } else if (event == PTRACE_EVENT_EXIT) {
            if (last_standing(pid))
                _exit(0);
            add(&exiting, pid);
        } else if (event == PTRACE_EVENT_STOP) {
            /* a group stop (SIGSTOP, the terminal's) stays one until
             * SIGCONT; otherwise a new process's first stop */
            if (signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU) {
                ptrace(PTRACE_LISTEN, pid, 0, 0);
                continue;
            }
        } else if (event == 0) {
            forward = signal;  /* a signal for the process: it gets it */
        }
        ptrace(PTRACE_SYSCALL, pid, 0, forward);
    }
}

/* The tracer: out of the suite's way (its descriptors closed, its streams
 * /dev/null, the terminal's signals ignored), attaches to @target, says
 * whether it could on @up (its pid first, then 0 or the errno), when told
 * to on @down, and follows it. */
static void tracer(pid_t target, int up, int down)
{
    up = fcntl(up, F_DUPFD_CLOEXEC, 3);
    down = fcntl(down, F_DUPFD_CLOEXEC, 3);
    DIR *fds = opendir("/proc/self/fd");
    struct dirent *entry;
    while (fds != NULL && (entry = readdir(fds)) != NULL) {
        int fd = atoi(entry->d_name);
        if (entry->d_name[0] != '.' && fd != up && fd != down && fd != dirfd(fds))
            close(fd);
    }
    if (fds != NULL)
        closedir(fds);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2 && null >= 0; fd++)
        if (null != fd)
            dup2(null, fd);
    if (null > 2)
        close(null);
    static const int quiet[] = { SIGINT, SIGQUIT, SIGHUP, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
        signal(quiet[i], SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    pid_t self = getpid();
    char go = 0;
    if (write(up, &self, sizeof self) != (ssize_t) sizeof self || read_all(down, &go, 1) != 0)
        _exit(0);
    int error = ptrace(PTRACE_SEIZE, target, 0, OPTIONS) == 0 ? 0 : errno;
    if (write(up, &error, sizeof error) != (ssize_t) sizeof error || error != 0)
        _exit(0);
    close(up);
    close(down);
    add(&traced, target);
    follow_all();
    _exit(0);
}

#endif

/* Starts the tracer of this process.
 * Returns: 0 once it traces this process, else -1 with @why (@size
 * bytes) saying why not. */
static int follow(char *why, size_t size)
{
#if !defined(__x86_64__)
    snprintf(why, size, "gemleak's guard follows no program on this architecture");
    return -1;
#else
    int up[2], down[2];
    if (pipe2(up, O_CLOEXEC) != 0) {
        snprintf(why, size, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(down, O_CLOEXEC) != 0) {
        snprintf(why, size, "pipe: %s", strerror(errno));
        close(up[0]);
        close(up[1]);
        return -1;
    }
    pid_t target = getpid();
    pid_t middle = fork();
    if (middle == 0) {
        /* the tracer's parent ends at once: the tracer is no child of the
         * program's */
        if (fork() == 0)
            tracer(target, up[1], down[0]);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    int error = 0;
    pid_t traced_by = 0;
    if (middle < 0) {
        error = errno;
    } else {
        while (waitpid(middle, NULL, 0) < 0 && errno == EINTR)
            ;
        char go = 1;
        if (read_all(up[0], &traced_by, sizeof traced_by) != 0) {
            error = ECHILD;
        } else {
            /* Yama's ptrace_scope 1 lets a process trace only its
             * descendants, and those that name it (without Yama: EINVAL) */
            prctl(PR_SET_PTRACER, (unsigned long) traced_by, 0, 0, 0);
            if (write(down[1], &go, 1) != 1 || read_all(up[0], &error, sizeof error) != 0)
                error = ECHILD;
            prctl(PR_SET_PTRACER, 0, 0, 0, 0);
        }
    }
    close(up[0]);
    close(down[1]);
    if (error == 0)
        return 0;
    if (error == ECHILD)
        snprintf(why, size, "its tracer did not start");
    else
        snprintf(why, size, "ptrace: %s", strerror(error));
    return -1;
#endif
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 127;
    const char *program = argv[1];
    const char *list = getenv(GL_PROTO_RESTORE_VARIABLE);
    char *split = list != NULL ? strdup(list) : NULL;
    if (split != NULL)
        gl_restore_parse(&set, split, list);
    char why[256];
    if (follow(why, sizeof why) != 0)
        gl_restore_say_unfollowed(&set, (long) getpid(), program, why);
    execve(program, argv + 2, environ);
    /* as a shell says it, without the words: the suite's stderr is its own */
    return errno == ENOENT ? 127 : 126;
}
