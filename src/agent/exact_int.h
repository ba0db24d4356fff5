/* What the exact pass's files of the allocation front share
 * (gemleak_alloc.so, src/agent/ only): the sites that exact_sites.c
 * reads and alloc.c's allocation functions look for, the table of blocks
 * and their stacks that exact_blocks.c keeps, and exact_write.c writes
 * into the process's report. Hidden: nothing of it is the library's
 * interface. */
#ifndef GEMLEAK_CLIENT_EXACT_INT_H
#define GEMLEAK_CLIENT_EXACT_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <unwind.h>

#include "hidden_table_int.h"

#define HIDDEN_SYMBOL __attribute__((visibility("hidden")))

#define MAX_DEPTH 64
#define LINE_BYTES 4096
#define RENDER_BYTES 8192

typedef void (*ReportLine)(const char *);
typedef void (*Symbolize)(void *, const char *, char *, size_t);
typedef _Unwind_Reason_Code (*Backtrace)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*GetIP)(struct _Unwind_Context *);

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

/* The sites (exact_sites.c). */
extern Site *exact_sites HIDDEN_SYMBOL;             /* mapped, exact_n_sites of them */
extern size_t exact_n_sites HIDDEN_SYMBOL;
extern int exact_depth HIDDEN_SYMBOL;               /* program counters after the allocator's frame */
/* Sites resolved at least once: allocations are looked at. */
extern volatile int exact_ready HIDDEN_SYMBOL;
/* A filter on sizes (a bit per size modulo 4096) that most allocations
 * fail at once. */
extern uint64_t exact_size_bits[64] HIDDEN_SYMBOL;

/* Nothing done with it held may allocate or free: the hooks take it. */
extern pthread_mutex_t exact_lock HIDDEN_SYMBOL;
/* The blocks, each with its stack's index into exact_stacks. */
extern HiddenTable exact_blocks HIDDEN_SYMBOL;
extern Stack *exact_stacks HIDDEN_SYMBOL;           /* mapped */
extern size_t exact_n_stacks HIDDEN_SYMBOL;
extern ReportLine exact_report_line HIDDEN_SYMBOL;  /* the runtime's */
extern Symbolize exact_symbolize HIDDEN_SYMBOL;     /* the runtime's */
extern Backtrace exact_backtrace HIDDEN_SYMBOL;     /* libgcc's unwinder */
extern GetIP exact_get_ip HIDDEN_SYMBOL;            /* libgcc's */
/* This thread is in the library: what it allocates is not looked at. */
extern __thread int exact_busy __attribute__((tls_model("initial-exec"))) HIDDEN_SYMBOL;

/* Returns: @bytes of fresh memory, mapped (not the runtime's), or NULL. */
void *exact_map(size_t bytes) HIDDEN_SYMBOL;

/* Looks up where this library lies, as it starts (exact_blocks.c). */
void exact_find_self(void) HIDDEN_SYMBOL;

/* Reads the sites file @path (exact_sites.c), as the library starts. */
void exact_read_sites(const char *path) HIDDEN_SYMBOL;

/* Gives the sites of the modules loaded now their return addresses. */
void exact_resolve(void) HIDDEN_SYMBOL;

/* Returns: 1 if an allocation of @size returning to @caller, below the
 * extension's call returning to @via (0: none), is a site's. Inline: every
 * allocation asks, and most fail at the filter on sizes. */
static inline int exact_wanted(uintptr_t caller, uintptr_t via, size_t size)
{
    if (!exact_ready || exact_busy ||
        !(exact_size_bits[(size & 4095) / 64] & (UINT64_C(1) << (size & 63))))
        return 0;
    for (size_t s = 0; s < exact_n_sites; s++)
        if (exact_sites[s].address == (exact_sites[s].via ? via : caller) && exact_sites[s].address != 0 &&
            exact_sites[s].size == size)
            return 1;
    return 0;
}

/* Records @block, allocated by a call returning to @caller, with its stack
 * (exact_blocks.c). */
void exact_record(void *block, uintptr_t caller) HIDDEN_SYMBOL;

/* Takes @block (nullable) out of the table, if it is there. */
void exact_forget(const volatile void *block) HIDDEN_SYMBOL;

/* In a child just forked: its report has none of the frames and stacks
 * written yet (exact_write.c). */
void exact_forget_written(void) HIDDEN_SYMBOL;

/* Writes the table of blocks still allocated, with their stacks, into the
 * process's report (exact_write.c); the helper calls it before the checks
 * it makes. */
void gemleak_exact_write(void);

#endif
