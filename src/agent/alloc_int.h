/* What the allocation front's files share (gemleak_alloc.so, src/agent/
 * alloc*.c): the library gemleak preloads before a sanitizer's runtime
 * into every Ruby of a run that unwinds by frame pointers. alloc.c says
 * what it does; it calls alloc_held.c, alloc_sites.c, alloc_stack.c and
 * alloc_via.c, which call nothing of it (alloc_via.c reads alloc_stack.c's thread). The
 * exact pass's files are exact_int.h's. Hidden: nothing here is the
 * library's interface.
 *
 * Built on its own: no GLib; it runs inside the suite's Ruby. x86-64 only:
 * elsewhere the library is built without the stack switch and the calls it
 * watches (alloc_stack.c, alloc_via.c), and gemleak falls back on what the
 * runtime records itself. */
#ifndef GEMLEAK_AGENT_ALLOC_INT_H
#define GEMLEAK_AGENT_ALLOC_INT_H

#include <stddef.h>
#include <stdint.h>

#include <link.h>

#include "agent_int.h"
#include "via_int.h"

#if defined(__x86_64__)
#define ALLOC_FRAMES 1
#else
#define ALLOC_FRAMES 0
#endif

/* One frame of a chain the runtime's fast unwinder walks: the saved frame
 * pointer (the next frame, higher up), then the return address. */
typedef struct {
    uintptr_t next;
    uintptr_t ret;
} Frame;

/* The most frames a chain given to the runtime holds (the runtime keeps 30
 * program counters, GL_SANITIZER_STACK_LIMIT). */
#define MAX_FRAMES 64

/* A call of the runtime's allocation function @fn with up to three
 * integer arguments: what alloc_stack.c's gl_alloc_call makes, on the
 * stack and with the frame pointer it is given. Its layout is the
 * assembly's. */
typedef struct {
    uintptr_t fn;
    uintptr_t a, b, c;
    uintptr_t result;
} Call;

/* This thread, as the library knows it. */
typedef struct {
    uintptr_t low, high;    /* its stack as the runtime bounds it; high 0: not known */
    uintptr_t scratch;      /* the top of its scratch stack, inside those bounds; 0: none */
    int known;              /* low and high were looked up */
    int on_scratch;         /* a call runs on the scratch stack now */
    int busy;               /* this thread is in the library: what it allocates is not looked at */
    int requiring;          /* requires running on it (gemleak_alloc_requiring()) */
} Thread;

extern __thread Thread alloc_thread __attribute__((tls_model("initial-exec"))) AGENT_HIDDEN;

/* ---- alloc_held.c: addresses freed of late, kept from the blocks that count */

/* The largest block kept from recent addresses (bytes): larger ones are
 * few, and few stale words name them. */
#define ALLOC_HELD_MAX 1024

/* 1 while judged allocations are kept from recent addresses (started under
 * LeakSanitizer, not yet stopped). */
extern int alloc_held_on AGENT_HIDDEN;

/* Starts, where the runtime is LeakSanitizer (AddressSanitizer has its own
 * quarantine): @free_fn and @calloc_fn are the runtime's free and calloc,
 * @nobodys_fn says a block this library made for itself is no call's,
 * @sample a block the runtime's allocator handed out (where its space is).
 * Returns: 1 started, 0 not wanted here, -1 wanted and not started: its
 * shadow could not be mapped (a limit on address space, strict
 * overcommit). */
int alloc_held_start(void (*free_fn)(void *), void *(*calloc_fn)(size_t, size_t),
                     void (*nobodys_fn)(void *), const void *sample) AGENT_HIDDEN;

/* The shadow of recent frees (alloc_held.c says how it is kept): a byte
 * for each granule of the runtime's space of 2^ALLOC_HELD_SPAN_LOG bytes
 * at alloc_held_space, bit 7 set once the granule was freed, then the
 * count of frees then (alloc_held_count), in epochs of
 * 2^ALLOC_HELD_EPOCH_LOG frees. The space is in regions of
 * 2^ALLOC_HELD_REGION_LOG bytes (one a size class, in LeakSanitizer's
 * allocator), each with its part of the shadow, a byte for each
 * 2^ALLOC_HELD_GRANULE_LOG bytes at most: a region's granule is
 * 2^alloc_held_granule[region] bytes. Here, for free() to record a free
 * without a call. */
