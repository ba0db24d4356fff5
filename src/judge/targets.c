/* Default targets: what the run loaded, or what the project built. */
#include "gemleak/judge/targets.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"

#include <elf.h>
#include <string.h>

/* A list of loaded extensions: paths, a line each (run_dir.c's bound). */
#define LOADED_LIST_MAX_BYTES ((gsize) 4 * 1024 * 1024)

static GPtrArray *sorted_keys(GHashTable *set)
{
    GPtrArray *list = g_ptr_array_new_with_free_func(g_free);
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, set);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        g_ptr_array_add(list, g_strdup(key));
    g_ptr_array_sort(list, gl_compare_strings);
    return list;
}

static void read_lists_in(const char *dir, GHashTable *dirs_done, GHashTable *paths,
                          gboolean *found)
{
    if (!g_hash_table_add(dirs_done, g_strdup(dir)))
        return;
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    if (handle == NULL)
        return;
    const char *name;
    while ((name = g_dir_read_name(handle)) != NULL) {
        if (!g_str_has_prefix(name, GL_PROTO_LOADED_PREFIX) || !g_str_has_suffix(name, GL_PROTO_FILE_SUFFIX))
            continue;
        g_autofree char *file = g_build_filename(dir, name, NULL);
        g_autofree char *contents = NULL;
        gsize length = 0;
        if (!gl_file_read_regular(file, LOADED_LIST_MAX_BYTES, &contents, &length, NULL))
            continue;
        *found = TRUE;
        g_auto(GStrv) lines = g_strsplit(contents, "\n", -1);
        for (char **line = lines; *line != NULL; line++)
            if (**line != '\0')
                g_hash_table_add(paths, g_strdup(*line));
    }
}

GPtrArray *gl_targets_from_loaded_lists(const char *const *inputs, gboolean *found)
{
    g_autoptr(GHashTable) dirs_done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gboolean any = FALSE;
    for (const char *const *input = inputs; *input != NULL; input++) {
        if (strcmp(*input, "-") == 0)
            continue;
        if (g_file_test(*input, G_FILE_TEST_IS_DIR)) {
            read_lists_in(*input, dirs_done, paths, &any);
        } else {
            g_autofree char *dir = g_path_get_dirname(*input);
            read_lists_in(dir, dirs_done, paths, &any);
        }
    }
    if (found != NULL)
        *found = any;
    return sorted_keys(paths);
}

/* ---- what a Ruby extension is ------------------------------------------------ */

/* Reads a @T from @data at @offset when it fits in @size. */
#define FITS(offset, length, size) ((offset) <= (size) && (length) <= (size) - (offset))

/* TRUE when the ELF image @data has a dynamic symbol @wanted: defined
 * there (@exported), or only named (an import too), and named @wanted
 * exactly or, with @prefix, beginning with it. Only what is needed is
 * read: the section headers, the dynamic symbol table and its strings;
 * every offset is checked against the image's size. *@elf (nullable) says
 * whether it was an ELF image gemleak reads (64-bit, little-endian). */
static gboolean elf_has_symbol(const guint8 *data, gsize size, const char *wanted,
                               gboolean prefix, gboolean exported, gboolean *elf)
{
    if (elf != NULL)
        *elf = FALSE;
    if (size < sizeof(Elf64_Ehdr) || memcmp(data, ELFMAG, SELFMAG) != 0 ||
        data[EI_CLASS] != ELFCLASS64 || data[EI_DATA] != ELFDATA2LSB)
        return FALSE;
    Elf64_Ehdr header;
    memcpy(&header, data, sizeof header);
    if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 ||
        !FITS(header.e_shoff, (guint64) header.e_shnum * sizeof(Elf64_Shdr), size))
        return FALSE;
    if (elf != NULL)
        *elf = TRUE;
    gsize wanted_len = strlen(wanted);
    /* the name and its NUL, or the prefix alone */
    gsize compared = prefix ? wanted_len : wanted_len + 1;
    for (guint i = 0; i < header.e_shnum; i++) {
        Elf64_Shdr section;
        memcpy(&section, data + header.e_shoff + (guint64) i * sizeof section, sizeof section);
        if (section.sh_type != SHT_DYNSYM || section.sh_entsize != sizeof(Elf64_Sym) ||
            section.sh_link >= header.e_shnum || !FITS(section.sh_offset, section.sh_size, size))
            continue;
        Elf64_Shdr strings;
        memcpy(&strings, data + header.e_shoff + (guint64) section.sh_link * sizeof strings,
               sizeof strings);
        if (!FITS(strings.sh_offset, strings.sh_size, size))
            continue;
        const char *names = (const char *) data + strings.sh_offset;
        for (guint64 at = 0; at + sizeof(Elf64_Sym) <= section.sh_size; at += sizeof(Elf64_Sym)) {
            Elf64_Sym symbol;
            memcpy(&symbol, data + section.sh_offset + at, sizeof symbol);
            if ((exported && symbol.st_shndx == SHN_UNDEF) || symbol.st_name >= strings.sh_size ||
                strings.sh_size - symbol.st_name < compared + (prefix ? 1 : 0))
                continue;
            if (memcmp(names + symbol.st_name, wanted, compared) == 0)
                return TRUE;
        }
    }
    return FALSE;
}

