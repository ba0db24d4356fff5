/* The LeakSanitizer engine (engine.h): the runtime Debian's gcc installs
 * (liblsan0) preloaded into every Ruby process of the run, unmodified, one
 * report per process with leaks (log_path=DIR/lsan, lsan.PID), read by
 * src/read/sanitizer_reader.c. Leaks only, at a fraction of Valgrind's cost.
 *
 * Only Ruby gets the runtime: a compiler or an assembler under it leaks or
 * crashes (as(1) dies of SIGSEGV). A Ruby command starts with it in
 * LD_PRELOAD; the helper takes it out of LD_PRELOAD for what Ruby starts,
 * and a Ruby that starts without it starts again with it (the handover,
 * as below a launcher under Valgrind). */
#include "gemleak/run/engine.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/classify.h"
#include "gemleak/read/sanitizer_reader.h"
#include "gemleak/run/runner.h"

#include <stdlib.h>
#include <string.h>

#define PROBE_TIMEOUT_MS 5000
#define PROBE_MAX_BYTES 65536

/* The sanitizer runtimes take a log_path of up to PATH_MAX; the pid and
 * the name come after it. */
#define LSAN_MAX_FILE_NAME 4000

/* Returns: (transfer full) (nullable): the real path of @path when it is a
 * regular file. */
static char *existing(const char *path)
{
    if (path == NULL || !g_path_is_absolute(path) ||
        !g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return NULL;
    char *real = realpath(path, NULL);
    char *copy = g_strdup(real != NULL ? real : path);
    free(real);
    return copy;
}

/* Returns: (transfer full) (nullable): what the C compiler says its
 * liblsan.so is (gcc prints the bare name back when it has none). */
static char *from_compiler(void)
{
    const char *compilers[] = { "gcc", "cc" };
    for (guint i = 0; i < G_N_ELEMENTS(compilers); i++) {
        const char *argv[] = { compilers[i], "-print-file-name=liblsan.so", NULL };
        g_autofree char *out = NULL;
        int wait_status = 0;
        if (!gl_probe_command(argv, NULL, PROBE_MAX_BYTES, PROBE_TIMEOUT_MS, &out, &wait_status,
                              NULL) ||
            !g_spawn_check_wait_status(wait_status, NULL))
            continue;
        char *found = existing(g_strstrip(out));
        if (found != NULL)
            return found;
    }
    return NULL;
}

/* Returns: (transfer full) (nullable): liblsan.so.0 as the dynamic
 * linker's cache lists it ("liblsan.so.0 (libc6,x86-64) => /lib/..."). */
static char *from_ldconfig(void)
{
    const char *const tools[] = { "/sbin/ldconfig", "ldconfig" };
    for (guint i = 0; i < G_N_ELEMENTS(tools); i++) {
        const char *argv[] = { tools[i], "-p", NULL };
        g_autofree char *out = NULL;
        int wait_status = 0;
        if (!gl_probe_command(argv, NULL, (gsize) 4 * 1024 * 1024, PROBE_TIMEOUT_MS, &out, &wait_status,
                              NULL))
            continue;
        g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
        for (char **line = lines; *line != NULL; line++) {
            const char *arrow = strstr(*line, "=> ");
            if (strstr(*line, "liblsan.so") == NULL || arrow == NULL)
                continue;
            char *found = existing(g_strstrip(*line + (arrow - *line) + 3));
            if (found != NULL)
                return found;
        }
    }
    return NULL;
}

char *gl_lsan_runtime(GError **error)
{
    const char *given = g_getenv("GEMLEAK_LSAN_RUNTIME");
    if (given != NULL && *given != '\0') {
        char *found = existing(given);
        if (found == NULL)
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                        "GEMLEAK_LSAN_RUNTIME=%s: no such file (it names LeakSanitizer's runtime, "
                        "liblsan.so)", given);
        return found;
    }
    char *found = from_compiler();
    if (found == NULL)
        found = from_ldconfig();
    if (found == NULL)
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "--engine lsan: LeakSanitizer's runtime (liblsan.so) is not installed: install "
                    "it (Debian and Ubuntu: apt-get install liblsan0; Fedora: dnf install "
                    "liblsan), or name it with GEMLEAK_LSAN_RUNTIME=PATH");
    return found;
}

/* The engine's "version": the runtime it preloads, which is what a run
 * says it ran under. */
static char *lsan_version(const char *program, GError **error)
{
    (void) program;
    return gl_lsan_runtime(error);
}

/* Also a name the runtime cannot be given: LSAN_OPTIONS quotes it with
 * '"', which it then cannot hold (its length said as 0). */
static char *log_name_too_long(const char *run_dir, gsize *max)
{
    *max = strchr(run_dir, '"') != NULL ? 0 : LSAN_MAX_FILE_NAME;
    g_autofree char *name = g_strdup_printf("%s/lsan.%d", run_dir, G_MAXINT);
    return strlen(name) > *max ? g_steal_pointer(&name) : NULL;
}

