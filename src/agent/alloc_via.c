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
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemleak/base/protocol.h"
#include "alloc_int.h"

#define MAX_APIS 256
#define MAX_GLOBS 256
#define MAX_MODULES 1024
__thread Via alloc_vias[MAX_VIAS] __attribute__((tls_model("initial-exec")));
__thread int alloc_n_vias __attribute__((tls_model("initial-exec")));

/* The functions redirected so far, a trampoline each (index = stub). */
static uintptr_t apis[MAX_APIS];
static size_t n_apis;
static char *globs[MAX_GLOBS];
/* How each glob matches: its length when it is a name, or a prefix ending
 * in its one '*'; 0 for any other pattern, which fnmatch reads. Every
 * import of every module loaded is looked up here: fnmatch, in a UTF-8
 * locale, converts both strings first. */
static size_t plain_length[MAX_GLOBS];
static char plain_prefix[MAX_GLOBS];
static size_t n_globs;
static uintptr_t modules_done[MAX_MODULES];
static size_t n_modules_done;
/* The loader's count of modules unloaded: a module loaded where one was
 * unloaded is looked at again. */
static unsigned long long unloads_seen;
static uintptr_t ruby_base;   /* Ruby's own module, whose functions these are */

/* Not in a header: the assembly calls them. */
uintptr_t gl_via_enter(unsigned index, uintptr_t ret, uintptr_t frame);
void gl_via_leave(uintptr_t frame);

#if ALLOC_FRAMES
/* gemleak_via_stubs: MAX_APIS entries of 16 bytes, each the index of its
 * function into r11 and a jump to gemleak_via, which saves the arguments,
 * notes the call (gl_via_enter, which returns the function), calls it with
 * the same registers and 8 words of the caller's stack arguments, notes
 * its end (gl_via_leave) and returns what it returned. A frame of its own
 * (rbp), so that unwinders, exact ones and the runtime's fast one, walk
 * through it to the extension; gemleak_via_return is the return address
 * its frame shows. */
__asm__(".text\n"
        ".p2align 4\n"
        ".globl gemleak_via\n"
        ".hidden gemleak_via\n"
        ".type gemleak_via,@function\n"
        "gemleak_via:\n"
        "  .cfi_startproc\n"
        "  push %rbp\n"
        "  .cfi_def_cfa_offset 16\n"
        "  .cfi_offset %rbp, -16\n"
        "  mov %rsp, %rbp\n"
        "  .cfi_def_cfa_register %rbp\n"
        "  sub $208, %rsp\n"
        "  mov %rdi, 0(%rsp)\n"
        "  mov %rsi, 8(%rsp)\n"
        "  mov %rdx, 16(%rsp)\n"
        "  mov %rcx, 24(%rsp)\n"
        "  mov %r8, 32(%rsp)\n"
        "  mov %r9, 40(%rsp)\n"
        "  mov %rax, 48(%rsp)\n"
        "  movdqa %xmm0, 64(%rsp)\n"
        "  movdqa %xmm1, 80(%rsp)\n"
        "  movdqa %xmm2, 96(%rsp)\n"
        "  movdqa %xmm3, 112(%rsp)\n"
        "  movdqa %xmm4, 128(%rsp)\n"
        "  movdqa %xmm5, 144(%rsp)\n"
        "  movdqa %xmm6, 160(%rsp)\n"
        "  movdqa %xmm7, 176(%rsp)\n"
        "  mov %r11d, %edi\n"
        "  mov 8(%rbp), %rsi\n"
        "  mov %rbp, %rdx\n"
        "  call gl_via_enter\n"
        "  mov %rax, %r10\n"
        "  mov 0(%rsp), %rdi\n"
        "  mov 8(%rsp), %rsi\n"
        "  mov 16(%rsp), %rdx\n"
        "  mov 24(%rsp), %rcx\n"
        "  mov 32(%rsp), %r8\n"
        "  mov 40(%rsp), %r9\n"
        "  mov 48(%rsp), %rax\n"
        "  movdqa 64(%rsp), %xmm0\n"
        "  movdqa 80(%rsp), %xmm1\n"
        "  movdqa 96(%rsp), %xmm2\n"
        "  movdqa 112(%rsp), %xmm3\n"
        "  movdqa 128(%rsp), %xmm4\n"
        "  movdqa 144(%rsp), %xmm5\n"
        "  movdqa 160(%rsp), %xmm6\n"
        "  movdqa 176(%rsp), %xmm7\n"
        "  sub $64, %rsp\n"
        "  mov 16(%rbp), %r11\n"
        "  mov %r11, 0(%rsp)\n"
        "  mov 24(%rbp), %r11\n"
        "  mov %r11, 8(%rsp)\n"
        "  mov 32(%rbp), %r11\n"
        "  mov %r11, 16(%rsp)\n"
        "  mov 40(%rbp), %r11\n"
        "  mov %r11, 24(%rsp)\n"
        "  mov 48(%rbp), %r11\n"
        "  mov %r11, 32(%rsp)\n"
        "  mov 56(%rbp), %r11\n"
        "  mov %r11, 40(%rsp)\n"
        "  mov 64(%rbp), %r11\n"
        "  mov %r11, 48(%rsp)\n"
        "  mov 72(%rbp), %r11\n"
        "  mov %r11, 56(%rsp)\n"
        "  call *%r10\n"
        ".globl gemleak_via_return\n"
        ".hidden gemleak_via_return\n"
        "gemleak_via_return:\n"
        "  add $64, %rsp\n"
        "  mov %rax, 0(%rsp)\n"
        "  mov %rdx, 8(%rsp)\n"
        "  movdqa %xmm0, 64(%rsp)\n"
        "  movdqa %xmm1, 80(%rsp)\n"
        "  mov %rbp, %rdi\n"
        "  call gl_via_leave\n"
        "  mov 0(%rsp), %rax\n"
        "  mov 8(%rsp), %rdx\n"
        "  movdqa 64(%rsp), %xmm0\n"
        "  movdqa 80(%rsp), %xmm1\n"
        "  leave\n"
        "  .cfi_def_cfa %rsp, 8\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size gemleak_via, .-gemleak_via\n"
        ".p2align 4\n"
        ".globl gemleak_via_stubs\n"
        ".hidden gemleak_via_stubs\n"
        "gemleak_via_stubs:\n"
        "  .set gl_via_index, 0\n"
        "  .rept 256\n"
        "  mov $gl_via_index, %r11d\n"
        "  jmp gemleak_via\n"
        "  .p2align 4\n"
        "  .set gl_via_index, gl_via_index + 1\n"
        "  .endr\n");

