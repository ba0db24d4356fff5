/* The imports of the modules loaded, by their GOT entries (got.c): what
 * the libraries of src/agent/ redirect to their trampoline (via_int.h):
 * the allocation front (alloc_via.c) an extension's calls of Ruby's
 * allocation functions, the client library (growth.c) a target's calls of
 * every allocation function. Compiled into each library that redirects
 * calls; nothing of it is exported. src/agent/ only.
 *
 * Every call a module makes to a function of another goes through its GOT:
 * an R_X86_64_JUMP_SLOT entry (a PLT's, bound at the first call unless the
 * module was bound now) or an R_X86_64_GLOB_DAT one (a call without a PLT,
 * -fno-plt, Rust; a function's address taken). */
#ifndef GEMLEAK_AGENT_GOT_INT_H
#define GEMLEAK_AGENT_GOT_INT_H

#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_int.h"

/* ---- names, by globs ---------------------------------------------------------- */

#define GOT_MAX_GLOBS 256

/* Function names, as globs. How each glob matches: its length when it is
 * a name, or a prefix ending in its one '*'; 0 for any other pattern,
 * which fnmatch reads. Every import of every module loaded is looked up
 * here: fnmatch, in a UTF-8 locale, converts both strings first. */
typedef struct {
    const char *globs[GOT_MAX_GLOBS];
    size_t plain_length[GOT_MAX_GLOBS];
    char plain_prefix[GOT_MAX_GLOBS];
    size_t n;
} GotNames;

/* Adds @glob (kept as it is: the caller's for the process's life). */
void got_names_add(GotNames *names, const char *glob) AGENT_HIDDEN;

/* Adds the globs of the file at @path, one a line ('#' a comment), read
 * into memory mapped for it (kept for the process's life). Returns: 0
 * when it cannot be read. */
int got_names_read(GotNames *names, const char *path) AGENT_HIDDEN;

/* Returns: 1 if @name matches one of @names' globs. */
int got_names_match(const GotNames *names, const char *name) AGENT_HIDDEN;

/* ---- a module's imports -------------------------------------------------------- */

typedef struct {
    uintptr_t base;
    uintptr_t low, high;          /* the module's mappings */
    uintptr_t relro_low, relro_high;
    const ElfW(Sym) *symbols;
    const char *strings;
} GotModule;

/* Called for each GOT entry of @module that imports a function by name:
 * the entry's address @slot, the function's @name. */
typedef void (*GotImport)(const GotModule *module, uintptr_t slot, const char *name, void *data);

/* Calls @each for every import of the module @info says (a JUMP_SLOT or
 * GLOB_DAT entry of an undefined symbol). */
void got_each_import(const struct dl_phdr_info *info, GotImport each, void *data) AGENT_HIDDEN;

/* Returns: the function the entry @slot of @module calls for @name: its
 * value, or, while it is not bound yet (lazily, the value points into the
 * module's PLT), what the loader will bind it to; 0 when nothing. */
uintptr_t got_bound(const GotModule *module, uintptr_t slot, const char *name) AGENT_HIDDEN;

/* Writes @value into the entry @slot of @module (its page made writable
 * for it when it is RELRO). */
void got_write(const GotModule *module, uintptr_t slot, uintptr_t value) AGENT_HIDDEN;

/* ---- the modules seen ------------------------------------------------------- */

#define GOT_MAX_MODULES 1024

/* The modules a library has redirected the calls of, by their bases. */
typedef struct {
    uintptr_t done[GOT_MAX_MODULES];
    size_t n;
    /* The loader's count of modules unloaded: a module loaded where one was
     * unloaded is looked at again. */
    unsigned long long unloads_seen;
} GotSeen;

/* Returns: 1 the first time the module @info says (@size: dl_iterate_phdr's)
 * is met at its base (it is noted), 0 after. Every module is met again
 * once a module was unloaded: redirecting again what is redirected
 * changes nothing. */
int got_seen_first(GotSeen *seen, const struct dl_phdr_info *info, size_t size) AGENT_HIDDEN;

#endif
