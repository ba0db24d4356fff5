/* The reader: real captures, hand-made protocol 6, every bad input. */
#include "testutil.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/reader.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

/* Reads every record of @reader; *error gets the failure, if any. */
static GPtrArray *read_all(GlReader *reader, GError **error)
{
    GPtrArray *records = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
    GlRecord *record;
    while ((record = gl_reader_next(reader, error)) != NULL)
        g_ptr_array_add(records, record);
    return records;
}

static GPtrArray *read_fixture(const char *relative, GError **error)
{
    g_autofree char *path = gl_test_fixture(relative);
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, error);
    ck_assert_ptr_nonnull(reader);
    return read_all(reader, error);
}

static GPtrArray *read_memory(const char *data, gsize length, GError **error)
{
    g_autoptr(GlReader) reader = gl_reader_new_for_memory(data, length, "memory");
    return read_all(reader, error);
}

static const GlRecord *find_by_function(GPtrArray *records, const char *fn)
{
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        for (guint f = 0; f < record->stack.n_frames; f++)
            if (g_strcmp0(record->stack.frames[f].fn, fn) == 0)
                return record;
    }
    return NULL;
}

static const GlFrame *find_frame(const GlStack *stack, const char *fn)
{
    for (guint f = 0; f < stack->n_frames; f++)
        if (g_strcmp0(stack->frames[f].fn, fn) == 0)
            return &stack->frames[f];
    return NULL;
}

START_TEST(test_real_leak_capture)
{
    g_autofree char *path = gl_test_fixture("xml/leak.xml");
    gsize length;
    g_autofree char *text = gl_test_read(path, &length);
    g_autoptr(GError) error = NULL;
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, &error);
    ck_assert_ptr_nonnull(reader);
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, gl_test_count(text, length, "<error>"));

    const GlProcess *doc = gl_reader_process(reader);
    ck_assert_int_eq(doc->protocol_version, 4);
    ck_assert_str_eq(doc->tool, "memcheck");
    ck_assert_int_gt(doc->pid, 0);
    ck_assert_int_gt(doc->ppid, 0);
    ck_assert_str_eq(doc->exe, "ruby");
    ck_assert_uint_ge(doc->argv->len, 2);
    ck_assert_str_eq(g_ptr_array_index(doc->argv, 0), "--disable-gems");
    ck_assert_str_eq(g_ptr_array_index(doc->vargv, 0), "/usr/bin/valgrind.bin");
    ck_assert(doc->started && doc->finished && doc->complete);
    ck_assert_uint_eq(doc->n_errors, records->len);

    const GlRecord *leak = find_by_function(records, "leaky_leak");
    ck_assert_ptr_nonnull(leak);
    ck_assert_str_eq(leak->kind, "Leak_DefinitelyLost");
    ck_assert_int_eq(leak->leak_kind, GL_LEAK_DEFINITE);
    ck_assert(leak->has_leak_size);
    ck_assert_uint_eq(leak->leaked_bytes, 100);
    ck_assert_uint_eq(leak->leaked_blocks, 1);
    ck_assert_int_eq(leak->pid, doc->pid);
    ck_assert(g_str_has_prefix(leak->what, "100 bytes in 1 blocks are definitely lost in loss record"));
    ck_assert_str_eq(leak->stack.frames[0].fn, "malloc");
    ck_assert(g_str_has_suffix(leak->stack.frames[0].obj, "vgpreload_memcheck-amd64-linux.so"));
    const GlFrame *alloc = find_frame(&leak->stack, "leaky_alloc");
    ck_assert_ptr_nonnull(alloc);
    ck_assert_str_eq(alloc->obj, "/tmp/gemleak-fixtures/leaky/leaky.so");
    ck_assert_str_eq(alloc->file, "leaky.c");
    ck_assert_str_eq(alloc->dir, "/tmp/gemleak-fixtures/leaky");
    ck_assert_uint_gt(alloc->line, 0);
    ck_assert_uint_gt(alloc->ip, 0);
    ck_assert(!alloc->in_target);  /* only the classifier marks targets */
    /* stripped Ruby frames: ip and obj, no fn */
    guint stripped = 0;
    for (guint i = 0; i < leak->stack.n_frames; i++)
        stripped += leak->stack.frames[i].fn == NULL &&
                    g_str_has_suffix(leak->stack.frames[i].obj, "libruby-3.1.so.3.1.2");
    ck_assert_uint_gt(stripped, 2);
}
END_TEST

/* --growth under Valgrind (fixtures/xml/growth_changed_check.xml, real):
 * each loss record of a changed leak check says what changed since the
 * check before, up or down, of every kind; a loss record with indirect
 * bytes grew by its direct part; the exit check's records say no change. */
