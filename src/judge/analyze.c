/* Inputs -> the input seam -> the judges (judgement.h) -> findings, one
 * thread per input file. */
#include "gemleak/judge/analyze.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/run_files.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/fingerprint.h"
#include "gemleak/judge/judgement.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/read/reader.h"
#include "gemleak/read/splitter.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

/* The tests not measured that --growth's note names: the first few say
 * where to look, "and N more" the rest. */
#define GROWTH_NAMED 5

/* One input and what judging it gave. Filled by a worker thread, read by
 * the main thread once every worker is done. */
typedef struct {
    char *path;
    guint index;
    gboolean listed;       /* found in a directory, not named by the user */
    GlJudgement judged;
} Input;

static void input_free(gpointer data)
{
    Input *input = data;
    g_free(input->path);
    gl_judgement_clear(&input->judged);
    g_free(input);
}

/* Opens @input's file through the input seam and judges it: what cannot
 * be opened is a problem, what a directory holds that is not a regular
 * file a note. */
static void read_input(Input *input, const GlRules *rules)
{
    g_autofree char *skipped = NULL;
    GError *problem = NULL;
    g_autoptr(GlInput) opened = gl_input_open(input->path, input->listed, &skipped, &problem);
    if (opened == NULL) {
        if (problem != NULL)
            g_ptr_array_add(input->judged.problems, problem);
        if (skipped != NULL)
            g_ptr_array_add(input->judged.notes, g_steal_pointer(&skipped));
        return;
    }
    gl_judge_input(opened, input->path, rules, (guint64) input->index << 32, input->listed,
                   &input->judged);
}

/* What one reading thread may need of the address space besides its
 * stack: glibc's malloc reserves 64 MiB for each thread's arena on 64-bit,
 * which also holds a reader's largest need (an element of
 * GL_SPLITTER_MAX_ELEMENT, in the splitter's buffer and parsed). Under an
 * address-space limit (ulimit -v) a thread that started without it
 * aborts in GLib at its first allocation that fails. */
#define READER_MEMORY ((gsize) 64 * 1024 * 1024)

/* What a started thread allocates before it takes an input: a thread that
 * cannot reads nothing, as if it had never started. */
#define READER_PROBE (2 * GL_SPLITTER_MAX_ELEMENT)

/* The inputs, shared by the reading threads: each takes the next one. */
typedef struct {
    GPtrArray *inputs;
    const GlRules *rules;
    gint next;
    gint starved;   /* threads that started but could not allocate */
} Work;

static void read_all(Work *work)
{
    for (;;) {
        guint i = (guint) g_atomic_int_add(&work->next, 1);
        if (i >= work->inputs->len)
            return;
        Input *input = g_ptr_array_index(work->inputs, i);
        if (input->judged.problems->len == 0)
            read_input(input, work->rules);
    }
}

static gpointer read_inputs(gpointer data)
{
    Work *work = data;
    gpointer probe = g_try_malloc(READER_PROBE);
    if (probe == NULL) {
        g_atomic_int_inc(&work->starved);
        return NULL;
    }
    g_free(probe);
    read_all(work);
    return NULL;
}

/* Returns: the stack a new thread gets (GLib starts threads with the
 * default attributes: RLIMIT_STACK, or the C library's own default). */
static gsize thread_stack_size(void)
{
    pthread_attr_t attr;
    size_t size = 0;
    if (pthread_attr_init(&attr) != 0)
        return (gsize) 8 * 1024 * 1024;
    if (pthread_attr_getstacksize(&attr, &size) != 0 || size == 0)
        size = (size_t) 8 * 1024 * 1024;
    pthread_attr_destroy(&attr);
    return size;
}

/* Returns: how many of @wanted reading threads, the main one first, the
 * address space holds: each one's memory is set aside in turn, as far as
 * it goes, and given back before any thread starts. A limit on the
 * address space, or strict overcommit, shows here instead of as a thread
 * that starts and then aborts. At least 1: the main thread reads. */
static guint threads_that_fit(guint wanted)
{
    gsize each = thread_stack_size() + READER_MEMORY;
    g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func(g_free);
    while (held->len < wanted) {
        gpointer block = g_try_malloc(each);
        if (block == NULL)
            break;
        g_ptr_array_add(held, block);
    }
    return MAX(held->len, 1);
}

