/* The words every report gives a finding and a group of findings, and
 * what a report's context comes to (gemleak/report/wording.h): a bug reads
 * the same in every format. */
#include "gemleak/report/wording.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/growth.h"
#include "gemleak/judge/rules.h"

#include <string.h>

/* "definitely lost", as Valgrind says it. */
static const char *lost_words(GlLeakKind kind)
{
    switch (kind) {
    case GL_LEAK_DEFINITE: return "definitely lost";
    case GL_LEAK_INDIRECT: return "indirectly lost";
    case GL_LEAK_POSSIBLE: return "possibly lost";
    case GL_LEAK_REACHABLE: return "still reachable";
    case GL_LEAK_NONE: break;
    }
    return "lost";
}

/* " (30 occurrences in 1 process)" when there is more than one of either. */
static void append_occurrences(GString *message, guint64 occurrences, guint processes)
{
    if (occurrences > 1 || processes > 1)
        g_string_append_printf(message, " (%" G_GUINT64_FORMAT " occurrence%s in %u process%s)",
                               occurrences, occurrences == 1 ? "" : "s", processes,
                               processes == 1 ? "" : "es");
}

/* "N bytes (D direct, I indirect) in B blocks are definitely lost", in
 * English's numbers: "1 byte", "1 block is". */
static void append_lost(GString *message, guint64 bytes, guint64 direct, guint64 blocks,
                        GlLeakKind kind)
{
    g_string_append_printf(message, "%" G_GUINT64_FORMAT, bytes);
    if (direct > 0 && direct < bytes)
        g_string_append_printf(message, " (%" G_GUINT64_FORMAT " direct, %" G_GUINT64_FORMAT
                               " indirect)", direct, bytes - direct);
    g_string_append_printf(message, " byte%s in %" G_GUINT64_FORMAT " block%s %s %s",
                           bytes == 1 ? "" : "s", blocks, blocks == 1 ? "" : "s",
                           blocks == 1 ? "is" : "are", lost_words(kind));
}

/* @a + @b, held at the ends of gint64: a series read back from a JSON
 * report may hold anything. */
/* "growth: " and the judge's sentence (judge/growth.h): one wording for
 * the text report, the other formats and the record the judge kept. */
static void append_growth(GString *message, const GlGrowth *growth)
{
    g_autofree char *words = gl_growth_describe(growth);
    g_string_append(message, "growth: ");
    g_string_append(message, words);
}

char *gl_finding_message(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    GString *message = g_string_new(NULL);
    /* Growth is a series, not occurrences: one site over one test's
     * repetitions. */
    if (finding->growth != NULL) {
        append_growth(message, finding->growth);
        return g_string_free(message, FALSE);
    }
    /* A leak's own words come from its totals: one occurrence's "loss record
     * 10,533 of 12,791" would change from run to run, and means nothing
     * once occurrences are merged. */
    if (record->leak_kind != GL_LEAK_NONE) {
        append_lost(message, finding->total_bytes, finding->direct_bytes, finding->total_blocks,
                    record->leak_kind);
    } else {
        g_string_append(message, record->what);
        guint sites = finding->sites != NULL ? finding->sites->len : 1;
        if (finding->freed_block && sites > 1)
            g_string_append_printf(message, ", and %u other access%s to the same freed block",
                                   sites - 1, sites == 2 ? "" : "es");
    }
    append_occurrences(message, finding->occurrences, finding->pids->len);
    return g_string_free(message, FALSE);
}

/* "growth in 2 call paths: +1600 bytes a repetition (their medians
 * summed)"; "growth in 2 call paths, in 2 tests: ..." when one call path
 * grew in several tests (a finding each): each is its own series. */
