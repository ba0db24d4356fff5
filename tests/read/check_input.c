/* The input seam (gemleak/read/input.h): which format a file is, which
 * files of a directory are read, the one model of a process every format
 * fills in, and a sanitizer's log read in bounded memory. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/judge/judgement.h"
#include "gemleak/read/input.h"
/* the seam's private table, for a format of the test's own */
#include "../../src/read/input_int.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Returns: (transfer none): the name of the format the seam reads @path as. */
static const char *format_of(const char *path)
{
    GError *error = NULL;
    GlInput *input = gl_input_open(path, FALSE, NULL, &error);
    ck_assert_msg(input != NULL, "%s: %s", path, error != NULL ? error->message : "");
    const char *name = gl_input_format_name(gl_input_format(input));
    gl_input_free(input);
    return name;
}

/* Each format is told by the file's first bytes, whatever its name; what
 * no other claims is Valgrind's XML, which says what is wrong with it. */
START_TEST(test_formats_told_by_their_first_bytes)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *xml = gl_test_fixture("xml/leak.xml");
    g_autofree char *lsan = gl_test_fixture("lsan/leaky-ruby34.lsan");
    g_autofree char *asan = gl_test_fixture("asan/r_overflow.asan");
    ck_assert_str_eq(format_of(xml), "valgrind-xml");
    ck_assert_str_eq(format_of(lsan), "sanitizer");
    ck_assert_str_eq(format_of(asan), "sanitizer");
    g_autofree char *json = g_build_filename(dir, "report.xml", NULL);
    gl_test_write(json, "\n  {\"tool\": {\"name\": \"gemleak\"}, \"findings\": []}\n", -1);
    ck_assert_str_eq(format_of(json), "gemleak-json");
    g_autofree char *text = g_build_filename(dir, "notes.txt", NULL);
    gl_test_write(text, "nothing of anyone's\n", -1);
    ck_assert_str_eq(format_of(text), "valgrind-xml");

    /* found in a directory, a JSON object is no input of an engine's */
    GError *error = NULL;
    g_autoptr(GlInput) listed = gl_input_open(json, TRUE, NULL, &error);
    ck_assert_ptr_nonnull(listed);
    ck_assert_str_eq(gl_input_format_name(gl_input_format(listed)), "valgrind-xml");

    /* memory: told the same way, or as the caller says */
    static const char report[] = "==7==ERROR: LeakSanitizer: detected memory leaks\n";
    g_autoptr(GlInput) told = gl_input_open_memory(NULL, report, sizeof report - 1, "m");
    ck_assert_str_eq(gl_input_format_name(gl_input_format(told)), "sanitizer");
    ck_assert_ptr_null(gl_input_dir(told));
    ck_assert_ptr_null(gl_input_format_find("no-such-format"));
    gl_remove_tree(dir);
}
END_TEST

/* A directory's inputs: Valgrind's files by their names, a sanitizer's
 * report by its first bytes; a JSON report is read only when named; what
 * is not a regular file is skipped with a note. */
START_TEST(test_listing_a_directory)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *lsan = gl_test_fixture("lsan/leaky-ruby34.lsan");
    gsize length = 0;
    g_autofree char *report = gl_test_read(lsan, &length);
    g_autofree char *log = g_build_filename(dir, "whatever.123", NULL);
    gl_test_write(log, report, (gssize) length);
    g_autofree char *xml = g_build_filename(dir, "123.xml", NULL);
    gl_test_write(xml, "<?xml version=\"1.0\"?>\n", -1);
    g_autofree char *json = g_build_filename(dir, "shard.json", NULL);
    gl_test_write(json, "{\"tool\": {\"name\": \"gemleak\"}, \"findings\": []}\n", -1);
    g_autofree char *other = g_build_filename(dir, "loaded-123.txt", NULL);
    gl_test_write(other, "/x/y.so\n", -1);
    g_autofree char *fifo = g_build_filename(dir, "124.xml", NULL);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);

    g_autoptr(GPtrArray) skipped = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) files = gl_input_list(dir, skipped, &error);
    ck_assert_ptr_nonnull(files);
    ck_assert_uint_eq(files->len, 2);
    ck_assert_str_eq(g_ptr_array_index(files, 0), xml);
    ck_assert_str_eq(g_ptr_array_index(files, 1), log);
    ck_assert_uint_eq(skipped->len, 1);
    g_autofree char *note = g_strdup_printf("%s: skipped: not a regular file (a FIFO)", fifo);
    ck_assert_str_eq(g_ptr_array_index(skipped, 0), note);
    ck_assert(gl_input_dir_has_inputs(dir));

    /* a FIFO put there after it was listed never blocks */
    g_autofree char *why = NULL;
    ck_assert_ptr_null(gl_input_open(fifo, TRUE, &why, &error));
    ck_assert_str_eq(why, note);

    g_autofree char *missing = g_build_filename(dir, "no-such-dir", NULL);
    ck_assert_ptr_null(gl_input_list(missing, NULL, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_IO));
    gl_remove_tree(dir);
}
END_TEST

