/* Frames a runtime left unnamed, named by gemleak (read/sanitizer_names.c,
 * read/debuginfo.c): a program compiled here as rake-compiler compiles an
 * extension (from a relative path), run under LeakSanitizer twice, once
 * naming its frames itself and once not; what gemleak names is what the
 * runtime named. */
#include <string.h>

#include "testutil.h"
#include "gemleak/read/sanitizer_names.h"
#include "gemleak/read/sanitizer_reader.h"

/* A C function, a static C++ one, a template inlined into it, and a
 * leak below each, as an extension has them. */
static const char leaks_cpp[] =
    "#include <stdlib.h>\n"
    "struct Widget { int a[4]; };\n"
    "template <typename T> __attribute__((always_inline)) inline T *make() { return new T(); }\n"
    "__attribute__((noinline)) static Widget *cpp_leak(unsigned long n) { (void) n; return make<Widget>(); }\n"
    "extern \"C\" __attribute__((noinline)) void *c_leak(size_t n) { return malloc(n); }\n"
    "void *volatile kept;\n"
    "int main(void) { kept = cpp_leak(1); kept = c_leak(13); kept = 0; return 0; }\n";

/* Returns: (transfer full): liblsan as gcc finds it; the test is skipped
 * without it or without c++ to build a program with. */
static char *runtime_or_skip(void)
{
    char *runtime = gl_test_gcc_file("liblsan.so");
    g_autofree char *found = g_find_program_in_path("c++");
    if (runtime == NULL || found == NULL)
        gl_test_skip("no liblsan found by gcc -print-file-name, or no c++, to run a program under");
    return runtime;
}

/* Compiles leaks_cpp under @root: as rake-compiler compiles an extension,
 * from ../src/ in build/, when @out_of_tree; else in @root itself.
 * Returns: (transfer full): the program's path. */
static char *build_program(const char *root, gboolean out_of_tree)
{
    g_autofree char *src = out_of_tree ? g_build_filename(root, "src", NULL) : g_strdup(root);
    g_autofree char *dir = out_of_tree ? g_build_filename(root, "build", NULL) : g_strdup(root);
    g_mkdir_with_parents(src, 0700);
    g_mkdir_with_parents(dir, 0700);
    g_autofree char *source = g_build_filename(src, "leaks.cpp", NULL);
    gl_test_write(source, leaks_cpp, -1);
    const char *compile[] = { "c++", "-g", "-O1", "-fno-omit-frame-pointer", "-o", "leaks",
                              out_of_tree ? "../src/leaks.cpp" : "leaks.cpp", NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn_in(dir, NULL, compile, NULL, &err) == 0, "%s", err);
    return g_build_filename(dir, "leaks", NULL);
}

/* Returns: (transfer full): the report of @program run under @runtime in
 * @dir, its frames named by the runtime when @symbolize. */
static char *report_of(const char *dir, const char *program, const char *runtime,
                       gboolean symbolize)
{
    g_autofree char *log = g_build_filename(dir, symbolize ? "named" : "unnamed", NULL);
    g_autofree char *options = g_strdup_printf(
        "exitcode=0:fast_unwind_on_malloc=0:symbolize=%d:symbolize_inline_frames=1:"
        "log_path=\"%s\":stack_trace_format=\"%s\"", symbolize ? 1 : 0, log,
        GL_SANITIZER_FRAME_FORMAT);
    g_auto(GStrv) env = g_get_environ();
    env = g_environ_setenv(env, "LD_PRELOAD", runtime, TRUE);
    env = g_environ_setenv(env, "LSAN_OPTIONS", options, TRUE);
    const char *argv[] = { program, NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn_in(dir, env, argv, NULL, &err) == 0, "%s", err);
    g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
    const char *name;
    g_autofree char *prefix = g_strconcat(symbolize ? "named" : "unnamed", ".", NULL);
    while ((name = g_dir_read_name(listing)) != NULL)
        if (g_str_has_prefix(name, prefix)) {
            g_autofree char *path = g_build_filename(dir, name, NULL);
            return gl_test_read(path, NULL);
        }
    ck_abort_msg("no report %s* in %s", prefix, dir);
    return NULL;
}

/* Returns: (transfer full): the frame lines of @report, the program
 * counter (the run's, by where the object was loaded) left out, and the
 * frames of the C library too (gemleak names them by the symbol table of
 * their detached debug file, where the runtime reads its DWARF). */
