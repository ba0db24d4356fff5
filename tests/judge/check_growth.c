/* --growth (src/judge/growth.c): the statistic on every shape of the
 * issue's lists, the samples judged by the rules and never counted as
 * leaks, held, lost, --growth-min-bytes, a site that also leaks, and what
 * a run that measured nothing comes to. The sites are those of the
 * hand-made LeakSanitizer run directory fixtures/lsan/growth-ruby34 (the
 * client library's lines, fixtures/lsan/README.md), whose measures each
 * test rewrites. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/growth.h"
#include "gemleak/judge/outcome.h"

#include <string.h>

#define FIXTURE "lsan/growth-ruby34"
#define TARGET "/home/dev/growthgem/lib/growth/growth.so"
#define PID_FILE "lsan.4242"
#define TEST_MARKER "CacheTest%23test_add\t/home/dev/growthgem/test/cache_test.rb:5"

/* The sites of the fixture, by number. */
enum {
    SITE_CACHE = 1,      /* malloc in cache_add */
    SITE_STRDUP = 2,     /* strdup in cache_add */
    SITE_JOURNAL = 3,    /* realloc in journal_append */
    SITE_SCRATCH = 4,    /* malloc in scratch_get */
    SITE_RING = 5,       /* malloc in ring_push */
    SITE_STRING = 6,     /* rb_str_new in keep_name: Ruby's */
    SITE_DATA = 7,       /* rb_data_typed_object_zalloc in wrap_alloc: a Data object's struct */
    SITE_TABLE = 8,      /* rb_st_insert in registry_add */
    SITE_LOST = 9,       /* malloc in name_copy, which the exit report has as a leak */
};

/* Returns: (transfer full): the "gemleak:site" line of @site and its frame
 * lines, as the fixture has them. */
static char *site_lines(guint site)
{
    g_autofree char *path = gl_test_fixture(FIXTURE "/" PID_FILE);
    g_autofree char *text = gl_test_read(path, NULL);
    g_autofree char *heading = g_strdup_printf("gemleak:site\t%u\n", site);
    const char *start = strstr(text, heading);
    ck_assert_ptr_nonnull(start);
    const char *end = start + strlen(heading);
    while (g_str_has_prefix(end, "    #"))
        end = strchr(end, '\n') + 1;
    return g_strndup(start, (gsize) (end - start));
}

/* Returns: (transfer full): a copy of the fixture's run directory, its
 * report @report (engine.txt without its growth row when !@asked). */
static char *run_dir_with(const char *report, gboolean asked)
{
    char *dir = gl_test_tmpdir();
    static const char *const files[] = {
        "engine.txt", "gemleak-run.txt", "loaded-4242.txt", "engine-4242.txt", "ruby-4242.txt",
        "recorded.txt",
    };
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *relative = g_strdup_printf(FIXTURE "/%s", files[i]);
        g_autofree char *from = gl_test_fixture(relative);
        g_autofree char *text = gl_test_read(from, NULL);
        if (!asked && strcmp(files[i], "engine.txt") == 0)
            *strstr(text, "growth ") = '\0';
        g_autofree char *to = g_build_filename(dir, files[i], NULL);
        gl_test_write(to, text, -1);
    }
    g_autofree char *to = g_build_filename(dir, PID_FILE, NULL);
    gl_test_write(to, report, -1);
    return dir;
}

/* Returns: (transfer full): a report in which @site's live memory
 * changed by @bytes[r] and @blocks[r] at each measure r (0 the one before
 * the first run again, then 1 to @k), a change of 0 in both unsaid. */
static char *report_of(guint site, const gint64 *bytes, const gint64 *blocks, guint k)
{
    GString *out = g_string_new("gemleak:growth\n");
    g_autofree char *lines = site_lines(site);
    gint64 live_bytes = 0, live_blocks = 0;
    gboolean given = FALSE;
    for (guint r = 0; r <= k; r++) {
        g_string_append_printf(out, "gemleak:growth\t%u\t%s\n", r, TEST_MARKER);
        if (bytes[r] == 0 && blocks[r] == 0)
            continue;
        if (!given)
            g_string_append(out, lines);
        given = TRUE;
        live_bytes += bytes[r];
        live_blocks += blocks[r];
        g_string_append_printf(out, "gemleak:grew\t%u\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT
                               "\t%" G_GINT64_FORMAT "\t%" G_GINT64_FORMAT "\n", site, live_bytes,
                               bytes[r], live_blocks, blocks[r]);
    }
    g_string_append(out, "gemleak:growth\tmeasured\t1\ngemleak:exit\ngemleak:done\n");
    return g_string_free(out, FALSE);
}

