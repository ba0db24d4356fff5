/* Part of the library gemleak preloads into every process of a run
 * (gemleak_preload.so): under a sanitizer's engine that unwinds by frame
 * pointers, the blocks its leak check cannot judge.
 *
 * The fast unwinder walks frame pointers within the thread's own stack,
 * as the runtime knows it. Code running on another stack (a Fiber's, an
 * Enumerator#next's, a Ractor's coroutine: memory Ruby maps for it) gets a
 * stack of one frame, the allocator's; and LeakSanitizer's check takes a
 * block whose allocating call it cannot see for one allocated "in a
 * coroutine" and treats it as reachable, a root even (lsan_common.cpp,
 * MarkInvalidPCCb): a leak there is never reported. gemleak must not pass
 * what was not checked, so this library watches for it: the runtime's
 * allocation hook compares the stack it runs on with the thread's, and a
 * table keeps the blocks allocated elsewhere that are still allocated.
 * Before the check at exit (proof.c, which calls gemleak_preload_hidden)
 * and before a check the helper makes, those are written into the
 * process's report:
 *
 *   gemleak:hidden                     the list begins
 *   gemleak:hidden<TAB>SIZE<TAB>ADDRESS  a block
 *
 * and gemleak judges them by a run with exact stacks (gemleak/run/exact.h).
 * realloc calls no hook under LeakSanitizer: a block only reallocated on
 * another stack goes unseen here; such code allocates too, and that is
 * enough for the exact run to be made, which sees every block.
 *
 * Only where gemleak asks for it (GL_PROTO_HIDDEN_VARIABLE), with the
 * runtime in the process. No GLib; the table is memory mapped here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gemleak/base/protocol.h"

typedef int (*InstallHooks)(void (*)(const volatile void *, size_t), void (*)(const volatile void *));
typedef void (*ReportLine)(const char *);

/* Also proof.c's and the helper's, before a check. */
void gemleak_preload_hidden(void);

/* The table holds no block's address as it is (the check scans this
 * library's memory for pointers): owners.c's mask. */
#define HIDE(address) ((uintptr_t) (address) ^ (uintptr_t) UINT64_C(0xA5A5A5A5A5A5A5A5))
#define EMPTY ((uintptr_t) 0)
#define GONE ((uintptr_t) 1)
#define FIRST_SLOTS ((size_t) 1 << 10)
#define LINE_BYTES 4096
/* The runtime's limit on the main thread's stack (kMaxThreadStackSize). */
#define MAIN_STACK_LIMIT ((uintptr_t) 1 << 30)

typedef struct {
    uintptr_t address;   /* EMPTY, GONE or a block's, HIDE()n */
    size_t size;
} Slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Slot *slots;
static size_t capacity, used, gone;
static ReportLine report_line;
static pid_t main_tid;

/* This thread's stack: [low, high); known once looked up. */
static __thread uintptr_t low __attribute__((tls_model("initial-exec")));
static __thread uintptr_t high __attribute__((tls_model("initial-exec")));
static __thread int known __attribute__((tls_model("initial-exec")));
static __thread int busy __attribute__((tls_model("initial-exec")));

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Reads a hexadecimal number at *@p, moving past it. */
static uintptr_t hex(const char **p, const char *end)
{
    uintptr_t value = 0;
    for (; *p < end; (*p)++) {
        char c = **p;
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0)
            break;
        value = value * 16 + (uintptr_t) digit;
    }
    return value;
}

/* Looks this thread's stack up, once: the mapping that holds @sp, as
 * /proc/self/maps lists it, down (for the main thread, as the runtime
 * bounds it) to the mapping before it or 1 GiB. Read with system calls
 * and a buffer on the stack: it runs in the allocator's hook, where
 * nothing may allocate or take a lock (the thread may hold its own, in
 * pthread_getattr_np, which allocates). */
static void find_stack(uintptr_t sp, int main_thread)
{
    known = 1;
    int fd = (int) syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buffer[4096];
    size_t kept = 0;
    uintptr_t previous_end = 0;
    for (;;) {
        ssize_t n = (ssize_t) syscall(SYS_read, fd, buffer + kept, sizeof buffer - kept);
        if (n <= 0)
            break;
        size_t filled = kept + (size_t) n;
        const char *line = buffer;
        const char *stop = buffer + filled;
        const char *newline;
        while ((newline = memchr(line, '\n', (size_t) (stop - line))) != NULL) {
            const char *p = line;
            uintptr_t start = hex(&p, newline);
            uintptr_t end = p < newline && *p == '-' ? (p++, hex(&p, newline)) : 0;
            if (sp >= start && sp < end) {
                high = end;
                low = !main_thread ? start
                      : end - previous_end > MAIN_STACK_LIMIT ? end - MAIN_STACK_LIMIT
                                                              : previous_end;
                syscall(SYS_close, fd);
                return;
            }
            previous_end = end;
            line = newline + 1;
        }
        kept = (size_t) (stop - line);
        memmove(buffer, line, kept);
        if (kept == sizeof buffer)
            kept = 0;  /* no line is that long */
    }
    syscall(SYS_close, fd);
}

