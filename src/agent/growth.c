/* The native half of `gemleak run --growth` under a sanitizer's engine
 * (LeakSanitizer, AddressSanitizer): the memory live per allocation site
 * of a target (an extension of the project's), measured after each
 * repetition of a test (gemleak/base/protocol.h, GL_PROTO_GROWTH_*, says
 * the measures and the lines; the helper calls these through native.c).
 *
 * A site is a target's call of an allocation function: the function, and
 * the target's return address. In each target loaded (again at each
 * measure, for the targets loaded since), the GOT entries of the
 * allocation functions it imports (the C library's, C++'s operator new,
 * and those of GEMLEAK_ALLOC_APIS: Ruby's xmalloc family and the functions
 * rule 2 says allocate for their caller) are sent through a trampoline
 * (via_int.h), which notes the call's site, on this thread, for as long as
 * it runs. The first time a site is noted, its stack is unwound (libgcc's
 * unwinder, which needs no frame pointers) and kept: never again, and
 * never inside the allocator.
 *
 * The runtime's allocation hook (__sanitizer_install_malloc_and_free_hooks)
 * records each block allocated while a site is noted (the innermost, and
 * only within VIA_REACH of the stack below it: deeper, a callback into
 * Ruby allocates for Ruby) with its site and size, in a table of
 * addresses; its free hook takes it out (and the allocation front's free
 * says each as it is called). LeakSanitizer's realloc calls no hook: a target's own
 * calls of realloc and of Ruby's xrealloc family are followed as they
 * return, and every realloc as owners.c sees it (growth_reallocated()).
 * Per site: the bytes and blocks live.
 *
 * Not counted: frees (the free hook sees every one, whoever calls free),
 * and the functions that call back (st_foreach and its kind): what they
 * allocate is their callbacks', which are counted where they allocate.
 *
 * A measure writes its marker and, for each site whose live bytes or
 * blocks changed since the last, the site's stack once a process
 * ("gemleak:site<TAB>SITE" and the runtime's frame lines, unsymbolized)
 * and "gemleak:grew<TAB>SITE<TAB>LIVE-BYTES<TAB>CHANGE-BYTES<TAB>
 * LIVE-BLOCKS<TAB>CHANGE-BLOCKS", into the runtime's report.
 *
 * All it keeps is in memory mapped here, never the allocator it hooks: a
 * hook that allocated would call itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unwind.h>

#include "gemleak/base/protocol.h"
#include "got_int.h"
#include "growth_int.h"
#include "hidden_table_int.h"
#include "via_int.h"

/* Not in a header: native.c calls these (GemLeakHelper::Native). */
int gemleak_client_growth_target(const char *path);
int gemleak_client_growth_start(void);
int gemleak_client_growth_checkpoint(const char *text);

typedef void (*OnRealloc)(void (*)(void *, void *));
typedef void (*OnFree)(void (*)(const volatile void *));
typedef void (*OnVia)(const void *);
typedef size_t (*AllocatedSize)(const volatile void *);
typedef int (*DuringGc)(void);
typedef _Unwind_Reason_Code (*Backtrace)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*GetIP)(struct _Unwind_Context *);

#define MAX_TARGETS 256
#define MAX_SITES ((uint32_t) 1 << 16)    /* site 0 is none */
#define SITE_SLOTS ((size_t) 1 << 17)     /* the index of sites by their call */
/* The frames a site's stack shows, as many as the runtime's own stacks
 * (malloc_context_size, which gemleak run sets to 30). */
#define MAX_PCS 30
/* The calls noted on a thread at once (deeper, the outermost go): few,
 * as the library's TLS is initial-exec, and a library Ruby dlopens shares
 * a few hundred bytes of it with the others. */