START_TEST(test_changed_leak_check)
{
    GError *error = NULL;
    g_autoptr(GPtrArray) records = read_fixture("xml/growth_changed_check.xml", &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 15);
    guint changed = 0;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        ck_assert(record->marker != NULL && g_str_has_prefix(record->marker, "gemleak:growth\t"));
        ck_assert(record->has_change == !record->at_exit);
        changed += record->has_change;
    }
    ck_assert_uint_eq(changed, 11);
    /* the first measure: everything live since the start */
    const GlRecord *first = g_ptr_array_index(records, 0);
    ck_assert_int_eq(first->change_bytes, 64);
    ck_assert_int_eq(first->change_blocks, 1);
    /* the buffer freed in repetition 2: "0 (-64) bytes in 0 (-1) blocks" */
    const GlRecord *freed = g_ptr_array_index(records, 3);
    ck_assert_str_eq(freed->what, "0 (-64) bytes in 0 (-1) blocks are still reachable in loss "
                                  "record 1 of 4");
    ck_assert_int_eq(freed->change_bytes, -64);
    ck_assert_int_eq(freed->change_blocks, -1);
    ck_assert_uint_eq(freed->leaked_bytes, 0);
    /* the journal realloc'd larger: bytes, not blocks */
    const GlRecord *journal = g_ptr_array_index(records, 10);
    ck_assert_str_eq(journal->what, "300 (+100) bytes in 1 (+0) blocks are still reachable in "
                                    "loss record 4 of 4");
    ck_assert_int_eq(journal->change_bytes, 100);
    ck_assert_int_eq(journal->change_blocks, 0);
    ck_assert_uint_eq(journal->leaked_bytes, 300);
    /* a lost node and its child: the node's own bytes grew, the child's
     * are its own loss record's */
    const GlRecord *node = g_ptr_array_index(records, 9);
    ck_assert_int_eq(node->leak_kind, GL_LEAK_DEFINITE);
    ck_assert_int_eq(node->change_bytes, 56);
    ck_assert_int_eq(node->change_blocks, 1);
    const GlRecord *child = g_ptr_array_index(records, 8);
    ck_assert_int_eq(child->leak_kind, GL_LEAK_INDIRECT);
    ck_assert_int_eq(child->change_bytes, 96);
    /* the exit check: no change said */
    const GlRecord *last = g_ptr_array_index(records, records->len - 1);
    ck_assert(last->at_exit);
    ck_assert(!last->has_change);
    ck_assert_int_eq(last->change_bytes, 0);
    /* a copy keeps the change */
    g_autoptr(GlRecord) copy = gl_record_copy(freed);
    ck_assert(copy->has_change);
    ck_assert_int_eq(copy->change_bytes, -64);

    /* thousands grouped, as Valgrind writes them past 999 (a real run of
     * Debian's Ruby: "2,400 (+2,400) bytes in 50 (+50) blocks") */
    g_autofree char *path = gl_test_fixture("xml/growth_changed_check.xml");
    gsize length = 0;
    g_autofree char *text = gl_test_read(path, &length);
    const char *was = "300 (+100) bytes in 1 (+0) blocks";
    char *at = strstr(text, was);
    ck_assert_ptr_nonnull(at);
    g_autofree char *grouped = g_strdup_printf("%.*s1,704 (+1,024) bytes in 1,001 (-1,000) blocks%s",
                                               (int) (at - text), text, at + strlen(was));
    g_autoptr(GPtrArray) again = read_memory(grouped, strlen(grouped), &error);
    ck_assert_ptr_null(error);
    const GlRecord *big = g_ptr_array_index(again, 10);
    ck_assert(big->has_change);
    ck_assert_int_eq(big->change_bytes, 1024);
    ck_assert_int_eq(big->change_blocks, -1000);
}
END_TEST

START_TEST(test_use_after_free_has_three_stacks)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_fixture("xml/use_after_free.xml", &error);
    ck_assert_ptr_null(error);
    const GlRecord *uaf = find_by_function(records, "leaky_use_after_free");
    ck_assert_ptr_nonnull(uaf);
    ck_assert_str_eq(uaf->kind, "InvalidWrite");
    ck_assert_int_eq(uaf->leak_kind, GL_LEAK_NONE);
    ck_assert_str_eq(uaf->what, "Invalid write of size 1");
    ck_assert(!uaf->has_leak_size);
    ck_assert_uint_eq(uaf->aux->len, 2);
    const GlAux *freed = &g_array_index(uaf->aux, GlAux, 0);
    const GlAux *allocated = &g_array_index(uaf->aux, GlAux, 1);
    ck_assert(strstr(freed->text, "inside a block of size 100 free'd") != NULL);
    ck_assert_str_eq(freed->stack.frames[0].fn, "free");
    ck_assert_ptr_nonnull(find_frame(&freed->stack, "leaky_use_after_free"));
    ck_assert_str_eq(allocated->text, "Block was alloc'd at");
    ck_assert_str_eq(allocated->stack.frames[0].fn, "malloc");
}
END_TEST

START_TEST(test_suppressions_inside_errors_only)
{
    g_autofree char *path = gl_test_fixture("xml/suppressions.xml");
    gsize length;
    g_autofree char *text = gl_test_read(path, &length);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_fixture("xml/suppressions.xml", &error);
    ck_assert_ptr_null(error);
    /* Valgrind writes each suppression twice; the top-level copy is no error. */
    ck_assert_uint_gt(gl_test_count(text, length, "<suppression>"), records->len);
    ck_assert_uint_eq(records->len, gl_test_count(text, length, "<error>"));
    const GlRecord *leak = find_by_function(records, "leaky_leak");
    ck_assert_ptr_nonnull(leak);
    const GlSuppression *supp = leak->suppression;
    ck_assert_ptr_nonnull(supp);
    ck_assert_str_eq(supp->name, "insert_a_suppression_name_here");
    ck_assert_str_eq(supp->kind, "Memcheck:Leak");
    ck_assert_str_eq(supp->aux, "match-leak-kinds: definite");
    ck_assert_str_eq(supp->frames[0], "fun:malloc");
    ck_assert_str_eq(supp->frames[1], "fun:leaky_alloc");
    ck_assert(strstr(supp->rawtext, "   Memcheck:Leak\n") != NULL);
    ck_assert(strstr(supp->rawtext, "   fun:leaky_leak\n") != NULL);
}
END_TEST

