/* Per-test attribution (attribute.c) on hand-made XML: the markers the
 * helper writes, mid-run and exit leak checks as Valgrind 3.19 writes them
 * (a mid-run check says "17 (+17) bytes in 1 (+1) blocks", its
 * <leakedbytes> the loss record's total), and what every report says. */
#include "testutil.h"
#include "gemleak/judge/attribute.h"
#include "gemleak/base/protocol.h"
#include "gemleak/read/reader.h"
#include "gemleak/run/runner.h"

#include <string.h>
#include <sys/resource.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#define VG "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so"
#define RUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"
#define GEM "/work/gem"
#define EXT GEM "/lib/tally/tally.so"

/* ---- writing the XML -------------------------------------------------------- */

static void begin(GString *xml, int pid)
{
    g_string_append_printf(xml,
        "<?xml version=\"1.0\"?>\n<valgrindoutput>\n"
        "<protocolversion>4</protocolversion>\n<protocoltool>memcheck</protocoltool>\n"
        "<pid>%d</pid>\n<ppid>1</ppid>\n<tool>memcheck</tool>\n"
        "<args><vargv><exe>/usr/bin/valgrind.bin</exe></vargv>"
        "<argv><exe>/usr/bin/ruby3.1</exe></argv></args>\n"
        "<status><state>RUNNING</state><time>00:00:00:00.01 </time></status>\n", pid);
}

/* A client message as Valgrind writes it: two spaces after the text. */
static void msg(GString *xml, const char *text)
{
    g_string_append_printf(xml, "<clientmsg><tid>1</tid><text>%s  </text></clientmsg>\n", text);
}

static void start(GString *xml, const char *name, const char *location)
{
    g_autofree char *text = g_strdup_printf("gemleak:start\t%s\t%s", name, location);
    msg(xml, text);
}

static void end(GString *xml, const char *name, const char *location)
{
    g_autofree char *text = g_strdup_printf("gemleak:end\t%s\t%s", name, location);
    msg(xml, text);
}

/* A definite leak from tally_count at @line: @what is Valgrind's text
 * ("17 (+17) bytes in 1 (+1) blocks" mid-run), @bytes and @blocks the
 * loss record's totals. The addresses follow the line: one loss record a
 * line, the same in every check. */
static void leak(GString *xml, const char *what, guint bytes, guint blocks, guint line)
{
    g_string_append_printf(xml,
        "<error><unique>0x%x</unique><tid>1</tid><kind>Leak_DefinitelyLost</kind>\n"
        "<xwhat><text>%s are definitely lost in loss record 1 of 9</text>"
        "<leakedbytes>%u</leakedbytes><leakedblocks>%u</leakedblocks></xwhat>\n<stack>\n"
        "<frame><ip>0x48417B4</ip><obj>" VG "</obj><fn>malloc</fn></frame>\n"
        "<frame><ip>0x4A%05X</ip><obj>" EXT "</obj><fn>copy_text</fn>"
        "<dir>" GEM "/ext/tally</dir><file>tally.c</file><line>13</line></frame>\n"
        "<frame><ip>0x4B%05X</ip><obj>" EXT "</obj><fn>tally_count</fn>"
        "<dir>" GEM "/ext/tally</dir><file>tally.c</file><line>%u</line></frame>\n"
        "<frame><ip>0x4C00000</ip><obj>" RUBY "</obj><fn>rb_vm_exec</fn></frame>\n"
        "</stack></error>\n", line, what, bytes, blocks, line, line, line);
}

/* An invalid read in tally_count at @line. */
static void invalid_read(GString *xml, guint line)
{
    g_string_append_printf(xml,
        "<error><unique>0x%x</unique><tid>1</tid><kind>InvalidRead</kind>\n"
        "<what>Invalid read of size 1</what>\n<stack>\n"
        "<frame><ip>0x4B%05X</ip><obj>" EXT "</obj><fn>tally_count</fn>"
        "<dir>" GEM "/ext/tally</dir><file>tally.c</file><line>%u</line></frame>\n"
        "<frame><ip>0x4C00000</ip><obj>" RUBY "</obj><fn>rb_vm_exec</fn></frame>\n"
        "</stack>\n<auxwhat>Address 0x0 is not stack'd, malloc'd or (recently) free'd</auxwhat>\n"
        "</error>\n", line + 0x100, line, line);
}

static void finished(GString *xml)
{
    g_string_append(xml, "<status><state>FINISHED</state><time>00:00:00:01.00 </time></status>\n");
}

static void close_document(GString *xml)
{
    g_string_append(xml, "<errorcounts>\n</errorcounts>\n<suppcounts>\n</suppcounts>\n"
                         "</valgrindoutput>\n");
}

#define A "ATest#test_a", GEM "/test/a_test.rb:4"
#define B "BTest#test_b", GEM "/test/b_test.rb:9"
#define C "BTest#test_c", GEM "/test/b_test.rb:14"

/* ---- reading it ------------------------------------------------------------- */

typedef struct {
    char *dir;
    char *root;            /* DIR/gem: GEM as written, a directory that is there */
    char *xml_dir;         /* DIR/xml: the documents */
    GlTestRun run;
    JsonObject *report;    /* the JSON report's root; owned by parser */
    JsonParser *parser;
} Filtered;

/* Writes each document of @xmls (NULL-terminated) to DIR/<i>.xml and runs
 * gemleak filter --object tally --project-root /work/gem DIR, with
 * @format ("json" or another) on standard output. */
static void filter_docs(Filtered *f, const char *format, GString *const *xmls)
{
    f->dir = gl_test_tmpdir();
    f->root = g_build_filename(f->dir, "gem", NULL);
    ck_assert_int_eq(g_mkdir(f->root, 0700), 0);
    f->xml_dir = g_build_filename(f->dir, "xml", NULL);
    ck_assert_int_eq(g_mkdir(f->xml_dir, 0700), 0);
    for (guint i = 0; xmls[i] != NULL; i++) {
        g_autofree char *name = g_strdup_printf("%u.xml", 100 + i);
        g_autofree char *path = g_build_filename(f->xml_dir, name, NULL);
        g_autoptr(GString) text = g_string_new_len(xmls[i]->str, (gssize) xmls[i]->len);
        g_autofree char *root_slash = g_strconcat(f->root, "/", NULL);
        g_string_replace(text, GEM "/", root_slash, 0);
        gl_test_write(path, text->str, (gssize) text->len);
    }
    gl_test_gemleak(&f->run, "filter", "--object", "tally", "--project-root", f->root, "--format",
                    format, f->xml_dir, NULL);
    if (strcmp(format, "json") == 0) {
        f->parser = json_parser_new();
        ck_assert_msg(json_parser_load_from_data(f->parser, f->run.out, -1, NULL), "%s", f->run.out);
        f->report = json_node_get_object(json_parser_get_root(f->parser));
    }
}

