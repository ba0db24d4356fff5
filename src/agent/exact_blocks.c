/* The exact pass's table (gemleak_alloc.so; alloc.c says what it does):
 * each block a site allocated, by its address (hidden from the leak
 * check, hidden_table_int.h), with its stack, unwound here by libgcc's
 * unwinder as the runtime's slow unwinder does; a stack once, however many
 * blocks share it. A block freed leaves the table (the runtime's hooks, alloc.c).
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

ExactTable exact_table = { .lock = PTHREAD_MUTEX_INITIALIZER,
                           .blocks = HIDDEN_TABLE_INIT((size_t) 1 << 12) };

/* libgcc's unwinder, as the runtime's slow unwinder calls it. */
typedef _Unwind_Reason_Code (*Backtrace)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*GetIP)(struct _Unwind_Context *);
static Backtrace unwind_backtrace;
static GetIP unwind_get_ip;

typedef struct {
    uintptr_t caller;
    int found;              /* the caller's frame was met */
    int counted;            /* frames kept that the runtime's depth would count */
    int limit;              /* how many of those to keep */
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

int exact_blocks_start(void)
{
    unwind_backtrace = (Backtrace) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_Backtrace");
    unwind_get_ip = (GetIP) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_GetIP");
    if (unwind_backtrace == NULL || unwind_get_ip == NULL)
        return 0;
    Dl_info info;
    if (dladdr((void *) (uintptr_t) find_ours, &info) != 0)
        dl_iterate_phdr(find_ours, info.dli_fbase);
    return 1;
}

static int ours(uintptr_t pc)
{
    return pc >= ours_low && pc < ours_high;
}

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *context, void *data)
{
    Unwinding *unwinding = data;
    uintptr_t pc = (uintptr_t) unwind_get_ip(context);
    if (!unwinding->found) {
        if (pc != unwinding->caller)
            return _URC_NO_REASON;  /* this library's own frames */
        unwinding->found = 1;
    }
    if (pc == 0 || unwinding->counted >= unwinding->limit || unwinding->stack->n >= MAX_DEPTH)
        return _URC_END_OF_STACK;
    unwinding->stack->pcs[unwinding->stack->n++] = pc;
    unwinding->counted += !ours(pc);
    return _URC_NO_REASON;
}

/* Returns: the index of a stack equal to @stack, kept; UINT32_MAX when no
 * memory was left. Called with the lock held. */
static uint32_t keep_stack(const Stack *stack)
{
    ExactTable *t = &exact_table;
    for (size_t i = t->n_stacks; i > 0; i--)
        if (t->stacks[i - 1].n == stack->n &&
            memcmp(t->stacks[i - 1].pcs, stack->pcs, (size_t) stack->n * sizeof stack->pcs[0]) == 0)
            return (uint32_t) (i - 1);
    if (t->n_stacks >= t->capacity) {
        size_t more = t->capacity == 0 ? 256 : t->capacity * 2;
        Stack *grown = agent_map(more * sizeof *grown);
        if (grown == NULL)
            return UINT32_MAX;
        if (t->stacks != NULL) {
            memcpy(grown, t->stacks, t->n_stacks * sizeof *t->stacks);
            munmap(t->stacks, t->capacity * sizeof *t->stacks);
        }
        t->stacks = grown;
        t->capacity = more;
    }
    t->stacks[t->n_stacks] = *stack;
    return (uint32_t) t->n_stacks++;
}

/* Fills @stack with the stack of an allocation by a call returning to
 * @caller, as one_frame() keeps it, @limit frames the runtime counts. */
static void unwind_into(Stack *stack, uintptr_t caller, int limit)
{
    *stack = (Stack) { .n = 0 };
    Unwinding unwinding = { .caller = caller, .limit = limit, .stack = stack };
    unwind_backtrace(one_frame, &unwinding);
}

/* Records @block, allocated by a call returning to @caller, with its stack. */
void exact_record(void *block, uintptr_t caller)
{
    if (block == NULL || unwind_backtrace == NULL || unwind_get_ip == NULL)
        return;
    exact_busy++;
    Stack stack;
    unwind_into(&stack, caller, exact_sites.depth);
    if (stack.n == 0)
        stack.pcs[stack.n++] = caller;  /* the unwinder lost its way: the caller at least */
    pthread_mutex_lock(&exact_table.lock);
    uint32_t index = keep_stack(&stack);
    if (index != UINT32_MAX)
        hidden_table_put(&exact_table.blocks, block, index);
    pthread_mutex_unlock(&exact_table.lock);
    exact_busy--;
}

int exact_unwind(uintptr_t caller, uintptr_t *pcs, int max)
{
    if (unwind_backtrace == NULL || unwind_get_ip == NULL || max <= 0)
        return 0;
    Stack stack;
    unwind_into(&stack, caller, max);
    int n = stack.n < max ? stack.n : max;
    memcpy(pcs, stack.pcs, (size_t) n * sizeof *pcs);
    return n;
}

void exact_forget(const volatile void *block)
{
    if (block == NULL || exact_table.blocks.used == 0)
        return;
    pthread_mutex_lock(&exact_table.lock);
    hidden_table_take(&exact_table.blocks, block);
    pthread_mutex_unlock(&exact_table.lock);
}
