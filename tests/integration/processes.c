/* Integration tests, gemleak run: processes and options (forks, objects,
 * suppressions, exit statuses, orphans, signals). */
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "harness.h"
#include "gemleak/judge/analyze.h"

/* gemleak run's status when the command itself was killed by SIGKILL and
 * nothing failed the gate. */
#define KILLED_COMMAND_STATUS 4

/* A stand-in for Valgrind in @dir: says it is 3.19.0, and writes a
 * complete, clean XML document where --xml-file says (%p its pid), then
 * runs the shell code @then (nullable) with the command after the options
 * as "$@". For tests of gemleak's own process handling, quickly.
 * Returns: (transfer full): its path. */
static char *fake_valgrind(const char *dir, const char *then)
{
    char *path = g_build_filename(dir, "fake-valgrind", NULL);
    g_autofree char *script = g_strdup_printf(
        "#!/bin/sh\n"
        "[ \"$1\" = --version ] && { echo valgrind-3.19.0; exit 0; }\n"
        "while [ $# -gt 0 ]; do case \"$1\" in\n"
        "  --xml-file=*) xml=\"${1#--xml-file=}\"; shift;;\n"
        "  --*) shift;;\n"
        "  *) break;;\n"
        "esac; done\n"
        "xml=$(printf '%%s' \"$xml\" | sed -e \"s/%%p/$$/\" -e 's/%%%%/%%/g')\n"
        "printf '<?xml version=\"1.0\"?>\\n<valgrindoutput>\\n<protocolversion>4</protocolversion>\\n"
        "<protocoltool>memcheck</protocoltool>\\n<pid>%%s</pid>\\n<status><state>RUNNING</state></status>\\n"
        "<status><state>FINISHED</state></status>\\n</valgrindoutput>\\n' $$ > \"$xml\"\n"
        "%s\n",
        then != NULL ? then : "");
    gl_test_write(path, script, -1);
    g_chmod(path, 0755);
    return path;
}

/* What gemleak's helper writes for a Ruby that loaded leaky.so, for a fake
 * Valgrind's process: a run in which nothing loaded a target would check
 * nothing, and never pass. */
#define FAKE_LOADED "printf '/fake/leaky.so\\n' > \"${xml%/*}/loaded-$$.txt\"\n"

START_TEST(test_leak_in_forked_child_reported_once)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS,
                "require 'leaky'; pid = fork { Leaky.leak }; Process.wait(pid)");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: 2 processes checked( \\([^)]*\\))?, \\d+ errors read: 1 finding \\(\\d+ occurrences?\\), ");
    ck_assert_uint_eq(gl_test_count(r.err, strlen(r.err), " bytes in 1 block is definitely lost"), 1);
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    result_discard(&r);
}
END_TEST

/* Returns: (transfer full): the records of the kept run named in @err that
 * enter the target, Init code's too (filter --free-at-exit), a line each:
 * bytes, blocks, occurrences, processes and the functions of the stack.
 * What a failure of the count says besides, to tell why (it failed once
 * on CI, where only the log's tail is kept, and never here in 114 runs). */
