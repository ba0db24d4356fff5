/* Addresses freed of late, kept from the blocks that count (gemleak_alloc.so,
 * under LeakSanitizer): a block whose leak would be judged (one an
 * extension's code allocated, or Ruby's under an extension's call of its
 * allocation functions: alloc.c's judged()) never gets an address freed in
 * the last HELD_WINDOW frees.
 *
 * Why: a leak check scans memory for pointers, and Ruby keeps addresses of
 * blocks it has freed in memory it still holds (a deleted hash entry keeps
 * its key; clearing its index of loaded features frees every short name it
 * strdup'd at once). LeakSanitizer's allocator hands the block freed last
 * out first: a block the extension then allocates and loses sits at an
 * address a stale word still names, and reads as reachable (a leak passed
 * over). Valgrind keeps its freed blocks back (--freelist-vol);
 * AddressSanitizer has its own quarantine, so this is off there. With a
 * window of 1,024 frees, make check still saw an exit!ed child's leak
 * passed over now and then; 16,384 it has not. No length makes it certain:
 * the scan is conservative (gemleak(1), WHAT EACH ENGINE SEES).
 *
 * How, at the price of the judged allocations alone: every free is
 * recorded in a shadow of the runtime's heap (when each granule was last
 * freed, below). A judged allocation handed an address freed within the
 * window parks that block here, its bytes cleared, and the front calls the
 * runtime again. A block parked HELD_WINDOW frees ago is old: its address
 * was last freed before that. One of the same size class is freed
 * first, unrecorded, and LeakSanitizer's allocator, which hands the block
 * freed last out first from the thread's cache of its size class, hands
 * it to the call made again. And before a judged allocation, where an old
 * block of its class is parked, that block is freed so (alloc_held_old(),
 * alloc.c's old_ahead()): the call gets it at once, without a recent one
 * parked and a second call (psych's suite: 41,000 parks to 31,000, 22,000
 * old blocks handed out so). So a judged allocation pays a call or two
 * more at most, and Ruby's own blocks are used again at once, as without
 * gemleak. (Until
 * Ruby 3.4's psych suite showed it, every freed block was held back for
 * 16,384 frees: Ruby then got cold blocks, some 15% of a clean suite's
 * time. Psych's suite, 1 million frees, has 86,000 judged allocations, of
 * which 43,000 were handed a recent address.)
 *
 * The parked blocks are listed in blocks of the runtime's own (chunks),
 * made as the ring of parked blocks first reaches them, which this
 * library's memory points to: the check scans that memory and what it
 * points to, so a parked block is reachable, never a leak. (A list of all
 * HELD_PARKED in this library's memory, 384 KiB, was scanned whole by each
 * check: some 100 pages touched for nothing in every process.) At most
 * HELD_PARKED are parked, each of up to ALLOC_HELD_MAX bytes (larger
 * blocks are not kept from recent addresses: the cost of clearing them,
 * and few stale words name them).
 *
 * Once Ruby's exit begins (the helper's at_exit, before Ruby frees its
 * memory), nothing is recorded or parked: what Ruby frees then it no
 * longer names, and the exit of a forked child whose Ractor had run is
 * Ruby 3.4's M:N scheduler's to order (a native thread of a Ractor waits
 * on a lock the exit frees: with its frees held back, json's suite crashed
 * in one run in four to six, "[BUG] pthread_cond_wait: Invalid argument"). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc_int.h"

#define HELD_WINDOW 16384UL  /* frees */
#define HELD_PARKED 16384    /* blocks */
#define CHUNK_LOG 10         /* parked blocks listed in a chunk: 1,024 (24 KiB) */
#define CHUNKS (HELD_PARKED >> CHUNK_LOG)
#define LOTS 1024            /* sizes parked at once; a power of two, above ALLOC_HELD_MAX */