/* Returns: (transfer full): the analysis of a run directory whose @report
 * it is, the rules' --growth-min-bytes @min_bytes. */
static GlAnalysis *analyze_report(const char *report, gboolean asked, guint64 min_bytes)
{
    g_autofree char *dir = run_dir_with(report, asked);
    const char *paths[] = { dir, NULL };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, TARGET, NULL));
    gl_rules_set_growth_min_bytes(rules, min_bytes);
    GlAnalysis *analysis = gl_analyze(paths, rules, 1);
    gl_remove_tree(dir);
    return analysis;
}

/* Returns: (transfer full): the analysis of @site changing so over 3
 * repetitions. */
static GlAnalysis *analyze_site(guint site, const gint64 bytes[4], const gint64 blocks[4],
                                guint64 min_bytes)
{
    g_autofree char *report = report_of(site, bytes, blocks, 3);
    return analyze_report(report, TRUE, min_bytes);
}

/* Returns: (transfer none) (nullable): the growth finding of @analysis
 * (asserting there is at most one finding). */
static const GlFinding *the_growth(const GlAnalysis *analysis)
{
    ck_assert_uint_le(analysis->findings->len, 1);
    if (analysis->findings->len == 0)
        return NULL;
    const GlFinding *finding = g_ptr_array_index(analysis->findings, 0);
    ck_assert_str_eq(finding->record->kind, GL_KIND_GROWTH);
    ck_assert_ptr_nonnull(finding->growth);
    return finding;
}

/* The statistic alone, on each shape: a site grows when it never falls
 * back, adds something after the first repetition, and its median is at
 * least the least asked for. */
