/* The exit statuses of filter and run (README, "Exit status"; the enum
 * in gemleak/base/errors.h), from the run's outcome (gemleak/judge/
 * outcome.h), and run's last line, which says its status and how the
 * command ended. */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"

/* filter's exit status: findings that fail the gate win over inputs that
 * could not be read whole. */
int gl_cli_filter_status(const GlOutcome *outcome)
{
    if (outcome->gate_result.failed)
        return GL_EXIT_FINDINGS;
    return outcome->problems ? GL_EXIT_ERROR : GL_EXIT_CLEAN;
}

/* run's exit status says, alone, which of the gate and the command failed
 * (minitest, rspec and rake exit 1 on a failing test, as a leak did):
 * findings that fail the gate, with (5) or without (1) a failing command;
 * else Valgrind or gemleak trouble (3); else a failing command (4). A
 * command that failed before any Ruby was checked (a compiler's error, a
 * missing gem) failed: that nothing was checked follows from it, and is
 * no trouble of Valgrind's or gemleak's. */
int gl_cli_run_status(const GlOutcome *outcome, const GlRunResult *run)
{
    gboolean command_failed = run->status != 0;
    if (outcome->gate_result.failed)
        return command_failed ? GL_EXIT_FINDINGS_AND_COMMAND_FAILED : GL_EXIT_FINDINGS;
    if (outcome->problems && !(command_failed && outcome->checked_nothing_only))
        return GL_EXIT_ERROR;
    return command_failed ? GL_EXIT_COMMAND_FAILED : GL_EXIT_CLEAN;
}

/* Returns: (transfer full): how the command ended, as the last line says
 * it; a command that passed only because an engine stopped some of its
 * processes (@halted, their exit status the engine's) did not pass. */
static char *command_ending(const GlRunResult *run, guint halted, const char *engine)
{
    if (run->status == 0 && halted > 0)
        return g_strdup_printf("the command's status says nothing: %s stopped %u process%s at "
                               "%s first error, and what %s would have run next did not run",
                               engine != NULL ? engine : "the engine", halted,
                               halted == 1 ? "" : "es", halted == 1 ? "its" : "their",
                               halted == 1 ? "it" : "they");
    if (run->status == 0)
        return g_strdup("the command passed");
    if (run->killed_by != 0)
        return g_strdup_printf("the command failed (killed by %s)", gl_signal_name(run->killed_by));
    return g_strdup_printf("the command failed (exit status %d)", run->status);
}

/* Returns: (transfer full): the text report's last line in run: the exit
 * status and what it means; @coverage names the engine and what it
 * writes. */
char *gl_cli_run_exit_line(int status, const GlRunResult *run, const GlOutcome *outcome,
                           const GlRunCoverage *coverage)
{
    g_autofree char *command = command_ending(run, outcome->halted, coverage->engine);
    g_autofree char *trouble = gl_trouble_describe(outcome->trouble, coverage);
    switch (status) {
    case GL_EXIT_CLEAN:
        return g_strdup_printf("gemleak: exit status 0: nothing fails the gate, and %s", command);
    case GL_EXIT_FINDINGS:
        return g_strdup_printf("gemleak: exit status 1: findings fail the gate; %s", command);
    case GL_EXIT_ERROR:
        return g_strdup_printf("gemleak: exit status 3: %s (see gemleak's messages); nothing "
                               "fails the gate, and %s", trouble, command);
    case GL_EXIT_COMMAND_FAILED:
        if (outcome->checked_nothing_only)
            return g_strdup_printf("gemleak: exit status 4: %s; nothing was checked", command);
        return g_strdup_printf("gemleak: exit status 4: %s; nothing fails the gate", command);
    case GL_EXIT_FINDINGS_AND_COMMAND_FAILED:
        return g_strdup_printf("gemleak: exit status 5: findings fail the gate, and %s", command);
    default:
        return g_strdup_printf("gemleak: exit status %d", status);
    }
}