/* The same file named twice (two spellings, a directory and a file in it,
 * "-" twice) is read once: counted twice, and standard input read by two
 * threads at once, otherwise. Returns: TRUE if @path is new to @seen. */
static gboolean first_time(GHashTable *seen, const char *path)
{
    GlFileId id;
    gboolean known = strcmp(path, "-") == 0 ? gl_file_id_of_fd(STDIN_FILENO, &id)
                                            : gl_file_id_of_path(path, &id);
    char *key = known ? g_strdup_printf("%ju:%ju", (uintmax_t) id.dev, (uintmax_t) id.ino)
                      : g_strconcat("path:", path, NULL);
    return g_hash_table_add(seen, key);
}

/* Expands directories into their *.xml files; what cannot be expanded
 * becomes an input that carries its problem, and what a directory holds
 * that is not a regular file a note in @skipped. */
static GPtrArray *collect_inputs(const char *const *paths, GPtrArray *skipped)
{
    GPtrArray *inputs = g_ptr_array_new_with_free_func(input_free);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (const char *const *path = paths; *path != NULL; path++) {
        g_autoptr(GPtrArray) files = NULL;
        GError *problem = NULL;
        if (strcmp(*path, "-") != 0 && g_file_test(*path, G_FILE_TEST_IS_DIR)) {
            files = gl_input_list(*path, skipped, &problem);
            /* An engine that writes nothing for a process without leaks
             * (engine.txt says which ran) leaves a clean run without a
             * report: what its processes were is the run's coverage. */
            g_auto(GlEngineFacts) run = { 0 };
            gl_engine_facts_read(*path, &run);
            gboolean silent = gl_engine_facts_say(&run, GL_ENGINE_SILENT_WHEN_CLEAN) ||
                              gl_engine_facts_say(&run, GL_ENGINE_PROVES_CHECKS);
            if (files != NULL && files->len == 0 && silent)
                continue;
            if (files != NULL && files->len == 0)
                g_set_error(&problem, GL_ERROR, GL_ERROR_IO,
                            "%s: no *.xml or *.xml.gz files in this directory, nor sanitizer reports", *path);
        }
        guint n = files != NULL && problem == NULL ? files->len : 1;
        for (guint i = 0; i < n; i++) {
            const char *file = files != NULL && problem == NULL
                                   ? (const char *) g_ptr_array_index(files, i) : *path;
            if (problem == NULL && !first_time(seen, file))
                continue;
            Input *input = g_new0(Input, 1);
            input->path = g_strdup(file);
            input->index = inputs->len;
            input->listed = files != NULL && problem == NULL;
            gl_judgement_init(&input->judged);
            if (i == 0 && problem != NULL)
                g_ptr_array_add(input->judged.problems, problem);
            g_ptr_array_add(inputs, input);
        }
    }
    return inputs;
}

/* Adds the counts of @from (name -> count) to @into, saturating. */
static void add_counts(GHashTable *into, GHashTable *from)
{
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, from);
    while (g_hash_table_iter_next(&iter, &key, &value))
        gl_counts_add(into, g_strdup(key), GPOINTER_TO_SIZE(value));
}

/* Returns: the pid whose file @path is (gemleak/base/run_files.h); 0 when
 * it names none. */
static guint64 pid_of_file(const char *path)
{
    g_autofree char *base = g_path_get_basename(path);
    gint64 pid = 0;
    return gl_run_file_pid(base, &pid, NULL) ? (guint64) pid : 0;
}

/* Returns: the signal that killed the process whose file @path is, per
 * @killed (pid_of_file()); 0 when none. */
static int killed_by(GHashTable *killed, const char *path)
{
    guint64 pid = killed != NULL ? pid_of_file(path) : 0;
    if (pid == 0)
        return 0;
    return GPOINTER_TO_INT(g_hash_table_lookup(killed, GINT_TO_POINTER((gint) pid)));
}

GlAnalysis *gl_analyze(const char *const *paths, const GlRules *rules, guint jobs)
{
    return gl_analyze_with_killed(paths, rules, jobs, NULL, NULL);
}

