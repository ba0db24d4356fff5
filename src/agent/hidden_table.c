/* A table of blocks by their addresses, hidden from the leak check:
 * hidden_table_int.h says what it is and who keeps one. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "hidden_table_int.h"

static size_t slot_of(uintptr_t key, size_t mask)
{
    return (size_t) (((uint64_t) (key >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & mask;
}

/* Moves the blocks into a table of @capacity slots. A table rebuilt as
 * large as it was (blocks allocated and freed over and over leave GONE
 * slots) goes into its spare, and the old slots, cleared, become the
 * spare: no mapping made, and no page touched for the first time, at each
 * rebuild. Returns: 0 when no memory was left (nothing moved). */
static int rehash(HiddenTable *table, size_t capacity)
{
    int same = capacity == table->capacity && table->spare != NULL;
    HiddenSlot *fresh = same ? table->spare : agent_map(capacity * sizeof *fresh);
    if (fresh == NULL)
        return 0;
    for (size_t i = 0; i < table->capacity; i++) {
        if (table->slots[i].key <= HIDDEN_GONE)
            continue;
        size_t j = slot_of(table->slots[i].key, capacity - 1);
        while (fresh[j].key != HIDDEN_EMPTY)
            j = (j + 1) & (capacity - 1);
        fresh[j] = table->slots[i];
    }
    if (table->spare != NULL && !same)
        munmap(table->spare, table->capacity * sizeof *table->spare);
    table->spare = NULL;
    if (table->slots != NULL && capacity == table->capacity) {
        memset(table->slots, 0, capacity * sizeof *table->slots);
        table->spare = table->slots;
    } else if (table->slots != NULL) {
        munmap(table->slots, table->capacity * sizeof *table->slots);
    }
    table->slots = fresh;
    table->capacity = capacity;
    table->gone = 0;
    return 1;
}

int hidden_table_put(HiddenTable *table, const volatile void *block, uintptr_t value)
{
    /* Rebuilt when half full: twice as large when the blocks alone fill a
     * quarter, else as large, without its GONE slots. */
    if ((table->used + table->gone + 1) * 2 > table->capacity &&
        !rehash(table, table->capacity == 0                     ? table->first
                       : (table->used + 1) * 4 > table->capacity ? table->capacity * 2
                                                                 : table->capacity))
        return 0;
    uintptr_t key = HIDDEN_KEY(block);
    size_t mask = table->capacity - 1;
    size_t i = slot_of(key, mask);
    size_t free_slot = SIZE_MAX;
    while (table->slots[i].key != HIDDEN_EMPTY && table->slots[i].key != key) {
        if (table->slots[i].key == HIDDEN_GONE && free_slot == SIZE_MAX)
            free_slot = i;
        i = (i + 1) & mask;
    }
    if (table->slots[i].key == HIDDEN_EMPTY) {
        if (free_slot != SIZE_MAX) {
            i = free_slot;
            table->gone--;
        }
        table->used++;
    }
    table->slots[i] = (HiddenSlot) { .key = key, .value = value };
    return 1;
}

int hidden_table_pop(HiddenTable *table, const volatile void *block, uintptr_t *value)
{
    if (table->used == 0)
        return 0;
    uintptr_t key = HIDDEN_KEY(block);
    size_t mask = table->capacity - 1;
    for (size_t i = slot_of(key, mask); table->slots[i].key != HIDDEN_EMPTY; i = (i + 1) & mask)
        if (table->slots[i].key == key) {
            table->slots[i].key = HIDDEN_GONE;
            table->used--;
            table->gone++;
            *value = table->slots[i].value;
            return 1;
        }
    return 0;
}

void hidden_table_take(HiddenTable *table, const volatile void *block)
{
    uintptr_t value;
    hidden_table_pop(table, block, &value);
}

size_t hidden_table_next(const HiddenTable *table, size_t i)
{
    while (i < table->capacity && table->slots[i].key <= HIDDEN_GONE)
        i++;
    return i;
}

size_t hidden_table_copy(const HiddenTable *table, HiddenSlot *out, size_t max)
{
    size_t n = 0;
    for (size_t i = hidden_table_next(table, 0); i < table->capacity && n < max;
         i = hidden_table_next(table, i + 1))
        out[n++] = table->slots[i];
    return n;
}
