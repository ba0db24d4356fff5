/* Inputs -> reader -> classifier -> findings, one thread per input file. */
#include "gemleak/judge/analyze.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/run_files.h"
#include "gemleak/judge/attribute.h"
#include "gemleak/judge/fingerprint.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/json_input.h"
#include "gemleak/judge/structures.h"
#include "gemleak/read/symbolize.h"
#include "gemleak/read/process_facts.h"
#include "gemleak/read/reader.h"
#include "gemleak/read/sanitizer_reader.h"
#include "gemleak/read/splitter.h"
#include "gemleak/base/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* One input and what reading it produced. Filled by a worker thread, read
 * by the main thread once every worker is done. */
typedef struct {
    char *path;
    guint index;
    gboolean listed;       /* found in a directory, not named by the user */
    GlFindings *findings;
    guint64 errors_seen;
    guint64 by_verdict[GL_N_VERDICTS];
    guint64 repeated;
    guint64 inherited;
    gboolean marked;       /* its process wrote gemleak's markers */
    gboolean free_at_exit; /* its process's Ruby freed its memory at exit (the helper said) */
    gint64 pid;            /* a sanitizer report's process, 0 for other inputs */
    gboolean checked_to_end; /* that report says the process's check ran to its end */
    gboolean unjudged;     /* its process ran a Ruby older than the engine needs: its records
                            * are not judged (the run's coverage says it was not checked) */
    gboolean leaks_unjudged; /* ... older than the engine checks leaks on: its leak records
                              * are not judged, and a note says so */
    gboolean opened;
    guint processes;       /* the processes it stands for: a report's, or 1 */
    gboolean truncated;
    GPtrArray *problems;   /* GError* */
    /* A shard's report: what its run could not check, as it counted it. */
    gboolean report;
    guint report_incomplete;
    guint report_unchecked;
    guint report_free_at_exit;
    GPtrArray *report_truncated;  /* char*, nullable */
    GPtrArray *notes;
    GHashTable *suppressed;  /* suppression name -> count, nullable */
    GHashTable *objects;     /* object paths the frames named */
} Input;

static void input_free(gpointer data)
{
    Input *input = data;
    g_free(input->path);
    if (input->findings != NULL)
        gl_findings_free(input->findings);
    g_ptr_array_unref(input->problems);
    g_ptr_array_unref(input->notes);
    if (input->report_truncated != NULL)
        g_ptr_array_unref(input->report_truncated);
    if (input->suppressed != NULL)
        g_hash_table_unref(input->suppressed);
    g_hash_table_unref(input->objects);
    g_free(input);
}

/* Returns: what a file of type @mode is, for "not a regular file (...)". */
static const char *file_type(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISSOCK(mode))
        return "a socket";
    return "of another type";
}

/* Returns: (transfer full): the note that says @path was skipped. */
static char *skipped_note(const char *path, mode_t mode)
{
    g_autofree char *shown = g_utf8_make_valid(path, -1);
    return g_strdup_printf("%s: skipped: not a regular file (%s)", shown, file_type(mode));
}

/* Returns: TRUE if the regular file @path begins with a LeakSanitizer or
 * AddressSanitizer report (its runtimes name their logs as the user
 * says: log_path=DIR/lsan writes lsan.PID), read without blocking. */
static gboolean is_sanitizer_file(const char *path)
{
    int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
    if (fd < 0)
        return FALSE;
    struct stat st;
    gboolean found = FALSE;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        g_autofree char *head = g_malloc(GL_SANITIZER_DETECT_BYTES);
        ssize_t n;
        do
            n = read(fd, head, GL_SANITIZER_DETECT_BYTES);
        while (n < 0 && errno == EINTR);
        found = n > 0 && gl_sanitizer_detect(head, (gsize) n);
    }
    close(fd);
    return found;
}

/* As gl_list_xml_files(); the names that are not regular files (a FIFO
 * would block the reader for ever, a symbolic link to /dev/zero never
 * ends) are left out, each with a note added to @skipped (nullable). A
 * name that cannot be looked at is listed: opening it says why not. */