START_TEST(test_fatal_signal_is_a_record)
{
    g_autofree char *path = gl_test_fixture("xml/crash.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, &error);
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    const GlRecord *crash = NULL;
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        if (strcmp(record->kind, GL_KIND_FATAL_SIGNAL) == 0)
            crash = record;
    }
    ck_assert_ptr_nonnull(crash);
    ck_assert_str_eq(crash->what, "Process terminating with default action of signal 6 (SIGABRT)");
    ck_assert_int_eq(crash->leak_kind, GL_LEAK_NONE);
    ck_assert_ptr_nonnull(find_frame(&crash->stack, "leaky_crash"));
    ck_assert(gl_reader_process(reader)->fatal_signal);
}
END_TEST

START_TEST(test_protocol6_everything_an_error_carries)
{
    g_autofree char *path = gl_test_fixture("edge/protocol6.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, &error);
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 3);
    const GlProcess *doc = gl_reader_process(reader);
    ck_assert_int_eq(doc->protocol_version, 6);
    ck_assert_int_eq(doc->pid, 4242);
    ck_assert_str_eq(doc->exe, "/usr/local/bin/ruby");
    ck_assert_str_eq(g_ptr_array_index(doc->argv, 1), "Edge.run & more");

    const GlRecord *read = g_ptr_array_index(records, 0);
    ck_assert_uint_eq(read->unique, 7);
    ck_assert_int_eq(read->tid, 2);
    ck_assert_str_eq(read->threadname, "worker <1>");
    ck_assert_str_eq(read->what, "Invalid read of size 8");
    ck_assert_str_eq(read->stack.frames[0].fn, "operator<<(std::ostream&, Edge const&)");
    ck_assert_uint_eq(read->stack.frames[0].line, 41);
    ck_assert_uint_eq(read->stack.frames[0].ip, 0x4C2B1A0);
    ck_assert_uint_eq(read->stack.n_frames, 2);
    /* second what, xauxwhat, auxwhat + stack, origin + stack: in order */
    ck_assert_uint_eq(read->aux->len, 4);
    ck_assert_str_eq(g_array_index(read->aux, GlAux, 0).text, "second line of description");
    ck_assert_str_eq(g_array_index(read->aux, GlAux, 1).text,
                     "Address 0x1ffefff8 is 8 bytes inside local var \"buffer\"");
    ck_assert_uint_eq(g_array_index(read->aux, GlAux, 1).stack.n_frames, 0);
    ck_assert_str_eq(g_array_index(read->aux, GlAux, 2).text, "Block was alloc'd at");
    ck_assert_str_eq(g_array_index(read->aux, GlAux, 2).stack.frames[1].fn, "edge_new");
    ck_assert_str_eq(g_array_index(read->aux, GlAux, 3).text,
                     "Uninitialised value was created by a heap allocation");
    ck_assert_str_eq(g_array_index(read->aux, GlAux, 3).stack.frames[0].fn, "edge_fill");

    const GlRecord *fd = g_ptr_array_index(records, 1);
    ck_assert_str_eq(fd->kind, "FdNotClosed");
    ck_assert_int_eq(fd->fd, 5);
    ck_assert_str_eq(fd->fd_path, "/tmp/edge.log");

    const GlRecord *leak = g_ptr_array_index(records, 2);
    ck_assert_uint_eq(leak->leaked_bytes, 152);
    ck_assert_str_eq(leak->what,
                     "152 (56 direct, 96 indirect) bytes in 1 blocks are definitely lost in loss record 3 of 9");
    ck_assert_str_eq(leak->suppression->frames[1], "obj:/work/gem/lib/edge/edge.so");
    ck_assert_ptr_null(leak->suppression->frames[2]);
    ck_assert(strstr(leak->suppression->rawtext, "obj:/work/gem/lib/edge/edge.so") != NULL);
}
END_TEST

static void expect_failure(const char *relative, GlErrorCode code, const char *phrase)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_fixture(relative, &error);
    ck_assert_uint_eq(records->len, 0);
    ck_assert_msg(g_error_matches(error, GL_ERROR, code), "%s: got %s", relative,
                  error != NULL ? error->message : "no error");
    ck_assert_msg(strstr(error->message, phrase) != NULL, "'%s' not in '%s'", phrase,
                  error->message);
    g_autofree char *base = g_path_get_basename(relative);
    ck_assert_msg(strstr(error->message, base) != NULL, "the message names no file: %s",
                  error->message);
}

START_TEST(test_bad_inputs_have_clear_errors)
{
    expect_failure("edge/empty.xml", GL_ERROR_EMPTY, "empty file");
    expect_failure("edge/blank.xml", GL_ERROR_EMPTY, "empty file");
    expect_failure("edge/not_xml.txt", GL_ERROR_NOT_XML, "not XML");
    expect_failure("edge/not_valgrind.xml", GL_ERROR_WRONG_FORMAT, "<report>");
    expect_failure("edge/helgrind.xml", GL_ERROR_WRONG_TOOL, "helgrind");
}
END_TEST

START_TEST(test_missing_file)
{
    g_autoptr(GError) error = NULL;
    GlReader *reader = gl_reader_new_for_path("/nonexistent/run/123.xml", &error);
    ck_assert_ptr_null(reader);
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_IO));
    ck_assert(strstr(error->message, "/nonexistent/run/123.xml") != NULL);
    ck_assert(strstr(error->message, "No such file") != NULL);
}
END_TEST

/* The complete errors in the first @cut bytes of @text: those whose end
 * tag lies wholly inside the cut. */
static guint complete_before(const char *text, gsize cut)
{
    return gl_test_count(text, cut, "</error>") + gl_test_count(text, cut, "</fatal_signal>");
}

