/* The exact pass's reports (gemleak/read/sanitizer_exact.h): the sites of
 * a fast pass's cut records, the stacks an exact pass found there, and the
 * fast report rewritten with them. Real captures (fixtures/lsan/exact-*,
 * see its README) and hand-made edges. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/input.h"
#include "gemleak/read/sanitizer_exact.h"
#include "gemleak/base/protocol.h"
#include "gemleak/read/sanitizer_reader.h"

#include <string.h>

/* The judge's rule, as a reader's test needs it: a stack is cut unless it
 * reaches main or a fiber's start. */
static gboolean stack_short_of_main(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (g_strcmp0(stack->frames[i].fn, "main") == 0 ||
            g_strcmp0(stack->frames[i].fn, "fiber_entry") == 0)
            return FALSE;
    return TRUE;
}

static gboolean cut_short_of_main(const GlExactStack *stack)
{
    return !stack->exact && stack_short_of_main(stack->stack);
}

/* Returns: (transfer full): the text of fixture @relative. */
static char *fixture_text(const char *relative, gsize *length)
{
    g_autofree char *path = gl_test_fixture(relative);
    char *text = NULL;
    ck_assert_msg(g_file_get_contents(path, &text, length, NULL), "%s", relative);
    return text;
}

/* Returns: (transfer full): @text read as records, through the input seam
 * as gemleak filter reads a report (free the array). */
static GPtrArray *records_of(const char *text)
{
    GlInput *input = gl_input_open_memory(gl_input_format_find("sanitizer"), text, strlen(text),
                                          "lsan.2819");
    GPtrArray *records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
    GlRecord *record;
    while ((record = gl_input_next(input)) != NULL)
        g_ptr_array_add(records, record);
    ck_assert_uint_gt(gl_input_process(input)->stands_for, 0);
    gl_input_free(input);
    return records;
}

/* Returns: (transfer none) (nullable): the record with @n_frames frames
 * whose second is @fn and that leaked @bytes. */
static const GlRecord *record_of(GPtrArray *records, const char *fn, guint64 bytes)
{
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        if (record->stack.n_frames > 1 && g_strcmp0(record->stack.frames[1].fn, fn) == 0 &&
            record->leaked_bytes == bytes)
            return record;
    }
    return NULL;
}

/* Each block of a cut record has a site: the call after the allocator's
 * frame, by module and offset, and its size. */
START_TEST(test_sites_of_cut_records)
{
    gsize length = 0;
    g_autofree char *fast = fixture_text("lsan/exact-fast-ruby34.lsan", &length);
    g_autoptr(GHashTable) sites = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) tests = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GlExactFound found = { 0 };
    gl_exact_sites(fast, length, cut_short_of_main, sites, tests, &found, NULL);
    ck_assert_uint_eq(found.blocks, 4);
    ck_assert_uint_eq(found.hidden, 0);
    ck_assert(found.untested);  /* no owners: no test to run alone */
    ck_assert_uint_eq(g_hash_table_size(sites), 3);
    ck_assert(g_hash_table_contains(sites, "100\t1350\t/tmp/s28/cap/leaky/leaky.so"));
    ck_assert(g_hash_table_contains(sites, "48\t1350\t/tmp/s28/cap/leaky/leaky.so"));
    ck_assert(g_hash_table_contains(sites, "120\t8296a\t/root/.cache/gemleak/ruby-3.4.5/bin/ruby"));
    ck_assert_uint_eq(g_hash_table_size(tests), 0);

    /* a whole stack has no site to unwind again */
    g_autoptr(GHashTable) none = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gsize again_length = 0;
    g_autofree char *again = fixture_text("lsan/exact-again-ruby34.lsan", &again_length);
    GlExactFound whole = { 0 };
    gl_exact_sites(fast, length, cut_short_of_main, none, NULL, &whole, NULL);
    ck_assert_uint_eq(g_hash_table_size(none), 3);

    /* a forked child's inherited blocks (its parent's run again gives
     * them stacks) are left out: the 48 bytes' site with them */
    g_autoptr(GHashTable) skip = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_add(skip, gl_exact_block_key(0x603000022080, 48));
    g_hash_table_add(skip, gl_exact_block_key(0x607000000ee0, 100));
    g_autoptr(GHashTable) fewer = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GlExactFound left = { 0 };
    gl_exact_sites(fast, length, cut_short_of_main, fewer, NULL, &left, skip);
    ck_assert_uint_eq(left.blocks, 2);
    ck_assert_uint_eq(g_hash_table_size(fewer), 2);
    ck_assert(!g_hash_table_contains(fewer, "48\t1350\t/tmp/s28/cap/leaky/leaky.so"));
}
END_TEST

