/* The judges that were the readers' and the command line's: stacks that
 * cannot decide (judge/stacks.h), lost cycles read as indirect
 * (judge/cycles.h), whether a run checked what it ran (judge/coverage.h)
 * and a baseline adopting the findings (judge/gate.h). No CLI. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/coverage.h"
#include "gemleak/judge/cycles.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/stacks.h"

#include <signal.h>

#define LIBLSAN "/usr/lib/gcc/x86_64-linux-gnu/12/liblsan.so"
#define LIBZ "/usr/lib/x86_64-linux-gnu/libz.so.1"
#define LEAKY "/work/ext/leaky.so"

/* A sanitizer's process: its unwinder may give up, it hides modules. */
static GlProcess sanitizer_process(void)
{
    GlProcess process = { .stands_for = 1, .pid = 42 };
    process.traits.stack_limit = 30;
    process.traits.hidden_frames = 2;
    process.traits.modules_hidden = " (hidden)";
    process.traits.cycles_indirect = TRUE;
    return process;
}

static GlRules *leaky_rules(void)
{
    GlRules *rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    return rules;
}

/* ---- stacks ----------------------------------------------------------------------- */

/* A leak whose stack stops two frames in, short of main and of the depth
 * limit, cannot say whose memory it is: kept, uncertain, never a pass;
 * Valgrind's stacks are whole, and the rules decide the same record. */
START_TEST(test_stack_cut_short_is_kept_uncertain)
{
    g_autoptr(GlRules) rules = leaky_rules();
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    GlProcess sanitizer = sanitizer_process();
    GlProcess valgrind = { .stands_for = 1, .pid = 42 };
    gboolean unplaced = TRUE;

    g_autoptr(GlRecord) cut = gl_test_record("Leak_DefinitelyLost", "malloc@" LIBLSAN,
                                             "deflateInit2_@" LIBZ, NULL);
    ck_assert_int_eq(gl_stacks_verdict(classifier, cut, &sanitizer, &unplaced), GL_VERDICT_KEEP);
    ck_assert(cut->uncertain);
    ck_assert_uint_eq(cut->stack_cut, 2);
    ck_assert(!unplaced);

    g_autoptr(GlRecord) same = gl_test_record("Leak_DefinitelyLost", "malloc@" LIBLSAN,
                                              "deflateInit2_@" LIBZ, NULL);
    ck_assert_int_eq(gl_stacks_verdict(classifier, same, &valgrind, &unplaced),
                     GL_VERDICT_SKIP_NO_TARGET);
    ck_assert_uint_eq(same->stack_cut, 0);

    /* a whole stack, to main: the rules' verdict */
    g_autoptr(GlRecord) whole = gl_test_record("Leak_DefinitelyLost", "malloc@" LIBLSAN,
                                               "deflateInit2_@" LIBZ, "main@/usr/bin/ruby", NULL);
    ck_assert_int_eq(gl_stacks_verdict(classifier, whole, &sanitizer, &unplaced),
                     GL_VERDICT_SKIP_NO_TARGET);
    ck_assert_uint_eq(whole->stack_cut, 0);

    /* an error is never cut */
    g_autoptr(GlRecord) error = gl_test_record("InvalidRead", "f@" LIBZ, NULL);
    ck_assert_int_eq(gl_stacks_verdict(classifier, error, &sanitizer, &unplaced),
                     GL_VERDICT_SKIP_NO_TARGET);
    ck_assert_uint_eq(error->stack_cut, 0);
}
END_TEST

/* A frame with a source line and no module, where the output hides
 * modules, cannot be told to be the extension's: said, never silent. */
START_TEST(test_frames_without_module)
{
    g_autoptr(GlRules) rules = leaky_rules();
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    GlProcess sanitizer = sanitizer_process();
    GlProcess valgrind = { .stands_for = 1, .pid = 42 };
    gboolean unplaced = FALSE;
    g_autoptr(GlRecord) record = gl_test_record("InvalidRead", "leaky_read@:leaky.c:12",
                                                "main@/usr/bin/ruby", NULL);
    ck_assert_int_eq(gl_stacks_verdict(classifier, record, &sanitizer, &unplaced),
                     GL_VERDICT_SKIP_NO_TARGET);
    ck_assert(unplaced);
    ck_assert_int_eq(gl_stacks_verdict(classifier, record, &valgrind, &unplaced),
                     GL_VERDICT_SKIP_NO_TARGET);
    ck_assert(!unplaced);
}
END_TEST

