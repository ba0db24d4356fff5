/* The run's variables given back to a program started with an environment
 * of its own (src/agent/restore_env.c), by the library gemleak
 * preloads and by the guard alike: GEMLEAK_RESTORE read, what an
 * environment lacks of it, the environment given back, and the sentence
 * the run directory gets for a program that ran unfollowed. */
#include "testutil.h"
#include "gemleak/base/protocol.h"
#include "gemleak/agent/restore_env.h"
#include "gemleak/read/run_dir.h"

#include <string.h>
#include <unistd.h>

/* GEMLEAK_RESTORE's value of @items ("HOWNAME=VALUE"), joined as gemleak
 * joins them. Returns: (transfer full). */
static char *restore_list(const char *const *items)
{
    return g_strjoinv(GL_PROTO_RESTORE_SEPARATOR, (char **) items);
}

/* Returns: (transfer full): @envp (NULL-terminated, nullable) given @set's
 * variables back, one "NAME=VALUE" a line, in order. */
static char *restored(const GlRestoreSet *set, char *const *envp)
{
    size_t count = 0;
    size_t bytes = gl_restore_size(set, envp, &count);
    if (bytes == 0)
        return NULL;
    char **vars = g_new0(char *, count + set->n + 1);
    char *text = g_malloc(bytes);
    gl_restore_fill(set, envp, vars, text);
    GString *lines = g_string_new(NULL);
    gsize used = 0;
    for (char **var = vars; *var != NULL; var++) {
        g_string_append_printf(lines, "%s\n", *var);
        if (*var >= text && *var < text + bytes)
            used += strlen(*var) + 1;
    }
    /* the size asked for is what the restored variables take */
    ck_assert_uint_eq(used, bytes);
    g_free(vars);
    g_free(text);
    return g_string_free(lines, FALSE);
}

static const char *const items[] = {
    "<RUBYOPT=-r/h/gemleak_helper.rb",
    ">LD_PRELOAD=/h/gemleak_preload.so",
    "=GEMLEAK_RUN_DIR=/tmp/run",
    ">LSAN_OPTIONS=exitcode=0:log_path=\"/tmp/run/lsan\"",
    "=EMPTY=",           /* an empty value */
    "?UNKNOWN=how",       /* not a way gemleak gives */
    "=NOVALUE",           /* no '=' after the name */
    "<=empty name",
    NULL,
};

/* The list read: each item's way, name and value; what is not an item
 * left out; GEMLEAK_RESTORE itself added, whole. */
START_TEST(test_parse)
{
    g_autofree char *list = restore_list(items);
    g_autofree char *whole = g_strdup(list);
    GlRestoreSet set;
    gl_restore_parse(&set, list, whole);
    ck_assert_uint_eq(set.n, 6);
    ck_assert_int_eq(set.entries[0].how, GL_PROTO_RESTORE_FRONT);
    ck_assert_int_eq(set.entries[1].how, GL_PROTO_RESTORE_BACK);
    ck_assert_int_eq(set.entries[2].how, GL_PROTO_RESTORE_SET);
    ck_assert_str_eq(gl_restore_value(&set, "RUBYOPT"), "-r/h/gemleak_helper.rb");
    ck_assert_str_eq(gl_restore_value(&set, "LSAN_OPTIONS"), "exitcode=0:log_path=\"/tmp/run/lsan\"");
    ck_assert_str_eq(gl_restore_value(&set, "EMPTY"), "");
    ck_assert_str_eq(gl_restore_value(&set, GL_PROTO_RESTORE_VARIABLE), whole);
    ck_assert_ptr_null(gl_restore_value(&set, "UNKNOWN"));
    ck_assert_ptr_null(gl_restore_value(&set, "RUBY"));
    ck_assert_ptr_null(gl_restore_value(&set, "NOVALUE"));
    /* without the whole value, GEMLEAK_RESTORE is not given back */
    g_autofree char *again = restore_list(items);
    gl_restore_parse(&set, again, NULL);
    ck_assert_uint_eq(set.n, 5);
    ck_assert_ptr_null(gl_restore_value(&set, GL_PROTO_RESTORE_VARIABLE));
}
END_TEST

/* An environment cleared (env -i, or none at all: the kernel's NULL)
 * gets every variable; one that has them whole gets nothing. */
