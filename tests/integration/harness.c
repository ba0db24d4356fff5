/* The integration tests' shared helpers (harness.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

const char *gemleak_binary;

char *project_root;

void result_clear(Result *result)
{
    g_clear_pointer(&result->out, g_free);
    g_clear_pointer(&result->err, g_free);
}

void run_command(Result *result, const char *cwd, char **env, const char *const *argv)
{
    result->status = gl_test_spawn_in(cwd, env, argv, &result->out, &result->err);
}

void run_argv(Result *result, const char *first, ...)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    va_list ap;
    va_start(ap, first);
    for (const char *arg = first; arg != NULL; arg = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer) arg);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    run_command(result, NULL, NULL, (const char *const *) argv->pdata);
}

char *ext_dir;

/* Runs the shell @script while the suite is set up, before any test (so
 * with a GError rather than a failed check); @what names it in the error. */
static gboolean run_setup_script(const char *what, const char *script, GError **error)
{
    const char *argv[] = { "sh", "-c", script, NULL };
    int wait_status = 0;
    g_autofree char *err = NULL;
    if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, &err,
                      &wait_status, error))
        return FALSE;
    if (!g_spawn_check_wait_status(wait_status, error)) {
        g_prefix_error(error, "%s: %s", what, err);
        return FALSE;
    }
    return TRUE;
}

gboolean build_extension(const char *name, GError **error)
{
    g_autofree char *source = gl_test_fixture("ext");
    g_autofree char *from = g_build_filename(source, name, NULL);
    g_autofree char *to = g_build_filename(ext_dir, name, NULL);
    g_autofree char *script = g_strdup_printf(
        "cp -r '%s' '%s' && cd '%s' && ruby extconf.rb >/dev/null && make >/dev/null", from,
        ext_dir, to);
    g_autofree char *what = g_strdup_printf("building %s", name);
    return run_setup_script(what, script, error);
}

