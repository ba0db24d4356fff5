/* Integration tests, gemleak run: the leaks of a gem's test suite, found
 * and left out. */
#include <string.h>
#include <sys/resource.h>

#include "harness.h"
#include "gemleak/judge/analyze.h"

START_TEST(test_clean_method_reports_nothing)
{
    g_autofree char *tmp = gl_test_tmpdir();
    Result r = { 0 };
    gemleak_run(&r, NULL, tmp, NO_ARGS, "require 'leaky'; Leaky.clean");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: ran under Valgrind \\d+\\.\\d+\\.\\d+ with \\d+ suppression files "
                          "\\(Ruby \\d+\\.\\d+\\.\\d+\\)$");
    gl_assert_line(r.err, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, ");
    /* the leak in Init_leaky is there, and skipped */
    gl_assert_line(r.err, "\\d+ in Init code\\)$");
    gl_assert_line(r.err, "^gemleak: target: .*/leaky/leaky\\.so$");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    gl_assert_no_line(r.err, "kept in");
    ck_assert_uint_eq(entries_in(tmp), 0);  /* the private directory is gone */
    result_clear(&r);
    gl_remove_tree(tmp);
}
END_TEST

START_TEST(test_malloc_leak_reported_and_xml_kept)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^100 bytes in 1 block is definitely lost$");
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^ \\*leaky_alloc \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^  malloc \\(at .*vgpreload_memcheck.*\\)$");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 100 bytes$");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    ck_assert(gl_input_dir_has_inputs(dir));
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

START_TEST(test_use_after_free_shows_three_stacks)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.use_after_free");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^Invalid write of size 1$");
    gl_assert_line(r.err, "^Address 0x[0-9a-f]+ is 0 bytes inside a block of size 100 free'd$");
    gl_assert_line(r.err, "^Block was alloc'd at$");
    ck_assert_uint_eq(gl_test_count(r.err, strlen(r.err), " *leaky_use_after_free (leaky.c:"), 3);
    gl_assert_line(r.err, "^gemleak: FAIL: 1 memory error$");
    result_discard(&r);
}
END_TEST

/* The Valgrind engine leaves uninitialised values out by default
 * (--undef-value-errors=no: they cost it 1.2 to 2.1 times the time); asked
 * for, the extension's branch on one is a memory error in the extension. */
START_TEST(test_uninitialised_read_not_reported)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.uninitialized");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_no_line(r.err, "Conditional jump");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    result_clear(&r);

    Result asked = { 0 };
    gemleak_run(&asked, NULL, NULL, ARGS("--valgrind-opt=--undef-value-errors=yes"),
                "require 'leaky'; Leaky.uninitialized");
    ck_assert_msg(asked.status == 1, "status %d\n%s", asked.status, asked.err);
    gl_assert_line(asked.err, "^Conditional jump or move depends on uninitialised value\\(s\\)$");
    gl_assert_line(asked.err, "^ \\*leaky_uninitialized \\(leaky\\.c:\\d+\\)$");
    /* Ruby 3.1 without symbols: when its GC happens to run inside
     * Init_leaky's calls to it (the heap's layout varies with the hash
     * seed), an uninitialised word of the stack it scans is one more
     * finding, left uncertain, and said so after the FAIL. */
    gl_assert_line(asked.err, "^gemleak: FAIL: 1 memory error(; 1 uncertain finding .*)?$");
    result_discard(&asked);
}
END_TEST

START_TEST(test_callback_into_ruby_skipped_unless_defaults_dropped)
{
    const char *code = "require 'leaky'; Leaky.callback_intern; Leaky.callback_funcall";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "[1-9]\\d* Ruby's own memory");
    result_clear(&r);

    Result all = { 0 };
    gemleak_run(&all, NULL, NULL, ARGS("--no-default-skips"), code);
    ck_assert_msg(all.status == 1, "status %d\n%s", all.status, all.err);
    gl_assert_line(all.err, "^ \\*leaky_callback_(intern|funcall) \\(leaky\\.c:\\d+\\)$");
    result_discard(&all);
}
END_TEST

START_TEST(test_leak_in_init_not_reported)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "[1-9]\\d* in Init code\\)$");
    gl_assert_no_line(r.err, "Init_leaky \\(leaky");
    result_clear(&r);
}
END_TEST

