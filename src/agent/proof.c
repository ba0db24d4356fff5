/* Part of the library gemleak preloads into every process of a run
 * (gemleak_preload.so): under a sanitizer's engine, the proof that a
 * process's leak check ran to its end.
 *
 * The runtime writes nothing for a process without leaks, and nothing for
 * one that never reached its check: killed, crashed in Ruby's own signal
 * handler, ended with _exit, or out of disk for its report. gemleak could
 * not tell those apart, and took each for "no leaks". So gemleak turns the
 * runtime's own check at exit off (leak_check_at_exit=0) and this library
 * makes it instead, at exit, from an atexit handler registered as the
 * process starts, which runs after every handler registered later (the
 * client library's owners, for --per-test) and after Ruby freed its memory
 * (RUBY_FREE_AT_EXIT, in ruby_cleanup before exit): the runtime's
 * recoverable check, then "gemleak:done" written into the process's report
 * through the runtime, after the check's report. A process's report
 * without it was not checked to its end, and gemleak says so.
 *
 * Only where gemleak asks for it (GEMLEAK_ENGINE_RUNTIME names the runtime,
 * and the runtime is in the process): elsewhere it does nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "gemleak/base/protocol.h"
#include "agent_int.h"

typedef void (*Say)(const char *);

typedef void (*BeforeCheck)(void);

static AgentCheck check;
static Say say;
/* The allocation front's (gemleak_alloc.so, alloc.c), when it is loaded:
 * what the report needs of it before the check. */
static BeforeCheck before_check;
static AgentChecking checking;

/* Also the helper's, before exit! (which runs no handler). */
void gemleak_preload_done(void);

void gemleak_preload_done(void)
{
    if (say == NULL)
        return;
    if (before_check != NULL)
        before_check();
    if (check != NULL)
        agent_checked(check, checking);
    say(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_DONE);
}

static void at_exit_check(void)
{
    gemleak_preload_done();
}

__attribute__((constructor)) static void proof_start(void)
{
    const char *runtime = getenv(GL_PROTO_RUNTIME_VARIABLE);
    if (runtime == NULL || *runtime == '\0' || getenv(GL_PROTO_PROOF_VARIABLE) == NULL)
        return;
    check = (AgentCheck) (uintptr_t) dlsym(RTLD_DEFAULT, "__lsan_do_recoverable_leak_check");
    say = (Say) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_report_error_summary");
    before_check = (BeforeCheck) (uintptr_t) dlsym(RTLD_DEFAULT, GL_PROTO_BEFORE_CHECK_FUNCTION);
    checking = (AgentChecking) (uintptr_t) dlsym(RTLD_DEFAULT, GL_PROTO_CHECKING_FUNCTION);
    if (say != NULL)
        atexit(at_exit_check);
}
