/* LeakSanitizer and AddressSanitizer reports into records: real captures
 * (fixtures/lsan/, fixtures/asan/, made by fixtures/capture-sanitizers.sh)
 * and hand-made edges. */
#include "testutil.h"
#include "gemleak/judge/classify.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/input.h"
#include "gemleak/read/reader.h"
#include "gemleak/read/sanitizer_reader.h"

#include <string.h>

/* What the tests look at of a report's process (gl_input_process(),
 * copied: its strings are the reader's own constants). */
typedef struct {
    const char *tool;
    gint64 pid;
    guint n_reports;
    gboolean complete;
    gboolean incomplete;
    const char *incomplete_reason;
    const char *incomplete_hint;
    gboolean halted;
    gboolean marked;
} Facts;

/* Returns: (transfer full) (nullable): every record of @input, through the
 * input seam, and @facts what it says of its process; NULL, with @error
 * the first problem, when it held no process's report. Frees @input. */
static GPtrArray *read_input(GlInput *input, Facts *facts, GError **error)
{
    GPtrArray *records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
    GlRecord *record;
    while ((record = gl_input_next(input)) != NULL)
        g_ptr_array_add(records, record);
    const GlProcess *process = gl_input_process(input);
    ck_assert_str_eq(gl_input_format_name(gl_input_format(input)), "sanitizer");
    *facts = (Facts) {
        .tool = process->tool, .pid = process->pid, .n_reports = process->n_reports,
        .complete = process->complete, .incomplete = process->incomplete,
        .incomplete_reason = process->incomplete_reason,
        .incomplete_hint = process->incomplete_hint, .halted = process->halted,
        .marked = process->marked,
    };
    if (process->stands_for == 0) {
        const GPtrArray *problems = gl_input_problems(input);
        ck_assert_uint_gt(problems->len, 0);
        g_propagate_error(error, g_error_copy(g_ptr_array_index(problems, 0)));
        g_ptr_array_unref(records);
        records = NULL;
    }
    gl_input_free(input);
    return records;
}

/* The @length bytes of @data as a sanitizer's report named @name. */
static GPtrArray *read_data(const char *data, gsize length, const char *name, Facts *facts,
                            GError **error)
{
    return read_input(gl_input_open_memory(gl_input_format_find("sanitizer"), data, length, name),
                      facts, error);
}

/* The file @path, through the input seam as gemleak filter opens it. */
static GPtrArray *read_file(const char *path, Facts *facts, GError **error)
{
    GlInput *input = gl_input_open(path, FALSE, NULL, error);
    return input != NULL ? read_input(input, facts, error) : NULL;
}

/* Reads @relative under the fixtures; the test fails if it cannot.
 * Returns: (transfer full): the records. */
static GPtrArray *read_fixture(const char *relative, Facts *facts)
{
    g_autofree char *path = gl_test_fixture(relative);
    GError *error = NULL;
    GPtrArray *records = read_file(path, facts, &error);
    ck_assert_msg(records != NULL, "%s: %s", relative, error != NULL ? error->message : "");
    return records;
}

/* Returns: (transfer none) (nullable): the first frame of @stack named @fn. */
static const GlFrame *frame_named(const GlStack *stack, const char *fn)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (g_strcmp0(stack->frames[i].fn, fn) == 0)
            return &stack->frames[i];
    return NULL;
}

/* Returns: (transfer none) (nullable): the first record whose primary
 * stack has a frame named @fn. */
static const GlRecord *record_through(GPtrArray *records, const char *fn)
{
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        if (frame_named(&record->stack, fn) != NULL)
            return record;
    }
    return NULL;
}

/* Returns: TRUE if a frame of @record's primary stack lies in @object (a file name). */
static gboolean enters_object(const GlRecord *record, const char *object)
{
    for (guint i = 0; i < record->stack.n_frames; i++) {
        const char *obj = record->stack.frames[i].obj;
        if (obj != NULL && g_str_has_suffix(obj, object))
            return TRUE;
    }
    return FALSE;
}

static GPtrArray *read_text(const char *text, const char *name, Facts *facts, GError **error)
{
    return read_data(text, strlen(text), name, facts, error);
}

/* ---- hand-made edges --------------------------------------------------------- */

START_TEST(test_empty_and_garbage_are_errors)
{
    Facts facts;
    GError *error = NULL;
    ck_assert_ptr_null(read_text("", "lsan.1", &facts, &error));
    ck_assert_int_eq(error->code, GL_ERROR_EMPTY);
    ck_assert_str_eq(error->message, "lsan.1: empty (no sanitizer report)");
    g_clear_error(&error);
    ck_assert_ptr_null(read_text(" \n\n\t\n", "lsan.1", &facts, &error));
    ck_assert_int_eq(error->code, GL_ERROR_EMPTY);
    g_clear_error(&error);
    /* Valgrind's text output and plain garbage are no sanitizer's */
    ck_assert_ptr_null(read_text("==123== Memcheck, a memory error detector\n"
                                 "==123== HEAP SUMMARY:\n", "vg.txt", &facts, &error));
    ck_assert_int_eq(error->code, GL_ERROR_MALFORMED);
    ck_assert_str_eq(error->message, "vg.txt: not a LeakSanitizer or AddressSanitizer report");
    g_clear_error(&error);
    ck_assert_ptr_null(read_text("\x01\x02garbage\n#0 0x12 in f x.c:1\n", NULL, &facts, &error));
    ck_assert_int_eq(error->code, GL_ERROR_MALFORMED);
    ck_assert_str_eq(error->message, "input: not a LeakSanitizer or AddressSanitizer report");
    g_clear_error(&error);

    g_autofree char *missing = gl_test_fixture("lsan/no-such-file");
    GPtrArray *records = NULL;
    ck_assert((records = read_file(missing, &facts, &error)) == NULL);
    ck_assert_int_eq(error->code, GL_ERROR_IO);
    ck_assert(g_str_has_prefix(error->message, missing));
    g_clear_error(&error);
}
END_TEST

/* A log the runtime wrote without a report: the process leaked nothing.
 * Its pid comes from the runtime's line. */
START_TEST(test_log_without_report_is_no_leak)
{
    Facts facts;
    GError *error = NULL;
    g_autoptr(GPtrArray) records = read_text(
        "==4242==WARNING: LeakSanitizer: ignoring something it could not scan\n", "lsan.99",
        &facts, &error);
    ck_assert_ptr_nonnull(records);
    ck_assert_uint_eq(records->len, 0);
    ck_assert_str_eq(facts.tool, "LeakSanitizer");
    ck_assert_int_eq(facts.pid, 4242);
    ck_assert_uint_eq(facts.n_reports, 0);
    ck_assert(facts.complete);
    ck_assert(!facts.incomplete);
}
END_TEST

