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

/* Far above any extension or Ruby with its debug information (Ruby 3.4's
 * binary with DWARF: 46 MB). */
#define MAX_OBJECT_SIZE (G_GUINT64_CONSTANT(4) << 30)

/* A function symbol: [start, start + size) of the object's addresses. */
typedef struct {
    guint64 start;
    guint64 size;
    guint rank;          /* which of several at one address names it: lower first */
    const char *name;    /* in the module's strings */
    const char *unit;    /* a local symbol's source file (the STT_FILE before it), nullable */
} Symbol;

/* One program counter, looked up once. */
typedef struct {
    const char *symbol;
    /* Read when first asked for: a unit's tree is walked for what is
     * inlined, and Ruby's vm.c is a large one. */
    gboolean unit_read;
    Dwarf_Off unit;      /* its compilation unit's DIE, NO_UNIT: none */
    const char *comp_dir;
    gboolean inlined_read;
    char **inlined;      /* NULL-terminated, nullable */
    /* the source paths asked about that its unit holds (normalized, owned;
     * nullable): what a run records of it */
    GPtrArray *found_files;
    /* what the runtime would have named there (gl_debuginfo_runtime_frames()) */
    gboolean named_read;
    GlRuntimeFrame *named;  /* n_named of them, owned; strings in the module's */
    guint n_named;
} Answer;

#define NO_UNIT ((Dwarf_Off) -1)

/* Code an outermost DIE of a compilation unit holds: [start, end). */
typedef struct {
    guint64 start;
    guint64 end;
    guint order;         /* the DIE's place among the unit's outermost ones */
    Dwarf_Off die;
} Span;

/* Where the code of a unit's outermost DIEs lies, read once (unit_spans()):
 * a unit was walked DIE by DIE for each address named in it, and to find
 * a DIE's next libdw reads every DIE under it. Ruby's vm.c took some 0.3
 * ms a walk: 10 ms of a run that names a planted leak's 39 frames. */
typedef struct {
    GArray *spans;       /* of Span, by start */
    GArray *reach;       /* of guint64: the greatest end among spans[0..i] */
    GArray *containers;  /* of Span (order and die only): the outermost DIEs
                          * that may hold functions (may_hold_functions())
                          * and hold code, searched as they were */
} UnitSpans;

static void unit_spans_free(gpointer data)
{
    UnitSpans *spans = data;
    g_array_unref(spans->spans);
    g_array_unref(spans->reach);
    g_array_unref(spans->containers);
    g_free(spans);
}

/* An object, read once. */
typedef struct {
    char *path;
    gboolean usable;     /* it opened as ELF */
    gint64 mtime;
    char *identity;      /* nullable: what gl_debuginfo_identity() says, once asked */
    gboolean identity_read;
    int fd;
    Elf *elf;
    /* its detached debug file (its build id's, under /usr/lib/debug):
     * -1 and NULL when it has symbols and DWARF of its own, or none */
    int debug_fd;
    Elf *debug_elf;
    /* nullable: no debug information, its own or detached (module_dwarf()) */
    Dwarf *dwarf;
    /* its DWARF is its detached debug file's: opened when first asked for
     * (a frame's unit), never to name a frame (name_frames()) */
    gboolean detached_dwarf;
    gboolean dwarf_opened;
    GArray *symbols;     /* of Symbol, sorted by start, then rank */
    GStringChunk *strings;
    GHashTable *answers; /* offset (guint64*, owned) -> Answer* (owned) */
    GHashTable *files;   /* unit offset (guint64*, owned) -> its source files, a set
                          * of normalized paths as the line table gives them (owned) */
    GHashTable *units;   /* function name, raw and demangled -> its symbol's unit;
                          * made when first asked for */
    GHashTable *spans;   /* unit offset (guint64*, owned) -> UnitSpans* (owned):
                          * what code its outermost DIEs hold, read when first asked */
} Module;