START_TEST(test_helper_and_environment_in_every_ruby)
{
    const char *code =
        "require 'leaky'; "
        "print ENV['GEMLEAK_RUNNING'], ENV['RUBY_FREE_AT_EXIT'], defined?(GemLeakHelper) ? 1 : 0; "
        "print `ruby --disable-gems -e 'print defined?(GemLeakHelper) ? 1 : 0'`; "
        "print ' ', Process.getrlimit(:NOFILE).join(','), ' ', Process.getrlimit(:STACK)[0]";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    /* GEMLEAK_RUNNING, RUBY_FREE_AT_EXIT (gemleak's value, which tells its
     * warning from a suite's), the helper here and in a spawned Ruby */
    ck_assert_msg(g_str_has_prefix(r.out, "11-gemleak11 "), "stdout: %s", r.out);
    g_auto(GStrv) fields = g_strsplit(r.out, " ", -1);
    g_auto(GStrv) files = g_strsplit(fields[1], ",", 2);
    ck_assert_int_le(g_ascii_strtoll(files[0], NULL, 10), 8192);
    ck_assert_int_le(g_ascii_strtoll(files[1], NULL, 10), 8192);
    ck_assert_msg(g_ascii_strtoull(fields[2], NULL, 10) == (guint64) RLIM_INFINITY,
                  "stack limit %s", fields[2]);
    result_clear(&r);

    /* RUBY_FREE_AT_EXIT=0 turns it off: Ruby 3.4 turns it on when the
     * variable is set at all, so it is removed; another value is kept. */
    gemleak_run_env(&r, NULL, NULL, ARGS("RUBY_FREE_AT_EXIT=0"), NO_ARGS,
                    "require 'leaky'; print ENV.fetch('RUBY_FREE_AT_EXIT', 'unset')");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    ck_assert_str_eq(r.out, "unset");
    result_clear(&r);
    gemleak_run_env(&r, NULL, NULL, ARGS("RUBY_FREE_AT_EXIT=yes"), NO_ARGS,
                    "require 'leaky'; print ENV.fetch('RUBY_FREE_AT_EXIT', 'unset')");
    ck_assert_str_eq(r.out, "yes");
    result_clear(&r);
}
END_TEST

START_TEST(test_annotations_to_stdout_text_to_stderr)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--format", "text", "--format", "github:-"),
                "require 'leaky'; Leaky.leak; $stdout.puts 'suite output'");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.out, "^suite output$");
    gl_assert_line(r.out, "^::error title=gemleak%3A definite leak in leaky_alloc ");
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_no_line(r.err, "^::error");
    result_discard(&r);
}
END_TEST

/* Files after ::: shared among --jobs processes, --shard taking a slice:
 * one report over them all. */
START_TEST(test_jobs_and_shards)
{
    g_autofree char *dir = gl_test_tmpdir();
    const char *names[] = { "a", "b", "c", "d" };
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *file = g_strdup_printf("%s/%s.rb", dir, names[i]);
        /* a and b leak; every file says which process ran it */
        g_autofree char *code = g_strdup_printf(
            "require 'leaky'; %s$stdout.puts \"%s in #{Process.pid}\"\n",
            i < 2 ? "Leaky.leak; " : "", names[i]);
        gl_test_write(file, code, -1);
    }
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    const char *loader = "ARGV.each { |f| require f }";
    g_autofree char *a = g_build_filename(dir, "a.rb", NULL);
    g_autofree char *b = g_build_filename(dir, "b.rb", NULL);
    g_autofree char *c = g_build_filename(dir, "c.rb", NULL);
    g_autofree char *d = g_build_filename(dir, "d.rb", NULL);

    const char *all[] = { gemleak_binary, "run", "--jobs", "2", "--", "ruby", "--disable-gems",
                          leaky, "-e", loader, ":::", a, b, c, d, NULL };
    /* in @dir, where the run keeps its durations file */
    Result r = { 0 };
    run_command(&r, dir, NULL, all);
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: 2 commands at once under Valgrind$");
    /* two processes (a and c, b and d), one merged finding */
    gl_assert_line(r.err, "^gemleak: 2 processes checked( \\([^)]*\\))?, \\d+ errors read: 1 finding \\(\\d+ occurrences?\\), ");
    gl_assert_line(r.err, "^200 bytes in 2 blocks are definitely lost \\(2 occurrences in 2 processes\\)$");
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    ck_assert_uint_eq(g_strv_length(lines), 5);
    result_discard(&r);

    /* shard 1 of 2: a and c only */
    const char *shard[] = { gemleak_binary, "run", "--shard", "1/2", "--", "ruby", "--disable-gems",
                            leaky, "-e", loader, ":::", a, b, c, d, NULL };
    Result s1 = { 0 };
    run_command(&s1, dir, NULL, shard);
    ck_assert_msg(s1.status == 1, "status %d\n%s", s1.status, s1.err);
    gl_assert_line(s1.out, "^a in \\d+$");
    gl_assert_line(s1.out, "^c in \\d+$");
    gl_assert_no_line(s1.out, "^b in");
    gl_assert_no_line(s1.out, "^d in");
    result_discard(&s1);

    const char *bad[] = { gemleak_binary, "run", "--shard", "3/2", "--", "ruby", ":::", a, NULL };
    Result s3 = { 0 };
    run_command(&s3, NULL, NULL, bad);
    ck_assert_int_eq(s3.status, 2);
    gl_assert_line(s3.err, "--shard 3/2: give I/N with 1 <= I <= N");
    result_clear(&s3);
    gl_remove_tree(dir);
}
END_TEST

