/* The library of gemleak's exact pass (gemleak_exact.so): exact stacks for
 * the allocations of the sites where the fast pass found a leak, and for
 * nothing else.
 *
 * Under --engine lsan the runtime unwinds every allocation by frame
 * pointers (fast_unwind_on_malloc=1): near native speed, but on a Ruby
 * built without them (every distribution's, ruby/setup-ruby's) a stack
 * stops at the allocating call, two or three frames deep. Unwinding every
 * allocation with DWARF instead costs 3 to 23 times native, most of it in
 * Ruby's own boot. So gemleak runs the suite fast, and only when that pass
 * found a leak whose stack was cut, runs it again with this library
 * preloaded before the runtime: each allocation whose caller (the return
 * address into it, the frame the fast record holds after the allocator's)
 * and size are those of a leaked block (GL_PROTO_EXACT_VARIABLE names the
 * file that lists them) gets an exact stack, unwound here by libgcc's
 * unwinder, as the runtime's slow unwinder does. A block freed leaves the
 * table (the runtime's free hook). Before each leak check (at exit, from
 * a handler that runs before the one src/run/client/proof.c registered as
 * the process started; before a check the helper makes while Ruby runs),
 * the blocks still allocated are written into the process's report with
 * their stacks (exact_write.c), symbolized by the runtime in gemleak's
 * frame format:
 *
 *   gemleak:frame<TAB>K                then the frames symbolized at one
 *                                      program counter (inlined ones too),
 *                                      numbered from 0, in gemleak's format
 *   gemleak:stack<TAB>N<TAB>K K ...    stack N: its program counters' frames
 *   gemleak:stacks                     a new table of blocks: the last is void
 *   gemleak:at<TAB>N<TAB>ADDRESS ...   blocks allocated on stack N (hex)
 *
 * (frames and stacks once a process, before the first table that needs
 * them)
 *
 * gemleak joins them to the check's objects (report_objects=1) by
 * address, and gives each block the fast pass saw at that site and size
 * the stack found here (src/read/sanitizer_exact.c).
 *
 * The allocation functions are this library's, before the runtime's:
 * __builtin_return_address(0) is the caller, without an unwind. Every one
 * calls the runtime's (dlsym RTLD_NEXT); what dlsym itself allocates
 * before they are found comes from a small static buffer.
 *
 * Built on its own: no GLib; it runs inside the suite's Ruby. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unwind.h>

#include "gemleak/base/protocol.h"
#include "exact_int.h"

/* Not in a header: they replace the C library's (and the runtime's, which
 * they call). */
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *block, size_t size);
void *reallocarray(void *block, size_t count, size_t size);
void free(void *block);
int posix_memalign(void **out, size_t alignment, size_t size);
void *aligned_alloc(size_t alignment, size_t size);
void *memalign(size_t alignment, size_t size);
void *valloc(size_t size);
void *pvalloc(size_t size);
void *dlopen(const char *file, int mode);
/* C++'s operator new (an extension in C++), by their mangled names. */
void *_Znwm(size_t size);
void *_Znam(size_t size);
void *_ZnwmRKSt9nothrow_t(size_t size, const void *tag);
void *_ZnamRKSt9nothrow_t(size_t size, const void *tag);
/* Also the helper's, before a check it makes while Ruby runs. */

/* What the runtime prints for a frame is the call's own address, one byte
 * (x86) or one instruction (ARM) before the return address. */
#if defined(__aarch64__) || defined(__arm__)
#define CALL_BEFORE_RETURN 4
#else
#define CALL_BEFORE_RETURN 1
#endif

#define MAX_SITES 4096
#define MAX_MODULES 256
#define BOOT_BYTES ((size_t) 64 * 1024)
#define FIRST_SLOTS ((size_t) 1 << 12)

typedef void *(*Malloc)(size_t);
typedef void *(*Calloc)(size_t, size_t);
typedef void *(*Realloc)(void *, size_t);
typedef void *(*Reallocarray)(void *, size_t, size_t);
typedef void (*Free)(void *);
typedef int (*PosixMemalign)(void **, size_t, size_t);
typedef void *(*Aligned)(size_t, size_t);
typedef void *(*Dlopen)(const char *, int);
typedef void *(*NewNothrow)(size_t, const void *);
typedef int (*InstallHooks)(void (*)(const volatile void *, size_t), void (*)(const volatile void *));
typedef _Unwind_Reason_Code (*Backtrace)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*GetIP)(struct _Unwind_Context *);

