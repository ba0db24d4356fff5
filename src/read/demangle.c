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

char *gl_symbol_unsplit(const char *name)
{
    static const char *const suffixes[] = {
        " [clone .", ".part.", ".isra.", ".constprop.", ".cold", ".lto_priv.", ".localalias",
        ".clone.", NULL,
    };
    /* a C name holds no dot, a C++ one none outside its clone suffixes:
     * the first suffix ends the function's own name */
    const char *cut = NULL;
    for (const char *const *suffix = suffixes; *suffix != NULL; suffix++) {
        const char *at = strstr(name, *suffix);
        if (at != NULL && at > name && (cut == NULL || at < cut))
            cut = at;
    }
    return cut != NULL ? g_strndup(name, (gsize) (cut - name)) : g_strdup(name);
}
