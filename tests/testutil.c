/* Helpers shared by the Check suites. */
#include "testutil.h"
#include "gemleak/cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

const char *gl_test_fixtures = "fixtures";

char *gl_test_fixture(const char *relative)
{
    return g_build_filename(gl_test_fixtures, relative, NULL);
}

char *gl_test_project_file(const char *relative)
{
    g_autofree char *fixtures = g_canonicalize_filename(gl_test_fixtures, NULL);
    g_autofree char *root = g_path_get_dirname(fixtures);
    return g_build_filename(root, relative, NULL);
}

void gl_test_guide_files(const char *heading, guint n_files, const char *new_marker)
{
    g_autofree char *guide_path = gl_test_project_file("doc/guide.md");
    g_autofree char *guide = gl_test_read(guide_path, NULL);
    const char *start = strstr(guide, heading);
    ck_assert_msg(start != NULL, "the guide has no \"%s\"", heading);
    /* the list ends at the first paragraph that is not an item */
    g_autoptr(GRegex) end = g_regex_new("\n\n(?![0-9]+\\. |   )", 0, 0, NULL);
    g_autoptr(GMatchInfo) at = NULL;
    const char *list = strstr(start, "\n1. ");
    ck_assert_msg(list != NULL, "\"%s\" has no numbered list", heading);
    gsize length = strlen(list);
    if (g_regex_match(end, list + 1, 0, &at)) {
        int from = 0;
        g_match_info_fetch_pos(at, 0, &from, NULL);
        length = (gsize) from + 1;
    }
    g_autofree char *section = g_strndup(list, length);
    g_autoptr(GRegex) item = g_regex_new("^([0-9]+)\\. `([^`]+)`", G_REGEX_MULTILINE, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    guint items = 0;
    for (g_regex_match(item, section, 0, &match); g_match_info_matches(match);
         g_match_info_next(match, NULL)) {
        g_autofree char *number = g_match_info_fetch(match, 1);
        g_autofree char *file = g_match_info_fetch(match, 2);
        ck_assert_uint_eq((guint) g_ascii_strtoull(number, NULL, 10), ++items);
        if (strstr(file, new_marker) != NULL)
            continue;
        g_autofree char *path = gl_test_project_file(file);
        ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_REGULAR),
                      "\"%s\": the guide names %s, which is not in the tree", heading, file);
    }
    ck_assert_msg(items == n_files, "\"%s\": %u files listed, not %u", heading, items, n_files);
}

/* "...<line>N</line>" -> "...<line>N + *@shift</line>" */
static gboolean shift_line(const GMatchInfo *match, GString *out, gpointer shift)
{
    g_autofree char *head = g_match_info_fetch(match, 1);
    g_autofree char *line = g_match_info_fetch(match, 2);
    g_string_append_printf(out, "%s%" G_GUINT64_FORMAT "</line>", head,
                           g_ascii_strtoull(line, NULL, 10) + *(const guint *) shift);
    return FALSE;
}

char *gl_test_capture_in(const char *fixture, const char *from, const char *ext, const char *root,
                         guint shift)
{
    g_autofree char *sources = g_build_filename(gl_test_fixtures, "ext", ext, NULL);
    g_autofree char *dir = g_build_filename(root, ext, NULL);
    ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
    g_autoptr(GDir) listing = g_dir_open(sources, 0, NULL);
    ck_assert_ptr_nonnull(listing);
    g_autofree char *blank = g_strnfill(shift, '\n');
    for (const char *name; (name = g_dir_read_name(listing)) != NULL;) {
        if (!g_str_has_suffix(name, ".c"))
            continue;
        g_autofree char *source = g_build_filename(sources, name, NULL);
        g_autofree char *text = gl_test_read(source, NULL);
        g_autofree char *moved = g_strconcat(blank, text, NULL);
        g_autofree char *copy = g_build_filename(dir, name, NULL);
        gl_test_write(copy, moved, -1);
    }
    g_autofree char *path = gl_test_fixture(fixture);
    g_autofree char *xml = gl_test_read(path, NULL);
    g_autoptr(GString) text = g_string_new(xml);
    g_autofree char *old_dir = g_strdup_printf("<dir>%s</dir>", from);
    g_autofree char *new_dir = g_strdup_printf("<dir>%s</dir>", dir);
    g_autofree char *old_obj = g_strdup_printf("<obj>%s/", from);
    g_autofree char *new_obj = g_strdup_printf("<obj>%s/", dir);
    ck_assert_uint_gt(g_string_replace(text, old_dir, new_dir, 0), 0);
    g_string_replace(text, old_obj, new_obj, 0);
    g_autofree char *escaped = g_regex_escape_string(new_dir, -1);
    g_autofree char *pattern = g_strdup_printf("(%s\\s*<file>[^<]*</file>\\s*<line>)(\\d+)</line>",
                                               escaped);
    g_autoptr(GRegex) lines = g_regex_new(pattern, 0, 0, NULL);
    g_autofree char *shifted = g_regex_replace_eval(lines, text->str, -1, 0, 0, shift_line, &shift,
                                                    NULL);
    g_autofree char *base = g_path_get_basename(fixture);
    char *written = g_build_filename(root, base, NULL);
    gl_test_write(written, shifted, -1);
    return written;
}

