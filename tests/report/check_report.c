/* The text and JSON reports, as a user or a program reads them. */
#include "testutil.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/fingerprint.h"
#include "gemleak/judge/gate.h"
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"

#include <string.h>

#include <json-glib/json-glib.h>

/* Writes the @format report of @relative (a fixture) with target leaky. */
static char *report_of(const char *format, const char *relative, gboolean color)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *path = gl_test_fixture(relative);
    const char *paths[] = { path, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    GlGate gate;
    gl_gate_init(&gate);
    GlGateResult result;
    gl_gate_evaluate(&gate, analysis->findings, 0, 0, FALSE, NULL, &result);
    const char *targets[] = { "leaky", NULL };
    GlReportContext context = {
        .analysis = analysis,
        .findings = analysis->findings,
        .gate = &result,
        .targets = targets,
        .color = color,
        .suppressions = TRUE,
        .project_root = "/tmp/gemleak-fixtures",
        .frames_after = G_MAXUINT,
    };
    char *buffer = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buffer, &size);
    ck_assert(gl_report_write(gl_reporter_find(format), &context, out, "memory", NULL));
    fclose(out);
    gl_gate_result_clear(&result);
    return buffer;
}

START_TEST(test_text_leak)
{
    g_autofree char *text = report_of("text", "xml/leak.xml", FALSE);
    gl_assert_line(text, "^100 bytes in 1 block is definitely lost$");
    /* the source as JSON, SARIF and GitHub name it: under the project root */
    gl_assert_line(text, "^ \\*leaky_leak \\(leaky/leaky\\.c:\\d+\\)$");
    gl_assert_line(text, "^ \\*leaky_alloc \\(leaky/leaky\\.c:\\d+\\)$");
    gl_assert_line(text, "^  malloc \\(at /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux\\.so\\)$");
    gl_assert_line(text, "^  rb_vm_exec \\(at /usr/lib/x86_64-linux-gnu/libruby-3\\.1\\.so\\.3\\.1\\.2\\)$");
    gl_assert_line(text, "^  \\?\\?\\? \\(at /usr/lib/x86_64-linux-gnu/libruby-3\\.1\\.so\\.3\\.1\\.2\\)$");
    gl_assert_line(text, "^120 bytes in 1 block is definitely lost");
    gl_assert_line(text, "^ \\*Init_helpers \\(leaky/leaky\\.c:\\d+\\)$");
    /* largest first */
    ck_assert(strstr(text, "120 bytes") < strstr(text, "100 bytes"));
    ck_assert(strstr(text, "100 bytes") < strstr(text, "64 bytes"));
    gl_assert_line(text, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 3 findings \\(3 occurrences\\), \\d+ skipped \\(\\d+ not in a "
                         "target, \\d+ in Init code\\)$");
    gl_assert_line(text, "^gemleak: target: leaky$");
    gl_assert_line(text, "^gemleak: FAIL: 3 leaks losing 284 bytes$");
    ck_assert(strchr(text, '\033') == NULL);
    /* Init_leaky's own leak is not there */
    gl_assert_no_line(text, "^ \\*Init_leaky ");
}
END_TEST

START_TEST(test_text_use_after_free_shows_every_stack)
{
    g_autofree char *text = report_of("text", "xml/use_after_free.xml", FALSE);
    gl_assert_line(text, "^Invalid write of size 1$");
    gl_assert_line(text, "^Address 0x[0-9a-f]+ is 0 bytes inside a block of size 100 free'd$");
    gl_assert_line(text, "^  free \\(at .*vgpreload_memcheck-amd64-linux\\.so\\)$");
    gl_assert_line(text, "^Block was alloc'd at$");
    ck_assert_uint_eq(gl_test_count(text, strlen(text), " *leaky_use_after_free (leaky/leaky.c:"), 3);
    gl_assert_line(text, "^gemleak: FAIL: 1 memory error$");
}
END_TEST

START_TEST(test_text_merged_totals)
{
    g_autofree char *text = report_of("text", "xml/fork", FALSE);
    gl_assert_line(text, "^300 bytes in 3 blocks are definitely lost "
                         "\\(3 occurrences in 2 processes\\)$");
    gl_assert_line(text, "^gemleak: 2 processes checked( \\([^)]*\\))?, ");
}
END_TEST

START_TEST(test_text_clean_and_colour)
{
    g_autofree char *clean = report_of("text", "xml/clean.xml", FALSE);
    gl_assert_line(clean, "^gemleak: 1 process checked \\(clean\\), \\d+ errors read: 0 findings, ");
    gl_assert_line(clean, "^gemleak: pass: no findings$");
    g_autofree char *coloured = report_of("text", "xml/leak.xml", TRUE);
    ck_assert(strstr(coloured, "\033[1;31m *leaky_leak (leaky/leaky.c:") != NULL);
}
END_TEST

START_TEST(test_text_suppression_blocks)
{
    g_autofree char *text = report_of("text", "xml/suppressions.xml", FALSE);
    /* gemleak's block, not Valgrind's: named, up to the target, then "..." */
    gl_assert_line(text, "^Suppression for this finding \\(for suppressions/ruby\\.supp\\):\n"
                         "# definite leak in leaky_alloc \\(leaky\\.c:\\d+\\) via leaky_leak "
                         "\\(leaky\\.c:\\d+\\): 100 bytes in 1 block is definitely lost.*\n"
                         "\\{\n"
                         "   gemleak [0-9a-f]+: definite leak in leaky_alloc \\(leaky\\.c:\\d+\\) via "
                         "leaky_leak \\(leaky\\.c:\\d+\\)\n"
                         "   Memcheck:Leak\n"
                         "   match-leak-kinds: definite\n"
                         "   fun:malloc\n"
                         "   fun:leaky_alloc\n"
                         "   fun:leaky_leak\n"
                         "   \\.\\.\\.\n"
                         "\\}$");
    gl_assert_no_line(text, "insert_a_suppression_name_here");
    gl_assert_no_line(text, "rb_vm_exec$");
}
END_TEST

static JsonObject *parse(JsonParser *parser, const char *text)
{
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_data(parser, text, -1, &error), "bad JSON: %s",
                  error != NULL ? error->message : "?");
    return json_node_get_object(json_parser_get_root(parser));
}

