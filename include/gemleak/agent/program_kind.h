/* What kind of program an exec starts: one the dynamic loader runs, which
 * loads what LD_PRELOAD names (gemleak's library, and with it what gives
 * a Ruby below it the run's variables back), or a static one, which the
 * kernel runs itself and LD_PRELOAD never reaches: a launcher built
 * statically (busybox's env -i, Go's and Rust's static programs) that
 * clears the environment would start a Ruby outside the engine. Such a
 * program gemleak's guard follows (src/agent/guard.c).
 *
 * Nothing here allocates: the library gemleak preloads asks it in an exec,
 * which may run in the child of a vfork. Built into that library, the
 * guard and gemleak. */
#ifndef GEMLEAK_PROGRAM_KIND_H
#define GEMLEAK_PROGRAM_KIND_H

#include <stddef.h>

/* Returns: 1 when the ELF file open at @fd is a static program: it names
 * no interpreter (PT_INTERP) and is not itself a dynamic loader (a shared
 * object with a DT_SONAME, as ld.so run by its path is, which reads
 * LD_PRELOAD); 0 otherwise, not ELF or unreadable included. */
int gl_program_fd_is_static(int fd);

/* Returns: 1 when an exec of @path would run a static program the guard
 * can follow: a static ELF program, or a script whose interpreter (#!,
 * followed as the kernel follows it) is one; 0 otherwise: a dynamic
 * program, one that cannot be read or run, one on a filesystem mounted
 * noexec, and a setuid or setgid one (which a tracer would run without
 * its privileges: it ignores LD_PRELOAD, as ever). */
int gl_program_is_static(const char *path);

/* Returns: 1 when an exec of @path runs a Ruby itself: a dynamic ELF
 * program (the dynamic loader reads LD_PRELOAD for it; not a script, whose
 * interpreter runs first) whose file name is one of Ruby's executables
 * (GL_PROTO_RUBY_PROGRAMS, as gemleak tells a Ruby command: ruby, ruby3.1,
 * ruby-3.4.5), readable, not setuid or setgid; 0 otherwise. */
int gl_program_is_ruby(const char *path);

/* Returns: 1 when the base name of @path (what follows its last '/') is one
 * of the blank-separated names or globs of @list ('*' and "[0-9]" ranges:
 * GL_PROTO_RUBY_PROGRAMS, GL_PROTO_LAUNCHERS), 0 otherwise. */
int gl_program_name_in(const char *path, const char *list);

/* Finds @file as execvp() does: @file itself when it holds a '/', else
 * the first executable regular file of that name in the directories of
 * @search (PATH's value; NULL: the C library's default, "/bin:/usr/bin";
 * an empty entry is the current directory), written to @out (@size
 * bytes).
 * Returns: 0, or -1 when there is none (or it does not fit). */
int gl_program_find(const char *file, const char *search, char *out, size_t size);

#endif
