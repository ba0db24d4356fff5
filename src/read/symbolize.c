/* A sanitizer's frames named and placed as Valgrind's (see symbolize.h). */
#include "gemleak/read/symbolize.h"
#include "gemleak/read/demangle.h"
#include "gemleak/read/source.h"

#include <string.h>

/* The object read now may not be the one the report's addresses are of (a
 * report read again after a rebuild, a report of another machine): what it
 * says is taken only where it agrees with what the runtime said, as
 * another spelling of the same name. */

/* Returns: TRUE if @said (the runtime's name for a frame, nullable) is a
 * spelling of the function @symbol: the symbol itself, demangled by the
 * runtime (__cxa_demangle), DWARF's shorter DW_AT_name inside Valgrind's
 * ("cppleak_leak" in "cppleak_leak(unsigned long)"), or the function a
 * clone of GCC's was made from ("f" for "f.constprop.0"). */
static gboolean names_agree(const char *said, const char *symbol, const char *demangled)
{
    if (said == NULL || strcmp(said, symbol) == 0)
        return TRUE;
    gsize n = strlen(said);
    if (strncmp(symbol, said, n) == 0 && symbol[n] == '.')
        return TRUE;
    if (demangled == NULL)
        return FALSE;
    g_autofree char *cxa = gl_demangle_as_cxa(symbol);
    return (cxa != NULL && strcmp(cxa, said) == 0) || strstr(demangled, said) != NULL;
}

/* Returns: (transfer full) (nullable): the name Valgrind gives the
 * function frame whose symbol is @symbol, the runtime having said @said;
 * NULL: keep @said. */
static char *physical_name(const char *symbol, const char *said)
{
    if (symbol == NULL)
        return NULL;
    g_autofree char *demangled = gl_demangle(symbol);
    if (!names_agree(said, symbol, demangled))
        return NULL;
    if (demangled != NULL)
        return g_steal_pointer(&demangled);
    /* A C name: the symbol table has a clone's name where DWARF has the
     * function's; another name at the same address (malloc for the
     * runtime's __interceptor_malloc) is an alias: the runtime's stays. */
    return said == NULL || strcmp(symbol, said) != 0 ? g_strdup(symbol) : NULL;
}

/* Returns: TRUE if @said (nullable: none) names the function DWARF calls
 * @name: its linkage name demangled holds it, generic arguments aside
 * ("alloc::boxed::Box$LT$T$GT$::new::h8984883df7936d6a" for
 * "new<rustleak::Buffer>", "Widget* make<Widget>()" for "make<Widget>"). */
static gboolean inlined_agree(const char *said, const char *name)
{
    if (said == NULL)
        return TRUE;
    const char *angle = strchr(name, '<');
    g_autofree char *bare = angle != NULL && angle > name ? g_strndup(name, (gsize) (angle - name))
                                                          : g_strdup(name);
    g_autofree char *demangled = gl_demangle(said);
    return strstr(said, bare) != NULL || (demangled != NULL && strstr(demangled, bare) != NULL);
}

/* Joins @frame's source path, when relative and a file of its compilation
 * unit (@physical's, at whose program counter it was inlined), to that
 * compilation's directory @comp_dir. */
static void settle_path(GlDebugInfo *info, const GlRunRecord *recorded, GlRecord *record,
                        GlFrame *frame, const GlFrame *physical, const char *comp_dir,
                        gint64 written)
{
    if (comp_dir == NULL || frame->file == NULL || frame->file[0] == '/' ||
        (frame->dir != NULL && frame->dir[0] == '/'))
        return;
    g_autofree char *relative = frame->dir != NULL
                                    ? g_build_filename(frame->dir, frame->file, NULL)
                                    : g_strdup(frame->file);
    if (!gl_debuginfo_has_file(info, recorded, physical->obj, physical->offset, written, relative))
        return;
    g_autofree char *joined = g_build_filename(comp_dir, relative, NULL);
    g_autofree char *path = gl_path_normalize(joined);
    if (path[0] != '/')
        return;
    const char *slash = strrchr(path, '/');
    g_autofree char *dir = slash == path ? g_strdup("/") : g_strndup(path, (gsize) (slash - path));
    frame->dir = gl_record_intern(record, dir);
    frame->file = gl_record_intern(record, slash + 1);
}

/* Settles @stack's frames @first to @last (@last included): frames the
 * runtime gave at one program counter, the innermost first, all but the
 * last inlined into it. */
static void settle_group(GlDebugInfo *info, const GlRunRecord *recorded, GlRecord *record,
                         GlStack *stack, guint first, guint last, gint64 written)
{
    const GlFrame physical = stack->frames[last];
    guint inlined = last - first;
    /* DWARF is read where it can change something: a relative path, the
     * frames inlined in a C++ or Rust function (a C function's are named
     * by DWARF as the runtime names them) */
    GlDebugWant want = GL_DEBUG_SYMBOL;
    for (guint i = first; i <= last; i++)
        if (stack->frames[i].file != NULL && stack->frames[i].file[0] != '/' &&
            (stack->frames[i].dir == NULL || stack->frames[i].dir[0] != '/'))
            want |= GL_DEBUG_UNIT;
    GlDebugFrame debug;
    gboolean known = gl_debuginfo_frame(info, recorded, physical.obj, physical.offset, written,
                                        want, &debug);
    if (known && inlined > 0 && gl_symbol_is_mangled(debug.symbol))
        known = gl_debuginfo_frame(info, recorded, physical.obj, physical.offset, written,
                                   want | GL_DEBUG_INLINED, &debug);
    guint listed = 0;
    while (known && debug.inlined != NULL && debug.inlined[listed] != NULL)
        listed++;
    for (guint i = first; i <= last; i++) {
        GlFrame *frame = &stack->frames[i];
        g_autofree char *name = NULL;
        if (known && i == last)
            name = physical_name(debug.symbol, frame->fn);
        /* DWARF names an inlined C function as the runtime did; a C++ or
         * Rust one, by its DW_AT_name, where the runtime demangled its
         * linkage name. The chain is trusted when its length is the
         * runtime's. */
        else if (known && listed == inlined && gl_symbol_is_mangled(debug.symbol) &&
                 inlined_agree(frame->fn, debug.inlined[i - first]))
            name = g_strdup(debug.inlined[i - first]);
        if (name == NULL)
            name = gl_demangle(frame->fn);
        if (name != NULL)
            frame->fn = gl_record_intern(record, name);
        if (known)
            settle_path(info, recorded, record, frame, &physical, debug.comp_dir, written);
    }
}

static void settle_stack(GlDebugInfo *info, const GlRunRecord *recorded, GlRecord *record,
                         GlStack *stack, gint64 written)
{
    for (guint i = 0; i < stack->n_frames;) {
        guint last = i;
        while (last + 1 < stack->n_frames && stack->frames[i].ip != 0 &&
               stack->frames[last + 1].ip == stack->frames[i].ip &&
               g_strcmp0(stack->frames[last + 1].obj, stack->frames[i].obj) == 0)
            last++;
        settle_group(info, recorded, record, stack, i, last, written);
        i = last + 1;
    }
}

void gl_symbolize_as_valgrind(GlDebugInfo *info, const GlRunRecord *recorded, GlRecord *record,
                              gint64 written)
{
    settle_stack(info, recorded, record, &record->stack, written);
    for (guint i = 0; i < record->aux->len; i++)
        settle_stack(info, recorded, record, &g_array_index(record->aux, GlAux, i).stack, written);
}