struct GlDebugInfo {
    gint refs;
    GMutex lock;         /* libdw and libelf handles are not for two threads at once */
    GHashTable *modules; /* path -> Module* */
};

static void answer_free(gpointer data)
{
    Answer *answer = data;
    g_strfreev(answer->inlined);
    g_free(answer->named);
    if (answer->found_files != NULL)
        g_ptr_array_unref(answer->found_files);
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
    if (module->debug_elf != NULL)
        elf_end(module->debug_elf);
    if (module->debug_fd >= 0)
        close(module->debug_fd);
    if (module->symbols != NULL)
        g_array_unref(module->symbols);
    if (module->strings != NULL)
        g_string_chunk_free(module->strings);
    if (module->answers != NULL)
        g_hash_table_unref(module->answers);
    if (module->files != NULL)
        g_hash_table_unref(module->files);
    g_free(module->identity);
    if (module->units != NULL)
        g_hash_table_unref(module->units);
    if (module->spans != NULL)
        g_hash_table_unref(module->spans);
    g_free(module->path);
    g_free(module);
}

GlDebugInfo *gl_debuginfo_new(void)
{
    GlDebugInfo *info = g_new0(GlDebugInfo, 1);
    info->refs = 1;
    g_mutex_init(&info->lock);
    info->modules = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, module_free);
    return info;
}

GlDebugInfo *gl_debuginfo_ref(GlDebugInfo *info)
{
    g_atomic_int_inc(&info->refs);
    return info;
}

void gl_debuginfo_free(GlDebugInfo *info)
{
    if (info == NULL || !g_atomic_int_dec_and_test(&info->refs))
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

/* Adds the function symbols of the section @scn (a symbol table) of @elf
 * (the object's, or its detached debug file's). */
static void read_symbols(Module *module, Elf *elf, Elf_Scn *scn, const GElf_Shdr *header)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (data == NULL || header->sh_entsize == 0)
        return;
    gsize count = header->sh_size / header->sh_entsize;
    /* The symbol table lists each compilation unit's local symbols after
     * an STT_FILE symbol that names its source file as the compiler was
     * given it; global symbols come after them all, with no file. */
    const char *unit = NULL;
    for (gsize i = 0; i < count; i++) {
        GElf_Sym sym;
        if (gelf_getsym(data, (int) i, &sym) == NULL)
            continue;
        unsigned char type = GELF_ST_TYPE(sym.st_info);
        if (type == STT_FILE && header->sh_type == SHT_SYMTAB) {
            const char *file = elf_strptr(elf, header->sh_link, sym.st_name);
            unit = file != NULL && *file != '\0' ? g_string_chunk_insert_const(module->strings, file)
                                                  : NULL;
            continue;
        }
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
            sym.st_value == 0)
            continue;
        const char *name = elf_strptr(elf, header->sh_link, sym.st_name);
        if (name == NULL || *name == '\0')
            continue;
        Symbol symbol = { .start = sym.st_value, .size = sym.st_size,
                          .rank = symbol_rank(GELF_ST_BIND(sym.st_info)),
                          .name = g_string_chunk_insert_const(module->strings, name),
                          .unit = GELF_ST_BIND(sym.st_info) == STB_LOCAL ? unit : NULL };
        g_array_append_val(module->symbols, symbol);
    }
}

/* Reads the symbol table of @elf, and the dynamic one (a stripped object
 * keeps only that), as Valgrind reads both.
 * Returns: TRUE if @elf has a symbol table (not only the dynamic one). */
static gboolean load_symbols(Module *module, Elf *elf)
{
    gboolean full = FALSE;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(scn, &header) != NULL &&
            (header.sh_type == SHT_SYMTAB || header.sh_type == SHT_DYNSYM)) {
            read_symbols(module, elf, scn, &header);
            full |= header.sh_type == SHT_SYMTAB;
        }
    }
    g_array_sort(module->symbols, compare_symbols);
    return full;
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

/* Returns: TRUE if a DIE under @parent holds code, reached as chain_to()
 * reaches it: a child with code, or one that may hold functions and
 * does. */