#define MAX_NOTES 8
#define SIZE_BITS 44
#define SIZE_MASK (((uintptr_t) 1 << SIZE_BITS) - 1)
/* A block's value in the table: its site and its size. */
#define PACK(site, size) (((uintptr_t) (site) << SIZE_BITS) | ((uintptr_t) (size) & SIZE_MASK))
#define SITE_OF(value) ((uint32_t) ((value) >> SIZE_BITS))
#define SIZE_OF(value) ((value) & SIZE_MASK)
#define LINE_BYTES (PATH_MAX + 256)

/* The functions counted beside GEMLEAK_ALLOC_APIS's: the C library's
 * and C++'s allocation functions, as the target imports them. */
static const char *const allocation_functions[] = {
    "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign",
    "valloc", "pvalloc", "strdup", "__strdup", "strndup", "__strndup",
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
};
/* Those that move a block (the block first, the block moved returned):
 * the target's calls are followed whatever the runtime's realloc says. */
static const char *const moving_functions[] = {
    "realloc", "reallocarray", "ruby_xrealloc", "ruby_xrealloc2", "ruby_sized_xrealloc",
    "ruby_sized_xrealloc2", "rb_xrealloc_mul_add",
};
/* Functions of those globs that allocate nothing for their caller but call
 * back into it (and into Ruby). */
static const char *const calling_back[] = { "*foreach*" };

typedef struct {
    uintptr_t ret;             /* the target's return address */
    uint32_t stub;             /* the function it called, by its stub */
    uint32_t n_pcs;
    uintptr_t pcs[MAX_PCS];    /* return addresses from the target's call (pcs[0] = ret) outward */
    int64_t live_bytes, live_blocks;
    int64_t said_bytes, said_blocks;   /* at the last measure */
    int written;               /* its stack is in this process's report */
} Site;

/* A call running on this thread: its trampoline's frame, its site. */
typedef struct {
    uintptr_t frame;
    uint32_t site;
} Note;

static __thread Note notes[MAX_NOTES] __attribute__((tls_model("initial-exec")));
static __thread int n_notes __attribute__((tls_model("initial-exec")));

/* The functions redirected, a stub each: what the stub calls (the entry's
 * value before), and the function a stack shows for it (frame #0: not a
 * library of gemleak's, whose frames the reader takes out). */
static struct {
    uintptr_t call;
    uintptr_t shown;
    int moves;                 /* one of moving_functions */
} stubs[VIA_N_STUBS];
static uint32_t n_stubs;

static struct {
    dev_t dev;
    ino_t ino;
} targets[MAX_TARGETS];
static size_t n_targets;

static Site *sites;               /* mapped, MAX_SITES of them */
static uint32_t n_sites = 1;
static uint32_t *site_slots;      /* mapped, SITE_SLOTS: a site's index, 0 none */
static HiddenTable table = HIDDEN_TABLE_INIT((size_t) 1 << 12);
static GotNames names;
static GotNames excluded;
static GotSeen seen;
static AgentReportLine report_line;
typedef void (*Symbolize)(void *, const char *, char *, size_t);
static Symbolize symbolize;  /* the runtime's __sanitizer_symbolize_pc, nullable */
static AllocatedSize allocated_size;
static DuringGc during_gc;   /* Ruby's rb_during_gc */
static Backtrace unwind_backtrace;
static GetIP unwind_get_ip;
static int started;

/* The table's and the sites' lock, taken at every allocation at a site and
 * every free while the table holds blocks: a spin lock held for a few
 * probes, without a call into the C library. */
static volatile char lock;

static void lock_table(void)
{
    agent_spin_lock(&lock);
}

static void unlock_table(void)
{
    agent_spin_unlock(&lock);
}

/* ---- the sites ----------------------------------------------------------------- */

static size_t slot_of(uintptr_t ret, uint32_t stub)
{
    return (size_t) (((uint64_t) (ret ^ ((uintptr_t) stub << 48)) * UINT64_C(0x9E3779B97F4A7C15)) >> 40) &
           (SITE_SLOTS - 1);
}

/* Returns: the site of the call from @ret of stub @stub's function; 0 when
 * it is not known yet. Without the lock: a site is published whole. */