extern const char gemleak_via_stubs[] AGENT_HIDDEN;
#define STUB(index) ((uintptr_t) gemleak_via_stubs + 16 * (uintptr_t) (index))
#endif

uintptr_t gl_via_enter(unsigned index, uintptr_t ret, uintptr_t frame)
{
    uintptr_t api = index < MAX_APIS ? apis[index] : 0;
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

static int watched(const char *name)
{
    for (size_t i = 0; i < n_globs; i++) {
        if (plain_length[i] == 0) {
            if (fnmatch(globs[i], name, 0) == 0)
                return 1;
        } else if (globs[i][0] == name[0] && strncmp(globs[i], name, plain_length[i]) == 0 &&
                   (plain_prefix[i] || name[plain_length[i]] == '\0')) {
            return 1;
        }
    }
    return 0;
}

/* Sets how glob @i matches (plain_length, plain_prefix). */
static void classify_glob(size_t i)
{
    const char *glob = globs[i];
    size_t length = strcspn(glob, "*?[\\");
    if (glob[length] == '\0') {
        plain_length[i] = length;
    } else if (glob[length] == '*' && glob[length + 1] == '\0' && length > 0) {
        plain_length[i] = length;
        plain_prefix[i] = 1;
    }
}

void alloc_via_start(void)
{
    const char *path = getenv(GL_PROTO_ALLOC_APIS_VARIABLE);
    if (path == NULL || *path == '\0')
        return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    char *text = NULL;
    size_t length = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (1 << 20)) {
        length = (size_t) st.st_size;
        text = agent_map(length + 1);
        size_t got = 0;
        while (text != NULL && got < length) {
            ssize_t n = read(fd, text + got, length - got);
            if (n <= 0)
                break;
            got += (size_t) n;
        }
        length = got;
    }
    close(fd);
    if (text == NULL)
        return;
    for (char *line = text; line < text + length && n_globs < MAX_GLOBS;) {
        char *end = memchr(line, '\n', (size_t) (text + length - line));
        if (end == NULL)
            end = text + length;
        *end = '\0';
        if (*line != '\0' && *line != '#') {
            globs[n_globs] = line;
            classify_glob(n_globs++);
        }
        line = end + 1;
    }
    void *probe = dlsym(RTLD_DEFAULT, "ruby_xmalloc");
    Dl_info info;
    if (probe != NULL && dladdr(probe, &info) != 0)
        ruby_base = (uintptr_t) info.dli_fbase;
}

/* ---- the modules' GOT entries ------------------------------------------------- */

#if ALLOC_FRAMES
/* Returns: the trampoline for @real (redirected once, whoever calls it), 0
 * when there are no more. */
