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
 * This file holds the allocation functions and the library's start;
 * exact_sites.c, which calls are sites; exact_blocks.c, the table of
 * blocks and their stacks; exact_write.c, the table written into the
 * report (exact_int.h, what they share, hidden).
 *
 * Built on its own: no GLib; it runs inside the suite's Ruby. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

#define BOOT_BYTES ((size_t) 64 * 1024)

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

ReportLine exact_report_line;
Symbolize exact_symbolize;
__thread int exact_busy __attribute__((tls_model("initial-exec")));

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
    if (exact_wanted(CALLER, size))
        exact_record(block, CALLER);
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
    if (exact_wanted(CALLER, count * size))
        exact_record(block, CALLER);
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
        exact_forget(block);
    if (exact_wanted(CALLER, size))
        exact_record(moved, CALLER);
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
        exact_forget(block);
    if (exact_wanted(CALLER, count * size))
        exact_record(moved, CALLER);
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
    if (failed == 0 && exact_wanted(CALLER, size))
        exact_record(*out, CALLER);
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
        if (exact_wanted(CALLER, size))                                                      \
            exact_record(block, CALLER);                                                     \
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
        if (exact_wanted(CALLER, size))                                                      \
            exact_record(block, CALLER);                                                     \
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
        if (exact_wanted(CALLER, size))                                                      \
            exact_record(block, CALLER);                                                     \
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
        exact_resolve();
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
    exact_backtrace = (Backtrace) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_Backtrace");
    exact_get_ip = (GetIP) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_GetIP");
    if (install == NULL || exact_report_line == NULL || exact_symbolize == NULL || exact_backtrace == NULL ||
        exact_get_ip == NULL)
        return;  /* no runtime here (a program the helper took it from): nothing to do */
    if (install(exact_allocated, exact_freed) == 0 || pthread_atfork(before_fork, after_fork, in_child) != 0)
        return;
    exact_read_sites(path);
    exact_resolve();
}
