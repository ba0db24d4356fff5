/* Merging findings, their keys and fingerprints, and the analysis over
 * several files and threads. */
#include "testutil.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/classify.h"
#include "gemleak/judge/fingerprint.h"
#include "gemleak/judge/merge.h"
#include "gemleak/report/report.h"
#include "gemleak/report/wording.h"
#include "gemleak/base/sys.h"

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

#define VG "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so"
#define RUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"
#define EXT "/work/gem/lib/leaky/leaky.so"

/* A classified leak: the target frames are marked as the classifier would. */
static GlRecord *leak(gint64 pid, const char *target_line, const char *outer)
{
    g_autofree char *frame = g_strdup_printf("leaky_alloc@" EXT ":leaky.c:%s", target_line);
    GlRecord *record = gl_test_record("Leak_DefinitelyLost", "malloc@" VG, frame,
                                      "leaky_leak@" EXT ":leaky.c:33", outer, NULL);
    record->pid = pid;
    record->leaked_bytes = 100;
    record->stack.frames[1].in_target = TRUE;
    record->stack.frames[2].in_target = TRUE;
    return record;
}

START_TEST(test_same_stack_in_two_processes_merges)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    gl_findings_add(findings, leak(10, "15", "rb_vm_exec@" RUBY), 1);
    gl_findings_add(findings, leak(11, "15", "rb_vm_exec@" RUBY), 2);
    gl_findings_add(findings, leak(11, "15", "rb_vm_exec@" RUBY), 3);
    ck_assert_uint_eq(gl_findings_count(findings), 1);
    gl_findings_fingerprint(findings, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    ck_assert_uint_eq(finding->occurrences, 3);
    ck_assert_uint_eq(finding->pids->len, 2);
    ck_assert_int_eq(g_array_index(finding->pids, gint64, 0), 10);
    ck_assert_int_eq(g_array_index(finding->pids, gint64, 1), 11);
    ck_assert_uint_eq(finding->total_bytes, 300);
    ck_assert_uint_eq(finding->total_blocks, 3);
}
END_TEST

START_TEST(test_identity_stops_at_the_last_target_frame)
{
    g_autoptr(GlRecord) a = leak(1, "15", "rb_vm_exec@" RUBY);
    g_autoptr(GlRecord) b = leak(1, "15", "?@" RUBY);
    g_autoptr(GlRecord) c = leak(1, "16", "rb_vm_exec@" RUBY);
    g_autofree char *ka = gl_record_merge_key(a);
    g_autofree char *kb = gl_record_merge_key(b);
    g_autofree char *kc = gl_record_merge_key(c);
    ck_assert_str_eq(ka, kb);   /* Ruby's frames beyond the target differ: one leak */
    ck_assert_str_ne(ka, kc);   /* another line in the target: another leak */
    ck_assert_uint_eq(gl_stack_relevant_frames(&a->stack), 3);

    g_autoptr(GlRecord) other_kind = leak(1, "15", "rb_vm_exec@" RUBY);
    other_kind->kind = gl_record_intern(other_kind, "Leak_PossiblyLost");
    g_autofree char *kd = gl_record_merge_key(other_kind);
    ck_assert_str_ne(ka, kd);

    /* without target frames every frame counts */
    g_autoptr(GlRecord) loose = gl_test_record("InvalidRead", "f@" RUBY, "g@" RUBY, NULL);
    ck_assert_uint_eq(gl_stack_relevant_frames(&loose->stack), 2);
}
END_TEST

/* The fingerprints @records (consumed) get in one table. */
static GPtrArray *fingerprints_of(GlRecord *first, ...) G_GNUC_NULL_TERMINATED;

static GPtrArray *fingerprints_of(GlRecord *first, ...)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    GPtrArray *prints = g_ptr_array_new_with_free_func(g_free);
    va_list ap;
    va_start(ap, first);
    guint n = 0;
    for (GlRecord *record = first; record != NULL; record = va_arg(ap, GlRecord *))
        gl_findings_add(findings, record, n++);
    va_end(ap);
    gl_findings_fingerprint(findings, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    /* in the order added */
    for (guint i = 0; i < n; i++)
        for (guint j = 0; j < sorted->len; j++)
            if (((GlFinding *) g_ptr_array_index(sorted, j))->order == i)
                g_ptr_array_add(prints, g_strdup(((GlFinding *) g_ptr_array_index(sorted, j))->fingerprint));
    return prints;
}