/* Debian's Python, where python3-jsonschema is installed (a python3 earlier
 * on PATH may lack it). */
#define PYTHON "/usr/bin/python3"

static const char validate_sarif[] =
    "import json, sys, jsonschema\n"
    "schema = json.load(open(sys.argv[1]))\n"
    "log = json.load(open(sys.argv[2]))\n"
    "jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)\n";

void gl_test_assert_sarif_file_valid(const char *path)
{
    g_autofree char *schema = gl_test_project_file("tests/schemas/sarif-schema-2.1.0.json");
    const char *argv[] = { PYTHON, "-c", validate_sarif, schema, path, NULL };
    g_autofree char *err = NULL;
    ck_assert_msg(gl_test_spawn(argv, NULL, &err) == 0, "SARIF report does not validate:\n%s", err);
}

void gl_test_assert_sarif_valid(const char *text)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "report.sarif", NULL);
    gl_test_write(path, text, -1);
    gl_test_assert_sarif_file_valid(path);
    gl_remove_tree(dir);
}

/* Copies @from to @to, GL_TEST_GEMS_DIR made @root. */
static void copy_moved(const char *from, const char *to, const char *root)
{
    g_autofree char *text = gl_test_read(from, NULL);
    g_autoptr(GString) moved = g_string_new(text);
    g_string_replace(moved, GL_TEST_GEMS_DIR, root, 0);
    gl_test_write(to, moved->str, (gssize) moved->len);
}

char *gl_test_gem_capture(const char *fixture, const char *root, const char *gem)
{
    g_autofree char *project = g_build_filename(root, gem, NULL);
    ck_assert_int_eq(g_mkdir_with_parents(project, 0755), 0);
    g_autofree char *path = gl_test_fixture(fixture);
    g_autofree char *base = g_path_get_basename(fixture);
    char *copy = g_build_filename(root, base, NULL);
    if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
        copy_moved(path, copy, root);
        return copy;
    }
    ck_assert_int_eq(g_mkdir_with_parents(copy, 0755), 0);
    g_autoptr(GDir) listing = g_dir_open(path, 0, NULL);
    ck_assert_ptr_nonnull(listing);
    for (const char *name; (name = g_dir_read_name(listing)) != NULL;) {
        g_autofree char *from = g_build_filename(path, name, NULL);
        g_autofree char *to = g_build_filename(copy, name, NULL);
        copy_moved(from, to, root);
    }
    return copy;
}

int gl_test_spawn(const char *const *argv, char **out, char **err)
{
    return gl_test_spawn_in(NULL, NULL, argv, out, err);
}

int gl_test_spawn_in(const char *cwd, char **env, const char *const *argv, char **out, char **err)
{
    g_autoptr(GError) error = NULL;
    int wait_status = 0;
    ck_assert_msg(g_spawn_sync(cwd, (char **) argv, env, G_SPAWN_SEARCH_PATH, NULL, NULL, out,
                               err, &wait_status, &error),
                  "cannot run %s: %s", argv[0], error != NULL ? error->message : "?");
    if (WIFEXITED(wait_status))
        return WEXITSTATUS(wait_status);
    return 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
}

char *gl_test_read(const char *path, gsize *length)
{
    char *contents = NULL;
    g_autoptr(GError) error = NULL;
    ck_assert_msg(g_file_get_contents(path, &contents, length, &error), "cannot read %s: %s",
                  path, error != NULL ? error->message : "?");
    return contents;
}

void gl_test_write(const char *path, const char *data, gssize length)
{
    g_autoptr(GError) error = NULL;
    ck_assert_msg(g_file_set_contents(path, data, length, &error), "cannot write %s: %s", path,
                  error != NULL ? error->message : "?");
}

char *gl_test_tmpdir(void)
{
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("gemleak-test-XXXXXX", &error);
    ck_assert_msg(dir != NULL, "cannot make a temporary directory: %s",
                  error != NULL ? error->message : "?");
    return dir;
}