/* Returns: (transfer full): the run directory of the input @path: itself
 * when it is a directory, else the one it is in (gemleak/base/run_files.h). */
static char *run_dir_of(const char *path)
{
    return g_file_test(path, G_FILE_TEST_IS_DIR) ? g_strdup(path) : g_path_get_dirname(path);
}

/* Adds to @notes, one an object, each object a run recorded that is not
 * on disk as the run saw it (rebuilt since, or another machine's run):
 * what the run recorded of it is what it says. */
static void note_objects_changed(const char *dir, GlRunRecord *record, gpointer data)
{
    GlAnalysis *analysis = data;
    (void) dir;
    g_autoptr(GPtrArray) objects = gl_run_record_objects(record);
    for (guint i = 0; i < objects->len; i++) {
        const char *path = g_ptr_array_index(objects, i);
        const char *then = gl_run_record_object_identity(record, path);
        g_autofree char *now = gl_debuginfo_identity(analysis->debuginfo, path);
        if (then == NULL || g_strcmp0(then, now) == 0)
            continue;
        const char *why = now == NULL ? "it is not here: another machine, or removed"
                          : g_str_has_prefix(then, "build-id:") ? "its build id is another: "
                                                                  "rebuilt since"
                                                                : "its bytes are others: "
                                                                  "rebuilt since";
        g_ptr_array_add(analysis->notes, g_strdup_printf(
            "%s is not the object the run loaded (%s): its frames are read as the run "
            "recorded them", path, why));
    }
}

/* Makes @sources read each line a run recorded as it read it. */
static void take_recorded_lines(const char *path, guint line, const char *text, gpointer data)
{
    gl_sources_set_line(data, path, line, text);
}

static void take_recorded_sources(const char *dir, GlRunRecord *record, gpointer data)
{
    (void) dir;
    gl_run_record_foreach_line(record, take_recorded_lines, data);
}

/* Gives every input @debuginfo, the objects sanitizer reports name, read
 * once for every input, and what its run directory recorded of them (from
 * @records; what cannot be read is a note in @skipped). */
static void share_run_records(GPtrArray *inputs, GlDebugInfo *debuginfo, GlRunRecords *records,
                              GPtrArray *skipped)
{
    for (guint i = 0; i < inputs->len; i++) {
        Input *input = g_ptr_array_index(inputs, i);
        input->judged.debuginfo = debuginfo;
        if (strcmp(input->path, "-") == 0)
            continue;
        g_autofree char *dir = run_dir_of(input->path);
        input->judged.recorded = gl_run_records_of(records, dir, skipped);
    }
}

/* Reads every input of @work, this thread and up to @jobs - 1 more,
 * and joins them. Threads are joined, not pooled: a pool keeps idle
 * threads past the end, which a leak checker should not leave for
 * Valgrind to find. Returns: how many threads started besides this one;
 * @fit, how many the address space holds, and @thread_error, why one
 * could not start, say why fewer did. */
static guint read_in_threads(Work *work, guint jobs, guint *fit, GError **thread_error)
{
    g_autoptr(GPtrArray) threads = g_ptr_array_new();
    *fit = jobs > 1 ? threads_that_fit(jobs) : 1;
    for (guint i = 1; i < *fit && *thread_error == NULL; i++) {
        /* Under a thread or address-space limit, fewer threads read. */
        GThread *thread = g_thread_try_new("gemleak-read", read_inputs, work, thread_error);
        if (thread != NULL)
            g_ptr_array_add(threads, thread);
    }
    read_all(work);
    for (guint i = 0; i < threads->len; i++)
        g_thread_join(g_ptr_array_index(threads, i));
    return threads->len;
}

/* Returns: (transfer full): an empty analysis that owns @debuginfo and
 * @records; gl_analysis_free() frees it. */
static GlAnalysis *analysis_new(GlDebugInfo *debuginfo, GlRunRecords *records)
{
    GlAnalysis *analysis = g_new0(GlAnalysis, 1);
    analysis->table = gl_findings_new();
    analysis->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    analysis->notes = g_ptr_array_new_with_free_func(g_free);
    analysis->summary.truncated_files = g_ptr_array_new_with_free_func(g_free);
    analysis->summary.growth_unmeasured = g_ptr_array_new_with_free_func(g_free);
    analysis->suppressed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    analysis->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    analysis->checked_to_end = g_hash_table_new(g_direct_hash, g_direct_equal);
    analysis->debuginfo = debuginfo;
    analysis->records = records;
    analysis->sources = gl_sources_new();
    return analysis;
}

