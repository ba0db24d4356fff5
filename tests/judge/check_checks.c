/* Valgrind's added leak checks re-created from a sanitizer's checks
 * (judge/checks.h), and the copies that say which tests allocated a leak's
 * blocks (judge/owners.h): the records the input seam reads from a
 * report file, through the judges, as gemleak filter takes them. */
#include "testutil.h"
#include "gemleak/judge/checks.h"
#include "gemleak/judge/owners.h"
#include "gemleak/read/input.h"
#include "gemleak/read/sanitizer_reader.h"

#include <string.h>

/* What a report and the checks said of its process. */
typedef struct {
    gint64 pid;
    gboolean complete;
    gboolean marked;
    gboolean incomplete;
    guint n_not_lost;
} Judged;

static gint compare_ordered(gconstpointer a, gconstpointer b)
{
    const GlOrdered *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Returns: (transfer full): the records of @input (freed) once the checks
 * while its process ran and its tests' copies are made, in the order they
 * were read, as the one loop takes them (judge/judgement.c). */
static GPtrArray *judge_input(GlInput *input, Judged *facts)
{
    g_autoptr(GlChecks) checks = gl_checks_new();
    const GlProcess *process = gl_input_process(input);
    g_autoptr(GArray) ordered = g_array_new(FALSE, FALSE, sizeof(GlOrdered));
    guint64 order = 0;
    GlRecord *record;
    while ((record = gl_input_next(input)) != NULL) {
        if ((record = gl_checks_take(checks, record, order)) == NULL) {
            order++;
            continue;
        }
        g_autoptr(GPtrArray) copies = gl_owners_copies(record, process->owners, process->origin, checks);
        for (guint i = 0; copies != NULL && i < copies->len; i++) {
            GlOrdered copy = { g_steal_pointer(&copies->pdata[i]), order++ };
            g_array_append_val(ordered, copy);
        }
        GlOrdered one = { record, order++ };
        g_array_append_val(ordered, one);
    }
    g_autoptr(GArray) confirmed = gl_checks_finish(checks, process->reached_exit);
    g_array_set_clear_func(confirmed, NULL);
    g_array_append_vals(ordered, confirmed->data, confirmed->len);
    g_array_sort(ordered, compare_ordered);
    GPtrArray *records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
    for (guint i = 0; i < ordered->len; i++)
        g_ptr_array_add(records, g_array_index(ordered, GlOrdered, i).record);
    *facts = (Judged) {
        .pid = process->pid, .complete = process->complete, .marked = process->marked,
        .incomplete = process->incomplete, .n_not_lost = gl_checks_not_lost(checks),
    };
    gl_input_free(input);
    return records;
}

static GPtrArray *judge_text(const char *text, const char *name, Judged *facts, GError **error)
{
    (void) error;
    return judge_input(gl_input_open_memory(gl_input_format_find("sanitizer"), text, strlen(text),
                                            name), facts);
}

static GPtrArray *judge_fixture(const char *relative, Judged *facts)
{
    g_autofree char *path = gl_test_fixture(relative);
    GError *error = NULL;
    GlInput *input = gl_input_open(path, FALSE, NULL, &error);
    ck_assert_msg(input != NULL, "%s: %s", relative, error != NULL ? error->message : "");
    return judge_input(input, facts);
}

/* Returns: (transfer none) (nullable): the first frame of @stack named @fn. */
static const GlFrame *frame_named(const GlStack *stack, const char *fn)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (g_strcmp0(stack->frames[i].fn, fn) == 0)
            return &stack->frames[i];
    return NULL;
}

/* ---- checks while the process ran, re-created -------------------------------- */

#define SEP "=================================================================\n"
/* A record of @kind ("Direct", "Indirect") whose stack is leaky_alloc at
 * @pc, with @objects' lines under it. */
#define LEAK(kind, bytes, count, pc, objects)                                                  \
    kind " leak of " bytes " byte(s) in " count " object(s) allocated from:\n"                 \
    "F|0|0x7f0000001000|/usr/lib/liblsan.so|0x1000|malloc|0x0|<null>|0|0\n"                    \
    "F|1|" pc "|/work/ext/leaky.so|0x2000|leaky_alloc|0x0|/work/ext/leaky.c|16|5\n"             \
    "\n"                                                                                       \
    "Objects leaked above:\n" objects "\n"

