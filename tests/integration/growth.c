/* Integration tests, --growth (issue 39): the "Must be found" and
 * "Must stay silent" lists, on the fixture extensions fixtures/ext/growth
 * (C, with a bundled library), growthpp (C++) and growthrs (Rust), driven
 * by minitest, test-unit and RSpec, under Valgrind (Debian's Ruby 3.1),
 * --engine lsan (Ruby 3.4.5, plain and built with frame pointers) and
 * --engine asan (Ruby 3.4.5, the extensions built with
 * GL_PROTO_ASAN_CFLAGS). One gemleak run per engine and framework, every
 * case asserted from its one JSON report and its text, then again from
 * `gemleak filter` of the directory the run kept; exit 1 (growth found).
 * The minitest run of each engine also holds the C++ and Rust cases (not
 * the Rust one under AddressSanitizer: rustc's is unstable, and a run
 * with an extension not built for it is INCOMPLETE), and is followed by a
 * run of its held and silent tests alone: exit 0.
 *
 * fixtures/ext/growth/harness.rb proves each case behaves as designed
 * without gemleak (what a live-memory measure sees per repetition): the
 * first test runs it on every Ruby, and under AddressSanitizer.
 *
 * Until --growth is merged (gemleak run --help does not list it), every
 * test that runs gemleak is skipped and says so. Without a Ruby, rustc or the
 * runtime a test needs, it is skipped and says why. */
#include <string.h>

#include "harness.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/run/engine.h"

#define DEFAULT_RUBY34 "/root/.cache/gemleak/ruby-3.4.5/bin/ruby"
#define DEFAULT_RUBY34_FP "/root/.cache/gemleak/ruby-3.4.5-fp/bin/ruby"

/* What the unchecked fixture set up, once for the case. */
static char *not_merged;  /* nullable: why every test that runs gemleak is skipped */
static char *work;        /* the project: ext/, test/, spec/, the builds */
static char *project;
static char *build_error; /* nullable: a fixture that did not build (a failure, not a skip) */
static char *ruby34;      /* nullable: no Ruby 3.4 here */
static char *ruby34_fp;   /* nullable: no frame-pointer build of it */
static char *no_rust;     /* nullable: why the Rust fixture was not built */
static char *no_asan;     /* nullable: why the AddressSanitizer builds were not made */
static char *asan_runtime; /* nullable: the AddressSanitizer runtime gemleak preloads */
static GPtrArray *rspec34;  /* nullable: Debian's RSpec for another Ruby: -I DIR..., its exe */

/* Runs @script under sh in the project; on failure records why in
 * @why (when it is still NULL) and returns FALSE. */
static gboolean setup_sh(const char *script, char **why)
{
    const char *argv[] = { "sh", "-c", script, NULL };
    Result r = { 0 };
    run_command(&r, project, NULL, argv);
    gboolean ok = r.status == 0;
    if (!ok && *why == NULL)
        *why = g_strdup_printf("%s: status %d: %s%s", script, r.status, r.out, r.err);
    result_clear(&r);
    return ok;
}

