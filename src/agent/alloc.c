/* The allocation front (gemleak_alloc.so): the library gemleak preloads
 * before a sanitizer's runtime (LeakSanitizer's, AddressSanitizer's) into
 * every Ruby of a run whose runtime unwinds by frame pointers
 * (fast_unwind_on_malloc=1), and of its exact pass.
 *
 * Its allocation functions come before the runtime's: every one the runtime
 * intercepts (tests/agent/check_alloc.c holds the list to the runtimes'), so
 * that __builtin_return_address(0) is the allocating call, without an
 * unwind, and the runtime is called with a stack gemleak can judge:
 *
 * - On a Ruby without frame pointers (GEMLEAK_ALLOC_MODE "call"), what the
 *   fast unwinder would walk past the allocating call is noise (a frame
 *   pointer register the code uses for data). The runtime is given a chain
 *   of frames that holds the allocating call, and, when the allocation runs
 *   below an extension's call of one of Ruby's allocation functions
 *   (alloc_via.c), that function, this library's gemleak_via frame and the
 *   extension's call: then the report says whose the block may be, and a
 *   block Ruby's code allocated outside such a call is Ruby's (gemleak(1),
 *   RULES, 2). The rest, where it is needed, the exact pass unwinds.
 * - On a Ruby that keeps them ("frames"), the runtime walks them as they
 *   are; the watched calls show as this library's frame between the
 *   function and the extension.
 * - Under either, a call made on another stack than the thread's (a
 *   Fiber's, a Ractor's coroutine) runs on the thread's scratch stack, with
 *   the allocating call (and, with frame pointers, the coroutine's frames)
 *   as its chain (alloc_stack.c): the runtime's leak check judges those
 *   blocks as any other. Where it cannot (no scratch stack), the block is
 *   kept here, "hidden", and written into the report before each check:
 *
 *     gemleak:hidden                       the list begins
 *     gemleak:hidden<TAB>SIZE<TAB>ADDRESS  a block the check cannot judge
 *
 * - In the exact pass (GEMLEAK_EXACT names the sites), each allocation at
 *   a site where the first pass found a leak gets an exact stack
 *   (exact_sites.c, exact_blocks.c, exact_write.c).
 * - Under --per-test and the fast pass's owners, a judged block's chain
 *   begins with a frame that says which test allocated it (owner_frames
 *   below): the owner is recorded with the block's stack, by the runtime.
 * - While a require runs (the helper says so: gemleak_alloc_requiring()),
 *   an allocation by code outside Ruby's own (an extension's Init_, and
 *   what its calls of Ruby's allocation functions allocate) is given to
 *   the runtime with its whole stack, unwound here, after this library's
 *   gemleak_exact frame, the mark of a stack the reader takes as whole:
 *   what an extension allocates once as it loads, and keeps to the end,
 *   is judged in the first pass (gemleak(1), RULES, 3), not run again.
 *
 * Before each leak check (at exit, from src/agent/proof.c; before a
 * check the helper makes), gemleak_alloc_before_check() writes what the
 * report needs of this library: "gemleak:unwound<TAB>call" or
 * "...<TAB>frames" (how its stacks were made), where the owners' frames
 * point ("gemleak:owner-frames"), the hidden blocks, the exact pass's
 * stacks.
 *
 * Built on its own: no GLib; it runs inside the suite's Ruby. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "gemleak/base/protocol.h"
#include "alloc_int.h"
#include "exact_int.h"
#include "hidden_table_int.h"

/* Not in a header: they replace the C library's (and the runtime's, which
 * they call). */
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *block, size_t size);
void *reallocarray(void *block, size_t count, size_t size);
void free(void *block);
void cfree(void *block);
int posix_memalign(void **out, size_t alignment, size_t size);
void *aligned_alloc(size_t alignment, size_t size);
void *memalign(size_t alignment, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void *valloc(size_t size);
void *pvalloc(size_t size);
char *strdup(const char *text);
char *__strdup(const char *text);
char *strndup(const char *text, size_t size);
void *dlopen(const char *file, int mode);
/* C++'s operator new, by their mangled names: plain, nothrow, aligned. */
void *_Znwm(size_t size);
void *_Znam(size_t size);
void *_ZnwmRKSt9nothrow_t(size_t size, const void *tag);
void *_ZnamRKSt9nothrow_t(size_t size, const void *tag);
void *_ZnwmSt11align_val_t(size_t size, size_t alignment);
void *_ZnamSt11align_val_t(size_t size, size_t alignment);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const void *tag);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const void *tag);
/* and operator delete: plain, sized, nothrow, aligned. */
void _ZdlPv(void *block);
void _ZdaPv(void *block);
void _ZdlPvm(void *block, size_t size);
void _ZdaPvm(void *block, size_t size);
void _ZdlPvRKSt9nothrow_t(void *block, const void *tag);
void _ZdaPvRKSt9nothrow_t(void *block, const void *tag);
void _ZdlPvSt11align_val_t(void *block, size_t alignment);
void _ZdaPvSt11align_val_t(void *block, size_t alignment);
void _ZdlPvmSt11align_val_t(void *block, size_t size, size_t alignment);
void _ZdaPvmSt11align_val_t(void *block, size_t size, size_t alignment);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *block, size_t alignment, const void *tag);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *block, size_t alignment, const void *tag);
/* Before each check: what the report needs of this library. */
void gemleak_alloc_before_check(void);
/* Right before a leak check (@on 1) and right after it (0). */
void gemleak_alloc_checking(int on);
/* The client library's realloc of a block, for the test that owns it
 * (src/agent/owners.c) and for --growth's count (growth.c): the runtime's
 * realloc calls no hook. */
void gemleak_alloc_on_realloc(void (*hook)(void *block, void *moved));
/* --growth's count of a block freed (growth.c), as free() is called. */
void gemleak_alloc_on_free(void (*hook)(const volatile void *block));
/* The return address inside the client library's trampoline: where a
 * stack made here, without frame pointers, goes on to the extension. */
void gemleak_alloc_on_via(const void *via_return);
/* The helper, as a require starts (@on 1) and ends (0) on this thread. */
void gemleak_alloc_requiring(int on);
/* The helper, as Ruby's exit begins (its at_exit): recent addresses are
 * kept from judged blocks no more (alloc_held.c). */
void gemleak_alloc_exiting(void);
/* Returns: 1 if judged blocks were to be kept from recent addresses (under
 * LeakSanitizer) and are not: the shadow could not be mapped. The helper
 * says so in the process's facts (GL_PROTO_RECENT_UNKEPT). */
int gemleak_alloc_recent_unkept(void);
/* The mark of a stack unwound whole here (GL_PROTO_EXACT_FUNCTION): never
 * called, an address inside it stands first in such a chain. */
void gemleak_exact(void);

#define BOOT_BYTES ((size_t) 64 * 1024)

/* The runtime's functions, each the next after this library's. */
enum {
    F_MALLOC, F_CALLOC, F_REALLOC, F_REALLOCARRAY, F_FREE, F_POSIX_MEMALIGN, F_ALIGNED_ALLOC,
    F_MEMALIGN, F_LIBC_MEMALIGN, F_VALLOC, F_PVALLOC, F_STRDUP, F_STRDUP2, F_STRNDUP, F_NEW,
    F_NEW_ARRAY, F_NEW_NOTHROW, F_NEW_ARRAY_NOTHROW, F_NEW_ALIGNED, F_NEW_ARRAY_ALIGNED,
    F_NEW_ALIGNED_NOTHROW, F_NEW_ARRAY_ALIGNED_NOTHROW, F_DELETE, F_DELETE_ARRAY, F_DELETE_SIZED,
    F_DELETE_ARRAY_SIZED, F_DELETE_NOTHROW, F_DELETE_ARRAY_NOTHROW, F_DELETE_ALIGNED,
    F_DELETE_ARRAY_ALIGNED, F_DELETE_SIZED_ALIGNED, F_DELETE_ARRAY_SIZED_ALIGNED,
    F_DELETE_ALIGNED_NOTHROW, F_DELETE_ARRAY_ALIGNED_NOTHROW, F_DLOPEN, F_COUNT
};

