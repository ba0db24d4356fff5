/* Hostile and broken XML: each gets a clear error, in bounded time and
 * memory, with the complete errors before it still read, and no crash.
 * The test case's timeout bounds the time; the tests measure memory. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/reader.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char header[] =
    "<?xml version=\"1.0\"?>\n<valgrindoutput>\n<protocolversion>4</protocolversion>\n"
    "<protocoltool>memcheck</protocoltool>\n<pid>7</pid>\n";
static const char good_error[] =
    "<error>\n  <unique>0x1</unique>\n  <tid>1</tid>\n  <kind>InvalidRead</kind>\n"
    "  <what>Invalid read of size 4</what>\n  <stack>\n    <frame>\n      <ip>0x1</ip>\n"
    "      <obj>/x/leaky.so</obj>\n      <fn>f</fn>\n    </frame>\n  </stack>\n</error>\n";
static const char trailer[] = "</valgrindoutput>\n";

/* Reads @reader to the end, freeing each record at once (the memory the
 * tests measure is the reader's alone).
 * Returns: the records read; *error gets the failure. */
static guint count_records(GlReader *reader, GError **error)
{
    guint n = 0;
    GlRecord *record;
    while ((record = gl_reader_next(reader, error)) != NULL) {
        n++;
        gl_record_free(record);
    }
    return n;
}

static guint read_path(const char *path, GError **error)
{
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, error);
    ck_assert_ptr_nonnull(reader);
    return count_records(reader, error);
}

static guint read_text(const char *text, gsize length, GError **error)
{
    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text, length, "hostile.xml");
    return count_records(reader, error);
}

static void assert_refused(const char *text, GlErrorCode code, const char *phrase)
{
    g_autoptr(GError) error = NULL;
    read_text(text, strlen(text), &error);
    ck_assert_msg(g_error_matches(error, GL_ERROR, code), "got %s",
                  error != NULL ? error->message : "no error");
    ck_assert_msg(strstr(error->message, phrase) != NULL, "'%s' not in: %s", phrase, error->message);
}

START_TEST(test_entity_expansion_refused)
{
    /* billion laughs */
    GString *lol = g_string_new("<?xml version=\"1.0\"?>\n<!DOCTYPE valgrindoutput [\n"
                                "<!ENTITY l0 \"lol\">\n");
    for (int i = 1; i <= 9; i++) {
        g_string_append_printf(lol, "<!ENTITY l%d \"", i);
        for (int j = 0; j < 10; j++)
            g_string_append_printf(lol, "&l%d;", i - 1);
        g_string_append(lol, "\">\n");
    }
    g_string_append(lol, "]>\n<valgrindoutput><error><what>&l9;</what></error></valgrindoutput>\n");
    g_autoptr(GError) laughs = NULL;
    read_text(lol->str, lol->len, &laughs);
    ck_assert_ptr_nonnull(laughs);
    ck_assert(laughs->code == GL_ERROR_LIMIT || laughs->code == GL_ERROR_WRONG_FORMAT);
    g_string_free(lol, TRUE);

    /* quadratic blow-up: one large entity, used many times */
    GString *quad = g_string_new("<?xml version=\"1.0\"?>\n<!DOCTYPE valgrindoutput [\n<!ENTITY a \"");
    for (int i = 0; i < 50000; i++)
        g_string_append_c(quad, 'a');
    g_string_append(quad, "\">\n]>\n<valgrindoutput><error><what>");
    for (int i = 0; i < 50000; i++)
        g_string_append(quad, "&a;");
    g_string_append(quad, "</what></error></valgrindoutput>\n");
    g_autoptr(GError) quadratic = NULL;
    read_text(quad->str, quad->len, &quadratic);
    ck_assert_ptr_nonnull(quadratic);
    ck_assert_msg(strstr(quadratic->message, "DOCTYPE") != NULL, "%s", quadratic->message);
    g_string_free(quad, TRUE);

    assert_refused("<?xml version=\"1.0\"?>\n<!DOCTYPE valgrindoutput>\n<valgrindoutput/>\n",
                   GL_ERROR_WRONG_FORMAT, "has a DOCTYPE, which Valgrind never writes");
}
END_TEST

/* A FIFO nobody writes: opening it to read blocks, so a reader that tried
 * would hang past the test's timeout. */
