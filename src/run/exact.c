/* The exact pass (exact.h): the commands again, exact stacks at the sites
 * where the first run's leaks were allocated, and the first run's reports
 * rewritten with them. */
#include "gemleak/run/exact.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/stacks.h"
#include "gemleak/judge/targets.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/read/sanitizer_exact.h"
#include "gemleak/read/sanitizer_reader.h"
#include "gemleak/run/commands.h"
#include "gemleak/run/rundir.h"
#include "runner_int.h"

#include <string.h>
#include <sys/stat.h>

/* The file of sites, in the first run's helper directory (gemleak's own,
 * removed with it). */

/* Whether the fast pass's stack of a leak must be unwound again. What the
 * allocating call decides (gl_stacks_by_call(): Ruby's code allocated it
 * outside any extension's call, or the dynamic loader did) needs no more.
 * Under the allocation front without frame pointers (GL_UNWOUND_CALL) the
 * rest always does; with them, those cut short (cut_short()); with the
 * runtime's own fast stacks (no front: an engine of before), on a Ruby
 * without frame pointers, every one (a stack that looks whole still lacks
 * what an exact unwind shows past the last frame pointer). The run's Ruby
 * keeps them (@frame_pointers); the process's in hand does
 * (@process_frame_pointers, as its helper said). */
static gboolean frame_pointers;
static gboolean process_frame_pointers;
/* Where the first run's standard input started, to read it again from
 * (GlRunResult.input_offset): -1, it cannot be. */
static gint64 input_offset;
/* The run's targets: --object's (@target_rules, nullable), else the
 * project's extensions the run loaded (@target_paths, a set). */
static const GlRules *target_rules;
static GHashTable *target_paths;
/* What forked children inherited (sanitizer_inherited.h), nullable. */
static const GlInherited *inherited_blocks;
/* The sites of the first run's cut blocks, where the blocks the fast pass
 * unwound exactly itself share the stacks found again
 * (gl_exact_shared_tests()); NULL until they are known. */
static GHashTable *shared_sites;

/* Returns: TRUE if @object (a path, nullable) is one of the run's targets. */
static gboolean is_target(const char *object)
{
    if (object == NULL)
        return FALSE;
    if (target_rules != NULL && gl_rules_n_targets(target_rules) > 0) {
        for (guint i = 0; i < gl_rules_n_targets(target_rules); i++)
            if (gl_rules_target_matches(target_rules, i, object))
                return TRUE;
        return FALSE;
    }
    return target_paths == NULL || g_hash_table_contains(target_paths, object);
}

/* The judge's word on a sanitizer's stack (gl_stacks_cut()). */
static gboolean cut_short(const GlExactStack *stack)
{
    return gl_stacks_cut(stack->stack, GL_SANITIZER_STACK_LIMIT,
                         GL_SANITIZER_HIDDEN_FRAMES + stack->dropped);
}

static gboolean cut(const GlExactStack *stack)
{
    if (stack->exact)
        return FALSE;
    if (gl_stacks_call_decides(stack->unwound, process_frame_pointers) &&
        gl_stacks_by_call(stack->stack, stack->via) != GL_CALL_OPEN)
        return FALSE;
    /* below another extension's call of Ruby's allocation functions: that
     * one's, not a target's */
    if (gl_stacks_call_decides(stack->unwound, process_frame_pointers) && stack->via &&
        stack->via_frame >= 0 && !is_target(stack->stack->frames[stack->via_frame].obj))
        return FALSE;
    switch (stack->unwound) {
    case GL_UNWOUND_CALL:
        return TRUE;
    case GL_UNWOUND_FRAMES:
        return !process_frame_pointers || cut_short(stack);
    case GL_UNWOUND_RUNTIME:
        break;
    }
    return !frame_pointers || cut_short(stack);
}

/* Whether an exact pass's record's own stack is whole: one the allocation
 * front made stop at the allocating call never is (only its table's
 * stacks count then). */
static gboolean donor_cut(const GlExactStack *stack)
{
    if (stack->unwound == GL_UNWOUND_CALL ||
        (stack->unwound == GL_UNWOUND_FRAMES && !process_frame_pointers))
        return TRUE;
    return cut_short(stack);
}

