/* libFuzzer target: any bytes through the reader, the classifier, merge
 * and every report format. Built by `make fuzz`; `make asan` replays the
 * regression inputs through the same function (fuzz/replay.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemleak/analyze.h"
#include "gemleak/attribute.h"
#include "gemleak/classify.h"
#include "gemleak/gate.h"
#include "gemleak/merge.h"
#include "gemleak/reader.h"
#include "gemleak/report.h"

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
    gl_gate_evaluate(&gate, findings, &result);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GlReader *reader = gl_reader_new_for_memory((const char *) data, size, "fuzz.xml");
    gl_reader_set_marker_prefix(reader, GL_MARKER_PREFIX);
    GlClassifier *classifier = gl_classifier_new(fuzz_rules());
    GlFindings *table = gl_findings_new();
    GlAttributor *attributor = gl_attributor_new(table);
    GlRecord *record;
    guint64 order = 0;
    while ((record = gl_reader_next(reader, NULL)) != NULL) {
        GlVerdict verdict = gl_classifier_classify(classifier, record, gl_reader_document(reader));
        if (verdict == GL_VERDICT_KEEP)
            gl_attributor_add(attributor, record, order++);
        else
            gl_record_free(record);
    }
    gl_attributor_finish(attributor);
    gl_attributor_free(attributor);
    GPtrArray *findings = gl_findings_sorted(table);
    write_reports(findings, table);
    g_ptr_array_unref(findings);
    gl_findings_free(table);
    gl_classifier_free(classifier);
    gl_reader_free(reader);
    return 0;
}