static GPtrArray *list_xml_files(const char *dir, GPtrArray *skipped, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GDir) handle = g_dir_open(dir, 0, &local);
    if (handle == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_IO, "%s: cannot read directory: %s", dir,
                    local->message);
        return NULL;
    }
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) odd = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(handle)) != NULL) {
        gboolean xml = g_str_has_suffix(name, ".xml") || g_str_has_suffix(name, ".xml.gz");
        char *path = g_build_filename(dir, name, NULL);
        if (!xml && !is_sanitizer_file(path)) {
            g_free(path);
            continue;
        }
        GStatBuf st;
        if (g_stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            g_ptr_array_add(odd, skipped_note(path, st.st_mode));
            g_free(path);
        } else {
            g_ptr_array_add(files, path);
        }
    }
    g_ptr_array_sort(files, gl_compare_strings);
    g_ptr_array_sort(odd, gl_compare_strings);
    for (guint i = 0; skipped != NULL && i < odd->len; i++)
        g_ptr_array_add(skipped, g_strdup(g_ptr_array_index(odd, i)));
    return files;
}

GPtrArray *gl_list_xml_files(const char *dir, GError **error)
{
    return list_xml_files(dir, NULL, error);
}

gboolean gl_list_xml_files_any(const char *dir)
{
    g_autoptr(GPtrArray) files = gl_list_xml_files(dir, NULL);
    return files != NULL && files->len > 0;
}

/* Whether a file found in a directory is someone else's XML (a JUnit
 * report written beside Valgrind's): skipped with a note, not a problem. */
static gboolean foreign_listed_file(const Input *input, const GPtrArray *problems)
{
    if (!input->listed || input->errors_seen > 0 || problems->len == 0)
        return FALSE;
    const GError *first = g_ptr_array_index(problems, 0);
    return g_error_matches(first, GL_ERROR, GL_ERROR_WRONG_FORMAT) ||
           g_error_matches(first, GL_ERROR, GL_ERROR_NOT_XML);
}

/* A gemleak JSON report (a CI shard's): its findings and counts as it
 * wrote them. */
static void read_report(Input *input)
{
    GError *problem = NULL;
    GlJsonInput report = { 0 };
    guint64 base = (guint64) input->index << 32;
    if (!gl_json_input_read(input->path, input->findings, base, &report, &problem)) {
        g_ptr_array_add(input->problems, problem);
        gl_json_input_clear(&report);
        return;
    }
    input->opened = TRUE;
    input->processes = report.processes;
    input->errors_seen = report.errors_seen;
    for (guint v = 0; v < GL_N_VERDICTS; v++)
        input->by_verdict[v] = report.by_verdict[v];
    input->repeated = report.repeated;
    input->inherited = report.inherited;
    input->report = TRUE;
    input->report_incomplete = report.incomplete_files;
    input->report_unchecked = report.unchecked_processes;
    input->report_free_at_exit = report.free_at_exit;
    input->report_truncated = g_steal_pointer(&report.truncated_files);
    for (guint i = 0; i < report.problems->len; i++)
        g_ptr_array_add(input->problems,
                        g_error_new(GL_ERROR, GL_ERROR_IO, "%s: %s", input->path,
                                    (const char *) g_ptr_array_index(report.problems, i)));
    gl_json_input_clear(&report);
}

/* Tells @classifier what the helper wrote of process @pid beside @input
 * (a run directory): whether its Ruby freed its own memory at exit, and
 * whether it is one the run's engine gives true verdicts on. */