/* Adds to @analysis's notes why @readers threads read, when that is fewer
 * than the @jobs asked for: the address space held @fit, a thread could
 * not start (@thread_error), or @starved started without memory. */
static void note_fewer_readers(GlAnalysis *analysis, guint readers, guint jobs, guint fit,
                               const GError *thread_error, guint starved)
{
    if (readers >= jobs)
        return;
    g_autoptr(GPtrArray) why = g_ptr_array_new_with_free_func(g_free);
    if (fit < jobs)
        g_ptr_array_add(why, g_strdup_printf("the address space left (ulimit -v) holds %u "
                                             "at once", fit));
    if (thread_error != NULL)
        g_ptr_array_add(why, g_strdup(thread_error->message));
    if (starved > 0)
        g_ptr_array_add(why, g_strdup_printf("%u started but could not allocate memory",
                                             starved));
    g_ptr_array_add(why, NULL);
    g_autofree char *reasons = g_strjoinv("; ", (char **) why->pdata);
    g_ptr_array_add(analysis->notes,
                    g_strdup_printf("read with %u thread%s, not %u: %s", readers,
                                    readers == 1 ? "" : "s", jobs, reasons));
}

/* Adds what @judged counted to @analysis's summary, and whether its
 * process was checked to the end to what the others of its pid say. */
static void add_judgement_counts(GlAnalysis *analysis, const GlJudgement *judged)
{
    GlSummary *summary = &analysis->summary;
    summary->processes += judged->processes;
    summary->errors_seen += judged->errors_seen;
    for (guint v = 0; v < GL_N_VERDICTS; v++)
        summary->by_verdict[v] += judged->by_verdict[v];
    summary->repeated += judged->repeated;
    summary->inherited += judged->inherited;
    summary->marked_files += judged->marked;
    summary->halted_processes += judged->halted;
    if (judged->pid > 0 && judged->pid <= G_MAXINT) {
        gpointer key = GINT_TO_POINTER((gint) judged->pid);
        gboolean before = !g_hash_table_contains(analysis->checked_to_end, key) ||
                          GPOINTER_TO_INT(g_hash_table_lookup(analysis->checked_to_end, key));
        g_hash_table_insert(analysis->checked_to_end, key,
                            GINT_TO_POINTER(before && judged->checked_to_end));
    }
    summary->free_at_exit += judged->report ? judged->report_free_at_exit
                                            : (guint) (judged->processes > 0 && judged->free_at_exit);
    summary->recent_unkept += judged->report ? judged->report_recent_unkept
                                             : (guint) (judged->processes > 0 && judged->recent_unkept);
    const GlGrowthCounts *growth = &judged->growth;
    summary->growth_asked |= growth->asked;
    summary->growth_measured += growth->measured;
    summary->growth_repetitions = MAX(summary->growth_repetitions, growth->repetitions);
    summary->growth_unfinished += growth->unfinished + (growth->asked && !growth->finished);
    for (guint i = 0; growth->unmeasured != NULL && i < growth->unmeasured->len; i++)
        g_ptr_array_add(summary->growth_unmeasured,
                        g_strdup(g_ptr_array_index(growth->unmeasured, i)));
}

/* Adds @input's judgement to @analysis: its counts, findings, notes,
 * truncated files, problems, suppressions and objects. A file whose
 * process @killed names ends early, which is a note, not a problem. */