/* A leak through leaky_alloc at @line of @dir/leaky.c, called at line
 * 40 + @shift. */
static GlRecord *leak_at(const char *dir, guint line, gint64 pid, guint64 ip, guint shift)
{
    g_autofree char *inner = g_strdup_printf("leaky_alloc@" EXT ":leaky.c:%u", line);
    g_autofree char *outer = g_strdup_printf("leaky_leak@" EXT ":leaky.c:%u", 40 + shift);
    GlRecord *record = gl_test_record("Leak_DefinitelyLost", "malloc@" VG, inner, outer,
                                      "rb_vm_exec@" RUBY, NULL);
    for (guint i = 1; i <= 2; i++) {
        record->stack.frames[i].in_target = TRUE;
        record->stack.frames[i].dir = gl_record_intern(record, dir);
    }
    record->stack.frames[1].ip = ip;
    record->pid = pid;
    record->leaked_bytes = 100;
    record->leaked_blocks = 1;
    return record;
}

/* Rule 9: a fingerprint names one leak site. Two sites through the same
 * functions got one fingerprint, so that a baseline knowing one hid the
 * other; a pure shift of lines must still match. From the XML alone, so
 * that every machine computes the same, source or not. */
START_TEST(test_fingerprints_tell_sites_apart_and_survive_shifts)
{
    const char *dir = "/work/gem/ext/leaky";
    g_autoptr(GPtrArray) before = fingerprints_of(leak_at(dir, 33, 1, 0x10, 0),
                                                  leak_at(dir, 34, 1, 0x20, 0),
                                                  leak_at(dir, 35, 1, 0x30, 0), NULL);
    ck_assert_uint_eq(before->len, 3);
    const char *f33 = g_ptr_array_index(before, 0);
    ck_assert(g_regex_match_simple("^[0-9a-f]{16}$", f33, 0, 0));
    ck_assert_str_ne(f33, g_ptr_array_index(before, 1));
    ck_assert_str_ne(f33, g_ptr_array_index(before, 2));
    ck_assert_str_ne(g_ptr_array_index(before, 1), g_ptr_array_index(before, 2));

    /* a line added above: the same sites, pids, addresses and reading order
     * apart (9 and 10 become 10 and 11: lines are ordered as numbers) */
    g_autoptr(GPtrArray) early = fingerprints_of(leak_at(dir, 9, 1, 0x10, 0),
                                                 leak_at(dir, 10, 1, 0x20, 0),
                                                 leak_at(dir, 35, 1, 0x30, 0), NULL);
    g_autoptr(GPtrArray) shifted = fingerprints_of(leak_at(dir, 36, 7, 0x2, 1),
                                                   leak_at(dir, 11, 999, 0x99, 1),
                                                   leak_at(dir, 10, 5, 0x1, 1), NULL);
    ck_assert_str_eq(g_ptr_array_index(early, 0), g_ptr_array_index(shifted, 2));
    ck_assert_str_eq(g_ptr_array_index(early, 1), g_ptr_array_index(shifted, 1));
    ck_assert_str_eq(g_ptr_array_index(early, 2), g_ptr_array_index(shifted, 0));

    /* a renamed function is another leak */
    GlRecord *renamed = leak_at(dir, 33, 1, 0x10, 0);
    renamed->stack.frames[2].fn = gl_record_intern(renamed, "leaky_leak_more");
    g_autoptr(GPtrArray) other = fingerprints_of(renamed, NULL);
    ck_assert_str_ne(g_ptr_array_index(other, 0), f33);
}
END_TEST

/* Each certain finding of @analysis that enters @fn (a target frame of
 * any stack), as "kind fingerprint" lines, sorted. */
