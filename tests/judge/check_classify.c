/* The classification rules, each with a case kept and a case skipped. */
#include "testutil.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/classify.h"
#include "gemleak/base/errors.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VG "/usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so"
#define DEBIAN_RUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1.2"
#define SHARED_RUBY "/opt/rubies/3.3.0/lib/libruby.so.3.3.0"
#define RUBY_EXE "/usr/bin/ruby3.1"
#define EXT "/work/gem/lib/leaky/leaky.so"
#define OTHER "/work/gem/lib/other/other.so"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static GlRules *rules_for(const char *target)
{
    GlRules *rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, target, NULL));
    return rules;
}

/* Classifies @record (consumed) under @rules. */
static GlVerdict verdict_of(const GlRules *rules, GlRecord *record)
{
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    GlVerdict verdict = gl_classifier_classify(classifier, record, NULL);
    gl_record_free(record);
    return verdict;
}

#define LEAK "Leak_DefinitelyLost"

/* Rule 1 */
START_TEST(test_leak_outside_target_is_skipped)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY,
                                                      "rb_ary_new@" DEBIAN_RUBY, "?@" RUBY_EXE,
                                                      NULL)),
                     GL_VERDICT_SKIP_NO_TARGET);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_alloc@" EXT,
                                                      "?@" DEBIAN_RUBY, NULL)),
                     GL_VERDICT_KEEP);
}
END_TEST

/* Classifies @record (consumed) under @rules; *uncertain says whether a
 * kept leak was marked uncertain. */
static GlVerdict verdict_and_certainty(const GlRules *rules, GlRecord *record, gboolean *uncertain)
{
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    GlVerdict verdict = gl_classifier_classify(classifier, record, NULL);
    *uncertain = record->uncertain;
    gl_record_free(record);
    return verdict;
}

#define LIBXML "/usr/lib/x86_64-linux-gnu/libxml2.so.2.9.14"
#define RUBY34 "/home/ci/ruby34/lib/libruby.so.3.4.9"
#define LD "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"

/* Rule 2: whoever the extension called in Ruby decides whose memory it is.
 * A Ruby function that is not one of Ruby's allocation functions allocates
 * for Ruby: a string or array kept to exit, a table made on first use, a
 * class, a method cache, a callback. Names from Debian's stripped 3.1 and
 * from an -O3 3.4 with symbols (a tail call's .part.0). */
START_TEST(test_ruby_memory_behind_a_ruby_call)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    const char *rubys[] = { "rb_funcallv", "rb_funcall_with_block", "rb_yield_values2",
                            "rb_intern3", "rb_raise", "rb_ivar_set", "rb_vm_exec",
                            "rb_iseq_new_eval", "rb_check_funcall_default", "rb_protect",
                            "rb_str_new", "rb_enc_str_new", "rb_ary_push", "rb_hash_aset",
                            "rb_ident_hash_new", "rb_str_encode", "rb_enc_find_index",
                            "rb_define_class_id_under", "rb_struct_define", "rb_const_set",
                            "rb_ec_obj_respond_to.part.0", "vm_sendish.constprop.0",
                            "method_boundp", "rb_id_table_create" };
    for (guint i = 0; i < G_N_ELEMENTS(rubys); i++) {
        g_autofree char *frame = g_strdup_printf("%s@" DEBIAN_RUBY, rubys[i]);
        ck_assert_msg(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY,
                                                       frame, "leaky_call@" EXT, NULL))
                          == GL_VERDICT_SKIP_RUBY, "%s", rubys[i]);
        /* Under an allocation function, even: Ruby allocated for itself
         * (rb_id_table_create under ruby_xmalloc, from a class definition). */
        g_autofree char *deep = g_strdup_printf("%s@" RUBY34, rubys[i]);
        ck_assert_msg(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG,
                                                       "rb_gc_impl_malloc@" RUBY34,
                                                       "ruby_xmalloc_body@" RUBY34,
                                                       "ruby_xmalloc@" RUBY34, deep,
                                                       "leaky_call@" EXT, NULL))
                          == GL_VERDICT_SKIP_RUBY, "%s", rubys[i]);
    }
    /* Ruby's GC, run inside the extension's own ruby_xmalloc: its mark stack. */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG,
                                                      "push_mark_stack_chunk@" RUBY34,
                                                      "gc_marks_rest@" RUBY34,
                                                      "gc_start@" RUBY34,
                                                      "objspace_malloc_increase_body@" RUBY34,
                                                      "ruby_xmalloc_body@" RUBY34,
                                                      "leaky_alloc@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);
    /* A callback further out than the target: the target allocated itself. */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_alloc@" EXT,
                                                      "rb_yield@" DEBIAN_RUBY,
                                                      "leaky_each@" EXT, NULL)),
                     GL_VERDICT_KEEP);
}
END_TEST

/* Rule 2, the other side: what the extension asked Ruby to allocate for it
 * stays the extension's, however Ruby names the way there. */
START_TEST(test_allocation_functions_allocate_for_the_extension)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    const char *allocators[] = { "ruby_xmalloc", "ruby_xmalloc2", "ruby_xcalloc",
                                 "ruby_xrealloc", "ruby_xrealloc2", "ruby_strdup",
                                 "rb_xmalloc_mul_add", "rb_data_typed_object_zalloc",
                                 "rb_data_object_zalloc", "rb_st_init_numtable",
                                 "st_init_numtable", "rb_st_init_table_with_size",
                                 "rb_st_insert", "ruby_getcwd", "rb_fd_init", "rb_fd_set",
                                 "rb_econv_open", "rb_econv_open_opts", "onig_new",
                                 "onig_region_new", "rb_memory_view_get" };
    for (guint i = 0; i < G_N_ELEMENTS(allocators); i++) {
        g_autofree char *frame = g_strdup_printf("%s@" DEBIAN_RUBY, allocators[i]);
        gboolean uncertain = TRUE;
        ck_assert_msg(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                  "?@" DEBIAN_RUBY, frame,
                                                                  "leaky_call@" EXT, NULL),
                                            &uncertain) == GL_VERDICT_KEEP, "%s", allocators[i]);
        ck_assert_msg(!uncertain, "%s", allocators[i]);
    }
    /* With symbols and tail calls (Ruby 3.4 -O3). */
    gboolean uncertain = TRUE;
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "calloc@" VG,
                                                                 "calloc1@" RUBY34,
                                                                 "rb_gc_impl_calloc@" RUBY34,
                                                                 "ruby_xcalloc_body@" RUBY34,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(!uncertain);
    /* A library the extension uses, on Ruby's allocator (nokogiri's libxml2). */
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                 "?@" DEBIAN_RUBY,
                                                                 "ruby_xmalloc@" DEBIAN_RUBY,
                                                                 "xmlStrndup@" LIBXML,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(!uncertain);
}
END_TEST

