/* What a forked child inherited under a sanitizer's engine
 * (gemleak/read/sanitizer_inherited.h): the blocks both its report and its
 * parent's list lost, the check at the fork written in from them, and what
 * the judges make of it: the parent's blocks counted once, the child's own
 * kept. Hand-made reports in the runtime's format, as gemleak run has the
 * runtime write them (GL_SANITIZER_FRAME_FORMAT, report_objects=1). */
#include "testutil.h"
#include "gemleak/base/protocol.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/rules.h"
#include "gemleak/read/sanitizer_inherited.h"

#include <string.h>

/* A leak record: @bytes in one object at @address, allocated by the
 * extension's @fn (its program counter @pc) from main. Returns: (transfer full). */
static char *record(const char *fn, const char *pc, guint64 bytes, const char *address)
{
    return g_strdup_printf(
        "Direct leak of %" G_GUINT64_FORMAT " byte(s) in 1 object(s) allocated from:\n"
        "Gm 0 /usr/lib/x86_64-linux-gnu/liblsan.so.0\nGf 0 malloc\nGs 0 lsan.cpp\n"
        "G 0 0x7f0000013545 0x13545 0x0 75 0\n"
        "Gm 1 /tmp/gem/ext/leaky.so\nGf 1 %s\nGs 1 /tmp/gem/ext/leaky.c\n"
        "G 1 %s 0x1350 0x0 15 0\n"
        "Gm 2 /usr/bin/ruby\nGf 2 main\nGs 2 main.c\nG 2 0x55000000 0x58471 0x0 68 0\n"
        "\nObjects leaked above:\n%s (%" G_GUINT64_FORMAT " bytes)\n\n",
        bytes, fn, pc, address, bytes);
}

/* A report of process @pid: @lines, then the records (NULL-terminated,
 * taken) in one report of the runtime's at exit, then "gemleak:done".
 * Returns: (transfer full). */
static char *report(gint64 pid, const char *lines, ...)
{
    GString *text = g_string_new(lines);
    g_string_append_printf(text, "gemleak:exit\n=================================================================\n"
                           "==%" G_GINT64_FORMAT "==ERROR: LeakSanitizer: detected memory leaks\n\n",
                           pid);
    va_list ap;
    va_start(ap, lines);
    for (char *one = va_arg(ap, char *); one != NULL; one = va_arg(ap, char *)) {
        g_string_append(text, one);
        g_free(one);
    }
    va_end(ap);
    g_string_append(text, "SUMMARY: LeakSanitizer: 1 byte(s) leaked in 1 allocation(s).\n"
                          GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_DONE "\n");
    return g_string_free(text, FALSE);
}

#define CHILD_START GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_FORKED "\n" \
                    GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_PARENT "\t100\n"

/* The parent lost a block before the fork (A, 0x1000) and, after it, one
 * of the same size by the same call at the address the child's own leak
 * took (0x2000): the child lists both, its own leak at that address by
 * another call, and a block of another size at A's address... Only A is
 * inherited: same address, size and stack. */
START_TEST(test_inherited_blocks)
{
    g_autofree char *parent = report(100, "",
                                     record("leak_before", "0x7f0000001350", 100, "0x1000"),
                                     record("leak_after", "0x7f0000001360", 64, "0x2000"), NULL);
    g_autofree char *child = report(101, CHILD_START,
                                    record("leak_before", "0x7f0000001350", 100, "0x1000"),
                                    record("leak_own", "0x7f0000001370", 64, "0x2000"),
                                    record("leak_before", "0x7f0000001350", 48, "0x3000"), NULL);
    gint64 ppid = 0;
    g_autoptr(GHashTable) blocks = gl_sanitizer_inherited_blocks(child, strlen(child), parent,
                                                                 strlen(parent), &ppid);
    ck_assert_int_eq(ppid, 100);
    ck_assert_uint_eq(g_hash_table_size(blocks), 1);
    ck_assert(g_hash_table_contains(blocks, "1000\t100"));

    /* no parent report: nothing inherited; no line: no parent */
    g_autoptr(GHashTable) none = gl_sanitizer_inherited_blocks(child, strlen(child), NULL, 0, &ppid);
    ck_assert_uint_eq(g_hash_table_size(none), 0);
    ck_assert_int_eq(gl_sanitizer_parent_of(parent, strlen(parent)), 0);
    ck_assert_int_eq(gl_sanitizer_parent_of(child, strlen(child)), 100);
}
END_TEST

/* The check written in place of the line: a report of the inherited
 * blocks, with the stacks the child's report gives them now, then
 * "gemleak:checked"; the rest of the report as it was. */
