/* What gemleak run says of a run on stderr, beside its reports: how it
 * ran (under which engine, with what, what ran outside it, what cut it
 * short), what the exact pass did, each extension not built for the
 * engine, and where the kept run directory is (compressed first). */
#include "cli_int.h"
#include "gemleak/base/sys.h"
#include "gemleak/judge/coverage.h"
#include "gemleak/read/run_dir.h"
#include "gemleak/run/rundir.h"

#include <string.h>

/* Returns: (transfer full): @path as a shell word to paste: as it is, in
 * quotes when the shell would read it otherwise, and as bash's $'...'
 * with every byte but printable ASCII escaped when a line cannot show it
 * as it is (a control character, which the terminal must not get raw: a
 * newline in a --keep-xml name once forged a line). */
static char *shell_word(const char *path)
{
    g_autofree char *shown = gl_text_escape(path);
    if (strcmp(shown, path) == 0)
        return strpbrk(path, " '\"\\$`!*?[]{}()<>|&;#~") != NULL ? g_shell_quote(path)
                                                              : g_strdup(path);
    g_autoptr(GString) word = g_string_new("$'");
    for (const char *c = path; *c != '\0'; c++) {
        unsigned char byte = (unsigned char) *c;
        if (*c == '\\' || *c == '\'')
            g_string_append_printf(word, "\\%c", *c);
        else if (byte < 0x20 || byte >= 0x7f)
            g_string_append_printf(word, "\\x%02x", byte);
        else
            g_string_append_c(word, *c);
    }
    g_string_append_c(word, '\'');
    return g_string_free(g_steal_pointer(&word), FALSE);
}

/* The engine's reports and what the run says of them, for a user who wants
 * them back: compressed first (a failing suite's XML is tens to hundreds
 * of MB, gzip makes it 20 to 50 times smaller, and gemleak filter reads it
 * as it is), and where it is, how large, and how to be rid of it: gemleak
 * clean removes the run directories gemleak made, never a --keep-xml one
 * (@by_user), which is the user's to remove. */
void gl_cli_keep_xml(FILE *err, const GlEngine *engine, const char *dir, gboolean by_user,
                     guint jobs)
{
    /* an engine that writes a report a process (NAME.PID) keeps a directory
     * of them; Valgrind's XML is one thing */
    g_autofree char *what = engine->facts.log != NULL
                                ? g_strdup_printf("%s's report directory", engine->facts.title)
                                : g_strdup(engine->facts.reports);
    GlCompressed compressed;
    gl_rundir_compress(dir, jobs, &compressed);
    for (guint i = 0; i < compressed.failures->len; i++) {
        g_autofree char *failure = gl_text_escape(g_ptr_array_index(compressed.failures, i));
        fprintf(err, "gemleak: warning: %s\n", failure);
    }
    g_autofree char *quoted = shell_word(dir);
    g_autofree char *shown = gl_text_escape(dir);
    g_autofree char *kept = gl_format_bytes(compressed.kept_bytes);
    g_autofree char *plain = gl_format_bytes(compressed.plain_bytes);
    g_autofree char *size = compressed.files > 0
        ? g_strdup_printf("%s, gzip-compressed from %s", kept, plain) : g_strdup(kept);
    fprintf(err, "gemleak: %s is kept in %s (%s; read it again with: gemleak "
            "filter %s; %s)\n",
            what, shown, size, quoted,
            by_user ? "yours to remove: gemleak clean leaves --keep-xml directories alone"
                    : "remove old runs with: gemleak clean");
    gl_compressed_clear(&compressed);
}

/* How the engine unwound: by frame pointers (@fast), with Ruby keeping
 * them (@frame_pointers) or not.
 * Returns: (transfer none): what the run's first line says of it. */
static const char *stacks_said(const GlEngine *engine, gboolean fast, gboolean frame_pointers)
{
    if (!gl_engine_supports(engine, GL_ENGINE_FAST_WITH_FRAME_POINTERS) &&
        !gl_engine_supports(engine, GL_ENGINE_EXACT_WHERE_LEAKED))
        return "";
    if (!fast)
        return "; exact stacks";
    return frame_pointers ? "; it keeps frame pointers: fast stacks" : "; fast stacks";
}

