/* The one loop every input goes through (judge/judgement.h): each format
 * read by the seam and judged alike, as gemleak filter judges it (the
 * analysis runs this loop on each input, the fuzzer on any bytes). */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/judgement.h"

#include <string.h>

/* Judges the fixture @relative with @target into @judged (initialised here). */
static void judge_fixture(const char *relative, const char *target, GlJudgement *judged)
{
    g_autofree char *path = gl_test_fixture(relative);
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, target, NULL));
    gl_judgement_init(judged);
    g_autoptr(GlInput) input = gl_input_open(path, FALSE, NULL, NULL);
    ck_assert_ptr_nonnull(input);
    gl_judge_input(input, path, rules, 0, FALSE, judged);
}

/* Returns: TRUE if a line of @messages (char*, or GError* when @errors)
 * matches @pattern. */
static gboolean said(const GPtrArray *messages, gboolean errors, const char *pattern)
{
    for (guint i = 0; i < messages->len; i++) {
        const char *text = errors ? ((const GError *) g_ptr_array_index(messages, i))->message
                                  : (const char *) g_ptr_array_index(messages, i);
        if (g_regex_match_simple(pattern, text, 0, 0))
            return TRUE;
    }
    return FALSE;
}

/* The loop over one input counts what gemleak filter's analysis counts
 * for it, whichever its format. */