static void filtered_clear(Filtered *f)
{
    gl_remove_tree(f->dir);
    g_free(f->dir);
    g_free(f->root);
    g_free(f->xml_dir);
    gl_test_run_clear(&f->run);
    g_clear_object(&f->parser);
}

static JsonObject *finding_at(const Filtered *f, guint i)
{
    JsonArray *findings = json_object_get_array_member(f->report, "findings");
    ck_assert_uint_gt(json_array_get_length(findings), i);
    return json_array_get_object_element(findings, i);
}

static guint n_findings(const Filtered *f)
{
    return json_array_get_length(json_object_get_array_member(f->report, "findings"));
}

/* "NAME @ LOCATION, ..." of the finding's tests, for one assertion. */
static char *tests_of(JsonObject *finding)
{
    JsonArray *tests = json_object_get_array_member(finding, "tests");
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(tests); i++) {
        JsonObject *test = json_array_get_object_element(tests, i);
        g_string_append_printf(out, "%s%s @ %s", i > 0 ? ", " : "",
                               json_object_get_string_member(test, "name"),
                               json_object_get_string_member(test, "location"));
    }
    return g_string_free(out, FALSE);
}

static gint64 summary_int(const Filtered *f, const char *name)
{
    return json_object_get_int_member(json_object_get_object_member(f->report, "summary"), name);
}

static gint64 skipped_by(const Filtered *f, const char *reason)
{
    JsonObject *summary = json_object_get_object_member(f->report, "summary");
    return json_object_get_int_member(json_object_get_object_member(summary, "skipped_by_reason"),
                                      reason);
}

/* ---- markers ------------------------------------------------------------------ */

START_TEST(test_marker_parse)
{
    g_autoptr(GlTest) test = NULL;
    ck_assert_int_eq(gl_marker_parse("gemleak:start\tA%20b%25c%09d\t/x/y%20z.rb:3  ", &test),
                     GL_MARKER_START);
    ck_assert_str_eq(test->name, "A b%c\td");
    ck_assert_str_eq(test->location, "/x/y z.rb:3");
    g_clear_pointer(&test, gl_test_free);

    ck_assert_int_eq(gl_marker_parse("gemleak:end\t\t/x/y.rb\n  ", &test), GL_MARKER_END);
    ck_assert_str_eq(test->name, "");
    ck_assert_str_eq(test->location, "/x/y.rb");
    g_clear_pointer(&test, gl_test_free);

    /* bytes that are not UTF-8 (a name cut mid-character), a bad escape, a NUL */
    ck_assert_int_eq(gl_marker_parse("gemleak:start\tcaf%C3%\t%00%zz", &test), GL_MARKER_START);
    ck_assert(g_utf8_validate(test->name, -1, NULL));
    ck_assert_str_eq(test->location, "%zz");
    g_clear_pointer(&test, gl_test_free);

    /* under a sanitizer: blocks a test file allocated (--per-test=file: its
     * name empty, as the file's own markers have it), and before the first */
    ck_assert_int_eq(gl_marker_parse("gemleak:owned\t\t/x/y.rb", &test), GL_MARKER_OWNED);
    ck_assert_ptr_nonnull(test);
    ck_assert_str_eq(test->name, "");
    ck_assert_str_eq(test->location, "/x/y.rb");
    g_clear_pointer(&test, gl_test_free);
    ck_assert_int_eq(gl_marker_parse("gemleak:owned\tA\t/x/y.rb:3", &test), GL_MARKER_OWNED);
    ck_assert_str_eq(test->name, "A");
    g_clear_pointer(&test, gl_test_free);
    ck_assert_int_eq(gl_marker_parse("gemleak:owned\t\t", &test), GL_MARKER_OWNED);
    ck_assert_ptr_null(test);

    ck_assert_int_eq(gl_marker_parse("gemleak:setup  ", &test), GL_MARKER_SETUP);
    ck_assert_ptr_null(test);
    ck_assert_int_eq(gl_marker_parse("gemleak:forked", NULL), GL_MARKER_FORKED);
    ck_assert_int_eq(gl_marker_parse("gemleak:end\tonly a name", &test), GL_MARKER_NONE);
    ck_assert_ptr_null(test);
    ck_assert_int_eq(gl_marker_parse("gemleak:later\ta\tb", NULL), GL_MARKER_NONE);
    ck_assert_int_eq(gl_marker_parse("my own message", NULL), GL_MARKER_NONE);
    ck_assert_int_eq(gl_marker_parse(NULL, NULL), GL_MARKER_NONE);
}
END_TEST

/* ---- one process ------------------------------------------------------------- */

/* Three tests, one leaks: the finding names it, once, with its totals. */
START_TEST(test_leak_named_after_its_test)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    msg(xml, "gemleak:setup");
    start(xml, A);
    end(xml, A);
    start(xml, B);
    end(xml, B);
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    start(xml, C);
    end(xml, C);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_int_eq(f.run.status, 1);
    ck_assert_uint_eq(n_findings(&f), 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "BTest#test_b @ test/b_test.rb:9");
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 17);
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    ck_assert(!json_object_get_boolean_member(finding, "lost_at_exit"));
    ck_assert(!json_object_get_boolean_member(finding, "lost_before_tests"));
    ck_assert(!json_object_get_boolean_member(finding, "more_tests"));
    ck_assert_str_eq(json_object_get_string_member(finding, "message"),
                     "17 bytes in 1 block is definitely lost");
    /* the errors read add up: one kept, one repeated */
    ck_assert_int_eq(summary_int(&f, "errors_seen"), 2);
    ck_assert_int_eq(summary_int(&f, "skipped"), 1);
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 1);
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^17 bytes in 1 block is definitely lost\n"
                              "first lost in BTest#test_b \\(test/b_test\\.rb:9\\)\n  malloc");
    gl_assert_line(f.run.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 2 errors read: 1 finding \\(1 occurrence\\), "
                              "1 skipped \\(1 repeated by a later leak check\\)$");
    gl_assert_line(f.run.out, "^gemleak: FAIL: 1 leak losing 17 bytes$");
    filtered_clear(&f);
}
END_TEST

/* The same loss record grows in two tests: both are named, first seen
 * first, and the bytes are the exit check's total, not the sum of what
 * each check said. */