static gboolean holds_code(Dwarf_Die *parent, guint depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0)
        return FALSE;
    do {
        Dwarf_Addr base, start, end;
        for (ptrdiff_t at = 0; (at = dwarf_ranges(&child, at, &base, &start, &end)) > 0;)
            if (start < end)
                return TRUE;
        if (may_hold_functions(&child) && holds_code(&child, depth + 1))
            return TRUE;
    } while (dwarf_siblingof(&child, &child) == 0);
    return FALSE;
}

static gint compare_spans(gconstpointer a, gconstpointer b)
{
    const Span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* Returns: (transfer none): where the code of @cudie's outermost DIEs
 * lies, read the first time @module is asked of that unit. */
static const UnitSpans *unit_spans(Module *module, Dwarf_Die *cudie)
{
    guint64 unit = dwarf_dieoffset(cudie);
    UnitSpans *spans = g_hash_table_lookup(module->spans, &unit);
    if (spans != NULL)
        return spans;
    spans = g_new0(UnitSpans, 1);
    spans->spans = g_array_new(FALSE, FALSE, sizeof(Span));
    spans->reach = g_array_new(FALSE, FALSE, sizeof(guint64));
    spans->containers = g_array_new(FALSE, FALSE, sizeof(Span));
    Dwarf_Die child;
    guint order = 0;
    if (dwarf_child(cudie, &child) == 0) {
        do {
            Span span = { .order = order, .die = dwarf_dieoffset(&child) };
            order++;
            gboolean code = FALSE;
            Dwarf_Addr base;
            ptrdiff_t at = 0;
            while ((at = dwarf_ranges(&child, at, &base, &span.start, &span.end)) > 0)
                if (span.start < span.end) {
                    g_array_append_val(spans->spans, span);
                    code = TRUE;
                }
            /* as chain_to() asks: one with code of its own first */
            if (!code && may_hold_functions(&child) && holds_code(&child, 1))
                g_array_append_val(spans->containers, span);
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    g_array_sort(spans->spans, compare_spans);
    guint64 reach = 0;
    for (guint i = 0; i < spans->spans->len; i++) {
        reach = MAX(reach, g_array_index(spans->spans, Span, i).end);
        g_array_append_val(spans->reach, reach);
    }
    guint64 *key = g_new(guint64, 1);
    *key = unit;
    g_hash_table_insert(module->spans, key, spans);
    return spans;
}

/* Adds to @chain what chain_to(@cudie, @address, @chain, 0) adds: the
 * DIEs of the unit that hold @address, outermost first; the first of its
 * outermost DIEs that holds it found by where their code lies, the one
 * that may hold functions before it searched as chain_to() does. */
static void chain_in_unit(Module *module, Dwarf_Die *cudie, guint64 address, GArray *chain)
{
    const UnitSpans *spans = unit_spans(module, cudie);
    /* the first in the unit's order of the spans that hold @address:
     * those that start at or before it, back while one may reach past it */
    const Span *first = NULL;
    guint low = 0, high = spans->spans->len;
    while (low < high) {
        guint middle = low + (high - low) / 2;
        if (g_array_index(spans->spans, Span, middle).start <= address)
            low = middle + 1;
        else
            high = middle;
    }
    for (guint i = low; i-- > 0 && g_array_index(spans->reach, guint64, i) > address;) {
        const Span *span = &g_array_index(spans->spans, Span, i);
        if (span->end > address && (first == NULL || span->order < first->order))
            first = span;
    }
    Dwarf_Die die;
    for (guint i = 0; i < spans->containers->len; i++) {
        const Span *container = &g_array_index(spans->containers, Span, i);
        if (first != NULL && container->order > first->order)
            break;
        if (dwarf_offdie(module->dwarf, container->die, &die) != NULL &&
            chain_to(&die, address, chain, 1))
            return;
    }
    if (first != NULL && dwarf_offdie(module->dwarf, first->die, &die) != NULL) {
        g_array_append_val(chain, die);
        chain_to(&die, address, chain, 1);
    }
}

/* Returns: (transfer full) (nullable): the names of the functions inlined
 * at @address, innermost first, NULL-terminated; NULL when none is. */
static char **inlined_at(Module *module, Dwarf_Die *cudie, guint64 address)
{
    g_autoptr(GArray) chain = g_array_new(FALSE, FALSE, sizeof(Dwarf_Die));
    chain_in_unit(module, cudie, address, chain);
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

static char *build_id(Elf *elf);

/* Reads what @module's detached debug file adds to it (Debian's -dbg and
 * -dbgsym packages: /usr/lib/debug/.build-id/NN/REST.debug, by its build
 * id): its full symbol table, and its DWARF where the object has none. */
static void read_detached(Module *module)
{
    g_autofree char *id = build_id(module->elf);
    if (id == NULL || strlen(id) < 3)
        return;
    g_autofree char *path = g_strdup_printf("/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
    module->debug_fd = g_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (module->debug_fd < 0)
        return;
    module->debug_elf = elf_begin(module->debug_fd, ELF_C_READ_MMAP, NULL);
    if (module->debug_elf == NULL || elf_kind(module->debug_elf) != ELF_K_ELF)
        return;
    g_autofree char *its = build_id(module->debug_elf);
    if (g_strcmp0(its, id) != 0)
        return;  /* another build's */
    load_symbols(module, module->debug_elf);
    module->detached_dwarf = module->dwarf == NULL;
}

/* Returns: (transfer none) (nullable): @module's DWARF; a detached debug
 * file's is opened when first asked for: libdw inflates each compressed
 * section as it opens one, and a distribution's debug files are compressed
 * (the C library's, 4 MB: some 60 ms, more than a small suite's run
 * under LeakSanitizer), where most lookups want the symbol table alone. */
static Dwarf *module_dwarf(Module *module)
{
    if (module->detached_dwarf && !module->dwarf_opened) {
        module->dwarf_opened = TRUE;
        module->dwarf = dwarf_begin_elf(module->debug_elf, DWARF_C_READ, NULL);
    }
    return module->dwarf;
}

/* Returns: (transfer none): @path's module, read now if it was not. */
static Module *module_of(GlDebugInfo *info, const char *path)
{
    Module *module = g_hash_table_lookup(info->modules, path);
    if (module != NULL)
        return module;
    module = g_new0(Module, 1);
    module->path = g_strdup(path);
    module->fd = -1;
    module->debug_fd = -1;
    g_hash_table_insert(info->modules, module->path, module);
    /* A report names any path it likes: only a regular file of a size an
     * object has is read (not /proc/kcore, 128 TiB, nor a pseudo-file). */
    GStatBuf st;
    if (g_str_has_prefix(path, "/proc/") || g_str_has_prefix(path, "/sys/") ||
        g_stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (guint64) st.st_size > MAX_OBJECT_SIZE)
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
    module->files = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                          (GDestroyNotify) g_hash_table_unref);
    module->spans = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, unit_spans_free);
    gboolean full = load_symbols(module, module->elf);
    module->dwarf = dwarf_begin_elf(module->elf, DWARF_C_READ, NULL);
    if (!full || module->dwarf == NULL)
        read_detached(module);
    return module;
}

/* Returns: (transfer none): what @module says of @address, looked up once:
 * its symbol, and what @want asks for more. */
static const Answer *answer_of(Module *module, guint64 address, GlDebugWant want)
{
    Answer *answer = g_hash_table_lookup(module->answers, &address);
    if (answer == NULL) {
        answer = g_new0(Answer, 1);
        answer->symbol = symbol_at(module, address);
        answer->unit = NO_UNIT;
        gint64 *key = g_new(gint64, 1);
        *key = (gint64) address;
        g_hash_table_insert(module->answers, key, answer);
    }
    Dwarf_Die cudie;
    if ((want & (GL_DEBUG_UNIT | GL_DEBUG_INLINED)) != 0 && !answer->unit_read) {
        answer->unit_read = TRUE;
        if (module_dwarf(module) != NULL && unit_at(module->dwarf, address, &cudie)) {
            answer->unit = dwarf_dieoffset(&cudie);
            Dwarf_Attribute attribute;
            const char *dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attribute));
            answer->comp_dir = dir != NULL ? g_string_chunk_insert_const(module->strings, dir)
                                           : NULL;
        }
    }
    if ((want & GL_DEBUG_INLINED) != 0 && !answer->inlined_read) {
        answer->inlined_read = TRUE;
        if (answer->unit != NO_UNIT && dwarf_offdie(module->dwarf, answer->unit, &cudie) != NULL)
            answer->inlined = inlined_at(module, &cudie, address);
    }
    return answer;
}

/* Returns: TRUE if the compilation unit at @unit of @module has @relative
 * (a path as its line table spells it, before the compilation's directory)
 * among its source files. */
static gboolean unit_has_file(Module *module, Dwarf_Off unit, const char *relative)
{
    if (unit == NO_UNIT)
        return FALSE;
    guint64 key = unit;
    GHashTable *files = g_hash_table_lookup(module->files, &key);
    if (files == NULL) {
        files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        Dwarf_Die cudie;
        Dwarf_Files *table = NULL;
        size_t n = 0;
        if (dwarf_offdie(module->dwarf, unit, &cudie) != NULL &&
            dwarf_getsrcfiles(&cudie, &table, &n) == 0)
            for (size_t i = 0; i < n; i++) {
                const char *name = dwarf_filesrc(table, i, NULL, NULL);
                if (name != NULL)
                    g_hash_table_add(files, gl_path_normalize(name));
            }
        gint64 *owned = g_new(gint64, 1);
        *owned = (gint64) unit;
        g_hash_table_insert(module->files, owned, files);
    }
    g_autofree char *normalized = gl_path_normalize(relative);
    return g_hash_table_contains(files, normalized);
}

/* ---- what an object is ---------------------------------------------------------- */

/* Returns: (transfer full) (nullable): @elf's GNU build id, in hex,
 * from its notes (ld --build-id, which Debian's and Fedora's compilers
 * pass by default); NULL when it has none. */
static char *build_id(Elf *elf)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(scn, &header) == NULL || header.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t offset = 0, name_at = 0, desc_at = 0;
        GElf_Nhdr note;
        while (data != NULL && offset < data->d_size &&
               (offset = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
            if (note.n_type != NT_GNU_BUILD_ID || note.n_namesz != 4 || note.n_descsz == 0 ||
                desc_at + note.n_descsz > data->d_size ||
                memcmp((const char *) data->d_buf + name_at, "GNU", 4) != 0)
                continue;
            const guint8 *id = (const guint8 *) data->d_buf + desc_at;
            GString *hex = g_string_sized_new(2 * (gsize) note.n_descsz);
            for (size_t i = 0; i < note.n_descsz; i++)
                g_string_append_printf(hex, "%02x", id[i]);
            return g_string_free(hex, FALSE);
        }
    }
    return NULL;
}