static const char *const next_names[F_COUNT] = {
    [F_MALLOC] = "malloc", [F_CALLOC] = "calloc", [F_REALLOC] = "realloc",
    [F_REALLOCARRAY] = "reallocarray", [F_FREE] = "free", [F_POSIX_MEMALIGN] = "posix_memalign",
    [F_ALIGNED_ALLOC] = "aligned_alloc", [F_MEMALIGN] = "memalign",
    [F_LIBC_MEMALIGN] = "__libc_memalign", [F_VALLOC] = "valloc", [F_PVALLOC] = "pvalloc",
    [F_STRDUP] = "strdup", [F_STRDUP2] = "__strdup", [F_STRNDUP] = "strndup", [F_NEW] = "_Znwm",
    [F_NEW_ARRAY] = "_Znam", [F_NEW_NOTHROW] = "_ZnwmRKSt9nothrow_t",
    [F_NEW_ARRAY_NOTHROW] = "_ZnamRKSt9nothrow_t", [F_NEW_ALIGNED] = "_ZnwmSt11align_val_t",
    [F_NEW_ARRAY_ALIGNED] = "_ZnamSt11align_val_t",
    [F_NEW_ALIGNED_NOTHROW] = "_ZnwmSt11align_val_tRKSt9nothrow_t",
    [F_NEW_ARRAY_ALIGNED_NOTHROW] = "_ZnamSt11align_val_tRKSt9nothrow_t", [F_DELETE] = "_ZdlPv",
    [F_DELETE_ARRAY] = "_ZdaPv", [F_DELETE_SIZED] = "_ZdlPvm", [F_DELETE_ARRAY_SIZED] = "_ZdaPvm",
    [F_DELETE_NOTHROW] = "_ZdlPvRKSt9nothrow_t", [F_DELETE_ARRAY_NOTHROW] = "_ZdaPvRKSt9nothrow_t",
    [F_DELETE_ALIGNED] = "_ZdlPvSt11align_val_t", [F_DELETE_ARRAY_ALIGNED] = "_ZdaPvSt11align_val_t",
    [F_DELETE_SIZED_ALIGNED] = "_ZdlPvmSt11align_val_t",
    [F_DELETE_ARRAY_SIZED_ALIGNED] = "_ZdaPvmSt11align_val_t",
    [F_DELETE_ALIGNED_NOTHROW] = "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    [F_DELETE_ARRAY_ALIGNED_NOTHROW] = "_ZdaPvSt11align_val_tRKSt9nothrow_t", [F_DLOPEN] = "dlopen",
};

static uintptr_t next_fn[F_COUNT];
static int finding;
/* How the runtime is given a stack (GL_PROTO_ALLOC_MODE_VARIABLE). */
typedef enum {
    MODE_OFF = 0,       /* the runtime's own (no runtime, or an exact unwinder) */
    MODE_CALL,          /* Ruby has no frame pointers: the allocating call, and the call
                         * into Ruby's allocation functions on the way, and no more */
    MODE_FRAMES,        /* Ruby keeps them: the frame pointers as they are */
} Mode;
static Mode alloc_mode;
static int exact_on;
/* The client library's callbacks (gemleak_alloc_on_realloc). */
#define REALLOC_HOOKS 2
static void (*realloc_hooks[REALLOC_HOOKS])(void *, void *);
static void (*free_hook)(const volatile void *);
/* The return address inside the client library's trampoline (--growth,
 * growth.c), which sends an extension's calls of allocation functions
 * through it, this library's among them; 0 until it says it. */
static uintptr_t client_via_return;


/* ---- finding the runtime's functions ---------------------------------------------- */

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

static void find_next(void)
{
    if (next_fn[F_MALLOC] != 0 || finding)
        return;
    finding = 1;
    for (int f = 0; f < F_COUNT; f++)
        if (f != F_MALLOC)
            next_fn[f] = (uintptr_t) dlsym(RTLD_NEXT, next_names[f]);
    /* The client library, preloaded after this one, has a realloc of its
     * own for where this library is not (owners.c): here its hooks are
     * called from this realloc (gemleak_alloc_on_realloc), and the
     * runtime's realloc is called straight. */
    void *(*client_next)(void *) =
        (void *(*)(void *)) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_client_next_realloc");
    if (client_next != NULL && next_fn[F_REALLOC] != 0) {
        uintptr_t after = (uintptr_t) client_next((void *) next_fn[F_REALLOC]);
        if (after != 0)
            next_fn[F_REALLOC] = after;
    }
    next_fn[F_MALLOC] = (uintptr_t) dlsym(RTLD_NEXT, "malloc");
    finding = 0;
}

/* Whether the runtime's @f is there, looked for if not yet. */
static inline int next_found(int f)
{
    if (next_fn[f] == 0)
        find_next();
    return next_fn[f] != 0;
}

/* ---- the blocks the check cannot judge ------------------------------------------- */

/* Each with its size. */
static pthread_mutex_t hidden_lock = PTHREAD_MUTEX_INITIALIZER;
static HiddenTable hidden = HIDDEN_TABLE_INIT((size_t) 1 << 10);

static void hide(const void *block, size_t size)
{
    if (block == NULL)
        return;
    pthread_mutex_lock(&hidden_lock);
    hidden_table_put(&hidden, block, size);
    pthread_mutex_unlock(&hidden_lock);
}

static void unhide(const volatile void *block)
{
    if (block == NULL || hidden.used == 0)
        return;
    pthread_mutex_lock(&hidden_lock);
    hidden_table_take(&hidden, block);
    pthread_mutex_unlock(&hidden_lock);
}

/* A block freed leaves the tables. */
static inline __attribute__((always_inline)) void forget(const volatile void *block)
{
    if (hidden.used != 0)
        unhide(block);
    if (exact_on)
        exact_forget(block);
}

/* What a block freed by free() or an operator delete, as the call reaches
 * this library and before the runtime takes the block back, leaves: its
 * bit and entry in the owners' table (alloc_owners.c), its entry among the
 * blocks the check cannot judge and the exact pass's, and the time of its
 * free (alloc_held.c). This library comes before the runtime, so every
 * free and delete passes here, and no hook of the runtime's is needed to
 * see one (a realloc's old block: reallocated()). */
static inline __attribute__((always_inline)) void released(const void *block)
{
    if (free_hook != NULL)
        free_hook(block);
    /* the bit is read last, after the stores below: asked for now */
    const uint64_t *word = alloc_owner_word(block);
    if (word != NULL)
        __builtin_prefetch(word);
    alloc_held_freed(block);
    forget(block);
    if (__atomic_load_n(&alloc_owner_current, __ATOMIC_RELAXED) != NULL &&
        alloc_owners_may_hold(block))
        alloc_owners_freed(block);
}

/* Returns: 1 if @block (not NULL), freed or moved, leaves nothing for
 * released() or reallocated() to do in the tables: none holds it (the
 * blocks the check cannot judge, the exact pass's, the owners'). The
 * quick paths of free and realloc ask it. */
static inline __attribute__((always_inline)) int kept_nowhere(const void *block)
{
    return hidden.used == 0 && !exact_on &&
           (__atomic_load_n(&alloc_owner_current, __ATOMIC_RELAXED) == NULL ||
            !alloc_owners_may_hold(block));
}

/* ---- a call of the runtime ------------------------------------------------------ */

/* Ruby's own code: the executable's and libruby's (when Ruby is built
 * shared), as the process started; what it allocates on its own is
 * Ruby's. */