static size_t slot_of(uintptr_t address, size_t mask)
{
    return (size_t) (((uint64_t) (address >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & mask;
}

/* Called with the lock held. Returns: 0 when no memory was left. */
static int rehash(size_t new_capacity)
{
    Slot *fresh = map(new_capacity * sizeof *fresh);
    if (fresh == NULL)
        return 0;
    for (size_t i = 0; i < capacity; i++) {
        if (slots[i].address <= GONE)
            continue;
        size_t j = slot_of(slots[i].address, new_capacity - 1);
        while (fresh[j].address != EMPTY)
            j = (j + 1) & (new_capacity - 1);
        fresh[j] = slots[i];
    }
    if (slots != NULL)
        munmap(slots, capacity * sizeof *slots);
    slots = fresh;
    capacity = new_capacity;
    gone = 0;
    return 1;
}

static void allocated(const volatile void *block, size_t size)
{
    if (block == NULL || busy)
        return;
    busy = 1;
    uintptr_t sp = (uintptr_t) __builtin_frame_address(0);
    if (!known)
        find_stack(sp, (pid_t) syscall(SYS_gettid) == main_tid);
    if (high == 0 || (sp >= low && sp < high)) {
        busy = 0;
        return;
    }
    uintptr_t address = HIDE(block);
    pthread_mutex_lock(&lock);
    if ((used + gone + 1) * 2 <= capacity ||
        rehash(capacity == 0 ? FIRST_SLOTS : (used + 1) * 4 > capacity ? capacity * 2 : capacity)) {
        size_t mask = capacity - 1;
        size_t i = slot_of(address, mask);
        size_t free_slot = SIZE_MAX;
        while (slots[i].address != EMPTY && slots[i].address != address) {
            if (slots[i].address == GONE && free_slot == SIZE_MAX)
                free_slot = i;
            i = (i + 1) & mask;
        }
        if (slots[i].address == EMPTY) {
            if (free_slot != SIZE_MAX) {
                i = free_slot;
                gone--;
            }
            used++;
        }
        slots[i].address = address;
        slots[i].size = size;
    }
    pthread_mutex_unlock(&lock);
    busy = 0;
}

static void freed(const volatile void *block)
{
    if (block == NULL || used == 0)
        return;
    uintptr_t address = HIDE(block);
    pthread_mutex_lock(&lock);
    size_t mask = capacity - 1;
    for (size_t i = slot_of(address, mask); used > 0 && slots[i].address != EMPTY; i = (i + 1) & mask)
        if (slots[i].address == address) {
            slots[i].address = GONE;
            used--;
            gone++;
            break;
        }
    pthread_mutex_unlock(&lock);
}

void gemleak_preload_hidden(void)
{
    if (report_line == NULL || used == 0)
        return;
    static char line[LINE_BYTES];
    pthread_mutex_lock(&lock);
    report_line(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_HIDDEN);  /* the list begins */
    for (size_t i = 0; i < capacity; i++) {
        if (slots[i].address <= GONE)
            continue;
        snprintf(line, sizeof line, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_HIDDEN "\t%zu\t%lx",
                 slots[i].size, (unsigned long) HIDE(slots[i].address));
        report_line(line);
    }
    pthread_mutex_unlock(&lock);
}

static void before_fork(void)
{
    pthread_mutex_lock(&lock);
}

static void after_fork(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child of a fork: its only thread, the one that forked, keeps its
 * stack (and its thread's bounds, whatever the runtime says of them). */
static void in_child(void)
{
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void hidden_start(void)
{
    const char *runtime = getenv(GL_PROTO_RUNTIME_VARIABLE);
    if (runtime == NULL || *runtime == '\0' || getenv(GL_PROTO_HIDDEN_VARIABLE) == NULL)
        return;
    InstallHooks install = (InstallHooks) (uintptr_t) dlsym(RTLD_DEFAULT,
                                                            "__sanitizer_install_malloc_and_free_hooks");
    report_line = (ReportLine) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_report_error_summary");
    if (install == NULL || report_line == NULL)
        return;
    main_tid = getpid();
    if (pthread_atfork(before_fork, after_fork, in_child) != 0)
        return;
    install(allocated, freed);
}
