/* Where the allocation front (gemleak_alloc.so, alloc.c) calls the
 * runtime's allocator: this thread's stack as the runtime bounds it, a
 * scratch stack inside those bounds, and the call itself.
 *
 * The runtime's fast unwinder walks frame pointers only within the stack
 * it knows for the thread: on the main thread, the mapping that held the
 * stack when the runtime started, down to the stack's limit (1 GiB when it
 * has none, as gemleak runs it); on another, what pthread_getattr_np says.
 * Code running elsewhere (a Fiber's stack, Enumerator#next's, a Ractor's
 * coroutine under Ruby's M:N scheduler: memory Ruby maps itself) gets a
 * stack of the allocator's frame alone, and the leak check then takes the
 * block for one "allocated in a coroutine" and treats it as reachable, and
 * as a root (lsan_common.cpp, MarkInvalidPCCb): a leak there is never
 * reported, and hides what it points to. So such a call runs here on a
 * scratch stack that lies inside the thread's bounds, with a chain of
 * frames the runtime can walk: the allocating call, and as much of the
 * coroutine's own frames as the runtime would have walked on the thread's
 * stack. The scratch stack is mapped at the bottom of the main thread's
 * bounds (below where its stack could grow), and carved from the bottom of
 * every other thread's stack as the thread starts, above a guard page
 * (pthread_create, below), given back as it ends.
 *
 * A thread without one (its stack too small, or given by its creator)
 * makes its calls where it runs; alloc.c then keeps such blocks for the
 * exact pass (the "hidden" blocks). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc_int.h"

/* Not in a header: they replace the C library's (and the runtime's, which
 * they call). */
int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg);
void *mmap(void *address, size_t length, int prot, int flags, int fd, off_t offset);
void *mmap64(void *address, size_t length, int prot, int flags, int fd, off_t offset);
int munmap(void *address, size_t length);
int mprotect(void *address, size_t length, int prot);
void *mremap(void *address, size_t length, size_t new_length, int flags, ...);

/* The runtime's limit on the main thread's stack (kMaxThreadStackSize). */
#define MAIN_STACK_LIMIT ((uintptr_t) 1 << 30)
#define MAIN_SCRATCH ((size_t) 128 * 1024)
#define THREAD_SCRATCH ((size_t) 32 * 1024)
/* A stack this small keeps all of itself. */
#define MIN_CARVED_STACK ((size_t) 256 * 1024)
/* The main thread's scratch lies this far at least below where its stack
 * is mapped now. It lies at the bottom of what the stack's limit allows
 * (without one, as gemleak runs it, 1 GiB down); under a limit the stack
 * can then grow to it and the kernel's guard gap (1 MiB) above it, short
 * of the limit, where Ruby's own check (a fifth of the limit, up to 1 MiB,
 * before it) or its handler of the fault raises SystemStackError. */
#define MAIN_STACK_ROOM ((uintptr_t) 2 << 20)

__thread Thread alloc_thread __attribute__((tls_model("initial-exec")));

/* The main thread's scratch stack, mapped at the bottom of its bounds
 * (learn_main()), MAIN_SCRATCH bytes; 0: none. */
static uintptr_t main_scratch;
/* Where this thread's stack was carved, to give back as it ends. */
static __thread uintptr_t carved_guard __attribute__((tls_model("initial-exec")));
/* The mappings that held coroutines' frames (alloc_copy_chain()), each as
 * the kernel gave it: 4 for each hash of the 64 KiB a frame was in, the
 * one used longest ago making way, on this thread (mapped on its first
 * coroutine; given back as it ends). An
 * Async-style suite resumes thousands of Fibers in turn, each on a stack
 * of its own, and the kernel was asked at each resume (2,000 fibers, 40
 * resumes each: 80,000 questions, as long again as the suite). An entry
 * holds while no mapping it overlaps changed since it was asked: the
 * changes made through the C library (below) are kept, the last CHANGES
 * of them, in order. What the C library and the dynamic loader map for
 * themselves is not seen: thread stacks, libraries, where no coroutine's
 * frames are. */
