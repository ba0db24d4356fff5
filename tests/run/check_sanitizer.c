/* What a sanitizer's engine sets in the suite's environment
 * (src/run/sanitizer.c, engine_lsan.c, engine_asan.c). */
#include "testutil.h"
#include "gemleak/run/engine.h"
#include "gemleak/run/runner.h"

#include <stdio.h>
#include <string.h>

/* Returns: (transfer full): @variable's value after @engine's environment()
 * over @theirs (NAME=VALUE strings, NULL-terminated); *@said what it said. */
static char *options_after(const GlEngine *engine, const char *variable, const char *const *theirs,
                           char **said)
{
    char *text = NULL;
    size_t size = 0;
    FILE *messages = open_memstream(&text, &size);
    GlRunOptions options = { .engine = engine, .fast_stacks = TRUE, .messages = messages };
    char **env = g_strdupv((char **) theirs);
    env = engine->environment(&options, "/tmp/run", "/usr/lib/x86_64-linux-gnu/liblsan.so.0", env);
    fclose(messages);
    *said = text;
    char *value = g_strdup(g_environ_getenv(env, variable));
    g_strfreev(env);
    return value;
}

/* Returns: the last value @options (KEY=VALUE:...) gives @key (the
 * runtimes take the last of an option given twice), NULL when none. */
static char *last_value(const char *options, const char *key)
{
    char *found = NULL;
    g_autofree char *prefix = g_strconcat(key, "=", NULL);
    /* quoted values hold no ':' of ours that matters here */
    g_auto(GStrv) parts = g_strsplit(options, ":", -1);
    for (char **part = parts; *part != NULL; part++)
        if (g_str_has_prefix(*part, prefix)) {
            g_free(found);
            found = g_strdup(*part + strlen(prefix));
        }
    return found;
}

/* Issue 35, 4, 5 and a minor one: the user's LSAN_OPTIONS that change the
 * report's text, paths or set of records (colour codes around its records,
 * module paths made relative, dedup tokens, a suppressions file, the
 * summary) left the extension's leaks unread: exit 0. gemleak sets each
 * after theirs, and says which of theirs it overrode. */
