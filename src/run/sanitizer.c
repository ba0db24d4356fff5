/* What the sanitizer engines share (sanitizer_int.h). */
#include "sanitizer_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/programs.h"
#include "gemleak/read/sanitizer_reader.h"
#include "gemleak/agent/program_kind.h"
#include "gemleak/run/cache.h"
#include "gemleak/run/runner.h"
#include "runner_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_TIMEOUT_MS 5000
#define PROBE_MAX_BYTES 65536

/* The sanitizer runtimes take a log_path of up to PATH_MAX; the pid and
 * the name come after it. */
#define MAX_FILE_NAME 4000

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

/* The cache's directory for where compilers said runtimes are (cache.h). */
#define RUNTIMES_CACHE "runtimes"

/* Returns: (transfer full) (nullable): what the C compiler @compiler says
 * its @library is (gcc prints the bare name back when it has none). */
static char *asked_of(const char *compiler, const char *library)
{
    g_autofree char *option = g_strconcat("-print-file-name=", library, NULL);
    const char *argv[] = { compiler, option, NULL };
    g_autofree char *out = NULL;
    int wait_status = 0;
    if (!gl_probe_command(argv, NULL, PROBE_MAX_BYTES, PROBE_TIMEOUT_MS, &out, &wait_status,
                          NULL) ||
        !g_spawn_check_wait_status(wait_status, NULL))
        return NULL;
    return existing(g_strstrip(out));
}

/* Returns: (transfer full) (nullable): what the C compiler says its
 * @library is: the first of gcc and cc on PATH that names one. What a
 * compiler said is kept between runs (cache.h), and read back while that
 * compiler's executable is the same and the runtime it named is there. */
static char *from_compiler(const char *library)
{
    const char *compilers[] = { "gcc", "cc" };
    for (guint i = 0; i < G_N_ELEMENTS(compilers); i++) {
        g_autofree char *file = NULL;
        g_autofree char *key = gl_cache_program_key(compilers[i], library, &file);
        if (key == NULL)
            continue;  /* not on PATH */
        g_autofree char *kept = gl_cache_get(RUNTIMES_CACHE, file, key);
        char *found = kept != NULL ? existing(kept) : NULL;
        if (found != NULL)
            return found;
        found = asked_of(compilers[i], library);
        if (found != NULL) {
            gl_cache_put(RUNTIMES_CACHE, file, key, found);
            return found;
        }
    }
    return NULL;
}

/* Returns: (transfer full) (nullable): @library (libasan.so) as the
 * dynamic linker's cache lists it ("libasan.so.8 (libc6,x86-64) => /lib/..."):
 * the ldconfig on PATH, else /sbin's (not on every user's PATH). */
static char *from_ldconfig(const char *library)
{
    const char *const tools[] = { "ldconfig", "/sbin/ldconfig" };
    g_autofree char *out = NULL;
    for (guint i = 0; i < G_N_ELEMENTS(tools) && out == NULL; i++) {
        const char *argv[] = { tools[i], "-p", NULL };
        int wait_status = 0;
        if (!gl_probe_command(argv, NULL, (gsize) 4 * 1024 * 1024, PROBE_TIMEOUT_MS, &out, &wait_status,
                              NULL))
            g_clear_pointer(&out, g_free);
    }
    if (out == NULL)
        return NULL;
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        const char *arrow = strstr(*line, "=> ");
        if (strstr(*line, library) == NULL || arrow == NULL)
            continue;
        char *found = existing(g_strstrip(*line + (arrow - *line) + 3));
        if (found != NULL)
            return found;
    }
    return NULL;
}

char *gl_sanitizer_runtime(const GlSanitizerRuntime *runtime, GError **error)
{
    const char *given = g_getenv(runtime->variable);
    if (given != NULL && *given != '\0') {
        char *found = existing(given);
        if (found == NULL)
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                        "%s=%s: no such file (it names %s's runtime, %s)", runtime->variable,
                        given, runtime->title, runtime->library);
        return found;
    }
    /* A run asks three times (its version, the command, the handover to a
     * Ruby a launcher starts), and each asking runs the compiler: the
     * last runtime found is kept. */
    static struct {
        const char *library;
        char path[PATH_MAX];
    } last;
    if (last.library != NULL && strcmp(last.library, runtime->library) == 0)
        return g_strdup(last.path);
    char *found = from_compiler(runtime->library);
    if (found == NULL)
        found = from_ldconfig(runtime->library);
    if (found != NULL && strlen(found) < sizeof last.path) {
        last.library = runtime->library;
        g_strlcpy(last.path, found, sizeof last.path);
    }
    if (found == NULL)
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "--engine %s: %s's runtime (%s) is not installed: install it (%s), or name "
                    "it with %s=PATH", runtime->engine, runtime->title, runtime->library,
                    runtime->install, runtime->variable);
    return found;
}