gboolean gl_elf_lacks_symbols(const char *path, const char *prefix)
{
    g_autoptr(GMappedFile) file = g_mapped_file_new(path, FALSE, NULL);
    if (file == NULL)
        return FALSE;
    gboolean elf = FALSE;
    gboolean found = elf_has_symbol((const guint8 *) g_mapped_file_get_contents(file),
                                    g_mapped_file_get_length(file), prefix, TRUE, FALSE, &elf);
    return elf && !found;
}

gboolean gl_is_ruby_extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    const char *dot = strchr(name, '.');
    if (dot == NULL || dot == name)
        return FALSE;
    g_autofree char *init = g_strdup_printf("Init_%.*s", (int) (dot - name), name);
    g_autoptr(GMappedFile) file = g_mapped_file_new(path, FALSE, NULL);
    if (file == NULL)
        return FALSE;
    return elf_has_symbol((const guint8 *) g_mapped_file_get_contents(file),
                          g_mapped_file_get_length(file), init, FALSE, TRUE, NULL);
}

/* ---- the scan -------------------------------------------------------------------- */

/* Not the project's own code: installed gems, bundles, other tools. */
static gboolean skipped_directory(const char *name)
{
    static const char *const skipped[] = { "vendor", "node_modules", "gems", "bundle", NULL };
    if (name[0] == '.')
        return TRUE;
    for (const char *const *s = skipped; *s != NULL; s++)
        if (strcmp(name, *s) == 0)
            return TRUE;
    return FALSE;
}

/* Scanning these would take other people's code for the project's. */
static gboolean system_directory(const char *dir)
{
    static const char *const roots[] = { "/", "/tmp", "/opt", "/var", "/home", "/srv", NULL };
    static const char *const trees[] = {
        "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys",
        "/dev", "/run", "/boot", "/snap", "/nix", NULL,
    };
    g_autofree char *canonical = g_canonicalize_filename(dir, NULL);
    for (const char *const *root = roots; *root != NULL; root++)
        if (strcmp(canonical, *root) == 0)
            return TRUE;
    for (const char *const *tree = trees; *tree != NULL; tree++) {
        gsize n = strlen(*tree);
        if (strncmp(canonical, *tree, n) == 0 && (canonical[n] == '\0' || canonical[n] == '/'))
            return TRUE;
    }
    return FALSE;
}

static void find_extensions(const char *dir, int depth, guint *entries, GHashTable *found)
{
    if (depth > GL_TARGETS_SCAN_DEPTH)
        return;
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    if (handle == NULL)
        return;
    const char *name;
    while ((name = g_dir_read_name(handle)) != NULL && *entries < GL_TARGETS_SCAN_ENTRIES) {
        (*entries)++;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_SYMLINK))
            continue;
        if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
            if (!skipped_directory(name))
                find_extensions(path, depth + 1, entries, found);
        } else if (g_str_has_suffix(name, ".so") && gl_is_ruby_extension(path)) {
            g_hash_table_add(found, g_canonicalize_filename(path, NULL));
        }
    }
}

GPtrArray *gl_targets_from_tree(const char *dir)
{
    g_autoptr(GHashTable) found = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    guint entries = 0;
    if (!system_directory(dir))
        find_extensions(dir, 0, &entries, found);
    return sorted_keys(found);
}