/* LeakSanitizer cannot stop the world (ptrace refused): no check ran, and
 * that is no pass. */
START_TEST(test_fatal_error_is_incomplete)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_text(
        "==77==LeakSanitizer has encountered a fatal error.\n"
        "==77==HINT: For debugging, try setting environment variable LSAN_OPTIONS=verbosity=1:log_threads=1\n"
        "==77==HINT: LeakSanitizer does not work under ptrace (strace, gdb, etc)\n",
        "lsan.77", &facts, NULL);
    ck_assert_uint_eq(records->len, 0);
    ck_assert(facts.incomplete);
    ck_assert_str_eq(facts.incomplete_reason,
                     "LeakSanitizer has encountered a fatal error: its leak check did not run");
    ck_assert_str_eq(facts.incomplete_hint,
                     "it does not work under ptrace: strace, gdb, some sandboxes");
    ck_assert_int_eq(facts.pid, 77);
}
END_TEST

/* Returns: (transfer full): the records of the fixture lsan/@fixture,
 * read as the file @name, which the detector must take for a report. */
static GPtrArray *read_lsan_fixture(const char *fixture, const char *name, Facts *facts)
{
    g_autofree char *relative = g_strconcat("lsan/", fixture, NULL);
    g_autofree char *path = gl_test_fixture(relative);
    gsize length = 0;
    g_autofree char *text = gl_test_read(path, &length);
    ck_assert_msg(gl_sanitizer_detect(text, length), "%s: not taken for a report", fixture);
    return read_text(text, name, facts, NULL);
}

/* The check's tracer took a fault as it scanned (a real run's report):
 * no check ran, and the hint says so, not ptrace. */
START_TEST(test_tracer_fault_is_incomplete)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_lsan_fixture("fatal-tracer-signal-ruby34.lsan", "lsan.26752",
                                                     &facts);
    ck_assert_uint_eq(records->len, 0);
    ck_assert(facts.incomplete);
    ck_assert_str_eq(facts.incomplete_reason,
                     "LeakSanitizer has encountered a fatal error: its leak check did not run");
    ck_assert_str_eq(facts.incomplete_hint,
                     "its scan of the process's memory took a fault (\"Tracer caught signal\"): "
                     "memory it was told to scan could not be read");
    ck_assert_int_eq(facts.pid, 26752);
}
END_TEST

/* The tracer's lines about the threads (log_threads=1) come first in a
 * clean process's report, the proof alone after them: a report, read (a
 * real run's; it was taken for none, "it left no report"). One whose
 * check found a thread off its stack is no pass: its whole stack counted
 * reachable, the leak of that run was not in the report. */
START_TEST(test_the_tracers_lines_about_the_threads)
{
    Facts facts;
    g_autoptr(GPtrArray) none = read_lsan_fixture("threads-logged-ruby34.lsan", "lsan.16275", &facts);
    ck_assert_uint_eq(none->len, 0);
    ck_assert(facts.complete);
    ck_assert(!facts.incomplete);
    ck_assert_int_eq(facts.pid, 16275);

    g_autoptr(GPtrArray) records = read_lsan_fixture("off-stack-ruby34.lsan", "lsan.26511", &facts);
    ck_assert_uint_gt(records->len, 0);
    ck_assert(facts.incomplete);
    ck_assert_ptr_nonnull(strstr(facts.incomplete_reason, "found a thread off its stack"));
    ck_assert_int_eq(facts.pid, 26511);
}
END_TEST

/* Issue 26, items 7 and 8: a report that says the check did not run, or
 * that it left leaks out, is read (never skipped as no report) and is
 * incomplete. Real runs: under strace, and with max_leaks=1. */
START_TEST(test_reports_that_say_less)
{
    Facts facts;
    g_autofree char *fatal_path = gl_test_fixture("lsan/fatal-ptrace-ruby34.lsan");
    gsize length = 0;
    g_autofree char *fatal = gl_test_read(fatal_path, &length);
    ck_assert(gl_sanitizer_detect(fatal, length));
    g_autoptr(GPtrArray) none = read_fixture("lsan/fatal-ptrace-ruby34.lsan", &facts);
    ck_assert_uint_eq(none->len, 0);
    ck_assert(facts.incomplete);

    g_autoptr(GPtrArray) one = read_fixture("lsan/omitted-ruby34.lsan", &facts);
    ck_assert_uint_eq(one->len, 1);
    ck_assert(facts.incomplete);
    ck_assert_str_eq(facts.incomplete_reason, "LeakSanitizer left leaks out of its report "
                                              "(\"Omitting N more leak(s)\": max_leaks in the "
                                              "runtime's options)");
}
END_TEST

