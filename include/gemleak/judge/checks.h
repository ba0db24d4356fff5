/* Valgrind's added leak checks, re-created from an engine whose checks
 * while the process runs report every object lost so far, again in each
 * (LeakSanitizer's __lsan_do_recoverable_leak_check, which the helper
 * calls at a fork, before exit! and exec; GlOutputTraits.full_checks).
 * What the attribution (attribute.h) reads is Valgrind's added check: the
 * loss records that grew since the last check, with the numbers of every
 * block of them seen so far. And once the process got to its exit check, a
 * loss record a check while it ran reported and the exit check did not
 * was never lost: its objects were referenced from memory LeakSanitizer
 * does not scan (Ruby's object pages it was not told of, its shape tree, a
 * fiber's stack) and were freed by exit. A block truly lost stays lost.
 * Knows the records, nothing of a format. */
#ifndef GEMLEAK_CHECKS_H
#define GEMLEAK_CHECKS_H

#include <glib.h>
#include "gemleak/base/record.h"

typedef struct GlChecks GlChecks;

/* A record and where it was read among its input's (its order). */
typedef struct {
    GlRecord *record;
    guint64 order;
} GlOrdered;

/* Returns: (transfer full): the checks of one process's output. */
GlChecks *gl_checks_new(void);
void gl_checks_free(GlChecks *checks);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlChecks, gl_checks_free)

/* Takes @record (transfer full), read at @order. A leak of a check while
 * the process ran (at_exit FALSE) is kept when a block of it (by its
 * address, record->blocks) is one no earlier check saw, or, without its
 * blocks listed, when its numbers grew; it then has the numbers of every
 * block seen so far, and is held until gl_checks_finish(); else it is
 * dropped. Any other record is handed back: an exit check's leak is
 * remembered, to confirm the checks' before it.
 * Returns: (transfer full) (nullable): @record, to judge now, or NULL. */
GlRecord *gl_checks_take(GlChecks *checks, GlRecord *record, guint64 order);

/* Returns: how many records of checks while the process ran are held. */
guint gl_checks_held(const GlChecks *checks);

/* Returns: TRUE if a check while the process ran saw the block at
 * @address of @record's loss record. */
gboolean gl_checks_saw(const GlChecks *checks, const GlRecord *record, guint64 address);

/* The end of the process's output: @reached_exit, it got to its exit check
 * (GlProcess.reached_exit).
 * Returns: (transfer full): the held records (GlOrdered, in the order they
 * were read), without those the exit check did not report again when it
 * ran: those were never lost. */
GArray *gl_checks_finish(GlChecks *checks, gboolean reached_exit);

/* Returns: how many records of checks while the process ran were left out
 * because the exit check did not report their loss record. */
guint gl_checks_not_lost(const GlChecks *checks);

#endif
