/* The classification rules as the user sets them: the target objects,
 * the functions to skip, the leak kinds, and the switches of rules 2 and
 * 3; and what Ruby's functions and objects are called. Built once, then
 * shared read-only by every thread's classifier (classify.h). */
#ifndef GEMLEAK_RULES_H
#define GEMLEAK_RULES_H

#include <glib.h>
#include "gemleak/base/programs.h"
#include "gemleak/base/record.h"

typedef struct GlRules GlRules;

/* Returns: (transfer full): rules with the defaults: definite leaks, every
 * memory error that enters a target, the rule that leaves out Ruby's own
 * memory (rule 2), no targets yet. Free with gl_rules_free(). */
GlRules *gl_rules_new(void);
void gl_rules_free(GlRules *rules);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlRules, gl_rules_free)

/* Adds a target object: a binary name as Ruby authors say it ("redcarpet"
 * matches .../redcarpet.so), a shell glob ("*\/redcarpet.so"; without a '/'
 * it is matched against the file name), a path (symlinks resolved), or a
 * regular expression written /REGEX/, matched anywhere in the path, the
 * file name or the name before its first dot ("/\Aredcarpet\z/").
 * Returns: FALSE with GL_ERROR_USAGE for an empty pattern or a /REGEX/
 * that does not compile. */
gboolean gl_rules_add_target(GlRules *rules, const char *pattern, GError **error);
guint gl_rules_n_targets(const GlRules *rules);

/* Returns: (transfer none): the patterns as given, in order. */
const char *gl_rules_target_pattern(const GlRules *rules, guint index);

/* Returns: TRUE if target @index matches the object @path. */
gboolean gl_rules_target_matches(const GlRules *rules, guint index, const char *path);

/* Functions to skip (--skip-function): a leak with a frame of one of these
 * between its allocation and its first target frame is skipped. Patterns
 * are shell globs ("rb_funcall*") or regular expressions written /REGEX/,
 * matched anywhere in the name as Ruby's Regexp#match?.
 * Returns: FALSE with GL_ERROR_USAGE for a /REGEX/ that does not compile. */
gboolean gl_rules_add_skip_function(GlRules *rules, const char *pattern, GError **error);
/* A file of patterns, one a line; '#' starts a comment.
 * Returns: FALSE with GL_ERROR_IO when it cannot be read, GL_ERROR_LIMIT
 * when it is larger than 1 MiB, GL_ERROR_USAGE for a bad pattern (named
 * with its FILE:LINE); the message names the option and the file. */
gboolean gl_rules_add_skip_functions_from_file(GlRules *rules, const char *path, GError **error);
/* The same from @length bytes of @data (which may hold NULs: a line ends at
 * one); @name names it in messages. */
gboolean gl_rules_add_skip_functions_from_data(GlRules *rules, const char *data, gsize length,
                                          const char *name, GError **error);
/* Turns off the rule that leaves out Ruby's own memory (rule 2,
 * --no-default-skips): only --skip-function patterns skip. */
void gl_rules_drop_ruby_memory_rule(GlRules *rules);

/* The functions of Ruby's API whose memory its headers say the caller
 * releases (rb_fd_init, rb_econv_open, ...), which rule 2 takes for
 * allocation functions: how many there are, and the glob of the @index-th,
 * with (nullable out) the header and the words that say so.
 * Returns: (transfer none): the glob. */
guint gl_rules_n_caller_owned(void);
const char *gl_rules_caller_owned(guint index, const char **header, const char **words);

/* The functions of Ruby's that allocate for their caller, as rule 2 takes
 * them (the allocation functions and the caller-owned ones), as globs:
 * what the allocation front watches an extension's calls of
 * (src/agent/alloc_via.c).
 * Returns: (transfer none): NULL-terminated, the process's for its life. */
const char *const *gl_rules_allocator_globs(void);

/* Returns: TRUE if @fn is one of Ruby's allocation functions (rule 2:
 * ruby_xmalloc and its family, their insides; allocation_functions in
 * rules.c), compiler suffixes aside: a frame between an allocator and the
 * code that asked for the block. */
gboolean gl_rules_is_allocation_function(const char *fn);

void gl_rules_set_leak_kinds(GlRules *rules, GlLeakKind kinds);
GlLeakKind gl_rules_get_leak_kinds(const GlRules *rules);
/* Parses Valgrind's spelling: "definite,possible", "all", "none".
 * Returns: FALSE with GL_ERROR_USAGE for an unknown kind. */
gboolean gl_leak_kinds_parse(const char *spec, GlLeakKind *kinds, GError **error);

/* Every memory error is kept, whether or not it enters a target. */
void gl_rules_set_all_errors(GlRules *rules, gboolean all_errors);
/* Ruby 3.4+ with RUBY_FREE_AT_EXIT=1 frees its own memory at exit, so every
 * leak that enters a target is kept: rule 2 (Ruby's own memory, and
 * --skip-function) and rule 3 (Init_) are off. */
void gl_rules_set_free_at_exit(GlRules *rules, gboolean free_at_exit);

/* --growth-min-bytes: a site grows only when the median of what each
 * repetition added is at least @bytes (default 1; judge/growth.h). */
void gl_rules_set_growth_min_bytes(GlRules *rules, guint64 bytes);
guint64 gl_rules_get_growth_min_bytes(const GlRules *rules);

#endif
