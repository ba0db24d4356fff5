/* What the formats share: the words and places every report gives a
 * finding, a group of findings and a test, so that a bug reads the same in
 * every format; what a report's context comes to (its counts, which
 * findings failed); and the two blocks two formats show alike, a group as
 * the text report shows it (JUnit's failures) and a finding's Valgrind
 * suppression (--format supp, the text report's --gen-suppressions). A
 * format calls these, never another format. */
#ifndef GEMLEAK_REPORT_WORDING_H
#define GEMLEAK_REPORT_WORDING_H

#include <glib.h>
#include "gemleak/base/record.h"
#include "gemleak/judge/group.h"
#include "gemleak/judge/merge.h"
#include "gemleak/read/source.h"
#include "gemleak/report/report.h"

/* ---- places (wording_places.c) ---- */

/* Appends one frame as a reader sees it: "fn (file:line)", "fn (at obj)",
 * "??? (at obj)" or the bare address; the file relative to @project_root
 * (nullable) when under it, as gl_frame_source_path() says, else as
 * Valgrind named it. */
void gl_frame_describe(const GlFrame *frame, const char *project_root, GString *out);

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

/* Returns: (transfer full) (nullable): where @test is, relative to
 * @project_root when under it: "test/count_test.rb:6", or the file alone
 * (--per-test=file); NULL when the helper could not tell. */
char *gl_test_location(const GlTest *test, const char *project_root);

/* Returns: (transfer full): @test's name: "CountTest#test_count", RSpec's
 * full description, or for a whole test file its location. */
char *gl_test_name(const GlTest *test, const char *project_root);

/* ---- words (wording.c) ---- */

/* Returns: (transfer full): what the finding is, the same in every run and
 * every format: a leak's totals ("3184 bytes in 7 blocks are definitely
 * lost"), an error's Valgrind message, then its occurrences and processes;
 * a growth's series: "growth: +800 bytes in +50 blocks at each of 3
 * repetitions (series +800, +800, +800), still reachable" ("+2400 bytes in
 * +150 blocks over 3 repetitions" when they differ; "held by +50 Data
 * objects a repetition that the test keeps"; "some of it lost"). */
char *gl_finding_message(const GlFinding *finding);

/* Returns: (transfer full) (nullable): for a finding whose owner its frames
 * do not tell (finding->certain is FALSE), why: "10 frames in
 * libruby-3.1.so.3.1.2 have no symbols, ..."; NULL for a certain one. */
char *gl_finding_uncertainty(const GlFinding *finding);

/* Returns: (transfer full) (nullable): what decides an uncertain finding,
 * a sentence: "Ruby's debug symbols decide it (...)."; NULL for a certain
 * one. */
char *gl_finding_uncertainty_advice(const GlFinding *finding);

/* Returns: (transfer full): a short title: "definite leak in leaky_alloc
 * (leaky.c:12) via leaky_leak (leaky.c:30)", "InvalidWrite in uaf (leaky.c:20)":
 * the first target frame, and the entry point of its group (group.h, (b):
 * the outermost of the extension's frames that run on unbroken from
 * there) when it is another function. */
char *gl_finding_title(const GlFinding *finding, const char *project_root);

/* Returns: (transfer full) (nullable): when the finding happened, as a
 * --per-test run's markers say: "first lost in CountTest#test_count
 * (test/count_test.rb:6)", "first seen in ..." for an error, with the
 * other tests; "lost at exit (...)" for a leak no test check found;
 * "grew in CountTest#test_count (test/count_test.rb:6)" for growth (the
 * test whose repetitions its series is of); NULL when nothing says (a run
 * without --per-test). */
char *gl_finding_tests_line(const GlFinding *finding, const char *project_root);

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
 * (indirect leaks not asked for), "it owned 16384 bytes, lost with it (a
 * run with --leak-kinds definite,indirect lists its blocks)"; NULL when its
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

/* ---- what a report's context comes to (wording.c) ---- */

/* Returns: TRUE if @finding is one that failed the run: the gate failed and
 * the finding is of a kind that fails it. */
