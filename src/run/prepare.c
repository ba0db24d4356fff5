/* Before a run's commands start, what gemleak asks of the command: the
 * version of its Ruby and whether that Ruby keeps frame pointers (asked
 * once), the suppressions for that version, where gemleak's own data is,
 * and whether a command is a launcher. The run directory is
 * rundir_make.c's, the helper's directory helper_dir.c's, the commands'
 * environment and limits child.c's; runner.c then runs them. */
#include "gemleak/run/runner.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/run/cache.h"

#include <limits.h>
#include <string.h>

/* Ruby prints its version at once; it takes longer to start than Valgrind,
 * and more on a loaded CI machine. */
#define PROBE_MAX_BYTES 4096
#define RUBY_PROBE_TIMEOUT_MS 20000

/* Returns: (transfer full) (nullable): what @ruby prints running @code
 * (with --disable-gems, and -r@library when not NULL), or NULL when it
 * cannot be run or fails. RUBYOPT could load anything (bundler/setup): not
 * for these questions. */
static char *ruby_prints(const char *ruby, const char *library, const char *code)
{
    g_autofree char *require = library != NULL ? g_strconcat("-r", library, NULL) : NULL;
    const char *with_library[] = { ruby, "--disable-gems", require, "-e", code, NULL };
    const char *alone[] = { ruby, "--disable-gems", "-e", code, NULL };
    const char *const *argv = require != NULL ? with_library : alone;
    char *out = NULL;
    int wait_status = 0;
    /* nor LD_PRELOAD: a runtime preloaded by hand (LD_PRELOAD=libasan.so)
     * makes Ruby refuse to start outside its order, and a question about
     * Ruby's version has no need of it */
    g_auto(GStrv) env = g_environ_unsetenv(g_environ_unsetenv(g_get_environ(), "RUBYOPT"),
                                           "LD_PRELOAD");
    if (!gl_probe_command(argv, env, PROBE_MAX_BYTES, RUBY_PROBE_TIMEOUT_MS, &out, &wait_status,
                          NULL) ||
        !g_spawn_check_wait_status(wait_status, NULL)) {
        g_free(out);
        return NULL;
    }
    return out;
}

/* What a run asks of the command's Ruby, asked of it once: each start of
 * a Ruby costs about 30 ms, and a run of a short suite under a fast engine
 * must not pay it twice before the suite starts. The last Ruby asked. */
static struct {
    char ruby[PATH_MAX];
    gboolean asked;
    char version[32];          /* "3.4.5", or empty when it did not say */
    gboolean frame_pointers;   /* its CFLAGS keep them */
} asked_ruby;

/* The cache's directory for what was asked of Rubies (cache.h). */
#define RUBIES_CACHE "rubies"

/* Asks @ruby its version and CFLAGS, unless it was the last Ruby asked,
 * or a run before asked the same executable (cache.h). */
static void ask_ruby(const char *ruby)
{
    if (asked_ruby.asked && strcmp(asked_ruby.ruby, ruby) == 0)
        return;
    memset(&asked_ruby, 0, sizeof asked_ruby);
    if (strlen(ruby) < sizeof asked_ruby.ruby) {
        g_strlcpy(asked_ruby.ruby, ruby, sizeof asked_ruby.ruby);
        asked_ruby.asked = TRUE;
    }
    g_autofree char *file = NULL;
    g_autofree char *key = gl_cache_program_key(ruby, NULL, &file);
    g_autofree char *out = key != NULL ? gl_cache_get(RUBIES_CACHE, file, key) : NULL;
    if (out == NULL) {
        out = ruby_prints(ruby, "rbconfig", "print RUBY_VERSION, 10.chr, RbConfig::CONFIG['CFLAGS']");
        if (out != NULL && key != NULL)
            gl_cache_put(RUBIES_CACHE, file, key, out);
    }
    if (out == NULL)  /* a Ruby without rbconfig still has a version */
        out = ruby_prints(ruby, NULL, "print RUBY_VERSION");
    if (out == NULL)
        return;
    char *flags_text = strchr(out, '\n');
    if (flags_text != NULL)
        *flags_text++ = '\0';
    if (g_regex_match_simple("^[0-9]+\\.[0-9]+\\.[0-9]+$", out, 0, 0))
        g_strlcpy(asked_ruby.version, out, sizeof asked_ruby.version);
    /* the last of the two flags wins, as with the compiler */
    g_auto(GStrv) flags = g_strsplit_set(flags_text != NULL ? flags_text : "", " \t\n", -1);
    for (char **flag = flags; *flag != NULL; flag++) {
        if (strcmp(*flag, "-fno-omit-frame-pointer") == 0)
            asked_ruby.frame_pointers = TRUE;
        else if (strcmp(*flag, "-fomit-frame-pointer") == 0)
            asked_ruby.frame_pointers = FALSE;
    }
}