static void learn_process(Input *input, GlClassifier *classifier, gint64 pid)
{
    if (strcmp(input->path, "-") == 0)
        return;
    g_autofree char *dir = g_path_get_dirname(input->path);
    GlProcessFacts facts;
    gl_process_facts_read(dir, pid, &facts);
    g_auto(GlRunFacts) run = { 0 };
    gl_run_facts_read(dir, &run);
    input->free_at_exit = facts.free_at_exit;
    input->unjudged = run.min_ruby != NULL && facts.ruby_version[0] != '\0' &&
                      !gl_ruby_version_at_least(facts.ruby_version, run.min_ruby);
    input->leaks_unjudged = run.leaks_min_ruby != NULL && facts.ruby_version[0] != '\0' &&
                            !gl_ruby_version_at_least(facts.ruby_version, run.leaks_min_ruby);
    if (input->leaks_unjudged)
        g_ptr_array_add(input->notes, g_strdup_printf(
            "process %" G_GINT64_FORMAT " ran Ruby %s: its leaks are not judged (%s); its memory "
            "errors are", pid, facts.ruby_version,
            run.leaks_min_ruby_why != NULL ? run.leaks_min_ruby_why : "too old a Ruby"));
    gl_classifier_set_free_at_exit(classifier, facts.free_at_exit);
}

/* Returns: TRUE if @record is of what the engine gives no true verdict on
 * in @input's process (learn_process()). */
static gboolean unjudged(const Input *input, const GlRecord *record)
{
    return input->unjudged || (input->leaks_unjudged && record->leak_kind != GL_LEAK_NONE);
}

static void read_xml(Input *input, const GlRules *rules, GlReader *reader)
{
    input->opened = TRUE;
    input->processes = 1;
    gl_reader_set_marker_prefix(reader, GL_PROTO_MARKER_PREFIX);
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    g_autoptr(GlAttributor) attributor = gl_attributor_new(input->findings);
    const GlDocument *doc = gl_reader_document(reader);
    guint64 base = (guint64) input->index << 32;
    guint64 n = 0;
    gint64 pid = 0;
    GlRecord *record;
    while ((record = gl_reader_next(reader, NULL)) != NULL) {
        /* Files one after another in one input are processes of their own. */
        if (doc->pid != pid) {
            pid = doc->pid;
            learn_process(input, classifier, pid);
        }
        GlVerdict verdict = unjudged(input, record)
                                ? GL_VERDICT_SKIP_UNJUDGED
                                : gl_classifier_classify(classifier, record, doc);
        input->errors_seen++;
        input->by_verdict[verdict]++;
        if (strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0)
            g_ptr_array_add(input->notes, g_strdup_printf("%s: process %" G_GINT64_FORMAT
                                                          " died: %s", input->path,
                                                          record->pid, record->what));
        if (verdict == GL_VERDICT_KEEP)
            gl_attributor_add(attributor, record, base | (n & 0xffffffffu));
        else
            gl_record_free(record);
        n++;
    }
    gl_attributor_finish(attributor);
    /* A leak that mid-run checks and the exit check both reported is read
     * several times and kept once. */
    input->repeated = gl_attributor_repeated(attributor);
    input->inherited = gl_attributor_inherited(attributor);
    input->by_verdict[GL_VERDICT_KEEP] -= input->repeated + input->inherited;
    /* A forked child's check of what it inherited is in every run, tests
     * or not. */
    input->marked = doc->marker != NULL && gl_marker_parse(doc->marker, NULL) != GL_MARKER_FORKED;
    gl_classifier_collect_objects(classifier, input->objects);
    const GPtrArray *problems = gl_reader_problems(reader);
    if (foreign_listed_file(input, problems)) {
        input->opened = FALSE;
        g_ptr_array_add(input->notes,
                        g_strdup_printf("%s: skipped: %s", input->path,
                                        ((const GError *) g_ptr_array_index(problems, 0))->message));
        return;
    }
    for (guint i = 0; i < problems->len; i++) {
        const GError *problem = g_ptr_array_index(problems, i);
        input->truncated |= g_error_matches(problem, GL_ERROR, GL_ERROR_TRUNCATED);
        g_ptr_array_add(input->problems, g_error_copy(problem));
    }
    const GPtrArray *notes = gl_reader_notes(reader);
    for (guint i = 0; i < notes->len; i++)
        g_ptr_array_add(input->notes, g_strdup(g_ptr_array_index(notes, i)));
    input->suppressed = g_hash_table_ref(gl_reader_suppression_counts(reader));
}

