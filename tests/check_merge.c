/* Merging findings, their keys and fingerprints, and the analysis over
 * several files and threads. */
#include "testutil.h"
#include "gemleak/analyze.h"
#include "gemleak/classify.h"
#include "gemleak/merge.h"
#include "gemleak/report.h"

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#define VG "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so"
#define RUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"
#define EXT "/work/gem/lib/leaky/leaky.so"

/* A classified leak: the target frames are marked as the classifier would. */
static GlRecord *leak(gint64 pid, const char *target_line, const char *outer)
{
    g_autofree char *frame = g_strdup_printf("leaky_alloc@" EXT ":leaky.c:%s", target_line);
    GlRecord *record = gl_test_record("Leak_DefinitelyLost", "malloc@" VG, frame,
                                      "leaky_leak@" EXT ":leaky.c:33", outer, NULL);
    record->pid = pid;
    record->leaked_bytes = 100;
    record->stack.frames[1].in_target = TRUE;
    record->stack.frames[2].in_target = TRUE;
    return record;
}

START_TEST(test_same_stack_in_two_processes_merges)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    gl_findings_add(findings, leak(10, "15", "rb_vm_exec@" RUBY), 1);
    gl_findings_add(findings, leak(11, "15", "rb_vm_exec@" RUBY), 2);
    gl_findings_add(findings, leak(11, "15", "rb_vm_exec@" RUBY), 3);
    ck_assert_uint_eq(gl_findings_count(findings), 1);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    ck_assert_uint_eq(finding->occurrences, 3);
    ck_assert_uint_eq(finding->pids->len, 2);
    ck_assert_int_eq(g_array_index(finding->pids, gint64, 0), 10);
    ck_assert_int_eq(g_array_index(finding->pids, gint64, 1), 11);
    ck_assert_uint_eq(finding->total_bytes, 300);
    ck_assert_uint_eq(finding->total_blocks, 3);
}
END_TEST

START_TEST(test_identity_stops_at_the_last_target_frame)
{
    g_autoptr(GlRecord) a = leak(1, "15", "rb_vm_exec@" RUBY);
    g_autoptr(GlRecord) b = leak(1, "15", "?@" RUBY);
    g_autoptr(GlRecord) c = leak(1, "16", "rb_vm_exec@" RUBY);
    g_autofree char *ka = gl_record_merge_key(a);
    g_autofree char *kb = gl_record_merge_key(b);
    g_autofree char *kc = gl_record_merge_key(c);
    ck_assert_str_eq(ka, kb);   /* Ruby's frames beyond the target differ: one leak */
    ck_assert_str_ne(ka, kc);   /* another line in the target: another leak */
    ck_assert_uint_eq(gl_stack_relevant_frames(&a->stack), 3);

    g_autoptr(GlRecord) other_kind = leak(1, "15", "rb_vm_exec@" RUBY);
    other_kind->kind = gl_record_intern(other_kind, "Leak_PossiblyLost");
    g_autofree char *kd = gl_record_merge_key(other_kind);
    ck_assert_str_ne(ka, kd);

    /* without target frames every frame counts */
    g_autoptr(GlRecord) loose = gl_test_record("InvalidRead", "f@" RUBY, "g@" RUBY, NULL);
    ck_assert_uint_eq(gl_stack_relevant_frames(&loose->stack), 2);
}
END_TEST

START_TEST(test_fingerprint_survives_lines_pids_and_addresses)
{
    g_autoptr(GlRecord) a = leak(1, "15", "rb_vm_exec@" RUBY);
    g_autoptr(GlRecord) moved = leak(999, "42", "?@" RUBY);
    moved->stack.frames[1].ip += 0x40;
    g_autofree char *fa = gl_record_fingerprint(a);
    g_autofree char *fm = gl_record_fingerprint(moved);
    ck_assert_str_eq(fa, fm);
    ck_assert_uint_eq(strlen(fa), 16);
    ck_assert(g_regex_match_simple("^[0-9a-f]{16}$", fa, 0, 0));

    g_autoptr(GlRecord) renamed = leak(1, "15", "rb_vm_exec@" RUBY);
    renamed->stack.frames[2].fn = gl_record_intern(renamed, "leaky_leak_more");
    g_autofree char *fr = gl_record_fingerprint(renamed);
    ck_assert_str_ne(fa, fr);
}
END_TEST