/* The exact pass's stacks, joined to its check's objects by address,
 * replace the fast stacks block by block: the same records as an exact
 * run's, each stack whole. */
START_TEST(test_rewrite_gives_whole_stacks)
{
    gsize fast_length = 0, again_length = 0;
    g_autofree char *fast = fixture_text("lsan/exact-fast-ruby34.lsan", &fast_length);
    g_autofree char *again = fixture_text("lsan/exact-again-ruby34.lsan", &again_length);
    g_autoptr(GlExactDonors) donors = gl_exact_donors_new();
    /* the runtime's own records there are fast, cut: only the table counts */
    ck_assert_uint_eq(gl_exact_donors_add(donors, again, again_length, cut_short_of_main), 4);
    GlExactCount count = { 0 };
    g_autofree char *rewritten = gl_exact_rewrite(fast, fast_length, cut_short_of_main, donors,
                                                  2819, FALSE, &count, NULL, NULL);
    ck_assert_uint_eq(count.records, 4);
    ck_assert_uint_eq(count.blocks, 4);
    ck_assert_uint_eq(count.given, 4);
    /* a skipped block keeps its cut stack and counts nowhere */
    g_autoptr(GlExactDonors) fresh = gl_exact_donors_new();
    gl_exact_donors_add(fresh, again, again_length, cut_short_of_main);
    g_autoptr(GHashTable) skip = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_add(skip, gl_exact_block_key(0x603000022080, 48));
    GlExactCount skipped = { 0 };
    g_autofree char *kept = gl_exact_rewrite(fast, fast_length, cut_short_of_main, fresh, 2819,
                                             FALSE, &skipped, skip, NULL);
    ck_assert_uint_eq(skipped.blocks, 3);
    ck_assert_uint_eq(skipped.given, 3);
    ck_assert_ptr_nonnull(strstr(kept, "0x603000022080 (48 bytes)"));
    g_autoptr(GPtrArray) records = records_of(rewritten);
    ck_assert_uint_eq(records->len, 4);
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        ck_assert_str_eq(record->stack.frames[0].fn, "__interceptor_malloc");
        ck_assert_msg(!stack_short_of_main(&record->stack), "record %u is cut", i);
    }
    const GlRecord *xmalloc = record_of(records, "rb_gc_impl_malloc", 120);
    ck_assert_ptr_nonnull(xmalloc);
    ck_assert_str_eq(xmalloc->stack.frames[4].fn, "leaky_leak_xmalloc");
    const GlRecord *init = record_of(records, "leaky_alloc", 48);
    ck_assert_ptr_nonnull(init);
    ck_assert_str_eq(init->stack.frames[2].fn, "Init_leaky");
    /* the two calls of Leaky.leak, on two stacks: two records */
    guint leaks = 0;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        leaks += g_strcmp0(record->stack.frames[2].fn, "leaky_leak") == 0 && record->leaked_bytes == 100;
    }
    ck_assert_uint_eq(leaks, 2);
    /* every other line as it was */
    ck_assert_ptr_nonnull(strstr(rewritten, "SUMMARY: LeakSanitizer: 368 byte(s) leaked in 4 "
                                            "allocation(s)."));
}
END_TEST

