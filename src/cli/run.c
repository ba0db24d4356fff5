/* gemleak run: runs a command under an engine, then reads what it wrote
 * through the pipeline filter shares (pipeline.c). Its options and help
 * are run_options.c's; what it says of the run, beside the reports,
 * run_messages.c's. */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/protocol.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/read/sanitizer_inherited.h"
#include "gemleak/run/commands.h"
#include "gemleak/run/exact.h"
#include "gemleak/run/rundir.h"
#include "gemleak/report/report.h"

#include <stdlib.h>
#include <string.h>


/* What each file of a run that went through cost, for the next run's
 * --jobs: only a passing command's times say what its files cost (a
 * failing one may have stopped early, an interrupted one did). */
static void record_durations(const GlCommandPlan *commands, const char *path,
                             const GlRunResult *result, FILE *err)
{
    g_autoptr(GError) error = NULL;
    if (!commands->has_files || result->status != 0 || result->interrupted_by != 0)
        return;
    g_autoptr(GHashTable) measured = gl_run_dir_test_durations(result->dir);
    if (!gl_durations_update(path, commands, (const double *) (void *) result->seconds->data,
                             measured, &error)) {
        g_autofree char *why = gl_text_escape(error->message);
        fprintf(err, "gemleak: note: the durations of this run are not kept: %s\n", why);
    }
}

/* Returns: (transfer none): the Ruby @command runs: its first word when
 * that is a Ruby, else the one on PATH. */
static const char *command_ruby(char **command)
{
    return gl_is_ruby_object(command[0]) ? command[0] : "ruby";
}

/* The suppressions: gemleak's own for the Ruby that @command runs (its
 * version in @ruby_version, NULL when it cannot tell), then the project's.
 * Returns: (transfer full): the .supp files, NULL with @error set. */
static GPtrArray *suppression_files(const Options *options, char **command, FILE *err,
                                    char **ruby_version, GError **error)
{
    g_autofree char *data_dir = gl_data_dir();
    g_autoptr(GPtrArray) supp_dirs = g_ptr_array_new_null_terminated(4, g_free, TRUE);
    g_ptr_array_add(supp_dirs, g_build_filename(data_dir, "suppressions", NULL));
    g_autofree char *own_supp = g_build_filename(data_dir, "suppressions", "ruby.supp", NULL);
    if (!g_file_test(own_supp, G_FILE_TEST_IS_REGULAR)) {
        g_autofree char *shown = gl_text_escape(own_supp);
        fprintf(err, "gemleak: warning: no %s: Ruby's own errors at exit are not suppressed "
                "(reinstall gemleak, or set GEMLEAK_DATADIR to the directory that holds "
                "suppressions/)\n", shown);
    }
    for (char **dir = options->suppressions_dirs; dir != NULL && *dir != NULL; dir++) {
        if (!g_file_test(*dir, G_FILE_TEST_IS_DIR)) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                        "--suppressions-dir %s: no such directory", *dir);
            return NULL;
        }
        g_ptr_array_add(supp_dirs, g_strdup(*dir));
    }
    if (options->suppressions_dirs == NULL && g_file_test("suppressions", G_FILE_TEST_IS_DIR))
        g_ptr_array_add(supp_dirs, g_strdup("suppressions"));
    *ruby_version = gl_ruby_version(command_ruby(command));
    return gl_suppression_files((const char *const *) supp_dirs->pdata, *ruby_version);
}


/* Under a sanitizer's engine, the check of what each forked child
 * inherited, which it did not make at the fork, is written into its report
 * from its parent's (sanitizer_inherited.h). What cannot be is said: the
 * child's report then counts inherited blocks as its own. */
static void say_inherited(const GError *error, FILE *err)
{
    g_autofree char *why = gl_text_escape(error->message);
    fprintf(err, "gemleak: warning: what forked children inherited: %s\n", why);
}

/* Exact stacks where a leak's was cut: the commands again (exact.h).
 * What it could not do leaves those stacks cut, which never pass. */
static void run_exact(const GlRunOptions *run, GPtrArray *commands, GlRunResult *result,
                      const GlRules *targets, GlExactResult *exact, FILE *err)
{
    /* what forked children inherited: the blocks found on the stacks as the
     * runtime gave them (the exact pass leaves them to the parents' run
     * again), the check written with those the exact pass gave */
    g_autoptr(GError) inherited_error = NULL;
    g_autoptr(GlInherited) inherited =
        result->dir != NULL ? gl_sanitizer_inherited_find(result->dir, &inherited_error) : NULL;
    g_autoptr(GError) error = NULL;
    if (!gl_run_exact(run, commands, result, targets, inherited, exact, &error)) {
        g_autofree char *why = gl_text_escape(error->message);
        fprintf(err, "gemleak: warning: exact stacks: %s\n", why);
    }
    if (inherited != NULL)
        gl_sanitizer_inherited_write(result->dir, inherited, NULL, &inherited_error);
    if (inherited_error != NULL)
        say_inherited(inherited_error, err);
}