/* Three checks the helper asked for ("gemleak:checked" after each) and the
 * exit report: each check reports every object lost so far, and is read as
 * Valgrind's added check; a loss record the exit report does not hold
 * (Ruby's, out of the runtime's sight while Ruby ran) is left out. */
static const char per_test_log[] =
    "gemleak:setup\n"
    "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
    LEAK("Direct", "24", "1", "0x7f00000000a0", "0x602000000010 (24 bytes)\n")
    "SUMMARY: LeakSanitizer: 24 byte(s) leaked in 1 allocation(s).\n"
    "gemleak:checked\n"
    "gemleak:start\tT#test_a\t/t.rb:1\n"
    "gemleak:start\tT#test_b\t/t.rb:5\n"
    "gemleak:tests\t2\tT#test_a\t/t.rb:1\tT#test_b\t/t.rb:5\n"
    "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
    LEAK("Direct", "24", "1", "0x7f00000000a0", "0x602000000010 (24 bytes)\n")
    LEAK("Direct", "6", "1", "0x7f00000000b0", "0x601000000020 (6 bytes)\n")
    "SUMMARY: LeakSanitizer: 30 byte(s) leaked in 2 allocation(s).\n"
    "gemleak:checked\n"
    "gemleak:again\n"
    "gemleak:again\t1\tT#test_b\t/t.rb:5\n"
    "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
    "Too many leaks! Only the first 5000 leaks encountered will be reported.\n"
    LEAK("Direct", "12", "2", "0x7f00000000b0",
         "0x601000000020 (6 bytes)\n0x601000000040 (6 bytes)\n")
    LEAK("Direct", "24", "1", "0x7f00000000a0", "0x602000000010 (24 bytes)\n")
    "SUMMARY: LeakSanitizer: 36 byte(s) leaked in 3 allocation(s).\n"
    "gemleak:checked\n"
    "gemleak:end\tT#test_c\t/t.rb:9\n"
    "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
    LEAK("Direct", "24", "1", "0x7f00000000a0", "0x602000000010 (24 bytes)\n")
    LEAK("Direct", "12", "2", "0x7f00000000b0",
         "0x601000000020 (6 bytes)\n0x601000000040 (6 bytes)\n")
    "SUMMARY: LeakSanitizer: 36 byte(s) leaked in 3 allocation(s).\n"
    "gemleak:checked\n"
    "gemleak:exit\n"
    "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
    LEAK("Direct", "12", "2", "0x7f00000000b0",
         "0x601000000020 (6 bytes)\n0x601000000040 (6 bytes)\n")
    "SUMMARY: LeakSanitizer: 12 byte(s) leaked in 2 allocation(s).\n";

START_TEST(test_per_test_checks_read_as_added_checks)
{
    Judged facts;
    GError *error = NULL;
    g_autoptr(GPtrArray) records = judge_text(per_test_log, "lsan.9", &facts, &error);
    ck_assert_msg(records != NULL, "%s", error != NULL ? error->message : "");
    ck_assert(facts.complete);
    ck_assert(facts.marked);
    /* the mid-run check's "Too many leaks" says nothing of the verdict */
    ck_assert(!facts.incomplete);
    /* 0x...a0's record, never lost at exit, three times */
    ck_assert_uint_eq(facts.n_not_lost, 1);
    ck_assert_uint_eq(records->len, 3);

    const GlRecord *first = g_ptr_array_index(records, 0);
    ck_assert(!first->at_exit);
    ck_assert_str_eq(first->marker, "gemleak:tests\t2\tT#test_a\t/t.rb:1\tT#test_b\t/t.rb:5");
    ck_assert_uint_eq(first->leaked_bytes, 6);
    ck_assert_uint_eq(first->leaked_blocks, 1);
    ck_assert_uint_eq(first->stack.frames[1].ip, 0x7f00000000b0);

    /* the one object more, with the numbers of both */
    const GlRecord *again = g_ptr_array_index(records, 1);
    ck_assert(!again->at_exit);
    ck_assert_str_eq(again->marker, "gemleak:again\t1\tT#test_b\t/t.rb:5");
    ck_assert_uint_eq(again->leaked_bytes, 12);
    ck_assert_uint_eq(again->leaked_blocks, 2);
    ck_assert_str_eq(again->what, "Direct leak of 12 byte(s) in 2 object(s)");

    /* test_c's check found nothing new: no record; the exit report's, with
     * the last marker but "checked" and "exit" */
    const GlRecord *at_exit = g_ptr_array_index(records, 2);
    ck_assert(at_exit->at_exit);
    ck_assert_str_eq(at_exit->marker, "gemleak:end\tT#test_c\t/t.rb:9");
    ck_assert_uint_eq(at_exit->leaked_bytes, 12);
    ck_assert_uint_eq(at_exit->leaked_blocks, 2);
    /* in the order the log holds them */
    for (guint i = 1; i < records->len; i++)
        ck_assert_uint_lt(((const GlRecord *) g_ptr_array_index(records, i - 1))->unique,
                          ((const GlRecord *) g_ptr_array_index(records, i))->unique);
}
END_TEST

