/* The Valgrind engine (engine.h): memcheck's command line (one %p.xml
 * file per process, children traced but the build's tools, Ruby's
 * suppressions), its version check, the handover of its command line to
 * processes started outside it, and the names it takes. */
#include "gemleak/run/engine.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/run/runner.h"

#include <string.h>

/* The oldest Valgrind whose options and XML gemleak relies on. */
#define VALGRIND_MIN_MAJOR 3
#define VALGRIND_MIN_MINOR 10

/* `valgrind --version` prints one short line at once. One that floods its
 * output or never ends (a wrong --valgrind, a wrapper waiting for input)
 * must not hang gemleak. */
#define PROBE_TIMEOUT_MS 5000
#define PROBE_MAX_BYTES 4096
/* Returns: (transfer full): the first line of @text, at most 80 bytes, valid UTF-8. */
static char *first_line(const char *text)
{
    gsize n = strcspn(text, "\r\n");
    g_autofree char *line = g_strndup(text, MIN(n, 80));
    return g_utf8_make_valid(line, -1);
}

/* Returns: (transfer full): @text with every % doubled, as Valgrind's
 * --xml-file and --log-file want a literal %. */
static char *escape_percent(const char *text)
{
    GString *escaped = g_string_new(NULL);
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '%')
            g_string_append_c(escaped, '%');
        g_string_append_c(escaped, *c);
    }
    return g_string_free(escaped, FALSE);
}

/* The engine's version(): checks that @valgrind runs and is recent enough;
 * '--version' gets 5 seconds and 4 KiB of output to say so.
 * Returns: (transfer full): its version ("3.19.0"), or NULL with
 * GL_ERROR_ENVIRONMENT set. */
static char *valgrind_version(const char *valgrind, GError **error)
{
    const char *argv[] = { valgrind, "--version", NULL };
    g_autofree char *out = NULL;
    g_autoptr(GError) local = NULL;
    int wait_status = 0;
    if (!gl_probe_command(argv, NULL, PROBE_MAX_BYTES, PROBE_TIMEOUT_MS, &out, &wait_status,
                          &local)) {
        if (g_error_matches(local, GL_ERROR, GL_ERROR_LIMIT))
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                        "%s does not look like Valgrind: '%s --version' %s", valgrind, valgrind,
                        local->message);
        else
            g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                        "cannot run Valgrind (%s): %s; install it (Debian: apt-get install "
                        "valgrind) or name it with --valgrind PATH", valgrind, local->message);
        return NULL;
    }
    guint64 major = 0, minor = 0;
    const char *text = g_strstrip(out);
    const char *digits = g_str_has_prefix(text, "valgrind-") ? text + 9 : text;
    char *end = NULL;
    major = g_ascii_strtoull(digits, &end, 10);
    if (end != NULL && *end == '.')
        minor = g_ascii_strtoull(end + 1, NULL, 10);
    if (!g_spawn_check_wait_status(wait_status, NULL) || major == 0) {
        g_autofree char *said = first_line(text);
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "%s does not look like Valgrind: '%s --version' said '%s'", valgrind,
                    valgrind, said);
        return NULL;
    }
    g_autofree char *version = first_line(digits);
    if (major < VALGRIND_MIN_MAJOR ||
        (major == VALGRIND_MIN_MAJOR && minor < VALGRIND_MIN_MINOR)) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "Valgrind %s is too old: gemleak needs %d.%d or newer", version,
                    VALGRIND_MIN_MAJOR, VALGRIND_MIN_MINOR);
        return NULL;
    }
    return g_steal_pointer(&version);
}

/* Valgrind 3.19 asserts "VG_(strlen)(clo_fname_unexpanded) <= 900"
 * (m_libcprint.c, prepare_sink_fd) on a longer --xml-file and dies of
 * SIGSEGV before the command starts: what would read as the command's
 * failure is said before anything runs. */
#define VALGRIND_MAX_FILE_NAME 900

/* Returns: (transfer full) (nullable): the --xml-file name Valgrind would
 * get for the run directory @dir, when it is longer than Valgrind takes;
 * NULL when it fits. */
static char *xml_name_too_long(const char *dir, gsize *max)
{
    *max = VALGRIND_MAX_FILE_NAME;
    g_autofree char *escaped = escape_percent(dir);
    g_autofree char *name = g_strdup_printf("%s/%%p.xml", escaped);
    return strlen(name) > VALGRIND_MAX_FILE_NAME ? g_steal_pointer(&name) : NULL;
}