static void check_cut(const char *text, gsize length, gsize cut)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_memory(text, cut, &error);
    ck_assert_msg(records->len == complete_before(text, cut),
                  "cut at %zu: %u records, %u complete errors before the cut", cut,
                  records->len, complete_before(text, cut));
    if (cut < length && g_strstr_len(text + cut, (gssize) (length - cut), "<") != NULL)
        ck_assert_msg(g_error_matches(error, GL_ERROR, GL_ERROR_TRUNCATED),
                      "cut at %zu: %s", cut, error != NULL ? error->message : "no error");
}

/* Valgrind killed mid-write: every complete error before the cut, and a
 * "truncated" error, wherever the cut falls. */
static const char *const cut_fixtures[] = { "xml/use_after_free.xml", "xml/crash.xml" };

START_TEST(test_truncated_anywhere)
{
    g_autofree char *path = gl_test_fixture(cut_fixtures[_i]);
    gsize length;
    g_autofree char *text = gl_test_read(path, &length);
    for (gsize cut = 1; cut < length; cut += 211)
        check_cut(text, length, cut);
    /* every byte of the XML declaration and the root's start tag */
    for (gsize cut = 1; cut < 80; cut++)
        check_cut(text, length, cut);
    /* at and just after each end tag, where libxml2's read-ahead used to
     * swallow the last complete error */
    const char *tags[] = { "</error>", "</fatal_signal>" };
    for (guint t = 0; t < G_N_ELEMENTS(tags); t++) {
        for (const char *at = text; (at = strstr(at, tags[t])) != NULL; at++) {
            gsize end = (gsize) (at - text) + strlen(tags[t]);
            const gsize offsets[] = { 0, 1, 2, 9, 300, 4000 };
            for (guint i = 0; i < G_N_ELEMENTS(offsets); i++)
                if (end + offsets[i] < length)
                    check_cut(text, length, end + offsets[i]);
        }
    }
}
END_TEST

