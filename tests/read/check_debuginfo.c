/* Objects read (read/debuginfo.c) and a sanitizer's frames named and
 * placed from them as Valgrind's (read/symbolize.c): small objects
 * compiled here as rake-compiler compiles an extension (out of tree, from
 * a relative path), their program counters taken as a sanitizer runtime
 * gives them (the call's address in the object). */
/* dladdr(), a GNU extension: where the object was loaded */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <string.h>
#include <utime.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <glib/gstdio.h>

#include "testutil.h"
#include "gemleak/judge/merge.h"
#include "gemleak/judge/project_paths.h"
#include "gemleak/read/demangle.h"
#include "gemleak/read/symbolize.h"

/* shape.c: shape_outer() calls shape_capture(), which keeps its return
 * address; shape_part's symbol is a clone's name, as GCC names them
 * ("f.part.0"), where DWARF says "shape_part". */
static const char shape_c[] =
    "void *shape_pc;\n"
    "__attribute__((noinline)) void shape_capture(void) { shape_pc = __builtin_return_address(0); }\n"
    "int shape_part(int n) __asm__(\"shape_part.part.0\");\n"
    "__attribute__((noinline)) int shape_part(int n) { shape_capture(); return n * 3; }\n"
    "int shape_outer(int n) { return shape_part(n) + 1; }\n"
    "void *shape_where(void) { return shape_pc; }\n";

/* cpp.cpp: a template inlined (always_inline, as -O2 inlines) into a
 * static function whose symbol is mangled. */
static const char cpp_cpp[] =
    "struct Widget { int a[4]; };\n"
    "static void *cpp_pc;\n"
    "__attribute__((noinline)) static void capture() { cpp_pc = __builtin_return_address(0); }\n"
    "template <typename T> __attribute__((always_inline)) inline T *make() { capture(); "
    "return new T(); }\n"
    "__attribute__((noinline)) static Widget *cpp_leak(unsigned long n) { (void) n; "
    "return make<Widget>(); }\n"
    "extern \"C\" void cpp_entry(void) { delete cpp_leak(1); }\n"
    "extern \"C\" void *cpp_where(void) { return cpp_pc; }\n";

typedef struct {
    char *root;      /* the project: src/ and build/x86_64-linux/shape/ */
    char *object;    /* the object built */
    guint64 offset;  /* of the captured call, as a sanitizer's module offset */
} Built;

static void built_clear(Built *built)
{
    gl_remove_tree(built->root);
    g_free(built->root);
    g_free(built->object);
}

/* Compiles @source as src/@name with @compiler in build/x86_64-linux/shape
 * (a relative path, as rake-compiler gives it), into @name.so, loads it,
 * runs @entry and takes the program counter @where returns. The test is
 * skipped without the compiler. */
static void build(Built *built, const char *compiler, const char *name, const char *source,
                  const char *entry, const char *where)
{
    g_autofree char *found = g_find_program_in_path(compiler);
    if (found == NULL)
        gl_test_skip("no %s here to compile a test object with", compiler);
    built->root = gl_test_tmpdir();
    g_autofree char *src = g_build_filename(built->root, "src", NULL);
    g_autofree char *dir = g_build_filename(built->root, "build", "x86_64-linux", "shape", NULL);
    g_mkdir_with_parents(src, 0700);
    g_mkdir_with_parents(dir, 0700);
    g_autofree char *path = g_build_filename(src, name, NULL);
    gl_test_write(path, source, -1);
    g_autofree char *relative = g_strconcat("../../../src/", name, NULL);
    g_autofree char *object = g_strconcat(name, ".so", NULL);
    const char *argv[] = { compiler, "-g", "-O1", "-fPIC", "-shared", "-o", object, relative, NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn_in(dir, NULL, argv, NULL, &err) == 0, "%s", err);
    built->object = g_build_filename(dir, object, NULL);
    void *handle = dlopen(built->object, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "%s", dlerror());
    void (*run)(void) = (void (*)(void)) dlsym(handle, entry);
    void *(*pc_of)(void) = (void *(*)(void)) dlsym(handle, where);
    ck_assert(run != NULL && pc_of != NULL);
    run();
    Dl_info info;
    char *pc = pc_of();
    ck_assert(dladdr(pc, &info) != 0);
    /* the runtimes give a return address less one: the call's */
    built->offset = (guint64) (pc - 1 - (char *) info.dli_fbase);
}

