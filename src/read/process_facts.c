/* The helper's per-process files in a run directory (process_facts.h). */
#include "gemleak/read/process_facts.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"

#include <string.h>

/* The helper writes one short line; anything longer is not its. */
#define FACTS_MAX_BYTES 256

gboolean gl_process_facts_read(const char *dir, gint64 pid, GlProcessFacts *facts)
{
    memset(facts, 0, sizeof *facts);
    if (dir == NULL || pid <= 0)
        return FALSE;
    g_autofree char *path = g_strdup_printf("%s/" GL_PROTO_RUBY_PREFIX "%" G_GINT64_FORMAT
                                            GL_PROTO_FILE_SUFFIX, dir, pid);
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_regular(path, FACTS_MAX_BYTES, &text, &length, NULL))
        return FALSE;
    /* A process that execs another Ruby keeps its pid, and the new image
     * appends its own line: the last one is the Ruby that ran to the end. */
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    const char *last = NULL;
    for (char **line = lines; *line != NULL; line++)
        if (**line != '\0')
            last = *line;
    if (last == NULL)
        return FALSE;
    g_auto(GStrv) words = g_strsplit(last, " ", -1);
    facts->known = TRUE;
    if (words[0] != NULL && strlen(words[0]) < sizeof facts->ruby_version &&
        strspn(words[0], "0123456789.") == strlen(words[0]))
        g_strlcpy(facts->ruby_version, words[0], sizeof facts->ruby_version);
    for (char **word = words; *word != NULL; word++) {
        facts->free_at_exit |= strcmp(*word, GL_PROTO_FREE_AT_EXIT) == 0;
        facts->frame_pointers |= strcmp(*word, GL_PROTO_FRAME_POINTERS) == 0;
    }
    return TRUE;
}

/* engine.txt is a handful of short lines. */
#define ENGINE_MAX_BYTES 4096

void gl_run_facts_read(const char *dir, GlRunFacts *facts)
{
    memset(facts, 0, sizeof *facts);
    g_autofree char *path = g_build_filename(dir, GL_PROTO_ENGINE_FILE, NULL);
    g_autofree char *text = NULL;
    gsize length = 0;
    if (dir != NULL && gl_file_read_regular(path, ENGINE_MAX_BYTES, &text, &length, NULL) &&
        length > 0) {
        g_autofree char *valid = g_utf8_make_valid(text, (gssize) length);
        g_auto(GStrv) lines = g_strsplit(valid, "\n", -1);
        facts->title = g_strdup(g_strstrip(lines[0]));
        for (char **line = lines + 1; *line != NULL; line++) {
            char *space = strchr(*line, ' ');
            if (space == NULL)
                continue;
            *space = '\0';
            if (strcmp(*line, GL_PROTO_ENGINE_SILENT) == 0)
                facts->silent_when_clean = strcmp(space + 1, "yes") == 0;
            if (strcmp(*line, GL_PROTO_ENGINE_PROOF) == 0)
                facts->proof = strcmp(space + 1, "yes") == 0;
            char **field = strcmp(*line, GL_PROTO_ENGINE_NAME) == 0 ? &facts->name
                         : strcmp(*line, GL_PROTO_ENGINE_VERSION) == 0 ? &facts->version
                         : strcmp(*line, GL_PROTO_ENGINE_REPORTS) == 0 ? &facts->reports
                         : strcmp(*line, GL_PROTO_ENGINE_OUTSIDE) == 0 ? &facts->outside
                         : strcmp(*line, GL_PROTO_ENGINE_LOG) == 0 ? &facts->log
                         : strcmp(*line, GL_PROTO_ENGINE_INSTRUMENTED) == 0 ? &facts->instrumented
                         : strcmp(*line, GL_PROTO_ENGINE_MIN_RUBY) == 0 ? &facts->min_ruby
                         : strcmp(*line, GL_PROTO_ENGINE_MIN_RUBY_WHY) == 0 ? &facts->min_ruby_why
                         : strcmp(*line, GL_PROTO_ENGINE_LEAKS_MIN_RUBY) == 0 ? &facts->leaks_min_ruby
                         : strcmp(*line, GL_PROTO_ENGINE_LEAKS_MIN_RUBY_WHY) == 0
                             ? &facts->leaks_min_ruby_why
                         : NULL;
            if (field != NULL && *field == NULL)
                *field = g_strdup(space + 1);
        }
    }
    if (facts->title == NULL || *facts->title == '\0') {
        /* A run directory without engine.txt: gemleak wrote none for the
         * Valgrind engine before 0.2 (and filter reads plain XML too). */
        g_free(facts->title);
        facts->title = g_strdup("Valgrind");
        facts->name = g_strdup("valgrind");
        facts->reports = g_strdup("Valgrind's XML");
        facts->outside = g_strdup("it has no XML: a program Valgrind does not trace started it");
        return;
    }
    if (facts->name == NULL) {
        /* Before 0.2 only the engines that write nothing for a clean
         * process wrote engine.txt, and only their title. */
        facts->silent_when_clean = TRUE;
        facts->name = g_ascii_strdown(facts->title, -1);
    }
    if (facts->reports == NULL)
        facts->reports = g_strdup_printf("%s's reports", facts->title);
    if (facts->outside == NULL)
        facts->outside = g_strdup("it wrote no report");
}