START_TEST(test_leak_in_two_tests_counts_once)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    msg(xml, "gemleak:setup");
    start(xml, B);
    end(xml, B);
    leak(xml, "10 (+10) bytes in 1 (+1) blocks", 10, 1, 45);
    start(xml, A);
    end(xml, A);
    leak(xml, "20 (+10) bytes in 2 (+1) blocks", 20, 2, 45);
    finished(xml);
    leak(xml, "20 bytes in 2 blocks", 20, 2, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "BTest#test_b @ test/b_test.rb:9, ATest#test_a @ test/a_test.rb:4");
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 20);
    ck_assert_int_eq(json_object_get_int_member(finding, "blocks"), 2);
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    ck_assert_int_eq(summary_int(&f, "errors_seen"), 3);
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 2);
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^first lost in BTest#test_b \\(test/b_test\\.rb:9\\); also in "
                              "ATest#test_a \\(test/a_test\\.rb:4\\)$");
    filtered_clear(&f);
}
END_TEST

/* Killed after two checks (no exit check, the file cut short): the last
 * check's report is the occurrence, named after both tests. */
START_TEST(test_killed_process_keeps_the_last_check)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, A);
    end(xml, A);
    leak(xml, "10 (+10) bytes in 1 (+1) blocks", 10, 1, 45);
    start(xml, B);
    end(xml, B);
    leak(xml, "20 (+10) bytes in 2 (+1) blocks", 20, 2, 45);
    start(xml, C);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_int_eq(f.run.status, 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "ATest#test_a @ test/a_test.rb:4, BTest#test_b @ test/b_test.rb:9");
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 20);
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    ck_assert_str_eq(json_object_get_string_member(finding, "message"),
                     "20 bytes in 2 blocks are definitely lost");
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 1);
    JsonArray *truncated = json_object_get_array_member(
        json_object_get_object_member(f.report, "summary"), "truncated_files");
    ck_assert_uint_eq(json_array_get_length(truncated), 1);
    filtered_clear(&f);
}
END_TEST

/* Two loss records of one finding (two call paths into the extension,
 * the same frames up to the last target frame): each keeps its own tests,
 * and the finding has both occurrences. */
START_TEST(test_two_loss_records_of_one_finding)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, A);
    end(xml, A);
    leak(xml, "10 (+10) bytes in 1 (+1) blocks", 10, 1, 45);
    start(xml, B);
    end(xml, B);
    /* as leak(), with another Ruby frame beyond the extension */
    g_autoptr(GString) other = g_string_new(NULL);
    leak(other, "10 (+10) bytes in 1 (+1) blocks", 10, 1, 45);
    g_string_replace(other, "<ip>0x4C00000</ip>", "<ip>0x4C00010</ip>", 0);
    g_string_append(xml, other->str);
    finished(xml);
    leak(xml, "10 bytes in 1 blocks", 10, 1, 45);
    g_string_replace(other, "(+10) ", "", 0);
    g_string_replace(other, "1 (+1) blocks", "1 blocks", 0);
    g_string_append(xml, other->str);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "ATest#test_a @ test/a_test.rb:4, BTest#test_b @ test/b_test.rb:9");
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 20);
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 2);
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 2);
    filtered_clear(&f);
}
END_TEST

/* Issue 37, item 5: the first test that lost a block of a finding is
 * named first, and among the five named, though its loss record came
 * last in the exit check (Valgrind reports the smallest first): a
 * finding's tests are in the order they ran, not the order their loss
 * records were read. */
START_TEST(test_first_test_named_first_whatever_the_exit_order)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    /* the first test's block, through another Ruby frame: its own loss record */
    g_autoptr(GString) first = g_string_new(NULL);
    leak(first, "1500 (+1500) bytes in 1 (+1) blocks", 1500, 1, 45);
    g_string_replace(first, "<ip>0x4C00000</ip>", "<ip>0x4C00010</ip>", 0);
    start(xml, A);
    end(xml, A);
    g_string_append(xml, first->str);
    for (guint i = 1; i <= GL_FINDING_MAX_TESTS + 1; i++) {
        g_autofree char *name = g_strdup_printf("ManyTest#test_%u", i);
        g_autofree char *location = g_strdup_printf(GEM "/test/many_test.rb:%u", 10 * i);
        g_autofree char *what = g_strdup_printf("%u (+2) bytes in %u (+1) blocks", 2 * i, i);
        start(xml, name, location);
        end(xml, name, location);
        leak(xml, what, 2 * i, i, 45);
    }
    finished(xml);
    /* the exit check: the small loss record first */
    g_autofree char *small = g_strdup_printf("%u bytes in %u blocks", 2 * (GL_FINDING_MAX_TESTS + 1),
                                             GL_FINDING_MAX_TESTS + 1);
    leak(xml, small, 2 * (GL_FINDING_MAX_TESTS + 1), GL_FINDING_MAX_TESTS + 1, 45);
    g_string_replace(first, "(+1500) ", "", 0);
    g_string_replace(first, "1 (+1) blocks", "1 blocks", 0);
    g_string_append(xml, first->str);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "ATest#test_a @ test/a_test.rb:4, ManyTest#test_1 @ test/many_test.rb:10, "
                            "ManyTest#test_2 @ test/many_test.rb:20, ManyTest#test_3 @ "
                            "test/many_test.rb:30, ManyTest#test_4 @ test/many_test.rb:40");
    ck_assert(json_object_get_boolean_member(finding, "more_tests"));
    filtered_clear(&f);
}
END_TEST

/* Memory still referenced when the last test ended is lost at exit: no
 * test is named. */
START_TEST(test_leak_lost_at_exit)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    msg(xml, "gemleak:setup");
    start(xml, A);
    end(xml, A);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    JsonObject *finding = finding_at(&f, 0);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(finding, "tests")), 0);
    ck_assert(json_object_get_boolean_member(finding, "lost_at_exit"));
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 0);
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^lost at exit \\(still referenced when the last test ended\\)$");
    gl_assert_no_line(f.run.out, "first lost");
    filtered_clear(&f);

    /* A process that ended in the middle of a test (exit called by the
     * test, a child forked in it): the exit check's leaks are that test's. */
    g_autoptr(GString) cut = g_string_new(NULL);
    begin(cut, 100);
    start(cut, B);
    finished(cut);
    leak(cut, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(cut);
    filter_docs(&f, "json", (GString *const[]) { cut, NULL });
    g_autofree char *tests = tests_of(finding_at(&f, 0));
    ck_assert_str_eq(tests, "BTest#test_b @ test/b_test.rb:9");
    ck_assert(!json_object_get_boolean_member(finding_at(&f, 0), "lost_at_exit"));
    filtered_clear(&f);
}
END_TEST

/* What was lost while the suite loaded is found by the check before the
 * first test, not blamed on the first test. */
START_TEST(test_leak_lost_before_the_first_test)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    msg(xml, "gemleak:setup");
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    start(xml, A);
    end(xml, A);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    JsonObject *finding = finding_at(&f, 0);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(finding, "tests")), 0);
    ck_assert(json_object_get_boolean_member(finding, "lost_before_tests"));
    ck_assert(!json_object_get_boolean_member(finding, "lost_at_exit"));
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^lost before the first test \\(while the suite loaded\\)$");
    filtered_clear(&f);
}
END_TEST