/* Rule 2: an API whose memory Ruby's headers say the caller releases
 * (issue 30: a C++ gem's rb_fd_init without rb_fd_term, 39 KB over 45
 * tests, skipped as Ruby's). Its insides are its own: unnamed static
 * functions of a stripped Ruby, and functions of its own source file; a
 * function of another file it called allocated for Ruby. Stacks of
 * Debian's Ruby 3.1 (ext/probe's r_fdset, r_econv, n_api_released). */
START_TEST(test_memory_an_api_hands_to_its_caller)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    gboolean uncertain = TRUE;
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                 "?@" DEBIAN_RUBY,
                                                                 "rb_fd_init@" DEBIAN_RUBY,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(!uncertain);
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                 "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY,
                                                                 "rb_econv_open@" DEBIAN_RUBY,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(!uncertain);
    /* the encoding rb_econv_open loaded on first use: Ruby's table */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY,
                                                      "rb_st_init_table_with_size@" DEBIAN_RUBY,
                                                      "?@" DEBIAN_RUBY, "rb_hash_aset@" DEBIAN_RUBY,
                                                      "?@" DEBIAN_RUBY,
                                                      "rb_enc_find_index@" DEBIAN_RUBY,
                                                      "rb_econv_open@" DEBIAN_RUBY,
                                                      "leaky_call@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);
    /* With symbols: transcode.c's own functions are rb_econv_open's; a
     * function of another file is not. */
    GlRecord *own = gl_test_record(LEAK, "malloc@" VG, "rb_gc_impl_malloc@" RUBY34,
                                   "ruby_xmalloc@" RUBY34, "rb_econv_alloc@" RUBY34,
                                   "rb_econv_open0@" RUBY34, "rb_econv_open@" RUBY34,
                                   "leaky_call@" EXT, NULL);
    for (guint i = 3; i <= 5; i++)
        own->stack.frames[i].file = gl_record_intern(own, "transcode.c");
    ck_assert_int_eq(verdict_and_certainty(rules, own, &uncertain), GL_VERDICT_KEEP);
    ck_assert(!uncertain);
    GlRecord *other = gl_test_record(LEAK, "malloc@" VG, "ruby_xmalloc@" RUBY34,
                                     "str_new0@" RUBY34, "rb_econv_open0@" RUBY34,
                                     "rb_econv_open@" RUBY34, "leaky_call@" EXT, NULL);
    other->stack.frames[2].file = gl_record_intern(other, "string.c");
    for (guint i = 3; i <= 4; i++)
        other->stack.frames[i].file = gl_record_intern(other, "transcode.c");
    ck_assert_int_eq(verdict_of(rules, other), GL_VERDICT_SKIP_RUBY);
    /* Ruby's GC inside the API's allocation is still Ruby's. */
    GlRecord *gc = gl_test_record(LEAK, "malloc@" VG, "push_mark_stack_chunk@" RUBY34,
                                  "gc_start@" RUBY34, "rb_gc_impl_malloc@" RUBY34,
                                  "ruby_xmalloc@" RUBY34, "rb_econv_open0@" RUBY34,
                                  "rb_econv_open@" RUBY34, "leaky_call@" EXT, NULL);
    for (guint i = 1; i <= 3; i++)
        gc->stack.frames[i].file = gl_record_intern(gc, "default.c");
    for (guint i = 5; i <= 6; i++)
        gc->stack.frames[i].file = gl_record_intern(gc, "transcode.c");
    ck_assert_int_eq(verdict_of(rules, gc), GL_VERDICT_SKIP_RUBY);
    /* Every entry of the table says where Ruby's headers say so. */
    ck_assert_uint_ge(gl_rules_n_caller_owned(), 8);
    for (guint i = 0; i < gl_rules_n_caller_owned(); i++) {
        const char *header = NULL, *words = NULL;
        const char *glob = gl_rules_caller_owned(i, &header, &words);
        ck_assert_msg(g_str_has_prefix(header, "ruby/") && strlen(words) > 10, "%s", glob);
    }
}
END_TEST

/* Rule 4: a Ruby without symbols names only its exported functions. One
 * unnamed Ruby frame that called the system allocator is Ruby's allocator
 * (ruby_xmalloc tail-calls it); more, and the finding is uncertain: kept,
 * said, and not failing the gate unless asked. */
START_TEST(test_unnamed_ruby_frames)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    gboolean uncertain = TRUE;
    /* ruby_xmalloc, ALLOC_N, ZALLOC_N, REALLOC_N on Debian's Ruby 3.1 */
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                 "?@" DEBIAN_RUBY,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(!uncertain);
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                 "?@" DEBIAN_RUBY,
                                                                 "xmlStrndup@" LIBXML,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(!uncertain);
    /* a string Ruby made (rb_str_new, tail-called) and kept to exit */
    GlRecord *string = gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY,
                                      "leaky_call@" EXT, NULL);
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    ck_assert_int_eq(gl_classifier_classify(classifier, string, NULL), GL_VERDICT_KEEP);
    ck_assert(string->uncertain);
    ck_assert_uint_eq(string->unnamed_frames, 2);
    ck_assert_str_eq(string->unnamed_object, "libruby-3.1.so.3.1.2");
    gl_record_free(string);
    /* Ruby's GC mark stack, under msgpack's ruby_xmalloc: ten unnamed frames */
    GlRecord *gc = gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY,
                                  "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY,
                                  "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY,
                                  "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY,
                                  "_msgpack_buffer_chunk_malloc@" EXT, NULL);
    ck_assert_int_eq(gl_classifier_classify(classifier, gc, NULL), GL_VERDICT_KEEP);
    ck_assert(gc->uncertain);
    ck_assert_uint_eq(gc->unnamed_frames, 10);
    gl_record_free(gc);
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                 "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY,
                                                                 "ruby_xmalloc@" DEBIAN_RUBY,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(uncertain);
    /* an unnamed Ruby function between the extension and the allocator */
    ck_assert_int_eq(verdict_and_certainty(rules, gl_test_record(LEAK, "malloc@" VG,
                                                                 "?@" DEBIAN_RUBY,
                                                                 "rb_xmalloc_mul_add_mul@" DEBIAN_RUBY,
                                                                 "?@" DEBIAN_RUBY,
                                                                 "leaky_call@" EXT, NULL),
                                           &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(uncertain);
    /* a named Ruby function decides even among unnamed ones */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "realloc@" VG, "?@" DEBIAN_RUBY,
                                                      "?@" DEBIAN_RUBY, "rb_ary_push@" DEBIAN_RUBY,
                                                      "leaky_call@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);
}
END_TEST

START_TEST(test_callback_names_count_only_inside_ruby)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    /* A library that happens to define rb_funcall is not Ruby. */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG,
                                                      "rb_funcall@/usr/lib/libmimic.so",
                                                      "leaky_call@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    /* Every way distributions name Ruby counts. */
    const char *rubies[] = { DEBIAN_RUBY, SHARED_RUBY, RUBY_EXE, "/usr/local/bin/ruby",
                             "/usr/lib64/libruby.so.3.3" };
    for (guint i = 0; i < G_N_ELEMENTS(rubies); i++) {
        g_autofree char *frame = g_strdup_printf("rb_funcallv@%s", rubies[i]);
        ck_assert_msg(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, frame,
                                                       "leaky_call@" EXT, NULL))
                          == GL_VERDICT_SKIP_RUBY, "%s", rubies[i]);
    }
}
END_TEST

