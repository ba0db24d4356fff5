/* The allocation front (src/agent/alloc.c), as gemleak builds it: it
 * has every allocation function the sanitizers' runtimes intercept. */
#define _GNU_SOURCE
#include "testutil.h"
#include "gemleak/base/protocol.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* Returns: (transfer full): the functions @path defines and exports, a set. */
static GHashTable *exported(const char *path)
{
    GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "%s", path);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    ck_assert_ptr_nonnull(elf);
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr header;
        if (gelf_getshdr(scn, &header) == NULL || header.sh_type != SHT_DYNSYM)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; data != NULL && i < header.sh_size / header.sh_entsize; i++) {
            GElf_Sym sym;
            if (gelf_getsym(data, (int) i, &sym) == NULL || sym.st_shndx == SHN_UNDEF ||
                GELF_ST_TYPE(sym.st_info) != STT_FUNC || GELF_ST_BIND(sym.st_info) == STB_LOCAL)
                continue;
            g_hash_table_add(names, g_strdup(elf_strptr(elf, header.sh_link, sym.st_name)));
        }
    }
    elf_end(elf);
    close(fd);
    return names;
}

/* Issue 35, 10: every allocation function a sanitizer runtime intercepts
 * is one the allocation front has, so that each block gets a stack it can
 * judge and the exact pass unwinds it: C++17's aligned operator new was
 * not, and its leak read "0 of the 5 got their whole stack", exit 3. And
 * every function that frees (free, each operator delete): the front
 * installs none of the runtime's hooks, and a block freed where it did not
 * see it would keep its owner, and its entries among the hidden blocks and
 * the exact pass's, for the next block at its address. A runtime that
 * intercepts one more fails this test. */
START_TEST(test_front_has_every_allocation_function_the_runtimes_intercept)
{
    g_autofree char *front = gl_test_project_file("build/client/gemleak_alloc.so");
    if (!g_file_test(front, G_FILE_TEST_EXISTS))
        gl_test_skip("no %s (make builds it)", front);
    g_autoptr(GHashTable) ours = exported(front);
    /* what allocates, by name: the C library's families, C++'s new */
    static const char *const allocating[] = { "*alloc", "*alloc_*", "*memalign", "*strdup",
                                              "strndup", "_Znw*", "_Zna*", "free", "cfree",
                                              "_Zdl*", "_Zda*", NULL };
    static const char *const not_allocating[] = { "malloc_usable_size", "*alloc_stats*",
                                                  "__sanitizer_*", "__lsan_*", "__asan_*",
                                                  "__interceptor_*", NULL };
    const char *const libraries[] = { "liblsan.so", "libasan.so" };
    guint checked = 0;
    for (guint l = 0; l < G_N_ELEMENTS(libraries); l++) {
        g_autofree char *path = gl_test_gcc_file(libraries[l]);
        if (path == NULL)
            continue;
        g_autoptr(GHashTable) theirs = exported(path);
        GHashTableIter iter;
        gpointer name;
        g_hash_table_iter_init(&iter, theirs);
        while (g_hash_table_iter_next(&iter, &name, NULL)) {
            gboolean allocates = FALSE;
            for (const char *const *glob = allocating; *glob != NULL; glob++)
                allocates |= fnmatch(*glob, name, 0) == 0;
            for (const char *const *glob = not_allocating; *glob != NULL; glob++)
                allocates &= fnmatch(*glob, name, 0) != 0;
            if (!allocates)
                continue;
            checked++;
            ck_assert_msg(g_hash_table_contains(ours, name), "%s intercepts %s, which %s lacks",
                          path, (const char *) name, front);
        }
    }
    if (checked == 0)
        gl_test_skip("no sanitizer runtime found by gcc -print-file-name");
}
END_TEST

/* An extension's allocation functions (a library: code outside the
 * program's own, which the front takes for Ruby's), and a program that
 * frees a block and has each allocate one of its size: the address the
 * block was freed at is the one LeakSanitizer's allocator hands out next. */
