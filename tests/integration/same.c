/* Integration tests, issue 27 (item 3): one finding, whatever the engine.
 * Four gems' shapes, each built during its test from fixtures/ext/ with
 * Ruby 3.4.5 (GEMLEAK_TEST_RUBY34, else the one scripts/build-ruby
 * builds), as a user builds them: a rake-compiler build (out of tree, in
 * tmp/<platform>/<ext>/<ruby>/, copied to lib/), a lost structure, a Rust
 * extension with its standard library linked in, a C++ one leaking through
 * a template. Under Valgrind, LeakSanitizer and AddressSanitizer (the C
 * and C++ extensions built with it, as gemleak's Rake task builds them)
 * each gives the same location, source line, functions, fingerprints and
 * bytes in the text, JSON, SARIF (valid URIs), GitHub (file and line) and
 * baseline reports. And a leak on an error path that GCC at -O2 moves to
 * a part of its own (issue 37): the same fingerprint and baseline as its
 * -O0 build. Without that Ruby, or a compiler a shape needs, a test is
 * skipped and says why. */
#include <string.h>

#include "harness.h"

#define DEFAULT_RUBY34 "/root/.cache/gemleak/ruby-3.4.5/bin/ruby"

/* AddressSanitizer's flags, as gemleak's Rake task and its message give them. */
#define ASAN_CFLAGS "-fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer"
#define ASAN_LDFLAGS "-fsanitize=address"

static char *ruby34;      /* nullable: no Ruby >= 3.3 here */
static char *ruby34_bin;
static char *version;     /* its RUBY_VERSION: rake-compiler's build directory */
static char *work;
static char *why_skipped;

static void setup_same(void)
{
    const char *given = g_getenv("GEMLEAK_TEST_RUBY34");
    const char *ruby = given != NULL && *given != '\0' ? given : DEFAULT_RUBY34;
    const char *argv[] = { ruby, "-e", "print RUBY_VERSION if RUBY_VERSION >= '3.3'", NULL };
    Result r = { 0 };
    if (g_file_test(ruby, G_FILE_TEST_IS_EXECUTABLE))
        run_command(&r, NULL, NULL, argv);
    if (r.status != 0 || r.out == NULL || *r.out == '\0') {
        why_skipped = g_strdup_printf("no Ruby 3.3 or newer (GEMLEAK_TEST_RUBY34, else %s; "
                                      "scripts/build-ruby builds one)", DEFAULT_RUBY34);
        result_clear(&r);
        return;
    }
    version = g_strdup(r.out);
    result_clear(&r);
    ruby34 = g_strdup(ruby);
    ruby34_bin = g_path_get_dirname(ruby);
    work = g_dir_make_tmp("gemleak-same-XXXXXX", NULL);
}

static void teardown_same(void)
{
    if (work != NULL)
        gl_remove_tree(work);
    g_clear_pointer(&work, g_free);
    g_clear_pointer(&ruby34, g_free);
    g_clear_pointer(&ruby34_bin, g_free);
    g_clear_pointer(&version, g_free);
    g_clear_pointer(&why_skipped, g_free);
}

/* Returns: (transfer full): the environment with Ruby 3.4's bin/ first on
 * PATH and TMPDIR in the work directory. */
static char **environment(void)
{
    g_autofree char *path = g_strconcat(ruby34_bin, ":", g_getenv("PATH"), NULL);
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    char **env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    return g_environ_setenv(env, "TMPDIR", tmp, TRUE);
}

/* Runs @script under sh in @cwd; the test fails if it does. */
static void sh(const char *cwd, const char *script)
{
    g_auto(GStrv) env = environment();
    const char *argv[] = { "sh", "-c", script, NULL };
    Result r = { 0 };
    run_command(&r, cwd, env, argv);
    ck_assert_msg(r.status == 0, "%s: status %d:\n%s%s", script, r.status, r.out, r.err);
    result_clear(&r);
}

/* Returns: (transfer full): a copy of fixtures/ext/@name at @to. */
static char *copy_fixture(const char *name, const char *to)
{
    g_autofree char *from = gl_test_fixture("ext");
    char *path = g_build_filename(work, to, NULL);
    g_autofree char *parent = g_path_get_dirname(path);
    g_mkdir_with_parents(parent, 0700);
    g_autofree char *script = g_strdup_printf("cp -r '%s/%s' '%s'", from, name, path);
    sh(NULL, script);
    return path;
}

/* Returns: the number of the first line of fixtures/ext/@file holding @needle. */
static guint line_of(const char *file, const char *needle)
{
    g_autofree char *relative = g_build_filename("ext", file, NULL);
    g_autofree char *path = gl_test_fixture(relative);
    g_autofree char *text = gl_test_read(path, NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++)
        if (strstr(lines[i], needle) != NULL)
            return i + 1;
    ck_abort_msg("%s: no line holds %s", file, needle);
    return 0;
}

/* ---- what a run's reports say -------------------------------------------------- */

/* What the reports of one run say of its findings, as text to compare. */
typedef struct {
    char *label;
    char *text;      /* each finding's heading, source line and target frames, and
                      * the blocks its structure owned */
    char *json;      /* each finding: kind, bytes, location, fingerprints, own functions */
    char *sarif;     /* each result: rule, message, location, fingerprints */
    char *github;    /* each annotation: its file and line */
    char *baseline;  /* the baseline file, byte for byte */
} Outcome;

static void outcome_clear(Outcome *outcome)
{
    g_free(outcome->label);
    g_free(outcome->text);
    g_free(outcome->json);
    g_free(outcome->sarif);
    g_free(outcome->github);
    g_free(outcome->baseline);
}