START_TEST(test_statistic_on_every_shape)
{
    static const struct {
        const char *shape;
        gint64 bytes[5];
        gint64 blocks[5];
        guint k;
        guint64 min_bytes;
        gboolean grows;
        guint64 median;
    } shapes[] = {
        { "steady", { 800, 800, 800 }, { 50, 50, 50 }, 3, 1, TRUE, 800 },
        { "doubling table", { 256, 512, 0 }, { 0, 0, 0 }, 3, 1, TRUE, 256 },
        { "doubling, its big step first", { 0, 512, 256 }, { 0, 0, 0 }, 3, 1, TRUE, 256 },
        { "warm-up", { 64, 0, 0 }, { 1, 0, 0 }, 3, 1, FALSE, 0 },
        { "bounded: falls back", { 48, -48, 48 }, { 1, -1, 1 }, 3, 1, FALSE, 48 },
        { "blocks fall back, bytes do not", { 48, 48, 48 }, { 1, -1, 1 }, 3, 1, FALSE, 48 },
        { "transient", { 0, 0, 0 }, { 0, 0, 0 }, 3, 1, FALSE, 0 },
        { "realloc larger", { 100, 100, 100 }, { 0, 0, 0 }, 3, 1, TRUE, 100 },
        { "blocks only, after the first", { 0, 0, 0 }, { 0, 1, 1 }, 3, 1, FALSE, 0 },
        { "under --growth-min-bytes", { 800, 800, 800 }, { 50, 50, 50 }, 3, 801, FALSE, 800 },
        { "at --growth-min-bytes", { 800, 800, 800 }, { 50, 50, 50 }, 3, 800, TRUE, 800 },
        { "an even number: the mean of the middle two", { 100, 0, 300, 200 }, { 1, 0, 1, 1 }, 4,
          150, TRUE, 150 },
        { "every kind fell by what another rose", { 0, 0, 0 }, { 0, 0, 0 }, 2, 0, FALSE, 0 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(shapes); i++) {
        guint64 median = 99;
        gboolean grows = gl_growth_grows(shapes[i].bytes, shapes[i].blocks, shapes[i].k,
                                         shapes[i].min_bytes, &median);
        ck_assert_msg(grows == shapes[i].grows, "%s", shapes[i].shape);
        ck_assert_msg(median == shapes[i].median, "%s: median %" G_GUINT64_FORMAT,
                      shapes[i].shape, median);
    }
}
END_TEST

/* The finding's words, in every case the report says. */
START_TEST(test_growth_in_words)
{
    gint64 steady[] = { 800, 800, 800 }, steady_blocks[] = { 50, 50, 50 };
    GlGrowth growth = { .repetitions = 3, .bytes = steady, .blocks = steady_blocks };
    g_autofree char *reachable = gl_growth_describe(&growth);
    ck_assert_str_eq(reachable, "+800 bytes in +50 blocks at each of 3 repetitions (series +800, "
                                "+800, +800), still reachable");
    growth.held = TRUE;
    g_autofree char *held = gl_growth_describe(&growth);
    ck_assert_str_eq(held, "+800 bytes in +50 blocks at each of 3 repetitions (series +800, "
                           "+800, +800), held by +50 Data objects a repetition that the test keeps");
    gint64 doubling[] = { 256, 512, 0 }, none[] = { 0, 0, 0 };
    GlGrowth table = { .repetitions = 3, .bytes = doubling, .blocks = none, .lost = TRUE };
    g_autofree char *lost = gl_growth_describe(&table);
    ck_assert_str_eq(lost, "+768 bytes in +0 blocks over 3 repetitions (series +256, +512, +0), "
                           "some of it lost");
}
END_TEST

/* A cache that never forgets: one finding, of its test, with the series,
 * a fingerprint from its site (baselines), and no leak counted: a sample
 * is no error read. */
START_TEST(test_steady_growth_is_a_finding)
{
    const gint64 bytes[] = { 800, 800, 800, 800 }, blocks[] = { 50, 50, 50, 50 };
    g_autoptr(GlAnalysis) analysis = analyze_site(SITE_CACHE, bytes, blocks, 1);
    const GlFinding *finding = the_growth(analysis);
    ck_assert_ptr_nonnull(finding);
    ck_assert_uint_eq(finding->growth->repetitions, 3);
    for (guint r = 0; r < 3; r++) {
        ck_assert_int_eq(finding->growth->bytes[r], 800);
        ck_assert_int_eq(finding->growth->blocks[r], 50);
    }
    ck_assert_uint_eq(finding->growth->median_bytes, 800);
    ck_assert(!finding->growth->held);
    ck_assert(!finding->growth->lost);
    ck_assert(finding->certain);
    ck_assert_uint_eq(finding->tests->len, 1);
    const GlTest *test = g_ptr_array_index(finding->tests, 0);
    ck_assert_str_eq(test->name, "CacheTest#test_add");
    ck_assert_str_eq(test->location, "/home/dev/growthgem/test/cache_test.rb:5");
    ck_assert_str_eq(finding->record->what, "+800 bytes in +50 blocks at each of 3 repetitions "
                                            "(series +800, +800, +800), still reachable");
    ck_assert_ptr_nonnull(finding->fingerprint);
    const GlFrame *first = gl_record_first_target_frame(finding->record);
    ck_assert_ptr_nonnull(first);
    ck_assert_str_eq(first->fn, "cache_add");
    /* never counted as leaks, nor in the summary's counts */
    ck_assert_uint_eq(analysis->summary.errors_seen, 0);
    ck_assert_uint_eq(analysis->summary.by_verdict[GL_VERDICT_KEEP], 0);
    ck_assert(analysis->summary.growth_asked);
    ck_assert_uint_eq(analysis->summary.growth_measured, 1);
    ck_assert_uint_eq(analysis->summary.growth_repetitions, 3);
}
END_TEST

/* An st table the extension owns, doubling (rule 2 gives what st_insert
 * grows to its caller): +X, +2X, 0 grows. */
START_TEST(test_doubling_table_grows)
{
    const gint64 bytes[] = { 128, 256, 512, 0 }, blocks[] = { 1, 0, 0, 0 };
    g_autoptr(GlAnalysis) analysis = analyze_site(SITE_TABLE, bytes, blocks, 1);
    const GlFinding *finding = the_growth(analysis);
    ck_assert_ptr_nonnull(finding);
    ck_assert_int_eq(finding->growth->bytes[0], 256);
    ck_assert_int_eq(finding->growth->bytes[1], 512);
    ck_assert_int_eq(finding->growth->bytes[2], 0);
    ck_assert_uint_eq(finding->growth->median_bytes, 256);
}
END_TEST

/* One block realloc'd larger on every call: its bytes rise, its blocks
 * stay. */
START_TEST(test_realloc_larger_grows)
{
    const gint64 bytes[] = { 100, 100, 100, 100 }, blocks[] = { 1, 0, 0, 0 };
    g_autoptr(GlAnalysis) analysis = analyze_site(SITE_JOURNAL, bytes, blocks, 1);
    const GlFinding *finding = the_growth(analysis);
    ck_assert_ptr_nonnull(finding);
    ck_assert_int_eq(finding->growth->blocks[0], 0);
    ck_assert_str_eq(finding->record->what, "+100 bytes in +0 blocks at each of 3 repetitions "
                                            "(series +100, +100, +100), still reachable");
}
END_TEST

/* What must stay silent: a warm-up (a scratch buffer allocated on first
 * use), a ring bounded at N entries, transient memory (no change at all),
 * and Ruby's string the test keeps (rule 2). */
START_TEST(test_silent_shapes)
{
    static const struct {
        const char *shape;
        guint site;
        gint64 bytes[4];
        gint64 blocks[4];
    } silent[] = {
        { "warm-up", SITE_SCRATCH, { 0, 64, 0, 0 }, { 0, 1, 0, 0 } },
        { "memo filled in the suite's own run", SITE_SCRATCH, { 64, 0, 0, 0 }, { 1, 0, 0, 0 } },
        { "bounded ring", SITE_RING, { 48, 48, -48, 48 }, { 1, 1, -1, 1 } },
        { "transient", SITE_CACHE, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } },
        { "Ruby's string, kept", SITE_STRING, { 40, 40, 40, 40 }, { 1, 1, 1, 1 } },
    };
    for (guint i = 0; i < G_N_ELEMENTS(silent); i++) {
        g_autoptr(GlAnalysis) analysis = analyze_site(silent[i].site, silent[i].bytes,
                                                      silent[i].blocks, 1);
        ck_assert_msg(analysis->findings->len == 0, "%s: %u findings", silent[i].shape,
                      analysis->findings->len);
        ck_assert_msg(analysis->problems->len == 0, "%s: a problem", silent[i].shape);
        ck_assert_uint_eq(analysis->summary.growth_measured, 1);
        ck_assert_uint_eq(analysis->summary.errors_seen, 0);
    }
}
END_TEST