/* A frame of @built's object as the runtime symbolized it. */
static GlFrame frame_of(GlRecord *record, const Built *built, const char *fn, const char *file)
{
    GlFrame frame = { .ip = 0x7f0000000000 + built->offset, .offset = built->offset,
                      .obj = gl_record_intern(record, built->object),
                      .fn = gl_record_intern(record, fn), .line = 4 };
    frame.dir = gl_record_intern(record, "../../../src");
    frame.file = gl_record_intern(record, file);
    return frame;
}

static void set_stack(GlRecord *record, const GlFrame *frames, guint n)
{
    record->stack.frames = g_new(GlFrame, n);
    memcpy(record->stack.frames, frames, n * sizeof *frames);
    record->stack.n_frames = n;
}

/* The compilation's directory, the symbol that holds the call, and the
 * path the runtime gave relative to the build directory made whole: the
 * project's src/shape.c, as Valgrind's dir and file say it. */
START_TEST(test_c_object_out_of_tree)
{
    Built built = { 0 };
    build(&built, "cc", "shape.c", shape_c, "shape_outer", "shape_where");
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    GlDebugFrame debug;
    ck_assert(gl_debuginfo_frame(info, NULL, built.object, built.offset, 0,
                                 GL_DEBUG_UNIT | GL_DEBUG_INLINED, &debug));
    ck_assert_str_eq(debug.symbol, "shape_part.part.0");
    g_autofree char *build_dir = g_path_get_dirname(built.object);
    g_autofree char *real_build_dir = g_canonicalize_filename(build_dir, NULL);
    ck_assert_ptr_nonnull(debug.comp_dir);
    g_autofree char *comp_dir = g_canonicalize_filename(debug.comp_dir, NULL);
    ck_assert_str_eq(comp_dir, real_build_dir);
    ck_assert_ptr_null(debug.inlined);

    g_autoptr(GlRecord) record = gl_record_new();
    GlFrame frames[] = { frame_of(record, &built, "shape_part", "shape.c") };
    set_stack(record, frames, 1);
    gl_symbolize_as_valgrind(info, NULL, record, 0);
    const GlFrame *settled = &record->stack.frames[0];
    ck_assert_str_eq(settled->fn, "shape_part.part.0");
    g_autofree char *src = g_build_filename(debug.comp_dir, "..", "..", "..", "src", NULL);
    g_autofree char *expected = g_canonicalize_filename(src, NULL);
    ck_assert_str_eq(settled->dir, expected);
    ck_assert_str_eq(settled->file, "shape.c");
    ck_assert_uint_eq(settled->line, 4);
    built_clear(&built);
}
END_TEST

/* C++: the function named by its symbol, demangled ("cpp_leak(unsigned
 * long)", where DWARF and the runtime say "cpp_leak"), the template
 * inlined into it by its DW_AT_name ("make<Widget>", where the runtime
 * demangles a linkage name: "Widget* make<Widget>()"). */