START_TEST(test_truncated_mid_tag_attribute_comment_cdata)
{
    g_autofree char *path = gl_test_fixture("xml/leak.xml");
    gsize length;
    g_autofree char *text = gl_test_read(path, &length);
    const char *first_end = strstr(text, "</error>") + strlen("</error>");
    gsize head = (gsize) (first_end - text);
    const char *tails[] = { "\n<error><unique>0x", "\n<error><kind a=\"x", "\n<!-- a comm",
                            "\n<error><what><![CDATA[abc", "\n<err", "\n<error>\n  <stack>\n" };
    g_autofree char *start = g_strndup(text, head);
    for (guint i = 0; i < G_N_ELEMENTS(tails); i++) {
        g_autofree char *cut = g_strconcat(start, tails[i], NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(GPtrArray) records = read_memory(cut, strlen(cut), &error);
        ck_assert_uint_eq(records->len, 1);
        ck_assert_msg(g_error_matches(error, GL_ERROR, GL_ERROR_TRUNCATED), "tail %u: %s", i,
                      error != NULL ? error->message : "no error");
        ck_assert(strstr(error->message, "after 1 complete errors") != NULL);
    }
}
END_TEST

START_TEST(test_concatenated_documents_all_read)
{
    g_autofree char *leak_path = gl_test_fixture("xml/leak.xml");
    g_autofree char *clean_path = gl_test_fixture("xml/clean.xml");
    gsize leak_length, clean_length;
    g_autofree char *leak = gl_test_read(leak_path, &leak_length);
    g_autofree char *clean = gl_test_read(clean_path, &clean_length);
    g_autofree char *both = g_strconcat(leak, clean, NULL);

    g_autoptr(GlReader) reader = gl_reader_new_for_memory(both, strlen(both), "both.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    guint first = gl_test_count(leak, leak_length, "<error>");
    ck_assert_uint_eq(records->len, first + gl_test_count(clean, clean_length, "<error>"));
    const GlProcess *doc = gl_reader_process(reader);
    ck_assert_uint_eq(doc->n_documents, 1);
    /* each record keeps the pid of its own document */
    const GlRecord *last_of_first = g_ptr_array_index(records, first - 1);
    const GlRecord *first_of_second = g_ptr_array_index(records, first);
    ck_assert_int_ne(last_of_first->pid, first_of_second->pid);
    ck_assert_int_eq(first_of_second->pid, doc->pid);
}
END_TEST

START_TEST(test_reads_from_a_descriptor)
{
    g_autofree char *path = gl_test_fixture("xml/leak.xml");
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    g_autoptr(GlReader) reader = gl_reader_new_for_fd(fd, "<stdin>");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_ptr_nonnull(find_by_function(records, "leaky_leak"));
    ck_assert_str_eq(gl_reader_name(reader), "<stdin>");
    close(fd);
}
END_TEST

START_TEST(test_failure_repeats)
{
    g_autoptr(GlReader) reader = gl_reader_new_for_memory("<nope/>", 7, "x.xml");
    g_autoptr(GError) first = NULL;
    g_autoptr(GError) second = NULL;
    ck_assert_ptr_null(gl_reader_next(reader, &first));
    ck_assert_ptr_null(gl_reader_next(reader, &second));
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(second);
    ck_assert_str_eq(first->message, second->message);
}
END_TEST


/* ---- nothing lost: inputs Valgrind really writes, or gets written into --- */

static const char doc_head[] =
    "<?xml version=\"1.0\"?>\n\n<valgrindoutput>\n\n<protocolversion>4</protocolversion>\n"
    "<protocoltool>memcheck</protocoltool>\n\n<pid>%d</pid>\n<ppid>1</ppid>\n"
    "<tool>memcheck</tool>\n\n<args>\n  <vargv>\n    <exe>/usr/bin/valgrind.bin</exe>\n"
    "  </vargv>\n  <argv>\n    <exe>ruby</exe>\n    <arg>%s</arg>\n  </argv>\n</args>\n\n"
    "<status>\n  <state>RUNNING</state>\n  <time>00:00:00:00.100 </time>\n</status>\n\n";
static const char doc_error[] =
    "<error>\n  <unique>0x%x</unique>\n  <tid>1</tid>\n  <kind>Leak_DefinitelyLost</kind>\n"
    "  <xwhat>\n    <text>%d bytes in 1 blocks are definitely lost in loss record 1 of 1</text>\n"
    "    <leakedbytes>%d</leakedbytes>\n    <leakedblocks>1</leakedblocks>\n  </xwhat>\n"
    "  <stack>\n    <frame>\n      <ip>0x483877F</ip>\n      <obj>/x/vgpreload_memcheck.so</obj>\n"
    "      <fn>malloc</fn>\n    </frame>\n    <frame>\n      <ip>0x4A0B1C</ip>\n"
    "      <obj>/x/leaky.so</obj>\n      <fn>%s</fn>\n    </frame>\n  </stack>\n</error>\n\n";
static const char doc_finished[] =
    "<status>\n  <state>FINISHED</state>\n  <time>00:00:00:01.000 </time>\n</status>\n\n";
static const char doc_tail[] = "</valgrindoutput>\n\n";

static void append_errors(GString *text, guint first, guint n, const char *fn)
{
    for (guint i = first; i < first + n; i++)
        g_string_append_printf(text, doc_error, i, (int) (100 + i), (int) (100 + i), fn);
}

static void assert_no_problem(GlReader *reader)
{
    const GPtrArray *problems = gl_reader_problems(reader);
    ck_assert_msg(problems->len == 0, "%s",
                  problems->len > 0 ? ((GError *) g_ptr_array_index(problems, 0))->message : "");
}

static gboolean notes_say(GlReader *reader, const char *phrase)
{
    const GPtrArray *notes = gl_reader_notes(reader);
    for (guint i = 0; i < notes->len; i++)
        if (strstr(g_ptr_array_index(notes, i), phrase) != NULL)
            return TRUE;
    return FALSE;
}

/* An element with nothing in it (no kind, no stack) is a record like any
 * other: a crash once (a missing kind reached strcmp). */
START_TEST(test_error_with_nothing_in_it)
{
    const char text[] = "<valgrindoutput><error/><error></error></valgrindoutput>";
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_memory(text, strlen(text), &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 2);
    for (guint i = 0; i < records->len; i++) {
        const GlRecord *record = g_ptr_array_index(records, i);
        ck_assert_str_eq(record->kind, "Unknown");
        ck_assert_ptr_nonnull(record->what);
    }
}
END_TEST

/* Bytes that are not UTF-8 in the command line (gemleak run -- ruby t.rb
 * $'caf\xe9'), a function and a thread name: every error is read, once
 * said. Before, everything after the first such byte was lost. */
START_TEST(test_bytes_that_are_not_utf8_anywhere)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, doc_head, 41, "caf\xe9");
    append_errors(text, 1, 20, "leaky_leak");
    append_errors(text, 21, 1, "bad\xff\xfe name");
    g_string_append(text, "<error><unique>0x99</unique><tid>2</tid><threadname>t\x01\xc3</threadname>"
                          "<kind>InvalidRead</kind><what>read</what></error>\n");
    append_errors(text, 30, 20, "leaky_leak");
    g_string_append(text, doc_finished);
    g_string_append(text, doc_tail);

    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "bytes.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 42);
    assert_no_problem(reader);
    ck_assert_uint_eq(gl_reader_notes(reader)->len, 1);
    ck_assert(notes_say(reader, "not UTF-8"));
    const GlProcess *doc = gl_reader_process(reader);
    ck_assert_str_eq(g_ptr_array_index(doc->argv, 0), "caf\xEF\xBF\xBD");
    const GlRecord *bad = find_by_function(records, "bad\xEF\xBF\xBD\xEF\xBF\xBD name");
    ck_assert_ptr_nonnull(bad);
    g_string_free(text, TRUE);
}
END_TEST

/* Concatenated documents of any size: a second one shorter than libxml2's
 * read-ahead (4 KB) was skipped with its errors. */
START_TEST(test_small_document_after_another)
{
    g_autofree char *clean_path = gl_test_fixture("xml/clean.xml");
    gsize clean_length;
    g_autofree char *clean = gl_test_read(clean_path, &clean_length);
    GString *text = g_string_new(clean);
    g_string_append_printf(text, doc_head, 42, "small");
    append_errors(text, 1, 2, "leaky_leak");
    g_string_append(text, doc_tail);
    ck_assert_uint_lt(text->len - clean_length, 4096);

    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "both.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, gl_test_count(clean, clean_length, "<error>") + 2);
    const GlRecord *last = g_ptr_array_index(records, records->len - 1);
    ck_assert_int_eq(last->pid, 42);
    ck_assert_uint_eq(gl_reader_process(reader)->n_documents, 1);
    g_string_free(text, TRUE);
}
END_TEST

/* A document cut off mid-error and followed by a whole one (a killed
 * process's file reused): both read as far as their bytes go. */