/* The programs Valgrind does not trace (--trace-children-skip), by the
 * name of the program: only those that start no program of the suite's,
 * so that every Ruby the command starts, through whatever shell, make,
 * xargs, find, git hook, awk or launcher, runs under Valgrind whatever its
 * environment says (Valgrind follows exec itself). A compiler's driver
 * starts only its own stages. Valgrind matches a pattern against the whole
 * path given to execve, and its star crosses slashes: each name is given
 * as NAME and as any path ending in /NAME, and none ends in a star, which
 * would also match a directory of that name on the way to a Ruby
 * (/home/me/gcc-work/bin/ruby). Versioned and cross-compiler names are
 * spelled out with ? for the same reason. */
static const char *const build_tools[] = {
    /* compilers, their stages, and the GNU toolchain's prefixed names */
    "cc", "c++", "cpp", "gcc", "g++", "clang", "clang++", "cc1", "cc1plus", "cc1obj",
    "collect2", "lto1", "lto-wrapper", "as", "ld", "ld.bfd", "ld.gold", "ld.lld", "lld",
    "ar", "ranlib", "strip", "nm", "objcopy", "objdump", "readelf", "ccache", "sccache",
    "gcc-?", "gcc-??", "g++-?", "g++-??", "cpp-??", "clang-??", "clang++-??", "*-linux-gnu-gcc",
    "*-linux-gnu-gcc-??", "*-linux-gnu-g++", "*-linux-gnu-g++-??", "*-linux-gnu-as",
    "*-linux-gnu-ld", "*-linux-gnu-ar", "*-linux-gnu-ranlib", "*-linux-gnu-strip",
    "rustc", "pkg-config", "pkgconf", "*-pkg-config",
    /* coreutils and friends that run no other program (a shell's builtins
     * are not processes) */
    "install", "rm", "cp", "mv", "mkdir", "rmdir", "ln", "chmod", "touch", "echo", "cat",
    "sed", "grep", "egrep", "fgrep", "tr", "sort", "uniq", "head",
    "tail", "cut", "wc", "date", "uname", "dirname", "basename", "expr", "tee",
    "tar", "gzip", "true", "false", "test", "printf", "which",
};

/* The programs by their arguments (--trace-children-skip-by-arg): a Ruby
 * that runs extconf.rb builds a Makefile, and mkmf compiles dozens of test
 * programs. It runs natively, watched by the helper: one that loads an
 * extension of the project starts again under Valgrind. */
#define BUILD_SCRIPTS "extconf.rb,*/extconf.rb"

/* The programs gemleak keeps out of Valgrind (--trace-children-skip), as
 * Valgrind's patterns: compilers, linkers and the small tools of a build
 * that start no other program, each of which would cost a Valgrind start.
 * Whatever can start a Ruby stays traced (a shell, env, make, xargs, find,
 * git, awk): Valgrind then follows every Ruby below it, whatever its
 * environment says.
 * Returns: (transfer full): "PATTERN,PATTERN,...". */
static char *trace_children_skip(void)
{
    GString *patterns = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(build_tools); i++)
        g_string_append_printf(patterns, "%s%s,*/%s", i > 0 ? "," : "", build_tools[i],
                               build_tools[i]);
    return g_string_free(patterns, FALSE);
}

/* Returns: (transfer full): Valgrind's command line for @command
 * (nullable: the options alone, for the helper to put a command after),
 * starting with @valgrind. */