static uint32_t find_site(uintptr_t ret, uint32_t stub)
{
    for (size_t i = slot_of(ret, stub);; i = (i + 1) & (SITE_SLOTS - 1)) {
        uint32_t site = __atomic_load_n(&site_slots[i], __ATOMIC_ACQUIRE);
        if (site == 0 || (sites[site].ret == ret && sites[site].stub == stub))
            return site;
    }
}

typedef struct {
    uintptr_t ret;
    int found;
    uint32_t n;
    uintptr_t *pcs;
} Unwinding;

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *context, void *data)
{
    Unwinding *unwinding = data;
    uintptr_t pc = (uintptr_t) unwind_get_ip(context);
    if (!unwinding->found) {
        if (pc != unwinding->ret)
            return _URC_NO_REASON;  /* this library's frames, and the trampoline's */
        unwinding->found = 1;
    }
    if (pc == 0 || unwinding->n >= MAX_PCS - 1)
        return _URC_END_OF_STACK;
    unwinding->pcs[unwinding->n++] = pc;
    return _URC_NO_REASON;
}

/* Returns: a new site for the call from @ret of stub @stub's function, its
 * stack unwound from here (the trampoline's enter); 0 when there is no
 * room left. */
static uint32_t new_site(uintptr_t ret, uint32_t stub)
{
    uintptr_t pcs[MAX_PCS];
    Unwinding unwinding = { .ret = ret, .pcs = pcs };
    if (unwind_backtrace != NULL && unwind_get_ip != NULL)
        unwind_backtrace(one_frame, &unwinding);
    if (unwinding.n == 0)
        pcs[unwinding.n++] = ret;  /* the unwinder lost its way: the call at least */
    lock_table();
    uint32_t site = find_site(ret, stub);  /* another thread's, meanwhile */
    if (site == 0 && n_sites < MAX_SITES) {
        site = n_sites;
        Site *s = &sites[site];
        s->ret = ret;
        s->stub = stub;
        s->n_pcs = unwinding.n;
        memcpy(s->pcs, pcs, unwinding.n * sizeof pcs[0]);
        size_t i = slot_of(ret, stub);
        while (site_slots[i] != 0)
            i = (i + 1) & (SITE_SLOTS - 1);
        __atomic_store_n(&site_slots[i], site, __ATOMIC_RELEASE);
        __atomic_store_n(&n_sites, site + 1, __ATOMIC_RELEASE);
    }
    unlock_table();
    return site;
}

/* ---- the trampoline ------------------------------------------------------------ */

#if VIA_STUBS
VIA_TRAMPOLINE;
#endif

uintptr_t gl_via_enter(unsigned index, uintptr_t ret, uintptr_t frame)
{
    uint32_t stub = (uint32_t) index;
    uintptr_t call = stub < VIA_N_STUBS ? stubs[stub].call : 0;
    /* calls a longjmp left (a raise through them) end at a call made
     * where they ran or above */
    while (n_notes > 0 && notes[n_notes - 1].frame <= frame)
        n_notes--;
    uint32_t site = find_site(ret, stub);
    if (site == 0)
        site = new_site(ret, stub);
    if (n_notes == MAX_NOTES) {
        memmove(notes, notes + 1, (MAX_NOTES - 1) * sizeof notes[0]);
        n_notes--;
    }
    notes[n_notes++] = (Note) { .frame = frame, .site = site };
    if (stub < VIA_N_STUBS && stubs[stub].moves)
        VIA_SPARE(frame) = VIA_ARGUMENT(frame);  /* the block it moves, for gl_via_leave */
    return call;
}

static void moved_at(uint32_t site, void *block, void *moved);

void gl_via_leave(uintptr_t frame)
{
    for (int i = n_notes - 1; i >= 0; i--)
        if (notes[i].frame == frame) {
            uint32_t site = notes[i].site;
            n_notes = i;  /* and those after it, which a longjmp left */
            if (site != 0 && sites[site].stub < VIA_N_STUBS && stubs[sites[site].stub].moves &&
                VIA_RESULT(frame) != 0)
                moved_at(site, (void *) VIA_SPARE(frame), (void *) VIA_RESULT(frame));
            return;
        }
}