/* Also a name the runtime cannot be given: the options quote it with '"',
 * which it then cannot hold (its length said as 0). */
char *gl_sanitizer_log_too_long(const GlSanitizerRuntime *runtime, const char *run_dir,
                                gsize *max)
{
    *max = strchr(run_dir, '"') != NULL ? 0 : MAX_FILE_NAME;
    g_autofree char *name = g_strdup_printf("%s/%s.%d", run_dir, runtime->log, G_MAXINT);
    return strlen(name) > *max ? g_steal_pointer(&name) : NULL;
}

/* Returns: (transfer full): LD_PRELOAD's value: "[FIRST:]RUNTIME[:what the
 * user preloads][:the library every process of the run gets]"
 * (gl_run_child_environment). */
static char *preload(const char *first, const char *runtime, const char *helper_dir)
{
    const char *theirs = g_getenv("LD_PRELOAD");
    g_autofree char *quiet = gl_run_preload_library(helper_dir, NULL);
    return g_strconcat(first != NULL ? first : "", first != NULL ? ":" : "",
                       runtime, theirs != NULL && *theirs != '\0' ? ":" : "",
                       theirs != NULL ? theirs : "", quiet != NULL ? ":" : "",
                       quiet != NULL ? quiet : "", NULL);
}

char *gl_sanitizer_first(const GlRunOptions *options, const char *helper_dir, gboolean client_first)
{
    if (options == NULL)
        return NULL;
    g_autofree char *alloc = options->fast_stacks ? gl_run_alloc_library(helper_dir) : NULL;
    g_autofree char *client = client_first && options->per_test != NULL
                                  ? gl_run_client_library(helper_dir) : NULL;
    if (alloc != NULL && client != NULL)
        return g_strconcat(alloc, ":", client, NULL);
    return alloc != NULL ? g_steal_pointer(&alloc) : g_steal_pointer(&client);
}

/* Returns: (transfer full) (nullable): the guard's path when @command's
 * program is static (the library gemleak preloads never loads into it,
 * to give what it starts the run's variables back): the guard runs it,
 * following it (src/agent/guard.c); NULL otherwise. */
static char *guard_for(const char *helper_dir, char *const *command)
{
    if (command == NULL || command[0] == NULL)
        return NULL;
    g_autofree char *guard = gl_run_guard(helper_dir);
    g_autofree char *program = guard != NULL ? g_find_program_in_path(command[0]) : NULL;
    return program != NULL && gl_program_is_static(program) ? g_steal_pointer(&guard) : NULL;
}

/* Only Ruby gets the runtime: a compiler or an assembler under it leaks
 * or crashes (as(1) dies of SIGSEGV). A Ruby command starts under it
 * (LD_PRELOAD=... in its environment, @env, or env LD_PRELOAD=... ruby ...
 * without one); another (make, a shell) starts as it is, and each Ruby
 * below it starts again under the runtime through the helper; a static
 * one, under the guard. */
GPtrArray *gl_sanitizer_argv(const GlSanitizerRuntime *runtime, const char *first,
                             const char *helper_dir, char *const *command, char ***env)
{
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *found = command != NULL && command[0] != NULL &&
                                     (gl_is_ruby_object(command[0]) || gl_is_launcher(command[0]))
                                 ? gl_sanitizer_runtime(runtime, NULL) : NULL;
    char *guard = found == NULL ? guard_for(helper_dir, command) : NULL;
    if (found != NULL) {
        g_autofree char *preloaded = preload(first, found, helper_dir);
        if (env != NULL) {
            *env = g_environ_setenv(*env, "LD_PRELOAD", preloaded, TRUE);
        } else {
            g_ptr_array_add(argv, g_strdup("env"));
            g_ptr_array_add(argv, g_strconcat("LD_PRELOAD=", preloaded, NULL));
        }
    } else if (guard != NULL) {
        g_ptr_array_add(argv, guard);
        g_ptr_array_add(argv, g_find_program_in_path(command[0]));
    }
    for (char *const *arg = command; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, g_strdup(*arg));
    g_ptr_array_add(argv, NULL);
    return argv;
}