/* An error belongs to the test it happened in; one between two tests, or
 * after a message that is not gemleak's, to the test around it or none. */
START_TEST(test_errors_during_and_between_tests)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, A);
    msg(xml, "the extension's own VALGRIND_PRINTF");
    invalid_read(xml, 60);
    end(xml, A);
    invalid_read(xml, 70);
    start(xml, B);
    end(xml, B);
    finished(xml);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 2);
    for (guint i = 0; i < 2; i++) {
        JsonObject *finding = finding_at(&f, i);
        JsonObject *location = json_object_get_object_member(finding, "location");
        g_autofree char *tests = tests_of(finding);
        if (json_object_get_int_member(location, "line") == 60)
            ck_assert_str_eq(tests, "ATest#test_a @ test/a_test.rb:4");
        else
            ck_assert_str_eq(tests, "");
        ck_assert(!json_object_get_boolean_member(finding, "lost_at_exit"));
    }
    filtered_clear(&f);

    /* on its own line, or on its call path's when the other leads the group */
    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "first seen in ATest#test_a \\(test/a_test\\.rb:4\\)$");
    filtered_clear(&f);
}
END_TEST

/* A forked child reports what it inherited (its check right after the
 * fork): the parent's, counted once, in the parent, named after its test;
 * the child's reports of it are left out, and the summary says so. */
START_TEST(test_forked_child_adds_no_test)
{
    g_autoptr(GString) parent = g_string_new(NULL);
    begin(parent, 100);
    start(parent, A);
    end(parent, A);
    leak(parent, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    finished(parent);
    leak(parent, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(parent);
    g_autoptr(GString) child = g_string_new(NULL);
    begin(child, 101);
    msg(child, "gemleak:forked");
    leak(child, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    finished(child);
    leak(child, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(child);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { child, parent, NULL });
    ck_assert_uint_eq(n_findings(&f), 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "ATest#test_a @ test/a_test.rb:4");
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 17);
    ck_assert_int_eq(json_object_get_int_member(finding, "blocks"), 1);
    JsonArray *pids = json_object_get_array_member(finding, "pids");
    ck_assert_uint_eq(json_array_get_length(pids), 1);
    ck_assert_int_eq(json_array_get_int_element(pids, 0), 100);
    ck_assert(!json_object_get_boolean_member(finding, "lost_at_exit"));
    ck_assert(!json_object_get_boolean_member(finding, "lost_before_tests"));
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 2);
    ck_assert_int_eq(skipped_by(&f, "inherited_from_parent"), 1);
    filtered_clear(&f);

    Filtered text = { 0 };
    filter_docs(&text, "text", (GString *const[]) { child, parent, NULL });
    gl_assert_line(text.run.out, "^gemleak: 2 processes checked( \\([^)]*\\))?, 4 errors read: 1 finding \\(1 occurrence\\), "
                                 "3 skipped \\(2 repeated by a later leak check, 1 inherited "
                                 "from the parent process\\)$");
    filtered_clear(&text);
}
END_TEST

/* A child that inherited a leak and then lost blocks of its own, one loss
 * record it shares with its parent's leak (the same allocation stack) and
 * one of its own, in a run without --per-test: the check at fork is the
 * child's only marker. The parent's block counts once; the child's own
 * blocks once each, with their bytes. */
START_TEST(test_forked_child_counts_its_own_blocks)
{
    g_autoptr(GString) parent = g_string_new(NULL);
    begin(parent, 100);
    finished(parent);
    leak(parent, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(parent);
    g_autoptr(GString) child = g_string_new(NULL);
    begin(child, 101);
    msg(child, "gemleak:forked");
    leak(child, "17 bytes in 1 blocks", 17, 1, 45);
    finished(child);
    leak(child, "40 bytes in 3 blocks", 40, 3, 45);
    leak(child, "5 bytes in 1 blocks", 5, 1, 60);
    close_document(child);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { parent, child, NULL });
    ck_assert_uint_eq(n_findings(&f), 2);
    JsonObject *shared = finding_at(&f, 0);
    ck_assert_int_eq(json_object_get_int_member(shared, "occurrences"), 2);
    ck_assert_int_eq(json_object_get_int_member(shared, "bytes"), 17 + 23);
    ck_assert_int_eq(json_object_get_int_member(shared, "blocks"), 1 + 2);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(shared, "pids")), 2);
    /* no test ran: nothing says a test or the exit */
    ck_assert(!json_object_get_boolean_member(shared, "lost_at_exit"));
    JsonObject *own = finding_at(&f, 1);
    ck_assert_int_eq(json_object_get_int_member(own, "bytes"), 5);
    ck_assert_int_eq(json_object_get_int_member(own, "blocks"), 1);
    ck_assert(!json_object_get_boolean_member(own, "lost_at_exit"));
    ck_assert_int_eq(skipped_by(&f, "inherited_from_parent"), 0);
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 1);
    ck_assert_int_eq(summary_int(&f, "occurrences"), 3);
    filtered_clear(&f);

    Filtered text = { 0 };
    filter_docs(&text, "text", (GString *const[]) { parent, child, NULL });
    /* one bug with the child's own leak at another line: call path 1 */
    gl_assert_line(text.run.out, "^call path 1: 40 bytes in 3 blocks are definitely lost "
                                 "\\(2 occurrences in 2 processes\\)$");
    gl_assert_no_line(text.run.out, "at exit");
    filtered_clear(&text);
}
END_TEST

/* The same leak lost in a test of each of two processes: the tests come
 * in the order of the files, however many threads read them. */