#define MAX_RUBY_RANGES 4
static struct {
    uintptr_t low, high;
} ruby_ranges[MAX_RUBY_RANGES];
static int n_ruby_ranges;
/* libgcc's unwinder is there (exact_blocks_start()). */
static int can_unwind;
/* How many more whole stacks a process unwinds as it requires: a gem's
 * load is a few hundred; an extension that allocates without end as it
 * loads gets this many (some 0.2 s of unwinding), and its blocks after
 * them the fast pass's stacks (the exact pass then unwinds what leaked). */
static int whole_left = 50000;
/* How many program counters a whole stack unwinds to: no more than the
 * runtime keeps of a stack (whole_depth()); libgcc's unwinder pays for
 * each frame, and a Ruby's stack as it requires is often deeper. */
static int whole_frames = MAX_FRAMES - 1;
/* The first judged allocation at each site gets its whole stack too
 * (alloc_sites.c): on a Ruby without frame pointers, outside the exact
 * pass, where libgcc's unwinder is. */
static int sites_on;

static inline int in_ruby(uintptr_t pc)
{
    for (int i = 0; i < n_ruby_ranges; i++)
        if (pc >= ruby_ranges[i].low && pc < ruby_ranges[i].high)
            return 1;
    return 0;
}

/* Returns: 1 if an allocation returning to @caller, below the extension's
 * call returning to @via_ret (0: none), gets its whole stack: while a
 * require runs on this thread, made by code outside Ruby's own. */
static inline int whole_stack(const Thread *thread, uintptr_t caller, uintptr_t via_ret)
{
    return thread->requiring > 0 && can_unwind && !in_ruby(via_ret != 0 ? via_ret : caller) &&
           __atomic_load_n(&whole_left, __ATOMIC_RELAXED) > 0;
}

/* The C library's code (libc.so.6), as the process started. */
static uintptr_t libc_low, libc_high;

/* How deep the C library's own frames go before its caller's, at most. */
#define LIBC_FRAMES 4

/* Returns: 1 if an allocation by the C library (@caller), outside an
 * extension's call of Ruby's functions, was made for Ruby's own code:
 * the first frame beyond the C library's, unwound exactly, is Ruby's.
 * As Ruby requires, it calls realpath(3) for each feature (a block the C
 * library allocates and Ruby frees at once), opendir(3) and dlerror(3):
 * 441 of psych's suite's 755 whole stacks, unwound to some 30 frames
 * each, where a few frames tell. What the C library allocates for an
 * extension (strdup in an Init function) still gets its whole stack. */
static int for_ruby(Thread *thread, uintptr_t caller)
{
    if (caller < libc_low || caller >= libc_high)
        return 0;
    uintptr_t pcs[LIBC_FRAMES + 1];
    thread->busy++;  /* what the unwinder allocates goes straight */
    int n = exact_unwind(caller, pcs, LIBC_FRAMES + 1);
    thread->busy--;
    for (int i = 0; i < n; i++)
        if (pcs[i] < libc_low || pcs[i] >= libc_high)
            return in_ruby(pcs[i]);
    return 0;
}

__attribute__((noinline, used)) void gemleak_exact(void)
{
    __asm__ volatile("nop\n\tnop\n\tnop\n\tnop");
}

/* The dynamic loader's code: the runtime takes what it allocates for
 * reachable when the allocating call is the loader's, as it is only when
 * the runtime is called straight (straight()). */
static uintptr_t loader_low, loader_high;

/* Returns: 1 if an allocation of @size by @caller, from a function whose
 * frame is @fp, goes to the runtime as it is: a tail call, the stack as
 * the runtime would record it without this library (its frame gone, the
 * allocating call the runtime's caller). Only on the thread's own stack,
 * outside an exact site, and, without frame pointers, outside an
 * extension's call of Ruby's allocation functions (which front() shows)
 * and, for a judged call (@judged_), at a site met before. */
static inline __attribute__((always_inline)) int straight(uintptr_t caller, uintptr_t fp, size_t size,
                                                           int judged_)
{
    const Thread *thread = &alloc_thread;
    if (alloc_mode == MODE_OFF || thread->busy || (caller >= loader_low && caller < loader_high))
        return 1;
    if (!alloc_on_own_stack(thread, fp))
        return 0;
    uintptr_t via_ret = 0, via_api = 0, via_frame = 0;
    int via = alloc_via_find(fp, &via_ret, &via_api, &via_frame);
    if (via && alloc_mode == MODE_CALL)
        return 0;
    if (whole_stack(thread, caller, via ? via_ret : 0))
        return 0;
    if (judged_ && sites_on && !alloc_sites_met(caller, via ? via_ret : 0))
        return 0;
    return !exact_on || !exact_wanted(caller, via ? via_ret : 0, size);
}

/* The owner of a judged block (alloc_owners.c: the test that allocated
 * it) goes into the block's own stack: the chain given to the runtime
 * begins with a frame whose return address is in owner_frames, two bytes
 * an owner, which the runtime records with the block's stack as it records
 * any (no table, no lock, nothing to do at the free). The reader takes the
 * owner from the leaked block's stack ("gemleak:owner-frames", written
 * before each check, says where the array lies in this library) and drops
 * the frame as it drops this library's others. Never read nor written, so
 * read-only: a leak check scans every writable segment of every library
 * for pointers, and in .bss the array's 256 KiB were read in each check of
 * each process, 64 pages mapped for the scan alone. Its first byte is
 * not zero, which keeps it out of
 * .bss; it is owner 0's, nobody's. In .rodata, untouched, it costs the
 * file's bytes and no memory. Owners beyond it, a block the check cannot
 * judge, and the runtime's own unwinder (MODE_OFF) keep the table. */
#define OWNER_FRAMES ((uint32_t) GL_PROTO_OWNER_FRAMES_MAX)
static __attribute__((used)) const unsigned char owner_frames[2 * OWNER_FRAMES] = { 1 };

/* Returns: 1 if @owner's block is to carry its owner in its stack. */
static inline int owner_framed(uint32_t owner)
{
    return owner != 0 && owner < OWNER_FRAMES && alloc_mode != MODE_OFF;
}

/* Returns: the return address that says @owner (owner_framed()). */
static inline uintptr_t owner_pc(uint32_t owner)
{
    return (uintptr_t) owner_frames + 2 * (uintptr_t) owner + 1;
}

/* Fills @frames with the chain of an allocation by a call returning to
 * @caller, its frame pointer's caller @caller_fp, below the extension's
 * call returning to @via_ret (0: none) of Ruby's function @via_api, whose
 * trampoline's frame is @via_frame: the allocating call and the watched
 * call on the way, without frame pointers; the frames as they are, with
 * them. Returns: how many. */
static int chain_at_call(Frame *frames, uintptr_t caller, uintptr_t caller_fp, uintptr_t via_ret,
                         uintptr_t via_api, uintptr_t via_frame)
{
    int n = 0;
    frames[n++].ret = caller;
    /* the client library's trampoline called here (--growth): its
     * caller's call too (its frame is the one caller_fp names) */
    if (alloc_mode == MODE_CALL && caller == client_via_return && client_via_return != 0)
        frames[n++].ret = ((const Frame *) caller_fp)->ret;
    if (alloc_mode == MODE_CALL && via_ret != 0) {
        frames[n++].ret = via_api + 1;
        frames[n++].ret = (uintptr_t) gemleak_via_return;
        frames[n++].ret = via_ret;
        /* the client library's trampoline called Ruby's function
         * through this one: the extension's call is its frame's, the
         * one this trampoline's saved */
        if (via_ret == client_via_return && client_via_return != 0)
            frames[n++].ret = ((const Frame *) ((const Frame *) via_frame)->next)->ret;
    }
    if (alloc_mode == MODE_FRAMES)
        n = alloc_copy_chain(caller_fp, frames, n);
    return n;
}