static char *fingerprints_entering(const GlAnalysis *analysis, const char *fn)
{
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < analysis->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(analysis->findings, i);
        const GlRecord *record = finding->record;
        gboolean enters = FALSE;
        for (guint s = 0; s <= record->aux->len && !enters; s++) {
            const GlStack *stack = s == 0 ? &record->stack
                                          : &g_array_index(record->aux, GlAux, s - 1).stack;
            for (guint f = 0; f < stack->n_frames && !enters; f++)
                enters = stack->frames[f].in_target && g_strcmp0(stack->frames[f].fn, fn) == 0;
        }
        if (enters && finding->certain)
            g_ptr_array_add(lines, g_strdup_printf("%s %s", record->kind, finding->fingerprint));
    }
    g_ptr_array_sort(lines, gl_compare_strings);
    g_ptr_array_add(lines, NULL);
    return g_strjoinv("\n", (char **) lines->pdata);
}

/* Issue 20: the same bugs of the probe (fixtures/ext/probe), captured on
 * Debian's stripped Ruby 3.1 and on a 3.4.5 with symbols, whose frames
 * between malloc and the extension are named there and not here: a
 * fingerprint is the extension's frames, so that a baseline survives a
 * Ruby upgrade and a CI matrix over Ruby versions. */
START_TEST(test_fingerprints_leave_out_rubys_frames)
{
    static const char *const bugs[] = {
        "r_malloc", "r_calloc", "r_realloc", "r_strdup", "r_xmalloc", "r_alloc_n", "r_xcalloc",
        "r_xrealloc", "r_ruby_strdup", "r_typed_nofree", "r_st_table", "r_asprintf", "r_zlib",
        "r_two_sites", "r_calls_init_named", "r_xmalloc_gc", "r_uaf_two_lines", "r_uaf_tail",
        "r_double_free", "r_overflow",
    };
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "probe", NULL));
    /* both captured from one probe.c, in two directories: one checkout */
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *on_31 = gl_test_capture_in("xml/probe.xml", "/tmp/gemleak-fixtures/probe",
                                                "probe", dir, 0);
    g_autofree char *on_34 = gl_test_capture_in("xml/probe-ruby34.xml", "/tmp/probe34", "probe",
                                                dir, 0);
    const char *paths_31[] = { on_31, NULL }, *paths_34[] = { on_34, NULL };
    g_autoptr(GlAnalysis) ruby31 = gl_analyze(paths_31, rules, 1);
    g_autoptr(GlAnalysis) ruby34 = gl_analyze(paths_34, rules, 1);
    guint differ = 0;
    for (guint i = 0; i < G_N_ELEMENTS(bugs); i++) {
        g_autofree char *a = fingerprints_entering(ruby31, bugs[i]);
        g_autofree char *b = fingerprints_entering(ruby34, bugs[i]);
        ck_assert_msg(*a != '\0', "%s: no finding on Ruby 3.1", bugs[i]);
        if (strcmp(a, b) != 0) {
            fprintf(stderr, "%s: Ruby 3.1:\n%s\nRuby 3.4:\n%s\n", bugs[i], a, b);
            differ++;
        }
    }
    ck_assert_uint_eq(differ, 0);
    gl_remove_tree(dir);
}
END_TEST

/* Two findings that would share a fingerprint (their frames differ only
 * outside what a fingerprint covers) get two. */
START_TEST(test_fingerprints_unique_in_a_report)
{
    GlRecord *a = leak(1, "15", "rb_vm_exec@" RUBY);
    GlRecord *b = leak(1, "15", "rb_vm_exec@" RUBY);
    /* a Ruby frame between two target frames, at another line */
    for (GlRecord **r = (GlRecord *[]) { a, b, NULL }; *r != NULL; r++) {
        GlFrame *frames = g_new0(GlFrame, 4);
        memcpy(frames, (*r)->stack.frames, 2 * sizeof(GlFrame));
        frames[2] = (GlFrame) { .fn = "rb_yield", .obj = RUBY, .file = "vm.c",
                                .line = *r == a ? 10 : 20 };
        frames[3] = (*r)->stack.frames[2];
        g_free((*r)->stack.frames);
        (*r)->stack.frames = frames;
        (*r)->stack.n_frames = 4;
    }
    g_autoptr(GPtrArray) prints = fingerprints_of(a, b, NULL);
    ck_assert_uint_eq(prints->len, 2);
    ck_assert_str_ne(g_ptr_array_index(prints, 0), g_ptr_array_index(prints, 1));
}
END_TEST

