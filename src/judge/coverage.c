/* Whether a run checked what it ran (coverage.h). */
#include "gemleak/judge/coverage.h"
#include "gemleak/base/run_files.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/targets.h"

#include <string.h>

/* Returns: (transfer full): why process @pid of a run whose reports prove
 * each leak check has no such proof. */
static char *unproven(gint64 pid, const char *loaded, const char *engine, GHashTable *proof,
                      GHashTable *killed)
{
    gpointer key = GINT_TO_POINTER((gint) pid);
    int signo = killed != NULL ? GPOINTER_TO_INT(g_hash_table_lookup(killed, key)) : 0;
    const char *why = signo != 0 ? NULL
                      : g_hash_table_contains(proof, key)
                          ? "its report ends before the check's end: it crashed, was killed, "
                            "ended with _exit, or could not write the rest"
                          : "it left no report: it was killed or crashed before its check, ended "
                            "with _exit, or could not write the report (a full disk)";
    if (signo != 0)
        return g_strdup_printf("process %" G_GINT64_FORMAT ": it loaded %s, and was killed by %s "
                               "before %s's leak check ran", pid, loaded, gl_signal_name(signo),
                               engine);
    return g_strdup_printf("process %" G_GINT64_FORMAT ": it loaded %s, and %s's leak check did "
                           "not run to its end in it: %s", pid, loaded, engine, why);
}

/* Returns: TRUE if the extension at @path was not built for the engine
 * whose symbols begin with @prefix, as @record (nullable) says, else as
 * the file says now (then added to @record). */
static gboolean lacks_symbols(const char *path, const char *prefix, GlRunRecord *record)
{
    gboolean instrumented = FALSE;
    if (record != NULL && gl_run_record_instrumented(record, path, &instrumented))
        return !instrumented;
    gboolean lacks = gl_elf_lacks_symbols(path, prefix);
    /* a file that cannot be read says nothing: not recorded */
    if (record != NULL && (lacks || g_file_test(path, G_FILE_TEST_IS_REGULAR)))
        gl_run_record_set_instrumented(record, path, !lacks);
    return lacks;
}

GPtrArray *gl_coverage_uninstrumented(const char *dir, const char *prefix, GlRunRecord *record,
                                      GArray **loaded_by, guint *processes)
{
    /* each extension not built for the engine, with how many processes
     * loaded it, in the order they were first seen */
    g_autoptr(GHashTable) bare = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) built = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GPtrArray) order = g_ptr_array_new();
    guint unchecked_processes = 0;
    g_autoptr(GArray) pids = gl_process_listed(dir);
    for (guint i = 0; i < pids->len; i++) {
        g_autoptr(GPtrArray) paths = gl_process_loaded_paths(dir, g_array_index(pids, gint64, i));
        gboolean unchecked = FALSE;
        for (guint p = 0; p < paths->len; p++) {
            const char *path = g_ptr_array_index(paths, p);
            if (g_hash_table_contains(built, path))
                continue;
            guint count = GPOINTER_TO_UINT(g_hash_table_lookup(bare, path));
            if (count == 0 && !lacks_symbols(path, prefix, record)) {
                g_hash_table_add(built, g_strdup(path));
                continue;
            }
            /* insert keeps the key already there: order's stays valid */
            char *key = g_strdup(path);
            if (count == 0)
                g_ptr_array_add(order, key);
            g_hash_table_insert(bare, key, GUINT_TO_POINTER(count + 1));
            unchecked = TRUE;
        }
        unchecked_processes += unchecked;
    }
    GPtrArray *found = g_ptr_array_new_full(order->len, g_free);
    if (loaded_by != NULL)
        *loaded_by = g_array_sized_new(FALSE, FALSE, sizeof(guint), order->len);
    for (guint i = 0; i < order->len; i++) {
        const char *path = g_ptr_array_index(order, i);
        g_ptr_array_add(found, g_strdup(path));
        if (loaded_by != NULL) {
            guint n = GPOINTER_TO_UINT(g_hash_table_lookup(bare, path));
            g_array_append_val(*loaded_by, n);
        }
    }
    if (processes != NULL)
        *processes = unchecked_processes;
    return found;
}