/* Fills @frames with the whole stack of an allocation by a call returning
 * to @caller (whole_stack(), or its site's first), unwound now to @depth
 * program counters, after the mark.
 * Returns: how many; 0 when the unwinder lost its way. */
static int chain_whole(Frame *frames, Thread *thread, uintptr_t caller, int depth)
{
    uintptr_t pcs[MAX_FRAMES - 1];
    thread->busy++;  /* what the unwinder allocates goes straight */
    int unwound = exact_unwind(caller, pcs, depth);
    thread->busy--;
    if (unwound == 0)
        return 0;
    frames[0].ret = (uintptr_t) gemleak_exact + 1;
    for (int i = 0; i < unwound; i++)
        frames[i + 1].ret = pcs[i];
    return unwound + 1;
}

/* Returns: 1 if the leak of a block allocated by a call returning to
 * @caller, from a function whose frame is @fp, would be judged: made by
 * code outside Ruby's own and the loader's, or under an extension's call
 * of Ruby's allocation functions. What Ruby's code allocates outside such
 * a call is Ruby's (gemleak(1), RULES, 2). */
static inline int judged(uintptr_t caller, uintptr_t fp)
{
    uintptr_t via_ret = 0, via_api = 0, via_frame = 0;
    if (alloc_via_find(fp, &via_ret, &via_api, &via_frame))
        return 1;
    return !in_ruby(caller) && !(caller >= loader_low && caller < loader_high);
}

/* A block parked (alloc_held.c), or one it made to list them, is nobody's:
 * --growth counts it no more, as if freed (the runtime's hook counted it as
 * the call's). */
static void parked(void *block)
{
    if (free_hook != NULL)
        free_hook(block);
}

/* Before a judged allocation of @fresh_size bytes kept from recent
 * addresses (0: none): a block of its size class parked long enough ago
 * is freed, unrecorded, and the runtime hands it out to the call (the
 * block freed last of the class, from the thread's cache), where the call
 * would likely get one freed of late, park it and call again (fresh()). */
static inline void old_ahead(size_t fresh_size)
{
    if (fresh_size == 0)
        return;
    void *old = alloc_held_old(fresh_size);
    if (old != NULL)
        ((void (*)(void *)) next_fn[F_FREE])(old);
}

/* The most times one allocation calls the runtime again (fresh()). */
#define FRESH_TRIES 4

typedef uintptr_t (*Runtime3)(uintptr_t, uintptr_t, uintptr_t);

/* Makes @call, a judged allocation (fresh_bytes()), again while the block
 * it returned (call->result, or *@out when @out is not NULL: posix_memalign,
 * whose result is its status; @size bytes, 0: not followed) sits at an
 * address freed of late (alloc_held.c): the block is parked, and a block
 * of its size parked long enough ago freed first, which the runtime then
 * hands out. @sp and @chain are what gl_alloc_call() was given; @direct:
 * the runtime was called as it is. */
static void fresh(Call *call, void **out, size_t size, uintptr_t sp, uintptr_t chain, int direct)
{
    if (size == 0)
        return;
    for (int tries = 0; tries < FRESH_TRIES; tries++) {
        void *block = out == NULL ? (void *) call->result : call->result == 0 ? *out : NULL;
        if (block == NULL || !alloc_held_recent(block, size))
            return;
        void *old = NULL;
        if (!alloc_held_park(block, size, &old))
            return;
        parked(block);
        if (old != NULL)
            ((void (*)(void *)) next_fn[F_FREE])(old);
        if (direct)
            call->result = ((Runtime3) call->fn)(call->a, call->b, call->c);
        else
            gl_alloc_call(call, sp, chain);
    }
}

/* Before a judged realloc, which fills the block it moves to, where
 * fresh() could not make the call again: the block the runtime would hand
 * out for @size bytes (its allocator gives the one freed last of the size
 * class, on this thread) is taken, and parked while its address was freed
 * of late, then left for the call, freed again unrecorded. */
static void fresh_ahead(size_t size)
{
    old_ahead(size);
    for (int tries = 0; tries <= FRESH_TRIES; tries++) {
        void *peek = ((void *(*)(size_t)) next_fn[F_MALLOC])(size);
        if (peek == NULL)
            return;
        void *old = NULL;
        if (tries == FRESH_TRIES || !alloc_held_recent(peek, size) ||
            !alloc_held_park(peek, size, &old)) {
            ((void (*)(void *)) next_fn[F_FREE])(peek);
            return;
        }
        parked(peek);
        if (old != NULL)
            ((void (*)(void *)) next_fn[F_FREE])(old);
    }
}

/* Returns: 1 if an allocation by a call returning to @caller, from a
 * function whose frame is @fp, is judged (judged()) and something is to
 * be done for it: kept from recent addresses (alloc_held.c), or its owner
 * recorded (alloc_owners.c). */
static inline int judged_now(uintptr_t caller, uintptr_t fp)
{
    return !alloc_thread.busy &&
           (__atomic_load_n(&alloc_held_on, __ATOMIC_RELAXED) ||
            __atomic_load_n(&alloc_owner_current, __ATOMIC_RELAXED) != NULL) &&
           judged(caller, fp);
}

/* Returns: the bytes of a judged allocation (@judged_: judged_now()) of
 * @size bytes kept from recent addresses; 0: none. */
static inline size_t fresh_bytes(int judged_, size_t size)
{
    return judged_ && size != 0 && size <= ALLOC_HELD_MAX &&
                   __atomic_load_n(&alloc_held_on, __ATOMIC_RELAXED)
               ? size
               : 0;
}

/* What becomes of a block an allocation returned (@block, NULL: none):
 * @owner's (0: nobody's) when the call was judged. */
static inline void owned(const void *block, uint32_t owner)
{
    if (block != NULL && owner != 0)
        alloc_owners_put(block, owner);
}

/* An allocation that goes to the runtime as it is (straight()) while
 * recent addresses are kept from judged blocks: called, not jumped to, so
 * that the block it returns can be looked at; the runtime's unwinder walks
 * this library's frames (which the reader passes over) to the same caller. */
static __attribute__((noinline)) uintptr_t straight_fresh(int f, void **out, size_t size,
                                                          uint32_t owner, uintptr_t a, uintptr_t b,
                                                          uintptr_t c)
{
    Call call = { .fn = next_fn[f], .a = a, .b = b, .c = c };
    call.result = ((Runtime3) call.fn)(a, b, c);
    fresh(&call, out, size, 0, 0, 1);
    owned(out == NULL ? (void *) call.result : call.result == 0 ? *out : NULL, owner);
    return call.result;
}

/* What a call on the scratch stack leaves below @sp is cleared as it
 * returns: the runtime's frames keep the block's address there, and the
 * check scans the whole of a thread's stack when it finds the thread off
 * it (inside a Fiber): a block lost in a Fiber on another thread passed,
 * its address still in the scratch stack (a hostile trial: 5 runs in 5).
 * LeakSanitizer's allocation, with the hooks of gemleak's client, went 2
 * to 4 KiB deep there (2 KiB cleared left the address, 4 KiB did not);
 * twice that is cleared, within the smallest scratch stack below its
 * chain (alloc_stack.c: THREAD_SCRATCH, 32 KiB). make bench, section 10,
 * the reactor's 2,000 fibers on the stock Ruby: 1.10x the floor clean,
 * 1.16x leaking (the guide's rows before it: 1.06x, 1.17x; the machine
 * moves more between invocations). */
#define SCRATCH_WIPE ((size_t) 8 * 1024)
static inline void wipe_scratch(uintptr_t sp)
{
    memset((void *) (sp - SCRATCH_WIPE), 0, SCRATCH_WIPE);
}

