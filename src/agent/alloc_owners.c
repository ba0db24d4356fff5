/* Which test allocated each block whose leak would be judged (gemleak_
 * alloc.so; the client library's owners.c says what the owners are for),
 * for the blocks that cannot carry it in their own stack.
 *
 * Most do: the front gives the runtime a chain that begins with a frame
 * that says the owner (alloc.c's owner_framed()), which the runtime
 * records with the block, and the reader takes it from a leaked block's
 * stack; nothing is done at the free. The table below holds the rest: a
 * block the check cannot judge (hidden), an owner beyond the frames'
 * array, and every judged block where the runtime unwinds by itself
 * (MODE_OFF: --exact-stacks). While it is empty (alloc_owners_count) a
 * free reads no bit.
 *
 * Without the allocation front, the client library records every block
 * allocated while a test runs, from the runtime's hooks, in a table of
 * addresses, and takes every block freed out of it: a probe of a table of
 * a million slots at each allocation and each free, about a tenth of
 * psych's clean suite under LeakSanitizer. Where the front comes first it
 * knows more: only a block it judges (alloc.c's judged(): an extension's,
 * or Ruby's under an extension's call of its allocation functions) can be
 * a finding, and the owner of nothing else is ever asked for; the client
 * then hands its owner (gemleak_alloc_owners_start()) to this table, which
 * holds the judged blocks alone (psych's suite: one allocation in twelve).
 * A free finds out whether its block is here from a bit of the block's
 * (below), a byte for 128 bytes of the heap, which the front's free asks
 * the cache for before it reads it: the table is probed only
 * for a block it holds, or one without a bit (above the runtime's largest
 * size class, or when the bits could not be mapped).
 *
 * Every free reaches alloc_owners_freed() through the front's free and
 * its operator delete in every form (alloc.c's released(), before the
 * runtime takes the block back: no hook of the runtime's is installed),
 * when the block's bit says it may be here; the front's realloc tells it
 * of the block a reallocation left. At exit the client
 * takes the blocks still here (gemleak_alloc_owned()) and writes them as
 * it writes its own. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc_int.h"
#include "hidden_table_int.h"

/* Not in a header: the client library calls them (owners.c). */
int gemleak_alloc_owners_start(const volatile uint32_t *current);
HiddenSlot *gemleak_alloc_owned(size_t *count, size_t *bytes);

/* The bits (alloc_int.h): a bit for each granule of 16 bytes of the
 * runtime's space, set while the block that begins there is in the table.
 * Mapped without reserving memory, in memory the check does not scan. */
#define WORD_BITS 64

const volatile uint32_t *alloc_owner_current;

/* Held for a few probes at a judged allocation, and at the free of a
 * block marked: a spin lock, without a call into the C library. */
static volatile char lock;
static HiddenTable table = HIDDEN_TABLE_INIT((size_t) 1 << 12);
uint64_t *alloc_owner_bits;
uintptr_t alloc_owner_space;
/* 1 once the front is on in this process (alloc_owners_init()). */
static int front_on;
/* Blocks put in the table without a bit (a block given another owner
 * counts again: an upper bound): while there are any, the free of a block
 * without a bit looks it up. */
size_t alloc_owners_unmarked;
/* The blocks in the table (table.used, read without the lock): most carry
 * their owner in their stack instead (alloc.c's owner_framed()), and while
 * none is here a free asks nothing of the bits. */
size_t alloc_owners_count;

void alloc_owners_init(const void *sample)
{
    front_on = 1;
    alloc_owner_space = (uintptr_t) sample & ~(((uintptr_t) 1 << OWNER_SPAN_LOG) - 1);
}

/* Returns: the word of @block's bit, its mask in *@mask; NULL when it has
 * none. */
static inline uint64_t *bit_of(const volatile void *block, uint64_t *mask)
{
    uint64_t *word = alloc_owner_word(block);
    if (word != NULL)
        *mask = (uint64_t) 1 << ((((uintptr_t) block - alloc_owner_space) >> OWNER_GRANULE_LOG) %
                                 WORD_BITS);
    return word;
}

int gemleak_alloc_owners_start(const volatile uint32_t *current)
{
    if (current == NULL || !front_on)
        return 0;
    if (alloc_owner_space != 0 && alloc_owner_bits == NULL) {
        size_t bytes = ((size_t) 1 << (OWNER_SPAN_LOG - OWNER_GRANULE_LOG)) / 8;
        void *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        alloc_owner_bits = mapped != MAP_FAILED ? mapped : NULL;
    }
    __atomic_store_n(&alloc_owner_current, current, __ATOMIC_RELEASE);
    return 1;
}

void alloc_owners_put(const void *block, uint32_t owner)
{
    uint64_t mask = 0;
    uint64_t *word = bit_of(block, &mask);
    agent_spin_lock(&lock);
    if (hidden_table_put(&table, block, owner)) {
        if (word != NULL)
            __atomic_fetch_or(word, mask, __ATOMIC_RELAXED);
        else
            alloc_owners_unmarked++;
    }
    __atomic_store_n(&alloc_owners_count, table.used, __ATOMIC_RELAXED);
    agent_spin_unlock(&lock);
}

void alloc_owners_freed(const volatile void *block)
{
    if (!alloc_owners_may_hold(block))
        return;
    uint64_t mask = 0;
    uint64_t *word = bit_of(block, &mask);
    uintptr_t owner;
    agent_spin_lock(&lock);
    if (word != NULL)
        __atomic_fetch_and(word, ~mask, __ATOMIC_RELAXED);
    if (hidden_table_pop(&table, block, &owner) && word == NULL)
        alloc_owners_unmarked--;
    __atomic_store_n(&alloc_owners_count, table.used, __ATOMIC_RELAXED);
    agent_spin_unlock(&lock);
}
void alloc_owners_lock(void)
{
    agent_spin_lock(&lock);
}

void alloc_owners_unlock(void)
{
    agent_spin_unlock(&lock);
}

/* Returns: (transfer full) (nullable): the blocks in the table, each with
 * its owner, *@count of them, in memory mapped here of *@bytes, which the
 * caller unmaps; NULL when there are none, or no memory. */
HiddenSlot *gemleak_alloc_owned(size_t *count, size_t *bytes)
{
    *count = 0;
    *bytes = 0;
    agent_spin_lock(&lock);
    size_t n = table.used;
    HiddenSlot *live = n > 0 ? agent_map(n * sizeof *live) : NULL;
    size_t k = live != NULL ? hidden_table_copy(&table, live, n) : 0;
    agent_spin_unlock(&lock);
    if (live != NULL) {
        *count = k;
        *bytes = n * sizeof *live;
    }
    return live;
}
