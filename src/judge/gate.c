/* The gate: findings in, pass or fail out. */
#include "gemleak/judge/gate.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/group.h"
#include "gemleak/judge/merge.h"

#include <string.h>

void gl_gate_init(GlGate *gate)
{
    memset(gate, 0, sizeof *gate);
    gate->leak_kinds = GL_LEAK_DEFINITE;
    gate->errors = TRUE;
    /* in the default set when --growth was asked: without it there is none */
    gate->growth = TRUE;
}

gboolean gl_gate_parse_fail_on(GlGate *gate, const char *spec, GError **error)
{
    GlLeakKind leaks = 0;
    gboolean errors = FALSE;
    gboolean uncertain = FALSE;
    gboolean growth = FALSE, growth_held = FALSE;
    g_auto(GStrv) words = g_strsplit(spec != NULL ? spec : "", ",", -1);
    /* An empty value is an unset CI variable, not a wish to never fail. */
    if (words[0] == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--fail-on: the value is empty (give definite, indirect, possible, reachable, "
                    "errors, uncertain, growth, growth-held, all, or none to never fail)");
        return FALSE;
    }
    for (char **word = words; *word != NULL; word++) {
        g_strstrip(*word);
        if (strcmp(*word, "errors") == 0) {
            errors = TRUE;
        } else if (strcmp(*word, "uncertain") == 0) {
            uncertain = TRUE;
        } else if (strcmp(*word, "growth") == 0) {
            growth = TRUE;
        } else if (strcmp(*word, "growth-held") == 0) {
            growth_held = TRUE;
        } else if (strcmp(*word, "all") == 0) {
            errors = TRUE;
            uncertain = TRUE;
            growth = TRUE;
            growth_held = TRUE;
            leaks = GL_LEAK_ALL;
        } else if (strcmp(*word, "none") == 0) {
            continue;
        } else {
            GlLeakKind kind = 0;
            if (!gl_leak_kind_from_word(*word, &kind)) {
                g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                            "--fail-on: unknown kind '%s' (use definite, indirect, possible, "
                            "reachable, errors, uncertain, growth, growth-held, all or none)",
                            *word);
                return FALSE;
            }
            leaks |= kind;
        }
    }
    gate->leak_kinds = leaks;
    gate->errors = errors;
    gate->uncertain = uncertain;
    gate->growth = growth;
    gate->growth_held = growth_held;
    return TRUE;
}

/* Returns: TRUE if @finding is --growth's (a report read back may have
 * lost its series, never its kind). */
static gboolean is_growth(const GlFinding *finding)
{
    return finding->growth != NULL || g_strcmp0(finding->record->kind, GL_KIND_GROWTH) == 0;
}

gboolean gl_gate_counts(const GlGate *gate, const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (!finding->certain && !gate->uncertain)
        return FALSE;
    if (is_growth(finding))
        return finding->growth != NULL && finding->growth->held ? gate->growth_held
                                                                 : gate->growth;
    if (record->leak_kind == GL_LEAK_NONE)
        return gate->errors;
    return (record->leak_kind & gate->leak_kinds) != 0;
}

/* What the gate counted. The line counts bugs (groups, group.h) and, when
 * a bug has several, its call paths (findings): "1 leak (30 call paths)". */
typedef struct {
    guint leaks, errors, uncertain, cut, leak_paths, error_paths;
    guint growth;  /* growing sites (--growth), each a finding */
} Tally;

/* Counts in @tally and @result the findings of @groups that fail @gate,
 * and those it leaves to the user or could not check. */
