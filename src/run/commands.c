/* What gemleak run starts: files after :::, shards, balanced shares, the
 * loader of a bare ruby, the durations file. */
#include "gemleak/run/commands.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/programs.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"

#include <errno.h>
#include <math.h>  /* isfinite, a macro */
#include <string.h>
#include <sys/stat.h>

#include "gemleak/base/json.h"

/* A bare ruby takes its first file as the script and hands it the others
 * as ARGV, which a test file ignores: it would run one file of many. This
 * loads each of them as `ruby FILE` runs it ($0 and __FILE__ the name as
 * given: a body under `if __FILE__ == $0` runs), with ARGV emptied first
 * so that minitest or test-unit do not take the names for options or
 * tests of their own. */
#define RUBY_LOADER "files = ARGV.dup; ARGV.clear; files.each { |f| $0 = f; load f }"


void gl_command_plan_clear(GlCommandPlan *plan)
{
    if (plan->commands != NULL)
        g_ptr_array_unref(plan->commands);
    if (plan->shares != NULL)
        g_ptr_array_unref(plan->shares);
    if (plan->notes != NULL)
        g_ptr_array_unref(plan->notes);
    if (plan->costs != NULL)
        g_hash_table_unref(plan->costs);
    memset(plan, 0, sizeof *plan);
}

/* ---- --shard ---------------------------------------------------------------- */

typedef struct {
    const char *system;
    const char *index;
    const char *total;
    guint base;   /* what the first shard's index is */
} ShardVariables;

static const ShardVariables shard_variables[] = {
    { "GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1 },
    { "CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0 },
    { "Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0 },
};

static gboolean shard_auto(const char *const *env, guint *index, guint *count, char **source,
                           GError **error)
{
    g_auto(GStrv) own = env == NULL ? g_get_environ() : NULL;
    const char *const *vars = env != NULL ? env : (const char *const *) own;
    for (guint i = 0; i < G_N_ELEMENTS(shard_variables); i++) {
        const ShardVariables *v = &shard_variables[i];
        const char *index_text = g_environ_getenv((char **) vars, v->index);
        const char *total_text = g_environ_getenv((char **) vars, v->total);
        if (index_text == NULL && total_text == NULL)
            continue;
        guint64 at = 0, total = 0;
        if (index_text == NULL || total_text == NULL ||
            !g_ascii_string_to_unsigned(total_text, 10, 1, G_MAXUINT, &total, NULL) ||
            !g_ascii_string_to_unsigned(index_text, 10, v->base, total - 1 + v->base, &at, NULL)) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                        "--shard auto: %s=%s and %s=%s (%s) are not a shard: the index counts "
                        "from %u and stays below the total%s", v->index,
                        index_text != NULL ? index_text : "(unset)", v->total,
                        total_text != NULL ? total_text : "(unset)", v->system, v->base,
                        v->base == 1 ? " or equals it" : "");
            return FALSE;
        }
        *index = (guint) (at - v->base);
        *count = (guint) total;
        *source = g_strdup_printf("%s=%s and %s=%s (%s)", v->index, index_text, v->total,
                                  total_text, v->system);
        return TRUE;
    }
    *index = 0;
    *count = 1;
    *source = g_strdup("none of GitLab's CI_NODE_INDEX/CI_NODE_TOTAL, CircleCI's "
                       "CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL or Buildkite's "
                       "BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT is set");
    return TRUE;
}

gboolean gl_shard_parse(const char *text, const char *const *env, guint *index, guint *count,
                        char **source, GError **error)
{
    *source = NULL;
    if (strcmp(text, "auto") == 0)
        return shard_auto(env, index, count, source, error);
    guint64 i = 0, n = 0;
    g_auto(GStrv) parts = g_strsplit(text, "/", 2);
    if (parts[0] == NULL || parts[1] == NULL ||
        !g_ascii_string_to_unsigned(parts[0], 10, 1, G_MAXUINT, &i, NULL) ||
        !g_ascii_string_to_unsigned(parts[1], 10, 1, G_MAXUINT, &n, NULL) || i > n) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--shard %s: give I/N with 1 <= I <= N, as in --shard 2/4, or auto (from "
                    "the CI system's variables)", text);
        return FALSE;
    }
    *index = (guint) i - 1;
    *count = (guint) n;
    return TRUE;
}

