/* The hidden-address table the libraries of src/agent/ keep their blocks
 * in (src/agent/hidden_table.c): a value for each block, the blocks found
 * again, a block taken out, growth, and no block's address as it is. */
#define _GNU_SOURCE
#include "testutil.h"
#include "../../src/agent/hidden_table_int.h"

#include <string.h>
#include <sys/mman.h>

/* Addresses as the allocator hands them out: 16-byte aligned, apart. */
static const void *block_at(size_t i)
{
    return (const void *) (uintptr_t) (0x7f0000001000u + i * 48);
}

/* Returns: the value @table gives @block, or UINTPTR_MAX when it has none
 * (looked up through the table's own walk, as its owners read it). */
static uintptr_t value_of(const HiddenTable *table, const void *block)
{
    for (size_t i = hidden_table_next(table, 0); i < table->capacity; i = hidden_table_next(table, i + 1))
        if (HIDDEN_KEY(table->slots[i].key) == (uintptr_t) block)
            return table->slots[i].value;
    return UINTPTR_MAX;
}

static void table_unmap(HiddenTable *table)
{
    if (table->slots != NULL)
        munmap(table->slots, table->capacity * sizeof *table->slots);
    if (table->spare != NULL)
        munmap(table->spare, table->capacity * sizeof *table->spare);
}

START_TEST(test_put_take_find)
{
    HiddenTable table = HIDDEN_TABLE_INIT(16);
    ck_assert_ptr_null(table.slots);                   /* nothing mapped before the first block */
    ck_assert_int_eq(hidden_table_next(&table, 0), 0); /* and nothing to walk */
    hidden_table_take(&table, block_at(1));            /* taking from an empty table */
    ck_assert_int_eq(hidden_table_put(&table, block_at(1), 10), 1);
    ck_assert_int_eq(hidden_table_put(&table, block_at(2), 20), 1);
    ck_assert_uint_eq(table.capacity, 16);
    ck_assert_uint_eq(table.used, 2);
    ck_assert_uint_eq(value_of(&table, block_at(1)), 10);
    ck_assert_uint_eq(value_of(&table, block_at(2)), 20);
    /* a block put again keeps one slot, with its new value */
    ck_assert_int_eq(hidden_table_put(&table, block_at(1), 11), 1);
    ck_assert_uint_eq(table.used, 2);
    ck_assert_uint_eq(value_of(&table, block_at(1)), 11);
    /* taken out: gone, its slot left GONE; a block not there changes nothing */
    hidden_table_take(&table, block_at(1));
    hidden_table_take(&table, block_at(3));
    ck_assert_uint_eq(table.used, 1);
    ck_assert_uint_eq(table.gone, 1);
    ck_assert_uint_eq(value_of(&table, block_at(1)), UINTPTR_MAX);
    ck_assert_uint_eq(value_of(&table, block_at(2)), 20);
    /* put back: found again */
    ck_assert_int_eq(hidden_table_put(&table, block_at(1), 12), 1);
    ck_assert_uint_eq(value_of(&table, block_at(1)), 12);
    ck_assert_uint_eq(table.used, 2);
    table_unmap(&table);
}
END_TEST

/* A block popped gives its value back once (growth.c takes a freed
 * block's site and size so); a block not there gives nothing and leaves
 * the value asked with as it was. */
START_TEST(test_pop_gives_the_value)
{
    HiddenTable table = HIDDEN_TABLE_INIT(16);
    uintptr_t value = 99;
    ck_assert_int_eq(hidden_table_pop(&table, block_at(1), &value), 0);   /* empty table */
    ck_assert_uint_eq(value, 99);
    ck_assert_int_eq(hidden_table_put(&table, block_at(1), 10), 1);
    ck_assert_int_eq(hidden_table_put(&table, block_at(2), 20), 1);
    ck_assert_int_eq(hidden_table_pop(&table, block_at(2), &value), 1);
    ck_assert_uint_eq(value, 20);
    ck_assert_uint_eq(table.used, 1);
    value = 99;
    ck_assert_int_eq(hidden_table_pop(&table, block_at(2), &value), 0);   /* once */
    ck_assert_int_eq(hidden_table_pop(&table, block_at(3), &value), 0);
    ck_assert_uint_eq(value, 99);
    ck_assert_uint_eq(value_of(&table, block_at(1)), 10);
    table_unmap(&table);
}
END_TEST

