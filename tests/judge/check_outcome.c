/* src/judge/outcome.c: what an analysis comes to once the run's coverage
 * is held to it: the findings reported, the problems, the gate's inputs,
 * and the trouble, in its order and its words. */
#include "testutil.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/outcome.h"

#include <signal.h>
#include <string.h>

/* An analysis of the fixture @relative with "leaky" the target, ready to
 * judge: its input as filter gives it. */
typedef struct {
    char *path;
    const char *inputs[2];
    GlRules *rules;
    GlAnalysis *analysis;
    GlRunCoverage coverage;
    GlOutcomeInput input;
    GlOutcome outcome;
} Judged;

static const char *const targets[] = { "leaky", NULL };

static void judged_prepare(Judged *j, const char *relative, const char *target)
{
    memset(j, 0, sizeof *j);
    j->path = gl_test_fixture(relative);
    j->inputs[0] = j->path;
    j->rules = gl_rules_new();
    ck_assert(gl_rules_add_target(j->rules, target, NULL));
    j->analysis = gl_analyze(j->inputs, j->rules, 1);
    j->coverage.unchecked = g_ptr_array_new_with_free_func(g_free);
    j->input.inputs = j->inputs;
    j->input.rules = j->rules;
    j->input.targets = targets;
    gl_gate_init(&j->input.gate);
}

static void judged_clear(Judged *j)
{
    gl_outcome_clear(&j->outcome);
    gl_run_coverage_clear(&j->coverage);
    gl_analysis_free(j->analysis);
    gl_rules_free(j->rules);
    g_free(j->path);
}

/* Returns: (transfer full): @j's trouble in words. */
static char *trouble_of(Judged *j)
{
    return gl_trouble_describe(j->outcome.trouble, &j->coverage);
}

/* A filter of complete XML: the findings reported are the analysis's,
 * the gate fails on them, and there is no trouble to say. */
START_TEST(test_complete_run_has_no_trouble)
{
    Judged j;
    judged_prepare(&j, "xml/leak.xml", "leaky");
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert_uint_eq(j.outcome.reported->len, j.analysis->findings->len);
    ck_assert_uint_gt(j.outcome.reported->len, 0);
    ck_assert(j.outcome.gate_result.failed);
    ck_assert(j.outcome.gate_result.complete);
    ck_assert(!j.outcome.problems);
    ck_assert_int_eq(j.outcome.trouble, GL_TROUBLE_NONE);
    ck_assert_ptr_null(gl_trouble_describe(j.outcome.trouble, &j.coverage));
    ck_assert_uint_eq(j.analysis->problems->len, 0);
    judged_clear(&j);
}
END_TEST

/* A run a signal cut short is incomplete whatever it found: the problem
 * names the signal the run directory says, else the one gemleak received,
 * and the trouble is the interruption. */
START_TEST(test_interrupted_run)
{
    Judged j;
    judged_prepare(&j, "xml/clean.xml", "leaky");
    j.coverage.interrupted = g_strdup("SIGTERM");
    j.input.ran = TRUE;
    j.input.interrupted_by = SIGINT;
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert(j.outcome.problems);
    ck_assert(!j.outcome.gate_result.failed);
    ck_assert(!j.outcome.gate_result.complete);
    ck_assert_int_eq(j.outcome.trouble, GL_TROUBLE_INTERRUPTED);
    g_autofree char *words = trouble_of(&j);
    ck_assert_str_eq(words, "the run was interrupted");
    const GError *last = g_ptr_array_index(j.analysis->problems, j.analysis->problems->len - 1);
    ck_assert_msg(g_str_has_prefix(last->message, "the run was interrupted by SIGTERM: "), "%s",
                  last->message);
    ck_assert_msg(strstr(j.outcome.gate_result.line, "interrupted by SIGTERM") != NULL, "%s",
                  j.outcome.gate_result.line);
    judged_clear(&j);

    judged_prepare(&j, "xml/clean.xml", "leaky");
    j.input.ran = TRUE;
    j.input.interrupted_by = SIGINT;
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert_int_eq(j.outcome.trouble, GL_TROUBLE_INTERRUPTED);
    ck_assert_msg(strstr(j.outcome.gate_result.line, "interrupted by SIGINT") != NULL, "%s",
                  j.outcome.gate_result.line);
    judged_clear(&j);
}
END_TEST

/* gemleak run in which no process under the engine loaded a target
 * checked nothing: that is the one problem, and the trouble, before an
 * interruption. */
START_TEST(test_checked_nothing_comes_first)
{
    Judged j;
    judged_prepare(&j, "xml/leak.xml", "nosuchext");
    j.input.ran = TRUE;
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert(j.outcome.checked_nothing);
    ck_assert(j.outcome.checked_nothing_only);
    ck_assert_uint_eq(j.analysis->problems->len, 1);
    ck_assert_int_eq(j.outcome.trouble, GL_TROUBLE_CHECKED_NOTHING);
    g_autofree char *words = trouble_of(&j);
    ck_assert_str_eq(words, "nothing was checked");
    judged_clear(&j);

    judged_prepare(&j, "xml/leak.xml", "nosuchext");
    j.input.ran = TRUE;
    j.input.interrupted_by = SIGTERM;
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert(j.outcome.checked_nothing);
    ck_assert(!j.outcome.checked_nothing_only);
    ck_assert_int_eq(j.outcome.trouble, GL_TROUBLE_CHECKED_NOTHING);
    judged_clear(&j);
}
END_TEST

