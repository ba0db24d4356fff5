/* gemleak help [TOPIC]: gemleak(1), which the binary carries, whole or a
 * part of it. A gem install (RubyGems, Bundler) puts the page nowhere
 * `man gemleak` looks, and a slim container has no man: the manual is
 * then one command away all the same, and it is the page of this very
 * binary. On a terminal with man, man shows it (man -l -); elsewhere, or
 * without man, it is laid out as text here (help_roff.c). */
#include "cli_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/resources.h"
#include "gemleak/base/text.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MANUAL_RESOURCE "man/gemleak.1"

/* One .SH of the page: its name, and where it is in the page's text. */
typedef struct {
    char *name;
    const char *start;
    const char *end;
} Section;

static void section_clear(gpointer data)
{
    g_free(((Section *) data)->name);
}

/* Returns: (transfer full): the sections of @page, in its order. */
static GArray *sections_of(const char *page)
{
    GArray *sections = g_array_new(FALSE, TRUE, sizeof(Section));
    g_array_set_clear_func(sections, section_clear);
    const char *line = page;
    while (*line != '\0') {
        const char *newline = strchr(line, '\n');
        const char *next = newline != NULL ? newline + 1 : line + strlen(line);
        if (g_str_has_prefix(line, ".SH ")) {
            if (sections->len > 0)
                g_array_index(sections, Section, sections->len - 1).end = line;
            g_autofree char *name = g_strndup(line + 4, (gsize) (next - line - 4));
            Section section = { .name = g_strdup(g_strstrip(name)), .start = line, .end = NULL };
            /* a quoted name (.SH "PER TEST") as the page would show it */
            if (section.name[0] == '"') {
                g_strdelimit(section.name, "\"", ' ');
                g_strstrip(section.name);
            }
            g_array_append_val(sections, section);
        }
        line = next;
    }
    if (sections->len > 0)
        g_array_index(sections, Section, sections->len - 1).end = line;
    return sections;
}

/* Returns: (transfer full): @name as a topic is typed: lower case, a dash
 * for each space ("PER TEST": "per-test"). */
static char *topic_name(const char *name)
{
    char *topic = g_ascii_strdown(name, -1);
    return g_strdelimit(topic, " ", '-');
}

static const Section *find_section(GArray *sections, const char *topic)
{
    for (guint i = 0; i < sections->len; i++) {
        const Section *section = &g_array_index(sections, Section, i);
        g_autofree char *name = topic_name(section->name);
        if (g_ascii_strcasecmp(name, topic) == 0)
            return section;
    }
    return NULL;
}

/* Appends to @roff the options of @command: OPTIONS up to its first .SS
 * (what every command takes), then its own .SS, if any. */
static void append_options(GString *roff, GArray *sections, const char *command)
{
    const Section *options = find_section(sections, "options");
    if (options == NULL)
        return;
    g_autofree char *text = g_strndup(options->start, (gsize) (options->end - options->start));
    const char *first_sub = strstr(text, "\n.SS ");
    g_string_append_len(roff, text, first_sub != NULL ? first_sub - text + 1 : (gssize) strlen(text));
    g_autofree char *own = g_strdup_printf("\n.SS %s\n", command);
    const char *at = strstr(text, own);
    if (at == NULL)
        return;
    const char *end = strstr(at + strlen(own), "\n.SS ");
    g_string_append_len(roff, at + 1, end != NULL ? end - at : (gssize) strlen(at + 1));
}

/* Returns: (transfer full) (nullable): the part of @page that @topic
 * names, with the page's .TH line, as roff; NULL when none is. */
static char *part_of(const Command *commands, const char *page, const char *topic)
{
    g_autoptr(GArray) sections = sections_of(page);
    GString *roff = g_string_new(NULL);
    const char *th_end = g_str_has_prefix(page, ".TH ") ? strchr(page, '\n') : NULL;
    if (th_end != NULL)
        g_string_append_len(roff, page, th_end - page + 1);
    /* A command (cli.c's table, but help itself) is told in its options,
     * when it takes the report options (OPTIONS up to its first
     * subsection: those run and filter share; then the subsection of its
     * name), and in the section of its name. */
    gboolean command = FALSE;
    for (const Command *c = commands; c->name != NULL; c++)
        if (!c->aside && strcmp(topic, c->name) == 0) {
            command = TRUE;
            if (c->report_options)
                append_options(roff, sections, topic);
        }
    const Section *section = find_section(sections, topic);
    if (section != NULL)
        g_string_append_len(roff, section->start, section->end - section->start);
    if (!command && section == NULL) {
        g_string_free(roff, TRUE);
        return NULL;
    }
    return g_string_free(roff, FALSE);
}