static char *target_records(const char *err)
{
    g_autofree char *dir = kept_dir(err);
    if (dir == NULL)
        return g_strdup("(no directory kept)");
    const char *argv[] = { gemleak_binary, "filter", "--free-at-exit", "--format", "json", dir, NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    g_autoptr(JsonParser) parser = json_parser_new();
    if (r.out == NULL || !json_parser_load_from_data(parser, r.out, -1, NULL)) {
        char *said = g_strdup_printf("(gemleak filter: status %d)", r.status);
        result_clear(&r);
        return said;
    }
    result_clear(&r);
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    g_autoptr(GString) lines = g_string_new(NULL);
    guint init = 0;  /* how many pass through Init_leaky: Ruby's method tables, mostly */
    for (guint i = 0; findings != NULL && i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        JsonArray *frames = json_object_get_array_member(finding, "frames");
        g_autoptr(GString) functions = g_string_new(NULL);
        gboolean in_init = FALSE;
        for (guint k = 0; frames != NULL && k < json_array_get_length(frames); k++) {
            const char *fn = json_object_get_string_member_with_default(
                json_array_get_object_element(frames, k), "fn", NULL);
            in_init |= g_strcmp0(fn, "Init_leaky") == 0;
            if (k < 12)
                g_string_append_printf(functions, " %s", fn != NULL ? fn : "?");
        }
        if (in_init) {
            init++;
            continue;
        }
        JsonArray *pids = json_object_get_array_member(finding, "pids");
        g_string_append_printf(lines, "%" G_GINT64_FORMAT " bytes in %" G_GINT64_FORMAT
                               " blocks, %" G_GINT64_FORMAT " occurrences in %u processes:%s\n",
                               json_object_get_int_member_with_default(finding, "bytes", 0),
                               json_object_get_int_member_with_default(finding, "blocks", 0),
                               json_object_get_int_member_with_default(finding, "occurrences", 0),
                               pids != NULL ? json_array_get_length(pids) : 0, functions->str);
    }
    g_string_append_printf(lines, "and %u through Init_leaky\n", init);
    return g_string_free(g_steal_pointer(&lines), FALSE);
}

/* Asserts that @err has a line matching @pattern, or fails with the
 * target's records of the kept run besides. */
static void assert_line_or_records(const char *err, const char *pattern)
{
    if (g_regex_match_simple(pattern, err, G_REGEX_MULTILINE, 0))
        return;
    g_autofree char *records = target_records(err);
    ck_abort_msg("no line matches /%s/ in:\n%s\nthe target's records, Init code's too:\n%s",
                 pattern, err, records);
}

/* A child forked after its parent leaked inherits those blocks: they are
 * the parent's, counted once; the child's own leak (at the parent's
 * allocation site) counts once too. The child's check at fork tells them
 * apart, and the summary says what it left out. Without it: 300 bytes in
 * 3 blocks and 240 in 2. */
START_TEST(test_forked_child_counts_inherited_leaks_once)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS,
                "require 'leaky'; Leaky.leak; Leaky.leak_xmalloc; "
                "pid = fork { Leaky.leak }; Process.wait(pid)");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    assert_line_or_records(r.err, "^200 bytes in 2 blocks are definitely lost \\(2 occurrences in 2 "
                                  "processes\\)$");
    assert_line_or_records(r.err, "^120 bytes in 1 block is definitely lost$");
    assert_line_or_records(r.err, "^gemleak: 2 processes checked( \\([^)]*\\))?, \\d+ errors read: 2 "
                                  "findings \\(3 occurrences\\), \\d+ skipped \\(.*, 2 inherited from "
                                  "the parent process\\)$");
    assert_line_or_records(r.err, "^gemleak: FAIL: 2 leaks losing 320 bytes$");
    result_discard(&r);
}
END_TEST

START_TEST(test_two_extensions_and_object_choice)
{
    const char *code = "require 'leaky'; require 'other'; Leaky.leak; Other.leak";
    Result both = { 0 };
    gemleak_run(&both, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(both.status == 1, "status %d\n%s", both.status, both.err);
    gl_assert_line(both.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    gl_assert_line(both.err, "^ \\*other_leak \\(other\\.c:\\d+\\)$");
    gl_assert_line(both.err, "^gemleak: targets: .*/leaky\\.so, .*/other\\.so$");
    result_discard(&both);

    Result one = { 0 };
    gemleak_run(&one, NULL, NULL, ARGS("--object", "other"), code);
    ck_assert_msg(one.status == 1, "status %d\n%s", one.status, one.err);
    gl_assert_line(one.err, "^ \\*other_leak \\(other\\.c:\\d+\\)$");
    gl_assert_no_line(one.err, "leaky_leak");
    result_discard(&one);
}
END_TEST

START_TEST(test_object_never_loaded_is_an_error)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--object", "redcarpet"), "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 2, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: --object redcarpet matches no extension the run loaded "
                          "\\(it loaded: .*/leaky/leaky\\.so\\)$");
    /* the run is not lost: its XML can be filtered again with the right name */
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

START_TEST(test_suppressions_dir_silences_a_leak)
{
    g_autofree char *project = gl_test_tmpdir();
    g_autofree char *supp_dir = g_build_filename(project, "suppressions", NULL);
    g_mkdir_with_parents(supp_dir, 0700);
    g_autofree char *supp = g_build_filename(supp_dir, "ruby.supp", NULL);
    gl_test_write(supp, "{\n   leaky's known leak\n   Memcheck:Leak\n   ...\n   fun:leaky_leak\n}\n", -1);
    /* ./suppressions is the default */
    Result r = { 0 };
    gemleak_run(&r, project, NULL, NO_ARGS, "require 'leaky'; Leaky.leak");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "with [2-9] suppression files");
    result_clear(&r);
    /* and --suppressions-dir DIR from anywhere */
    Result named = { 0 };
    gemleak_run(&named, NULL, NULL, ARGS("--suppressions-dir", supp_dir), "require 'leaky'; Leaky.leak");
    ck_assert_msg(named.status == 0, "status %d\n%s", named.status, named.err);
    result_clear(&named);
    gl_remove_tree(project);
}
END_TEST