/* The struct of a Data object the test keeps: held, which the gate fails
 * only when asked (growth-held). */
START_TEST(test_data_structs_are_held)
{
    const gint64 bytes[] = { 2400, 2400, 2400, 2400 }, blocks[] = { 50, 50, 50, 50 };
    g_autoptr(GlAnalysis) analysis = analyze_site(SITE_DATA, bytes, blocks, 1);
    const GlFinding *finding = the_growth(analysis);
    ck_assert_ptr_nonnull(finding);
    ck_assert(finding->growth->held);
    GlGate gate;
    gl_gate_init(&gate);
    ck_assert(!gl_gate_counts(&gate, finding));
    GlGateResult result;
    gl_gate_evaluate(&gate, analysis->findings, 0, 0, FALSE, NULL, &result);
    ck_assert(!result.failed);
    ck_assert(result.complete);
    ck_assert_str_eq(result.line, "gemleak: pass: no finding is of a kind that fails (--fail-on)");
    gl_gate_result_clear(&result);
    ck_assert(gl_gate_parse_fail_on(&gate, "definite,growth-held", NULL));
    ck_assert(gl_gate_counts(&gate, finding));
    gl_gate_evaluate(&gate, analysis->findings, 0, 0, FALSE, NULL, &result);
    ck_assert(result.failed);
    ck_assert_str_eq(result.line, "gemleak: FAIL: 1 growing site (--growth)");
    gl_gate_result_clear(&result);
}
END_TEST

/* --growth-min-bytes is the least median that grows. */
START_TEST(test_min_bytes)
{
    const gint64 bytes[] = { 800, 800, 800, 800 }, blocks[] = { 50, 50, 50, 50 };
    g_autoptr(GlAnalysis) over = analyze_site(SITE_CACHE, bytes, blocks, 801);
    ck_assert_ptr_null(the_growth(over));
    g_autoptr(GlAnalysis) at = analyze_site(SITE_CACHE, bytes, blocks, 800);
    ck_assert_ptr_nonnull(the_growth(at));
}
END_TEST

/* The gate: growth fails by default, not once --fail-on lists kinds
 * without it; the words it takes. */