/* Both frame formats, every shape of frame they have. */
START_TEST(test_frame_formats)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_text(
        "=================================================================\n"
        "==31==ERROR: LeakSanitizer: detected memory leaks\n"
        "\n"
        "Direct leak of 100 byte(s) in 2 object(s) allocated from:\n"
        "    #0 0x7f0000001000 in malloc ../../../../src/libsanitizer/lsan/lsan_interceptors.cpp:75\n"
        "    #1 0x7f0000002000 in leaky_alloc /work/ext/leaky.c:16:5\n"
        "    #2 0x7f0000003000 in rb_funcallv (/usr/lib/libruby.so.3.4+0x12345)\n"
        "    #3 0x7f0000004000  (/usr/bin/ruby+0x1150)\n"
        "    #4 0x7f0000005000 in operator new(unsigned long) (/usr/lib/libstdc++.so.6+0x10) (BuildId: abc)\n"
        "\n"
        "Indirect leak of 8 byte(s) in 1 object(s) allocated from:\n"
        "F|0|0x7f0000001000|/usr/lib/liblsan.so|0x1000|malloc|0x0|<null>|0|0\n"
        "F|1|0x7f0000002000|/work/ext/leaky.so|0x2000|leaky_alloc|0x10|/work/ext/leaky.c|16|5\n"
        "F|2|0x7f0000003000|/work/ext/leaky.so|0x3000|operator|(A, B)|0x0|<null>|0|0\n"
        "F|3|0x7f0000004000|/usr/bin/ruby|0x4000|<null>|0x0|<null>|0|0\n"
        "\n"
        "SUMMARY: LeakSanitizer: 108 byte(s) leaked in 3 allocation(s).\n",
        "lsan.31", &facts, NULL);
    ck_assert_uint_eq(records->len, 2);
    ck_assert(facts.complete);
    ck_assert_str_eq(facts.tool, "LeakSanitizer");

    const GlRecord *direct = g_ptr_array_index(records, 0);
    ck_assert_str_eq(direct->kind, "Leak_DefinitelyLost");
    ck_assert_int_eq(direct->leak_kind, GL_LEAK_DEFINITE);
    ck_assert_str_eq(direct->what, "Direct leak of 100 byte(s) in 2 object(s)");
    ck_assert_uint_eq(direct->leaked_bytes, 100);
    ck_assert_uint_eq(direct->leaked_blocks, 2);
    ck_assert_int_eq(direct->pid, 31);
    ck_assert_uint_eq(direct->stack.n_frames, 5);
    const GlFrame *f = direct->stack.frames;
    ck_assert_str_eq(f[0].fn, "malloc");
    ck_assert_ptr_null(f[0].obj);
    ck_assert_str_eq(f[0].file, "lsan_interceptors.cpp");
    ck_assert_uint_eq(f[0].line, 75);
    ck_assert_str_eq(f[1].fn, "leaky_alloc");
    ck_assert_str_eq(f[1].dir, "/work/ext");
    ck_assert_str_eq(f[1].file, "leaky.c");
    ck_assert_uint_eq(f[1].line, 16);
    ck_assert_uint_eq(f[1].ip, 0x7f0000002000);
    ck_assert_str_eq(f[2].fn, "rb_funcallv");
    ck_assert_str_eq(f[2].obj, "/usr/lib/libruby.so.3.4");
    /* the module's offset: where its own symbols and DWARF say (debuginfo.h) */
    ck_assert_uint_eq(f[2].offset, 0x12345);
    ck_assert_uint_eq(f[1].offset, 0);
    ck_assert_ptr_null(f[2].file);
    ck_assert_ptr_null(f[3].fn);
    ck_assert_str_eq(f[3].obj, "/usr/bin/ruby");
    ck_assert_str_eq(f[4].fn, "operator new(unsigned long)");
    ck_assert_str_eq(f[4].obj, "/usr/lib/libstdc++.so.6");

    const GlRecord *indirect = g_ptr_array_index(records, 1);
    ck_assert_str_eq(indirect->kind, "Leak_IndirectlyLost");
    ck_assert_int_eq(indirect->leak_kind, GL_LEAK_INDIRECT);
    ck_assert_uint_eq(indirect->stack.n_frames, 4);
    f = indirect->stack.frames;
    ck_assert_str_eq(f[0].obj, "/usr/lib/liblsan.so");
    ck_assert_ptr_null(f[0].file);
    ck_assert_uint_eq(f[0].line, 0);
    ck_assert_str_eq(f[1].obj, "/work/ext/leaky.so");
    ck_assert_uint_eq(f[1].offset, 0x2000);
    ck_assert_str_eq(f[1].file, "leaky.c");
    ck_assert_uint_eq(f[1].line, 16);
    ck_assert_str_eq(f[2].fn, "operator|(A, B)");
    ck_assert_ptr_null(f[3].fn);
}
END_TEST

/* A process killed while it wrote its report: what was whole is read, the
 * record being written is dropped, and the file says it is not complete. */
/* Issue 26, item 11: gemleak's frame format has no separator to split on:
 * a '|' (or any other byte) in a checkout's path, its module's and its
 * sources', or in a function's name, is part of the field, and so is a
 * newline: the line after it is not the tag due next. */
START_TEST(test_frame_format_with_any_byte_in_a_path)
{
    g_autoptr(GPtrArray) records = read_text(
        "==31==ERROR: LeakSanitizer: detected memory leaks\n"
        "\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        "Gm 0 /usr/lib/liblsan.so\n"
        "Gf 0 malloc\n"
        "Gs 0 <null>\n"
        "G 0 0x7f0000001000 0x1000 0x0 0 0\n"
        "Gm 1 /work/a|b/G 1 0x1 0x1 0x0 1 1/leaky.so\n"
        "Gf 1 leaky_alloc\n"
        "Gs 1 /work/a|b/G 1 0x1 0x1 0x0 1 1/leaky.c\n"
        "G 1 0x7f0000002000 0x2000 0x10 16 5\n"
        "Gm 2 /work/new\n"
        "line|/Gf 2 x/leaky.so\n"
        "Gf 2 operator|(A, B)\n"
        "Gs 2 /work/new\n"
        "\n"
        "Gs 2 x/leaky.c\n"
        "G 2 0x7f0000003000 0x3000 0x0 7 0\n"
        "Gm 3 /usr/bin/ruby\n"
        "Gf 3 <null>\n"
        "Gs 3 <null>\n"
        "G 3 0x7f0000004000 0x4000 0x0 0 0\n"
        "\n"
        "SUMMARY: LeakSanitizer: 100 byte(s) leaked in 1 allocation(s).\n",
        "lsan.31", &(Facts) { 0 }, NULL);
    ck_assert_uint_eq(records->len, 1);
    const GlRecord *record = g_ptr_array_index(records, 0);
    ck_assert_uint_eq(record->stack.n_frames, 4);
    const GlFrame *f = record->stack.frames;
    ck_assert_str_eq(f[0].fn, "malloc");
    ck_assert_str_eq(f[0].obj, "/usr/lib/liblsan.so");
    ck_assert_ptr_null(f[0].file);
    ck_assert_uint_eq(f[0].ip, 0x7f0000001000);
    ck_assert_str_eq(f[1].fn, "leaky_alloc");
    ck_assert_str_eq(f[1].obj, "/work/a|b/G 1 0x1 0x1 0x0 1 1/leaky.so");
    ck_assert_str_eq(f[1].dir, "/work/a|b/G 1 0x1 0x1 0x0 1 1");
    ck_assert_str_eq(f[1].file, "leaky.c");
    ck_assert_uint_eq(f[1].line, 16);
    ck_assert_uint_eq(f[1].offset, 0x2000);
    ck_assert_str_eq(f[2].fn, "operator|(A, B)");
    ck_assert_str_eq(f[2].obj, "/work/new\nline|/Gf 2 x/leaky.so");
    ck_assert_str_eq(f[2].dir, "/work/new\n\nGs 2 x");
    ck_assert_str_eq(f[2].file, "leaky.c");
    ck_assert_uint_eq(f[2].line, 7);
    ck_assert_ptr_null(f[3].fn);
    ck_assert_str_eq(f[3].obj, "/usr/bin/ruby");

    /* a file cut in the middle of a frame: the record is not finished */
    Facts facts = { 0 };
    g_autoptr(GPtrArray) cut = read_text(
        "==32==ERROR: LeakSanitizer: detected memory leaks\n"
        "\n"
        "Direct leak of 100 byte(s) in 1 object(s) allocated from:\n"
        "Gm 0 /usr/lib/liblsan.so\n"
        "Gf 0 malloc\n",
        "lsan.32", &facts, NULL);
    ck_assert(!facts.complete);
    ck_assert_uint_eq(cut->len, 0);
}
END_TEST