/* Returns: TRUE when `gemleak run --help` lists --growth. */
static gboolean growth_merged(void)
{
    const char *argv[] = { gemleak_binary, "run", "--help", NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    g_autofree char *both = g_strconcat(r.out, r.err, NULL);
    gboolean listed = g_regex_match_simple("^ *--growth", both, G_REGEX_MULTILINE, 0);
    result_clear(&r);
    return listed;
}

/* Returns: (transfer full) (nullable): @ruby if it runs and is 3.3 or newer. */
static char *recent_ruby(const char *variable, const char *otherwise)
{
    const char *given = g_getenv(variable);
    const char *ruby = given != NULL && *given != '\0' ? given : otherwise;
    if (!g_file_test(ruby, G_FILE_TEST_IS_EXECUTABLE))
        return NULL;
    const char *argv[] = { ruby, "-e", "print RUBY_VERSION >= '3.3' ? 'yes' : 'no'", NULL };
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    gboolean yes = r.status == 0 && strcmp(r.out, "yes") == 0;
    result_clear(&r);
    return yes ? g_strdup(ruby) : NULL;
}

/* Builds ext/@name with @ruby into build/@dir, @flags (nullable) added to
 * its C and C++ flags and -fsanitize=address to its LDFLAGS when given. */
static gboolean build_with(const char *ruby, const char *name, const char *dir, const char *flags,
                           char **why)
{
    g_autofree char *configure =
        flags == NULL
            ? g_strdup_printf("'%s' ../../ext/%s/extconf.rb", ruby, name)
            : g_strdup_printf("'%s' ../../ext/%s/extconf.rb --with-cflags=\"$('%s' -rrbconfig -e "
                              "'print RbConfig::CONFIG[%%q(CFLAGS)]') %s\" --with-cxxflags=\"$('%s' "
                              "-rrbconfig -e 'print RbConfig::CONFIG[%%q(CXXFLAGS)]') -O0 -g %s\" "
                              "--with-ldflags=\"$('%s' -rrbconfig -e 'print "
                              "RbConfig::CONFIG[%%q(LDFLAGS)]') " GL_PROTO_ASAN_LDFLAGS "\"",
                              ruby, name, ruby, flags, ruby, flags, ruby);
    g_autofree char *script = g_strdup_printf("mkdir -p build/%s && cd build/%s && %s >/dev/null "
                                              "&& make >/dev/null 2>&1", dir, dir, configure);
    return setup_sh(script, why);
}

/* Debian's RSpec, a pure Ruby library, for a Ruby that has none (3.4.5's
 * bundled gems hold minitest and test-unit, not RSpec): its load path as
 * -I options, then its executable, as /usr/bin/ruby's RubyGems finds them. */
static GPtrArray *debian_rspec(void)
{
    const char *argv[] = { "/usr/bin/ruby", "-e",
                           "%w[rspec/core rspec/expectations rspec/mocks diff/lcs].each { |f| require f }; "
                           "Gem.loaded_specs.each_value { |s| s.full_require_paths.each { |p| puts \"-I#{p}\" } }; "
                           "puts Gem.bin_path('rspec-core', 'rspec')", NULL };
    if (!g_file_test(argv[0], G_FILE_TEST_IS_EXECUTABLE))
        return NULL;
    Result r = { 0 };
    run_command(&r, NULL, NULL, argv);
    GPtrArray *words = NULL;
    if (r.status == 0) {
        words = g_ptr_array_new_with_free_func(g_free);
        g_auto(GStrv) lines = g_strsplit(g_strstrip(r.out), "\n", -1);
        for (guint i = 0; lines[i] != NULL; i++)
            g_ptr_array_add(words, g_strdup(lines[i]));
    }
    result_clear(&r);
    return words;
}

static void setup_growth(void)
{
    if (!growth_merged())
        not_merged = g_strdup("gemleak run --help does not list --growth: issue 39 is not "
                              "merged into this gemleak yet");
    work = g_dir_make_tmp("gemleak-growth-XXXXXX", NULL);
    project = g_build_filename(work, "project", NULL);
    g_mkdir_with_parents(project, 0700);
    /* One project, as a gem lays itself out: its extensions under ext/,
     * every suite's files under test/ and spec/. */
    g_autofree char *ext = gl_test_fixture("ext");
    g_autofree char *copy = g_strdup_printf(
        "mkdir -p ext test spec && cp -r '%s/growth' '%s/growthpp' '%s/growthrs' ext/ && "
        "cp ext/growth/test/*.rb ext/growthpp/test/*.rb ext/growthrs/test/*.rb test/ && "
        "cp ext/growth/spec/*.rb spec/", ext, ext, ext);
    if (!setup_sh(copy, &build_error))
        return;
    /* Valgrind's Ruby: Debian's, the ruby on PATH (as the other fixtures) */
    if (!build_with("ruby", "growth", "growth31", NULL, &build_error) ||
        !build_with("ruby", "growthpp", "growthpp31", NULL, &build_error))
        return;
    ruby34 = recent_ruby("GEMLEAK_TEST_RUBY34", DEFAULT_RUBY34);
    ruby34_fp = recent_ruby("GEMLEAK_TEST_RUBY34_FP", DEFAULT_RUBY34_FP);
    if (ruby34 != NULL) {
        /* the frame-pointer build is the same Ruby 3.4.5: it loads these */
        if (!build_with(ruby34, "growth", "growth34", NULL, &build_error) ||
            !build_with(ruby34, "growthpp", "growthpp34", NULL, &build_error))
            return;
        asan_runtime = gl_engine_find("asan")->version(NULL, NULL);
        if (asan_runtime == NULL)
            no_asan = g_strdup("no AddressSanitizer runtime (Debian: libasan8)");
        else if (!build_with(ruby34, "growth", "growth34-asan", GL_PROTO_ASAN_CFLAGS, &build_error) ||
                 !build_with(ruby34, "growthpp", "growthpp34-asan", GL_PROTO_ASAN_CFLAGS,
                             &build_error))
            return;
    }
    /* Rust's extension calls Ruby's C API by hand: one build loads in every Ruby. */
    g_autofree char *rustc = g_find_program_in_path("rustc");
    if (rustc == NULL)
        no_rust = g_strdup("no rustc on PATH (the Rust fixture, fixtures/ext/growthrs)");
    else if (!setup_sh("mkdir -p build/growthrs && rustc --edition 2021 --crate-type cdylib "
                       "-C debuginfo=2 -C opt-level=0 --crate-name growthrs "
                       "ext/growthrs/src/lib.rs -o build/growthrs/growthrs.so", &build_error))
        return;
    rspec34 = debian_rspec();
}

static void teardown_growth(void)
{
    if (work != NULL)
        gl_remove_tree(work);
    g_clear_pointer(&work, g_free);
    g_clear_pointer(&project, g_free);
    g_clear_pointer(&not_merged, g_free);
    g_clear_pointer(&build_error, g_free);
    g_clear_pointer(&ruby34, g_free);
    g_clear_pointer(&ruby34_fp, g_free);
    g_clear_pointer(&no_rust, g_free);
    g_clear_pointer(&no_asan, g_free);
    g_clear_pointer(&asan_runtime, g_free);
    g_clear_pointer(&rspec34, g_ptr_array_unref);
}

/* ---- the engines and the frameworks ------------------------------------------------- */

typedef enum { MINITEST, TEST_UNIT, RSPEC } Framework;

/* One way to run the suites: an engine, the Ruby, its builds. */
typedef struct {
    const char *label;
    const char *engine;    /* for --engine */
    const char *ruby;      /* "ruby": the one on PATH (Valgrind's: Debian's 3.1) */
    const char *growth;    /* build/ directory of each extension */
    const char *growthpp;
    gboolean rust;         /* the Rust extension is loaded (not under AddressSanitizer) */
} Way;

/* How a framework names a test of the fixture, and where it defines it. */
static char *test_name(Framework framework, const char *kind, const char *name)
{
    switch (framework) {
    case MINITEST:
        return g_strdup_printf("GrowthTest#test_%s_%s", kind, name);
    case TEST_UNIT:
        return g_strdup_printf("GrowthUnitTest#test_%s_%s", kind, name);
    case RSPEC:
    default:
        return g_strdup_printf("Growth %s %s", kind, name);
    }
}

static const char *test_file(Framework framework)
{
    return framework == MINITEST ? "test/growth_test.rb"
           : framework == TEST_UNIT ? "test/growth_tu_test.rb" : "spec/growth_spec.rb";
}

/* Returns: the line of the fixture's @file (relative to fixtures/ext/growth/ or, for the
 * C++ and Rust tests, to fixtures/ext/) holding @needle. */
static guint line_in(const char *file, const char *needle)
{
    g_autofree char *relative = g_build_filename("ext", file, NULL);
    g_autofree char *path = gl_test_fixture(relative);
    g_autofree char *text = gl_test_read(path, NULL);
    const char *at = text != NULL ? strstr(text, needle) : NULL;
    ck_assert_msg(at != NULL, "%s holds no %s", file, needle);
    guint line = 1;
    for (const char *c = text; c < at; c++)
        line += *c == '\n';
    return line;
}

/* Returns: (transfer full): a regex for "NAME @ FILE:LINE" of the test
 * @kind @name of @framework, the location as the report gives it (relative
 * to the project, or whole). */
static char *test_pattern(Framework framework, const char *kind, const char *name)
{
    g_autofree char *test = test_name(framework, kind, name);
    g_autofree char *definition = framework == RSPEC
                                      ? g_strdup_printf("it \"%s %s\"", kind, name)
                                      : g_strdup_printf("def test_%s_%s", kind, name);
    g_autofree char *fixture_file = g_build_filename("growth", test_file(framework), NULL);
    guint line = line_in(fixture_file, definition);
    g_autofree char *quoted_test = g_regex_escape_string(test, -1);
    g_autofree char *quoted_file = g_regex_escape_string(test_file(framework), -1);
    return g_strdup_printf("%s @ (\\S*/)?%s:%u", quoted_test, quoted_file, line);
}

/* Returns: (transfer full): the command that runs @framework's suite the
 * @way, NULL-terminated, its strings freed with it. @only (nullable): a
 * minitest -n pattern. */
static GPtrArray *suite_command(const Way *way, Framework framework, const char *only)
{
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *growth = g_strdup_printf("-Ibuild/%s", way->growth);
    if (framework == RSPEC && strcmp(way->ruby, "ruby") == 0) {
        g_ptr_array_add(argv, g_strdup("rspec"));
    } else {
        g_ptr_array_add(argv, g_strdup(way->ruby));
        if (framework == RSPEC)
            for (guint i = 0; i < rspec34->len; i++)
                g_ptr_array_add(argv, g_strdup(g_ptr_array_index(rspec34, i)));
    }
    switch (framework) {
    case MINITEST:
        g_ptr_array_add(argv, g_strdup(growth));
        g_ptr_array_add(argv, g_strdup("-Itest"));
        if (only != NULL) {
            g_ptr_array_add(argv, g_strdup("test/growth_test.rb"));
            g_ptr_array_add(argv, g_strdup("-n"));
            g_ptr_array_add(argv, g_strdup(only));
            break;
        }
        g_ptr_array_add(argv, g_strdup_printf("-Ibuild/%s", way->growthpp));
        if (way->rust)
            g_ptr_array_add(argv, g_strdup("-Ibuild/growthrs"));
        g_ptr_array_add(argv, g_strdup("-e"));
        g_ptr_array_add(argv, g_strdup("ARGV.each { |f| require File.expand_path(f) }"));
        g_ptr_array_add(argv, g_strdup("test/growth_test.rb"));
        g_ptr_array_add(argv, g_strdup("test/growthpp_test.rb"));
        if (way->rust)
            g_ptr_array_add(argv, g_strdup("test/growthrs_test.rb"));
        break;
    case TEST_UNIT:
        g_ptr_array_add(argv, g_strdup(growth));
        g_ptr_array_add(argv, g_strdup("test/growth_tu_test.rb"));
        break;
    case RSPEC:
        /* the second word is the load path's: rspec -I DIR */
        g_ptr_array_add(argv, g_strdup("-I"));
        g_ptr_array_add(argv, g_strdup_printf("build/%s", way->growth));
        g_ptr_array_add(argv, g_strdup("spec/growth_spec.rb"));
        break;
    }
    g_ptr_array_add(argv, NULL);
    return argv;
}

/* The environment of a run: Ruby's bin/ first on PATH (rspec, rake), TMPDIR in the work
 * directory. */
static char **environment(const Way *way)
{
    char **env = g_get_environ();
    if (strcmp(way->ruby, "ruby") != 0) {
        g_autofree char *bin = g_path_get_dirname(way->ruby);
        g_autofree char *path = g_strconcat(bin, ":", g_getenv("PATH"), NULL);
        env = g_environ_setenv(env, "PATH", path, TRUE);
    }
    g_autofree char *tmp = g_build_filename(work, "tmp", NULL);
    g_mkdir_with_parents(tmp, 0700);
    return g_environ_setenv(env, "TMPDIR", tmp, TRUE);
}

/* gemleak @verb (run or filter) @options --format text --format json:JSON,
 * then @tail (the run's -- COMMAND, or filter's directory), in the project.
 * Returns: (transfer full): the JSON report's path; @result what gemleak said. */
static char *gemleak_json(Result *result, const Way *way, const char *label, const char *verb,
                          const char *const *options, const char *const *tail)
{
    char *json = g_strdup_printf("%s/%s-%s.json", work, label, verb);
    g_autofree char *json_format = g_strconcat("json:", json, NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer) gemleak_binary);
    g_ptr_array_add(argv, (gpointer) verb);
    for (const char *const *arg = options; arg != NULL && *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    const char *formats[] = { "--format", "text", "--format", json_format, NULL };
    for (const char *const *arg = formats; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    for (const char *const *arg = tail; *arg != NULL; arg++)
        g_ptr_array_add(argv, (gpointer) *arg);
    g_ptr_array_add(argv, NULL);
    g_auto(GStrv) env = environment(way);
    run_command(result, project, env, (const char *const *) argv->pdata);
    return json;
}

/* ---- what a report says ------------------------------------------------------------ */

static const char *string_or(JsonObject *object, const char *member, const char *otherwise)
{
    if (object == NULL || !json_object_has_member(object, member) ||
        json_object_get_null_member(object, member))
        return otherwise;
    return json_object_get_string_member(object, member);
}

static void append_numbers(GString *out, JsonObject *object, const char *member)
{
    JsonArray *numbers = object != NULL && json_object_has_member(object, member)
                             ? json_object_get_array_member(object, member) : NULL;
    for (guint i = 0; numbers != NULL && i < json_array_get_length(numbers); i++)
        g_string_append_printf(out, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "",
                               json_array_get_int_element(numbers, i));
}

/* Returns: (transfer full): each finding of the JSON report @path as a line
 * "KIND held=H lost=L reps=K test=NAME @ LOCATION[; ...] bytes=B,B,B
 * blocks=N,N,N fns= F F...", its "fns" the target's frames, innermost
 * first: what the assertions below match, and what a failure shows. */
static char *findings_summary(const char *path, const char *err)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, path, &error), "no JSON report %s (%s):\n%s",
                  path, error != NULL ? error->message : "", err);
    JsonObject *report = json_node_get_object(json_parser_get_root(parser));
    JsonArray *findings = json_object_get_array_member(report, "findings");
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        JsonObject *growth = json_object_has_member(finding, "growth") &&
                                     !json_object_get_null_member(finding, "growth")
                                 ? json_object_get_object_member(finding, "growth") : NULL;
        /* an uncertain finding (a Ruby without symbols: rule 2 cannot
         * tell Ruby's memory from the extension's) fails no gate */
        gboolean uncertain = json_object_has_member(finding, "certain") &&
                             !json_object_get_boolean_member(finding, "certain");
        g_string_append_printf(out, "%s%s held=%d lost=%d reps=%" G_GINT64_FORMAT " test=",
                               uncertain ? "uncertain:" : "", string_or(finding, "kind", "?"),
                               growth != NULL && json_object_get_boolean_member(growth, "held"),
                               growth != NULL && json_object_get_boolean_member(growth, "lost"),
                               growth != NULL ? json_object_get_int_member(growth, "repetitions")
                                              : 0);
        JsonArray *tests = json_object_has_member(finding, "tests")
                               ? json_object_get_array_member(finding, "tests") : NULL;
        for (guint j = 0; tests != NULL && j < json_array_get_length(tests); j++) {
            JsonObject *test = json_array_get_object_element(tests, j);
            g_string_append_printf(out, "%s%s @ %s", j > 0 ? "; " : "", string_or(test, "name", "?"),
                                   string_or(test, "location", "?"));
        }
        g_string_append(out, " bytes=");
        append_numbers(out, growth, "bytes");
        g_string_append(out, " blocks=");
        append_numbers(out, growth, "blocks");
        g_string_append(out, " fns=");
        JsonArray *frames = json_object_get_array_member(finding, "frames");
        for (guint j = 0; frames != NULL && j < json_array_get_length(frames); j++) {
            JsonObject *frame = json_array_get_object_element(frames, j);
            if (json_object_get_boolean_member(frame, "in_target"))
                g_string_append_printf(out, " %s", string_or(frame, "fn", "?"));
        }
        g_string_append_c(out, '\n');
    }
    return g_string_free(out, FALSE);
}