START_TEST(test_gate_on_growth)
{
    const gint64 bytes[] = { 800, 800, 800, 800 }, blocks[] = { 50, 50, 50, 50 };
    g_autoptr(GlAnalysis) analysis = analyze_site(SITE_CACHE, bytes, blocks, 1);
    const GlFinding *finding = the_growth(analysis);
    GlGate gate;
    gl_gate_init(&gate);
    ck_assert(gl_gate_counts(&gate, finding));
    GlGateResult result;
    gl_gate_evaluate(&gate, analysis->findings, 0, 0, FALSE, NULL, &result);
    ck_assert(result.failed);
    ck_assert_str_eq(result.line, "gemleak: FAIL: 1 growing site (--growth)");
    gl_gate_result_clear(&result);
    ck_assert(gl_gate_parse_fail_on(&gate, "definite,errors", NULL));
    ck_assert(!gl_gate_counts(&gate, finding));
    ck_assert(gl_gate_parse_fail_on(&gate, "growth", NULL));
    ck_assert(gl_gate_counts(&gate, finding));
    ck_assert(gl_gate_parse_fail_on(&gate, "all", NULL));
    ck_assert(gate.growth && gate.growth_held);
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_gate_parse_fail_on(&gate, "growths", &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
    ck_assert_ptr_nonnull(strstr(error->message, "growth-held"));
}
END_TEST

/* The fixture's whole run: each site that must be found is, each that
 * must stay silent is, and the site the exit report has as a leak is one
 * finding, the leak. The test not measured is named. */
START_TEST(test_growth_run_directory)
{
    g_autofree char *dir = gl_test_fixture(FIXTURE);
    const char *paths[] = { dir, NULL };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, TARGET, NULL));
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    g_autoptr(GPtrArray) grown = g_ptr_array_new_with_free_func(g_free);
    guint leaks = 0;
    for (guint i = 0; i < analysis->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(analysis->findings, i);
        const GlFrame *frame = gl_record_first_target_frame(finding->record);
        ck_assert_ptr_nonnull(frame);
        if (finding->growth == NULL) {
            leaks++;
            ck_assert_str_eq(frame->fn, "name_copy");
            continue;
        }
        g_ptr_array_add(grown, g_strdup_printf("%s%s", frame->fn,
                                               finding->growth->held ? " held" : ""));
    }
    g_ptr_array_sort(grown, gl_compare_strings);
    g_ptr_array_add(grown, NULL);
    g_autofree char *all = g_strjoinv(",", (char **) grown->pdata);
    /* the cache's malloc and its strdup, the journal, the table, the Data structs */
    ck_assert_str_eq(all, "cache_add,cache_add,journal_append,registry_add,wrap_alloc held");
    ck_assert_uint_eq(leaks, 1);
    ck_assert_uint_eq(analysis->summary.growth_measured, 2);
    ck_assert_uint_eq(analysis->summary.growth_unmeasured->len, 1);
    ck_assert_str_eq(g_ptr_array_index(analysis->summary.growth_unmeasured, 0),
                     "ForkTest#test_fork (/home/dev/growthgem/test/fork_test.rb:4): it forked a "
                     "child that returned");
    gboolean noted = FALSE;
    for (guint i = 0; i < analysis->notes->len; i++)
        noted |= g_str_has_prefix(g_ptr_array_index(analysis->notes, i),
                                  "--growth: 2 tests measured, run again up to 3 times each; 1 "
                                  "not measured: ForkTest#test_fork");
    ck_assert(noted);
}
END_TEST

/* Growth asked (engine.txt's row, or the helper's first marker) and no
 * test measured is INCOMPLETE, never a pass; not asked, nothing is said. */
