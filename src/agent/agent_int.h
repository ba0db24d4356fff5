/* What every library of src/agent/ shares (the client library, the
 * allocation front): symbols that stay inside their library, and memory
 * of its own. src/agent/ only.
 *
 * Built on its own: no GLib; it runs inside the suite's Ruby, which may
 * load two of these libraries at once: nothing here is exported, so that
 * neither calls the other's copy. */
#ifndef GEMLEAK_AGENT_INT_H
#define GEMLEAK_AGENT_INT_H

#include <stddef.h>
#include <sys/mman.h>

/* A symbol the library's files share, and nothing outside it sees. */
#define AGENT_HIDDEN __attribute__((visibility("hidden")))

/* Returns: @bytes of zeroed memory, mapped, or NULL. Never the allocator's:
 * these libraries run inside its hooks and its allocation functions, where
 * an allocation would call itself. */
static inline void *agent_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

#endif