START_TEST(test_cpp_inlined_template)
{
    Built built = { 0 };
    build(&built, "c++", "cpp.cpp", cpp_cpp, "cpp_entry", "cpp_where");
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    GlDebugFrame debug;
    ck_assert(gl_debuginfo_frame(info, NULL, built.object, built.offset, 0,
                                 GL_DEBUG_UNIT | GL_DEBUG_INLINED, &debug));
    ck_assert_str_eq(debug.symbol, "_ZL8cpp_leakm");
    ck_assert_ptr_nonnull(debug.inlined);
    ck_assert_str_eq(debug.inlined[0], "make<Widget>");
    ck_assert_ptr_null(debug.inlined[1]);

    g_autoptr(GlRecord) record = gl_record_new();
    GlFrame frames[] = { frame_of(record, &built, "Widget* make<Widget>()", "cpp.cpp"),
                         frame_of(record, &built, "cpp_leak", "cpp.cpp") };
    set_stack(record, frames, 2);
    gl_symbolize_as_valgrind(info, NULL, record, 0);
    ck_assert_str_eq(record->stack.frames[0].fn, "make<Widget>");
    ck_assert_str_eq(record->stack.frames[1].fn, "cpp_leak(unsigned long)");
    built_clear(&built);
}
END_TEST

/* An object rebuilt after the report was written, or gone, is not read:
 * its symbols no longer say what the report's addresses were. What the
 * runtime said stays, a mangled name demangled all the same. */
START_TEST(test_object_rebuilt_or_gone)
{
    Built built = { 0 };
    build(&built, "cc", "shape.c", shape_c, "shape_outer", "shape_where");
    struct utimbuf now = { .actime = 2000000000, .modtime = 2000000000 };
    ck_assert_int_eq(utime(built.object, &now), 0);
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    GlDebugFrame debug;
    ck_assert(!gl_debuginfo_frame(info, NULL, built.object, built.offset, 1900000000, GL_DEBUG_SYMBOL,
                                  &debug));
    ck_assert(gl_debuginfo_frame(info, NULL, built.object, built.offset, 2000000000, GL_DEBUG_SYMBOL,
                                 &debug));

    g_autoptr(GlRecord) record = gl_record_new();
    GlFrame frames[] = { frame_of(record, &built, "shape_part", "shape.c"),
                         frame_of(record, &built, "_ZN8rustleak11make_buffer17h1294082562c34df6E",
                                  "lib.rs") };
    frames[1].offset += 0x10;
    frames[1].obj = gl_record_intern(record, "/nowhere/gone.so");
    set_stack(record, frames, 2);
    gl_symbolize_as_valgrind(info, NULL, record, 1900000000);
    ck_assert_str_eq(record->stack.frames[0].fn, "shape_part");
    ck_assert_str_eq(record->stack.frames[0].dir, "../../../src");
    ck_assert_str_eq(record->stack.frames[1].fn, "rustleak::make_buffer");
    ck_assert_str_eq(record->stack.frames[1].dir, "../../../src");
    built_clear(&built);
}
END_TEST

/* An object that is not the one the report was written with (a report
 * read again after the extension changed, with the same modification
 * time, or another machine's): what the runtime said is kept where the
 * object says something else, a function it does not name, a source file
 * it was not compiled from. */
START_TEST(test_object_of_another_build)
{
    Built built = { 0 };
    build(&built, "cc", "shape.c", shape_c, "shape_outer", "shape_where");
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    g_autoptr(GlRecord) record = gl_record_new();
    GlFrame frames[] = { frame_of(record, &built, "other_function", "other.c") };
    set_stack(record, frames, 1);
    gl_symbolize_as_valgrind(info, NULL, record, 0);
    ck_assert_str_eq(record->stack.frames[0].fn, "other_function");
    ck_assert_str_eq(record->stack.frames[0].dir, "../../../src");
    ck_assert_str_eq(record->stack.frames[0].file, "other.c");
    built_clear(&built);
}
END_TEST

/* Issue 37 (item 7): what a run recorded of an object is what the object
 * says when the directory is read again, rebuilt or gone: the frame named
 * and placed as the run had it, where the object alone would leave what
 * the runtime said. What the record holds is what the lookups asked. */