/* Returns: (transfer full): "Ruby 3.1", or what is said of a Ruby whose
 * version is unknown. */
static char *which_ruby(const char *version)
{
    return version != NULL ? g_strdup_printf("Ruby %s", version)
                           : g_strdup("a Ruby whose version gemleak cannot tell (no ruby on PATH, "
                                      "or it did not run)");
}

/* Returns: TRUE if @engine checks leaks in the run of @command; FALSE,
 * having said so on @err, when the command is itself a Ruby older than the
 * engine checks leaks on (@version, its version). A command that starts
 * Ruby some other way (a script, rake) runs with leaks checked, and a
 * process of it on an older Ruby has its leaks left unjudged and said
 * (its helper records which Ruby it ran). */
static gboolean engine_checks_leaks(const GlEngine *engine, char **command, const char *version,
                                    FILE *err)
{
    if (engine->facts.leaks_min_ruby == NULL || !gl_is_ruby_object(command[0]) ||
        gl_ruby_version_at_least(version, engine->facts.leaks_min_ruby))
        return TRUE;
    g_autofree char *which = which_ruby(version);
    g_autofree char *shown = gl_text_escape(which);  /* what the command's ruby printed */
    fprintf(err, "gemleak: note: leaks are not checked: %s, and the command runs %s; memory "
            "errors are (for leaks: --engine valgrind, the default, on this Ruby)\n",
            engine->facts.leaks_min_ruby_why, shown);
    return FALSE;
}


/* Plans the commands of @command (@commands) as @planning says, and says
 * on @err what the plan noted.
 * Returns: FALSE with @error set when they cannot run as asked. */
static gboolean plan_commands(const Options *options, char **command,
                              const GlCommandOptions *planning, GlCommandPlan *commands,
                              FILE *err, GError **error)
{
    if (!gl_cli_not_empty("--durations", options->durations, error) ||
        !gl_commands_plan(command, planning, commands, error))
        return FALSE;
    /* Notes name files and commands, which may hold anything: escaped, as
     * the reports show them. */
    for (guint i = 0; i < commands->notes->len; i++) {
        g_autofree char *note = gl_text_escape(g_ptr_array_index(commands->notes, i));
        fprintf(err, "gemleak: note: %s\n", note);
    }
    if (options->per_test != NULL && !gl_per_test_available()) {
        g_set_error(error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "--per-test: this gemleak was built without Valgrind's headers "
                    "(valgrind/valgrind.h; Debian: valgrind, Fedora: valgrind-devel): install "
                    "them and build gemleak again");
        return FALSE;
    }
    return TRUE;
}

/* Sets @run to run @command (its @commands) under @engine as @options
 * and @plan say, with the @suppressions (NULL-terminated) of its Ruby
 * (@ruby_version); says on @err what it leaves unchecked. */
static void plan_run(const Options *options, const Plan *plan, const GlEngine *engine,
                     char **command, const GlCommandPlan *commands,
                     const char *const *suppressions, const char *ruby_version, FILE *err,
                     GlRunOptions *run)
{
    gboolean frame_pointers = gl_engine_supports(engine, GL_ENGINE_FAST_WITH_FRAME_POINTERS) &&
                              gl_ruby_frame_pointers(command_ruby(command));
    *run = (GlRunOptions) {
        .engine = engine,
        .program = options->valgrind != NULL ? options->valgrind : "valgrind",
        .program_options = (const char *const *) options->valgrind_opts,
        .suppressions = suppressions,
        .leak_kinds = gl_rules_get_leak_kinds(plan->rules),
        .gen_suppressions = options->gen_suppressions,
        .keep_dir = options->keep_xml,
        .messages = err,
        .per_test = options->per_test,
        .growth = options->growth,
        .time_files = commands->has_files,
        .spare_launchers = !options->trace_launchers,
        .fast_stacks = !options->exact_stacks &&
                       (gl_engine_supports(engine, GL_ENGINE_EXACT_WHERE_LEAKED) || frame_pointers),
        .frame_pointers = frame_pointers,
        .leaks_unchecked = !engine_checks_leaks(engine, command, ruby_version, err),
    };
    /* The fast pass records which test allocated each block (--per-test's
     * owners, kept out of the reports unless asked for), for the exact
     * pass to run those tests only. */
    if (run->per_test == NULL && run->fast_stacks &&
        gl_engine_supports(engine, GL_ENGINE_EXACT_WHERE_LEAKED) && gl_per_test_available())
        run->per_test = GL_PROTO_PER_TEST_OWNERS;
}