/* The suppression blocks in @text, from "{" to "}", as a user would copy
 * them from the terminal. Returns: (transfer full). */
static char *copy_suppressions(const char *text)
{
    g_autoptr(GRegex) block = g_regex_new("^[ \t]*\\{[ \t]*\n.*?^[ \t]*\\}[ \t]*$",
                                          G_REGEX_MULTILINE | G_REGEX_DOTALL, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    GString *pasted = g_string_new(NULL);
    g_regex_match(block, text, 0, &match);
    while (g_match_info_matches(match)) {
        g_autofree char *one = g_match_info_fetch(match, 0);
        g_string_append_printf(pasted, "%s\n", one);
        g_match_info_next(match, NULL);
    }
    return g_string_free(pasted, FALSE);
}

/* Leaky.leak reached from several places in Ruby: Valgrind's own block for
 * one occurrence names Ruby's frames of that one call site. The block
 * gemleak prints stops after the target's frames, so pasted into a
 * suppressions file it silences every occurrence, and it is the block
 * --format supp writes. */
START_TEST(test_gen_suppressions_block_silences_every_call_site)
{
    const char *code = "require 'leaky'\n"
                       "def via_method = Leaky.leak\n"
                       "Leaky.leak; via_method; [1, 2].each { Leaky.leak }\n"
                       "Leaky.send(:leak); 2.times { via_method }; Leaky.leak_xmalloc\n";
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *written = g_build_filename(dir, "written.supp", NULL);
    Result first = { 0 };
    gemleak_run(&first, NULL, NULL, ARGS("--gen-suppressions", "--suppressions-out", written), code);
    ck_assert_msg(first.status == 1, "status %d\n%s", first.status, first.err);
    gl_assert_line(first.err, "definitely lost .*\\([4-9] occurrences in 1 process");
    gl_assert_line(first.err, "^   gemleak [0-9a-f]+: definite leak in leaky_alloc \\(leaky\\.c:\\d+\\) via "
                              "leaky_leak \\(leaky\\.c:\\d+\\)$");
    g_autofree char *pasted = copy_suppressions(first.err);
    ck_assert_uint_eq(gl_test_count(pasted, strlen(pasted), "Memcheck:Leak"), 2);
    /* the very blocks of --format supp */
    g_autofree char *supp = gl_test_read(written, NULL);
    g_auto(GStrv) blocks = g_strsplit(pasted, "}\n", -1);
    for (char **b = blocks; *b != NULL && **b != '\0'; b++)
        ck_assert_msg(strstr(supp, *b) != NULL, "printed:\n%s\nnot in --format supp:\n%s", *b, supp);
    result_discard(&first);

    g_autofree char *ruby_supp = g_build_filename(dir, "ruby.supp", NULL);
    gl_test_write(ruby_supp, pasted, -1);
    Result second = { 0 };
    gemleak_run(&second, NULL, NULL, ARGS("--suppressions-dir", dir), code);
    ck_assert_msg(second.status == 0, "status %d\npasted:\n%s\n%s", second.status, pasted, second.err);
    gl_assert_line(second.err, "^gemleak: 1 process checked( \\([^)]*\\))?, \\d+ errors read: 0 findings, ");
    result_clear(&second);
    gl_remove_tree(dir);
}
END_TEST

START_TEST(test_failing_ruby_keeps_its_status)
{
    Result raised = { 0 };
    gemleak_run(&raised, NULL, NULL, NO_ARGS, "require 'leaky'; Leaky.clean; raise 'boom'");
    ck_assert_msg(raised.status == 4, "status %d\n%s", raised.status, raised.err);
    gl_assert_line(raised.err, "boom \\(RuntimeError\\)");
    gl_assert_line(raised.err, "^gemleak: pass: no findings$");
    gl_assert_no_line(raised.err, "definitely lost");
    g_autofree char *dir = kept_dir(raised.err);  /* a failed run keeps its XML */
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&raised);

    Result exited = { 0 };
    gemleak_run(&exited, NULL, NULL, NO_ARGS, "require 'leaky'; exit 7");
    ck_assert_msg(exited.status == 4, "status %d\n%s", exited.status, exited.err);
    gl_assert_line(exited.err, "^gemleak: exit status 4: the command failed \\(exit status 7\\); "
                               "nothing fails the gate$");
    result_discard(&exited);
}
END_TEST

/* The "command" member of the JSON report at @path: how the command
 * ended, which the exit status alone cannot say. */