/* Every format fills in the same model of its process. */
START_TEST(test_one_model_of_a_process)
{
    static const struct {
        const char *fixture;
        const char *tool;
        gint64 pid;
        gboolean complete;
        gboolean one_process;
    } cases[] = {
        { "xml/leak.xml", "memcheck", 0, TRUE, FALSE },
        { "lsan/leaky-ruby34.lsan", "LeakSanitizer", 0, TRUE, TRUE },
        { "asan/r_uaf_two_lines.asan", "AddressSanitizer", 26477, TRUE, TRUE },
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autofree char *path = gl_test_fixture(cases[c].fixture);
        g_autoptr(GlInput) input = gl_input_open(path, FALSE, NULL, NULL);
        ck_assert_ptr_nonnull(input);
        guint records = 0;
        GlRecord *record;
        while ((record = gl_input_next(input)) != NULL) {
            records++;
            gl_record_free(record);
        }
        const GlProcess *process = gl_input_process(input);
        ck_assert_uint_eq(process->stands_for, 1);
        ck_assert_str_eq(process->tool, cases[c].tool);
        ck_assert_msg(cases[c].pid == 0 || process->pid == cases[c].pid, "%s", cases[c].fixture);
        ck_assert_int_gt(process->pid, 0);
        ck_assert(process->complete == cases[c].complete);
        ck_assert(process->traits.one_process == cases[c].one_process);
        ck_assert_uint_eq(process->n_errors, records);
        ck_assert_uint_gt(records, 0);
        ck_assert_uint_eq(gl_input_problems(input)->len, 0);
        g_autofree char *dir = g_path_get_dirname(path);
        ck_assert_str_eq(gl_input_dir(input), dir);
    }
}
END_TEST

/* ---- a format added in a test: the table a format fills in is all ---------------- */

/* A format of this test's: a line a leak, "KIND FN@OBJECT FN@OBJECT...". */
typedef struct {
    char **lines;
    guint next;
    GlProcess process;
    GPtrArray *problems;
} Lines;

static gpointer open_lines(int fd, const char *data, gsize size, const char *name)
{
    (void) fd;
    (void) name;
    Lines *lines = g_new0(Lines, 1);
    g_autofree char *text = g_strndup(data, size);
    lines->lines = g_strsplit(text, "\n", -1);
    lines->process.stands_for = 1;
    lines->process.pid = 7;
    lines->process.tool = "lines";
    lines->problems = g_ptr_array_new_with_free_func((GDestroyNotify) g_error_free);
    return lines;
}