/* Asserts a line of @summary for the growing site of @framework's test
 * "grows @name", not held, nothing lost, over 3 repetitions, whose
 * series matches @series ("bytes=... blocks=...", a regex) and whose
 * target frames hold @function. */
static void assert_grows(const char *summary, Framework framework, const char *name,
                         const char *series, const char *function)
{
    g_autofree char *test = test_pattern(framework, "grows", name);
    g_autofree char *line = g_strdup_printf("^Growth held=0 lost=0 reps=3 test=%s %s fns=.* %s( |$)",
                                            test, series, function);
    gl_assert_line(summary, line);
}

/* A series of three repetitions, none negative, something added after the
 * first: what grows when the numbers are the runtime's (st's doubling). */
#define SOME_SERIES "bytes=[0-9]+,[0-9]+,[0-9]+ blocks=[0-9]+,[0-9]+,[0-9]+"

/* What every run of the whole suite of @framework reports, from its JSON
 * summary and its text: the C extension's four growing sites, each in
 * its test; the Data objects the test keeps, held; nothing of the silent
 * tests; no leak. @native: the minitest run's C++ (and @rust) cases. */
static void assert_every_case(const char *summary, const char *text, Framework framework,
                              gboolean native, gboolean rust)
{
    /* growth, never a leak: everything is freed at exit (on a Ruby
     * without symbols, Ruby's strings the test keeps are uncertain) */
    gl_assert_no_line(summary, "^(?!Growth |uncertain:).+");
    /* a cache that never forgets: its nodes and its keys */
    assert_grows(summary, framework, "cache", "bytes=800,800,800 blocks=50,50,50",
                 "cache_remember");
    assert_grows(summary, framework, "cache", "bytes=650,650,650 blocks=50,50,50",
                 "cache_remember");
    /* one block, realloc'd larger (Valgrind's first repetition: its
     * changed check leaves out a loss record all of whose blocks were
     * freed, the warm-up's block, reallocated on another call path) */
    assert_grows(summary, framework, "journal", "bytes=(800|1600),800,800 blocks=[01],0,0",
                 "journal_append");
    /* below the extension's st_insert, in Ruby's st.c, doubling */
    assert_grows(summary, framework, "table", SOME_SERIES, "growth_table");
    /* inside the bundled library, below its own functions */
    assert_grows(summary, framework, "ledger", "bytes=1600,1600,1600 blocks=50,50,50",
                 "ledger_entry ledger_record growth_ledger");
    /* the TypedData structs the test keeps: held, 50 objects a repetition */
    g_autofree char *held_test = test_pattern(framework, "held", "typed_data");
    g_autofree char *held = g_strdup_printf("^Growth held=1 lost=0 reps=3 test=%s "
                                            "bytes=2400,2400,2400 blocks=50,50,50 ", held_test);
    gl_assert_line(summary, held);
    g_autofree char *held_name = test_name(framework, "held", "typed_data");
    g_autofree char *not_held = g_strdup_printf("^Growth held=0 .*test=%s ", held_name);
    gl_assert_no_line(summary, not_held);
    /* the memo, the ring, the scratch buffer, Init's, the transient memory,
     * Ruby's strings, the deferred free, pure Ruby: nothing */
    g_autofree char *silent = test_name(framework, "silent", "");
    g_autofree char *quoted_silent = g_regex_escape_string(silent, -1);
    g_autofree char *any_silent = g_strdup_printf("^(?!uncertain:).*test=([^;]*; )?%s",
                                                  quoted_silent);
    gl_assert_no_line(summary, any_silent);
    gl_assert_no_line(summary, "test=([^;]*; )?GrowthPPTest#test_silent_bounded");
    if (native) {
        guint line = line_in("growthpp/test/growthpp_test.rb", "def test_grows_vector");
        g_autofree char *vector = g_strdup_printf(
            "^Growth held=0 lost=0 reps=3 test=GrowthPPTest#test_grows_vector @ "
            "(\\S*/)?test/growthpp_test\\.rb:%u " SOME_SERIES " fns=.* Shelf::add", line);
        gl_assert_line(summary, vector);
    }
    if (rust) {
        guint line = line_in("growthrs/test/growthrs_test.rb", "def test_grows_records");
        g_autofree char *records = g_strdup_printf(
            "^Growth held=0 lost=0 reps=3 test=GrowthRSTest#test_grows_records @ "
            "(\\S*/)?test/growthrs_test\\.rb:%u " SOME_SERIES " fns=.* growthrs::make_record",
            line);
        gl_assert_line(summary, records);
    }
    /* the report's words (gemleak(1), FORMATS) */
    gl_assert_line(text, "(^|^call path [0-9]+: )growth: \\+800 bytes in \\+50 blocks at each of 3 repetitions "
                         "\\(series \\+800, \\+800, \\+800\\), still reachable(:|$)");
    gl_assert_line(text, "(^|^call path [0-9]+: )growth: \\+1600 bytes in \\+50 blocks at each of 3 repetitions "
                         "\\(series \\+1600, \\+1600, \\+1600\\), still reachable(:|$)");
    gl_assert_line(text, "(^|^call path [0-9]+: )growth: \\+2400 bytes in \\+50 blocks at each of 3 repetitions "
                         "\\(series \\+2400, \\+2400, \\+2400\\), held by \\+50 Data objects a "
                         "repetition that the test keeps(:|$)");
}