#define ALLOC_HELD_SPAN_LOG 42
#define ALLOC_HELD_REGION_LOG 36
#define ALLOC_HELD_REGIONS (1 << (ALLOC_HELD_SPAN_LOG - ALLOC_HELD_REGION_LOG))
#define ALLOC_HELD_GRANULE_LOG 4
#define ALLOC_HELD_EPOCH_LOG 11
#define ALLOC_HELD_FREED ((uint8_t) 0x80)
#define ALLOC_HELD_EPOCH_MASK 0x7F
extern uint8_t *alloc_held_shadow AGENT_HIDDEN;
extern uintptr_t alloc_held_space AGENT_HIDDEN;
/* How much of the space is followed, from its start: the regions of the
 * size classes of up to ALLOC_HELD_MAX bytes (alloc_held_start()). */
extern uintptr_t alloc_held_span AGENT_HIDDEN;
extern unsigned long alloc_held_count AGENT_HIDDEN;
/* Each region's granule, log 2 (ALLOC_HELD_GRANULE_LOG and up). */
extern uint8_t alloc_held_granule[ALLOC_HELD_REGIONS] AGENT_HIDDEN;

/* Returns: the shadow of @block, or NULL outside what is followed. */
static inline uint8_t *alloc_held_shadow_of(const void *block)
{
    uintptr_t offset = (uintptr_t) block - alloc_held_space;
    if (offset >= alloc_held_span)
        return NULL;
    uintptr_t region = offset >> ALLOC_HELD_REGION_LOG;
    uintptr_t within = offset & (((uintptr_t) 1 << ALLOC_HELD_REGION_LOG) - 1);
    return &alloc_held_shadow[(region << (ALLOC_HELD_REGION_LOG - ALLOC_HELD_GRANULE_LOG)) +
                              (within >> alloc_held_granule[region])];
}

/* Records @block (not NULL) freed now, as the runtime frees it. The count
 * is read and written without a lock: two threads freeing at once may
 * count one free (the window is then a free longer). */
static inline void alloc_held_freed(const void *block)
{
    if (!__atomic_load_n(&alloc_held_on, __ATOMIC_RELAXED))
        return;
    uint8_t *at = alloc_held_shadow_of(block);
    if (at == NULL)
        return;
    unsigned long now = __atomic_load_n(&alloc_held_count, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&alloc_held_count, now, __ATOMIC_RELAXED);
    *at = (uint8_t) (ALLOC_HELD_FREED | ((now >> ALLOC_HELD_EPOCH_LOG) & ALLOC_HELD_EPOCH_MASK));
}

/* Returns: 1 if @block, just allocated with @size bytes for a judged call,
 * sits at an address freed within the window: the call is to get another. */
int alloc_held_recent(const void *block, size_t size) AGENT_HIDDEN;

/* Parks @block (allocated with @size bytes, alloc_held_recent()), its bytes
 * cleared. *@old is then a block of the same size parked long enough ago,
 * taken out, or NULL: the caller frees it with the runtime's free, before
 * it calls the runtime again, which hands it out. Returns: 0 when @block
 * could not be parked (it is the caller's still). */
int alloc_held_park(void *block, size_t size, void **old) AGENT_HIDDEN;

/* Returns: a block parked long enough ago, of the size class of @size,
 * taken out; NULL: none, or the class of @size is not known. The caller
 * frees it with the runtime's free just before it calls the runtime for
 * @size bytes, which hands it out (the block freed last of its class), in
 * place of one freed of late and a second call. */
void *alloc_held_old(size_t size) AGENT_HIDDEN;

/* Nothing more is recorded or parked: Ruby's exit has begun
 * (gemleak_alloc_exiting()). */
void alloc_held_stop(void) AGENT_HIDDEN;

/* Around a fork: the parked blocks' lock. */
void alloc_held_lock(void) AGENT_HIDDEN;
void alloc_held_unlock(void) AGENT_HIDDEN;

/* ---- alloc_owners.c: the owners the blocks' stacks cannot carry --------- */

/* The client library's owner of what is allocated now (0: none), once it
 * handed the owners to this library; NULL until then. */
extern const volatile uint32_t *alloc_owner_current AGENT_HIDDEN;

/* Returns: the owner of a judged allocation made now; 0: none. */
static inline uint32_t alloc_owner_now(void)
{
    const volatile uint32_t *current = __atomic_load_n(&alloc_owner_current, __ATOMIC_ACQUIRE);
    return current != NULL ? *current : 0;
}