/* Returns: (transfer none) (nullable): what @module is, read once: its
 * build id, else a digest of its bytes (an object linked without one). The
 * caller holds the lock. */
static const char *module_identity(Module *module)
{
    if (module->identity_read)
        return module->identity;
    module->identity_read = TRUE;
    if (!module->usable)
        return NULL;
    g_autofree char *id = build_id(module->elf);
    if (id != NULL) {
        module->identity = g_strconcat("build-id:", id, NULL);
        return module->identity;
    }
    g_autoptr(GMappedFile) file = g_mapped_file_new(module->path, FALSE, NULL);
    if (file == NULL)
        return NULL;
    g_autofree char *digest = g_compute_checksum_for_data(
        G_CHECKSUM_SHA256, (const guchar *) g_mapped_file_get_contents(file),
        g_mapped_file_get_length(file));
    module->identity = g_strconcat("sha256:", digest, NULL);
    return module->identity;
}

/* ---- lookups ------------------------------------------------------------------- */

/* Returns: (transfer none) (nullable): what the object at @path says of
 * @offset, and *module its object; NULL when it cannot be read, or is not
 * the object the run recorded (@recorded, nullable), or, the run having
 * recorded nothing of it, was modified after @written. The caller holds
 * the lock. */
static Answer *lookup(GlDebugInfo *info, const GlRunRecord *recorded, const char *path,
                      guint64 offset, gint64 written, GlDebugWant want, Module **module)
{
    if (path == NULL || offset == 0)
        return NULL;
    *module = module_of(info, path);
    if (!(*module)->usable)
        return NULL;
    const char *identity = recorded != NULL ? gl_run_record_object_identity(recorded, path)
                                            : NULL;
    if (identity != NULL ? g_strcmp0(module_identity(*module), identity) != 0
                         : written != 0 && (*module)->mtime > written)
        return NULL;
    return (Answer *) answer_of(*module, offset, want);
}