/* Says what the exact pass did (exact.h), when it ran. */
void gl_cli_say_exact(const GlExactResult *exact, FILE *err)
{
    if (exact->unrepeatable && exact->blocks + exact->hidden > 0)
        fprintf(err, "gemleak: exact stacks: the command reads its script from standard input, a "
                "pipe, and cannot run again to unwind the %u leaked block%s the fast pass had only "
                "part of a stack for: they never pass (give the script as a file, or ruby - < "
                "FILE, which gemleak reads again)\n", exact->blocks + exact->hidden,
                exact->blocks + exact->hidden == 1 ? "" : "s");
    if (exact->ran == 0)
        return;
    g_autoptr(GString) line = g_string_new("gemleak: exact stacks: ");
    if (exact->blocks > 0)
        g_string_append_printf(line, "the fast pass had only part of the stack%s of %u leaked "
                               "block%s", exact->blocks == 1 ? "" : "s", exact->blocks,
                               exact->blocks == 1 ? "" : "s");
    if (exact->hidden > 0)
        g_string_append_printf(line, "%s%u block%s allocated on a Fiber's or Ractor's stack %s "
                               "beyond its leak check", exact->blocks > 0 ? ", and " : "",
                               exact->hidden, exact->hidden == 1 ? "" : "s",
                               exact->hidden == 1 ? "was" : "were");
    gboolean one = exact->blocks + exact->hidden == 1;
    g_string_append_printf(line, "; %s ran again",
                           !exact->filtered ? "the command"
                           : one            ? "the tests that allocated it"
                                            : "the tests that allocated them");
    if (exact->filtered && exact->ran > 1)
        g_string_append(line, ", then every test (those alone did not settle them all)");
    g_string_append_printf(line, " (%.1f s, output discarded, status ignored), unwinding exactly ",
                           exact->seconds);
    if (exact->everywhere)
        g_string_append(line, "every allocation");
    else
        g_string_append_printf(line, "at %u allocation site%s only", exact->sites,
                               exact->sites == 1 ? "" : "s");
    if (exact->interrupted_by != 0)
        g_string_append_printf(line, ", until gemleak was interrupted by %s",
                               g_strsignal(exact->interrupted_by));
    else if (exact->timed_out)
        g_string_append(line, ", until it ran past its time and was ended");
    if (exact->blocks == 1)
        g_string_append(line, exact->given == 1 ? ": it got its whole stack"
                                                : ": it did not get its whole stack");
    else if (exact->blocks > 1)
        g_string_append_printf(line, ": %u of the %u got their whole stack", exact->given,
                               exact->blocks);
    if (exact->hidden > 0)
        g_string_append_printf(line, "%s %u of the %u hidden block%s %s lost again%s",
                               exact->blocks > 0 ? ";" : ":", exact->hidden_lost, exact->hidden,
                               exact->hidden == 1 ? "" : "s",
                               exact->hidden_lost == 1 ? "was" : "were",
                               exact->hidden_lost < exact->hidden
                                   ? ", the others stay unjudged, which never passes" : "");
    if (exact->unfinished > 0)
        g_string_append_printf(line, "; %u process%s of it left no finished report (killed or "
                               "crashed, or the disk is full)", exact->unfinished,
                               exact->unfinished == 1 ? "" : "es");
    if (exact->given < exact->blocks) {
        const char *verb = exact->unfinished > 0 || exact->interrupted_by != 0 ||
                                   exact->timed_out
                               ? "did not judge"
                               : "did not lose";
        guint left = exact->blocks - exact->given;
        if (exact->blocks == 1)
            g_string_append_printf(line, "; the run again %s it: it keeps the fast stack, cut "
                                   "short, which never passes", verb);
        else if (left == 1)
            g_string_append_printf(line, "; the run again %s the other one: it keeps the fast "
                                   "stack, cut short, which never passes", verb);
        else
            g_string_append_printf(line, "; the run again %s the other %u: they keep the fast "
                                   "stacks, cut short, which never pass", verb, left);
    }
    fprintf(err, "%s\n", line->str);
}

/* Says how the run went: under which engine, with what, what ran
 * outside it, and what cut it short. */
