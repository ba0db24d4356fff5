/* Reports. A format is a GlReporter, a small table of functions (begin, one
 * call a finding, end) in a file of its own: a new format is a new file and
 * a line in report.c's list. */
#ifndef GEMLEAK_REPORT_H
#define GEMLEAK_REPORT_H

#include <stdio.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include "gemleak/base/json_format.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/group.h"
#include "gemleak/judge/merge.h"

typedef struct {
    const GlAnalysis *analysis;
    const GPtrArray *findings;     /* GlFinding* to report: the analysis's, less the baseline's */
    guint baseline_known;          /* findings left out because the baseline knows them */
    const GlGateResult *gate;
    const char *exit_line;         /* gemleak run: its exit status and why (nullable) */
    /* What the problems come to, in the engine's words: "Valgrind's XML
     * could not all be read", "a process that loaded an extension was not
     * checked" (nullable: "an input could not all be read"). */
    const char *trouble;
    const GlGate *fail_on;         /* which findings fail (nullable: all of them) */
    const char *const *targets;    /* the target patterns or paths, NULL-terminated */
    gboolean color;                /* ANSI colour (text only) */
    gboolean suppressions;         /* show the suppression block of each finding */
    const char *project_root;      /* absolute: locations are shown relative to it */
    guint frames_after;            /* text: frames shown past the outermost target
                                    * frame; G_MAXUINT: every frame, none collapsed */
    gboolean ran_command;          /* gemleak run: command_status says how the command ended */
    gboolean verdict_elsewhere;    /* the gate's line and exit_line are said once on gemleak's
                                    * streams, by another report or by the sinks: a report
                                    * written to a stream leaves them out */
    int command_status;            /* its exit status, 128+N when signal N killed it */
} GlReportContext;

typedef struct {
    const char *name;              /* as given to --format */
    const char *summary;           /* one line for --help */
    /* Returns: (transfer full): the reporter's state for the next calls. */
    gpointer (*begin)(const GlReportContext *context, FILE *out);
    void (*finding)(gpointer state, const GlFinding *finding, guint index);
    /* Optional: when set, called once a group of findings (group.h), in
     * place of finding(): a format that shows one bug as one entry. */
    void (*group)(gpointer state, const GlGroup *group, guint index);
    /* Writes what is left and frees the state. */
    void (*end)(gpointer state);
} GlReporter;

/* The formats, each defined in src/report/report_<name>.c. */
extern const GlReporter gl_report_text;
extern const GlReporter gl_report_json;
extern const GlReporter gl_report_junit;
extern const GlReporter gl_report_sarif;
extern const GlReporter gl_report_github;
extern const GlReporter gl_report_supp;
/* --write-baseline: {"fingerprint_version", "findings": [{"kind",
 * "fingerprint", "location" ("ext/x/x.c:12", relative to the project root),
 * "functions"}]}, in fingerprint order; no pid, count or absolute path, so
 * that two runs of the same leaks write the same bytes. */
extern const GlReporter gl_report_baseline;

/* Returns: (transfer none) (nullable): the reporter called @name. */
const GlReporter *gl_reporter_find(const char *name);

/* Returns: (transfer none): every reporter, NULL-terminated. */
const GlReporter *const *gl_reporters(void);

/* Writes a whole report to @out: the groups of @context's findings to a
 * reporter with a group() (gl_findings_group(), made here once for every
 * format), else each finding; @out_name names it in errors.
 * Returns: FALSE with GL_ERROR_IO when writing failed. */
gboolean gl_report_write(const GlReporter *reporter, const GlReportContext *context, FILE *out,
                         const char *out_name, GError **error);

/* ---- for the reporters -------------------------------------------------- */

/* Appends one frame as a reader sees it: "fn (file:line)", "fn (at obj)",
 * "??? (at obj)" or the bare address; the file relative to @project_root
 * (nullable) when under it, as gl_frame_source_path() says, else as
 * Valgrind named it. */
void gl_frame_describe(const GlFrame *frame, const char *project_root, GString *out);

/* Returns: (transfer full): what the finding is, the same in every run and
 * every format: a leak's totals ("3184 bytes in 7 blocks are definitely
 * lost"), an error's Valgrind message, then its occurrences and processes. */
char *gl_finding_message(const GlFinding *finding);

/* Returns: (transfer full) (nullable): for a finding whose owner its frames
 * do not tell (finding->certain is FALSE), why: "10 frames in
 * libruby-3.1.so.3.1.2 have no symbols, ..."; NULL for a certain one. */