#define RANGE_SETS 4096
#define RANGE_WAYS 4
#define RANGES ((size_t) RANGE_SETS * RANGE_WAYS)
#define CHANGES 256
typedef struct {
    uintptr_t low, high;
    unsigned long changed;  /* maps_changed when it was asked; 0: empty */
    unsigned long used;     /* when it was used last (chain_uses) */
} Range;
static __thread unsigned long chain_uses __attribute__((tls_model("initial-exec")));
static __thread Range *chain_ranges __attribute__((tls_model("initial-exec")));
static pthread_key_t ranges_key;
static int ranges_key_made;
static void ranges_give_back(void *data);
static void changes_unlock(void);
/* The changes: change k (from 1) in changes[k % CHANGES]; maps_changed is
 * the next one's number. */
static struct {
    uintptr_t low, high;
} changes[CHANGES];
static unsigned long maps_changed = 1;
static int changes_lock;

static pthread_key_t carved_key;
static int carved_key_made;

typedef int (*PthreadCreate)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static PthreadCreate next_pthread_create;
/* The front is on (alloc_stack_start()): threads get their scratch stacks. */
static int started;

/* ---- the call ------------------------------------------------------------------ */

#if ALLOC_FRAMES
/* gl_alloc_call(call, sp, chain): switches to @sp when it is not 0, sets
 * the frame pointer to @chain when it is not 0, and calls call->fn(a, b,
 * c), its result into call->result. Its frame's return address is the one
 * frame of this library's the runtime records before the chain. The CFA
 * stays with rbx (the stack it was called on) for unwinders that read
 * DWARF. */
__asm__(".text\n"
        ".globl gl_alloc_call\n"
        ".hidden gl_alloc_call\n"
        ".type gl_alloc_call,@function\n"
        "gl_alloc_call:\n"
        "  .cfi_startproc\n"
        "  push %rbp\n"
        "  .cfi_def_cfa_offset 16\n"
        "  .cfi_offset %rbp, -16\n"
        "  push %rbx\n"
        "  .cfi_def_cfa_offset 24\n"
        "  .cfi_offset %rbx, -24\n"
        "  push %r12\n"
        "  .cfi_def_cfa_offset 32\n"
        "  .cfi_offset %r12, -32\n"
        "  mov %rsp, %rbx\n"
        "  .cfi_def_cfa_register %rbx\n"
        "  mov %rdi, %r12\n"
        "  test %rsi, %rsi\n"
        "  jz 1f\n"
        "  mov %rsi, %rsp\n"
        "1:\n"
        "  and $-16, %rsp\n"
        "  test %rdx, %rdx\n"
        "  jz 2f\n"
        "  mov %rdx, %rbp\n"
        "2:\n"
        "  mov 8(%r12), %rdi\n"
        "  mov 16(%r12), %rsi\n"
        "  mov 24(%r12), %rdx\n"
        "  call *(%r12)\n"
        "  mov %rax, 32(%r12)\n"
        "  mov %rbx, %rsp\n"
        "  .cfi_def_cfa_register %rsp\n"
        "  pop %r12\n"
        "  .cfi_def_cfa_offset 24\n"
        "  pop %rbx\n"
        "  .cfi_def_cfa_offset 16\n"
        "  pop %rbp\n"
        "  .cfi_def_cfa_offset 8\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size gl_alloc_call, .-gl_alloc_call\n");
#else
void gl_alloc_call(Call *call, uintptr_t sp, uintptr_t chain)
{
    (void) sp;
    (void) chain;
    call->result = ((uintptr_t (*)(uintptr_t, uintptr_t, uintptr_t)) call->fn)(call->a, call->b, call->c);
}
#endif

/* ---- /proc/self/maps, without allocating ---------------------------------------- */

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

/* Finds the mapping that holds @address: [*low, *high), and the end of the
 * one before it (*previous_end). Read with system calls and a buffer on the
 * stack: it runs where nothing may allocate. Returns: 0 when none does. */