/* Runs @framework's suite the @way with --growth (K = 3, the default)
 * and --keep-xml, asserts every case from its reports, then from
 * `gemleak filter` of the kept directory: exit 1 both. For minitest, then
 * its held and silent tests alone: exit 0, the held site still reported. */
static void growth_under(const Way *way, Framework framework)
{
    static const char *const framework_labels[] = { "minitest", "test-unit", "rspec" };
    g_autofree char *label = g_strdup_printf("%s-%s", way->label, framework_labels[framework]);
    g_autofree char *kept = g_strdup_printf("%s/%s-kept", work, label);
    g_autoptr(GPtrArray) command = suite_command(way, framework, NULL);
    g_autoptr(GPtrArray) tail = g_ptr_array_new();
    g_ptr_array_add(tail, (gpointer) "--");
    for (guint i = 0; g_ptr_array_index(command, i) != NULL; i++)
        g_ptr_array_add(tail, g_ptr_array_index(command, i));
    g_ptr_array_add(tail, NULL);
    Result r = { 0 };
    g_autofree char *json = gemleak_json(&r, way, label, "run",
                                         ARGS("--engine", way->engine, "--growth", "--keep-xml",
                                              kept),
                                         (const char *const *) tail->pdata);
    ck_assert_msg(r.status == 1, "%s: status %d, not 1 (growth found):\n%s%s", label, r.status,
                  r.out, r.err);
    g_autofree char *summary = findings_summary(json, r.err);
    gboolean native = framework == MINITEST;
    assert_every_case(summary, r.err, framework, native, native && way->rust);
    result_clear(&r);

    /* the kept directory, read again: the same verdicts, the same exit */
    Result filtered = { 0 };
    g_autofree char *filter_json = gemleak_json(&filtered, way, label, "filter", NULL,
                                                ARGS(kept));
    ck_assert_msg(filtered.status == 1, "%s: filter: status %d, not 1:\n%s%s", label,
                  filtered.status, filtered.out, filtered.err);
    g_autofree char *filter_summary = findings_summary(filter_json, filtered.err);
    /* gemleak filter writes its text report on standard output */
    assert_every_case(filter_summary, filtered.out, framework, native, native && way->rust);
    ck_assert_msg(strcmp(summary, filter_summary) == 0, "%s: the run said:\n%s\nfilter said:\n%s",
                  label, summary, filter_summary);
    result_clear(&filtered);
    gl_remove_tree(kept);
    if (framework != MINITEST)
        return;

    /* held and silent alone: nothing fails the gate (growth-held is not in
     * the default --fail-on) */
    g_autoptr(GPtrArray) quiet = suite_command(way, MINITEST, "/test_(held|silent)_/");
    g_autoptr(GPtrArray) quiet_tail = g_ptr_array_new();
    g_ptr_array_add(quiet_tail, (gpointer) "--");
    for (guint i = 0; g_ptr_array_index(quiet, i) != NULL; i++)
        g_ptr_array_add(quiet_tail, g_ptr_array_index(quiet, i));
    g_ptr_array_add(quiet_tail, NULL);
    g_autofree char *quiet_label = g_strconcat(label, "-held-silent", NULL);
    Result q = { 0 };
    g_autofree char *quiet_json = gemleak_json(&q, way, quiet_label, "run",
                                               ARGS("--engine", way->engine, "--growth"),
                                               (const char *const *) quiet_tail->pdata);
    ck_assert_msg(q.status == 0, "%s: status %d, not 0 (held and silent only):\n%s%s",
                  quiet_label, q.status, q.out, q.err);
    gl_assert_line(q.out, "^9 runs, 9 assertions, 0 failures, 0 errors");
    g_autofree char *quiet_summary = findings_summary(quiet_json, q.err);
    /* (an uncertain one on a Ruby without symbols fails no gate) */
    gl_assert_no_line(quiet_summary, "^(?!Growth held=1 |uncertain:).+");
    g_autofree char *held_test = test_pattern(MINITEST, "held", "typed_data");
    g_autofree char *held = g_strdup_printf("^Growth held=1 lost=0 reps=3 test=%s ", held_test);
    gl_assert_line(quiet_summary, held);
    result_clear(&q);
}

