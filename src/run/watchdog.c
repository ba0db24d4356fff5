#define _GNU_SOURCE  /* syscall */
/* The watchdog of a run, for a gemleak killed outright (see below). */
#include "gemleak/run/watchdog.h"
#include "runner_int.h"
#include "gemleak/base/protocol.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

/* gemleak killed outright (SIGKILL, a CI job's hard timeout) handles no
 * signal: PR_SET_PDEATHSIG takes its children, but not the Valgrind the
 * helper starts below a launcher, nor what the commands fork. A watchdog,
 * forked before anything starts, waits on a pipe whose write end gemleak
 * alone holds: a byte says the run is over; the end of the pipe without
 * one, that gemleak died. Then it kills every process whose environment
 * holds this run's GEMLEAK_RUN_DIR, or whose arguments hold its
 * --xml-file (a Valgrind whose environment was cleared), until none is left, holding the run's
 * locks all the while: gemleak clean does not take the directory a dying
 * Valgrind writes in. It runs between fork and _exit, in a process that
 * may have had threads: system calls only, no malloc. */
#define WATCHDOG_ROUNDS 100
#define WATCHDOG_ROUND_NS 50000000L
/* The descriptors the watchdog closes where the kernel has no close_range
 * (4,000 calls a run were most of the watchdog's start): gemleak has a few
 * dozen open. */
#define WATCHDOG_MAX_FD 4096

/* The write end of the running watchdog's pipe, or -1: one run at a time. */
static int watchdog_pipe = -1;

#ifdef __linux__
/* The marks of a process of this run: an entry of its environment, or
 * the start of one of its arguments (Valgrind's --xml-file, which a child
 * whose environment was cleared still has). */
typedef struct {
    const char *file;     /* "environ" or "cmdline", under /proc/PID */
    const char *needle;
    gsize length;
    gboolean prefix;      /* the entry begins with @needle, rather than equals it */
} Mark;

/* Returns: TRUE if the NUL-separated /proc/@pid/@mark->file holds an entry
 * that @mark matches. */
static gboolean process_holds(const char *pid, const Mark *mark)
{
    char path[64];
    gsize at = 0;
    for (const char *const *part = (const char *const[]) { "/proc/", pid, "/", mark->file, NULL };
         *part != NULL; part++)
        for (const char *c = *part; *c != '\0' && at + 1 < sizeof path; c++)
            path[at++] = *c;
    path[at] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return FALSE;
    char buffer[8192];
    gsize matched = 0;
    gboolean alive = TRUE, found = FALSE;
    ssize_t got;
    while (!found && (got = read(fd, buffer, sizeof buffer)) > 0) {
        for (ssize_t i = 0; i < got && !found; i++) {
            if (alive && matched == mark->length && mark->prefix) {
                found = TRUE;
            } else if (buffer[i] == '\0') {
                found = alive && matched == mark->length;
                matched = 0;
                alive = TRUE;
            } else if (alive && matched < mark->length && buffer[i] == mark->needle[matched]) {
                matched++;
            } else {
                alive = FALSE;
            }
        }
    }
    close(fd);
    return found;
}

/* Kills every process but this one that holds one of @marks (@n_marks).
 * Returns: how many it found. */
static guint kill_carriers(const Mark *marks, guint n_marks)
{
    int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0)
        return 0;
    guint found = 0;
    pid_t self = getpid();
    /* struct linux_dirent64: inode, offset, record length, type, name */
    char buffer[16384];
    long got;
    while ((got = syscall(SYS_getdents64, proc, buffer, sizeof buffer)) > 0) {
        for (long at = 0; at < got;) {
            const char *entry = buffer + at;
            unsigned short size;
            memcpy(&size, entry + 16, sizeof size);
            const char *name = entry + 19;
            at += size;
            long pid = 0;
            const char *c = name;
            for (; *c >= '0' && *c <= '9' && pid < G_MAXINT / 10; c++)
                pid = pid * 10 + (*c - '0');
            if (*c != '\0' || c == name || pid <= 1 || pid == self)
                continue;
            for (guint m = 0; m < n_marks; m++) {
                if (process_holds(name, &marks[m])) {
                    kill((pid_t) pid, SIGKILL);
                    found++;
                    break;
                }
            }
        }
    }
    close(proc);
    return found;
}
#endif

