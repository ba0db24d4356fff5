/* The exact pass's table (gemleak_alloc.so; alloc.c says what it does):
 * each block a site allocated, by its address (hidden from the leak
 * check, HIDE()), with its stack, unwound here by libgcc's unwinder as
 * the runtime's slow unwinder does; a stack once, however many blocks
 * share it. A block freed leaves the table (the runtime's hooks, alloc.c).
 * Before each check (gemleak_alloc_before_check), exact_write.c writes it
 * into the report. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "exact_int.h"

#define FIRST_SLOTS ((size_t) 1 << 12)

pthread_mutex_t exact_lock = PTHREAD_MUTEX_INITIALIZER;
Slot *exact_slots;
size_t exact_capacity, exact_used;
static size_t gone;
Stack *exact_stacks;
size_t exact_n_stacks;
static size_t stacks_capacity;
Backtrace exact_backtrace;
GetIP exact_get_ip;

typedef struct {
    uintptr_t caller;
    int found;              /* the caller's frame was met */
    int counted;            /* frames kept that the runtime's depth would count */
    Stack *stack;
} Unwinding;

/* Returns: 1 if @pc lies in this library: the frame of an extension's call
 * of Ruby's allocation functions (gemleak_via), which the report shows but
 * the reader takes out, and the depth the runtime keeps does not count. */
static uintptr_t ours_low, ours_high;

static int find_ours(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    if ((uintptr_t) info->dlpi_addr != (uintptr_t) data)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            uintptr_t low = (uintptr_t) info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            uintptr_t high = low + info->dlpi_phdr[i].p_memsz;
            if (ours_low == 0 || low < ours_low)
                ours_low = low;
            if (high > ours_high)
                ours_high = high;
        }
    return 1;
}

void exact_find_self(void)
{
    Dl_info info;
    if (dladdr((void *) (uintptr_t) find_ours, &info) != 0)
        dl_iterate_phdr(find_ours, info.dli_fbase);
}

static int ours(uintptr_t pc)
{
    return pc >= ours_low && pc < ours_high;
}

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *context, void *data)
{
    Unwinding *unwinding = data;
    uintptr_t pc = (uintptr_t) exact_get_ip(context);
    if (!unwinding->found) {
        if (pc != unwinding->caller)
            return _URC_NO_REASON;  /* this library's own frames */
        unwinding->found = 1;
    }
    if (pc == 0 || unwinding->counted >= exact_depth || unwinding->stack->n >= MAX_DEPTH)
        return _URC_END_OF_STACK;
    unwinding->stack->pcs[unwinding->stack->n++] = pc;
    unwinding->counted += !ours(pc);
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

/* Records @block, allocated by a call returning to @caller, with its stack. */
void exact_record(void *block, uintptr_t caller)
{
    if (block == NULL || exact_backtrace == NULL || exact_get_ip == NULL)
        return;
    exact_busy++;
    Stack stack = { .n = 0 };
    Unwinding unwinding = { .caller = caller, .stack = &stack };
    exact_backtrace(one_frame, &unwinding);
    if (stack.n == 0)
        stack.pcs[stack.n++] = caller;  /* the unwinder lost its way: the caller at least */
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

void exact_forget(const volatile void *block)
{
    if (block == NULL || exact_used == 0)
        return;
    pthread_mutex_lock(&exact_lock);
    forget_locked(HIDE(block));
    pthread_mutex_unlock(&exact_lock);
}