START_TEST(test_ruby_objects_recognised)
{
    ck_assert(gl_is_ruby_object(DEBIAN_RUBY));
    ck_assert(gl_is_ruby_object(SHARED_RUBY));
    ck_assert(gl_is_ruby_object("libruby.so.3.4"));
    ck_assert(gl_is_ruby_object(RUBY_EXE));
    ck_assert(gl_is_ruby_object("/home/me/.rubies/ruby-3.3.0/bin/ruby"));
    ck_assert(!gl_is_ruby_object("/usr/bin/rubocop"));
    ck_assert(!gl_is_ruby_object("/usr/lib/librubyish.so"));
    ck_assert(!gl_is_ruby_object(EXT));
    ck_assert(!gl_is_ruby_object(LIBC));
    ck_assert(!gl_is_ruby_object(NULL));
}
END_TEST

START_TEST(test_the_documents_executable_is_ruby)
{
    /* A Ruby built under another name: the document says it ran it. */
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *exe = g_build_filename(dir, "myinterp", NULL);
    gl_test_write(exe, "", 0);
    g_autoptr(GlRules) rules = rules_for("leaky");
    g_autoptr(GlClassifier) classifier = gl_classifier_new(rules);
    GlProcess doc = { .pid = 7, .exe = exe };
    g_autofree char *frame = g_strdup_printf("rb_funcallv@%s", exe);
    g_autoptr(GlRecord) record = gl_test_record(LEAK, "malloc@" VG, frame, "leaky_call@" EXT, NULL);
    ck_assert_int_eq(gl_classifier_classify(classifier, record, &doc), GL_VERDICT_SKIP_RUBY);
    g_autoptr(GlRecord) again = gl_test_record(LEAK, "malloc@" VG, frame, "leaky_call@" EXT, NULL);
    ck_assert_int_eq(gl_classifier_classify(classifier, again, NULL), GL_VERDICT_SKIP_RUBY);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_callback_list_is_configurable)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert(gl_rules_add_skip_function(rules, "my_bridge_*", NULL));
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG,
                                                      "my_bridge_call@" DEBIAN_RUBY,
                                                      "leaky_call@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);
    gl_rules_drop_ruby_memory_rule(rules);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "rb_funcallv@" DEBIAN_RUBY,
                                                      "leaky_call@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG,
                                                      "my_bridge_call@" DEBIAN_RUBY,
                                                      "leaky_call@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);

    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *file = g_build_filename(dir, "callbacks.txt", NULL);
    gl_test_write(file, "# extra callbacks\n  rb_each   # comment\n\nrb_hash_foreach\n", -1);
    g_autoptr(GlRules) from_file = rules_for("leaky");
    gl_rules_drop_ruby_memory_rule(from_file);
    ck_assert(gl_rules_add_skip_functions_from_file(from_file, file, NULL));
    ck_assert_int_eq(verdict_of(from_file, gl_test_record(LEAK, "malloc@" VG, "rb_hash_foreach@" DEBIAN_RUBY,
                                                          "leaky_call@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);
    ck_assert_int_eq(verdict_of(from_file, gl_test_record(LEAK, "malloc@" VG, "rb_each@" DEBIAN_RUBY,
                                                          "leaky_call@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_rules_add_skip_functions_from_file(from_file, "/nonexistent/callbacks", &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_IO));
    gl_remove_tree(dir);
}
END_TEST

/* A pattern written /REGEX/ is a regular expression, matched anywhere in
 * the name as Ruby's Regexp#match? does: ruby_memcheck's
 * skipped_ruby_functions are Regexps. */
START_TEST(test_callback_regular_expressions)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    gl_rules_drop_ruby_memory_rule(rules);
    ck_assert(gl_rules_add_skip_function(rules, "/\\Amy_bridge/", NULL));
    ck_assert(gl_rules_add_skip_function(rules, "/dispatch/", NULL));
    const struct {
        const char *fn;
        GlVerdict verdict;
    } cases[] = {
        { "my_bridge_call", GL_VERDICT_SKIP_RUBY },
        { "not_my_bridge", GL_VERDICT_KEEP },          /* \A anchors it */
        { "rb_dispatch_method", GL_VERDICT_SKIP_RUBY }, /* unanchored */
        { "rb_funcallv", GL_VERDICT_KEEP },            /* the defaults were dropped */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *frame = g_strdup_printf("%s@" DEBIAN_RUBY, cases[i].fn);
        ck_assert_msg(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, frame,
                                                       "leaky_call@" EXT, NULL))
                          == cases[i].verdict, "%s", cases[i].fn);
    }
    /* Regular expressions from a file, too */
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *file = g_build_filename(dir, "callbacks.txt", NULL);
    gl_test_write(file, "/\\Arb_hash_(foreach|each)\\z/\n", -1);
    g_autoptr(GlRules) from_file = rules_for("leaky");
    gl_rules_drop_ruby_memory_rule(from_file);
    ck_assert(gl_rules_add_skip_functions_from_file(from_file, file, NULL));
    ck_assert_int_eq(verdict_of(from_file, gl_test_record(LEAK, "malloc@" VG, "rb_hash_each@" DEBIAN_RUBY,
                                                          "leaky_call@" EXT, NULL)),
                     GL_VERDICT_SKIP_RUBY);
    ck_assert_int_eq(verdict_of(from_file, gl_test_record(LEAK, "malloc@" VG, "rb_hash_each2@" DEBIAN_RUBY,
                                                          "leaky_call@" EXT, NULL)),
                     GL_VERDICT_KEEP);

    /* One that does not compile is a usage error that names it */
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_rules_add_skip_function(rules, "/rb_(funcall/", &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
    ck_assert_msg(strstr(error->message, "/rb_(funcall/") != NULL, "%s", error->message);
    g_autoptr(GError) in_file = NULL;
    gl_test_write(file, "rb_each\n/rb_(funcall/\n", -1);
    ck_assert(!gl_rules_add_skip_functions_from_file(from_file, file, &in_file));
    ck_assert(g_error_matches(in_file, GL_ERROR, GL_ERROR_USAGE));
    ck_assert_msg(strstr(in_file->message, "callbacks.txt:2") != NULL, "%s", in_file->message);
    gl_remove_tree(dir);
}
END_TEST

/* Rule 3 */
START_TEST(test_init_of_the_extension_is_skipped)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_alloc@" EXT,
                                                      "Init_leaky@" EXT, "dln_load@" DEBIAN_RUBY,
                                                      NULL)),
                     GL_VERDICT_SKIP_INIT);
    /* deeper: Init_leaky called Ruby, which called back into the extension */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_alloc@" EXT,
                                                      "?@" DEBIAN_RUBY, "Init_leaky@" EXT, NULL)),
                     GL_VERDICT_SKIP_INIT);
    /* what Init code had Ruby allocate (a method's entry) is Init's too,
     * and counted there, not as Ruby's memory */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "calloc@" VG, "?@" DEBIAN_RUBY,
                                                      "rb_method_definition_create@" DEBIAN_RUBY,
                                                      "rb_define_module_function@" DEBIAN_RUBY,
                                                      "Init_leaky@" EXT, "dln_load@" DEBIAN_RUBY,
                                                      NULL)),
                     GL_VERDICT_SKIP_INIT);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "calloc@" VG, "?@" DEBIAN_RUBY,
                                                      "?@" DEBIAN_RUBY, "Init_leaky@" EXT,
                                                      "dln_load@" DEBIAN_RUBY, NULL)),
                     GL_VERDICT_SKIP_INIT);
    /* merely named Init_ */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_alloc@" EXT,
                                                      "Init_helpers@" EXT, "leaky_call@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "Init_leakyness@" EXT,
                                                      NULL)),
                     GL_VERDICT_KEEP);
    /* another extension's Init_ function inside this one is not its own */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "Init_other@" EXT, NULL)),
                     GL_VERDICT_KEEP);
}
END_TEST