START_TEST(test_recorded_object_rebuilt_or_gone)
{
    Built built = { 0 };
    build(&built, "cc", "shape.c", shape_c, "shape_outer", "shape_where");
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    g_autoptr(GlRunRecord) run = gl_run_record_new();   /* the run's: nothing yet */
    g_autoptr(GlRecord) at_run = gl_record_new();
    GlFrame frames[] = { frame_of(at_run, &built, "shape_part", "shape.c") };
    set_stack(at_run, frames, 1);
    gl_symbolize_as_valgrind(info, run, at_run, 0);
    const GlFrame *then = &at_run->stack.frames[0];
    ck_assert_str_eq(then->fn, "shape_part.part.0");
    ck_assert(g_path_is_absolute(then->dir));
    ck_assert(gl_debuginfo_record(info, built.object, built.offset, run));
    ck_assert(!gl_debuginfo_record(info, built.object, built.offset + 1, run));
    g_autofree char *identity = gl_debuginfo_identity(info, built.object);
    ck_assert(g_str_has_prefix(identity, "build-id:"));
    ck_assert_str_eq(gl_run_record_object_identity(run, built.object), identity);
    g_autofree char *dir = gl_test_tmpdir();
    ck_assert(gl_run_record_write(run, dir, NULL));
    g_autoptr(GlRunRecord) recorded = gl_run_record_read(dir, NULL);
    ck_assert_ptr_nonnull(recorded);

    /* rebuilt from another source: its build id is another */
    g_autofree char *source = g_build_filename(built.root, "src", "shape.c", NULL);
    g_autofree char *moved = g_strconcat("int shape_pad(int n) { return n + 7; }\n", shape_c,
                                         NULL);
    gl_test_write(source, moved, -1);
    g_autofree char *build_dir = g_path_get_dirname(built.object);
    const char *argv[] = { "cc", "-g", "-O1", "-fPIC", "-shared", "-o", "shape.c.so",
                           "../../../src/shape.c", NULL };
    ck_assert_int_eq(gl_test_spawn_in(build_dir, NULL, argv, NULL, NULL), 0);
    g_autoptr(GlDebugInfo) later = gl_debuginfo_new();
    g_autofree char *now = gl_debuginfo_identity(later, built.object);
    ck_assert_str_ne(now, identity);
    g_autoptr(GlRecord) rebuilt = gl_record_new();
    GlFrame again[] = { frame_of(rebuilt, &built, "shape_part", "shape.c") };
    set_stack(rebuilt, again, 1);
    gl_symbolize_as_valgrind(later, recorded, rebuilt, 0);
    ck_assert_str_eq(rebuilt->stack.frames[0].fn, then->fn);
    ck_assert_str_eq(rebuilt->stack.frames[0].dir, then->dir);
    ck_assert_str_eq(rebuilt->stack.frames[0].file, then->file);
    /* an offset the run did not record is not read from another build */
    GlDebugFrame debug;
    ck_assert(!gl_debuginfo_frame(later, recorded, built.object, built.offset + 1, 0,
                                  GL_DEBUG_SYMBOL, &debug));

    /* gone */
    ck_assert_int_eq(g_unlink(built.object), 0);
    g_autoptr(GlDebugInfo) elsewhere = gl_debuginfo_new();
    ck_assert_ptr_null(gl_debuginfo_identity(elsewhere, built.object));
    g_autoptr(GlRecord) copied = gl_record_new();
    GlFrame there[] = { frame_of(copied, &built, "shape_part", "shape.c") };
    set_stack(copied, there, 1);
    gl_symbolize_as_valgrind(elsewhere, recorded, copied, 0);
    ck_assert_str_eq(copied->stack.frames[0].fn, then->fn);
    ck_assert_str_eq(copied->stack.frames[0].dir, then->dir);
    /* without the record: what the runtime said */
    g_autoptr(GlRecord) unrecorded = gl_record_new();
    GlFrame bare[] = { frame_of(unrecorded, &built, "shape_part", "shape.c") };
    set_stack(unrecorded, bare, 1);
    gl_symbolize_as_valgrind(elsewhere, NULL, unrecorded, 0);
    ck_assert_str_eq(unrecorded->stack.frames[0].fn, "shape_part");
    ck_assert_str_eq(unrecorded->stack.frames[0].dir, "../../../src");
    gl_remove_tree(dir);
    built_clear(&built);
}
END_TEST

