/* What the suites of run/ that plan commands share (plan_util.h). */
#include "plan_util.h"

#include <glib/gstdio.h>

char *gl_test_words(GStrv command, guint from)
{
    return g_strjoinv(" ", command + from);
}

char *gl_test_files_of_sizes(const gsize *sizes, guint n)
{
    char *dir = gl_test_tmpdir();
    ck_assert_int_eq(g_chdir(dir), 0);
    for (guint i = 0; i < n; i++) {
        g_autofree char *name = g_strdup_printf("%c.rb", 'a' + i);
        g_autofree char *text = g_strnfill(sizes[i], '#');
        gl_test_write(name, text, -1);
    }
    return dir;
}

void gl_test_plan_ok(char **command, const GlCommandOptions *options, GlCommandPlan *plan)
{
    g_autoptr(GError) error = NULL;
    ck_assert_msg(gl_commands_plan(command, options, plan, &error), "%s",
                  error != NULL ? error->message : "");
}