static GlRecord *next_lines(gpointer state)
{
    Lines *lines = state;
    while (lines->lines[lines->next] != NULL) {
        g_auto(GStrv) words = g_strsplit(lines->lines[lines->next++], " ", -1);
        if (words[0] == NULL || *words[0] == '\0')
            continue;
        GlRecord *record = gl_record_new();
        record->kind = gl_record_intern(record, words[0]);
        record->leak_kind = gl_leak_kind_from_name(words[0]);
        record->what = record->kind;
        record->pid = lines->process.pid;
        record->at_exit = TRUE;
        record->has_leak_size = TRUE;
        record->leaked_bytes = 8;
        record->leaked_blocks = 1;
        record->stack.n_frames = g_strv_length(words) - 1;
        record->stack.frames = g_new0(GlFrame, record->stack.n_frames);
        for (guint i = 0; i < record->stack.n_frames; i++) {
            g_auto(GStrv) at = g_strsplit(words[i + 1], "@", 2);
            record->stack.frames[i].fn = gl_record_intern(record, at[0]);
            record->stack.frames[i].obj = gl_record_intern(record, at[1]);
            record->stack.frames[i].ip = 0x1000 + i;
        }
        lines->process.n_errors++;
        return record;
    }
    return NULL;
}

static const GlProcess *process_lines(gconstpointer state)
{
    return &((const Lines *) state)->process;
}

static const GPtrArray *problems_lines(gconstpointer state)
{
    return ((const Lines *) state)->problems;
}

static void free_lines(gpointer state)
{
    Lines *lines = state;
    g_strfreev(lines->lines);
    g_ptr_array_unref(lines->problems);
    g_free(lines);
}

static const GlInputFormat lines_format = {
    .name = "lines",
    .reads = "a line a record, its frames fn@object",
    .open = open_lines,
    .next = next_lines,
    .process = process_lines,
    .problems = problems_lines,
    .free = free_lines,
};

/* doc/guide.md, "Adding an input format": a format is the table it fills
 * in; through it, the one loop of the judges judges its records as any
 * engine's, and nothing after the seam knows it is new. */