/* Learns whether process @pid of the run in @dir ran a Ruby that keeps
 * frame pointers, for the reports of it in hand. */
static void learn(const char *dir, gint64 pid)
{
    GlProcessFacts facts;
    gl_process_facts_read(dir, pid, &facts);
    process_frame_pointers = facts.frame_pointers;
}

guint gl_exact_deadline(gdouble seconds, gboolean everywhere)
{
    gdouble limit = (everywhere ? 25 : 2) * MAX(seconds, 0) + 60;
    return limit > G_MAXUINT / 2 ? G_MAXUINT / 2 : (guint) limit;
}

/* Returns: (transfer full): the engine's reports in @dir (NAME.PID,
 * NAME.PID.N), sorted, as paths; NULL with @error set. */
static GPtrArray *reports_in(const char *dir, GError **error)
{
    g_autoptr(GDir) listing = g_dir_open(dir, 0, error);
    if (listing == NULL)
        return NULL;
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(listing)) != NULL)
        if (gl_engine_is_log(name, NULL))
            g_ptr_array_add(paths, g_build_filename(dir, name, NULL));
    g_ptr_array_sort(paths, gl_compare_strings);
    return paths;
}

/* Returns: (transfer full): the text of the report @path; NULL with
 * @error set. */
static char *read_report(const char *path, gsize *length, GError **error)
{
    char *text = NULL;
    if (!gl_file_read_regular(path, GL_SANITIZER_REPORT_MAX_BYTES, &text, length, error))
        return NULL;
    return text;
}

/* Returns: TRUE if process @pid of the run in @dir ran a Ruby older than
 * its engine (@run) needs: the run counts it unchecked whatever its
 * stacks (its Ruby's own blocks are there by the thousand), so no exact
 * stacks are paid for it. */
static gboolean too_old(const char *dir, gint64 pid, const GlEngineFacts *run)
{
    GlProcessFacts facts;
    if (pid <= 0 || !gl_process_facts_read(dir, pid, &facts) || facts.ruby_version[0] == '\0')
        return FALSE;
    return (run->min_ruby != NULL && !gl_ruby_version_at_least(facts.ruby_version, run->min_ruby)) ||
           (run->leaks_min_ruby != NULL &&
            !gl_ruby_version_at_least(facts.ruby_version, run->leaks_min_ruby));
}

/* Adds the sites of the cut records of the reports in @dir to @sites, and
 * the tests that allocated their blocks to @tests; with @shared, once
 * @sites has every report's, the tests that allocated the blocks the fast
 * pass unwound exactly itself at those sites (gl_exact_shared_tests()).
 * Returns: FALSE with @error set. */
static gboolean collect_sites(const char *dir, GHashTable *sites, GHashTable *tests,
                              GlExactFound *found, gboolean shared, GError **error)
{
    g_autoptr(GPtrArray) reports = reports_in(dir, error);
    if (reports == NULL)
        return FALSE;
    g_auto(GlEngineFacts) run = { 0 };
    gl_engine_facts_read(dir, &run);
    for (guint i = 0; i < reports->len; i++) {
        g_autofree char *name = g_path_get_basename(g_ptr_array_index(reports, i));
        gint64 pid = 0;
        gl_engine_is_log(name, &pid);
        if (too_old(dir, pid, &run))
            continue;
        learn(dir, pid);
        gsize length = 0;
        g_autofree char *text = read_report(g_ptr_array_index(reports, i), &length, error);
        if (text == NULL)
            return FALSE;
        GHashTable *skip = gl_sanitizer_inherited_of(inherited_blocks, name);
        if (shared)
            gl_exact_shared_tests(text, length, sites, tests, skip);
        else
            gl_exact_sites(text, length, cut, sites, tests, found, skip);
    }
    return TRUE;
}

/* Returns: (transfer full): the path of the file of @lines (a set of
 * strings), one a line, written as @name in @dir; NULL with @error set. */
static char *write_lines(const char *dir, const char *name, const char *first, GHashTable *lines,
                         GError **error)
{
    g_autoptr(GString) text = g_string_new(first);
    g_autoptr(GPtrArray) sorted = g_ptr_array_new();
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, lines);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        g_ptr_array_add(sorted, key);
    g_ptr_array_sort(sorted, gl_compare_strings);
    for (guint i = 0; i < sorted->len; i++)
        g_string_append_printf(text, "%s\n", (const char *) g_ptr_array_index(sorted, i));
    char *path = g_build_filename(dir, name, NULL);
    if (!g_file_set_contents(path, text->str, (gssize) text->len, error)) {
        g_free(path);
        return NULL;
    }
    return path;
}

