/* One input through the judges (judgement.h). */
#include "gemleak/judge/judgement.h"
#include <glib/gstdio.h>
#include "gemleak/read/symbolize.h"
#include "gemleak/judge/structures.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/attribute.h"
#include "gemleak/judge/checks.h"
#include "gemleak/judge/cycles.h"
#include "gemleak/judge/owners.h"
#include "gemleak/judge/stacks.h"
#include "gemleak/read/run_dir.h"

#include <string.h>

/* A record kept until its process's output ends: under an output whose
 * checks or lost cycles only the whole process decides, the records reach
 * the attribution in the order they were read, once they all are final.
 * Only a leak that follows a leak not final yet waits: a process without
 * checks while it ran nor lost cycles holds nothing, and errors never wait
 * (an AddressSanitizer that goes on after errors writes thousands). */
typedef struct {
    GlRecord *record;
    guint64 order;
    GlVerdict verdict;
    gboolean candidate;   /* a lost cycle's block, maybe (cycles.h): counted once decided */
} Held;

/* One input being judged. */
typedef struct {
    GlJudgement *out;
    const char *path;
    const GlRules *rules;
    const GlProcess *process;
    guint64 base;
    GlClassifier *classifier;
    GlAttributor *attributor;
    GlChecks *checks;     /* nullable: the output's checks are Valgrind's already */
    GlCycles *cycles;     /* nullable: the output tells lost cycles as Valgrind does */
    GlGrowthJudge *growth;
    GArray *held;         /* of Held, nullable: records go to the attribution at once */
    gboolean learned;
    gint64 learned_pid;
    gboolean unjudged;    /* its process ran a Ruby older than the engine needs: its
                           * records are not judged (the run's coverage says it was not
                           * checked) */
    gboolean leaks_unjudged; /* ... older than the engine checks leaks on: its leak records
                              * are not judged, and a note says so */
    guint unplaced;       /* records skipped with frames whose module is not named */
} Judging;

