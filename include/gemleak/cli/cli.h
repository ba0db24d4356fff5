/* The command line. main() is a call to gemleak_main(), which the tests and
 * the fuzzer call in-process too. */
#ifndef GEMLEAK_CLI_H
#define GEMLEAK_CLI_H

#include <stdio.h>

/* Runs "gemleak ARGS..." with @out and @err as standard output and error.
 * Returns: the exit status (see GlExitStatus). */
int gemleak_main(int argc, char **argv, FILE *out, FILE *err);

#endif