/* Returns: the bytes a block of @size aligned to @alignment holds at least
 * (the runtime rounds the size up to an alignment above 16); 0 when that
 * overflows, or @alignment is not a power of two. */
static inline size_t aligned_size(size_t size, size_t alignment)
{
    if (alignment <= 16)
        return size;
    size_t rounded = (size + alignment - 1) & ~(alignment - 1);
    return (alignment & (alignment - 1)) != 0 || rounded < size ? 0 : rounded;
}

/* Calls @call with a chain the runtime can judge (alloc.c's comment says
 * which), for an allocation function whose frame was @fp (its caller's
 * frame pointer @caller_fp) and whose caller is @caller, of a block of
 * @size: the block is call->result, or *@out when @out is not NULL
 * (posix_memalign, whose result is its status). Its return address is the
 * one frame of this library's the runtime records, before the chain. A
 * block of @fresh_size bytes (0: none) is kept from recent addresses
 * (fresh()); the block is @owner's (0: nobody's), said first in its chain
 * (owner_framed()) or in alloc_owners.c's table; @judged_:
 * the call is judged (judged_now()), and may be its site's first. */
static __attribute__((noinline)) uintptr_t front(Call *call, uintptr_t caller, uintptr_t fp,
                                                  uintptr_t caller_fp, size_t size, void **out,
                                                  size_t fresh_size, uint32_t owner, int judged_)
{
    Thread *thread = &alloc_thread;
    /* A thread is known from its start (alloc_stack.c); one that is not
     * (the C library's own) runs on its own stack. Never looked up here:
     * pthread_getattr_np allocates with a lock held. */
    int own = alloc_on_own_stack(thread, fp);
    uintptr_t via_ret = 0, via_api = 0, via_frame = 0;
    int via = alloc_via_find(fp, &via_ret, &via_api, &via_frame);
    int hidden_here = 0;
    int whole = 0;
    if (!thread->busy) {
        if (whole_stack(thread, caller, via ? via_ret : 0) && (via || !for_ruby(thread, caller))) {
            whole = 1;
            __atomic_fetch_sub(&whole_left, 1, __ATOMIC_RELAXED);
        } else if (judged_ && sites_on) {
            whole = alloc_sites_claim(caller, via ? via_ret : 0);
        }
    }
    /* the owner in the stack, first in the chain (owner_framed()) */
    int framed = !thread->busy && owner_framed(owner);
    if (alloc_mode == MODE_OFF || thread->busy || (own && alloc_mode == MODE_FRAMES && !whole)) {
        /* with frame pointers, the owner's frame before the allocating
         * call's, and the frames as they are from there */
        Frame chain[2] = { { .next = 0, .ret = owner_pc(owner) }, { .next = caller_fp, .ret = caller } };
        chain[0].next = (uintptr_t) &chain[1];
        uintptr_t start = framed ? (uintptr_t) chain : 0;
        gl_alloc_call(call, 0, start);
        fresh(call, out, fresh_size, 0, start, 0);
    } else {
        Frame all[MAX_FRAMES + 1];
        Frame *frames = all + 1;
        int n = whole ? chain_whole(frames, thread, caller, whole_frames - framed) : 0;
        if (n == 0)
            n = chain_at_call(frames, caller, caller_fp, via ? via_ret : 0, via_api, via_frame);
        if (framed) {
            frames = all;
            frames[0].ret = owner_pc(owner);
            n++;
        }
        if (own) {
            for (int i = 0; i < n; i++)
                frames[i].next = i + 1 < n ? (uintptr_t) &frames[i + 1] : 0;
            gl_alloc_call(call, 0, (uintptr_t) frames);
            fresh(call, out, fresh_size, 0, (uintptr_t) frames, 0);
        } else if (thread->scratch != 0 && !thread->on_scratch) {
            Frame *placed = (Frame *) (thread->scratch - (uintptr_t) n * sizeof(Frame));
            for (int i = 0; i < n; i++) {
                placed[i].ret = frames[i].ret;
                placed[i].next = i + 1 < n ? (uintptr_t) &placed[i + 1] : 0;
            }
            uintptr_t sp = ((uintptr_t) placed - 64) & ~(uintptr_t) 15;
            thread->on_scratch = 1;
            gl_alloc_call(call, sp, (uintptr_t) placed);
            fresh(call, out, fresh_size, sp, (uintptr_t) placed, 0);
            wipe_scratch(sp);
            thread->on_scratch = 0;
        } else {
            gl_alloc_call(call, 0, 0);
            fresh(call, out, fresh_size, 0, 0, 0);
            hidden_here = 1;
        }
    }
    void *block = out == NULL ? (void *) call->result : call->result == 0 ? *out : NULL;
    if (block != NULL) {
        /* a block the check cannot judge: its owner, judged or not; a
         * block without its owner in its stack: the owner in the table */
        if (hidden_here)
            owned(block, owner != 0 ? owner : alloc_owner_now());
        else if (!framed)
            owned(block, owner);
        if (hidden_here)
            hide(block, size);
        if (exact_on && exact_wanted(caller, via ? via_ret : 0, size))
            exact_record(block, caller);
    }
    return call->result;
}

#define CALLER ((uintptr_t) __builtin_return_address(0))
#define HERE ((uintptr_t) __builtin_frame_address(0))
#define CALLER_FP (*(const uintptr_t *) __builtin_frame_address(0))
#define NEXT(f, type) ((type) next_fn[f])

/* Returns: 1 if an allocation by Ruby's own code (@caller), from a
 * function whose frame is @fp, goes to the runtime as it is, decided
 * before anything else is read: no extension's call of Ruby's allocation
 * functions on this thread (so none on the way: not judged, judged_now()),
 * the thread's own stack, no exact pass; straight() says the same of it.
 * Most allocations of a suite are Ruby's own: this is their whole cost. */
static inline __attribute__((always_inline)) int ruby_straight(uintptr_t caller, uintptr_t fp)
{
    return alloc_n_vias == 0 && in_ruby(caller) && !exact_on && alloc_on_own_stack(&alloc_thread, fp);
}

/* The body of an allocation function: the runtime's @f straight (a tail
 * call) when ruby_straight(), else DECIDE(). */
#define BODY(type, f, cast, size_, fresh_, a_, b_, c_, ...)                                  \
    uintptr_t caller = CALLER;                                                              \
    if (ruby_straight(caller, HERE))                                                        \
        return NEXT(f, type)(__VA_ARGS__);                                                  \
    DECIDE(type, f, cast, size_, fresh_, a_, b_, c_, caller, HERE, CALLER_FP, __VA_ARGS__)

/* What an allocation function does with a call that is not Ruby's own
 * straight (ruby_straight()): the runtime's @f straight when straight(),
 * else through front(); a block of @size, of which @fresh_ bytes are kept
 * from recent addresses (alloc_held.c; 0: none). @caller, @here and
 * @caller_fp: the allocation function's caller, its frame and its
 * caller's frame pointer. */
#define DECIDE(type, f, cast, size_, fresh_, a_, b_, c_, caller, here, caller_fp, ...)       \
    int judged_ = judged_now(caller, here);                                                 \
    size_t fresh_size = fresh_bytes(judged_, (fresh_));                                     \
    uint32_t owner = judged_ ? alloc_owner_now() : 0;                                       \
    old_ahead(fresh_size);                                                                  \
    if (straight(caller, here, (size_), judged_) && !owner_framed(owner)) {                 \
        if (fresh_size == 0 && owner == 0)                                                  \
            return NEXT(f, type)(__VA_ARGS__);                                              \
        return (cast) straight_fresh(f, NULL, fresh_size, owner, (uintptr_t) (a_),            \
                                     (uintptr_t) (b_), (uintptr_t) (c_));                   \
    }                                                                                       \
    Call call = { .fn = next_fn[f], .a = (uintptr_t) (a_), .b = (uintptr_t) (b_),           \
                  .c = (uintptr_t) (c_) };                                                  \
    return (cast) front(&call, caller, here, caller_fp, (size_), NULL, fresh_size, owner, judged_)