/* Returns: (transfer full): what `gemleak help` takes: the commands, then
 * each section of @page, ", " between them. */
static char *topics(const Command *commands, const char *page)
{
    g_autoptr(GArray) sections = sections_of(page);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (const Command *c = commands; c->name != NULL; c++)
        if (!c->aside)
            g_ptr_array_add(names, g_strdup(c->name));
    for (guint i = 0; i < sections->len; i++) {
        char *name = topic_name(g_array_index(sections, Section, i).name);
        if (g_ptr_array_find_with_equal_func(names, name, g_str_equal, NULL))
            g_free(name);
        else
            g_ptr_array_add(names, name);
    }
    g_ptr_array_add(names, NULL);
    return g_strjoinv(", ", (char **) names->pdata);
}

/* Shows @roff with man, paged, on the terminal @out is.
 * Returns: FALSE when man could not show it (not found, or it failed
 * before reading): the caller shows the text instead. */
static gboolean show_with_man(const char *roff, FILE *out)
{
    g_autofree char *man = g_find_program_in_path("man");
    if (man == NULL || !isatty(fileno(out)))
        return FALSE;
    fflush(out);
    const char *argv[] = { man, "-l", "-", NULL };
    GPid pid = 0;
    int input = -1;
    if (!g_spawn_async_with_pipes(NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL,
                                  NULL, &pid, &input, NULL, NULL, NULL))
        return FALSE;
    gsize length = strlen(roff);
    gboolean written = TRUE;
    /* the user may quit the pager before man has read the page */
    struct sigaction ignore = { .sa_handler = SIG_IGN }, saved;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved);
    for (gsize done = 0; done < length;) {
        ssize_t n = write(input, roff + done, length - done);
        if (n <= 0) {
            written = FALSE;
            break;
        }
        done += (gsize) n;
    }
    close(input);
    sigaction(SIGPIPE, &saved, NULL);
    int wait_status = 0;
    waitpid(pid, &wait_status, 0);
    g_spawn_close_pid(pid);
    return written || g_spawn_check_wait_status(wait_status, NULL);
}

int gl_cli_help(const Command *commands, int argc, char **argv, FILE *out, FILE *err)
{
    g_autoptr(GBytes) bytes = gl_resource(MANUAL_RESOURCE);
    gsize size = 0;
    const char *data = bytes != NULL ? g_bytes_get_data(bytes, &size) : NULL;
    g_autofree char *page = data != NULL ? g_strndup(data, size) : NULL;
    if (page == NULL || *page == '\0') {
        fprintf(err, "gemleak: help: this gemleak was built without its manual\n");
        return GL_EXIT_ERROR;
    }
    if (argc > 2) {
        fprintf(err, "gemleak: help takes one topic at most\n");
        return GL_EXIT_USAGE;
    }
    g_autofree char *roff = NULL;
    if (argc == 2) {
        g_autofree char *topic = g_ascii_strdown(argv[1], -1);
        g_strdelimit(topic, " _", '-');
        roff = part_of(commands, page, topic);
        if (roff == NULL) {
            g_autofree char *shown = gl_text_escape(argv[1]);
            g_autofree char *names = topics(commands, page);
            fprintf(err, "gemleak: help: no part of the manual is called '%s': %s\n", shown, names);
            return GL_EXIT_USAGE;
        }
    } else {
        roff = g_strdup(page);
    }
    if (show_with_man(roff, out))
        return GL_EXIT_CLEAN;
    g_autofree char *text = gl_cli_roff_to_text(roff);
    fputs(text, out);
    return GL_EXIT_CLEAN;
}