/* The helper lets go of minitest's memoized let values at exit. */
START_TEST(test_helper_forgets_minitest_lets)
{
    const char *code =
        "module Minitest; class Runnable; end; end; "
        "test = Minitest::Runnable.new; test.instance_variable_set(:@_memoized, { big: 'x' * 100 }); "
        "GemLeakHelper.forget_minitest_lets; p test.instance_variable_get(:@_memoized)";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--object", "leaky"), code);
    ck_assert_str_eq(r.out, "nil\n");
    result_clear(&r);
}
END_TEST

START_TEST(test_ruby_crashes_under_valgrind)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.crash");
    ck_assert_msg(r.status == 5, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "\\[BUG\\] Segmentation fault");           /* Ruby's own report */
    gl_assert_line(r.err, "^Invalid write of size 1$");                 /* the bug */
    gl_assert_line(r.err, "^Process terminating with default action of signal 6 \\(SIGABRT\\)$");
    gl_assert_line(r.err, "^ \\*leaky_crash \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(r.err, "^gemleak: note: .*: process \\d+ died: Process terminating with default "
                          "action of signal 6 \\(SIGABRT\\)$");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

/* A leaked cycle whose nodes are allocated in either order: Valgrind names
 * the node allocated first definitely lost, so the definite leak moves
 * between the two runs. With indirect leaks shown, a baseline written by
 * one run knows the other's; with definite leaks alone it cannot, and the
 * run says why. */
START_TEST(test_baseline_knows_a_leaked_cycle_that_moved)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *baseline = g_build_filename(dir, "baseline.json", NULL);
    g_autofree char *kept = g_build_filename(dir, "xml", NULL);
    Result first = { 0 };
    gemleak_run(&first, NULL, NULL, ARGS("--leak-kinds", "definite,indirect", "--write-baseline",
                                         baseline),
                "require 'leaky'; Leaky.leak_cycle(false)");
    ck_assert_msg(first.status == 0, "status %d\n%s", first.status, first.err);
    gl_assert_line(first.err, "^112 \\(48 direct, 64 indirect\\) bytes in 1 block is definitely "
                              "lost\n(.*\n){1,2} \\*cycle_head ");
    result_discard(&first);

    Result moved = { 0 };
    gemleak_run(&moved, NULL, NULL, ARGS("--leak-kinds", "definite,indirect", "--baseline",
                                         baseline, "--keep-xml", kept),
                "require 'leaky'; Leaky.leak_cycle(true)");
    ck_assert_msg(moved.status == 0, "status %d\n%s", moved.status, moved.err);
    gl_assert_line(moved.err, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 2 known to the "
                              "baseline \\(2 occurrences\\), ");
    /* the definite leak did move: the kept XML says so */
    Result filtered = { 0 };
    run_argv(&filtered, gemleak_binary, "filter", "-O", "leaky", "--leak-kinds", "definite,indirect",
             kept, NULL);
    gl_assert_line(filtered.out, "^112 \\(64 direct, 48 indirect\\) bytes in 1 block is "
                                 "definitely lost\n(.*\n){1,2} \\*cycle_tail ");
    result_clear(&filtered);
    result_clear(&moved);

    g_autofree char *definite = g_build_filename(dir, "definite.json", NULL);
    Result write = { 0 };
    gemleak_run(&write, NULL, NULL, ARGS("--write-baseline", definite),
                "require 'leaky'; Leaky.leak_cycle(false)");
    ck_assert_msg(write.status == 0, "status %d\n%s", write.status, write.err);
    result_discard(&write);
    Result unknown = { 0 };
    gemleak_run(&unknown, NULL, NULL, ARGS("--baseline", definite),
                "require 'leaky'; Leaky.leak_cycle(true)");
    ck_assert_msg(unknown.status == 1, "status %d\n%s", unknown.status, unknown.err);
    gl_assert_line(unknown.err, "^gemleak: note: 1 new finding lost other blocks with it \\(indirect "
                                "bytes\\): in a leaked cycle, Valgrind names another of its blocks "
                                "in another run; with --leak-kinds definite,indirect a baseline "
                                "knows a cycle by any of its blocks$");
    result_discard(&unknown);
    gl_remove_tree(dir);
}
END_TEST

