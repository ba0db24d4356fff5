/* A sanitizer runtime's frames named and placed as Valgrind's, from the
 * objects they are in (debuginfo.h), so that a finding reads the same
 * whichever engine found it: its functions, its location, its source line,
 * its fingerprint. It knows the runtimes' symbolization and Valgrind's,
 * nothing about Ruby. */
#ifndef GEMLEAK_SYMBOLIZE_H
#define GEMLEAK_SYMBOLIZE_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/read/debuginfo.h"

/* Makes each frame of @record (a sanitizer runtime's, whose frames carry
 * their module offsets) read as Valgrind's would:
 * - its function named by its object's symbol table, demangled, where the
 *   symbol is mangled (C++, Rust) or a clone of the name the runtime gave
 *   ("f.constprop.0" for "f"); a frame inlined into another (several
 *   frames at one program counter, innermost first) by its DW_AT_name;
 *   any name still mangled, demangled;
 * - a relative source path joined to its compilation's DW_AT_comp_dir
 *   and folded ("tmp/x86_64-linux/x/3.4.5/../../../../ext/x/x.c" becomes
 *   ".../ext/x/x.c").
 * @recorded (nullable): what the run that wrote the report recorded of
 * its objects, which is what they say, whatever is on disk now; @written:
 * when the report was written (gl_debuginfo_frame()).
 * What the objects cannot tell (an object gone, rebuilt since @written,
 * without symbols or debug information, and not recorded) is left as the
 * runtime said it, and so is what they say otherwise than the runtime
 * (another build's object): a name that is no spelling of the one the
 * runtime gave, a source file the frame's compilation unit does not hold. */
void gl_symbolize_as_valgrind(GlDebugInfo *info, const GlRunRecord *recorded, GlRecord *record,
                              gint64 written);

#endif