/* Returns: the site of the innermost call noted on this thread above @sp,
 * when @sp is within its reach; 0 for none. */
static uint32_t noted_site(uintptr_t sp)
{
    for (int i = n_notes - 1; i >= 0; i--)
        if (notes[i].frame > sp)
            return notes[i].frame - sp < VIA_REACH ? notes[i].site : 0;
    return 0;
}

/* ---- the blocks ---------------------------------------------------------------- */

/* With the lock held: @block, of @size, is @site's from now on. */
static void record(const volatile void *block, uint32_t site, size_t size)
{
    uintptr_t old;
    if (hidden_table_pop(&table, block, &old)) {
        sites[SITE_OF(old)].live_bytes -= (int64_t) SIZE_OF(old);
        sites[SITE_OF(old)].live_blocks--;
    }
    if (hidden_table_put(&table, block, PACK(site, size))) {
        sites[site].live_bytes += (int64_t) (size & SIZE_MASK);
        sites[site].live_blocks++;
    }
}

/* With the lock held: @block is nobody's. Returns: the site it was, 0. */
static uint32_t forget(const volatile void *block)
{
    uintptr_t old;
    if (!hidden_table_pop(&table, block, &old))
        return 0;
    sites[SITE_OF(old)].live_bytes -= (int64_t) SIZE_OF(old);
    sites[SITE_OF(old)].live_blocks--;
    return SITE_OF(old);
}

static void allocated(const volatile void *block, size_t size)
{
    if (n_notes == 0 || block == NULL)
        return;
    uint32_t site = noted_site((uintptr_t) __builtin_frame_address(0));
    /* Ruby's allocation functions may start a collection, which allocates
     * for Ruby (its mark stack): never the site's */
    if (site == 0 || (during_gc != NULL && during_gc()))
        return;
    lock_table();
    record(block, site, size);
    unlock_table();
}

static void freed(const volatile void *block)
{
    if (block == NULL || __atomic_load_n(&table.used, __ATOMIC_RELAXED) == 0)
        return;
    lock_table();
    forget(block);
    unlock_table();
}

/* @block was moved into @moved below a call of @site (0: none noted): the
 * block moved takes that site, or keeps the block's. */
static void moved_at(uint32_t site, void *block, void *moved)
{
    size_t size = moved != NULL && allocated_size != NULL ? allocated_size(moved) : 0;
    lock_table();
    uint32_t was = block != NULL ? forget(block) : 0;
    if (site == 0)
        site = was;
    if (moved != NULL && site != 0)
        record(moved, site, size);
    unlock_table();
}

void growth_reallocated(void *block, void *moved)
{
    if (started)
        moved_at(noted_site((uintptr_t) __builtin_frame_address(0)), block, moved);
}

/* ---- the targets' GOT entries ------------------------------------------------- */

/* Returns: 1 if the module at @path is one of gemleak's libraries. */
static int gemleak_library(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    return strncmp(base, GL_PROTO_LIBRARY_PREFIX, strlen(GL_PROTO_LIBRARY_PREFIX)) == 0;
}

static int in_gemleak_library(uintptr_t address)
{
    Dl_info info;
    return address != 0 && dladdr((void *) address, &info) != 0 && info.dli_fname != NULL &&
           gemleak_library(info.dli_fname);
}

typedef struct {
    const char *name;
    uintptr_t found;
} Definition;

/* The first module, in the loader's order, that defines @data's name, but
 * gemleak's libraries (the allocation front's malloc comes before the
 * runtime's) and the program. */
static int definition_in(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    Definition *definition = data;
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0' || gemleak_library(info->dlpi_name))
        return 0;
    void *handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == NULL)
        return 0;
    void *found = dlsym(handle, definition->name);
    dlclose(handle);
    Dl_info where;
    if (found == NULL || dladdr(found, &where) == 0 || (uintptr_t) where.dli_fbase != (uintptr_t) info->dlpi_addr)
        return 0;
    definition->found = (uintptr_t) found;
    return 1;
}