/* A block the exact pass did not lose again keeps the fast record (cut:
 * never a pass); a stack given once is not given twice. */
START_TEST(test_rewrite_keeps_what_was_not_found_again)
{
    gsize fast_length = 0;
    g_autofree char *fast = fixture_text("lsan/exact-fast-ruby34.lsan", &fast_length);
    g_autoptr(GlExactDonors) donors = gl_exact_donors_new();
    GlExactCount count = { 0 };
    g_autofree char *rewritten = gl_exact_rewrite(fast, fast_length, cut_short_of_main, donors,
                                                  2819, FALSE, &count, NULL, NULL);
    ck_assert_uint_eq(count.blocks, 4);
    ck_assert_uint_eq(count.given, 0);
    g_autoptr(GPtrArray) records = records_of(rewritten);
    /* as they were: the two leaky_leak records, whose fast stacks differ
     * (one is a frame longer), two */
    ck_assert_uint_eq(records->len, 4);
    for (guint i = 0; i < records->len; i++)
        ck_assert(stack_short_of_main(&((const GlRecord *) g_ptr_array_index(records, i))->stack));

    /* one block found again of two: one given, one kept as it was */
    g_autoptr(GlExactDonors) some = gl_exact_donors_new();
    const char *again =
        "gemleak:frame\t0\n"
        "Gm 0 /tmp/s28/cap/leaky/leaky.so\nGf 0 leaky_alloc\nGs 0 /tmp/leaky.c\nG 0 0x7f0000001350 0x1350 0x0 15 0\n"
        "gemleak:frame\t1\n"
        "Gm 0 /tmp/s28/cap/leaky/leaky.so\nGf 0 leaky_leak\nGs 0 /tmp/leaky.c\nG 0 0x7f00000013ac 0x13ac 0x0 33 0\n"
        "gemleak:frame\t2\n"
        "Gm 0 /ruby\nGf 0 main\nGs 0 main.c\nG 0 0x55000000 0x58471 0x0 68 0\n"
        "gemleak:stack\t1\t0 1 2\n"
        "gemleak:stacks\n"
        "gemleak:at\t1\t607000000abc\n"
        "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        "Gm 0 /usr/lib/x86_64-linux-gnu/liblsan.so.0\nGf 0 malloc\nGs 0 x.cpp\nG 0 0x7f 0x13545 0x0 75 0\n"
        "\nObjects leaked above:\n0x607000000abc (100 bytes)\n\n"
        "SUMMARY: LeakSanitizer: 100 byte(s) leaked in 1 allocation(s).\n";
    ck_assert_uint_eq(gl_exact_donors_add(some, again, strlen(again), cut_short_of_main), 1);
    GlExactCount partly = { 0 };
    g_autofree char *half = gl_exact_rewrite(fast, fast_length, cut_short_of_main, some, 2819,
                                             FALSE, &partly, NULL, NULL);
    ck_assert_uint_eq(partly.given, 1);
    g_autoptr(GPtrArray) halves = records_of(half);
    ck_assert_uint_eq(halves->len, 4);
}
END_TEST

/* Two blocks of 100 bytes at one site (leaky_alloc's call of malloc): the
 * fast pass unwound the first exactly itself (the site's first, marked),
 * test_a's; the other's stack is cut, test_b's. The run again loses both
 * and cannot tell which of its two stacks is whose: test_a runs again
 * too, and both blocks share its stacks. Without that, the cut block took
 * the first stack (test_a's path, the one the marked block has), and a
 * stack the run found (test_b's path) was lost: not what --exact-stacks
 * finds. */