static gint64 command_status_in(const char *path)
{
    g_autofree char *json = gl_test_read(path, NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert_msg(json_parser_load_from_data(parser, json, -1, NULL), "not JSON: %s", json);
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    ck_assert_msg(json_object_has_member(root, "command"), "no \"command\" in %s", json);
    return json_object_get_int_member(json_object_get_object_member(root, "command"), "status");
}

START_TEST(test_leak_then_raise_exits_5_with_the_finding)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *json = g_build_filename(dir, "report.json", NULL);
    g_autofree char *format = g_strconcat("json:", json, NULL);
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--format", "text", "--format", format),
                "require 'leaky'; Leaky.leak_and_raise");
    ck_assert_msg(r.status == 5, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: exit status 5: findings fail the gate, and the command failed "
                          "\\(exit status 1\\)$");
    gl_assert_line(r.err, "leaked, then raised \\(RuntimeError\\)");
    gl_assert_line(r.err, "^ \\*leaky_leak_and_raise \\(leaky\\.c:\\d+\\)$");
    /* the report says the command failed too */
    ck_assert_int_eq(command_status_in(json), 1);
    result_discard(&r);

    Result exited = { 0 };
    gemleak_run(&exited, NULL, NULL, ARGS("--format", "text", "--format", format),
                "require 'leaky'; exit 7");
    ck_assert_msg(exited.status == 4, "status %d\n%s", exited.status, exited.err);
    gl_assert_line(exited.err, "^gemleak: exit status 4: the command failed \\(exit status 7\\); "
                               "nothing fails the gate$");
    ck_assert_int_eq(command_status_in(json), 7);
    result_discard(&exited);
    gl_remove_tree(dir);
}
END_TEST

/* ruby-MAJOR.MINOR.supp applies to this Ruby; ruby-2.supp does not. */
START_TEST(test_suppressions_by_ruby_version)
{
    g_autofree char *version = gl_ruby_version("ruby");
    ck_assert_ptr_nonnull(version);
    g_auto(GStrv) parts = g_strsplit(version, ".", 3);
    const char *leak_supp = "{\n   known\n   Memcheck:Leak\n   ...\n   fun:leaky_leak\n}\n";
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *minor = g_strdup_printf("%s/ruby-%s.%s.supp", dir, parts[0], parts[1]);
    g_autofree char *other = g_build_filename(dir, "ruby-2.supp", NULL);

    gl_test_write(other, leak_supp, -1);
    Result older = { 0 };
    gemleak_run(&older, NULL, NULL, ARGS("--suppressions-dir", dir), "require 'leaky'; Leaky.leak");
    ck_assert_msg(older.status == 1, "ruby-2.supp was used for Ruby %s:\n%s", version, older.err);
    result_discard(&older);

    gl_test_write(minor, leak_supp, -1);
    Result matching = { 0 };
    gemleak_run(&matching, NULL, NULL, ARGS("--suppressions-dir", dir), "require 'leaky'; Leaky.leak");
    ck_assert_msg(matching.status == 0, "status %d\n%s", matching.status, matching.err);
    result_clear(&matching);
    gl_remove_tree(dir);

    /* the choice itself, file by file */
    g_autofree char *root = gl_test_project_file("suppressions");
    const char *dirs[] = { root, NULL };
    g_autoptr(GPtrArray) files = gl_suppression_files(dirs, "3.1.2");
    ck_assert_uint_eq(files->len, 2);
    ck_assert(g_str_has_suffix(g_ptr_array_index(files, 0), "/ruby.supp"));
    ck_assert(g_str_has_suffix(g_ptr_array_index(files, 1), "/ruby-3.1.supp"));
    g_autoptr(GPtrArray) none = gl_suppression_files(dirs, "2.7.8");
    ck_assert_uint_eq(none->len, 1);
}
END_TEST

START_TEST(test_twice_in_a_row)
{
    for (int i = 0; i < 2; i++) {
        Result r = { 0 };
        gemleak_run(&r, NULL, NULL, ARGS("--format", "json"), "require 'leaky'; Leaky.leak");
        ck_assert_msg(r.status == 1, "run %d: status %d\n%s", i, r.status, r.err);
        ck_assert(strstr(r.err, "\"fn\" : \"leaky_leak\"") != NULL);
        g_autofree char *dir = kept_dir(r.err);
        gl_remove_tree(dir);
        result_clear(&r);
    }
}
END_TEST

/* Runs that go wrong: each said for what it is, the XML kept. */
/* SIGKILL from outside (Valgrind finishes its XML when a process kills
 * itself): the XML stops short, and is read as far as it goes. gemleak
 * reaped the process and knows why: a note, not trouble. */
