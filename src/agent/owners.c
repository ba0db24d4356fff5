/* The native half of `gemleak run --per-test` under a sanitizer's engine
 * (LeakSanitizer, AddressSanitizer): which test allocated each block.
 *
 * The runtime's allocator calls a hook on every allocation and free
 * (__sanitizer_install_malloc_and_free_hooks). While a test runs, each
 * block allocated is recorded with the test, its owner, in a hash table of
 * addresses; a block freed leaves it. At exit, after Ruby has freed its
 * own memory (RUBY_FREE_AT_EXIT) and before the runtime's leak check (an
 * atexit handler registered before this library was loaded, so run after
 * ours), the blocks still recorded are written to the runtime's report
 * file, a line for each owner's few dozen blocks:
 *
 *   gemleak:owned<TAB>NAME<TAB>LOCATION<TAB>ADDRESS ADDRESS ...
 *
 * (hexadecimal addresses; NAME and LOCATION as the helper escaped them,
 * both empty for what was allocated before the first test). gemleak reads
 * the leak check's objects (report_objects=1) against those lines: no leak
 * check runs while the tests do, and nothing runs twice.
 *
 * Where the allocation front (gemleak_alloc.so) comes first and is on, it
 * records the owners instead, of the blocks it judges alone (only theirs
 * can be findings), and no hook is installed here: a probe of this table
 * at every allocation and free was a tenth of a clean suite's time. The
 * front puts a block's owner in the block's own stack, by its index
 * (alloc.c's owner_framed()), and keeps a table only for the few that
 * cannot carry it (alloc_owners.c); at exit this library writes the
 * owners' names by their index, a line each,
 *
 *   gemleak:owner<TAB>INDEX<TAB>NAME<TAB>LOCATION
 *
 * and the front's table as the lines above.
 *
 * LeakSanitizer's realloc calls no hook: under it, per test, gemleak
 * preloads this library before the runtime, and its realloc (below) is the
 * one every caller reaches; it calls the runtime's and records the block
 * it returns as the running test's, as the runtime records realloc's stack
 * for it. Where the allocation front (gemleak_alloc.so) comes first, its
 * realloc is every caller's, and it tells this library of each block it
 * reallocated. Under AddressSanitizer, whose realloc calls the hooks, the
 * library is only loaded, and its realloc is nobody's. --growth's count
 * (growth.c) is told of each reallocation the same way.
 *
 * The table lives in memory mapped here, never in the allocator it hooks:
 * a hook that allocated would call itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gemleak/base/protocol.h"
#include "growth_int.h"
#include "hidden_table_int.h"

/* Not in a header: native.c calls these (GemLeakHelper::Native). */
int gemleak_client_owners_start(void);
void gemleak_client_owner(const char *text);
const char *gemleak_client_current_test(void);
void gemleak_client_owners_write(void);
void *realloc(void *block, size_t size);
/* Not in a header: the allocation front (alloc.c's find_next()) asks it. */
void *gemleak_client_next_realloc(void *found);

typedef void (*OnRealloc)(void (*)(void *, void *));
typedef int (*FrontOwners)(const volatile uint32_t *);
typedef HiddenSlot *(*FrontOwned)(size_t *, size_t *);

/* Addresses a line of the report holds: the runtime's Printf cuts long lines. */
#define LINE_ADDRESSES ((size_t) 32)
#define ADDRESS_CHARS ((size_t) 17) /* a space, 16 hexadecimal digits */
#define LINE_BYTES 4096
#define ARENA_BYTES ((size_t) 1 << 20)
#define SCRUB_BYTES ((size_t) 64 * 1024)

/* The table's lock, taken at every allocation and free: a spin lock held
 * for a few probes of the table, without a call into the C library. */
static volatile char lock;

static void lock_table(void)
{
    agent_spin_lock(&lock);
}

static void unlock_table(void)
{
    agent_spin_unlock(&lock);
}
/* The blocks allocated while a test ran, each with its owner (an index
 * into owners). When no memory is left for it, a block is nobody's, and
 * gemleak says it was lost at exit. */
static HiddenTable table = HIDDEN_TABLE_INIT((size_t) 1 << 16);
/* The owner of what is allocated now: 0, none (nothing is recorded). Read
 * by every allocation, in any thread, without the lock. */
static volatile uint32_t current;
/* owners[i] (i >= 1): "NAME\tLOCATION", mapped; n_owners in use. */
static char **owners;
static uint32_t n_owners;
static uint32_t owners_capacity;
static char *arena;        /* where the next owner's text goes, mapped */
static size_t arena_left;
static AgentReportLine report_line;
static int started;
/* The front's blocks (alloc_owners.c), when it keeps the table: NULL when
 * this library does. */
static FrontOwned front_owned;