static char *frames_of(const char *report)
{
    g_auto(GStrv) lines = g_strsplit(report, "\n", -1);
    GString *kept = g_string_new(NULL);
    gboolean libc = FALSE;
    for (char **line = lines; *line != NULL; line++) {
        if (g_str_has_prefix(*line, "Gm "))
            libc = strstr(*line, "/libc.so.") != NULL;
        if (libc)
            continue;
        if (g_str_has_prefix(*line, "G ")) {
            g_auto(GStrv) words = g_strsplit(*line, " ", -1);
            ck_assert_uint_eq(g_strv_length(words), 7);
            g_string_append_printf(kept, "G %s %s %s %s %s\n", words[1], words[3], words[4],
                                   words[5], words[6]);
        } else if (g_str_has_prefix(*line, "Gm ") || g_str_has_prefix(*line, "Gf ") ||
                   g_str_has_prefix(*line, "Gs ")) {
            g_string_append_printf(kept, "%s\n", *line);
        }
    }
    return g_string_free(kept, FALSE);
}

/* Issue 36: a runtime that names frames reads Ruby's debug information in
 * every process that reports; gemleak runs it with symbolize=0 and names
 * the frames itself. What it names is what the runtime would have: the
 * functions (a C++ one by its linkage name demangled), what was inlined
 * (one program counter, two frames, numbered on), the source paths as the
 * line table spells them, the lines. */
START_TEST(test_names_frames_as_the_runtime_does)
{
    g_autofree char *runtime = runtime_or_skip();
    g_autofree char *root = gl_test_tmpdir();
    g_autofree char *program = build_program(root, TRUE);
    g_autofree char *dir = g_path_get_dirname(program);

    g_autofree char *named = report_of(dir, program, runtime, TRUE);
    g_autofree char *unnamed = report_of(dir, program, runtime, FALSE);
    /* the runtime named them, inlined frames among them, and did not */
    ck_assert_msg(strstr(named, " make<Widget>()\n") != NULL, "%s", named);
    ck_assert_msg(strstr(named, "Gs ") != NULL && strstr(named, " ../src/leaks.cpp\n") != NULL,
                  "%s", named);
    ck_assert_msg(strstr(unnamed, "Gf 1 <null>\n") != NULL, "%s", unnamed);

    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    gsize length = 0;
    g_autofree char *ours = gl_sanitizer_name_frames(info, unnamed, strlen(unnamed), &length);
    ck_assert_ptr_nonnull(ours);
    ck_assert_uint_eq(length, strlen(ours));
    g_autofree char *theirs_frames = frames_of(named);
    g_autofree char *ours_frames = frames_of(ours);
    ck_assert_str_eq(ours_frames, theirs_frames);
    /* the C library's frames, below main: by their functions alone */
    g_auto(GStrv) our_lines = g_strsplit(ours, "\n", -1);
    guint libc_frames = 0;
    for (guint i = 0; i + 2 < g_strv_length(our_lines); i++)
        if (g_str_has_prefix(our_lines[i], "Gm ") && strstr(our_lines[i], "/libc.so.") != NULL) {
            ck_assert_msg(!g_str_has_suffix(our_lines[i + 1], " <null>"), "%s", ours);
            ck_assert_msg(g_str_has_suffix(our_lines[i + 2], " <null>"), "%s", ours);
            libc_frames++;
        }
    ck_assert_uint_gt(libc_frames, 0);

    /* a growth site's stack after its first frame, numbered from 1 after
     * a line of the runtime's default format: numbered on from there */
    const char *from = strstr(unnamed, "Gm 1 ");
    ck_assert_ptr_nonnull(from);
    const char *end = strstr(from, "\n\n");
    ck_assert_ptr_nonnull(end);
    g_autofree char *frames = g_strndup(from, (gsize) (end - from) + 1);
    g_autofree char *site = g_strconcat("gemleak:site\t1\n    #0 0x1 (/nonexistent+0x1)\n",
                                        frames, NULL);
    g_autofree char *site_named = gl_sanitizer_name_frames(info, site, strlen(site), &length);
    ck_assert_ptr_nonnull(site_named);
    g_auto(GStrv) lines = g_strsplit(site_named, "\n", -1);
    guint expected = 1, said = gl_test_count(frames, strlen(frames), "Gm ");
    for (char **line = lines; *line != NULL; line++)
        if (g_str_has_prefix(*line, "Gm ")) {
            g_autofree char *want = g_strdup_printf("Gm %u ", expected++);
            ck_assert_msg(g_str_has_prefix(*line, want), "%s, not %s, in:\n%s", *line, want,
                          site_named);
        }
    ck_assert_uint_gt(expected - 1, said);  /* an inlined frame among them */

    /* in place, in a report file; a report with nothing unnamed is left
     * as it is */
    g_autofree char *path = g_build_filename(root, "lsan.1", NULL);
    gl_test_write(path, unnamed, -1);
    ck_assert(gl_sanitizer_name_report(info, path, NULL, NULL));
    g_autofree char *written = gl_test_read(path, NULL);
    ck_assert_str_eq(written, ours);
    g_autofree char *named_path = g_build_filename(root, "lsan.2", NULL);
    gl_test_write(named_path, named, -1);
    ck_assert(gl_sanitizer_name_frames(info, named, strlen(named), &length) == NULL);
    ck_assert(gl_sanitizer_name_report(info, named_path, NULL, NULL));
    g_autofree char *kept = gl_test_read(named_path, NULL);
    ck_assert_str_eq(kept, named);
    gl_remove_tree(root);
}
END_TEST