/* The run has as many stacks cut short as findings show: never a pass. */
START_TEST(test_findings_cut_short_are_a_problem)
{
    g_autoptr(GPtrArray) findings = g_ptr_array_new_with_free_func(NULL);
    GlRecord *cut = gl_test_record("Leak_DefinitelyLost", "f@" LEAKY, NULL);
    cut->stack_cut = 1;
    GlRecord *whole = gl_test_record("Leak_DefinitelyLost", "f@" LEAKY, NULL);
    GlFinding *one = gl_finding_new(cut, 0), *two = gl_finding_new(whole, 1);
    g_ptr_array_add(findings, one);
    g_ptr_array_add(findings, two);
    ck_assert_uint_eq(gl_stacks_cut_short(findings), 1);
    ck_assert_ptr_null(gl_stacks_cut_short_problem(0));
    g_autoptr(GError) problem = gl_stacks_cut_short_problem(1);
    ck_assert(g_error_matches(problem, GL_ERROR, GL_ERROR_LIMIT));
    gl_assert_line(problem->message, "^1 finding whose stack the unwinder cut short of main: "
                                     "gemleak cannot tell whether the extension lost it");
    g_autoptr(GError) two_cut = gl_stacks_cut_short_problem(2);
    gl_assert_line(two_cut->message, "^2 findings whose stack .* lost them,");
    /* findings are the table's to free: these two are the test's */
    for (guint i = 0; i < findings->len; i++) {
        GlFinding *finding = g_ptr_array_index(findings, i);
        g_ptr_array_unref(finding->sites);
        g_array_unref(finding->pids);
        g_ptr_array_unref(finding->tests);
        g_free(finding);
    }
}
END_TEST

/* ---- lost cycles ------------------------------------------------------------------ */

/* Two blocks that point at each other, both "indirect" to LeakSanitizer:
 * one allocated in a call of the target that allocated no direct leak is
 * a cycle's, promoted to definite; one allocated under a function that
 * also allocated a direct leak is that structure's. */
START_TEST(test_lost_cycles_promoted)
{
    g_autoptr(GlRules) rules = leaky_rules();
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    g_autoptr(GlCycles) cycles = gl_cycles_new(rules);
    GlProcess process = sanitizer_process();
    gboolean unplaced = FALSE;

    g_autoptr(GlRecord) direct = gl_test_record("Leak_DefinitelyLost", "malloc@" LIBLSAN,
                                                "leaky_new@" LEAKY, "main@/usr/bin/ruby", NULL);
    GlVerdict verdict = gl_stacks_verdict(classifier, direct, &process, &unplaced);
    ck_assert_int_eq(verdict, GL_VERDICT_KEEP);
    ck_assert(!gl_cycles_note(cycles, direct, verdict));

    g_autoptr(GlRecord) cycle = gl_test_record("Leak_IndirectlyLost", "malloc@" LIBLSAN,
                                               "leaky_ring@" LEAKY, "main@/usr/bin/ruby", NULL);
    verdict = gl_stacks_verdict(classifier, cycle, &process, &unplaced);
    ck_assert_int_eq(verdict, GL_VERDICT_SKIP_KIND);
    ck_assert(gl_cycles_note(cycles, cycle, verdict));

    g_autoptr(GlRecord) part = gl_test_record("Leak_IndirectlyLost", "malloc@" LIBLSAN,
                                              "leaky_new@" LEAKY, "main@/usr/bin/ruby", NULL);
    verdict = gl_stacks_verdict(classifier, part, &process, &unplaced);
    ck_assert(gl_cycles_note(cycles, part, verdict));

    /* an indirect leak of no target's is no cycle of the extension's */
    g_autoptr(GlRecord) ruby = gl_test_record("Leak_IndirectlyLost", "malloc@" LIBLSAN,
                                              "main@/usr/bin/ruby", NULL);
    verdict = gl_stacks_verdict(classifier, ruby, &process, &unplaced);
    ck_assert(!gl_cycles_note(cycles, ruby, verdict));

    ck_assert(gl_cycles_promote(cycles, cycle));
    ck_assert_int_eq(cycle->leak_kind, GL_LEAK_DEFINITE);
    ck_assert_str_eq(cycle->kind, "Leak_DefinitelyLost");
    ck_assert_int_eq(gl_stacks_verdict(classifier, cycle, &process, &unplaced), GL_VERDICT_KEEP);
    ck_assert(!gl_cycles_promote(cycles, part));
    ck_assert_int_eq(part->leak_kind, GL_LEAK_INDIRECT);

    /* with indirect leaks asked for, every block is shown as it is */
    gl_rules_set_leak_kinds(rules, GL_LEAK_DEFINITE | GL_LEAK_INDIRECT);
    g_autoptr(GlCycles) shown = gl_cycles_new(rules);
    ck_assert(!gl_cycles_note(shown, part, GL_VERDICT_SKIP_KIND));
}
END_TEST