START_TEST(test_tests_of_several_processes_in_file_order)
{
    GString *docs[3] = { g_string_new(NULL), g_string_new(NULL), NULL };
    const char *tests[2][2] = { { B }, { A } };
    for (guint i = 0; i < 2; i++) {
        begin(docs[i], 100 + (int) i);
        start(docs[i], tests[i][0], tests[i][1]);
        end(docs[i], tests[i][0], tests[i][1]);
        leak(docs[i], "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
        finished(docs[i]);
        leak(docs[i], "17 bytes in 1 blocks", 17, 1, 45);
        close_document(docs[i]);
    }
    Filtered f = { 0 };
    filter_docs(&f, "json", docs);
    g_autofree char *serial = tests_of(finding_at(&f, 0));
    ck_assert_str_eq(serial, "BTest#test_b @ test/b_test.rb:9, ATest#test_a @ test/a_test.rb:4");
    ck_assert_int_eq(json_object_get_int_member(finding_at(&f, 0), "bytes"), 34);
    ck_assert_int_eq(json_object_get_int_member(finding_at(&f, 0), "occurrences"), 2);
    for (guint run = 0; run < 5; run++) {
        GlTestRun threads = { 0 };
        gl_test_gemleak(&threads, "filter", "--object", "tally", "--project-root", f.root, "-j",
                        "4", "--format", "json", f.xml_dir, NULL);
        ck_assert_str_eq(threads.out, f.run.out);
        gl_test_run_clear(&threads);
    }
    filtered_clear(&f);
    g_string_free(docs[0], TRUE);
    g_string_free(docs[1], TRUE);
}
END_TEST

/* A handful of tests, then "and other tests". */
START_TEST(test_at_most_a_handful_of_tests)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    for (guint i = 1; i <= GL_FINDING_MAX_TESTS + 2; i++) {
        g_autofree char *name = g_strdup_printf("ManyTest#test_%u", i);
        g_autofree char *location = g_strdup_printf(GEM "/test/many_test.rb:%u", 10 * i);
        g_autofree char *what = g_strdup_printf("%u (+10) bytes in %u (+1) blocks", 10 * i, i);
        start(xml, name, location);
        end(xml, name, location);
        leak(xml, what, 10 * i, i, 45);
    }
    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    JsonObject *finding = finding_at(&f, 0);
    JsonArray *tests = json_object_get_array_member(finding, "tests");
    ck_assert_uint_eq(json_array_get_length(tests), GL_FINDING_MAX_TESTS);
    ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(tests, 0), "name"),
                     "ManyTest#test_1");
    ck_assert(json_object_get_boolean_member(finding, "more_tests"));
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 70);
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^first lost in ManyTest#test_1 \\(test/many_test\\.rb:10\\); also in "
                              ".*ManyTest#test_5 \\(test/many_test\\.rb:50\\) and other tests$");
    filtered_clear(&f);
}
END_TEST

/* --per-test=file names the file; a location outside the project root
 * stays absolute. */
START_TEST(test_per_file_and_outside_the_root)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, "", GEM "/test/b_test.rb");
    end(xml, "", GEM "/test/b_test.rb");
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    start(xml, "Elsewhere#test_x", "/elsewhere/x_test.rb:3");
    end(xml, "Elsewhere#test_x", "/elsewhere/x_test.rb:3");
    leak(xml, "34 (+17) bytes in 2 (+1) blocks", 34, 2, 45);
    finished(xml);
    leak(xml, "34 bytes in 2 blocks", 34, 2, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    g_autofree char *tests = tests_of(finding_at(&f, 0));
    ck_assert_str_eq(tests, "test/b_test.rb @ test/b_test.rb, "
                            "Elsewhere#test_x @ /elsewhere/x_test.rb:3");
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^first lost in test/b_test\\.rb; also in Elsewhere#test_x "
                              "\\(/elsewhere/x_test\\.rb:3\\)$");
    filtered_clear(&f);
}
END_TEST

/* A mid-run report of a leak with indirect blocks, kept as it is when the
 * process was killed: "152 (+152) (56 (+56) direct, 96 (+96) indirect)"
 * has the same direct share as the exit check's words. */
START_TEST(test_mid_run_indirect_words)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, A);
    end(xml, A);
    leak(xml, "152 (+152) (56 (+56) direct, 96 (+96) indirect) bytes in 1 (+1) blocks", 152, 1, 45);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_str_eq(json_object_get_string_member(finding_at(&f, 0), "message"),
                     "152 (56 direct, 96 indirect) bytes in 1 block is definitely lost");
    filtered_clear(&f);
}
END_TEST

/* The CI formats say which test: JUnit names the case after it, SARIF
 * and GitHub say it in the message. The two leaks are two call paths of
 * one bug (copy_text, entered through tally_count): one case, one result,
 * one annotation, each call path with its own test. */
START_TEST(test_reports_name_the_test)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, B);
    end(xml, B);
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    leak(xml, "8 bytes in 1 blocks", 8, 1, 50);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "junit", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "<testcase name=\"BTest#test_b: definite leak in copy_text "
                              "\\(ext/tally/tally\\.c:13\\) via tally_count "
                              "\\(ext/tally/tally\\.c:45\\), 2 call paths\"");
    ck_assert_uint_eq(gl_test_count(f.run.out, strlen(f.run.out), "<testcase "), 1);
    gl_assert_line(f.run.out, "^first lost in BTest#test_b \\(test/b_test\\.rb:9\\)$");
    gl_assert_line(f.run.out, "^call path 2: 8 bytes in 1 block is definitely lost: copy_text "
                              "\\(ext/tally/tally\\.c:13\\) &lt; tally_count "
                              "\\(ext/tally/tally\\.c:50\\); lost at exit ");
    filtered_clear(&f);

    filter_docs(&f, "sarif", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "\"text\" : \"definite leak in copy_text \\(ext/tally/tally\\.c:13\\) "
                              "via tally_count \\(ext/tally/tally\\.c:45\\): 25 bytes in 2 blocks are definitely "
                              "lost in 2 call paths \\(2 occurrences in 1 process\\); first lost in BTest#test_b "
                              "\\(test/b_test\\.rb:9\\)\"");
    gl_assert_line(f.run.out, "\"location\" : \"test/b_test\\.rb:9\"");
    filtered_clear(&f);

    filter_docs(&f, "github", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^::error file=ext/tally/tally\\.c,line=13,.*::25 bytes in 2 blocks "
                              "are definitely lost in 2 call paths \\(2 occurrences in 1 process\\)%0Aone bug: lost in copy_text, "
                              "entered through tally_count%0Acall path 1: 17 bytes in 1 block "
                              "is definitely lost%0Afirst lost in BTest#test_b "
                              "\\(test/b_test\\.rb:9\\)%0A");
    gl_assert_line(f.run.out, "%0Acall path 2: 8 bytes in 1 block is definitely lost: .*; "
                              "lost at exit ");
    ck_assert_uint_eq(gl_test_count(f.run.out, strlen(f.run.out), "::error "), 1);
    filtered_clear(&f);
}
END_TEST

/* XML without markers (a run without --per-test) reads as it always did:
 * no test, no "lost at exit", nothing repeated. */
START_TEST(test_no_markers_no_attribution)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    msg(xml, "an extension's own message");
    invalid_read(xml, 60);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 2);
    for (guint i = 0; i < 2; i++) {
        JsonObject *finding = finding_at(&f, i);
        ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(finding, "tests")), 0);
        ck_assert(!json_object_get_boolean_member(finding, "lost_at_exit"));
        ck_assert(!json_object_get_boolean_member(finding, "lost_before_tests"));
    }
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 0);
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_no_line(f.run.out, "first (lost|seen)|at exit|repeated");
    gl_assert_line(f.run.out, "^gemleak: 1 process checked( \\([^)]*\\))?, 2 errors read: 2 findings \\(2 occurrences\\)$");
    filtered_clear(&f);
}
END_TEST