static int find_mapping(uintptr_t address, uintptr_t *low, uintptr_t *high, uintptr_t *previous_end)
{
    int fd = (int) syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buffer[4096];
    size_t kept = 0;
    uintptr_t before = 0;
    int found = 0;
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
            if (address >= start && address < end) {
                *low = start;
                *high = end;
                if (previous_end != NULL)
                    *previous_end = before;
                found = 1;
                break;
            }
            before = end;
            line = newline + 1;
        }
        if (found)
            break;
        kept = (size_t) (stop - line);
        memmove(buffer, line, kept);
        if (kept == sizeof buffer)
            kept = 0;  /* no line is that long */
    }
    syscall(SYS_close, fd);
    return found;
}

/* The kernel's own answer (PROCMAP_QUERY, Linux 6.11 and later): the
 * mapping that holds @address, without reading every line of the maps,
 * which grow with each Fiber's stack. Its layout is the kernel's ABI
 * (linux/fs.h), spelled here for headers older than it. Returns: 1 when
 * found; 0 when none holds it; -1 where the kernel cannot answer. */
struct gl_procmap_query {
    uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size,
        vma_offset, inode;
    uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
    uint64_t vma_name_addr, build_id_addr;
};
#define GL_PROCMAP_QUERY _IOWR('f', 17, struct gl_procmap_query)

static int query_unsupported;

static int query_mapping(uintptr_t address, uintptr_t *low, uintptr_t *high)
{
    if (query_unsupported)
        return -1;
    int fd = (int) syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct gl_procmap_query query = { .size = sizeof query, .query_addr = address };
    long done = syscall(SYS_ioctl, fd, GL_PROCMAP_QUERY, &query);
    int error = done < 0 ? errno : 0;
    syscall(SYS_close, fd);
    if (done < 0) {
        if (error != ENOENT)
            query_unsupported = 1;
        return error == ENOENT ? 0 : -1;
    }
    *low = (uintptr_t) query.vma_start;
    *high = (uintptr_t) query.vma_end;
    return 1;
}

/* ---- the threads' stacks ----------------------------------------------------- */

/* The main thread, as the runtime bounds it when it starts
 * (GetThreadStackTopAndBottom): the mapping that holds the stack, down to
 * the stack's limit, the mapping before it, or 1 GiB. Its scratch stack is
 * mapped at the bottom of that, when the stack lies far enough above. */
static void learn_main(Thread *thread)
{
    thread->known = 1;
    uintptr_t here = (uintptr_t) __builtin_frame_address(0);
    uintptr_t low = 0, high = 0, previous_end = 0;
    struct rlimit limit;
    if (!find_mapping(here, &low, &high, &previous_end) || getrlimit(RLIMIT_STACK, &limit) != 0)
        return;
    uintptr_t size = limit.rlim_cur == RLIM_INFINITY ? UINTPTR_MAX : (uintptr_t) limit.rlim_cur;
    if (size > high - previous_end)
        size = high - previous_end;
    if (size > MAIN_STACK_LIMIT)
        size = MAIN_STACK_LIMIT;
    thread->low = high - size;
    thread->high = high;
    uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    uintptr_t want = (thread->low + 2 * page) & ~(page - 1);
    if (want + MAIN_SCRATCH + MAIN_STACK_ROOM > low)
        return;  /* the stack may grow down to it: none */
    void *got = mmap((void *) want, MAIN_SCRATCH, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == MAP_FAILED)
        return;
    if ((uintptr_t) got != want) {
        munmap(got, MAIN_SCRATCH);  /* a kernel that took the address as a hint */
        return;
    }
    main_scratch = want;
    thread->scratch = (want + MAIN_SCRATCH - 64) & ~(uintptr_t) 15;
}

void alloc_stack_checking(int on)
{
    if (main_scratch != 0)
        mprotect((void *) main_scratch, MAIN_SCRATCH, on ? PROT_NONE : PROT_READ | PROT_WRITE);
}

/* Another thread, as pthread_getattr_np says (as the runtime asks), which
 * allocates: called with the thread busy. */