void gemleak_run_env(Result *result, const char *cwd, const char *tmp,
                            const char *const *vars, const char *const *args, const char *code)
{
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    g_autofree char *other = g_strdup_printf("-I%s/other", ext_dir);
    g_autofree char *grouped = g_strdup_printf("-I%s/grouped", ext_dir);
    g_autofree char *sites = g_strdup_printf("-I%s/sites", ext_dir);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    g_ptr_array_add(argv, (gpointer) "run");
    for (const char *const *arg = args; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *tail[] = { "--", "ruby", "--disable-gems", leaky, other, grouped, sites, "-e", code,
                           NULL };
    for (const char *const *arg = tail; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_get_environ();
    if (tmp != NULL)
        env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    for (const char *const *var = vars; var != NULL && *var != NULL; var++) {
        g_auto(GStrv) pair = g_strsplit(*var, "=", 2);
        env = g_environ_setenv(env, pair[0], pair[1] != NULL ? pair[1] : "", TRUE);
    }
    run_command(result, cwd, env, (const char *const *) argv->pdata);
}

void gemleak_run(Result *result, const char *cwd, const char *tmp,
                        const char *const *args, const char *code)
{
    gemleak_run_env(result, cwd, tmp, NULL, args, code);
}

char *kept_dir(const char *err)
{
    g_autoptr(GRegex) regex = g_regex_new("^gemleak: .* kept in (\\S+) ",
                                          G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    if (!g_regex_match(regex, err, 0, &match))
        return NULL;
    return g_match_info_fetch(match, 1);
}

void result_discard(Result *result)
{
    g_autofree char *kept = result->err != NULL ? kept_dir(result->err) : NULL;
    gl_remove_tree(kept);
    result_clear(result);
}

guint entries_in(const char *dir)
{
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    guint n = 0;
    while (handle != NULL && g_dir_read_name(handle) != NULL)
        n++;
    return n;
}

void live_spawn(Live *live, const char *const *argv, char **env)
{
    g_autoptr(GError) error = NULL;
    int out_fd = -1;
    memset(live, 0, sizeof *live);
    ck_assert_msg(g_spawn_async_with_pipes(NULL, (char **) argv, env, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &live->pid, NULL, &out_fd, &live->err_fd,
                                           &error),
                  "%s", error != NULL ? error->message : "?");
    live->out = fdopen(out_fd, "r");
    live->err_text = g_string_new(NULL);
    live->err_line = g_string_new(NULL);
}

char *live_read_out(Live *live)
{
    char *line = NULL;
    size_t size = 0;
    ssize_t n = getline(&line, &size, live->out);
    ck_assert_msg(n > 0, "no more output; stderr so far:\n%s", live->err_text->str);
    char *copy = g_strchomp(g_strdup(line));
    free(line);
    return copy;
}

gboolean live_wait(Live *live, int seconds, int *status)
{
    for (int i = 0; i < seconds * 20; i++) {
        int wait_status = 0;
        if (waitpid(live->pid, &wait_status, WNOHANG) == live->pid) {
            live->reaped = TRUE;
            *status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                             : 128 + WTERMSIG(wait_status);
            return TRUE;
        }
        g_usleep(50000);
    }
    return FALSE;
}

void live_clear(Live *live)
{
    if (!live->reaped && live->pid > 0) {
        kill(live->pid, SIGKILL);
        waitpid(live->pid, NULL, 0);
    }
    if (live->out != NULL)
        fclose(live->out);
    if (live->err_fd >= 0)
        close(live->err_fd);
    if (live->err_text != NULL)
        g_string_free(live->err_text, TRUE);
    if (live->err_line != NULL)
        g_string_free(live->err_line, TRUE);
    memset(live, 0, sizeof *live);
}

void run_interrupted(Result *result, const char *const *argv, char **env)
{
    Live live;
    live_spawn(&live, argv, env);
    g_autofree char *line = live_read_out(&live);
    ck_assert_str_eq(line, "ready");
    kill(live.pid, SIGTERM);
    char buffer[4096];
    ssize_t n;
    while ((n = read(live.err_fd, buffer, sizeof buffer)) > 0)
        g_string_append_len(live.err_text, buffer, n);
    int wait_status = 0;
    ck_assert_int_eq(waitpid(live.pid, &wait_status, 0), live.pid);
    live.reaped = TRUE;
    result->status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                            : 128 + WTERMSIG(wait_status);
    result->out = NULL;
    result->err = g_strdup(live.err_text->str);
    live_clear(&live);
}

#define UNCHECKED_BY_SIGNAL \
    "( \\d+ process(es)? that loaded an extension (was|were) not checked \\(see gemleak's " \
    "messages\\);)?"

void assert_interrupted_is_incomplete(const Result *result, const char *json)
{
    ck_assert_msg(result->status == 3, "status %d\n%s", result->status, result->err);
    /* a process the signal ended before its check proved it ran (the
     * sanitizer engines) is named too */
    gl_assert_line(result->err, "^gemleak: INCOMPLETE: no findings in what was checked;"
                                UNCHECKED_BY_SIGNAL " the run was interrupted by SIGTERM: what the "
                                "command had not run by then was not checked$");
    gl_assert_no_line(result->err, "^gemleak: pass");
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, json, &error), "%s", error->message);
    JsonObject *gate = json_object_get_object_member(
        json_node_get_object(json_parser_get_root(parser)), "gate");
    ck_assert(!json_object_get_boolean_member(gate, "failed"));
    ck_assert(!json_object_get_boolean_member(gate, "complete"));
    gl_assert_line(json_object_get_string_member(gate, "message"), "^gemleak: INCOMPLETE: ");

    Result merged = { 0 };
    run_argv(&merged, gemleak_binary, "filter", json, NULL);
    ck_assert_msg(merged.status == 3, "filter of the JSON report: status %d\n%s%s", merged.status,
                  merged.out, merged.err);
    gl_assert_line(merged.out, "^gemleak: INCOMPLETE: ");
    result_clear(&merged);

    g_autoptr(GRegex) kept = g_regex_new("^gemleak: .* is kept in (\\S+) ", G_REGEX_MULTILINE, 0,
                                         NULL);
    g_autoptr(GMatchInfo) match = NULL;
    ck_assert_msg(g_regex_match(kept, result->err, 0, &match), "nothing kept:\n%s", result->err);
    g_autofree char *dir = g_match_info_fetch(match, 1);
    Result again = { 0 };
    run_argv(&again, gemleak_binary, "filter", dir, NULL);
    ck_assert_msg(again.status == 3, "filter of %s: status %d\n%s%s", dir, again.status, again.out,
                  again.err);
    gl_assert_line(again.out, "^gemleak: INCOMPLETE: no findings in what was checked;"
                              UNCHECKED_BY_SIGNAL " the run was interrupted by SIGTERM: ");
    result_clear(&again);
    gl_remove_tree(dir);
}

gboolean gone_within(pid_t pid, int seconds)
{
    for (int i = 0; i < seconds * 10; i++) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid);
        g_autofree char *stat = NULL;
        if (!g_file_get_contents(path, &stat, NULL, NULL))
            return TRUE;
        const char *close = strrchr(stat, ')');
        if (close != NULL && close[1] == ' ' && close[2] == 'Z')
            return TRUE;
        g_usleep(100000);
    }
    return FALSE;
}

char *sample_gem;

gboolean prepare_sample_gem(GError **error)
{
    g_autofree char *source = gl_test_fixture("sample-gem");
    sample_gem = g_build_filename(ext_dir, "sample-gem", NULL);
    g_autofree char *lib = gl_test_project_file("rake/lib");
    g_autofree char *script = g_strdup_printf("cp -r '%s' '%s' && cd '%s' && rake -I '%s' compile",
                                              source, sample_gem, sample_gem, lib);
    return run_setup_script("compiling the example gem", script, error);
}

