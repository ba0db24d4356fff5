/* Preloaded into every process section 12 of bench/bench.sh counts under
 * Callgrind: a forked child starts its count at zero. Callgrind's child
 * of a fork carries on with the counts its parent had made so far, so a
 * suite that forks would count its parent's work once per child. */
#include <pthread.h>
#include <valgrind/callgrind.h>

static void forked(void)
{
    CALLGRIND_ZERO_STATS;
}

__attribute__((constructor)) static void start(void)
{
    pthread_atfork(NULL, NULL, forked);
}