/* Why blocks the leak check could not judge stay unjudged. */
typedef enum {
    UNJUDGED_NO_RUN,       /* the engine runs nothing again (AddressSanitizer's) */
    UNJUDGED_UNFINISHED,   /* the run with exact stacks did not finish */
    UNJUDGED_NOT_AGAIN,    /* it ran, and did not find them lost again */
    UNJUDGED_UNREPEATABLE, /* the command's script came from a pipe: it cannot run again */
    UNJUDGED_NO_REPORT,    /* it ran, and a process of it left no finished report */
} Unjudged;

/* Says, in the run directory's protocol (outside-PID.txt: what a process
 * ran unchecked), that process @pid has @blocks blocks its check could not
 * judge, and why no run judged them. A block the exact run did not lose
 * again may still have been lost in the first: a second sighting never
 * says "not lost". */
static void say_unjudged(const char *dir, gint64 pid, guint blocks, Unjudged why)
{
    g_autofree char *path = g_strdup_printf("%s/%s%" G_GINT64_FORMAT "%s", dir,
                                            GL_PROTO_OUTSIDE_PREFIX, pid, GL_PROTO_FILE_SUFFIX);
    FILE *file = fopen(path, "a");
    if (file == NULL)
        return;
    static const char *const whys[] = {
        [UNJUDGED_NO_RUN] = "this engine runs nothing again to judge them",
        [UNJUDGED_UNFINISHED] = "the run with exact stacks that judges them did not finish",
        [UNJUDGED_NOT_AGAIN] = "the run with exact stacks did not lose them again, which does "
                               "not say the first run did not",
        [UNJUDGED_UNREPEATABLE] = "the command, whose script came from standard input, a pipe, "
                                  "cannot run again to judge them",
        [UNJUDGED_NO_REPORT] = "a process of the run with exact stacks that judges them left no "
                               "finished report (it was killed or crashed, or the disk is full)",
    };
    fprintf(file, "its leak check could not judge %u block%s allocated on another stack than its "
            "thread's (a Fiber's, a Ractor's), where gemleak could not give the fast unwinder a "
            "stack it walks, and %s (--exact-stacks judges them in one run)\n", blocks,
            blocks == 1 ? "" : "s", whys[why]);
    fclose(file);
}

/* Gives the cut records of the reports in @dir the stacks of @donors, and
 * their hidden blocks those it found lost; the others make the run
 * INCOMPLETE, for the reason @why (UNJUDGED_NOT_AGAIN when the exact run
 * finished); takes the owners out with @strip_owners.
 * Returns: FALSE with @error set. */
static gboolean rewrite_reports(const char *dir, GlExactDonors *donors, Unjudged why,
                                gboolean strip_owners, GlExactResult *exact, GError **error)
{
    exact->records = exact->given = exact->hidden_lost = 0;
    g_autoptr(GPtrArray) reports = reports_in(dir, error);
    if (reports == NULL)
        return FALSE;
    for (guint i = 0; i < reports->len; i++) {
        const char *path = g_ptr_array_index(reports, i);
        gsize length = 0;
        g_autofree char *text = read_report(path, &length, error);
        if (text == NULL)
            return FALSE;
        g_autofree char *name = g_path_get_basename(path);
        gint64 pid = 0;
        gl_engine_is_log(name, &pid);
        learn(dir, pid);
        GlExactCount count = { 0 };
        g_autofree char *rewritten = gl_exact_rewrite(text, length, cut, donors, pid, strip_owners,
                                                      &count,
                                                      gl_sanitizer_inherited_of(inherited_blocks,
                                                                                name),
                                                      shared_sites);
        exact->records += count.records;
        exact->given += count.given;
        exact->hidden_lost += count.hidden_lost;
        if (count.hidden > count.hidden_lost)
            say_unjudged(dir, pid, count.hidden - count.hidden_lost, why);
        if (strlen(rewritten) == length && memcmp(rewritten, text, length) == 0)
            continue;
        /* through a file of its own and a rename: a report is whole or as it was */
        if (!gl_file_replace_unsynced(path, rewritten, strlen(rewritten), error))
            return FALSE;
    }
    return TRUE;
}

