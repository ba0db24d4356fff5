/* Helpers shared by the Check suites. */
#ifndef GEMLEAK_TESTUTIL_H
#define GEMLEAK_TESTUTIL_H

#include <check.h>
#include <glib.h>

#include "gemleak/base/record.h"
#include "gemleak/base/sys.h"
#include "gemleak/run/runner.h"

/* The fixtures directory, from the runner's first argument. */
extern const char *gl_test_fixtures;

/* Returns: (transfer full): @relative under the fixtures directory. */
char *gl_test_fixture(const char *relative);

/* Returns: (transfer full): @relative under the project's root (the
 * directory that holds the fixtures directory). */
char *gl_test_project_file(const char *relative);

/* Asserts that doc/guide.md's walk-through headed @heading (its words up
 * to the list, "**Adding an engine** touches these five files") lists
 * @n_files numbered files, each `path` of which is in the tree (a name
 * with @new_marker in it, the file the walk-through adds, is not). */
void gl_test_guide_files(const char *heading, guint n_files, const char *new_marker);

/* Returns: (transfer full): the path of a copy of the XML capture @fixture
 * (under the fixtures directory) moved into @root: the directory @from it
 * was captured in becomes @root/@ext, which gets the sources of
 * fixtures/ext/@ext with @shift blank lines above them, the lines of the
 * frames in them moved down as many. A fingerprint holds the text of its
 * source lines: so the test reads its own, not what another run left in
 * the shared /tmp. */
char *gl_test_capture_in(const char *fixture, const char *from, const char *ext, const char *root,
                         guint shift);

/* Where fixtures/capture-gems.sh captures the real gems' runs: the paths
 * in those fixtures start with it. */
#define GL_TEST_GEMS_DIR "/tmp/gemleak-gems"

/* Returns: (transfer full): the path of a copy of @fixture (a file or a
 * directory of files, under the fixtures directory) in @root, each file's
 * GL_TEST_GEMS_DIR made @root, so that a gem's captured paths lie under
 * @root/GEM, its project root, which is made: the test reads its own
 * tree, not what another run left in the shared /tmp. */
char *gl_test_gem_capture(const char *fixture, const char *root, const char *gem);

/* Asserts that the SARIF file at @path validates against SARIF 2.1.0's
 * schema (tests/schemas), with Debian's Python and python3-jsonschema. */
void gl_test_assert_sarif_file_valid(const char *path);

/* The same for the SARIF report @text. */
void gl_test_assert_sarif_valid(const char *text);

/* Runs @argv (NULL-terminated, found on PATH); *out and *err (nullable)
 * receive what it printed. Returns: its exit status, 128+N if killed. */
int gl_test_spawn(const char *const *argv, char **out, char **err);

/* As gl_test_spawn(), in @cwd (nullable: this one) with @env (nullable:
 * this environment). */
int gl_test_spawn_in(const char *cwd, char **env, const char *const *argv, char **out, char **err);

/* Returns: (transfer full): the whole file; the test fails if it cannot be read. */
char *gl_test_read(const char *path, gsize *length);

/* Writes @length bytes (-1: a string) to @path; the test fails on error. */
void gl_test_write(const char *path, const char *data, gssize length);

/* Returns: (transfer full): a new private directory; remove it with
 * gl_remove_tree() (gemleak/base/sys.h). */
char *gl_test_tmpdir(void);

/* Returns: (transfer full) (nullable): the path of the library mapped
 * into this process whose name holds @name, from /proc/self/maps. */
char *gl_test_mapped_library(const char *name);

/* Returns: (transfer full) (nullable): the file @name (a sanitizer
 * runtime: "liblsan.so") as gcc finds it (-print-file-name), NULL when it
 * finds none. */
char *gl_test_gcc_file(const char *name);

/* Returns: how many times @needle occurs in @haystack[0..length). */
guint gl_test_count(const char *haystack, gsize length, const char *needle);

/* What "gemleak ARGS..." printed and returned, run in this process. */
typedef struct {
    int status;
    char *out;
    char *err;
} GlTestRun;

/* Runs gemleak_main with the NULL-terminated arguments after "gemleak". */
void gl_test_gemleak(GlTestRun *run, const char *first, ...) G_GNUC_NULL_TERMINATED;
void gl_test_gemleak_argv(GlTestRun *run, const char *const *args);
void gl_test_run_clear(GlTestRun *run);

/* Builds a record from frames written "fn@obj" ("?" for a missing fn,
 * "fn@obj:file:line" with a source line), innermost first, NULL-terminated.
 * Returns: (transfer full). */
GlRecord *gl_test_record(const char *kind, const char *first_frame, ...) G_GNUC_NULL_TERMINATED;