static uintptr_t trampoline(uintptr_t real)
{
    for (size_t i = 0; i < n_apis; i++)
        if (apis[i] == real)
            return STUB(i);
    if (n_apis == MAX_APIS)
        return 0;
    apis[n_apis] = real;
    return STUB(n_apis++);
}

/* Where the dynamic section's addresses point: relocated by the loader on
 * most systems, an offset from the module's base on others. */
static uintptr_t dynamic_address(uintptr_t base, uintptr_t value)
{
    return value < base ? base + value : value;
}

typedef struct {
    uintptr_t base;
    uintptr_t low, high;          /* the module's mappings */
    uintptr_t relro_low, relro_high;
    const ElfW(Sym) *symbols;
    const char *strings;
} Module;

/* Redirects the GOT entry at @slot for the symbol @index of @module when
 * it names a watched function of Ruby's. */
static void patch_slot(const Module *module, uintptr_t slot, size_t index)
{
    const ElfW(Sym) *symbol = &module->symbols[index];
    if (symbol->st_shndx != SHN_UNDEF || symbol->st_name == 0)
        return;
    const char *name = module->strings + symbol->st_name;
    if (!watched(name))
        return;
    uintptr_t current = *(volatile uintptr_t *) slot;
    uintptr_t real = current >= module->low && current < module->high
                         ? (uintptr_t) dlsym(RTLD_DEFAULT, name)  /* lazy: not bound yet */
                         : current;
    Dl_info info;
    if (real == 0 || dladdr((void *) real, &info) == 0 || (uintptr_t) info.dli_fbase != ruby_base)
        return;  /* not Ruby's: left alone */
    uintptr_t stub = trampoline(real);
    if (stub == 0 || stub == current)
        return;
    uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    int relro = slot >= module->relro_low && slot < module->relro_high;
    void *at = (void *) (slot & ~(page - 1));
    if (relro && mprotect(at, (size_t) page, PROT_READ | PROT_WRITE) != 0)
        return;
    __atomic_store_n((uintptr_t *) slot, stub, __ATOMIC_RELEASE);
    if (relro)
        mprotect(at, (size_t) page, PROT_READ);
}

static void patch_relocations(const Module *module, uintptr_t table, size_t bytes)
{
    const ElfW(Rela) *relocations = (const ElfW(Rela) *) table;
    for (size_t i = 0; i < bytes / sizeof *relocations; i++) {
        unsigned type = (unsigned) ELF64_R_TYPE(relocations[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        patch_slot(module, module->base + relocations[i].r_offset, ELF64_R_SYM(relocations[i].r_info));
    }
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) data;
    uintptr_t base = (uintptr_t) info->dlpi_addr;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs &&
        info->dlpi_subs != unloads_seen) {
        unloads_seen = info->dlpi_subs;
        n_modules_done = 0;  /* patching again what is patched changes nothing */
    }
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0' || base == ruby_base)
        return 0;  /* the program, and Ruby's own library */
    for (size_t i = 0; i < n_modules_done; i++)
        if (modules_done[i] == base)
            return 0;
    if (n_modules_done < MAX_MODULES)
        modules_done[n_modules_done++] = base;
    Module module = { .base = base, .low = UINTPTR_MAX };
    const ElfW(Dyn) *dynamic = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t low = base + ph->p_vaddr, high = low + ph->p_memsz;
        if (ph->p_type == PT_LOAD) {
            if (low < module.low)
                module.low = low;
            if (high > module.high)
                module.high = high;
        } else if (ph->p_type == PT_DYNAMIC) {
            dynamic = (const ElfW(Dyn) *) low;
        } else if (ph->p_type == PT_GNU_RELRO) {
            module.relro_low = low;
            module.relro_high = high;
        }
    }
    if (dynamic == NULL)
        return 0;
    uintptr_t rela = 0, jmprel = 0;
    size_t rela_bytes = 0, jmprel_bytes = 0;
    int plt_is_rela = 1;
    for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: module.symbols = (const ElfW(Sym) *) dynamic_address(base, d->d_un.d_ptr); break;
        case DT_STRTAB: module.strings = (const char *) dynamic_address(base, d->d_un.d_ptr); break;
        case DT_RELA: rela = dynamic_address(base, d->d_un.d_ptr); break;
        case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
        case DT_JMPREL: jmprel = dynamic_address(base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmprel_bytes = d->d_un.d_val; break;
        case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
        default: break;
        }
    }
    if (module.symbols == NULL || module.strings == NULL)
        return 0;
    if (rela != 0)
        patch_relocations(&module, rela, rela_bytes);
    if (jmprel != 0 && plt_is_rela)
        patch_relocations(&module, jmprel, jmprel_bytes);
    return 0;
}

void alloc_via_patch(void)
{
    if (n_globs == 0 || ruby_base == 0)
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
