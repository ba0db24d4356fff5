/* Demangling through libiberty (see demangle.h). */
#include "gemleak/read/demangle.h"

#include <stdlib.h>
#include <string.h>

/* Debian's libiberty-dev puts libiberty's headers in a folder of their own. */
#include <libiberty/demangle.h>

gboolean gl_symbol_is_mangled(const char *name)
{
    return name != NULL && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *gl_demangle(const char *symbol)
{
    if (!gl_symbol_is_mangled(symbol))
        return NULL;
    /* libiberty's automatic style tries Rust first (its legacy names are
     * valid C++ too), then C++: Valgrind's order. It allocates with
     * malloc(). */
    char *demangled = cplus_demangle(symbol, DMGL_ANSI | DMGL_PARAMS);
    if (demangled == NULL)
        return NULL;
    char *copy = g_strdup(demangled);
    free(demangled);
    return copy;
}

char *gl_demangle_as_cxa(const char *symbol)
{
    if (symbol == NULL || strncmp(symbol, "_Z", 2) != 0)
        return NULL;
    /* __cxa_demangle's options */
    char *demangled = cplus_demangle_v3(symbol, DMGL_PARAMS | DMGL_TYPES);
    if (demangled == NULL)
        return NULL;
    char *copy = g_strdup(demangled);
    free(demangled);
    return copy;
}