/* A process that did not get to exit (killed, exit!): no exit report and
 * no "gemleak:exit": what its checks found stays, as under Valgrind. Its
 * markers alone start the file, which reads as a sanitizer's. */
START_TEST(test_per_test_without_exit_keeps_the_checks)
{
    const char *log = strstr(per_test_log, "gemleak:exit\n");
    g_autofree char *cut = g_strndup(per_test_log, (gsize) (log - per_test_log));
    Judged facts;
    g_autoptr(GPtrArray) records = judge_text(cut, "lsan.9", &facts, NULL);
    ck_assert_ptr_nonnull(records);
    ck_assert_uint_eq(facts.n_not_lost, 0);
    ck_assert_uint_eq(records->len, 3);
    const GlRecord *setup = g_ptr_array_index(records, 0);
    ck_assert_str_eq(setup->marker, "gemleak:setup");
    ck_assert(!setup->at_exit);
    ck_assert(gl_sanitizer_detect(cut, strlen(cut)));

    /* markers only: a process that ran tests and lost nothing */
    const char *quiet = "gemleak:setup\ngemleak:checked\ngemleak:start\tT#t\t/t.rb:1\n"
                        "gemleak:end\tT#t\t/t.rb:1\ngemleak:checked\ngemleak:exit\n";
    g_autoptr(GPtrArray) none = judge_text(quiet, "lsan.10", &facts, NULL);
    ck_assert_ptr_nonnull(none);
    ck_assert_uint_eq(none->len, 0);
    ck_assert(facts.marked);
    ck_assert_int_eq(facts.pid, 10);
    ck_assert(gl_sanitizer_detect(quiet, strlen(quiet)));
}
END_TEST

/* The real capture: the suite's loss record (its check after three
 * tests), the runs' again (another stack: another loss record) as each
 * check found them, and the exit report; Ruby's two records of the setup
 * check, which the exit report does not hold, left out. */
START_TEST(test_per_test_capture)
{
    Judged facts;
    g_autoptr(GPtrArray) records = judge_fixture("lsan/per-test-ruby34.lsan", &facts);
    ck_assert(facts.complete);
    ck_assert(facts.marked);
    ck_assert(!facts.incomplete);
    ck_assert_uint_eq(facts.n_not_lost, 5);
    ck_assert_uint_eq(records->len, 5);
    static const struct {
        gboolean at_exit;
        const char *marker;
        guint64 bytes, blocks;
    } expected[] = {
        { FALSE, "gemleak:tests\t3\tWordsTest#test_frequencies", 6, 1 },
        { FALSE, "gemleak:again\t3", 12, 2 },
        { FALSE, "gemleak:again\t1\tWordsTest#test_count", 18, 3 },
        { TRUE, "gemleak:again\t1\tWordsTest#test_count", 18, 3 },
        { TRUE, "gemleak:again\t1\tWordsTest#test_count", 6, 1 },
    };
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        ck_assert_msg(record->at_exit == expected[i].at_exit, "record %u", i);
        ck_assert_msg(g_str_has_prefix(record->marker, expected[i].marker), "record %u: %s", i,
                      record->marker);
        ck_assert_uint_eq(record->leaked_bytes, expected[i].bytes);
        ck_assert_uint_eq(record->leaked_blocks, expected[i].blocks);
        ck_assert_ptr_nonnull(frame_named(&record->stack, "tally_count"));
    }
    /* the suite's loss record is the same stack in its check and at exit */
    const GlRecord *suite = g_ptr_array_index(records, 0);
    const GlRecord *suite_at_exit = g_ptr_array_index(records, 4);
    ck_assert_uint_eq(suite->stack.n_frames, suite_at_exit->stack.n_frames);
    for (guint i = 0; i < suite->stack.n_frames; i++)
        ck_assert_uint_eq(suite->stack.frames[i].ip, suite_at_exit->stack.frames[i].ip);
}
END_TEST