static struct {
    Malloc malloc;
    Calloc calloc;
    Realloc realloc;
    Reallocarray reallocarray;
    Free free;
    PosixMemalign posix_memalign;
    Aligned aligned_alloc, memalign;
    Malloc valloc, pvalloc, new_, new_array;
    NewNothrow new_nothrow, new_array_nothrow;
    Dlopen dlopen;
} next;

/* A site: a call of an allocation function, by the module it is in and
 * its offset there as the runtime prints it, and a size it leaked. */
typedef struct {
    uintptr_t offset;
    size_t size;
    uint32_t module;        /* an index into modules */
    uintptr_t address;      /* the return address once its module is loaded, else 0 */
} Site;

static Site *sites;         /* mapped */
static size_t n_sites;
static char **modules;      /* mapped: the sites' modules, as the runtime names them */
static size_t n_modules;
static int depth = 27;      /* program counters after the allocator's frame */
static volatile int ready;  /* sites resolved at least once: allocations are looked at */
/* A filter on sizes (a bit per size modulo 4096) that most allocations
 * fail at once. */
static uint64_t size_bits[64];

pthread_mutex_t exact_lock = PTHREAD_MUTEX_INITIALIZER;
Slot *exact_slots;
size_t exact_capacity, exact_used;
static size_t gone;
Stack *exact_stacks;
size_t exact_n_stacks;
static size_t stacks_capacity;
ReportLine exact_report_line;
Symbolize exact_symbolize;
__thread int exact_busy __attribute__((tls_model("initial-exec")));
static Backtrace backtrace_fn;
static GetIP get_ip;
static int writer_registered;

/* ---- memory of its own ----------------------------------------------------- */

void *exact_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* What dlsym allocates while the next functions are looked for. */
static unsigned char boot[BOOT_BYTES] __attribute__((aligned(64)));
static size_t boot_used;

static void *boot_alloc(size_t size)
{
    size_t rounded = (size + 63) & ~(size_t) 63;
    if (rounded < size || rounded > BOOT_BYTES - boot_used)
        return NULL;
    void *p = boot + boot_used;
    boot_used += rounded;
    return p;
}

static int from_boot(const void *block)
{
    return (const unsigned char *) block >= boot && (const unsigned char *) block < boot + BOOT_BYTES;
}

static int finding;

static void find_next(void)
{
    if (next.malloc != NULL || finding)
        return;
    finding = 1;
    next.calloc = (Calloc) (uintptr_t) dlsym(RTLD_NEXT, "calloc");
    next.realloc = (Realloc) (uintptr_t) dlsym(RTLD_NEXT, "realloc");
    next.reallocarray = (Reallocarray) (uintptr_t) dlsym(RTLD_NEXT, "reallocarray");
    next.free = (Free) (uintptr_t) dlsym(RTLD_NEXT, "free");
    next.posix_memalign = (PosixMemalign) (uintptr_t) dlsym(RTLD_NEXT, "posix_memalign");
    next.aligned_alloc = (Aligned) (uintptr_t) dlsym(RTLD_NEXT, "aligned_alloc");
    next.memalign = (Aligned) (uintptr_t) dlsym(RTLD_NEXT, "memalign");
    next.valloc = (Malloc) (uintptr_t) dlsym(RTLD_NEXT, "valloc");
    next.pvalloc = (Malloc) (uintptr_t) dlsym(RTLD_NEXT, "pvalloc");
    next.new_ = (Malloc) (uintptr_t) dlsym(RTLD_NEXT, "_Znwm");
    next.new_array = (Malloc) (uintptr_t) dlsym(RTLD_NEXT, "_Znam");
    next.new_nothrow = (NewNothrow) (uintptr_t) dlsym(RTLD_NEXT, "_ZnwmRKSt9nothrow_t");
    next.new_array_nothrow = (NewNothrow) (uintptr_t) dlsym(RTLD_NEXT, "_ZnamRKSt9nothrow_t");
    next.dlopen = (Dlopen) (uintptr_t) dlsym(RTLD_NEXT, "dlopen");
    next.malloc = (Malloc) (uintptr_t) dlsym(RTLD_NEXT, "malloc");
    finding = 0;
}