START_TEST(test_init_name_follows_each_target)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert(gl_rules_add_target(rules, "other", NULL));
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "Init_other@" OTHER, NULL)),
                     GL_VERDICT_SKIP_INIT);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "Init_leaky@" OTHER, NULL)),
                     GL_VERDICT_KEEP);
}
END_TEST

START_TEST(test_frames_without_names)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "?@", "?@", "?@", NULL)),
                     GL_VERDICT_SKIP_NO_TARGET);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, NULL, NULL)), GL_VERDICT_SKIP_NO_TARGET);
    /* a target frame without a name still makes it the target's */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "?@" EXT, NULL)),
                     GL_VERDICT_KEEP);
}
END_TEST

/* Rule 3, when Init_<name> ends with a tail call (-O2): its helper runs
 * straight from Ruby's loader, and no Init_<name> frame is left. */
START_TEST(test_init_reached_by_a_tail_call)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_setup@" EXT,
                                                      "dln_load@" DEBIAN_RUBY, NULL)),
                     GL_VERDICT_SKIP_INIT);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY,
                                                      "rb_st_init_numtable@" DEBIAN_RUBY,
                                                      "Init_leaky_tables@" EXT,
                                                      "dln_load@" RUBY34,
                                                      "rb_vm_call_cfunc@" RUBY34, NULL)),
                     GL_VERDICT_SKIP_INIT);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_setup@" EXT,
                                                      "load_ext@" RUBY34, NULL)),
                     GL_VERDICT_SKIP_INIT);
    /* a method calls it: kept, whatever its name */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG,
                                                      "Init_leaky_extra@" EXT,
                                                      "leaky_method@" EXT,
                                                      "vm_call_cfunc_with_frame_@" RUBY34, NULL)),
                     GL_VERDICT_KEEP);
    /* dln_load elsewhere than right outside the extension says nothing */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "leaky_method@" EXT,
                                                      "vm_exec@" RUBY34, "dln_load@" RUBY34,
                                                      NULL)),
                     GL_VERDICT_KEEP);
}
END_TEST

/* Rule 5: glibc's loader reading past an rpath string while iconv_open
 * loads a gconv module (nokogiri's native_write_to): not the extension's
 * access, nor its memory. */