START_TEST(test_truncated_report)
{
    static const char *const report =
        "==5==ERROR: LeakSanitizer: detected memory leaks\n"
        "\n"
        "Direct leak of 10 byte(s) in 1 object(s) allocated from:\n"
        "F|0|0x1|/usr/lib/liblsan.so|0x1|malloc|0x0|<null>|0|0\n"
        "F|1|0x2|/work/ext/leaky.so|0x2|leaky_alloc|0x0|/work/ext/leaky.c|16|5\n"
        "\n"
        "Direct leak of 20 byte(s) in 1 object(s) allocated from:\n"
        "F|0|0x1|/usr/lib/liblsan.so|0x1|malloc|0x0|<null>|0|0\n"
        "F|1|0x2|/work/ext/leaky.so|0x2|leaky_alloc|0x0|/work/ext/leaky.c|17|5\n"
        "\n"
        "SUMMARY: LeakSanitizer: 30 byte(s) leaked in 2 allocation(s).\n";
    gsize length = strlen(report);
    guint complete_cuts = 0;
    /* cut after every byte: never a crash, never a record without frames,
     * never a complete report before its SUMMARY line */
    for (gsize cut = 1; cut <= length; cut++) {
        Facts facts;
        GPtrArray *records = NULL;
        GError *error = NULL;
        if ((records = read_data(report, cut, "lsan.5", &facts, &error)) == NULL) {
            ck_assert_int_eq(error->code, GL_ERROR_MALFORMED);
            ck_assert_uint_lt(cut, strlen("==5==ERROR: LeakSanitizer:"));
            g_clear_error(&error);
            continue;
        }
        for (guint i = 0; i < records->len; i++) {
            const GlRecord *record = g_ptr_array_index(records, i);
            ck_assert_uint_gt(record->stack.n_frames, 0);
        }
        g_autofree char *head = g_strndup(report, cut);
        gboolean has_summary = strstr(head, "SUMMARY: ") != NULL;
        ck_assert_msg(facts.complete == has_summary, "cut at %zu", cut);
        complete_cuts += facts.complete;
        if (facts.complete)
            ck_assert_uint_eq(records->len, 2);
        g_ptr_array_unref(records);
    }
    ck_assert_uint_gt(complete_cuts, 0);

    /* cut inside the second record's last frame: the first is whole */
    const char *second = strstr(report, "Direct leak of 20");
    gsize cut = (gsize) (strstr(second, "leaky.c|17") - report);
    Facts facts;
    GPtrArray *records = NULL;
    ck_assert((records = read_data(report, cut, "lsan.5", &facts, NULL)) != NULL);
    ck_assert(!facts.complete);
    ck_assert_uint_eq(records->len, 1);
    const GlRecord *first = g_ptr_array_index(records, 0);
    ck_assert_uint_eq(first->leaked_bytes, 10);
    g_ptr_array_unref(records);
}
END_TEST

/* NULs, CRs and lines of any length in a report: read, never a crash. */
START_TEST(test_hostile_bytes)
{
    GString *text = g_string_new("==6==ERROR: LeakSanitizer: detected memory leaks\r\n\r\n"
                                 "Direct leak of 18446744073709551615 byte(s) in 99999999999999999999 object(s) allocated from:\r\n");
    g_string_append(text, "    #0 0x");
    for (int i = 0; i < 10000; i++)
        g_string_append_c(text, 'f');
    g_string_append(text, " in \n");
    static const char with_nul[] = "F|1|0x2|/a\0b|0x2|f|0x0|x.c|99999999999|1\n";
    g_string_append_len(text, with_nul, sizeof with_nul - 1);
    g_string_append(text, "F|||||\nF|1|0x|||||||||||||\n    #1 0x1 in f :\n    #2 0x1 in (\n"
                          "    #3 0x1 in f x.c:\n    #4 0x1 (\n    #5 0x1 in f (m+0x)\n\n"
                          "SUMMARY: LeakSanitizer\n");
    Facts facts;
    GPtrArray *records = NULL;
    ck_assert((records = read_data(text->str, text->len, "lsan.6", &facts, NULL)) != NULL);
    ck_assert_uint_eq(records->len, 1);
    const GlRecord *record = g_ptr_array_index(records, 0);
    ck_assert_uint_eq(record->leaked_bytes, G_MAXUINT64);
    ck_assert_uint_ge(record->stack.n_frames, 5);
    ck_assert(facts.complete);
    g_ptr_array_unref(records);
    g_string_free(text, TRUE);
}
END_TEST

START_TEST(test_detect)
{
    static const char lsan[] = "\n=====\n==12==ERROR: LeakSanitizer: detected memory leaks\n";
    static const char asan[] = "==12==ERROR: AddressSanitizer: heap-use-after-free on address";
    static const char valgrind[] = "<?xml version=\"1.0\"?>\n<valgrindoutput>\n";
    static const char almost[] = "x==12==ERROR: LeakSanitizer: detected memory leaks\n";
    ck_assert(gl_sanitizer_detect(lsan, sizeof lsan - 1));
    ck_assert(gl_sanitizer_detect(asan, sizeof asan - 1));
    ck_assert(!gl_sanitizer_detect(valgrind, sizeof valgrind - 1));
    ck_assert(!gl_sanitizer_detect(almost, sizeof almost - 1));
    ck_assert(!gl_sanitizer_detect("", 0));
    /* the start of an input is enough */
    ck_assert(gl_sanitizer_detect(lsan, 40));
    ck_assert(!gl_sanitizer_detect(lsan, 30));
}
END_TEST