/* Returns: TRUE if @engine wrote a report in @result's run directory, or
 * writes none for a clean process; FALSE, having said why on @err. */
static gboolean wrote_something(const GlEngine *engine, const GlRunResult *result, FILE *err)
{
    const char *title = engine->facts.title;
    if (gl_engine_supports(engine, GL_ENGINE_SILENT_WHEN_CLEAN) ||
        gl_input_dir_has_inputs(result->dir))
        return TRUE;
    if (result->launcher != NULL) {
        g_autofree char *launcher = gl_text_escape(result->launcher);
        fprintf(err, "gemleak: nothing ran under %s: %s, a launcher, runs outside it, and "
                "started no Ruby process that did (status %d; with --trace-launchers it runs "
                "under %s too)\n", title, launcher, result->status, title);
    } else
        fprintf(err, "gemleak: %s wrote nothing: see its messages above (did the command "
                "exist? status %d)\n", title, result->status);
    return FALSE;
}

/* Runs @command under the engine as @plan says and reports; the run
 * directory is kept unless all went well. */
static int run_planned(const Options *options, Plan *plan, char **command, FILE *err)
{
    g_autoptr(GError) error = NULL;
    int status;
    GlRunResult result = { 0 };
    gboolean keep = TRUE;
    /* the objects the run names its frames from, read once for its passes
     * and its analysis */
    g_autoptr(GlDebugInfo) objects = gl_debuginfo_new();
    GlCommandOptions planning = {
        .shard = options->shard,
        .jobs = gl_cli_effective_jobs(options),
        .durations = options->durations != NULL ? options->durations : GL_DURATIONS_FILE,
    };
    g_auto(GlCommandPlan) commands = { 0 };
    if (!plan_commands(options, command, &planning, &commands, err, &error))
        return gl_cli_fail(err, "run", error);

    g_autofree char *ruby_version = NULL;
    g_autoptr(GPtrArray) supps = suppression_files(options, command, err, &ruby_version, &error);
    if (supps == NULL)
        return gl_cli_fail(err, "run", error);
    /* The Ruby each process runs is the one that counts, whatever `ruby`
     * on PATH is (a script may name another): the run's coverage says
     * which processes ran one older than the engine needs. */
    const GlEngine *engine = gl_engine_find(options->engine);
    /* Under an engine that answers client requests, each repetition's
     * measure is one (a changed leak check). */
    if (options->growth > 0 && gl_engine_supports(engine, GL_ENGINE_CLIENT_REQUESTS) &&
        !gl_per_test_available()) {
        g_set_error(&error, GL_ERROR, GL_ERROR_ENVIRONMENT,
                    "--growth: this gemleak was built without Valgrind's headers "
                    "(valgrind/valgrind.h; Debian: valgrind, Fedora: valgrind-devel): install "
                    "them and build gemleak again, or use --engine lsan");
        return gl_cli_fail(err, "run", error);
    }
    guint n_supps = supps->len;
    g_ptr_array_add(supps, NULL);

    GlRunOptions run;
    plan_run(options, plan, engine, command, &commands, (const char *const *) supps->pdata,
             ruby_version, err, &run);
    run.objects = objects;
    gl_cli_say_jobs_capped(options, err);
    if (commands.commands->len > 1)
        fprintf(err, "gemleak: %u commands at once under %s\n", commands.commands->len,
                engine->facts.title);
    if (!gl_run_commands(&run, commands.commands, &result, &error)) {
        status = gl_cli_fail(err, "run", error);
        goto done;
    }
    GlExactResult exact = { 0 };
    run_exact(&run, commands.commands, &result, plan->rules, &exact, err);
    gl_cli_say_how_it_ran(&run, &result, n_supps, ruby_version, err);
    gl_cli_say_exact(&exact, err);
    gl_cli_say_uninstrumented(engine, result.dir, !run.leaks_unchecked, command_ruby(command),
                              err);
    record_durations(&commands, planning.durations, &result, err);
    if (!wrote_something(engine, &result, err)) {
        status = GL_EXIT_ERROR;
        goto done;
    }

    const char *inputs[] = { result.dir, NULL };
    Outcome outcome = { 0 };
    if (!gl_cli_analyze_and_report(options, plan, inputs, &result, err, &outcome, &error)) {
        /* what ran outside the engine may be why no target was seen */
        for (guint i = 0; i < result.outside->len; i++) {
            g_autofree char *outside = gl_text_escape(g_ptr_array_index(result.outside, i));
            fprintf(err, "gemleak: %s\n", outside);
        }
        status = gl_cli_fail(err, "run", error);
        /* a command that failed says so first (README, exit statuses) */
        if (status == GL_EXIT_ERROR && (result.status != 0 || result.killed_by != 0)) {
            fprintf(err, "gemleak: exit status 4: the command failed (status %d) before "
                    "anything was checked\n", result.status);
            status = GL_EXIT_COMMAND_FAILED;
        } else if (status == GL_EXIT_ERROR) {
            /* the last line says the status, as after a judged run */
            fprintf(err, "gemleak: exit status 3: nothing was checked, though the command "
                    "passed\n");
        }
        goto done;
    }
    status = outcome.status;
    keep = status != 0 || result.interrupted_by != 0;
done:
    if (result.dir != NULL && (keep || result.kept_by_user))
        gl_cli_keep_xml(err, engine, result.dir, result.kept_by_user,
                        gl_cli_effective_jobs(options));
    gl_run_finish(&result, !keep);
    return status;
}