/* Runs Ruby @code under gemleak with @args, and asserts its exit status. */
static void run_sites(Result *result, const char *const *args, const char *code, int status)
{
    gemleak_run(result, NULL, NULL, args, code);
    ck_assert_msg(result->status == status, "%s: status %d, not %d\n%s", code, result->status,
                  status, result->err);
}

/* Two allocations in one function (issue 26, item 15): a baseline that
 * knows one leak does not know the other, whichever was fixed or added,
 * and --max-bytes does not pass the swap; the baseline still knows its
 * leak once the lines around it move. */
START_TEST(test_baseline_tells_two_sites_of_one_function_apart)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *small = g_build_filename(dir, "small.json", NULL);
    g_autofree char *large = g_build_filename(dir, "large.json", NULL);
    Result r = { 0 };
    run_sites(&r, ARGS("--write-baseline", small), "require 'sites'; Sites.leak(1)", 0);
    result_discard(&r);
    run_sites(&r, ARGS("--write-baseline", large), "require 'sites'; Sites.leak(2)", 0);
    result_discard(&r);

    /* the small one fixed, the large one added */
    run_sites(&r, ARGS("--baseline", small), "require 'sites'; Sites.leak(2)", 1);
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 64 bytes$");
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", small, "--max-bytes", "40"),
              "require 'sites'; Sites.leak(2)", 1);
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 64 bytes \\(over --max-bytes 40\\)$");
    result_discard(&r);
    /* the large one fixed, the small one added */
    run_sites(&r, ARGS("--baseline", large), "require 'sites'; Sites.leak(1)", 1);
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 24 bytes$");
    result_discard(&r);
    /* both: the one the baseline knows, and the other */
    run_sites(&r, ARGS("--baseline", small), "require 'sites'; Sites.leak(3)", 1);
    gl_assert_line(r.err, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 1 finding \\(1 occurrence\\), 1 known "
                          "to the baseline \\(1 occurrence\\), ");
    gl_assert_line(r.err, "^gemleak: FAIL: 1 leak losing 64 bytes$");
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", small), "require 'sites'; Sites.leak(1)", 0);
    result_discard(&r);

    /* the same extension, its lines moved down and the leaking line
     * indented anew: the baseline still knows the leak */
    g_autofree char *source = g_build_filename(ext_dir, "sites", NULL);
    g_autofree char *moved = g_build_filename(dir, "moved", NULL);
    g_autofree char *script = g_strdup_printf(
        "cp -r '%s' '%s' && cd '%s' && rm -f *.o *.so Makefile && "
        "sed -i -e 's|^static volatile char seen;|/* moved */\\n/* down */\\n\\n&|' "
        "-e 's|^    char \\*volatile small = malloc(24);|\\tchar  *volatile small =  malloc(24);|' "
        "sites.c && ruby extconf.rb >/dev/null && make >/dev/null", source, moved, moved);
    const char *sh[] = { "sh", "-c", script, NULL };
    Result built = { 0 };
    run_command(&built, NULL, NULL, sh);
    ck_assert_msg(built.status == 0, "%s", built.err);
    result_clear(&built);
    g_autofree char *code = g_strdup_printf("$LOAD_PATH.unshift('%s'); require 'sites'; "
                                            "Sites.leak(1)", moved);
    run_sites(&r, ARGS("--baseline", small), code, 0);
    gl_assert_line(r.err, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, 1 known to the baseline ");
    gl_assert_line(r.err, "^gemleak: target: .*/moved/sites\\.so$");
    result_discard(&r);
    g_autofree char *code_large = g_strdup_printf("$LOAD_PATH.unshift('%s'); require 'sites'; "
                                                  "Sites.leak(2)", moved);
    run_sites(&r, ARGS("--baseline", small), code_large, 1);
    result_discard(&r);
    gl_remove_tree(dir);
}
END_TEST