START_TEST(test_json_leak)
{
    g_autofree char *text = report_of("json", "xml/fork", FALSE);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse(parser, text);
    ck_assert_str_eq(json_object_get_string_member(json_object_get_object_member(root, "tool"),
                                                   "name"), "gemleak");
    JsonArray *findings = json_object_get_array_member(root, "findings");
    ck_assert_uint_eq(json_array_get_length(findings), 1);
    JsonObject *finding = json_array_get_object_element(findings, 0);
    ck_assert_str_eq(json_object_get_string_member(finding, "kind"), "Leak_DefinitelyLost");
    ck_assert_str_eq(json_object_get_string_member(finding, "leak_kind"), "definite");
    ck_assert_int_eq(json_object_get_int_member(finding, "bytes"), 300);
    ck_assert_int_eq(json_object_get_int_member(finding, "blocks"), 3);
    ck_assert_int_eq(json_object_get_int_member(finding, "occurrences"), 3);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(finding, "pids")), 2);
    ck_assert_uint_eq(strlen(json_object_get_string_member(finding, "fingerprint")), 16);
    ck_assert_str_eq(json_object_get_string_member(finding, "message"),
                     "300 bytes in 3 blocks are definitely lost (3 occurrences in 2 processes)");

    JsonArray *frames = json_object_get_array_member(finding, "frames");
    JsonObject *first = json_array_get_object_element(frames, 0);
    ck_assert_str_eq(json_object_get_string_member(first, "fn"), "malloc");
    ck_assert(!json_object_get_boolean_member(first, "in_target"));
    ck_assert(json_object_get_null_member(first, "file"));
    JsonObject *second = json_array_get_object_element(frames, 1);
    ck_assert_str_eq(json_object_get_string_member(second, "fn"), "leaky_alloc");
    ck_assert_str_eq(json_object_get_string_member(second, "file"), "leaky.c");
    ck_assert_int_gt(json_object_get_int_member(second, "line"), 0);
    ck_assert_str_eq(json_object_get_string_member(second, "obj"),
                     "/tmp/gemleak-fixtures/leaky/leaky.so");
    ck_assert(json_object_get_boolean_member(second, "in_target"));

    JsonObject *summary = json_object_get_object_member(root, "summary");
    ck_assert_int_eq(json_object_get_int_member(summary, "files"), 2);
    ck_assert_int_eq(json_object_get_int_member(summary, "findings"), 1);
    ck_assert_int_gt(json_object_get_int_member(summary, "errors_seen"), 90);
    ck_assert_int_eq(json_object_get_int_member(summary, "skipped"),
                     json_object_get_int_member(summary, "errors_seen") - 3);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(summary, "truncated_files")), 0);
    ck_assert(json_object_get_boolean_member(json_object_get_object_member(root, "gate"), "failed"));
}
END_TEST