/* Rule 8: a finding reads the same whatever order its occurrences were
 * read in (file names are pids, which change from run to run). */
START_TEST(test_finding_shown_by_content_not_reading_order)
{
    g_autoptr(GlFindings) into = gl_findings_new();
    g_autoptr(GlFindings) from = gl_findings_new();
    GlRecord *late = leak(20, "15", "rb_vm_exec@" RUBY);
    late->what = gl_record_intern(late, "100 bytes in 1 blocks are definitely lost in loss "
                                        "record 10,533 of 12,791");
    late->stack.frames[1].ip = 0x100;
    GlRecord *early = leak(10, "15", "rb_vm_exec@" RUBY);
    early->what = gl_record_intern(early, "100 bytes in 1 blocks are definitely lost in loss "
                                          "record 16,697 of 17,001");
    early->stack.frames[1].ip = 0x200;
    gl_findings_add(into, late, 50);
    gl_findings_add(from, early, 5);
    gl_findings_absorb(into, from);
    gl_findings_fingerprint(into, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(into);
    ck_assert_uint_eq(sorted->len, 1);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    /* the lower address shows, though read last; the first read leads the pids */
    ck_assert_uint_eq(finding->record->stack.frames[1].ip, 0x100);
    ck_assert_uint_eq(finding->order, 5);
    ck_assert_int_eq(g_array_index(finding->pids, gint64, 0), 10);
    ck_assert_uint_eq(finding->occurrences, 2);
    g_autofree char *message = gl_finding_message(finding);
    ck_assert_str_eq(message, "200 bytes in 2 blocks are definitely lost (2 occurrences in 2 processes)");
}
END_TEST

/* Rule 6: a recursion (nokogiri's XPath leak) goes through an unnamed
 * frame of a library as many times as it is deep: one leak. */
START_TEST(test_repeated_frames_count_once)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    for (guint depth = 1; depth <= 5; depth++) {
        g_autoptr(GPtrArray) frames = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(frames, g_strdup("malloc@" VG));
        g_ptr_array_add(frames, g_strdup("leaky_alloc@" EXT));
        for (guint i = 0; i < depth; i++)
            g_ptr_array_add(frames, g_strdup("?@/usr/lib/libxml2.so.2"));
        g_ptr_array_add(frames, g_strdup("leaky_xpath@" EXT));
        g_ptr_array_add(frames, NULL);
        GlRecord *record = gl_test_record("Leak_DefinitelyLost", g_ptr_array_index(frames, 0),
                                          g_ptr_array_index(frames, 1), NULL);
        /* rebuild with all the frames */
        gl_record_free(record);
        record = gl_record_new();
        record->kind = gl_record_intern(record, "Leak_DefinitelyLost");
        record->leak_kind = GL_LEAK_DEFINITE;
        record->what = record->kind;
        record->stack.n_frames = frames->len - 1;
        record->stack.frames = g_new0(GlFrame, record->stack.n_frames);
        for (guint i = 0; i < record->stack.n_frames; i++) {
            g_auto(GStrv) parts = g_strsplit(g_ptr_array_index(frames, i), "@", 2);
            GlFrame *frame = &record->stack.frames[i];
            frame->fn = strcmp(parts[0], "?") == 0 ? NULL : gl_record_intern(record, parts[0]);
            frame->obj = gl_record_intern(record, parts[1]);
            frame->in_target = strcmp(parts[1], EXT) == 0;
        }
        record->leaked_bytes = 10;
        gl_findings_add(findings, record, depth);
    }
    ck_assert_uint_eq(gl_findings_count(findings), 1);
    gl_findings_fingerprint(findings, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    ck_assert_uint_eq(finding->occurrences, 5);
    /* the shallowest shows */
    ck_assert_uint_eq(finding->record->stack.n_frames, 4);
}
END_TEST

/* An error on a block the extension freed, with its free and allocation stacks. */
static GlRecord *freed_access(const char *kind, const char *what, const char *access, guint line)
{
    g_autofree char *frame = g_strdup_printf("%s@" EXT ":leaky.c:%u", access, line);
    GlRecord *record = gl_test_record(kind, frame, "rb_vm_exec@" RUBY, NULL);
    record->what = gl_record_intern(record, what);
    gl_test_record_add_aux(record, "Address 0x5 is 0 bytes inside a block of size 100 free'd",
                           "free@" VG, "leaky_uaf@" EXT ":leaky.c:19", NULL);
    gl_test_record_add_aux(record, "Block was alloc'd at", "malloc@" VG,
                           "leaky_uaf@" EXT ":leaky.c:18", NULL);
    for (guint a = 0; a < record->aux->len; a++)
        g_array_index(record->aux, GlAux, a).stack.frames[1].in_target = TRUE;
    record->stack.frames[0].in_target = TRUE;
    return record;
}

/* Rule 7: one use-after-free touched at two lines was two findings. */
START_TEST(test_accesses_to_one_freed_block_are_one_finding)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    gl_findings_add(findings, freed_access("InvalidWrite", "Invalid write of size 1", "leaky_uaf", 21), 1);
    gl_findings_add(findings, freed_access("InvalidRead", "Invalid read of size 1", "leaky_uaf", 20), 2);
    gl_findings_add(findings, freed_access("InvalidRead", "Invalid read of size 1", "leaky_uaf", 20), 3);
    /* a double free of the same block: the same bug */
    GlRecord *twice = freed_access("InvalidFree", "Invalid free() / delete / delete[] / realloc()",
                                   "leaky_uaf", 22);
    gl_findings_add(findings, twice, 4);
    ck_assert_uint_eq(gl_findings_count(findings), 1);
    /* another block is another finding */
    GlRecord *other = freed_access("InvalidRead", "Invalid read of size 1", "leaky_other", 50);
    g_array_index(other->aux, GlAux, 0).stack.frames[1].line = 49;
    gl_findings_add(findings, other, 5);
    ck_assert_uint_eq(gl_findings_count(findings), 2);

    gl_findings_fingerprint(findings, NULL);

    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    const GlFinding *finding = NULL;
    for (guint i = 0; i < sorted->len; i++)
        if (((GlFinding *) g_ptr_array_index(sorted, i))->occurrences == 4)
            finding = g_ptr_array_index(sorted, i);
    ck_assert_ptr_nonnull(finding);
    ck_assert(finding->freed_block);
    ck_assert_uint_eq(finding->sites->len, 3);
    g_autofree char *message = gl_finding_message(finding);
    ck_assert_msg(strstr(message, "2 other accesses to the same freed block") != NULL, "%s", message);
}
END_TEST

