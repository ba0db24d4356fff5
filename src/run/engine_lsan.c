/* The LeakSanitizer engine (engine.h): the runtime Debian's gcc installs
 * (liblsan0) preloaded into every Ruby process of the run, unmodified, one
 * report per process with leaks (log_path=DIR/lsan, lsan.PID), read by
 * src/read/sanitizer_reader.c. Leaks only, at a fraction of Valgrind's cost.
 *
 * Only Ruby gets the runtime (sanitizer.c): the helper takes it out of
 * LD_PRELOAD for what Ruby starts, and a Ruby that starts without it
 * starts again with it (the handover, as below a launcher under
 * Valgrind). */
#include "gemleak/run/engine.h"
#include "gemleak/run/runner.h"
#include "runner_int.h"
#include "sanitizer_int.h"

static const GlSanitizerRuntime lsan = {
    .engine = "lsan",
    .title = "LeakSanitizer",
    .library = "liblsan.so",
    .variable = "GEMLEAK_LSAN_RUNTIME",
    .install = "Debian and Ubuntu: apt-get install liblsan0; Fedora: dnf install liblsan",
    .log = "lsan",
};

/* The engine's "version": the runtime it preloads (liblsan.so, as the C
 * compiler's `-print-file-name` or ldconfig finds it, or
 * GEMLEAK_LSAN_RUNTIME names it), which is what a run says it ran under. */
static char *lsan_version(const char *program, GError **error)
{
    (void) program;
    return gl_sanitizer_runtime(&lsan, error);
}

static char *lsan_log_too_long(const char *run_dir, gsize *max)
{
    return gl_sanitizer_log_too_long(&lsan, run_dir, max);
}

/* Returns: (transfer full) (nullable): what is preloaded before the
 * runtime (gl_sanitizer_first()). */
static char *lsan_first(const GlRunOptions *options, const char *helper_dir)
{
    return gl_sanitizer_first(options, helper_dir, TRUE);
}

static GPtrArray *lsan_argv(const GlRunOptions *options, const char *program, const char *run_dir,
                            const char *helper_dir, char *const *command, char ***env)
{
    (void) program;
    (void) run_dir;
    g_autofree char *first = lsan_first(options, helper_dir);
    return gl_sanitizer_argv(&lsan, first, helper_dir, command, env);
}

static char *lsan_handover(const GlRunOptions *options, const char *run_dir, const char *helper_dir)
{
    (void) run_dir;
    g_autofree char *first = lsan_first(options, helper_dir);
    return gl_sanitizer_handover(&lsan, first, helper_dir);
}

static char *lsan_watch_mark(const char *run_dir)
{
    return gl_sanitizer_watch_mark(&lsan, run_dir);
}

/* Fast stacks, whatever Ruby is: the runtime unwinds by frame pointers, at
 * 1.1 to 1.3 times native, where exact stacks (fast_unwind_on_malloc=0,
 * DWARF for every allocation, Ruby's boot included) cost 3 to 23 times on
 * real suites. On a Ruby without frame pointers a stack then stops at the
 * allocating call; the exact pass (exact.h) unwinds exactly where that cut
 * a leak's stack, at its sites only. --exact-stacks (fast_stacks FALSE)
 * unwinds every allocation exactly, in one run. The leak check lists each
 * object it found lost (report_objects): the exact pass joins its stacks
 * to them by address, a forked child's inherited blocks are found by it,
 * and --per-test its tests, which the reader puts at
 * the test that allocated each (the client library's "gemleak:owned"
 * lines), unless a forked child's check of what it inherited listed it
 * first. Ruby frees its memory at exit (3.3+): without it Ruby leaves
 * thousands of blocks, LeakSanitizer keeps the first 5000 stacks, and the
 * extension's leaks were among those dropped. */
static char **lsan_environment(const GlRunOptions *options, const char *run_dir,
                               const char *found, char **env)
{
    /* report_objects in every run: a forked child's inherited blocks are
     * found by their addresses (read/sanitizer_inherited.h); symbolize=0:
     * a process that reports would read the debug information of every
     * object in its stacks, Ruby's among them, each time; gemleak names
     * the frames once a run (GL_ENGINE_NAMES_FRAMES) */
    g_autofree char *ours = g_strdup_printf("detect_leaks=1:max_leaks=0:fast_unwind_on_malloc=%d:"
                                            "report_objects=1:symbolize=0",
                                            options->fast_stacks ? 1 : 0);
    env = gl_sanitizer_environment(&lsan, "LSAN_OPTIONS", run_dir, found, ours, options->messages,
                                   env);
    return gl_sanitizer_free_at_exit(env);
}

const GlEngine gl_engine_lsan = {
    .facts = {
        .name = "lsan",
        .title = "LeakSanitizer",
        .reports = "LeakSanitizer's reports",
        .outside = "its runtime was not in the process, and it wrote no report",
        .log = "lsan",
        .min_ruby = "3.3",
        .min_ruby_why = "LeakSanitizer needs Ruby to free its own memory at exit "
                        "(RUBY_FREE_AT_EXIT, Ruby 3.3 and later): without it Ruby leaves thousands "
                        "of blocks, LeakSanitizer reports only the first 5000, and the extension's "
                        "leaks are lost among them",
        .caps = GL_ENGINE_SILENT_WHEN_CLEAN | GL_ENGINE_PROVES_CHECKS |
                GL_ENGINE_FAST_WITH_FRAME_POINTERS | GL_ENGINE_EXACT_WHERE_LEAKED |
                GL_ENGINE_NAMES_FRAMES,
    },
    .sees = "LeakSanitizer preloaded into Ruby 3.3 or newer: leaks only, several times faster",
    .version = lsan_version,
    .output_too_long = lsan_log_too_long,
    .argv = lsan_argv,
    .handover = lsan_handover,
    .watch_mark = lsan_watch_mark,
    .environment = lsan_environment,
    .blind_to = "sees leaks only, not invalid reads and writes, use after free, double frees, "
                "uninitialised values: the Valgrind engine does (uninitialised values with "
                "--valgrind-opt=--undef-value-errors=yes)",
};