START_TEST(test_absorb_keeps_reading_order)
{
    g_autoptr(GlFindings) into = gl_findings_new();
    g_autoptr(GlFindings) from = gl_findings_new();
    GlRecord *late = leak(20, "15", "rb_vm_exec@" RUBY);
    late->what = gl_record_intern(late, "late");
    GlRecord *early = leak(10, "15", "rb_vm_exec@" RUBY);
    early->what = gl_record_intern(early, "early");
    gl_findings_add(into, late, 50);
    gl_findings_add(from, early, 5);
    gl_findings_absorb(into, from);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(into);
    ck_assert_uint_eq(sorted->len, 1);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    ck_assert_str_eq(finding->record->what, "early");
    ck_assert_uint_eq(finding->order, 5);
    ck_assert_int_eq(g_array_index(finding->pids, gint64, 0), 10);
    ck_assert_uint_eq(finding->occurrences, 2);
}
END_TEST

START_TEST(test_sorted_by_bytes_then_occurrences_then_order)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    GlRecord *small = leak(1, "1", "x@" RUBY);
    small->leaked_bytes = 10;
    GlRecord *big = leak(1, "2", "x@" RUBY);
    big->leaked_bytes = 5000;
    GlRecord *error_a = gl_test_record("InvalidRead", "a@" EXT, NULL);
    GlRecord *error_b = gl_test_record("InvalidRead", "b@" EXT, NULL);
    GlRecord *error_b2 = gl_test_record("InvalidRead", "b@" EXT, NULL);
    gl_findings_add(findings, error_a, 1);
    gl_findings_add(findings, small, 2);
    gl_findings_add(findings, error_b, 3);
    gl_findings_add(findings, big, 4);
    gl_findings_add(findings, error_b2, 5);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    ck_assert_uint_eq(sorted->len, 4);
    ck_assert_uint_eq(((GlFinding *) g_ptr_array_index(sorted, 0))->total_bytes, 5000);
    ck_assert_uint_eq(((GlFinding *) g_ptr_array_index(sorted, 1))->total_bytes, 10);
    ck_assert_str_eq(((GlFinding *) g_ptr_array_index(sorted, 2))->record->stack.frames[0].fn, "b");
    ck_assert_str_eq(((GlFinding *) g_ptr_array_index(sorted, 3))->record->stack.frames[0].fn, "a");
}
END_TEST

START_TEST(test_forked_child_merges_with_parent)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *dir = gl_test_fixture("xml/fork");
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(analysis->summary.files, 2);
    ck_assert_uint_eq(analysis->findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(analysis->findings, 0);
    /* the parent's leak, the child's inherited copy, and the child's own */
    ck_assert_uint_eq(finding->occurrences, 3);
    ck_assert_uint_eq(finding->pids->len, 2);
    ck_assert_uint_eq(finding->total_bytes, 300);
}
END_TEST

/* The whole JSON report, as the same analysis read with @jobs threads gives it. */
static char *json_report(guint jobs)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    ck_assert(gl_rules_add_target(rules, "other", NULL));
    g_autofree char *xml = gl_test_fixture("xml");
    g_autofree char *fork = gl_test_fixture("xml/fork");
    const char *paths[] = { xml, fork, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, jobs);
    GlReportContext context = { .analysis = analysis, .findings = analysis->findings };
    char *buffer = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buffer, &size);
    ck_assert(gl_report_write(&gl_report_json, &context, out, "memory", NULL));
    fclose(out);
    return buffer;
}