START_TEST(test_nothing_measured_is_incomplete)
{
    static const char *const reports[] = {
        /* the helper began, and could measure nothing */
        "gemleak:growth\ngemleak:growth\tunmeasured\t" TEST_MARKER "\tno allocation hooks\n"
        "gemleak:growth\tmeasured\t0\ngemleak:exit\ngemleak:done\n",
        /* the helper never began */
        "gemleak:exit\ngemleak:done\n",
    };
    for (guint i = 0; i < G_N_ELEMENTS(reports); i++) {
        g_autofree char *dir = run_dir_with(reports[i], TRUE);
        const char *paths[] = { dir, NULL };
        g_autoptr(GlRules) rules = gl_rules_new();
        ck_assert(gl_rules_add_target(rules, TARGET, NULL));
        g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
        ck_assert(analysis->summary.growth_asked);
        ck_assert_uint_eq(analysis->summary.growth_measured, 0);
        GlOutcomeInput input = { .inputs = paths, .rules = rules, .targets = paths };
        gl_gate_init(&input.gate);
        g_auto(GlRunCoverage) coverage = { 0 };
        gl_run_dir_coverage(paths, &coverage);
        GlOutcome outcome;
        gl_outcome_judge(analysis, &input, &coverage, &outcome);
        ck_assert_msg(outcome.problems, "report %u", i);
        ck_assert_int_eq(outcome.trouble, GL_TROUBLE_GROWTH_UNMEASURED);
        ck_assert(!outcome.gate_result.failed);
        ck_assert(!outcome.gate_result.complete);
        ck_assert_str_eq(outcome.gate_result.line, "gemleak: INCOMPLETE: no findings; --growth "
                                                   "measured no test (see gemleak's messages)");
        g_autofree char *trouble = gl_trouble_describe(outcome.trouble, &coverage);
        ck_assert_str_eq(trouble, "--growth measured no test");
        gl_outcome_clear(&outcome);
        gl_remove_tree(dir);
    }
    /* not asked: a run as any other */
    g_autofree char *dir = run_dir_with("gemleak:exit\ngemleak:done\n", FALSE);
    const char *paths[] = { dir, NULL };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, TARGET, NULL));
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert(!analysis->summary.growth_asked);
    for (guint i = 0; i < analysis->notes->len; i++)
        ck_assert(!g_str_has_prefix(g_ptr_array_index(analysis->notes, i), "--growth"));
    gl_remove_tree(dir);
}
END_TEST

/* Valgrind's samples: a site whose repetitions each lost a block is lost,
 * whatever kinds --leak-kinds keeps, and Ruby's memory under a Ruby
 * function is never a sample (rule 2), whatever its kind. */
START_TEST(test_samples_of_every_kind)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    g_autoptr(GlGrowthJudge) judge = gl_growth_judge_new(rules);
    GlProcess process = { .pid = 7, .exe = "/usr/bin/ruby3.1" };
    process.growth_markers = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(process.growth_markers, g_strdup("gemleak:growth"));
    for (guint rep = 0; rep <= 3; rep++) {
        g_autofree char *marker = g_strdup_printf("gemleak:growth\t%u\tT%%23test_a\t/t/a.rb:3", rep);
        g_ptr_array_add(process.growth_markers, g_strdup(marker));
        /* lost: definitely, then still reachable as it grew again */
        GlRecord *lost = gl_test_record(rep % 2 == 1 ? "Leak_DefinitelyLost" : "Leak_StillReachable",
                                        "malloc@/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so",
                                        "leaky_keep@/x/leaky.so:leaky.c:10",
                                        "vm_call_cfunc@/usr/lib/libruby-3.1.so.3.1.2",
                                        "main@/usr/bin/ruby3.1", NULL);
        lost->marker = gl_record_intern(lost, marker);
        lost->has_change = TRUE;
        lost->change_bytes = 32;
        lost->change_blocks = 1;
        ck_assert(gl_growth_take(judge, classifier, &process, lost, rep * 2));
        GlRecord *ruby = gl_test_record("Leak_PossiblyLost",
                                        "malloc@/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so",
                                        "rb_str_new@/usr/lib/libruby-3.1.so.3.1.2",
                                        "leaky_keep@/x/leaky.so:leaky.c:12",
                                        "main@/usr/bin/ruby3.1", NULL);
        ruby->marker = gl_record_intern(ruby, marker);
        ruby->has_change = TRUE;
        ruby->change_bytes = 40;
        ruby->change_blocks = 1;
        ck_assert(gl_growth_take(judge, classifier, &process, ruby, rep * 2 + 1));
    }
    /* the exit check's record is not growth's */
    g_autoptr(GlRecord) at_exit = gl_test_record("Leak_DefinitelyLost", "malloc@/x/vg.so",
                                                 "leaky_keep@/x/leaky.so:leaky.c:10", NULL);
    at_exit->marker = gl_record_intern(at_exit, "gemleak:growth\tmeasured\t1");
    at_exit->at_exit = TRUE;
    ck_assert(!gl_growth_take(judge, classifier, &process, at_exit, 99));
    g_ptr_array_add(process.growth_markers, g_strdup("gemleak:growth\tmeasured\t1"));
    g_autoptr(GlFindings) findings = gl_findings_new();
    GlGrowthCounts counts;
    gl_growth_finish(judge, &process, findings, &counts);
    ck_assert(counts.asked && counts.finished);
    ck_assert_uint_eq(counts.measured, 1);
    ck_assert_uint_eq(gl_findings_count(findings), 1);
    g_autoptr(GPtrArray) list = gl_findings_list(findings);
    const GlFinding *finding = g_ptr_array_index(list, 0);
    ck_assert(finding->growth->lost);
    ck_assert_int_eq(finding->growth->bytes[2], 32);
    ck_assert_ptr_nonnull(strstr(finding->record->what, "some of it lost"));
    ck_assert_int_eq(finding->record->leak_kind, GL_LEAK_NONE);
    gl_growth_counts_clear(&counts);
    g_ptr_array_unref(process.growth_markers);
}
END_TEST

