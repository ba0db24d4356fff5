/* Error domain and exit statuses shared by every module. */
#ifndef GEMLEAK_ERRORS_H
#define GEMLEAK_ERRORS_H

#include <glib.h>

#define GL_ERROR (gl_error_quark())
GQuark gl_error_quark(void);

/* What went wrong, as far as a user needs to know. Every code but USAGE
 * maps to exit status 3 (GL_EXIT_ERROR). */
typedef enum {
    GL_ERROR_USAGE,         /* a bad option, argument or option value */
    GL_ERROR_IO,            /* a file or directory could not be opened, read or written */
    GL_ERROR_EMPTY,         /* an input holds no data at all */
    GL_ERROR_NOT_XML,       /* an input is not XML */
    GL_ERROR_WRONG_FORMAT,  /* not a format gemleak reads (XML, but not Valgrind's; JSON,
                             * but not gemleak's report) */
    GL_ERROR_WRONG_TOOL,    /* Valgrind XML written by a tool other than memcheck */
    GL_ERROR_TRUNCATED,     /* Valgrind XML that stops before the document ends */
    GL_ERROR_MALFORMED,     /* Valgrind XML that is broken part way through */
    GL_ERROR_LIMIT,         /* an input exceeds a safety limit (entity expansion, depth) */
    GL_ERROR_ENVIRONMENT,   /* Valgrind or Ruby missing or unusable, no target known */
    GL_ERROR_CHILD,         /* the command under Valgrind could not be run or wrote nothing */
} GlErrorCode;

/* The process exit statuses, documented in --help, the README and gemleak(1). */
typedef enum {
    GL_EXIT_CLEAN = 0,     /* nothing found (run: and the command passed) */
    GL_EXIT_FINDINGS = 1,  /* genuine findings (the gate failed; run: the command passed) */
    GL_EXIT_USAGE = 2,     /* usage error */
    GL_EXIT_ERROR = 3,     /* an input could not be read or was not complete
                            * Valgrind XML, or the environment is unusable,
                            * and the gate did not fail */
    GL_EXIT_COMMAND_FAILED = 4,  /* run: the command failed, the gate did not */
    GL_EXIT_FINDINGS_AND_COMMAND_FAILED = 5,  /* run: both failed */
} GlExitStatus;

/* Returns: the exit status a GError of GL_ERROR (or any other domain) stands for. */
GlExitStatus gl_error_exit_status(const GError *error);

#endif
