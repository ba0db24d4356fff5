/* The exact pass's sites (gemleak_alloc.so; alloc.c says what it does):
 * the calls of an allocation function where the fast pass found a leak,
 * read from the file GL_PROTO_EXACT_VARIABLE names as the library starts,
 * each given its return address once its module is loaded. Every
 * allocation asks exact_wanted() (exact_int.h) whether it is a site's. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gemleak/base/protocol.h"
#include "exact_int.h"

/* What the runtime prints for a frame is the call's own address, one byte
 * (x86) or one instruction (ARM) before the return address. */
#if defined(__aarch64__) || defined(__arm__)
#define CALL_BEFORE_RETURN 4
#else
#define CALL_BEFORE_RETURN 1
#endif

#define MAX_SITES 4096
#define MAX_MODULES 256

ExactSites exact_sites = { .depth = 27 };
__thread int exact_busy __attribute__((tls_model("initial-exec")));
static char **modules;      /* mapped: the sites' modules, as the runtime names them */
static size_t n_modules;

/* Returns: @path's real path in @out (PATH_MAX bytes), or 0. */
static int real(const char *path, char *out)
{
    return path != NULL && *path != '\0' && realpath(path, out) != NULL;
}

typedef struct {
    char exe[PATH_MAX];
    int first;
} Walk;

/* Gives each site of a module loaded now its return address. */
static int resolve_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void) size;
    Walk *walk = data;
    const char *name = info->dlpi_name;
    if (walk->first) {
        walk->first = 0;
        if (name == NULL || *name == '\0')
            name = walk->exe;  /* the program itself, as the runtime names it */
    }
    if (name == NULL || *name == '\0')
        return 0;
    char name_real[PATH_MAX];
    int have_real = -1;
    for (size_t m = 0; m < n_modules; m++) {
        int same = strcmp(modules[m], name) == 0;
        if (!same) {
            char module_real[PATH_MAX];
            if (have_real < 0)
                have_real = real(name, name_real);
            same = have_real && real(modules[m], module_real) && strcmp(module_real, name_real) == 0;
        }
        if (!same)
            continue;
        for (size_t s = 0; s < exact_sites.n; s++) {
            Site *site = &exact_sites.at[s];
            if (site->module == m && site->address == 0)
                site->address = (uintptr_t) info->dlpi_addr + site->offset + CALL_BEFORE_RETURN;
        }
    }
    return 0;
}

void exact_resolve(void)
{
    if (exact_sites.n == 0)
        return;
    static Walk walk;
    walk.first = 1;
    ssize_t n = readlink("/proc/self/exe", walk.exe, sizeof walk.exe - 1);
    walk.exe[n > 0 ? n : 0] = '\0';
    exact_busy++;
    dl_iterate_phdr(resolve_module, &walk);
    exact_busy--;
    exact_sites.ready = 1;
}

/* Returns: the index of @name among the modules, added if new; -1 when full. */
static long module_index(const char *name, size_t length)
{
    for (size_t m = 0; m < n_modules; m++)
        if (strlen(modules[m]) == length && memcmp(modules[m], name, length) == 0)
            return (long) m;
    if (n_modules >= MAX_MODULES)
        return -1;
    char *copy = agent_map(length + 1);
    if (copy == NULL)
        return -1;
    memcpy(copy, name, length);
    modules[n_modules] = copy;
    return (long) n_modules++;
}

/* Reads the exact_sites file: "gemleak:exact_sites<TAB>DEPTH", then a site a line,
 * "SIZE<TAB>OFFSET<TAB>MODULE" (decimal, hexadecimal, a path), or
 * "SIZE<TAB>OFFSET<TAB>MODULE<TAB>via" for an extension's call of one of
 * Ruby's allocation functions. */
void exact_read_sites(const char *path)
{
    size_t length;
    char *text = agent_read_file(path, (size_t) 64 << 20, &length);
    exact_sites.at = agent_map(MAX_SITES * sizeof *exact_sites.at);
    modules = agent_map(MAX_MODULES * sizeof *modules);
    if (text == NULL || exact_sites.at == NULL || modules == NULL)
        return;
    const char *header = GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_SITES "\t";
    for (char *line = text; line < text + length && exact_sites.n < MAX_SITES;) {
        char *end = memchr(line, '\n', (size_t) (text + length - line));
        if (end == NULL)
            end = text + length;
        *end = '\0';
        char *rest = NULL;
        if (strncmp(line, header, strlen(header)) == 0) {
            long given = strtol(line + strlen(header), &rest, 10);
            if (given > 0 && given <= MAX_DEPTH)
                exact_sites.depth = (int) given;
        } else {
            unsigned long long size = strtoull(line, &rest, 10);
            if (rest != line && *rest == '\t') {
                char *offset_end = NULL;
                unsigned long long offset = strtoull(rest + 1, &offset_end, 16);
                if (offset_end != rest + 1 && *offset_end == '\t') {
                    char *module = offset_end + 1;
                    size_t module_length = strlen(module);
                    int via = module_length > 4 && strcmp(module + module_length - 4, "\tvia") == 0;
                    if (via)
                        module_length -= 4;
                    long m = module_index(module, module_length);
                    if (m >= 0) {
                        exact_sites.at[exact_sites.n] = (Site) { .offset = (uintptr_t) offset,
                                                                 .size = (size_t) size,
                                                                 .module = (uint32_t) m, .via = via };
                        exact_sites.size_bits[(size & 4095) / 64] |= UINT64_C(1) << (size & 63);
                        exact_sites.n++;
                    }
                }
            }
        }
        line = end + 1;
    }
    munmap(text, length + 1);
}