START_TEST(test_a_format_added_in_a_test)
{
    static const char text[] =
        "Leak_DefinitelyLost malloc@/lib/libc.so.6 leaky_alloc@/x/leaky.so main@/usr/bin/ruby\n"
        "Leak_DefinitelyLost malloc@/lib/libc.so.6 deflateInit2_@/lib/libz.so.1 main@/usr/bin/ruby\n"
        "Leak_IndirectlyLost malloc@/lib/libc.so.6 leaky_alloc@/x/leaky.so main@/usr/bin/ruby\n";
    g_autoptr(GlInput) input = gl_input_open_memory(&lines_format, text, sizeof text - 1, "t.lines");
    ck_assert_str_eq(gl_input_format_name(gl_input_format(input)), "lines");
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    g_auto(GlJudgement) judged;
    gl_judgement_init(&judged);
    gl_judge_input(input, "t.lines", rules, 0, FALSE, &judged);
    ck_assert_uint_eq(judged.processes, 1);
    ck_assert_uint_eq(judged.errors_seen, 3);
    ck_assert_uint_eq(judged.by_verdict[GL_VERDICT_KEEP], 1);
    ck_assert_uint_eq(judged.by_verdict[GL_VERDICT_SKIP_NO_TARGET], 1);
    ck_assert_uint_eq(judged.by_verdict[GL_VERDICT_SKIP_KIND], 1);
    ck_assert_uint_eq(judged.problems->len, 0);
    g_autoptr(GPtrArray) findings = gl_findings_list(judged.findings);
    ck_assert_uint_eq(findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(findings, 0);
    ck_assert_str_eq(gl_record_first_target_frame(finding->record)->fn, "leaky_alloc");
    ck_assert_int_eq(g_array_index(finding->pids, gint64, 0), 7);
}
END_TEST

/* doc/guide.md's walk-through of adding an input format is the tree's: the
 * files it names are there, and those it says need no change for a new
 * format (the fuzzer, filter's help) name none of the formats there are. */
START_TEST(test_guide_names_the_files_a_format_touches)
{
    gl_test_guide_files("**Adding an input format** touches these four files", 4, "FORMAT");

    const char *untouched[] = { "fuzz/fuzz_reader.c", "src/cli/filter.c" };
    const char *formats[] = { "valgrind-xml", "sanitizer", "gemleak-json" };
    for (guint f = 0; f < G_N_ELEMENTS(formats); f++)
        ck_assert_ptr_nonnull(gl_input_format_find(formats[f]));
    for (guint i = 0; i < G_N_ELEMENTS(untouched); i++) {
        g_autofree char *path = gl_test_project_file(untouched[i]);
        g_autofree char *text = gl_test_read(path, NULL);
        for (guint f = 0; f < G_N_ELEMENTS(formats); f++) {
            g_autofree char *quoted = g_strdup_printf("\"%s\"", formats[f]);
            ck_assert_msg(strstr(text, quoted) == NULL, "%s names the format %s", untouched[i],
                          formats[f]);
        }
    }
    /* what filter --help lists is the table's, each format once */
    g_autofree char *help = gl_input_formats_help();
    ck_assert_msg(g_str_has_prefix(help, "  - Valgrind memcheck XML: "), "%s", help);
    ck_assert_ptr_nonnull(strstr(help, "\n  - gemleak's own JSON reports"));
    ck_assert_ptr_nonnull(strstr(help, "\n  - LeakSanitizer and AddressSanitizer reports"));
    guint listed = 0;
    for (const char *at = help; (at = strstr(at, "  - ")) != NULL; at += 4)
        listed++;
    ck_assert_uint_eq(listed, G_N_ELEMENTS(formats));
}
END_TEST

/* ---- a sanitizer's log in bounded memory -------------------------------------- */

/* What the log for the bound holds, and how much of it. */
#define BIG_LOG_BYTES ((gsize) 128 * 1024 * 1024)

/* Writes a log of about BIG_LOG_BYTES at @path, as one process of a long
 * --per-test run under the AddressSanitizer engine writes it: the probe's
 * LeakSanitizer report again and again, each a check the helper asked for
 * ("gemleak:checked" after it), an AddressSanitizer error report again and
 * again (an extension built with -fsanitize-recover=address writes one per
 * error), then the report at exit. Returns: FALSE when it cannot be
 * written (no room). */
static gboolean write_big_log(const char *path)
{
    g_autofree char *lsan_path = gl_test_fixture("lsan/probe-ruby34.lsan");
    g_autofree char *asan_path = gl_test_fixture("asan/r_uaf_two_lines.asan");
    gsize lsan_length = 0, asan_length = 0;
    g_autofree char *lsan = gl_test_read(lsan_path, &lsan_length);
    g_autofree char *asan = gl_test_read(asan_path, &asan_length);
    /* without its "==PID==ABORTING": the process goes on after an error */
    char *aborting = strstr(asan, "==26477==ABORTING");
    ck_assert_ptr_nonnull(aborting);
    asan_length = (gsize) (aborting - asan);
    g_autoptr(GString) check = g_string_new("gemleak:tests\t1\tT#t\t/t.rb:1\tT#t\t/t.rb:1\n");
    g_string_append_len(check, lsan, (gssize) lsan_length);
    g_string_append(check, "gemleak:checked\n");
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return FALSE;
    gsize written = 0;
    gboolean ok = TRUE;
    while (ok && written < BIG_LOG_BYTES / 2) {
        ok = fwrite(check->str, 1, check->len, out) == check->len;
        written += check->len;
    }
    while (ok && written < BIG_LOG_BYTES) {
        ok = fwrite(asan, 1, asan_length, out) == asan_length;
        written += asan_length;
    }
    ok = ok && fputs("gemleak:exit\n", out) >= 0 &&
         fwrite(lsan, 1, lsan_length, out) == lsan_length && fputs("gemleak:done\n", out) >= 0;
    return fclose(out) == 0 && ok;
}

#if !defined(__SANITIZE_ADDRESS__)
/* Returns: the bytes of address space the process has mapped now. */
static gsize address_space(void)
{
    g_autofree char *statm = NULL;
    ck_assert(g_file_get_contents("/proc/self/statm", &statm, NULL, NULL));
    return (gsize) g_ascii_strtoull(statm, NULL, 10) * (gsize) sysconf(_SC_PAGESIZE);
}
#endif

/* Reads @path through the seam and the one loop of the judges, as gemleak
 * filter reads an input, and exits 0 when it read the whole: one process,
 * the probe's leaks and the use after free found, no problem. In a child:
 * a read that cannot fit its limit aborts it. */
static void read_big_log(const char *path)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    gl_rules_add_target(rules, "probe", NULL);
    g_autoptr(GlInput) input = gl_input_open(path, FALSE, NULL, NULL);
    if (input == NULL)
        _exit(2);
    GlJudgement judged;
    gl_judgement_init(&judged);
    gl_judge_input(input, path, rules, 0, FALSE, &judged);
    g_autoptr(GPtrArray) findings = gl_findings_list(judged.findings);
    gboolean uaf = FALSE;
    for (guint i = 0; i < findings->len; i++)
        uaf |= strcmp(((GlFinding *) g_ptr_array_index(findings, i))->record->kind,
                      "InvalidRead") == 0;
    gboolean whole = judged.processes == 1 && judged.problems->len == 0 && uaf &&
                     findings->len > 10 && judged.errors_seen > 1000;
    gl_judgement_clear(&judged);
    _exit(whole ? 0 : 3);
}