char *gl_ruby_version(const char *ruby)
{
    ask_ruby(ruby);
    return asked_ruby.version[0] != '\0' ? g_strdup(asked_ruby.version) : NULL;
}

gboolean gl_ruby_frame_pointers(const char *ruby)
{
    ask_ruby(ruby);
    return asked_ruby.frame_pointers;
}

GPtrArray *gl_suppression_files(const char *const *dirs, const char *version)
{
    /* ruby.supp, then ruby-3.supp, ruby-3.1.supp, ruby-3.1.2.supp */
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(names, g_strdup("ruby.supp"));
    if (version != NULL) {
        g_auto(GStrv) parts = g_strsplit(version, ".", 3);
        g_autoptr(GString) prefix = g_string_new("ruby");
        for (char **part = parts; *part != NULL; part++) {
            g_string_append_printf(prefix, "%s%s", part == parts ? "-" : ".", *part);
            g_ptr_array_add(names, g_strconcat(prefix->str, ".supp", NULL));
        }
    }
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (const char *const *dir = dirs; dir != NULL && *dir != NULL; dir++) {
        for (guint i = 0; i < names->len; i++) {
            char *file = g_build_filename(*dir, g_ptr_array_index(names, i), NULL);
            if (g_file_test(file, G_FILE_TEST_IS_REGULAR))
                g_ptr_array_add(files, file);
            else
                g_free(file);
        }
    }
    return files;
}

/* Returns: TRUE if @dir holds gemleak's suppressions. */
static gboolean holds_data(const char *dir)
{
    g_autofree char *supp = g_build_filename(dir, "suppressions", "ruby.supp", NULL);
    return g_file_test(supp, G_FILE_TEST_IS_REGULAR);
}

char *gl_data_dir(void)
{
    const char *env = g_getenv("GEMLEAK_DATADIR");
    if (env != NULL && *env != '\0')
        return g_strdup(env);
    /* Where the binary is, not where make guessed it would be installed: a
     * binary built before `make install PREFIX=...` holds the default
     * prefix. PREFIX/bin/gemleak reads PREFIX/share/gemleak; a checkout's
     * build/gemleak, and the gem's libexec/gemleak, the directory above. */
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (exe != NULL) {
        g_autofree char *bin_dir = g_path_get_dirname(exe);
        g_autofree char *prefix = g_path_get_dirname(bin_dir);
        g_autofree char *share = g_build_filename(prefix, "share", "gemleak", NULL);
        if (holds_data(share))
            return g_steal_pointer(&share);
        if (holds_data(prefix))
            return g_steal_pointer(&prefix);
    }
    return g_strdup(GEMLEAK_DATADIR);
}

gboolean gl_is_launcher(const char *program)
{
    g_autofree char *name = g_path_get_basename(program);
    g_auto(GStrv) launchers = g_strsplit(GL_PROTO_LAUNCHERS, " ", -1);
    return g_strv_contains((const char *const *) launchers, name);
}