typedef void *(*Sized)(size_t);
typedef void *(*Pair)(size_t, size_t);
typedef void *(*WithTag)(size_t, const void *);
typedef void *(*Triple)(size_t, size_t, const void *);
typedef void *(*Moved)(void *, size_t);
typedef void *(*MovedArray)(void *, size_t, size_t);
typedef int (*Aligned)(void **, size_t, size_t);
typedef char *(*Dup)(const char *);
typedef char *(*DupN)(const char *, size_t);

/* ---- the allocation functions ------------------------------------------------ */

/* malloc and calloc, the allocation functions Ruby calls most, in two:
 * the function itself decides Ruby's own calls (ruby_straight()) and jumps
 * to the runtime, and leaves every other call to a function of its own
 * (malloc_decide(), calloc_decide()), called last with what the function
 * read of its caller and frame. So the common path saves no register and
 * reserves no stack for the other's locals: some 50 instructions a call
 * became 37 (Callgrind, strscan's suite). The call is a sibling call, as
 * the runtime's is: the function's frame gone before the other's is made,
 * the runtime's caller the allocating call (the dynamic loader's
 * allocations, which the runtime takes for reachable by their caller,
 * among them: test_front_leaves_the_loaders_allocations_its_own). */
static __attribute__((noinline)) void *malloc_decide(size_t size, uintptr_t caller, uintptr_t here,
                                                      uintptr_t caller_fp)
{
    if (next_fn[F_MALLOC] == 0) {
        find_next();
        if (next_fn[F_MALLOC] == 0)
            return boot_alloc(size);
    }
    DECIDE(Sized, F_MALLOC, void *, size, size, size, 0, 0, caller, here, caller_fp, size);
}

void *malloc(size_t size)
{
    uintptr_t caller = CALLER;
    uintptr_t run = next_fn[F_MALLOC];
    if (__builtin_expect(run != 0 && ruby_straight(caller, HERE), 1))
        return ((Sized) run)(size);
    return malloc_decide(size, caller, HERE, CALLER_FP);
}

static __attribute__((noinline)) void *calloc_decide(size_t count, size_t size, uintptr_t caller,
                                                      uintptr_t here, uintptr_t caller_fp)
{
    if (next_fn[F_CALLOC] == 0) {
        find_next();
        if (next_fn[F_CALLOC] == 0)
            return count != 0 && size > SIZE_MAX / count ? NULL : boot_alloc(count * size);
    }
    DECIDE(Pair, F_CALLOC, void *, count * size,
           count != 0 && size > SIZE_MAX / count ? 0 : count * size, count, size, 0, caller, here,
           caller_fp, count, size);
}

void *calloc(size_t count, size_t size)
{
    uintptr_t caller = CALLER;
    uintptr_t run = next_fn[F_CALLOC];
    if (__builtin_expect(run != 0 && ruby_straight(caller, HERE), 1))
        return ((Pair) run)(count, size);
    return calloc_decide(count, size, caller, HERE, CALLER_FP);
}

/* What a reallocation leaves: the old block forgotten where it moved, and
 * the client library told (its owners). */
static void *reallocated(void *block, void *moved, size_t size)
{
    if (moved == NULL && size != 0)
        return moved;
    if (block != NULL && block != moved) {
        unhide(block);
        if (exact_on)
            exact_forget(block);
        if (__atomic_load_n(&alloc_owner_current, __ATOMIC_RELAXED) != NULL)
            alloc_owners_freed(block);
    }
    for (int i = 0; i < REALLOC_HOOKS && realloc_hooks[i] != NULL; i++)
        realloc_hooks[i](block, moved);
    return moved;
}

/* The runtime's realloc calls no hook: the block it leaves is forgotten
 * here, and the one it returns judged as any allocation's
 * (realloc_decide(), called last as malloc_decide() is). Ruby's own
 * (ruby_straight()) of a block nothing keeps (in no table, no test's, no
 * hook to tell) is the runtime's realloc as it is, jumped to. */
static __attribute__((noinline)) void *realloc_decide(void *block, size_t size, uintptr_t caller,
                                                       uintptr_t here, uintptr_t caller_fp)
{
    if (from_boot(block)) {
        void *moved = malloc(size);
        size_t left = (size_t) (boot + BOOT_BYTES - (unsigned char *) block);
        if (moved != NULL)
            memcpy(moved, block, size < left ? size : left);
        return moved;
    }
    if (!next_found(F_REALLOC)) {
        errno = ENOMEM;
        return NULL;
    }
    if (ruby_straight(caller, here))
        return reallocated(block, NEXT(F_REALLOC, Moved)(block, size), size);
    int judged_ = judged_now(caller, here);
    if (fresh_bytes(judged_, size) != 0)
        fresh_ahead(size);
    Call call = { .fn = next_fn[F_REALLOC], .a = (uintptr_t) block, .b = size };
    void *moved = (void *) front(&call, caller, here, caller_fp, size, NULL, 0,
                                 judged_ ? alloc_owner_now() : 0, judged_);
    return reallocated(block, moved, size);
}

void *realloc(void *block, size_t size)
{
    uintptr_t caller = CALLER;
    uintptr_t run = next_fn[F_REALLOC];
    if (__builtin_expect(run != 0 && !from_boot(block) && ruby_straight(caller, HERE) &&
                             realloc_hooks[0] == NULL && (block == NULL || kept_nowhere(block)),
                         1))
        return ((Moved) run)(block, size);
    return realloc_decide(block, size, caller, HERE, CALLER_FP);
}

void *reallocarray(void *block, size_t count, size_t size)
{
    if (!next_found(F_REALLOCARRAY)) {
        errno = ENOMEM;
        return NULL;
    }
    Call call = { .fn = next_fn[F_REALLOCARRAY], .a = (uintptr_t) block, .b = count, .c = size };
    int judged_ = judged_now(CALLER, HERE);
    void *moved = (void *) front(&call, CALLER, HERE, CALLER_FP, count * size, NULL, 0,
                                 judged_ ? alloc_owner_now() : 0, judged_);
    return reallocated(block, moved, count * size);
}

/* free in two, as malloc: the function itself records the free of a block
 * nothing else keeps (no hook, no table of the blocks the check cannot
 * judge nor of the exact pass's, no owner's bit) and jumps to the
 * runtime; every other free goes through free_decide() (released()). */
static __attribute__((noinline)) void free_decide(void *block)
{
    if (block == NULL || from_boot(block))
        return;
    released(block);
    if (next_found(F_FREE))
        ((void (*)(void *)) next_fn[F_FREE])(block);
}

void free(void *block)
{
    if (block == NULL)
        return;
    uintptr_t run = next_fn[F_FREE];
    if (__builtin_expect(run != 0 && !from_boot(block) && free_hook == NULL && kept_nowhere(block),
                         1)) {
        alloc_held_freed(block);
        ((void (*)(void *)) run)(block);
        return;
    }
    free_decide(block);
}

void gemleak_alloc_exiting(void)
{
    alloc_held_stop();
}

/* alloc_held_start()'s -1: kept from no recent address. */
static int recent_unkept;

int gemleak_alloc_recent_unkept(void)
{
    return recent_unkept;
}