gboolean gl_report_finding_fails(const GlReportContext *context, const GlFinding *finding);

/* Returns: TRUE if a finding of @group fails the run (gl_report_finding_fails()). */
gboolean gl_report_group_fails(const GlReportContext *context, const GlGroup *group);

/* The summary's counts of what @context reports: the occurrences of its
 * findings, of every finding the analysis made (the baseline's too), and
 * its uncertain findings. */
void gl_report_counts(const GlReportContext *context, guint64 *occurrences,
                      guint64 *all_occurrences, guint *uncertain);

/* The growth among @findings (GlFinding*, --growth), which the summaries
 * count apart from leaks and errors: *sites (nullable) the sites that
 * grew (their fingerprints, each once: one site may grow in several
 * tests).
 * Returns: how many of @findings are growth. */
guint gl_report_growth_count(const GPtrArray *findings, guint *sites);

/* Returns: how many of the processes read hold no finding at all (one the
 * baseline knows too is a finding) and were judged: a clean run of an
 * engine that writes little says what it checked. */
guint gl_report_clean_processes(const GlReportContext *context);

/* ---- entries as the text report shows them (wording_entry.c) ---- */

/* The text's colours: ANSI escapes. */
#define GL_PAINT_BOLD "\033[1m"
#define GL_PAINT_RED "\033[1;31m"
#define GL_PAINT_DIM "\033[2m"
#define GL_PAINT_RESET "\033[0m"

/* Returns: (transfer none): @code (a GL_PAINT_) when colouring, else "". */
const char *gl_paint(gboolean color, const char *code);

/* How an entry is shown. */
typedef struct {
    gboolean color;             /* ANSI colour */
    gboolean suppressions;      /* each finding's suppression block */
    guint frames_after;         /* frames shown past the outermost target frame;
                                 * G_MAXUINT: every frame, none collapsed */
    GlSources *sources;         /* (nullable) the source line of each finding's place */
    const char *project_root;   /* (nullable) locations relative to it */
} GlEntryStyle;

/* Appends @finding as the text report shows an entry of one finding: its
 * message ("uncertain: " first for an uncertain one), its tests, why it is
 * uncertain, its source line and its stacks. */
void gl_entry_finding(GString *out, const GlFinding *finding, const GlEntryStyle *style);

/* Appends @group as the text report shows it: a group of one as its
 * finding, then what it owned; a group of several with its totals, why it
 * is one bug, its ways in, its first call path whole and the next ones a
 * line each. */
void gl_entry_group(GString *out, const GlGroup *group, const GlEntryStyle *style);

/* Returns: (transfer full): @group as the text report shows it, no colour:
 * its first finding as the text report shows it, under the group's totals, and
 * its next call paths a line each. */
char *gl_group_text(const GlGroup *group, gboolean suppressions, const char *project_root);

/* ---- suppressions (wording_supp.c) ---- */

/* Returns: (transfer full) (nullable): the Valgrind suppression that
 * silences @finding wherever Ruby called it from, under a comment that
 * names it: its frames up to the last target frame, then "...". NULL when
 * Valgrind has no suppression for its kind, and for growth (no error of
 * Valgrind's: gemleak measures it). --format supp and the text
 * report's --gen-suppressions both print this. */
char *gl_finding_suppression(const GlFinding *finding);

/* Returns: (transfer none): why @finding has no suppression (when
 * gl_finding_suppression() gives none), in parentheses: "(Valgrind has no
 * suppression for this kind of error)"; for growth, that a baseline, not
 * a suppression, keeps it known. */
const char *gl_finding_no_suppression(const GlFinding *finding);

/* Returns: (transfer full): "# TITLE: MESSAGE\n", the comment that names
 * @finding above its suppression (or says there is none), on one line. */
char *gl_finding_suppression_comment(const GlFinding *finding);

/* Returns: (transfer full): @text on one line for a suppressions file:
 * each control character becomes a space. */
char *gl_suppression_line(const char *text);

#endif
