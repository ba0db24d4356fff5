/* What a frame's own object says of it: its symbol table and its DWARF
 * debug information, read with elfutils' libelf and libdw, as Valgrind
 * reads them.
 *
 * The sanitizer runtimes symbolize a frame from DWARF alone: a function's
 * DW_AT_linkage_name demangled by their own __cxa_demangle (a Rust name
 * keeps its "::h<hash>" and its "$LT$" escapes, a v0 name stays mangled),
 * else its DW_AT_name ("cppleak_leak", where Valgrind's symbol table says
 * "cppleak_leak(unsigned long)"), and a source path as the line table
 * spells it, relative to the directory the compiler ran in when the
 * compiler was given a relative path (rake-compiler compiles
 * "../../../../ext/x/x.c" in tmp/<platform>/x/<ruby>/). Valgrind names a
 * frame by the object's symbol table, demangled (demangle.h), an inlined
 * frame by its DWARF DW_AT_name, and joins a path to the compilation's
 * directory (DW_AT_comp_dir). This module reads objects; symbolize.h makes
 * the first read as the second. It knows ELF and DWARF, nothing about Ruby. */
#ifndef GEMLEAK_DEBUGINFO_H
#define GEMLEAK_DEBUGINFO_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/read/run_record.h"

typedef struct GlDebugInfo GlDebugInfo;

/* Returns: (transfer full): an empty cache of objects read; free with
 * gl_debuginfo_free(). Safe to share between threads. */
GlDebugInfo *gl_debuginfo_new(void);
/* Returns: @info, one more reference to it: each is dropped with
 * gl_debuginfo_free(), the last frees it (a run's passes and its analysis
 * read each object once). */
GlDebugInfo *gl_debuginfo_ref(GlDebugInfo *info);
void gl_debuginfo_free(GlDebugInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlDebugInfo, gl_debuginfo_free)

/* What gl_debuginfo_frame() says of a program counter. */
typedef struct {
    const char *symbol;    /* (transfer none) (nullable): the function symbol holding it,
                            * raw ("_ZL12cppleak_leakm", "lexer_new.constprop.0") */
    const char *comp_dir;  /* (transfer none) (nullable): its compilation unit's DW_AT_comp_dir */
    /* (transfer none) (nullable): the functions inlined there, innermost
     * first, each by its DWARF DW_AT_name ("with_capacity_in<u8,
     * alloc::alloc::Global>"), NULL-terminated; NULL when there are none */
    const char *const *inlined;
} GlDebugFrame;

/* What gl_debuginfo_frame() reads beyond the symbol: the compilation
 * unit (its comp_dir), the functions inlined at the address. */
typedef enum {
    GL_DEBUG_SYMBOL = 0,
    GL_DEBUG_UNIT = 1 << 0,
    GL_DEBUG_INLINED = 1 << 1,
} GlDebugWant;

/* Looks up @offset (an address of the object's own, as a sanitizer's
 * "module offset" gives it) in the object at @path: its symbol, and what
 * @want asks for (what is not asked for stays NULL).
 * What the run that wrote the report recorded (@recorded, nullable: its
 * run directory's record, run_record.h) is what it says, whatever is on
 * disk now; an offset it did not record is read from the object only
 * when the object is the one the run recorded (its identity), and, where
 * the record says nothing of the object, only when it was not modified
 * after @written (seconds since the epoch: when the report naming it was
 * written; 0: no such limit): a rebuilt object's symbols are no longer
 * those the report's addresses point at.
 * Returns: TRUE with *frame filled (its strings live as long as @info and
 * @recorded) when the object could be read, or the run recorded it. */
gboolean gl_debuginfo_frame(GlDebugInfo *info, const GlRunRecord *recorded, const char *path,
                            guint64 offset, gint64 written, GlDebugWant want,
                            GlDebugFrame *frame);

/* A frame as a sanitizer runtime's symbolizer names it (GCC's runtimes
 * read DWARF with libbacktrace): a function by its DW_AT_linkage_name
 * demangled as __cxa_demangle does (gl_demangle_as_cxa()), else its
 * DW_AT_name, through DW_AT_abstract_origin and DW_AT_specification; an
 * object without DWARF there, by its symbol table; a source file as the
 * line table spells it, before the compilation's directory. */
typedef struct {
    const char *function;  /* (nullable): unknown */
    const char *file;      /* (nullable): unknown */
    guint line;            /* 0: unknown */
} GlRuntimeFrame;

/* Names @offset of the object at @path (a module offset, as a runtime run
 * with symbolize=0 gives a frame it left unnamed: the return address less
 * one already) as the runtime would have: the functions inlined there,
 * innermost first, each at the line of the call to the one inside it,
 * then the function whose code it is. An object without symbols or debug
 * information of its own is read through its GNU build id's detached
 * debug file (/usr/lib/debug/.build-id/), as the runtimes and Valgrind
 * read it, but for its symbol table alone: the frame is its function,
 * without a source file, line or inlined frames (a distribution's debug
 * files are compressed, and the C library's costs some 60 ms to open,
 * more than a small suite's whole run; what a verdict reads of such a
 * frame is its function).
 * Returns: how many frames, in *@frames (transfer none: they live as long
 * as @info); 0 when the object cannot be read or says nothing there. */
guint gl_debuginfo_runtime_frames(GlDebugInfo *info, const char *path, guint64 offset,
                                  const GlRuntimeFrame **frames);

/* Returns: TRUE if the compilation unit holding @offset in the object at
 * @path (read as gl_debuginfo_frame() reads it, or as @recorded says) has
 * @relative among its source files, as its line table spells them, before
 * the compilation's directory ("../../../../ext/x/x.c", "src/lib.rs"). */
gboolean gl_debuginfo_has_file(GlDebugInfo *info, const GlRunRecord *recorded, const char *path,
                               guint64 offset, gint64 written, const char *relative);

/* Returns: (transfer full) (nullable): the identity of the object at
 * @path as it is on disk now: "build-id:HEX", its GNU build id, else
 * "sha256:HEX" of its bytes; NULL when it cannot be read (gone, not ELF). */
char *gl_debuginfo_identity(GlDebugInfo *info, const char *path);

/* Adds to @record what the object at @path said of @offset when it was
 * looked up (gl_debuginfo_frame(), gl_debuginfo_has_file()): the object's
 * identity, and each thing asked. Returns: FALSE when nothing was read
 * from the object there (it could not be read, or was rebuilt since its
 * report). */
gboolean gl_debuginfo_record(GlDebugInfo *info, const char *path, guint64 offset,
                             GlRunRecord *record);

/* Returns: (transfer none) (nullable): the source file that the symbol
 * table of the object at @path names for its function @function (the raw
 * symbol or its demangled name, as Valgrind names a frame): the STT_FILE
 * symbol its compilation unit's local symbols follow: GCC writes the
 * file's name alone ("x.c"), whatever path it was given. What an object
 * built without -g still says of a static function. NULL for a global
 * function (the table gives globals no file), a name two units define, a
 * stripped object, or one that cannot be read. Lives as long as @info. */
const char *gl_debuginfo_symbol_unit(GlDebugInfo *info, const char *path, const char *function);

#endif
