/* Frames read from their objects' symbols and DWARF (see debuginfo.h). */
#include "gemleak/read/debuginfo.h"
#include "gemleak/read/demangle.h"
#include "gemleak/read/source.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <glib/gstdio.h>

/* A function symbol: [start, start + size) of the object's addresses. */
typedef struct {
    guint64 start;
    guint64 size;
    guint rank;          /* which of several at one address names it: lower first */
    const char *name;    /* in the module's strings */
} Symbol;

/* One program counter, looked up once. */
typedef struct {
    const char *symbol;
    const char *comp_dir;
    char **inlined;      /* NULL-terminated, nullable */
} Answer;

/* An object, read once. */
typedef struct {
    char *path;
    gboolean usable;     /* it opened as ELF */
    gint64 mtime;
    int fd;
    Elf *elf;
    Dwarf *dwarf;        /* nullable: no debug information */
    GArray *symbols;     /* of Symbol, sorted by start, then rank */
    GStringChunk *strings;
    GHashTable *answers; /* offset (guint64*, owned) -> Answer* (owned) */
} Module;

struct GlDebugInfo {
    GMutex lock;         /* libdw and libelf handles are not for two threads at once */
    GHashTable *modules; /* path -> Module* */
};

static void answer_free(gpointer data)
{
    Answer *answer = data;
    g_strfreev(answer->inlined);
    g_free(answer);
}

static void module_free(gpointer data)
{
    Module *module = data;
    if (module->dwarf != NULL)
        dwarf_end(module->dwarf);
    if (module->elf != NULL)
        elf_end(module->elf);
    if (module->fd >= 0)
        close(module->fd);
    if (module->symbols != NULL)
        g_array_unref(module->symbols);
    if (module->strings != NULL)
        g_string_chunk_free(module->strings);
    if (module->answers != NULL)
        g_hash_table_unref(module->answers);
    g_free(module->path);
    g_free(module);
}

GlDebugInfo *gl_debuginfo_new(void)
{
    GlDebugInfo *info = g_new0(GlDebugInfo, 1);
    g_mutex_init(&info->lock);
    info->modules = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, module_free);
    return info;
}

void gl_debuginfo_free(GlDebugInfo *info)
{
    if (info == NULL)
        return;
    g_hash_table_unref(info->modules);
    g_mutex_clear(&info->lock);
    g_free(info);
}

/* ---- symbols -------------------------------------------------------------------- */

/* Valgrind, given several names for one address, prefers a global symbol
 * to a weak one to a local one (a C++ constructor's C1 and C2, an alias). */
static guint symbol_rank(unsigned char binding)
{
    switch (binding) {
    case STB_GLOBAL: return 0;
    case STB_WEAK: return 1;
    default: return 2;
    }
}

static gint compare_symbols(gconstpointer a, gconstpointer b)
{
    const Symbol *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Adds the function symbols of the section @scn (a symbol table). */
static void read_symbols(Module *module, Elf_Scn *scn, const GElf_Shdr *header)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (data == NULL || header->sh_entsize == 0)
        return;
    gsize count = header->sh_size / header->sh_entsize;
    for (gsize i = 0; i < count; i++) {
        GElf_Sym sym;
        if (gelf_getsym(data, (int) i, &sym) == NULL)
            continue;
        unsigned char type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
            sym.st_value == 0)
            continue;
        const char *name = elf_strptr(module->elf, header->sh_link, sym.st_name);
        if (name == NULL || *name == '\0')
            continue;
        Symbol symbol = { .start = sym.st_value, .size = sym.st_size,
                          .rank = symbol_rank(GELF_ST_BIND(sym.st_info)),
                          .name = g_string_chunk_insert_const(module->strings, name) };
        g_array_append_val(module->symbols, symbol);
    }
}

/* Reads the symbol table, and the dynamic one (a stripped object keeps
 * only that), as Valgrind reads both. */
static void load_symbols(Module *module)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(module->elf, scn)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(scn, &header) != NULL &&
            (header.sh_type == SHT_SYMTAB || header.sh_type == SHT_DYNSYM))
            read_symbols(module, scn, &header);
    }
    g_array_sort(module->symbols, compare_symbols);
}

/* Returns: (transfer none) (nullable): the name of the function symbol
 * that holds @address. */