/* The kind of an error is part of what a baseline knows (issue 26, item
 * 15): a baseline that knows a read of a freed block knows neither a write
 * to it nor a second free of it; one that knows the read and the write
 * knows each alone. */
START_TEST(test_baseline_knows_the_kind_of_each_error_on_a_freed_block)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *read = g_build_filename(dir, "read.json", NULL);
    g_autofree char *both = g_build_filename(dir, "both.json", NULL);
    Result r = { 0 };
    run_sites(&r, ARGS("--write-baseline", read), "require 'sites'; Sites.touch_freed(1)", 0);
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", read), "require 'sites'; Sites.touch_freed(1)", 0);
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", read), "require 'sites'; Sites.touch_freed(2)", 1);
    gl_assert_line(r.err, "^Invalid write of size 1$");
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", read), "require 'sites'; Sites.touch_freed(4)", 1);
    gl_assert_line(r.err, "^Invalid free\\(\\) / delete / delete\\[\\] / realloc\\(\\)$");
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", read), "require 'sites'; Sites.touch_freed(3)", 1);
    result_discard(&r);

    run_sites(&r, ARGS("--write-baseline", both), "require 'sites'; Sites.touch_freed(3)", 0);
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", both), "require 'sites'; Sites.touch_freed(1)", 0);
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", both), "require 'sites'; Sites.touch_freed(2)", 0);
    result_discard(&r);
    run_sites(&r, ARGS("--baseline", both), "require 'sites'; Sites.touch_freed(7)", 1);
    result_discard(&r);
    gl_remove_tree(dir);
}
END_TEST

/* Debian's Ruby 3.1 with YJIT (RUBY_YJIT_ENABLE set at all: 0 too) dies
 * as it starts under Valgrind, as doc/guide.md says: the run says the
 * command failed, and gemleak leaves YJIT as the suite set it. */
START_TEST(test_ruby31_yjit_under_valgrind)
{
    Result version = { 0 };
    const char *argv[] = { "ruby", "-e", "print RUBY_VERSION, ' ', defined?(RubyVM::YJIT) ? 1 : 0",
                           NULL };
    run_command(&version, NULL, NULL, argv);
    gboolean ruby31 = version.status == 0 && g_str_has_prefix(version.out, "3.1.") &&
                      g_str_has_suffix(version.out, " 1");
    result_clear(&version);
    if (!ready_or_skip(ruby31 ? "" : NULL, "Ruby 3.1's YJIT under Valgrind",
                       "the ruby on PATH is not a Ruby 3.1 with YJIT"))
        return;
    Result r = { 0 };
    gemleak_run_env(&r, NULL, NULL, ARGS("RUBY_YJIT_ENABLE=0"), ARGS("-O", "leaky"),
                    "require 'leaky'; Leaky.clean");
    ck_assert_msg(r.status == 4, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "\\[BUG\\] Segmentation fault");
    result_discard(&r);
}
END_TEST

void integration_leaks(TCase *tcase)
{
    tcase_add_test(tcase, test_ruby31_yjit_under_valgrind);
    tcase_add_test(tcase, test_baseline_knows_a_leaked_cycle_that_moved);
    tcase_add_test(tcase, test_baseline_tells_two_sites_of_one_function_apart);
    tcase_add_test(tcase, test_baseline_knows_the_kind_of_each_error_on_a_freed_block);
    tcase_add_test(tcase, test_clean_method_reports_nothing);
    tcase_add_test(tcase, test_malloc_leak_reported_and_xml_kept);
    tcase_add_test(tcase, test_use_after_free_shows_three_stacks);
    tcase_add_test(tcase, test_uninitialised_read_not_reported);
    tcase_add_test(tcase, test_callback_into_ruby_skipped_unless_defaults_dropped);
    tcase_add_test(tcase, test_leak_in_init_not_reported);
    tcase_add_test(tcase, test_helper_and_environment_in_every_ruby);
    tcase_add_test(tcase, test_annotations_to_stdout_text_to_stderr);
    tcase_add_test(tcase, test_jobs_and_shards);
    tcase_add_test(tcase, test_ruby_crashes_under_valgrind);
    tcase_add_test(tcase, test_helper_forgets_minitest_lets);
}