/* Returns: the function a stack shows for @name, which the target's entry
 * calls at @call: the runtime's malloc where the allocation front's comes
 * first, Ruby's function where the front's trampoline does. */
static uintptr_t shown_function(uintptr_t call, const char *name)
{
    if (!in_gemleak_library(call))
        return call;
    uintptr_t global = (uintptr_t) dlsym(RTLD_DEFAULT, name);
    if (global != 0 && !in_gemleak_library(global))
        return global;
    Definition definition = { .name = name };
    dl_iterate_phdr(definition_in, &definition);
    return definition.found != 0 ? definition.found : call;
}

/* Returns: the stub that calls @call (@name's), 0 when there are no more. */
static uintptr_t stub_for(uintptr_t call, const char *name)
{
    for (uint32_t i = 0; i < n_stubs; i++)
        if (stubs[i].call == call)
            return VIA_STUB(i);
    if (n_stubs == VIA_N_STUBS)
        return 0;
    stubs[n_stubs].call = call;
    stubs[n_stubs].shown = shown_function(call, name);
    for (size_t i = 0; i < sizeof moving_functions / sizeof moving_functions[0]; i++)
        stubs[n_stubs].moves |= strcmp(name, moving_functions[i]) == 0;
    return VIA_STUB(n_stubs++);
}

static int counted(const char *name)
{
    return got_names_match(&names, name) && !got_names_match(&excluded, name);
}

static void patch_slot(const GotModule *module, uintptr_t slot, const char *name, void *data)
{
    (void) data;
    if (!counted(name))
        return;
    uintptr_t current = *(volatile uintptr_t *) slot;
    if (current >= VIA_STUB(0) && current < VIA_STUB(VIA_N_STUBS))
        return;  /* redirected already */
    uintptr_t call = got_bound(module, slot, name);
    uintptr_t stub = call != 0 ? stub_for(call, name) : 0;
    if (stub != 0)
        got_write(module, slot, stub);
}

static int is_target(const char *path)
{
    struct stat st;
    if (path == NULL || *path == '\0' || stat(path, &st) != 0)
        return 0;
    for (size_t i = 0; i < n_targets; i++)
        if (targets[i].dev == st.st_dev && targets[i].ino == st.st_ino)
            return 1;
    return 0;
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) data;
    if (is_target(info->dlpi_name) && got_seen_first(&seen, info, size))
        got_each_import(info, patch_slot, NULL);
    return 0;
}

static void patch_targets(void)
{
#if VIA_STUBS
    if (n_targets > 0)
        dl_iterate_phdr(patch_module, NULL);
#endif
}

/* Counts the allocation sites of the module at @path (an extension's real
 * path) from the start on, or from now on. Returns: 1 when it is a file. */
int gemleak_client_growth_target(const char *path)
{
    struct stat st;
    if (path == NULL || stat(path, &st) != 0)
        return 0;
    if (!is_target(path) && n_targets < MAX_TARGETS) {
        targets[n_targets].dev = st.st_dev;
        targets[n_targets].ino = st.st_ino;
        n_targets++;
    }
    if (started)
        patch_targets();
    return 1;
}

/* ---- the start ----------------------------------------------------------------- */

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

/* The child writes a report of its own: every site's stack anew. */
static void in_child(void)
{
    for (uint32_t i = 1; i < n_sites; i++)
        sites[i].written = 0;
    unlock_table();
}

/* GL_PROTO_ALLOC_APIS_VARIABLE as the process started: the helper takes
 * the run's variables out of the environment the suite sees (core.rb,
 * leave_environment), and counting starts at exit. The string stays where
 * the environment was. */
static const char *apis_at_start;

__attribute__((constructor)) static void growth_variables(void)
{
    apis_at_start = getenv(GL_PROTO_ALLOC_APIS_VARIABLE);
}

