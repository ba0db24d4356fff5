/* Symbol names as Valgrind shows them: C++ (Itanium ABI) and Rust (its
 * legacy "_ZN...17h<hash>E" and v0 "_R..." manglings) demangled by GNU
 * libiberty's cplus_demangle(), the demangler Valgrind embeds, with the
 * options it passes (DMGL_ANSI | DMGL_PARAMS), so that a name reads the
 * same whichever engine found it. */
#ifndef GEMLEAK_DEMANGLE_H
#define GEMLEAK_DEMANGLE_H

#include <glib.h>

/* Returns: TRUE if @name looks mangled: it starts with "_Z" (C++, and
 * Rust's legacy mangling) or "_R" (Rust's v0 mangling), as Valgrind tells
 * which names to demangle. */
gboolean gl_symbol_is_mangled(const char *name);

/* Returns: (transfer full) (nullable): @symbol demangled as Valgrind
 * demangles it ("rustleak::make_buffer", not
 * "rustleak::make_buffer::h1294082562c34df6"; "cppleak_leak(unsigned
 * long)"), or NULL when it is not mangled or is no valid mangled name. */
char *gl_demangle(const char *symbol);

/* Returns: (transfer full) (nullable): @symbol as the sanitizer runtimes
 * demangle it (__cxa_demangle: libiberty's C++ demangler alone, which reads
 * a Rust legacy name as C++: "rustleak::make_buffer::h1294082562c34df6"),
 * or NULL when it is no C++ mangled name. */
char *gl_demangle_as_cxa(const char *symbol);

/* Returns: (transfer full): the function @name (a symbol as Valgrind shows
 * it, demangled or not) is a part or a clone of, as an optimising compiler
 * names them: GCC's "f.cold" (the unlikely paths moved away), "f.part.0"
 * (split off), "f.isra.0", "f.constprop.0", "f.clone.0" (clones with fewer
 * or constant arguments), "f.lto_priv.0", "f.localalias"; demangled C++,
 * "f(int) [clone .cold]". @name itself when it is none: "f". Another
 * optimisation level splits and clones other functions, or none. */
char *gl_symbol_unsplit(const char *name);

#endif
