/* A table of blocks by their addresses, hidden from the leak check
 * (hidden_table.c): what the libraries of src/agent/ keep of the blocks
 * they watch, a value for each (the allocation front: the size of a block
 * the check cannot judge, alloc.c; the exact pass: a block's stack,
 * exact_blocks.c; the client library: the test that allocated it,
 * owners.c, and the site and size of a block a target's call allocated,
 * growth.c). Compiled into each library that keeps one. src/agent/ only.
 *
 * The table holds no block's address as it is, but HIDDEN_KEY() of it: the
 * runtime's leak check scans these libraries' memory, and what a thread's
 * stack still holds of theirs (a sort's copies), for anything that looks
 * like a pointer into the heap, and a copy of a lost block's would keep it
 * found. It lives in memory mapped for it (agent_map()), never in the
 * allocator it watches. An open-addressed table, probed linearly: a block
 * freed leaves a GONE slot, which ends no probe, and the table is rebuilt
 * when the slots in use and gone fill half of it.
 *
 * It takes no lock: its owner holds its own around every call (the
 * allocation front and the exact pass a mutex, the client library a spin
 * lock, each also held around a fork). */
#ifndef GEMLEAK_AGENT_HIDDEN_TABLE_INT_H
#define GEMLEAK_AGENT_HIDDEN_TABLE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "agent_int.h"

/* The mask over a block's address; its own inverse. */
#define HIDDEN_KEY(address) ((uintptr_t) (address) ^ (uintptr_t) UINT64_C(0xA5A5A5A5A5A5A5A5))
#define HIDDEN_EMPTY ((uintptr_t) 0)
#define HIDDEN_GONE ((uintptr_t) 1)  /* a block taken out: its slot ends no probe */

typedef struct {
    uintptr_t key;      /* HIDDEN_EMPTY, HIDDEN_GONE or a block's HIDDEN_KEY() */
    uintptr_t value;    /* the owner's: a size, a stack's index, an owner's */
} HiddenSlot;

typedef struct {
    HiddenSlot *slots;  /* mapped, capacity of them, a power of two; NULL at first */
    size_t capacity;
    size_t used;        /* the blocks in it */
    size_t gone;        /* HIDDEN_GONE slots */
    size_t first;       /* the slots it maps at its first block */
    HiddenSlot *spare;  /* mapped, capacity of them, cleared: where a rebuild as large goes; or NULL */
} HiddenTable;

/* A table that maps @first_slots (a power of two) at its first block. */
#define HIDDEN_TABLE_INIT(first_slots) \
    { .slots = NULL, .capacity = 0, .used = 0, .gone = 0, .first = (first_slots), .spare = NULL }

/* Gives @block (not NULL) @value, adding it when it is not there.
 * Returns: 0 when no memory was left: the table is as it was. */
int hidden_table_put(HiddenTable *table, const volatile void *block, uintptr_t value) AGENT_HIDDEN;

/* Takes @block out of the table, if it is there. */
void hidden_table_take(HiddenTable *table, const volatile void *block) AGENT_HIDDEN;

/* Takes @block out of the table. Returns: 1 when it was there, its value
 * in *@value; 0 when it was not (*@value as it was). */
int hidden_table_pop(HiddenTable *table, const volatile void *block, uintptr_t *value) AGENT_HIDDEN;

/* Returns: the index of the first slot from @i on that holds a block;
 * table->capacity when none does. The slots in the table's order:
 * for (i = hidden_table_next(t, 0); i < t->capacity; i = hidden_table_next(t, i + 1)). */
size_t hidden_table_next(const HiddenTable *table, size_t i) AGENT_HIDDEN;

/* Copies the slots that hold a block, in the table's order, into @out, up
 * to @max of them. Returns: how many it copied. */
size_t hidden_table_copy(const HiddenTable *table, HiddenSlot *out, size_t max) AGENT_HIDDEN;

#endif