gboolean gl_debuginfo_frame(GlDebugInfo *info, const GlRunRecord *recorded, const char *path,
                            guint64 offset, gint64 written, GlDebugWant want,
                            GlDebugFrame *frame)
{
    memset(frame, 0, sizeof *frame);
    GlRecordedAt at;
    if (recorded != NULL && gl_run_record_at(recorded, path, offset, &at)) {
        frame->symbol = at.symbol;
        frame->comp_dir = at.comp_dir;
        frame->inlined = at.inlined;
        return TRUE;
    }
    g_mutex_lock(&info->lock);
    Module *module = NULL;
    const Answer *answer = lookup(info, recorded, path, offset, written, want, &module);
    if (answer != NULL) {
        frame->symbol = answer->symbol;
        frame->comp_dir = answer->comp_dir;
        frame->inlined = (const char *const *) answer->inlined;
    }
    g_mutex_unlock(&info->lock);
    return answer != NULL;
}

gboolean gl_debuginfo_has_file(GlDebugInfo *info, const GlRunRecord *recorded, const char *path,
                               guint64 offset, gint64 written, const char *relative)
{
    g_autofree char *normalized = gl_path_normalize(relative);
    GlRecordedAt at;
    if (recorded != NULL && gl_run_record_at(recorded, path, offset, &at)) {
        for (const char *const *file = at.unit_files; file != NULL && *file != NULL; file++)
            if (strcmp(*file, normalized) == 0)
                return TRUE;
        return FALSE;
    }
    g_mutex_lock(&info->lock);
    Module *module = NULL;
    Answer *answer = lookup(info, recorded, path, offset, written, GL_DEBUG_UNIT, &module);
    gboolean has = answer != NULL && unit_has_file(module, answer->unit, relative);
    /* what a run records of the offset */
    if (has && answer->found_files == NULL)
        answer->found_files = g_ptr_array_new_with_free_func(g_free);
    if (has && !g_ptr_array_find_with_equal_func(answer->found_files, normalized, g_str_equal,
                                                 NULL))
        g_ptr_array_add(answer->found_files, g_strdup(normalized));
    g_mutex_unlock(&info->lock);
    return has;
}