START_TEST(test_site_shared_with_a_stack_the_fast_pass_unwound)
{
#define FRAME(n, module, fn, pc) \
    "Gm " #n " " module "\nGf " #n " " fn "\nGs " #n " x.c\nG " #n " 0x7f" pc " 0x" pc " 0x0 1 0\n"
#define MALLOC FRAME(0, "/lsan.so", "malloc", "13545")
#define ALLOC(n) FRAME(n, "/leaky.so", "leaky_alloc", "1350")
    const char *fast =
        "gemleak:owned\tT#test_a\t/t.rb:3\t602000000010\n"
        "gemleak:owned\tT#test_b\t/t.rb:9\t602000000090\n"
        "==7==ERROR: LeakSanitizer: detected memory leaks\n\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        MALLOC FRAME(1, "/gemleak_alloc.so", "gemleak_exact", "2000") ALLOC(2)
        FRAME(3, "/leaky.so", "leaky_leak", "1400") FRAME(4, "/ruby", "main", "5000")
        "\nObjects leaked above:\n0x602000000010 (100 bytes)\n\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        MALLOC ALLOC(1)
        "\nObjects leaked above:\n0x602000000090 (100 bytes)\n\n"
        "SUMMARY: LeakSanitizer: 200 byte(s) leaked in 2 allocation(s).\n"
        "gemleak:done\n";
    const char *again =
        "==8==ERROR: LeakSanitizer: detected memory leaks\n\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        MALLOC ALLOC(1) FRAME(2, "/leaky.so", "leaky_leak", "1400") FRAME(3, "/ruby", "main", "5000")
        "\nObjects leaked above:\n0x6020000000a0 (100 bytes)\n\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        MALLOC ALLOC(1) FRAME(2, "/leaky.so", "leaky_leak_and_raise", "1500")
        FRAME(3, "/ruby", "main", "5000")
        "\nObjects leaked above:\n0x6020000000f0 (100 bytes)\n\n"
        "SUMMARY: LeakSanitizer: 200 byte(s) leaked in 2 allocation(s).\n";
#undef ALLOC
#undef MALLOC
#undef FRAME
    GlExactFound found = { 0 };
    g_autoptr(GHashTable) sites = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) tests = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gl_exact_sites(fast, strlen(fast), cut_short_of_main, sites, tests, &found, NULL);
    ck_assert_uint_eq(found.blocks, 1);
    ck_assert_uint_eq(g_hash_table_size(sites), 1);
    ck_assert_uint_eq(g_hash_table_size(tests), 1);
    ck_assert(g_hash_table_contains(tests, "T#test_b\t/t.rb:9"));
    gl_exact_shared_tests(fast, strlen(fast), sites, tests, NULL);
    ck_assert_uint_eq(g_hash_table_size(sites), 1);
    ck_assert(g_hash_table_contains(tests, "T#test_a\t/t.rb:3"));
    ck_assert_uint_eq(g_hash_table_size(tests), 2);

    g_autoptr(GlExactDonors) donors = gl_exact_donors_new();
    ck_assert_uint_eq(gl_exact_donors_add(donors, again, strlen(again), cut_short_of_main), 2);
    GlExactCount count = { 0 };
    g_autofree char *rewritten = gl_exact_rewrite(fast, strlen(fast), cut_short_of_main, donors,
                                                  7, FALSE, &count, NULL, sites);
    ck_assert_uint_eq(count.records, 1);
    ck_assert_uint_eq(count.blocks, 1);
    ck_assert_uint_eq(count.given, 1);
    /* as --exact-stacks finds them: one block on each path, each whole */
    g_autoptr(GPtrArray) records = records_of(rewritten);
    ck_assert_uint_eq(records->len, 2);
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        ck_assert_uint_eq(record->leaked_bytes, 100);
        ck_assert_str_eq(record->stack.frames[record->stack.n_frames - 1].fn, "main");
    }
    const GlRecord *a = g_ptr_array_index(records, 0), *b = g_ptr_array_index(records, 1);
    ck_assert_str_ne(a->stack.frames[a->stack.n_frames - 2].fn,
                     b->stack.frames[b->stack.n_frames - 2].fn);
}
END_TEST

/* A cut block whose stack carries its owner (the allocation front's frame,
 * "gemleak:owner-frames" and the names written at exit): its test is the
 * one to run again, and the stack the run again gives it keeps the frame,
 * after the allocator's, for the reader to name its test; the names go
 * with the owners when they are taken out, where the frames point stays. */