START_TEST(test_json_other_stacks_and_clean)
{
    g_autofree char *text = report_of("json", "xml/use_after_free.xml", FALSE);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse(parser, text);
    JsonObject *finding = json_array_get_object_element(json_object_get_array_member(root, "findings"), 0);
    ck_assert(json_object_get_null_member(finding, "leak_kind"));
    JsonArray *stacks = json_object_get_array_member(finding, "stacks");
    ck_assert_uint_eq(json_array_get_length(stacks), 2);
    ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(stacks, 1), "text"),
                     "Block was alloc'd at");

    g_autofree char *clean = report_of("json", "xml/clean.xml", FALSE);
    g_autoptr(JsonParser) clean_parser = json_parser_new();
    JsonObject *clean_root = parse(clean_parser, clean);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(clean_root, "findings")), 0);
    ck_assert(!json_object_get_boolean_member(json_object_get_object_member(clean_root, "gate"), "failed"));
}
END_TEST

START_TEST(test_report_write_failure)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    g_autofree char *path = gl_test_fixture("xml/clean.xml");
    const char *paths[] = { path, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    GlReportContext context = { .analysis = analysis, .findings = analysis->findings };
    FILE *full = fopen("/dev/full", "w");
    ck_assert_ptr_nonnull(full);
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_report_write(gl_reporter_find("json"), &context, full, "/dev/full", &error));
    ck_assert(strstr(error->message, "/dev/full") != NULL);
    fclose(full);
}
END_TEST

START_TEST(test_frame_description_and_source_paths)
{
    g_autoptr(GlRecord) record = gl_test_record("InvalidRead", "f@/x/a.so:a.c:7", "g@/x/a.so", "?@/x/a.so",
                                                "?@", NULL);
    GString *out = g_string_new(NULL);
    gl_frame_describe(&record->stack.frames[0], NULL, out);
    g_string_append_c(out, '|');
    gl_frame_describe(&record->stack.frames[1], NULL, out);
    g_string_append_c(out, '|');
    gl_frame_describe(&record->stack.frames[2], NULL, out);
    g_string_append_c(out, '|');
    gl_frame_describe(&record->stack.frames[3], NULL, out);
    ck_assert_str_eq(out->str, "f (a.c:7)|g (at /x/a.so)|??? (at /x/a.so)|0x1003");
    g_string_free(out, TRUE);

    GlFrame frame = { .dir = "/home/me/gem/ext/leaky", .file = "leaky.c" };
    gboolean under = FALSE;
    g_autofree char *relative = gl_frame_source_path(&frame, "/home/me/gem", &under);
    ck_assert_str_eq(relative, "ext/leaky/leaky.c");
    ck_assert(under);
    g_autofree char *absolute = gl_frame_source_path(&frame, "/home/me/gemx", &under);
    ck_assert_str_eq(absolute, "/home/me/gem/ext/leaky/leaky.c");
    ck_assert(!under);

    /* rake-compiler builds in tmp/<platform>/<name>/<ruby>/ with sources at
     * ../../../../ext/<name>: the path lands on the file */
    GlFrame built = { .dir = "/home/me/gem/tmp/x86_64-linux/redcarpet/3.1.2/../../../../ext/redcarpet",
                      .file = "buffer.c" };
    g_autofree char *plain = gl_frame_source_path(&built, "/home/me/gem", &under);
    ck_assert_str_eq(plain, "ext/redcarpet/buffer.c");
    ck_assert(under);
    GlFrame relative_dir = { .dir = "tmp/x/../../ext/./a", .file = "b.c" };
    g_autofree char *folded = gl_frame_source_path(&relative_dir, NULL, NULL);
    ck_assert_str_eq(folded, "ext/a/b.c");
}
END_TEST

/* A finding is placed in the extension's own source: the libstdc++
 * template and Ruby's inline functions compiled into it are passed over
 * (re2's leak was blamed on basic_string.tcc). */