START_TEST(test_cleared_and_whole)
{
    g_autofree char *list = restore_list(items);
    GlRestoreSet set;
    gl_restore_parse(&set, list, NULL);
    char *empty[] = { NULL };
    const char *expected = "RUBYOPT=-r/h/gemleak_helper.rb\n"
                           "LD_PRELOAD=/h/gemleak_preload.so\n"
                           "GEMLEAK_RUN_DIR=/tmp/run\n"
                           "LSAN_OPTIONS=exitcode=0:log_path=\"/tmp/run/lsan\"\n"
                           "EMPTY=\n";
    g_autofree char *from_empty = restored(&set, empty);
    ck_assert_str_eq(from_empty, expected);
    g_autofree char *from_null = restored(&set, NULL);
    ck_assert_str_eq(from_null, expected);
    g_auto(GStrv) whole = g_strsplit(expected, "\n", -1);
    g_free(whole[5]);
    whole[5] = NULL;
    size_t count = 0;
    ck_assert_uint_eq(gl_restore_size(&set, whole, &count), 0);
    ck_assert_uint_eq(count, 5);
}
END_TEST

/* Theirs stays theirs, in its order: a variable set gemleak's way only
 * where it lacks it; RUBYOPT gets the helper in front of its switches,
 * LD_PRELOAD and the runtime's options gemleak's after theirs (the
 * runtimes read an option's last value), each once, and only where the
 * value does not hold gemleak's part whole already. */
START_TEST(test_theirs_kept)
{
    g_autofree char *list = restore_list(items);
    GlRestoreSet set;
    gl_restore_parse(&set, list, NULL);
    char *env[] = { "HOME=/root", "RUBYOPT=-W0", "GEMLEAK_RUN_DIR=/elsewhere",
                    "LD_PRELOAD=/lib/theirs.so", "PATH=/bin", NULL };
    g_autofree char *got = restored(&set, env);
    ck_assert_str_eq(got, "HOME=/root\n"
                          "GEMLEAK_RUN_DIR=/elsewhere\n"
                          "PATH=/bin\n"
                          "RUBYOPT=-r/h/gemleak_helper.rb -W0\n"
                          "LD_PRELOAD=/lib/theirs.so:/h/gemleak_preload.so\n"
                          "LSAN_OPTIONS=exitcode=0:log_path=\"/tmp/run/lsan\"\n"
                          "EMPTY=\n");
    /* gemleak's part already there, whole, between separators */
    char *holding[] = { "RUBYOPT=-W0 -r/h/gemleak_helper.rb",
                        "LD_PRELOAD=/h/gemleak_preload.so:/lib/theirs.so",
                        "LSAN_OPTIONS=exitcode=0:log_path=\"/tmp/run/lsan\"",
                        "GEMLEAK_RUN_DIR=/tmp/run", "EMPTY=", NULL };
    size_t count = 0;
    ck_assert_uint_eq(gl_restore_size(&set, holding, &count), 0);
    /* a part that only begins like gemleak's is not it */
    char *prefix[] = { "RUBYOPT=-r/h/gemleak_helper.rbx",
                       "LD_PRELOAD=/h/gemleak_preload.so.1",
                       "LSAN_OPTIONS=exitcode=0:log_path=\"/tmp/run/lsan\"",
                       "GEMLEAK_RUN_DIR=/tmp/run", "EMPTY=", NULL };
    g_autofree char *fixed = restored(&set, prefix);
    ck_assert_str_eq(fixed, "LSAN_OPTIONS=exitcode=0:log_path=\"/tmp/run/lsan\"\n"
                            "GEMLEAK_RUN_DIR=/tmp/run\n"
                            "EMPTY=\n"
                            "RUBYOPT=-r/h/gemleak_helper.rb -r/h/gemleak_helper.rbx\n"
                            "LD_PRELOAD=/h/gemleak_preload.so.1:/h/gemleak_preload.so\n");
}
END_TEST

/* The origin (the test a program is exec'd in, src/agent/restore.c's
 * own entry, never in GEMLEAK_RESTORE): set in place of the program's own
 * value, which a process passes on from the test before; nothing to do
 * where the value is the same. */
