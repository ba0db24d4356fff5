/* What the integration tests share: running gemleak and other commands,
 * the fixture extensions and the example gem built once for the whole
 * suite, and a gemleak run watched while it runs (Live). Each area's file
 * (leaks.c, processes.c, rake.c...) adds its tests to its case with an
 * integration_<case>() function that main.c calls. */
#ifndef GEMLEAK_INTEGRATION_HARNESS_H
#define GEMLEAK_INTEGRATION_HARNESS_H

#include <sys/types.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "testutil.h"

extern const char *gemleak_binary;

extern char *project_root;

/* What a command printed and how it ended. */
typedef struct {
    int status;   /* the exit status, or 128 + signal */
    char *out;
    char *err;
} Result;

void result_clear(Result *result);

/* Runs @argv (NULL-terminated) in @cwd (nullable) with @env (nullable:
 * inherited) and waits for it. */
void run_command(Result *result, const char *cwd, char **env, const char *const *argv);

void run_argv(Result *result, const char *first, ...) G_GNUC_NULL_TERMINATED;

/* The fixture extensions, built once for the whole suite. */
extern char *ext_dir;

gboolean build_extension(const char *name, GError **error);

/* gemleak run [ARGS...] -- ruby --disable-gems -I<leaky> -I<other> -I<grouped> -I<sites> -e CODE,
 * in @cwd (nullable), with TMPDIR at @tmp (nullable) and the variables
 * NAME=VALUE of @vars (nullable) set. */
void gemleak_run_env(Result *result, const char *cwd, const char *tmp,
                            const char *const *vars, const char *const *args, const char *code);

void gemleak_run(Result *result, const char *cwd, const char *tmp,
                        const char *const *args, const char *code);

#define ARGS(...) ((const char *const[]) { __VA_ARGS__, NULL })

#define NO_ARGS NULL

/* The directory "gemleak: Valgrind's XML is kept in DIR" names, or NULL. */
char *kept_dir(const char *err);

/* Removes the XML directory the run kept, if it kept one, and clears
 * @result: the end of a test that has checked what it wanted. */
void result_discard(Result *result);

/* How many dirs under @dir: run directories left behind. */
guint entries_in(const char *dir);

/* gemleak under the control of a test: started with pipes, so that the
 * test can read what it says as it says it, signal it, and give up on it
 * after a while rather than wait as long as it hangs. */
typedef struct {
    GPid pid;
    gboolean reaped;
    FILE *out;
    int err_fd;
    GString *err_text;   /* what was read of standard error so far */
    GString *err_line;   /* a line read in part */
} Live;

/* Starts @argv (NULL-terminated) with @env. */
void live_spawn(Live *live, const char *const *argv, char **env);

/* Returns: (transfer full): the next line of standard output, without its newline. */
char *live_read_out(Live *live);

/* Waits up to @seconds for gemleak to end.
 * Returns: TRUE with *status (128 + N when killed by signal N) if it did. */
gboolean live_wait(Live *live, int seconds, int *status);

void live_clear(Live *live);

/* Runs @argv (gemleak run, whose command prints "ready" on standard output
 * once it is where the test wants it) with @env, sends gemleak SIGTERM (CI
 * cancelling a job) at "ready", and waits for it to end: @result gets its
 * status and standard error. */
void run_interrupted(Result *result, const char *const *argv, char **env);

/* Asserts what an interrupted run whose command had found nothing says
 * (issue 26, item 10), under any engine: never a pass, neither in its own
 * report nor in its JSON report @json, nor when gemleak filter reads that
 * JSON report or the kept directory again: INCOMPLETE, exit status 3. */
void assert_interrupted_is_incomplete(const Result *result, const char *json);

/* Builds @dir/@name, a static program (no preloaded library reaches it)
 * that runs its arguments as a command without the environment variables
 * @variables (NULL-terminated; NULL: without any, as env -i): how a
 * process would escape gemleak's engine. */
void build_static_unsetenv(const char *dir, const char *name, const char *const *variables);

/* Returns: TRUE if @pid is gone (or a zombie), within @seconds. */
gboolean gone_within(pid_t pid, int seconds);

/* The example gem, compiled once; each test works on a copy of it. */
extern char *sample_gem;

gboolean prepare_sample_gem(GError **error);

/* rake -I @lib ARGS... in a fresh copy of the example gem, with GEMLEAK
 * set and @env (NAME=VALUE strings; a NAME alone unsets it) added.
 * Returns: (transfer full) the copy's directory. */
char *rake_run_with(Result *result, const char *lib, const char *const *env_pairs,
                           const char *const *args);

/* rake_run_with() the library of this tree, rake/lib. */
char *rake_run(Result *result, const char *const *env_pairs, const char *const *args);

/* The README's block under "<!-- gemleak:NAME: ...", without its fences.
 * Returns: (transfer full). */
char *readme_block(const char *name);

void forget(Result *result, char *dir);

/* Launchers made to order: a bin/ directory with @name, a Ruby script of
 * @code. Returns: (transfer full): its path. */
char *write_launcher(const char *dir, const char *name, const char *code);

/* The benchmark's suite (bench/bench.sh section 4): six files of ten
 * minitest tests for the example gem, the seventh test of the fourth
 * leaking Tally.count's 6 bytes (on its first run only when @once).
 * *files receives pairs of a path relative to the gem and its text, then
 * NULL; *command what runs them all with @ruby, then NULL. Both (transfer
 * full), their strings freed with them. */
void sixty_tests(const char *ruby, gboolean once, GPtrArray **files, GPtrArray **command);

/* Returns: TRUE when @ready (what a fixture set up, nullable) is there;
 * when not, the test ends skipped (gl_test_skip), saying @test and @why. */
gboolean ready_or_skip(const void *ready, const char *test, const char *why);

void integration_self(TCase *tcase);
void integration_leaks(TCase *tcase);
void integration_verdicts(TCase *tcase);
void integration_processes(TCase *tcase);
void integration_commands(TCase *tcase);
void integration_checked(TCase *tcase);
void integration_minitest(TCase *tcase);
void integration_rspec(TCase *tcase);
void integration_per_test(TCase *tcase);
/* Returns: (transfer full): the growth markers of @text, in order, one a
 * line, as the helper wrote them ("gemleak:growth\t0\tNAME\tLOCATION"),
 * @dir's path left out of the locations; @prefix, @suffix: what surrounds
 * a marker's line in the engine's output (regular expressions). */
char *growth_markers(const char *text, const char *prefix, const char *suffix, const char *dir);
void integration_growth_markers(TCase *tcase);
void integration_gem(TCase *tcase);
void integration_engine(TCase *tcase);
void integration_asan(TCase *tcase);
void integration_groups(TCase *tcase);
void integration_handed(TCase *tcase);
void integration_promise(TCase *tcase);
void integration_same(TCase *tcase);
void integration_exact(TCase *tcase);
void integration_differential(TCase *tcase);
void integration_nodebug(TCase *tcase);
void integration_growth(TCase *tcase);

#endif