/* A run directory whose run ended before it named its reports' frames
 * (gemleak killed): gemleak filter names them, in place, and says so. */
START_TEST(test_filter_names_what_a_run_left_unnamed)
{
    g_autofree char *runtime = runtime_or_skip();
    g_autofree char *root = gl_test_tmpdir();
    g_autofree char *program = build_program(root, FALSE);
    g_autofree char *unnamed = report_of(root, program, runtime, FALSE);

    g_autofree char *run = g_build_filename(root, "run", NULL);
    g_mkdir_with_parents(run, 0700);
    g_autofree char *engine = g_build_filename(run, "engine.txt", NULL);
    gl_test_write(engine, "LeakSanitizer\nname lsan\nreports LeakSanitizer's reports\nlog lsan\n"
                          "names-frames yes\n", -1);
    g_autofree char *report = g_build_filename(run, "lsan.4242", NULL);
    gl_test_write(report, unnamed, -1);
    GlTestRun filtered = { 0 };
    gl_test_gemleak(&filtered, "filter", "--object", program, run, NULL);
    gl_assert_line(filtered.err, "^gemleak: note: 1 report of .* had frames the run left "
                                 "unnamed: named now");
    gl_assert_line(filtered.out, "^ \\*c_leak \\(leaks\\.cpp:5\\)$");
    g_autofree char *written = gl_test_read(report, NULL);
    ck_assert_msg(strstr(written, "Gf 1 c_leak\n") != NULL, "%s", written);
    gl_test_run_clear(&filtered);
    gl_remove_tree(root);
}
END_TEST

/* What is not a whole frame of gemleak's format is left as it was: a frame
 * cut short at the end of a report, a module the runtime did not know,
 * an object that is not there. */
START_TEST(test_leaves_what_it_cannot_name)
{
    g_autoptr(GlDebugInfo) info = gl_debuginfo_new();
    static const char cut[] =
        "Direct leak of 8 byte(s) in 1 object(s) allocated from:\n"
        "Gm 0 /nonexistent/lib.so\nGf 0 <null>\nGs 0 <null>\nG 0 0x7f0000001234 0x1234 0x0 0 0\n"
        "Gm 1 <null>\nGf 1 <null>\nGs 1 <null>\nG 1 0x7f0000005678 0x5678 0x0 0 0\n"
        "Gm 2 /nonexistent/lib.so\nGf 2 <null>\nGs 2 <null>\n";
    gsize length = 0;
    ck_assert_ptr_null(gl_sanitizer_name_frames(info, cut, strlen(cut), &length));
    g_autofree char *root = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(root, "lsan.1", NULL);
    gl_test_write(path, cut, -1);
    ck_assert(gl_sanitizer_name_report(info, path, NULL, NULL));
    g_autofree char *kept = gl_test_read(path, NULL);
    ck_assert_str_eq(kept, cut);
    g_autofree char *gone = g_build_filename(root, "lsan.2", NULL);
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_sanitizer_name_report(info, gone, NULL, &error));
    ck_assert_ptr_nonnull(error);
    gl_remove_tree(root);
}
END_TEST

Suite *gl_sanitizer_names_suite(void)
{
    Suite *suite = suite_create("sanitizer_names");
    TCase *tc = tcase_create("sanitizer_names");
    tcase_add_test(tc, test_names_frames_as_the_runtime_does);
    tcase_add_test(tc, test_leaves_what_it_cannot_name);
    tcase_add_test(tc, test_filter_names_what_a_run_left_unnamed);
    suite_add_tcase(suite, tc);
    return suite;
}