/* Skips the test, saying why, unless @way can run @framework here. */
static void ready(const Way *way, Framework framework, const char *test)
{
    if (not_merged != NULL)
        gl_test_skip("%s: %s", test, not_merged);
    ck_assert_msg(build_error == NULL, "%s: the growth fixtures did not build: %s", test,
                  build_error);
    if (way->ruby == NULL)
        gl_test_skip("%s: no Ruby 3.3 or newer (GEMLEAK_TEST_RUBY34, else %s; "
                     "GEMLEAK_TEST_RUBY34_FP, else %s; scripts/build-ruby builds them)", test,
                     DEFAULT_RUBY34, DEFAULT_RUBY34_FP);
    if (strcmp(way->engine, "asan") == 0 && no_asan != NULL)
        gl_test_skip("%s: %s", test, no_asan);
    if (framework == MINITEST && no_rust != NULL)
        gl_test_skip("%s: %s", test, no_rust);
    if (framework == RSPEC && strcmp(way->ruby, "ruby") != 0 && rspec34 == NULL)
        gl_test_skip("%s: no RSpec for Ruby 3.4 (Debian's ruby-rspec, read from /usr/bin/ruby)",
                     test);
}

/* ---- the tests: one per engine and framework --------------------------------------- */

static Way valgrind_way(void)
{
    return (Way) { "valgrind", "valgrind", "ruby", "growth31", "growthpp31", TRUE };
}

