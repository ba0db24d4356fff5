/* What the suites of run/ that plan commands share (check_commands.c,
 * check_durations.c). */
#ifndef GEMLEAK_TESTS_PLAN_UTIL_H
#define GEMLEAK_TESTS_PLAN_UTIL_H

#include "testutil.h"
#include "gemleak/run/commands.h"

/* A command's words, NULL-terminated. */
#define ARGV(...) ((char *[]) { __VA_ARGS__, NULL })

/* Returns: (transfer full): the command's words from @from on, one string. */
char *gl_test_words(GStrv command, guint from);

/* A directory of files named a.rb, b.rb... of the given sizes, as the
 * current directory. Returns: (transfer full): the directory. */
char *gl_test_files_of_sizes(const gsize *sizes, guint n);

/* Plans @command with @options into @plan, which must succeed. */
void gl_test_plan_ok(char **command, const GlCommandOptions *options, GlCommandPlan *plan);

#endif