/* ---- coverage -------------------------------------------------------------------- */

/* Returns: (transfer full): a run directory of an engine whose reports
 * prove each check, where processes 5, 6 and 7 ran the helper, 5 and 6
 * loading the extension. */
static char *proof_run(void)
{
    char *dir = gl_test_tmpdir();
    g_autofree char *engine = g_build_filename(dir, "engine.txt", NULL);
    gl_test_write(engine, "LeakSanitizer\nname lsan\nproof yes\nsilent-when-clean yes\n", -1);
    for (guint pid = 5; pid <= 7; pid++) {
        g_autofree char *name = g_strdup_printf("loaded-%u.txt", pid);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        gl_test_write(path, pid < 7 ? LEAKY "\n" : "", -1);
    }
    return dir;
}

static void coverage_init(GlRunCoverage *coverage, guint checked)
{
    memset(coverage, 0, sizeof *coverage);
    coverage->unchecked = g_ptr_array_new_with_free_func(g_free);
    coverage->engine = g_strdup("LeakSanitizer");
    coverage->runs = 1;
    coverage->lists = 3;
    coverage->checked = checked;
}

/* A process that loaded the extension counts as checked only with its
 * report's word that the check ran to its end; why not is said. */
START_TEST(test_checked_only_with_proof)
{
    g_autofree char *dir = proof_run();
    const char *inputs[] = { dir, NULL };
    g_autoptr(GHashTable) proof = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_hash_table_insert(proof, GINT_TO_POINTER(5), GINT_TO_POINTER(TRUE));
    g_auto(GlRunCoverage) coverage;
    coverage_init(&coverage, 2);
    gl_coverage_require_proof(inputs, proof, NULL, &coverage);
    ck_assert_uint_eq(coverage.checked, 1);
    ck_assert_uint_eq(coverage.unchecked->len, 1);
    ck_assert_str_eq(g_ptr_array_index(coverage.unchecked, 0),
                     "process 6: it loaded " LEAKY ", and LeakSanitizer's leak check did not run "
                     "to its end in it: it left no report: it was killed or crashed before its "
                     "check, ended with _exit, or could not write the report (a full disk)");

    /* a report that stops before the check's end, and a process a signal killed */
    g_hash_table_insert(proof, GINT_TO_POINTER(6), GINT_TO_POINTER(FALSE));
    g_autoptr(GHashTable) killed = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_hash_table_insert(killed, GINT_TO_POINTER(5), GINT_TO_POINTER(SIGKILL));
    g_hash_table_remove(proof, GINT_TO_POINTER(5));
    g_auto(GlRunCoverage) again;
    coverage_init(&again, 2);
    gl_coverage_require_proof(inputs, proof, killed, &again);
    ck_assert_uint_eq(again.checked, 0);
    ck_assert_uint_eq(again.unchecked->len, 2);
    ck_assert_str_eq(g_ptr_array_index(again.unchecked, 0),
                     "process 5: it loaded " LEAKY ", and was killed by SIGKILL before "
                     "LeakSanitizer's leak check ran");
    gl_assert_line((const char *) g_ptr_array_index(again.unchecked, 1),
                   "^process 6: .*: its report ends before the check's end");

    /* a process already said to be unchecked is said once */
    gl_coverage_require_proof(inputs, proof, killed, &again);
    ck_assert_uint_eq(again.unchecked->len, 2);

    /* an engine without proof (Valgrind's): its XML is its proof */
    g_autofree char *engine = g_build_filename(dir, "engine.txt", NULL);
    gl_test_write(engine, "Valgrind\nname valgrind\n", -1);
    g_auto(GlRunCoverage) valgrind;
    coverage_init(&valgrind, 2);
    gl_coverage_require_proof(inputs, proof, NULL, &valgrind);
    ck_assert_uint_eq(valgrind.checked, 2);
    ck_assert_uint_eq(valgrind.unchecked->len, 0);
    gl_remove_tree(dir);
}
END_TEST