START_TEST(test_parallel_read_gives_the_same_report)
{
    g_autofree char *serial = json_report(1);
    g_autofree char *parallel = json_report(4);
    ck_assert_str_eq(serial, parallel);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, serial, -1, NULL));
    JsonObject *summary = json_object_get_object_member(
        json_node_get_object(json_parser_get_root(parser)), "summary");
    ck_assert_int_eq(json_object_get_int_member(summary, "files"), 9);
    ck_assert_int_gt(json_object_get_int_member(summary, "findings"), 5);
}
END_TEST

START_TEST(test_unreadable_inputs_are_problems_not_failures)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *leak_xml = gl_test_fixture("xml/leak.xml");
    g_autofree char *empty_dir = gl_test_tmpdir();
    const char *paths[] = { "/nonexistent.xml", leak_xml, empty_dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 2);
    ck_assert_uint_eq(analysis->problems->len, 2);
    ck_assert_uint_eq(analysis->findings->len, 3);
    ck_assert_uint_eq(analysis->summary.files, 1);
    const GError *missing = g_ptr_array_index(analysis->problems, 0);
    const GError *nothing = g_ptr_array_index(analysis->problems, 1);
    ck_assert(strstr(missing->message, "/nonexistent.xml") != NULL);
    ck_assert(strstr(nothing->message, "no *.xml or *.xml.gz files") != NULL);
    gl_remove_tree(empty_dir);
}
END_TEST

/* A kept run directory with gzip-compressed XML and, beside it, another
 * tool's XML (a JUnit report): Valgrind's files are read, the other is
 * skipped with a note, not counted as a problem that fails the run. */
START_TEST(test_run_directory_with_gzip_and_other_xml)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *leak_xml = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *command = g_strdup_printf("gzip -c '%s' > '%s/100.xml.gz'", leak_xml, dir);
    ck_assert_int_eq(system(command), 0);
    g_autofree char *junit = g_build_filename(dir, "junit.xml", NULL);
    gl_test_write(junit, "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"x\"/>"
                         "</testsuites>\n", -1);
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 2);
    ck_assert_msg(analysis->problems->len == 0, "%s",
                  analysis->problems->len > 0
                      ? ((GError *) g_ptr_array_index(analysis->problems, 0))->message : "");
    ck_assert_uint_eq(analysis->findings->len, 3);
    ck_assert_uint_eq(analysis->summary.files, 1);
    gboolean noted = FALSE;
    for (guint i = 0; i < analysis->notes->len; i++)
        noted |= strstr(g_ptr_array_index(analysis->notes, i), "junit.xml: skipped") != NULL;
    ck_assert(noted);
    /* but a file the user names is read, and its trouble is a problem */
    const char *named[] = { junit, NULL };
    g_autoptr(GlAnalysis) direct = gl_analyze(named, rules, 1);
    ck_assert_uint_eq(direct->problems->len, 1);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_merge_suite(void)
{
    Suite *suite = suite_create("merge");
    TCase *tc = tcase_create("merge");
    tcase_add_test(tc, test_same_stack_in_two_processes_merges);
    tcase_add_test(tc, test_identity_stops_at_the_last_target_frame);
    tcase_add_test(tc, test_fingerprint_survives_lines_pids_and_addresses);
    tcase_add_test(tc, test_absorb_keeps_reading_order);
    tcase_add_test(tc, test_sorted_by_bytes_then_occurrences_then_order);
    tcase_add_test(tc, test_forked_child_merges_with_parent);
    tcase_add_test(tc, test_parallel_read_gives_the_same_report);
    tcase_add_test(tc, test_unreadable_inputs_are_problems_not_failures);
    tcase_add_test(tc, test_run_directory_with_gzip_and_other_xml);
    suite_add_tcase(suite, tc);
    return suite;
}
