/* splitter: the documents and elements of an XML byte stream as Valgrind
 * leaves them, concatenated, cut, compressed, without a parser. */
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <zlib.h>

#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/splitter.h"

/* Returns: (transfer full): the parts of @splitter, one a line: the kind,
 * and for a document or an element its name and (an element) bytes; a
 * cut says where it fell. Ends at GL_PART_END or an error (@error). */
static char *parts_of(GlSplitter *splitter, GError **error)
{
    GString *out = g_string_new(NULL);
    for (;;) {
        GlPart part = { 0 };
        if (!gl_splitter_next(splitter, &part, error)) {
            g_string_append(out, "error\n");
            break;
        }
        switch (part.kind) {
        case GL_PART_DOCUMENT:
            g_string_append_printf(out, "document %s @%" G_GUINT64_FORMAT "\n", part.name,
                                   part.offset);
            break;
        case GL_PART_ELEMENT:
            g_string_append_printf(out, "element %s%s%s: %.*s\n", part.name,
                                   part.outside_root ? " outside" : "",
                                   part.nested ? " nested" : "", (int) part.length, part.data);
            break;
        case GL_PART_DOCUMENT_END: g_string_append(out, "end of document\n"); break;
        case GL_PART_CUT:
            g_string_append_printf(out, "cut%s%s\n", part.in_element ? " in an element" : "",
                                   part.by_document ? " by a document" : "");
            break;
        case GL_PART_OVERSIZED: g_string_append(out, "oversized\n"); break;
        case GL_PART_TEXT: g_string_append(out, "text\n"); break;
        case GL_PART_DOCTYPE: g_string_append(out, "doctype\n"); break;
        case GL_PART_END: g_string_append(out, "end\n"); break;
        }
        if (part.kind == GL_PART_END)
            break;
    }
    return g_string_free(out, FALSE);
}

static char *split_memory(const char *text)
{
    g_autoptr(GlSplitter) splitter = gl_splitter_new_for_memory(text, strlen(text));
    g_autoptr(GError) error = NULL;
    char *parts = parts_of(splitter, &error);
    ck_assert_msg(error == NULL, "%s", error != NULL ? error->message : "");
    return parts;
}

/* cat a.xml b.xml: two documents, each with its own elements. */
START_TEST(test_concatenated_documents)
{
    g_autofree char *parts = split_memory(
        "<?xml version=\"1.0\"?>\n<valgrindoutput>\n<pid>1</pid>\n</valgrindoutput>\n"
        "<?xml version=\"1.0\"?>\n<valgrindoutput>\n<pid>2</pid>\n<error><kind>Leak</kind></error>\n"
        "</valgrindoutput>\n");
    ck_assert_str_eq(parts, "document valgrindoutput @22\n"
                            "element pid: <pid>1</pid>\n"
                            "end of document\n"
                            "document valgrindoutput @92\n"
                            "element pid: <pid>2</pid>\n"
                            "element error: <error><kind>Leak</kind></error>\n"
                            "end of document\n"
                            "end\n");
}
END_TEST

/* A process killed while writing: the document is cut inside an element,
 * and what came whole before it is handed out; the next document that
 * begins in the middle of the cut one cuts it too. */
START_TEST(test_cut_documents)
{
    g_autofree char *at_end = split_memory("<valgrindoutput><pid>1</pid><error><kind>Le");
    ck_assert_str_eq(at_end, "document valgrindoutput @0\n"
                             "element pid: <pid>1</pid>\n"
                             "cut in an element\n"
                             "end\n");
    g_autofree char *by_another = split_memory(
        "<valgrindoutput><pid>1</pid>\n<?xml version=\"1.0\"?>\n<valgrindoutput><pid>2</pid>"
        "</valgrindoutput>");
    gl_assert_line(by_another, "^cut by a document$");
    gl_assert_line(by_another, "^element pid: <pid>2</pid>$");
    gl_assert_line(by_another, "^end of document$");
}
END_TEST

/* End tags inside comments and CDATA sections end nothing; an element
 * with one of its own name inside (two processes writing one file) is
 * followed to its own end and said to be nested. */