static void append_growth_group(GString *message, const GlGroup *group)
{
    guint64 median = 0;
    g_autoptr(GHashTable) paths = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GPtrArray) tests = g_ptr_array_new();
    for (guint i = 0; i < group->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(group->findings, i);
        if (finding->growth != NULL)
            median = gl_add_saturating(median, finding->growth->median_bytes);
        g_hash_table_add(paths, finding->fingerprint != NULL ? finding->fingerprint : "");
        for (guint t = 0; t < finding->tests->len; t++) {
            const GlTest *test = g_ptr_array_index(finding->tests, t);
            if (!g_ptr_array_find_with_equal_func(tests, test, (GEqualFunc) gl_test_equal, NULL))
                g_ptr_array_add(tests, (gpointer) test);
        }
    }
    /* a finding is a call path of the group, as its entries number them,
     * even when one path grew in two tests */
    g_string_append_printf(message, "growth in %u call paths", group->findings->len);
    if (g_hash_table_size(paths) < group->findings->len && tests->len > 1)
        g_string_append_printf(message, ", in %u tests", tests->len);
    g_string_append_printf(message, ": +%" G_GUINT64_FORMAT " byte%s a repetition (their "
                           "medians summed)", median, median == 1 ? "" : "s");
}

char *gl_group_message(const GlGroup *group)
{
    const GlFinding *first = g_ptr_array_index(group->findings, 0);
    if (group->findings->len == 1)
        return gl_finding_message(first);
    const GlRecord *record = first->record;
    GString *message = g_string_new(NULL);
    if (first->growth != NULL) {
        append_growth_group(message, group);
        return g_string_free(message, FALSE);
    }
    if (record->leak_kind != GL_LEAK_NONE) {
        append_lost(message, group->total_bytes, group->direct_bytes, group->total_blocks,
                    record->leak_kind);
    } else {
        g_string_append(message, record->what);
    }
    g_string_append_printf(message, " in %u call paths", group->findings->len);
    append_occurrences(message, group->occurrences, group->pids->len);
    return g_string_free(message, FALSE);
}

char *gl_group_heading(const GlGroup *group)
{
    g_autofree char *message = gl_group_message(group);
    return group->certain ? g_steal_pointer(&message) : g_strconcat("uncertain: ", message, NULL);
}

char *gl_group_uncertainty(const GlGroup *group)
{
    if (group->certain)
        return NULL;
    return gl_finding_uncertainty(g_ptr_array_index(group->findings, 0));
}

/* Appends @names (const char*) as English lists them: "a", "a and b",
 * "a, b and c", "a, b, c and 2 more @what". */
static void append_list(GString *out, const GPtrArray *names, const char *what)
{
    guint shown = MIN(names->len, 3);
    for (guint i = 0; i < shown; i++) {
        if (i > 0)
            g_string_append(out, i + 1 == shown && shown == names->len ? " and " : ", ");
        g_string_append(out, g_ptr_array_index(names, i));
    }
    if (names->len > shown)
        g_string_append_printf(out, " and %u more %s", names->len - shown, what);
}

char *gl_group_reason(const GlGroup *group)
{
    if ((group->findings->len == 1 && group->ways->len < 2) || group->function == NULL)
        return NULL;
    const GlFinding *first = g_ptr_array_index(group->findings, 0);
    /* a group of which no finding is certain may be no bug at all */
    GString *reason = g_string_new(group->certain ? "one bug: " : "maybe one bug (uncertain): ");
    g_string_append(reason, first->growth != NULL ? "grew in "
                            : first->record->leak_kind != GL_LEAK_NONE ? "lost in " : "in ");
    append_list(reason, group->functions, "functions");
    if (group->ways->len > 1)
        g_string_append_printf(reason, ", entered %u ways", group->ways->len);
    else if (group->ways->len == 0)
        ;  /* no frame of the extension in view: where it was entered is unknown */
    else if (group->entry == NULL ||
             (group->functions->len == 1 && strcmp(group->entry, group->function) == 0))
        g_string_append(reason, ", which Ruby called");
    else
        g_string_append_printf(reason, ", entered through %s", group->entry);
    return g_string_free(reason, FALSE);
}

