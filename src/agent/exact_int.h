/* What the exact pass's files share (gemleak_alloc.so, src/agent/
 * exact_*.c; alloc.c says what the pass does). Each file owns its state
 * and the files above it read it, one way down:
 *
 *   alloc.c          the allocation functions: ask exact_wanted(), record,
 *                    forget; start the pass, write it before each check
 *   exact_write.c    writes the table into the process's report
 *                    (with the runtime's report and symbolizer)
 *   exact_blocks.c   the table of blocks and their stacks (exact_table)
 *   exact_sites.c    the sites, read as the library starts (exact_sites),
 *                    and the thread in the middle of the pass (exact_busy)
 *
 * Hidden: nothing of it is the library's interface. */
#ifndef GEMLEAK_AGENT_EXACT_INT_H
#define GEMLEAK_AGENT_EXACT_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_int.h"
#include "hidden_table_int.h"

#define MAX_DEPTH 64
#define LINE_BYTES 4096

/* A site: a call of an allocation function, by the module it is in and
 * its offset there as the runtime prints it, and a size it leaked; or an
 * extension's call of one of Ruby's allocation functions (@via), below
 * which a block of that size was allocated. */
typedef struct {
    uintptr_t offset;
    size_t size;
    uint32_t module;        /* an index into exact_sites.c's modules */
    int via;
    uintptr_t address;      /* the return address once its module is loaded, else 0 */
} Site;

/* One stack, its return addresses outward from the allocation's caller. */
typedef struct {
    uintptr_t pcs[MAX_DEPTH];
    int n;
    int written;       /* its line is in this process's report */
} Stack;

/* ---- exact_sites.c ---------------------------------------------------------- */

/* The sites: read by every allocation (exact_wanted()), written as the
 * library starts and as modules load. */
typedef struct {
    Site *at;                   /* mapped, n of them */
    size_t n;
    int depth;                  /* program counters after the allocator's frame */
    volatile int ready;         /* resolved at least once: allocations are looked at */
    /* A filter on sizes (a bit per size modulo 4096) that most allocations
     * fail at once. */
    uint64_t size_bits[64];
} ExactSites;

extern ExactSites exact_sites AGENT_HIDDEN;

/* This thread is in the exact pass: what it allocates is not looked at. */
extern __thread int exact_busy __attribute__((tls_model("initial-exec"))) AGENT_HIDDEN;

/* Reads the sites file @path, as the library starts. */
void exact_read_sites(const char *path) AGENT_HIDDEN;

/* Gives the sites of the modules loaded now their return addresses. */
void exact_resolve(void) AGENT_HIDDEN;

/* Returns: 1 if an allocation of @size returning to @caller, below the
 * extension's call returning to @via (0: none), is a site's. Inline: every
 * allocation asks, and most fail at the filter on sizes. */
static inline int exact_wanted(uintptr_t caller, uintptr_t via, size_t size)
{
    if (!exact_sites.ready || exact_busy ||
        !(exact_sites.size_bits[(size & 4095) / 64] & (UINT64_C(1) << (size & 63))))
        return 0;
    for (size_t s = 0; s < exact_sites.n; s++)
        if (exact_sites.at[s].address == (exact_sites.at[s].via ? via : caller) &&
            exact_sites.at[s].address != 0 && exact_sites.at[s].size == size)
            return 1;
    return 0;
}

/* ---- exact_blocks.c ---------------------------------------------------------- */

/* The blocks the sites allocated and their stacks. Nothing done with the
 * lock held may allocate or free: the runtime's hooks take it. */
typedef struct {
    pthread_mutex_t lock;
    HiddenTable blocks;         /* each block with its stack's index into stacks */
    Stack *stacks;              /* mapped, capacity of them, each once */
    size_t n_stacks;
    size_t capacity;
} ExactTable;

extern ExactTable exact_table AGENT_HIDDEN;

/* Finds libgcc's unwinder and where this library lies, as the pass
 * starts. Returns: 0 when there is no unwinder. */
int exact_blocks_start(void) AGENT_HIDDEN;

/* Records @block, allocated by a call returning to @caller, with its stack. */
void exact_record(void *block, uintptr_t caller) AGENT_HIDDEN;

/* Unwinds the stack of an allocation made by a call returning to
 * @caller (the caller's frame on), into @pcs (@max of them, counting
 * neither this library's frames nor gemleak_via's), outward; the caller
 * must keep what it allocates meanwhile from coming back here.
 * Returns: how many; 0 when there is no unwinder or it lost its way. */
int exact_unwind(uintptr_t caller, uintptr_t *pcs, int max) AGENT_HIDDEN;

/* Takes @block (nullable) out of the table, if it is there. */
void exact_forget(const volatile void *block) AGENT_HIDDEN;

/* ---- exact_write.c ------------------------------------------------------------ */

/* Keeps the runtime's @report_line and finds its symbolizer, as the pass
 * starts. Returns: 0 when the runtime has no symbolizer. */
int exact_write_start(AgentReportLine report_line) AGENT_HIDDEN;

/* In a child just forked: its report has none of the frames and stacks
 * written yet. */
void exact_forget_written(void) AGENT_HIDDEN;

/* Writes the table of blocks still allocated, with their stacks, into the
 * process's report; alloc.c's gemleak_alloc_before_check() calls it. */
void exact_write_table(void) AGENT_HIDDEN;

#endif
