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

#endif
