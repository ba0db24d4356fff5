/* Which program a path names (programs.h). */
#include "gemleak/base/programs.h"
#include "gemleak/base/text.h"

#include <fnmatch.h>

/* Ruby's executable and shared library under the names distributions give
 * them: ruby, ruby3.1, libruby.so.3.3.0, libruby-3.1.so.3.1.2. */
static const char *const ruby_object_globs[] = {
    "ruby", "ruby[0-9]*", "ruby-[0-9]*", "libruby.so*", "libruby-*.so*", "libruby[0-9]*.so*",
    NULL,
};

gboolean gl_is_ruby_object(const char *path)
{
    if (path == NULL)
        return FALSE;
    const char *name = gl_base_name(path);
    for (const char *const *glob = ruby_object_globs; *glob != NULL; glob++)
        if (fnmatch(*glob, name, 0) == 0)
            return TRUE;
    return FALSE;
}