guint gl_coverage_require_instrumented(const char *const *inputs, GlRunRecords *records,
                                       GPtrArray *problems)
{
    g_autoptr(GPtrArray) dirs = gl_run_dirs(inputs);
    guint processes = 0;
    for (guint d = 0; d < dirs->len; d++) {
        const char *dir = g_ptr_array_index(dirs, d);
        g_auto(GlEngineFacts) run = { 0 };
        gl_engine_facts_read(dir, &run);
        if (run.instrumented_prefix == NULL || *run.instrumented_prefix == '\0')
            continue;
        g_autoptr(GArray) loaded_by = NULL;
        guint unchecked = 0;
        GlRunRecord *record = records != NULL ? gl_run_records_of(records, dir, NULL) : NULL;
        g_autoptr(GPtrArray) bare = gl_coverage_uninstrumented(dir, run.instrumented_prefix, record,
                                                               &loaded_by, &unchecked);
        processes += unchecked;
        for (guint i = 0; i < bare->len; i++) {
            guint n = g_array_index(loaded_by, guint, i);
            g_autofree char *shown = gl_text_escape(g_ptr_array_index(bare, i));
            g_ptr_array_add(problems, g_error_new(
                GL_ERROR, GL_ERROR_CHILD, "%s was not built with %s (no %s symbol in it): its "
                "invalid reads and writes, and its reads of freed memory, were not checked in %s "
                "that loaded it", shown, run.title, run.instrumented_prefix,
                n == 1 ? "the process" : "the processes"));
        }
    }
    return processes;
}

/* Returns: TRUE if @coverage says process @pid was not checked already. */
static gboolean listed_unchecked(const GlRunCoverage *coverage, gint64 pid)
{
    g_autofree char *prefix = g_strdup_printf("process %" G_GINT64_FORMAT ":", pid);
    for (guint i = 0; i < coverage->unchecked->len; i++)
        if (g_str_has_prefix(g_ptr_array_index(coverage->unchecked, i), prefix))
            return TRUE;
    return FALSE;
}

void gl_coverage_require_proof(const char *const *inputs, GHashTable *proof, GHashTable *killed,
                               GlRunCoverage *coverage)
{
    g_autoptr(GPtrArray) dirs = gl_run_dirs(inputs);
    for (guint d = 0; d < dirs->len; d++) {
        const char *dir = g_ptr_array_index(dirs, d);
        g_auto(GlEngineFacts) run = { 0 };
        gl_engine_facts_read(dir, &run);
        if (!gl_engine_facts_say(&run, GL_ENGINE_PROVES_CHECKS))
            continue;
        g_autoptr(GArray) pids = gl_process_listed(dir);
        for (guint i = 0; i < pids->len; i++) {
            gint64 pid = g_array_index(pids, gint64, i);
            g_autofree char *loaded = gl_process_loaded(dir, pid);
            gpointer key = GINT_TO_POINTER((gint) pid);
            if (loaded == NULL || GPOINTER_TO_INT(g_hash_table_lookup(proof, key)))
                continue;
            /* counted as checked by its engine record, or unchecked already */
            if (listed_unchecked(coverage, pid))
                continue;
            if (coverage->checked > 0)
                coverage->checked--;
            g_ptr_array_add(coverage->unchecked, unproven(pid, loaded, run.title, proof, killed));
        }
    }
    g_ptr_array_sort(coverage->unchecked, gl_compare_strings);
}

gboolean gl_coverage_targets_seen(const GlRules *rules, GHashTable *objects)
{
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, objects);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        for (guint t = 0; t < gl_rules_n_targets(rules); t++)
            if (gl_rules_target_matches(rules, t, key))
                return TRUE;
    return FALSE;
}

gboolean gl_coverage_checked_nothing(const GlRunCoverage *coverage, gboolean ran,
                                     gboolean targets_seen)
{
    /* Processes that were not checked say why themselves. */
    return (ran || coverage->runs > 0 || coverage->lists > 0) && coverage->checked == 0 &&
           coverage->unchecked->len == 0 && !targets_seen;
}

GError *gl_coverage_checked_nothing_problem(const GlRunCoverage *coverage, const char *targets)
{
    return g_error_new(GL_ERROR, GL_ERROR_CHILD, "nothing was checked: no process under %s "
                       "loaded %s (does the command run the tests? %s)", coverage->engine, targets,
                       coverage->lists == 0
                           ? "no Ruby process ran with gemleak's helper: a Ruby started with its "
                             "own RUBYOPT, or none, does not, and then only --object tells its "
                             "extension"
                           : "the Ruby processes gemleak's helper ran in loaded none of them");
}

GError *gl_coverage_log_cut_problem(guint cut, const char *whole_stacks)
{
    /* As stacks.h's problem says it of a run's, but of a log gemleak only
     * read: --exact-stacks runs nothing again for it, and the Valgrind
     * engine would be another run altogether. */
    if (cut == 0)
        return NULL;
    return g_error_new(GL_ERROR, GL_ERROR_LIMIT, "%u finding%s whose stack the unwinder cut short "
                       "of main: gemleak cannot tell whether the extension lost %s, and what else "
                       "the stack hides (a whole stack decides: %s)", cut, cut == 1 ? "" : "s",
                       cut == 1 ? "it" : "them", whole_stacks);
}