/* The reader: with a prefix, only gemleak's messages are markers. */
START_TEST(test_reader_marker_prefix)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, A);
    msg(xml, "other");
    invalid_read(xml, 60);
    close_document(xml);
    for (guint with_prefix = 0; with_prefix < 2; with_prefix++) {
        g_autoptr(GlReader) reader = gl_reader_new_for_memory(xml->str, xml->len, "test.xml");
        if (with_prefix)
            gl_reader_set_marker_prefix(reader, GL_PROTO_MARKER_PREFIX);
        g_autoptr(GlRecord) record = gl_reader_next(reader, NULL);
        ck_assert_ptr_nonnull(record);
        ck_assert_str_eq(record->marker, with_prefix ? "gemleak:start\tATest#test_a\t"
                                                       GEM "/test/a_test.rb:4  "
                                                     : "other  ");
        ck_assert(!record->at_exit);
    }
}
END_TEST

/* ---- real XML ------------------------------------------------------------------ */

/* fixtures/xml/per_test.xml: a minitest suite of three tests under gemleak
 * run --per-test (fixtures/capture.sh): test_leak leaks, test_use_after_free
 * writes to a freed block, test_clean does neither. */
START_TEST(test_real_per_test_run)
{
    g_autofree char *path = gl_test_fixture("xml/per_test.xml");
    GlTestRun run = { 0 };
    gl_test_gemleak(&run, "filter", "-O", "leaky", "--project-root", "/tmp/gemleak-fixtures",
                    "--format", "json", path, NULL);
    ck_assert_int_eq(run.status, 1);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, run.out, -1, NULL));
    JsonObject *report = json_node_get_object(json_parser_get_root(parser));
    JsonArray *findings = json_object_get_array_member(report, "findings");
    ck_assert_uint_eq(json_array_get_length(findings), 2);
    for (guint i = 0; i < 2; i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        g_autofree char *tests = tests_of(finding);
        if (strcmp(json_object_get_string_member(finding, "kind"), "Leak_DefinitelyLost") == 0) {
            ck_assert_str_eq(tests, "LeakyTest#test_leak @ leaky_test.rb:9");
            ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 100);
            ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
        } else {
            ck_assert_str_eq(tests, "LeakyTest#test_use_after_free @ leaky_test.rb:13");
        }
    }
    JsonObject *summary = json_object_get_object_member(report, "summary");
    ck_assert_int_eq(json_object_get_int_member(
                         json_object_get_object_member(summary, "skipped_by_reason"),
                         "repeated_by_later_check"), 1);
    gl_test_run_clear(&run);
}
END_TEST

/* ---- the option ---------------------------------------------------------------- */

START_TEST(test_per_test_option)
{
    GlTestRun help = { 0 };
    gl_test_gemleak(&help, "run", "--help", NULL);
    ck_assert_int_eq(help.status, 0);
    gl_assert_line(help.out, "^  --per-test=test\\|each\\|file +Name the test in which each leak was lost");
    gl_test_run_clear(&help);

    GlTestRun bad = { 0 };
    gl_test_gemleak(&bad, "run", "--per-test=suite", "--", "ruby", "-e", "1", NULL);
    ck_assert_int_eq(bad.status, 2);
    gl_assert_line(bad.err, "^gemleak: --per-test=suite: give test \\(the test, found with few leak "
                            "checks, by running tests again\\), each \\(a leak check after each "
                            "test, no test run again\\) or file \\(after each test file\\)$");
    gl_test_run_clear(&bad);

    /* this build has Valgrind's headers: the library is in it */
    ck_assert(gl_per_test_available());
}
END_TEST

/* The markers of a check after several tests and of tests run again. */
START_TEST(test_marker_tests_and_again)
{
    GlMarker marker;
    ck_assert_int_eq(gl_marker_read("gemleak:tests\t60\tA%20a\t/a.rb:3\tB\t/b.rb:9  ", &marker),
                     GL_MARKER_TESTS);
    ck_assert_uint_eq(marker.count, 60);
    ck_assert_str_eq(marker.test->name, "A a");
    ck_assert_str_eq(marker.test->location, "/a.rb:3");
    ck_assert_str_eq(marker.last->name, "B");
    ck_assert_str_eq(marker.last->location, "/b.rb:9");
    gl_marker_clear(&marker);
    ck_assert_int_eq(gl_marker_read("gemleak:again  ", &marker), GL_MARKER_AGAIN);
    ck_assert_uint_eq(marker.count, 0);
    ck_assert_ptr_null(marker.test);
    ck_assert_int_eq(gl_marker_read("gemleak:again\t202", &marker), GL_MARKER_AGAIN);
    ck_assert_uint_eq(marker.count, 202);
    ck_assert_ptr_null(marker.test);
    ck_assert_int_eq(gl_marker_read("gemleak:again\t1\tC\t/c.rb:2", &marker), GL_MARKER_AGAIN);
    ck_assert_uint_eq(marker.count, 1);
    ck_assert_str_eq(marker.test->name, "C");
    gl_marker_clear(&marker);
    /* not the helper's: no count, a count of nothing, fields missing */
    ck_assert_int_eq(gl_marker_read("gemleak:tests\tmany\ta\tb\tc\td", &marker), GL_MARKER_NONE);
    ck_assert_int_eq(gl_marker_read("gemleak:tests\t0\ta\tb\tc\td", &marker), GL_MARKER_NONE);
    ck_assert_int_eq(gl_marker_read("gemleak:tests\t3\ta\tb", &marker), GL_MARKER_NONE);
    ck_assert_int_eq(gl_marker_read("gemleak:again\tforked  ", &marker), GL_MARKER_AGAIN);
    ck_assert(marker.forked);
    ck_assert_uint_eq(marker.count, 0);
    ck_assert_int_eq(gl_marker_read("gemleak:again\tx", &marker), GL_MARKER_NONE);
    ck_assert_ptr_null(marker.test);
    GlTest *test = NULL;
    ck_assert_int_eq(gl_marker_parse("gemleak:tests\t2\ta\tb\tc\td", &test), GL_MARKER_TESTS);
    ck_assert_ptr_null(test);
}
END_TEST

/* leak() by another path beyond the extension: another loss record of the
 * same finding, as a test run again by the helper reaches it. */
static void leak_again(GString *xml, const char *what, guint bytes, guint blocks, guint line)
{
    g_autoptr(GString) other = g_string_new(NULL);
    leak(other, what, bytes, blocks, line);
    g_string_replace(other, "<ip>0x4C00000</ip>", "<ip>0x4C00020</ip>", 0);
    g_string_append(xml, other->str);
}