char *gl_debuginfo_identity(GlDebugInfo *info, const char *path)
{
    g_mutex_lock(&info->lock);
    char *identity = g_strdup(module_identity(module_of(info, path)));
    g_mutex_unlock(&info->lock);
    return identity;
}

gboolean gl_debuginfo_record(GlDebugInfo *info, const char *path, guint64 offset,
                             GlRunRecord *record)
{
    g_mutex_lock(&info->lock);
    Module *module = path != NULL ? g_hash_table_lookup(info->modules, path) : NULL;
    const Answer *answer = module != NULL && module->usable
                               ? g_hash_table_lookup(module->answers, &offset) : NULL;
    const char *identity = answer != NULL ? module_identity(module) : NULL;
    if (identity != NULL) {
        g_autoptr(GPtrArray) files = g_ptr_array_new_null_terminated(0, NULL, TRUE);
        for (guint i = 0; answer->found_files != NULL && i < answer->found_files->len; i++)
            g_ptr_array_add(files, g_ptr_array_index(answer->found_files, i));
        GlRecordedAt at = {
            .symbol = answer->symbol,
            .comp_dir = answer->comp_dir,
            .inlined = (const char *const *) answer->inlined,
            .unit_files = (const char *const *) files->pdata,
        };
        gl_run_record_add_object(record, path, identity);
        gl_run_record_add_at(record, path, offset, &at);
    }
    g_mutex_unlock(&info->lock);
    return identity != NULL;
}