START_TEST(test_cut_document_then_a_whole_one)
{
    g_autofree char *leak_path = gl_test_fixture("xml/leak.xml");
    gsize leak_length;
    g_autofree char *leak = gl_test_read(leak_path, &leak_length);
    const char *at = leak;
    for (int i = 0; i < 3; i++)
        at = strstr(at, "</error>") + strlen("</error>");
    gsize cut = (gsize) (at - leak) + 300;
    GString *text = g_string_new_len(leak, (gssize) cut);
    g_string_append_printf(text, doc_head, 43, "second");
    append_errors(text, 1, 5, "leaky_leak");
    g_string_append(text, doc_finished);
    g_string_append(text, doc_tail);

    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "reused.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_uint_eq(records->len, 3 + 5);
    ck_assert_msg(g_error_matches(error, GL_ERROR, GL_ERROR_TRUNCATED), "%s",
                  error != NULL ? error->message : "no error");
    ck_assert(strstr(error->message, "where another begins") != NULL);
    ck_assert_uint_eq(gl_reader_problems(reader)->len, 1);
    g_string_free(text, TRUE);
}
END_TEST

/* A forking Ruby under one --xml-file without %p: the child inherits the
 * file and closes the root when it exits; the parent's errors after that
 * were lost and the run passed. */
START_TEST(test_errors_after_a_childs_end_are_read)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, doc_head, 44, "fork");
    append_errors(text, 1, 3, "parent_before");
    /* the child's exit: its leak check, its end of the document */
    g_string_append(text, doc_finished);
    append_errors(text, 10, 4, "child_leak");
    g_string_append(text, doc_tail);
    /* the parent goes on in the same file */
    append_errors(text, 20, 5, "parent_after");
    g_string_append(text, doc_finished);
    append_errors(text, 30, 2, "parent_exit");
    g_string_append(text, doc_tail);

    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "shared.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 3 + 4 + 5 + 2);
    ck_assert_ptr_nonnull(find_by_function(records, "parent_after"));
    ck_assert_ptr_nonnull(find_by_function(records, "parent_exit"));
    ck_assert(gl_reader_process(reader)->interleaved);
    ck_assert(notes_say(reader, "--xml-file=DIR/%p.xml"));
    g_string_free(text, TRUE);
}
END_TEST

/* One error written into the middle of another (two processes writing at
 * once, line by line): both are separated and read. */
START_TEST(test_error_written_into_another_is_separated)
{
    GString *inner = g_string_new(NULL);
    append_errors(inner, 7, 1, "inner_leak");
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, doc_head, 45, "nested");
    GString *outer = g_string_new(NULL);
    append_errors(outer, 1, 1, "outer_leak");
    const char *stack = strstr(outer->str, "  <stack>");
    g_string_append_len(text, outer->str, stack - outer->str);
    g_string_append(text, inner->str);
    g_string_append(text, stack);
    append_errors(text, 2, 1, "after_leak");
    g_string_append(text, doc_tail);

    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "nested.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 3);
    ck_assert_ptr_nonnull(find_by_function(records, "outer_leak"));
    ck_assert_ptr_nonnull(find_by_function(records, "inner_leak"));
    ck_assert(notes_say(reader, "separated"));
    g_string_free(inner, TRUE);
    g_string_free(outer, TRUE);
    g_string_free(text, TRUE);
}
END_TEST

/* Valgrind 3.26.0 leaves <still_reachable> open in its protocol 6 leak
 * summary (fixed in 3.27.0): the document is complete all the same. */
START_TEST(test_valgrind_3_26_leak_summary)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, doc_head, 46, "p6");
    append_errors(text, 1, 2, "leaky_leak");
    g_string_append(text, doc_finished);
    g_string_append(text, "<error_summary>\n <errors>0</errors>\n</error_summary>\n"
                          "<leak_summary>\n  <definitely_lost>\n    <bytes>48</bytes>\n"
                          "    <blocks>3</blocks>\n  </definitely_lost>\n  <still_reachable>\n"
                          "    <bytes>0</bytes>\n    <blocks>0</blocks>\n  <suppressed>\n"
                          "    <bytes>0</bytes>\n    <blocks>0</blocks>\n  </suppressed>\n"
                          "</leak_summary>\n");
    g_string_append(text, doc_tail);
    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "p6.xml");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 2);
    ck_assert(gl_reader_process(reader)->complete);
    g_string_free(text, TRUE);
}
END_TEST

/* Leak sizes Valgrind cannot write (it counts in 64 bits, never below 0)
 * are broken input, said as a problem: a count of 10^23 blocks wrapped to
 * a small number, and a negative byte count read as 0 without a word,
 * under any --max-bytes. A count too large saturates. */
START_TEST(test_leak_sizes_out_of_range)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, doc_head, 47, "sizes");
    append_errors(text, 1, 3, "leaky_leak");
    g_string_append(text, doc_finished);
    g_string_append(text, doc_tail);
    g_autofree char *doc = g_string_free(text, FALSE);
    /* the first error's blocks, the second's bytes */
    char *blocks = strstr(doc, "<leakedblocks>1</leakedblocks>");
    g_autofree char *huge = g_strdup_printf("%.*s<leakedblocks>100000000000000000000000"
                                            "</leakedblocks>%s", (int) (blocks - doc), doc,
                                            blocks + strlen("<leakedblocks>1</leakedblocks>"));
    char *bytes = strstr(strstr(huge, "<unique>0x2</unique>"), "<leakedbytes>");
    g_autofree char *both = g_strdup_printf("%.*s<leakedbytes>-5</leakedbytes>%s",
                                            (int) (bytes - huge), huge,
                                            strstr(bytes, "</leakedbytes>") +
                                                strlen("</leakedbytes>"));
    g_autoptr(GlReader) reader = gl_reader_new_for_memory(both, strlen(both), "sizes.xml");
    g_autoptr(GPtrArray) records = read_all(reader, NULL);
    ck_assert_uint_eq(records->len, 3);
    const GlRecord *first = g_ptr_array_index(records, 0);
    const GlRecord *second = g_ptr_array_index(records, 1);
    const GlRecord *third = g_ptr_array_index(records, 2);
    ck_assert_uint_eq(first->leaked_blocks, G_MAXUINT64);
    ck_assert_uint_eq(second->leaked_bytes, 0);
    ck_assert_uint_eq(third->leaked_bytes, 103);
    const GPtrArray *problems = gl_reader_problems(reader);
    ck_assert_uint_eq(problems->len, 2);
    gl_assert_line(((const GError *) g_ptr_array_index(problems, 0))->message,
                   "^sizes\\.xml: the <error> at byte \\d+ has <leakedblocks> "
                   "100000000000000000000000, more than Valgrind can count: read as "
                   "18446744073709551615$");
    gl_assert_line(((const GError *) g_ptr_array_index(problems, 1))->message,
                   "^sizes\\.xml: the <error> at byte \\d+ has <leakedbytes> -5, not a count: "
                   "read as 0$");
}
END_TEST