static void learn_other(Thread *thread)
{
    thread->known = 1;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    void *address = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &address, &size) == 0 && address != NULL) {
        thread->low = (uintptr_t) address;
        thread->high = (uintptr_t) address + size;
    }
    pthread_attr_destroy(&attr);
}

void alloc_thread_learn(Thread *thread)
{
    thread->busy++;
    if ((pid_t) syscall(SYS_gettid) == getpid())
        learn_main(thread);
    else
        learn_other(thread);
    thread->busy--;
}

/* Gives the page that kept the scratch stack off the memory below it back
 * to the stack, as the thread ends (the C library keeps stacks for new
 * threads). */
static void give_back(void *data)
{
    uintptr_t guard = (uintptr_t) data;
    if (guard != 0)
        mprotect((void *) guard, (size_t) sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE);
    carved_guard = 0;
}

/* The bottom of this thread's stack, fresh, becomes its scratch stack,
 * above a guard page at the very bottom. Not between the scratch stack and
 * the rest: the runtime's leak check scans the whole of the stack of a
 * thread it finds off it (inside a Fiber, a Ractor's coroutine, at the
 * check), past the inaccessible pages at its bottom only, and a guard
 * above the scratch stack faulted its scan ("Tracer caught signal 11": no
 * check; lsan_common.cpp, ProcessThreads). The scratch stack is used only
 * while the thread runs off its stack, never as deep as Ruby lets a
 * thread's own frames go (it raises SystemStackError a fifth of the stack
 * before its end); a thread's own frames that went into it would meet the
 * guard THREAD_SCRATCH later. */
static void carve(Thread *thread)
{
    uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    if (thread->high == 0 || thread->high - thread->low < MIN_CARVED_STACK || !carved_key_made ||
        (thread->low & (page - 1)) != 0)
        return;
    uintptr_t guard = thread->low;
    uintptr_t top = guard + page + THREAD_SCRATCH;
    uintptr_t here = (uintptr_t) __builtin_frame_address(0);
    if (top >= here - (uintptr_t) 64 * 1024)
        return;
    if (mprotect((void *) guard, (size_t) page, PROT_NONE) != 0)
        return;
    if (pthread_setspecific(carved_key, (void *) guard) != 0) {
        mprotect((void *) guard, (size_t) page, PROT_READ | PROT_WRITE);
        return;
    }
    carved_guard = guard;
    thread->scratch = (top - 64) & ~(uintptr_t) 15;
}

typedef struct {
    void *(*start)(void *);
    void *arg;
    int carve;
} Start;

static void *thread_start(void *data)
{
    Start start = *(Start *) data;
    munmap(data, sizeof start);
    Thread *thread = &alloc_thread;
    alloc_thread_learn(thread);
    if (start.carve)
        carve(thread);
    return start.start(start.arg);
}

int pthread_create(pthread_t *out, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    if (next_pthread_create == NULL)
        next_pthread_create = (PthreadCreate) (uintptr_t) dlsym(RTLD_NEXT, "pthread_create");
    if (next_pthread_create == NULL)
        return EAGAIN;
    if (!started)
        return next_pthread_create(out, attr, start, arg);
    /* A stack its creator gives is carved too (Ruby's M:N scheduler gives
     * its native threads theirs): the C library keeps its own data at the
     * top of such a stack, and a thread that reached the bottom would have
     * overflowed it. */
    Start *data = agent_map(sizeof *data);
    if (data == NULL)
        return next_pthread_create(out, attr, start, arg);
    *data = (Start) { .start = start, .arg = arg, .carve = 1 };
    int failed = next_pthread_create(out, attr, thread_start, data);
    if (failed != 0)
        munmap(data, sizeof *data);
    return failed;
}

void alloc_stack_start(void)
{
    started = 1;
    if (pthread_key_create(&carved_key, give_back) == 0)
        carved_key_made = 1;
    if (pthread_key_create(&ranges_key, ranges_give_back) == 0)
        ranges_key_made = 1;
    pthread_atfork(NULL, NULL, changes_unlock);
    alloc_thread_learn(&alloc_thread);
}