char *gl_group_way_line(const GlGroup *group, guint index, const char *project_root)
{
    const GlWayIn *way = &g_array_index(group->ways, GlWayIn, index);
    const GlFinding *first = g_ptr_array_index(group->findings, 0);
    GString *line = g_string_new(NULL);
    g_string_append_printf(line, "way in %u: ", index + 1);
    gl_frame_describe(way->frame, project_root, line);
    g_string_append(line, ": ");
    /* a growth's bytes are a series, which its call paths say */
    if (first->record->leak_kind != GL_LEAK_NONE && first->growth == NULL)
        g_string_append_printf(line, "%" G_GUINT64_FORMAT " byte%s in %" G_GUINT64_FORMAT
                               " block%s in ", way->bytes, way->bytes == 1 ? "" : "s",
                               way->blocks, way->blocks == 1 ? "" : "s");
    g_string_append_printf(line, "%u call path%s", way->call_paths,
                           way->call_paths == 1 ? "" : "s");
    return g_string_free(line, FALSE);
}

char *gl_group_owned_heading(const GlGroup *group)
{
    /* growth is of live memory: nothing was lost with it */
    if (((const GlFinding *) g_ptr_array_index(group->findings, 0))->growth != NULL)
        return NULL;
    if (group->owned->len > 0)
        return g_strdup_printf("it owned %" G_GUINT64_FORMAT " byte%s in %" G_GUINT64_FORMAT
                               " block%s, lost with it:", group->owned_bytes,
                               group->owned_bytes == 1 ? "" : "s", group->owned_blocks,
                               group->owned_blocks == 1 ? "" : "s");
    /* Its indirect bytes, which every engine counts; which blocks they
     * are, Valgrind says only when its run asked for them: a filter of
     * its XML, whatever it asks, cannot list what the run did not. */
    guint64 indirect = group->total_bytes - MIN(group->direct_bytes, group->total_bytes);
    if (indirect == 0 || group->direct_bytes == 0)
        return NULL;
    return g_strdup_printf("it owned %" G_GUINT64_FORMAT " byte%s, lost with it (a run with "
                           "--leak-kinds definite,indirect lists its blocks)", indirect,
                           indirect == 1 ? "" : "s");
}

/* "@message: fn (file:line) < fn (file:line)": @stack's extension frames,
 * innermost first. */
static void append_path(GString *line, const GlStack *stack, const char *project_root)
{
    g_string_append(line, ": ");
    guint n = gl_stack_relevant_frames(stack);
    guint shown = 0;
    for (guint i = 0; i < n; i++) {
        if (!stack->frames[i].in_target)
            continue;
        if (shown++ > 0)
            g_string_append(line, " < ");
        gl_frame_describe(&stack->frames[i], project_root, line);
    }
    if (shown > 0)
        return;
    /* No frame the rules could place (their modules not named): its first
     * frames from where it was allocated, outward of the allocator and
     * Ruby's allocation functions, as group.h's site. */
    guint site = 1;
    while (site < stack->n_frames &&
           (stack->frames[site].fn == NULL || gl_rules_is_allocation_function(stack->frames[site].fn)))
        site++;
    for (guint i = site; i < stack->n_frames && i < site + GL_GROUP_PATHS_SHOWN + 1; i++) {
        if (i > site)
            g_string_append(line, " < ");
        gl_frame_describe(&stack->frames[i], project_root, line);
    }
    if (site + GL_GROUP_PATHS_SHOWN + 1 < stack->n_frames)
        g_string_append(line, " < ...");
}

char *gl_group_owned_line(const GlGroup *group, guint index, const char *project_root)
{
    const GlOwned *owned = &g_array_index(group->owned, GlOwned, index);
    GString *line = g_string_new(NULL);
    g_autofree char *path = gl_finding_path_line(owned->finding, project_root);
    g_string_append_printf(line, "owned %u: %s", index + 1, path);
    return g_string_free(line, FALSE);
}

/* Returns: TRUE if @stack holds an extension frame. */
static gboolean stack_in_target(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (stack->frames[i].in_target)
            return TRUE;
    return FALSE;
}

char *gl_finding_path_line(const GlFinding *finding, const char *project_root)
{
    const GlRecord *record = finding->record;
    const GlStack *stack = &record->stack;
    for (guint a = 0; !stack_in_target(stack) && a < record->aux->len; a++)
        stack = &g_array_index(record->aux, GlAux, a).stack;
    g_autofree char *message = gl_finding_message(finding);
    GString *line = g_string_new(message);
    append_path(line, stack, project_root);
    g_autofree char *tests = gl_finding_tests_line(finding, project_root);
    if (tests != NULL)
        g_string_append_printf(line, "; %s", tests);
    return g_string_free(line, FALSE);
}