/* ---- the sites -------------------------------------------------------------- */

/* Returns: @path's real path in @out (PATH_MAX bytes), or 0. */
static int real(const char *path, char *out)
{
    return path != NULL && *path != '\0' && realpath(path, out) != NULL;
}

typedef struct {
    char exe[PATH_MAX];
    int first;
} Walk;

/* Gives each site of a module loaded now its return address. */
static int resolve_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    Walk *walk = data;
    const char *name = info->dlpi_name;
    if (walk->first) {
        walk->first = 0;
        if (name == NULL || *name == '\0')
            name = walk->exe;  /* the program itself, as the runtime names it */
    }
    if (name == NULL || *name == '\0')
        return 0;
    char name_real[PATH_MAX];
    int have_real = -1;
    for (size_t m = 0; m < n_modules; m++) {
        int same = strcmp(modules[m], name) == 0;
        if (!same) {
            char module_real[PATH_MAX];
            if (have_real < 0)
                have_real = real(name, name_real);
            same = have_real && real(modules[m], module_real) && strcmp(module_real, name_real) == 0;
        }
        if (!same)
            continue;
        for (size_t s = 0; s < n_sites; s++)
            if (sites[s].module == m && sites[s].address == 0)
                sites[s].address = (uintptr_t) info->dlpi_addr + sites[s].offset + CALL_BEFORE_RETURN;
    }
    return 0;
}

static void resolve(void)
{
    if (n_sites == 0)
        return;
    static Walk walk;
    walk.first = 1;
    ssize_t n = readlink("/proc/self/exe", walk.exe, sizeof walk.exe - 1);
    walk.exe[n > 0 ? n : 0] = '\0';
    exact_busy++;
    dl_iterate_phdr(resolve_module, &walk);
    exact_busy--;
    ready = 1;
}

/* Returns: the index of @name among the modules, added if new; -1 when full. */
static long module_index(const char *name, size_t length)
{
    for (size_t m = 0; m < n_modules; m++)
        if (strlen(modules[m]) == length && memcmp(modules[m], name, length) == 0)
            return (long) m;
    if (n_modules >= MAX_MODULES)
        return -1;
    char *copy = exact_map(length + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, name, length);
    modules[n_modules] = copy;
    return (long) n_modules++;
}

/* Reads the sites file: "gemleak:sites<TAB>DEPTH", then a site a line,
 * "SIZE<TAB>OFFSET<TAB>MODULE" (decimal, hexadecimal, a path). */
static void read_sites(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    char *text = NULL;
    size_t length = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && (size_t) st.st_size < ((size_t) 64 << 20)) {
        length = (size_t) st.st_size;
        text = exact_map(length + 1);
        size_t got = 0;
        while (text != NULL && got < length) {
            ssize_t n = read(fd, text + got, length - got);
            if (n <= 0)
                break;
            got += (size_t) n;
        }
        length = got;
    }
    close(fd);
    sites = exact_map(MAX_SITES * sizeof *sites);
    modules = exact_map(MAX_MODULES * sizeof *modules);
    if (text == NULL || sites == NULL || modules == NULL)
        return;
    const char *header = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_SITES "\t";
    for (char *line = text; line < text + length && n_sites < MAX_SITES;) {
        char *end = memchr(line, '\n', (size_t) (text + length - line));
        if (end == NULL)
            end = text + length;
        *end = '\0';
        char *rest = NULL;
        if (strncmp(line, header, strlen(header)) == 0) {
            long given = strtol(line + strlen(header), &rest, 10);
            if (given > 0 && given <= MAX_DEPTH)
                depth = (int) given;
        } else {
            unsigned long long size = strtoull(line, &rest, 10);
            if (rest != line && *rest == '\t') {
                char *offset_end = NULL;
                unsigned long long offset = strtoull(rest + 1, &offset_end, 16);
                if (offset_end != rest + 1 && *offset_end == '\t') {
                    long m = module_index(offset_end + 1, strlen(offset_end + 1));
                    if (m >= 0) {
                        sites[n_sites] = (Site) { .offset = (uintptr_t) offset, .size = (size_t) size,
                                                  .module = (uint32_t) m };
                        size_bits[(size & 4095) / 64] |= UINT64_C(1) << (size & 63);
                        n_sites++;
                    }
                }
            }
        }
        line = end + 1;
    }
    munmap(text, length + 1);
}