void cfree(void *block)
{
    free(block);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!next_found(F_POSIX_MEMALIGN))
        return ENOMEM;
    uintptr_t caller = CALLER;
    int judged_ = judged_now(caller, HERE);
    size_t fresh_size = fresh_bytes(judged_, aligned_size(size, alignment));
    uint32_t owner = judged_ ? alloc_owner_now() : 0;
    old_ahead(fresh_size);
    if (straight(caller, HERE, size, judged_) && !owner_framed(owner)) {
        if (fresh_size == 0 && owner == 0)
            return NEXT(F_POSIX_MEMALIGN, Aligned)(out, alignment, size);
        return (int) straight_fresh(F_POSIX_MEMALIGN, out, fresh_size, owner, (uintptr_t) out,
                                    alignment, size);
    }
    Call call = { .fn = next_fn[F_POSIX_MEMALIGN], .a = (uintptr_t) out, .b = alignment, .c = size };
    return (int) front(&call, caller, HERE, CALLER_FP, size, out, fresh_size, owner, judged_);
}

#define SIZED(name, f, fresh)                                                           \
    void *name(size_t size)                                                             \
    {                                                                                   \
        if (!next_found(f)) {                                                           \
            errno = ENOMEM;                                                             \
            return NULL;                                                                \
        }                                                                               \
        BODY(Sized, f, void *, size, fresh, size, 0, 0, size);                          \
    }
/* a page each: above what is kept from recent addresses */
SIZED(valloc, F_VALLOC, 0)
SIZED(pvalloc, F_PVALLOC, 0)
SIZED(_Znwm, F_NEW, size)
SIZED(_Znam, F_NEW_ARRAY, size)

#define ALIGNED(name, f)                                                                \
    void *name(size_t alignment, size_t size)                                           \
    {                                                                                   \
        if (!next_found(f)) {                                                           \
            errno = ENOMEM;                                                             \
            return NULL;                                                                \
        }                                                                               \
        BODY(Pair, f, void *, size, aligned_size(size, alignment), alignment, size, 0, alignment, \
             size);                                                                     \
    }
ALIGNED(aligned_alloc, F_ALIGNED_ALLOC)
ALIGNED(memalign, F_MEMALIGN)
ALIGNED(__libc_memalign, F_LIBC_MEMALIGN)

void *_ZnwmSt11align_val_t(size_t size, size_t alignment)
{
    if (!next_found(F_NEW_ALIGNED))
        return NULL;
    BODY(Pair, F_NEW_ALIGNED, void *, size, aligned_size(size, alignment), size, alignment, 0, size,
         alignment);
}

void *_ZnamSt11align_val_t(size_t size, size_t alignment)
{
    if (!next_found(F_NEW_ARRAY_ALIGNED))
        return NULL;
    BODY(Pair, F_NEW_ARRAY_ALIGNED, void *, size, aligned_size(size, alignment), size, alignment, 0,
         size, alignment);
}

void *_ZnwmRKSt9nothrow_t(size_t size, const void *tag)
{
    if (!next_found(F_NEW_NOTHROW))
        return NULL;
    BODY(WithTag, F_NEW_NOTHROW, void *, size, size, size, tag, 0, size, tag);
}

void *_ZnamRKSt9nothrow_t(size_t size, const void *tag)
{
    if (!next_found(F_NEW_ARRAY_NOTHROW))
        return NULL;
    BODY(WithTag, F_NEW_ARRAY_NOTHROW, void *, size, size, size, tag, 0, size, tag);
}

void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const void *tag)
{
    if (!next_found(F_NEW_ALIGNED_NOTHROW))
        return NULL;
    BODY(Triple, F_NEW_ALIGNED_NOTHROW, void *, size, aligned_size(size, alignment), size,
         alignment, tag, size, alignment, tag);
}

void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const void *tag)
{
    if (!next_found(F_NEW_ARRAY_ALIGNED_NOTHROW))
        return NULL;
    BODY(Triple, F_NEW_ARRAY_ALIGNED_NOTHROW, void *, size, aligned_size(size, alignment), size,
         alignment, tag, size, alignment, tag);
}

/* operator delete, each form to the runtime's own (a delete given to
 * free() is a mismatch AddressSanitizer reports), after released(). */
#define DELETE(name, f, params, ...)                                                    \
    void name params                                                                    \
    {                                                                                   \
        if (block == NULL || from_boot(block))                                          \
            return;                                                                     \
        released(block);                                                                \
        if (next_found(f))                                                              \
            ((void (*) params) next_fn[f])(__VA_ARGS__);                                \
    }
DELETE(_ZdlPv, F_DELETE, (void *block), block)
DELETE(_ZdaPv, F_DELETE_ARRAY, (void *block), block)
DELETE(_ZdlPvm, F_DELETE_SIZED, (void *block, size_t size), block, size)
DELETE(_ZdaPvm, F_DELETE_ARRAY_SIZED, (void *block, size_t size), block, size)
DELETE(_ZdlPvRKSt9nothrow_t, F_DELETE_NOTHROW, (void *block, const void *tag), block, tag)
DELETE(_ZdaPvRKSt9nothrow_t, F_DELETE_ARRAY_NOTHROW, (void *block, const void *tag), block, tag)
DELETE(_ZdlPvSt11align_val_t, F_DELETE_ALIGNED, (void *block, size_t alignment), block, alignment)
DELETE(_ZdaPvSt11align_val_t, F_DELETE_ARRAY_ALIGNED, (void *block, size_t alignment), block,
       alignment)
DELETE(_ZdlPvmSt11align_val_t, F_DELETE_SIZED_ALIGNED, (void *block, size_t size, size_t alignment),
       block, size, alignment)
DELETE(_ZdaPvmSt11align_val_t, F_DELETE_ARRAY_SIZED_ALIGNED,
       (void *block, size_t size, size_t alignment), block, size, alignment)
DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, F_DELETE_ALIGNED_NOTHROW,
       (void *block, size_t alignment, const void *tag), block, alignment, tag)
DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, F_DELETE_ARRAY_ALIGNED_NOTHROW,
       (void *block, size_t alignment, const void *tag), block, alignment, tag)

/* strdup and strndup are AddressSanitizer's own allocation functions (the
 * C library's call malloc, which comes here anyway, and is kept from recent
 * addresses there). */
char *strdup(const char *text)
{
    if (!next_found(F_STRDUP))
        return NULL;
    BODY(Dup, F_STRDUP, char *, strlen(text) + 1, 0, text, 0, 0, text);
}

char *__strdup(const char *text)
{
    if (!next_found(F_STRDUP2))
        return NULL;
    BODY(Dup, F_STRDUP2, char *, strlen(text) + 1, 0, text, 0, 0, text);
}

char *strndup(const char *text, size_t size)
{
    if (!next_found(F_STRNDUP))
        return NULL;
    BODY(DupN, F_STRNDUP, char *, strnlen(text, size) + 1, 0, text, size, 0, text, size);
}

/* An extension loaded now: its calls of Ruby's allocation functions are
 * watched, and it may hold the exact pass's sites. */
void *dlopen(const char *file, int mode)
{
    if (!next_found(F_DLOPEN))
        return NULL;
    void *handle = ((void *(*)(const char *, int)) next_fn[F_DLOPEN])(file, mode);
    if (handle != NULL && alloc_mode != MODE_OFF) {
        alloc_via_patch();
        if (exact_on)
            exact_resolve();
    }
    return handle;
}

void gemleak_alloc_on_realloc(void (*hook)(void *block, void *moved))
{
    for (int i = 0; i < REALLOC_HOOKS; i++)
        if (realloc_hooks[i] == NULL || realloc_hooks[i] == hook) {
            __atomic_store_n(&realloc_hooks[i], hook, __ATOMIC_RELEASE);
            return;
        }
}

void gemleak_alloc_on_free(void (*hook)(const volatile void *block))
{
    __atomic_store_n(&free_hook, hook, __ATOMIC_RELEASE);
}

void gemleak_alloc_on_via(const void *via_return)
{
    __atomic_store_n(&client_via_return, (uintptr_t) via_return, __ATOMIC_RELEASE);
}

void gemleak_alloc_requiring(int on)
{
    Thread *thread = &alloc_thread;
    if (on)
        thread->requiring++;
    else if (thread->requiring > 0)
        thread->requiring--;
}