/* The same site leaked in the same process: one finding, the leak. */
START_TEST(test_site_that_also_leaks_is_the_leak)
{
    const gint64 bytes[] = { 32, 32, 32, 32 }, blocks[] = { 1, 1, 1, 1 };
    g_autofree char *growth = report_of(SITE_LOST, bytes, blocks, 3);
    g_autoptr(GlAnalysis) alone = analyze_report(growth, TRUE, 1);
    ck_assert_ptr_nonnull(the_growth(alone));
    /* with the exit report of the fixture, which has it as a leak */
    g_autofree char *path = gl_test_fixture(FIXTURE "/" PID_FILE);
    g_autofree char *text = gl_test_read(path, NULL);
    const char *exit_report = strstr(text, "gemleak:exit\n");
    ck_assert_ptr_nonnull(exit_report);
    g_autofree char *head = g_strndup(growth, (gsize) (strstr(growth, "gemleak:exit\n") - growth));
    g_autofree char *both = g_strconcat(head, exit_report, NULL);
    g_autoptr(GlAnalysis) analysis = analyze_report(both, TRUE, 1);
    ck_assert_uint_eq(analysis->findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(analysis->findings, 0);
    ck_assert_ptr_null(finding->growth);
    ck_assert_str_eq(finding->record->kind, "Leak_DefinitelyLost");
}
END_TEST

/* A test that ended its runs part way (exit!, a fork that returned in
 * the child) is unmeasured, whatever it measured before: no series, not
 * counted as measured, named. */
START_TEST(test_test_that_ended_its_runs)
{
    const gint64 bytes[] = { 800, 800, 800, 800 }, blocks[] = { 50, 50, 50, 50 };
    g_autofree char *report = report_of(SITE_CACHE, bytes, blocks, 2);
    g_autofree char *head = g_strndup(report, (gsize) (strstr(report, "gemleak:growth\tmeasured") -
                                                       report));
    g_autofree char *ended = g_strconcat(head, "gemleak:growth\tunmeasured\t", TEST_MARKER,
                                         "\tit ended its runs (exit!)\n"
                                         "gemleak:growth\tmeasured\t0\ngemleak:exit\n"
                                         "gemleak:done\n", NULL);
    g_autoptr(GlAnalysis) analysis = analyze_report(ended, TRUE, 1);
    ck_assert_uint_eq(analysis->findings->len, 0);
    ck_assert_uint_eq(analysis->summary.growth_measured, 0);
    ck_assert_uint_eq(analysis->summary.growth_unmeasured->len, 1);
    ck_assert_str_eq(g_ptr_array_index(analysis->summary.growth_unmeasured, 0),
                     "CacheTest#test_add (/home/dev/growthgem/test/cache_test.rb:5): it ended its "
                     "runs (exit!)");
}
END_TEST

/* A real run under Valgrind (fixtures/xml/growth_ruby31.xml: Debian's Ruby
 * 3.1, fixtures/ext/growth_probe, the repetitions driven as the helper
 * drives them): the cache's malloc and strdup grow at each repetition, the
 * array that holds them doubles (+1024, +2048, 0), the TypedData structs
 * the test keeps are held; the memo, the ring, Ruby's strings and the
 * transient memory stay silent; only the exit check's records are read as
 * errors. */
START_TEST(test_real_valgrind_run)
{
    g_autofree char *path = gl_test_fixture("xml/growth_ruby31.xml");
    const char *paths[] = { path, NULL };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "growth_probe", NULL));
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(analysis->problems->len, 0);
    g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < analysis->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(analysis->findings, i);
        ck_assert_ptr_nonnull(finding->growth);
        const GlTest *test = g_ptr_array_index(finding->tests, 0);
        const GlFrame *frame = gl_record_first_target_frame(finding->record);
        GString *series = g_string_new(NULL);
        g_string_append_printf(series, "%s %s:%u %s", test->name, frame->fn, frame->line,
                               finding->growth->held ? "held" : "");
        for (guint r = 0; r < finding->growth->repetitions; r++)
            g_string_append_printf(series, " %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                   finding->growth->bytes[r], finding->growth->blocks[r]);
        g_ptr_array_add(found, g_string_free(series, FALSE));
    }
    g_ptr_array_sort(found, gl_compare_strings);
    g_ptr_array_add(found, NULL);
    g_autofree char *all = g_strjoinv("\n", (char **) found->pdata);
    ck_assert_str_eq(all, "CacheTest#test_add cache_add:24  1024/0 2048/0 0/0\n"
                          "CacheTest#test_add cache_add:26  800/50 800/50 800/50\n"
                          "CacheTest#test_add cache_add:29  390/50 390/50 390/50\n"
                          "ObjectsTest#test_wrap wrap:78 held 2400/50 2400/50 2400/50");
    ck_assert_uint_eq(analysis->summary.growth_measured, 3);
    ck_assert_uint_eq(analysis->summary.errors_seen, 72);
}
END_TEST