START_TEST(test_totals_do_not_wrap)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    for (guint i = 0; i < 3; i++) {
        GlRecord *record = leak(1, "15", "rb_vm_exec@" RUBY);
        record->leaked_bytes = G_MAXUINT64 - 1;
        record->leaked_blocks = G_MAXUINT64 / 2;
        gl_findings_add(findings, record, i);
    }
    gl_findings_fingerprint(findings, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    const GlFinding *finding = g_ptr_array_index(sorted, 0);
    ck_assert(finding->total_bytes == G_MAXUINT64);
    ck_assert(finding->total_blocks == G_MAXUINT64);
}
END_TEST

START_TEST(test_sorted_by_bytes_then_occurrences_then_order)
{
    g_autoptr(GlFindings) findings = gl_findings_new();
    GlRecord *small = leak(1, "1", "x@" RUBY);
    small->leaked_bytes = 10;
    GlRecord *big = leak(1, "2", "x@" RUBY);
    big->leaked_bytes = 5000;
    GlRecord *error_a = gl_test_record("InvalidRead", "a@" EXT, NULL);
    GlRecord *error_b = gl_test_record("InvalidRead", "b@" EXT, NULL);
    GlRecord *error_b2 = gl_test_record("InvalidRead", "b@" EXT, NULL);
    gl_findings_add(findings, error_a, 1);
    gl_findings_add(findings, small, 2);
    gl_findings_add(findings, error_b, 3);
    gl_findings_add(findings, big, 4);
    gl_findings_add(findings, error_b2, 5);
    gl_findings_fingerprint(findings, NULL);
    g_autoptr(GPtrArray) sorted = gl_findings_sorted(findings);
    ck_assert_uint_eq(sorted->len, 4);
    ck_assert_uint_eq(((GlFinding *) g_ptr_array_index(sorted, 0))->total_bytes, 5000);
    ck_assert_uint_eq(((GlFinding *) g_ptr_array_index(sorted, 1))->total_bytes, 10);
    ck_assert_str_eq(((GlFinding *) g_ptr_array_index(sorted, 2))->record->stack.frames[0].fn, "b");
    ck_assert_str_eq(((GlFinding *) g_ptr_array_index(sorted, 3))->record->stack.frames[0].fn, "a");
}
END_TEST

