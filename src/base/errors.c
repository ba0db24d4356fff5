/* The error domain and its mapping to exit statuses. */
#include "gemleak/base/errors.h"

G_DEFINE_QUARK(gemleak-error-quark, gl_error)

GlExitStatus gl_error_exit_status(const GError *error)
{
    if (error != NULL && error->domain == GL_ERROR && error->code == GL_ERROR_USAGE)
        return GL_EXIT_USAGE;
    /* GOptionContext's own parse errors are usage errors too. */
    if (error != NULL && error->domain == G_OPTION_ERROR)
        return GL_EXIT_USAGE;
    return GL_EXIT_ERROR;
}
