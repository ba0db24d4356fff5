/* The native half of `gemleak run --per-test`: Valgrind's client requests,
 * which only code running in the traced process can make. gemleak embeds
 * this library and writes it beside the Ruby helper, which loads it with
 * Fiddle. Outside Valgrind every request is a few no-op instructions, so
 * the library is harmless wherever it is loaded.
 *
 * Built on its own (no GLib, no gemleak headers): it runs inside the
 * suite's Ruby, not inside gemleak. */
#include <stddef.h>

#include <valgrind/valgrind.h>
#include <valgrind/memcheck.h>

/* Not in a header: Fiddle finds these by name. */
int gemleak_client_running_on_valgrind(void);
void gemleak_client_marker(const char *text);
void gemleak_client_leak_check(void);
void gemleak_client_full_leak_check(void);
long gemleak_client_lost(int which);

/* Returns: nonzero when the process runs under Valgrind (its depth of
 * nesting), 0 natively. */
int gemleak_client_running_on_valgrind(void)
{
    return (int) RUNNING_ON_VALGRIND;
}

/* Writes @text (one line, escaped by the helper) to Valgrind's output: a
 * <clientmsg> in its XML, which the errors after it are read against. */
void gemleak_client_marker(const char *text)
{
    if (text != NULL)
        VALGRIND_PRINTF("%s", text);
}

/* A leak check that reports only the loss records that grew since the last
 * check: what the test that just ended lost. DO_CHANGED would also report
 * those that shrank, which no test is to blame for. */
void gemleak_client_leak_check(void)
{
    VALGRIND_DO_ADDED_LEAK_CHECK;
}

/* A leak check that reports every loss record: right after a fork, what
 * the child inherited. The ADDED check would leave out the loss records
 * its parent's checks (--per-test) already reported, whose state Valgrind
 * copied into the child with the rest of the process. */
void gemleak_client_full_leak_check(void)
{
    VALGRIND_DO_LEAK_CHECK;
}

/* Returns: what the last leak check found lost, in all: @which 0, the
 * bytes definitely or indirectly lost; 1, their blocks; 2, the bytes
 * possibly lost; 3, their blocks (0 natively). The helper compares these
 * from one check to the next to tell whether the tests between lost
 * anything, without reading Valgrind's output. */
long gemleak_client_lost(int which)
{
    unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;
    if (which == 0 || which == 2) {
        VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
    } else {
        VALGRIND_COUNT_LEAK_BLOCKS(leaked, dubious, reachable, suppressed);
    }
    (void) reachable;
    (void) suppressed;
    return (long) (which < 2 ? leaked : dubious);
}