START_TEST(test_owner_frames_name_the_test_and_stay_through_the_rewrite)
{
#define FRAME(n, module, fn, pc) \
    "Gm " #n " " module "\nGf " #n " " fn "\nGs " #n " x.c\nG " #n " 0x7f" pc " 0x" pc " 0x0 1 0\n"
#define MALLOC FRAME(0, "/lsan.so", "malloc", "13545")
    const char *fast =
        "gemleak:owner-frames\t4000\n"
        "gemleak:owner\t1\tT#test_a\t/t.rb:3\n"
        "gemleak:owner\t2\tT#test_b\t/t.rb:9\n"
        "==7==ERROR: LeakSanitizer: detected memory leaks\n\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        MALLOC FRAME(1, "/h/gemleak_alloc.so", "<null>", "4005")
        FRAME(2, "/leaky.so", "leaky_alloc", "1350")
        "\nObjects leaked above:\n0x602000000090 (100 bytes)\n\n"
        "SUMMARY: LeakSanitizer: 100 byte(s) leaked in 1 allocation(s).\n"
        "gemleak:done\n";
    const char *again =
        "==8==ERROR: LeakSanitizer: detected memory leaks\n\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        MALLOC FRAME(1, "/leaky.so", "leaky_alloc", "1350") FRAME(2, "/leaky.so", "leaky_leak", "1400")
        FRAME(3, "/ruby", "main", "5000")
        "\nObjects leaked above:\n0x6020000000a0 (100 bytes)\n\n"
        "SUMMARY: LeakSanitizer: 100 byte(s) leaked in 1 allocation(s).\n";
#undef MALLOC
#undef FRAME
    GlExactFound found = { 0 };
    g_autoptr(GHashTable) sites = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) tests = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gl_exact_sites(fast, strlen(fast), cut_short_of_main, sites, tests, &found, NULL);
    ck_assert_uint_eq(found.blocks, 1);
    ck_assert(!found.untested);
    ck_assert_uint_eq(g_hash_table_size(tests), 1);
    ck_assert(g_hash_table_contains(tests, "T#test_b\t/t.rb:9"));

    for (int strip = 0; strip <= 1; strip++) {
        g_autoptr(GlExactDonors) donors = gl_exact_donors_new();
        ck_assert_uint_eq(gl_exact_donors_add(donors, again, strlen(again), cut_short_of_main), 1);
        GlExactCount count = { 0 };
        g_autofree char *rewritten = gl_exact_rewrite(fast, strlen(fast), cut_short_of_main,
                                                      donors, 7, strip, &count, NULL, NULL);
        ck_assert_uint_eq(count.given, 1);
        /* the allocator's frame, the owner's, the mark, the stack given */
        ck_assert_ptr_nonnull(strstr(rewritten, "Gm 1 /h/gemleak_alloc.so\nGf 1 <null>\n"));
        ck_assert_ptr_nonnull(strstr(rewritten, "Gf 2 " GL_PROTO_EXACT_FUNCTION "\n"));
        ck_assert_ptr_nonnull(strstr(rewritten, "gemleak:owner-frames\t4000\n"));
        ck_assert(strip == (strstr(rewritten, "gemleak:owner\t") == NULL));
        g_autoptr(GPtrArray) records = records_of(rewritten);
        ck_assert_uint_eq(records->len, 1);
        const GlRecord *record = g_ptr_array_index(records, 0);
        ck_assert_uint_eq(record->stack.n_frames, 4);
        ck_assert_str_eq(record->stack.frames[1].fn, "leaky_alloc");
        ck_assert_str_eq(record->stack.frames[3].fn, "main");
    }
}
END_TEST

/* Blocks the fast check could not judge (allocated on a Fiber's stack),
 * found lost by an exact run (whose records are whole), become a report
 * of their own before the line that says the check ran to its end; those
 * it did not find lost are reachable. The exact pass's own lines, and the
 * owners recorded for it alone, do not reach the analysis. */