/* ---- a bare ruby ------------------------------------------------------------ */

/* Returns: TRUE if @name is one of Ruby's long options that take a value:
 * "--NAME=VALUE", or "--NAME VALUE" with the next word, whatever it is
 * (GL_PROTO_RUBY_LONG_WITH_VALUE). --enable and --disable also take
 * "--enable-VALUE". */
static gboolean long_with_value(const char *name)
{
    gsize n = strlen(name);
    for (const char *word = GL_PROTO_RUBY_LONG_WITH_VALUE; *word != '\0';) {
        gsize length = strcspn(word, " ");
        if (length == n && n > 0 && strncmp(word, name, n) == 0)
            return TRUE;
        word += length + (word[length] == ' ');
    }
    return FALSE;
}

/* Reads one word of Ruby's options, as ruby.c's proc_options does.
 * Returns: how many words it takes (1, or 2 when its value is the next
 * word), and *script TRUE when it gives the script itself (-e, -S: the
 * files are theirs) or standard input ("-"). */
static guint ruby_option(const char *arg, gboolean *script)
{
    if (arg[1] == '\0') {
        *script = TRUE;   /* "-": the script is standard input */
        return 1;
    }
    if (arg[1] == '-') {
        if (long_with_value(arg + 2))
            return 2;
        return 1;   /* --NAME=VALUE, --enable-X, --verbose, --jit... */
    }
    /* A cluster of one-letter options: -wIlib is -w -Ilib. */
    for (const char *c = arg + 1; *c != '\0'; c++) {
        switch (*c) {
        case 'e':
        case 'S':
            *script = TRUE;
            return 1;
        case 'C': case 'X': case 'E': case 'I': case 'r':
            /* the rest of the word, or else the next word */
            return c[1] != '\0' ? 1 : 2;
        case 'x': case 'i': case 'F':
            return 1;   /* the rest of the word, if any */
        case 'W':
            if (c[1] == ':')
                return 1;   /* -W:no-deprecated */
            while (c[1] >= '0' && c[1] <= '9')
                c++;
            break;
        case '0':
            while (c[1] >= '0' && c[1] <= '7')
                c++;
            break;
        case 'K':
            if (c[1] != '\0')
                c++;
            break;
        default:
            break;   /* -w, -v, -d, -l, -n, -p, -a, -c, -s, -y ... */
        }
    }
    return 1;
}

/* Returns: the index of the ruby in @command (before @end) that runs
 * with no script of its own, or -1: "ruby [OPTIONS]", also after
 * "bundle exec". A script, -e or -S (rspec, rake) takes the files itself.
 * *options_end is where Ruby's options end: "--", or @end; a loader goes
 * there, before any "--". */
static int bare_ruby(char **command, guint end, guint *options_end)
{
    guint at = 0;
    *options_end = end;
    if (end >= 2) {
        g_autofree char *base = g_path_get_basename(command[0]);
        if (strcmp(base, "bundle") == 0 && strcmp(command[1], "exec") == 0)
            at = 2;
    }
    if (at >= end || !gl_is_ruby_object(command[at]))
        return -1;
    for (guint i = at + 1; i < end;) {
        const char *arg = command[i];
        if (strcmp(arg, "--") == 0) {
            *options_end = i;
            return i + 1 < end ? -1 : (int) at;   /* the word after it is the script */
        }
        if (arg[0] != '-')
            return -1;   /* the script */
        gboolean script = FALSE;
        i += ruby_option(arg, &script);
        if (script)
            return -1;
    }
    return (int) at;
}

gboolean gl_command_reads_stdin(char **command)
{
    guint end = g_strv_length(command);
    guint options_end = 0;
    if (bare_ruby(command, end, &options_end) >= 0)
        return TRUE;
    /* "ruby [OPTIONS] -" and "ruby [OPTIONS] -- -": the script is "-" */
    for (guint i = 1; i < end; i++)
        if (strcmp(command[i], "-") == 0)
            return gl_is_ruby_object(command[0]) ||
                   (i > 2 && strcmp(command[1], "exec") == 0 && gl_is_ruby_object(command[2]));
    return FALSE;
}

/* ---- shares ------------------------------------------------------------------- */