/* An object built without -g (-O3 alone, as some extconf.rb set $CFLAGS),
 * out of tree from a relative path: its symbol table still names the
 * source file of a static function, and no file for an exported one; the
 * judges find that file in the project. */
START_TEST(test_symbol_table_names_a_static_functions_file)
{
    g_autofree char *cc = g_find_program_in_path("cc");
    if (cc == NULL)
        gl_test_skip("no cc here to compile a test object with");
    g_autofree char *root = gl_test_tmpdir();
    g_autofree char *src = g_build_filename(root, "ext", "x", NULL);
    g_autofree char *dir = g_build_filename(root, "tmp", "x86_64-linux", "x", "3.1", NULL);
    g_mkdir_with_parents(src, 0700);
    g_mkdir_with_parents(dir, 0700);
    g_autofree char *source = g_build_filename(src, "x.c", NULL);
    gl_test_write(source, "static __attribute__((noipa)) int x_helper(int n) { return n + 1; }\n"
                          "int x_entry(int n) { return x_helper(n) * 2; }\n", -1);
    const char *argv[] = { "cc", "-O3", "-fPIC", "-shared", "-o", "x.so",
                           "../../../../ext/x/x.c", NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn_in(dir, NULL, argv, NULL, &err) == 0, "%s", err);
    g_autofree char *object = g_build_filename(dir, "x.so", NULL);

    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    /* GCC names the file alone, whatever path it was given */
    ck_assert_str_eq(gl_debuginfo_symbol_unit(info, object, "x_helper"), "x.c");
    ck_assert_ptr_null(gl_debuginfo_symbol_unit(info, object, "x_entry"));
    ck_assert_ptr_null(gl_debuginfo_symbol_unit(info, object, "no_such_function"));

    /* placed at the project's ext/x/x.c, the exported function at none */
    GlRecord *record = gl_test_record("Leak_DefinitelyLost", "malloc@/vg.so", "x_helper@/o.so",
                                      "x_entry@/o.so", NULL);
    for (guint i = 1; i <= 2; i++) {
        record->stack.frames[i].obj = gl_record_intern(record, object);
        record->stack.frames[i].in_target = TRUE;
    }
    g_autoptr(GlFindings) table = gl_findings_new();
    gl_findings_add(table, record, 0);
    g_autoptr(GPtrArray) findings = gl_findings_sorted(table);
    g_autoptr(GPtrArray) objects = gl_findings_place_units(findings, root);
    const GlFinding *finding = g_ptr_array_index(findings, 0);
    ck_assert_str_eq(finding->record->stack.frames[1].unit, source);
    ck_assert_ptr_null(finding->record->stack.frames[2].unit);
    ck_assert_uint_eq(objects->len, 1);
    ck_assert_str_eq(g_ptr_array_index(objects, 0), object);
    gl_remove_tree(root);
}
END_TEST

/* Issue 36: the C library's debug information is a detached file
 * (libc6-dbg, compressed: some 60 ms to open, more than a small suite's
 * run). A frame of it is named by that file's symbol table alone, where
 * the runtime reads its DWARF too: its function (a local one, which only
 * the detached file names), no file, no line. Its DWARF is still read
 * where a lookup asks for the frame's compilation unit. Skipped where the
 * C library has no detached debug file. */