/* The extensions a run loaded that were not built for its engine, found
 * by one scan (gemleak run's note and the run's problem both come from
 * it): each once, with how many processes loaded it; what cannot be read
 * as ELF is not said to lack the symbols. */
START_TEST(test_uninstrumented_extensions)
{
    g_autofree char *glib = gl_test_mapped_library("libglib-2.0.so");
    g_autofree char *zlib = gl_test_mapped_library("libz.so");
    ck_assert_ptr_nonnull(glib);
    ck_assert_ptr_nonnull(zlib);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *text = g_build_filename(dir, "not-elf.so", NULL);
    gl_test_write(text, "not an ELF file at all", -1);
    /* process 10 loaded zlib; 11, GLib and zlib; 12, neither; each, the text file */
    g_autofree char *ten = g_strdup_printf("%s\n%s\n", zlib, text);
    g_autofree char *eleven = g_strdup_printf("%s\n%s\n%s\n", glib, text, zlib);
    g_autofree char *twelve = g_strdup_printf("%s\n", text);
    const char *lists[][2] = { { "loaded-10.txt", ten }, { "loaded-11.txt", eleven },
                               { "loaded-12.txt", twelve } };
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++) {
        g_autofree char *path = g_build_filename(dir, lists[i][0], NULL);
        gl_test_write(path, lists[i][1], -1);
    }
    g_autoptr(GArray) loaded_by = NULL;
    guint processes = 0;
    g_autoptr(GPtrArray) bare = gl_coverage_uninstrumented(dir, "__asan_", NULL, &loaded_by,
                                                           &processes);
    ck_assert_uint_eq(bare->len, 2);
    ck_assert_uint_eq(loaded_by->len, 2);
    ck_assert_uint_eq(processes, 2);
    for (guint i = 0; i < bare->len; i++) {
        const char *path = g_ptr_array_index(bare, i);
        ck_assert(strcmp(path, zlib) == 0 || strcmp(path, glib) == 0);
        ck_assert_uint_eq(g_array_index(loaded_by, guint, i), (strcmp(path, zlib) == 0 ? 2 : 1));
    }
    /* the outs are optional */
    g_autoptr(GPtrArray) again = gl_coverage_uninstrumented(dir, "__asan_", NULL, NULL, NULL);
    ck_assert_uint_eq(again->len, 2);

    /* the run's problems, one an extension, for an engine that says it
     * sees into only what was built for it */
    g_autofree char *engine = g_build_filename(dir, "engine.txt", NULL);
    const char *inputs[] = { dir, NULL };
    g_autoptr(GPtrArray) none = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    gl_test_write(engine, "LeakSanitizer\nname lsan\n", -1);
    ck_assert_uint_eq(gl_coverage_require_instrumented(inputs, NULL, none), 0);
    ck_assert_uint_eq(none->len, 0);
    g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    gl_test_write(engine, "AddressSanitizer\nname asan\ninstrumented __asan_\n", -1);
    ck_assert_uint_eq(gl_coverage_require_instrumented(inputs, NULL, problems), 2);
    ck_assert_uint_eq(problems->len, 2);
    g_autofree char *zlib_problem = g_strdup_printf(
        "%s was not built with AddressSanitizer (no __asan_ symbol in it): its invalid reads and "
        "writes, and its reads of freed memory, were not checked in the processes that loaded "
        "it", zlib);
    g_autofree char *glib_problem = g_strdup_printf(
        "%s was not built with AddressSanitizer (no __asan_ symbol in it): its invalid reads and "
        "writes, and its reads of freed memory, were not checked in the process that loaded it",
        glib);
    for (guint i = 0; i < problems->len; i++) {
        const GError *problem = g_ptr_array_index(problems, i);
        ck_assert(problem->code == GL_ERROR_CHILD);
        ck_assert_str_eq(problem->message, strcmp(g_ptr_array_index(bare, i), zlib) == 0
                                               ? zlib_problem : glib_problem);
    }
    gl_remove_tree(dir);
}
END_TEST