static gdouble file_size(const char *file)
{
    struct stat st;
    return stat(file, &st) == 0 && st.st_size > 0 ? (gdouble) st.st_size : 1;
}

/* Returns: (transfer full): file -> gdouble*, what each of @files is
 * expected to cost: its recorded seconds; else its size at the rate
 * (seconds a byte) of the files that have seconds; else, when none has
 * any, its size. */
static GHashTable *file_costs(GPtrArray *files, GHashTable *durations)
{
    GHashTable *costs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    gdouble known_seconds = 0, known_bytes = 0;
    guint known = 0;
    for (guint i = 0; durations != NULL && i < files->len; i++) {
        const gdouble *seconds = g_hash_table_lookup(durations, g_ptr_array_index(files, i));
        if (seconds != NULL) {
            known_seconds += *seconds;
            known_bytes += file_size(g_ptr_array_index(files, i));
            known++;
        }
    }
    for (guint i = 0; i < files->len; i++) {
        const char *file = g_ptr_array_index(files, i);
        const gdouble *seconds = durations != NULL ? g_hash_table_lookup(durations, file) : NULL;
        gdouble cost;
        if (seconds != NULL)
            cost = *seconds;
        else if (known > 0 && known_seconds > 0)
            cost = file_size(file) * known_seconds / known_bytes;
        else if (known > 0)
            cost = 0;
        else
            cost = file_size(file);
        g_hash_table_insert(costs, g_strdup(file), g_memdup2(&cost, sizeof cost));
    }
    return costs;
}

typedef struct {
    guint index;    /* in the order given */
    gdouble cost;
} Weighed;

static gint heaviest_first(gconstpointer a, gconstpointer b)
{
    const Weighed *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Deals @files (with @costs) into @n bins, heaviest file first into the
 * lightest bin (ties: the first), which keeps the largest bin within 4/3
 * of the best split. Each bin keeps the files in the order given.
 * Returns: (transfer full): for each file, its bin. */
static guint *deal(GPtrArray *files, GHashTable *costs, guint n)
{
    GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(Weighed), files->len);
    for (guint i = 0; i < files->len; i++) {
        Weighed w = { i, *(const gdouble *) g_hash_table_lookup(costs, g_ptr_array_index(files, i)) };
        g_array_append_val(order, w);
    }
    g_array_sort(order, heaviest_first);
    GArray *load = g_array_new(FALSE, TRUE, sizeof(gdouble));
    g_array_set_size(load, n);
    guint *bin = g_new0(guint, MAX(files->len, 1));
    for (guint i = 0; i < order->len; i++) {
        const Weighed *w = &g_array_index(order, Weighed, i);
        guint lightest = 0;
        for (guint b = 1; b < n; b++)
            if (g_array_index(load, gdouble, b) < g_array_index(load, gdouble, lightest))
                lightest = b;
        g_array_index(load, gdouble, lightest) += w->cost;
        bin[w->index] = lightest;
    }
    g_array_unref(load);
    g_array_unref(order);
    return bin;
}

/* Picks this shard's part of the files after ::: (at @separator in
 * @command), and notes in @plan the shard and how many files there were.
 * Returns: (transfer container): the files, pointers into @command; NULL
 * with @error set when --shard is wrong or leaves the shard no file. */
static GPtrArray *shard_files(char **command, guint separator, const GlCommandOptions *options,
                              GlCommandPlan *plan, GError **error)
{
    g_autofree char *source = NULL;
    if (options->shard != NULL &&
        !gl_shard_parse(options->shard, options->env, &plan->shard, &plan->shards, &source,
                        error))
        return NULL;
    if (source != NULL)
        g_ptr_array_add(plan->notes, g_strdup_printf("--shard auto: shard %u of %u, from %s",
                                                     plan->shard + 1, plan->shards, source));
    g_autoptr(GPtrArray) all = g_ptr_array_new();
    for (char **file = command + separator + 1; *file != NULL; file++)
        g_ptr_array_add(all, *file);
    plan->n_files = all->len;

    /* The shard's part, by size alone: every shard must make the same
     * split from the same checkout, whatever durations each machine kept. */
    g_autoptr(GPtrArray) files = g_ptr_array_new();
    {
        g_autoptr(GHashTable) sizes = file_costs(all, NULL);
        guint *bin = deal(all, sizes, plan->shards);
        for (guint i = 0; i < all->len; i++)
            if (bin[i] == plan->shard)
                g_ptr_array_add(files, g_ptr_array_index(all, i));
        g_free(bin);
    }
    if (files->len == 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "no files to run after ::: (for shard %u of %u: %u file%s for %u shards)",
                    plan->shard + 1, plan->shards, all->len, all->len == 1 ? "" : "s",
                    plan->shards);
        return NULL;
    }
    return g_steal_pointer(&files);
}