char *gl_test_mapped_library(const char *name)
{
    g_autofree char *maps = NULL;
    if (!g_file_get_contents("/proc/self/maps", &maps, NULL, NULL))
        return NULL;
    g_auto(GStrv) lines = g_strsplit(maps, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        const char *path = strchr(*line, '/');
        if (path != NULL && strstr(path, name) != NULL)
            return g_strdup(path);
    }
    return NULL;
}

char *gl_test_gcc_file(const char *name)
{
    g_autofree char *option = g_strconcat("-print-file-name=", name, NULL);
    const char *argv[] = { "gcc", option, NULL };
    g_autofree char *out = NULL;
    if (gl_test_spawn(argv, &out, NULL) != 0 || out == NULL)
        return NULL;
    char *path = g_strdup(g_strstrip(out));
    if (!g_path_is_absolute(path) || !g_file_test(path, G_FILE_TEST_EXISTS))
        g_clear_pointer(&path, g_free);
    return path;
}

guint gl_test_count(const char *haystack, gsize length, const char *needle)
{
    guint count = 0;
    gsize n = strlen(needle);
    for (const char *at = haystack; (at = g_strstr_len(at, (gssize) (length - (gsize) (at - haystack)),
                                                       needle)) != NULL; at += n)
        count++;
    return count;
}

void gl_assert_no_raw_control(const char *text)
{
    for (const char *c = text; *c != '\0'; c++)
        ck_assert_msg(*c == '\n' || (unsigned char) *c >= 0x20 || *c == '\t',
                      "a raw control character 0x%02x in:\n%s", (unsigned char) *c, text);
    ck_assert_msg(strchr(text, 0x7f) == NULL, "a raw DEL in:\n%s", text);
    gl_assert_no_line(text, "^gemleak: pass");
    gl_assert_no_line(text, "^forged");
}

static char *slurp(FILE *stream)
{
    GString *text = g_string_new(NULL);
    char buffer[4096];
    size_t n;
    rewind(stream);
    while ((n = fread(buffer, 1, sizeof buffer, stream)) > 0)
        g_string_append_len(text, buffer, (gssize) n);
    fclose(stream);
    return g_string_free(text, FALSE);
}

void gl_test_gemleak_argv(GlTestRun *run, const char *const *args)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) "gemleak");
    for (const char *const *arg = args; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    FILE *out = tmpfile();
    FILE *err = tmpfile();
    ck_assert(out != NULL && err != NULL);
    run->status = gemleak_main((int) argv->len - 1, (char **) argv->pdata, out, err);
    run->out = slurp(out);
    run->err = slurp(err);
}

void gl_test_gemleak(GlTestRun *run, const char *first, ...)
{
    g_autoptr(GPtrArray) args = g_ptr_array_new();
    va_list ap;
    va_start(ap, first);
    for (const char *arg = first; arg != NULL; arg = va_arg(ap, const char *))
        g_ptr_array_add(args, (gpointer) arg);
    va_end(ap);
    g_ptr_array_add(args, NULL);
    gl_test_gemleak_argv(run, (const char *const *) args->pdata);
}

void gl_test_run_clear(GlTestRun *run)
{
    g_clear_pointer(&run->out, g_free);
    g_clear_pointer(&run->err, g_free);
}

static GlStack build_stack(GlRecord *record, const char *first, va_list ap)
{
    g_autoptr(GArray) frames = g_array_new(FALSE, TRUE, sizeof(GlFrame));
    guint64 ip = 0x1000;
    for (const char *spec = first; spec != NULL; spec = va_arg(ap, const char *)) {
        GlFrame frame = { .ip = ip++ };
        g_auto(GStrv) at = g_strsplit(spec, "@", 2);
        frame.fn = strcmp(at[0], "?") == 0 ? NULL : gl_record_intern(record, at[0]);
        if (at[1] != NULL && at[1][0] != '\0') {
            g_auto(GStrv) parts = g_strsplit(at[1], ":", 3);
            frame.obj = *parts[0] != '\0' ? gl_record_intern(record, parts[0]) : NULL;
            if (parts[1] != NULL && parts[2] != NULL) {
                frame.file = gl_record_intern(record, parts[1]);
                frame.line = (guint) g_ascii_strtoull(parts[2], NULL, 10);
            }
        }
        g_array_append_val(frames, frame);
    }
    GlStack stack = { .n_frames = frames->len };
    stack.frames = (GlFrame *) g_array_free(g_steal_pointer(&frames), stack.n_frames == 0);
    return stack;
}

GlRecord *gl_test_record(const char *kind, const char *first_frame, ...)
{
    GlRecord *record = gl_record_new();
    record->kind = gl_record_intern(record, kind);
    record->leak_kind = gl_leak_kind_from_name(kind);
    record->what = gl_record_intern(record, kind);
    record->pid = 100;
    if (record->leak_kind != GL_LEAK_NONE) {
        record->has_leak_size = TRUE;
        record->leaked_bytes = 10;
        record->leaked_blocks = 1;
    }
    va_list ap;
    va_start(ap, first_frame);
    record->stack = build_stack(record, first_frame, ap);
    va_end(ap);
    return record;
}