/* ---- the mappings ---------------------------------------------------------- */

/* In a forked child: the thread that held the lock is not there. */
static void changes_unlock(void)
{
    __atomic_store_n(&changes_lock, 0, __ATOMIC_RELEASE);
}

/* Records that the mappings of [@address, @address + @length) change. */
static void changed(const void *address, size_t length)
{
    while (__atomic_exchange_n(&changes_lock, 1, __ATOMIC_ACQUIRE))
        ;
    unsigned long k = __atomic_load_n(&maps_changed, __ATOMIC_RELAXED);
    __atomic_store_n(&changes[k % CHANGES].low, (uintptr_t) address, __ATOMIC_RELAXED);
    __atomic_store_n(&changes[k % CHANGES].high, (uintptr_t) address + length, __ATOMIC_RELAXED);
    __atomic_store_n(&maps_changed, k + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&changes_lock, 0, __ATOMIC_RELEASE);
}

/* Each of these records the change (before it, where the address is
 * known: a coroutine's frames are never read where a mapping just went),
 * then does what the C library's (or the runtime's, after this library)
 * would. One called before the next is found (another library's
 * constructor) makes the system call itself. */

typedef void *(*Mmap)(void *, size_t, int, int, int, off_t);

static void *mapped_by(Mmap next, void *address, size_t length, int prot, int flags, int fd,
                       off_t offset)
{
    if (address != NULL)
        changed(address, length);
    void *mapped = next != NULL ? next(address, length, prot, flags, fd, offset)
                                : (void *) syscall(SYS_mmap, address, length, prot, flags, fd, offset);
    if (mapped != MAP_FAILED && mapped != address)
        changed(mapped, length);
    return mapped;
}

void *mmap(void *address, size_t length, int prot, int flags, int fd, off_t offset)
{
    static Mmap next;
    if (next == NULL)
        next = (Mmap) (uintptr_t) dlsym(RTLD_NEXT, "mmap");
    return mapped_by(next, address, length, prot, flags, fd, offset);
}

/* Ruby calls both (off_t is 64 bits here either way). */
void *mmap64(void *address, size_t length, int prot, int flags, int fd, off_t offset)
{
    static Mmap next;
    if (next == NULL)
        next = (Mmap) (uintptr_t) dlsym(RTLD_NEXT, "mmap64");
    return mapped_by(next, address, length, prot, flags, fd, offset);
}

int munmap(void *address, size_t length)
{
    static int (*next)(void *, size_t);
    if (next == NULL)
        next = (int (*)(void *, size_t)) (uintptr_t) dlsym(RTLD_NEXT, "munmap");
    changed(address, length);
    return next != NULL ? next(address, length) : (int) syscall(SYS_munmap, address, length);
}

int mprotect(void *address, size_t length, int prot)
{
    static int (*next)(void *, size_t, int);
    if (next == NULL)
        next = (int (*)(void *, size_t, int)) (uintptr_t) dlsym(RTLD_NEXT, "mprotect");
    changed(address, length);
    return next != NULL ? next(address, length, prot) : (int) syscall(SYS_mprotect, address, length, prot);
}

void *mremap(void *address, size_t length, size_t new_length, int flags, ...)
{
    va_list more;
    va_start(more, flags);
    /* clang-tidy's analyzer misses the va_start above in this function */
    void *wanted = (flags & MREMAP_FIXED) != 0 ? va_arg(more, void *) : NULL; /* NOLINT(clang-analyzer-valist.Uninitialized) */
    va_end(more);
    static void *(*next)(void *, size_t, size_t, int, ...);
    if (next == NULL)
        next = (void *(*)(void *, size_t, size_t, int, ...)) (uintptr_t) dlsym(RTLD_NEXT, "mremap");
    changed(address, length);
    if (wanted != NULL)
        changed(wanted, new_length);
    void *moved = next != NULL ? next(address, length, new_length, flags, wanted)
                               : (void *) syscall(SYS_mremap, address, length, new_length, flags, wanted);
    if (moved != MAP_FAILED)
        changed(moved, new_length);
    return moved;
}