/* Deals @files among the jobs (options->jobs, at most one a file) by what
 * each is expected to cost, and adds to @plan each job's command: the
 * command before ::: (at @separator in @command), a bare ruby given
 * gemleak's loader, then the job's files, which are also its share. */
static void plan_jobs(char **command, guint separator, const GlCommandOptions *options,
                      GlCommandPlan *plan, GPtrArray *files)
{
    g_autofree char *note = NULL;
    g_autoptr(GHashTable) durations = options->durations != NULL
        ? gl_durations_load(options->durations, &note) : NULL;
    if (note != NULL)
        g_ptr_array_add(plan->notes, g_steal_pointer(&note));
    g_hash_table_unref(plan->costs);
    plan->costs = file_costs(files, durations);
    guint jobs = MIN(MAX(options->jobs, 1), files->len);
    guint *bin = deal(files, plan->costs, jobs);

    guint options_end = separator;
    int ruby = bare_ruby(command, separator, &options_end);
    if (ruby >= 0)
        g_ptr_array_add(plan->notes, g_strdup_printf(
            "%s takes one script and gives it the other files as arguments: gemleak loads "
            "the files after ::: itself (-e '%s')", command[ruby], RUBY_LOADER));
    for (guint j = 0; j < jobs; j++) {
        GPtrArray *argv = g_ptr_array_new();
        GPtrArray *share = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < separator; i++) {
            if (ruby >= 0 && i == options_end) {
                g_ptr_array_add(argv, g_strdup("-e"));
                g_ptr_array_add(argv, g_strdup(RUBY_LOADER));
            }
            g_ptr_array_add(argv, g_strdup(command[i]));
        }
        if (ruby >= 0 && options_end == separator) {
            g_ptr_array_add(argv, g_strdup("-e"));
            g_ptr_array_add(argv, g_strdup(RUBY_LOADER));
        }
        for (guint i = 0; i < files->len; i++) {
            if (bin[i] != j)
                continue;
            g_ptr_array_add(argv, g_strdup(g_ptr_array_index(files, i)));
            g_ptr_array_add(share, g_strdup(g_ptr_array_index(files, i)));
        }
        g_ptr_array_add(argv, NULL);
        g_ptr_array_add(plan->commands, g_ptr_array_free(argv, FALSE));
        g_ptr_array_add(plan->shares, share);
    }
    g_free(bin);
}

gboolean gl_commands_plan(char **command, const GlCommandOptions *options, GlCommandPlan *plan,
                          GError **error)
{
    memset(plan, 0, sizeof *plan);
    plan->commands = g_ptr_array_new_with_free_func((GDestroyNotify) g_strfreev);
    plan->shares = g_ptr_array_new_with_free_func((GDestroyNotify) g_ptr_array_unref);
    plan->notes = g_ptr_array_new_with_free_func(g_free);
    plan->costs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    plan->shards = 1;
    guint separator = 0;
    while (command[separator] != NULL && strcmp(command[separator], ":::") != 0)
        separator++;
    if (command[separator] == NULL) {
        if (options->shard != NULL) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                        "--shard needs the test files after :::, as in "
                        "gemleak run --shard 1/2 -- rspec ::: spec/*_spec.rb");
            gl_command_plan_clear(plan);
            return FALSE;
        }
        g_ptr_array_add(plan->commands, g_strdupv(command));
        g_ptr_array_add(plan->shares, g_ptr_array_new());
        return TRUE;
    }
    if (separator == 0) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "no command before :::");
        gl_command_plan_clear(plan);
        return FALSE;
    }
    plan->has_files = TRUE;
    g_autoptr(GPtrArray) files = shard_files(command, separator, options, plan, error);
    if (files == NULL) {
        gl_command_plan_clear(plan);
        return FALSE;
    }
    plan_jobs(command, separator, options, plan, files);
    return TRUE;
}
