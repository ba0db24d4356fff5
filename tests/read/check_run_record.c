/* A run's record of its objects and sources (read/run_record.c): written
 * and read back whole, whatever bytes a line or a path holds; one a newer
 * gemleak wrote is refused, and a directory without one has none. */
#include <string.h>

#include "testutil.h"
#include "gemleak/base/protocol.h"
#include "gemleak/read/run_record.h"

/* A line of source as a checkout may hold it: blanks ahead, a tab, a
 * backslash, a quote, a carriage return left by an editor, UTF-8, and a
 * byte of another encoding. */
static const char odd_line[] = "    char *s = \"a\\tb\";\t/* caf\xc3\xa9 \xff */\r";

static void each_line(const char *path, guint line, const char *text, gpointer data)
{
    g_string_append_printf(data, "%s:%u:%s\n", path, line, text);
}

START_TEST(test_written_and_read_back)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autoptr(GlRunRecord) record = gl_run_record_new();
    ck_assert(gl_run_record_is_empty(record));
    gl_run_record_set_root(record, "/home/me/g\xc3\xa9m");
    gl_run_record_add_object(record, "/home/me/gem/lib/x.so", "build-id:0123abcd");
    const char *inlined[] = { "make<Widget>", "inner", NULL };
    const char *files[] = { "../../../../ext/x/x.c", NULL };
    GlRecordedAt at = { .symbol = "copy_name.cold", .comp_dir = "/home/me/gem/tmp/x 1",
                        .inlined = inlined, .unit_files = files };
    gl_run_record_add_at(record, "/home/me/gem/lib/x.so", 0x1189, &at);
    GlRecordedAt bare = { 0 };
    gl_run_record_add_at(record, "/home/me/gem/lib/x.so", 0x10, &bare);
    gl_run_record_set_instrumented(record, "/home/me/gem/lib/y.so", FALSE);
    gl_run_record_add_line(record, "/home/me/gem/ext/x/x.c", 13, odd_line);
    gl_run_record_add_line(record, "/home/me/gem/ext/x/x.c", 2, "");
    gl_run_record_add_line(record, "/home/me/gem/ext/x/a\nb.c", 7, "x");
    ck_assert(gl_run_record_write(record, dir, NULL));

    g_autoptr(GError) error = NULL;
    g_autoptr(GlRunRecord) back = gl_run_record_read(dir, &error);
    ck_assert_msg(back != NULL, "%s", error != NULL ? error->message : "none");
    ck_assert_str_eq(gl_run_record_root(back), "/home/me/g\xc3\xa9m");
    ck_assert_str_eq(gl_run_record_object_identity(back, "/home/me/gem/lib/x.so"),
                     "build-id:0123abcd");
    ck_assert_ptr_null(gl_run_record_object_identity(back, "/home/me/gem/lib/y.so"));
    GlRecordedAt got;
    ck_assert(gl_run_record_at(back, "/home/me/gem/lib/x.so", 0x1189, &got));
    ck_assert_str_eq(got.symbol, "copy_name.cold");
    ck_assert_str_eq(got.comp_dir, "/home/me/gem/tmp/x 1");
    ck_assert_str_eq(got.inlined[0], "make<Widget>");
    ck_assert_str_eq(got.inlined[1], "inner");
    ck_assert_ptr_null(got.inlined[2]);
    ck_assert_str_eq(got.unit_files[0], "../../../../ext/x/x.c");
    ck_assert(gl_run_record_at(back, "/home/me/gem/lib/x.so", 0x10, &got));
    ck_assert_ptr_null(got.symbol);
    ck_assert_ptr_null(got.inlined);
    ck_assert(!gl_run_record_at(back, "/home/me/gem/lib/x.so", 0x11, &got));
    gboolean instrumented = TRUE;
    ck_assert(gl_run_record_instrumented(back, "/home/me/gem/lib/y.so", &instrumented));
    ck_assert(!instrumented);
    ck_assert(!gl_run_record_instrumented(back, "/home/me/gem/lib/x.so", &instrumented));
    g_autoptr(GString) lines = g_string_new(NULL);
    gl_run_record_foreach_line(back, each_line, lines);
    g_autofree char *want = g_strdup_printf("/home/me/gem/ext/x/a\nb.c:7:x\n"
                                            "/home/me/gem/ext/x/x.c:2:\n"
                                            "/home/me/gem/ext/x/x.c:13:%s\n", odd_line);
    ck_assert_str_eq(lines->str, want);

    /* the same record writes the same bytes */
    g_autofree char *path = g_build_filename(dir, GL_PROTO_RECORD_FILE, NULL);
    g_autofree char *first = gl_test_read(path, NULL);
    ck_assert(gl_run_record_write(back, dir, NULL));
    g_autofree char *second = gl_test_read(path, NULL);
    ck_assert_str_eq(first, second);
    gl_remove_tree(dir);
}
END_TEST

/* A directory without a record (an older gemleak's) has none; one of a
 * newer version is said, not half read; keys of a newer gemleak in one of
 * this version are passed over. */
START_TEST(test_none_newer_and_unknown)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autoptr(GError) error = NULL;
    ck_assert_ptr_null(gl_run_record_read(dir, &error));
    ck_assert_ptr_null(error);

    g_autofree char *path = g_build_filename(dir, GL_PROTO_RECORD_FILE, NULL);
    gl_test_write(path, "version 2\nroot /x\n", -1);
    ck_assert_ptr_null(gl_run_record_read(dir, &error));
    ck_assert_ptr_nonnull(error);
    gl_assert_line(error->message, "written by a newer gemleak");
    g_clear_error(&error);

    gl_test_write(path, "version 1\nsomething new\nroot /x\nobject /a.so\nat zz\nsymbol f\n"
                        "line 12\nline x y\n", -1);
    g_autoptr(GlRunRecord) record = gl_run_record_read(dir, &error);
    ck_assert_ptr_nonnull(record);
    ck_assert_str_eq(gl_run_record_root(record), "/x");
    GlRecordedAt at;
    ck_assert(!gl_run_record_at(record, "/a.so", 0, &at));
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_run_record_suite(void)
{
    Suite *suite = suite_create("run_record");
    TCase *tc = tcase_create("run_record");
    tcase_add_test(tc, test_written_and_read_back);
    tcase_add_test(tc, test_none_newer_and_unknown);
    suite_add_tcase(suite, tc);
    return suite;
}