static const char *symbol_at(const Module *module, guint64 address)
{
    const GArray *symbols = module->symbols;
    guint low = 0, high = symbols->len;
    while (low < high) {  /* the first symbol that starts after @address */
        guint middle = low + (high - low) / 2;
        if (g_array_index(symbols, Symbol, middle).start <= address)
            low = middle + 1;
        else
            high = middle;
    }
    if (low == 0)
        return NULL;
    guint64 start = g_array_index(symbols, Symbol, low - 1).start;
    guint first = low - 1;
    while (first > 0 && g_array_index(symbols, Symbol, first - 1).start == start)
        first--;
    /* the preferred name of those that hold it */
    for (guint i = first; i < low; i++) {
        const Symbol *symbol = &g_array_index(symbols, Symbol, i);
        if (address < symbol->start + MAX(symbol->size, 1))
            return symbol->name;
    }
    return NULL;
}

/* ---- DWARF ---------------------------------------------------------------------- */

/* Returns: TRUE with *cudie the compilation unit that holds @address. */
static gboolean unit_at(Dwarf *dwarf, guint64 address, Dwarf_Die *cudie)
{
    if (dwarf_addrdie(dwarf, address, cudie) != NULL)
        return TRUE;
    /* Without .debug_aranges, every unit is asked. */
    Dwarf_Off offset = 0, next = 0;
    size_t header = 0;
    while (dwarf_nextcu(dwarf, offset, &next, &header, NULL, NULL, NULL) == 0) {
        if (dwarf_offdie(dwarf, offset + header, cudie) != NULL && dwarf_haspc(cudie, address) > 0)
            return TRUE;
        offset = next;
    }
    return FALSE;
}

/* Returns: TRUE if @die holds no code of its own but may hold functions
 * that do: Rust puts each function in the namespaces of its path, and a
 * method in its type. */
static gboolean may_hold_functions(Dwarf_Die *die)
{
    switch (dwarf_tag(die)) {
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type:
    case DW_TAG_enumeration_type:
        return !dwarf_hasattr(die, DW_AT_low_pc) && !dwarf_hasattr(die, DW_AT_ranges);
    default:
        return FALSE;
    }
}

/* Adds to @chain (of Dwarf_Die) the DIEs under @parent that hold
 * @address, outermost first. libdw's dwarf_getscopes() goes from an
 * inlined instance to its abstract origin's scopes, and finds nothing in
 * some of rustc's units: the tree is walked instead. */
static gboolean chain_to(Dwarf_Die *parent, guint64 address, GArray *chain, guint depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0)
        return FALSE;
    do {
        if (dwarf_haspc(&child, address) > 0) {
            g_array_append_val(chain, child);
            chain_to(&child, address, chain, depth + 1);
            return TRUE;
        }
        if (may_hold_functions(&child) && chain_to(&child, address, chain, depth + 1))
            return TRUE;
    } while (dwarf_siblingof(&child, &child) == 0);
    return FALSE;
}

/* Returns: (transfer full) (nullable): the names of the functions inlined
 * at @address, innermost first, NULL-terminated; NULL when none is. */
static char **inlined_at(Dwarf_Die *cudie, guint64 address)
{
    g_autoptr(GArray) chain = g_array_new(FALSE, FALSE, sizeof(Dwarf_Die));
    chain_to(cudie, address, chain, 0);
    g_autoptr(GStrvBuilder) names = g_strv_builder_new();
    guint found = 0;
    for (guint i = chain->len; i-- > 0;) {
        Dwarf_Die *die = &g_array_index(chain, Dwarf_Die, i);
        if (dwarf_tag(die) == DW_TAG_subprogram)
            break;
        if (dwarf_tag(die) != DW_TAG_inlined_subroutine)
            continue;
        /* through DW_AT_abstract_origin, as Valgrind names it */
        const char *name = dwarf_diename(die);
        g_strv_builder_add(names, name != NULL ? name : "???");
        found++;
    }
    return found > 0 ? g_strv_builder_end(names) : NULL;
}

/* ---- the cache ------------------------------------------------------------------ */

/* Returns: (transfer none): @path's module, read now if it was not. */
static Module *module_of(GlDebugInfo *info, const char *path)
{
    Module *module = g_hash_table_lookup(info->modules, path);
    if (module != NULL)
        return module;
    module = g_new0(Module, 1);
    module->path = g_strdup(path);
    module->fd = -1;
    g_hash_table_insert(info->modules, module->path, module);
    GStatBuf st;
    if (g_stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return module;
    module->mtime = (gint64) st.st_mtime;
    module->fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (module->fd < 0)
        return module;
    elf_version(EV_CURRENT);
    module->elf = elf_begin(module->fd, ELF_C_READ_MMAP, NULL);
    if (module->elf == NULL || elf_kind(module->elf) != ELF_K_ELF)
        return module;
    module->usable = TRUE;
    module->strings = g_string_chunk_new(4096);
    module->symbols = g_array_new(FALSE, FALSE, sizeof(Symbol));
    module->answers = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, answer_free);
    load_symbols(module);
    module->dwarf = dwarf_begin_elf(module->elf, DWARF_C_READ, NULL);
    return module;
}

