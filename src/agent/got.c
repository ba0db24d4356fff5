/* The imports of the modules loaded, by their GOT entries: got_int.h says
 * what they are and who redirects them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "got_int.h"

/* ---- names, by globs ---------------------------------------------------------- */

void got_names_add(GotNames *names, const char *glob)
{
    if (names->n == GOT_MAX_GLOBS)
        return;
    size_t i = names->n++;
    names->globs[i] = glob;
    names->plain_length[i] = 0;
    names->plain_prefix[i] = 0;
    size_t length = strcspn(glob, "*?[\\");
    if (glob[length] == '\0') {
        names->plain_length[i] = length;
    } else if (glob[length] == '*' && glob[length + 1] == '\0' && length > 0) {
        names->plain_length[i] = length;
        names->plain_prefix[i] = 1;
    }
}

int got_names_read(GotNames *names, const char *path)
{
    size_t length;
    char *text = agent_read_file(path, (size_t) 1 << 20, &length);
    if (text == NULL)
        return 0;
    for (char *line = text; line < text + length && names->n < GOT_MAX_GLOBS;) {
        char *end = memchr(line, '\n', (size_t) (text + length - line));
        if (end == NULL)
            end = text + length;
        *end = '\0';
        if (*line != '\0' && *line != '#')
            got_names_add(names, line);
        line = end + 1;
    }
    return 1;
}

int got_names_match(const GotNames *names, const char *name)
{
    for (size_t i = 0; i < names->n; i++) {
        const char *glob = names->globs[i];
        size_t length = names->plain_length[i];
        if (length == 0) {
            if (fnmatch(glob, name, 0) == 0)
                return 1;
        } else if (glob[0] == name[0] && strncmp(glob, name, length) == 0 &&
                   (names->plain_prefix[i] || name[length] == '\0')) {
            return 1;
        }
    }
    return 0;
}

/* ---- a module's imports -------------------------------------------------------- */

/* Where the dynamic section's addresses point: relocated by the loader on
 * most systems, an offset from the module's base on others. */
static uintptr_t dynamic_address(uintptr_t base, uintptr_t value)
{
    return value < base ? base + value : value;
}

static void each_relocation(const GotModule *module, uintptr_t table, size_t bytes, GotImport each,
                            void *data)
{
    const ElfW(Rela) *relocations = (const ElfW(Rela) *) table;
    for (size_t i = 0; i < bytes / sizeof *relocations; i++) {
        unsigned type = (unsigned) ELF64_R_TYPE(relocations[i].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        const ElfW(Sym) *symbol = &module->symbols[ELF64_R_SYM(relocations[i].r_info)];
        if (symbol->st_shndx != SHN_UNDEF || symbol->st_name == 0)
            continue;
        each(module, module->base + relocations[i].r_offset, module->strings + symbol->st_name, data);
    }
}

void got_each_import(const struct dl_phdr_info *info, GotImport each, void *data)
{
    uintptr_t base = (uintptr_t) info->dlpi_addr;
    GotModule module = { .base = base, .low = UINTPTR_MAX };
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
        return;
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
        return;
    if (rela != 0)
        each_relocation(&module, rela, rela_bytes, each, data);
    if (jmprel != 0 && plt_is_rela)
        each_relocation(&module, jmprel, jmprel_bytes, each, data);
}

uintptr_t got_bound(const GotModule *module, uintptr_t slot, const char *name)
{
    uintptr_t current = *(volatile uintptr_t *) slot;
    return current >= module->low && current < module->high
               ? (uintptr_t) dlsym(RTLD_DEFAULT, name)  /* lazy: not bound yet */
               : current;
}

void got_write(const GotModule *module, uintptr_t slot, uintptr_t value)
{
    uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    int relro = slot >= module->relro_low && slot < module->relro_high;
    void *at = (void *) (slot & ~(page - 1));
    if (relro && mprotect(at, (size_t) page, PROT_READ | PROT_WRITE) != 0)
        return;
    __atomic_store_n((uintptr_t *) slot, value, __ATOMIC_RELEASE);
    if (relro)
        mprotect(at, (size_t) page, PROT_READ);
}

/* ---- the modules seen ------------------------------------------------------- */

int got_seen_first(GotSeen *seen, const struct dl_phdr_info *info, size_t size)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs &&
        info->dlpi_subs != seen->unloads_seen) {
        seen->unloads_seen = info->dlpi_subs;
        seen->n = 0;
    }
    uintptr_t base = (uintptr_t) info->dlpi_addr;
    for (size_t i = 0; i < seen->n; i++)
        if (seen->done[i] == base)
            return 0;
    if (seen->n < GOT_MAX_MODULES)
        seen->done[seen->n++] = base;
    return 1;
}