START_TEST(test_check_written_in)
{
    g_autofree char *child = report(101, CHILD_START,
                                    record("leak_before", "0x7f0000001350", 100, "0x1000"),
                                    record("leak_own", "0x7f0000001370", 64, "0x2000"), NULL);
    g_autoptr(GHashTable) blocks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_hash_table_add(blocks, g_strdup("1000\t100"));
    g_autoptr(GString) out = gl_sanitizer_inherited_check(child, strlen(child), 101, blocks,
                                                              NULL, 0);
    const char *check = strstr(out->str, "==101==ERROR");
    const char *checked = strstr(out->str, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_CHECKED "\n");
    ck_assert_ptr_nonnull(check);
    ck_assert_ptr_nonnull(checked);
    ck_assert_ptr_null(strstr(out->str, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_PARENT));
    g_autofree char *written = g_strndup(check, (gsize) (checked - check));
    ck_assert_msg(strstr(written, "Direct leak of 100 byte(s) in 1 object(s)") != NULL, "%s", written);
    ck_assert_msg(strstr(written, "Gf 1 leak_before\n") != NULL, "%s", written);
    ck_assert_msg(strstr(written, "0x1000 (100 bytes)\n") != NULL, "%s", written);
    ck_assert_msg(strstr(written, "leak_own") == NULL, "%s", written);
    /* the exit report follows, whole */
    ck_assert_str_eq(checked + strlen(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_CHECKED "\n"),
                     strstr(child, "gemleak:exit\n"));

    /* the parent's block as the exact pass left it (its stack whole):
     * its copy in the child gets that stack, in the check and at exit */
    g_autofree char *parent = report(100, "",
                                     record("leak_exact", "0x7f0000001350", 100, "0x1000"), NULL);
    g_autoptr(GString) given = gl_sanitizer_inherited_check(child, strlen(child), 101, blocks,
                                                            parent, strlen(parent));
    ck_assert_uint_eq(gl_test_count(given->str, given->len, "Gf 1 leak_exact\n"), 2);
    ck_assert_uint_eq(gl_test_count(given->str, given->len, "Gf 1 leak_before\n"), 0);
    ck_assert_uint_eq(gl_test_count(given->str, given->len, "Gf 1 leak_own\n"), 1);
    ck_assert_uint_eq(gl_test_count(given->str, given->len, "0x1000 (100 bytes)\n"), 2);

    /* nothing inherited: the check found nothing, as the runtime's says it */
    g_autoptr(GHashTable) empty = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GString) clean = gl_sanitizer_inherited_check(child, strlen(child), 101, empty,
                                                                NULL, 0);
    ck_assert_ptr_nonnull(strstr(clean->str, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_FORKED "\n"
                                             GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_CHECKED "\n"));
}
END_TEST

/* A run directory, as gemleak run leaves it, read by the judges once the
 * checks are written in: the parent's leak once, the child's own kept,
 * the inherited counted as such. */
START_TEST(test_judged_once)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *parent = report(100, "",
                                     record("leak_before", "0x7f0000001350", 100, "0x1000"), NULL);
    g_autofree char *child = report(101, CHILD_START,
                                    record("leak_before", "0x7f0000001350", 100, "0x1000"),
                                    record("leak_own", "0x7f0000001370", 64, "0x2000"), NULL);
    g_autofree char *parent_path = g_build_filename(dir, "lsan.100", NULL);
    g_autofree char *child_path = g_build_filename(dir, "lsan.101", NULL);
    gl_test_write(parent_path, parent, -1);
    gl_test_write(child_path, child, -1);
    /* what gemleak run says of the engine: its reports are lsan.PID */
    g_autofree char *engine = g_build_filename(dir, GL_PROTO_ENGINE_FILE, NULL);
    gl_test_write(engine, "LeakSanitizer\nname lsan\nlog lsan\n", -1);
    g_autoptr(GError) error = NULL;
    g_autoptr(GlInherited) found = gl_sanitizer_inherited_find(dir, &error);
    ck_assert_msg(found != NULL, "%s", error != NULL ? error->message : "");
    guint children = 0;
    ck_assert(gl_sanitizer_inherited_write(dir, found, &children, &error));
    ck_assert_uint_eq(children, 1);

    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) analysis = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(analysis->findings->len, 2);
    ck_assert_uint_eq(analysis->summary.inherited, 1);
    guint64 bytes = 0, occurrences = 0;
    for (guint i = 0; i < analysis->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(analysis->findings, i);
        bytes += finding->total_bytes;
        occurrences += finding->occurrences;
    }
    ck_assert_uint_eq(bytes, 164);
    ck_assert_uint_eq(occurrences, 2);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_sanitizer_inherited_suite(void)
{
    Suite *suite = suite_create("sanitizer-inherited");
    TCase *tc = tcase_create("inherited");
    tcase_add_test(tc, test_inherited_blocks);
    tcase_add_test(tc, test_check_written_in);
    tcase_add_test(tc, test_judged_once);
    suite_add_tcase(suite, tc);
    return suite;
}