/* A crash under AddressSanitizer: a fatal signal, as Valgrind's. */
START_TEST(test_asan_segv_is_a_fatal_signal)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_text(
        "AddressSanitizer:DEADLYSIGNAL\n"
        "=================================================================\n"
        "==9==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x7f0000001000 bp 0x1 sp 0x2 T0)\n"
        "==9==The signal is caused by a WRITE memory access.\n"
        "==9==Hint: address points to the zero page.\n"
        "    #0 0x7f0000001000 in leaky_crash (/work/ext/leaky.so+0x1000)\n"
        "    #1 0x7f0000002000 in rb_vm_exec (/usr/bin/ruby+0x2000)\n"
        "\n"
        "AddressSanitizer can not provide additional info.\n"
        "SUMMARY: AddressSanitizer: SEGV (/work/ext/leaky.so+0x1000) in leaky_crash\n"
        "==9==ABORTING\n",
        "asan.9", &facts, NULL);
    ck_assert_uint_eq(records->len, 1);
    ck_assert(facts.complete);
    ck_assert_str_eq(facts.tool, "AddressSanitizer");
    const GlRecord *crash = g_ptr_array_index(records, 0);
    ck_assert_str_eq(crash->kind, GL_KIND_FATAL_SIGNAL);
    ck_assert_str_eq(crash->what, "SEGV on unknown address 0x000000000000");
    ck_assert_uint_eq(crash->stack.n_frames, 2);
    ck_assert_str_eq(crash->stack.frames[0].fn, "leaky_crash");
    ck_assert_str_eq(crash->stack.frames[0].obj, "/work/ext/leaky.so");
}
END_TEST

/* ---- real captures ----------------------------------------------------------- */

/* The probe on Ruby 3.4.5 freeing its memory at exit: the extension's
 * leaks, with exact stacks, and nothing of Ruby's. */
START_TEST(test_lsan_probe_capture)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_fixture("lsan/probe-ruby34.lsan", &facts);
    ck_assert_str_eq(facts.tool, "LeakSanitizer");
    ck_assert_int_eq(facts.pid, 25997);
    ck_assert(facts.complete);
    ck_assert(!facts.incomplete);
    ck_assert_uint_eq(facts.n_reports, 1);
    ck_assert_uint_eq(records->len, 26);
    guint direct = 0;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        ck_assert_msg(enters_object(record, "/probe.so"), "Ruby's: %s", record->what);
        ck_assert_int_eq(record->pid, 25997);
        ck_assert(record->at_exit);
        ck_assert(record->has_leak_size);
        direct += record->leak_kind == GL_LEAK_DEFINITE;
    }
    ck_assert_uint_eq(direct, 18);

    const GlRecord *leak = record_through(records, "r_malloc");
    ck_assert_ptr_nonnull(leak);
    ck_assert_str_eq(leak->kind, "Leak_DefinitelyLost");
    ck_assert_str_eq(leak->what, "Direct leak of 202 byte(s) in 2 object(s)");
    ck_assert_uint_eq(leak->leaked_bytes, 202);
    ck_assert_uint_eq(leak->leaked_blocks, 2);
    ck_assert_str_eq(leak->stack.frames[0].fn, "__interceptor_malloc");
    ck_assert_str_eq(leak->stack.frames[0].obj, "/usr/lib/gcc/x86_64-linux-gnu/12/liblsan.so");
    const GlFrame *frame = &leak->stack.frames[1];
    ck_assert_str_eq(frame->fn, "r_malloc");
    ck_assert_str_eq(frame->obj, "/tmp/gemleak-sanitizers/r34/probe/probe.so");
    ck_assert_str_eq(frame->dir, "/tmp/gemleak-sanitizers/r34/probe");
    ck_assert_str_eq(frame->file, "probe.c");
    ck_assert_uint_eq(frame->line, 39);
    ck_assert_uint_eq(frame->ip, 0x7f740095a42d);
    /* exact stacks: Ruby's frames by name, to main */
    ck_assert_uint_ge(leak->stack.n_frames, 20);
    ck_assert_ptr_nonnull(frame_named(&leak->stack, "rb_call0"));

    /* the ten structs of a TypedData without dfree, under Ruby's allocator */
    const GlRecord *typed = record_through(records, "r_typed_nofree");
    ck_assert_ptr_nonnull(typed);
    ck_assert_uint_eq(typed->leaked_bytes, 222);
    ck_assert_ptr_nonnull(frame_named(&typed->stack, "rb_data_typed_object_zalloc"));
}
END_TEST

/* The runtime's default frame format reads into the same records, but a
 * frame it could give a source line names no module. */
START_TEST(test_default_format_reads_alike)
{
    Facts facts, default_facts;
    g_autoptr(GPtrArray) exact = read_fixture("lsan/probe-ruby34.lsan", &facts);
    g_autoptr(GPtrArray) plain = read_fixture("lsan/probe-ruby34-default.lsan", &default_facts);
    ck_assert_uint_eq(exact->len, plain->len);
    ck_assert(default_facts.complete);
    const GlRecord *leak = record_through(plain, "r_malloc");
    ck_assert_ptr_nonnull(leak);
    ck_assert_str_eq(leak->what, "Direct leak of 202 byte(s) in 2 object(s)");
    const GlFrame *frame = frame_named(&leak->stack, "r_malloc");
    ck_assert_str_eq(frame->file, "probe.c");
    ck_assert_uint_eq(frame->line, 39);
    ck_assert_ptr_null(frame->obj);
    for (guint i = 0; i < exact->len; i++) {
        const GlRecord *a = g_ptr_array_index(exact, i);
        const GlRecord *b = record_through(plain, a->stack.frames[1].fn);
        ck_assert_ptr_nonnull(b);
    }
}
END_TEST

/* Without RUBY_FREE_AT_EXIT (Ruby 3.4 with it unset, Ruby 3.1):
 * LeakSanitizer keeps 5000 of Ruby's blocks and not one of the
 * extension's leaks: the report says it is incomplete. */
START_TEST(test_too_many_leaks_is_incomplete)
{
    static const char *const captures[] = {
        "lsan/probe-ruby34-nofree.lsan", "lsan/probe-ruby31.lsan", "lsan/leaky-ruby31.lsan",
    };
    static const char *const leaks[] = { "r_malloc", "r_typed_nofree", "leaky_leak",
                                         "leaky_thread_main", NULL };
    for (guint c = 0; c < G_N_ELEMENTS(captures); c++) {
        Facts facts;
        g_autoptr(GPtrArray) records = read_fixture(captures[c], &facts);
        ck_assert_msg(facts.incomplete, "%s", captures[c]);
        ck_assert_str_eq(facts.incomplete_reason,
                         "Too many leaks: LeakSanitizer reported only the first ones");
        ck_assert(facts.complete);
        ck_assert_uint_gt(records->len, 50);
        for (const char *const *leak = leaks; *leak != NULL; leak++)
            ck_assert_msg(record_through(records, *leak) == NULL, "%s: %s", captures[c], *leak);
    }
}
END_TEST

