/* What the files of the command line share (src/cli/ only): the parsed
 * options, the plan built from them (plan.c), and the pipeline filter and
 * run both go through (pipeline.c). Not installed, not for other stages. */
#ifndef GEMLEAK_CLI_INT_H
#define GEMLEAK_CLI_INT_H

#include "gemleak/base/text.h"
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/baseline.h"
#include "gemleak/judge/classify.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/outcome.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/report/sinks.h"
#include "gemleak/run/exact.h"
#include "gemleak/run/runner.h"

#include <glib.h>
#include <stdio.h>

/* One report to write: a format and where ("-" or NULL: the default stream). */
typedef struct {
    char *format;
    char *path;
} Output;

typedef struct {
    /* what is a finding */
    char **objects;
    char **skip_functions;
    char *skip_functions_file;
    gboolean no_ruby_memory_rule;  /* --no-default-skips */
    char *leak_kinds;
    gboolean all_errors;
    gboolean free_at_exit;
    /* reports and the gate */
    GPtrArray *outputs;         /* Output*, in the order given */
    char *pending_output;       /* an -o that came before its --format */
    char *color;
    guint jobs;                 /* as given; 0: not given */
    gboolean gen_suppressions;
    char *fail_on;
    char *max_bytes;
    char *growth_min_bytes;     /* --growth-min-bytes: judge/growth.h's least median */
    char *project_root;
    char *frames;
    char *suppressions_out;
    char *baseline;
    char *write_baseline;
    gboolean write_baseline_if_missing;  /* --baseline FILE missing: write it */
    gboolean help;
    /* run */
    char *engine;               /* --engine: "valgrind" or "lsan"; NULL: Valgrind */
    char *valgrind;
    char **valgrind_opts;
    char **suppressions_dirs;
    char *keep_xml;
    char *shard;
    char *durations;
    char *per_test;             /* "test" or "file"; NULL: off */
    guint growth;               /* --growth[=K]: the repetitions; 0: off */
    gboolean trace_launchers;
    gboolean spare_launchers;
    gboolean exact_stacks;      /* --exact-stacks: every allocation unwound exactly, one run */
} Options;

/* What the options say, checked and built before any input is read or
 * any command run: a mistake in them costs one line, not a suite's run
 * under Valgrind. */
typedef struct {
    GlRules *rules;
    GlGate gate;
    GlBaseline *baseline;      /* nullable */
    /* (nullable) where the baseline is written: --write-baseline, or the
     * --baseline that did not exist, with --write-baseline-if-missing */
    char *write_baseline;
    gboolean baseline_missing; /* the latter: the run writes its first baseline */
    char *project_root;        /* absolute */
    guint frames_after;        /* --frames: G_MAXUINT for all */
    GlSinks *sinks;            /* the reports, where they go */
} Plan;

/* What the pipeline comes to for filter and run: the exit status its
 * outcome (gemleak/judge/outcome.h) makes. */
typedef struct {
    int status;
} Outcome;

/* ---- options (options.c) ---- */

void gl_cli_options_init(Options *options);
void gl_cli_options_clear(Options *options);
/* Returns: how many threads read, and how many commands run at once:
 * --jobs, else one per processor, at most GL_MAX_JOBS. */
guint gl_cli_effective_jobs(const Options *options);
void gl_cli_say_jobs_capped(const Options *options, FILE *err);
/* Returns: (transfer full): the options filter and run share. */
GOptionGroup *gl_cli_report_group(Options *options);
/* Returns: (transfer full): a command's context, with help left to us. */
GOptionContext *gl_cli_new_context(const char *parameter, const char *summary,
                                   const char *description, const char *statuses,
                                   GOptionGroup *main_group);
/* Returns: (transfer full): see options.c. */
char **gl_cli_parse_options(GOptionContext *context, Options *options, int argc, char **argv,
                            GError **error);
/* Say @error on @err (with a pointer to --help for a usage error).
 * Returns: the exit status it makes. */
int gl_cli_usage_error(FILE *err, const char *command, const GError *error);
int gl_cli_fail(FILE *err, const char *command, const GError *error);

/* ---- the plan (plan.c) ---- */

gboolean gl_cli_not_empty(const char *option, const char *value, GError **error);
/* @inputs (nullable: run's, not known yet): what filter reads, whose run
 * directories may say the project root their run had. */
gboolean gl_cli_plan_build(const Options *options, const char *const *inputs, Plan *plan,
                           GError **error);
void gl_cli_plan_clear(Plan *plan);
/* Returns: (transfer full) (nullable): see plan.c. */
GlSinks *gl_cli_plan_sinks(const Options *options, const Plan *plan, const char *const *inputs,
                           const char *keep_dir, FILE *stream, FILE *out, GError **error);

