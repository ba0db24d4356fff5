/* The gate (src/judge/gate.c): what was not checked never passes. */
#include "testutil.h"
#include "gemleak/judge/gate.h"

/* Asserts that a run without findings, of which @unchecked processes that
 * loaded an extension were not checked, which checked nothing when
 * @checked_nothing, and which @interrupted (nullable: a signal's name)
 * ended, neither fails nor passes: the gate says @line. */
static void assert_incomplete(guint unchecked, gboolean checked_nothing, const char *interrupted,
                              const char *line)
{
    GlGate gate;
    gl_gate_init(&gate);
    g_autoptr(GPtrArray) none = g_ptr_array_new();
    GlGateResult result;
    gl_gate_evaluate(&gate, none, 0, unchecked, checked_nothing, interrupted, &result);
    ck_assert(!result.failed);
    ck_assert(!result.complete);
    ck_assert_str_eq(result.line, line);
    gl_gate_result_clear(&result);
}

/* A run that checked nothing never passes. */
START_TEST(test_gate_checked_nothing)
{
    assert_incomplete(0, TRUE, NULL,
                      "gemleak: INCOMPLETE: nothing was checked: no process the engine checked "
                      "loaded a target extension (see gemleak's messages)");
}
END_TEST

/* Processes that loaded an extension outside the engine (the helper's
 * sentences, tests/run/check_rundir_processes.c): the run never passes. */
START_TEST(test_processes_outside_never_pass)
{
    assert_incomplete(2, FALSE, NULL,
                      "gemleak: INCOMPLETE: no findings in what was checked; 2 processes that "
                      "loaded an extension were not checked (see gemleak's messages)");
}
END_TEST

/* Issue 26, item 10: a run a signal interrupted never passes (what its
 * directory says of it: tests/run/check_rundir.c). */
START_TEST(test_interrupted_run_never_passes)
{
    assert_incomplete(0, FALSE, "SIGTERM",
                      "gemleak: INCOMPLETE: no findings in what was checked; the run was "
                      "interrupted by SIGTERM: what the command had not run by then was not "
                      "checked");
}
END_TEST

Suite *gl_gate_suite(void)
{
    Suite *suite = suite_create("gate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_gate_checked_nothing);
    tcase_add_test(tc, test_processes_outside_never_pass);
    tcase_add_test(tc, test_interrupted_run_never_passes);
    suite_add_tcase(suite, tc);
    return suite;
}