/* When each granule of the runtime's heap was last freed, in a shadow of
 * a byte a granule: bit 7 set once it was, then the count of
 * frees then, in epochs of 2^ALLOC_HELD_EPOCH_LOG frees (7 bits: the window
 * is 8 epochs, to 2,047 frees more; the count wraps after 262,144 frees,
 * and a block freed that long ago may pass for recent, about one in
 * fourteen, which costs a call, nothing more). Two bytes a granule touched
 * twice the pages: a page fault for each 32 KiB of the heap a process uses,
 * where each costs microseconds on a virtual machine. LeakSanitizer's
 * allocator keeps its blocks of up to 128 KiB in one space of
 * 2^ALLOC_HELD_SPAN_LOG bytes (4 TiB at 0x600000000000 on x86-64), blocks
 * of a size class side by side: the shadow of a block freed is near the
 * shadows of the blocks the program used last, where a table by the
 * address's hash would miss the cache at every free. The shadow is mapped
 * without reserving memory, where the check does not scan. A granule is 16
 * bytes, or in the region of a size class as many bytes as the largest
 * power of two its blocks hold (learn_classes()): one byte a block then, or
 * two at most, where a granule of 16 bytes wrote a byte every 64 for the
 * blocks of 1 KiB and faulted in a page of the shadow for each 64 KiB
 * they took (psych's suite: some 1,000 page faults, each microseconds on a
 * virtual machine). Two blocks never share a granule; where the regions
 * are not the classes kept_span() takes them for, two that shared one
 * would only make a block freed long ago look recent (a call more). A
 * block outside the space, or above the regions of the sizes kept, is not
 * followed.
 * The shadow's layout and free()'s record of a free are alloc_int.h's
 * (alloc_held_freed()), where free() records without a call. */
int alloc_held_on;             /* started and not stopped: what alloc.c reads */
uint8_t *alloc_held_shadow;    /* 2^(ALLOC_HELD_SPAN_LOG - ALLOC_HELD_GRANULE_LOG) of them */
uintptr_t alloc_held_space;    /* where the space begins */
uintptr_t alloc_held_span = (uintptr_t) 1 << ALLOC_HELD_SPAN_LOG;
unsigned long alloc_held_count; /* frees recorded */
static void (*runtime_free)(void *);
static void *(*runtime_calloc)(size_t, size_t);
static void (*nobodys)(void *);

/* A block parked: in a ring by the order they came in, and in its size's
 * list, oldest first (indexes plus one; 0: none). */
typedef struct {
    void *block;               /* NULL: the slot is free */
    unsigned long stamp;       /* alloc_held_count as it came in */
    uint32_t next;
    uint32_t lot;
} Parked;

typedef struct {
    size_t size;               /* its lot_key(); 0: unused */
    uint32_t head, tail;
} Lot;

uint8_t alloc_held_granule[ALLOC_HELD_REGIONS];

/* Parked blocks are listed by the allocator's size class, where its
 * regions are as kept_span() found them (one of 2^ALLOC_HELD_REGION_LOG
 * bytes a class, in the order of their sizes): a block of any size of the
 * class can then take an old one's place. Elsewhere, by size. */
static int by_class;
/* By class, the class of each size kept, in 16 bytes: its region plus
 * one, as learn_classes() found it at start. */
static uint8_t class_of[ALLOC_HELD_MAX >> 4];