/* The runtime's leak check scans the libraries' memory for pointers: the
 * table holds no block's address as it is. */
START_TEST(test_no_address_as_it_is)
{
    HiddenTable table = HIDDEN_TABLE_INIT(16);
    for (size_t i = 0; i < 5; i++)
        ck_assert_int_eq(hidden_table_put(&table, block_at(i), i), 1);
    for (size_t s = 0; s < table.capacity; s++)
        for (size_t i = 0; i < 5; i++)
            ck_assert_uint_ne(table.slots[s].key, (uintptr_t) block_at(i));
    ck_assert_uint_eq(HIDDEN_KEY(HIDDEN_KEY(0x1234)), 0x1234);   /* its own inverse */
    table_unmap(&table);
}
END_TEST

START_TEST(test_grows_and_keeps_every_block)
{
    HiddenTable table = HIDDEN_TABLE_INIT(16);
    enum { N = 5000 };
    for (size_t i = 0; i < N; i++)
        ck_assert_int_eq(hidden_table_put(&table, block_at(i), i * 3), 1);
    ck_assert_uint_eq(table.used, N);
    ck_assert_uint_ge(table.capacity, 2 * N);     /* never more than half full */
    ck_assert_uint_eq(table.capacity & (table.capacity - 1), 0);   /* a power of two */
    for (size_t i = 0; i < N; i++)
        ck_assert_uint_eq(value_of(&table, block_at(i)), i * 3);
    /* copied out, in the table's order: every block once */
    HiddenSlot *copy = g_new0(HiddenSlot, N + 1);
    ck_assert_uint_eq(hidden_table_copy(&table, copy, N + 1), N);
    ck_assert_uint_eq(hidden_table_copy(&table, copy, 7), 7);      /* up to max */
    g_free(copy);
    table_unmap(&table);
}
END_TEST

/* Blocks allocated and freed over and over (a long suite), never more than
 * a quarter of the table at once: the GONE slots are cleared when the
 * table is rebuilt, which then stays as large. */
START_TEST(test_churn_stays_bounded)
{
    HiddenTable table = HIDDEN_TABLE_INIT(64);
    const HiddenSlot *seen[3] = { NULL, NULL, NULL };
    size_t n_seen = 0;
    for (size_t round = 0; round < 200; round++) {
        for (size_t i = 0; i < 10; i++)
            ck_assert_int_eq(hidden_table_put(&table, block_at(round * 10 + i), round), 1);
        /* the blocks of this round are all there, after any rebuild */
        for (size_t i = 0; i < 10; i++)
            ck_assert_uint_eq(value_of(&table, block_at(round * 10 + i)), round);
        for (size_t i = 0; i < 10; i++)
            hidden_table_take(&table, block_at(round * 10 + i));
        if ((n_seen == 0 || seen[n_seen - 1] != table.slots) && n_seen < 3)
            seen[n_seen++] = table.slots;
    }
    /* rebuilt many times, in two mappings, one the other's spare */
    ck_assert_uint_eq(n_seen, 3);
    ck_assert_ptr_eq(seen[2], seen[0]);
    ck_assert_ptr_eq(table.spare, seen[1] == table.slots ? seen[0] : seen[1]);
    for (size_t i = 0; i < table.capacity; i++)
        ck_assert_uint_eq(table.spare[i].key, HIDDEN_EMPTY);   /* cleared */
    ck_assert_uint_eq(table.used, 0);
    ck_assert_uint_eq(table.capacity, 64);
    ck_assert_uint_eq(hidden_table_next(&table, 0), table.capacity);
    table_unmap(&table);
}
END_TEST

Suite *gl_hidden_table_suite(void)
{
    Suite *suite = suite_create("hidden_table");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_put_take_find);
    tcase_add_test(tc, test_pop_gives_the_value);
    tcase_add_test(tc, test_no_address_as_it_is);
    tcase_add_test(tc, test_grows_and_keeps_every_block);
    tcase_add_test(tc, test_churn_stays_bounded);
    suite_add_tcase(suite, tc);
    return suite;
}