/* The exit report's "Too many leaks" is still INCOMPLETE with markers. */
START_TEST(test_per_test_too_many_at_exit_is_incomplete)
{
    g_autofree char *log = g_strconcat(per_test_log, "gemleak:exit\n",
                                       "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
                                       "Too many leaks! Only the first 5000 leaks encountered will be reported.\n"
                                       "SUMMARY: LeakSanitizer: 1 byte(s) leaked in 1 allocation(s).\n",
                                       NULL);
    Judged facts;
    g_autoptr(GPtrArray) records = judge_text(log, "lsan.9", &facts, NULL);
    ck_assert_ptr_nonnull(records);
    ck_assert(facts.incomplete);
}
END_TEST

/* --per-test under a sanitizer, no check while the tests ran: before the
 * exit report's record, a copy for the test that allocated its object,
 * with that object's numbers and the test for a marker; the record itself
 * as the runtime reported it. */
START_TEST(test_owners_copy_a_record_per_test)
{
    Judged facts;
    g_autoptr(GPtrArray) records = judge_fixture("lsan/per-test-owned-ruby34.lsan", &facts);
    ck_assert(facts.marked);
    const GlRecord *copy = NULL, *original = NULL;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        if (frame_named(&record->stack, "tally_count") == NULL)
            continue;
        if (record->attribution_only) {
            ck_assert_ptr_null(copy);
            copy = record;
        } else {
            original = record;
        }
    }
    ck_assert_ptr_nonnull(copy);
    ck_assert_ptr_nonnull(original);
    ck_assert_str_eq(copy->marker, "gemleak:owned\tWordsTest#test_count\t/tmp/cap/test/words_test.rb:12");
    ck_assert(!copy->at_exit);
    ck_assert_uint_eq(copy->leaked_bytes, 6);
    ck_assert_uint_eq(copy->leaked_blocks, 1);
    ck_assert_ptr_null(copy->blocks);
    ck_assert(original->at_exit);
    ck_assert(!original->attribution_only);
    /* the copy comes first: the attribution reads it as a check's before the exit's */
    guint at_copy = 0, at_original = 0;
    for (guint i = 0; i < records->len; i++) {
        at_copy = g_ptr_array_index(records, i) == copy ? i : at_copy;
        at_original = g_ptr_array_index(records, i) == original ? i : at_original;
    }
    ck_assert_uint_eq(at_copy + 1, at_original);
}
END_TEST

/* A block a check while the process ran saw (a forked child's check of
 * what it inherited) is the parent's: no copy names a test of the child. */
START_TEST(test_owners_leave_the_parents_blocks)
{
    static const char log[] =
        "gemleak:forked\n"
        "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
        LEAK("Direct", "24", "1", "0x7f00000000a0", "0x602000000010 (24 bytes)\n")
        "SUMMARY: LeakSanitizer: 24 byte(s) leaked in 1 allocation(s).\n"
        "gemleak:checked\n"
        "gemleak:start\tT#test_a\t/t.rb:1\n"
        "gemleak:exit\n"
        "gemleak:owned\tT#test_a\t/t.rb:1\t602000000010 602000000030\n"
        "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
        LEAK("Direct", "48", "2", "0x7f00000000a0",
             "0x602000000010 (24 bytes)\n0x602000000030 (24 bytes)\n")
        "SUMMARY: LeakSanitizer: 48 byte(s) leaked in 2 allocation(s).\n"
        "gemleak:done\n";
    Judged facts;
    g_autoptr(GPtrArray) records = judge_text(log, "lsan.9", &facts, NULL);
    /* the fork's check, the copy for test_a's one block, the exit's record */
    ck_assert_uint_eq(records->len, 3);
    const GlRecord *copy = g_ptr_array_index(records, 1);
    ck_assert(copy->attribution_only);
    ck_assert_uint_eq(copy->leaked_bytes, 24);
    ck_assert_uint_eq(copy->leaked_blocks, 1);
    ck_assert_str_eq(copy->marker, "gemleak:owned\tT#test_a\t/t.rb:1");
    ck_assert(((const GlRecord *) g_ptr_array_index(records, 2))->at_exit);
    ck_assert_uint_eq(facts.n_not_lost, 0);
}
END_TEST