START_TEST(test_errors_inside_the_dynamic_loader)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    GlRecord *record = gl_test_record("InvalidRead", "strncmp@" LD, "is_dst@" LD,
                                      "_dl_dst_count@" LD, "_dl_map_object@" LD,
                                      "dl_open_worker_begin@" LD, "_dl_catch_exception@" LD,
                                      "_dl_open@" LD, "dlopen_doit@" LIBC,
                                      "__libc_dlopen_mode@" LIBC, "iconv_open@" LIBC,
                                      "?@" LIBXML, "xmlSaveToIO@" LIBXML,
                                      "native_write_to@" EXT, NULL);
    gl_test_record_add_aux(record, "Address 0x1 is 9 bytes inside a block of size 10 alloc'd",
                           "malloc@" VG, "_dl_new_object@" LD, "_dl_map_object@" LD,
                           "_dl_open@" LD, "iconv_open@" LIBC, "native_write_to@" EXT, NULL);
    ck_assert_int_eq(verdict_of(rules, record), GL_VERDICT_SKIP_NO_TARGET);
    /* the extension's own access, or its own block, are kept */
    ck_assert_int_eq(verdict_of(rules, gl_test_record("InvalidRead", "strncmp@" VG,
                                                      "leaky_compare@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    GlRecord *own = gl_test_record("InvalidRead", "strncmp@" LD, "_dl_open@" LD,
                                   "leaky_load@" EXT, NULL);
    gl_test_record_add_aux(own, "Address 0x1 is 0 bytes after a block of size 4 alloc'd",
                           "malloc@" VG, "leaky_load@" EXT, NULL);
    ck_assert_int_eq(verdict_of(rules, own), GL_VERDICT_KEEP);
}
END_TEST

/* Rule 5, uninitialised values: Ruby's GC marks the machine stack
 * conservatively, and memcheck sees it branch on every uninitialised word
 * there, during any object allocation the extension asks for. An error
 * raised inside Ruby's GC is Ruby's, unless the value came from a block the
 * extension made (its origin, with --track-origins=yes). */
#define ORIGIN_HEAP "Uninitialised value was created by a heap allocation"
#define ORIGIN_STACK "Uninitialised value was created by a stack allocation"

/* A GC under rb_str_new, with Ruby's symbols. */
static GlRecord *gc_error(const char *kind)
{
    return gl_test_record(kind, "is_pointer_to_heap@" RUBY34, "gc_mark_maybe@" RUBY34,
                          "gc_marks_rest@" RUBY34, "garbage_collect@" RUBY34,
                          "newobj_slowpath@" RUBY34, "rb_str_new@" RUBY34,
                          "leaky_fill@" EXT, "vm_call_cfunc_with_frame_@" RUBY34, NULL);
}

START_TEST(test_uninitialised_values_in_rubys_gc)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    gboolean uncertain = FALSE;
    /* with symbols: the GC's, whatever the origin Valgrind did not track */
    ck_assert_int_eq(verdict_of(rules, gc_error("UninitCondition")), GL_VERDICT_SKIP_RUBY);
    ck_assert_int_eq(verdict_of(rules, gc_error("UninitValue")), GL_VERDICT_SKIP_RUBY);
    GlRecord *ruby_made = gc_error("UninitCondition");
    gl_test_record_add_aux(ruby_made, ORIGIN_STACK, "gc_marks_rest@" RUBY34, NULL);
    ck_assert_int_eq(verdict_of(rules, ruby_made), GL_VERDICT_SKIP_RUBY);
    /* a local of the extension the GC read while scanning the stack */
    GlRecord *local = gc_error("UninitCondition");
    gl_test_record_add_aux(local, ORIGIN_STACK, "leaky_fill@" EXT, NULL);
    ck_assert_int_eq(verdict_of(rules, local), GL_VERDICT_SKIP_RUBY);
    /* a block the extension made and left uninitialised: its own */
    GlRecord *made = gc_error("UninitCondition");
    gl_test_record_add_aux(made, ORIGIN_HEAP, "malloc@" VG, "leaky_make@" EXT, NULL);
    ck_assert_int_eq(verdict_and_certainty(rules, made, &uncertain), GL_VERDICT_KEEP);
    ck_assert(!uncertain);
    /* ... or asked Ruby to make */
    GlRecord *asked = gc_error("UninitCondition");
    gl_test_record_add_aux(asked, ORIGIN_HEAP, "malloc@" VG, "objspace_xmalloc0@" RUBY34,
                           "ruby_xmalloc@" RUBY34, "leaky_make@" EXT, NULL);
    ck_assert_int_eq(verdict_of(rules, asked), GL_VERDICT_KEEP);
    /* the extension's mark function marking what it holds: its values */
    ck_assert_int_eq(verdict_of(rules, gl_test_record("UninitCondition", "gc_mark_ptr@" RUBY34,
                                                      "rb_gc_mark@" RUBY34, "leaky_mark@" EXT,
                                                      "gc_mark_children@" RUBY34, NULL)),
                     GL_VERDICT_KEEP);
    /* its own code, and Ruby's code that is no GC, as before */
    ck_assert_int_eq(verdict_of(rules, gl_test_record("UninitCondition", "leaky_parse@" EXT,
                                                      "gc_marks_rest@" RUBY34, NULL)),
                     GL_VERDICT_KEEP);
    ck_assert_int_eq(verdict_of(rules, gl_test_record("UninitCondition", "rb_str_hash@" RUBY34,
                                                      "leaky_hash@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    /* a library's function merely named like Ruby's GC is no GC */
    ck_assert_int_eq(verdict_of(rules, gl_test_record("UninitCondition", "gc_mark_tree@" LIBXML,
                                                      "leaky_walk@" EXT, NULL)),
                     GL_VERDICT_KEEP);
}
END_TEST

/* Debian's stripped Ruby names none of the GC's functions: where a Ruby
 * function the extension called ran unnamed code, only the value's origin
 * decides; without it, uncertain. */
START_TEST(test_uninitialised_values_under_a_stripped_ruby)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    gboolean uncertain = FALSE;
#define STRIPPED_GC(kind) gl_test_record(kind, "?@" DEBIAN_RUBY, "?@" DEBIAN_RUBY, \
                                         "rb_wb_protected_newobj_of@" DEBIAN_RUBY, \
                                         "?@" DEBIAN_RUBY, "leaky_fill@" EXT, NULL)
    ck_assert_int_eq(verdict_and_certainty(rules, STRIPPED_GC("UninitCondition"), &uncertain),
                     GL_VERDICT_KEEP);
    ck_assert(uncertain);
    /* a value Ruby created, used by Ruby: Ruby's */
    GlRecord *ruby_made = STRIPPED_GC("UninitValue");
    gl_test_record_add_aux(ruby_made, ORIGIN_STACK, "?@" DEBIAN_RUBY, NULL);
    ck_assert_int_eq(verdict_of(rules, ruby_made), GL_VERDICT_SKIP_RUBY);
    /* a local of the extension: a GC's scan, or handed to Ruby? */
    GlRecord *local = STRIPPED_GC("UninitCondition");
    gl_test_record_add_aux(local, ORIGIN_STACK, "leaky_fill@" EXT, NULL);
    ck_assert_int_eq(verdict_and_certainty(rules, local, &uncertain), GL_VERDICT_KEEP);
    ck_assert(uncertain);
    /* a block the extension made: its own, certain */
    GlRecord *made = STRIPPED_GC("UninitCondition");
    gl_test_record_add_aux(made, ORIGIN_HEAP, "malloc@" VG, "leaky_make@" EXT, NULL);
    ck_assert_int_eq(verdict_and_certainty(rules, made, &uncertain), GL_VERDICT_KEEP);
    ck_assert(!uncertain);
#undef STRIPPED_GC
    /* the extension's own call into the C library: its use */
    GlRecord *libc = gl_test_record("UninitCondition", "strlen@" VG, "leaky_len@" EXT, NULL);
    gl_test_record_add_aux(libc, ORIGIN_HEAP, "malloc@" VG, "?@" DEBIAN_RUBY, NULL);
    ck_assert_int_eq(verdict_and_certainty(rules, libc, &uncertain), GL_VERDICT_KEEP);
    ck_assert(!uncertain);
}
END_TEST

static GlAnalysis *analyze_fixture(const char *relative, GlRules *rules);

/* Rule 5, captured: the probe's rb_str_new loop under Valgrind's default
 * --undef-value-errors=yes with --track-origins=yes on Debian's stripped
 * Ruby 3.1 (fixtures/capture.sh, gc_uninit). Every uninitialised value
 * there is the GC's marking: none is the extension's for certain. */
START_TEST(test_uninitialised_values_captured)
{
    g_autoptr(GlRules) rules = rules_for("probe");
    g_autoptr(GlAnalysis) run = analyze_fixture("xml/gc_uninit.xml", rules);
    guint uninit = 0;
    for (guint i = 0; i < run->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(run->findings, i);
        if (!g_str_has_prefix(finding->record->kind, "Uninit"))
            continue;
        uninit++;
        ck_assert_msg(!finding->certain, "certain: %s", finding->record->what);
    }
    ck_assert_uint_le(uninit, 1);
    ck_assert_uint_gt(run->summary.by_verdict[GL_VERDICT_SKIP_RUBY], 20);
}
END_TEST

/* Rule 6 */
START_TEST(test_memory_errors)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert_int_eq(verdict_of(rules, gl_test_record("InvalidRead", "leaky_read@" EXT,
                                                      "rb_funcallv@" DEBIAN_RUBY, NULL)),
                     GL_VERDICT_KEEP);
    ck_assert_int_eq(verdict_of(rules, gl_test_record("InvalidWrite", "ruby_init_stack@" DEBIAN_RUBY,
                                                      "?@" RUBY_EXE, NULL)),
                     GL_VERDICT_SKIP_NO_TARGET);
    /* Ruby read a block the target freed: the free stack enters the target */
    GlRecord *freed = gl_test_record("InvalidRead", "rb_str_hash@" DEBIAN_RUBY, NULL);
    gl_test_record_add_aux(freed, "Address 0x1 is 0 bytes inside a block of size 8 free'd",
                           "free@" VG, "leaky_release@" EXT, NULL);
    ck_assert_int_eq(verdict_of(rules, freed), GL_VERDICT_KEEP);
    /* memory errors in Init_ or after a callback are bugs all the same */
    ck_assert_int_eq(verdict_of(rules, gl_test_record("InvalidWrite", "memcpy@" VG,
                                                      "rb_funcallv@" DEBIAN_RUBY,
                                                      "Init_leaky@" EXT, NULL)),
                     GL_VERDICT_KEEP);

    gl_rules_set_all_errors(rules, TRUE);
    ck_assert_int_eq(verdict_of(rules, gl_test_record("InvalidWrite", "ruby_init_stack@" DEBIAN_RUBY,
                                                      NULL)),
                     GL_VERDICT_KEEP);
    /* --all-errors is about memory errors: Ruby's leaks stay out */
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY, NULL)),
                     GL_VERDICT_SKIP_NO_TARGET);
}
END_TEST