/* Issue 37 (item 7): whether an extension was built for the engine is
 * what the run recorded, when it did: a kept AddressSanitizer directory
 * whose plain build was since rebuilt with the flags, or is gone (another
 * machine), still says its run did not see into it; one the run recorded
 * as built stays so whatever the file is now. What is read from disk is
 * recorded. */
START_TEST(test_instrumented_as_recorded)
{
    g_autofree char *zlib = gl_test_mapped_library("libz.so");
    ck_assert_ptr_nonnull(zlib);
    g_autofree char *dir = gl_test_tmpdir();
    const char *gone = "/nowhere/plain.so";
    g_autofree char *list = g_strdup_printf("%s\n%s\n", zlib, gone);
    g_autofree char *loaded = g_build_filename(dir, "loaded-10.txt", NULL);
    gl_test_write(loaded, list, -1);

    /* the run: what disk says of zlib is recorded; a file that cannot be
     * read says nothing */
    g_autoptr(GlRunRecord) run = gl_run_record_new();
    g_autoptr(GPtrArray) bare = gl_coverage_uninstrumented(dir, "__asan_", run, NULL, NULL);
    ck_assert_uint_eq(bare->len, 1);
    gboolean instrumented = TRUE;
    ck_assert(gl_run_record_instrumented(run, zlib, &instrumented));
    ck_assert(!instrumented);
    ck_assert(!gl_run_record_instrumented(run, gone, &instrumented));

    /* read again: as the record says, whatever the files are now */
    g_autoptr(GlRunRecord) recorded = gl_run_record_new();
    gl_run_record_set_instrumented(recorded, zlib, TRUE);
    gl_run_record_set_instrumented(recorded, gone, FALSE);
    g_autoptr(GPtrArray) later = gl_coverage_uninstrumented(dir, "__asan_", recorded, NULL, NULL);
    ck_assert_uint_eq(later->len, 1);
    ck_assert_str_eq(g_ptr_array_index(later, 0), gone);
    gl_remove_tree(dir);
}
END_TEST

/* A run in which no process under the engine loaded a target checked
 * nothing: never a pass. */