char *gl_finding_uncertainty(const GlFinding *finding)
{
    if (finding->certain)
        return NULL;
    const GlRecord *record = finding->record;
    if (record->stack_cut > 0)
        return g_strdup_printf("its stack stops after %u frame%s, short of main, so gemleak "
                               "cannot tell whether the extension or Ruby leaked it",
                               record->stack_cut, record->stack_cut == 1 ? "" : "s");
    /* An uninitialised value (rule 5): used inside Ruby's GC, it is Ruby's. */
    const char *what = record->leak_kind == GL_LEAK_NONE && finding->growth == NULL
                           ? "this error was raised in Ruby's garbage collector (Ruby's) or not "
                             "(the extension's)"
                           : "Ruby or the extension owns this memory";
    return g_strdup_printf("%u frame%s in %s %s no symbols, so gemleak cannot tell whether %s",
                           record->unnamed_frames, record->unnamed_frames == 1 ? "" : "s",
                           record->unnamed_object != NULL ? record->unnamed_object : "Ruby",
                           record->unnamed_frames == 1 ? "has" : "have", what);
}

char *gl_finding_uncertainty_advice(const GlFinding *finding)
{
    if (finding->certain)
        return NULL;
    /* a log no gemleak run wrote: its runtime's options decide the next */
    if (finding->record->stack_cut > 0 && finding->record->whole_stacks != NULL)
        return g_strdup_printf("A whole stack decides it: %s.", finding->record->whole_stacks);
    if (finding->record->stack_cut > 0)
        return g_strdup("A whole stack decides it: the Valgrind engine's, or --exact-stacks' "
                        "(every allocation unwound exactly, in one run); or, where gemleak used "
                        "frame pointers (a Ruby that keeps them), the extension built with that "
                        "Ruby's flags (-fno-omit-frame-pointer).");
    return g_strdup("Ruby's debug symbols decide it (Debian and Ubuntu: the libruby dbgsym "
                    "package of the debug archive; or a Ruby built with symbols, as ruby-build "
                    "makes).");
}

/* Returns: (transfer full): "CountTest#test_count (test/count_test.rb:6)",
 * or the file alone. */
static char *test_describe(const GlTest *test, const char *project_root)
{
    g_autofree char *name = gl_test_name(test, project_root);
    g_autofree char *location = gl_test_location(test, project_root);
    if (location == NULL || strcmp(name, location) == 0)
        return g_steal_pointer(&name);
    return g_strdup_printf("%s (%s)", name, location);
}

/* "grew in CountTest#test_count (test/count_test.rb:6)": the test whose
 * repetitions the series is of; NULL when none is named. */
static char *growth_tests_line(const GlFinding *finding, const char *project_root)
{
    if (finding->tests->len == 0)
        return NULL;
    GString *line = g_string_new("grew in ");
    for (guint i = 0; i < finding->tests->len; i++) {
        g_autofree char *test = test_describe(g_ptr_array_index(finding->tests, i), project_root);
        g_string_append_printf(line, "%s%s", i == 0 ? "" : i == 1 ? "; also in " : ", ", test);
    }
    if (finding->more_tests)
        g_string_append(line, finding->tests->len == 1 ? "; also in other tests"
                                                       : " and other tests");
    return g_string_free(line, FALSE);
}