/* One report per process; the pid in the file's name is the report's. */
START_TEST(test_fork_one_report_per_process)
{
    g_autofree char *dir = gl_test_fixture("lsan/fork-ruby34");
    g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
    ck_assert_ptr_nonnull(listing);
    guint files = 0, leaks = 0;
    gint64 pids[2] = { 0, 0 };
    const char *name;
    while ((name = g_dir_read_name(listing)) != NULL) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        Facts facts;
        GPtrArray *records = NULL;
        ck_assert((records = read_file(path, &facts, NULL)) != NULL);
        ck_assert_int_eq(facts.pid, g_ascii_strtoll(strchr(name, '.') + 1, NULL, 10));
        ck_assert_uint_lt(files, 2);
        pids[files++] = facts.pid;
        for (guint i = 0; i < records->len; i++) {
            const GlRecord *record = g_ptr_array_index(records, i);
            ck_assert_int_eq(record->pid, facts.pid);
            leaks += frame_named(&record->stack, "leaky_leak") != NULL;
        }
        g_ptr_array_unref(records);
    }
    ck_assert_uint_eq(files, 2);
    ck_assert_int_ne(pids[0], pids[1]);
    /* the parent's Leaky.leak, reported by the parent and again by the
     * child that inherited it, and the child's own */
    ck_assert_uint_eq(leaks, 3);
}
END_TEST

/* A native thread's leak: the stack ends in start_thread, no Ruby frame. */
START_TEST(test_leak_in_a_native_thread)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_fixture("lsan/leaky-ruby34.lsan", &facts);
    ck_assert_uint_eq(records->len, 5);
    const GlRecord *thread = record_through(records, "leaky_thread_main");
    ck_assert_ptr_nonnull(thread);
    ck_assert_uint_eq(thread->leaked_bytes, 130);
    ck_assert_int_eq(thread->tid, 0);  /* LeakSanitizer does not say */
    ck_assert_str_eq(thread->stack.frames[1].fn, "leaky_alloc");
    ck_assert_str_eq(thread->stack.frames[2].fn, "leaky_thread_main");
    ck_assert_str_eq(thread->stack.frames[3].fn, "start_thread");
    ck_assert(!enters_object(thread, "/bin/ruby"));
    /* the callbacks into Ruby and the reachable block: no record */
    ck_assert_ptr_null(record_through(records, "leaky_callback_funcall"));
    ck_assert_ptr_null(record_through(records, "leaky_reachable"));
}
END_TEST

START_TEST(test_asan_use_after_free)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_fixture("asan/r_uaf_two_lines.asan", &facts);
    ck_assert_str_eq(facts.tool, "AddressSanitizer");
    ck_assert_int_eq(facts.pid, 26477);
    ck_assert(facts.complete);
    /* built without -fsanitize-recover=address: it stopped there */
    ck_assert(facts.halted);
    ck_assert_uint_eq(records->len, 1);
    const GlRecord *error = g_ptr_array_index(records, 0);
    ck_assert_str_eq(error->kind, "InvalidRead");
    ck_assert_int_eq(error->leak_kind, GL_LEAK_NONE);
    ck_assert_str_eq(error->what,
                     "Invalid read of size 1 (heap-use-after-free on address 0x60c00000b8c0)");
    ck_assert_int_eq(error->tid, 1);
    ck_assert_str_eq(error->stack.frames[0].fn, "r_uaf_two_lines");
    ck_assert_uint_eq(error->stack.frames[0].line, 181);
    ck_assert_uint_eq(error->aux->len, 3);
    const GlAux *where = &g_array_index(error->aux, GlAux, 0);
    ck_assert_str_eq(where->text, "0x60c00000b8c0 is located 0 bytes inside of 115-byte region "
                                  "[0x60c00000b8c0,0x60c00000b933)");
    ck_assert_uint_eq(where->stack.n_frames, 0);
    const GlAux *freed = &g_array_index(error->aux, GlAux, 1);
    ck_assert_str_eq(freed->text, "freed by thread T0 here");
    ck_assert_str_eq(freed->stack.frames[0].fn, "__interceptor_free");
    ck_assert_str_eq(freed->stack.frames[1].fn, "r_uaf_two_lines");
    ck_assert_uint_eq(freed->stack.frames[1].line, 180);
    const GlAux *allocated = &g_array_index(error->aux, GlAux, 2);
    ck_assert_str_eq(allocated->text, "previously allocated by thread T0 here");
    ck_assert_uint_eq(allocated->stack.frames[1].line, 179);
}
END_TEST

START_TEST(test_asan_other_errors)
{
    Facts facts;
    g_autoptr(GPtrArray) overflow = read_fixture("asan/r_overflow.asan", &facts);
    const GlRecord *write = g_ptr_array_index(overflow, 0);
    ck_assert_str_eq(write->kind, "InvalidWrite");
    ck_assert(g_str_has_prefix(write->what, "Invalid write of size 1 (heap-buffer-overflow"));
    ck_assert_uint_eq(write->aux->len, 2);
    ck_assert_str_eq(g_array_index(write->aux, GlAux, 1).text, "allocated by thread T0 here");

    g_autoptr(GPtrArray) twice = read_fixture("asan/r_double_free.asan", &facts);
    const GlRecord *free_error = g_ptr_array_index(twice, 0);
    ck_assert_str_eq(free_error->kind, "InvalidFree");
    ck_assert_str_eq(free_error->what, "attempting double-free on 0x60c00000b8c0 in thread T0");
    ck_assert_int_eq(free_error->tid, 1);
    ck_assert_str_eq(free_error->stack.frames[1].fn, "r_double_free");

    /* Ruby reads what the extension freed: no extension frame in the access */
    g_autoptr(GPtrArray) tail = read_fixture("asan/r_uaf_tail.asan", &facts);
    const GlRecord *read = g_ptr_array_index(tail, 0);
    ck_assert_str_eq(read->kind, "InvalidRead");
    ck_assert(!enters_object(read, "/probe.so"));
    ck_assert_ptr_nonnull(frame_named(&g_array_index(read->aux, GlAux, 1).stack, "r_uaf_tail"));

    /* AddressSanitizer's own leak check writes LeakSanitizer's report */
    g_autoptr(GPtrArray) leaks = read_fixture("asan/leaky-leak.asan", &facts);
    ck_assert_str_eq(facts.tool, "LeakSanitizer");
    ck_assert(!facts.halted);
    ck_assert_uint_eq(leaks->len, 3);
    ck_assert_ptr_nonnull(record_through(leaks, "leaky_thread_main"));
}
END_TEST

/* ---- the same verdicts as Valgrind's -------------------------------------------- */

/* Returns: the name of the outermost frame of @record's primary stack in
 * the probe (the method a test called, or Init_probe), NULL if none. */