char *gl_sanitizer_handover(const GlSanitizerRuntime *runtime, const char *first,
                            const char *helper_dir)
{
    g_autofree char *found = gl_sanitizer_runtime(runtime, NULL);
    if (found == NULL)
        return NULL;
    g_autofree char *preloaded = preload(first, found, helper_dir);
    g_autofree char *variable = g_strconcat("LD_PRELOAD=", preloaded, NULL);
    if (strchr(variable, GL_PROTO_ENGINE_COMMAND_SEPARATOR[0]) != NULL)
        return NULL;
    g_autofree char *env = g_find_program_in_path("env");
    return g_strconcat(env != NULL ? env : "/usr/bin/env", GL_PROTO_ENGINE_COMMAND_SEPARATOR, variable,
                       NULL);
}

char *gl_sanitizer_watch_mark(const GlSanitizerRuntime *runtime, const char *run_dir)
{
    /* The processes of the run carry GEMLEAK_RUN_DIR, which the watchdog
     * looks for too; their command lines hold nothing of the engine's. */
    return g_strconcat("log_path=", run_dir, "/", runtime->log, NULL);
}

/* Returns: (transfer full) (nullable): "KEY=VALUE, ..." of @theirs (an
 * options variable's value, "KEY=VALUE:KEY=VALUE...") whose KEY @ours sets
 * to another value: what gemleak overrides; NULL when none. */
static char *overridden(const char *theirs, const char *ours)
{
    if (theirs == NULL || *theirs == '\0')
        return NULL;
    g_auto(GStrv) mine = g_strsplit(ours, ":", -1);
    g_auto(GStrv) given = g_strsplit(theirs, ":", -1);
    g_autoptr(GString) said = g_string_new(NULL);
    for (char **option = given; *option != NULL; option++) {
        const char *equals = strchr(*option, '=');
        if (equals == NULL)
            continue;
        gsize key = (gsize) (equals - *option) + 1;
        for (char **own = mine; *own != NULL; own++)
            if (strncmp(*own, *option, key) == 0 && strcmp(*own, *option) != 0) {
                g_string_append_printf(said, "%s%s", said->len > 0 ? ", " : "", *option);
                break;
            }
    }
    return said->len > 0 ? g_strdup(said->str) : NULL;
}

/* Sets @variable to what the user gave, then @ours: the runtimes take the
 * last of an option given twice. What of theirs gemleak overrides is said
 * on @messages (nullable), once. */
static char **set_options(char **env, const char *variable, const char *ours, FILE *messages)
{
    const char *theirs = g_environ_getenv(env, variable);
    g_autofree char *over = overridden(theirs, ours);
    if (over != NULL && messages != NULL) {
        g_autofree char *shown = g_strescape(over, NULL);
        fprintf(messages, "gemleak: note: %s: %s overridden: each would change what a report "
                "says or holds, which gemleak reads as it sets it\n", variable, shown);
    }
    g_autofree char *value = theirs != NULL && *theirs != '\0'
                                 ? g_strconcat(theirs, ":", ours, NULL)
                                 : g_strdup(ours);
    return g_environ_setenv(env, variable, value, TRUE);
}

/* The runtimes' options that change a report's text, paths or set of
 * records (their flag lists: LSAN_OPTIONS=help=1), set by gemleak after the
 * user's, who is told which of theirs it overrode: colour codes around
 * records, paths stripped of a prefix, dedup tokens and module maps between
 * records, a summary that ends each report, another symbolizer,
 * inlined frames (whether the runtime names frames at all is the engine's:
 * symbolize, in its own options), suppressions (gemleak's rules decide what is skipped),
 * what the runtime logs besides. */
static const char *const report_shape[] = {
    "color=never", "strip_path_prefix=", "dedup_token_length=0", "print_module_map=0",
    "print_summary=1", "print_suppressions=0", "symbolize_inline_frames=1",
    "symbolize_vs_style=0", "external_symbolizer_path=", "allow_addr2line=0", "demangle=1",
    "suppressions=", "verbosity=0", "log_to_syslog=0", "fast_unwind_on_fatal=0",
};