START_TEST(test_leak_kinds)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    ck_assert_int_eq(verdict_of(rules, gl_test_record("Leak_PossiblyLost", "malloc@" VG,
                                                      "leaky_alloc@" EXT, NULL)),
                     GL_VERDICT_SKIP_KIND);
    GlLeakKind kinds = 0;
    ck_assert(gl_leak_kinds_parse("definite, possible", &kinds, NULL));
    ck_assert_int_eq(kinds, GL_LEAK_DEFINITE | GL_LEAK_POSSIBLE);
    gl_rules_set_leak_kinds(rules, kinds);
    ck_assert_int_eq(verdict_of(rules, gl_test_record("Leak_PossiblyLost", "malloc@" VG,
                                                      "leaky_alloc@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    ck_assert_int_eq(verdict_of(rules, gl_test_record("Leak_StillReachable", "malloc@" VG,
                                                      "leaky_alloc@" EXT, NULL)),
                     GL_VERDICT_SKIP_KIND);
    ck_assert(gl_leak_kinds_parse("all", &kinds, NULL));
    ck_assert_int_eq(kinds, GL_LEAK_ALL);
    ck_assert(gl_leak_kinds_parse("none", &kinds, NULL));
    ck_assert_int_eq(kinds, 0);
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_leak_kinds_parse("definite,lost", &kinds, &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
    ck_assert(strstr(error->message, "'lost'") != NULL);
}
END_TEST

/* Rule 7 */
START_TEST(test_free_at_exit_keeps_all_target_leaks)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    gl_rules_set_free_at_exit(rules, TRUE);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "rb_funcallv@" DEBIAN_RUBY,
                                                      "leaky_call@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "Init_leaky@" EXT, NULL)),
                     GL_VERDICT_KEEP);
    ck_assert_int_eq(verdict_of(rules, gl_test_record(LEAK, "malloc@" VG, "?@" DEBIAN_RUBY, NULL)),
                     GL_VERDICT_SKIP_NO_TARGET);
}
END_TEST

START_TEST(test_target_patterns)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "leaky", NULL));
    ck_assert(gl_rules_add_target(rules, "*/ext/*/other.so", NULL));
    ck_assert(gl_rules_add_target(rules, "third*.so", NULL));
    ck_assert(gl_rules_add_target(rules, "named.so", NULL));
    ck_assert_uint_eq(gl_rules_n_targets(rules), 4);
    ck_assert(gl_rules_target_matches(rules, 0, EXT));
    ck_assert(!gl_rules_target_matches(rules, 0, "/work/gem/lib/notleaky.so"));
    ck_assert(!gl_rules_target_matches(rules, 0, "/work/gem/lib/leaky.so.bak"));
    ck_assert(gl_rules_target_matches(rules, 1, "/home/me/gem/ext/other/other.so"));
    ck_assert(!gl_rules_target_matches(rules, 1, OTHER));
    ck_assert(gl_rules_target_matches(rules, 2, "/x/y/third_party.so"));
    ck_assert(!gl_rules_target_matches(rules, 2, "/third/x.so"));
    ck_assert(gl_rules_target_matches(rules, 3, "/x/named.so"));
    ck_assert_str_eq(gl_rules_target_pattern(rules, 1), "*/ext/*/other.so");
    g_autoptr(GError) error = NULL;
    ck_assert(!gl_rules_add_target(rules, "", &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
}
END_TEST

/* --object /REGEX/: matched anywhere in the object's path, its file name or
 * its name (the file name up to its first dot, as create_makefile names it). */
START_TEST(test_target_regular_expressions)
{
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, "/\\Aleaky\\z/", NULL));
    ck_assert(gl_rules_add_target(rules, "/ext/other/", NULL));
    ck_assert(gl_rules_add_target(rules, "/\\Athird_\\w+\\.so\\z/", NULL));
    ck_assert(gl_rules_target_matches(rules, 0, EXT));
    ck_assert(!gl_rules_target_matches(rules, 0, "/work/gem/lib/leaky/leaky_helper.so"));
    ck_assert(gl_rules_target_matches(rules, 1, "/home/me/gem/ext/other/other.so"));
    ck_assert(!gl_rules_target_matches(rules, 1, OTHER));
    ck_assert(gl_rules_target_matches(rules, 2, "/x/third_party.so"));
    ck_assert(!gl_rules_target_matches(rules, 2, "/x/third_party.so.1"));
    ck_assert_str_eq(gl_rules_target_pattern(rules, 0), "/\\Aleaky\\z/");
    /* a path is still a path */
    ck_assert(gl_rules_add_target(rules, "/work/gem/lib/leaky/leaky.so", NULL));
    ck_assert(gl_rules_target_matches(rules, 3, EXT));
    ck_assert(!gl_rules_target_matches(rules, 3, "/elsewhere/work/gem/lib/leaky/leaky.so"));

    g_autoptr(GError) error = NULL;
    ck_assert(!gl_rules_add_target(rules, "/[leaky/", &error));
    ck_assert(g_error_matches(error, GL_ERROR, GL_ERROR_USAGE));
    ck_assert_msg(strstr(error->message, "--object /[leaky/") != NULL, "%s", error->message);
}
END_TEST

START_TEST(test_target_path_through_a_symlink)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *real = g_build_filename(dir, "real.so", NULL);
    g_autofree char *link = g_build_filename(dir, "link.so", NULL);
    gl_test_write(real, "", 0);
    ck_assert_int_eq(symlink(real, link), 0);
    char *resolved = realpath(real, NULL);
    g_autoptr(GlRules) rules = gl_rules_new();
    ck_assert(gl_rules_add_target(rules, link, NULL));
    /* Valgrind names the object by its real path */
    ck_assert(gl_rules_target_matches(rules, 0, resolved));
    ck_assert(!gl_rules_target_matches(rules, 0, "/elsewhere/real.so"));
    free(resolved);
    gl_remove_tree(dir);
}
END_TEST

/* The rules on real captures: what each scenario must keep and skip. */
static GlAnalysis *analyze_fixture(const char *relative, GlRules *rules)
{
    g_autofree char *path = gl_test_fixture(relative);
    const char *paths[] = { path, NULL };
    return gl_analyze(paths, rules, 1);
}