/* Tests A, B and C ran, then a check after the three (per test under
 * Valgrind: "gemleak:tests"); what it found follows. */
static void three_tests_then_check(GString *xml)
{
    start(xml, A);
    start(xml, B);
    start(xml, C);
    msg(xml, "gemleak:tests\t3\tATest#test_a\t" GEM "/test/a_test.rb:4\tBTest#test_c\t" GEM
             "/test/b_test.rb:14");
}

/* A check after three tests finds a leak; run again in groups, then B
 * alone, B loses it again: B is named, found by running it again, and
 * the leak has the suite's numbers (what the runs again lost is left out,
 * and their own loss record with it). */
START_TEST(test_leak_found_by_running_again)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    msg(xml, "gemleak:setup");
    three_tests_then_check(xml);
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    msg(xml, "gemleak:again");
    msg(xml, "gemleak:again\t3");
    leak_again(xml, "34 (+34) bytes in 2 (+2) blocks", 34, 2, 45);
    msg(xml, "gemleak:again");
    msg(xml, "gemleak:again\t1\tBTest#test_b\t" GEM "/test/b_test.rb:9");
    leak_again(xml, "51 (+17) bytes in 3 (+1) blocks", 51, 3, 45);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    leak_again(xml, "51 bytes in 3 blocks", 51, 3, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_int_eq(f.run.status, 1);
    ck_assert_uint_eq(n_findings(&f), 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "BTest#test_b @ test/b_test.rb:9");
    ck_assert(json_object_get_boolean_member(finding, "found_again"));
    ck_assert(!json_object_get_boolean_member(finding, "more_tests"));
    ck_assert(!json_object_has_member(finding, "lost_among"));
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 17);
    ck_assert_int_eq(json_object_get_int_member(finding, "blocks"), 1);
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^17 bytes in 1 block is definitely lost\n"
                              "first lost in BTest#test_b \\(test/b_test\\.rb:9\\) \\(found by "
                              "running it again alone\\)\n  malloc");
    gl_assert_line(f.run.out, "^gemleak: FAIL: 1 leak losing 17 bytes$");
    filtered_clear(&f);
}
END_TEST

/* A block a test lost when run again, found only by the exit check (it
 * looked reachable at the check after the run): the loss record of the
 * runs again is theirs, every block of it, and the leak keeps the suite's
 * numbers. */
START_TEST(test_leak_found_late_after_running_again)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, A);
    start(xml, B);
    msg(xml, "gemleak:tests\t2\tATest#test_a\t" GEM "/test/a_test.rb:4\tBTest#test_b\t" GEM
             "/test/b_test.rb:9");
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    msg(xml, "gemleak:again");
    msg(xml, "gemleak:again\t1\tBTest#test_b\t" GEM "/test/b_test.rb:9");
    leak_again(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    leak_again(xml, "34 bytes in 2 blocks", 34, 2, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "BTest#test_b @ test/b_test.rb:9");
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 17);
    ck_assert_int_eq(json_object_get_int_member(finding, "blocks"), 1);
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 1);
    filtered_clear(&f);
}
END_TEST

/* What only the runs again lost, of a finding the suite's own checks never
 * reported (a test that leaks on its second run, or a suite's block found
 * lost only then): kept whole, never hidden. */
START_TEST(test_leak_only_runs_again_lost_is_kept)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    start(xml, A);
    start(xml, B);
    msg(xml, "gemleak:tests\t2\tATest#test_a\t" GEM "/test/a_test.rb:4\tBTest#test_b\t" GEM
             "/test/b_test.rb:9");
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    msg(xml, "gemleak:again");
    msg(xml, "gemleak:again\t1\tBTest#test_b\t" GEM "/test/b_test.rb:9");
    leak_again(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    leak_again(xml, "5 (+5) bytes in 1 (+1) blocks", 5, 1, 60);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    leak_again(xml, "17 bytes in 1 blocks", 17, 1, 45);
    leak_again(xml, "10 bytes in 2 blocks", 10, 2, 60);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 2);
    ck_assert_int_eq(json_object_get_int_member(finding_at(&f, 0), "bytes"), 17);
    ck_assert_int_eq(json_object_get_int_member(finding_at(&f, 1), "bytes"), 10);
    ck_assert_int_eq(json_object_get_int_member(finding_at(&f, 1), "blocks"), 2);
    filtered_clear(&f);
}
END_TEST

/* A child a test forked when it ran again: what the child lost is the runs
 * again's, not the suite's; its errors are kept. */
START_TEST(test_child_forked_by_a_test_run_again)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 101);
    msg(xml, "gemleak:forked");
    msg(xml, "gemleak:again\tforked");
    invalid_read(xml, 50);
    finished(xml);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 1);
    ck_assert_str_eq(json_object_get_string_member(finding_at(&f, 0), "kind"), "InvalidRead");
    ck_assert_int_eq(skipped_by(&f, "repeated_by_later_check"), 1);
    filtered_clear(&f);
}
END_TEST

/* One leak, two loss records of the suite's own runs (the first call of
 * a C method goes through another frame of Ruby's than the calls after
 * it): two tests lost a block each, running again named one, and the
 * other is said. A trial on msgpack's suite (six specs, five named, the
 * last one's own record) read "first lost in ...; also in ..." with no
 * "and other tests": each loss record counted every block named by the
 * search as its own. */