START_TEST(test_command_killed_by_a_signal)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS,
                "require 'leaky'; fork { Process.kill(:KILL, Process.ppid) }; sleep 30");
    ck_assert_msg(r.status == KILLED_COMMAND_STATUS, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: the command was killed by signal 9 \\(Killed\\)$");
    gl_assert_line(r.err, "^gemleak: note: .*/(\\d+)\\.xml: process \\1 was killed by SIGKILL; its "
                          "XML ends early$");
    gl_assert_no_line(r.err, "^gemleak: .*\\.xml: truncated ");
    gl_assert_line(r.err, "^gemleak: target: .*/leaky/leaky\\.so$");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    ck_assert(gl_input_dir_has_inputs(dir));
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

/* A child the command forked and never waited for: gemleak waits for it
 * (it adopts orphans), so its XML is read whole. */
START_TEST(test_orphaned_child_is_waited_for)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, "require 'leaky'; fork { sleep 2; Leaky.leak }");
    ck_assert_msg(r.status == 1, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: 2 processes checked( \\([^)]*\\))?, \\d+ errors read: 1 finding \\(\\d+ occurrences?\\), ");
    gl_assert_no_line(r.err, "truncated");
    gl_assert_line(r.err, "^ \\*leaky_leak \\(leaky\\.c:\\d+\\)$");
    result_discard(&r);
}
END_TEST

START_TEST(test_valgrinds_own_fatal_error)
{
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--valgrind-opt", "--no-such-valgrind-option"), "1");
    ck_assert_msg(r.status == 3, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "no-such-valgrind-option");  /* Valgrind's own words */
    gl_assert_line(r.err, "^gemleak: Valgrind wrote nothing: see its messages above");
    g_autofree char *dir = kept_dir(r.err);
    ck_assert_ptr_nonnull(dir);
    gl_remove_tree(dir);
    result_clear(&r);
}
END_TEST

/* More commands than gemleak runs at once (300 files, --jobs 300): at most
 * GL_MAX_JOBS of them, each with its share, rather than an assertion. */
START_TEST(test_more_jobs_than_gemleak_runs)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *valgrind = fake_valgrind(dir, FAKE_LOADED);
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    const char *head[] = { gemleak_binary, "run", "--valgrind", valgrind, "-O", "leaky",
                           "--jobs", "300", "--", "/bin/true", ":::", NULL };
    for (const char *const *arg = head; *arg != NULL; arg++)
        g_ptr_array_add(argv, g_strdup(*arg));
    for (int i = 1; i <= 300; i++)
        g_ptr_array_add(argv, g_strdup_printf("%d", i));
    g_ptr_array_add(argv, NULL);
    Result r = { 0 };
    run_command(&r, dir, NULL, (const char *const *) argv->pdata);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_line(r.err, "^gemleak: note: --jobs 300: gemleak reads and runs at most 64 at once$");
    gl_assert_line(r.err, "^gemleak: 64 commands at once under Valgrind$");
    gl_assert_line(r.err, "^gemleak: 64 processes checked \\(all clean\\), 0 errors read: 0 findings$");
    result_discard(&r);
    gl_remove_tree(dir);
}
END_TEST

/* What a --keep-xml directory holds is not loaded: the helper comes from a
 * directory gemleak makes for itself (mode 0700), never from the kept one,
 * and is gone after the run. */
START_TEST(test_keep_xml_runs_nothing_it_holds)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "xml", NULL);
    g_autofree char *ruby_dir = g_build_filename(keep, "ruby", NULL);
    ck_assert_int_eq(g_mkdir_with_parents(ruby_dir, 0700), 0);
    g_autofree char *planted = g_build_filename(ruby_dir, "set.rb", NULL);
    gl_test_write(planted, "$stdout.puts 'planted code ran'\n", -1);
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, ARGS("--keep-xml", keep),
                "require 'leaky'; require 'set'; "
                "lib = File.dirname(ENV['RUBYOPT'][/-r(\\S+)/, 1]); "
                "$stdout.puts lib, format('%o', File.stat(lib).mode & 0777), "
                "defined?(GemLeakHelper) ? 'helper' : 'no helper'");
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    gl_assert_no_line(r.out, "planted code ran");
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    ck_assert_msg(g_strv_length(lines) >= 3, "stdout: %s", r.out);
    ck_assert_msg(!g_str_has_prefix(lines[0], keep), "the helper is in the kept directory: %s",
                  lines[0]);
    ck_assert_str_eq(lines[1], "700");
    ck_assert_str_eq(lines[2], "helper");
    ck_assert(!g_file_test(lines[0], G_FILE_TEST_EXISTS));
    ck_assert(gl_input_dir_has_inputs(keep));
    result_clear(&r);
    gl_remove_tree(base);
}
END_TEST

