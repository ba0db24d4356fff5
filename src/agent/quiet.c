/* Preloaded (LD_PRELOAD) into every process of a gemleak run, so that what
 * gemleak asks of Ruby leaves the suite's output as it was.
 *
 * gemleak runs the suite with RUBY_FREE_AT_EXIT set, for Ruby 3.4+ to free
 * its own memory at exit. Ruby 3.4 then writes "PROGRAM: warning: Free at
 * exit is experimental and may be unstable" to standard error the moment
 * it starts (ruby.c, ruby_process_options), before it reads an option or
 * RUBYOPT: -W:no-experimental comes too late, and gemleak's helper is not
 * loaded yet. A suite that asserts a child Ruby's standard error is empty
 * (assert_separately, assert_in_out_err) fails on it. Ruby writes it with
 * fwrite() to stderr, which this library's fwrite() sees first.
 *
 * It drops that line and nothing else: only in a process whose
 * RUBY_FREE_AT_EXIT is the value gemleak sets (GL_PROTO_FREE_AT_EXIT_VALUE;
 * a suite that sets the variable itself, as Ruby's own test of the warning
 * does, gets the warning), only as the process's first write to stderr
 * through fwrite(), and only when it is the warning byte for byte, after
 * the program's name as Ruby gives it (its argv[0]). Every other write
 * goes to the C library's fwrite() untouched.
 *
 * Built on its own, like the client library: no GLib; it runs in every
 * program the suite starts. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemleak/base/protocol.h"

/* Ruby 3.4's text (ruby.c: rb_category_warn(RB_WARN_CATEGORY_EXPERIMENTAL,
 * ...)), after "PROGRAM: ". */
#define WARNING ": warning: Free at exit is experimental and may be unstable\n"

typedef size_t (*Fwrite)(const void *, size_t, size_t, FILE *);

/* Not in a header: the C library's, replaced. */
size_t fwrite(const void *data, size_t size, size_t count, FILE *stream);

static Fwrite next_fwrite;

/* The fwrite after this library's: the C library's (a sanitizer runtime
 * preloaded before this library calls this one). Resolved when first
 * needed too: another library's constructor may write before this one's
 * runs. */
static Fwrite find_fwrite(void)
{
    if (next_fwrite == NULL)
        next_fwrite = (Fwrite) (uintptr_t) dlsym(RTLD_NEXT, "fwrite");
    return next_fwrite;
}

/* argv[0] while stderr has not been written to through fwrite() in a
 * process that gemleak gave its RUBY_FREE_AT_EXIT; NULL otherwise. Ruby is
 * one thread when it warns. */
static const char *program;

/* glibc calls a preloaded library's constructors with the program's
 * arguments, before main(). */
__attribute__((constructor)) static void quiet_start(int argc, char **argv, char **envp)
{
    (void) envp;
    find_fwrite();
    const char *value = getenv("RUBY_FREE_AT_EXIT");
    if (argc > 0 && argv != NULL && argv[0] != NULL && value != NULL &&
        strcmp(value, GL_PROTO_FREE_AT_EXIT_VALUE) == 0)
        program = argv[0];
}

/* Returns: nonzero when @data (@length bytes) is Ruby's warning for
 * @name. Ruby has not touched argv[0] yet when it warns ($0 = rewrites it
 * later). */
static int is_the_warning(const char *data, size_t length, const char *name)
{
    size_t name_length = strlen(name);
    size_t warning_length = sizeof WARNING - 1;
    return length == name_length + warning_length && memcmp(data, name, name_length) == 0 &&
           memcmp(data + name_length, WARNING, warning_length) == 0;
}

size_t fwrite(const void *data, size_t size, size_t count, FILE *stream)
{
    if (stream == stderr && program != NULL) {
        const char *name = program;
        program = NULL;  /* only the first write is looked at */
        size_t length = 0;
        if (!__builtin_mul_overflow(size, count, &length) &&
            is_the_warning(data, length, name))
            return count;
    }
    Fwrite next = find_fwrite();
    return next != NULL ? next(data, size, count, stream) : 0;
}