START_TEST(test_detached_debug_file_lends_its_symbols)
{
    /* this process's stack, whose outermost frames are the C library's */
    void *pcs[256];
    int n = backtrace(pcs, G_N_ELEMENTS(pcs));
    g_autofree char *libc = NULL;
    g_autoptr(GArray) offsets = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (int i = 0; i < n; i++) {
        Dl_info where;
        if (dladdr((char *) pcs[i] - 1, &where) != 0 && where.dli_fname != NULL &&
            strstr(where.dli_fname, "/libc.so") != NULL) {
            g_free(libc);
            libc = g_strdup(where.dli_fname);
            guint64 offset = (guint64) ((char *) pcs[i] - 1 - (char *) where.dli_fbase);
            g_array_append_val(offsets, offset);
        }
    }
    ck_assert_msg(libc != NULL, "no frame of the C library in this process's stack");
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    g_autofree char *identity = gl_debuginfo_identity(info, libc);
    if (identity == NULL || !g_str_has_prefix(identity, "build-id:"))
        gl_test_skip("the C library here has no build id to find its debug file by");
    const char *id = identity + strlen("build-id:");
    g_autofree char *detached = g_strdup_printf("/usr/lib/debug/.build-id/%.2s/%s.debug", id,
                                                id + 2);
    if (!g_file_test(detached, G_FILE_TEST_EXISTS))
        gl_test_skip("no detached debug file of the C library here (libc6-dbg)");

    gboolean local = FALSE;
    for (guint i = 0; i < offsets->len; i++) {
        guint64 offset = g_array_index(offsets, guint64, i);
        GlDebugFrame frame;
        ck_assert(gl_debuginfo_frame(info, NULL, libc, offset, 0, GL_DEBUG_SYMBOL, &frame));
        ck_assert_ptr_nonnull(frame.symbol);
        const GlRuntimeFrame *frames = NULL;
        ck_assert_uint_eq(gl_debuginfo_runtime_frames(info, libc, offset, &frames), 1);
        ck_assert_str_eq(frames[0].function, frame.symbol);
        ck_assert_msg(frames[0].file == NULL && frames[0].line == 0, "%s at %s:%u",
                      frames[0].function, frames[0].file, frames[0].line);
        /* a function no exported symbol names: the detached file's table */
        local |= dlsym(RTLD_DEFAULT, frame.symbol) == NULL;
        /* its DWARF, where a lookup asks for the unit */
        ck_assert(gl_debuginfo_frame(info, NULL, libc, offset, 0, GL_DEBUG_UNIT, &frame));
        ck_assert_ptr_nonnull(frame.comp_dir);
    }
    ck_assert_msg(local, "no frame of the C library was named by a local symbol");
}
END_TEST

/* units.c: functions after a hundred types and variables (DIEs with no
 * code, each a unit's outermost DIE), with functions inlined into them
 * two deep. */
static char *units_c(void)
{
    GString *source = g_string_new("void *units_pc;\n");
    for (int i = 0; i < 100; i++)
        g_string_append_printf(source,
                               "struct units_t%d { int a; struct units_t%d *next; } units_v%d;\n",
                               i, i, i);
    g_string_append(source,
                    "__attribute__((noinline)) void units_capture(void) { units_pc = "
                    "__builtin_return_address(0); }\n"
                    "static inline __attribute__((always_inline)) int units_inner(int n) { "
                    "units_capture(); return n * 5; }\n"
                    "static inline __attribute__((always_inline)) int units_middle(int n) { "
                    "return units_inner(n) + units_inner(n + 1); }\n");
    /* each function's symbol not its DWARF name, as GCC names a clone: a
     * frame the symbol table named instead would say so */
    for (int i = 0; i < 20; i++)
        g_string_append_printf(source, "int units_f%d(int n) __asm__(\"units_f%d.part.0\");\n"
                               "__attribute__((noinline)) int units_f%d(int n) { "
                               "return units_middle(n + %d) - units_inner(n); }\n", i, i, i, i);
    g_string_append(source, "void units_entry(void) { int n = 0;");
    for (int i = 0; i < 20; i++)
        g_string_append_printf(source, " n += units_f%d(n);", i);
    g_string_append(source, " units_v0.a = n; }\nvoid *units_where(void) { return units_pc; }\n");
    return g_string_free(source, FALSE);
}

/* As debuginfo.c's may_hold_functions(): Rust's namespaces, a type's
 * methods. */