/* The runtime's space (LeakSanitizer's and AddressSanitizer's allocators
 * keep their blocks of up to 128 KiB in 2^OWNER_SPAN_LOG bytes, aligned
 * to their size), and a bit for each granule of it: alloc_owners.c. */
#define OWNER_SPAN_LOG 42
#define OWNER_GRANULE_LOG 4
extern uint64_t *alloc_owner_bits AGENT_HIDDEN;
extern uintptr_t alloc_owner_space AGENT_HIDDEN;

/* Returns: the word that holds @block's bit; NULL when it has none. */
static inline uint64_t *alloc_owner_word(const volatile void *block)
{
    uintptr_t offset = (uintptr_t) block - alloc_owner_space;
    if (alloc_owner_bits == NULL || offset >> OWNER_SPAN_LOG != 0)
        return NULL;
    return &alloc_owner_bits[offset >> (OWNER_GRANULE_LOG + 6)];
}

/* Blocks in the owners' table without a bit (alloc_owners.c). */
extern size_t alloc_owners_unmarked AGENT_HIDDEN;
/* Blocks in the owners' table (alloc_owners.c). */
extern size_t alloc_owners_count AGENT_HIDDEN;

/* Returns: 1 if @block may be in the owners' table: its bit is set, or it
 * has none and blocks without one are there. Read without the lock: a
 * block is put there by the allocation that returned it, before anyone
 * could free it. */
static inline int alloc_owners_may_hold(const volatile void *block)
{
    if (__atomic_load_n(&alloc_owners_count, __ATOMIC_RELAXED) == 0)
        return 0;
    const uint64_t *word = alloc_owner_word(block);
    if (word == NULL)
        return __atomic_load_n(&alloc_owners_unmarked, __ATOMIC_RELAXED) != 0;
    unsigned bit = (unsigned) ((((uintptr_t) block - alloc_owner_space) >> OWNER_GRANULE_LOG) % 64);
    return (int) ((__atomic_load_n(word, __ATOMIC_RELAXED) >> bit) & 1);
}

/* Records @block (not NULL), judged, as @owner's. */
void alloc_owners_put(const void *block, uint32_t owner) AGENT_HIDDEN;

/* @block is freed (free, an operator delete: alloc.c's released()), or
 * left by a reallocation. */
void alloc_owners_freed(const volatile void *block) AGENT_HIDDEN;

/* Around a fork: the table's lock. */
void alloc_owners_lock(void) AGENT_HIDDEN;
void alloc_owners_unlock(void) AGENT_HIDDEN;

/* The front is on in this process (alloc.c: it judges allocations and
 * sees every free); the runtime's space is where @sample is, a block
 * its allocator handed out (alloc_start()). */
void alloc_owners_init(const void *sample) AGENT_HIDDEN;

/* ---- alloc_sites.c: the allocation sites met so far ----------------------- */

/* Maps the table. Returns: 1 if it could (the others are called only then). */
int alloc_sites_start(void) AGENT_HIDDEN;

/* Returns: 1 if the site of @caller below the extension's call returning
 * to @via_ret (0: none) was met (claimed) in this process, or cannot be
 * told from one that was. */
int alloc_sites_met(uintptr_t caller, uintptr_t via_ret) AGENT_HIDDEN;

/* Returns: 1 if this call is the first at the site (and now claims it),
 * 0 if it was met before, or has no room. */
int alloc_sites_claim(uintptr_t caller, uintptr_t via_ret) AGENT_HIDDEN;

/* ---- alloc_stack.c: where a call of the runtime runs --------------------- */

/* Looks this thread's stack up, as the runtime bounds it (once a thread);
 * the main thread's at the start, with its scratch stack. Called when the
 * front is on, before it hands out its first chain: from then on each
 * thread created gets a scratch stack. */
void alloc_stack_start(void) AGENT_HIDDEN;
void alloc_thread_learn(Thread *thread) AGENT_HIDDEN;
/* As a leak check begins (@on 1) and ends (0): the main thread's scratch
 * stack is inaccessible while the runtime scans. Found off its stack (in a
 * Fiber, at exit! there), the main thread has the whole of its bounds
 * scanned, past the inaccessible pages at their bottom only: the scratch
 * stack there, then the unmapped gap above it, faulted the scan. */
