/* A finding as a Valgrind suppression (gemleak/report/wording.h), which
 * --format supp writes and the text report's --gen-suppressions shows.
 *
 * Valgrind matches a suppression's frames against the first frames of an
 * error's stack, so the frames up to the last target frame are enough and
 * survive a different caller in Ruby: Valgrind's own block (--gen-
 * suppressions) names every frame of one call site, and silences only the
 * occurrences reached the same way. Valgrind's own suppression frames
 * (--gen-suppressions) are used when the XML has them: they carry C++
 * names mangled, which is what Valgrind matches. */
#include "gemleak/report/wording.h"

#include <stdlib.h>
#include <string.h>

/* Memcheck's suppression kind for an error kind (transfer full in *kind),
 * with its extra line (match-leak-kinds, the syscall parameter) in *extra.
 * Returns: FALSE when there is none. */
static gboolean suppression_kind(const GlRecord *record, char **kind, char **extra)
{
    *kind = NULL;
    *extra = NULL;
    if (record->suppression != NULL && record->suppression->kind != NULL) {
        *kind = g_strdup(record->suppression->kind);
        if (record->suppression->aux != NULL)
            *extra = g_strdup(record->suppression->aux);
        return TRUE;
    }
    if (record->leak_kind != GL_LEAK_NONE) {
        *kind = g_strdup("Memcheck:Leak");
        *extra = g_strdup_printf("match-leak-kinds: %s", gl_leak_kind_to_string(record->leak_kind));
        return TRUE;
    }
    static const struct {
        const char *error;
        const char *supp;
    } plain[] = {
        { "InvalidFree", "Memcheck:Free" }, { "MismatchedFree", "Memcheck:Free" },
        { "Overlap", "Memcheck:Overlap" }, { "UninitCondition", "Memcheck:Cond" },
        { "InvalidJump", "Memcheck:Jump" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(plain); i++) {
        if (strcmp(record->kind, plain[i].error) == 0) {
            *kind = g_strdup(plain[i].supp);
            return TRUE;
        }
    }
    /* "Invalid read of size 8" -> Memcheck:Addr8 */
    if (strcmp(record->kind, "InvalidRead") == 0 || strcmp(record->kind, "InvalidWrite") == 0) {
        const char *size = strstr(record->what, "of size ");
        unsigned long n = size != NULL ? strtoul(size + 8, NULL, 10) : 0;
        if (n == 1 || n == 2 || n == 4 || n == 8 || n == 16 || n == 32) {
            *kind = g_strdup_printf("Memcheck:Addr%lu", n);
            return TRUE;
        }
    }
    return FALSE;
}

/* Returns: (transfer full): @text on one line: each control character (a
 * newline would end the line and break the block) becomes @replacement.
 * '?' in a fun: or obj: line matches any one character, the original one
 * included. */
static char *one_line(const char *text, char replacement)
{
    char *line = g_strdup(text);
    for (char *c = line; *c != '\0'; c++)
        if ((unsigned char) *c < 0x20 || *c == 0x7f)
            *c = replacement;
    return line;
}

/* Appends "   LINE\n", @line on one line. */
static void append_line(GString *out, const char *line, char replacement)
{
    g_autofree char *safe = one_line(line, replacement);
    g_string_append_printf(out, "   %s\n", safe);
}

/* A name Valgrind can match with fun:, as the XML gives it: C and mangled
 * names only. A demangled C++ name (with ::, ( or spaces) cannot be. */
static gboolean matchable_name(const char *fn)
{
    return fn != NULL && strpbrk(fn, ":( <>,") == NULL;
}

static void append_frames(GString *out, const GlRecord *record)
{
    guint n = gl_stack_relevant_frames(&record->stack);
    const char **valgrinds = record->suppression != NULL ? record->suppression->frames : NULL;
    guint available = valgrinds != NULL ? g_strv_length((char **) valgrinds) : 0;
    for (guint i = 0; i < n; i++) {
        const GlFrame *frame = &record->stack.frames[i];
        g_autofree char *line = NULL;
        if (available == record->stack.n_frames)
            line = g_strdup(valgrinds[i]);
        else if (matchable_name(frame->fn))
            line = g_strconcat("fun:", frame->fn, NULL);
        else if (frame->obj != NULL)
            line = g_strconcat("obj:", frame->obj, NULL);
        else
            line = g_strdup("...");
        append_line(out, line, '?');
    }
}

/* The finding's title and message on one line each (a control character
 * is a space): for comments and the block's name. */
static void one_line_heading(const GlFinding *finding, char **title, char **message)
{
    /* Valgrind's file names: the block is the same from any directory. */
    g_autofree char *raw_title = gl_finding_title(finding, NULL);
    g_autofree char *raw_message = gl_finding_message(finding);
    *title = one_line(raw_title, ' ');
    *message = one_line(raw_message, ' ');
}

char *gl_finding_suppression(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    g_autofree char *kind = NULL;
    g_autofree char *extra = NULL;
    /* Growth is no error of Valgrind's: gemleak measures it from leak
     * checks with every kind shown. A still-reachable suppression for its
     * site would not silence it; it would only hide the site's blocks from
     * those measures, and from every reachable check after. A baseline
     * (its fingerprint) is what keeps a known growth quiet. */
    if (finding->growth != NULL)
        return NULL;
    if (!suppression_kind(record, &kind, &extra) || record->stack.n_frames == 0)
        return NULL;
    g_autofree char *title = NULL;
    g_autofree char *message = NULL;
    one_line_heading(finding, &title, &message);
    GString *block = g_string_new(NULL);
    g_string_append_printf(block, "# %s: %s\n{\n   gemleak %s: %s\n", title, message,
                           finding->fingerprint, title);
    append_line(block, kind, ' ');
    if (extra != NULL)
        append_line(block, extra, ' ');
    append_frames(block, record);
    /* Whatever Ruby frames called the target: every call site at once. */
    if (gl_stack_relevant_frames(&record->stack) < record->stack.n_frames)
        g_string_append(block, "   ...\n");
    g_string_append(block, "}\n");
    return g_string_free(block, FALSE);
}

char *gl_finding_suppression_comment(const GlFinding *finding)
{
    g_autofree char *title = NULL;
    g_autofree char *message = NULL;
    one_line_heading(finding, &title, &message);
    return g_strdup_printf("# %s: %s\n", title, message);
}

const char *gl_finding_no_suppression(const GlFinding *finding)
{
    if (finding->growth != NULL)
        return "(growth is gemleak's measure, not a Valgrind error: no suppression silences it; "
               "--write-baseline keeps it known)";
    return "(Valgrind has no suppression for this kind of error)";
}

char *gl_suppression_line(const char *text)
{
    return one_line(text, ' ');
}