START_TEST(test_location_in_the_extensions_own_source)
{
    GlRecord *record = gl_test_record("Leak_DefinitelyLost", "operator new@/vg.so",
                                      "_M_construct<char const*>@/g/re2.so:basic_string.tcc:225",
                                      "rb_check_frozen_inline@/g/re2.so:error.h:273",
                                      "re2_replace@/g/re2.so:re2.cc:2027", "rb_vm_exec@/r/libruby.so",
                                      NULL);
    record->stack.frames[1].dir = gl_record_intern(record, "/usr/include/c++/12/bits");
    record->stack.frames[2].dir = gl_record_intern(record, "/opt/ruby34/include/ruby-3.4.0/ruby/internal");
    record->stack.frames[3].dir = gl_record_intern(record, "/g/ext/re2");
    for (guint i = 1; i <= 3; i++)
        record->stack.frames[i].in_target = TRUE;
    g_autoptr(GlFindings) findings = gl_findings_new();
    gl_findings_add(findings, record, 0);
    gl_findings_fingerprint(findings, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    ck_assert_str_eq(gl_finding_location(finding)->fn, "re2_replace");
    g_autofree char *title = gl_finding_title(finding, NULL);
    ck_assert_str_eq(title, "definite leak in re2_replace (re2.cc:2027)");
}
END_TEST

/* Issue 27: a Rust extension's leak is allocated six frames inside its
 * standard library, compiled into the extension from sources no checkout
 * has (/rustc/<commit>/...), and a function of it without debug
 * information: placed at the extension's own src/lib.rs, those frames
 * marked " ~" in the text and "linked" in JSON, out of its functions; a
 * frame outside the project named by its file's name, however the engine
 * split its path. */
START_TEST(test_location_past_a_runtime_linked_in)
{
    GlRecord *record = gl_test_record("Leak_DefinitelyLost", "malloc@/vg.so",
                                      "try_allocate_in@/g/rustleak.so",
                                      "alloc@/g/rustleak.so:library/alloc/src/alloc.rs:95",
                                      "new<rustleak::Buffer>@/g/rustleak.so:boxed.rs:286",
                                      "rustleak::make_buffer@/g/rustleak.so:lib.rs:18",
                                      "rustleak::rustleak_leak@/g/rustleak.so:lib.rs:28",
                                      "rb_vm_exec@/r/libruby.so", NULL);
    record->stack.frames[2].dir = gl_record_intern(record, "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860");
    record->stack.frames[3].dir = gl_record_intern(record, "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/alloc/src");
    record->stack.frames[4].dir = gl_record_intern(record, "/g/src");
    record->stack.frames[5].dir = gl_record_intern(record, "/g/src");
    for (guint i = 1; i <= 5; i++)
        record->stack.frames[i].in_target = TRUE;
    g_autoptr(GlFindings) findings = gl_findings_new();
    gl_findings_add(findings, record, 0);
    gl_findings_fingerprint(findings, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    ck_assert_str_eq(gl_finding_location(finding)->fn, "rustleak::make_buffer");
    g_auto(GStrv) functions = gl_finding_functions(finding);
    g_autofree char *joined = g_strjoinv(" ", functions);
    ck_assert_str_eq(joined, "rustleak::make_buffer rustleak::rustleak_leak");

    g_autoptr(GPtrArray) groups = gl_findings_group(sorted);
    g_autofree char *text = gl_group_text(g_ptr_array_index(groups, 0), FALSE, "/g");
    /* the extension's object, relative to the project (issue 40) */
    gl_assert_line(text, "^ ~try_allocate_in \\(at rustleak\\.so\\)$");
    gl_assert_line(text, "^ ~alloc \\(alloc\\.rs:95\\)$");
    gl_assert_line(text, "^ ~new<rustleak::Buffer> \\(boxed\\.rs:286\\)$");
    gl_assert_line(text, "^ \\*rustleak::make_buffer \\(src/lib\\.rs:18\\)$");
    gl_assert_line(text, "^  malloc \\(at /vg\\.so\\)$");
}
END_TEST

Suite *gl_report_suite(void)
{
    Suite *suite = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_test(tc, test_text_leak);
    tcase_add_test(tc, test_text_use_after_free_shows_every_stack);
    tcase_add_test(tc, test_text_merged_totals);
    tcase_add_test(tc, test_text_clean_and_colour);
    tcase_add_test(tc, test_text_suppression_blocks);
    tcase_add_test(tc, test_json_leak);
    tcase_add_test(tc, test_json_other_stacks_and_clean);
    tcase_add_test(tc, test_report_write_failure);
    tcase_add_test(tc, test_frame_description_and_source_paths);
    tcase_add_test(tc, test_location_in_the_extensions_own_source);
    tcase_add_test(tc, test_location_past_a_runtime_linked_in);
    suite_add_tcase(suite, tc);
    return suite;
}
