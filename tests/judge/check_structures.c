/* A lost structure counted whole under the sanitizer engines: the
 * indirect leaks LeakSanitizer reports apart counted in the direct leak
 * that holds them, as Valgrind counts them. */
#include <string.h>

#include "testutil.h"
#include "gemleak/judge/merge.h"
#include "gemleak/judge/structures.h"

/* A leak record of @kind and @bytes, as the sanitizer reader gives it
 * and the classifier marks it: frames "fn@obj:file:line", those in
 * leaky.so the target's; a frame's program counter is its call's (its
 * function and line), the same in every record that made that call. */
static GlRecord *leak(const char *kind, guint64 bytes, const char *first, ...)
    G_GNUC_NULL_TERMINATED;
static GlRecord *leak(const char *kind, guint64 bytes, const char *first, ...)
{
    GlRecord *record = gl_test_record(kind, "malloc@liblsan.so", NULL);
    va_list ap;
    va_start(ap, first);
    g_autoptr(GArray) frames = g_array_new(FALSE, TRUE, sizeof(GlFrame));
    g_array_append_val(frames, record->stack.frames[0]);
    for (const char *spec = first; spec != NULL; spec = va_arg(ap, const char *)) {
        g_autoptr(GlRecord) one = gl_test_record(kind, spec, NULL);
        GlFrame frame = one->stack.frames[0];
        frame.fn = gl_record_intern(record, frame.fn);
        frame.obj = gl_record_intern(record, frame.obj);
        frame.file = gl_record_intern(record, frame.file);
        frame.ip = g_str_hash(spec);
        frame.in_target = frame.obj != NULL && g_str_has_suffix(frame.obj, "leaky.so");
        g_array_append_val(frames, frame);
    }
    va_end(ap);
    g_free(record->stack.frames);
    record->stack.n_frames = frames->len;
    record->stack.frames = (GlFrame *) g_array_free(g_steal_pointer(&frames), FALSE);
    record->leaked_bytes = bytes;
    record->at_exit = TRUE;
    return record;
}

static GPtrArray *records_of(GlRecord *first, ...) G_GNUC_NULL_TERMINATED;
static GPtrArray *records_of(GlRecord *first, ...)
{
    GPtrArray *records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
    va_list ap;
    va_start(ap, first);
    for (GlRecord *record = first; record != NULL; record = va_arg(ap, GlRecord *))
        g_ptr_array_add(records, record);
    va_end(ap);
    return records;
}

#define AT(i) ((GlRecord *) g_ptr_array_index(records, (i)))

/* A struct and the buffer a helper of its constructor allocated, both
 * lost: Valgrind's "80 (64 direct, 16 indirect) bytes in 1 blocks". The
 * buffer's record stays, for --leak-kinds indirect. */
START_TEST(test_structure_counts_whole)
{
    g_autoptr(GPtrArray) records = records_of(
        leak("Leak_DefinitelyLost", 64, "lexer_new@/x/leaky.so:oot.c:13",
             "oot_lose_struct@/x/leaky.so:oot.c:28", "main@/usr/bin/ruby:main.c:40", NULL),
        leak("Leak_IndirectlyLost", 16, "buf_grow@/x/leaky.so:oot.c:5",
             "lexer_new@/x/leaky.so:oot.c:14", "oot_lose_struct@/x/leaky.so:oot.c:28",
             "main@/usr/bin/ruby:main.c:40", NULL),
        leak("Leak_IndirectlyLost", 32, "buf_grow@/x/leaky.so:oot.c:5",
             "lexer_new@/x/leaky.so:oot.c:15", "oot_lose_struct@/x/leaky.so:oot.c:28",
             "main@/usr/bin/ruby:main.c:40", NULL),
        NULL);
    ck_assert_uint_eq(gl_structures_attach(records), 2);
    ck_assert_uint_eq(AT(0)->leaked_bytes, 112);
    ck_assert_uint_eq(AT(0)->leaked_blocks, 1);
    ck_assert_uint_eq(gl_record_direct_bytes(AT(0)), 64);
    ck_assert_str_eq(AT(0)->what, "Direct leak of 112 (64 direct, 48 indirect) byte(s) in 1 object(s)");
    ck_assert_uint_eq(AT(1)->leaked_bytes, 16);
    ck_assert_int_eq(AT(1)->leak_kind, GL_LEAK_INDIRECT);
}
END_TEST

/* Two structures built by one function, called from two methods: each
 * buffer is counted in the struct of its own call (the one whose stack
 * it shares most of), not in the first. */
START_TEST(test_structure_of_the_same_call)
{
    g_autoptr(GPtrArray) records = records_of(
        leak("Leak_DefinitelyLost", 64, "lexer_new@/x/leaky.so:oot.c:13",
             "first_method@/x/leaky.so:oot.c:28", "main@/usr/bin/ruby:main.c:40", NULL),
        leak("Leak_DefinitelyLost", 64, "lexer_new@/x/leaky.so:oot.c:13",
             "second_method@/x/leaky.so:oot.c:38", "main@/usr/bin/ruby:main.c:40", NULL),
        leak("Leak_IndirectlyLost", 16, "lexer_new@/x/leaky.so:oot.c:14",
             "second_method@/x/leaky.so:oot.c:38", "main@/usr/bin/ruby:main.c:40", NULL),
        NULL);
    ck_assert_uint_eq(gl_structures_attach(records), 1);
    ck_assert_uint_eq(AT(0)->leaked_bytes, 64);
    ck_assert_uint_eq(AT(1)->leaked_bytes, 80);
}
END_TEST

