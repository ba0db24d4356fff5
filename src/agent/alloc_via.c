/* The calls an extension makes to Ruby's allocation functions (gemleak_
 * alloc.so; alloc.c says what the library does).
 *
 * Ruby's own code allocates for Ruby (a string, an array, a method cache),
 * but in the functions whose memory their caller releases (rule 2: the
 * xmalloc family, the structs of Data objects, st tables, Onigmo's
 * regexps...): there it allocates for the extension that called it. On a
 * Ruby without frame pointers the runtime's fast unwinder stops at the
 * allocating call, deep in Ruby's allocator, and cannot tell the two
 * apart. So, as each extension is loaded, its calls of those functions
 * (their GOT entries: every call an extension makes to Ruby goes through
 * one) are sent through a trampoline here, which notes the call (the
 * extension's return address and the function) for as long as it runs, on
 * this thread; an allocation made below it is given a stack that shows the
 * call (alloc.c): the function, this library's frame, the extension's. An
 * allocation of Ruby's code shown without one was made outside any such
 * call, for Ruby.
 *
 * GEMLEAK_ALLOC_APIS names the file of the functions' names (globs, one a
 * line): gemleak writes it from its rules (src/judge/rules.c), so that the
 * rule and what is watched are one list. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gemleak/base/protocol.h"
#include "alloc_int.h"
#include "got_int.h"
#include "via_int.h"

__thread Via alloc_vias[MAX_VIAS] __attribute__((tls_model("initial-exec")));
__thread int alloc_n_vias __attribute__((tls_model("initial-exec")));

/* The functions redirected so far, a trampoline each (index = stub). */
static uintptr_t apis[VIA_N_STUBS];
static size_t n_apis;
static GotNames names;
static GotSeen seen;
static uintptr_t ruby_base;   /* Ruby's own module, whose functions these are */
static uintptr_t ruby_low, ruby_high;  /* its code */

#if ALLOC_FRAMES
VIA_TRAMPOLINE;
#endif

uintptr_t gl_via_enter(unsigned index, uintptr_t ret, uintptr_t frame)
{
    uintptr_t api = index < VIA_N_STUBS ? apis[index] : 0;
    if (alloc_n_vias == MAX_VIAS) {
        /* full of calls a longjmp left (a raise through them): the oldest go */
        memmove(alloc_vias, alloc_vias + 1, (MAX_VIAS - 1) * sizeof alloc_vias[0]);
        alloc_n_vias--;
    }
    alloc_vias[alloc_n_vias++] = (Via) { .frame = frame, .ret = ret, .api = api };
    return api;
}

void gl_via_leave(uintptr_t frame)
{
    for (int i = alloc_n_vias - 1; i >= 0; i--)
        if (alloc_vias[i].frame == frame) {
            alloc_n_vias = i;  /* and those after it, which a longjmp left */
            return;
        }
}

/* ---- which functions ------------------------------------------------------------- */

/* Ruby's module, by where ruby_xmalloc is (alloc_module_find(): not
 * dladdr(), as patch_slot() had called for each slot). */
void alloc_via_start(void)
{
    const char *path = getenv(GL_PROTO_ALLOC_APIS_VARIABLE);
    if (path == NULL || *path == '\0' || !got_names_read(&names, path))
        return;
    AllocModule ruby = { .pc = (uintptr_t) dlsym(RTLD_DEFAULT, "ruby_xmalloc") };
    alloc_module_find(&ruby);
    ruby_base = ruby.base;
    ruby_low = ruby.low;
    ruby_high = ruby.high;
}

/* ---- the modules' GOT entries ------------------------------------------------- */

#if ALLOC_FRAMES
/* Returns: the trampoline for @real (redirected once, whoever calls it), 0
 * when there are no more. */
static uintptr_t trampoline(uintptr_t real)
{
    for (size_t i = 0; i < n_apis; i++)
        if (apis[i] == real)
            return VIA_STUB(i);
    if (n_apis == VIA_N_STUBS)
        return 0;
    apis[n_apis] = real;
    return VIA_STUB(n_apis++);
}

/* Redirects the GOT entry at @slot for @name when it names a watched
 * function of Ruby's. */
static void patch_slot(const GotModule *module, uintptr_t slot, const char *name, void *data)
{
    (void) data;
    if (!got_names_match(&names, name))
        return;
    uintptr_t current = *(volatile uintptr_t *) slot;
    uintptr_t real = got_bound(module, slot, name);
    if (real < ruby_low || real >= ruby_high)
        return;  /* not Ruby's: left alone */
    uintptr_t stub = trampoline(real);
    if (stub == 0 || stub == current)
        return;
    got_write(module, slot, stub);
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) data;
    uintptr_t base = (uintptr_t) info->dlpi_addr;
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0' || base == ruby_base)
        return 0;  /* the program, and Ruby's own library */
    if (got_seen_first(&seen, info, size))
        got_each_import(info, patch_slot, NULL);
    return 0;
}

void alloc_via_patch(void)
{
    if (names.n == 0 || ruby_high == 0)
        return;
    alloc_thread.busy++;
    dl_iterate_phdr(patch_module, NULL);
    alloc_thread.busy--;
}
#else
void alloc_via_patch(void)
{
}
#endif