/* The functions a whole stack ends in: the program's start, a thread's, or
 * a fiber's (Fiber, Enumerator#next): Ruby's coroutine switches to a new
 * machine stack whose first frame is cont.c's fiber_entry (calling
 * rb_fiber_start), or coroutine_trampoline where the platform's coroutine
 * is ucontext's or a pthread's; nothing lies below it. */
static const char *const stack_bottoms[] = {
    "main", "__libc_start_main", "__libc_start_call_main", "_start", "start_thread",
    "clone", "clone3", "fiber_entry", "coroutine_trampoline",
};

/* Returns: TRUE if @stack reaches main or a thread's start. */
static gboolean reaches_bottom(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        for (guint b = 0; stack->frames[i].fn != NULL && b < G_N_ELEMENTS(stack_bottoms); b++)
            if (strcmp(stack->frames[i].fn, stack_bottoms[b]) == 0)
                return TRUE;
    return FALSE;
}

/* Returns: how many program counters @stack holds (frames inlined at one
 * share it), which the runtime's depth limit counts. */
static guint program_counters(const GlStack *stack)
{
    guint pcs = 0;
    for (guint i = 0; i < stack->n_frames; i++)
        pcs += i == 0 || stack->frames[i].ip != stack->frames[i - 1].ip;
    return pcs;
}

/* Returns: TRUE if a frame of @stack has code but no module named. */
static gboolean without_module(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (stack->frames[i].obj == NULL && (stack->frames[i].fn != NULL ||
                                             stack->frames[i].file != NULL))
            return TRUE;
    return FALSE;
}

/* Returns: TRUE if an auxiliary stack of @record (freed by, allocated by)
 * has a frame without its module. */
static gboolean aux_without_module(const GlRecord *record)
{
    for (guint i = 0; i < record->aux->len; i++)
        if (without_module(&g_array_index(record->aux, GlAux, i).stack))
            return TRUE;
    return FALSE;
}

/* A sanitizer's leak record whose stack cannot decide it: one the unwinder
 * gave up on, short of main and of the depth limit (LeakSanitizer's fast
 * unwinder gives 2 or 3 frames on a Ruby without frame pointers, and
 * verdicts from those were wrong both ways), or one cut at the limit
 * before it met the extension. It is never a pass and never definite:
 * kept, uncertain.
 * Returns: the verdict for @record, @verdict as the rules gave it. */
static GlVerdict judge_stack_depth(GlClassifier *classifier, GlRecord *record, GlVerdict verdict)
{
    if (record->leak_kind == GL_LEAK_NONE || verdict == GL_VERDICT_SKIP_KIND ||
        reaches_bottom(&record->stack))
        return verdict;
    /* What is in view already decides it: Ruby's own memory (rule 2). */
    if (verdict == GL_VERDICT_SKIP_NO_TARGET && gl_classifier_ruby_in_view(classifier, record))
        return GL_VERDICT_SKIP_RUBY;
    if (program_counters(&record->stack) + GL_SANITIZER_HIDDEN_FRAMES >= GL_SANITIZER_STACK_LIMIT &&
        verdict != GL_VERDICT_SKIP_NO_TARGET)
        return verdict;
    record->uncertain = TRUE;
    record->stack_cut = MAX(record->stack.n_frames, 1);
    return GL_VERDICT_KEEP;
}

GlVerdict gl_sanitizer_verdict(GlClassifier *classifier, GlRecord *record, const GlDocument *doc,
                               gboolean *unplaced)
{
    GlVerdict verdict = judge_stack_depth(classifier, record,
                                          gl_classifier_classify(classifier, record, doc));
    *unplaced = verdict == GL_VERDICT_SKIP_NO_TARGET &&
                (without_module(&record->stack) || aux_without_module(record));
    return verdict;
}

/* Returns: whether a target frame of @record is in @functions (names). */
static gboolean passes_through(const GlRecord *record, GHashTable *functions)
{
    for (guint i = 0; i < record->stack.n_frames; i++) {
        const GlFrame *frame = &record->stack.frames[i];
        if (frame->in_target && frame->fn != NULL && g_hash_table_contains(functions, frame->fn))
            return TRUE;
    }
    return FALSE;
}