/* Returns: 1 if an allocation of @size returning to @caller is a site's. */
static inline int wanted(uintptr_t caller, size_t size)
{
    if (!ready || exact_busy || !(size_bits[(size & 4095) / 64] & (UINT64_C(1) << (size & 63))))
        return 0;
    for (size_t s = 0; s < n_sites; s++)
        if (sites[s].address == caller && sites[s].size == size)
            return 1;
    return 0;
}

/* ---- the blocks and their stacks --------------------------------------------- */

typedef struct {
    uintptr_t caller;
    int found;              /* the caller's frame was met */
    Stack *stack;
} Unwinding;

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *context, void *data)
{
    Unwinding *unwinding = data;
    uintptr_t pc = (uintptr_t) get_ip(context);
    if (!unwinding->found) {
        if (pc != unwinding->caller)
            return _URC_NO_REASON;  /* this library's own frames */
        unwinding->found = 1;
    }
    if (pc == 0 || unwinding->stack->n >= depth)
        return _URC_END_OF_STACK;
    unwinding->stack->pcs[unwinding->stack->n++] = pc;
    return _URC_NO_REASON;
}

static size_t slot_of(uintptr_t address, size_t mask)
{
    return (size_t) (((uint64_t) (address >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & mask;
}

/* Called with the lock held. Returns: 0 when no memory was left. */
static int rehash(size_t new_capacity)
{
    Slot *fresh = exact_map(new_capacity * sizeof *fresh);
    if (fresh == NULL)
        return 0;
    for (size_t i = 0; i < exact_capacity; i++) {
        if (exact_slots[i].address <= GONE)
            continue;
        size_t j = slot_of(exact_slots[i].address, new_capacity - 1);
        while (fresh[j].address != EMPTY)
            j = (j + 1) & (new_capacity - 1);
        fresh[j] = exact_slots[i];
    }
    if (exact_slots != NULL)
        munmap(exact_slots, exact_capacity * sizeof *exact_slots);
    exact_slots = fresh;
    exact_capacity = new_capacity;
    gone = 0;
    return 1;
}

/* Called with the lock held. */
static void forget_locked(uintptr_t address)
{
    if (exact_used == 0)
        return;
    size_t mask = exact_capacity - 1;
    for (size_t i = slot_of(address, mask); exact_slots[i].address != EMPTY; i = (i + 1) & mask)
        if (exact_slots[i].address == address) {
            exact_slots[i].address = GONE;
            exact_used--;
            gone++;
            return;
        }
}

/* Returns: the index of a stack equal to @stack, kept; UINT32_MAX when no
 * memory was left. Called with the lock held. */
static uint32_t keep_stack(const Stack *stack)
{
    for (size_t i = exact_n_stacks; i > 0; i--)
        if (exact_stacks[i - 1].n == stack->n &&
            memcmp(exact_stacks[i - 1].pcs, stack->pcs, (size_t) stack->n * sizeof stack->pcs[0]) == 0)
            return (uint32_t) (i - 1);
    if (exact_n_stacks >= stacks_capacity) {
        size_t more = stacks_capacity == 0 ? 256 : stacks_capacity * 2;
        Stack *grown = exact_map(more * sizeof *grown);
        if (grown == NULL)
            return UINT32_MAX;
        if (exact_stacks != NULL) {
            memcpy(grown, exact_stacks, exact_n_stacks * sizeof *exact_stacks);
            munmap(exact_stacks, stacks_capacity * sizeof *exact_stacks);
        }
        exact_stacks = grown;
        stacks_capacity = more;
    }
    exact_stacks[exact_n_stacks] = *stack;
    return (uint32_t) exact_n_stacks++;
}

static void at_exit_write(void)
{
    gemleak_exact_write();
}

/* Records @block, allocated by a call returning to @caller, with its stack. */
static void record(void *block, uintptr_t caller)
{
    if (block == NULL || backtrace_fn == NULL || get_ip == NULL)
        return;
    exact_busy++;
    Stack stack = { .n = 0 };
    Unwinding unwinding = { .caller = caller, .stack = &stack };
    backtrace_fn(one_frame, &unwinding);
    if (stack.n == 0)
        stack.pcs[stack.n++] = caller;  /* the unwinder lost its way: the caller at least */
    /* after proof.c's, which its constructor registered: run before it
     * (and not with the lock held: atexit may allocate) */
    if (!__atomic_exchange_n(&writer_registered, 1, __ATOMIC_ACQ_REL))
        atexit(at_exit_write);
    pthread_mutex_lock(&exact_lock);
    uint32_t index = keep_stack(&stack);
    uintptr_t address = HIDE(block);
    if (index != UINT32_MAX &&
        ((exact_used + gone + 1) * 2 <= exact_capacity ||
         rehash(exact_capacity == 0 ? FIRST_SLOTS : (exact_used + 1) * 4 > exact_capacity ? exact_capacity * 2 : exact_capacity))) {
        size_t mask = exact_capacity - 1;
        size_t i = slot_of(address, mask);
        size_t free_slot = SIZE_MAX;
        while (exact_slots[i].address != EMPTY && exact_slots[i].address != address) {
            if (exact_slots[i].address == GONE && free_slot == SIZE_MAX)
                free_slot = i;
            i = (i + 1) & mask;
        }
        if (exact_slots[i].address == EMPTY) {
            if (free_slot != SIZE_MAX) {
                i = free_slot;
                gone--;
            }
            exact_used++;
        }
        exact_slots[i].address = address;
        exact_slots[i].stack = index;
    }
    pthread_mutex_unlock(&exact_lock);
    exact_busy--;
}

static void forget(const volatile void *block)
{
    if (block == NULL || exact_used == 0)
        return;
    pthread_mutex_lock(&exact_lock);
    forget_locked(HIDE(block));
    pthread_mutex_unlock(&exact_lock);
}

/* The runtime's free hook: every block freed, however (free, delete,
 * realloc's old block under AddressSanitizer). */
static void freed(const volatile void *block)
{
    forget(block);
}

/* The runtime's allocation hook: a block handed out at an address the
 * table holds was freed where no hook saw it; what the table says of the
 * address is stale (the site's allocation, if this is one, records it
 * again right after). */
static void allocated(const volatile void *block, size_t size)
{
    (void) size;
    forget(block);
}

/* ---- the allocation functions ------------------------------------------------ */

#define CALLER ((uintptr_t) __builtin_return_address(0))

/* Whether the runtime's @field is there, looked for if not yet: without
 * it (no allocator after this library) the call fails as out of memory. */
#define FOUND(field) (next.field != NULL || (find_next(), next.field != NULL))

void *malloc(size_t size)
{
    if (next.malloc == NULL) {
        find_next();
        if (next.malloc == NULL)
            return boot_alloc(size);
    }
    void *block = next.malloc(size);
    if (wanted(CALLER, size))
        record(block, CALLER);
    return block;
}

void *calloc(size_t count, size_t size)
{
    if (next.calloc == NULL) {
        find_next();
        if (next.calloc == NULL)
            return boot_alloc(count * size);  /* mapped zeros */
    }
    void *block = next.calloc(count, size);
    if (wanted(CALLER, count * size))
        record(block, CALLER);
    return block;
}

/* LeakSanitizer's realloc calls no hook: the block it leaves is forgotten
 * here, and the one it returns recorded when the call is a site's. */
void *realloc(void *block, size_t size)
{
    if (from_boot(block)) {
        void *moved = malloc(size);
        if (moved != NULL)
            memcpy(moved, block, size < (size_t) (boot + BOOT_BYTES - (unsigned char *) block)
                                     ? size : (size_t) (boot + BOOT_BYTES - (unsigned char *) block));
        return moved;
    }
    if (!FOUND(realloc)) {
        errno = ENOMEM;
        return NULL;
    }
    void *moved = next.realloc(block, size);
    if (moved == NULL && size != 0)
        return moved;
    if (block != NULL)
        forget(block);
    if (wanted(CALLER, size))
        record(moved, CALLER);
    return moved;
}

void *reallocarray(void *block, size_t count, size_t size)
{
    if (!FOUND(reallocarray)) {
        errno = ENOMEM;
        return NULL;
    }
    void *moved = next.reallocarray(block, count, size);
    if (moved == NULL && count * size != 0)
        return moved;
    if (block != NULL)
        forget(block);
    if (wanted(CALLER, count * size))
        record(moved, CALLER);
    return moved;
}

void free(void *block)
{
    if (block == NULL || from_boot(block))
        return;
    if (FOUND(free))
        next.free(block);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!FOUND(posix_memalign))
        return ENOMEM;
    int failed = next.posix_memalign(out, alignment, size);
    if (failed == 0 && wanted(CALLER, size))
        record(*out, CALLER);
    return failed;
}

/* The others alike: the runtime's, then the block recorded when the call
 * is a site's. */
#define ALIGNED(name)                                                                  \
    void *name(size_t alignment, size_t size)                                          \
    {                                                                                  \
        if (!FOUND(name)) {                                                            \
            errno = ENOMEM;                                                            \
            return NULL;                                                               \
        }                                                                              \
        void *block = next.name(alignment, size);                                      \
        if (wanted(CALLER, size))                                                      \
            record(block, CALLER);                                                     \
        return block;                                                                  \
    }
ALIGNED(aligned_alloc)
ALIGNED(memalign)

#define SIZED(name, field)                                                             \
    void *name(size_t size)                                                            \
    {                                                                                  \
        if (!FOUND(field)) {                                                           \
            errno = ENOMEM;                                                            \
            return NULL;                                                               \
        }                                                                              \
        void *block = next.field(size);                                                \
        if (wanted(CALLER, size))                                                      \
            record(block, CALLER);                                                     \
        return block;                                                                  \
    }
SIZED(valloc, valloc)
SIZED(pvalloc, pvalloc)
SIZED(_Znwm, new_)
SIZED(_Znam, new_array)

#define NOTHROW(name, field)                                                           \
    void *name(size_t size, const void *tag)                                           \
    {                                                                                  \
        if (!FOUND(field)) {                                                           \
            errno = ENOMEM;                                                            \
            return NULL;                                                               \
        }                                                                              \
        void *block = next.field(size, tag);                                           \
        if (wanted(CALLER, size))                                                      \
            record(block, CALLER);                                                     \
        return block;                                                                  \
    }
NOTHROW(_ZnwmRKSt9nothrow_t, new_nothrow)
NOTHROW(_ZnamRKSt9nothrow_t, new_array_nothrow)

/* An extension loaded now may hold sites. */
void *dlopen(const char *file, int mode)
{
    if (!FOUND(dlopen))
        return NULL;
    void *handle = next.dlopen(file, mode);
    if (handle != NULL)
        resolve();
    return handle;
}

/* A fork while another thread holds the lock would leave the child's held. */
static void before_fork(void)
{
    pthread_mutex_lock(&exact_lock);
}

static void after_fork(void)
{
    pthread_mutex_unlock(&exact_lock);
}

/* The child writes a report of its own: its frames and stacks anew. */
static void in_child(void)
{
    exact_forget_written();
    pthread_mutex_unlock(&exact_lock);
}

__attribute__((constructor)) static void exact_start(void)
{
    find_next();
    const char *path = getenv(GL_PROTO_EXACT_VARIABLE);
    if (path == NULL || *path == '\0')
        return;
    InstallHooks install = (InstallHooks) (uintptr_t) dlsym(RTLD_DEFAULT,
                                                            "__sanitizer_install_malloc_and_free_hooks");
    exact_report_line = (ReportLine) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_report_error_summary");
    exact_symbolize = (Symbolize) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_symbolize_pc");
    backtrace_fn = (Backtrace) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_Backtrace");
    get_ip = (GetIP) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_GetIP");
    if (install == NULL || exact_report_line == NULL || exact_symbolize == NULL || backtrace_fn == NULL ||
        get_ip == NULL)
        return;  /* no runtime here (a program the helper took it from): nothing to do */
    if (install(allocated, freed) == 0 || pthread_atfork(before_fork, after_fork, in_child) != 0)
        return;
    read_sites(path);
    resolve();
}