void gl_test_record_add_aux(GlRecord *record, const char *text, const char *first_frame, ...)
{
    va_list ap;
    va_start(ap, first_frame);
    GlAux aux = { .text = gl_record_intern(record, text) };
    aux.stack = build_stack(record, first_frame, ap);
    va_end(ap);
    g_array_append_val(record->aux, aux);
}

void gl_test_skip(const char *format, ...)
{
    /* On the stack: the test ends here, and its child with it, before
     * anything could free a heap copy (make asan's leak check would see it). */
    char why[1024];
    va_list ap;
    va_start(ap, format);
    g_vsnprintf(why, sizeof why, format, ap);
    va_end(ap);
    ck_abort_msg("%s%s", GL_TEST_SKIPPED, why);
}

/* Returns: (transfer full): the name of the test Check's log gives for the
 * result "FILE:LINE:TYPE:CASE:" found at or after *@from in @log, which
 * moves past it; "?" when it is not there. Check hands out a result's
 * file, line and case, but not its test's name, which its log holds. */
static char *test_name_in_log(const char *log, const char **from, const char *file, int line,
                              char type, const char *tcase)
{
    g_autofree char *head = g_strdup_printf("%s:%d:%c:%s:", file, line, type, tcase);
    for (const char *at = *from; (at = strstr(at, head)) != NULL; at++) {
        if (at != log && at[-1] != '\n')
            continue;
        const char *name = at + strlen(head);
        const char *end = strchr(name, ':');
        if (end == NULL)
            break;
        *from = end;
        return g_strndup(name, (gsize) (end - name));
    }
    return g_strdup("?");
}

void gl_test_run(SRunner *runner, const char *tcase, GlTestCounts *counts)
{
    /* Not g_file_open_tmp(): it would fix g_get_tmp_dir() for every test
     * forked from here, and tests set TMPDIR. */
    const char *tmp = getenv("TMPDIR");
    g_autofree char *log_path = g_strdup_printf("%s/gemleak-check-XXXXXX",
                                                tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    int fd = mkstemp(log_path);
    if (fd >= 0) {
        close(fd);
        srunner_set_log(runner, log_path);
    } else {
        g_clear_pointer(&log_path, g_free);
    }
    srunner_run(runner, NULL, tcase, CK_SILENT);
    g_autofree char *log = NULL;
    if (log_path == NULL || !g_file_get_contents(log_path, &log, NULL, NULL))
        log = g_strdup("");
    if (log_path != NULL)
        g_unlink(log_path);

    TestResult **results = srunner_results(runner);
    int n = srunner_ntests_run(runner);
    const char *from = log;
    for (int i = 0; i < n; i++) {
        TestResult *result = results[i];
        counts->run++;
        int type = tr_rtype(result);
        if (type == CK_PASS) {
            counts->passed++;
            continue;
        }
        char letter = type == CK_FAILURE ? 'F' : 'E';
        g_autofree char *name = test_name_in_log(log, &from, tr_lfile(result), tr_lno(result),
                                                 letter, tr_tcname(result));
        const char *message = tr_msg(result);
        if (type == CK_FAILURE && g_str_has_prefix(message, GL_TEST_SKIPPED)) {
            counts->skipped++;
            printf("SKIPPED %s:%s: %s\n", tr_tcname(result), name,
                   message + strlen(GL_TEST_SKIPPED));
        } else {
            counts->failed++;
            printf("%s:%d:%c:%s:%s:0: %s%s\n", tr_lfile(result), tr_lno(result), letter,
                   tr_tcname(result), name, type == CK_ERROR ? "(after this point) " : "",
                   message);
        }
    }
    free(results);
    fflush(stdout);
}

void gl_test_print_counts(const char *who, const GlTestCounts *counts)
{
    printf("%s: %u test%s: %u passed, %u skipped, %u failed\n", who, counts->run,
           counts->run == 1 ? "" : "s", counts->passed, counts->skipped, counts->failed);
    fflush(stdout);
}

void gl_test_save_counts(const char *who, const GlTestCounts *counts)
{
    const char *path = g_getenv("GEMLEAK_TEST_COUNTS");
    if (path == NULL || *path == '\0')
        return;
    FILE *file = fopen(path, "a");
    if (file == NULL)
        return;
    fprintf(file, "%s %u %u %u\n", who, counts->passed, counts->skipped, counts->failed);
    fclose(file);
}