static gboolean walk_may_hold_functions(Dwarf_Die *die)
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

/* The DIEs under @parent that hold @address, outermost first: a walk of
 * the whole tree, as debuginfo.c read each unit before it kept where the
 * code of a unit's outermost DIEs lies. */
static gboolean walk_to(Dwarf_Die *parent, Dwarf_Addr address, GArray *chain, guint depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0)
        return FALSE;
    do {
        if (dwarf_haspc(&child, address) > 0) {
            g_array_append_val(chain, child);
            walk_to(&child, address, chain, depth + 1);
            return TRUE;
        }
        if (walk_may_hold_functions(&child) && walk_to(&child, address, chain, depth + 1))
            return TRUE;
    } while (dwarf_siblingof(&child, &child) == 0);
    return FALSE;
}

/* The name the runtime gives a function's DIE: its linkage name
 * demangled, else its name. (transfer full) (nullable) */
static char *walk_name(Dwarf_Die *die)
{
    Dwarf_Attribute attribute;
    const char *linkage =
        dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute));
    if (linkage != NULL) {
        char *demangled = gl_demangle_as_cxa(linkage);
        return demangled != NULL ? demangled : g_strdup(linkage);
    }
    return g_strdup(dwarf_diename(die));
}

/* Every address of the code of @object's units whose name holds
 * @unit_name (rustc names a unit "units.rs/@/units.HASH-cgu.0") is named
 * as a walk of its unit names it: the functions inlined there, innermost
 * first, then the function. Returns: how many addresses were asked
 * about. */
