/* A run's helper directory, for the suites of run/ (helper_util.h). */
#include <unistd.h>

#include "helper_util.h"
#include "testutil.h"
#include "../../src/run/runner_int.h"

char *gl_test_written_helper(gboolean client)
{
    int lock = -1;
    g_autoptr(GError) error = NULL;
    char *dir = gl_run_write_helper(client, &lock, &error);
    ck_assert_msg(dir != NULL, "%s", error != NULL ? error->message : "");
    close(lock);
    return dir;
}
