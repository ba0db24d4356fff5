/* The native half of `gemleak run --per-test` under a sanitizer's engine
 * (LeakSanitizer, AddressSanitizer): which test allocated each block.
 *
 * The runtime's allocator calls a hook on every allocation and free
 * (__sanitizer_install_malloc_and_free_hooks). While a test runs, each
 * block allocated is recorded with the test, its owner, in a hash table of
 * addresses; a block freed leaves it. At exit, after Ruby has freed its
 * own memory (RUBY_FREE_AT_EXIT) and before the runtime's leak check (an
 * atexit handler registered before this library was loaded, so run after
 * ours), the blocks still recorded are written to the runtime's report
 * file, a line for each owner's few dozen blocks:
 *
 *   gemleak:owned<TAB>NAME<TAB>LOCATION<TAB>ADDRESS ADDRESS ...
 *
 * (hexadecimal addresses; NAME and LOCATION as the helper escaped them,
 * both empty for what was allocated before the first test). gemleak reads
 * the leak check's objects (report_objects=1) against those lines: no leak
 * check runs while the tests do, and nothing runs twice.
 *
 * LeakSanitizer's realloc calls no hook: under it, per test, gemleak
 * preloads this library before the runtime, and its realloc (below) is the
 * one every caller reaches; it calls the runtime's and records the block
 * it returns as the running test's, as the runtime records realloc's stack
 * for it. Where the allocation front (gemleak_alloc.so) comes first, its
 * realloc is every caller's, and it tells this library of each block it
 * reallocated. Under AddressSanitizer, whose realloc calls the hooks, the
 * library is only loaded, and its realloc is nobody's.
 *
 * The table lives in memory mapped here, never in the allocator it hooks:
 * a hook that allocated would call itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Not in a header: native.c calls these (GemLeakHelper::Native). */
int gemleak_client_owners_start(void);
void gemleak_client_owner(const char *text);
void gemleak_client_owners_write(void);
void *realloc(void *block, size_t size);

typedef int (*InstallHooks)(void (*)(const volatile void *, size_t), void (*)(const volatile void *));
typedef void (*ReportLine)(const char *);
typedef void (*OnRealloc)(void (*)(void *, void *));

/* The table holds no block's address as it is, but this mask over it: the
 * runtime's leak check scans this library's data, and what a thread's
 * stack still holds of ours (qsort's copies), for anything that looks
 * like a pointer into the heap, and a copy of a lost block's would keep
 * it found. */
#define HIDE(address) ((uintptr_t) (address) ^ (uintptr_t) UINT64_C(0xA5A5A5A5A5A5A5A5))

typedef struct {
    uintptr_t address;  /* EMPTY, GONE or a block's, HIDE()n */
    uint32_t owner;     /* an index into owners */
} Slot;

#define EMPTY ((uintptr_t) 0)
#define GONE ((uintptr_t) 1) /* a block freed: its slot ends no probe */
#define FIRST_SLOTS ((size_t) 1 << 16)
/* Addresses a line of the report holds: the runtime's Printf cuts long lines. */
#define LINE_ADDRESSES ((size_t) 32)
#define ADDRESS_CHARS ((size_t) 17) /* a space, 16 hexadecimal digits */
#define LINE_BYTES 4096
#define ARENA_BYTES ((size_t) 1 << 20)
#define SCRUB_BYTES ((size_t) 64 * 1024)

/* The table's lock, taken at every allocation and free: a spin lock held
 * for a few probes of the table, without a call into the C library. */
static volatile char lock;

static void lock_table(void)
{
    while (__atomic_test_and_set(&lock, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&lock, __ATOMIC_RELAXED))
            sched_yield();
}

static void unlock_table(void)
{
    __atomic_clear(&lock, __ATOMIC_RELEASE);
}
static Slot *slots;        /* mapped, capacity of them */
static size_t capacity;    /* a power of two */
static size_t used;        /* blocks recorded */
static size_t gone;        /* GONE slots */
/* The owner of what is allocated now: 0, none (nothing is recorded). Read
 * by every allocation, in any thread, without the lock. */
static volatile uint32_t current;
/* owners[i] (i >= 1): "NAME\tLOCATION", mapped; n_owners in use. */
static char **owners;
static uint32_t n_owners;
static uint32_t owners_capacity;
static char *arena;        /* where the next owner's text goes, mapped */
static size_t arena_left;
static ReportLine report_line;
static int started;