START_TEST(test_checked_nothing)
{
    g_autoptr(GlRules) rules = leaky_rules();
    g_autoptr(GHashTable) objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_add(objects, g_strdup("/usr/lib/libruby.so.3.4"));
    ck_assert(!gl_coverage_targets_seen(rules, objects));
    g_hash_table_add(objects, g_strdup(LEAKY));
    ck_assert(gl_coverage_targets_seen(rules, objects));

    g_auto(GlRunCoverage) coverage;
    coverage_init(&coverage, 0);
    ck_assert(gl_coverage_checked_nothing(&coverage, TRUE, FALSE));
    ck_assert(gl_coverage_checked_nothing(&coverage, FALSE, FALSE));
    /* a record in a target shows a process under the engine loaded it */
    ck_assert(!gl_coverage_checked_nothing(&coverage, TRUE, TRUE));
    g_autoptr(GError) problem = gl_coverage_checked_nothing_problem(&coverage, "leaky");
    ck_assert(g_error_matches(problem, GL_ERROR, GL_ERROR_CHILD));
    gl_assert_line(problem->message, "^nothing was checked: no process under LeakSanitizer "
                                     "loaded leaky \\(does the command run the tests\\? the Ruby "
                                     "processes gemleak's helper ran in loaded none of them\\)$");
    coverage.checked = 1;
    ck_assert(!gl_coverage_checked_nothing(&coverage, TRUE, FALSE));
    coverage.checked = 0;
    g_ptr_array_add(coverage.unchecked, g_strdup("process 1: it loaded " LEAKY " outside"));
    ck_assert(!gl_coverage_checked_nothing(&coverage, TRUE, FALSE));
    /* XML read without a run (gemleak filter of files kept elsewhere) */
    g_auto(GlRunCoverage) files;
    coverage_init(&files, 0);
    files.runs = files.lists = 0;
    ck_assert(!gl_coverage_checked_nothing(&files, FALSE, FALSE));
    g_autoptr(GError) helperless = gl_coverage_checked_nothing_problem(&files, "leaky");
    gl_assert_line(helperless->message, "no Ruby process ran with gemleak's helper");
}
END_TEST

/* ---- the gate --------------------------------------------------------------------- */

/* Writing a baseline adopts the findings there are: the run passes unless
 * --fail-on asks otherwise. */
START_TEST(test_baseline_adopts_the_findings)
{
    GlGate gate;
    gl_gate_init(&gate);
    ck_assert(!gl_gate_adopt(&gate, FALSE, FALSE));
    ck_assert(!gl_gate_adopt(&gate, TRUE, TRUE));
    ck_assert_int_eq(gate.leak_kinds, GL_LEAK_DEFINITE);
    ck_assert(gl_gate_adopt(&gate, TRUE, FALSE));
    ck_assert_int_eq(gate.leak_kinds, 0);
    ck_assert(!gate.errors);

    g_autoptr(GPtrArray) findings = g_ptr_array_new();
    GlRecord *record = gl_test_record("Leak_DefinitelyLost", "f@" LEAKY, NULL);
    GlFinding *finding = gl_finding_new(record, 0);
    finding->certain = TRUE;
    g_ptr_array_add(findings, finding);
    GlGateResult result;
    gl_gate_evaluate(&gate, findings, 0, 0, FALSE, NULL, &result);
    ck_assert(!result.failed);
    gl_gate_result_clear(&result);
    g_autofree char *line = gl_gate_adopted_line(1, ".gemleak-baseline.json");
    ck_assert_str_eq(line, "gemleak: pass: 1 finding written to the baseline "
                           ".gemleak-baseline.json (with --fail-on they fail this run too)");
    g_autofree char *lines = gl_gate_adopted_line(3, "b.json");
    gl_assert_line(lines, "^gemleak: pass: 3 findings written");
    g_ptr_array_unref(finding->sites);
    g_array_unref(finding->pids);
    g_ptr_array_unref(finding->tests);
    g_free(finding);
}
END_TEST

Suite *gl_judges_suite(void)
{
    Suite *suite = suite_create("judges");
    TCase *tc = tcase_create("judges");
    tcase_add_test(tc, test_stack_cut_short_is_kept_uncertain);
    tcase_add_test(tc, test_frames_without_module);
    tcase_add_test(tc, test_findings_cut_short_are_a_problem);
    tcase_add_test(tc, test_lost_cycles_promoted);
    tcase_add_test(tc, test_checked_only_with_proof);
    tcase_add_test(tc, test_uninstrumented_extensions);
    tcase_add_test(tc, test_instrumented_as_recorded);
    tcase_add_test(tc, test_checked_nothing);
    tcase_add_test(tc, test_baseline_adopts_the_findings);
    suite_add_tcase(suite, tc);
    return suite;
}