/* The watchdog's process: never returns. */
static void G_GNUC_NORETURN watchdog(int read_end, const Mark *marks, guint n_marks,
                                     const int *locks, guint n_locks)
{
    /* Out of gemleak's process group and session: a Ctrl-C, a group's
     * SIGKILL, the terminal's SIGHUP are for the run, not for it. */
    setsid();
    /* Nothing of gemleak's kept open but the pipe and the locks: whoever
     * reads gemleak's output sees its end when gemleak ends. */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2 && null >= 0; fd++)
        dup2(null, fd);
    int low = 3;
    for (;;) {
        /* the next descriptor kept, from @low on */
        int next = -1;
        if (read_end >= low)
            next = read_end;
        for (guint i = 0; i < n_locks; i++)
            if (locks[i] >= low && (next < 0 || locks[i] < next))
                next = locks[i];
        if (next < 0)
            break;
        gl_run_close_between(low, next - 1, WATCHDOG_MAX_FD);
        low = next + 1;
    }
    gl_run_close_between(low, G_MAXINT, WATCHDOG_MAX_FD);
    char byte;
    ssize_t got;
    do
        got = read(read_end, &byte, 1);
    while (got < 0 && errno == EINTR);
#ifdef __linux__
    if (got != 1) {
        for (int round = 0; round < WATCHDOG_ROUNDS && kill_carriers(marks, n_marks) > 0; round++) {
            struct timespec pause = { 0, WATCHDOG_ROUND_NS };
            nanosleep(&pause, NULL);
        }
    }
#else
    (void) marks;
    (void) n_marks;
#endif
    _exit(0);
}

/* The middle process: it forks the watchdog, with the read end of @ends,
 * and ends. Under Linux it is vfork()ed, in gemleak's memory: system
 * calls only, the kernel's fork without the C library's handlers. */
static G_GNUC_NORETURN void middle_process(const int ends[2], const Mark *marks, guint n_marks,
                                           const int *locks, guint n_locks)
{
    close(ends[1]);
#if defined(__linux__) && defined(SYS_fork)
    pid_t watcher = (pid_t) syscall(SYS_fork);
#else
    pid_t watcher = fork();
#endif
    if (watcher == 0)
        watchdog(ends[0], marks, n_marks, locks, n_locks);
    _exit(0);
}

void gl_watchdog_start(const char *run_dir, const char *mark, const int *locks, guint n_locks)
{
    int ends[2];
    if (pipe(ends) != 0)
        return;
    fcntl(ends[0], F_SETFD, FD_CLOEXEC);
    fcntl(ends[1], F_SETFD, FD_CLOEXEC);
    g_autofree char *variable = g_strconcat(GL_PROTO_RUN_DIR_VARIABLE "=", run_dir, NULL);
    const Mark marks[] = {
        { "environ", variable, strlen(variable), FALSE },
        { "cmdline", mark, strlen(mark), TRUE },
    };
#ifdef __linux__
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);  /* set by an earlier run in this process */
#endif
    /* The watchdog is not gemleak's child (gemleak waits for all of its
     * children, and reaps what the commands orphan): a middle process
     * forks it and ends. Under Linux the middle is vfork()ed: it borrows
     * gemleak's memory instead of copying it, and only its child, made by
     * the kernel's fork without the C library's handlers (system calls
     * only, in a process that shares gemleak's memory), copies it: once a
     * run, not twice (what a run adds to a Ruby's time: bench section 13). */
#if defined(__linux__) && defined(SYS_fork)
    pid_t middle = vfork(); /* NOLINT(clang-analyzer-security.insecureAPI.vfork) */
#else
    pid_t middle = fork();
#endif
    if (middle == 0)
        middle_process(ends, marks, G_N_ELEMENTS(marks), locks, n_locks); /* NOLINT(clang-analyzer-unix.Vfork) */
    close(ends[0]);
    if (middle < 0) {
        close(ends[1]);
        return;
    }
    while (waitpid(middle, NULL, 0) < 0 && errno == EINTR)
        ;
    watchdog_pipe = ends[1];
}

void gl_watchdog_stop(void)
{
    if (watchdog_pipe < 0)
        return;
    ssize_t written;
    do
        written = write(watchdog_pipe, "", 1);
    while (written < 0 && errno == EINTR);
    close(watchdog_pipe);
    watchdog_pipe = -1;
}