static void ranges_give_back(void *data)
{
    if (data != NULL)
        munmap(data, RANGES * sizeof(Range));
    chain_ranges = NULL;
}

/* Returns: the set of chain_ranges for a frame at @fp: its 64 KiB mixed
 * (MurmurHash3's finalizer; Ruby's Fibers' stacks lie at even strides,
 * which a multiplication alone sent to the same entries). */
static size_t range_set(uintptr_t fp)
{
    uint64_t h = (uint64_t) fp >> 16;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return (size_t) (h & (RANGE_SETS - 1)) * RANGE_WAYS;
}

/* Returns: 1 if no mapping @range overlaps changed since it was asked
 * (it is then as of @now), 0 if one did or the changes since are more
 * than are kept. */
static int still_holds(Range *range, unsigned long now)
{
    if (range->changed == now)
        return 1;
    if (range->changed == 0 || now - range->changed > CHANGES / 2)
        return 0;
    for (unsigned long k = range->changed; k < now; k++) {
        uintptr_t low = __atomic_load_n(&changes[k % CHANGES].low, __ATOMIC_RELAXED);
        uintptr_t high = __atomic_load_n(&changes[k % CHANGES].high, __ATOMIC_RELAXED);
        if (low < range->high && high > range->low)
            return 0;
    }
    /* none was written over while it was read */
    if (__atomic_load_n(&maps_changed, __ATOMIC_ACQUIRE) - range->changed > CHANGES / 2)
        return 0;
    range->changed = now;
    return 1;
}

/* Finds the mapping that holds @fp: [*low, *high). Returns: 0 when none. */
static int chain_mapping(uintptr_t fp, uintptr_t *low, uintptr_t *high)
{
    unsigned long now = __atomic_load_n(&maps_changed, __ATOMIC_ACQUIRE);
    if (chain_ranges == NULL && ranges_key_made) {
        chain_ranges = agent_map(RANGES * sizeof(Range));
        if (chain_ranges != NULL && pthread_setspecific(ranges_key, chain_ranges) != 0) {
            munmap(chain_ranges, RANGES * sizeof(Range));
            chain_ranges = NULL;
        }
    }
    Range *range = NULL;
    if (chain_ranges != NULL) {
        Range *set = &chain_ranges[range_set(fp)];
        chain_uses++;
        for (int way = 0; way < RANGE_WAYS; way++) {
            if (fp >= set[way].low && fp < set[way].high && still_holds(&set[way], now)) {
                set[way].used = chain_uses;
                *low = set[way].low;
                *high = set[way].high;
                return 1;
            }
            if (range == NULL || set[way].used < range->used)
                range = &set[way];
        }
    }
    int queried = query_mapping(fp, low, high);
    if (queried == 0 || (queried < 0 && !find_mapping(fp, low, high, NULL)))
        return 0;
    if (range != NULL)
        *range = (Range) { .low = *low, .high = *high, .changed = now, .used = chain_uses };
    return 1;
}

/* ---- a coroutine's frames ------------------------------------------------------- */

int alloc_copy_chain(uintptr_t fp, Frame *frames, int n)
{
    if (fp == 0 || (fp & 7) != 0 || n >= MAX_FRAMES)
        return n;
    uintptr_t chain_low = 0, chain_high = 0;
    if (!chain_mapping(fp, &chain_low, &chain_high))
        return n;
    uintptr_t previous = 0;
    while (n < MAX_FRAMES && fp > previous && (fp & 7) == 0 && fp >= chain_low &&
           fp + 2 * sizeof(uintptr_t) <= chain_high) {
        const uintptr_t *frame = (const uintptr_t *) fp;
        uintptr_t ret = frame[1];
        if (ret < 4096)
            break;
        frames[n++].ret = ret;
        previous = fp;
        fp = frame[0];
    }
    return n;
}
