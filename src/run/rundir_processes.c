/* What the processes of a run left in its directory (gemleak/base/protocol.h):
 * the XML of forks that ran an untraced program, dropped; the processes
 * that ran outside the engine; which processes were checked (coverage);
 * the Rubies they ran and what their test files took. */
#include "gemleak/run/rundir.h"
#include "rundir_int.h"
#include "gemleak/run/engine.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/run_files.h"
#include "gemleak/read/process_facts.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"

#include <string.h>

#include <glib/gstdio.h>

/* A preamble is a few KiB; its argv may be long (a ruby given a thousand
 * test files), but not this long. The helper's files are held to it too. */
#define PREAMBLE_MAX_BYTES ((gsize) 4 * 1024 * 1024)

/* Returns: TRUE if the XML file @path ends after its preamble: a process
 * forked under Valgrind writes its preamble at once, and then, having
 * exec'd a program Valgrind skips, nothing more. */
static gboolean ends_after_preamble(const char *path)
{
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_regular(path, PREAMBLE_MAX_BYTES, &text, &length, NULL))
        return FALSE;
    if (memchr(text, '\0', length) != NULL || strstr(text, "<status>") != NULL ||
        strstr(text, "<error>") != NULL || strstr(text, "<valgrindoutput>") == NULL)
        return FALSE;
    const char *args = g_strrstr(text, "</args>");
    if (args == NULL)
        return FALSE;
    for (const char *c = args + strlen("</args>"); *c != '\0'; c++)
        if (!g_ascii_isspace(*c))
            return FALSE;
    return TRUE;
}

guint gl_rundir_drop_untraced(const char *dir, GHashTable *killed)
{
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    guint dropped = 0;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!gl_rundir_is_pid_file(name, "", ".xml"))
            continue;
        gint pid = (gint) g_ascii_strtoll(name, NULL, 10);
        if (killed != NULL && g_hash_table_contains(killed, GINT_TO_POINTER(pid)))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (ends_after_preamble(path) && g_unlink(path) == 0) {
            /* What it loaded went with the exec: nothing of it was left to
             * check, and its list must not read as a process that ran
             * outside Valgrind. */
            g_autofree char *list = g_strdup_printf("%s/" GL_PROTO_LOADED_PREFIX "%d" GL_PROTO_FILE_SUFFIX,
                                                    dir, pid);
            g_unlink(list);
            dropped++;
        }
    }
    return dropped;
}

/* Returns: TRUE if @dir holds @name, plain or compressed (@name.gz). */
static gboolean has_file(const char *dir, const char *name)
{
    g_autofree char *plain = g_build_filename(dir, name, NULL);
    g_autofree char *packed = g_strconcat(plain, ".gz", NULL);
    return g_file_test(plain, G_FILE_TEST_EXISTS) || g_file_test(packed, G_FILE_TEST_EXISTS);
}

/* Returns: TRUE if @dir holds the XML of process @pid, plain or compressed:
 * PID.xml, or the file of an image that checked itself before it exec'd
 * (PID.1.xml, GL_PROTO_MARKER_EXEC), when what it exec'd is a program
 * Valgrind does not trace and wrote nothing more. */
static gboolean has_xml(const char *dir, gint64 pid)
{
    g_autofree char *whole = g_strdup_printf("%" G_GINT64_FORMAT ".xml", pid);
    g_autofree char *image = g_strdup_printf("%" G_GINT64_FORMAT ".1.xml", pid);
    return has_file(dir, whole) || has_file(dir, image);
}

/* Returns: (transfer full) (nullable): the signal that interrupted the run
 * of @dir, as interrupted.txt names it; NULL when none did. */
static char *interrupted_in(const char *dir)
{
    g_autofree char *path = g_build_filename(dir, GL_PROTO_INTERRUPTED_FILE, NULL);
    g_autofree char *text = NULL;
    gsize length = 0;
    if (!gl_file_read_regular(path, 64, &text, &length, NULL))
        return NULL;
    g_autofree char *line = g_strndup(text, strcspn(text, "\r\n"));
    /* Even an empty or unreadable one says that the run was cut short. */
    return g_utf8_make_valid(*line != '\0' ? line : "a signal", -1);
}