/* Appends an auxiliary part with a text and frames as above. */
void gl_test_record_add_aux(GlRecord *record, const char *text, const char *first_frame, ...)
    G_GNUC_NULL_TERMINATED;

/* Asserts that @text has a line matching the GRegex @pattern (anchored by
 * the caller with ^ and $, multiline). */
#define gl_assert_line(text, pattern) \
    ck_assert_msg(g_regex_match_simple((pattern), (text), G_REGEX_MULTILINE, 0), \
                  "no line matches /%s/ in:\n%s", (pattern), (text))
#define gl_assert_no_line(text, pattern) \
    ck_assert_msg(!g_regex_match_simple((pattern), (text), G_REGEX_MULTILINE, 0), \
                  "a line matches /%s/ in:\n%s", (pattern), (text))

/* Asserts that @text holds no raw control character but newlines and
 * tabs, and no line that a name with a newline in it forged ("gemleak:
 * pass", "forged"): what gemleak prints of names it did not choose. */
void gl_assert_no_raw_control(const char *text);

/* A test that cannot run here (no Ruby 3.3, no runtime, a sanitizer that
 * forbids what it needs) ends with gl_test_skip(): Check knows only pass
 * and fail, so the skip travels as a failure whose message starts with
 * GL_TEST_SKIPPED, and gl_test_run() counts and shows it as skipped, never
 * as passed nor failed. */
#define GL_TEST_SKIPPED "gemleak-test-skipped: "
void gl_test_skip(const char *format, ...) G_GNUC_PRINTF(1, 2) G_GNUC_NORETURN;

typedef struct {
    guint run;
    guint passed;
    guint skipped;
    guint failed;   /* failures and errors (a crash, a timeout) */
} GlTestCounts;

/* Runs the test case @tcase (nullable: all) of @runner, silently, then
 * prints each failure as Check would ("FILE:LINE:F:CASE:TEST:0: MESSAGE")
 * and each skipped test with why, and adds to @counts. */
void gl_test_run(SRunner *runner, const char *tcase, GlTestCounts *counts);

/* Prints "@who: N tests: P passed, S skipped, F failed". */
void gl_test_print_counts(const char *who, const GlTestCounts *counts);

/* Adds "@who PASSED SKIPPED FAILED" to the file $GEMLEAK_TEST_COUNTS
 * names, when it is set: make check's last line adds them up. */
void gl_test_save_counts(const char *who, const GlTestCounts *counts);

Suite *gl_reader_suite(void);
Suite *gl_classify_suite(void);
Suite *gl_merge_suite(void);
Suite *gl_report_suite(void);
Suite *gl_cli_suite(void);
Suite *gl_cli_options_suite(void);
Suite *gl_cli_filter_suite(void);
Suite *gl_cli_pipeline_suite(void);
Suite *gl_cli_run_suite(void);
Suite *gl_cli_clean_suite(void);
Suite *gl_formats_suite(void);
Suite *gl_growth_report_suite(void);
Suite *gl_hostile_suite(void);
Suite *gl_attribute_suite(void);
Suite *gl_commands_suite(void);
Suite *gl_durations_suite(void);
Suite *gl_prepare_suite(void);
Suite *gl_runner_suite(void);
Suite *gl_rundir_suite(void);
Suite *gl_rundir_untraced_suite(void);
Suite *gl_rundir_clean_suite(void);
Suite *gl_cache_suite(void);
Suite *gl_sanitizer_names_suite(void);
Suite *gl_exact_suite(void);
Suite *gl_gate_suite(void);
Suite *gl_growth_suite(void);
Suite *gl_alloc_suite(void);
Suite *gl_targets_suite(void);
Suite *gl_sys_suite(void);
Suite *gl_sanitizer_reader_suite(void);
Suite *gl_sanitizer_exact_suite(void);
Suite *gl_sanitizer_inherited_suite(void);
Suite *gl_filter_sanitizer_suite(void);
Suite *gl_splitter_suite(void);
Suite *gl_sinks_suite(void);
Suite *gl_json_report_suite(void);
Suite *gl_source_suite(void);
Suite *gl_demangle_suite(void);
Suite *gl_debuginfo_suite(void);
Suite *gl_run_record_suite(void);
Suite *gl_structures_suite(void);
Suite *gl_project_paths_suite(void);
Suite *gl_group_suite(void);
Suite *gl_run_dir_suite(void);
Suite *gl_sanitizer_suite(void);
Suite *gl_checks_suite(void);
Suite *gl_input_suite(void);
Suite *gl_judges_suite(void);
Suite *gl_program_kind_suite(void);
Suite *gl_restore_env_suite(void);
Suite *gl_hidden_table_suite(void);
Suite *gl_got_suite(void);
Suite *gl_judgement_suite(void);
Suite *gl_outcome_suite(void);

#endif