/* Adds the stacks the second run found, in @dir, to @donors.
 * Returns: FALSE with @error set. */
/* Returns: TRUE if the report @text says its process's leak check ran to
 * its end (GL_PROTO_MARKER_DONE, or GL_PROTO_MARKER_EXEC for an image
 * that exec'd), on a line of its own. */
static gboolean report_finished(const char *text)
{
    static const char *const markers[] = { GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_DONE,
                                           GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_EXEC };
    for (const char *line = text; *line != '\0'; ) {
        const char *end = strchr(line, '\n');
        gsize length = end != NULL ? (gsize) (end - line) : strlen(line);
        for (guint m = 0; m < G_N_ELEMENTS(markers); m++) {
            gsize n = strlen(markers[m]);
            if (length >= n && memcmp(line, markers[m], n) == 0 &&
                (length == n || line[n] == '\t' || line[n] == ' '))
                return TRUE;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return FALSE;
}

/* Adds the stacks the second run found, in @dir, to @donors; *unfinished
 * gets how many of its processes that loaded an extension have no report
 * that says their check ran to its end (killed, crashed, a full disk):
 * what they lost was not seen again.
 * Returns: FALSE with @error set. */
static gboolean collect_donors(const char *dir, GlExactDonors *donors, guint *unfinished,
                               GError **error)
{
    g_autoptr(GPtrArray) reports = reports_in(dir, error);
    if (reports == NULL)
        return FALSE;
    /* pid -> whether every report of it ran to its end */
    g_autoptr(GHashTable) finished = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < reports->len; i++) {
        gsize length = 0;
        g_autofree char *text = read_report(g_ptr_array_index(reports, i), &length, error);
        if (text == NULL)
            return FALSE;
        g_autofree char *name = g_path_get_basename(g_ptr_array_index(reports, i));
        gint64 pid = 0;
        gl_engine_is_log(name, &pid);
        learn(dir, pid);
        gl_exact_donors_add(donors, text, length, donor_cut);
        gpointer key = GINT_TO_POINTER((gint) pid);
        gboolean all = !g_hash_table_contains(finished, key) ||
                       GPOINTER_TO_INT(g_hash_table_lookup(finished, key));
        g_hash_table_insert(finished, key, GINT_TO_POINTER(all && report_finished(text)));
    }
    *unfinished = 0;
    g_autoptr(GArray) pids = gl_process_listed(dir);
    for (guint i = 0; i < pids->len; i++) {
        gint64 pid = g_array_index(pids, gint64, i);
        g_autofree char *loaded = gl_process_loaded(dir, pid);
        if (loaded != NULL && !GPOINTER_TO_INT(g_hash_table_lookup(finished,
                                                                   GINT_TO_POINTER((gint) pid))))
            (*unfinished)++;
    }
    return TRUE;
}

/* Runs @commands again, as @options say, for the stacks at the sites of
 * @sites_file (and only the tests of @tests_file, nullable: all), adding
 * what it found to @donors and its time to @exact.
 * Returns: FALSE with @error set. */
static gboolean run_again(const GlRunOptions *options, GPtrArray *commands, gdouble first,
                          const char *sites_file, const char *tests_file, GlExactDonors *donors,
                          GlExactResult *exact, GError **error)
{
    GlRunOptions again = *options;
    /* No sites: every allocation unwound exactly (blocks the fast check
     * could not judge: only such a check judges them). */
    again.fast_stacks = sites_file != NULL;
    again.exact_sites = sites_file;
    again.exact_tests = tests_file;
    again.quiet = TRUE;
    again.keep_dir = NULL;      /* the user's is the first run's */
    again.messages = NULL;
    /* the tests' names, for the helper to skip the others by */
    again.per_test = tests_file != NULL ? GL_PROTO_PER_TEST_OWNERS : NULL;
    again.time_files = FALSE;
    /* No growth phase: this pass wants exact stacks of what the first
     * lost, and its reports are read for those only; the repetitions were
     * measured in the first run, and here would only cost their time
     * (GL_PROTO_GROWTH_VARIABLE is left out of its environment). */
    again.growth = 0;
    again.deadline = gl_exact_deadline(first, sites_file == NULL);
    again.input_offset = input_offset;
    GlRunResult second = { 0 };
    gint64 started = g_get_monotonic_time();
    gboolean ok = gl_run_commands(&again, commands, &second, error);
    exact->ran++;
    exact->everywhere |= sites_file == NULL;
    exact->seconds += (gdouble) (g_get_monotonic_time() - started) / G_USEC_PER_SEC;
    exact->interrupted_by = second.interrupted_by;
    exact->timed_out |= second.timed_out;
    guint unfinished = 0;
    ok = ok && collect_donors(second.dir, donors, &unfinished, error);
    exact->unfinished += unfinished;
    /* GEMLEAK_DEBUG keeps the second run's reports, and says where. */
    gboolean debug = g_getenv(GL_PROTO_DEBUG_VARIABLE) != NULL &&
                     *g_getenv(GL_PROTO_DEBUG_VARIABLE) != '\0';
    if (debug && second.dir != NULL)
        fprintf(stderr, "gemleak: debug: the exact pass's reports are kept in %s\n", second.dir);
    gl_run_finish(&second, !debug);
    return ok;
}

/* Returns: TRUE if @donors give every cut block of the reports in @dir a
 * stack; FALSE too when a report cannot be read (the reports say so
 * later, when they are rewritten). */
static gboolean all_given(const char *dir, GlExactDonors *donors)
{
    g_autoptr(GPtrArray) reports = reports_in(dir, NULL);
    if (reports == NULL)
        return FALSE;
    /* a copy: giving takes a stack from the donors */
    g_autoptr(GlExactDonors) copy = gl_exact_donors_copy(donors);
    for (guint i = 0; i < reports->len; i++) {
        gsize length = 0;
        g_autofree char *text = read_report(g_ptr_array_index(reports, i), &length, NULL);
        if (text == NULL)
            return FALSE;
        g_autofree char *name = g_path_get_basename(g_ptr_array_index(reports, i));
        gint64 pid = 0;
        gl_engine_is_log(name, &pid);
        learn(dir, pid);
        GlExactCount count = { 0 };
        g_free(gl_exact_rewrite(text, length, cut, copy, 0, FALSE, &count,
                                gl_sanitizer_inherited_of(inherited_blocks, name), shared_sites));
        if (count.given < count.blocks)
            return FALSE;
    }
    return TRUE;
}

static gboolean run_exact(const GlRunOptions *options, GPtrArray *commands, GlRunResult *result,
                          GlExactResult *exact, GError **error);

gboolean gl_run_exact(const GlRunOptions *options, GPtrArray *commands, GlRunResult *result,
                      const GlRules *targets, const GlInherited *inherited, GlExactResult *exact,
                      GError **error)
{
    memset(exact, 0, sizeof *exact);
    target_rules = targets;
    inherited_blocks = inherited;
    if (result->dir != NULL && (targets == NULL || gl_rules_n_targets(targets) == 0)) {
        const char *inputs[] = { result->dir, NULL };
        g_autoptr(GPtrArray) loaded = gl_targets_from_loaded_lists(inputs, NULL);
        target_paths = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (guint i = 0; i < loaded->len; i++)
            g_hash_table_add(target_paths, g_strdup(g_ptr_array_index(loaded, i)));
    }
    gboolean ok = run_exact(options, commands, result, exact, error);
    target_rules = NULL;
    inherited_blocks = NULL;
    shared_sites = NULL;
    if (target_paths != NULL)
        g_hash_table_unref(target_paths);
    target_paths = NULL;
    return ok;
}

static gboolean run_exact(const GlRunOptions *options, GPtrArray *commands, GlRunResult *result,
                          GlExactResult *exact, GError **error)
{
    frame_pointers = options->frame_pointers;
    input_offset = result->input_offset;
    const GlEngine *engine = options->engine;
    if (engine == NULL || !options->fast_stacks || result->dir == NULL ||
        result->helper_dir == NULL)
        return TRUE;
    g_autoptr(GlExactDonors) donors = gl_exact_donors_new();
    /* An engine that unwinds fast only where Ruby keeps frame pointers
     * (AddressSanitizer's) runs nothing again: what its check could not
     * judge is said, and the run does not pass (--exact-stacks judges it). */
    if (!gl_engine_supports(engine, GL_ENGINE_EXACT_WHERE_LEAKED))
        return rewrite_reports(result->dir, donors, UNJUDGED_NO_RUN, FALSE, exact, error);
    gboolean strip_owners = g_strcmp0(options->per_test, GL_PROTO_PER_TEST_OWNERS) == 0;
    g_autoptr(GHashTable) sites = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GHashTable) tests = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GlExactFound found = { 0 };
    if (!collect_sites(result->dir, sites, tests, &found, FALSE, error) ||
        (g_hash_table_size(sites) > 0 &&
         !collect_sites(result->dir, sites, tests, &found, TRUE, error)))
        return FALSE;
    shared_sites = sites;
    exact->blocks = found.blocks;
    exact->hidden = found.hidden;
    exact->sites = g_hash_table_size(sites);
    if ((exact->sites == 0 && found.hidden == 0) || result->interrupted_by != 0)
        return rewrite_reports(result->dir, donors, UNJUDGED_UNFINISHED, strip_owners, exact, error);
    /* the program counters after the allocator's that the runtime keeps */
    g_autofree char *header = g_strdup_printf(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_SITES "\t%d\n",
                                              GL_SANITIZER_STACK_LIMIT -
                                                  GL_SANITIZER_HIDDEN_FRAMES - 1);
    g_autofree char *sites_file = found.hidden > 0 ? NULL
        : write_lines(result->helper_dir, GL_RUN_EXACT_SITES_FILE, header, sites, error);
    if (found.hidden == 0 && sites_file == NULL)
        return FALSE;
    /* Only the tests that allocated the blocks, when the owners say which
     * and every such block is in a process that ran tests: the setup and
     * what happens at exit run all the same. */
    gboolean filter = options->per_test != NULL && !found.untested && g_hash_table_size(tests) > 0;
    g_autofree char *tests_file = filter ? write_lines(result->helper_dir,
                                                       GL_RUN_EXACT_TESTS_FILE, "", tests, error)
                                         : NULL;
    if (filter && tests_file == NULL)
        return FALSE;

    /* A script read from standard input (ruby - < script.rb) is read again
     * from the file; from a pipe it cannot be: said, nothing run again. */
    for (guint i = 0; input_offset < 0 && i < commands->len; i++)
        if (gl_command_reads_stdin(g_ptr_array_index(commands, i))) {
            exact->unrepeatable = TRUE;
            return rewrite_reports(result->dir, donors, UNJUDGED_UNREPEATABLE, strip_owners, exact,
                                   error);
        }
    gdouble first = 0;
    for (guint i = 0; result->seconds != NULL && i < result->seconds->len; i++)
        first = MAX(first, g_array_index(result->seconds, gdouble, i));
    gboolean ok = run_again(options, commands, first, sites_file, tests_file, donors, exact, error);
    exact->filtered = tests_file != NULL;
    /* Tests that lose memory only after others ran: every test, once more.
     * Blocks the fast check could not judge: the exact run's word on them
     * counts only when it ran every test. */
    if (ok && tests_file != NULL && exact->interrupted_by == 0 && !exact->timed_out &&
        (found.hidden > 0 || !all_given(result->dir, donors)))
        ok = run_again(options, commands, first, sites_file, NULL, donors, exact, error);
    gboolean judged = ok && exact->interrupted_by == 0 && !exact->timed_out;
    Unjudged why = !judged ? UNJUDGED_UNFINISHED
                   : exact->unfinished > 0 ? UNJUDGED_NO_REPORT : UNJUDGED_NOT_AGAIN;
    if (!rewrite_reports(result->dir, donors, why, strip_owners, exact, ok ? error : NULL))
        ok = FALSE;
    if (exact->interrupted_by != 0 && result->interrupted_by == 0) {
        /* what the second run had not unwound stays cut: said, and kept */
        result->interrupted_by = exact->interrupted_by;
        g_autoptr(GError) unmarked = NULL;
        if (!gl_rundir_mark_interrupted(result->dir, exact->interrupted_by, &unmarked) &&
            options->messages != NULL)
            fprintf(options->messages, "gemleak: warning: %s\n", unmarked->message);
    }
    return ok;
}