/* Returns: @bytes of zeroed memory mapped for this library, or NULL. */
static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static size_t slot_of(uintptr_t address, size_t mask)
{
    return (size_t) (((uint64_t) (address >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & mask;
}

/* Moves the recorded blocks into a table of @new_capacity slots; the old
 * one is unmapped. Returns: 0 when no memory was left (nothing moved). */
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

/* Called with the lock held. */
static void record(uintptr_t address, uint32_t owner)
{
    if ((used + gone + 1) * 2 > capacity &&
        !rehash(capacity == 0 ? FIRST_SLOTS : (used + 1) * 4 > capacity ? capacity * 2 : capacity))
        return;  /* no memory: the block is nobody's, and gemleak says it was lost at exit */
    size_t mask = capacity - 1;
    size_t i = slot_of(address, mask);
    size_t free_slot = SIZE_MAX;
    while (slots[i].address != EMPTY) {
        if (slots[i].address == address) {
            slots[i].owner = owner;
            return;
        }
        if (slots[i].address == GONE && free_slot == SIZE_MAX)
            free_slot = i;
        i = (i + 1) & mask;
    }
    if (free_slot != SIZE_MAX) {
        i = free_slot;
        gone--;
    }
    slots[i].address = address;
    slots[i].owner = owner;
    used++;
}

/* Called with the lock held. */
static void forget(uintptr_t address)
{
    if (used == 0)
        return;
    size_t mask = capacity - 1;
    for (size_t i = slot_of(address, mask); slots[i].address != EMPTY; i = (i + 1) & mask)
        if (slots[i].address == address) {
            slots[i].address = GONE;
            used--;
            gone++;
            return;
        }
}

static void allocated(const volatile void *block, size_t size)
{
    (void) size;
    uint32_t owner = current;
    if (owner == 0 || block == NULL)
        return;
    lock_table();
    record(HIDE(block), owner);
    unlock_table();
}

static void freed(const volatile void *block)
{
    if (block == NULL || used == 0)
        return;
    lock_table();
    forget(HIDE(block));
    unlock_table();
}

/* Writes over the stack below this frame, where the frames just returned
 * from (snprintf's) left a block's address as it is, before the runtime's
 * leak check scans what of it is in use again. */
static void scrub(void)
{
    volatile char stack[SCRUB_BYTES];
    for (size_t i = 0; i < sizeof stack; i++)
        stack[i] = 0;
}

static int by_owner(const void *a, const void *b)
{
    const Slot *x = a, *y = b;
    if (x->owner != y->owner)
        return x->owner < y->owner ? -1 : 1;
    return x->address < y->address ? -1 : x->address > y->address;
}

/* At exit: the blocks still recorded, a line for each owner's few dozen;
 * once (exit! writes them before it ends the process). */
static void write_owned(void)
{
    static int written;
    if (written)
        return;
    written = 1;
    current = 0;
    lock_table();
    size_t n = used;
    Slot *live = n > 0 ? map(n * sizeof *live) : NULL;
    size_t k = 0;
    for (size_t i = 0; live != NULL && i < capacity && k < n; i++)
        if (slots[i].address > GONE)
            live[k++] = slots[i];
    unlock_table();
    if (live == NULL || report_line == NULL)
        return;
    qsort(live, k, sizeof *live, by_owner);
    static char line[LINE_BYTES];
    for (size_t i = 0; i < k;) {
        const char *owner = live[i].owner < n_owners ? owners[live[i].owner] : NULL;
        if (owner == NULL) {
            i++;
            continue;
        }
        int length = snprintf(line, sizeof line, "gemleak:owned\t%s\t", owner);
        if (length < 0 || (size_t) length >= sizeof line - ADDRESS_CHARS * LINE_ADDRESSES) {
            i++;
            continue;  /* the helper cuts names long before this */
        }
        size_t end = i;
        while (end < k && end - i < LINE_ADDRESSES && live[end].owner == live[i].owner) {
            length += snprintf(line + length, sizeof line - (size_t) length, "%s%lx",
                               end > i ? " " : "", (unsigned long) HIDE(live[end].address));
            end++;
        }
        report_line(line);
        i = end;
    }
    munmap(live, n * sizeof *live);
    scrub();
}

/* Writes the lines now: for a process about to end without running its
 * atexit handlers (Ruby's exit!), before the check the helper makes. */
void gemleak_client_owners_write(void)
{
    if (started)
        write_owned();
}

typedef void *(*Realloc)(void *, size_t);
static Realloc next_realloc;

/* The realloc after this library's: the runtime's (when preloaded before
 * it), or the C library's. */
static Realloc find_realloc(void)
{
    if (next_realloc == NULL)
        next_realloc = (Realloc) (uintptr_t) dlsym(RTLD_NEXT, "realloc");
    return next_realloc;
}

__attribute__((constructor)) static void find_realloc_early(void)
{
    find_realloc();
}

/* A block reallocated while a test runs is that test's (a new block, at a
 * new address or not); one reallocated outside any test leaves the table
 * when it moved. */
static void reallocated(void *block, void *moved)
{
    uint32_t owner = current;
    if (!started || (owner == 0 && moved == block))
        return;
    lock_table();
    if (block != NULL && moved != block)
        forget(HIDE(block));
    if (moved != NULL && owner != 0)
        record(HIDE(moved), owner);
    unlock_table();
}

void *realloc(void *block, size_t size)
{
    void *moved = find_realloc()(block, size);
    if (!started || (moved == NULL && size != 0))
        return moved;
    reallocated(block, moved);
    return moved;
}

/* A fork while another thread holds the lock would leave the child's held
 * for ever. */
static void before_fork(void)
{
    lock_table();
}

static void after_fork(void)
{
    unlock_table();
}

/* Starts recording owners: the runtime's hooks, the lines at exit. Returns:
 * 1 when they are in place (or were), 0 when the process has no sanitizer
 * runtime that takes hooks. */
int gemleak_client_owners_start(void)
{
    if (started)
        return 1;
    InstallHooks install = (InstallHooks) (uintptr_t) dlsym(RTLD_DEFAULT,
                                                            "__sanitizer_install_malloc_and_free_hooks");
    report_line = (ReportLine) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_report_error_summary");
    if (install == NULL || report_line == NULL)
        return 0;
    if (atexit(write_owned) != 0 || pthread_atfork(before_fork, after_fork, after_fork) != 0)
        return 0;
    if (install(allocated, freed) == 0)
        return 0;
    /* The allocation front (gemleak_alloc.so), when it comes first: its
     * realloc, not this library's, is the one every caller reaches. */
    OnRealloc on_realloc = (OnRealloc) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_alloc_on_realloc");
    if (on_realloc != NULL)
        on_realloc(reallocated);
    started = 1;
    return 1;
}

/* Returns: a copy of @text, in memory mapped here (owned here for the
 * process's life), or NULL. */
static char *keep(const char *text)
{
    size_t size = strlen(text) + 1;
    if (size > arena_left) {
        size_t chunk = size > ARENA_BYTES ? size : ARENA_BYTES;
        arena = map(chunk);
        if (arena == NULL) {
            arena_left = 0;
            return NULL;
        }
        arena_left = chunk;
    }
    char *copy = memcpy(arena, text, size);
    arena += size;
    arena_left -= size;
    return copy;
}

/* What is allocated from now on is @text's ("NAME\tLOCATION", escaped by
 * the helper; "\t": before the first test), or nobody's (NULL). The text
 * is copied, into memory mapped here; a name is given once per test. */
void gemleak_client_owner(const char *text)
{
    if (text == NULL) {
        current = 0;
        return;
    }
    if (n_owners == 0)
        n_owners = 1;  /* 0 is nobody */
    if (n_owners >= owners_capacity) {
        uint32_t more = owners_capacity == 0 ? 1024 : owners_capacity * 2;
        char **grown = map(more * sizeof *grown);
        if (grown == NULL)
            return;
        if (owners != NULL) {
            memcpy(grown, owners, owners_capacity * sizeof *grown);
            munmap(owners, owners_capacity * sizeof *owners);
        }
        owners = grown;
        owners_capacity = more;
    }
    char *copy = keep(text);
    if (copy == NULL)
        return;
    owners[n_owners] = copy;
    current = n_owners++;
}