/* LeakSanitizer calls every block of a lost cycle indirect (two structs
 * that point at each other, as zlib's z_stream and its state do), where
 * Valgrind calls one of them definite: with indirect leaks not asked for,
 * the cycle would pass. An indirect leak counts as definite, and is judged
 * again as one, unless it was allocated within a call of the target that
 * also allocated a direct leak of the process (a function of the target is
 * on both stacks): its blocks are then taken for that structure's, as a
 * struct's buffer that another helper of the same method grew, which
 * Valgrind counts in the structure's record. */
static void promote_lost_cycles(GlClassifier *classifier, const GlRules *rules,
                                GPtrArray *records, GlVerdict *verdicts, const GlDocument *doc)
{
    GlLeakKind wanted = gl_rules_get_leak_kinds(rules);
    if ((wanted & GL_LEAK_DEFINITE) == 0 || (wanted & GL_LEAK_INDIRECT) != 0)
        return;
    g_autoptr(GHashTable) direct = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint n = 0; n < records->len; n++) {
        const GlRecord *record = g_ptr_array_index(records, n);
        if (record->leak_kind != GL_LEAK_DEFINITE)
            continue;
        for (guint i = 0; i < record->stack.n_frames; i++) {
            const GlFrame *frame = &record->stack.frames[i];
            if (frame->in_target && frame->fn != NULL)
                g_hash_table_add(direct, (gpointer) frame->fn);
        }
    }
    for (guint n = 0; n < records->len; n++) {
        GlRecord *record = g_ptr_array_index(records, n);
        const GlFrame *first = gl_record_first_target_frame(record);
        if (record->leak_kind != GL_LEAK_INDIRECT || verdicts[n] != GL_VERDICT_SKIP_KIND ||
            first == NULL || first->fn == NULL || passes_through(record, direct))
            continue;
        record->leak_kind = GL_LEAK_DEFINITE;
        record->kind = gl_record_intern(record, "Leak_DefinitelyLost");
        gboolean no_module = FALSE;
        verdicts[n] = gl_sanitizer_verdict(classifier, record, doc, &no_module);
    }
}

/* A LeakSanitizer or AddressSanitizer report: its records through the same
 * rules as Valgrind's. A report that stops short is cut (its process died
 * writing it); one that says LeakSanitizer left leaks out cannot pass. */