static Way lsan_way(void)
{
    return (Way) { "lsan", "lsan", ruby34, "growth34", "growthpp34", TRUE };
}

static Way lsan_fp_way(void)
{
    return (Way) { "lsan-fp", "lsan", ruby34_fp != NULL && ruby34 != NULL ? ruby34_fp : NULL,
                   "growth34", "growthpp34", TRUE };
}

/* The extensions built with AddressSanitizer; the Rust one cannot be. */
static Way asan_way(void)
{
    return (Way) { "asan", "asan", ruby34, "growth34-asan", "growthpp34-asan", FALSE };
}

#define GROWTH_TEST(function, way_function, framework, what)                                  \
    START_TEST(function)                                                                      \
    {                                                                                         \
        Way way = way_function();                                                             \
        ready(&way, framework, what);                                                         \
        growth_under(&way, framework);                                                        \
    }                                                                                         \
    END_TEST

GROWTH_TEST(test_growth_valgrind_minitest, valgrind_way, MINITEST,
            "growth under Valgrind, minitest, C, C++ and Rust")
GROWTH_TEST(test_growth_valgrind_test_unit, valgrind_way, TEST_UNIT, "growth under Valgrind, test-unit")
GROWTH_TEST(test_growth_valgrind_rspec, valgrind_way, RSPEC, "growth under Valgrind, RSpec")
GROWTH_TEST(test_growth_lsan_minitest, lsan_way, MINITEST,
            "growth under LeakSanitizer, minitest, C, C++ and Rust")