/* A test that leaks loses again in each of its repetitions what its first
 * run lost: the leak at exit is the first run's, its count as without
 * --growth. Captured: the example gem's words_test.rb under Valgrind with
 * --growth (WordsTest#test_count loses 6 bytes a run; at exit, 6 bytes on
 * the suite's way in and 18 on the repetitions', the helper's). */
START_TEST(test_leak_lost_again_is_counted_once)
{
    g_autofree char *xml = gl_test_fixture("xml/growth_leak_lost_again.xml");
    const char *paths[] = { xml, NULL };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "tally.so", NULL));
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(analysis->findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(analysis->findings, 0);
    ck_assert_ptr_null(finding->growth);
    ck_assert_uint_eq(finding->total_bytes, 6);
    ck_assert_uint_eq(finding->total_blocks, 1);
    ck_assert_uint_eq(finding->occurrences, 1);
}
END_TEST

/* A site's frames as the runtime symbolized them (gemleak's frame format)
 * read as a leak's would: the extension's function at its file and line,
 * which a Valgrind run of the same test names too (same fingerprint).
 * Captured: fixtures/lsan/growth-symbolized-ruby34. */
START_TEST(test_symbolized_site_has_its_line)
{
    g_autofree char *dir = gl_test_fixture("lsan/growth-symbolized-ruby34");
    const char *paths[] = { dir, NULL };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "growth.so", NULL));
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(analysis->findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(analysis->findings, 0);
    ck_assert_ptr_nonnull(finding->growth);
    const GlFrame *frame = gl_record_first_target_frame(finding->record);
    ck_assert_ptr_nonnull(frame);
    ck_assert_str_eq(frame->fn, "journal_append");
    ck_assert_str_eq(gl_base_name(frame->file), "growth.c");
    ck_assert_uint_eq(frame->line, 81);
    ck_assert_int_eq(finding->growth->bytes[0], 1600);
    ck_assert_int_eq(finding->growth->bytes[1], 800);
    ck_assert_int_eq(finding->growth->blocks[1], 0);
}
END_TEST

Suite *gl_growth_suite(void)
{
    Suite *suite = suite_create("growth");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_statistic_on_every_shape);
    tcase_add_test(tc, test_growth_in_words);
    tcase_add_test(tc, test_steady_growth_is_a_finding);
    tcase_add_test(tc, test_doubling_table_grows);
    tcase_add_test(tc, test_realloc_larger_grows);
    tcase_add_test(tc, test_silent_shapes);
    tcase_add_test(tc, test_data_structs_are_held);
    tcase_add_test(tc, test_min_bytes);
    tcase_add_test(tc, test_gate_on_growth);
    tcase_add_test(tc, test_growth_run_directory);
    tcase_add_test(tc, test_nothing_measured_is_incomplete);
    tcase_add_test(tc, test_samples_of_every_kind);
    tcase_add_test(tc, test_site_that_also_leaks_is_the_leak);
    tcase_add_test(tc, test_test_that_ended_its_runs);
    tcase_add_test(tc, test_real_valgrind_run);
    tcase_add_test(tc, test_leak_lost_again_is_counted_once);
    tcase_add_test(tc, test_symbolized_site_has_its_line);
    suite_add_tcase(suite, tc);
    return suite;
}