/* Issue 26, item 16: a sanitizer's log read whole took three times its
 * size (a 600 MB log peaked at 1.78 GB). It is read a line at a time, a
 * record handed on as soon as its report is settled: reading a 128 MiB
 * log fits in a child whose address space is held to 64 MiB more than it
 * started with (the whole file alone would not), and its peak resident
 * memory grows by less than a quarter of the log. Under AddressSanitizer,
 * whose shadow memory reserves terabytes, only the peak is measured, to
 * half the log. */
START_TEST(test_sanitizer_log_read_in_bounded_memory)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "lsan.25997", NULL);
    if (!write_big_log(path)) {
        gl_remove_tree(dir);
        gl_test_skip("no room for a %zu MiB log in %s", BIG_LOG_BYTES >> 20, dir);
    }
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_ge((guint64) st.st_size, BIG_LOG_BYTES);
    struct rusage before;
    ck_assert_int_eq(getrusage(RUSAGE_SELF, &before), 0);
#if defined(__SANITIZE_ADDRESS__)
    gboolean limited = FALSE;
    gsize allowed = BIG_LOG_BYTES / 2;
#else
    gboolean limited = TRUE;
    gsize allowed = BIG_LOG_BYTES / 4;
    gsize limit = address_space() + (gsize) 64 * 1024 * 1024;
#endif
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
#if !defined(__SANITIZE_ADDRESS__)
        struct rlimit rl = { .rlim_cur = limit, .rlim_max = limit };
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(4);
#endif
        read_big_log(path);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    /* the test's only child: its peak is the children's */
    struct rusage usage;
    ck_assert_int_eq(getrusage(RUSAGE_CHILDREN, &usage), 0);
    gl_remove_tree(dir);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the %zu MiB log was not read whole%s: %s %d", BIG_LOG_BYTES >> 20,
                  limited ? " within 64 MiB more of address space" : "",
                  WIFEXITED(status) ? "exit status" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    /* ru_maxrss is in KiB */
    gsize grew = usage.ru_maxrss > before.ru_maxrss
                     ? (gsize) (usage.ru_maxrss - before.ru_maxrss) * 1024 : 0;
    ck_assert_msg(grew < allowed, "reading a %zu MiB log took %zu MiB more resident memory "
                  "(bound: %zu MiB)", BIG_LOG_BYTES >> 20, grew >> 20, allowed >> 20);
}
END_TEST

Suite *gl_input_suite(void)
{
    Suite *suite = suite_create("input");
    TCase *tc = tcase_create("input");
    tcase_add_test(tc, test_formats_told_by_their_first_bytes);
    tcase_add_test(tc, test_listing_a_directory);
    tcase_add_test(tc, test_one_model_of_a_process);
    tcase_add_test(tc, test_a_format_added_in_a_test);
    tcase_add_test(tc, test_guide_names_the_files_a_format_touches);
    suite_add_tcase(suite, tc);
    TCase *bound = tcase_create("bound");
    tcase_add_test(bound, test_sanitizer_log_read_in_bounded_memory);
    suite_add_tcase(suite, bound);
    return suite;
}