static int run_and_report(const Options *options, char **command, FILE *out, FILE *err)
{
    g_autoptr(GError) error = NULL;
    Plan plan = { 0 };
    int status;
    /* Usage errors now, not after minutes under the engine. */
    if (options->engine != NULL && gl_engine_find(options->engine) == NULL) {
        g_set_error(&error, GL_ERROR, GL_ERROR_USAGE, "--engine %s: no such engine (give one of: %s)",
                    options->engine, gl_engine_names());
        status = gl_cli_fail(err, "run", error);
    } else if (!gl_engine_supports(gl_engine_find(options->engine), GL_ENGINE_OWN_PROGRAM) &&
               (options->valgrind != NULL || options->valgrind_opts != NULL)) {
        g_set_error(&error, GL_ERROR, GL_ERROR_USAGE, "%s is for the Valgrind engine only: drop "
                    "--engine %s, or %s",
                    options->valgrind != NULL ? "--valgrind" : "--valgrind-opt",
                    options->engine,
                    options->valgrind != NULL ? "--valgrind" : "--valgrind-opt");
        status = gl_cli_fail(err, "run", error);
    } else if ((options->keep_xml != NULL ? !gl_run_check_keep_dir(options->keep_xml, &error)
                                   : !gl_run_check_tmpdir(&error)) ||
        !gl_cli_plan_build(options, NULL, &plan, &error) ||
        !(plan.sinks = gl_cli_plan_sinks(options, &plan, NULL, options->keep_xml, err, out,
                                         &error)))
        status = gl_cli_fail(err, "run", error);
    else
        status = run_planned(options, &plan, command, err);
    gl_cli_plan_clear(&plan);
    return status;
}

int gl_cli_run(int argc, char **argv, FILE *out, FILE *err)
{
    g_set_prgname("gemleak run");
    Options options;
    gl_cli_options_init(&options);
    g_autoptr(GOptionContext) context = gl_cli_run_context(&options);
    g_autoptr(GError) error = NULL;
    int status;
    g_auto(GStrv) args = gl_cli_parse_options(context, &options, argc, argv, &error);
    if (args == NULL) {
        status = gl_cli_fail(err, "run", error);
    } else if (options.help) {
        /* GOption heads the main group "Application Options:" once there is
         * another group; here they are the report options, as in filter. */
        g_autofree char *text = g_option_context_get_help(context, FALSE, NULL);
        g_autoptr(GString) help = g_string_new(text);
        g_string_replace(help, "\nApplication Options:\n", "\nReport options:\n", 1);
        fputs(help->str, out);
        status = GL_EXIT_CLEAN;
    } else {
        char **command = args + 1;
        if (command[0] != NULL && strcmp(command[0], "--") == 0)
            command++;
        if (command[0] == NULL) {
            g_set_error(&error, GL_ERROR, GL_ERROR_USAGE,
                        "no command: give the command to run after --, e.g. "
                        "gemleak run -- ruby test.rb");
            status = gl_cli_usage_error(err, "run", error);
        } else {
            status = run_and_report(&options, command, out, err);
        }
    }
    gl_cli_options_clear(&options);
    return status;
}