/* ---- before a check ------------------------------------------------------------- */

static AgentReportLine report_line;

void gemleak_alloc_checking(int on)
{
    if (alloc_mode != MODE_OFF)
        alloc_stack_checking(on);
}

void gemleak_alloc_before_check(void)
{
    if (report_line == NULL || alloc_mode == MODE_OFF)
        return;
    static char line[256];
    alloc_thread.busy++;
    snprintf(line, sizeof line, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_UNWOUND "\t%s",
             alloc_mode == MODE_CALL ? GL_PROTO_UNWOUND_CALL : GL_PROTO_UNWOUND_FRAMES);
    report_line(line);
    Dl_info info;
    if (dladdr(owner_frames, &info) != 0 && info.dli_fbase != NULL) {
        snprintf(line, sizeof line, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNER_FRAMES "\t%lx",
                 (unsigned long) ((uintptr_t) owner_frames - (uintptr_t) info.dli_fbase));
        report_line(line);
    }
    if (hidden.used > 0) {
        pthread_mutex_lock(&hidden_lock);
        report_line(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_HIDDEN);  /* the list begins */
        for (size_t i = hidden_table_next(&hidden, 0); i < hidden.capacity;
             i = hidden_table_next(&hidden, i + 1)) {
            snprintf(line, sizeof line, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_HIDDEN "\t%zu\t%lx",
                     (size_t) hidden.slots[i].value, (unsigned long) HIDDEN_KEY(hidden.slots[i].key));
            report_line(line);
        }
        pthread_mutex_unlock(&hidden_lock);
    }
    if (exact_on)
        exact_write_table();
    alloc_thread.busy--;
}

/* ---- the start ----------------------------------------------------------------- */

static int loader_range(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    if ((uintptr_t) info->dlpi_addr != *(const uintptr_t *) data)
        return 0;
    alloc_module_code(info, &loader_low, &loader_high);
    return 1;
}

/* The dynamic loader's code (AT_BASE: where the kernel mapped it). */
static void find_loader(void)
{
    uintptr_t base = (uintptr_t) getauxval(AT_BASE);
    if (base != 0)
        dl_iterate_phdr(loader_range, &base);
}

/* The C library's code: the module gnu_get_libc_version is in (no
 * runtime intercepts it). */
static void find_libc(void)
{
    AllocModule libc = { .pc = (uintptr_t) gnu_get_libc_version };
    alloc_module_find(&libc);
    libc_low = libc.low;
    libc_high = libc.high;
}

/* Adds the executable code of the object @info to Ruby's own when it is
 * the program (the first the loader lists) or libruby. */
static int ruby_range(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    int *first = data;
    const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
    const char *base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;
    int program = *first;
    *first = 0;
    if (!program && strncmp(base, "libruby", strlen("libruby")) != 0)
        return 0;
    uintptr_t low, high;
    if (alloc_module_code(info, &low, &high) && n_ruby_ranges < MAX_RUBY_RANGES) {
        ruby_ranges[n_ruby_ranges].low = low;
        ruby_ranges[n_ruby_ranges].high = high;
        n_ruby_ranges++;
    }
    return 0;
}

/* The exact pass: the runtime's symbolizer and libgcc's unwinder, and the
 * sites of @path. Returns: 1 when all is there. */
static int exact_start(const char *path)
{
    if (!exact_write_start(report_line) || !exact_blocks_start())
        return 0;
    exact_read_sites(path);
    return 1;
}

static void before_fork(void)
{
    alloc_held_lock();
    alloc_owners_lock();
    pthread_mutex_lock(&hidden_lock);
    if (exact_on)
        pthread_mutex_lock(&exact_table.lock);
}

static void after_fork(void)
{
    if (exact_on)
        pthread_mutex_unlock(&exact_table.lock);
    pthread_mutex_unlock(&hidden_lock);
    alloc_owners_unlock();
    alloc_held_unlock();
}

/* The child writes a report of its own: the exact pass's frames and
 * stacks anew. Its only thread, the one that forked, keeps its stack. */
static void in_child(void)
{
    if (exact_on)
        exact_forget_written();
    after_fork();
}

/* The depth the runtimes keep of a stack by default (malloc_context_size),
 * which gemleak run sets too (GL_SANITIZER_STACK_LIMIT). */
#define RUNTIME_DEPTH 30

/* Returns: the depth the runtime keeps of a stack, its frames counted
 * (malloc_context_size, last given in @options; @otherwise when not). */
static int context_size(const char *options, int otherwise)
{
    static const char name[] = "malloc_context_size=";
    int size = otherwise;
    for (const char *at = options; at != NULL && (at = strstr(at, name)) != NULL; at++)
        if (at == options || at[-1] == ':' || at[-1] == ' ') {
            long given = strtol(at + sizeof name - 1, NULL, 10);
            size = given > 0 && given < INT_MAX ? (int) given : size;
        }
    return size;
}

/* Returns: how many program counters a whole stack needs, at most: all
 * the runtime keeps, as its options say (LeakSanitizer's or
 * AddressSanitizer's; RUNTIME_DEPTH when they say nothing), at most
 * MAX_FRAMES - 1. The runtime's own frames and this library's before
 * the chain count in its depth: a few more than it keeps, never fewer. */
static int whole_depth(void)
{
    int lsan = context_size(getenv("LSAN_OPTIONS"), RUNTIME_DEPTH);
    int asan = context_size(getenv("ASAN_OPTIONS"), RUNTIME_DEPTH);
    int depth = lsan > asan ? lsan : asan;
    return depth < MAX_FRAMES - 1 ? depth : MAX_FRAMES - 1;
}

__attribute__((constructor)) static void alloc_start(void)
{
    find_next();
    const char *mode = getenv(GL_PROTO_ALLOC_MODE_VARIABLE);
    /* The runtime's hooks are not installed: every free and delete passes
     * here first (released()), and realloc's old block (reallocated()). */
    AgentInstallHooks install;
    int runtime = agent_sanitizer_runtime(&install, &report_line);
    if (mode == NULL || !runtime || next_fn[F_MALLOC] == 0 || next_fn[F_FREE] == 0 ||
        !ALLOC_FRAMES)
        return;  /* no runtime here (a program the helper took it from): nothing to do */
    Mode wanted = strcmp(mode, GL_PROTO_UNWOUND_CALL) == 0     ? MODE_CALL
                  : strcmp(mode, GL_PROTO_UNWOUND_FRAMES) == 0 ? MODE_FRAMES
                                                               : MODE_OFF;
    if (wanted == MODE_OFF)
        return;
    /* The runtime bounds the main thread's stack as it starts: started now,
     * before the scratch stack is mapped below that stack. */
    void *sample = ((void *(*)(size_t)) next_fn[F_MALLOC])(1);
    ((void (*)(void *)) next_fn[F_FREE])(sample);
    if (pthread_atfork(before_fork, after_fork, in_child) != 0)
        return;
    find_loader();
    find_libc();
    int first = 1;
    dl_iterate_phdr(ruby_range, &first);
    can_unwind = exact_blocks_start();
    whole_frames = whole_depth();
    recent_unkept = alloc_held_start((void (*)(void *)) next_fn[F_FREE],
                                     (void *(*)(size_t, size_t)) next_fn[F_CALLOC], parked,
                                     sample) < 0;
    alloc_owners_init(sample);
    alloc_stack_start();
    alloc_via_start();
    const char *sites = getenv(GL_PROTO_EXACT_VARIABLE);
    if (sites != NULL && *sites != '\0' && exact_start(sites))
        exact_on = 1;
    alloc_mode = wanted;
    sites_on = wanted == MODE_CALL && !exact_on && can_unwind && alloc_sites_start();
    alloc_via_patch();
    if (exact_on)
        exact_resolve();
}
