/* Which program a path names (programs.h). */
#include "gemleak/base/programs.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/text.h"

#include <fnmatch.h>
#include <string.h>

gboolean gl_is_ruby_object(const char *path)
{
    if (path == NULL)
        return FALSE;
    const char *name = gl_base_name(path);
    /* Ruby's executable and shared library, as the helper knows them too */
    for (const char *glob = GL_PROTO_RUBY_PROGRAMS; *glob != '\0';) {
        size_t length = strcspn(glob, " ");
        char one[64];
        g_assert(length < sizeof one);
        memcpy(one, glob, length);
        one[length] = '\0';
        if (fnmatch(one, name, 0) == 0)
            return TRUE;
        glob += length + strspn(glob + length, " ");
    }
    return FALSE;
}
