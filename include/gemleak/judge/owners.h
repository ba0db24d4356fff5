/* --per-test under a sanitizer's engine: which tests a leak's blocks were
 * allocated in. Nothing is checked while the tests run; the client library
 * records which test allocated each block, and writes, at exit, those
 * still allocated (GlProcess.owners). Before each exit record goes a copy
 * for each test that allocated blocks of it, with their numbers and
 * "gemleak:owned NAME LOCATION" for a marker, as a check's record while
 * the process ran: the attribution (attribute.h) names those tests. */
#ifndef GEMLEAK_OWNERS_H
#define GEMLEAK_OWNERS_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/judge/checks.h"

/* Returns: (transfer full) (nullable): the copies of @record (an exit
 * check's leak, its blocks listed) for each test of @owners (address ->
 * owner's marker, nullable) that allocated blocks of it, in the order its
 * blocks name them (GlRecord*); NULL when there are none. A block @owners
 * does not name is @origin's (nullable: the test that started the
 * process, an owner's marker). Blocks a check while the process ran saw
 * (@checks, nullable: a forked child's, of what it inherited) are the
 * parent's: they name no test of this process. */
GPtrArray *gl_owners_copies(const GlRecord *record, GHashTable *owners, const char *origin,
                            const GlChecks *checks);

#endif