/* Returns: (transfer full): the lines of @text matching @pattern, joined. */
static char *lines_matching(const char *text, const char *pattern)
{
    g_autoptr(GRegex) regex = g_regex_new(pattern, 0, 0, NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GString *kept = g_string_new(NULL);
    for (guint i = 0; lines[i] != NULL; i++)
        if (g_regex_match(regex, lines[i], 0, NULL))
            g_string_append_printf(kept, "%s\n", lines[i]);
    return g_string_free(kept, FALSE);
}

static JsonNode *parse_file(const char *path)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, path, &error), "%s: %s", path,
                  error != NULL ? error->message : "");
    return json_node_copy(json_parser_get_root(parser));
}

static const char *string_or(JsonObject *object, const char *member, const char *otherwise)
{
    if (object == NULL || !json_object_has_member(object, member) ||
        json_object_get_null_member(object, member))
        return otherwise;
    return json_object_get_string_member(object, member);
}

static char *json_summary(const char *path)
{
    g_autoptr(JsonNode) root = parse_file(path);
    JsonArray *findings = json_object_get_array_member(json_node_get_object(root), "findings");
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        JsonObject *at = json_object_get_null_member(finding, "location")
                             ? NULL : json_object_get_object_member(finding, "location");
        g_string_append_printf(out, "%s %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT " direct) in %"
                               G_GINT64_FORMAT " at %s (%s:%" G_GINT64_FORMAT ") fingerprint %s "
                               "structure %s:",
                               string_or(finding, "kind", "?"),
                               json_object_get_int_member(finding, "bytes"),
                               json_object_get_int_member(finding, "direct_bytes"),
                               json_object_get_int_member(finding, "blocks"),
                               string_or(at, "fn", "?"), string_or(at, "file", "?"),
                               at != NULL && !json_object_get_null_member(at, "line")
                                   ? json_object_get_int_member(at, "line") : 0,
                               string_or(finding, "fingerprint", "?"),
                               string_or(finding, "structure_fingerprint", "-"));
        JsonArray *frames = json_object_get_array_member(finding, "frames");
        for (guint j = 0; j < json_array_get_length(frames); j++) {
            JsonObject *frame = json_array_get_object_element(frames, j);
            if (json_object_get_boolean_member(frame, "in_target") &&
                !json_object_get_boolean_member(frame, "linked"))
                g_string_append_printf(out, " %s", string_or(frame, "fn", "?"));
        }
        g_string_append_c(out, '\n');
    }
    return g_string_free(out, FALSE);
}

/* Asserts that every artifact location of @node is a valid URI reference:
 * relative to a uriBaseId (no scheme, not absolute, not above it), or an
 * absolute file URI; "file://../ext/x.c" is neither. */
static void assert_uris_valid(JsonNode *node)
{
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *array = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(array); i++)
            assert_uris_valid(json_array_get_element(array, i));
        return;
    }
    if (!JSON_NODE_HOLDS_OBJECT(node))
        return;
    JsonObject *object = json_node_get_object(node);
    if (json_object_has_member(object, "artifactLocation")) {
        JsonObject *artifact = json_object_get_object_member(object, "artifactLocation");
        const char *uri = string_or(artifact, "uri", "");
        if (json_object_has_member(artifact, "uriBaseId"))
            ck_assert_msg(strstr(uri, "://") == NULL && uri[0] != '/' &&
                          !g_str_has_prefix(uri, "../") && *uri != '\0', "not a URI: %s", uri);
        else
            ck_assert_msg(g_str_has_prefix(uri, "file:///"), "not a URI: %s", uri);
    }
    g_autoptr(GList) members = json_object_get_values(object);
    for (GList *member = members; member != NULL; member = member->next)
        assert_uris_valid(member->data);
}

static char *sarif_summary(const char *path)
{
    g_autoptr(JsonNode) root = parse_file(path);
    assert_uris_valid(root);
    JsonArray *runs = json_object_get_array_member(json_node_get_object(root), "runs");
    JsonArray *results = json_object_get_array_member(json_array_get_object_element(runs, 0),
                                                      "results");
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(results); i++) {
        JsonObject *result = json_array_get_object_element(results, i);
        JsonObject *message = json_object_get_object_member(result, "message");
        JsonArray *locations = json_object_get_array_member(result, "locations");
        JsonObject *physical = json_object_get_object_member(
            json_array_get_object_element(locations, 0), "physicalLocation");
        JsonObject *artifact = json_object_get_object_member(physical, "artifactLocation");
        JsonObject *region = json_object_has_member(physical, "region")
                                 ? json_object_get_object_member(physical, "region") : NULL;
        g_string_append_printf(out, "%s: %s at %s/%s:%" G_GINT64_FORMAT,
                               string_or(result, "ruleId", "?"), string_or(message, "text", "?"),
                               string_or(artifact, "uriBaseId", "-"), string_or(artifact, "uri", "?"),
                               region != NULL ? json_object_get_int_member(region, "startLine") : 0);
        JsonObject *prints = json_object_get_object_member(result, "partialFingerprints");
        g_autoptr(GList) names = json_object_get_members(prints);
        for (GList *name = names; name != NULL; name = name->next)
            g_string_append_printf(out, " %s=%s", (const char *) name->data,
                                   string_or(prints, name->data, "?"));
        g_string_append_c(out, '\n');
    }
    return g_string_free(out, FALSE);
}