/* ---- a function's compilation unit ----------------------------------------------- */

/* The units of @module's function symbols by name, raw and demangled (as
 * Valgrind names a frame). A name two units define (a static helper in
 * each) is no unit's. */
static void load_units(Module *module)
{
    module->units = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) ambiguous = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < module->symbols->len; i++) {
        const Symbol *symbol = &g_array_index(module->symbols, Symbol, i);
        g_autofree char *demangled = gl_demangle(symbol->name);
        const char *names[] = { symbol->name, demangled };
        for (guint n = 0; n < G_N_ELEMENTS(names); n++) {
            if (names[n] == NULL || g_hash_table_contains(ambiguous, names[n]))
                continue;
            gpointer known = NULL;
            if (g_hash_table_lookup_extended(module->units, names[n], NULL, &known) &&
                known != symbol->unit) {
                g_hash_table_remove(module->units, names[n]);
                g_hash_table_add(ambiguous, g_strdup(names[n]));
                continue;
            }
            g_hash_table_insert(module->units, g_strdup(names[n]), (gpointer) symbol->unit);
        }
    }
}

const char *gl_debuginfo_symbol_unit(GlDebugInfo *info, const char *path, const char *function)
{
    g_mutex_lock(&info->lock);
    Module *module = module_of(info, path);
    const char *unit = NULL;
    if (module->usable) {
        if (module->units == NULL)
            load_units(module);
        unit = g_hash_table_lookup(module->units, function);
    }
    g_mutex_unlock(&info->lock);
    return unit;
}

/* ---- a frame as the runtime names it ---------------------------------------------- */

/* Returns: (transfer none): @file, a path as a line table spells it, kept
 * as the runtime spells it: without a leading "./". */
static const char *runtime_file(Module *module, const char *file)
{
    while (file[0] == '.' && file[1] == '/' && file[2] != '\0')
        file += 2;
    return g_string_chunk_insert_const(module->strings, file);
}

/* Returns: (transfer none) (nullable): the name the runtime gives the
 * function @die is (a subprogram, or an inlined instance of one). */
static const char *runtime_name(Module *module, Dwarf_Die *die)
{
    Dwarf_Attribute attribute;
    const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name,
                                                                &attribute));
    if (linkage == NULL)
        linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name,
                                                        &attribute));
    if (linkage != NULL) {
        g_autofree char *demangled = gl_demangle_as_cxa(linkage);
        return g_string_chunk_insert_const(module->strings,
                                           demangled != NULL ? demangled : linkage);
    }
    const char *name = dwarf_diename(die);
    return name != NULL ? g_string_chunk_insert_const(module->strings, name) : NULL;
}

/* Sets @frame's file and line to those of the call @die (an inlined
 * instance, of the unit @cudie) was inlined at. */