static guint check_named_as_walked(const char *object, const char *unit_name)
{
    int fd = open(object, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    Dwarf *dwarf = dwarf_begin(fd, DWARF_C_READ);
    ck_assert_ptr_nonnull(dwarf);
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    guint asked = 0;
    Dwarf_Off offset = 0, next = 0;
    size_t header = 0;
    while (dwarf_nextcu(dwarf, offset, &next, &header, NULL, NULL, NULL) == 0) {
        Dwarf_Die cudie;
        const char *name = dwarf_offdie(dwarf, offset + header, &cudie) != NULL
                               ? dwarf_diename(&cudie) : NULL;
        offset = next;
        if (name == NULL || strstr(name, unit_name) == NULL)
            continue;
        Dwarf_Addr base, start, end;
        for (ptrdiff_t at = 0; (at = dwarf_ranges(&cudie, at, &base, &start, &end)) > 0;) {
            for (Dwarf_Addr address = start; address < end; address++) {
                g_autoptr(GArray) chain = g_array_new(FALSE, FALSE, sizeof(Dwarf_Die));
                walk_to(&cudie, address, chain, 0);
                guint function = chain->len;
                for (guint i = chain->len; i-- > 0 && function == chain->len;)
                    if (dwarf_tag(&g_array_index(chain, Dwarf_Die, i)) == DW_TAG_subprogram)
                        function = i;
                if (function == chain->len)
                    continue;  /* no function's: named by the symbol table */
                g_autoptr(GPtrArray) expected = g_ptr_array_new_with_free_func(g_free);
                for (guint i = chain->len; i-- > function + 1;) {
                    Dwarf_Die *die = &g_array_index(chain, Dwarf_Die, i);
                    if (dwarf_tag(die) == DW_TAG_inlined_subroutine)
                        g_ptr_array_add(expected, walk_name(die));
                }
                g_ptr_array_add(expected, walk_name(&g_array_index(chain, Dwarf_Die, function)));
                const GlRuntimeFrame *frames = NULL;
                guint n = gl_debuginfo_runtime_frames(info, object, address, &frames);
                ck_assert_msg(n == expected->len,
                              "0x%" G_GINT64_MODIFIER "x: %u frames, the walk %u",
                              (guint64) address, n, expected->len);
                for (guint i = 0; i < n; i++) {
                    const char *walked = g_ptr_array_index(expected, i);
                    ck_assert_msg(g_strcmp0(frames[i].function, walked) == 0,
                                  "0x%" G_GINT64_MODIFIER "x, frame %u: %s, the walk %s",
                                  (guint64) address, i, frames[i].function, walked);
                }
                asked++;
            }
        }
    }
    dwarf_end(dwarf);
    close(fd);
    return asked;
}

/* Issue 36: a leak's frames in Ruby's vm.c walked the whole unit for each
 * address (0.3 ms a walk, 10 ms of a run naming a planted leak's 39
 * frames); the code of a unit's outermost DIEs is now found by where it
 * lies. Every address of a C unit whose functions come after a hundred
 * DIEs without code, with functions inlined two deep, is named as the
 * walk names it. */
START_TEST(test_frames_named_as_a_walk_of_the_unit_names_them)
{
    Built built = { 0 };
    g_autofree char *source = units_c();
    build(&built, "cc", "units.c", source, "units_entry", "units_where");
    guint asked = check_named_as_walked(built.object, "units.c");
    ck_assert_uint_gt(asked, 500);
    built_clear(&built);
}
END_TEST

/* The same of Rust's units, whose functions are inside the namespaces of
 * their paths: DIEs with no code of their own that hold functions. */
static const char units_rs[] =
    "pub mod outer {\n"
    "    pub mod inner {\n"
    "        #[inline(always)] pub fn twice(n: u64) -> u64 { n.wrapping_mul(2) ^ 7 }\n"
    "        #[inline(never)] pub fn step(n: u64) -> u64 {\n"
    "            twice(n).rotate_left(3) + twice(n + 1)\n"
    "        }\n"
    "    }\n"
    "    pub struct Counter { pub n: u64 }\n"
    "    impl Counter {\n"
    "        #[inline(never)] pub fn bump(&mut self) -> u64 {\n"
    "            self.n = inner::step(self.n);\n"
    "            self.n\n"
    "        }\n"
    "    }\n"
    "}\n"
    "#[no_mangle] pub extern \"C\" fn units_entry(n: u64) -> u64 {\n"
    "    let mut c = outer::Counter { n };\n"
    "    c.bump() + c.bump()\n"
    "}\n";

START_TEST(test_rust_frames_named_as_a_walk_of_the_unit_names_them)
{
    g_autofree char *rustc = g_find_program_in_path("rustc");
    if (rustc == NULL)
        gl_test_skip("no rustc here to compile a test object with");
    g_autofree char *root = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(root, "units.rs", NULL);
    gl_test_write(path, units_rs, -1);
    const char *argv[] = { rustc, "--crate-type", "cdylib", "-C", "debuginfo=2", "-C",
                           "opt-level=1", "-o", "libunits.so", "units.rs", NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn_in(root, NULL, argv, NULL, &err) == 0, "%s", err);
    g_autofree char *object = g_build_filename(root, "libunits.so", NULL);
    guint asked = check_named_as_walked(object, "units.rs");
    ck_assert_uint_gt(asked, 50);
    gl_remove_tree(root);
}
END_TEST

Suite *gl_debuginfo_suite(void)
{
    Suite *suite = suite_create("debuginfo");
    TCase *tc = tcase_create("debuginfo");
    tcase_add_test(tc, test_c_object_out_of_tree);
    tcase_add_test(tc, test_cpp_inlined_template);
    tcase_add_test(tc, test_object_rebuilt_or_gone);
    tcase_add_test(tc, test_object_of_another_build);
    tcase_add_test(tc, test_recorded_object_rebuilt_or_gone);
    tcase_add_test(tc, test_symbol_table_names_a_static_functions_file);
    tcase_add_test(tc, test_detached_debug_file_lends_its_symbols);
    tcase_add_test(tc, test_frames_named_as_a_walk_of_the_unit_names_them);
    tcase_add_test(tc, test_rust_frames_named_as_a_walk_of_the_unit_names_them);
    suite_add_tcase(suite, tc);
    return suite;
}