static void absorb_input(GlAnalysis *analysis, const Input *input, GHashTable *killed)
{
    const GlJudgement *judged = &input->judged;
    GlSummary *summary = &analysis->summary;
    add_judgement_counts(analysis, judged);
    gl_findings_absorb(analysis->table, judged->findings);
    for (guint j = 0; j < judged->notes->len; j++)
        g_ptr_array_add(analysis->notes, g_strdup(g_ptr_array_index(judged->notes, j)));
    if (judged->truncated)
        g_ptr_array_add(summary->truncated_files, g_strdup(input->path));
    for (guint j = 0; judged->report_truncated != NULL && j < judged->report_truncated->len; j++)
        g_ptr_array_add(summary->truncated_files,
                        g_strdup(g_ptr_array_index(judged->report_truncated, j)));
    int signo = judged->truncated ? killed_by(killed, input->path) : 0;
    if (signo != 0) {
        /* The process never finished writing: what it wrote is read,
         * and nothing is missing that it could have written. */
        g_ptr_array_add(analysis->notes,
                        g_strdup_printf("%s: process %" G_GUINT64_FORMAT " was killed by %s; "
                                        "its %s ends early", input->path,
                                        pid_of_file(input->path), gl_signal_name(signo),
                                        g_str_has_suffix(input->path, ".xml") ||
                                        g_str_has_suffix(input->path, ".xml.gz")
                                            ? "XML" : "report"));
    }
    gboolean incomplete = FALSE;
    for (guint j = 0; j < judged->problems->len; j++) {
        const GError *problem = g_ptr_array_index(judged->problems, j);
        if (signo == 0 || !g_error_matches(problem, GL_ERROR, GL_ERROR_TRUNCATED)) {
            g_ptr_array_add(analysis->problems, g_error_copy(problem));
            incomplete = TRUE;
        }
    }
    /* A shard's report counts its own inputs and processes. */
    summary->incomplete_files += judged->report ? judged->report_incomplete : (guint) incomplete;
    summary->unchecked_processes += judged->report_unchecked;
    if (judged->suppressed != NULL)
        add_counts(analysis->suppressed, judged->suppressed);
    GHashTableIter objects;
    gpointer object;
    g_hash_table_iter_init(&objects, judged->objects);
    while (g_hash_table_iter_next(&objects, &object, NULL))
        g_hash_table_add(analysis->objects, g_strdup(object));
}

/* Returns: TRUE if the run of a run directory of @inputs asked for
 * --growth (its engine.txt says how many repetitions). */
static gboolean growth_asked(GPtrArray *inputs)
{
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < inputs->len; i++) {
        const Input *input = g_ptr_array_index(inputs, i);
        if (strcmp(input->path, "-") == 0)
            continue;
        char *dir = run_dir_of(input->path);
        if (!g_hash_table_add(seen, dir))
            continue;
        g_auto(GlEngineFacts) run = { 0 };
        gl_engine_facts_read(dir, &run);
        if (run.growth > 0)
            return TRUE;
    }
    return FALSE;
}

/* How many tests --growth measured, K, and those it could not: a note. */
static void note_growth(GlAnalysis *analysis)
{
    const GlSummary *summary = &analysis->summary;
    if (!summary->growth_asked)
        return;
    GString *note = g_string_new("--growth: ");
    if (summary->growth_measured == 0)
        g_string_append(note, "no test was measured");
    else
        g_string_append_printf(note, "%u test%s measured, run again up to %u time%s each",
                               summary->growth_measured, summary->growth_measured == 1 ? "" : "s",
                               summary->growth_repetitions,
                               summary->growth_repetitions == 1 ? "" : "s");
    guint unmeasured = summary->growth_unmeasured->len;
    if (unmeasured > 0) {
        g_string_append_printf(note, "; %u not measured: ", unmeasured);
        for (guint i = 0; i < unmeasured && i < GROWTH_NAMED; i++)
            g_string_append_printf(note, "%s%s", i > 0 ? "; " : "",
                                   (const char *) g_ptr_array_index(summary->growth_unmeasured, i));
        if (unmeasured > GROWTH_NAMED)
            g_string_append_printf(note, "; and %u more", unmeasured - GROWTH_NAMED);
    }
    if (summary->growth_unfinished > 0)
        g_string_append_printf(note, "; %u process%s stopped before the helper said how many "
                               "tests it measured", summary->growth_unfinished,
                               summary->growth_unfinished == 1 ? "" : "es");
    g_ptr_array_add(analysis->notes, g_string_free(note, FALSE));
}