void alloc_stack_checking(int on) AGENT_HIDDEN;

/* Returns: 1 if @sp is on this thread's own stack (as the runtime knows
 * it), 0 on another (a Fiber's, a coroutine's); 1 when not known. */
static inline int alloc_on_own_stack(const Thread *thread, uintptr_t sp)
{
    return thread->high == 0 || (sp > thread->low + 4096 && sp < thread->high);
}

/* Calls @call with the frame pointer @chain (the frames the runtime's
 * unwinder walks; 0: as it is), on @sp (0: where it runs now). */
void gl_alloc_call(Call *call, uintptr_t sp, uintptr_t chain) AGENT_HIDDEN;

/* Copies the frame-pointer chain that starts at @fp (a frame of the stack
 * the allocation runs on), within the mapping that holds it, into @frames
 * from @n on; returns how many frames there are then. */
int alloc_copy_chain(uintptr_t fp, Frame *frames, int n) AGENT_HIDDEN;

/* ---- alloc_via.c: the calls of Ruby's allocation functions an extension makes */

/* Reads the functions to watch (GL_PROTO_ALLOC_APIS_VARIABLE). */
void alloc_via_start(void) AGENT_HIDDEN;

/* Redirects, in every module loaded since the last time, the calls of
 * Ruby's allocation functions (through the module's GOT) to this library. */
void alloc_via_patch(void) AGENT_HIDDEN;

/* An extension's call of one of Ruby's allocation functions, running:
 * the trampoline's frame, the extension's return address, the function. */
typedef struct {
    uintptr_t frame;
    uintptr_t ret;
    uintptr_t api;
} Via;

#define MAX_VIAS 32

extern __thread Via alloc_vias[MAX_VIAS] __attribute__((tls_model("initial-exec"))) AGENT_HIDDEN;
extern __thread int alloc_n_vias __attribute__((tls_model("initial-exec"))) AGENT_HIDDEN;

/* The innermost watched call below which an allocation at @sp runs: the
 * extension's return address (*@ret), the function it called (*@api) and
 * the trampoline's frame (*@frame). Returns: 0 when none. */
static inline int alloc_via_find(uintptr_t sp, uintptr_t *ret, uintptr_t *api, uintptr_t *frame)
{
    for (int i = alloc_n_vias - 1; i >= 0; i--)
        if (alloc_vias[i].frame > sp && alloc_vias[i].frame - sp < VIA_REACH) {
            *ret = alloc_vias[i].ret;
            *api = alloc_vias[i].api;
            *frame = alloc_vias[i].frame;
            return 1;
        }
    return 0;
}

/* The return address inside the watching call (via_int.h's
 * gemleak_via_return): what a stack shows between the function called and
 * the extension that called it. */

/* Sets *@low and *@high to the bounds of the executable code of the
 * module @info (the dynamic loader's list, dl_iterate_phdr()).
 * Returns: 1 if the module has any. */
static inline int alloc_module_code(const struct dl_phdr_info *info, uintptr_t *low,
                                    uintptr_t *high)
{
    *low = 0;
    *high = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            uintptr_t start = (uintptr_t) info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            uintptr_t end = start + info->dlpi_phdr[i].p_memsz;
            *low = *low == 0 || start < *low ? start : *low;
            *high = end > *high ? end : *high;
        }
    return *high != 0;
}

/* A module of the process, found by an address in its code (@pc). */
typedef struct {
    uintptr_t pc;         /* in: the address */
    uintptr_t base;       /* out: its load bias (dlpi_addr) */
    uintptr_t low, high;  /* out: its code's bounds; 0 and 0 when none holds @pc */
} AllocModule;

static inline int alloc_module_holding(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    AllocModule *module = data;
    uintptr_t low, high;
    if (!alloc_module_code(info, &low, &high) || module->pc < low || module->pc >= high)
        return 0;
    module->base = (uintptr_t) info->dlpi_addr;
    module->low = low;
    module->high = high;
    return 1;
}

/* Fills @module, whose pc is set, from the dynamic loader's list: by the
 * program headers, not dladdr(), which walks a module's symbols for the
 * nearest (some 0.6M instructions for the C library's or Ruby's). */
static inline void alloc_module_find(AllocModule *module)
{
    module->base = module->low = module->high = 0;
    if (module->pc != 0)
        dl_iterate_phdr(alloc_module_holding, module);
}

#endif