/* A record whose stack says its owner as the allocation front writes it
 * (GL_PROTO_MARKER_OWNER): a frame of gemleak_alloc.so's, two bytes an
 * owner into the array "gemleak:owner-frames" places, after the
 * allocator's. */
#define OWNED_LEAK(bytes, count, offset, objects)                                               \
    "Direct leak of " bytes " byte(s) in " count " object(s) allocated from:\n"                 \
    "F|0|0x7f0000001000|/usr/lib/liblsan.so|0x1000|malloc|0x0|<null>|0|0\n"                    \
    "F|1|0x7f00000020f0|/tmp/h/gemleak_alloc.so|0x20f0|gl_alloc_call|0x0|<null>|0|0\n"          \
    "F|2|0x7f000000" offset "|/tmp/h/gemleak_alloc.so|0x" offset "|<null>|0x0|<null>|0|0\n"      \
    "F|3|0x7f00000000a0|/work/ext/leaky.so|0x2000|leaky_alloc|0x0|/work/ext/leaky.c|16|5\n"    \
    "\n"                                                                                       \
    "Objects leaked above:\n" objects "\n"

/* Under --per-test, where the allocation front carries each judged
 * block's owner in its stack (no table of addresses): a copy of the exit
 * report's record for each test that allocated its blocks, by the frame
 * each record's stack holds and the names written at exit; the frame
 * is none of the stack's (the stacks read as the runtime's alone), and
 * the records of one stack, one a test, are one loss record again. */
START_TEST(test_owners_carried_in_the_stacks_copy_a_record_per_test)
{
    static const char log[] =
        "gemleak:unwound\tcall\n"
        "gemleak:owner-frames\t3000\n"
        "gemleak:owner\t1\t\t\n"
        "gemleak:owner\t2\tT#test_a\t/t.rb:1\n"
        "gemleak:owner\t3\tT#test_b\t/t.rb:5\n"
        "gemleak:exit\n"
        "\n" SEP "==9==ERROR: LeakSanitizer: detected memory leaks\n\n"
        OWNED_LEAK("24", "1", "3004", "0x602000000010 (24 bytes)\n")
        OWNED_LEAK("48", "2", "3007", "0x602000000030 (24 bytes)\n0x602000000050 (24 bytes)\n")
        OWNED_LEAK("8", "1", "3002", "0x602000000070 (8 bytes)\n")
        "SUMMARY: LeakSanitizer: 80 byte(s) leaked in 4 allocation(s).\n"
        "gemleak:done\n";
    Judged facts;
    g_autoptr(GPtrArray) records = judge_text(log, "lsan.9", &facts, NULL);
    ck_assert(facts.marked);
    g_autoptr(GString) copies = g_string_new(NULL);
    guint originals = 0;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        ck_assert_uint_eq(record->stack.n_frames, 2);
        ck_assert_str_eq(record->stack.frames[1].fn, "leaky_alloc");
        if (record->attribution_only) {
            g_string_append_printf(copies, "%s: %" G_GUINT64_FORMAT " in %" G_GUINT64_FORMAT "\n",
                                   record->marker, record->leaked_bytes, record->leaked_blocks);
        } else {
            originals++;
            ck_assert_str_eq(record->what, "Direct leak of 80 byte(s) in 4 object(s)");
            ck_assert_uint_eq(record->leaked_blocks, 4);
            ck_assert_uint_eq(record->blocks->len, 4);
        }
    }
    /* one loss record, as the runtime writes one stack's without owners */
    ck_assert_uint_eq(originals, 1);
    ck_assert_str_eq(copies->str, "gemleak:owned\tT#test_a\t/t.rb:1: 24 in 1\n"
                                  "gemleak:owned\tT#test_b\t/t.rb:5: 48 in 2\n"
                                  "gemleak:owned: 8 in 1\n");
}
END_TEST

Suite *gl_checks_suite(void)
{
    Suite *suite = suite_create("checks");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_per_test_checks_read_as_added_checks);
    tcase_add_test(tc, test_per_test_without_exit_keeps_the_checks);
    tcase_add_test(tc, test_per_test_too_many_at_exit_is_incomplete);
    tcase_add_test(tc, test_per_test_capture);
    tcase_add_test(tc, test_owners_copy_a_record_per_test);
    tcase_add_test(tc, test_owners_leave_the_parents_blocks);
    tcase_add_test(tc, test_owners_carried_in_the_stacks_copy_a_record_per_test);
    suite_add_tcase(suite, tc);
    return suite;
}