void gl_run_facts_clear(GlRunFacts *facts)
{
    g_clear_pointer(&facts->title, g_free);
    g_clear_pointer(&facts->name, g_free);
    g_clear_pointer(&facts->version, g_free);
    g_clear_pointer(&facts->reports, g_free);
    g_clear_pointer(&facts->outside, g_free);
    g_clear_pointer(&facts->log, g_free);
    g_clear_pointer(&facts->instrumented, g_free);
    g_clear_pointer(&facts->min_ruby, g_free);
    g_clear_pointer(&facts->min_ruby_why, g_free);
    g_clear_pointer(&facts->leaks_min_ruby, g_free);
    g_clear_pointer(&facts->leaks_min_ruby_why, g_free);
}

gboolean gl_ruby_version_at_least(const char *version, const char *min)
{
    if (version == NULL || !g_ascii_isdigit(*version))
        return FALSE;
    guint64 major = 0, minor = 0, min_major = 0, min_minor = 0;
    char *end = NULL;
    major = g_ascii_strtoull(version, &end, 10);
    if (end != NULL && *end == '.')
        minor = g_ascii_strtoull(end + 1, NULL, 10);
    min_major = g_ascii_strtoull(min, &end, 10);
    if (end != NULL && *end == '.')
        min_minor = g_ascii_strtoull(end + 1, NULL, 10);
    return major > min_major || (major == min_major && minor >= min_minor);
}

void gl_run_coverage_clear(GlRunCoverage *coverage)
{
    /* Not g_clear_pointer: clang-tidy takes its size check for a mistake. */
    if (coverage->unchecked != NULL)
        g_ptr_array_unref(coverage->unchecked);
    coverage->unchecked = NULL;
    g_free(coverage->engine);
    coverage->engine = NULL;
    g_free(coverage->reports);
    coverage->reports = NULL;
    g_free(coverage->interrupted);
    coverage->interrupted = NULL;
}

/* A list of the extensions a process loaded: a path a line, a few. */
#define LOADED_MAX_BYTES ((gsize) 4 * 1024 * 1024)

GPtrArray *gl_process_loaded_paths(const char *dir, gint64 pid)
{
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *path = g_strdup_printf("%s/" GL_PROTO_LOADED_PREFIX "%" G_GINT64_FORMAT
                                            GL_PROTO_FILE_SUFFIX, dir, pid);
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_regular(path, LOADED_MAX_BYTES, &text, &length, NULL))
        return paths;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **line = lines; *line != NULL; line++)
        if (**line != '\0')
            g_ptr_array_add(paths, g_strdup(*line));
    return paths;
}

char *gl_process_loaded(const char *dir, gint64 pid)
{
    g_autoptr(GPtrArray) paths = gl_process_loaded_paths(dir, pid);
    if (paths->len == 0)
        return NULL;
    g_ptr_array_add(paths, NULL);
    g_autofree char *joined = g_strjoinv(", ", (char **) paths->pdata);
    return g_utf8_make_valid(joined, -1);
}

GArray *gl_process_listed(const char *dir)
{
    GArray *pids = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    gsize prefix = strlen(GL_PROTO_LOADED_PREFIX), suffix = strlen(GL_PROTO_FILE_SUFFIX);
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        gsize length = strlen(name);
        if (length <= prefix + suffix || !g_str_has_prefix(name, GL_PROTO_LOADED_PREFIX) ||
            !g_str_has_suffix(name, GL_PROTO_FILE_SUFFIX))
            continue;
        gboolean digits = TRUE;
        for (gsize i = prefix; i < length - suffix && digits; i++)
            digits = g_ascii_isdigit(name[i]);
        if (!digits)
            continue;
        gint64 pid = g_ascii_strtoll(name + prefix, NULL, 10);
        g_array_append_val(pids, pid);
    }
    return pids;
}