char *rake_run_with(Result *result, const char *lib, const char *const *env_pairs,
                           const char *const *args)
{
    char *dir = gl_test_tmpdir();
    g_autofree char *copy = g_strdup_printf("cp -a '%s/.' '%s'", sample_gem, dir);
    const char *cp[] = { "sh", "-c", copy, NULL };
    ck_assert_int_eq(gl_test_spawn(cp, NULL, NULL), 0);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) "rake");
    g_ptr_array_add(argv, (gpointer) "-I");
    g_ptr_array_add(argv, (gpointer) lib);
    for (const char *const *arg = args; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GEMLEAK", gemleak_binary, TRUE);
    for (const char *const *pair = env_pairs; pair != NULL && *pair != NULL; pair++) {
        g_auto(GStrv) kv = g_strsplit(*pair, "=", 2);
        env = kv[1] != NULL ? g_environ_setenv(env, kv[0], kv[1], TRUE) : g_environ_unsetenv(env, kv[0]);
    }
    run_command(result, dir, env, (const char *const *) argv->pdata);
    return dir;
}

char *rake_run(Result *result, const char *const *env_pairs, const char *const *args)
{
    g_autofree char *lib = gl_test_project_file("rake/lib");
    return rake_run_with(result, lib, env_pairs, args);
}

char *readme_block(const char *name)
{
    g_autofree char *path = gl_test_project_file("README.md");
    g_autofree char *readme = gl_test_read(path, NULL);
    g_autofree char *marker = g_strdup_printf("<!-- gemleak:%s:", name);
    const char *at = strstr(readme, marker);
    ck_assert_msg(at != NULL, "README.md has no %s", marker);
    const char *start = strstr(at, "```");
    ck_assert_ptr_nonnull(start);
    start = strchr(start, '\n');
    ck_assert_ptr_nonnull(start);
    start++;
    const char *end = strstr(start, "```\n");
    ck_assert_ptr_nonnull(end);
    return g_strndup(start, (gsize) (end - start));
}

void forget(Result *result, char *dir)
{
    result_discard(result);
    gl_remove_tree(dir);
    g_free(dir);
}

char *write_launcher(const char *dir, const char *name, const char *code)
{
    g_autofree char *bin = g_build_filename(dir, "bin", NULL);
    g_mkdir_with_parents(bin, 0700);
    char *path = g_build_filename(bin, name, NULL);
    g_autofree char *text = g_strdup_printf("#!/usr/bin/env ruby\n%s", code);
    gl_test_write(path, text, -1);
    g_chmod(path, 0755);
    return path;
}

void sixty_tests(const char *ruby, gboolean once, GPtrArray **files, GPtrArray **command)
{
    *files = g_ptr_array_new_with_free_func(g_free);
    *command = g_ptr_array_new_with_free_func(g_free);
    const char *start[] = { ruby, "-Ilib", "-Itest", "-e",
                            "ARGV.each { |f| require File.expand_path(f) }" };
    for (guint i = 0; i < G_N_ELEMENTS(start); i++)
        g_ptr_array_add(*command, g_strdup(start[i]));
    for (guint file = 1; file <= 6; file++) {
        GString *text = g_string_new("require_relative \"test_helper\"\n");
        g_string_append_printf(text, "class Short%uTest < Minitest::Test\n", file);
        for (guint test = 1; test <= 10; test++) {
            const char *body = "assert_equal 2, Tally.frequencies(\"a b a\")[\"a\"]";
            if (file == 4 && test == 7)
                body = once ? "assert_equal 3, Tally.count(\"a b a\") unless $counted\n"
                              "    $counted = true"
                            : "assert_equal 3, Tally.count(\"a b a\")";
            g_string_append_printf(text, "  def test_%u\n    %s\n  end\n", test, body);
        }
        g_string_append(text, "end\n");
        g_ptr_array_add(*files, g_strdup_printf("test/short_%u_test.rb", file));
        g_ptr_array_add(*files, g_string_free(text, FALSE));
        g_ptr_array_add(*command, g_strdup_printf("test/short_%u_test.rb", file));
    }
    g_ptr_array_add(*files, NULL);
    g_ptr_array_add(*command, NULL);
}

gboolean ready_or_skip(const void *ready, const char *test, const char *why)
{
    if (ready == NULL)
        gl_test_skip("%s: %s", test, why);
    return TRUE;
}

void build_static_unsetenv(const char *dir, const char *name, const char *const *variables)
{
    g_autoptr(GString) text = g_string_new("#define _GNU_SOURCE\n#include <stdlib.h>\n#include <unistd.h>\n"
                                           "int main(int argc, char **argv) { (void) argc;\n");
    for (const char *const *variable = variables; variable != NULL && *variable != NULL; variable++)
        g_string_append_printf(text, "    unsetenv(\"%s\");\n", *variable);
    if (variables == NULL)
        g_string_append(text, "    clearenv();\n");
    g_string_append(text, "    execvp(argv[1], argv + 1); return 127; }\n");
    g_autofree char *source_name = g_strconcat(name, ".c", NULL);
    g_autofree char *source = g_build_filename(dir, source_name, NULL);
    gl_test_write(source, text->str, -1);
    const char *compile[] = { "cc", "-static", "-o", name, source_name, NULL };
    Result built = { 0 };
    run_command(&built, dir, NULL, compile);
    ck_assert_msg(built.status == 0, "a static program does not build here: %s", built.err);
    result_clear(&built);
}