static void read_sanitizer(Input *input, const GlRules *rules, GlDebugInfo *debuginfo)
{
    g_autoptr(GPtrArray) records = NULL;
    GlSanitizerFacts facts = { 0 };
    GError *problem = NULL;
    if (!gl_sanitizer_read_file(input->path, &records, &facts, &problem)) {
        g_ptr_array_add(input->problems, problem);
        return;
    }
    /* Named as Valgrind names them (symbolize.h): the same finding reads
     * the same under every engine. */
    GStatBuf written;
    gint64 mtime = g_stat(input->path, &written) == 0 ? (gint64) written.st_mtime : 0;
    for (guint n = 0; n < records->len; n++)
        gl_symbolize_as_valgrind(debuginfo, g_ptr_array_index(records, n), mtime);
    input->opened = TRUE;
    input->processes = 1;
    input->marked = facts.marked;
    input->pid = facts.pid;
    input->checked_to_end = facts.done || facts.exec;
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    learn_process(input, classifier, facts.pid);
    g_autoptr(GlAttributor) attributor = gl_attributor_new(input->findings);
    GlDocument doc = { .pid = facts.pid, .started = TRUE, .finished = facts.complete,
                       .complete = facts.complete };
    guint64 base = (guint64) input->index << 32;
    /* each record is handed on or freed here, not by the array */
    g_ptr_array_set_free_func(records, NULL);
    guint unplaced = 0;
    GlVerdict *verdicts = g_new0(GlVerdict, MAX(records->len, 1));
    for (guint n = 0; n < records->len; n++) {
        gboolean no_module = FALSE;
        verdicts[n] = unjudged(input, g_ptr_array_index(records, n))
            ? GL_VERDICT_SKIP_UNJUDGED
            : gl_sanitizer_verdict(classifier, g_ptr_array_index(records, n), &doc, &no_module);
        unplaced += no_module;
    }
    if (!input->unjudged && !input->leaks_unjudged)
        promote_lost_cycles(classifier, rules, records, verdicts, &doc);
    /* Valgrind's numbers: a structure's indirect blocks in its direct leak */
    gl_structures_attach(records);
    for (guint n = 0; n < records->len; n++) {
        GlRecord *record = g_ptr_array_index(records, n);
        GlVerdict verdict = verdicts[n];
        if (!record->attribution_only) {
            input->errors_seen++;
            input->by_verdict[verdict]++;
        }
        if (verdict == GL_VERDICT_KEEP)
            gl_attributor_add(attributor, record, base | (n & 0xffffffffu));
        else
            gl_record_free(record);
    }
    g_free(verdicts);
    gl_attributor_finish(attributor);
    input->repeated = gl_attributor_repeated(attributor);
    input->inherited = gl_attributor_inherited(attributor);
    input->by_verdict[GL_VERDICT_KEEP] -= input->repeated + input->inherited;
    gl_classifier_collect_objects(classifier, input->objects);
    g_autofree char *shown = g_utf8_make_valid(input->path, -1);
    if (!facts.complete) {
        input->truncated = TRUE;
        g_ptr_array_add(input->problems,
                        g_error_new(GL_ERROR, GL_ERROR_TRUNCATED,
                                    "%s: the report of process %" G_GINT64_FORMAT " stops short: "
                                    "the process died or was killed while writing it", shown,
                                    facts.pid));
    }
    /* The runtimes' default frame format names no module for a frame with
     * a source line: the extension's frames cannot be told from others'. */
    if (unplaced > 0)
        g_ptr_array_add(input->problems,
                        g_error_new(GL_ERROR, GL_ERROR_MALFORMED,
                                    "%s: %u record%s of process %" G_GINT64_FORMAT " name%s frames "
                                    "without their module (the runtime's default frame format): "
                                    "gemleak cannot tell whether they are the extension's; run "
                                    "with stack_trace_format='%s' in the runtime's options, as "
                                    "gemleak run --engine lsan does", shown, unplaced,
                                    unplaced == 1 ? "" : "s", facts.pid, unplaced == 1 ? "s" : "",
                                    GL_SANITIZER_FRAME_FORMAT));
    if (facts.halted)
        g_ptr_array_add(input->problems,
                        g_error_new(GL_ERROR, GL_ERROR_LIMIT,
                                    "%s: process %" G_GINT64_FORMAT " stopped at its first error: "
                                    "what it would have run next (the rest of its tests) did not "
                                    "run, and was not checked (AddressSanitizer stops there "
                                    "unless the code was built with -fsanitize-recover=address, "
                                    "as gemleak's Rake task builds it)", shown, facts.pid));
    /* Too old a Ruby leaves more than the runtime reports: the coverage
     * says that process was not checked, and why. */
    if (facts.incomplete && !input->unjudged && !input->leaks_unjudged)
        g_ptr_array_add(input->problems,
                        g_error_new(GL_ERROR, GL_ERROR_LIMIT,
                                    "%s: process %" G_GINT64_FORMAT ": %s; what is missing may "
                                    "be the extension's%s%s%s", shown, facts.pid,
                                    facts.incomplete_reason != NULL ? facts.incomplete_reason
                                                                    : "the report is incomplete",
                                    facts.incomplete_hint != NULL ? " (" : "",
                                    facts.incomplete_hint != NULL ? facts.incomplete_hint : "",
                                    facts.incomplete_hint != NULL ? ")" : ""));
}