char *gl_finding_tests_line(const GlFinding *finding, const char *project_root)
{
    if (finding->growth != NULL)
        return growth_tests_line(finding, project_root);
    gboolean leak = finding->record->leak_kind != GL_LEAK_NONE;
    if (finding->tests->len == 0 && !finding->lost_before_tests && !finding->lost_at_exit &&
        finding->among == 0)
        return NULL;
    GString *line = g_string_new(NULL);
    if (finding->tests->len > 0) {
        g_autofree char *first = test_describe(g_ptr_array_index(finding->tests, 0), project_root);
        g_string_append_printf(line, "%s in %s",
                               !leak ? "first seen" : finding->allocated_in_tests ? "allocated"
                                                                                  : "first lost",
                               first);
        for (guint i = 1; i < finding->tests->len; i++) {
            g_autofree char *other = test_describe(g_ptr_array_index(finding->tests, i),
                                                      project_root);
            g_string_append_printf(line, "%s%s", i == 1 ? "; also in " : ", ", other);
        }
        if (finding->more_tests)
            g_string_append(line, finding->tests->len == 1 ? "; also in other tests"
                                                           : " and other tests");
        /* How it was found: the check after the suite's run of several
         * tests, then those tests again, this one alone at the last. */
        if (finding->found_again)
            g_string_append(line, finding->tests->len == 1 && !finding->more_tests
                                      ? " (found by running it again alone)"
                                      : " (found by running them again alone)");
    } else if (finding->among > 0) {
        g_autofree char *first = test_describe(finding->among_first, project_root);
        g_autofree char *last = test_describe(finding->among_last, project_root);
        g_string_append_printf(line, "first lost in one of %" G_GUINT64_FORMAT " tests, from %s "
                               "to %s (none lost it again when run again)", finding->among,
                               first, last);
    }
    /* Only leaks are lost before the first test or at exit. */
    if (finding->lost_before_tests)
        g_string_append_printf(line, "%s%s before the first test (while the suite loaded)",
                               line->len > 0 ? "; also " : "",
                               finding->allocated_in_tests ? "allocated" : "lost");
    if (finding->lost_at_exit)
        g_string_append_printf(line, "%slost at exit (still referenced when the last test ended)",
                               line->len > 0 ? "; also " : "");
    return g_string_free(line, FALSE);
}

void gl_report_counts(const GlReportContext *context, guint64 *occurrences,
                      guint64 *all_occurrences, guint *uncertain)
{
    *occurrences = 0;
    *all_occurrences = 0;
    *uncertain = 0;
    for (guint i = 0; i < context->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(context->findings, i);
        *occurrences += finding->occurrences;
        *uncertain += !finding->certain;
    }
    for (guint i = 0; i < context->analysis->findings->len; i++)
        *all_occurrences += ((const GlFinding *) g_ptr_array_index(context->analysis->findings, i))
                                ->occurrences;
}

guint gl_report_growth_count(const GPtrArray *findings, guint *sites)
{
    g_autoptr(GHashTable) fingerprints = g_hash_table_new(g_str_hash, g_str_equal);
    guint count = 0;
    for (guint i = 0; i < findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(findings, i);
        if (finding->growth == NULL)
            continue;
        count++;
        g_hash_table_add(fingerprints, finding->fingerprint != NULL ? finding->fingerprint : "");
    }
    if (sites != NULL)
        *sites = g_hash_table_size(fingerprints);
    return count;
}

guint gl_report_clean_processes(const GlReportContext *context)
{
    g_autoptr(GHashTable) with = g_hash_table_new(g_int64_hash, g_int64_equal);
    const GPtrArray *all = context->analysis->findings;
    for (guint i = 0; i < all->len; i++) {
        const GlFinding *finding = g_ptr_array_index(all, i);
        for (guint p = 0; finding->pids != NULL && p < finding->pids->len; p++)
            g_hash_table_add(with, &g_array_index(finding->pids, gint64, p));
    }
    /* a process left unjudged (a Ruby too old for the engine) is not clean */
    const GlSummary *summary = &context->analysis->summary;
    guint dirty = g_hash_table_size(with) + summary->unchecked_processes;
    return summary->processes > dirty ? summary->processes - dirty : 0;
}

gboolean gl_report_finding_fails(const GlReportContext *context, const GlFinding *finding)
{
    if (context->gate != NULL && !context->gate->failed)
        return FALSE;
    return context->fail_on == NULL || gl_gate_counts(context->fail_on, finding);
}