/* Returns: where class_of says the class of @size (1 to ALLOC_HELD_MAX). */
static inline size_t class_at(size_t size)
{
    return (size - 1) >> 4;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The ring of parked blocks, CHUNKS chunks of 2^CHUNK_LOG, each the
 * runtime's block (NULL until the ring first reaches it). */
static Parked *chunks[CHUNKS];
static uint32_t parked_next;
static Lot lots[LOTS];

/* The ring's slot @i (its chunk made). */
static inline Parked *slot(uint32_t i)
{
    return &chunks[i >> CHUNK_LOG][i & ((1U << CHUNK_LOG) - 1)];
}

/* Returns: the region of the allocator's space @block lies in. */
static inline uint32_t region_of(const void *block)
{
    return (uint32_t) (((uintptr_t) block - alloc_held_space) >> ALLOC_HELD_REGION_LOG);
}

/* Returns: log 2 of the largest power of two no larger than @size (16 and up). */
static uint8_t floor_log2(size_t size)
{
    uint8_t log = ALLOC_HELD_GRANULE_LOG;
    while (log < ALLOC_HELD_REGION_LOG - 1 && ((size_t) 2 << log) <= size)
        log++;
    return log;
}

/* Learns, for each size of up to ALLOC_HELD_MAX, 16 bytes apart, its class
 * (class_of: the region a block of it is handed out in, allocated once),
 * and gives each region of a size class kept from recent addresses its
 * granule (alloc_int.h): the largest power of two its blocks hold, which
 * the largest size handed out there says; the region of @above, a block of
 * ALLOC_HELD_MAX + 1 bytes, one of at least as many.
 * Returns: 1 if every size's class is known, 0 if a size could not be
 * allocated (the granules learnt so far hold). */
static int learn_classes(void (*free_fn)(void *), void *(*calloc_fn)(size_t, size_t),
                         const void *above)
{
    uint32_t top = region_of(above);
    if (top < ALLOC_HELD_REGIONS)
        alloc_held_granule[top] = floor_log2(ALLOC_HELD_MAX + 1);
    for (size_t size = 16; size <= ALLOC_HELD_MAX; size += 16) {
        void *block = calloc_fn(1, size);
        if (block == NULL)
            return 0;
        uint32_t region = region_of(block);
        free_fn(block);
        if (region >= top)
            return 0;
        alloc_held_granule[region] = floor_log2(size);
        class_of[class_at(size)] = (uint8_t) (region + 1);
    }
    return 1;
}

/* Returns: how much of the space, from its start, holds the blocks of up
 * to ALLOC_HELD_MAX bytes, the only ones kept from recent addresses: the
 * offset of a block of the next size class up, whose region comes after
 * theirs (LeakSanitizer's allocator gives each size class a region of the
 * space, in the order of their sizes); the whole space where blocks of
 * sizes up to ALLOC_HELD_MAX do not all lie below it. A free above it is
 * not recorded: in psych's suite the shadow of the regions of 16 to 48 KiB
 * blocks, a page for every 64 KiB freed there, was a third of the pages
 * the shadow touched (some 540 page faults of the main process's 1,100).
 * *@classes: 1 where the sizes sampled lie each in the region by_class
 * takes for their class (the smallest two, 16 bytes apart, in regions 1
 * and 2; the rest in regions one after the other) and every size kept has
 * its class learnt (learn_classes()), else 0. */
static uintptr_t kept_span(void (*free_fn)(void *), void *(*calloc_fn)(size_t, size_t),
                           int *classes)
{
    uintptr_t whole = (uintptr_t) 1 << ALLOC_HELD_SPAN_LOG;
    *classes = 0;
    void *above = calloc_fn(1, ALLOC_HELD_MAX + 1);
    if (above == NULL)
        return whole;
    uintptr_t span = (uintptr_t) above - alloc_held_space;
    int in_order = 1;
    uint32_t last = 0;
    for (size_t size = 16; size <= ALLOC_HELD_MAX && span < whole; size *= 2) {
        void *kept = calloc_fn(1, size);
        if (kept == NULL || (uintptr_t) kept - alloc_held_space >= span)
            span = whole;
        else if (size <= 32 ? region_of(kept) != size / 16 : region_of(kept) <= last)
            in_order = 0;
        else
            last = region_of(kept);
        free_fn(kept);
    }
    if (span < whole && in_order)
        in_order = learn_classes(free_fn, calloc_fn, above);
    free_fn(above);
    if (span >= whole)
        return whole;
    *classes = in_order;
    return span;
}

int alloc_held_start(void (*free_fn)(void *), void *(*calloc_fn)(size_t, size_t),
                     void (*nobodys_fn)(void *), const void *sample)
{
    if (dlsym(RTLD_DEFAULT, "__asan_init") != NULL || sample == NULL)
        return 0;
    size_t bytes = ((size_t) 1 << (ALLOC_HELD_SPAN_LOG - ALLOC_HELD_GRANULE_LOG)) *
                   sizeof *alloc_held_shadow;
    void *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED)
        return -1;
    alloc_held_shadow = mapped;
    alloc_held_space = (uintptr_t) sample & ~(((uintptr_t) 1 << ALLOC_HELD_SPAN_LOG) - 1);
    memset(alloc_held_granule, ALLOC_HELD_GRANULE_LOG, sizeof alloc_held_granule);
    alloc_held_span = kept_span(free_fn, calloc_fn, &by_class);
    runtime_free = free_fn;
    runtime_calloc = calloc_fn;
    nobodys = nobodys_fn;
    __atomic_store_n(&alloc_held_on, 1, __ATOMIC_RELEASE);
    return 1;
}

void alloc_held_stop(void)
{
    __atomic_store_n(&alloc_held_on, 0, __ATOMIC_RELEASE);
}

void alloc_held_lock(void)
{
    pthread_mutex_lock(&lock);
}

void alloc_held_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

int alloc_held_recent(const void *block, size_t size)
{
    if (size == 0 || size > ALLOC_HELD_MAX || !__atomic_load_n(&alloc_held_on, __ATOMIC_ACQUIRE))
        return 0;
    const uint8_t *at = alloc_held_shadow_of(block);
    if (at == NULL || (*at & ALLOC_HELD_FREED) == 0)
        return 0;
    unsigned long now = __atomic_load_n(&alloc_held_count, __ATOMIC_RELAXED) >> ALLOC_HELD_EPOCH_LOG;
    return ((now - *at) & ALLOC_HELD_EPOCH_MASK) <= (HELD_WINDOW >> ALLOC_HELD_EPOCH_LOG);
}

/* Returns: what lists @block, of @size bytes, among the parked: its class
 * (by_class: its region plus one), or its size. */