/* Opens @input's file; one found in a directory without waiting (a FIFO
 * put there after it was listed must not block) and only if it is a
 * regular file: another is skipped with a note. One the user named is
 * read whatever it is: gemleak filter <(zcat 123.xml.gz).
 * Returns: the descriptor, or -1 (with a problem or a note). */
static int open_input(Input *input, gboolean *regular)
{
    int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | (input->listed ? O_NONBLOCK : 0);
    int fd = g_open(input->path, flags, 0);
    if (fd < 0) {
        int saved = errno;
        g_autofree char *shown = g_utf8_make_valid(input->path, -1);
        g_ptr_array_add(input->problems, g_error_new(GL_ERROR, GL_ERROR_IO, "%s: cannot open: %s",
                                                     shown, g_strerror(saved)));
        return -1;
    }
    struct stat st;
    *regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (input->listed && !*regular) {
        g_ptr_array_add(input->notes, skipped_note(input->path, st.st_mode));
        close(fd);
        return -1;
    }
    return fd;
}

static void read_input(Input *input, const GlRules *rules, GlDebugInfo *debuginfo)
{
    if (strcmp(input->path, "-") == 0) {
        g_autoptr(GlReader) reader = gl_reader_new_for_fd(STDIN_FILENO, "<stdin>");
        read_xml(input, rules, reader);
        return;
    }
    gboolean regular = FALSE;
    int fd = open_input(input, &regular);
    if (fd < 0)
        return;
    /* Only a regular file is looked into twice: the first bytes of a pipe
     * are gone once read. */
    if (!input->listed && regular && gl_json_input_detect(input->path)) {
        close(fd);
        read_report(input);
        return;
    }
    if (regular && is_sanitizer_file(input->path)) {
        close(fd);
        read_sanitizer(input, rules, debuginfo);
        return;
    }
    /* the reader reads the descriptor until it is freed */
    GlReader *reader = gl_reader_new_for_fd(fd, input->path);
    read_xml(input, rules, reader);
    gl_reader_free(reader);
    close(fd);
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
    GlDebugInfo *debuginfo;  /* the objects sanitizer reports name, read once */
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
        if (input->problems->len == 0)
            read_input(input, work->rules, work->debuginfo);
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
            files = list_xml_files(*path, skipped, &problem);
            /* An engine that writes nothing for a process without leaks
             * (engine.txt says which ran) leaves a clean run without a
             * report: what its processes were is the run's coverage. */
            g_auto(GlRunFacts) run = { 0 };
            gl_run_facts_read(*path, &run);
            if (files != NULL && files->len == 0 && (run.silent_when_clean || run.proof))
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
            input->findings = gl_findings_new();
            input->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
            input->notes = g_ptr_array_new_with_free_func(g_free);
            input->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
            if (i == 0 && problem != NULL)
                g_ptr_array_add(input->problems, problem);
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
    return gl_analyze_with_killed(paths, rules, jobs, NULL);
}