/* ---- the targets (pipeline_targets.c) ---- */

/* Sets the targets of @rules: --object, else the run's loaded extensions,
 * else the Ruby extensions under the current directory; @shown receives
 * what the report says they are, *have_lists whether @inputs came with
 * the run's lists (@coverage: what their directories say of the run's
 * processes).
 * Returns: FALSE with @error set when they cannot be settled. */
gboolean gl_cli_resolve_targets(const Options *options, const GlSinks *sinks,
                                const char *const *inputs, const GlRunCoverage *coverage,
                                GlRules *rules, GPtrArray *shown, gboolean *have_lists,
                                GError **error);
/* Warns of each target of @rules no object in @analysis's errors matches. */
void gl_cli_warn_unseen_targets(const GlRules *rules, const GlAnalysis *analysis, FILE *err);

/* ---- the pipeline (pipeline.c) ---- */

gboolean gl_cli_analyze_and_report(const Options *options, Plan *plan, const char *const *inputs,
                                   const GlRunResult *run, FILE *err, Outcome *outcome,
                                   GError **error);

/* ---- exit statuses and run's last line (exit_status.c) ---- */

int gl_cli_filter_status(const GlOutcome *outcome);
int gl_cli_run_status(const GlOutcome *outcome, const GlRunResult *run);
/* Returns: (transfer full): see exit_status.c. */
char *gl_cli_run_exit_line(int status, const GlRunResult *run, const GlOutcome *outcome,
                           const GlRunCoverage *coverage);

/* ---- run's options and help (run_options.c) ---- */

/* Returns: (transfer full): run's context: the report options, the run
 * options, and the help, ending the options at the command. */
GOptionContext *gl_cli_run_context(Options *options);

/* ---- what run says of a run, beside its reports (run_messages.c) ---- */

/* Says how the run went (@run, as it ran; @n_supps suppression files;
 * @path_ruby, nullable: the version of the ruby on PATH, when the
 * processes did not say theirs). */
void gl_cli_say_how_it_ran(const GlRunOptions *run, const GlRunResult *result, guint n_supps,
                           const char *path_ruby, FILE *err);
/* Says what the exact pass did (gemleak/run/exact.h), when it ran. */
void gl_cli_say_exact(const GlExactResult *exact, FILE *err);
/* Says which extensions the run in @dir loaded that were not built for
 * @engine, and how to build them so (@ruby: the command's). */
void gl_cli_say_uninstrumented(const GlEngine *engine, const char *dir, gboolean leaks,
                               const char *ruby, FILE *err);
/* Compresses the run directory @dir for a user who wants it back, and
 * says where it is and how to be rid of it (@by_user: --keep-xml's). */
void gl_cli_keep_xml(FILE *err, const GlEngine *engine, const char *dir, gboolean by_user,
                     guint jobs);

/* ---- the commands (cli.c's table): argv[0] is the command's name ---- */

/* A command, one line of cli.c's table, as git's commands[] and tmux's
 * cmd_table: gemleak_main() runs it by name, the general help lists it,
 * `gemleak help` takes it as a topic. */
typedef struct {
    const char *name;
    int (*main)(int argc, char **argv, FILE *out, FILE *err);
    const char *usage;             /* its arguments on the help's Usage line (nullable: none) */
    const char *summary;           /* what it does, one line: the general help wraps it */
    gboolean report_options;       /* it takes the report options (gemleak(1)'s OPTIONS
                                    * before their first subsection, then its own) */
    gboolean aside;                /* about gemleak, not a job of it (help): listed apart,
                                    * and no topic of the manual */
} Command;

/* Returns: (transfer none): the commands, ending with one whose name is NULL. */
const Command *gl_cli_commands(void);


int gl_cli_filter(int argc, char **argv, FILE *out, FILE *err);
int gl_cli_run(int argc, char **argv, FILE *out, FILE *err);
int gl_cli_clean(int argc, char **argv, FILE *out, FILE *err);
/* gemleak help [TOPIC]: gemleak(1), whole, or a command's part or a section;
 * @commands: cli.c's table (passed down: help.c calls nothing of cli.c). */
int gl_cli_help(const Command *commands, int argc, char **argv, FILE *out, FILE *err);

/* ---- gemleak(1) as text (help_roff.c) ---- */

/* Returns: (transfer full): @roff, a man page in the man(7) macros
 * gemleak(1) uses, laid out as plain text as man lays it out on 80
 * columns. */
char *gl_cli_roff_to_text(const char *roff);

#endif
