/* Freed blocks held back (gemleak_alloc.so, under LeakSanitizer): a
 * freed block waits here for ALLOC_HELD_COUNT more frees before the runtime
 * may hand its address out again.
 *
 * Why: a leak check scans memory for pointers, and Ruby keeps addresses of
 * blocks it has freed in memory it still holds (a deleted hash entry keeps
 * its key). LeakSanitizer's allocator hands the block freed last out first:
 * a block the extension then allocates and loses sits at an address a stale
 * word still names, and reads as reachable (a leak passed over). Valgrind
 * keeps its freed blocks back the same way (--freelist-vol); AddressSanitizer
 * has its own quarantine, so this is off there. The ring is long: with
 * 1,024 held back, make check still saw a child's leak passed over now and
 * then (a stale word older than the ring); 16,384 blocks of up to 1 KiB
 * cost about 2% CPU on psych's suite, 16 MiB at most. No length makes it
 * certain: the scan is conservative (gemleak(1), WHAT EACH ENGINE SEES).
 *
 * A held block's bytes are cleared as it comes in, so that it keeps nothing
 * reachable; blocks over ALLOC_HELD_MAX bytes go back at once (the cost of
 * clearing them, and few stale words name them). The ring is this library's
 * memory, which the check scans: a held block is reachable, never a leak.
 *
 * Once Ruby's exit begins (the helper's at_exit, before Ruby frees its
 * memory), nothing more is held: Ruby 3.4's M:N scheduler leaves a native
 * thread of a Ractor waiting on a lock that the exit frees, and with the
 * frees of the exit held back, a forked child whose Ractor had run crashed
 * at its end in one run of json's suite in four to six ("[BUG]
 * pthread_cond_wait: Invalid argument", the lock's bytes another block's),
 * never natively nor with nothing held; the exit's own frees need no ring:
 * what Ruby frees then, it no longer names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc_int.h"

#define ALLOC_HELD_COUNT 16384
#define ALLOC_HELD_MAX 1024

typedef size_t (*SizeOf)(const void *);

static SizeOf size_of;   /* the runtime's; NULL: nothing is held */
static int stopped;      /* alloc_held_stop() */
static void *held[ALLOC_HELD_COUNT];
static unsigned long held_next;

void alloc_held_start(void)
{
    if (dlsym(RTLD_DEFAULT, "__asan_init") != NULL)
        return;
    size_of = (SizeOf) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_get_allocated_size");
}

void alloc_held_stop(void)
{
    __atomic_store_n(&stopped, 1, __ATOMIC_RELEASE);
}

void *alloc_held_swap(void *block)
{
    if (size_of == NULL || __atomic_load_n(&stopped, __ATOMIC_ACQUIRE))
        return block;
    size_t size = size_of(block);
    if (size > ALLOC_HELD_MAX)
        return block;
    memset(block, 0, size);
    unsigned long i = __atomic_fetch_add(&held_next, 1, __ATOMIC_RELAXED) % ALLOC_HELD_COUNT;
    return __atomic_exchange_n(&held[i], block, __ATOMIC_ACQ_REL);
}
