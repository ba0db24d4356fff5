/* What the client library's files call of growth.c (the live memory per
 * site of a target, under a sanitizer's engine: growth.c says how it is
 * counted). src/agent/ only. */
#ifndef GEMLEAK_AGENT_GROWTH_INT_H
#define GEMLEAK_AGENT_GROWTH_INT_H

#include "agent_int.h"

/* @block was reallocated into @moved (NULL: freed by a realloc to size 0),
 * where the runtime's realloc calls no hook (LeakSanitizer's): owners.c's
 * realloc and the allocation front's callback say it. Saying it twice
 * changes nothing. */
void growth_reallocated(void *block, void *moved) AGENT_HIDDEN;

#endif