/* Returns: (transfer full): "LD_PRELOAD=RUNTIME[:what the user preloads]". */
static char *preload(const char *runtime)
{
    const char *theirs = g_getenv("LD_PRELOAD");
    return theirs != NULL && *theirs != '\0'
               ? g_strconcat("LD_PRELOAD=", runtime, ":", theirs, NULL)
               : g_strconcat("LD_PRELOAD=", runtime, NULL);
}

/* A Ruby command starts under the runtime (env LD_PRELOAD=... ruby ...);
 * another (make, a shell) starts as it is, and each Ruby below it starts
 * again under the runtime through the helper. */
static GPtrArray *lsan_argv(const GlRunOptions *options, const char *program, const char *run_dir,
                            char *const *command)
{
    (void) options;
    (void) program;
    (void) run_dir;
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *runtime = command != NULL && command[0] != NULL &&
                                       (gl_is_ruby_object(command[0]) || gl_is_launcher(command[0]))
                                   ? gl_lsan_runtime(NULL) : NULL;
    if (runtime != NULL) {
        g_ptr_array_add(argv, g_strdup("env"));
        g_ptr_array_add(argv, preload(runtime));
    }
    for (char *const *arg = command; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, g_strdup(*arg));
    g_ptr_array_add(argv, NULL);
    return argv;
}

/* Returns: (transfer full) (nullable): "env<SEP>LD_PRELOAD=RUNTIME", what a
 * Ruby that starts without the runtime starts again under. */
static char *lsan_handover(const GlRunOptions *options, const char *run_dir)
{
    (void) options;
    (void) run_dir;
    g_autofree char *runtime = gl_lsan_runtime(NULL);
    if (runtime == NULL)
        return NULL;
    g_autofree char *variable = preload(runtime);
    if (strchr(variable, GL_PROTO_VALGRIND_SEPARATOR[0]) != NULL)
        return NULL;
    g_autofree char *env = g_find_program_in_path("env");
    return g_strconcat(env != NULL ? env : "/usr/bin/env", GL_PROTO_VALGRIND_SEPARATOR, variable,
                       NULL);
}

static char *lsan_watch_mark(const char *run_dir)
{
    /* The processes of the run carry GEMLEAK_RUN_DIR, which the watchdog
     * looks for too; their command lines hold nothing of the engine's. */
    return g_strconcat("log_path=", run_dir, "/lsan", NULL);
}

/* What LeakSanitizer is run with: a report a process, by an absolute path
 * (suites change directory); exit code 0 (a suite that checks a forked
 * child's status fails under the runtime's 23, and gemleak's gate
 * decides); exact stacks (the fast unwinder gives 2-3 frames on a Ruby
 * without frame pointers, and wrong verdicts), 30 deep, or the fast
 * unwinder when Ruby keeps frame pointers (whole stacks, near native
 * speed: 0.82 s against exact stacks' 6.1 s on redcarpet's suite); a frame format
 * that names each frame's module. Ruby frees its memory at exit (3.3+):
 * without it Ruby leaves thousands of blocks, LeakSanitizer keeps the
 * first 5000 stacks, and the extension's leaks were among those dropped. */
static char **lsan_environment(const GlRunOptions *options, const char *run_dir,
                               const char *found, char **env)
{
    const char *theirs = g_environ_getenv(env, "LSAN_OPTIONS");
    /* quoted: the runtimes split their options at a colon, which a
     * directory may hold */
    g_autofree char *ours = g_strdup_printf(
        "exitcode=0:log_path=\"%s/lsan\":fast_unwind_on_malloc=%d:malloc_context_size=%d:"
        "stack_trace_format=%s", run_dir, options->fast_stacks ? 1 : 0, GL_SANITIZER_STACK_LIMIT,
        GL_SANITIZER_FRAME_FORMAT);
    g_autofree char *options_value = theirs != NULL && *theirs != '\0'
                                         ? g_strconcat(theirs, ":", ours, NULL)
                                         : g_strdup(ours);
    env = g_environ_setenv(env, "LSAN_OPTIONS", options_value, TRUE);
    env = g_environ_setenv(env, GL_PROTO_RUNTIME_VARIABLE, found, TRUE);
    env = g_environ_setenv(env, "RUBY_FREE_AT_EXIT", "1", TRUE);
    return env;
}

const GlEngine gl_engine_lsan = {
    .name = "lsan",
    .title = "LeakSanitizer",
    .version = lsan_version,
    .output_too_long = log_name_too_long,
    .argv = lsan_argv,
    .handover = lsan_handover,
    .watch_mark = lsan_watch_mark,
    .environment = lsan_environment,
    .blind_to = "invalid reads and writes, use after free, double frees, uninitialised values",
    .min_ruby = "3.3",
    .min_ruby_why = "LeakSanitizer needs Ruby to free its own memory at exit "
                    "(RUBY_FREE_AT_EXIT, Ruby 3.3 and later): without it Ruby leaves thousands "
                    "of blocks, LeakSanitizer reports only the first 5000, and the extension's "
                    "leaks are lost among them",
    .silent_when_clean = TRUE,
    .fast_with_frame_pointers = TRUE,
};