static GPtrArray *valgrind_argv(const GlRunOptions *options, const char *valgrind,
                                const char *run_dir, const char *helper_dir, char *const *command,
                                char ***env)
{
    (void) helper_dir;
    (void) env;
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(argv, g_strdup(valgrind));
    g_ptr_array_add(argv, g_strdup("--tool=memcheck"));
    g_ptr_array_add(argv, g_strdup("--xml=yes"));
    /* %p: one file per process, forked children included. Valgrind expands
     * every % in the name: one in the directory (a Jenkins workspace named
     * feature%2Ffoo) is written %%. */
    g_autofree char *escaped = escape_percent(run_dir);
    g_ptr_array_add(argv, g_strdup_printf("--xml-file=%s/%%p.xml", escaped));
    g_ptr_array_add(argv, g_strdup("--trace-children=yes"));
    /* the user's --valgrind-opt=--trace-children-skip=..., later, replaces it */
    g_autofree char *skip = trace_children_skip();
    g_ptr_array_add(argv, g_strdup_printf("--trace-children-skip=%s", skip));
    g_ptr_array_add(argv, g_strdup("--trace-children-skip-by-arg=" BUILD_SCRIPTS));
    g_ptr_array_add(argv, g_strdup("--num-callers=50"));
    g_ptr_array_add(argv, g_strdup("--error-limit=no"));
    g_ptr_array_add(argv, g_strdup("--undef-value-errors=no"));
    g_ptr_array_add(argv, g_strdup("--leak-check=full"));
    /* Freed blocks held back five times Valgrind's default before their
     * memory is handed out again: Ruby keeps the addresses of blocks it
     * freed in memory it still holds (a free object slot keeps its old
     * string's pointer), and a block the extension then lost at such an
     * address read as possibly lost or reachable: at 20 MB the example
     * gem's leak under GC.stress was missed in 8 runs of 16, at 100 MB
     * in none of 11 (man, RULES: Addresses used again). */
    g_ptr_array_add(argv, g_strdup("--freelist-vol=100000000"));
    g_autoptr(GString) kinds = g_string_new(NULL);
    /* --growth measures each repetition by the loss records that changed,
     * still reachable ones above all (a cache freed at exit): every kind
     * is shown, for the whole run (gemleak_client.c says why), and the
     * judge keeps only the asked-for kinds as leaks. */
    GlLeakKind shown = options->growth > 0 ? GL_LEAK_ALL : options->leak_kinds;
    for (GlLeakKind kind = GL_LEAK_DEFINITE; kind <= GL_LEAK_REACHABLE; kind <<= 1)
        if (shown & kind)
            g_string_append_printf(kinds, "%s%s", kinds->len > 0 ? "," : "",
                                   gl_leak_kind_to_string(kind));
    g_ptr_array_add(argv, g_strdup_printf("--show-leak-kinds=%s",
                                          kinds->len > 0 ? kinds->str : "none"));
    for (const char *const *supp = options->suppressions; supp != NULL && *supp != NULL; supp++)
        g_ptr_array_add(argv, g_strdup_printf("--suppressions=%s", *supp));
    if (options->gen_suppressions)
        g_ptr_array_add(argv, g_strdup("--gen-suppressions=all"));
    for (const char *const *opt = options->program_options; opt != NULL && *opt != NULL; opt++)
        g_ptr_array_add(argv, g_strdup(*opt));
    for (char *const *arg = command; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, g_strdup(*arg));
    g_ptr_array_add(argv, NULL);
    return argv;
}

/* Returns: (transfer full) (nullable): GEMLEAK_ENGINE_COMMAND's value: Valgrind
 * (its absolute path: a launcher may change PATH) and its options; NULL
 * when an argument holds the separator, which no real one does. */
static char *valgrind_variable(const GlRunOptions *options, const char *run_dir,
                               const char *helper_dir)
{
    (void) helper_dir;
    g_autofree char *valgrind = g_find_program_in_path(options->program);
    if (valgrind == NULL)
        return NULL;
    g_autoptr(GPtrArray) argv = valgrind_argv(options, valgrind, run_dir, NULL, NULL, NULL);
    GString *joined = g_string_new(NULL);
    for (guint i = 0; i + 1 < argv->len; i++) {
        const char *arg = g_ptr_array_index(argv, i);
        if (strchr(arg, GL_PROTO_ENGINE_COMMAND_SEPARATOR[0]) != NULL) {
            g_string_free(joined, TRUE);
            return NULL;
        }
        if (i > 0)
            g_string_append_c(joined, GL_PROTO_ENGINE_COMMAND_SEPARATOR[0]);
        g_string_append(joined, arg);
    }
    return g_string_free(joined, FALSE);
}

/* Returns: (transfer full): the start of every --xml-file of the run. */
static char *valgrind_watch_mark(const char *run_dir)
{
    g_autofree char *escaped = escape_percent(run_dir);
    return g_strconcat("--xml-file=", escaped, "/", NULL);
}

const GlEngine gl_engine_valgrind = {
    .facts = {
        .name = "valgrind",
        .title = "Valgrind",
        .reports = "Valgrind's XML",
        .outside = "it has no XML: a program Valgrind does not trace started it",
        .caps = GL_ENGINE_FOUND_IS_VERSION | GL_ENGINE_OWN_PROGRAM | GL_ENGINE_CLIENT_REQUESTS |
                GL_ENGINE_FOLLOWS_EXEC,
    },
    .sees = "leaks and memory errors",
    .version = valgrind_version,
    .output_too_long = xml_name_too_long,
    .argv = valgrind_argv,
    .handover = valgrind_variable,
    .watch_mark = valgrind_watch_mark,
};