/* Returns: (transfer none): what @module says of @address, looked up once. */
static const Answer *answer_of(Module *module, guint64 address)
{
    Answer *answer = g_hash_table_lookup(module->answers, &address);
    if (answer != NULL)
        return answer;
    answer = g_new0(Answer, 1);
    answer->symbol = symbol_at(module, address);
    Dwarf_Die cudie;
    if (module->dwarf != NULL && unit_at(module->dwarf, address, &cudie)) {
        Dwarf_Attribute attribute;
        const char *dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attribute));
        answer->comp_dir = dir != NULL ? g_string_chunk_insert_const(module->strings, dir) : NULL;
        answer->inlined = inlined_at(&cudie, address);
    }
    gint64 *key = g_new(gint64, 1);
    *key = (gint64) address;
    g_hash_table_insert(module->answers, key, answer);
    return answer;
}

gboolean gl_debuginfo_frame(GlDebugInfo *info, const char *path, guint64 offset, gint64 written,
                            GlDebugFrame *frame)
{
    memset(frame, 0, sizeof *frame);
    if (path == NULL || offset == 0)
        return FALSE;
    g_mutex_lock(&info->lock);
    Module *module = module_of(info, path);
    gboolean usable = module->usable && (written == 0 || module->mtime <= written);
    if (usable) {
        const Answer *answer = answer_of(module, offset);
        frame->symbol = answer->symbol;
        frame->comp_dir = answer->comp_dir;
        frame->inlined = (const char *const *) answer->inlined;
    }
    g_mutex_unlock(&info->lock);
    return usable;
}

/* ---- settling a record ------------------------------------------------------------ */

/* Returns: the name Valgrind gives the function frame whose symbol is
 * @symbol, the runtime having said @said (both nullable); NULL: @said. */
static char *physical_name(const char *symbol, const char *said)
{
    if (symbol == NULL)
        return NULL;
    if (gl_symbol_is_mangled(symbol)) {
        char *demangled = gl_demangle(symbol);
        return demangled != NULL ? demangled : g_strdup(symbol);
    }
    /* GCC's clones ("f.constprop.0", "f.part.0", "f.cold"): the symbol
     * table has the clone, DWARF the function. Another name at the same
     * address (malloc for the runtime's __interceptor_malloc) is an alias:
     * the runtime's stays. */
    gsize n = said != NULL ? strlen(said) : 0;
    if (said == NULL || (strncmp(symbol, said, n) == 0 && symbol[n] == '.'))
        return g_strdup(symbol);
    return NULL;
}

/* Joins @frame's source path, when relative, to @comp_dir. */
static void settle_path(GlRecord *record, GlFrame *frame, const char *comp_dir)
{
    if (comp_dir == NULL || frame->file == NULL || frame->file[0] == '/' ||
        (frame->dir != NULL && frame->dir[0] == '/'))
        return;
    g_autofree char *joined = frame->dir != NULL
                                  ? g_build_filename(comp_dir, frame->dir, frame->file, NULL)
                                  : g_build_filename(comp_dir, frame->file, NULL);
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
static void settle_group(GlDebugInfo *info, GlRecord *record, GlStack *stack, guint first,
                         guint last, gint64 written)
{
    GlFrame *physical = &stack->frames[last];
    GlDebugFrame debug;
    gboolean known = gl_debuginfo_frame(info, physical->obj, physical->offset, written, &debug);
    guint inlined = last - first;
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
        else if (known && listed == inlined && gl_symbol_is_mangled(debug.symbol))
            name = g_strdup(debug.inlined[i - first]);
        if (name == NULL)
            name = gl_demangle(frame->fn);
        if (name != NULL)
            frame->fn = gl_record_intern(record, name);
        if (known)
            settle_path(record, frame, debug.comp_dir);
    }
}

static void settle_stack(GlDebugInfo *info, GlRecord *record, GlStack *stack, gint64 written)
{
    for (guint i = 0; i < stack->n_frames;) {
        guint last = i;
        while (last + 1 < stack->n_frames && stack->frames[i].ip != 0 &&
               stack->frames[last + 1].ip == stack->frames[i].ip &&
               g_strcmp0(stack->frames[last + 1].obj, stack->frames[i].obj) == 0)
            last++;
        settle_group(info, record, stack, i, last, written);
        i = last + 1;
    }
}

void gl_debuginfo_settle(GlDebugInfo *info, GlRecord *record, gint64 written)
{
    settle_stack(info, record, &record->stack, written);
    for (guint i = 0; i < record->aux->len; i++)
        settle_stack(info, record, &g_array_index(record->aux, GlAux, i).stack, written);
}