char *gl_finding_uncertainty(const GlFinding *finding);

/* Returns: (transfer full) (nullable): what decides an uncertain finding,
 * a sentence: "Ruby's debug symbols decide it (...)."; NULL for a certain
 * one. */
char *gl_finding_uncertainty_advice(const GlFinding *finding);

/* Returns: (transfer none) (nullable): the frame a finding is reported at:
 * the first target frame (one with a source file first) of its primary
 * stack, else of its other stacks. */
const GlFrame *gl_finding_location(const GlFinding *finding);

/* As gl_finding_location(); *stack (nullable) says which stack the frame is
 * in: "allocation" (a leak's), "access" (an error's), "free", or "other". */
const GlFrame *gl_finding_location_in(const GlFinding *finding, const char **stack);

/* Returns: (transfer full) (nullable): where @frame is, for a report that
 * places it: its source path (as gl_frame_source_path()), else, for an
 * object built without -g, the source file its symbol table names
 * (frame->unit), else its object; relative to @project_root when under it,
 * *under_root (nullable) says which. NULL for a NULL @frame (a finding no
 * frame places). */
char *gl_frame_place(const GlFrame *frame, const char *project_root, gboolean *under_root);

/* Returns: (transfer full) (nullable): the source path of @frame (dir/file,
 * "." and ".." folded away), relative to @project_root when under it;
 * *under_root says which. NULL when the frame has no file. */
char *gl_frame_source_path(const GlFrame *frame, const char *project_root, gboolean *under_root);

/* Returns: (transfer full): a short title: "definite leak in leaky_alloc
 * (leaky.c:12) via leaky_leak (leaky.c:30)", "InvalidWrite in uaf (leaky.c:20)":
 * the first target frame, and the entry point of its group (group.h, (b):
 * the outermost of the extension's frames that run on unbroken from
 * there) when it is another function. */
char *gl_finding_title(const GlFinding *finding, const char *project_root);

/* Returns: (transfer full) (nullable): where @test is, relative to
 * @project_root when under it: "test/count_test.rb:6", or the file alone
 * (--per-test=file); NULL when the helper could not tell. */
char *gl_test_location(const GlTest *test, const char *project_root);

/* Returns: (transfer full): @test's name: "CountTest#test_count", RSpec's
 * full description, or for a whole test file its location. */
char *gl_test_name(const GlTest *test, const char *project_root);

/* Returns: (transfer full): "CountTest#test_count (test/count_test.rb:6)",
 * or the file alone. */
char *gl_test_describe(const GlTest *test, const char *project_root);

/* Returns: (transfer full) (nullable): when the finding happened, as a
 * --per-test run's markers say: "first lost in CountTest#test_count
 * (test/count_test.rb:6)", "first seen in ..." for an error, with the
 * other tests; "lost at exit (...)" for a leak no test check found; NULL
 * when nothing says (a run without --per-test). */
char *gl_finding_tests_line(const GlFinding *finding, const char *project_root);

/* Returns: TRUE if @finding is one that failed the run: the gate failed and
 * the finding is of a kind that fails it. */
gboolean gl_report_finding_fails(const GlReportContext *context, const GlFinding *finding);

/* The summary's counts of what @context reports: the occurrences of its
 * findings, of every finding the analysis made (the baseline's too), and
 * its uncertain findings. */
void gl_report_counts(const GlReportContext *context, guint64 *occurrences,
                      guint64 *all_occurrences, guint *uncertain);

/* Returns: how many of the processes read hold no finding at all (one the
 * baseline knows too is a finding) and were judged: a clean run of an
 * engine that writes little says what it checked. */
guint gl_report_clean_processes(const GlReportContext *context);

/* Adds the member @name to the object @builder is in: a string, or null
 * when @value is NULL. Bytes that are not UTF-8 become U+FFFD: JSON is
 * UTF-8 whatever the input held. */
void gl_json_add_string(JsonBuilder *builder, const char *name, const char *value);
/* The same for an array element. */
void gl_json_add_string_value(JsonBuilder *builder, const char *value);

/* Adds the member @name: an integer. */
void gl_json_add_int(JsonBuilder *builder, const char *name, gint64 value);

/* Adds what else a baseline knows @finding by: "structure_fingerprint"
 * (a block of a lost structure) and "kind_fingerprints" (errors of several
 * kinds on one freed block), when it has them. */
void gl_json_add_other_fingerprints(JsonBuilder *builder, const GlFinding *finding);

/* Adds the member "tool": gemleak's name and version, by which a JSON
 * file is known as gemleak's. */
