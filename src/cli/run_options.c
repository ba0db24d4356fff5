/* gemleak run's options and help: the run option group (--engine,
 * --keep-xml, --per-test...), what --help says of the command and its
 * exit statuses, and the context they make (run.c parses with it). */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/run/commands.h"

#include <string.h>

static const char run_exit_statuses[] =
    "Exit status:\n"
    "  0  nothing fails the gate, and the command passed\n"
    "  1  findings fail the gate (see --fail-on); the command passed\n"
    "  2  usage error\n"
    "  3  Valgrind or gemleak trouble (Valgrind missing or too old, no XML\n"
    "     written, XML cut short, an extension loaded outside Valgrind, a\n"
    "     run interrupted by a signal, a report not written), and nothing\n"
    "     failed the gate\n"
    "  4  the command failed (a non-zero status, or killed by a signal), and\n"
    "     nothing failed the gate; also when it failed before any Ruby it ran\n"
    "     was checked (a build step that failed, say)\n"
    "  5  findings fail the gate, and the command failed too\n"
    "The text report's last line says which, and how the command ended.\n";

/* --per-test[=test|each|file]: bare, per test. */
static gboolean on_per_test(const char *name, const char *value, gpointer data, GError **error)
{
    Options *options = data;
    (void) name;
    if (value != NULL && strcmp(value, "test") != 0 && strcmp(value, "each") != 0 &&
        strcmp(value, "file") != 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--per-test=%s: give test (the test, found with few leak checks, by running "
                    "tests again), each (a leak check after each test, no test run again) or "
                    "file (after each test file)", value);
        return FALSE;
    }
    g_free(options->per_test);
    options->per_test = g_strdup(value != NULL ? value : "test");
    return TRUE;
}

/* --growth[=K]: bare, GL_PROTO_GROWTH_DEFAULT repetitions. K in decimal
 * digits only, as written: "+3", " 3", "03" or "3x" are mistakes, not three. */
static gboolean on_growth(const char *name, const char *value, gpointer data, GError **error)
{
    Options *options = data;
    (void) name;
    guint64 repetitions = GL_PROTO_GROWTH_DEFAULT;
    if (value != NULL && (*value == '\0' || *value == '0' ||
                          strspn(value, "0123456789") != strlen(value) || strlen(value) > 2 ||
                          (repetitions = g_ascii_strtoull(value, NULL, 10)) < GL_PROTO_GROWTH_MIN ||
                          repetitions > GL_PROTO_GROWTH_MAX)) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--growth=%s: give how many times each test runs again, from %d to %d "
                    "(--growth alone: %d)", value, GL_PROTO_GROWTH_MIN, GL_PROTO_GROWTH_MAX,
                    GL_PROTO_GROWTH_DEFAULT);
        return FALSE;
    }
    options->growth = (guint) repetitions;
    return TRUE;
}

