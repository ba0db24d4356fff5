/* What `gemleak run` starts: the files after ::: in a command, the CI
 * shard they belong to, their shares among --jobs processes balanced by
 * what each file cost before, the loader a bare ruby needs, and the
 * durations file that remembers those costs. Knows nothing of Valgrind. */
#ifndef GEMLEAK_COMMANDS_H
#define GEMLEAK_COMMANDS_H

#include <glib.h>

/* The durations file's name, in the current directory, when the user
 * names none. */
#define GL_DURATIONS_FILE ".gemleak-durations.json"

typedef struct {
    const char *shard;          /* --shard: "I/N" or "auto"; NULL: every file */
    guint jobs;                 /* how many commands may run at once, 1 or more */
    const char *durations;      /* the durations file; NULL: balance by size alone */
    const char *const *env;     /* the environment --shard auto reads; NULL: gemleak's own */
} GlCommandOptions;

typedef struct {
    GPtrArray *commands;   /* GStrv each: what to run, in order */
    GPtrArray *shares;     /* GPtrArray of char*, one a command: its files (empty without :::) */
    gboolean has_files;    /* the command had files after ::: */
    guint shard, shards;   /* this shard (from 0) of how many; 0 of 1 without --shard */
    guint n_files;         /* files after :::, before the shard took its part */
    GHashTable *costs;     /* file -> gdouble*: what each file of this shard was planned to
                            * cost (seconds, or bytes scaled to seconds) */
    GPtrArray *notes;      /* char*: what the user should be told (a loader added, a
                            * durations file ignored, the shard's CI variables) */
} GlCommandPlan;

/* Plans the commands for @command (a NULL-terminated argv, possibly
 * holding ":::" and files after it) as @options say. Files are given to
 * shards by size (every shard computes the same split from the checkout
 * alone), then within the shard to --jobs commands by cost: the seconds
 * the durations file remembers, else the file's size. A bare ruby (no
 * script, no -e, no -S), which would run the first file and give it the
 * others as ARGV, gets a loader that requires each file.
 * Returns: FALSE with GL_ERROR_USAGE set when @command or --shard is
 * wrong; @plan is then cleared. Free with gl_command_plan_clear(). */
/* Returns: TRUE if @command (NULL-terminated) is a Ruby that reads its
 * script from standard input: "ruby -", or ruby with no script, -e or -S
 * (also after "bundle exec"). */
gboolean gl_command_reads_stdin(char **command);

gboolean gl_commands_plan(char **command, const GlCommandOptions *options, GlCommandPlan *plan,
                          GError **error);

void gl_command_plan_clear(GlCommandPlan *plan);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(GlCommandPlan, gl_command_plan_clear)

/* Parses --shard: "I/N" (1 <= I <= N), or "auto", which reads the CI
 * system's variables from @env (NULL: gemleak's environment): GitLab's
 * CI_NODE_INDEX (from 1) and CI_NODE_TOTAL, CircleCI's CIRCLE_NODE_INDEX
 * (from 0) and CIRCLE_NODE_TOTAL, Buildkite's BUILDKITE_PARALLEL_JOB
 * (from 0) and BUILDKITE_PARALLEL_JOB_COUNT. None set: 0 of 1, and
 * *source says so.
 * Returns: FALSE with GL_ERROR_USAGE; else *index (from 0), *count and
 * *source (transfer full, nullable: where auto found them). */
gboolean gl_shard_parse(const char *text, const char *const *env, guint *index, guint *count,
                        char **source, GError **error);

/* Reads the durations file @path: a regular file, within the size and
 * depth limits of every JSON file gemleak reads.
 * Returns: (transfer full) (nullable): file name -> seconds (a gdouble*);
 * NULL when there is none, or when it is not gemleak's (then *note, if
 * given, says why: it is ignored, never fatal). */
GHashTable *gl_durations_load(const char *path, char **note);

/* Records what each file of @plan cost: what the helper timed its tests
 * at (@measured, nullable: absolute path -> gdouble* seconds), else a
 * part of the rest of its command's time (@seconds, one a command, in
 * order) in proportion to the cost it was planned with. The file is read
 * again just before, so
 * that runs at once lose nothing but their own race, and replaced
 * through a file beside it and a rename (a symbolic link's target, the
 * link left as it is). A file that is not gemleak's (or not a regular
 * file) is left alone. One that would grow past what gemleak reads keeps
 * the files of @plan alone.
 * Returns: FALSE with @error set when it cannot be written or is not gemleak's. */
gboolean gl_durations_update(const char *path, const GlCommandPlan *plan, const double *seconds,
                             GHashTable *measured, GError **error);

#endif
