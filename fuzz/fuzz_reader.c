/* libFuzzer target: any bytes read as gemleak filter reads a file (the
 * input seam, gemleak/read/input.h, tells the format by its first bytes:
 * Valgrind's XML, a LeakSanitizer or AddressSanitizer report, a gemleak
 * JSON report; a format added to input.c's table is fuzzed with no change
 * here), then the one loop of the judges (gemleak/judge/judgement.h),
 * merge and every report format; or, when the first byte says so, what
 * reads the files options name: 0x01, a --baseline (JSON); 0x02, a
 * --skip-functions-file list, then the classifier with it. Built by `make
 * fuzz`; `make asan` replays the regression inputs through the same
 * function (fuzz/replay.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemleak/judge/analyze.h"
#include "gemleak/judge/baseline.h"
#include "gemleak/judge/classify.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/judgement.h"
#include "gemleak/judge/merge.h"
#include "gemleak/read/input.h"
#include "gemleak/report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static GlRules *fuzz_rules(void)
{
    static GlRules *rules;
    if (rules == NULL) {
        rules = gl_rules_new();
        gl_rules_add_target(rules, "leaky", NULL);
        gl_rules_add_target(rules, "*/ext/*.so", NULL);
        gl_rules_set_leak_kinds(rules, GL_LEAK_ALL);
    }
    return rules;
}

static void write_reports(GPtrArray *findings, GlFindings *table)
{
    GlGate gate;
    gl_gate_init(&gate);
    GlGateResult result;
    gl_gate_evaluate(&gate, findings, 0, 0, FALSE, NULL, &result);
    GlAnalysis analysis = {
        .findings = findings,
        .problems = g_ptr_array_new(),
        .notes = g_ptr_array_new(),
        .table = table,
    };
    analysis.summary.truncated_files = g_ptr_array_new();
    static const char *targets[] = { "leaky", NULL };
    GlReportContext context = {
        .analysis = &analysis,
        .findings = findings,
        .gate = &result,
        .fail_on = &gate,
        .targets = targets,
        .suppressions = TRUE,
        .project_root = "/work",
    };
    for (const GlReporter *const *reporter = gl_reporters(); *reporter != NULL; reporter++) {
        char *buffer = NULL;
        size_t length = 0;
        FILE *out = open_memstream(&buffer, &length);
        if (out == NULL)
            abort();
        gl_report_write(*reporter, &context, out, "memory", NULL);
        fclose(out);
        free(buffer);
    }
    gl_gate_result_clear(&result);
    g_ptr_array_unref(analysis.problems);
    g_ptr_array_unref(analysis.notes);
    g_ptr_array_unref(analysis.summary.truncated_files);
}

/* First bytes that pick a file an option names. No input format starts
 * with them, so the corpus of inputs keeps its meaning. */
enum { FUZZ_BASELINE = 0x01, FUZZ_SKIP_LIST = 0x02 };

static void fuzz_baseline(const char *data, size_t size)
{
    GlBaseline *baseline = gl_baseline_load_from_data(data, size, "fuzz.json", NULL);
    if (baseline == NULL)
        return;
    gl_baseline_knows(baseline, "0123456789abcdef");
    gl_baseline_size(baseline);
    gl_baseline_free(baseline);
}

/* A leak through Ruby into the target, for the patterns to match or not. */
static GlRecord *fuzz_record(void)
{
    static const char *const frames[][2] = {
        { "malloc", "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so" },
        { "rb_funcallv", "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1" },
        { "leaky_alloc", "/work/ext/leaky.so" },
        { "Init_leaky", "/work/ext/leaky.so" },
        { "rb_vm_exec", "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1" },
    };
    GlRecord *record = gl_record_new();
    record->kind = gl_record_intern(record, "Leak_DefinitelyLost");
    record->leak_kind = GL_LEAK_DEFINITE;
    record->what = gl_record_intern(record, "10 bytes in 1 blocks are definitely lost");
    record->stack.n_frames = G_N_ELEMENTS(frames);
    record->stack.frames = g_new0(GlFrame, record->stack.n_frames);
    for (guint i = 0; i < record->stack.n_frames; i++) {
        record->stack.frames[i].fn = gl_record_intern(record, frames[i][0]);
        record->stack.frames[i].obj = gl_record_intern(record, frames[i][1]);
        record->stack.frames[i].ip = 0x1000 + i;
    }
    return record;
}

static void fuzz_skip_list(const char *data, size_t size)
{
    GlRules *rules = gl_rules_new();
    gl_rules_add_target(rules, "leaky", NULL);
    gl_rules_drop_ruby_memory_rule(rules);
    GError *error = NULL;
    gl_rules_add_skip_functions_from_data(rules, data, size, "fuzz", &error);
    g_clear_error(&error);
    GlClassifier *classifier = gl_classifier_new(rules);
    GlRecord *record = fuzz_record();
    gl_classifier_classify(classifier, record, NULL);
    gl_record_free(record);
    gl_classifier_free(classifier);
    gl_rules_free(rules);
}

/* @data as the format its first bytes say, through the loop every input
 * goes through, then every report. */
static void fuzz_input(const char *data, size_t size, const char *name)
{
    GlInput *input = gl_input_open_memory(NULL, data, size, name);
    GlJudgement judged;
    gl_judgement_init(&judged);
    /* as gemleak filter judges it: a runtime's frames named as Valgrind's */
    g_autoptr(GlDebugInfo) debuginfo = gl_debuginfo_new();
    judged.debuginfo = debuginfo;
    gl_judge_input(input, name, fuzz_rules(), 0, FALSE, &judged);
    GPtrArray *findings = gl_findings_sorted(judged.findings);
    write_reports(findings, judged.findings);
    g_ptr_array_unref(findings);
    gl_judgement_clear(&judged);
    gl_input_free(input);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && data[0] == FUZZ_BASELINE) {
        fuzz_baseline((const char *) data + 1, size - 1);
        return 0;
    }
    if (size > 0 && data[0] == FUZZ_SKIP_LIST) {
        fuzz_skip_list((const char *) data + 1, size - 1);
        return 0;
    }
    fuzz_input((const char *) data, size, "fuzz.1");
    return 0;
}