static void tally_groups(const GlGate *gate, const GPtrArray *groups, Tally *tally,
                         GlGateResult *result)
{
    for (guint g = 0; g < groups->len; g++) {
        const GlGroup *group = g_ptr_array_index(groups, g);
        guint failing = 0;
        /* its call paths, then the indirect leaks it owned (--leak-kinds) */
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        g_ptr_array_extend(all, group->findings, NULL, NULL);
        for (guint o = 0; o < group->owned->len; o++)
            if (g_array_index(group->owned, GlOwned, o).finding != NULL)
                g_ptr_array_add(all, (gpointer) g_array_index(group->owned, GlOwned, o).finding);
        for (guint i = 0; i < all->len; i++) {
            const GlFinding *finding = g_ptr_array_index(all, i);
            if (!gl_gate_counts(gate, finding)) {
                /* A stack the unwinder cut short is not a finding left to
                 * the user: what it hides was not checked. */
                if (finding->record->stack_cut > 0)
                    tally->cut++;
                else
                    tally->uncertain += !finding->certain;
                continue;
            }
            if (is_growth(finding)) {
                tally->growth++;
                result->failing++;
                continue;
            }
            failing++;
            if (finding->record->leak_kind != GL_LEAK_NONE)
                result->failing_bytes = gl_add_saturating(result->failing_bytes,
                                                          finding->total_bytes);
        }
        if (failing == 0)
            continue;
        result->failing += failing;
        if (((const GlFinding *) g_ptr_array_index(group->findings, 0))->record->leak_kind
            != GL_LEAK_NONE) {
            tally->leaks++;
            tally->leak_paths += failing;
        } else {
            tally->errors++;
            tally->error_paths += failing;
        }
    }
}

/* Appends to @line what failed, or why nothing did, of @n_findings. */
static void append_failing(GString *line, const GlGate *gate, const GlGateResult *result,
                           const Tally *tally, guint n_findings, gboolean checked_nothing,
                           gboolean leaks_fail)
{
    if (checked_nothing && result->failing == 0) {
        g_string_append(line, "nothing was checked: no process the engine checked loaded a "
                              "target extension (see gemleak's messages)");
    } else if (result->failing == 0) {
        g_string_append(line, n_findings == 0 ? "no findings"
                              : tally->uncertain + tally->cut == n_findings ? "no certain finding"
                              : "no finding is of a kind that fails (--fail-on)");
    } else {
        if (tally->leaks > 0) {
            g_string_append_printf(line, "%u leak%s", tally->leaks, tally->leaks == 1 ? "" : "s");
            if (tally->leak_paths > tally->leaks)
                g_string_append_printf(line, " (%u call paths)", tally->leak_paths);
            g_string_append_printf(line, " losing %" G_GUINT64_FORMAT " byte%s",
                                   result->failing_bytes, result->failing_bytes == 1 ? "" : "s");
            if (gate->has_max_bytes)
                g_string_append_printf(line, " (%s --max-bytes %" G_GUINT64_FORMAT ")",
                                       leaks_fail ? "over" : "within", gate->max_bytes);
        }
        if (tally->errors > 0)
        {
            g_string_append_printf(line, "%s%u memory error%s", tally->leaks > 0 ? ", " : "",
                                   tally->errors, tally->errors == 1 ? "" : "s");
            if (tally->error_paths > tally->errors)
                g_string_append_printf(line, " (%u call paths)", tally->error_paths);
        }
        if (tally->growth > 0)
            g_string_append_printf(line, "%s%u growing site%s (--growth)",
                                   tally->leaks + tally->errors > 0 ? ", " : "", tally->growth,
                                   tally->growth == 1 ? "" : "s");
    }
}

/* Appends to @line what was not checked: inputs not all read, processes
 * not checked, stacks cut short, and the rest of an interrupted run. */