gboolean gl_report_group_fails(const GlReportContext *context, const GlGroup *group)
{
    for (guint i = 0; i < group->findings->len; i++)
        if (gl_report_finding_fails(context, g_ptr_array_index(group->findings, i)))
            return TRUE;
    for (guint o = 0; o < group->owned->len; o++) {
        const GlFinding *owned = g_array_index(group->owned, GlOwned, o).finding;
        if (owned != NULL && gl_report_finding_fails(context, owned))
            return TRUE;
    }
    return FALSE;
}

/* Returns: (transfer none): "definite leak", "memory error" ... */
static const char *record_category(const GlRecord *record)
{
    switch (record->leak_kind) {
    case GL_LEAK_DEFINITE: return "definite leak";
    case GL_LEAK_INDIRECT: return "indirect leak";
    case GL_LEAK_POSSIBLE: return "possible leak";
    case GL_LEAK_REACHABLE: return "still reachable";
    case GL_LEAK_NONE: break;
    }
    return strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0 ? "crash" : "memory error";
}

/* The title of @finding, or of @group (nullable) shown by it: its other
 * ways in after the first. */
static char *title_of(const GlFinding *finding, const GlGroup *group, const char *project_root,
                      gboolean paths)
{
    const GlRecord *record = finding->record;
    const char *stack = NULL;
    const GlFrame *frame = gl_finding_location_in(finding, &stack);
    /* where the extension was entered, which tells apart two leaks in the
     * same helper: the group's entry point, as every report names it */
    const GlFrame *function = NULL, *entry = NULL;
    gl_finding_group_frames(finding, &function, &entry);
    GString *title = g_string_new(group != NULL && !group->certain ? "uncertain: " : "");
    g_string_append(title, finding->growth != NULL ? (finding->growth->held ? "held growth"
                                                                            : "growth")
                           : record->leak_kind != GL_LEAK_NONE ? record_category(record)
                                                               : record->kind);
    if (finding->freed_block)
        g_string_append(title, " on a freed block");
    if (frame != NULL) {
        g_string_append(title, g_strcmp0(stack, "free") == 0 ? ", freed in "
                               : g_strcmp0(stack, "allocation") == 0 &&
                                         record->leak_kind == GL_LEAK_NONE &&
                                         finding->growth == NULL ? ", allocated in "
                               : " in ");
        gl_frame_describe(frame, project_root, title);
    }
    guint ways = group != NULL ? group->ways->len : 1;
    if (frame != NULL && entry != NULL && entry->fn != NULL &&
        ((entry != frame && g_strcmp0(entry->fn, frame->fn) != 0) || ways > 1)) {
        g_string_append(title, " via ");
        /* without a line, the place the title named already says nothing
         * more: the method alone */
        g_autofree char *here = gl_frame_place(frame, project_root, NULL);
        g_autofree char *there = gl_frame_place(entry, project_root, NULL);
        if (entry->file == NULL && g_strcmp0(here, there) == 0)
            g_string_append(title, entry->fn);
        else
            gl_frame_describe(entry, project_root, title);
    }
    if (frame != NULL && ways > 1) {
        g_autoptr(GPtrArray) others = g_ptr_array_new();
        for (guint w = 0; w < ways; w++) {
            const GlWayIn *way = &g_array_index(group->ways, GlWayIn, w);
            if (g_strcmp0(way->frame->fn, entry != NULL ? entry->fn : NULL) != 0)
                g_ptr_array_add(others, (gpointer) (way->frame->fn != NULL ? way->frame->fn
                                                                           : "???"));
        }
        if (others->len > 2) {
            g_string_append_printf(title, " and %u other ways in", others->len);
        } else if (others->len > 0) {
            g_string_append(title, others->len == 1 ? " and " : ", ");
            append_list(title, others, "ways in");
        }
    }
    if (paths && group != NULL && group->findings->len > 1)
        g_string_append_printf(title, ", %u call paths", group->findings->len);
    return g_string_free(title, FALSE);
}

char *gl_finding_title(const GlFinding *finding, const char *project_root)
{
    return title_of(finding, NULL, project_root, FALSE);
}

char *gl_group_title(const GlGroup *group, const char *project_root, gboolean paths)
{
    return title_of(g_ptr_array_index(group->findings, 0), group, project_root, paths);
}