START_TEST(test_leak_among_tests_in_two_loss_records)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    three_tests_then_check(xml);
    g_autoptr(GString) first_call = g_string_new(NULL);
    leak(first_call, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    g_string_replace(first_call, "<ip>0x4C00000</ip>", "<ip>0x4C00040</ip>", 0);
    g_string_replace(first_call, "<unique>0x2d</unique>", "<unique>0x2e</unique>", 0);
    g_string_append(xml, first_call->str);
    leak(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    msg(xml, "gemleak:again");
    msg(xml, "gemleak:again\t1\tBTest#test_b\t" GEM "/test/b_test.rb:9");
    leak_again(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    finished(xml);
    g_string_append(xml, first_call->str);
    leak(xml, "17 bytes in 1 blocks", 17, 1, 45);
    leak_again(xml, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 1);
    JsonObject *finding = finding_at(&f, 0);
    g_autofree char *tests = tests_of(finding);
    ck_assert_str_eq(tests, "BTest#test_b @ test/b_test.rb:9");
    ck_assert(json_object_get_boolean_member(finding, "found_again"));
    ck_assert(json_object_get_boolean_member(finding, "more_tests"));
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 34);
    filtered_clear(&f);
}
END_TEST

/* Two of the three lost it; running again named one: the others are said.
 * A leak no test lost again names the span of tests its check came after. */
START_TEST(test_leak_among_tests)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    begin(xml, 100);
    three_tests_then_check(xml);
    leak(xml, "34 (+34) bytes in 2 (+2) blocks", 34, 2, 45);
    leak(xml, "5 (+5) bytes in 1 (+1) blocks", 5, 1, 60);
    msg(xml, "gemleak:again");
    msg(xml, "gemleak:again\t1\tBTest#test_b\t" GEM "/test/b_test.rb:9");
    leak_again(xml, "17 (+17) bytes in 1 (+1) blocks", 17, 1, 45);
    finished(xml);
    leak(xml, "34 bytes in 2 blocks", 34, 2, 45);
    leak(xml, "5 bytes in 1 blocks", 5, 1, 60);
    leak_again(xml, "17 bytes in 1 blocks", 17, 1, 45);
    close_document(xml);

    Filtered f = { 0 };
    filter_docs(&f, "json", (GString *const[]) { xml, NULL });
    ck_assert_uint_eq(n_findings(&f), 2);
    JsonObject *named = finding_at(&f, 0);
    g_autofree char *tests = tests_of(named);
    ck_assert_str_eq(tests, "BTest#test_b @ test/b_test.rb:9");
    ck_assert(json_object_get_boolean_member(named, "more_tests"));
    ck_assert_int_eq(json_object_get_int_member(named, "bytes"), 34);
    JsonObject *among = finding_at(&f, 1);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(among, "tests")), 0);
    ck_assert(!json_object_get_boolean_member(among, "found_again"));
    JsonObject *span = json_object_get_object_member(among, "lost_among");
    ck_assert_int_eq(json_object_get_int_member(span, "tests"), 3);
    ck_assert_str_eq(json_object_get_string_member(json_object_get_object_member(span, "first"),
                                                   "name"), "ATest#test_a");
    ck_assert_str_eq(json_object_get_string_member(json_object_get_object_member(span, "last"),
                                                   "location"), "test/b_test.rb:14");
    filtered_clear(&f);

    filter_docs(&f, "text", (GString *const[]) { xml, NULL });
    gl_assert_line(f.run.out, "^first lost in BTest#test_b \\(test/b_test\\.rb:9\\); also in other "
                              "tests \\(found by running them again alone\\)$");
    /* the second call path of the group, on one line */
    gl_assert_line(f.run.out, "; first lost in one of 3 tests, from ATest#test_a "
                              "\\(test/a_test\\.rb:4\\) to BTest#test_c \\(test/b_test\\.rb:14\\) "
                              "\\(none lost it again when run again\\)$");
    filtered_clear(&f);
}
END_TEST

static long peak_rss_kib(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

/* A suite of a hundred thousand tests writes two hundred thousand markers
 * in one process: the reader keeps the last, not all of them. */
START_TEST(test_markers_by_the_hundred_thousand)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "many.xml", NULL);
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    g_autoptr(GString) head = g_string_new(NULL);
    begin(head, 100);
    fputs(head->str, out);
    g_autofree char *padding = g_strnfill(450, 'x');
    for (int i = 0; i < 100000; i++) {
        fprintf(out, "<clientmsg><tid>1</tid><text>gemleak:start\tT#test_%d_%s\t/t.rb:%d  "
                     "</text></clientmsg>\n", i, padding, i);
        fprintf(out, "<clientmsg><tid>1</tid><text>gemleak:end\tT#test_%d_%s\t/t.rb:%d  "
                     "</text></clientmsg>\n", i, padding, i);
    }
    g_autoptr(GString) tail = g_string_new(NULL);
    invalid_read(tail, 60);
    close_document(tail);
    fputs(tail->str, out);
    fclose(out);

    long before = peak_rss_kib();
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, NULL);
    ck_assert_ptr_nonnull(reader);
    gl_reader_set_marker_prefix(reader, GL_PROTO_MARKER_PREFIX);
    g_autoptr(GlRecord) record = gl_reader_next(reader, NULL);
    ck_assert_ptr_nonnull(record);
    g_autofree char *last = g_strdup_printf("gemleak:end\tT#test_99999_%s\t/t.rb:99999  ", padding);
    ck_assert_str_eq(record->marker, last);
    long grown = peak_rss_kib() - before;
    /* 90 MiB of markers; under ASan its 16 MiB quarantine counts too */
    ck_assert_msg(grown < 32 * 1024, "peak memory grew by %ld KiB", grown);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_attribute_suite(void)
{
    Suite *suite = suite_create("attribute");
    TCase *markers = tcase_create("markers");
    tcase_add_test(markers, test_marker_parse);
    tcase_add_test(markers, test_marker_tests_and_again);
    tcase_add_test(markers, test_reader_marker_prefix);
    tcase_add_test(markers, test_markers_by_the_hundred_thousand);
    suite_add_tcase(suite, markers);
    TCase *checks = tcase_create("checks");
    tcase_add_test(checks, test_leak_named_after_its_test);
    tcase_add_test(checks, test_leak_in_two_tests_counts_once);
    tcase_add_test(checks, test_killed_process_keeps_the_last_check);
    tcase_add_test(checks, test_two_loss_records_of_one_finding);
    tcase_add_test(checks, test_first_test_named_first_whatever_the_exit_order);
    tcase_add_test(checks, test_leak_lost_at_exit);
    tcase_add_test(checks, test_leak_lost_before_the_first_test);
    tcase_add_test(checks, test_errors_during_and_between_tests);
    tcase_add_test(checks, test_forked_child_adds_no_test);
    tcase_add_test(checks, test_forked_child_counts_its_own_blocks);
    tcase_add_test(checks, test_tests_of_several_processes_in_file_order);
    tcase_add_test(checks, test_at_most_a_handful_of_tests);
    tcase_add_test(checks, test_per_file_and_outside_the_root);
    tcase_add_test(checks, test_mid_run_indirect_words);
    tcase_add_test(checks, test_no_markers_no_attribution);
    tcase_add_test(checks, test_real_per_test_run);
    tcase_add_test(checks, test_leak_found_by_running_again);
    tcase_add_test(checks, test_leak_among_tests);
    tcase_add_test(checks, test_leak_among_tests_in_two_loss_records);
    tcase_add_test(checks, test_leak_found_late_after_running_again);
    tcase_add_test(checks, test_child_forked_by_a_test_run_again);
    tcase_add_test(checks, test_leak_only_runs_again_lost_is_kept);
    suite_add_tcase(suite, checks);
    TCase *reports = tcase_create("reports and option");
    tcase_add_test(reports, test_reports_name_the_test);
    tcase_add_test(reports, test_per_test_option);
    suite_add_tcase(suite, reports);
    return suite;
}