START_TEST(test_markup_that_is_not_an_end)
{
    g_autofree char *parts = split_memory(
        "<valgrindoutput><error><!-- </error> --><what><![CDATA[</error>]]></what></error>"
        "<error><error>x</error></error></valgrindoutput>");
    ck_assert_str_eq(parts,
                     "document valgrindoutput @0\n"
                     "element error: <error><!-- </error> --><what><![CDATA[</error>]]></what></error>\n"
                     "element error nested: <error><error>x</error></error>\n"
                     "end of document\n"
                     "end\n");
}
END_TEST

/* Blank input is no markup; text is. */
START_TEST(test_blank_and_text)
{
    g_autoptr(GlSplitter) blank = gl_splitter_new_for_memory(" \n\t\n", 4);
    g_autofree char *nothing = parts_of(blank, NULL);
    ck_assert_str_eq(nothing, "end\n");
    ck_assert(!gl_splitter_saw_markup(blank));

    g_autoptr(GlSplitter) markup = gl_splitter_new_for_memory("<a/>", 4);
    g_autofree char *some = parts_of(markup, NULL);
    ck_assert(gl_splitter_saw_markup(markup));
}
END_TEST

/* Returns: (transfer full): @text gzip-compressed, *length its size. */
static char *gzipped(const char *text, gsize *length)
{
    z_stream z = { 0 };
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    gsize room = deflateBound(&z, strlen(text));
    char *out = g_malloc(room);
    z.next_in = (Bytef *) text;
    z.avail_in = (uInt) strlen(text);
    z.next_out = (Bytef *) out;
    z.avail_out = (uInt) room;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    *length = z.total_out;
    deflateEnd(&z);
    return out;
}

/* Returns: (transfer full): the parts of the file holding @length bytes of
 * @data, read through its descriptor. */
static char *split_file(const char *data, gsize length, GError **error)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "1.xml.gz", NULL);
    gl_test_write(path, data, (gssize) length);
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    GlSplitter *splitter = gl_splitter_new_for_fd(fd);
    char *parts = parts_of(splitter, error);
    gl_splitter_free(splitter);
    close(fd);
    gl_remove_tree(dir);
    return parts;
}

/* A kept run's XML is compressed (--keep-xml): one gzip member after
 * another reads as the plain text would; a corrupt one is an I/O error,
 * after the parts read whole before it. */
START_TEST(test_gzip_members)
{
    const char *first = "<valgrindoutput><pid>1</pid>";
    const char *second = "<pid>2</pid></valgrindoutput>";
    gsize n1 = 0, n2 = 0;
    g_autofree char *z1 = gzipped(first, &n1);
    g_autofree char *z2 = gzipped(second, &n2);
    g_autofree char *both = g_malloc(n1 + n2);
    memcpy(both, z1, n1);
    memcpy(both + n1, z2, n2);
    g_autoptr(GError) error = NULL;
    g_autofree char *parts = split_file(both, n1 + n2, &error);
    ck_assert_ptr_null(error);
    ck_assert_str_eq(parts, "document valgrindoutput @0\n"
                            "element pid: <pid>1</pid>\n"
                            "element pid: <pid>2</pid>\n"
                            "end of document\n"
                            "end\n");

    both[n1 + n2 / 2] ^= 0x55;  /* the second member's data */
    g_autofree char *broken = split_file(both, n1 + n2, &error);
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_IO));
    gl_assert_line(broken, "^element pid: <pid>1</pid>$");
    gl_assert_line(broken, "^error$");
}
END_TEST

Suite *gl_splitter_suite(void)
{
    Suite *suite = suite_create("splitter");
    TCase *tc = tcase_create("splitter");
    tcase_add_test(tc, test_concatenated_documents);
    tcase_add_test(tc, test_cut_documents);
    tcase_add_test(tc, test_markup_that_is_not_an_end);
    tcase_add_test(tc, test_blank_and_text);
    tcase_add_test(tc, test_gzip_members);
    suite_add_tcase(suite, tc);
    return suite;
}