/* Returns: TRUE if @dir holds a report of process @pid that a sanitizer
 * wrote (log_path=DIR/lsan, DIR/asan), or the helper's word that the
 * engine's runtime was in it (engine-PID.txt): an engine that writes
 * nothing for a process without leaks checked it all the same. */
static gboolean has_engine_record(const char *dir, gint64 pid)
{
    g_autofree char *said = g_strdup_printf("%s/" GL_PROTO_ENGINE_PREFIX "%" G_GINT64_FORMAT
                                            GL_PROTO_FILE_SUFFIX, dir, pid);
    return gl_engine_has_log(dir, pid) || g_file_test(said, G_FILE_TEST_EXISTS);
}

/* Returns: (transfer full) (nullable): why process @pid's verdicts are not
 * true: the Ruby it ran (its helper said) is older than the engine of
 * @run needs; NULL when it is not, or nobody said. */
static char *older_than_engine(const char *dir, gint64 pid, const GlRunFacts *run)
{
    GlProcessFacts facts;
    if (run->min_ruby == NULL || !gl_process_facts_read(dir, pid, &facts) ||
        facts.ruby_version[0] == '\0' ||
        gl_ruby_version_at_least(facts.ruby_version, run->min_ruby))
        return NULL;
    return g_strdup_printf("process %" G_GINT64_FORMAT ": it ran Ruby %s, and --engine %s needs "
                           "Ruby %s or newer: %s (--engine valgrind, the default, checks it)", pid,
                           facts.ruby_version, run->name, run->min_ruby,
                           run->min_ruby_why != NULL ? run->min_ruby_why : "");
}

/* Adds to @coverage what the directory @dir says: its lists, which of
 * their processes have XML (or a record of the engine's), and its
 * outside-PID.txt sentences. */