START_TEST(test_external_entity_and_dtd_never_opened)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    g_autofree char *secret = g_build_filename(dir, "secret.txt", NULL);
    gl_test_write(secret, "TOP-SECRET", -1);

    g_autofree char *entity = g_strdup_printf(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE valgrindoutput [\n<!ENTITY xxe SYSTEM \"file://%s\">\n"
        "<!ENTITY leak SYSTEM \"%s\">\n]>\n<valgrindoutput><error><kind>InvalidRead</kind>"
        "<what>&xxe;&leak;</what></error></valgrindoutput>\n", fifo, secret);
    g_autoptr(GError) error = NULL;
    guint n = read_text(entity, strlen(entity), &error);
    ck_assert_uint_eq(n, 0);
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_WRONG_FORMAT));

    g_autofree char *dtd = g_strdup_printf("<?xml version=\"1.0\"?>\n<!DOCTYPE valgrindoutput SYSTEM \"%s\">\n"
                                           "<valgrindoutput/>\n", fifo);
    g_autoptr(GError) dtd_error = NULL;
    read_text(dtd, strlen(dtd), &dtd_error);
    ck_assert(g_error_matches(dtd_error, GL_ERROR, GL_ERROR_WRONG_FORMAT));
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_nothing_fetched_from_the_network)
{
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(listener, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = 0 };
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(listener, (struct sockaddr *) &address, sizeof address), 0);
    ck_assert_int_eq(listen(listener, 4), 0);
    socklen_t size = sizeof address;
    ck_assert_int_eq(getsockname(listener, (struct sockaddr *) &address, &size), 0);
    int port = ntohs(address.sin_port);

    g_autofree char *text = g_strdup_printf(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE valgrindoutput SYSTEM \"http://127.0.0.1:%d/v.dtd\" [\n"
        "<!ENTITY e SYSTEM \"http://127.0.0.1:%d/e\">\n]>\n<valgrindoutput><error><what>&e;</what>"
        "</error></valgrindoutput>\n", port, port);
    g_autoptr(GError) error = NULL;
    read_text(text, strlen(text), &error);
    ck_assert_ptr_nonnull(error);
    /* nobody knocked */
    fcntl(listener, F_SETFL, O_NONBLOCK);
    int connection = accept(listener, NULL, NULL);
    ck_assert_msg(connection < 0, "the reader connected to the network");
    close(listener);
}
END_TEST

static long peak_rss_kib(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

START_TEST(test_huge_text_node)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "huge.xml", NULL);
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    fputs(header, out);
    fputs(good_error, out);
    fputs("<error>\n  <kind>InvalidRead</kind>\n  <what>", out);
    char block[65536];
    memset(block, 'A', sizeof block);
    for (int i = 0; i < 100 * 16; i++)  /* 100 MiB */
        fwrite(block, 1, sizeof block, out);
    fputs("</what>\n</error>\n", out);
    fputs(trailer, out);
    fclose(out);

    long before = peak_rss_kib();
    g_autoptr(GError) error = NULL;
    guint n = read_path(path, &error);
    long grown = peak_rss_kib() - before;
    ck_assert_uint_eq(n, 1);
    ck_assert_msg(g_error_matches(error, GL_ERROR, GL_ERROR_LIMIT), "%s",
                  error != NULL ? error->message : "no error");
    ck_assert_msg(strstr(error->message, "larger than 8 MiB") != NULL, "%s", error->message);
    /* The splitter holds at most GL_SPLITTER_MAX_ELEMENT of it, then skips. */
    ck_assert_msg(grown < 64 * 1024, "peak memory grew by %ld KiB", grown);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_deep_nesting)
{
    GString *text = g_string_new(header);
    g_string_append(text, good_error);
    g_string_append(text, "<error><kind>InvalidRead</kind>");
    for (int i = 0; i < 10000; i++)
        g_string_append(text, "<x>");
    for (int i = 0; i < 10000; i++)
        g_string_append(text, "</x>");
    g_string_append(text, "</error>");
    g_string_append(text, trailer);
    g_autoptr(GError) error = NULL;
    guint n = read_text(text->str, text->len, &error);
    ck_assert_uint_eq(n, 1);
    ck_assert_msg(g_error_matches(error, GL_ERROR, GL_ERROR_LIMIT), "%s",
                  error != NULL ? error->message : "no error");
    ck_assert(strstr(error->message, "depth") != NULL);
    g_string_free(text, TRUE);
}
END_TEST

/* Valgrind copies arguments, paths, thread and function names raw: bytes
 * that are not UTF-8, or not allowed in XML, are replaced and every error
 * is read. */
START_TEST(test_invalid_utf8_and_nul)
{
    const char *bad[] = { "<fn>bad \xff\xfe bytes</fn>", "<fn>nul \x01 here</fn>" };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        GString *text = g_string_new(header);
        g_string_append(text, good_error);
        g_string_append_printf(text, "<error><kind>InvalidRead</kind><stack><frame>%s</frame>"
                                     "</stack></error>", bad[i]);
        g_string_append(text, good_error);
        g_string_append(text, trailer);
        g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "bad.xml");
        g_autoptr(GError) error = NULL;
        guint n = count_records(reader, &error);
        ck_assert_uint_eq(n, 3);
        ck_assert_msg(error == NULL, "%s", error != NULL ? error->message : "");
        const GPtrArray *notes = gl_reader_notes(reader);
        ck_assert_uint_eq(notes->len, 1);
        ck_assert(strstr(g_ptr_array_index(notes, 0), "not UTF-8") != NULL);
        g_string_free(text, TRUE);
    }
    /* a NUL byte itself, in the middle */
    GString *nul = g_string_new(header);
    g_string_append(nul, good_error);
    g_string_append_len(nul, "<error><kind>Invalid\0Read</kind></error>", 40);
    g_string_append(nul, good_error);
    g_string_append(nul, trailer);
    g_autoptr(GlReader) reader = gl_reader_new_for_memory(nul->str, nul->len, "nul.xml");
    g_autoptr(GError) error = NULL;
    GlRecord *record;
    guint n = 0;
    while ((record = gl_reader_next(reader, &error)) != NULL) {
        if (n == 1)
            ck_assert_str_eq(record->kind, "Invalid\xEF\xBF\xBDRead");
        ck_assert(g_utf8_validate(record->kind, -1, NULL));
        gl_record_free(record);
        n++;
    }
    ck_assert_uint_eq(n, 3);
    ck_assert_ptr_null(error);
    g_string_free(nul, TRUE);
}
END_TEST

