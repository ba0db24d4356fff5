/* The native half of `gemleak run --per-test`: Valgrind's client requests,
 * which only code running in the traced process can make. gemleak embeds
 * this library and writes it beside the Ruby helper, which requires it as
 * a Ruby extension (native.c). Outside Valgrind every request is a few
 * no-op instructions, so the library is harmless wherever it is loaded.
 * Built without Valgrind's headers (Fedora keeps them in valgrind-devel),
 * it makes none, and says so (GEMLEAK_CLIENT_REQUESTS, which gemleak reads
 * from its bytes before --per-test runs under Valgrind).
 *
 * Built on its own (no GLib): it runs inside the suite's Ruby, not inside
 * gemleak. */
#include <stddef.h>

#if GEMLEAK_CLIENT_REQUESTS
#include <valgrind/valgrind.h>
#include <valgrind/memcheck.h>
#else
#define RUNNING_ON_VALGRIND 0
#define VALGRIND_PRINTF(...) ((void) 0)
#define VALGRIND_DO_ADDED_LEAK_CHECK ((void) 0)
#define VALGRIND_DO_CHANGED_LEAK_CHECK ((void) 0)
#define VALGRIND_DO_LEAK_CHECK ((void) 0)
#define VALGRIND_COUNT_LEAKS(a, b, c, d) ((void) 0)
#define VALGRIND_COUNT_LEAK_BLOCKS(a, b, c, d) ((void) 0)
#endif

#include "gemleak/base/protocol.h"

/* What gemleak looks for in this library's bytes. */
#define SPELLED(x) #x
#define SPELLED_VALUE(x) SPELLED(x)
__attribute__((used)) static const char requests[] =
    GL_PROTO_CLIENT_REQUESTS_MARK SPELLED_VALUE(GEMLEAK_CLIENT_REQUESTS);

/* Not in a header: native.c calls these. */
int gemleak_client_running_on_valgrind(void);
void gemleak_client_marker(const char *text);
void gemleak_client_leak_check(void);
void gemleak_client_full_leak_check(void);
void gemleak_client_changed_leak_check(void);
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

/* A leak check that reports every loss record that changed since the last
 * check, whichever way (--growth's measure, every leak kind shown: a
 * still reachable record that grew is what it looks for), "N (+D) bytes
 * in M (+E) blocks". */
void gemleak_client_changed_leak_check(void)
{
    VALGRIND_DO_CHANGED_LEAK_CHECK;
}

/* Returns: what the last leak check found lost, in all: @which 0, the
 * bytes definitely or indirectly lost; 1, their blocks; 2, the bytes
 * possibly lost; 3, their blocks (0 natively). The helper compares these
 * from one check to the next to tell whether the tests between lost
 * anything, without reading Valgrind's output. */
long gemleak_client_lost(int which)
{
    unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;
    /* without Valgrind's headers both requests are nothing: one branch */
    if (which == 0 || which == 2) { /* NOLINT(bugprone-branch-clone) */
        VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
    } else {
        VALGRIND_COUNT_LEAK_BLOCKS(leaked, dubious, reachable, suppressed);
    }
    (void) reachable;
    (void) suppressed;
    return (long) (which < 2 ? leaked : dubious);
}