void gl_json_add_tool(JsonBuilder *builder);

/* Adds the member "tests": an array of {"name", "location"}, the tests
 * @finding was lost in, first seen first. */
void gl_json_add_tests(JsonBuilder *builder, const GlFinding *finding, const char *project_root);

/* Writes the document @builder built to @out, indented, with a final
 * newline. The builder stays the caller's. */
void gl_json_write(JsonBuilder *builder, FILE *out);

/* Returns: (transfer full): @group as the text report shows it, no colour:
 * its first finding as the text report shows it, under the group's totals, and
 * its next call paths a line each. */
char *gl_group_text(const GlGroup *group, gboolean suppressions, const char *project_root);

/* Returns: (transfer full) (nullable): the Valgrind suppression that
 * silences @finding wherever Ruby called it from, under a comment that
 * names it: its frames up to the last target frame, then "...". NULL when
 * Valgrind has no suppression for its kind. --format supp and the text
 * report's --gen-suppressions both print this. */
char *gl_finding_suppression(const GlFinding *finding);

/* A group's call paths a report shows in full or on a line; the others it
 * counts ("and 27 more call paths"). */
#define GL_GROUP_PATHS_SHOWN 3

/* Returns: (transfer full): what a group of several findings is, the same
 * in every format: "30 bytes in 30 blocks are definitely lost in 30 call
 * paths (30 occurrences in 1 process)"; an error's Valgrind message, "in
 * 4 call paths". For a group of one, gl_finding_message(). */
char *gl_group_message(const GlGroup *group);

/* Returns: (transfer full): gl_group_message() as an entry's heading
 * shows it: "uncertain: ..." for a group none of whose findings is certain
 * (group->certain FALSE), which may be no bug at all. */
char *gl_group_heading(const GlGroup *group);

/* Returns: (transfer full) (nullable): why an uncertain group is uncertain
 * (its first finding's gl_finding_uncertainty()); NULL for a certain one. */
char *gl_group_uncertainty(const GlGroup *group);

/* Returns: (transfer full) (nullable): why a group's findings are one bug:
 * "one bug: lost in loop_realloc, entered through grouped_destroy_loop",
 * "one bug: lost in ev_realloc, entered 2 ways" (its ways in, a line each:
 * gl_group_way_line()); "maybe one bug (uncertain): ..." for an uncertain
 * group; NULL for a group of one finding entered one way. */
char *gl_group_reason(const GlGroup *group);

/* Returns: (transfer full): the way in @index of @group on a line: "way in
 * 2: NIO_Selector_free (ext/nio4r/selector.c:176): 459 bytes in 459 blocks
 * in 15 call paths". */
char *gl_group_way_line(const GlGroup *group, guint index, const char *project_root);

/* Returns: (transfer full) (nullable): "it owned 16384 bytes in 2 blocks,
 * lost with it:", over the lines of gl_group_owned_line(); without them
 * (indirect leaks not asked for), "it owned 16384 bytes, lost with it
 * (--leak-kinds definite,indirect lists its blocks)"; NULL when its
 * structures owned nothing. */
char *gl_group_owned_heading(const GlGroup *group);

/* Returns: (transfer full): the block @index of what @group owned, on a
 * line: "owned 1: 8192 bytes in 1 block is indirectly lost: set_max_depth
 * (ext/x/x.cpp:9824) < ...", as gl_finding_path_line() shows a call path. */
char *gl_group_owned_line(const GlGroup *group, guint index, const char *project_root);

/* Returns: (transfer full): @group's title, as gl_finding_title() gives
 * its first finding's, with its other ways in ("via a (x.c:3) and b") and,
 * with @paths, how many call paths it has ("..., 30 call paths"); "uncertain:
 * ..." for an uncertain group. */
char *gl_group_title(const GlGroup *group, const char *project_root, gboolean paths);

/* Returns: (transfer full): one call path of a group on a line: @finding's
 * message, its extension frames in the stack that places it, innermost
 * first, and the tests it was lost in: "1 bytes in 1 block is definitely
 * lost: loop_realloc (ext/x/x.c:32) < loop_destroy (ext/x/x.c:65) < ...;
 * first lost in ...". */
char *gl_finding_path_line(const GlFinding *finding, const char *project_root);

/* Returns: TRUE if a finding of @group fails the run (gl_report_finding_fails()). */
gboolean gl_report_group_fails(const GlReportContext *context, const GlGroup *group);

/* Returns: (transfer none): "definite leak", "memory error" ... for grouping. */
const char *gl_record_category(const GlRecord *record);

#endif