static const char *probe_entry(const GlRecord *record)
{
    const char *entry = NULL;
    for (guint i = 0; i < record->stack.n_frames; i++) {
        const GlFrame *frame = &record->stack.frames[i];
        if (frame->obj != NULL && g_str_has_suffix(frame->obj, "/probe.so") && frame->fn != NULL)
            entry = frame->fn;
    }
    return entry;
}

/* Adds to @verdicts (entry -> bit set of GlVerdict) the verdict of every
 * leak of @record under @classifier. */
static void note_verdict(GHashTable *verdicts, GlClassifier *classifier, GlRecord *record,
                         const GlProcess *doc)
{
    GlVerdict verdict = gl_classifier_classify(classifier, record, doc);
    const char *entry = probe_entry(record);
    if (record->leak_kind == GL_LEAK_NONE || entry == NULL)
        return;
    guint bits = GPOINTER_TO_UINT(g_hash_table_lookup(verdicts, entry));
    g_hash_table_insert(verdicts, g_strdup(entry), GUINT_TO_POINTER(bits | (1u << verdict)));
}

/* Returns: (transfer full): the verdicts on the leaks of the Valgrind
 * capture @relative. */
static GHashTable *valgrind_verdicts(const char *relative, const GlRules *rules)
{
    GHashTable *verdicts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autofree char *path = gl_test_fixture(relative);
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, NULL);
    ck_assert_ptr_nonnull(reader);
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    GlRecord *record;
    while ((record = gl_reader_next(reader, NULL)) != NULL) {
        note_verdict(verdicts, classifier, record, gl_reader_process(reader));
        gl_record_free(record);
    }
    return verdicts;
}

static GHashTable *lsan_verdicts(const char *relative, const GlRules *rules)
{
    GHashTable *verdicts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    Facts facts;
    g_autoptr(GPtrArray) records = read_fixture(relative, &facts);
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    for (guint i = 0; i < records->len; i++)
        note_verdict(verdicts, classifier, g_ptr_array_index(records, i), NULL);
    return verdicts;
}

/* Every probe pattern LeakSanitizer reports on Ruby 3.4.5 with
 * RUBY_FREE_AT_EXIT=1 gets the verdict the same pattern gets from
 * Valgrind's capture on a Ruby 3.4.5 (fixtures/xml/probe-ruby34.xml), and
 * every leak Valgrind keeps LSan keeps, but one: zlib's z_stream and its
 * state point at each other, which LeakSanitizer calls all indirect
 * (Valgrind: one definite), so r_zlib is kept only when indirect leaks
 * are asked for. */
/* --growth under a sanitizer (fixtures/lsan/growth-ruby34, hand-made as
 * the client library writes it): each "gemleak:grew" line is a record of
 * its site, still reachable, found while Ruby ran, with the live bytes and
 * blocks its size and their change, after the growth marker before it;
 * the site's frames are the runtime's own lines, given once a process. */
START_TEST(test_growth_measures)
{
    Facts facts;
    g_autoptr(GPtrArray) records = read_fixture("lsan/growth-ruby34/lsan.4242", &facts);
    ck_assert(facts.complete);
    ck_assert(!facts.incomplete);
    ck_assert(facts.marked);
    guint grew = 0;
    const GlRecord *second_cache = NULL;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        if (!record->has_change)
            continue;
        grew++;
        ck_assert_str_eq(record->kind, "Leak_StillReachable");
        ck_assert_int_eq(record->leak_kind, GL_LEAK_REACHABLE);
        ck_assert(record->while_running);
        ck_assert(!record->at_exit);
        ck_assert_int_eq(record->pid, 4242);
        if (second_cache == NULL && record->marker != NULL &&
            g_str_has_prefix(record->marker, "gemleak:growth\t1\tCacheTest%23test_add\t"))
            second_cache = record;
    }
    /* 8 sites at the first measure, 8, 7 and 6 then, 4 of the Data objects */
    ck_assert_uint_eq(grew, 8 + 8 + 7 + 6 + 4);
    ck_assert_ptr_nonnull(second_cache);
    ck_assert_uint_eq(second_cache->leaked_bytes, 1600);
    ck_assert_uint_eq(second_cache->leaked_blocks, 100);
    ck_assert_int_eq(second_cache->change_bytes, 800);
    ck_assert_int_eq(second_cache->change_blocks, 50);
    ck_assert_str_eq(second_cache->what, "1600 (+800) bytes in 100 (+50) blocks are still "
                                         "reachable");
    /* the site's frames, unsymbolized: #0 what the target called */
    ck_assert_uint_eq(second_cache->stack.n_frames, 15);
    ck_assert_str_eq(second_cache->stack.frames[0].obj,
                     "/usr/lib/x86_64-linux-gnu/liblsan.so.0.0.0");
    ck_assert_uint_eq(second_cache->stack.frames[0].offset, 0x13545);
    ck_assert_str_eq(second_cache->stack.frames[1].obj, "/home/dev/growthgem/lib/growth/growth.so");
    ck_assert_uint_eq(second_cache->stack.frames[1].offset, 0x1250);
    /* and the runtime's report at exit, as ever */
    const GlRecord *last = g_ptr_array_index(records, records->len - 1);
    ck_assert(last->at_exit);
    ck_assert(!last->has_change);
    ck_assert_str_eq(last->kind, "Leak_DefinitelyLost");
}
END_TEST

/* A measure of a site no "gemleak:site" line named, and one that cannot
 * be read: the input's problems, said, never a crash; what can be read is. */
START_TEST(test_growth_measure_of_an_unknown_site)
{
    static const char text[] =
        "gemleak:growth\n"
        "gemleak:growth\t1\tT\t/t.rb:1\n"
        "gemleak:site\t1\n"
        "    #0 0x7f0000001000 (/lib/libc.so.6+0x1000)\n"
        "    #1 0x7f0000002000 (/x/ext.so+0x2000)\n"
        "gemleak:grew\t1\t10\t10\t1\t1\n"
        "gemleak:grew\t7\t10\t10\t1\t1\n"
        "gemleak:grew\t8\t10\t10\t1\t1\n"
        "gemleak:growth\tmeasured\t1\n"
        "==9==LeakSanitizer: nothing\n";
    g_autoptr(GlInput) input = gl_input_open_memory(gl_input_format_find("sanitizer"), text,
                                                    sizeof text - 1, "lsan.9");
    guint n = 0;
    GlRecord *record;
    while ((record = gl_input_next(input)) != NULL) {
        ck_assert_uint_eq(record->stack.n_frames, 2);
        ck_assert_int_eq(record->change_bytes, 10);
        gl_record_free(record);
        n++;
    }
    ck_assert_uint_eq(n, 1);
    const GPtrArray *problems = gl_input_problems(input);
    ck_assert_uint_eq(problems->len, 1);
    const GError *problem = g_ptr_array_index(problems, 0);
    ck_assert(g_error_matches(problem, GL_ERROR, GL_ERROR_MALFORMED));
    ck_assert_str_eq(problem->message, "lsan.9: process 9: 2 growth measures (gemleak:grew) of a "
                                       "site no gemleak:site line named (7, ...): their growth "
                                       "is not known");
    /* a line that cannot be read makes the process's report incomplete */
    static const char bad[] = "gemleak:growth\ngemleak:grew\t1\tten\n"
                              "==9==LeakSanitizer: nothing\n";
    Facts facts;
    g_autoptr(GPtrArray) none = read_data(bad, sizeof bad - 1, "lsan.9", &facts, NULL);
    ck_assert_uint_eq(none->len, 0);
    ck_assert(facts.incomplete);
}
END_TEST