GROWTH_TEST(test_growth_lsan_test_unit, lsan_way, TEST_UNIT, "growth under LeakSanitizer, test-unit")
GROWTH_TEST(test_growth_lsan_rspec, lsan_way, RSPEC, "growth under LeakSanitizer, RSpec")
GROWTH_TEST(test_growth_lsan_fp_minitest, lsan_fp_way, MINITEST,
            "growth under LeakSanitizer on a frame-pointer Ruby, minitest, C, C++ and Rust")
GROWTH_TEST(test_growth_lsan_fp_test_unit, lsan_fp_way, TEST_UNIT,
            "growth under LeakSanitizer on a frame-pointer Ruby, test-unit")
GROWTH_TEST(test_growth_lsan_fp_rspec, lsan_fp_way, RSPEC,
            "growth under LeakSanitizer on a frame-pointer Ruby, RSpec")
GROWTH_TEST(test_growth_asan_minitest, asan_way, MINITEST,
            "growth under AddressSanitizer, minitest, C and C++")
GROWTH_TEST(test_growth_asan_test_unit, asan_way, TEST_UNIT, "growth under AddressSanitizer, test-unit")
GROWTH_TEST(test_growth_asan_rspec, asan_way, RSPEC, "growth under AddressSanitizer, RSpec")

/* Without --growth, the same suite is what it was: nothing grows, nothing
 * is lost, the run passes. */
START_TEST(test_growth_not_asked)
{
    Way way = lsan_way();
    ready(&way, TEST_UNIT, "the growth suite without --growth");
    g_autoptr(GPtrArray) command = suite_command(&way, TEST_UNIT, NULL);
    g_autoptr(GPtrArray) tail = g_ptr_array_new();
    g_ptr_array_add(tail, (gpointer) "--");
    for (guint i = 0; g_ptr_array_index(command, i) != NULL; i++)
        g_ptr_array_add(tail, g_ptr_array_index(command, i));
    g_ptr_array_add(tail, NULL);
    Result r = { 0 };
    g_autofree char *json = gemleak_json(&r, &way, "not-asked", "run",
                                         ARGS("--engine", way.engine, "--per-test"),
                                         (const char *const *) tail->pdata);
    ck_assert_msg(r.status == 0, "status %d:\n%s%s", r.status, r.out, r.err);
    g_autofree char *summary = findings_summary(json, r.err);
    ck_assert_msg(*summary == '\0', "findings without --growth:\n%s", summary);
    gl_assert_no_line(r.err, "^growth: ");
    gl_assert_line(r.err, "^gemleak: pass: no findings$");
    result_clear(&r);
}
END_TEST

/* Runs fixtures/ext/growth/harness.rb with @ruby, the extensions of
 * build/@growth and build/@growthpp and the Rust one on its load path,
 * @preload (nullable) preloaded: every case behaves as designed, as a
 * live-memory measure sees it, without gemleak. */
static void harness_with(const char *ruby, const char *growth, const char *growthpp,
                         const char *preload)
{
    g_autofree char *growth_dir = g_strdup_printf("-Ibuild/%s", growth);
    g_autofree char *growthpp_dir = g_strdup_printf("-Ibuild/%s", growthpp);
    const char *argv[] = { ruby, growth_dir, growthpp_dir, "-Ibuild/growthrs",
                           "ext/growth/harness.rb", NULL };
    g_auto(GStrv) env = g_get_environ();
    if (preload != NULL) {
        env = g_environ_setenv(env, "LD_PRELOAD", preload, TRUE);
        /* Ruby frees its own memory at exit: what is left is the fixtures' */
        env = g_environ_setenv(env, "RUBY_FREE_AT_EXIT", "1", TRUE);
        env = g_environ_setenv(env, "ASAN_OPTIONS", "detect_leaks=1", TRUE);
    }
    Result r = { 0 };
    run_command(&r, project, env, argv);
    ck_assert_msg(r.status == 0, "%s %s: status %d:\n%s%s", ruby, growth, r.status, r.out, r.err);
    gl_assert_line(r.out, "^harness: every case behaved as designed$");
    gl_assert_line(r.out, "^ok +cpp_vector +expected grows ");
    gl_assert_line(r.out, "^ok +rust_vec +expected grows ");
    gl_assert_no_line(r.err, "ERROR: (Address|Leak)Sanitizer");
    result_clear(&r);
}

/* The fixtures' own proof (fixtures/ext/growth/harness.rb): each case's
 * live memory over 3 repetitions after a warm-up, a collection before each
 * measure, grows or stays as the lists say, on every Ruby the
 * engines run, and under AddressSanitizer with no error and nothing lost
 * at exit. Needs no --growth: what the tests above find rests on it. */
START_TEST(test_growth_fixtures_behave_as_designed)
{
    ck_assert_msg(build_error == NULL, "the growth fixtures did not build: %s", build_error);
    if (no_rust != NULL)
        gl_test_skip("the growth fixtures' harness: %s", no_rust);
    harness_with("ruby", "growth31", "growthpp31", NULL);
    if (ruby34 == NULL)
        gl_test_skip("the growth fixtures' harness on Ruby 3.4: no Ruby 3.3 or newer "
                     "(GEMLEAK_TEST_RUBY34, else %s)", DEFAULT_RUBY34);
    harness_with(ruby34, "growth34", "growthpp34", NULL);
    if (ruby34_fp != NULL)
        harness_with(ruby34_fp, "growth34", "growthpp34", NULL);
    if (asan_runtime != NULL)
        harness_with(ruby34, "growth34-asan", "growthpp34-asan", asan_runtime);
}
END_TEST