GlAnalysis *gl_analyze_with_killed(const char *const *paths, const GlRules *rules, guint jobs,
                                   GHashTable *killed)
{
    gl_reader_global_init();
    g_autoptr(GPtrArray) skipped = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) inputs = collect_inputs(paths, skipped);
    if (jobs == 0)
        jobs = g_get_num_processors();
    jobs = MIN(MIN(jobs, GL_MAX_JOBS), MAX(inputs->len, 1));

    /* Threads are joined, not pooled: a pool keeps idle threads past the
     * end, which a leak checker should not leave for Valgrind to find. */
    g_autoptr(GlDebugInfo) debuginfo = gl_debuginfo_new();
    Work work = { .inputs = inputs, .rules = rules, .debuginfo = debuginfo };
    g_autoptr(GPtrArray) threads = g_ptr_array_new();
    g_autoptr(GError) thread_error = NULL;
    guint fit = jobs > 1 ? threads_that_fit(jobs) : 1;
    for (guint i = 1; i < fit && thread_error == NULL; i++) {
        /* Under a thread or address-space limit, fewer threads read. */
        GThread *thread = g_thread_try_new("gemleak-read", read_inputs, &work, &thread_error);
        if (thread != NULL)
            g_ptr_array_add(threads, thread);
    }
    read_all(&work);
    for (guint i = 0; i < threads->len; i++)
        g_thread_join(g_ptr_array_index(threads, i));

    /* Gather in input order, so that the report is the same however many
     * threads read. */
    GlAnalysis *analysis = g_new0(GlAnalysis, 1);
    analysis->table = gl_findings_new();
    analysis->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    analysis->notes = g_ptr_array_new_with_free_func(g_free);
    analysis->summary.truncated_files = g_ptr_array_new_with_free_func(g_free);
    analysis->suppressed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    analysis->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    analysis->checked_to_end = g_hash_table_new(g_direct_hash, g_direct_equal);
    GlSummary *summary = &analysis->summary;
    for (guint i = 0; i < skipped->len; i++)
        g_ptr_array_add(analysis->notes, g_strdup(g_ptr_array_index(skipped, i)));
    guint starved = (guint) g_atomic_int_get(&work.starved);
    guint readers = threads->len - starved + 1;
    if (readers < jobs) {
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
    for (guint i = 0; i < inputs->len; i++) {
        Input *input = g_ptr_array_index(inputs, i);
        summary->processes += input->opened ? input->processes : 0;
        summary->errors_seen += input->errors_seen;
        for (guint v = 0; v < GL_N_VERDICTS; v++)
            summary->by_verdict[v] += input->by_verdict[v];
        summary->repeated += input->repeated;
        summary->inherited += input->inherited;
        summary->marked_files += input->marked;
        if (input->pid > 0 && input->pid <= G_MAXINT) {
            gpointer key = GINT_TO_POINTER((gint) input->pid);
            gboolean before = !g_hash_table_contains(analysis->checked_to_end, key) ||
                              GPOINTER_TO_INT(g_hash_table_lookup(analysis->checked_to_end, key));
            g_hash_table_insert(analysis->checked_to_end, key,
                                GINT_TO_POINTER(before && input->checked_to_end));
        }
        summary->free_at_exit += input->report ? input->report_free_at_exit
                                               : (guint) (input->opened && input->free_at_exit);
        gl_findings_absorb(analysis->table, input->findings);
        for (guint j = 0; j < input->notes->len; j++)
            g_ptr_array_add(analysis->notes, g_strdup(g_ptr_array_index(input->notes, j)));
        if (input->truncated)
            g_ptr_array_add(summary->truncated_files, g_strdup(input->path));
        for (guint j = 0; input->report_truncated != NULL && j < input->report_truncated->len; j++)
            g_ptr_array_add(summary->truncated_files,
                            g_strdup(g_ptr_array_index(input->report_truncated, j)));
        int signo = input->truncated ? killed_by(killed, input->path) : 0;
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
        for (guint j = 0; j < input->problems->len; j++) {
            const GError *problem = g_ptr_array_index(input->problems, j);
            if (signo == 0 || !g_error_matches(problem, GL_ERROR, GL_ERROR_TRUNCATED)) {
                g_ptr_array_add(analysis->problems, g_error_copy(problem));
                incomplete = TRUE;
            }
        }
        /* A shard's report counts its own inputs and processes. */
        summary->incomplete_files += input->report ? input->report_incomplete : (guint) incomplete;
        summary->unchecked_processes += input->report_unchecked;
        if (input->suppressed != NULL)
            add_counts(analysis->suppressed, input->suppressed);
        GHashTableIter objects;
        gpointer object;
        g_hash_table_iter_init(&objects, input->objects);
        while (g_hash_table_iter_next(&objects, &object, NULL))
            g_hash_table_add(analysis->objects, g_strdup(object));
    }
    gl_findings_fingerprint(analysis->table);
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
    g_hash_table_unref(analysis->suppressed);
    g_hash_table_unref(analysis->objects);
    g_hash_table_unref(analysis->checked_to_end);
    g_free(analysis);
}

guint64 gl_summary_skipped(const GlSummary *summary)
{
    return summary->errors_seen - summary->by_verdict[GL_VERDICT_KEEP];
}