START_TEST(test_same_verdicts_as_valgrind)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "probe", NULL));
    g_autoptr(GHashTable) valgrind = valgrind_verdicts("xml/probe-ruby34.xml", rules);
    g_autoptr(GHashTable) lsan = lsan_verdicts("lsan/probe-ruby34.lsan", rules);
    const guint keep = 1u << GL_VERDICT_KEEP;
    GHashTableIter iter;
    gpointer key, value;
    guint compared = 0, kept = 0;
    g_hash_table_iter_init(&iter, lsan);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        guint bits = GPOINTER_TO_UINT(value);
        gpointer theirs = g_hash_table_lookup(valgrind, key);
        ck_assert_msg(theirs != NULL, "%s: reported by LSan alone", (char *) key);
        if (strcmp(key, "r_zlib") == 0) {
            ck_assert_uint_eq(bits, 1u << GL_VERDICT_SKIP_KIND);
            continue;
        }
        /* LSan's indirect leaks under a kept direct one (r_st_table) */
        bits &= ~(1u << GL_VERDICT_SKIP_KIND);
        ck_assert_msg(bits == GPOINTER_TO_UINT(theirs), "%s: LSan %x, Valgrind %x", (char *) key,
                      bits, GPOINTER_TO_UINT(theirs));
        compared++;
    }
    g_hash_table_iter_init(&iter, valgrind);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        if ((GPOINTER_TO_UINT(value) & keep) == 0)
            continue;
        kept++;
        guint bits = GPOINTER_TO_UINT(g_hash_table_lookup(lsan, key));
        if (strcmp(key, "r_zlib") != 0)
            ck_assert_msg(bits & keep, "%s: kept by Valgrind, not by LSan", (char *) key);
    }
    ck_assert_uint_ge(kept, 15);
    ck_assert_uint_ge(compared, 16);
    /* Init_probe's own leak and probe_setup_tables' (tail-called from it):
     * Init code for both */
    ck_assert_uint_eq(GPOINTER_TO_UINT(g_hash_table_lookup(lsan, "Init_probe")),
                      1u << GL_VERDICT_SKIP_INIT);
    ck_assert_uint_eq(GPOINTER_TO_UINT(g_hash_table_lookup(lsan, "probe_setup_tables")),
                      1u << GL_VERDICT_SKIP_INIT);

    gl_rules_set_leak_kinds(rules, GL_LEAK_DEFINITE | GL_LEAK_INDIRECT);
    g_autoptr(GHashTable) with_indirect = lsan_verdicts("lsan/probe-ruby34.lsan", rules);
    ck_assert_uint_eq(GPOINTER_TO_UINT(g_hash_table_lookup(with_indirect, "r_zlib")), keep);
}
END_TEST

/* AddressSanitizer's errors of the probe are kept as Valgrind's are, the
 * one Ruby made (r_uaf_tail) by its free stack. */
START_TEST(test_asan_errors_kept_as_valgrinds)
{
    static const char *const errors[][2] = {
        { "r_uaf_two_lines", "r_uaf_two_lines" }, { "r_uaf_tail", "r_uaf_tail" },
        { "r_overflow", "r_overflow" }, { "r_double_free", "r_double_free" },
        /* on Debian's stripped 3.1: Ruby's frames unnamed, the free stack the extension's */
        { "r_uaf_tail-ruby31", "r_uaf_tail" },
    };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "probe", NULL));
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    for (guint i = 0; i < G_N_ELEMENTS(errors); i++) {
        g_autofree char *relative = g_strdup_printf("asan/%s.asan", errors[i][0]);
        Facts facts;
        g_autoptr(GPtrArray) records = read_fixture(relative, &facts);
        GlRecord *record = g_ptr_array_index(records, 0);
        ck_assert_int_eq(gl_classifier_classify(classifier, record, NULL), GL_VERDICT_KEEP);
        const GlFrame *first = gl_record_first_target_frame(record);
        ck_assert_ptr_nonnull(first);
        ck_assert_str_eq(first->fn, errors[i][1]);
        ck_assert(!record->uncertain);
    }
}
END_TEST


Suite *gl_sanitizer_reader_suite(void)
{
    Suite *suite = suite_create("sanitizer_reader");
    TCase *tc = tcase_create("sanitizer_reader");
    tcase_add_test(tc, test_empty_and_garbage_are_errors);
    tcase_add_test(tc, test_log_without_report_is_no_leak);
    tcase_add_test(tc, test_fatal_error_is_incomplete);
    tcase_add_test(tc, test_tracer_fault_is_incomplete);
    tcase_add_test(tc, test_the_tracers_lines_about_the_threads);
    tcase_add_test(tc, test_frame_formats);
    tcase_add_test(tc, test_frame_format_with_any_byte_in_a_path);
    tcase_add_test(tc, test_truncated_report);
    tcase_add_test(tc, test_hostile_bytes);
    tcase_add_test(tc, test_detect);
    tcase_add_test(tc, test_reports_that_say_less);
    tcase_add_test(tc, test_asan_segv_is_a_fatal_signal);
    tcase_add_test(tc, test_lsan_probe_capture);
    tcase_add_test(tc, test_default_format_reads_alike);
    tcase_add_test(tc, test_too_many_leaks_is_incomplete);
    tcase_add_test(tc, test_fork_one_report_per_process);
    tcase_add_test(tc, test_leak_in_a_native_thread);
    tcase_add_test(tc, test_asan_use_after_free);
    tcase_add_test(tc, test_asan_other_errors);
    tcase_add_test(tc, test_same_verdicts_as_valgrind);
    tcase_add_test(tc, test_growth_measures);
    tcase_add_test(tc, test_growth_measure_of_an_unknown_site);
    tcase_add_test(tc, test_asan_errors_kept_as_valgrinds);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(suite, tc);
    return suite;
}
