/* The allocation sites met so far (gemleak_alloc.so, on a Ruby without
 * frame pointers): the first judged allocation at each site gets its whole
 * stack in the fast pass (alloc.c's front()), unwound there.
 *
 * Why: without frame pointers the fast pass's stack of a judged block is
 * the allocating call and the extension's call on the way, and a leak so
 * cut sends the tests that allocated it to run again (the exact pass). A
 * leak on a path a suite takes once (an error path, a planted leak) is a
 * site's first allocation: whole from the start, nothing runs again. A
 * site that allocates without end pays one unwind, then nothing. A block
 * that is not its site's first is cut as before, and runs again if lost.
 *
 * A site is the allocating call's return address and the extension's call
 * of Ruby's allocation function on the way (0: none), as one key. Two sites
 * whose keys meet in a slot, or a table full, only cost the whole stack of
 * the later one (it runs again if lost). A forked child keeps its parent's
 * sites: what the parent unwound, the child does not. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "agent_int.h"
#include "alloc_int.h"

#define SITES_LOG 13       /* slots: 8,192 sites, 64 KiB */
#define PROBES 16          /* slots looked at before a site is taken as met */

/* Mapped, not this library's memory: the check scans that whole, and the
 * table holds no pointer (its pages, untouched, were faulted in by each
 * check for nothing). */
static uintptr_t *sites;

int alloc_sites_start(void)
{
    sites = agent_map(((size_t) 1 << SITES_LOG) * sizeof *sites);
    return sites != NULL;
}

static inline uintptr_t key_of(uintptr_t caller, uintptr_t via_ret)
{
    uintptr_t key = caller ^ (via_ret * (uintptr_t) 0x9E3779B97F4A7C15ULL);
    return key != 0 ? key : 1;
}

static inline size_t slot_of(uintptr_t key)
{
    return (size_t) ((key * (uintptr_t) 0xD6E8FEB86659FD93ULL) >> (64 - SITES_LOG));
}

/* Looks the site up; with @claim, puts it in the first free slot it meets.
 * Returns: 1 if it was there (another thread's claim too), or there is no
 * room; 0 if not (with @claim, it is now). */
static int look(uintptr_t caller, uintptr_t via_ret, int claim)
{
    uintptr_t key = key_of(caller, via_ret);
    size_t at = slot_of(key);
    for (int probe = 0; probe < PROBES; probe++, at = (at + 1) & (((size_t) 1 << SITES_LOG) - 1)) {
        uintptr_t held = __atomic_load_n(&sites[at], __ATOMIC_RELAXED);
        if (held == 0 && claim &&
            __atomic_compare_exchange_n(&sites[at], &held, key, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return 0;
        /* what the slot holds (what another thread put there, when the
         * exchange failed) */
        if (held == key)
            return 1;
        if (held == 0)
            return 0;
    }
    return 1;
}

int alloc_sites_met(uintptr_t caller, uintptr_t via_ret)
{
    return look(caller, via_ret, 0);
}

int alloc_sites_claim(uintptr_t caller, uintptr_t via_ret)
{
    return !look(caller, via_ret, 1);
}