START_TEST(test_forked_child_merges_with_parent)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *dir = gl_test_fixture("xml/fork");
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(analysis->summary.processes, 2);
    ck_assert_uint_eq(analysis->findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(analysis->findings, 0);
    /* the parent's leak, the child's inherited copy, and the child's own:
     * Valgrind run without gemleak's helper, no check at the fork tells
     * the inherited copy from the rest */
    ck_assert_uint_eq(finding->occurrences, 3);
    ck_assert_uint_eq(finding->pids->len, 2);
    ck_assert_uint_eq(finding->total_bytes, 300);
}
END_TEST

/* The same fork under gemleak run, whose helper makes the child check for
 * leaks at the fork: the parent's two leaks (100 bytes at leaky_leak, 120
 * at leaky_leak_xmalloc) count once, in the parent; the child's own 100
 * bytes at leaky_leak once. */
START_TEST(test_forked_child_inherited_blocks_count_once)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *dir = gl_test_fixture("xml/fork_checked");
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(analysis->summary.processes, 2);
    ck_assert_uint_eq(analysis->findings->len, 2);
    const GlFinding *leak = g_ptr_array_index(analysis->findings, 0);
    ck_assert_str_eq(leak->record->stack.frames[2].fn, "leaky_leak");
    ck_assert_uint_eq(leak->total_bytes, 200);
    ck_assert_uint_eq(leak->total_blocks, 2);
    ck_assert_uint_eq(leak->occurrences, 2);
    ck_assert_uint_eq(leak->pids->len, 2);
    const GlFinding *xmalloc = g_ptr_array_index(analysis->findings, 1);
    ck_assert_uint_eq(xmalloc->total_bytes, 120);
    ck_assert_uint_eq(xmalloc->total_blocks, 1);
    ck_assert_uint_eq(xmalloc->occurrences, 1);
    ck_assert_uint_eq(xmalloc->pids->len, 1);
    /* the child's reports of the parent's two blocks, left out */
    ck_assert_uint_eq(analysis->summary.inherited, 2);
}
END_TEST

/* The whole JSON report, as the same analysis read with @jobs threads gives it. */
static char *json_report(guint jobs)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    ck_assert(gl_rules_add_target(rules, "other", NULL));
    g_autofree char *xml = gl_test_fixture("xml");
    g_autofree char *fork = gl_test_fixture("xml/fork");
    const char *paths[] = { xml, fork, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, jobs);
    GlReportContext context = { .analysis = analysis, .findings = analysis->findings };
    char *buffer = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buffer, &size);
    ck_assert(gl_report_write(gl_reporter_find("json"), &context, out, "memory", NULL));
    fclose(out);
    return buffer;
}

START_TEST(test_parallel_read_gives_the_same_report)
{
    g_autofree char *serial = json_report(1);
    g_autofree char *parallel = json_report(4);
    ck_assert_str_eq(serial, parallel);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, serial, -1, NULL));
    JsonObject *summary = json_object_get_object_member(
        json_node_get_object(json_parser_get_root(parser)), "summary");
    g_autofree char *xml = gl_test_fixture("xml");
    g_autofree char *fork = gl_test_fixture("xml/fork");
    g_autoptr(GPtrArray) top = gl_input_list(xml, NULL, NULL);
    g_autoptr(GPtrArray) forked = gl_input_list(fork, NULL, NULL);
    ck_assert_int_eq(json_object_get_int_member(summary, "files"), top->len + forked->len);
    ck_assert_int_gt(json_object_get_int_member(summary, "findings"), 5);
}
END_TEST