/* fast_jsonparser under LeakSanitizer (fixtures/lsan/fast_jsonparser-ruby34):
 * the parser's buffer (its one frame the method's, the code inlined there
 * not unfolded) and the parser's implementation object are both direct,
 * their stacks the exact pass's (ending at _start); the implementation's
 * buffers indirect, their stacks the runtime's (ending at
 * __libc_start_main_impl): the buffers are counted in the object whose
 * calls into the extension they share, not in the first direct leak. */
START_TEST(test_structure_by_its_calls_in_the_extension)
{
    g_autoptr(GPtrArray) records = records_of(
        leak("Leak_DefinitelyLost", 8000512, "load_many@/x/leaky.so:simdjson.h:5721",
             "vm_exec@/usr/bin/ruby:vm.c:10", "main@/usr/bin/ruby:main.c:40",
             "_start@/usr/bin/ruby:start.S:1", NULL),
        leak("Leak_DefinitelyLost", 96, "create_impl@/x/leaky.so:simdjson.cpp:9883",
             "allocate@/x/leaky.so:simdjson.h:7568", "load_many@/x/leaky.so:fast.cpp:141",
             "vm_exec@/usr/bin/ruby:vm.c:10", "main@/usr/bin/ruby:main.c:40",
             "_start@/usr/bin/ruby:start.S:1", NULL),
        leak("Leak_IndirectlyLost", 8192, "set_max_depth@/x/leaky.so:simdjson.cpp:9824",
             "create_impl@/x/leaky.so:simdjson.cpp:9889", "allocate@/x/leaky.so:simdjson.h:7568",
             "load_many@/x/leaky.so:fast.cpp:141", "vm_exec@/usr/bin/ruby:vm.c:10",
             "main@/usr/bin/ruby:main.c:40",
             "__libc_start_main_impl@/lib/libc.so.6:libc-start.c:360", NULL),
        NULL);
    ck_assert_uint_eq(gl_structures_attach(records), 1);
    ck_assert_uint_eq(AT(0)->leaked_bytes, 8000512);
    ck_assert_uint_eq(AT(1)->leaked_bytes, 96 + 8192);
    ck_assert_ptr_eq(gl_structures_holder(records, AT(2)), AT(1));
}
END_TEST

/* What is not a structure of the same check stays apart: a lost cycle of
 * another call (promoted to definite by the analysis, never attached), a
 * block another check found (a mid-run check, or after another marker),
 * --per-test's copies for attribution. */
START_TEST(test_not_a_structure)
{
    GlRecord *mid_run = leak("Leak_IndirectlyLost", 8, "lexer_new@/x/leaky.so:oot.c:14",
                             "oot_lose_struct@/x/leaky.so:oot.c:28", NULL);
    mid_run->at_exit = FALSE;
    GlRecord *other_test = leak("Leak_IndirectlyLost", 8, "lexer_new@/x/leaky.so:oot.c:14",
                                "oot_lose_struct@/x/leaky.so:oot.c:28", NULL);
    other_test->marker = gl_record_intern(other_test, "gemleak:owned\tT#test_a\tt.rb:3");
    GlRecord *copy = leak("Leak_IndirectlyLost", 8, "lexer_new@/x/leaky.so:oot.c:14",
                          "oot_lose_struct@/x/leaky.so:oot.c:28", NULL);
    copy->attribution_only = TRUE;
    GlRecord *direct_copy = leak("Leak_DefinitelyLost", 4, "lexer_new@/x/leaky.so:oot.c:13",
                                 "oot_lose_struct@/x/leaky.so:oot.c:28", NULL);
    direct_copy->attribution_only = TRUE;
    g_autoptr(GPtrArray) records = records_of(
        direct_copy,
        leak("Leak_DefinitelyLost", 64, "lexer_new@/x/leaky.so:oot.c:13",
             "oot_lose_struct@/x/leaky.so:oot.c:28", NULL),
        leak("Leak_IndirectlyLost", 32, "cycle_node@/x/leaky.so:cycle.c:20",
             "leak_cycle@/x/leaky.so:cycle.c:30", NULL),
        leak("Leak_IndirectlyLost", 8, "xmalloc@/usr/lib/libruby.so:gc.c:1",
             "main@/usr/bin/ruby:main.c:40", NULL),
        mid_run, other_test, copy, NULL);
    ck_assert_uint_eq(gl_structures_attach(records), 0);
    ck_assert_uint_eq(AT(0)->leaked_bytes, 4);
    ck_assert_uint_eq(AT(1)->leaked_bytes, 64);
    ck_assert_str_eq(AT(1)->what, "Leak_DefinitelyLost");
}
END_TEST

Suite *gl_structures_suite(void)
{
    Suite *suite = suite_create("structures");
    TCase *tc = tcase_create("structures");
    tcase_add_test(tc, test_structure_counts_whole);
    tcase_add_test(tc, test_structure_of_the_same_call);
    tcase_add_test(tc, test_structure_by_its_calls_in_the_extension);
    tcase_add_test(tc, test_not_a_structure);
    suite_add_tcase(suite, tc);
    return suite;
}