/* Issue 30: what gemleak's helper wrote of a process in its run directory
 * decides rule 2 for it. Debian's Ruby 3.1 running ext/probe's r_econv:
 * the converter is the extension's; the encoding table rb_econv_open
 * loaded on first use (two blocks under rb_enc_find_index) is Ruby's,
 * unless that Ruby freed its memory at exit, when Ruby left none of its
 * own. A process on a Ruby older than the engine needs is not judged. */
START_TEST(test_process_facts_from_the_run_directory)
{
    g_autoptr(GlRules) rules = rules_for("probe");
    g_autoptr(GlAnalysis) alone = analyze_fixture("xml/api-econv-ruby31.xml", rules);
    ck_assert_uint_eq(alone->findings->len, 1);
    ck_assert_uint_eq(alone->summary.by_verdict[GL_VERDICT_SKIP_RUBY], 2);
    ck_assert_uint_eq(alone->summary.free_at_exit, 0);

    g_autofree char *fixture = gl_test_fixture("xml/api-econv-ruby31.xml");
    gsize length = 0;
    g_autofree char *xml = gl_test_read(fixture, &length);
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *file = g_build_filename(dir, "29078.xml", NULL);
    g_autofree char *ruby = g_build_filename(dir, "ruby-29078.txt", NULL);
    g_autofree char *engine = g_build_filename(dir, "engine.txt", NULL);
    gl_test_write(file, xml, (gssize) length);
    /* a process that started again (exec) under another Ruby: its last line */
    gl_test_write(ruby, "3.1.2\n3.4.5 free-at-exit\n", -1);
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) freed = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(freed->findings->len, 3);
    ck_assert_uint_eq(freed->summary.by_verdict[GL_VERDICT_SKIP_RUBY], 0);
    ck_assert_uint_eq(freed->summary.free_at_exit, 1);

    /* --skip-function still skips where rule 2 is off */
    g_autoptr(GlRules) skipping = rules_for("probe");
    ck_assert(gl_rules_add_skip_function(skipping, "rb_enc_find_index", NULL));
    g_autoptr(GlAnalysis) skipped = gl_analyze(paths, skipping, 1);
    ck_assert_uint_eq(skipped->findings->len, 1);

    gl_test_write(ruby, "3.1.2\n", -1);
    gl_test_write(engine, "LeakSanitizer\nname lsan\nmin-ruby 3.3\nmin-ruby-why it must\n", -1);
    g_autoptr(GlAnalysis) too_old = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(too_old->findings->len, 0);
    ck_assert_uint_eq(too_old->summary.by_verdict[GL_VERDICT_SKIP_UNJUDGED], 3);
    ck_assert_uint_eq(too_old->summary.errors_seen, 3);

    /* an engine that sees memory errors on any Ruby, leaks from 3.3 */
    gl_test_write(engine, "AddressSanitizer\nname asan\nleaks-min-ruby 3.3\n"
                          "leaks-min-ruby-why it must free\n", -1);
    g_autoptr(GlAnalysis) no_leaks = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(no_leaks->findings->len, 0);
    ck_assert_uint_eq(no_leaks->summary.by_verdict[GL_VERDICT_SKIP_UNJUDGED], 3);
    ck_assert_uint_eq(no_leaks->notes->len, 1);
    ck_assert_str_eq(g_ptr_array_index(no_leaks->notes, 0),
                     "process 29078 ran Ruby 3.1.2: its leaks are not judged (it must free); "
                     "its memory errors are");
    gl_remove_tree(dir);
}
END_TEST

/* A clean process's XML (no error) says what its Ruby did all the same: a
 * Valgrind run said "Ruby freed its own memory at exit in N of M
 * processes" only where a process had errors, and not on a clean run (a
 * trial on a fetched C++ gem saw the line come and go). */
START_TEST(test_process_facts_of_a_clean_process)
{
    g_autoptr(GlRules) rules = rules_for("probe");
    g_autofree char *fixture = gl_test_fixture("xml/clean.xml");
    gsize length = 0;
    g_autofree char *whole = gl_test_read(fixture, &length);
    /* its errors out (none was the target's): the XML of a clean process */
    g_autoptr(GRegex) errors = g_regex_new("<error>.*?</error>\\s*", G_REGEX_DOTALL, 0, NULL);
    g_autofree char *xml = g_regex_replace_literal(errors, whole, (gssize) length, 0, "", 0,
                                                   NULL);
    ck_assert_ptr_null(strstr(xml, "<error>"));
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *file = g_build_filename(dir, "5290.xml", NULL);
    g_autofree char *ruby = g_build_filename(dir, "ruby-5290.txt", NULL);
    gl_test_write(file, xml, -1);
    gl_test_write(ruby, "3.4.5 free-at-exit\n", -1);
    const char *paths[] = { dir, NULL };
    g_autoptr(GlAnalysis) clean = gl_analyze(paths, rules, 1);
    ck_assert_uint_eq(clean->findings->len, 0);
    ck_assert_uint_eq(clean->summary.processes, 1);
    ck_assert_uint_eq(clean->summary.free_at_exit, 1);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_real_captures)
{
    g_autoptr(GlRules) rules = rules_for("leaky");
    g_autoptr(GlAnalysis) leak = analyze_fixture("xml/leak.xml", rules);
    ck_assert_uint_eq(leak->findings->len, 3);  /* malloc, ALLOC_N, Init_helpers */
    /* Init_leaky's own malloc and the 24 method entries and modules it had
     * Ruby make: all Init code, none counted as Ruby's memory elsewhere */
    ck_assert_uint_eq(leak->summary.by_verdict[GL_VERDICT_SKIP_INIT], 25);
    ck_assert_uint_eq(leak->summary.by_verdict[GL_VERDICT_SKIP_RUBY], 0);
    ck_assert_uint_gt(leak->summary.by_verdict[GL_VERDICT_SKIP_NO_TARGET], 0);

    g_autoptr(GlAnalysis) callback = analyze_fixture("xml/callback.xml", rules);
    ck_assert_uint_eq(callback->findings->len, 0);
    ck_assert_uint_gt(callback->summary.by_verdict[GL_VERDICT_SKIP_RUBY], 3);

    g_autoptr(GlRules) no_skips = rules_for("leaky");
    gl_rules_drop_ruby_memory_rule(no_skips);
    g_autoptr(GlAnalysis) unskipped = analyze_fixture("xml/callback.xml", no_skips);
    ck_assert_uint_gt(unskipped->findings->len, 3);

    g_autoptr(GlAnalysis) clean = analyze_fixture("xml/clean.xml", rules);
    ck_assert_uint_eq(clean->findings->len, 0);
    ck_assert_uint_gt(clean->summary.errors_seen, 20);

    g_autoptr(GlRules) other = rules_for("other");
    g_autoptr(GlAnalysis) two = analyze_fixture("xml/two_extensions.xml", other);
    ck_assert_uint_eq(two->findings->len, 1);
    const GlFinding *finding = g_ptr_array_index(two->findings, 0);
    ck_assert_str_eq(gl_record_first_target_frame(finding->record)->fn, "other_alloc");
}
END_TEST

