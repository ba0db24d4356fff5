/* Which frames of an extension are its project's own source.
 *
 * An extension's object holds more than its project's code: a header's
 * inline functions (ruby.h's, glibc's _FORTIFY_SOURCE wrappers), a C++
 * template of the system's headers instantiated in it, a language's
 * runtime linked into it (Rust's standard library: a Rust extension's
 * allocation is six frames of alloc:: before its own src/lib.rs), a
 * dependency (a crate). Their frames are in the target, and stay in every
 * stack; but the place a finding is reported at, its fingerprint and its
 * group are the project's own frames: a maintainer edits those, and they
 * do not move with a compiler, a Rust toolchain or a Ruby. */
#ifndef GEMLEAK_PROJECT_PATHS_H
#define GEMLEAK_PROJECT_PATHS_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/judge/merge.h"

/* Returns: TRUE if @frame's source is a language runtime's or a
 * dependency's, fetched or shipped by a toolchain: Rust's standard library
 * (/rustc/<commit>/library/..., as rustup's builds record it, or a
 * toolchain's own library/ sources), a crate of Cargo's registry or git
 * checkouts (~/.cargo/registry/src/, ~/.cargo/git/checkouts/, the
 * standard library's /rust/deps/). */
gboolean gl_frame_from_a_runtime(const GlFrame *frame);

/* Returns: TRUE if @frame's code was linked or inlined into the extension
 * from elsewhere: a header's (gl_frame_from_a_header()) or a runtime's
 * (gl_frame_from_a_runtime()). */
gboolean gl_frame_linked_in(const GlFrame *frame);

/* Returns: TRUE if a frame of @stack in the target has a source file of
 * the project's own: neither linked in, nor without a file. */
gboolean gl_stack_has_own_source(const GlStack *stack);

/* Returns: TRUE if @frame is the project's own code: in the target and,
 * when its stack has a source of its own (@own_source, as
 * gl_stack_has_own_source() says), with a file of that source; else (no
 * debug information) not a header's. */
gboolean gl_frame_is_own(const GlFrame *frame, gboolean own_source);

/* An extension built without debug information (no -g: some extconf.rb
 * replace $CFLAGS with -O3) gives its frames a function and an object, no
 * file or line. Places each such frame of @findings (GlFinding*: their
 * records and sites) at the source file of its compilation
 * unit, as the object's symbol table names it for a static function
 * (frame->unit; an exported function's no table names): found on disk
 * as it is, beside the object, under @project_root (nullable) with the
 * leading ../ of an out-of-tree build left out, or as the one file of
 * that name in the project (hidden, vendor, node_modules, tmp and pkg
 * directories aside; GCC names the file alone). Display only: no
 * fingerprint, group or verdict reads it.
 * Returns: (transfer full): the objects whose frames had no file, each
 * once (char*), for the reports to say how to get file and line. */
GPtrArray *gl_findings_place_units(const GPtrArray *findings, const char *project_root);

#endif
