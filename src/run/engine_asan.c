/* The AddressSanitizer engine (engine.h): the runtime Debian's gcc
 * installs (libasan8) preloaded into every Ruby process of the run, an
 * unmodified Ruby, and the extension compiled with -fsanitize=address
 * (the Rake task's asan build, or extconf.rb's --with-cflags): invalid
 * reads and writes, use after free and double frees with their
 * allocation and free stacks, at compiled-in speed (0.2x the Valgrind
 * engine's time with exact stacks, 2.3x native with fast ones on a Ruby
 * with frame pointers: make bench, section 8); and leaks, judged as under
 * LeakSanitizer, on a Ruby that frees its memory at exit. One report per
 * process with errors (log_path=DIR/asan, asan.PID), read by
 * src/read/sanitizer_reader.c. Only Ruby gets the runtime (sanitizer.c). */
#include "gemleak/run/engine.h"
#include "gemleak/base/protocol.h"
#include "gemleak/run/runner.h"
#include "sanitizer_int.h"

static const GlSanitizerRuntime asan = {
    .engine = "asan",
    .title = "AddressSanitizer",
    .library = "libasan.so",
    .variable = "GEMLEAK_ASAN_RUNTIME",
    .install = "Debian and Ubuntu: apt-get install libasan8; Fedora: dnf install libasan",
    .log = "asan",
};

/* The engine's "version": the runtime it preloads (libasan.so, found as
 * LeakSanitizer's is), which is what a run says it ran under. */
static char *asan_version(const char *program, GError **error)
{
    (void) program;
    return gl_sanitizer_runtime(&asan, error);
}

static char *asan_log_too_long(const char *run_dir, gsize *max)
{
    return gl_sanitizer_log_too_long(&asan, run_dir, max);
}

/* Before the runtime: the allocation front under fast stacks (on a Ruby
 * that keeps frame pointers); the client library is only loaded
 * (AddressSanitizer's realloc calls the hooks). */
static GPtrArray *asan_argv(const GlRunOptions *options, const char *program, const char *run_dir,
                            const char *helper_dir, char *const *command, char ***env)
{
    (void) program;
    (void) run_dir;
    g_autofree char *first = gl_sanitizer_first(options, helper_dir, FALSE);
    return gl_sanitizer_argv(&asan, first, helper_dir, command, env);
}

static char *asan_handover(const GlRunOptions *options, const char *run_dir, const char *helper_dir)
{
    (void) run_dir;
    g_autofree char *first = gl_sanitizer_first(options, helper_dir, FALSE);
    return gl_sanitizer_handover(&asan, first, helper_dir);
}

static char *asan_watch_mark(const char *run_dir)
{
    return gl_sanitizer_watch_mark(&asan, run_dir);
}

/* No fake stacks (detect_stack_use_after_return=0): a local kept on one
 * is hidden from Ruby's conservative GC, which frees what it still uses.
 * use_sigaltstack=0: Ruby gives its threads alternate signal stacks of its
 * own, and the runtime's check that it unmapped its own at a thread's end
 * failed on Ruby 3.4.5 ("unable to unmap"), killing the process in the
 * middle of its report.
 * halt_on_error=0 lets a process go on after an error where the build
 * allows it (-fsanitize-recover=address, as the Rake task builds); an
 * extension built without it still stops the process at its first
 * invalid access, which the reader sees ("ABORTING") and the run says.
 * Leaks are checked as under LeakSanitizer, with Ruby freeing its memory
 * at exit, or not at all on a Ruby that cannot (options->leaks_unchecked). */
static char **asan_environment(const GlRunOptions *options, const char *run_dir,
                               const char *found, char **env)
{
    g_autofree char *ours = g_strdup_printf(
        "detect_stack_use_after_return=0:use_sigaltstack=0:halt_on_error=0:fast_unwind_on_malloc=%d:"
        "detect_leaks=%d:symbolize=1",
        options->fast_stacks ? 1 : 0, options->leaks_unchecked ? 0 : 1);
    env = gl_sanitizer_environment(&asan, "ASAN_OPTIONS", run_dir, found, ours, options->messages,
                                   env);
    if (!options->leaks_unchecked)
        env = gl_sanitizer_free_at_exit(env);
    /* LeakSanitizer's own flags, which AddressSanitizer reads from
     * LSAN_OPTIONS: every leak in the report, and each lost object's
     * address, by which a forked child's inherited blocks are found and,
     * per test, the reader puts each at the test that allocated it. */
    if (!options->leaks_unchecked)
        env = gl_sanitizer_leak_options(env, "max_leaks=0:report_objects=1", options->messages);
    return env;
}

const GlEngine gl_engine_asan = {
    .facts = {
        .name = "asan",
        .title = "AddressSanitizer",
        .reports = "AddressSanitizer's reports",
        .outside = "its runtime was not in the process, and it wrote no report",
        .log = "asan",
        .instrumented_prefix = "__asan_",
        .leaks_min_ruby = "3.3",
        .leaks_min_ruby_why = "AddressSanitizer's leak check needs Ruby to free its own memory at "
                              "exit (RUBY_FREE_AT_EXIT, Ruby 3.3 and later)",
        .caps = GL_ENGINE_SILENT_WHEN_CLEAN | GL_ENGINE_PROVES_CHECKS |
                GL_ENGINE_FAST_WITH_FRAME_POINTERS | GL_ENGINE_NAMES_FRAMES,
    },
    .sees = "AddressSanitizer: memory errors of an extension built with it, and leaks on Ruby 3.3 or newer",
    .version = asan_version,
    .output_too_long = asan_log_too_long,
    .argv = asan_argv,
    .handover = asan_handover,
    .watch_mark = asan_watch_mark,
    .environment = asan_environment,
    .blind_to = "does not see the use of uninitialised values: the Valgrind engine does (uninitialised values with "
                "--valgrind-opt=--undef-value-errors=yes)",
    .instrumented_cflags = GL_PROTO_ASAN_CFLAGS,
    .instrumented_ldflags = GL_PROTO_ASAN_LDFLAGS,
};