/* Every frame is kept, however many: a target frame past the 4,096th was
 * dropped, and the verdict with it. */
START_TEST(test_every_frame_kept)
{
    GString *text = g_string_new("<valgrindoutput><error><kind>Leak_DefinitelyLost</kind><stack>");
    for (int i = 0; i < 5000; i++)
        g_string_append_printf(text, "<frame><ip>0x%x</ip><obj>/x/%s.so</obj></frame>", i,
                               i == 4500 ? "leaky" : "libruby");
    g_string_append(text, "</stack></error></valgrindoutput>");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) records = read_memory(text->str, text->len, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, 1);
    const GlRecord *record = g_ptr_array_index(records, 0);
    ck_assert_uint_eq(record->stack.n_frames, 5000);
    ck_assert_str_eq(record->stack.frames[4500].obj, "/x/leaky.so");
    g_string_free(text, TRUE);
}
END_TEST

/* gzip-compressed XML reads as the plain file does, and a cut .gz gives
 * every error before the cut, and a problem that says the gzip data was
 * cut: not that Valgrind was, which a killed process's would excuse. */
START_TEST(test_gzip_compressed)
{
    g_autofree char *path = gl_test_fixture("xml/leak.xml");
    gsize length;
    g_autofree char *text = gl_test_read(path, &length);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *gz_path = g_build_filename(dir, "123.xml.gz", NULL);
    g_autofree char *command = g_strdup_printf("gzip -c '%s' > '%s'", path, gz_path);
    ck_assert_int_eq(system(command), 0);

    g_autoptr(GError) error = NULL;
    g_autoptr(GlReader) reader = gl_reader_new_for_path(gz_path, &error);
    ck_assert_ptr_nonnull(reader);
    g_autoptr(GPtrArray) records = read_all(reader, &error);
    ck_assert_ptr_null(error);
    ck_assert_uint_eq(records->len, gl_test_count(text, length, "<error>"));
    ck_assert_ptr_nonnull(find_by_function(records, "leaky_leak"));

    gsize gz_length;
    g_autofree char *gz = gl_test_read(gz_path, &gz_length);
    g_autofree char *cut_path = g_build_filename(dir, "cut.xml.gz", NULL);
    gl_test_write(cut_path, gz, (gssize) (gz_length / 2));
    g_autoptr(GError) cut_error = NULL;
    g_autoptr(GlReader) cut_reader = gl_reader_new_for_path(cut_path, &cut_error);
    g_autoptr(GPtrArray) cut_records = read_all(cut_reader, &cut_error);
    ck_assert_uint_gt(cut_records->len, 0);
    ck_assert_uint_lt(cut_records->len, records->len);
    ck_assert_msg(g_error_matches(cut_error, GL_ERROR, GL_ERROR_IO), "%s",
                  cut_error != NULL ? cut_error->message : "no error");
    ck_assert_msg(strstr(cut_error->message, "gzip data ends early") != NULL, "%s",
                  cut_error->message);
    gl_remove_tree(dir);
}
END_TEST

/* Appends @data compressed as one gzip member to @out. */
static void append_gzip_member(GByteArray *out, const char *data, gsize length)
{
    z_stream z = { 0 };
    ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    guint old = out->len;
    uLong room = deflateBound(&z, (uLong) length);
    g_byte_array_set_size(out, old + (guint) room);
    z.next_in = (Bytef *) data;
    z.avail_in = (uInt) length;
    z.next_out = out->data + old;
    z.avail_out = (uInt) room;
    ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    g_byte_array_set_size(out, old + (guint) z.total_out);
    deflateEnd(&z);
}

/* Reads @gz as the file @name.xml.gz; *error gets the first problem. */
static GPtrArray *read_gzip(const GByteArray *gz, const char *name, GError **error)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *base = g_strconcat(name, ".xml.gz", NULL);
    g_autofree char *path = g_build_filename(dir, base, NULL);
    gl_test_write(path, (const char *) gz->data, (gssize) gz->len);
    g_autoptr(GlReader) reader = gl_reader_new_for_path(path, error);
    ck_assert_ptr_nonnull(reader);
    GPtrArray *records = read_all(reader, error);
    gl_remove_tree(dir);
    return records;
}

/* Every gzip problem is a problem of the input, and what came before it
 * is read: a CRC that does not match lost the whole last read (here, the
 * whole file); a second member that is not gzip, or garbage after the
 * first, was taken for the end. */