START_TEST(test_origin_replaces_theirs)
{
    GlRestoreSet set = { .n = 1 };
    set.entries[0] = (GlRestoreEntry) { .how = GL_PROTO_RESTORE_REPLACE,
                                        .name = GL_PROTO_ORIGIN_VARIABLE,
                                        .name_length = strlen(GL_PROTO_ORIGIN_VARIABLE),
                                        .value = "A#test_b\t/t/a_test.rb:7" };
    char *before[] = { "HOME=/root", GL_PROTO_ORIGIN_VARIABLE "=A#test_a\t/t/a_test.rb:3", NULL };
    g_autofree char *got = restored(&set, before);
    ck_assert_str_eq(got, "HOME=/root\n" GL_PROTO_ORIGIN_VARIABLE "=A#test_b\t/t/a_test.rb:7\n");
    char *none[] = { "HOME=/root", NULL };
    g_autofree char *set_now = restored(&set, none);
    ck_assert_str_eq(set_now, "HOME=/root\n" GL_PROTO_ORIGIN_VARIABLE "=A#test_b\t/t/a_test.rb:7\n");
    char *same[] = { GL_PROTO_ORIGIN_VARIABLE "=A#test_b\t/t/a_test.rb:7", NULL };
    size_t count = 0;
    ck_assert_uint_eq(gl_restore_size(&set, same, &count), 0);
}
END_TEST

/* The LD_PRELOAD a Ruby starts with under a sanitizer's engine, read from
 * the command the helper would start it again with ("ENV<sep>LD_PRELOAD=
 * LIST"); none from Valgrind's command, nor from one of another shape. */
START_TEST(test_engine_preload)
{
    const char *sep = GL_PROTO_ENGINE_COMMAND_SEPARATOR;
    g_autofree char *lsan = g_strconcat("/usr/bin/env", sep, "LD_PRELOAD=/h/alloc.so:/l/liblsan.so",
                                        NULL);
    ck_assert_str_eq(gl_restore_engine_preload(lsan), "/h/alloc.so:/l/liblsan.so");
    g_autofree char *valgrind = g_strconcat("/usr/bin/valgrind", sep, "--tool=memcheck", sep,
                                            "--xml=yes", NULL);
    ck_assert_ptr_null(gl_restore_engine_preload(valgrind));
    g_autofree char *more = g_strconcat("/usr/bin/env", sep, "LD_PRELOAD=/l/liblsan.so", sep,
                                        "X=1", NULL);
    ck_assert_ptr_null(gl_restore_engine_preload(more));
    g_autofree char *empty = g_strconcat("/usr/bin/env", sep, "LD_PRELOAD=", NULL);
    ck_assert_ptr_null(gl_restore_engine_preload(empty));
    g_autofree char *unnamed = g_strconcat(sep, "LD_PRELOAD=/l/liblsan.so", NULL);
    ck_assert_ptr_null(gl_restore_engine_preload(unnamed));
    ck_assert_ptr_null(gl_restore_engine_preload("/usr/bin/env"));
    ck_assert_ptr_null(gl_restore_engine_preload(NULL));
}
END_TEST

/* The sentence for a program that ran unfollowed: a line appended to the
 * run directory's outside-PID.txt, whole, control characters shown as
 * '?'; nothing without a run directory. */
START_TEST(test_say_outside)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *item = g_strconcat("=" GL_PROTO_RUN_DIR_VARIABLE "=", dir, NULL);
    GlRestoreSet set;
    gl_restore_parse(&set, item, NULL);
    const char *const first[] = { "it ran ", "/odd\npath\x7f", " (why)", NULL };
    const char *const second[] = { "again", NULL };
    ck_assert_int_eq(gl_restore_say_outside(&set, 4321, first), 0);
    ck_assert_int_eq(gl_restore_say_outside(&set, 4321, second), 0);
    g_autofree char *path = g_build_filename(dir, GL_PROTO_OUTSIDE_PREFIX "4321"
                                                  GL_PROTO_FILE_SUFFIX, NULL);
    g_autofree char *text = gl_test_read(path, NULL);
    ck_assert_str_eq(text, "it ran /odd?path? (why)\nagain\n");
    /* what gemleak makes of it */
    g_autoptr(GPtrArray) said = gl_run_dir_outside(dir);
    ck_assert_uint_eq(said->len, 1);
    ck_assert_str_eq(g_ptr_array_index(said, 0), "process 4321: it ran /odd?path? (why)");
    GlRestoreSet none = { .n = 0 };
    ck_assert_int_eq(gl_restore_say_outside(&none, 1, second), -1);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_restore_env_suite(void)
{
    Suite *suite = suite_create("restore_env");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_cleared_and_whole);
    tcase_add_test(tc, test_theirs_kept);
    tcase_add_test(tc, test_origin_replaces_theirs);
    tcase_add_test(tc, test_engine_preload);
    tcase_add_test(tc, test_say_outside);
    suite_add_tcase(suite, tc);
    return suite;
}