static void coverage_of_dir(const char *dir, GlRunCoverage *coverage)
{
    g_auto(GlRunFacts) run = { 0 };
    gl_run_facts_read(dir, &run);
    /* an engine that writes PID.xml traces every process it runs; one
     * that writes NAME.PID is a runtime in the process, which the helper's
     * engine-PID.txt accounts for when it wrote nothing */
    gboolean tracer = run.log == NULL && !run.silent_when_clean;
    if (!tracer) {
        g_free(coverage->engine);
        coverage->engine = g_strdup(run.title);
        g_free(coverage->reports);
        coverage->reports = g_strdup(run.reports);
    }
    char *interrupted = interrupted_in(dir);
    if (interrupted != NULL) {
        g_free(coverage->interrupted);
        coverage->interrupted = interrupted;
    }
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (strcmp(name, GL_PROTO_RUN_MARKER) == 0) {
            coverage->runs++;
            continue;
        }
        if (gl_rundir_is_pid_file(name, "", ".xml") || gl_rundir_is_pid_file(name, "", ".xml.gz")) {
            g_autofree char *list = g_strdup_printf("%s/" GL_PROTO_LOADED_PREFIX "%" G_GINT64_FORMAT
                                                    GL_PROTO_FILE_SUFFIX, dir,
                                                    g_ascii_strtoll(name, NULL, 10));
            coverage->unlisted += !g_file_test(list, G_FILE_TEST_EXISTS);
            continue;
        }
        if (!gl_rundir_is_pid_file(name, GL_PROTO_LOADED_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        gint64 pid = g_ascii_strtoll(name + strlen(GL_PROTO_LOADED_PREFIX), NULL, 10);
        coverage->lists++;
        g_autofree char *valid = gl_process_loaded(dir, pid);
        if (valid == NULL)
            continue;
        if (has_xml(dir, pid) || (!tracer && has_engine_record(dir, pid))) {
            g_autofree char *too_old = older_than_engine(dir, pid, &run);
            if (too_old != NULL)
                g_ptr_array_add(coverage->unchecked, g_steal_pointer(&too_old));
            else
                coverage->checked++;
            continue;
        }
        g_ptr_array_add(coverage->unchecked,
                        g_strdup_printf("process %" G_GINT64_FORMAT ": it loaded %s outside %s "
                                        "(%s)", pid, valid, run.title, run.outside));
    }
    g_autoptr(GPtrArray) outside = gl_rundir_outside(dir);
    for (guint i = 0; i < outside->len; i++)
        g_ptr_array_add(coverage->unchecked, g_strdup(g_ptr_array_index(outside, i)));
}

void gl_rundir_coverage(const char *const *inputs, GlRunCoverage *coverage)
{
    memset(coverage, 0, sizeof *coverage);
    coverage->unchecked = g_ptr_array_new_with_free_func(g_free);
    /* what a directory without engine.txt was written by, unless one
     * says another */
    g_auto(GlRunFacts) plain = { 0 };
    gl_run_facts_read(NULL, &plain);
    coverage->engine = g_steal_pointer(&plain.title);
    coverage->reports = g_steal_pointer(&plain.reports);
    g_autoptr(GPtrArray) dirs = gl_run_dirs(inputs);
    for (guint i = 0; i < dirs->len; i++)
        coverage_of_dir(g_ptr_array_index(dirs, i), coverage);
    g_ptr_array_sort(coverage->unchecked, gl_compare_strings);
}

GPtrArray *gl_rundir_outside(const char *dir)
{
    GPtrArray *said = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!gl_rundir_is_pid_file(name, GL_PROTO_OUTSIDE_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        gint pid = (gint) g_ascii_strtoll(name + strlen(GL_PROTO_OUTSIDE_PREFIX), NULL, 10);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        /* Even an unreadable one says that something ran unchecked. */
        if (!gl_file_read_regular(path, PREAMBLE_MAX_BYTES, &text, &length, NULL))
            text = g_strdup("");
        char *end = strchr(text, '\n');   /* one line: the helper writes no more */
        if (end != NULL)
            *end = '\0';
        g_autofree char *line = g_utf8_make_valid(text, -1);  /* a path's raw bytes */
        g_ptr_array_add(said, *line != '\0'
            ? g_strdup_printf("process %d: %s", pid, line)
            : g_strdup_printf("process %d: below a launcher, it ran outside Valgrind", pid));
    }
    g_ptr_array_sort(said, gl_compare_strings);
    return said;
}

char *gl_rundir_ruby_versions(const char *dir)
{
    g_autoptr(GPtrArray) versions = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        GlProcessFacts facts;
        if (!gl_rundir_is_pid_file(name, GL_PROTO_RUBY_PREFIX, GL_PROTO_FILE_SUFFIX) ||
            !gl_process_facts_read(dir, g_ascii_strtoll(name + strlen(GL_PROTO_RUBY_PREFIX), NULL,
                                                        10), &facts) ||
            facts.ruby_version[0] == '\0')
            continue;
        gboolean seen = FALSE;
        for (guint i = 0; i < versions->len && !seen; i++)
            seen = strcmp(g_ptr_array_index(versions, i), facts.ruby_version) == 0;
        if (!seen)
            g_ptr_array_add(versions, g_strdup(facts.ruby_version));
    }
    if (versions->len == 0)
        return NULL;
    g_ptr_array_sort(versions, gl_compare_strings);
    g_ptr_array_add(versions, NULL);
    return g_strjoinv(", ", (char **) versions->pdata);
}

GHashTable *gl_rundir_test_durations(const char *dir)
{
    GHashTable *durations = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!gl_rundir_is_pid_file(name, GL_PROTO_DURATIONS_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        if (!gl_file_read_regular(path, PREAMBLE_MAX_BYTES, &text, &length, NULL))
            continue;
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (char **line = lines; *line != NULL; line++) {
            char *tab = strchr(*line, '\t');
            guint64 ms = 0;
            if (tab == NULL || tab[1] != '/')
                continue;
            *tab = '\0';
            if (!g_ascii_string_to_unsigned(*line, 10, 0, G_MAXUINT32, &ms, NULL))
                continue;
            gdouble *seconds = g_hash_table_lookup(durations, tab + 1);
            if (seconds == NULL) {
                seconds = g_new0(gdouble, 1);
                g_hash_table_insert(durations, g_strdup(tab + 1), seconds);
            }
            *seconds += (gdouble) ms / 1000;
        }
    }
    return durations;
}