/* Comments and processing instructions by the million: memory stays flat
 * (it grew to 15 times the file's size). */
START_TEST(test_comments_by_the_million)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "comments.xml", NULL);
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    fputs(header, out);
    fputs(good_error, out);
    for (int i = 0; i < 3000000; i++)
        fputs("<!--c--><?p?>", out);
    fputs(good_error, out);
    fputs(trailer, out);
    fclose(out);

    long before = peak_rss_kib();
    g_autoptr(GError) error = NULL;
    guint n = read_path(path, &error);
    long grown = peak_rss_kib() - before;
    ck_assert_uint_eq(n, 2);
    ck_assert_msg(error == NULL, "%s", error != NULL ? error->message : "");
    ck_assert_msg(grown < 8 * 1024, "peak memory grew by %ld KiB", grown);
    gl_remove_tree(dir);
}
END_TEST

/* An end tag repeated inside one comment, inside an error: linear time
 * (1.6 MB of them took 41 s; the case's timeout bounds it). */
START_TEST(test_end_tags_inside_a_comment)
{
    GString *text = g_string_new(header);
    g_string_append(text, good_error);
    g_string_append(text, "<error><!--");
    for (int i = 0; i < 500000; i++)
        g_string_append(text, "</error>");
    g_string_append(text, "--><kind>InvalidRead</kind></error>\n");
    g_string_append(text, good_error);
    g_string_append(text, trailer);
    g_autoptr(GError) error = NULL;
    guint n = read_text(text->str, text->len, &error);
    ck_assert_uint_eq(n, 3);
    ck_assert_msg(error == NULL, "%s", error != NULL ? error->message : "");
    g_string_free(text, TRUE);
}
END_TEST

/* Two processes writing one file at once (Valgrind without %p): their
 * output interleaves, mid-error. What can be separated is read; the rest
 * is a problem that names the cause. */
START_TEST(test_interleaved_documents)
{
    g_autofree char *leak_path = gl_test_fixture("xml/leak.xml");
    g_autofree char *clean_path = gl_test_fixture("xml/clean.xml");
    g_autofree char *a = gl_test_read(leak_path, NULL);
    g_autofree char *b = gl_test_read(clean_path, NULL);
    const char *at = a;
    for (int i = 0; i < 10; i++)
        at = strstr(at, "</error>") + strlen("</error>");
    gsize cut_a = (gsize) (at - a) + 200;
    const char *from_b = b;
    for (int i = 0; i < 5; i++)
        from_b = strstr(from_b + 1, "<error>");
    from_b += 100;
    GString *text = g_string_new_len(a, (gssize) cut_a);
    g_string_append(text, from_b);
    g_string_append(text, a + cut_a);
    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "shared.xml");
    g_autoptr(GError) error = NULL;
    guint n = count_records(reader, &error);
    /* A's ten before the splice, B's after its broken one, A's after its own */
    guint whole = 10 + gl_test_count(from_b, strlen(from_b), "<error>") +
                  gl_test_count(a + cut_a, strlen(a + cut_a), "<error>");
    ck_assert_uint_ge(n, whole);
    ck_assert_msg(g_error_matches(error, GL_ERROR, GL_ERROR_MALFORMED), "%s",
                  error != NULL ? error->message : "no error");
    ck_assert_msg(strstr(error->message, "--xml-file=DIR/%p.xml") != NULL, "%s", error->message);
    g_string_free(text, TRUE);
}
END_TEST

Suite *gl_hostile_suite(void)
{
    Suite *suite = suite_create("hostile");
    TCase *tc = tcase_create("hostile");
    tcase_add_test(tc, test_entity_expansion_refused);
    tcase_add_test(tc, test_external_entity_and_dtd_never_opened);
    tcase_add_test(tc, test_nothing_fetched_from_the_network);
    tcase_add_test(tc, test_huge_text_node);
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_invalid_utf8_and_nul);
    tcase_add_test(tc, test_comments_by_the_million);
    tcase_add_test(tc, test_end_tags_inside_a_comment);
    tcase_add_test(tc, test_interleaved_documents);
    /* the bound on time: seconds, where an expansion would take hours */
    tcase_set_timeout(tc, 30);
    suite_add_tcase(suite, tc);
    return suite;
}