void gl_judgement_init(GlJudgement *judgement)
{
    memset(judgement, 0, sizeof *judgement);
    judgement->findings = gl_findings_new();
    judgement->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    judgement->notes = g_ptr_array_new_with_free_func(g_free);
    judgement->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

void gl_judgement_clear(GlJudgement *judgement)
{
    if (judgement->findings != NULL)
        gl_findings_free(judgement->findings);
    if (judgement->problems != NULL)
        g_ptr_array_unref(judgement->problems);
    if (judgement->notes != NULL)
        g_ptr_array_unref(judgement->notes);
    if (judgement->suppressed != NULL)
        g_hash_table_unref(judgement->suppressed);
    if (judgement->objects != NULL)
        g_hash_table_unref(judgement->objects);
    if (judgement->report_truncated != NULL)
        g_ptr_array_unref(judgement->report_truncated);
    gl_growth_counts_clear(&judgement->growth);
    memset(judgement, 0, sizeof *judgement);
}

/* ---- what the helper said of the process ------------------------------------------- */

/* Tells the classifier what the helper wrote of process @pid beside the
 * input (in a run directory): whether its Ruby freed its own memory at
 * exit, and whether it is one the run's engine gives true verdicts on. */
static void learn_process(Judging *j, GlInput *input, gint64 pid)
{
    j->learned = TRUE;
    j->learned_pid = pid;
    const char *dir = gl_input_dir(input);
    if (dir == NULL)
        return;
    GlProcessFacts facts;
    gl_process_facts_read(dir, pid, &facts);
    g_auto(GlEngineFacts) run = { 0 };
    gl_engine_facts_read(dir, &run);
    j->out->free_at_exit = facts.free_at_exit;
    j->out->recent_unkept = facts.recent_unkept;
    j->unjudged = run.min_ruby != NULL && facts.ruby_version[0] != '\0' &&
                  !gl_ruby_version_at_least(facts.ruby_version, run.min_ruby);
    j->leaks_unjudged = run.leaks_min_ruby != NULL && facts.ruby_version[0] != '\0' &&
                        !gl_ruby_version_at_least(facts.ruby_version, run.leaks_min_ruby);
    if (j->leaks_unjudged)
        g_ptr_array_add(j->out->notes, g_strdup_printf(
            "process %" G_GINT64_FORMAT " ran Ruby %s: its leaks are not judged (%s); its memory "
            "errors are", pid, facts.ruby_version,
            run.leaks_min_ruby_why != NULL ? run.leaks_min_ruby_why : "too old a Ruby"));
    gl_classifier_set_free_at_exit(j->classifier, facts.free_at_exit);
    gl_classifier_set_frame_pointers(j->classifier, facts.frame_pointers);
}

/* ---- records --------------------------------------------------------------------------- */

static void count(Judging *j, const GlRecord *record, GlVerdict verdict)
{
    /* a copy that says which test allocated blocks is no error of its own */
    if (record->attribution_only)
        return;
    j->out->errors_seen++;
    j->out->by_verdict[verdict]++;
}

/* Hands @record, kept, to the attributor, with the order in which its
 * process's tests ran. */
static void attribute(Judging *j, GlRecord *record, guint64 order)
{
    gl_attributor_set_test_order(j->attributor, j->process->test_order);
    gl_attributor_add(j->attributor, record, j->base | (order & 0xffffffffu));
}

static void hold(Judging *j, GlRecord *record, guint64 order, GlVerdict verdict,
                 gboolean candidate)
{
    Held held = { record, order, verdict, candidate };
    g_array_append_val(j->held, held);
}

/* Judges @record, read at @order, and hands it on (kept) or frees it. */
static void judge_record(Judging *j, GlRecord *record, guint64 order)
{
    gboolean unplaced = FALSE;
    gboolean skip = j->unjudged || (j->leaks_unjudged && record->leak_kind != GL_LEAK_NONE);
    GlVerdict verdict = skip ? GL_VERDICT_SKIP_UNJUDGED
                             : gl_stacks_verdict(j->classifier, record, j->process, &unplaced);
    j->unplaced += unplaced;
    if (j->cycles != NULL && !j->unjudged && !j->leaks_unjudged &&
        gl_cycles_note(j->cycles, record, verdict)) {
        hold(j, record, order, verdict, TRUE);
        return;
    }
    count(j, record, verdict);
    /* The engine saw the process die of a signal. */
    if (j->process->fatal_signal && strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0)
        g_ptr_array_add(j->out->notes, g_strdup_printf("%s: process %" G_GINT64_FORMAT " died: %s",
                                                       j->path, record->pid, record->what));
    /* A leak waits behind a leak not final yet (a check's, a cycle's
     * block), whose loss record or finding it may share; an error shares
     * neither with a leak, and goes on at once. */
    if (verdict != GL_VERDICT_KEEP)
        gl_record_free(record);
    else if (j->held != NULL && record->leak_kind != GL_LEAK_NONE &&
             (j->held->len > 0 || j->cycles != NULL ||
              (j->checks != NULL && gl_checks_held(j->checks) > 0)))
        hold(j, record, order, verdict, FALSE);
    else
        attribute(j, record, order);
}

/* Judges @record and, before it, the copies that say which tests
 * allocated its blocks; @order is where the next one was read. */
static void take(Judging *j, GlRecord *record, guint64 *order)
{
    g_autoptr(GPtrArray) copies = gl_owners_copies(record, j->process->owners, j->process->origin,
                                                     j->checks);
    for (guint i = 0; copies != NULL && i < copies->len; i++)
        judge_record(j, g_steal_pointer(&copies->pdata[i]), (*order)++);
    judge_record(j, record, (*order)++);
}

static gint compare_held(gconstpointer a, gconstpointer b)
{
    const Held *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The end of a process whose records were held: the checks while it ran
 * confirmed, the lost cycles decided, then the attribution in read order. */
static void settle(Judging *j)
{
    if (j->checks != NULL) {
        g_autoptr(GArray) confirmed = gl_checks_finish(j->checks, j->process->reached_exit);
        for (guint i = 0; i < confirmed->len; i++) {
            GlOrdered *one = &g_array_index(confirmed, GlOrdered, i);
            judge_record(j, g_steal_pointer(&one->record), one->order);
        }
        j->out->not_lost = gl_checks_not_lost(j->checks);
    }
    if (j->held == NULL)
        return;
    for (guint i = 0; i < j->held->len; i++) {
        Held *held = &g_array_index(j->held, Held, i);
        if (!held->candidate)
            continue;
        gboolean unplaced = FALSE;
        if (gl_cycles_promote(j->cycles, held->record))
            held->verdict = gl_stacks_verdict(j->classifier, held->record, j->process, &unplaced);
        count(j, held->record, held->verdict);
    }
    g_array_sort(j->held, compare_held);
    /* Valgrind's numbers: a structure's indirect blocks in its direct leak
     * (structures.h), where the engine reports them apart */
    if (j->cycles != NULL) {
        g_autoptr(GPtrArray) records = g_ptr_array_sized_new(j->held->len);
        for (guint i = 0; i < j->held->len; i++)
            g_ptr_array_add(records, g_array_index(j->held, Held, i).record);
        gl_structures_attach(records);
    }
    for (guint i = 0; i < j->held->len; i++) {
        Held *held = &g_array_index(j->held, Held, i);
        if (held->verdict == GL_VERDICT_KEEP)
            attribute(j, held->record, held->order);
        else
            gl_record_free(held->record);
    }
    g_array_set_size(j->held, 0);
}

/* A finding of an input already judged, merged as it was. */
static void add_judged(GlFindings *findings, GlRecord *record, guint64 order)
{
    GlJudged *judged = g_steal_pointer(&record->judged);
    gboolean certain = !record->uncertain;
    GlFinding *finding = gl_finding_new(record, order);
    finding->occurrences = judged->occurrences;
    finding->total_bytes = judged->total_bytes;
    finding->total_blocks = judged->total_blocks;
    finding->direct_bytes = judged->direct_bytes;
    finding->certain = certain;
    for (guint i = 0; i < judged->pids->len; i++)
        gl_pids_add(finding->pids, g_array_index(judged->pids, gint64, i));
    for (guint i = 0; i < judged->tests->len && finding->tests->len < GL_FINDING_MAX_TESTS; i++)
        g_ptr_array_add(finding->tests, g_steal_pointer(&judged->tests->pdata[i]));
    finding->more_tests = judged->more_tests || judged->tests->len > GL_FINDING_MAX_TESTS;
    finding->lost_before_tests = judged->lost_before_tests;
    finding->lost_at_exit = judged->lost_at_exit;
    finding->found_again = judged->found_again;
    finding->allocated_in_tests = judged->allocated_in_tests;
    finding->among = judged->among;
    finding->among_first = g_steal_pointer(&judged->among_first);
    finding->among_last = g_steal_pointer(&judged->among_last);
    if (judged->growth_repetitions > 0) {
        finding->growth = g_new0(GlGrowth, 1);
        finding->growth->repetitions = judged->growth_repetitions;
        finding->growth->bytes = g_steal_pointer(&judged->growth_bytes);
        finding->growth->blocks = g_steal_pointer(&judged->growth_blocks);
        finding->growth->median_bytes = judged->growth_median_bytes;
        finding->growth->held = judged->growth_held;
        finding->growth->lost = judged->growth_lost;
    }
    /* Every place a freed block was used: the one shown is among them. */
    for (guint i = 0; finding->freed_block && judged->sites != NULL && i < judged->sites->len; i++)
        gl_finding_add_site(finding, g_steal_pointer(&judged->sites->pdata[i]));
    gl_findings_add_finding(findings, finding);
    gl_judged_free(judged);
}

/* Returns: (transfer full): a copy of @strings (char*), which frees its own. */
static GPtrArray *copy_strings(const GPtrArray *strings)
{
    GPtrArray *copy = g_ptr_array_new_full(strings->len, g_free);
    for (guint i = 0; i < strings->len; i++)
        g_ptr_array_add(copy, g_strdup(g_ptr_array_index(strings, i)));
    return copy;
}

/* An input already judged: its counts and what its run could not check,
 * as it wrote them. */
static void take_run(GlJudgement *out, const GlJudgedRun *run, const char *path)
{
    out->processes = run->processes;
    out->errors_seen = run->errors_seen;
    out->by_verdict[GL_VERDICT_SKIP_KIND] = run->other_leak_kinds;
    out->by_verdict[GL_VERDICT_SKIP_NO_TARGET] = run->not_in_target;
    out->by_verdict[GL_VERDICT_SKIP_RUBY] = run->ruby_memory;
    out->by_verdict[GL_VERDICT_SKIP_INIT] = run->in_init;
    out->by_verdict[GL_VERDICT_SKIP_UNJUDGED] = run->unjudged_process;
    out->repeated = run->repeated;
    out->inherited = run->inherited;
    guint64 skipped = out->repeated + out->inherited;
    for (guint v = GL_VERDICT_KEEP + 1; v < GL_N_VERDICTS; v++)
        skipped += out->by_verdict[v];
    out->by_verdict[GL_VERDICT_KEEP] = out->errors_seen > skipped ? out->errors_seen - skipped : 0;
    out->report = TRUE;
    out->report_incomplete = run->incomplete_files;
    out->report_unchecked = run->unchecked_processes;
    out->report_free_at_exit = run->free_at_exit;
    out->report_recent_unkept = run->recent_unkept;
    out->report_truncated = copy_strings(run->truncated_files);
    for (guint i = 0; i < run->problems->len; i++)
        g_ptr_array_add(out->problems, g_error_new(GL_ERROR, GL_ERROR_IO, "%s: %s", path,
                                                   (const char *) g_ptr_array_index(run->problems, i)));
    /* its --growth measures, as its summary counted them; finished, so
     * that only its own count of unfinished processes adds up */
    GlGrowthCounts *growth = &out->growth;
    growth->asked = run->growth_asked;
    growth->finished = TRUE;
    growth->measured = run->growth_measured;
    growth->repetitions = run->growth_repetitions;
    growth->unfinished = run->growth_unfinished;
    growth->unmeasured = copy_strings(run->growth_unmeasured);
}

/* ---- what the input says once read ----------------------------------------------------- */

/* Whether a file found in a directory is someone else's XML (a JUnit
 * report written beside Valgrind's): skipped with a note, not a problem. */
static gboolean foreign(const Judging *j, gboolean listed, const GPtrArray *problems)
{
    if (!listed || j->out->errors_seen > 0 || problems->len == 0)
        return FALSE;
    const GError *first = g_ptr_array_index(problems, 0);
    return g_error_matches(first, GL_ERROR, GL_ERROR_WRONG_FORMAT) ||
           g_error_matches(first, GL_ERROR, GL_ERROR_NOT_XML);
}

/* What the process's output says that no record does: frames it could not
 * place, a process the engine stopped, leaks it did not report. */
static void add_process_problems(Judging *j)
{
    const GlProcess *process = j->process;
    g_autofree char *shown = g_utf8_make_valid(j->path, -1);
    if (j->unplaced > 0)
        g_ptr_array_add(j->out->problems, g_error_new(
            GL_ERROR, GL_ERROR_MALFORMED, "%s: %u record%s of process %" G_GINT64_FORMAT " name%s "
            "frames without their module%s", shown, j->unplaced, j->unplaced == 1 ? "" : "s",
            process->pid, j->unplaced == 1 ? "s" : "",
            process->traits.modules_hidden != NULL ? process->traits.modules_hidden : ""));
    j->out->halted = j->out->halted || process->halted;
    if (process->halted)
        g_ptr_array_add(j->out->problems, g_error_new(
            GL_ERROR, GL_ERROR_LIMIT, "%s: process %" G_GINT64_FORMAT " stopped at its first "
            "error: what it would have run next (the rest of its tests) did not run, and was not "
            "checked%s%s%s", shown, process->pid, process->traits.halted_why != NULL ? " (" : "",
            process->traits.halted_why != NULL ? process->traits.halted_why : "",
            process->traits.halted_why != NULL ? ")" : ""));
    /* Blocks its leak check could not judge, that no exact pass judged
     * (a run killed while it ran one; a thread with no scratch stack):
     * whether they were lost nobody can say. */
    if (process->hidden_blocks > 0 && !j->unjudged && !j->leaks_unjudged)
        g_ptr_array_add(j->out->problems, g_error_new(
            GL_ERROR, GL_ERROR_LIMIT, "%s: process %" G_GINT64_FORMAT ": %u block%s allocated on a "
            "Fiber's or a Ractor's stack %s still allocated at its leak check, which cannot judge "
            "%s, and no run with exact stacks judged %s; what %s may be the extension's "
            "(--exact-stacks judges such blocks in one run)", shown, process->pid,
            process->hidden_blocks, process->hidden_blocks == 1 ? "" : "s",
            process->hidden_blocks == 1 ? "was" : "were", process->hidden_blocks == 1 ? "it" : "them",
            process->hidden_blocks == 1 ? "it" : "them",
            process->hidden_blocks == 1 ? "it hides" : "they hide"));
    /* Too old a Ruby leaves more than the runtime reports: the coverage
     * says that process was not checked, and why. */
    if (process->incomplete && !j->unjudged && !j->leaks_unjudged)
        g_ptr_array_add(j->out->problems, g_error_new(
            GL_ERROR, GL_ERROR_LIMIT, "%s: process %" G_GINT64_FORMAT ": %s; what is missing may be "
            "the extension's%s%s%s", shown, process->pid,
            process->incomplete_reason != NULL ? process->incomplete_reason
                                               : "the report is incomplete",
            process->incomplete_hint != NULL ? " (" : "",
            process->incomplete_hint != NULL ? process->incomplete_hint : "",
            process->incomplete_hint != NULL ? ")" : ""));
}

static void finish(Judging *j, GlInput *input, gboolean listed)
{
    GlJudgement *out = j->out;
    const GlProcess *process = j->process;
    if (process->judged != NULL) {
        take_run(out, process->judged, j->path);
        return;
    }
    out->processes = process->stands_for;
    gl_attributor_finish(j->attributor);
    /* A leak that checks while the process ran and the exit check both
     * reported is read several times and kept once. */
    out->repeated = gl_attributor_repeated(j->attributor);
    out->inherited = gl_attributor_inherited(j->attributor);
    out->by_verdict[GL_VERDICT_KEEP] -= out->repeated + out->inherited;
    /* A forked child's check of what it inherited is in every run, tests
     * or not. */
    out->marked = process->marked || (process->marker != NULL &&
                                      gl_marker_parse(process->marker, NULL) != GL_MARKER_FORKED);
    if (process->traits.says_done && process->stands_for > 0) {
        out->pid = process->pid;
        out->checked_to_end = process->done || process->exec;
    }
    gl_classifier_collect_objects(j->classifier, out->objects);
    const GPtrArray *problems = gl_input_problems(input);
    if (foreign(j, listed, problems)) {
        out->processes = 0;
        g_ptr_array_add(out->notes,
                        g_strdup_printf("%s: skipped: %s", j->path,
                                        ((const GError *) g_ptr_array_index(problems, 0))->message));
        return;
    }
    for (guint i = 0; i < problems->len; i++) {
        const GError *problem = g_ptr_array_index(problems, i);
        out->truncated |= g_error_matches(problem, GL_ERROR, GL_ERROR_TRUNCATED);
        g_ptr_array_add(out->problems, g_error_copy(problem));
    }
    if (process->stands_for > 0)
        add_process_problems(j);
    const GPtrArray *notes = gl_input_notes(input);
    for (guint i = 0; i < notes->len; i++)
        g_ptr_array_add(out->notes, g_strdup(g_ptr_array_index(notes, i)));
    GHashTable *suppressed = gl_input_suppression_counts(input);
    if (suppressed != NULL)
        out->suppressed = g_hash_table_ref(suppressed);
}

void gl_judge_input(GlInput *input, const char *path, const GlRules *rules, guint64 order_base,
                    gboolean listed, GlJudgement *judgement)
{
    const GlProcess *process = gl_input_process(input);
    const GlOutputTraits *traits = &process->traits;
    Judging j = {
        .out = judgement,
        .path = path,
        .rules = rules,
        .process = process,
        .base = order_base,
        .classifier = gl_classifier_new(rules),
        .attributor = gl_attributor_new(judgement->findings),
        .checks = traits->full_checks ? gl_checks_new() : NULL,
        .cycles = traits->cycles_indirect ? gl_cycles_new(rules) : NULL,
        .growth = gl_growth_judge_new(rules),
    };
    if (j.checks != NULL || j.cycles != NULL)
        j.held = g_array_new(FALSE, FALSE, sizeof(Held));
    guint64 order = 0;
    GlRecord *record;
    /* a runtime's frames named as Valgrind names them, from the objects as
     * they were when the report was written */
    GStatBuf written;
    gint64 mtime = traits->named_by_runtime && g_stat(path, &written) == 0
                       ? (gint64) written.st_mtime : 0;
    while ((record = gl_input_next(input)) != NULL) {
        if (traits->named_by_runtime && judgement->debuginfo != NULL)
            gl_symbolize_as_valgrind(judgement->debuginfo, judgement->recorded, record, mtime);
        if (record->judged != NULL) {
            add_judged(judgement->findings, record, order_base | (record->unique & 0xffffffffu));
            continue;
        }
        /* Files one after another in one input are processes of their own. */
        if ((!j.learned && traits->one_process) || process->pid != j.learned_pid)
            learn_process(&j, input, process->pid);
        /* a growth measure's loss records are no leaks: growth.h's */
        if (!j.unjudged && !j.leaks_unjudged &&
            gl_growth_take(j.growth, j.classifier, process, record, order)) {
            order++;
            continue;
        }
        /* what the repetitions lost again, the first run lost: once */
        if (!j.unjudged && !j.leaks_unjudged && gl_growth_lost_again(j.growth, record)) {
            gl_record_free(record);
            order++;
            continue;
        }
        if (j.checks != NULL && (record = gl_checks_take(j.checks, record, order)) == NULL) {
            order++;
            continue;
        }
        take(&j, record, &order);
    }
    /* The report of a process that leaked nothing still says what it
     * ran; so does the XML of one without errors (its pid read). */
    if (!j.learned && process->stands_for > 0 && (traits->one_process || process->pid > 0))
        learn_process(&j, input, process->pid);
    settle(&j);
    finish(&j, input, listed);
    if (process->judged == NULL)
        gl_growth_finish(j.growth, process, judgement->findings, &judgement->growth);
    gl_growth_judge_free(j.growth);
    gl_checks_free(j.checks);
    gl_cycles_free(j.cycles);
    if (j.held != NULL)
        g_array_unref(j.held);
    gl_attributor_free(j.attributor);
    gl_classifier_free(j.classifier);
}