GlAnalysis *gl_analyze_with_killed(const char *const *paths, const GlRules *rules, guint jobs,
                                   GHashTable *killed, GlDebugInfo *objects)
{
    g_autoptr(GPtrArray) skipped = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) inputs = collect_inputs(paths, skipped);
    GlDebugInfo *debuginfo = objects != NULL ? gl_debuginfo_ref(objects) : gl_debuginfo_new();
    GlRunRecords *records = gl_run_records_new();
    share_run_records(inputs, debuginfo, records, skipped);
    if (jobs == 0)
        jobs = g_get_num_processors();
    jobs = MIN(MIN(jobs, GL_MAX_JOBS), MAX(inputs->len, 1));

    Work work = { .inputs = inputs, .rules = rules };
    g_autoptr(GError) thread_error = NULL;
    guint fit = 1;
    guint started = read_in_threads(&work, jobs, &fit, &thread_error);

    /* Gather in input order, so that the report is the same however many
     * threads read. */
    GlAnalysis *analysis = analysis_new(debuginfo, records);
    for (guint i = 0; i < skipped->len; i++)
        g_ptr_array_add(analysis->notes, g_strdup(g_ptr_array_index(skipped, i)));
    guint starved = (guint) g_atomic_int_get(&work.starved);
    note_fewer_readers(analysis, started - starved + 1, jobs, fit, thread_error, starved);
    for (guint i = 0; i < inputs->len; i++)
        absorb_input(analysis, g_ptr_array_index(inputs, i), killed);
    analysis->summary.growth_asked |= growth_asked(inputs);
    note_growth(analysis);
    gl_run_records_foreach(records, note_objects_changed, analysis);
    gl_run_records_foreach(records, take_recorded_sources, analysis->sources);
    gl_findings_fingerprint(analysis->table, analysis->sources);
    analysis->findings = gl_findings_sorted(analysis->table);
    return analysis;
}

void gl_analysis_free(GlAnalysis *analysis)
{
    if (analysis == NULL)
        return;
    g_ptr_array_unref(analysis->findings);
    gl_findings_free(analysis->table);
    g_ptr_array_unref(analysis->problems);
    g_ptr_array_unref(analysis->notes);
    g_ptr_array_unref(analysis->summary.truncated_files);
    g_ptr_array_unref(analysis->summary.growth_unmeasured);
    g_hash_table_unref(analysis->suppressed);
    g_hash_table_unref(analysis->objects);
    g_hash_table_unref(analysis->checked_to_end);
    gl_sources_free(analysis->sources);
    gl_run_records_free(analysis->records);
    gl_debuginfo_free(analysis->debuginfo);
    g_free(analysis);
}

/* Adds to @record what @stack's frames needed from outside the run
 * directory. */
static void record_stack(GlAnalysis *analysis, GlRunRecord *record, const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->obj != NULL && frame->offset != 0)
            gl_debuginfo_record(analysis->debuginfo, frame->obj, frame->offset, record);
        if (!frame->in_target || frame->line == 0)
            continue;
        g_autofree char *path = gl_frame_path(frame);
        const char *text = path != NULL ? gl_sources_line(analysis->sources, path, frame->line)
                                        : NULL;
        if (text != NULL)
            gl_run_record_add_line(record, path, frame->line, text);
    }
}

static void record_record(GlAnalysis *analysis, GlRunRecord *record, const GlRecord *one)
{
    record_stack(analysis, record, &one->stack);
    for (guint i = 0; i < one->aux->len; i++)
        record_stack(analysis, record, &g_array_index(one->aux, GlAux, i).stack);
}

void gl_analysis_record(GlAnalysis *analysis, GlRunRecord *record, const char *project_root)
{
    if (project_root != NULL)
        gl_run_record_set_root(record, project_root);
    g_autoptr(GPtrArray) all = gl_findings_list(analysis->table);
    for (guint i = 0; i < all->len; i++) {
        const GlFinding *finding = g_ptr_array_index(all, i);
        record_record(analysis, record, finding->record);
        for (guint s = 0; finding->sites != NULL && s < finding->sites->len; s++)
            record_record(analysis, record, g_ptr_array_index(finding->sites, s));
    }
}

guint64 gl_summary_skipped(const GlSummary *summary)
{
    return summary->errors_seen - summary->by_verdict[GL_VERDICT_KEEP];
}