START_TEST(test_rewrite_judges_hidden_blocks)
{
    const char *fast =
        "gemleak:owned\tT#test_a\t/t.rb:3\t602000000010 602000000030\n"
        "gemleak:hidden\n"
        "gemleak:hidden\t24\t602000000010\n"
        "gemleak:hidden\t24\t602000000030\n"
        "gemleak:done\n";
    const char *exact =
        "==7==ERROR: LeakSanitizer: detected memory leaks\n\n"
        "Direct leak of 24 byte(s) in 1 object(s) allocated from:\n"
        "Gm 0 /lsan.so\nGf 0 malloc\nGs 0 x.cpp\nG 0 0x7f 0x13545 0x0 75 0\n"
        "Gm 1 /leaky.so\nGf 1 leaky_alloc\nGs 1 /leaky.c\nG 1 0x7e 0x1350 0x0 15 0\n"
        "Gm 2 /ruby\nGf 2 fiber_entry\nGs 2 cont.c\nG 2 0x7d 0x5000 0x0 9 0\n"
        "\nObjects leaked above:\n0x6020000000a0 (24 bytes)\n\n"
        "SUMMARY: LeakSanitizer: 24 byte(s) leaked in 1 allocation(s).\n";
    GlExactFound found = { 0 };
    g_autoptr(GHashTable) sites = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) tests = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gl_exact_sites(fast, strlen(fast), cut_short_of_main, sites, tests, &found, NULL);
    ck_assert_uint_eq(found.hidden, 2);
    ck_assert(!found.untested);
    ck_assert(g_hash_table_contains(tests, "T#test_a\t/t.rb:3"));
    g_autoptr(GlExactDonors) donors = gl_exact_donors_new();
    ck_assert_uint_eq(gl_exact_donors_add(donors, exact, strlen(exact), cut_short_of_main), 1);
    GlExactCount count = { 0 };
    g_autofree char *judged = gl_exact_rewrite(fast, strlen(fast), cut_short_of_main, donors,
                                               7, TRUE, &count, NULL, NULL);
    ck_assert_uint_eq(count.hidden, 2);
    ck_assert_uint_eq(count.hidden_lost, 1);
    ck_assert_ptr_null(strstr(judged, "gemleak:owned"));
    ck_assert_ptr_null(strstr(judged, "gemleak:hidden"));
    ck_assert(g_str_has_suffix(judged, "SUMMARY: LeakSanitizer: 24 byte(s) leaked in 1 "
                                       "allocation(s).\ngemleak:done\n"));
    g_autoptr(GPtrArray) records = records_of(judged);
    ck_assert_uint_eq(records->len, 1);
    const GlRecord *record = g_ptr_array_index(records, 0);
    ck_assert_int_eq(record->pid, 7);
    ck_assert_uint_eq(record->leaked_bytes, 24);
    ck_assert_str_eq(record->stack.frames[1].fn, "leaky_alloc");
    ck_assert_str_eq(record->stack.frames[2].fn, "fiber_entry");
    /* its object is the fast pass's block, whose owner --per-test names */
    ck_assert_ptr_nonnull(strstr(judged, "\n0x602000000010 (24 bytes)\n"));
}
END_TEST

Suite *gl_sanitizer_exact_suite(void)
{
    Suite *suite = suite_create("sanitizer-exact");
    TCase *tc = tcase_create("exact");
    tcase_add_test(tc, test_sites_of_cut_records);
    tcase_add_test(tc, test_rewrite_gives_whole_stacks);
    tcase_add_test(tc, test_rewrite_keeps_what_was_not_found_again);
    tcase_add_test(tc, test_rewrite_judges_hidden_blocks);
    tcase_add_test(tc, test_site_shared_with_a_stack_the_fast_pass_unwound);
    tcase_add_test(tc, test_owner_frames_name_the_test_and_stay_through_the_rewrite);
    suite_add_tcase(suite, tc);
    return suite;
}