static const char extension_c[] =
    "#include <stdlib.h>\n"
    "void *ext_malloc(size_t n) { return malloc(n); }\n"
    "void *ext_calloc(size_t n) { return calloc(1, n); }\n"
    "void *ext_realloc(void *p, size_t n) { return realloc(p, n); }\n"
    "void ext_free(void *p) { free(p); }\n"
    "void *ext_aligned(size_t a, size_t n) { return aligned_alloc(a, n); }\n"
    "void *ext_memalign(size_t a, size_t n) { void *p = 0; return posix_memalign(&p, a, n) ? 0 : p; }\n";
static const char program_c[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "void *ext_malloc(size_t); void *ext_calloc(size_t); void *ext_realloc(void *, size_t);\n"
    "void ext_free(void *); void *ext_aligned(size_t, size_t); void *ext_memalign(size_t, size_t);\n"
    "static const char *same(void *a, void *b) { return a == b ? \"again\" : \"another\"; }\n"
    "int main(void) {\n"
    "    void *volatile a = malloc(24); free(a); void *volatile b = malloc(24);\n"
    "    printf(\"program: %s\\n\", same(a, b));\n"
    "    a = ext_malloc(40); ext_free(a); b = ext_malloc(40);\n"
    "    printf(\"malloc: %s\\n\", same(a, b));\n"
    "    a = malloc(40); free(a); b = ext_calloc(40);\n"
    "    printf(\"calloc: %s\\n\", same(a, b));\n"
    "    a = malloc(56); free(a); b = ext_realloc(ext_malloc(8), 56);\n"
    "    printf(\"realloc: %s\\n\", same(a, b));\n"
    "    a = malloc(32); free(a); b = ext_aligned(16, 32);\n"
    "    printf(\"aligned_alloc: %s\\n\", same(a, b));\n"
    "    a = malloc(64); free(a); b = ext_memalign(64, 40);\n"
    "    printf(\"posix_memalign: %s\\n\", same(a, b));\n"
    "    a = malloc(1024); free(a); b = ext_malloc(1024);\n"
    "    printf(\"largest kept: %s\\n\", same(a, b));\n"
    "    int again = 0;\n"
    "    for (int i = 0; i < 50000; i++) {\n"
    "        a = ext_malloc(72); ext_free(a); b = ext_malloc(72); again += a == b; ext_free(b);\n"
    "    }\n"
    "    printf(\"churned: %d again\\n\", again);\n"
    "    again = 0;\n"
    "    for (int i = 0; i < 50000; i++) {\n"
    "        a = ext_malloc(72 + i % 9); ext_free(a); b = ext_malloc(72 + (i + 4) % 9);\n"
    "        again += a == b; ext_free(b);\n"
    "    }\n"
    "    printf(\"churned in a size class: %d again\\n\", again);\n"
    "    return 0;\n"
    "}\n";

/* What program_c prints where the front keeps the extension's blocks from
 * recent addresses, and the program's own not. */
static const char kept_apart[] = "program: again\n"
                                 "malloc: another\n"
                                 "calloc: another\n"
                                 "realloc: another\n"
                                 "aligned_alloc: another\n"
                                 "posix_memalign: another\n"
                                 "largest kept: another\n"
                                 "churned: 0 again\n"
                                 "churned in a size class: 0 again\n";

/* Builds @ext_text as libext.so and @program_text as a program linked
 * with it (new and delete left to the runtime), and runs the program
 * under the front and LeakSanitizer's runtime, as a call-mode Ruby runs,
 * with the runtime's @options. Skips the test without the front, the
 * runtime or cc.
 * Returns: (transfer full): what the program printed; *@err (transfer
 * full, nullable) what it wrote to standard error; it exited 0. */
static char *run_under_front_with(const char *ext_text, const char *program_text,
                                  const char *options, char **err_out)
{
    g_autofree char *front = gl_test_project_file("build/client/gemleak_alloc.so");
    if (!g_file_test(front, G_FILE_TEST_EXISTS))
        gl_test_skip("no %s (make builds it)", front);
    g_autofree char *runtime = gl_test_gcc_file("liblsan.so");
    g_autofree char *cc = g_find_program_in_path("cc");
    if (runtime == NULL || cc == NULL)
        gl_test_skip("no liblsan found by gcc -print-file-name, or no cc, to run a program under");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *ext = g_build_filename(dir, "ext.c", NULL);
    g_autofree char *program = g_build_filename(dir, "program.c", NULL);
    gl_test_write(ext, ext_text, -1);
    gl_test_write(program, program_text, -1);
    const char *build_ext[] = { "cc", "-O1", "-shared", "-fPIC", "-o", "libext.so", "ext.c", NULL };
    const char *build[] = { "cc", "-O1", "-o", "program", "program.c", "-L.", "-lext", "-ldl",
                            "-Wl,-rpath,$ORIGIN", "-Wl,--allow-shlib-undefined", NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn_in(dir, NULL, build_ext, NULL, &err) == 0, "%s", err);
    g_clear_pointer(&err, g_free);
    ck_assert_msg(gl_test_spawn_in(dir, NULL, build, NULL, &err) == 0, "%s", err);
    g_clear_pointer(&err, g_free);
    g_autofree char *preload = g_strdup_printf("%s:%s", front, runtime);
    g_auto(GStrv) env = g_get_environ();
    env = g_environ_setenv(env, "LD_PRELOAD", preload, TRUE);
    env = g_environ_setenv(env, GL_PROTO_ALLOC_MODE_VARIABLE, GL_PROTO_UNWOUND_CALL, TRUE);
    env = g_environ_setenv(env, "LSAN_OPTIONS", options, TRUE);
    const char *run[] = { "./program", NULL };
    char *out = NULL;
    int status = gl_test_spawn_in(dir, env, run, &out, &err);
    gl_remove_tree(dir);
    ck_assert_msg(status == 0, "%s", err);
    if (err_out != NULL)
        *err_out = g_steal_pointer(&err);
    return out;
}

/* run_under_front_with(), no leak check. */
static char *run_under_front(const char *ext_text, const char *program_text)
{
    return run_under_front_with(ext_text, program_text, "detect_leaks=0", NULL);
}

/* Under LeakSanitizer, which hands the block freed last out first, the
 * front keeps an extension's blocks from recent addresses, a stale word
 * of Ruby's could name them (alloc_held.c): by malloc, by calloc (which
 * clears the block), by realloc (which moves it), aligned (posix_memalign
 * returns its status, the block in its argument), up to the largest size
 * kept (ALLOC_HELD_MAX: frees above its size class are not recorded, and
 * its own must be), and through 50,000 (of one size, then of nine sizes
 * of one size class, whose old parked blocks take each other's place)
 * frees, three times as many as the blocks it sets aside, and more than
 * its window. The program's own blocks (Ruby's) are used again at once:
 * while every freed block was held back, Ruby got cold blocks, at some 15%
 * of a suite's time. */
START_TEST(test_front_keeps_recent_addresses_from_the_extension_alone)
{
    g_autofree char *out = run_under_front(extension_c, program_c);
    ck_assert_str_eq(out, kept_apart);
}
END_TEST

/* Every free is recorded in the shadow of recent frees (alloc_held.c), a
 * byte a granule: where the granule was 16 bytes whatever the blocks'
 * size class, freeing 8 MiB of 1 KiB blocks wrote a byte every 64, and
 * faulted in a page of the shadow for each 64 KiB freed (128 here; some
 * 1,000 in psych's suite, at 12 us each on a virtual machine). A granule
 * of a size class's region is as large as its blocks allow: the frees
 * below fault in a page or two of it. The blocks are touched before, and
 * the runtime's own lists of freed blocks take a few pages. */
static const char frees_program_c[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include <stdlib.h>\n"
    "#include <sys/resource.h>\n"
    "static long faults(void) { struct rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_minflt; }\n"
    "int main(void) {\n"
    "    enum { N = 8192 };\n"
    "    static void *blocks[N];\n"
    "    for (int i = 0; i < N; i++) { blocks[i] = malloc(1024); memset(blocks[i], 1, 1024); }\n"
    "    long before = faults();\n"
    "    for (int i = 0; i < N; i++) free(blocks[i]);\n"
    "    printf(\"%ld\\n\", faults() - before);\n"
    "    return 0;\n"
    "}\n";

START_TEST(test_front_records_frees_in_a_shadow_of_the_blocks_size)
{
    g_autofree char *out = run_under_front(extension_c, frees_program_c);
    gint64 faults = g_ascii_strtoll(out, NULL, 10);
    ck_assert_msg(faults < 48, "freeing 8 MiB of 1 KiB blocks faulted in %" G_GINT64_FORMAT " pages",
                  faults);
}
END_TEST

/* The blocks the front parks (alloc_held.c) are reachable: the list of
 * them is the runtime's blocks, which this library's memory points to.
 * After 50,000 of an extension's blocks were freed, a check at exit finds
 * only what the program lost, where the front holds thousands parked. */
START_TEST(test_front_parks_blocks_the_check_reaches)
{
    const char *lost = strstr(program_c, "    return 0;\n}");
    ck_assert_ptr_nonnull(lost);
    g_autofree char *program = g_strdup_printf("%.*s    ext_malloc(4321); b = 0;\n%s",
                                               (int) (lost - program_c), program_c, lost);
    g_autofree char *err = NULL;
    g_autofree char *out = run_under_front_with(extension_c, program,
                                                "exitcode=0:fast_unwind_on_malloc=0", &err);
    ck_assert_str_eq(out, kept_apart);
    const char *summary = strstr(err, "SUMMARY: ");
    ck_assert_msg(summary != NULL, "no check ran:\n%.2000s", err);
    /* the block it loses, and the seven of 1,256 bytes its first lines keep */
    const char *expected = "SUMMARY: LeakSanitizer: 5577 byte(s) leaked in 8 allocation(s).";
    ck_assert_msg(strncmp(summary, expected, strlen(expected)) == 0,
                  "the check found more than the lost blocks: %.200s", summary);
}
END_TEST

/* A library with thread-local storage of its own (too large for the room
 * the C library keeps for libraries loaded later), and a program that
 * loads a second copy of it and touches it: the dynamic loader allocates
 * the copy's storage when the thread first touches it, with malloc. */
static const char tls_ext_c[] = "static __thread char big[100000];\n"
                                "char *touch(void) { big[0] = 1; return big; }\n";
static const char tls_program_c[] =
    "#include <dlfcn.h>\n"
    "#include <stdio.h>\n"
    "char *touch(void);\n"
    "int main(void) {\n"
    "    FILE *in = fopen(\"libext.so\", \"rb\"), *out = fopen(\"libtls.so\", \"wb\");\n"
    "    char buf[4096]; size_t n;\n"
    "    while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);\n"
    "    fclose(in); fclose(out);\n"
    "    void *h = dlopen(\"./libtls.so\", RTLD_NOW);\n"
    "    if (h == NULL) { puts(dlerror()); return 1; }\n"
    "    char *(*copy)(void) = (char *(*)(void)) dlsym(h, \"touch\");\n"
    "    printf(\"touched: %d %d\\n\", touch()[0], copy()[0]);\n"
    "    return 0;\n"
    "}\n";

/* LeakSanitizer takes what the dynamic loader allocates for reachable (a
 * library's thread-local storage, which nothing it scans points to) by the
 * allocating call: the loader's. The front calls the runtime with that
 * caller: its allocation functions jump to the function that decides,
 * which jumps to the runtime, leaving no frame of theirs between. With a
 * frame of the front's there, the check took the storage for lost (and
 * the runtime's own suppression of `__tls_get_addr` hid it). */
START_TEST(test_front_leaves_the_loaders_allocations_its_own)
{
    g_autofree char *err = NULL;
    g_autofree char *out = run_under_front_with(tls_ext_c, tls_program_c,
                                                "exitcode=0:fast_unwind_on_malloc=1", &err);
    ck_assert_str_eq(out, "touched: 1 1\n");
    ck_assert_msg(strstr(err, "LeakSanitizer") == NULL && strstr(err, "Suppressions used") == NULL,
                  "the check took the loader's allocation for lost:\n%.2000s", err);
}
END_TEST

/* A library's allocations (an extension's) and the program's (Ruby's), for
 * the owners: new and delete as the runtime has them, by their mangled
 * names. */
static const char owners_ext_c[] =
    "#include <stdlib.h>\n"
    "void *_Znwm(size_t); void _ZdlPv(void *); void _ZdlPvm(void *, size_t);\n"
    "void *_Znam(size_t); void _ZdaPv(void *);\n"
    "void *ext_malloc(size_t n) { return malloc(n); }\n"
    "void *ext_calloc(size_t n) { return calloc(1, n); }\n"
    "void *ext_realloc(void *p, size_t n) { return realloc(p, n); }\n"
    "void ext_free(void *p) { free(p); }\n"
    "void *ext_new(size_t n) { return _Znwm(n); }\n"
    "void ext_delete(void *p) { _ZdlPv(p); }\n"
    "void ext_delete_sized(void *p, size_t n) { _ZdlPvm(p, n); }\n"
    "void *ext_new_array(size_t n) { return _Znam(n); }\n"
    "void ext_delete_array(void *p) { _ZdaPv(p); }\n";
/* The program hands the front its owner, as the client library does,
 * allocates under owners 7, 9 and none, keeps its blocks only masked (so
 * that the check at exit finds those still allocated lost), and prints
 * each block's address, then how many blocks the front's table holds;
 * before it exits, the front writes where its owners' frames lie. */
static const char owners_program_c[] =
    "#include <dlfcn.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "void *ext_malloc(size_t); void *ext_calloc(size_t); void *ext_realloc(void *, size_t);\n"
    "void ext_free(void *); void *ext_new(size_t); void ext_delete(void *);\n"
    "void ext_delete_sized(void *, size_t); void *ext_new_array(size_t);\n"
    "void ext_delete_array(void *);\n"
    "#define MASK ((uintptr_t) 0x5a5a5a5a5a5a5a5aUL)\n"
    "static volatile uint32_t owner;\n"
    "static const char *names[20]; static uintptr_t blocks[20]; static int n;\n"
    "static void keep(const char *name, void *p) { names[n] = name; blocks[n++] = (uintptr_t) p ^ MASK; }\n"
    "static __attribute__((noinline)) void work(void) {\n"
    "    owner = 7;\n"
    "    void *mine = malloc(24), *kept = ext_malloc(40), *gone = ext_malloc(40);\n"
    "    ext_free(gone);\n"
    "    void *old = ext_malloc(100), *moved = ext_realloc(old, 4096);\n"
    "    void *big = ext_malloc(1 << 20), *big_gone = ext_malloc(1 << 20);\n"
    "    ext_free(big_gone);\n"
    "    void *newed = ext_new(48), *deleted = ext_new(48);\n"
    "    ext_delete(deleted);\n"
    "    void *sized = ext_new(64), *array = ext_new_array(80);\n"
    "    ext_delete_sized(sized, 64); ext_delete_array(array);\n"
    "    void *ruby_freed = ext_malloc(40), *ruby_moved = ext_malloc(40);\n"
    "    free(ruby_freed);\n"
    "    void *ruby_moved_to = realloc(ruby_moved, 8192);\n"
    "    owner = 9;\n"
    "    void *other = ext_calloc(16);\n"
    "    owner = 0;\n"
    "    void *nobody = ext_malloc(16);\n"
    "    keep(\"mine\", mine); keep(\"kept\", kept); keep(\"gone\", gone); keep(\"old\", old);\n"
    "    keep(\"moved\", moved); keep(\"big\", big); keep(\"big_gone\", big_gone);\n"
    "    keep(\"newed\", newed); keep(\"deleted\", deleted); keep(\"sized\", sized);\n"
    "    keep(\"array\", array); keep(\"other\", other);\n"
    "    keep(\"ruby_freed\", ruby_freed); keep(\"ruby_moved\", ruby_moved);\n"
    "    keep(\"ruby_moved_to\", ruby_moved_to); keep(\"nobody\", nobody);\n"
    "}\n"
    "static __attribute__((noinline)) void scrub(void) {\n"
    "    volatile char stack[65536];\n"
    "    for (size_t i = 0; i < sizeof stack; i++) stack[i] = 0;\n"
    "}\n"
    "int main(void) {\n"
    "    int (*start)(const volatile uint32_t *) = (int (*)(const volatile uint32_t *))\n"
    "        dlsym(RTLD_DEFAULT, \"gemleak_alloc_owners_start\");\n"
    "    void *(*owned)(size_t *, size_t *) = (void *(*)(size_t *, size_t *))\n"
    "        dlsym(RTLD_DEFAULT, \"gemleak_alloc_owned\");\n"
    "    void (*before)(void) = (void (*)(void)) dlsym(RTLD_DEFAULT, \"gemleak_alloc_before_check\");\n"
    "    if (start == NULL || owned == NULL || before == NULL || !start(&owner)) { puts(\"no owners\"); return 0; }\n"
    "    work();\n"
    "    scrub();\n"
    "    for (int i = 0; i < n; i++) printf(\"%s %lx\\n\", names[i], (unsigned long) (blocks[i] ^ MASK));\n"
    "    size_t held, bytes;\n"
    "    owned(&held, &bytes);\n"
    "    printf(\"held: %zu\\n\", held);\n"
    "    fflush(stdout);\n"
    "    before();\n"
    "    return 0;\n"
    "}\n";

/* Returns: (transfer full): what @out (the program's: "NAME ADDRESS"
 * lines, then "held: N") and @err (the runtime's report of the blocks
 * lost at exit, with their stacks and objects) say of each block: "NAME:
 * OWNER" as its stack's owner frame says it (at OFFSET + 2 * OWNER in
 * gemleak_alloc.so, "gemleak:owner-frames<TAB>OFFSET"), "none" for a lost
 * block without one, "freed" for a block not lost; then the held line. */
static char *owners_of_blocks(const char *out, const char *err)
{
    const char *placed = strstr(err, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNER_FRAMES "\t");
    ck_assert_msg(placed != NULL, "no owner-frames line:\n%.3000s", err);
    guint64 base = g_ascii_strtoull(placed + strlen(GL_PROTO_MARKER_PREFIX
                                                    GL_PROTO_MARKER_OWNER_FRAMES "\t"), NULL, 16);
    /* each lost block's owner: the record's frames, then its objects */
    g_autoptr(GHashTable) owner_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_auto(GStrv) lines = g_strsplit(err, "\n", -1);
    g_autofree char *owner = NULL;
    for (char **line = lines; *line != NULL; line++) {
        const char *frame = strstr(*line, GL_PROTO_LIBRARY_PREFIX "alloc.so+0x");
        if (strstr(*line, " leak of ") != NULL) {
            g_free(owner);
            owner = g_strdup("none");
        } else if (frame != NULL && owner != NULL) {
            guint64 offset = g_ascii_strtoull(frame + strlen(GL_PROTO_LIBRARY_PREFIX "alloc.so+0x"),
                                              NULL, 16);
            if (offset >= base && offset < base + 2 * 0x20000) {
                g_free(owner);
                owner = g_strdup_printf("%" G_GUINT64_FORMAT, (offset - base) / 2);
            }
        } else if (g_str_has_prefix(*line, "0x") && strstr(*line, " byte") != NULL && owner != NULL) {
            g_hash_table_insert(owner_of, g_strndup(*line + 2, strcspn(*line + 2, " ")),
                                g_strdup(owner));
        }
    }
    GString *said = g_string_new(NULL);
    g_auto(GStrv) blocks = g_strsplit(out, "\n", -1);
    for (char **line = blocks; *line != NULL; line++) {
        const char *space = strchr(*line, ' ');
        if (g_str_has_prefix(*line, "held: ") || space == NULL) {
            g_string_append_printf(said, "%s%s", *line, **line != '\0' ? "\n" : "");
            continue;
        }
        const char *whose = g_hash_table_lookup(owner_of, space + 1);
        g_string_append_printf(said, "%.*s: %s\n", (int) (space - *line), *line,
                               whose != NULL ? whose : "freed");
    }
    return g_string_free(said, FALSE);
}

/* Returns: the flags (PF_R, PF_W, PF_X) of the loadable segment of the
 * library at @path that holds the address @offset from its load base, or
 * -1 if none does. */
static int segment_flags_at(const char *path, guint64 offset)
{
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "cannot open %s", path);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    ck_assert_ptr_nonnull(elf);
    size_t count = 0;
    ck_assert_int_eq(elf_getphdrnum(elf, &count), 0);
    int flags = -1;
    for (size_t i = 0; i < count && flags < 0; i++) {
        GElf_Phdr phdr;
        if (gelf_getphdr(elf, (int) i, &phdr) != NULL && phdr.p_type == PT_LOAD &&
            offset >= phdr.p_vaddr && offset < phdr.p_vaddr + phdr.p_memsz)
            flags = (int) phdr.p_flags;
    }
    elf_end(elf);
    close(fd);
    return flags;
}

/* Under --per-test the front carries the owner of each block it judges
 * (an extension's: only theirs can be findings) in the block's own stack,
 * a frame the runtime records with it (alloc.c's owner_framed()), and
 * holds nothing in its table: what a library allocated while an owner
 * was set carries that owner (malloc, calloc, realloc's new block, new,
 * a block above the runtime's largest size class); the program's own
 * blocks (Ruby's), its realloc of a library's block, and what is
 * allocated with no owner carry none; and what was freed (free, delete
 * plain, sized or of an array, realloc's old block) is not lost. */
START_TEST(test_front_carries_the_owners_of_judged_blocks_in_their_stacks)
{
    g_autofree char *err = NULL;
    g_autofree char *out = run_under_front_with(owners_ext_c, owners_program_c,
                                                "exitcode=0:report_objects=1:symbolize=0:"
                                                "fast_unwind_on_malloc=1", &err);
    g_autofree char *said = owners_of_blocks(out, err);
    ck_assert_str_eq(said, "mine: none\n"
                           "kept: 7\n"
                           "gone: freed\n"
                           "old: freed\n"
                           "moved: 7\n"
                           "big: 7\n"
                           "big_gone: freed\n"
                           "newed: 7\n"
                           "deleted: freed\n"
                           "sized: freed\n"
                           "array: freed\n"
                           "other: 9\n"
                           "ruby_freed: freed\n"
                           "ruby_moved: freed\n"
                           "ruby_moved_to: none\n"
                           "nobody: none\n"
                           "held: 0\n");
    /* The owners' frames point into an array no leak check reads: a check
     * scans every writable segment, and 256 KiB of .bss were read in each
     * check of each process. */
    const char *placed = strstr(err, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_OWNER_FRAMES "\t");
    guint64 base = g_ascii_strtoull(placed + strlen(GL_PROTO_MARKER_PREFIX
                                                    GL_PROTO_MARKER_OWNER_FRAMES "\t"), NULL, 16);
    g_autofree char *front = gl_test_project_file("build/client/gemleak_alloc.so");
    int flags = segment_flags_at(front, base);
    ck_assert_msg(flags >= 0, "the owner frames (0x%" G_GINT64_MODIFIER "x) are in no segment of %s",
                  base, front);
    ck_assert_msg((flags & PF_W) == 0, "the owner frames lie in a writable segment of %s, "
                  "which every leak check scans", front);
}
END_TEST

Suite *gl_alloc_suite(void)
{
    Suite *suite = suite_create("alloc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_front_has_every_allocation_function_the_runtimes_intercept);
    tcase_add_test(tc, test_front_keeps_recent_addresses_from_the_extension_alone);
    tcase_add_test(tc, test_front_records_frees_in_a_shadow_of_the_blocks_size);
    tcase_add_test(tc, test_front_parks_blocks_the_check_reaches);
    tcase_add_test(tc, test_front_carries_the_owners_of_judged_blocks_in_their_stacks);
    tcase_add_test(tc, test_front_leaves_the_loaders_allocations_its_own);
    suite_add_tcase(suite, tc);
    return suite;
}