/* A % in the run directory (a Jenkins workspace for feature/foo is
 * feature%2Ffoo) is written %% for Valgrind, which expands %p and %q. */
START_TEST(test_percent_in_the_run_directory)
{
    g_autofree char *base = gl_test_tmpdir();
    g_autofree char *keep = g_build_filename(base, "feature%2Ffoo", "xml", NULL);
    Result kept = { 0 };
    gemleak_run(&kept, NULL, NULL, ARGS("--keep-xml", keep), "require 'leaky'; Leaky.clean");
    ck_assert_msg(kept.status == 0, "status %d\n%s", kept.status, kept.err);
    ck_assert(gl_input_dir_has_inputs(keep));
    result_clear(&kept);

    g_autofree char *tmp = g_build_filename(base, "ws%p%q%%", NULL);
    ck_assert_int_eq(g_mkdir(tmp, 0700), 0);
    Result private = { 0 };
    gemleak_run(&private, NULL, tmp, NO_ARGS, "require 'leaky'; Leaky.clean");
    ck_assert_msg(private.status == 0, "status %d\n%s", private.status, private.err);
    gl_assert_line(private.err, "^gemleak: 1 process checked( \\([^)]*\\))?, ");
    result_clear(&private);
    gl_remove_tree(base);
}
END_TEST