START_TEST(test_gzip_problems_keep_what_came_before)
{
    g_autofree char *path = gl_test_fixture("xml/leak.xml");
    gsize length;
    g_autofree char *text = gl_test_read(path, &length);
    guint n_errors = gl_test_count(text, length, "<error>");

    g_autoptr(GByteArray) crc = g_byte_array_new();
    append_gzip_member(crc, text, length);
    crc->data[crc->len - 8] ^= 0xff;
    g_autoptr(GError) crc_error = NULL;
    g_autoptr(GPtrArray) crc_records = read_gzip(crc, "crc", &crc_error);
    ck_assert_uint_eq(crc_records->len, n_errors);
    ck_assert_msg(g_error_matches(crc_error, GL_ERROR, GL_ERROR_IO), "%s",
                  crc_error != NULL ? crc_error->message : "no error");
    ck_assert_msg(strstr(crc_error->message, "crc.xml.gz: ") != NULL &&
                  strstr(crc_error->message, "gzip") != NULL, "%s", crc_error->message);

    /* two members, the document cut between them; the second's header
     * broken, or its deflate data */
    const char *middle = strstr(text + length / 2, "<error>");
    gsize half = (gsize) (middle - text);
    guint before = gl_test_count(text, half, "<error>");
    for (guint broken = 0; broken < 2; broken++) {
        g_autoptr(GByteArray) two = g_byte_array_new();
        append_gzip_member(two, text, half);
        guint second = two->len;
        append_gzip_member(two, text + half, length - half);
        two->data[broken == 0 ? second : second + 12] ^= 0x55;
        g_autoptr(GError) error = NULL;
        g_autoptr(GPtrArray) records = read_gzip(two, "two", &error);
        ck_assert_uint_ge(records->len, before);
        ck_assert_msg(g_error_matches(error, GL_ERROR, GL_ERROR_IO), "%u: %s", broken,
                      error != NULL ? error->message : "no error");
        ck_assert_msg(strstr(error->message, "gzip") != NULL, "%s", error->message);
    }

    /* a whole document, then bytes that are not gzip */
    g_autoptr(GByteArray) trailing = g_byte_array_new();
    append_gzip_member(trailing, text, length);
    g_byte_array_append(trailing, (const guint8 *) "garbage", 7);
    g_autoptr(GError) trailing_error = NULL;
    g_autoptr(GPtrArray) trailing_records = read_gzip(trailing, "trailing", &trailing_error);
    ck_assert_uint_eq(trailing_records->len, n_errors);
    ck_assert_msg(g_error_matches(trailing_error, GL_ERROR, GL_ERROR_IO), "%s",
                  trailing_error != NULL ? trailing_error->message : "no error");

    /* two whole members read as one file */
    g_autoptr(GByteArray) good = g_byte_array_new();
    append_gzip_member(good, text, half);
    append_gzip_member(good, text + half, length - half);
    g_autoptr(GError) good_error = NULL;
    g_autoptr(GPtrArray) good_records = read_gzip(good, "good", &good_error);
    ck_assert_ptr_null(good_error);
    ck_assert_uint_eq(good_records->len, n_errors);
}
END_TEST

/* Each problem is one line that names the input, whatever libxml2 said. */
START_TEST(test_problems_are_one_line)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, doc_head, 47, "x");
    g_string_append(text, "<error><kind>InvalidRead</kind><what>a &undefined; b</what></error>\n"
                          "<error><kind x=>InvalidRead</kind></error>\n");
    append_errors(text, 1, 1, "leaky_leak");
    g_autoptr(GlReader) reader = gl_reader_new_for_memory(text->str, text->len, "lines.xml");
    g_autoptr(GPtrArray) records = read_all(reader, NULL);
    ck_assert_uint_eq(records->len, 1);
    const GPtrArray *problems = gl_reader_problems(reader);
    ck_assert_uint_eq(problems->len, 3);  /* two bad errors, and the end is missing */
    for (guint i = 0; i < problems->len; i++) {
        const char *message = ((GError *) g_ptr_array_index(problems, i))->message;
        ck_assert_msg(strchr(message, '\n') == NULL, "%s", message);
        ck_assert(g_str_has_prefix(message, "lines.xml: "));
    }
    g_string_free(text, TRUE);
}
END_TEST

Suite *gl_reader_suite(void)
{
    Suite *suite = suite_create("reader");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, test_real_leak_capture);
    tcase_add_test(tc, test_use_after_free_has_three_stacks);
    tcase_add_test(tc, test_suppressions_inside_errors_only);
    tcase_add_test(tc, test_fatal_signal_is_a_record);
    tcase_add_test(tc, test_protocol6_everything_an_error_carries);
    tcase_add_test(tc, test_bad_inputs_have_clear_errors);
    tcase_add_test(tc, test_missing_file);
    tcase_add_loop_test(tc, test_truncated_anywhere, 0, G_N_ELEMENTS(cut_fixtures));
    tcase_add_test(tc, test_truncated_mid_tag_attribute_comment_cdata);
    tcase_add_test(tc, test_concatenated_documents_all_read);
    tcase_add_test(tc, test_reads_from_a_descriptor);
    tcase_add_test(tc, test_failure_repeats);
    tcase_add_test(tc, test_error_with_nothing_in_it);
    tcase_add_test(tc, test_bytes_that_are_not_utf8_anywhere);
    tcase_add_test(tc, test_small_document_after_another);
    tcase_add_test(tc, test_cut_document_then_a_whole_one);
    tcase_add_test(tc, test_errors_after_a_childs_end_are_read);
    tcase_add_test(tc, test_error_written_into_another_is_separated);
    tcase_add_test(tc, test_valgrind_3_26_leak_summary);
    tcase_add_test(tc, test_every_frame_kept);
    tcase_add_test(tc, test_leak_sizes_out_of_range);
    tcase_add_test(tc, test_gzip_compressed);
    tcase_add_test(tc, test_gzip_problems_keep_what_came_before);
    tcase_add_test(tc, test_problems_are_one_line);
    tcase_add_test(tc, test_changed_leak_check);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(suite, tc);
    return suite;
}