START_TEST(test_report_shaping_options_are_gemleaks)
{
    const char *const theirs[] = {
        "LSAN_OPTIONS=color=always:strip_path_prefix=/work/:dedup_token_length=3:"
        "suppressions=/tmp/mine.supp:print_summary=0:symbolize=1:use_unaligned=1:"
        "resolution=2:verbosity=2:allocator_may_return_null=1",
        NULL,
    };
    g_autofree char *said = NULL;
    g_autofree char *lsan = options_after(gl_engine_find("lsan"), "LSAN_OPTIONS", theirs, &said);
    static const char *const forced[][2] = {
        { "color", "never" }, { "strip_path_prefix", "" }, { "dedup_token_length", "0" },
        { "suppressions", "" }, { "print_summary", "1" },
        /* gemleak names the frames itself, once a run (sanitizer_names.h) */
        { "symbolize", "0" },
        { "use_unaligned", "0" }, { "resolution", "0" }, { "verbosity", "0" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(forced); i++) {
        g_autofree char *value = last_value(lsan, forced[i][0]);
        ck_assert_msg(value != NULL && strcmp(value, forced[i][1]) == 0, "%s=%s in %s", forced[i][0],
                      value != NULL ? value : "(none)", lsan);
        ck_assert_msg(strstr(said, forced[i][0]) != NULL, "%s not said: %s", forced[i][0], said);
    }
    /* theirs that shape nothing stays */
    g_autofree char *kept = last_value(lsan, "allocator_may_return_null");
    ck_assert_str_eq(kept, "1");
    ck_assert_ptr_null(strstr(said, "allocator_may_return_null"));
}
END_TEST

/* The same under AddressSanitizer, in ASAN_OPTIONS and LSAN_OPTIONS. */
START_TEST(test_report_shaping_options_under_asan)
{
    const char *const theirs[] = {
        "ASAN_OPTIONS=color=always:strip_path_prefix=/work/:print_scariness=1:symbolize=0",
        "LSAN_OPTIONS=suppressions=/tmp/mine.supp:use_unaligned=1",
        NULL,
    };
    g_autofree char *said = NULL;
    g_autofree char *asan = options_after(gl_engine_find("asan"), "ASAN_OPTIONS", theirs, &said);
    g_autofree char *color = last_value(asan, "color");
    ck_assert_str_eq(color, "never");
    /* AddressSanitizer's runtime names its frames: its error reports are
     * read as it writes them */
    g_autofree char *symbolize = last_value(asan, "symbolize");
    ck_assert_str_eq(symbolize, "1");
    g_autofree char *prefix = last_value(asan, "strip_path_prefix");
    ck_assert_str_eq(prefix, "");
    g_autofree char *scariness = last_value(asan, "print_scariness");
    ck_assert_str_eq(scariness, "0");
    g_autofree char *said2 = NULL;
    g_autofree char *lsan = options_after(gl_engine_find("asan"), "LSAN_OPTIONS", theirs, &said2);
    g_autofree char *supp = last_value(lsan, "suppressions");
    ck_assert_str_eq(supp, "");
    g_autofree char *unaligned = last_value(lsan, "use_unaligned");
    ck_assert_str_eq(unaligned, "0");
}
END_TEST

/* A Ruby command gets the runtime in its own environment, which gemleak
 * spawns it with, not from env(1) in its command line: an exec less in
 * every run (1 ms). Without an environment to set (a command line alone),
 * env(1) sets it. */
START_TEST(test_a_ruby_command_gets_the_runtime_in_its_environment)
{
    const GlEngine *lsan = gl_engine_find("lsan");
    GlRunOptions options = { .engine = lsan, .fast_stacks = FALSE };
    g_autofree char *runtime = lsan->version(NULL, NULL);
    if (runtime == NULL)
        gl_test_skip("LeakSanitizer's runtime is not installed");
    char *command[] = { "ruby", "-e", "0", NULL };
    char **env = g_strdupv((char *[]) { "LD_PRELOAD=/theirs.so", "PATH=/usr/bin", NULL });
    g_autoptr(GPtrArray) argv = lsan->argv(&options, NULL, "/tmp/run", "/tmp/helper", command, &env);
    ck_assert_str_eq(g_ptr_array_index(argv, 0), "ruby");
    ck_assert_uint_eq(argv->len, 4);
    const char *preloaded = g_environ_getenv(env, "LD_PRELOAD");
    ck_assert_ptr_nonnull(preloaded);
    ck_assert_msg(strstr(preloaded, runtime) != NULL, "LD_PRELOAD=%s", preloaded);
    ck_assert_str_eq(g_environ_getenv(env, "PATH"), "/usr/bin");
    g_strfreev(env);

    g_autoptr(GPtrArray) alone = lsan->argv(&options, NULL, "/tmp/run", "/tmp/helper", command, NULL);
    ck_assert_str_eq(g_ptr_array_index(alone, 0), "env");
    ck_assert_msg(g_str_has_prefix(g_ptr_array_index(alone, 1), "LD_PRELOAD="), "%s",
                  (char *) g_ptr_array_index(alone, 1));
    ck_assert_str_eq(g_ptr_array_index(alone, 2), "ruby");

    /* not Ruby: as it is, its environment left alone */
    char *shell[] = { "sh", "-c", "ruby -e 0", NULL };
    char **untouched = g_strdupv((char *[]) { "PATH=/usr/bin", NULL });
    g_autoptr(GPtrArray) other = lsan->argv(&options, NULL, "/tmp/run", "/tmp/helper", shell, &untouched);
    ck_assert_str_eq(g_ptr_array_index(other, 0), "sh");
    ck_assert_ptr_null(g_environ_getenv(untouched, "LD_PRELOAD"));
    g_strfreev(untouched);
}
END_TEST

Suite *gl_sanitizer_suite(void)
{
    Suite *suite = suite_create("sanitizer");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, test_report_shaping_options_are_gemleaks);
    tcase_add_test(tc, test_report_shaping_options_under_asan);
    tcase_add_test(tc, test_a_ruby_command_gets_the_runtime_in_its_environment);
    suite_add_tcase(suite, tc);
    return suite;
}