/* Starts gemleak run ARGS -- ruby -e CODE, with TMPDIR at @tmp (nullable). */
static void live_start(Live *live, const char *code, const char *const *args, const char *tmp)
{
    g_autofree char *leaky = g_strdup_printf("-I%s/leaky", ext_dir);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    g_ptr_array_add(argv, (gpointer) "run");
    for (const char *const *arg = args; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *tail[] = { "--", "ruby", "--disable-gems", leaky, "-e", code, NULL };
    for (const char *const *arg = tail; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = g_get_environ();
    if (tmp != NULL)
        env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    live_spawn(live, (const char *const *) argv->pdata, env);
}

/* Reads standard error for up to @seconds, line by line, until a line
 * matches @pattern (NULL: until the end).
 * Returns: TRUE if it did (or the end came). */
static gboolean live_read_err(Live *live, const char *pattern, int seconds)
{
    gint64 deadline = g_get_monotonic_time() + (gint64) seconds * G_USEC_PER_SEC;
    for (;;) {
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;
        struct pollfd pfd = { .fd = live->err_fd, .events = POLLIN };
        if (left <= 0 || poll(&pfd, 1, (int) left) <= 0)
            return FALSE;
        char buffer[4096];
        ssize_t n = read(live->err_fd, buffer, sizeof buffer);
        if (n <= 0)
            return pattern == NULL;
        for (ssize_t i = 0; i < n; i++) {
            if (buffer[i] != '\n') {
                g_string_append_c(live->err_line, buffer[i]);
                continue;
            }
            g_string_append_printf(live->err_text, "%s\n", live->err_line->str);
            gboolean match = pattern != NULL &&
                             g_regex_match_simple(pattern, live->err_line->str, 0, 0);
            g_string_truncate(live->err_line, 0);
            if (match) {
                /* the rest of the buffer is kept for the next read */
                g_string_append_len(live->err_line, buffer + i + 1, n - i - 1);
                char *newline;
                while ((newline = strchr(live->err_line->str, '\n')) != NULL) {
                    g_string_append_len(live->err_text, live->err_line->str,
                                        newline - live->err_line->str + 1);
                    g_string_erase(live->err_line, 0, newline - live->err_line->str + 1);
                }
                return TRUE;
            }
        }
    }
}

/* A suite that double-forks leaves its grandchildren to gemleak (the
 * child subreaper): they are reaped as they end, not piled up as zombies
 * until the command is done. */
START_TEST(test_orphans_reaped_as_they_end)
{
    const char *code =
        "require 'leaky'; gemleak = Process.ppid; "
        "3.times { pid = fork { fork { exit!(0) }; exit!(0) }; Process.wait(pid) }; "
        "kids = lambda { Dir['/proc/[0-9]*/stat'].filter_map { |f| "
        "  s = (File.read(f) rescue next); m = s.match(/\\) (\\S) (\\d+) /); "
        "  m && m[2].to_i == gemleak && !f.start_with?(\"/proc/#{Process.pid}/\") ? m[1] : nil } }; "
        "deadline = Time.now + 240; "
        "sleep 0.2 while Time.now < deadline && kids.call.any? { |state| state != 'Z' }; "
        "sleep 1; $stdout.puts \"zombies: #{kids.call.count('Z')}\"";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    ck_assert_str_eq(r.out, "zombies: 0\n");
    gl_assert_line(r.err, "^gemleak: 7 processes checked( \\([^)]*\\))?, ");
    result_clear(&r);
}
END_TEST

/* SIGTERM while gemleak waits for the processes the command left running:
 * the wait ends at once, they are passed the signal, and the report covers
 * what is complete. */
START_TEST(test_interrupted_while_waiting_for_orphans)
{
    Live live;
    live_start(&live, "require 'leaky'; pid = fork { sleep 600 }; $stdout.puts pid; $stdout.flush",
               NULL, NULL);
    g_autofree char *line = live_read_out(&live);
    pid_t orphan = (pid_t) g_ascii_strtoll(line, NULL, 10);
    ck_assert_int_gt(orphan, 0);
    ck_assert_msg(live_read_err(&live, "^gemleak: the command is done; waiting up to 60 s for "
                                       "the processes it left running$", 120),
                  "gemleak did not say it waits:\n%s", live.err_text->str);
    kill(live.pid, SIGTERM);
    int status = 0;
    gboolean ended = live_wait(&live, 20, &status);
    gboolean orphan_gone = gone_within(orphan, 10);
    live_read_err(&live, NULL, 5);
    if (!orphan_gone)  /* a pid that is gone may be another process's by now */
        kill(orphan, SIGKILL);
    ck_assert_msg(ended, "gemleak went on waiting 20 s after SIGTERM:\n%s", live.err_text->str);
    ck_assert_msg(orphan_gone, "the orphan %d still runs", (int) orphan);
    gl_assert_line(live.err_text->str, "^gemleak: interrupted by Terminated: ");
    gl_assert_line(live.err_text->str, "^gemleak: target: .*/leaky\\.so$");
    ck_assert_msg(status != 128 + SIGTERM, "gemleak died of the signal:\n%s", live.err_text->str);
    g_autofree char *dir = kept_dir(live.err_text->str);
    gl_remove_tree(dir);
    live_clear(&live);
}
END_TEST

/* gemleak SIGKILLed (a CI job's hard timeout): its Valgrind does not run on. */
START_TEST(test_valgrind_dies_with_gemleak)
{
    /* gemleak killed leaves its directories: in one of the test's own */
    g_autofree char *tmp = gl_test_tmpdir();
    Live live;
    live_start(&live, "$stdout.puts Process.pid; $stdout.flush; sleep 600", ARGS("-O", "leaky"),
               tmp);
    g_autofree char *line = live_read_out(&live);
    pid_t child = (pid_t) g_ascii_strtoll(line, NULL, 10);
    ck_assert_int_gt(child, 0);
    kill(live.pid, SIGKILL);
    int status = 0;
    ck_assert(live_wait(&live, 10, &status));
    ck_assert_int_eq(status, 128 + SIGKILL);
    gboolean gone = gone_within(child, 10);
    if (!gone)  /* a pid that is gone may be another process's by now */
        kill(child, SIGKILL);
    ck_assert_msg(gone, "Valgrind (pid %d) ran on after gemleak was killed", (int) child);
    live_clear(&live);
    gl_remove_tree(tmp);
}
END_TEST

/* A process the suite kills on purpose (here a grandchild re-parented to
 * gemleak, which reaps it): its XML ends early, and gemleak says why
 * rather than call the run's XML incomplete. The suite passed: exit 0. */
START_TEST(test_process_killed_by_the_suite)
{
    const char *code =
        "require 'leaky'; r, w = IO.pipe; "
        "mid = fork { fork { r.close; w.puts Process.pid; w.close; sleep 600 }; exit!(0) }; "
        "w.close; Process.wait(mid); pid = r.gets.to_i; sleep 1; "
        "Process.kill(:KILL, pid); Leaky.clean; $stdout.puts pid";
    Result r = { 0 };
    gemleak_run(&r, NULL, NULL, NO_ARGS, code);
    ck_assert_msg(r.status == 0, "status %d\n%s", r.status, r.err);
    g_autofree char *pid = g_strstrip(g_strdup(r.out));
    g_autofree char *note = g_strdup_printf("^gemleak: note: .*/%s\\.xml: process %s was killed by "
                                            "SIGKILL; its XML ends early$", pid, pid);
    gl_assert_line(r.err, note);
    gl_assert_no_line(r.err, "truncated at");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    result_discard(&r);
}
END_TEST

/* run's exit status alone says which of the gate and the command failed,
 * or that gemleak could not read all of Valgrind's XML; the text report's
 * last line says it in words. Valgrind is a stand-in here that writes the
 * XML it is given (FAKE_XML) and runs the command. */
START_TEST(test_run_exit_statuses)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *valgrind = fake_valgrind(dir, FAKE_LOADED
                                              "[ -n \"$FAKE_XML\" ] && cat \"$FAKE_XML\" > \"$xml\"\n"
                                              "exec \"$@\"");
    g_autofree char *leak = gl_test_fixture("xml/leak.xml");
    g_autofree char *leak_abs = g_canonicalize_filename(leak, NULL);
    g_autofree char *text = gl_test_read(leak, NULL);
    g_autofree char *cut = g_build_filename(dir, "cut.xml", NULL);
    gl_test_write(cut, text, strstr(text, "<error>") - text + 20);
    const struct {
        const char *xml;
        const char *command;
        int status;
        const char *line;
    } cases[] = {
        { NULL, "true", 0, "^gemleak: exit status 0: nothing fails the gate, and the command passed$" },
        { leak_abs, "true", 1, "^gemleak: exit status 1: findings fail the gate; the command passed$" },
        { cut, "true", 3, "^gemleak: exit status 3: Valgrind's XML could not all be read \\(see "
                          "gemleak's messages\\); nothing fails the gate, and the command passed$" },
        { cut, "exit 1", 3, "^gemleak: exit status 3: Valgrind's XML could not all be read \\(see "
                            "gemleak's messages\\); nothing fails the gate, and the command failed "
                            "\\(exit status 1\\)$" },
        { NULL, "exit 7", 4, "^gemleak: exit status 4: the command failed \\(exit status 7\\); "
                             "nothing fails the gate$" },
        { NULL, "kill -9 $$", 4, "^gemleak: exit status 4: the command failed \\(killed by "
                                 "SIGKILL\\); nothing fails the gate$" },
        { leak_abs, "exit 1", 5, "^gemleak: exit status 5: findings fail the gate, and the command "
                                 "failed \\(exit status 1\\)$" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *argv[] = { gemleak_binary, "run", "--valgrind", valgrind, "-O", "leaky", "--",
                               "sh", "-c", cases[i].command, NULL };
        g_auto(GStrv) env = cases[i].xml != NULL
            ? g_environ_setenv(g_get_environ(), "FAKE_XML", cases[i].xml, TRUE)
            : g_environ_unsetenv(g_get_environ(), "FAKE_XML");
        Result r = { 0 };
        run_command(&r, NULL, env, argv);
        ck_assert_msg(r.status == cases[i].status, "case %u: status %d\n%s", i, r.status, r.err);
        gl_assert_line(r.err, cases[i].line);
        /* what could not all be read never passes */
        if (cases[i].xml == cut) {
            gl_assert_line(r.err, "^gemleak: INCOMPLETE: no findings in what could be read; 1 input "
                                  "could not all be read \\(see gemleak's messages\\)$");
            gl_assert_no_line(r.err, "^gemleak: pass");
        }
        result_discard(&r);
    }
    gl_remove_tree(dir);
}
END_TEST

void integration_processes(TCase *tcase)
{
    tcase_add_test(tcase, test_leak_in_forked_child_reported_once);
    tcase_add_test(tcase, test_forked_child_counts_inherited_leaks_once);
    tcase_add_test(tcase, test_two_extensions_and_object_choice);
    tcase_add_test(tcase, test_object_never_loaded_is_an_error);
    tcase_add_test(tcase, test_suppressions_dir_silences_a_leak);
    tcase_add_test(tcase, test_gen_suppressions_block_silences_every_call_site);
    tcase_add_test(tcase, test_failing_ruby_keeps_its_status);
    tcase_add_test(tcase, test_leak_then_raise_exits_5_with_the_finding);
    tcase_add_test(tcase, test_twice_in_a_row);
    tcase_add_test(tcase, test_command_killed_by_a_signal);
    tcase_add_test(tcase, test_valgrinds_own_fatal_error);
    tcase_add_test(tcase, test_orphaned_child_is_waited_for);
    tcase_add_test(tcase, test_suppressions_by_ruby_version);
    tcase_add_test(tcase, test_more_jobs_than_gemleak_runs);
    tcase_add_test(tcase, test_keep_xml_runs_nothing_it_holds);
    tcase_add_test(tcase, test_percent_in_the_run_directory);
    tcase_add_test(tcase, test_orphans_reaped_as_they_end);
    tcase_add_test(tcase, test_interrupted_while_waiting_for_orphans);
    tcase_add_test(tcase, test_valgrind_dies_with_gemleak);
    tcase_add_test(tcase, test_process_killed_by_the_suite);
    tcase_add_test(tcase, test_run_exit_statuses);
}