static void allocated(const volatile void *block, size_t size)
{
    (void) size;
    uint32_t owner = current;
    if (owner == 0 || block == NULL)
        return;
    lock_table();
    hidden_table_put(&table, block, owner);
    unlock_table();
}

static void freed(const volatile void *block)
{
    if (block == NULL || table.used == 0)
        return;
    lock_table();
    hidden_table_take(&table, block);
    unlock_table();
}

/* Writes over the stack below this frame, where the frames just returned
 * from (snprintf's) left a block's address as it is, before the runtime's
 * leak check scans what of it is in use again. */
static void scrub(void)
{
    volatile char stack[SCRUB_BYTES];
    for (size_t i = 0; i < sizeof stack; i++)
        stack[i] = 0;
}

static int by_owner(const void *a, const void *b)
{
    const HiddenSlot *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* The owners by their index, for the blocks that carry theirs in their
 * stack (the allocation front's, alloc.c's owner_framed()): a
 * "gemleak:owner<TAB>INDEX<TAB>NAME<TAB>LOCATION" line for each, some
 * dozens to a call of the runtime's writer (one write each). */
static void write_owner_names(void)
{
    static char lines[LINE_BYTES];
    size_t used = 0;
    for (uint32_t i = 1; i < n_owners; i++) {
        if (owners[i] == NULL)
            continue;
        int length = snprintf(lines + used, sizeof lines - used,
                              "%s" GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNER "\t%u\t%s",
                              used > 0 ? "\n" : "", (unsigned) i, owners[i]);
        if (length >= 0 && (size_t) length < sizeof lines - used) {
            used += (size_t) length;
            continue;
        }
        lines[used] = '\0';
        if (used > 0)
            report_line(lines);
        used = 0;
        length = snprintf(lines, sizeof lines, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNER "\t%u\t%s",
                          (unsigned) i, owners[i]);
        if (length >= 0 && (size_t) length < sizeof lines)
            used = (size_t) length;  /* else the helper cut the name long before this */
    }
    if (used > 0)
        report_line(lines);
}

/* At exit: the owners' names (write_owner_names()), and the blocks still
 * recorded in a table, a line for each owner's few dozen; once (exit!
 * writes them before it ends the process). */
static void write_owned(void)
{
    static int written;
    if (written)
        return;
    written = 1;
    current = 0;
    size_t k = 0, bytes = 0;
    HiddenSlot *live = NULL;
    if (front_owned != NULL && report_line != NULL)
        write_owner_names();
    if (front_owned != NULL) {
        live = front_owned(&k, &bytes);
    } else {
        lock_table();
        size_t n = table.used;
        live = n > 0 ? agent_map(n * sizeof *live) : NULL;
        k = live != NULL ? hidden_table_copy(&table, live, n) : 0;
        bytes = n * sizeof *live;
        unlock_table();
    }
    if (live == NULL)
        return;
    if (report_line == NULL) {
        munmap(live, bytes);
        return;
    }
    qsort(live, k, sizeof *live, by_owner);
    static char line[LINE_BYTES];
    for (size_t i = 0; i < k;) {
        const char *owner = live[i].value < n_owners ? owners[live[i].value] : NULL;
        if (owner == NULL) {
            i++;
            continue;
        }
        int length = snprintf(line, sizeof line, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNED "\t%s\t",
                              owner);
        if (length < 0 || (size_t) length >= sizeof line - ADDRESS_CHARS * LINE_ADDRESSES) {
            i++;
            continue;  /* the helper cuts names long before this */
        }
        size_t end = i;
        while (end < k && end - i < LINE_ADDRESSES && live[end].value == live[i].value) {
            length += snprintf(line + length, sizeof line - (size_t) length, "%s%lx",
                               end > i ? " " : "", (unsigned long) HIDDEN_KEY(live[end].key));
            end++;
        }
        report_line(line);
        i = end;
    }
    munmap(live, bytes);
    scrub();
}

/* Writes the lines now: for a process about to end without running its
 * atexit handlers (Ruby's exit!), before the check the helper makes. */
void gemleak_client_owners_write(void)
{
    if (started)
        write_owned();
}

typedef void *(*Realloc)(void *, size_t);
static Realloc next_realloc;

/* The realloc after this library's: the runtime's (when preloaded before
 * it), or the C library's. */
static Realloc find_realloc(void)
{
    if (next_realloc == NULL)
        next_realloc = (Realloc) (uintptr_t) dlsym(RTLD_NEXT, "realloc");
    return next_realloc;
}

__attribute__((constructor)) static void find_realloc_early(void)
{
    find_realloc();
}

static void *own_realloc(void *block, size_t size);

/* Returns: the realloc after this library's when @found, the realloc that
 * comes after the allocation front's, is this library's; else @found. The
 * front calls the hooks this library registers (gemleak_alloc_on_realloc)
 * itself: its realloc goes straight to the runtime's, and this one, which
 * would do nothing more, is not on the way (a call more of every realloc
 * of Ruby's, 2.5M instructions of strscan's suite). */
void *gemleak_client_next_realloc(void *found)
{
    return found == (void *) (uintptr_t) own_realloc ? (void *) (uintptr_t) find_realloc() : found;
}

/* A block reallocated while a test runs is that test's (a new block, at a
 * new address or not); one reallocated outside any test leaves the table
 * when it moved. */
static void reallocated(void *block, void *moved)
{
    uint32_t owner = current;
    if (!started || front_owned != NULL || (owner == 0 && moved == block))
        return;
    lock_table();
    if (block != NULL && moved != block)
        hidden_table_take(&table, block);
    if (moved != NULL && owner != 0)
        hidden_table_put(&table, moved, owner);
    unlock_table();
}

/* realloc, by a name of this file's own: gemleak_client_next_realloc()
 * knows it (a call of realloc here would name the first in the process). */
void *realloc(void *block, size_t size) __attribute__((alias("own_realloc")));

static void *own_realloc(void *block, size_t size)
{
    void *moved = find_realloc()(block, size);
    if (moved == NULL && size != 0)
        return moved;
    if (started)
        reallocated(block, moved);
    growth_reallocated(block, moved);  /* --growth's count of a target's memory */
    return moved;
}

/* A fork while another thread holds the lock would leave the child's held
 * for ever. */
static void before_fork(void)
{
    lock_table();
}

static void after_fork(void)
{
    unlock_table();
}

/* Starts recording owners: the runtime's hooks, the lines at exit. Returns:
 * 1 when they are in place (or were), 0 when the process has no sanitizer
 * runtime that takes hooks. */
int gemleak_client_owners_start(void)
{
    if (started)
        return 1;
    AgentInstallHooks install;
    if (!agent_sanitizer_runtime(&install, &report_line))
        return 0;
    if (atexit(write_owned) != 0 || pthread_atfork(before_fork, after_fork, after_fork) != 0)
        return 0;
    /* The allocation front, when it is on: it keeps the table. */
    FrontOwners front_owners =
        (FrontOwners) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_alloc_owners_start");
    FrontOwned owned = (FrontOwned) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_alloc_owned");
    if (front_owners != NULL && owned != NULL && front_owners(&current)) {
        front_owned = owned;
        started = 1;
        return 1;
    }
    if (install(allocated, freed) == 0)
        return 0;
    /* The allocation front (gemleak_alloc.so), when it comes first: its
     * realloc, not this library's, is the one every caller reaches. */
    OnRealloc on_realloc = (OnRealloc) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_alloc_on_realloc");
    if (on_realloc != NULL)
        on_realloc(reallocated);
    started = 1;
    return 1;
}

/* Returns: a copy of @text, in memory mapped here (owned here for the
 * process's life), or NULL. */
static char *keep(const char *text)
{
    size_t size = strlen(text) + 1;
    if (size > arena_left) {
        size_t chunk = size > ARENA_BYTES ? size : ARENA_BYTES;
        arena = agent_map(chunk);
        if (arena == NULL) {
            arena_left = 0;
            return NULL;
        }
        arena_left = chunk;
    }
    char *copy = memcpy(arena, text, size);
    arena += size;
    arena_left -= size;
    return copy;
}

/* What is allocated from now on is @text's ("NAME\tLOCATION", escaped by
 * the helper; "\t": before the first test), or nobody's (NULL). The text
 * is copied, into memory mapped here; a name is given once per test. */
void gemleak_client_owner(const char *text)
{
    if (text == NULL) {
        current = 0;
        return;
    }
    if (n_owners == 0)
        n_owners = 1;  /* 0 is nobody */
    if (n_owners >= owners_capacity) {
        uint32_t more = owners_capacity == 0 ? 1024 : owners_capacity * 2;
        char **grown = agent_map(more * sizeof *grown);
        if (grown == NULL)
            return;
        if (owners != NULL) {
            memcpy(grown, owners, owners_capacity * sizeof *grown);
            munmap(owners, owners_capacity * sizeof *owners);
        }
        owners = grown;
        owners_capacity = more;
    }
    char *copy = keep(text);
    if (copy == NULL)
        return;
    owners[n_owners] = copy;
    current = n_owners++;
}

/* Returns: (transfer none) (nullable): the test that allocates now,
 * "NAME\tLOCATION" (memory mapped here, for the process's life); NULL
 * before the first test, between the suite's end and exit, and when
 * nothing is recorded. The library gemleak preloads gives it to what
 * this process execs (GL_PROTO_ORIGIN_VARIABLE): it runs without an
 * allocation, in a vfork's child too. */
const char *gemleak_client_current_test(void)
{
    uint32_t owner = current;
    if (owner == 0 || owner >= n_owners)
        return NULL;
    const char *text = owners[owner];
    return text[0] == '\t' && text[1] == '\0' ? NULL : text;
}