static void append_unchecked(GString *line, const GlGateResult *result, const Tally *tally,
                             guint incomplete_inputs, guint unchecked_processes,
                             gboolean checked_nothing, const char *interrupted)
{
    guint cut = tally->cut;
    if (incomplete_inputs > 0)
        g_string_append_printf(line, " in what could be read; %u input%s could not all be read "
                               "(see gemleak's messages)", incomplete_inputs,
                               incomplete_inputs == 1 ? "" : "s");
    if (unchecked_processes > 0)
        g_string_append_printf(line, "%s %u process%s that loaded an extension %s not checked "
                               "(see gemleak's messages)", incomplete_inputs > 0 ? ";" : " in what "
                               "was checked;", unchecked_processes,
                               unchecked_processes == 1 ? "" : "es",
                               unchecked_processes == 1 ? "was" : "were");
    if (cut > 0)
        g_string_append_printf(line, "%s %u finding%s whose stack the unwinder cut short (see "
                               "gemleak's messages)",
                               incomplete_inputs > 0 || unchecked_processes > 0 ? ";"
                                                                                 : " in what was checked;",
                               cut, cut == 1 ? "" : "s");
    if (interrupted != NULL) {
        if (result->failing == 0 && !checked_nothing && incomplete_inputs == 0 &&
            unchecked_processes == 0 && cut == 0)
            g_string_append(line, " in what was checked");
        g_string_append_printf(line, "; the run was interrupted by %s: what the command had not "
                               "run by then was not checked", interrupted);
    }
}

void gl_gate_evaluate(const GlGate *gate, const GPtrArray *findings, guint incomplete_inputs,
                      guint unchecked_processes, gboolean checked_nothing,
                      const char *interrupted, GlGateResult *result)
{
    gl_gate_evaluate_growth(gate, findings, incomplete_inputs, unchecked_processes,
                            checked_nothing, interrupted, FALSE, result);
}

void gl_gate_evaluate_growth(const GlGate *gate, const GPtrArray *findings,
                             guint incomplete_inputs, guint unchecked_processes,
                             gboolean checked_nothing, const char *interrupted,
                             gboolean growth_unmeasured, GlGateResult *result)
{
    memset(result, 0, sizeof *result);
    Tally tally = { 0 };
    g_autoptr(GPtrArray) groups = gl_findings_group(findings);
    tally_groups(gate, groups, &tally, result);
    gboolean leaks_fail = tally.leaks > 0 &&
                          (!gate->has_max_bytes || result->failing_bytes > gate->max_bytes);
    result->failed = leaks_fail || tally.errors > 0 || tally.growth > 0;
    result->complete = incomplete_inputs == 0 && unchecked_processes == 0 && !checked_nothing &&
                       interrupted == NULL && tally.cut == 0 && !growth_unmeasured;

    GString *line = g_string_new(result->failed     ? "gemleak: FAIL: "
                                 : result->complete ? "gemleak: pass: "
                                                    : "gemleak: INCOMPLETE: ");
    append_failing(line, gate, result, &tally, findings->len, checked_nothing, leaks_fail);
    append_unchecked(line, result, &tally, incomplete_inputs, unchecked_processes,
                     checked_nothing, interrupted);
    if (growth_unmeasured)
        g_string_append(line, "; --growth measured no test (see gemleak's messages)");
    if (tally.uncertain > 0)
        g_string_append_printf(line, "; %u uncertain finding%s left to you (--fail-on uncertain "
                               "fails on %s)", tally.uncertain, tally.uncertain == 1 ? "" : "s",
                               tally.uncertain == 1 ? "it" : "them");
    result->line = g_string_free(line, FALSE);
}

void gl_gate_result_clear(GlGateResult *result)
{
    g_clear_pointer(&result->line, g_free);
}

gboolean gl_gate_adopt(GlGate *gate, gboolean writing, gboolean fail_on_given)
{
    if (!writing || fail_on_given)
        return FALSE;
    gl_gate_parse_fail_on(gate, "none", NULL);
    return TRUE;
}

char *gl_gate_adopted_line(guint n, const char *path)
{
    return g_strdup_printf("gemleak: pass: %u finding%s written to the baseline %s (with "
                           "--fail-on they fail this run too)", n, n == 1 ? "" : "s", path);
}