static void call_site(Module *module, Dwarf_Die *cudie, Dwarf_Die *die, GlRuntimeFrame *frame)
{
    Dwarf_Attribute attribute;
    Dwarf_Word value = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attribute), &value) == 0 &&
        value <= G_MAXUINT)
        frame->line = (guint) value;
    Dwarf_Files *files = NULL;
    size_t n = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attribute), &value) == 0 &&
        dwarf_getsrcfiles(cudie, &files, &n) == 0 && value < n) {
        const char *file = dwarf_filesrc(files, value, NULL, NULL);
        if (file != NULL)
            frame->file = runtime_file(module, file);
    }
}

/* Names @address of @module into @answer as the runtime would: the DIEs
 * that hold it, the innermost function and what is inlined in it; else
 * the symbol table's function alone. An object whose DWARF is a detached
 * file's (the C library's, from libc6-dbg) is named by the symbol table
 * alone, where the runtime reads that file too: its function, no line. */
static void name_frames(Module *module, guint64 address, Answer *answer)
{
    g_autoptr(GArray) frames = g_array_new(FALSE, TRUE, sizeof(GlRuntimeFrame));
    Dwarf_Die cudie;
    GlRuntimeFrame here = { 0 };
    /* a detached debug file lends its symbols only (module_dwarf()) */
    Dwarf *dwarf = module->detached_dwarf ? NULL : module->dwarf;
    if (dwarf != NULL && unit_at(dwarf, address, &cudie)) {
        Dwarf_Line *line = dwarf_getsrc_die(&cudie, address);
        int number = 0;
        const char *file = line != NULL ? dwarf_linesrc(line, NULL, NULL) : NULL;
        here.file = file != NULL ? runtime_file(module, file) : NULL;
        if (line != NULL && dwarf_lineno(line, &number) == 0 && number > 0)
            here.line = (guint) number;
        g_autoptr(GArray) chain = g_array_new(FALSE, FALSE, sizeof(Dwarf_Die));
        chain_in_unit(module, &cudie, address, chain);
        guint function = chain->len;
        for (guint i = chain->len; i-- > 0 && function == chain->len;)
            if (dwarf_tag(&g_array_index(chain, Dwarf_Die, i)) == DW_TAG_subprogram)
                function = i;
        /* the inlined instances in it, innermost first: each at the line
         * the one inside it was called from */
        for (guint i = chain->len; function < chain->len && i-- > function + 1;) {
            Dwarf_Die *die = &g_array_index(chain, Dwarf_Die, i);
            if (dwarf_tag(die) != DW_TAG_inlined_subroutine)
                continue;
            here.function = runtime_name(module, die);
            g_array_append_val(frames, here);
            here = (GlRuntimeFrame) { 0 };
            call_site(module, &cudie, die, &here);
        }
        if (function < chain->len)
            here.function = runtime_name(module, &g_array_index(chain, Dwarf_Die, function));
    }
    /* no DWARF there: the symbol table's name, demangled as the runtime
     * demangles every name */
    if (here.function == NULL && answer->symbol != NULL) {
        g_autofree char *demangled = gl_demangle_as_cxa(answer->symbol);
        here.function = demangled != NULL
                            ? g_string_chunk_insert_const(module->strings, demangled)
                            : answer->symbol;
    }
    if (here.function != NULL || here.file != NULL || frames->len > 0)
        g_array_append_val(frames, here);
    answer->n_named = frames->len;
    answer->named = frames->len > 0
                        ? g_memdup2(frames->data, frames->len * sizeof(GlRuntimeFrame)) : NULL;
}

guint gl_debuginfo_runtime_frames(GlDebugInfo *info, const char *path, guint64 offset,
                                  const GlRuntimeFrame **frames)
{
    *frames = NULL;
    if (path == NULL)
        return 0;
    g_mutex_lock(&info->lock);
    Module *module = module_of(info, path);
    guint n = 0;
    if (module->usable) {
        Answer *answer = (Answer *) answer_of(module, offset, GL_DEBUG_SYMBOL);
        if (!answer->named_read) {
            answer->named_read = TRUE;
            name_frames(module, offset, answer);
        }
        *frames = answer->named;
        n = answer->n_named;
    }
    g_mutex_unlock(&info->lock);
    return n;
}