START_TEST(test_each_format_judged_as_the_analysis_does)
{
    static const struct {
        const char *fixture;
        const char *target;
    } inputs[] = {
        { "xml/probe-ruby34.xml", "probe" },
        { "lsan/probe-ruby34.lsan", "probe" },
        { "lsan/per-test-ruby34.lsan", "tally" },
        { "asan/r_uaf_two_lines.asan", "probe" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(inputs); i++) {
        g_auto(GlJudgement) judged;
        judge_fixture(inputs[i].fixture, inputs[i].target, &judged);
        g_autofree char *path = gl_test_fixture(inputs[i].fixture);
        const char *paths[] = { path, NULL };
        g_autoptr(GlRules) rules = gl_rules_new();
        ck_assert(gl_rules_add_target(rules, inputs[i].target, NULL));
        g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
        ck_assert_uint_eq(judged.processes, 1);
        ck_assert_uint_eq(judged.processes, analysis->summary.processes);
        ck_assert_uint_gt(judged.errors_seen, 0);
        ck_assert_uint_eq(judged.errors_seen, analysis->summary.errors_seen);
        for (guint v = 0; v < GL_N_VERDICTS; v++)
            ck_assert_msg(judged.by_verdict[v] == analysis->summary.by_verdict[v], "%s: verdict %u",
                          inputs[i].fixture, v);
        ck_assert_uint_eq(judged.repeated, analysis->summary.repeated);
        ck_assert_uint_eq(gl_findings_count(judged.findings), analysis->findings->len);
        ck_assert_uint_gt(gl_findings_count(judged.findings), 0);
    }
}
END_TEST

/* A --per-test run under LeakSanitizer: the checks while it ran are
 * Valgrind's added checks, the exit check's records come after them to
 * the attribution (each loss record once), and what the exit check did
 * not report again was never lost. */
START_TEST(test_checks_reach_the_attribution_first)
{
    g_auto(GlJudgement) judged;
    judge_fixture("lsan/per-test-ruby34.lsan", "tally", &judged);
    ck_assert_uint_eq(judged.not_lost, 5);
    ck_assert_uint_eq(judged.errors_seen, 5);
    /* read five times (three checks, the exit check twice), one finding:
     * the test its blocks were found lost in, run again alone */
    ck_assert_uint_eq(judged.repeated, 4);
    ck_assert(judged.marked);
    ck_assert_uint_eq(judged.problems->len, 0);
    g_autoptr(GPtrArray) findings = gl_findings_list(judged.findings);
    ck_assert_uint_eq(findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(findings, 0);
    ck_assert_uint_eq(finding->tests->len, 1);
    ck_assert_str_eq(((const GlTest *) g_ptr_array_index(finding->tests, 0))->name,
                     "WordsTest#test_count");
}
END_TEST

/* What the process's output says that no record does: a process the
 * engine stopped at its first error, frames without their module; and
 * the note of a process that died of a signal the engine saw. */
START_TEST(test_what_the_output_says)
{
    g_auto(GlJudgement) halted;
    judge_fixture("asan/r_uaf_two_lines.asan", "probe", &halted);
    ck_assert(said(halted.problems, TRUE, "process 26477 stopped at its first error: .* "
                                          "\\(AddressSanitizer stops there unless"));
    ck_assert_int_eq(halted.pid, 26477);

    g_auto(GlJudgement) hidden;
    judge_fixture("lsan/probe-ruby34-default.lsan", "probe", &hidden);
    ck_assert(said(hidden.problems, TRUE, "^.*: 18 records of process 27085 name frames without "
                                          "their module \\(the runtime's default frame format\\)"));

    g_auto(GlJudgement) crash;
    judge_fixture("xml/crash.xml", "leaky", &crash);
    ck_assert(said(crash.notes, FALSE, "crash.xml: process [0-9]+ died: "));
    ck_assert_int_eq(crash.pid, 0);  /* Valgrind's XML says no check's end */

    /* AddressSanitizer's crash report: its process halted, no death note */
    static const char segv[] =
        "==3==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x1 bp 0x2 sp 0x3 T0)\n"
        "F|0|0x1|/work/ext/leaky.so|0x1|leaky_crash|0x0|/work/ext/leaky.c|9|3\n"
        "SUMMARY: AddressSanitizer: SEGV leaky.c:9 in leaky_crash\n"
        "==3==ABORTING\n";
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autoptr(GlInput) input = gl_input_open_memory(NULL, segv, sizeof segv - 1, "asan.3");
    g_auto(GlJudgement) asan;
    gl_judgement_init(&asan);
    gl_judge_input(input, "asan.3", rules, 0, FALSE, &asan);
    ck_assert_uint_eq(gl_findings_count(asan.findings), 1);
    ck_assert(!said(asan.notes, FALSE, "died"));
    ck_assert(said(asan.problems, TRUE, "process 3 stopped at its first error"));
}
END_TEST

/* A JSON report's findings merge as they were judged: never judged again
 * (no target given here keeps them), with the report's own counts. */
START_TEST(test_judged_findings_merge_as_they_are)
{
    static const char report[] =
        "{\"tool\": {\"name\": \"gemleak\"}, \"report_version\": 1, \"targets\": [\"leaky\"],\n"
        " \"summary\": {\"files\": 3, \"errors_seen\": 10, \"skipped_by_reason\": "
        "{\"not_in_target\": 7, \"repeated_by_later_check\": 1}},\n"
        " \"findings\": [{\"kind\": \"Leak_DefinitelyLost\", \"what\": \"8 bytes in 1 blocks\", "
        "\"bytes\": 16, \"blocks\": 2, \"occurrences\": 2, \"pids\": [11, 12],\n"
        "   \"tests\": [{\"name\": \"T#a\", \"location\": \"t.rb:1\"}],\n"
        "   \"frames\": [{\"fn\": \"leaky_alloc\", \"obj\": \"/x/leaky.so\", \"in_target\": true}]},\n"
        "  \"not an object\"]}\n";
    g_autoptr(GlRules) rules = gl_rules_new();
    g_autoptr(GlInput) input = gl_input_open_memory(NULL, report, sizeof report - 1, "shard.json");
    ck_assert_str_eq(gl_input_format_name(gl_input_format(input)), "gemleak-json");
    g_auto(GlJudgement) judged;
    gl_judgement_init(&judged);
    gl_judge_input(input, "shard.json", rules, 0, FALSE, &judged);
    ck_assert(judged.report);
    ck_assert_uint_eq(judged.processes, 3);
    ck_assert_uint_eq(judged.errors_seen, 10);
    ck_assert_uint_eq(judged.by_verdict[GL_VERDICT_SKIP_NO_TARGET], 7);
    ck_assert_uint_eq(judged.repeated, 1);
    ck_assert_uint_eq(judged.by_verdict[GL_VERDICT_KEEP], 2);
    g_autoptr(GPtrArray) findings = gl_findings_list(judged.findings);
    ck_assert_uint_eq(findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(findings, 0);
    ck_assert_uint_eq(finding->occurrences, 2);
    ck_assert_uint_eq(finding->total_bytes, 16);
    ck_assert_uint_eq(finding->pids->len, 2);
    ck_assert_uint_eq(finding->tests->len, 1);
    ck_assert_str_eq(((const GlTest *) g_ptr_array_index(finding->tests, 0))->name, "T#a");
    ck_assert(finding->record->stack.frames[0].in_target);
    ck_assert_ptr_null(finding->record->judged);
    ck_assert_uint_eq(g_hash_table_size(judged.objects), 0);
}
END_TEST

Suite *gl_judgement_suite(void)
{
    Suite *suite = suite_create("judgement");
    TCase *tc = tcase_create("judgement");
    tcase_add_test(tc, test_each_format_judged_as_the_analysis_does);
    tcase_add_test(tc, test_checks_reach_the_attribution_first);
    tcase_add_test(tc, test_what_the_output_says);
    tcase_add_test(tc, test_judged_findings_merge_as_they_are);
    suite_add_tcase(suite, tc);
    return suite;
}