/* Starts counting: the runtime's hooks, the targets' calls. Returns: 1
 * when it counts (or did), 0 when the process has no sanitizer runtime
 * that takes hooks, or no room for the sites. */
int gemleak_client_growth_start(void)
{
    if (started)
        return 1;
    AgentInstallHooks install;
    int runtime = agent_sanitizer_runtime(&install, &report_line);
    symbolize = (Symbolize) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_symbolize_pc");
    if (!VIA_STUBS || !runtime)
        return 0;
    allocated_size = (AllocatedSize) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_get_allocated_size");
    unwind_backtrace = (Backtrace) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_Backtrace");
    unwind_get_ip = (GetIP) (uintptr_t) dlsym(RTLD_DEFAULT, "_Unwind_GetIP");
    during_gc = (DuringGc) (uintptr_t) dlsym(RTLD_DEFAULT, "rb_during_gc");
    sites = agent_map(MAX_SITES * sizeof *sites);
    site_slots = agent_map(SITE_SLOTS * sizeof *site_slots);
    if (sites == NULL || site_slots == NULL)
        return 0;
    for (size_t i = 0; i < sizeof allocation_functions / sizeof allocation_functions[0]; i++)
        got_names_add(&names, allocation_functions[i]);
    for (size_t i = 0; i < sizeof calling_back / sizeof calling_back[0]; i++)
        got_names_add(&excluded, calling_back[i]);
    if (apis_at_start != NULL && *apis_at_start != '\0')
        got_names_read(&names, apis_at_start);
    if (pthread_atfork(before_fork, after_fork, in_child) != 0 || install(allocated, freed) == 0)
        return 0;
    /* The allocation front (gemleak_alloc.so), when it comes first: its
     * realloc, not this library's, is the one every caller reaches. */
    OnRealloc on_realloc = (OnRealloc) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_alloc_on_realloc");
    if (on_realloc != NULL)
        on_realloc(growth_reallocated);
    /* and its free, which tells of each block as it is called */
    OnFree on_free = (OnFree) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_alloc_on_free");
    if (on_free != NULL)
        on_free(freed);
    /* and where its stacks, made without frame pointers, find the target's
     * call past this library's trampoline */
    OnVia on_via = (OnVia) (uintptr_t) dlsym(RTLD_DEFAULT, "gemleak_alloc_on_via");
    if (on_via != NULL)
        on_via(gemleak_via_return);
    started = 1;
    patch_targets();
    return 1;
}

/* ---- a measure ------------------------------------------------------------------ */

typedef struct {
    uintptr_t pc;
    uintptr_t base;
    const char *name;
} Place;

static int place_in(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    Place *place = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t low = (uintptr_t) info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && place->pc >= low && place->pc < low + ph->p_memsz) {
            place->base = (uintptr_t) info->dlpi_addr;
            place->name = info->dlpi_name;
            return 1;
        }
    }
    return 0;
}

/* Writes the frame line "    #@number 0xPC (MODULE+0xOFFSET)" of @pc, as
 * the runtime writes a frame it has no symbols for. */
static void write_unnamed_frame(unsigned number, uintptr_t pc)
{
    static char line[LINE_BYTES];
    static char program[PATH_MAX];
    Place place = { .pc = pc };
    dl_iterate_phdr(place_in, &place);
    const char *module = place.name;
    if (module != NULL && *module == '\0') {
        if (program[0] == '\0') {
            ssize_t n = readlink("/proc/self/exe", program, sizeof program - 1);
            program[n > 0 ? n : 0] = '\0';
        }
        module = program;
    }
    if (module == NULL || *module == '\0')
        snprintf(line, sizeof line, "    #%u 0x%lx (<unknown module>)", number, (unsigned long) pc);
    else
        snprintf(line, sizeof line, "    #%u 0x%lx (%s+0x%lx)", number, (unsigned long) pc, module,
                 (unsigned long) (pc - place.base));
    report_line(line);
}