void gl_cli_say_how_it_ran(const GlRunOptions *run, const GlRunResult *result, guint n_supps,
                           const char *path_ruby, FILE *err)
{
    const GlEngine *engine = run->engine;
    const char *stacks = stacks_said(engine, run->fast_stacks, run->frame_pointers);
    /* What the processes ran, not what `ruby` on PATH is. */
    g_autofree char *ran = gl_run_dir_ruby_versions(result->dir);
    const char *ruby_version = ran != NULL ? ran : path_ruby;
    /* What the programs printed, and the runtime's path, escaped: a
     * program of the user's may print anything. */
    g_autofree char *found = gl_text_escape(result->engine_found != NULL ? result->engine_found
                                                                          : "");
    g_autofree char *ruby = gl_text_escape(ruby_version != NULL ? ruby_version : "unknown");
    if (gl_engine_supports(engine, GL_ENGINE_FOUND_IS_VERSION))
        fprintf(err, "gemleak: ran under %s %s", engine->facts.title, found);
    else
        fprintf(err, "gemleak: ran under %s (%s)", engine->facts.title, found);
    if (gl_engine_supports(engine, GL_ENGINE_OWN_PROGRAM))
        fprintf(err, " with %u suppression file%s", n_supps, n_supps == 1 ? "" : "s");
    fprintf(err, " (Ruby %s%s)", ruby, stacks);
    /* Said as a fact of the run: a build tool is left out on purpose. */
    if (result->untraced > 0)
        fprintf(err, "; as meant, %u process%s ran a build tool natively (a compiler or the "
                "like, which starts no Ruby)", result->untraced, result->untraced == 1 ? "" : "es");
    if (result->launcher != NULL) {
        g_autofree char *launcher = gl_text_escape(result->launcher);
        fprintf(err, "; %s ran natively, as a launcher, what it started under it "
                "(--trace-launchers: the launcher too)", launcher);
    }
    fputc('\n', err);
    if (engine->blind_to != NULL)
        fprintf(err, "gemleak: note: %s %s\n", engine->facts.title, engine->blind_to);
    if (result->helper_moved != NULL) {
        g_autofree char *tmp = gl_text_escape(result->helper_moved);
        fprintf(err, "gemleak: note: TMPDIR (%s) is mounted noexec, and the dynamic loader would "
                "refuse gemleak's libraries from there: they went to a directory it loads from\n",
                tmp);
    }
    if (result->unquiet != NULL) {
        g_autofree char *why = gl_text_escape(result->unquiet);
        fprintf(err, "gemleak: note: the dynamic loader refused gemleak's library (%s): on Ruby "
                "3.4, each Ruby process printed a warning about RUBY_FREE_AT_EXIT, which gemleak "
                "sets, on its standard error; set TMPDIR to a directory that is not mounted "
                "noexec\n", why);
    }
    if (result->interrupted_by != 0)
        fprintf(err, "gemleak: interrupted by %s: the report covers what %s finished "
                "writing\n", g_strsignal(result->interrupted_by), engine->facts.title);
    else if (result->killed_by != 0)
        fprintf(err, "gemleak: the command was killed by signal %d (%s)\n", result->killed_by,
                g_strsignal(result->killed_by));
    if (result->descendants_left && result->interrupted_by != 0)
        fprintf(err, "gemleak: processes the command started were still running when gemleak "
                "was interrupted: they were passed the signal, and their reports may be "
                "incomplete\n");
    else if (result->descendants_left)
        fprintf(err, "gemleak: processes the command started were still running a minute after "
                "it ended: their reports may be incomplete\n");
}

/* Says what was checked of each extension the run loaded that was not
 * built for @engine (@engine->facts.instrumented_prefix), and how to build it
 * so; the analysis makes the run INCOMPLETE for it. */
void gl_cli_say_uninstrumented(const GlEngine *engine, const char *dir, gboolean leaks,
                               const char *ruby, FILE *err)
{
    if (engine->facts.instrumented_prefix == NULL)
        return;
    g_autoptr(GPtrArray) uninstrumented = gl_coverage_uninstrumented(
        dir, engine->facts.instrumented_prefix, NULL, NULL, NULL);
    /* by name (the run's problems name them in the order the processes loaded them) */
    g_ptr_array_sort(uninstrumented, gl_compare_strings);
    guint bare = uninstrumented->len;
    for (guint i = 0; i < bare; i++) {
        g_autofree char *shown = gl_text_escape(g_ptr_array_index(uninstrumented, i));
        /* the run's problems say what was not checked (coverage.h) */
        fprintf(err, "gemleak: note: %s was not built with %s: only what the runtime "
                "intercepts in it (double and bad frees, memcpy and the like)%s was checked\n",
                shown, engine->facts.title, leaks ? " and its leaks" : "");
    }
    /* the Ruby the run's processes ran, not the one on PATH */
    g_autofree char *shown_ruby = gl_text_escape(ruby != NULL ? ruby : "ruby");
    if (bare > 0)
        fprintf(err, "gemleak: build %s with gemleak's Rake task (GemLeak.configure { |c| "
                "c.engine = :%s }), or with: %s extconf.rb --with-cflags=\"$(%s -rrbconfig "
                "-e 'print RbConfig::CONFIG[%%q(CFLAGS)]') %s\" --with-ldflags=\"$(%s -rrbconfig "
                "-e 'print RbConfig::CONFIG[%%q(LDFLAGS)]') %s\" && make (mkmf's flags replace "
                "Ruby's: Ruby's come first)\n", bare == 1 ? "it" : "them", engine->facts.name,
                shown_ruby, shown_ruby, engine->instrumented_cflags, shown_ruby,
                engine->instrumented_ldflags);
}