static GOptionGroup *run_group(Options *options)
{
    /* the engines as their table says (gemleak/run/engine.h); kept for
     * the process, as GOption keeps the text */
    static char *engine_help;
    if (engine_help == NULL)
        engine_help = g_strconcat("Check with ENGINE: ", gl_engine_help(), NULL);
    const GOptionEntry entries[] = {
        { "valgrind", 0, 0, G_OPTION_ARG_FILENAME, &options->valgrind,
          "The Valgrind to run (default: valgrind on PATH)", "PATH" },
        { "valgrind-opt", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->valgrind_opts,
          "Pass OPT to Valgrind as it is; repeatable", "OPT" },
        { "engine", 0, 0, G_OPTION_ARG_STRING, &options->engine,
          engine_help, "ENGINE" },
        { "suppressions-dir", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->suppressions_dirs,
          "Use ruby.supp, ruby-3.supp, ruby-3.1.supp... from DIR; repeatable "
          "(default: ./suppressions if there is one)", "DIR" },
        { "keep-xml", 0, 0, G_OPTION_ARG_FILENAME, &options->keep_xml,
          "Write Valgrind's XML to DIR and keep it (default: a private directory, "
          "removed after a clean run); one run at a time in DIR, none under a directory "
          "others can write to", "DIR" },
        { "shard", 0, 0, G_OPTION_ARG_STRING, &options->shard,
          "Run only the I-th of N parts of the files after ::: (a CI shard); auto: I and N "
          "from GitLab's, CircleCI's or Buildkite's variables", "I/N|auto" },
        { "durations", 0, 0, G_OPTION_ARG_FILENAME, &options->durations,
          "Balance --jobs by the seconds each file took before, kept in FILE (default: "
          GL_DURATIONS_FILE ")", "FILE" },
        { "per-test", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer) on_per_test,
          "Name the test in which each leak was lost (minitest, test-unit, RSpec): found with "
          "few leak checks by running the tests that lost memory again (--per-test alone), a "
          "check after each test (each), or after each test file; under --engine lsan or asan, "
          "the test that allocated its blocks (no check, nothing run again)", "test|each|file" },
        { "growth", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer) on_growth,
          "Find memory that only grows (a cache that never forgets, a table or vector never "
          "trimmed, freed only at exit, which no leak check sees): after the suite, each test "
          "that can run again (minitest, test-unit, RSpec) runs K more times (default 3, 2 to "
          "20), and a site of the extension whose live memory rose over the repetitions and "
          "never fell back is reported with the test; costs the K runs of the tests, and under "
          "Valgrind a leak check after each (about half a second)", "K" },
        { "spare-launchers", 0, 0, G_OPTION_ARG_NONE, &options->spare_launchers,
          "Run a launcher command (bundle, rake) natively, and what it starts under Valgrind "
          "(the default; undoes --trace-launchers)", NULL },
        { "exact-stacks", 0, 0, G_OPTION_ARG_NONE, &options->exact_stacks,
          "Under --engine lsan or asan, unwind every allocation exactly, in one run (slow: "
          "3 to 23 times native on a Ruby without frame pointers); by default LeakSanitizer "
          "unwinds fast, and runs the command again for exact stacks where a leak's was cut",
          NULL },
        { "trace-launchers", 0, 0, G_OPTION_ARG_NONE, &options->trace_launchers,
          "Run a launcher command under Valgrind too: slower, its own leaks checked",
          NULL },
        G_OPTION_ENTRY_NULL,
    };
    GOptionGroup *group = g_option_group_new("run", "Run options:", "Show run options",
                                             options, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

static const char run_summary[] =
    "Runs COMMAND (a Ruby test suite, a script, rake...) under Valgrind memcheck,\n"
    "every Ruby process it starts included, then reports the errors that belong\n"
    "to the extensions it loaded (or to --object), leaving out Ruby's own.";

static const char run_description[] =
    "The report goes to standard error, apart from the command's own output, or\n"
    "to -o FILE. Valgrind's XML is kept, gzip-compressed, and its directory\n"
    "named, when the run finds something, fails or is interrupted; 'gemleak\n"
    "clean' removes the kept directories of old runs from TMPDIR.\n"
    "\n"
    "Every process the command starts runs under Valgrind, whatever its\n"
    "environment, but compilers, linkers and the small tools of a build that\n"
    "start no other program (cc, cc1, as, ld, install, rm, sed...), and the\n"
    "Ruby that runs extconf.rb (natively, watched: if it loads an extension of\n"
    "the project it starts again under Valgrind). Shells, make, xargs, find,\n"
    "git stay traced, so that no Ruby below them escapes.\n"
    "--valgrind-opt=--trace-children-skip=PATTERNS replaces that list (empty:\n"
    "trace everything). A command that is a launcher (bundle, rake) runs\n"
    "natively, as it costs most under Valgrind and runs no test: what it starts\n"
    "runs under Valgrind, with all that starts in turn, and a Ruby it loads a\n"
    "script into, or that loads the extension itself, starts again under it.\n"
    "--trace-launchers runs the launcher under Valgrind too.\n"
    "\n"
    "Files after ::: are shared among --jobs processes, each running COMMAND\n"
    "with its share appended; the command must take several files (rspec, a\n"
    "loader): a bare ruby, which takes one script, gets a loader that requires\n"
    "each file. Shares are balanced by the time each file took in earlier runs,\n"
    "kept in " GL_DURATIONS_FILE " (--durations), else by file size.\n"
    "--shard I/N runs the I-th of N parts (split by file size, the same on every\n"
    "CI machine); --shard auto reads I and N from GitLab (CI_NODE_INDEX,\n"
    "CI_NODE_TOTAL), CircleCI (CIRCLE_NODE_INDEX, CIRCLE_NODE_TOTAL) or Buildkite\n"
    "(BUILDKITE_PARALLEL_JOB, BUILDKITE_PARALLEL_JOB_COUNT). Each shard's JSON\n"
    "report merges with the others' in 'gemleak filter s1.json s2.json...'.\n"
    "\n"
    "--engine lsan preloads LeakSanitizer's runtime (liblsan0) into every Ruby\n"
    "process instead, with RUBY_FREE_AT_EXIT set and fast stacks (on Ruby's own\n"
    "psych, json and strscan suites 1.2x to 2.0x native, Valgrind 40x and more):\n"
    "leaks only (no invalid reads or writes, no use after free); it needs\n"
    "Ruby 3.3 or newer. Where a leak's stack was cut short (a Ruby without frame\n"
    "pointers; the first allocation at each site is unwound exactly at once),\n"
    "the command runs again, its output discarded and its status ignored (only\n"
    "the tests that allocated the leak, when gemleak can tell), unwinding\n"
    "exactly only the allocations of the leaking calls: exact stacks are paid\n"
    "only where something leaked (--exact-stacks: everywhere, in one run).\n"
    "It takes --per-test (which test allocated each lost block, at the\n"
    "price of a frame in its stack). --engine asan\n"
    "preloads AddressSanitizer's runtime (libasan8) the same way: invalid reads\n"
    "and writes, use after free and double frees, with their allocation and free\n"
    "stacks, in an extension built with -fsanitize=address (the Rake task's\n"
    "c.engine = :asan builds one; a loaded extension built without it is named,\n"
    "and the run INCOMPLETE),\n"
    "at a sixth of Valgrind's time (about 7.7x native, Valgrind 45x); no\n"
    "uninitialised values; leaks too on Ruby 3.3 or newer. LeakSanitizer on every\n"
    "push, AddressSanitizer for memory errors at speed, Valgrind for the rest and\n"
    "as the final word. The Valgrind engine too leaves uninitialised values out\n"
    "unless --valgrind-opt=--undef-value-errors=yes (1.2 to 2.1 times the time).\n"
    "\n"
    "Examples:\n"
    "  gemleak run -- ruby -Ilib -Itest test/leak_test.rb\n"
    "  gemleak run --engine lsan -- bundle exec rake test\n"
    "  gemleak run --engine asan -- ruby -Itmp/gemleak-asan/3.4.5/lib -Ilib -Itest test/a_test.rb\n"
    "  gemleak run --object redcarpet -- bundle exec rake test\n"
    "  gemleak run --format json -o leaks.json --format text -- rspec\n"
    "  gemleak run --jobs 2 -- ruby -Ilib -Itest ::: test/*_test.rb\n"
    "  gemleak run --shard auto --format json:shard.json -- rspec ::: spec/*_spec.rb\n";

GOptionContext *gl_cli_run_context(Options *options)
{
    GOptionContext *context = gl_cli_new_context("[--] COMMAND [ARG...]", run_summary,
                                                 run_description, run_exit_statuses,
                                                 gl_cli_report_group(options));
    g_option_context_add_group(context, run_group(options));
    /* Options end at the command: its own options are its business. */
    g_option_context_set_strict_posix(context, TRUE);
    return context;
}