/* Returns: (transfer full): each annotation of @path as "::KIND file=F,line=N". */
static char *github_summary(const char *path)
{
    g_autofree char *text = gl_test_read(path, NULL);
    g_autoptr(GRegex) regex = g_regex_new("^(::[a-z]+ file=[^,]*,line=[0-9]+),", G_REGEX_MULTILINE,
                                          0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    GString *out = g_string_new(NULL);
    g_regex_match(regex, text, 0, &match);
    while (g_match_info_matches(match)) {
        g_autofree char *annotation = g_match_info_fetch(match, 1);
        g_string_append_printf(out, "%s\n", annotation);
        g_match_info_next(match, NULL);
    }
    return g_string_free(out, FALSE);
}

/* gemleak run --engine @engine [@option], every report asked for,
 * --write-baseline, in @cwd: what its reports say, as @outcome. */
static void run_under(Outcome *outcome, const char *engine, const char *option, const char *label,
                      gboolean not_built_for_it, const char *cwd, const char *const *command)
{
    g_autofree char *json = g_strdup_printf("%s/%s.json", work, label);
    g_autofree char *sarif = g_strdup_printf("%s/%s.sarif", work, label);
    g_autofree char *github = g_strdup_printf("%s/%s.github", work, label);
    g_autofree char *baseline = g_strdup_printf("%s/%s.baseline.json", work, label);
    g_autofree char *json_format = g_strconcat("json:", json, NULL);
    g_autofree char *sarif_format = g_strconcat("sarif:", sarif, NULL);
    g_autofree char *github_format = g_strconcat("github:", github, NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    const char *head[] = { gemleak_binary, "run", "--engine", engine, "--format", "text",
                           "--format", json_format, "--format", sarif_format, "--format",
                           github_format, "--write-baseline", baseline, NULL };
    for (const char *const *arg = head; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    if (option != NULL)
        g_ptr_array_add(argv, (gpointer) option);
    g_ptr_array_add(argv, (gpointer) "--");
    for (const char *const *arg = command; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = environment();
    Result r = { 0 };
    run_command(&r, cwd, env, (const char *const *) argv->pdata);
    /* a baseline written passes the run, unless the engine could not see
     * into the extension */
    ck_assert_msg(r.status == (not_built_for_it ? 3 : 0), "%s: status %d:\n%s", label, r.status,
                  r.err);
    if (not_built_for_it)
        gl_assert_line(r.err, "^gemleak: .*\\.so was not built with AddressSanitizer \\(no __asan_ "
                              "symbol in it\\): its invalid reads and writes, and its reads of "
                              "freed memory, were not checked in the process that loaded it$");
    outcome->label = g_strdup(label);
    outcome->text = lines_matching(r.err, "^([0-9].* lost|[ ]+[0-9]+ [|] .*| [*~].*|(it )?owned .*)$");
    outcome->json = json_summary(json);
    outcome->sarif = sarif_summary(sarif);
    outcome->github = github_summary(github);
    outcome->baseline = gl_test_read(baseline, NULL);
    result_discard(&r);
}

static void assert_same(const Outcome *a, const Outcome *b)
{
    ck_assert_msg(strcmp(a->text, b->text) == 0, "text: %s:\n%s\n%s:\n%s", a->label, a->text,
                  b->label, b->text);
    ck_assert_msg(strcmp(a->json, b->json) == 0, "JSON: %s:\n%s\n%s:\n%s", a->label, a->json,
                  b->label, b->json);
    ck_assert_msg(strcmp(a->sarif, b->sarif) == 0, "SARIF: %s:\n%s\n%s:\n%s", a->label, a->sarif,
                  b->label, b->sarif);
    ck_assert_msg(strcmp(a->github, b->github) == 0, "GitHub: %s:\n%s\n%s:\n%s", a->label,
                  a->github, b->label, b->github);
    ck_assert_msg(strcmp(a->baseline, b->baseline) == 0, "baseline: %s:\n%s\n%s:\n%s", a->label,
                  a->baseline, b->label, b->baseline);
}

/* One way to run a shape: an engine, and the command that loads the build
 * made for it. */
typedef struct {
    const char *engine;
    const char *label;
    const char *const *command;
    const char *option;  /* nullable: one more option of gemleak run */
    /* an extension the engine cannot see into (not built for it): the run
     * is INCOMPLETE (exit status 3), and names it; else it passes */
    gboolean not_built_for_it;
} Way;

/* Runs each of the @n ways in @cwd and asserts they all say the same;
 * @first (cleared by the caller) gets what the first said. */
static void same_under_every_way(Outcome *first, const char *cwd, const Way *ways, guint n)
{
    run_under(first, ways[0].engine, ways[0].option, ways[0].label, ways[0].not_built_for_it, cwd,
              ways[0].command);
    for (guint i = 1; i < n; i++) {
        Outcome other = { 0 };
        run_under(&other, ways[i].engine, ways[i].option, ways[i].label, ways[i].not_built_for_it,
                  cwd, ways[i].command);
        assert_same(first, &other);
        outcome_clear(&other);
    }
}

/* Asserts what every report says of the one finding of @outcome: placed
 * at @file:@line (relative to the project), in @function, @functions its
 * own frames, @bytes (a regex) lost. */
static void assert_placed(const Outcome *outcome, const char *file, guint line,
                          const char *function, const char *functions, const char *bytes)
{
    g_autofree char *source = g_strdup_printf("at %s \\(%s:%u\\)", function, file, line);
    gl_assert_line(outcome->json, source);
    g_autofree char *own = g_strdup_printf("structure [^:]+: %s$", functions);
    gl_assert_line(outcome->json, own);
    g_autofree char *heading = g_strdup_printf("^%s bytes in 1 block is definitely lost$", bytes);
    gl_assert_line(outcome->text, heading);
    g_autofree char *quoted = g_strdup_printf("^ +%u \\| ", line);
    gl_assert_line(outcome->text, quoted);
    g_autofree char *annotation = g_strdup_printf("^::[a-z]+ file=%s,line=%u$", file, line);
    gl_assert_line(outcome->github, annotation);
    g_autofree char *result = g_strdup_printf(" at PROJECTROOT/%s:%u ", file, line);
    ck_assert_msg(strstr(outcome->sarif, result) != NULL, "%s", outcome->sarif);
    g_autofree char *entry = g_strdup_printf("\"location\" : \"%s:%u\"", file, line);
    ck_assert_msg(strstr(outcome->baseline, entry) != NULL, "%s", outcome->baseline);
}

/* ---- the four shapes -------------------------------------------------------------- */

/* (a) rake-compiler's build: ext/outoftree/outoftree.c compiled in
 * tmp/x86_64-linux/outoftree/<ruby>/ from ../../../../ext/outoftree/, the
 * extension copied to lib/outoftree/; AddressSanitizer's build in
 * tmp/gemleak-asan/..., loaded from there. The sanitizers' path
 * "../../../../ext/outoftree/outoftree.c" is the project's
 * ext/outoftree/outoftree.c, with its source line, whether the extension
 * is loaded from lib/ or from tmp/. */
START_TEST(test_rake_compiler_build_reads_the_same)
{
    if (!ready_or_skip(ruby34, "a rake-compiler build under every engine", why_skipped))
        return;
    g_autofree char *project = g_build_filename(work, "outoftree-gem", NULL);
    g_autofree char *ext = copy_fixture("outoftree", "outoftree-gem/ext/outoftree");
    g_autofree char *build = g_strdup_printf("tmp/x86_64-linux/outoftree/%s", version);
    g_autofree char *asan = g_strdup_printf("tmp/gemleak-asan/x86_64-linux/outoftree/%s", version);
    g_autofree char *script = g_strdup_printf(
        "mkdir -p %s lib/outoftree && (cd %s && ruby -I. ../../../../ext/outoftree/extconf.rb "
        ">/dev/null && make >/dev/null) && cp %s/outoftree.so lib/outoftree/ && "
        "mkdir -p %s && cd %s && ruby -I. ../../../../../ext/outoftree/extconf.rb "
        "--with-cflags=\"$(ruby -rrbconfig -e 'print RbConfig::CONFIG[%%q(CFLAGS)]') "
        ASAN_CFLAGS "\" --with-ldflags=\"$(ruby -rrbconfig -e 'print "
        "RbConfig::CONFIG[%%q(LDFLAGS)]') " ASAN_LDFLAGS "\" >/dev/null && make >/dev/null",
        build, build, build, asan, asan);
    sh(project, script);
    g_autofree char *from_tmp = g_strdup_printf("%s/outoftree.so", build);
    g_autofree char *asan_from_tmp = g_strdup_printf("%s/outoftree.so", asan);
    const char *from_lib[] = { ruby34, "--disable-gems", "-Ilib", "-e",
                               "require 'outoftree/outoftree'; OutOfTree.leak", NULL };
    const char *tmp_plain[] = { ruby34, "--disable-gems", "-e",
                                "require File.expand_path(ARGV[0]); OutOfTree.leak", from_tmp,
                                NULL };
    const char *tmp_asan[] = { ruby34, "--disable-gems", "-e",
                               "require File.expand_path(ARGV[0]); OutOfTree.leak", asan_from_tmp,
                               NULL };
    const Way ways[] = {
        { "valgrind", "outoftree-valgrind", from_lib, NULL, FALSE },
        { "lsan", "outoftree-lsan", from_lib, NULL, FALSE },
        { "lsan", "outoftree-lsan-tmp", tmp_plain, NULL, FALSE },
        { "asan", "outoftree-asan-tmp", tmp_asan, NULL, FALSE },
    };
    Outcome outcome = { 0 };
    same_under_every_way(&outcome, project, ways, G_N_ELEMENTS(ways));
    guint line = line_of("outoftree/outoftree.c", "/* the leak */");
    assert_placed(&outcome, "ext/outoftree/outoftree.c", line, "copy_name",
                  "copy_name outoftree_leak", "12");
    outcome_clear(&outcome);
}
END_TEST

/* (b) A struct and the buffer it holds, both lost: Valgrind's "256 (64
 * direct, 192 indirect) bytes" under every engine, where LeakSanitizer
 * reports the buffer apart. Each build compiles the same source, out of
 * tree (build/, and asan/ with AddressSanitizer). */
START_TEST(test_lost_structure_reads_the_same)
{
    if (!ready_or_skip(ruby34, "a lost structure under every engine", why_skipped))
        return;
    g_autofree char *project = copy_fixture("structure", "structure");
    sh(project, "mkdir build asan && (cd build && ruby ../extconf.rb >/dev/null && make "
                ">/dev/null) && cd asan && ruby ../extconf.rb --with-cflags=\"$(ruby -rrbconfig "
                "-e 'print RbConfig::CONFIG[%q(CFLAGS)]') " ASAN_CFLAGS "\" --with-ldflags=\"$(ruby "
                "-rrbconfig -e 'print RbConfig::CONFIG[%q(LDFLAGS)]') " ASAN_LDFLAGS "\" "
                ">/dev/null && make >/dev/null");
    const char *plain[] = { ruby34, "--disable-gems", "-Ibuild", "-e",
                            "require 'structure'; Structure.lose", NULL };
    const char *instrumented[] = { ruby34, "--disable-gems", "-Iasan", "-e",
                                   "require 'structure'; Structure.lose", NULL };
    const Way ways[] = {
        { "valgrind", "structure-valgrind", plain, NULL, FALSE },
        { "lsan", "structure-lsan", plain, NULL, FALSE },
        { "asan", "structure-asan", instrumented, NULL, FALSE },
    };
    Outcome outcome = { 0 };
    same_under_every_way(&outcome, project, ways, G_N_ELEMENTS(ways));
    guint line = line_of("structure/structure.c", "/* the struct */");
    assert_placed(&outcome, "structure.c", line, "lexer_new", "lexer_new structure_lose",
                  "256 \\(64 direct, 192 indirect\\)");
    gl_assert_line(outcome.json, "^Leak_DefinitelyLost 256 \\(64 direct\\) in 1 ");
    gl_assert_line(outcome.json, "structure [0-9a-f]{16}:");
    outcome_clear(&outcome);

    /* Indirect leaks asked for: the buffer is a finding too, under every
     * engine, listed with the struct that held it, and the baselines are
     * still byte for byte the same. */
    const Way with_indirect[] = {
        { "valgrind", "structure-indirect-valgrind", plain, "--leak-kinds=definite,indirect", FALSE },
        { "lsan", "structure-indirect-lsan", plain, "--leak-kinds=definite,indirect", FALSE },
        { "asan", "structure-indirect-asan", instrumented, "--leak-kinds=definite,indirect", FALSE },
    };
    Outcome indirect = { 0 };
    same_under_every_way(&indirect, project, with_indirect, G_N_ELEMENTS(with_indirect));
    guint buffer = line_of("structure/structure.c", "/* the buffer */");
    g_autofree char *buffer_line = g_strdup_printf("^Leak_IndirectlyLost 192 \\(192 direct\\) in 1 "
                                                   "at lexer_buffer \\(structure.c:%u\\)", buffer);
    gl_assert_line(indirect.json, buffer_line);
    /* listed in the entry of the struct that held it (issue 40) */
    gl_assert_line(indirect.text, "^owned 1: 192 bytes in 1 block is indirectly lost: lexer_buffer ");
    gl_assert_no_line(indirect.text, "^192 bytes in 1 block is indirectly lost$");
    outcome_clear(&indirect);
}
END_TEST

/* (c) A Rust cdylib, its standard library linked in, built with rustc
 * (debug information; Rust's legacy mangling, then v0): located at its
 * own src/lib.rs, six frames below the allocation in alloc:: (whose
 * sources no checkout has), which stay in the stack marked " ~"; its
 * names demangled as Valgrind demangles them, with no hash; a Box holding
 * a Vec counted whole. Both manglings give the same report. Not built
 * with AddressSanitizer (rustc's is unstable): its leaks are seen all the
 * same, and the run is INCOMPLETE, its memory errors unchecked. */
START_TEST(test_rust_extension_reads_the_same)
{
    if (!ready_or_skip(ruby34, "a Rust extension under every engine", why_skipped))
        return;
    g_autofree char *rustc = g_find_program_in_path("rustc");
    if (rustc == NULL)
        gl_test_skip("a Rust extension under every engine: no rustc on PATH");
    g_autofree char *project = copy_fixture("rustleak", "rustleak");
    sh(project, "rustc --edition 2021 --crate-type cdylib -C debuginfo=2 -C opt-level=0 "
                "--crate-name rustleak src/lib.rs -o rustleak.so && mkdir v0 && "
                "rustc --edition 2021 --crate-type cdylib -C debuginfo=2 -C opt-level=0 "
                "-C symbol-mangling-version=v0 --crate-name rustleak src/lib.rs -o v0/rustleak.so");
    const char *legacy[] = { ruby34, "--disable-gems", "-e",
                             "require File.expand_path(ARGV[0]); RustLeak.leak", "rustleak.so",
                             NULL };
    const char *v0[] = { ruby34, "--disable-gems", "-e",
                         "require File.expand_path(ARGV[0]); RustLeak.leak", "v0/rustleak.so",
                         NULL };
    const Way ways[] = {
        { "valgrind", "rust-valgrind", legacy, NULL, FALSE },
        { "lsan", "rust-lsan", legacy, NULL, FALSE },
        { "asan", "rust-asan", legacy, NULL, TRUE },
    };
    const Way v0_ways[] = {
        { "valgrind", "rust-v0-valgrind", v0, NULL, FALSE },
        { "lsan", "rust-v0-lsan", v0, NULL, FALSE },
    };
    Outcome outcome = { 0 }, v0_outcome = { 0 };
    same_under_every_way(&outcome, project, ways, G_N_ELEMENTS(ways));
    same_under_every_way(&v0_outcome, project, v0_ways, G_N_ELEMENTS(v0_ways));
    /* The standard library's generic functions instantiated in the crate
     * take its mangling, and v0 names an inherent method by its type
     * (<alloc::alloc::Global>::alloc_impl_runtime): those " ~" frames
     * differ; the finding, its functions and fingerprints do not. */
    g_free(v0_outcome.text);
    v0_outcome.text = g_strdup(outcome.text);
    assert_same(&outcome, &v0_outcome);
    outcome_clear(&v0_outcome);
    guint line = line_of("rustleak/src/lib.rs", "// the leak");
    assert_placed(&outcome, "src/lib.rs", line, "rustleak::make_buffer",
                  "rustleak::make_buffer rustleak::lose_buffer rustleak::rustleak_leak",
                  "120 \\(24 direct, 96 indirect\\)");
    /* the standard library's frames, in the stack, not the project's */
    gl_assert_line(outcome.text, "^ ~alloc::alloc::Global::alloc_impl_runtime \\(alloc\\.rs:[0-9]+\\)$");
    gl_assert_line(outcome.text, "^ ~new<rustleak::Buffer> \\(boxed\\.rs:[0-9]+\\)$");
    gl_assert_no_line(outcome.text, "::h[0-9a-f]{16}|_ZN|_R[A-Z]|\\$LT\\$");
    outcome_clear(&outcome);
}
END_TEST

/* (d) A C++ extension leaking through new inside a template: its own
 * header's Pool<Widget>::make(), through std::make_unique (a template of
 * /usr/include/c++, marked " ~"); the functions named with their
 * parameters, as Valgrind's symbol table names them; the widget and its
 * string's buffer counted whole. */
START_TEST(test_cpp_template_reads_the_same)
{
    if (!ready_or_skip(ruby34, "a C++ extension under every engine", why_skipped))
        return;
    g_autofree char *cxx = g_find_program_in_path("c++");
    if (cxx == NULL)
        gl_test_skip("a C++ extension under every engine: no c++ on PATH");
    g_autofree char *project = copy_fixture("cppleak", "cppleak");
    sh(project, "mkdir build asan && (cd build && ruby ../extconf.rb >/dev/null && make "
                ">/dev/null) && cd asan && ruby ../extconf.rb --with-cxxflags=\"$(ruby -rrbconfig -e 'print "
                "RbConfig::CONFIG[%q(CXXFLAGS)]') -O0 -g " ASAN_CFLAGS "\" --with-ldflags=\"$(ruby "
                "-rrbconfig -e 'print RbConfig::CONFIG[%q(LDFLAGS)]') " ASAN_LDFLAGS "\" "
                ">/dev/null && make >/dev/null");
    const char *plain[] = { ruby34, "--disable-gems", "-Ibuild", "-e",
                            "require 'cppleak'; CppLeak.leak", NULL };
    const char *instrumented[] = { ruby34, "--disable-gems", "-Iasan", "-e",
                                   "require 'cppleak'; CppLeak.leak", NULL };
    const Way ways[] = {
        { "valgrind", "cpp-valgrind", plain, NULL, FALSE },
        { "lsan", "cpp-lsan", plain, NULL, FALSE },
        { "asan", "cpp-asan", instrumented, NULL, FALSE },
    };
    Outcome outcome = { 0 };
    same_under_every_way(&outcome, project, ways, G_N_ELEMENTS(ways));
    guint line = line_of("cppleak/widget.hpp", "// the leak");
    assert_placed(&outcome, "widget.hpp", line, "Pool<Widget>::make\\(\\)",
                  "Pool<Widget>::make\\(\\) cppleak_leak\\(unsigned long\\)",
                  "[0-9]+ \\(64 direct, [0-9]+ indirect\\)");
    gl_assert_line(outcome.text, "^ ~std::__detail::_MakeUniq<Widget>::__single_object "
                                 "std::make_unique<Widget>\\(\\) \\(unique_ptr\\.h:[0-9]+\\)$");
    outcome_clear(&outcome);
}
END_TEST

/* Returns: (transfer full): the partial fingerprints of @sarif_summary's
 * results, a line each. */
static char *sarif_fingerprints(const char *summary)
{
    g_autoptr(GRegex) regex = g_regex_new("gemleakFingerprint/v[0-9]+=[0-9a-f]{16}", 0, 0, NULL);
    g_autoptr(GMatchInfo) match = NULL;
    GString *out = g_string_new(NULL);
    g_regex_match(regex, summary, 0, &match);
    while (g_match_info_matches(match)) {
        g_autofree char *print = g_match_info_fetch(match, 0);
        g_string_append_printf(out, "%s\n", print);
        g_match_info_next(match, NULL);
    }
    return g_string_free(out, FALSE);
}

/* (e) Issue 37 (item 6): a leak on an error path, built -O0 and -O2. GCC
 * at -O2 moves the path to coldpath_parse.cold, and the frames say so;
 * the finding's fingerprint, its baseline and SARIF's partial
 * fingerprint are those of the -O0 build's coldpath_parse, under
 * Valgrind and LeakSanitizer. */
START_TEST(test_optimisation_levels_read_the_same)
{
    if (!ready_or_skip(ruby34, "a split function under every optimisation level", why_skipped))
        return;
    g_autofree char *project = copy_fixture("coldpath", "coldpath");
    sh(project, "mkdir o0 o2 && (cd o0 && COLDPATH_CFLAGS='-O0 -g' ruby ../extconf.rb >/dev/null "
                "&& make >/dev/null) && cd o2 && COLDPATH_CFLAGS='-O2 -g' ruby ../extconf.rb "
                ">/dev/null && make >/dev/null && nm coldpath.so | grep -q ' coldpath_parse.cold$'");
    const char *o0[] = { ruby34, "--disable-gems", "-Io0", "-e",
                         "require 'coldpath'; begin; ColdPath.parse('x'); rescue ArgumentError; end",
                         NULL };
    const char *o2[] = { ruby34, "--disable-gems", "-Io2", "-e",
                         "require 'coldpath'; begin; ColdPath.parse('x'); rescue ArgumentError; end",
                         NULL };
    Outcome whole = { 0 }, split = { 0 }, split_lsan = { 0 };
    run_under(&whole, "valgrind", NULL, "coldpath-O0", FALSE, project, o0);
    run_under(&split, "valgrind", NULL, "coldpath-O2", FALSE, project, o2);
    run_under(&split_lsan, "lsan", NULL, "coldpath-O2-lsan", FALSE, project, o2);
    guint line = line_of("coldpath/coldpath.c", "/* the leak */");
    g_autofree char *at_whole = g_strdup_printf(" at coldpath_parse \\(coldpath\\.c:%u\\) ", line);
    g_autofree char *at_split = g_strdup_printf(" at coldpath_parse\\.cold \\(coldpath\\.c:%u\\) ",
                                                line);
    gl_assert_line(whole.json, at_whole);
    gl_assert_line(split.json, at_split);
    gl_assert_line(split_lsan.json, at_split);
    const Outcome *outcomes[] = { &split, &split_lsan };
    g_autofree char *prints = sarif_fingerprints(whole.sarif);
    ck_assert_msg(*prints != '\0', "no partial fingerprint:\n%s", whole.sarif);
    for (guint i = 0; i < G_N_ELEMENTS(outcomes); i++) {
        ck_assert_msg(strcmp(whole.baseline, outcomes[i]->baseline) == 0,
                      "baseline: %s:\n%s\n%s:\n%s", whole.label, whole.baseline,
                      outcomes[i]->label, outcomes[i]->baseline);
        g_autofree char *theirs = sarif_fingerprints(outcomes[i]->sarif);
        ck_assert_msg(strcmp(prints, theirs) == 0, "SARIF: %s:\n%s\n%s:\n%s", whole.label, prints,
                      outcomes[i]->label, theirs);
    }
    gl_assert_line(whole.baseline, "^ +\"coldpath_parse\"$");
    outcome_clear(&whole);
    outcome_clear(&split);
    outcome_clear(&split_lsan);
}
END_TEST

/* Runs gemleak with @args in @cwd (Ruby 3.4's environment); the test
 * fails unless it exits with @status. Returns: its standard error. */
static char *gemleak_in(const char *cwd, int status, const char *const *args)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    for (const char *const *arg = args; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = environment();
    Result r = { 0 };
    run_command(&r, cwd, env, (const char *const *) argv->pdata);
    ck_assert_msg(r.status == status, "gemleak %s: status %d, not %d:\n%s%s", args[0], r.status,
                  status, r.out, r.err);
    char *err = g_strconcat(r.out, r.err, NULL);
    result_clear(&r);
    return err;
}

/* (f) Issues 37 (item 7) and 40 (item 5): a kept run directory reads the
 * same anywhere and any time. A rake-compiler build's leak (its source
 * path relative to the build directory, placed by its compilation unit's
 * directory), run under LeakSanitizer and Valgrind with --keep-xml in CI,
 * then read with gemleak filter (1) after the extension was rebuilt from a
 * source whose leaking line was edited, and (2) from a copy on a
 * "machine" without the extension and without the checkout: the same
 * finding, at the project's own path, with the run's source line, and
 * the fingerprint of the run, which the baseline written in CI knows; a
 * note names each object that is not the one the run loaded. What the
 * run recorded is what its findings needed, no more; a directory without
 * it (an older gemleak's) still reads. */
START_TEST(test_kept_directory_reads_the_same_anywhere)
{
    if (!ready_or_skip(ruby34, "a kept run directory read elsewhere", why_skipped))
        return;
    g_autofree char *project = g_build_filename(work, "kept-gem", NULL);
    g_autofree char *ext = copy_fixture("outoftree", "kept-gem/ext/outoftree");
    g_autofree char *build = g_strdup_printf("tmp/x86_64-linux/outoftree/%s", version);
    g_autofree char *script = g_strdup_printf(
        "mkdir -p %s lib/outoftree && (cd %s && ruby -I. ../../../../ext/outoftree/extconf.rb "
        ">/dev/null && make >/dev/null) && cp %s/outoftree.so lib/outoftree/", build, build, build);
    sh(project, script);
    guint line = line_of("outoftree/outoftree.c", "/* the leak */");
    g_autofree char *quoted = g_strdup_printf("^ +%u \\| .*/\\* the leak \\*/$", line);
    g_autofree char *placed = g_strdup_printf(" at copy_name \\(ext/outoftree/outoftree\\.c:%u\\) ",
                                              line);
    const char *engines[] = { "lsan", "valgrind" };
    char *kept[G_N_ELEMENTS(engines)], *ran[G_N_ELEMENTS(engines)];
    char *baselines[G_N_ELEMENTS(engines)];
    for (guint e = 0; e < G_N_ELEMENTS(engines); e++) {
        kept[e] = g_strdup_printf("%s/kept-%s", work, engines[e]);
        baselines[e] = g_strdup_printf("%s/kept-%s.baseline.json", work, engines[e]);
        g_autofree char *json = g_strdup_printf("json:%s/kept-%s.json", work, engines[e]);
        g_autofree char *err = gemleak_in(project, 0, ARGS(
            "run", "--engine", engines[e], "--keep-xml", kept[e], "--format", "text",
            "--format", json, "--write-baseline", baselines[e], "--", ruby34, "--disable-gems",
            "-Ilib", "-e", "require 'outoftree/outoftree'; OutOfTree.leak"));
        gl_assert_line(err, quoted);
        ran[e] = json_summary(json + strlen("json:"));
        gl_assert_line(ran[e], placed);
        /* what the finding needed, not Ruby's thousands of skipped blocks */
        g_autofree char *record_path = g_build_filename(kept[e], "recorded.txt", NULL);
        gsize size = 0;
        g_autofree char *record = gl_test_read(record_path, &size);
        ck_assert_msg(record != NULL && strstr(record, "/* the leak */") != NULL,
                      "%s: no source line recorded:\n%s", engines[e], record);
        ck_assert_msg(size < 16 * 1024, "%s: %s holds %zu bytes", engines[e], record_path, size);
    }

    /* (1) the checkout moves on: a line added above (the code moves: another
     * build id), the leaking line edited, the extension rebuilt */
    sh(project, "sed -i -e '1i /* a line added above */' "
                "-e 's|/\\* the leak \\*/|/* the leak, since edited */|' "
                "ext/outoftree/outoftree.c");
    g_autofree char *rebuild = g_strdup_printf("cd %s && make >/dev/null && cp outoftree.so "
                                               "../../../../lib/outoftree/", build);
    sh(project, rebuild);
    for (guint e = 0; e < G_N_ELEMENTS(engines); e++) {
        g_autofree char *json = g_strdup_printf("%s/rebuilt-%s.json", work, engines[e]);
        g_autofree char *format = g_strconcat("json:", json, NULL);
        g_autofree char *err = gemleak_in(project, 1, ARGS("filter", "--format", "text",
                                                           "--format", format, kept[e]));
        g_autofree char *read = json_summary(json);
        ck_assert_msg(strcmp(ran[e], read) == 0, "%s after a rebuild:\n%s\nthe run said:\n%s",
                      engines[e], read, ran[e]);
        gl_assert_line(err, quoted);
        if (strcmp(engines[e], "lsan") == 0)
            gl_assert_line(err, "^gemleak: note: .*/lib/outoftree/outoftree\\.so is not the "
                                "object the run loaded \\(its build id is another: rebuilt "
                                "since\\): its frames are read as the run recorded them$");
        else
            gl_assert_no_line(err, "is not the object the run loaded");
        g_autofree char *known = gemleak_in(project, 0, ARGS("filter", "--baseline",
                                                             baselines[e], kept[e]));
        gl_assert_line(known, ": 0 findings, 1 known to the baseline ");
    }

    /* (2) another machine: a copy of the directories, and neither the
     * extension nor the checkout */
    g_autofree char *elsewhere = g_build_filename(work, "elsewhere", NULL);
    g_autofree char *gone = g_strconcat(project, ".gone", NULL);
    g_autofree char *move = g_strdup_printf("mkdir -p '%s' && cp -r '%s' '%s' '%s' && mv '%s' "
                                            "'%s'", elsewhere, kept[0], kept[1], elsewhere,
                                            project, gone);
    sh(NULL, move);
    for (guint e = 0; e < G_N_ELEMENTS(engines); e++) {
        g_autofree char *copy = g_strdup_printf("%s/kept-%s", elsewhere, engines[e]);
        g_autofree char *json = g_strdup_printf("%s/copied-%s.json", work, engines[e]);
        g_autofree char *format = g_strconcat("json:", json, NULL);
        g_autofree char *err = gemleak_in(elsewhere, 1, ARGS("filter", "--format", "text",
                                                             "--format", format, copy));
        g_autofree char *read = json_summary(json);
        ck_assert_msg(strcmp(ran[e], read) == 0, "%s elsewhere:\n%s\nthe run said:\n%s",
                      engines[e], read, ran[e]);
        gl_assert_line(err, quoted);
        if (strcmp(engines[e], "lsan") == 0)
            gl_assert_line(err, "^gemleak: note: .*/lib/outoftree/outoftree\\.so is not the "
                                "object the run loaded \\(it is not here: another machine, or "
                                "removed\\): its frames are read as the run recorded them$");
        g_autofree char *known = gemleak_in(elsewhere, 0, ARGS("filter", "--baseline",
                                                               baselines[e], copy));
        gl_assert_line(known, ": 0 findings, 1 known to the baseline ");

        /* a directory an older gemleak kept, without the record: read as
         * before, from what is here */
        g_autofree char *record = g_build_filename(copy, "recorded.txt", NULL);
        ck_assert_int_eq(g_unlink(record), 0);
        g_autofree char *old = gemleak_in(elsewhere, 1, ARGS("filter", copy));
        gl_assert_no_line(old, "is not the object the run loaded");
        gl_assert_line(old, " is definitely lost$");
    }
    g_autofree char *back = g_strdup_printf("mv '%s' '%s'", gone, project);
    sh(NULL, back);
    for (guint e = 0; e < G_N_ELEMENTS(engines); e++) {
        g_free(kept[e]);
        g_free(ran[e]);
        g_free(baselines[e]);
    }
}
END_TEST

void integration_same(TCase *tcase)
{
    tcase_add_unchecked_fixture(tcase, setup_same, teardown_same);
    tcase_add_test(tcase, test_rake_compiler_build_reads_the_same);
    tcase_add_test(tcase, test_lost_structure_reads_the_same);
    tcase_add_test(tcase, test_rust_extension_reads_the_same);
    tcase_add_test(tcase, test_cpp_template_reads_the_same);
    tcase_add_test(tcase, test_optimisation_levels_read_the_same);
    tcase_add_test(tcase, test_kept_directory_reads_the_same_anywhere);
}