/* The frames at @pc in gemleak's frame format, as the runtime writes a
 * leak's (GL_SANITIZER_FRAME_FORMAT: "Gm N MODULE", "Gf N FUNCTION", "Gs N
 * FILE", "G N PC OFFSET MODULE-OFFSET LINE COLUMN", a frame for each
 * function inlined there, innermost first), as the runtime renders them,
 * so that a growing site reads as its leak would, file and line included:
 * where the runtime names no frame (symbolize=0) or cannot name this one,
 * "<null>", which gemleak names from the object after the run, as it names
 * a leak's frames (read/sanitizer_names.h); in the runtime's default
 * format where it does not know the module. Returns: the next number. */
static unsigned write_frame(unsigned number, uintptr_t pc)
{
    static const char *const formats[] = { "%m", "%f", "%s", "%p %o %q %l %c" };
    static const char *const tags[] = { "Gm", "Gf", "Gs", "G" };
    static char buffers[4][LINE_BYTES];
    static char line[LINE_BYTES + 32];
    const char *texts[4][16];
    int counts[4] = { 0 };
    for (int f = 0; f < 4 && symbolize != NULL; f++) {
        memset(buffers[f], 0, sizeof buffers[f]);
        symbolize((void *) pc, formats[f], buffers[f], sizeof buffers[f] - 1);
        for (const char *p = buffers[f]; *p != '\0' && counts[f] < 16; p += strlen(p) + 1)
            texts[f][counts[f]++] = p;
    }
    int frames = counts[0];
    for (int f = 1; f < 4; f++)
        if (counts[f] < frames)
            frames = counts[f];
    if (frames == 0 || strcmp(texts[0][0], "<null>") == 0) {
        write_unnamed_frame(number, pc);
        return number + 1;
    }
    for (int i = 0; i < frames; i++, number++)
        for (int f = 0; f < 4; f++) {
            snprintf(line, sizeof line, "%s %u %s", tags[f], number, texts[f][i]);
            report_line(line);
        }
    return number;
}

/* Writes @site's stack: #0 the function called, #1 the target's call, then
 * its callers, each a return address less one, as the runtime prints them. */
static void write_site(uint32_t site)
{
    static char line[64];
    const Site *s = &sites[site];
    snprintf(line, sizeof line, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_SITE "\t%u", (unsigned) site);
    report_line(line);
    /* #0 is a function's entry, not a return address: the runtime's
     * symbolizer, which takes one from what it is given, would name the
     * bytes before it (padding, or the function before) */
    write_unnamed_frame(0, stubs[s->stub].shown);
    unsigned number = 1;
    for (uint32_t i = 0; i < s->n_pcs; i++)
        number = write_frame(number, s->pcs[i] - 1);
}

/* Writes @text (the measure's marker) as a line of the runtime's report,
 * then each site whose live memory changed since the last measure (its
 * stack first, once a process). Returns: 1 when written, 0 when not
 * counting. */
int gemleak_client_growth_checkpoint(const char *text)
{
    if (!started || text == NULL)
        return 0;
    patch_targets();  /* the targets loaded since */
    report_line(text);
    static char line[256];
    uint32_t last = __atomic_load_n(&n_sites, __ATOMIC_ACQUIRE);
    for (uint32_t i = 1; i < last; i++) {
        Site *s = &sites[i];
        lock_table();
        int64_t bytes = s->live_bytes, blocks = s->live_blocks;
        int64_t more_bytes = bytes - s->said_bytes, more_blocks = blocks - s->said_blocks;
        s->said_bytes = bytes;
        s->said_blocks = blocks;
        unlock_table();
        if (more_bytes == 0 && more_blocks == 0)
            continue;
        if (!s->written) {
            write_site(i);
            s->written = 1;
        }
        snprintf(line, sizeof line,
                 GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_GREW "\t%u\t%lld\t%lld\t%lld\t%lld", (unsigned) i,
                 (long long) bytes, (long long) more_bytes, (long long) blocks, (long long) more_blocks);
        report_line(line);
    }
    return 1;
}