/* Returns: (transfer full): each growth finding of the JSON report @path,
 * a line "TEST FUNCTION FILE:LINE FINGERPRINT" (its location), sorted. */
static char *growth_identities(const char *path)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_file(parser, path, NULL))
        return NULL;
    JsonArray *findings = json_object_get_array_member(
        json_node_get_object(json_parser_get_root(parser)), "findings");
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < json_array_get_length(findings); i++) {
        JsonObject *finding = json_array_get_object_element(findings, i);
        if (g_strcmp0(string_or(finding, "kind", ""), "Growth") != 0 ||
            !json_object_get_boolean_member(finding, "certain"))
            continue;
        JsonObject *test = json_array_get_object_element(
            json_object_get_array_member(finding, "tests"), 0);
        JsonObject *location = json_object_has_member(finding, "location") &&
                                       !json_object_get_null_member(finding, "location")
                                   ? json_object_get_object_member(finding, "location") : NULL;
        g_ptr_array_add(lines, g_strdup_printf(
            "%s %s %s:%" G_GINT64_FORMAT " %s", string_or(test, "name", "?"),
            string_or(location, "fn", "?"), string_or(location, "file", "?"),
            location != NULL && json_object_has_member(location, "line") &&
                    !json_object_get_null_member(location, "line")
                ? json_object_get_int_member(location, "line") : 0,
            string_or(finding, "fingerprint", "?")));
    }
    g_ptr_array_sort(lines, gl_compare_strings);
    g_ptr_array_add(lines, NULL);
    return g_strjoinv("\n", (char **) lines->pdata);
}

/* The same site found growing reads the same under every engine: its
 * location, its function and its fingerprint (a baseline written under
 * Valgrind knows it under LeakSanitizer and AddressSanitizer), from the
 * minitest runs above. */
START_TEST(test_growth_reads_the_same_under_every_engine)
{
    g_autofree char *valgrind_json = g_strdup_printf("%s/valgrind-minitest-run.json", work);
    g_autofree char *valgrind = growth_identities(valgrind_json);
    if (valgrind == NULL)
        gl_test_skip("the same site under every engine: the Valgrind minitest run left no report");
    const char *others[] = { "lsan-minitest", "lsan-fp-minitest", "asan-minitest" };
    guint compared = 0;
    for (guint i = 0; i < G_N_ELEMENTS(others); i++) {
        g_autofree char *path = g_strdup_printf("%s/%s-run.json", work, others[i]);
        g_autofree char *theirs = growth_identities(path);
        if (theirs == NULL)
            continue;  /* that engine was skipped here: its test said why */
        /* Rust's and C++'s sites aside: the ASan run has no Rust, and the
         * runtime's allocator frames differ below the extension's */
        ck_assert_msg(strstr(theirs, "GrowthTest#test_grows_journal journal_append") != NULL,
                      "%s: no journal growth:\n%s", others[i], theirs);
        const char *cases[] = { "GrowthTest#test_grows_journal ", "GrowthTest#test_grows_ledger ",
                                "GrowthTest#test_grows_table " };
        for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
            g_autofree char *escaped = g_regex_escape_string(cases[c], -1);
            g_autofree char *pattern = g_strdup_printf("^%s.*$", escaped);
            g_autoptr(GRegex) regex = g_regex_new(pattern, G_REGEX_MULTILINE, 0, NULL);
            g_autoptr(GMatchInfo) mine = NULL, other = NULL;
            ck_assert(g_regex_match(regex, valgrind, 0, &mine));
            ck_assert_msg(g_regex_match(regex, theirs, 0, &other), "%s: no %s", others[i], cases[c]);
            g_autofree char *a = g_match_info_fetch(mine, 0);
            g_autofree char *b = g_match_info_fetch(other, 0);
            ck_assert_msg(strcmp(a, b) == 0, "Valgrind: %s\n%s: %s", a, others[i], b);
        }
        compared++;
    }
    if (compared == 0)
        gl_test_skip("the same site under every engine: no sanitizer's minitest run here");
}
END_TEST

void integration_growth(TCase *tcase)
{
    tcase_add_unchecked_fixture(tcase, setup_growth, teardown_growth);
    tcase_add_test(tcase, test_growth_fixtures_behave_as_designed);
    tcase_add_test(tcase, test_growth_valgrind_minitest);
    tcase_add_test(tcase, test_growth_valgrind_test_unit);
    tcase_add_test(tcase, test_growth_valgrind_rspec);
    tcase_add_test(tcase, test_growth_lsan_minitest);
    tcase_add_test(tcase, test_growth_lsan_test_unit);
    tcase_add_test(tcase, test_growth_lsan_rspec);
    tcase_add_test(tcase, test_growth_lsan_fp_minitest);
    tcase_add_test(tcase, test_growth_lsan_fp_test_unit);
    tcase_add_test(tcase, test_growth_lsan_fp_rspec);
    tcase_add_test(tcase, test_growth_asan_minitest);
    tcase_add_test(tcase, test_growth_asan_test_unit);
    tcase_add_test(tcase, test_growth_asan_rspec);
    tcase_add_test(tcase, test_growth_not_asked);
    tcase_add_test(tcase, test_growth_reads_the_same_under_every_engine);
}