START_TEST(test_unreadable_inputs_are_problems_not_failures)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *leak_xml = gl_test_fixture("xml/leak.xml");
    g_autofree char *empty_dir = gl_test_tmpdir();
    const char *paths[] = { "/nonexistent.xml", leak_xml, empty_dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 2);
    ck_assert_uint_eq(analysis->problems->len, 2);
    ck_assert_uint_eq(analysis->findings->len, 3);
    ck_assert_uint_eq(analysis->summary.processes, 1);
    const GError *missing = g_ptr_array_index(analysis->problems, 0);
    const GError *nothing = g_ptr_array_index(analysis->problems, 1);
    ck_assert(strstr(missing->message, "/nonexistent.xml") != NULL);
    ck_assert(strstr(nothing->message, "no *.xml or *.xml.gz files") != NULL);
    gl_remove_tree(empty_dir);
}
END_TEST

/* A kept run directory with gzip-compressed XML and, beside it, another
 * tool's XML (a JUnit report): Valgrind's files are read, the other is
 * skipped with a note, not counted as a problem that fails the run. */
START_TEST(test_run_directory_with_gzip_and_other_xml)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_autofree char *leak_xml = gl_test_fixture("xml/leak.xml");
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *command = g_strdup_printf("gzip -c '%s' > '%s/100.xml.gz'", leak_xml, dir);
    ck_assert_int_eq(system(command), 0);
    g_autofree char *junit = g_build_filename(dir, "junit.xml", NULL);
    gl_test_write(junit, "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"x\"/>"
                         "</testsuites>\n", -1);
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 2);
    ck_assert_msg(analysis->problems->len == 0, "%s",
                  analysis->problems->len > 0
                      ? ((GError *) g_ptr_array_index(analysis->problems, 0))->message : "");
    ck_assert_uint_eq(analysis->findings->len, 3);
    ck_assert_uint_eq(analysis->summary.processes, 1);
    gboolean noted = FALSE;
    for (guint i = 0; i < analysis->notes->len; i++)
        noted |= strstr(g_ptr_array_index(analysis->notes, i), "junit.xml: skipped") != NULL;
    ck_assert(noted);
    /* but a file the user names is read, and its trouble is a problem */
    const char *named[] = { junit, NULL };
    g_autoptr(GlAnalysis) direct = gl_analyze(named, rules, 1);
    ck_assert_uint_eq(direct->problems->len, 1);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_merge_suite(void)
{
    Suite *suite = suite_create("merge");
    TCase *tc = tcase_create("merge");
    tcase_add_test(tc, test_same_stack_in_two_processes_merges);
    tcase_add_test(tc, test_identity_stops_at_the_last_target_frame);
    tcase_add_test(tc, test_fingerprints_tell_sites_apart_and_survive_shifts);
    tcase_add_test(tc, test_fingerprints_unique_in_a_report);
    tcase_add_test(tc, test_fingerprints_leave_out_rubys_frames);
    tcase_add_test(tc, test_finding_shown_by_content_not_reading_order);
    tcase_add_test(tc, test_repeated_frames_count_once);
    tcase_add_test(tc, test_accesses_to_one_freed_block_are_one_finding);
    tcase_add_test(tc, test_totals_do_not_wrap);
    tcase_add_test(tc, test_sorted_by_bytes_then_occurrences_then_order);
    tcase_add_test(tc, test_forked_child_merges_with_parent);
    tcase_add_test(tc, test_forked_child_inherited_blocks_count_once);
    tcase_add_test(tc, test_parallel_read_gives_the_same_report);
    tcase_add_test(tc, test_unreadable_inputs_are_problems_not_failures);
    tcase_add_test(tc, test_run_directory_with_gzip_and_other_xml);
    suite_add_tcase(suite, tc);
    return suite;
}