/* LeakSanitizer's own: what it counts as reachable (its root set), and
 * whether it folds leaks of like stacks into one record. */
static const char *const leak_shape[] = {
    "use_globals=1", "use_stacks=1", "use_registers=1", "use_tls=1", "use_root_regions=1",
    "use_unaligned=0", "use_poisoned=0", "resolution=0", "log_pointers=0", "log_threads=1",
};

/* AddressSanitizer's own: the errors it reports, and the lines it adds to
 * a report. */
static const char *const address_shape[] = {
    "print_stats=0", "print_scariness=0", "alloc_dealloc_mismatch=1", "new_delete_type_mismatch=1",
    "detect_container_overflow=1", "report_globals=1", "detect_odr_violation=2",
};

/* Returns: (transfer full): @table's options joined by ':'. */
static char *joined(const char *const *table, gsize n)
{
    g_autoptr(GString) text = g_string_new(NULL);
    for (gsize i = 0; i < n; i++)
        g_string_append_printf(text, "%s%s", i > 0 ? ":" : "", table[i]);
    return g_string_free(g_steal_pointer(&text), FALSE);
}

/* Both runtimes: a report a process, by an absolute path (suites change
 * directory), under its plain name (no log_exe_name, no log_suffix: the
 * reader and the run's coverage look for NAME.PID); exit code 0 (a suite
 * that checks a forked child's status fails under the runtimes' 23 or 1,
 * and gemleak's gate decides); stacks GL_SANITIZER_STACK_LIMIT deep; a
 * frame format that names each frame's module. Where the library gemleak
 * preloads makes the leak check at exit and proves it ran
 * (GL_PROTO_PROOF_VARIABLE in @env), the runtime's own is off. */
char **gl_sanitizer_environment(const GlSanitizerRuntime *runtime, const char *options_variable,
                                const char *run_dir, const char *found, const char *ours,
                                FILE *messages, char **env)
{
    gboolean proof = g_environ_getenv(env, GL_PROTO_PROOF_VARIABLE) != NULL;
    g_autofree char *shape = joined(report_shape, G_N_ELEMENTS(report_shape));
    g_autofree char *own_shape = strcmp(options_variable, "LSAN_OPTIONS") == 0
                                     ? joined(leak_shape, G_N_ELEMENTS(leak_shape))
                                     : joined(address_shape, G_N_ELEMENTS(address_shape));
    /* quoted: the runtimes split their options at a colon, which a
     * directory may hold, and at blanks and newlines, which the frame
     * format holds */
    g_autofree char *shared = g_strdup_printf(
        "exitcode=0:log_path=\"%s/%s\":log_exe_name=0:log_suffix=:malloc_context_size=%d:"
        "stack_trace_format=\"%s\":%s:%s:%s%s", run_dir, runtime->log, GL_SANITIZER_STACK_LIMIT,
        GL_SANITIZER_FRAME_FORMAT, shape, own_shape, proof ? "leak_check_at_exit=0:" : "", ours);
    env = set_options(env, options_variable, shared, messages);
    return g_environ_setenv(env, GL_PROTO_RUNTIME_VARIABLE, found, TRUE);
}

char **gl_sanitizer_leak_options(char **env, const char *ours, FILE *messages)
{
    /* AddressSanitizer's leak check takes its suppressions from here too */
    g_autofree char *shape = joined(leak_shape, G_N_ELEMENTS(leak_shape));
    g_autofree char *all = g_strconcat(shape, ":suppressions=:", ours, NULL);
    return set_options(env, "LSAN_OPTIONS", all, messages);
}

char **gl_sanitizer_free_at_exit(char **env)
{
    /* The user's RUBY_FREE_AT_EXIT=0 (or empty): Ruby as it runs in
     * production, which gl_run_child_environment() took out of @env for
     * that, as under every engine. */
    const char *theirs = g_getenv("RUBY_FREE_AT_EXIT");
    if (g_environ_getenv(env, "RUBY_FREE_AT_EXIT") != NULL ||
        (theirs != NULL && (*theirs == '\0' || strcmp(theirs, "0") == 0)))
        return env;
    return g_environ_setenv(env, "RUBY_FREE_AT_EXIT", GL_PROTO_FREE_AT_EXIT_VALUE, TRUE);
}