static size_t lot_key(const void *block, size_t size)
{
    return by_class ? region_of(block) + 1 : size;
}

/* The lot of @key (a lot_key()), made if @make and there is room.
 * Returns: its index, or -1. */
static int lot_of(size_t key, int make)
{
    size_t at = (key * 0x9E3779B1u) & (LOTS - 1);
    for (size_t probe = 0; probe < LOTS; probe++, at = (at + 1) & (LOTS - 1)) {
        if (lots[at].size == key)
            return (int) at;
        if (lots[at].size == 0) {
            if (!make)
                return -1;
            lots[at].size = key;
            return (int) at;
        }
    }
    return -1;
}

/* By class (by_class), when the first block of the class's lot was
 * parked (alloc_held_count then, plus one; 0: none), written with the lot
 * under the lock and read without it: alloc_held_old() locks only where a
 * block of the class may be old. Of psych's 83,000 judged allocations of
 * a class known, 61,000 found none, and took and left the lock for it. */
static unsigned long first_parked[ALLOC_HELD_REGIONS + 1];

/* Says @lot's first block (its head) in first_parked. */
static void first_now(const Lot *lot)
{
    if (by_class && lot->size <= ALLOC_HELD_REGIONS)
        __atomic_store_n(&first_parked[lot->size], lot->head == 0 ? 0 : slot(lot->head - 1)->stamp + 1,
                         __ATOMIC_RELAXED);
}

/* Takes the first block of lot @l out (the oldest of its size). */
static void *take_head(Lot *lot)
{
    Parked *p = slot(lot->head - 1);
    void *block = p->block;
    lot->head = p->next;
    if (lot->head == 0)
        lot->tail = 0;
    p->block = NULL;
    first_now(lot);
    return block;
}

int alloc_held_park(void *block, size_t size, void **old)
{
    *old = NULL;
    void *evicted = NULL;
    int evicted_old = 0;
    size_t key = lot_key(block, size);
    pthread_mutex_lock(&lock);
    int l = lot_of(key, 1);
    if (l < 0) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    unsigned long now = __atomic_load_n(&alloc_held_count, __ATOMIC_RELAXED);
    uint32_t i = parked_next;
    Parked **chunk = &chunks[i >> CHUNK_LOG];
    if (*chunk == NULL) {
        *chunk = runtime_calloc((size_t) 1 << CHUNK_LOG, sizeof(Parked));
        if (*chunk == NULL) {
            pthread_mutex_unlock(&lock);
            return 0;
        }
        /* made in the call that parks: not the caller's (--growth) */
        nobodys(*chunk);
    }
    parked_next = (i + 1) % HELD_PARKED;
    Parked *p = slot(i);
    if (p->block != NULL) {
        /* the ring's oldest: the first of its lot, whose order is the ring's */
        evicted_old = now - p->stamp >= HELD_WINDOW;
        evicted = take_head(&lots[p->lot]);
    }
    memset(block, 0, size);
    *p = (Parked) { .block = block, .stamp = now, .next = 0, .lot = (uint32_t) l };
    Lot *lot = &lots[l];
    if (lot->tail != 0) {
        slot(lot->tail - 1)->next = i + 1;
    } else {
        lot->head = i + 1;
        first_now(lot);
    }
    lot->tail = i + 1;
    if (lot->head != i + 1 && now - slot(lot->head - 1)->stamp >= HELD_WINDOW)
        *old = take_head(lot);
    pthread_mutex_unlock(&lock);
    if (evicted != NULL) {
        if (!evicted_old)
            alloc_held_freed(evicted);
        runtime_free(evicted);
    }
    return 1;
}

void *alloc_held_old(size_t size)
{
    if (!by_class || size == 0 || size > ALLOC_HELD_MAX ||
        !__atomic_load_n(&alloc_held_on, __ATOMIC_ACQUIRE))
        return NULL;
    uint8_t key = class_of[class_at(size)];
    unsigned long now = __atomic_load_n(&alloc_held_count, __ATOMIC_RELAXED);
    unsigned long first = __atomic_load_n(&first_parked[key], __ATOMIC_RELAXED);
    if (first == 0 || now - (first - 1) < HELD_WINDOW)
        return NULL;  /* none old, as of late: looked at again under the lock otherwise */
    void *old = NULL;
    pthread_mutex_lock(&lock);
    int l = lot_of(key, 0);
    now = __atomic_load_n(&alloc_held_count, __ATOMIC_RELAXED);
    if (l >= 0 && lots[l].head != 0 && now - slot(lots[l].head - 1)->stamp >= HELD_WINDOW)
        old = take_head(&lots[l]);
    pthread_mutex_unlock(&lock);
    return old;
}
