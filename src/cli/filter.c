/* gemleak filter: reads what an engine wrote (every format of the input
 * seam, gemleak/read/input.h) and gemleak's own JSON reports, through the
 * pipeline run shares (pipeline.c). */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/read/input.h"
#include "gemleak/read/sanitizer_names.h"

#include <stdlib.h>
#include <string.h>

/* Returns: (transfer full): the help's summary, the formats from the
 * input seam's table (gemleak/read/input.h). */
static char *filter_summary(void)
{
    g_autofree char *formats = gl_input_formats_help();
    return g_strdup_printf(
        "Reads, each file as its first bytes say (a directory: the files in it\n"
        "that one of these reads, regular files only):\n"
        "%s"
        "and reports only the errors that belong to the target extension, leaving\n"
        "out the thousands that Ruby itself leaves at exit.", formats);
}

static const char filter_exit_statuses[] =
    "Exit status:\n"
    "  0  nothing found (no finding fails the gate)\n"
    "  1  findings that fail the gate (see --fail-on)\n"
    "  2  usage error\n"
    "  3  an input could not be read or was not complete Valgrind XML (or a\n"
    "     sanitizer's report: cut short, \"Too many leaks\"), a JSON\n"
    "     report merged says its own run was not all checked, a run\n"
    "     directory says its run was interrupted, or a report could not be\n"
    "     written, and nothing failed the gate\n";

static const char filter_description[] =
    "A definite leak is kept when its allocation stack enters a target, unless\n"
    "a Ruby function other than Ruby's allocators (ruby_xmalloc, ALLOC_N...)\n"
    "lies between the allocation and the first target frame (the extension\n"
    "called Ruby, which allocated for itself), or it happened in the target's\n"
    "Init code, once, at load. Where Ruby has no symbols to tell, the finding\n"
    "is kept as uncertain and fails only with --fail-on uncertain. Memory\n"
    "errors are kept when any of their stacks enters a target; an\n"
    "uninitialised value used inside Ruby's GC is Ruby's, unless the\n"
    "extension allocated its block (--track-origins=yes). A sanitizer's stack\n"
    "that stops short of main (its fast unwinder) is uncertain, and its frames\n"
    "are named and placed as Valgrind's (from the objects' symbols and DWARF).\n"
    "A directory gemleak run kept reads as the run read it, anywhere and any\n"
    "time: the objects and source lines its findings needed are recorded in it.\n"
    "A finding is placed at its first frame in the project's own source; the\n"
    "text marks the target's frames \" *\", those linked into it from elsewhere\n"
    "(Rust's standard library, a C++ template of the system) \" ~\".\n"
    "gemleak(1), RULES and ENGINES, give each rule and why.\n"
    "\n"
    "Examples:\n"
    "  gemleak filter --object redcarpet valgrind-xml/\n"
    "  gemleak filter -O redcarpet --format json -o leaks.json 1234.xml\n"
    "  gemleak filter -O redcarpet --format text --format json:leaks.json run/\n"
    "  gemleak filter --format sarif:gemleak.sarif shard-*/gemleak.json\n";

/* A run directory whose run ended before it named its reports' frames
 * (gemleak killed, a process still running as the command ended), its
 * engine's runtime having named none (GL_ENGINE_NAMES_FRAMES): named now,
 * in place, as the run would have, from the objects as they are now
 * (rebuilt since, they name what they hold now). */
static void name_run_dirs(const char *const *inputs, FILE *err)
{
    g_autoptr(GlDebugInfo) objects = NULL;
    for (const char *const *input = inputs; *input != NULL; input++) {
        if (strcmp(*input, "-") == 0 || !g_file_test(*input, G_FILE_TEST_IS_DIR))
            continue;
        if (objects == NULL)
            objects = gl_debuginfo_new();
        guint named = gl_sanitizer_name_run_dir(objects, *input, err);
        g_autofree char *shown = gl_text_escape(*input);
        if (named > 0)
            fprintf(err, "gemleak: note: %u report%s of %s had frames the run left unnamed: "
                    "named now, from the objects as they are\n", named, named == 1 ? "" : "s",
                    shown);
    }
}

int gl_cli_filter(int argc, char **argv, FILE *out, FILE *err)
{
    /* GOption's usage line names the program: make it the command. */
    g_set_prgname("gemleak filter");
    Options options;
    gl_cli_options_init(&options);
    g_autofree char *summary = filter_summary();
    g_autoptr(GOptionContext) context = gl_cli_new_context("FILE|DIR|-...", summary,
                                                    filter_description, filter_exit_statuses,
                                                    gl_cli_report_group(&options));
    g_autoptr(GError) error = NULL;
    Plan plan = { 0 };
    int status;
    g_auto(GStrv) args = gl_cli_parse_options(context, &options, argc, argv, &error);
    if (args == NULL) {
        status = gl_cli_fail(err, "filter", error);
        goto out;
    }
    if (options.help) {
        g_autofree char *help = g_option_context_get_help(context, TRUE, NULL);
        fputs(help, out);
        status = GL_EXIT_CLEAN;
        goto out;
    }
    /* GOption leaves the "--" it stopped at: what follows are inputs, even
     * those that start with a dash. */
    for (guint i = 1; args[i] != NULL; i++) {
        if (strcmp(args[i], "--") == 0) {
            g_free(args[i]);
            memmove(args + i, args + i + 1, (g_strv_length(args + i + 1) + 1) * sizeof *args);
            break;
        }
    }
    if (args[1] == NULL) {
        g_set_error(&error, GL_ERROR, GL_ERROR_USAGE,
                    "no input: give Valgrind XML files, directories of them, or - for "
                    "standard input");
        status = gl_cli_usage_error(err, "filter", error);
        goto out;
    }

    if (!gl_cli_plan_build(&options, (const char *const *) args + 1, &plan, &error) ||
        !(plan.sinks = gl_cli_plan_sinks(&options, &plan, (const char *const *) args + 1, NULL,
                                         out, out,
                                  &error))) {
        status = gl_cli_fail(err, "filter", error);
        goto out;
    }
    gl_cli_say_jobs_capped(&options, err);
    name_run_dirs((const char *const *) args + 1, err);
    Outcome outcome = { 0 };
    if (!gl_cli_analyze_and_report(&options, &plan, (const char *const *) args + 1, NULL, err,
                            &outcome, &error)) {
        status = gl_cli_fail(err, "filter", error);
        goto out;
    }
    status = outcome.status;
out:
    gl_cli_plan_clear(&plan);
    gl_cli_options_clear(&options);
    return status;
}
