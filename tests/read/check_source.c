/* source: source paths as the debug information names them, the headers a
 * report leaves out of a finding's identity, and the lines reports show. */
#include <string.h>

#include "testutil.h"
#include "gemleak/read/source.h"

/* "." and ".." fold away lexically, as rake-compiler's build paths need
 * ("tmp/x86_64-linux/leaky/3.1/../../../../ext/leaky/leaky.c"). */
START_TEST(test_path_normalize)
{
    static const char *const cases[][2] = {
        { "tmp/x86_64-linux/ext/3.1/../../../../ext/ext/a.c", "ext/ext/a.c" },
        { "/home/me//gem/./ext/a.c", "/home/me/gem/ext/a.c" },
        { "/../a.c", "/a.c" },
        { "../../a.c", "../../a.c" },    /* above a relative start: kept */
        { "a/../../b.c", "../b.c" },
        { "a.c", "a.c" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = gl_path_normalize(cases[i][0]);
        ck_assert_msg(strcmp(got, cases[i][1]) == 0, "%s: %s, not %s", cases[i][0], got,
                      cases[i][1]);
    }
}
END_TEST

/* A frame's path is its dir and file; a frame inlined from a header of the
 * system, the compiler or Ruby is no place of the extension's. */
START_TEST(test_frames_from_headers)
{
    GlFrame frame = { .fn = "leaky_new", .dir = "/home/me/gem/ext/leaky/../leaky", .file = "leaky.c" };
    g_autofree char *path = gl_frame_path(&frame);
    ck_assert_str_eq(path, "/home/me/gem/ext/leaky/leaky.c");
    ck_assert(!gl_frame_from_a_header(&frame));

    static const char *const headers[][2] = {
        { "/usr/include/x86_64-linux-gnu/bits", "string_fortified.h" },
        { "/usr/include/ruby-3.1.0/ruby/internal", "memory.h" },
        { "/opt/ruby/include/ruby-3.3.0/ruby", "ruby.h" },
        { "/usr/include/c++/12/bits", "stl_vector.h" },
        { "/usr/lib/gcc/x86_64-linux-gnu/12/include", "emmintrin.h" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(headers); i++) {
        GlFrame inlined = { .fn = "f", .dir = headers[i][0], .file = headers[i][1] };
        ck_assert_msg(gl_frame_from_a_header(&inlined), "%s/%s", headers[i][0], headers[i][1]);
    }
    /* a header of the extension's own is its own */
    GlFrame own = { .fn = "f", .dir = "/home/me/gem/ext/leaky", .file = "leaky.h" };
    ck_assert(!gl_frame_from_a_header(&own));
    /* no file: no path, no header */
    GlFrame bare = { .fn = "f", .obj = "/x/leaky.so" };
    ck_assert_ptr_null(gl_frame_path(&bare));
    ck_assert(!gl_frame_from_a_header(&bare));
}
END_TEST

/* Lines from 1, without their line end (LF or CRLF); none past the end or
 * for a file that cannot be read. */
START_TEST(test_source_lines)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "leaky.c", NULL);
    gl_test_write(path, "#include <ruby.h>\r\n\nstatic VALUE leak(VALUE self)\n{", -1);
    g_autoptr(GlSources) sources = gl_sources_new();
    ck_assert_str_eq(gl_sources_line(sources, path, 1), "#include <ruby.h>");
    ck_assert_str_eq(gl_sources_line(sources, path, 2), "");
    ck_assert_str_eq(gl_sources_line(sources, path, 3), "static VALUE leak(VALUE self)");
    ck_assert_str_eq(gl_sources_line(sources, path, 4), "{");
    ck_assert_ptr_null(gl_sources_line(sources, path, 5));
    ck_assert_ptr_null(gl_sources_line(sources, path, 0));
    g_autofree char *missing = g_build_filename(dir, "gone.c", NULL);
    ck_assert_ptr_null(gl_sources_line(sources, missing, 1));

    /* read once: a file changed after is still seen as it was */
    gl_test_write(path, "changed\n", -1);
    ck_assert_str_eq(gl_sources_line(sources, path, 1), "#include <ruby.h>");
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_source_suite(void)
{
    Suite *suite = suite_create("source");
    TCase *tc = tcase_create("source");
    tcase_add_test(tc, test_path_normalize);
    tcase_add_test(tc, test_frames_from_headers);
    tcase_add_test(tc, test_source_lines);
    suite_add_tcase(suite, tc);
    return suite;
}
