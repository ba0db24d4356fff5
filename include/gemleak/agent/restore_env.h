/* The run's variables given back to a program started with an environment
 * of its own (GL_PROTO_RESTORE_VARIABLE, gemleak/base/protocol.h): one
 * logic for the two places that do it, the library gemleak preloads into
 * every process (src/agent/restore.c, at each exec* and posix_spawn*)
 * and the guard that follows a static program (src/agent/guard.c, at
 * each execve the program makes).
 *
 * Nothing here allocates or needs more than the C library's string
 * functions and write(): an exec may run in the child of a vfork. Built
 * into both of those and into gemleak (its unit tests). */
#ifndef GEMLEAK_RESTORE_ENV_H
#define GEMLEAK_RESTORE_ENV_H

#include <stddef.h>

/* One variable of the run, as GEMLEAK_RESTORE gives it. */
typedef struct {
    char how;            /* GL_PROTO_RESTORE_SET, _FRONT or _BACK */
    const char *name;
    size_t name_length;
    const char *value;
} GlRestoreEntry;

#define GL_RESTORE_MAX_ENTRIES 32

typedef struct {
    GlRestoreEntry entries[GL_RESTORE_MAX_ENTRIES];
    size_t n;
} GlRestoreSet;

/* Fills @set from @list, GEMLEAK_RESTORE's value, split in place: the
 * entries point into it, which the caller keeps as long as @set. @whole
 * (nullable), the unsplit value, kept too, adds GEMLEAK_RESTORE itself, so
 * that it reaches what the program starts in turn. */
void gl_restore_parse(GlRestoreSet *set, char *list, const char *whole);

/* Returns: (transfer none) (nullable): @set's entry for the variable
 * @name, NULL when it gives it none. */
GlRestoreEntry *gl_restore_entry(GlRestoreSet *set, const char *name);

/* Returns: (transfer none) (nullable): the value @set gives the variable
 * @name, NULL when it gives it none. */
const char *gl_restore_value(const GlRestoreSet *set, const char *name);

/* Returns: (transfer none) (nullable): under a sanitizer's engine, the
 * LD_PRELOAD a Ruby of the run starts with (the runtime and what gemleak
 * preloads with it), as @engine_command (GEMLEAK_ENGINE_COMMAND's value,
 * nullable) gives it: "ENV<sep>LD_PRELOAD=LIST", LIST returned, pointing
 * into @engine_command; NULL for any other command (Valgrind's, which
 * follows every exec itself) or none. */
const char *gl_restore_engine_preload(const char *engine_command);

/* Returns: how many bytes the variables @envp (nullable: none) lacks of
 * @set need ("NAME=VALUE" and its NUL each), 0 when it lacks none; in
 * *@count how many variables @envp has. */
size_t gl_restore_size(const GlRestoreSet *set, char *const envp[], size_t *count);

/* Fills @vars (*count + @set->n + 1 slots) and @text (gl_restore_size()
 * bytes) with @envp, the run's variables given back: a variable @envp
 * lacks is set, RUBYOPT gets gemleak's part in front of its own switches,
 * LD_PRELOAD and the runtimes' options gemleak's after theirs (the
 * runtimes read an option's last value); the others are @envp's own
 * strings, in their order. */
void gl_restore_fill(const GlRestoreSet *set, char *const envp[], char **vars, char *text);

/* Appends @parts (NULL-terminated), joined, as a line to the run
 * directory's outside-@pid.txt (in GEMLEAK_RUN_DIR as @set gives it): the
 * sentence gemleak says of a process whose programs ran outside the
 * engine, which makes the run INCOMPLETE. A control character of a part
 * (a path's) is written as '?': the line is one line.
 * Returns: 0, or -1 when it could not be written. */
int gl_restore_say_outside(const GlRestoreSet *set, long pid, const char *const *parts);

/* Says so (gl_restore_say_outside()) of process @pid, which runs the
 * static @program, which nothing of gemleak's follows, because @why: "it
 * ran the static program PROGRAM, which LD_PRELOAD does not reach, and
 * gemleak could not follow what it started (WHY)".
 * Returns: 0, or -1 when it could not be written. */
int gl_restore_say_unfollowed(const GlRestoreSet *set, long pid, const char *program,
                              const char *why);

#endif