/* Every shape of the probe (fixtures/ext/probe/probe.c), captured on
 * Debian's stripped Ruby 3.1: what each rule must keep, as certain, and
 * leave out. */
static const char *const probe_bugs[] = {
    "r_malloc", "r_calloc", "r_realloc", "r_strdup", "r_xmalloc", "r_alloc_n", "r_xcalloc",
    "r_xrealloc", "r_ruby_strdup", "r_typed_nofree", "r_st_table", "r_asprintf", "r_zlib",
    "r_two_sites", "r_calls_init_named", "r_xmalloc_gc", "r_uaf_two_lines", "r_uaf_tail",
    "r_double_free", "r_overflow", NULL,
};

/* Returns: TRUE if a target frame of any stack of @record is @fn. */
static gboolean record_enters(const GlRecord *record, const char *fn)
{
    for (guint f = 0; f < record->stack.n_frames; f++)
        if (record->stack.frames[f].in_target && g_strcmp0(record->stack.frames[f].fn, fn) == 0)
            return TRUE;
    for (guint a = 0; a < record->aux->len; a++) {
        const GlStack *stack = &g_array_index(record->aux, GlAux, a).stack;
        for (guint f = 0; f < stack->n_frames; f++)
            if (stack->frames[f].in_target && g_strcmp0(stack->frames[f].fn, fn) == 0)
                return TRUE;
    }
    return FALSE;
}

/* The probe on Debian's stripped 3.1, and on an -O3 3.4.5 with symbols
 * with and without RUBY_FREE_AT_EXIT (where Ruby's own memory shows as
 * lost under the extension by the hundred). */
static const char *const probe_captures[] = {
    "xml/probe.xml", "xml/probe-ruby34.xml", "xml/probe-ruby34-nofree.xml",
};

START_TEST(test_probe_capture)
{
    g_autoptr(GlRules) rules = rules_for("probe");
    g_autoptr(GlAnalysis) probe = analyze_fixture(probe_captures[_i], rules);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    guint certain = 0;
    for (guint i = 0; i < probe->findings->len; i++) {
        const GlFinding *finding = g_ptr_array_index(probe->findings, i);
        gboolean known = FALSE;
        for (const char *const *bug = probe_bugs; *bug != NULL; bug++) {
            if (record_enters(finding->record, *bug)) {
                known = TRUE;
                g_hash_table_add(seen, (gpointer) *bug);
                ck_assert_msg(finding->certain, "%s is uncertain", *bug);
            }
        }
        certain += finding->certain;
        /* Ruby's strings, two unnamed frames deep on a stripped Ruby:
         * uncertain, never certain; with symbols, not even that */
        if (!known)
            ck_assert_msg(_i == 0 && !finding->certain &&
                              record_enters(finding->record, "n_strings_under_gc"),
                          "%s: a finding that is no bug: %s", probe_captures[_i],
                          finding->record->what);
    }
    for (const char *const *bug = probe_bugs; *bug != NULL; bug++)
        ck_assert_msg(g_hash_table_contains(seen, *bug), "%s: %s was missed", probe_captures[_i],
                      *bug);
    /* two sites in r_two_sites, two blocks in r_zlib; the two accesses of
     * r_uaf_two_lines, one finding */
    ck_assert_uint_eq(certain, g_strv_length((char **) probe_bugs) + 2);
    g_hash_table_unref(seen);
    ck_assert_uint_gt(probe->summary.by_verdict[GL_VERDICT_SKIP_INIT], 0);
}
END_TEST

/* redcarpet 3.6.1 (no known leak) on Ruby 3.4.9 with symbols, -O3 and no
 * RUBY_FREE_AT_EXIT: Init_redcarpet tail-calls Init_redcarpet_rndr (so
 * dln_load is right outside the extension), and rb_respond_to is a tail
 * call (rb_ec_obj_respond_to.part.0). 0.1 reported four findings. What
 * Init defined is Init code; the rest, Ruby's memory. */
START_TEST(test_redcarpet_on_ruby_3_4)
{
    g_autoptr(GlRules) rules = rules_for("redcarpet");
    g_autoptr(GlAnalysis) run = analyze_fixture("xml/redcarpet-ruby34", rules);
    ck_assert_uint_eq(run->summary.processes, 2);
    ck_assert_uint_eq(run->findings->len, 0);
    ck_assert_uint_ge(run->summary.by_verdict[GL_VERDICT_SKIP_INIT], 50);
    ck_assert_uint_gt(run->summary.by_verdict[GL_VERDICT_SKIP_RUBY], 0);
}
END_TEST

Suite *gl_classify_suite(void)
{
    Suite *suite = suite_create("classify");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, test_leak_outside_target_is_skipped);
    tcase_add_test(tc, test_ruby_memory_behind_a_ruby_call);
    tcase_add_test(tc, test_allocation_functions_allocate_for_the_extension);
    tcase_add_test(tc, test_memory_an_api_hands_to_its_caller);
    tcase_add_test(tc, test_unnamed_ruby_frames);
    tcase_add_test(tc, test_callback_names_count_only_inside_ruby);
    tcase_add_test(tc, test_ruby_objects_recognised);
    tcase_add_test(tc, test_the_documents_executable_is_ruby);
    tcase_add_test(tc, test_callback_list_is_configurable);
    tcase_add_test(tc, test_callback_regular_expressions);
    tcase_add_test(tc, test_init_of_the_extension_is_skipped);
    tcase_add_test(tc, test_init_name_follows_each_target);
    tcase_add_test(tc, test_frames_without_names);
    tcase_add_test(tc, test_init_reached_by_a_tail_call);
    tcase_add_test(tc, test_errors_inside_the_dynamic_loader);
    tcase_add_test(tc, test_memory_errors);
    tcase_add_test(tc, test_uninitialised_values_in_rubys_gc);
    tcase_add_test(tc, test_uninitialised_values_under_a_stripped_ruby);
    tcase_add_test(tc, test_uninitialised_values_captured);
    tcase_add_test(tc, test_leak_kinds);
    tcase_add_test(tc, test_free_at_exit_keeps_all_target_leaks);
    tcase_add_test(tc, test_target_patterns);
    tcase_add_test(tc, test_target_regular_expressions);
    tcase_add_test(tc, test_target_path_through_a_symlink);
    tcase_add_test(tc, test_real_captures);
    tcase_add_test(tc, test_process_facts_from_the_run_directory);
    tcase_add_test(tc, test_process_facts_of_a_clean_process);
    tcase_add_loop_test(tc, test_probe_capture, 0, G_N_ELEMENTS(probe_captures));
    tcase_add_test(tc, test_redcarpet_on_ruby_3_4);
    suite_add_tcase(suite, tc);
    return suite;
}