/* A process the run directory says was not checked is a problem each,
 * counted with the unchecked processes; after a launcher that ran outside
 * the engine, the problem says how to follow it. */
START_TEST(test_unchecked_processes)
{
    Judged j;
    judged_prepare(&j, "xml/leak.xml", "leaky");
    g_ptr_array_add(j.coverage.unchecked, g_strdup("process 12: it loaded /x/leaky.so outside "
                                                   "Valgrind"));
    j.input.ran = TRUE;
    j.input.launcher_outside = TRUE;
    guint before = j.analysis->summary.unchecked_processes;
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert_uint_eq(j.analysis->summary.unchecked_processes, before + 1);
    ck_assert_uint_eq(j.analysis->problems->len, 1);
    const GError *problem = g_ptr_array_index(j.analysis->problems, 0);
    ck_assert_str_eq(problem->message, "process 12: it loaded /x/leaky.so outside Valgrind: what "
                                       "it ran was not checked; run again with --trace-launchers");
    ck_assert(j.outcome.gate_result.failed);
    ck_assert(!j.outcome.gate_result.complete);
    ck_assert_int_eq(j.outcome.trouble, GL_TROUBLE_UNCHECKED);
    g_autofree char *words = trouble_of(&j);
    ck_assert_str_eq(words, "a process that loaded an extension was not checked");
    judged_clear(&j);
}
END_TEST

/* Writing a baseline adopts the findings there are: the gate fails on
 * none of them, unless --fail-on was given, and its line says where they
 * went. */
START_TEST(test_writing_a_baseline_adopts)
{
    Judged j;
    judged_prepare(&j, "xml/leak.xml", "leaky");
    j.input.write_baseline = "base.json";
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert(!j.outcome.gate_result.failed);
    ck_assert_msg(g_str_has_prefix(j.outcome.gate_result.line, "gemleak: pass: "), "%s",
                  j.outcome.gate_result.line);
    ck_assert_msg(strstr(j.outcome.gate_result.line, "written to the baseline base.json") != NULL,
                  "%s", j.outcome.gate_result.line);
    ck_assert(!gl_gate_counts(&j.outcome.gate, g_ptr_array_index(j.outcome.reported, 0)));
    judged_clear(&j);

    judged_prepare(&j, "xml/leak.xml", "leaky");
    j.input.write_baseline = "base.json";
    j.input.fail_on_given = TRUE;
    j.input.baseline_missing = TRUE;
    gl_outcome_judge(j.analysis, &j.input, &j.coverage, &j.outcome);
    ck_assert(j.outcome.gate_result.failed);
    ck_assert_uint_eq(j.analysis->notes->len, 1);
    ck_assert_msg(g_str_has_prefix(g_ptr_array_index(j.analysis->notes, 0),
                                   "--baseline base.json did not exist: this run writes it"),
                  "%s", (const char *) g_ptr_array_index(j.analysis->notes, 0));
    judged_clear(&j);
}
END_TEST

/* The words of each trouble, with the engine and what it writes as the
 * run directories name them, or said generally. */
START_TEST(test_trouble_words)
{
    GlRunCoverage named = { .engine = (char *) "LeakSanitizer",
                            .reports = (char *) "LeakSanitizer's reports" };
    GlRunCoverage unnamed = { 0 };
    const struct {
        GlTrouble trouble;
        const char *named;
        const char *unnamed;
    } cases[] = {
        { GL_TROUBLE_CHECKED_NOTHING, "nothing was checked", "nothing was checked" },
        { GL_TROUBLE_INTERRUPTED, "the run was interrupted", "the run was interrupted" },
        { GL_TROUBLE_UNCHECKED, "a process that loaded an extension was not checked",
          "a process that loaded an extension was not checked" },
        { GL_TROUBLE_STACK_CUT, "a finding's stack was cut short",
          "a finding's stack was cut short" },
        { GL_TROUBLE_NOT_BUILT, "an extension was not built for LeakSanitizer",
          "an extension was not built for the engine" },
        { GL_TROUBLE_UNREADABLE, "LeakSanitizer's reports could not all be read",
          "the inputs could not all be read" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *with = gl_trouble_describe(cases[i].trouble, &named);
        g_autofree char *without = gl_trouble_describe(cases[i].trouble, &unnamed);
        ck_assert_str_eq(with, cases[i].named);
        ck_assert_str_eq(without, cases[i].unnamed);
    }
    ck_assert_ptr_null(gl_trouble_describe(GL_TROUBLE_NONE, &named));
}
END_TEST

Suite *gl_outcome_suite(void)
{
    Suite *suite = suite_create("outcome");
    TCase *tc = tcase_create("outcome");
    tcase_add_test(tc, test_complete_run_has_no_trouble);
    tcase_add_test(tc, test_interrupted_run);
    tcase_add_test(tc, test_checked_nothing_comes_first);
    tcase_add_test(tc, test_unchecked_processes);
    tcase_add_test(tc, test_writing_a_baseline_adopts);
    tcase_add_test(tc, test_trouble_words);
    suite_add_tcase(suite, tc);
    return suite;
}
