/* What the exact pass's library's files share (gemleak_exact.so, src/run/
 * client/ only): the table of blocks and their stacks that exact.c keeps,
 * and exact_write.c writes into the process's report. Hidden: nothing of it
 * is the library's interface. */
#ifndef GEMLEAK_CLIENT_EXACT_INT_H
#define GEMLEAK_CLIENT_EXACT_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define HIDDEN_SYMBOL __attribute__((visibility("hidden")))

#define MAX_DEPTH 64
#define LINE_BYTES 4096
#define RENDER_BYTES 8192

/* The table holds no block's address as it is (the runtime's leak check
 * scans this library's memory for pointers): owners.c's mask. */
#define HIDE(address) ((uintptr_t) (address) ^ (uintptr_t) UINT64_C(0xA5A5A5A5A5A5A5A5))
#define EMPTY ((uintptr_t) 0)
#define GONE ((uintptr_t) 1)

typedef void (*ReportLine)(const char *);
typedef void (*Symbolize)(void *, const char *, char *, size_t);

/* One stack, its return addresses outward from the allocation's caller. */
typedef struct {
    uintptr_t pcs[MAX_DEPTH];
    int n;
    int written;       /* its line is in this process's report */
} Stack;

typedef struct {
    uintptr_t address;      /* EMPTY, GONE or a block's, HIDE()n */
    uint32_t stack;         /* an index into exact_stacks */
} Slot;

/* Nothing done with it held may allocate or free: the hooks take it. */
extern pthread_mutex_t exact_lock HIDDEN_SYMBOL;
extern Slot *exact_slots HIDDEN_SYMBOL;             /* mapped, exact_capacity of them */
extern size_t exact_capacity HIDDEN_SYMBOL, exact_used HIDDEN_SYMBOL;
extern Stack *exact_stacks HIDDEN_SYMBOL;           /* mapped */
extern size_t exact_n_stacks HIDDEN_SYMBOL;
extern ReportLine exact_report_line HIDDEN_SYMBOL;  /* the runtime's */
extern Symbolize exact_symbolize HIDDEN_SYMBOL;     /* the runtime's */
/* This thread is in the library: what it allocates is not looked at. */
extern __thread int exact_busy __attribute__((tls_model("initial-exec"))) HIDDEN_SYMBOL;

/* Returns: @bytes of fresh memory, mapped (not the runtime's), or NULL. */
void *exact_map(size_t bytes) HIDDEN_SYMBOL;

/* In a child just forked: its report has none of the frames and stacks
 * written yet (exact_write.c). */
void exact_forget_written(void) HIDDEN_SYMBOL;

/* Writes the table of blocks still allocated, with their stacks, into the
 * process's report (exact_write.c); the helper calls it before the checks
 * it makes. */
void gemleak_exact_write(void);

#endif
