/* Everything gemleak reads of a run directory (run_dir.h): the helper's
 * files of each process, engine.txt and interrupted.txt, and from them
 * which processes were checked. */
#include "gemleak/read/run_dir.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/run_files.h"
#include "gemleak/base/sys.h"

#include <stddef.h>
#include <string.h>

gboolean gl_run_dir_is_pid_file(const char *name, const char *prefix, const char *suffix)
{
    gsize length = strlen(name), before = strlen(prefix), after = strlen(suffix);
    if (length <= before + after || !g_str_has_prefix(name, prefix) ||
        !g_str_has_suffix(name, suffix))
        return FALSE;
    for (gsize i = before; i < length - after; i++)
        if (!g_ascii_isdigit(name[i]))
            return FALSE;
    return TRUE;
}

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
        facts->recent_unkept |= strcmp(*word, GL_PROTO_RECENT_UNKEPT) == 0;
    }
    return TRUE;
}

/* ---- engine.txt ---- */

#define TEXT_ROW(name, field) { .key = (name), .offset = offsetof(GlEngineFacts, field) },
#define FLAG_ROW(name, cap) { .key = (name), .flag = TRUE, .bit = (cap) },
#define NUMBER_ROW(name, field) { .key = (name), .offset = offsetof(GlEngineFacts, field), \
                                  .number = TRUE },
static const GlEngineKey engine_keys[] = { GL_ENGINE_FILE_KEYS(TEXT_ROW, FLAG_ROW, NUMBER_ROW) };
#undef TEXT_ROW
#undef FLAG_ROW
#undef NUMBER_ROW

const GlEngineKey *gl_engine_keys(guint *n)
{
    *n = G_N_ELEMENTS(engine_keys);
    return engine_keys;
}

/* Returns: where @facts keep the string of the TEXT row @key. */
static const char **text_field(GlEngineFacts *facts, const GlEngineKey *key)
{
    return (const char **) (void *) ((char *) facts + key->offset);
}

const char *gl_engine_facts_text(const GlEngineFacts *facts, const GlEngineKey *key)
{
    return *(const char *const *) (const void *) ((const char *) facts + key->offset);
}

guint gl_engine_facts_number(const GlEngineFacts *facts, const GlEngineKey *key)
{
    return *(const guint *) (const void *) ((const char *) facts + key->offset);
}

gboolean gl_engine_facts_say(const GlEngineFacts *facts, guint caps)
{
    return (facts->caps & caps) == caps;
}

/* Takes the "KEY VALUE" line @line (changed) of engine.txt into @facts: a
 * string's first line wins, a flag's last. A key of no row is left: a
 * newer gemleak's. */
static void take_engine_line(GlEngineFacts *facts, char *line)
{
    char *space = strchr(line, ' ');
    if (space == NULL)
        return;
    *space = '\0';
    for (guint i = 0; i < G_N_ELEMENTS(engine_keys); i++) {
        const GlEngineKey *key = &engine_keys[i];
        if (strcmp(line, key->key) != 0)
            continue;
        if (key->number) {
            /* a number's last line wins, as a flag's; what is not one is 0 */
            const char *value = space + 1;
            guint64 number = 0;
            if (*value != '\0' && strspn(value, "0123456789") == strlen(value) &&
                strlen(value) < 10)
                number = g_ascii_strtoull(value, NULL, 10);
            *(guint *) (void *) ((char *) facts + key->offset) = (guint) number;
        } else if (key->flag && strcmp(space + 1, "yes") == 0)
            facts->caps |= key->bit;
        else if (key->flag)
            facts->caps &= ~key->bit;
        else if (*text_field(facts, key) == NULL)
            *text_field(facts, key) = g_strdup(space + 1);
        return;
    }
}

/* Replaces @facts' string @field with a copy of @value. */
static void replace_text(const char **field, const char *value)
{
    g_free((gpointer) *field);
    *field = g_strdup(value);
}

/* Fills in what an engine.txt of an older gemleak, or none, leaves out. */
static void take_engine_defaults(GlEngineFacts *facts)
{
    if (facts->title == NULL || *facts->title == '\0') {
        /* A run directory without engine.txt: gemleak wrote none for the
         * Valgrind engine before 0.2 (and filter reads plain XML too). */
        replace_text(&facts->title, "Valgrind");
        replace_text(&facts->name, "valgrind");
        replace_text(&facts->reports, "Valgrind's XML");
        replace_text(&facts->outside, "it has no XML: a program Valgrind does not trace started it");
        return;
    }
    if (facts->name == NULL) {
        /* Before 0.2 only the engines that write nothing for a clean
         * process wrote engine.txt, and only their title: there was one,
         * LeakSanitizer's, whose reports are lsan.PID. */
        facts->caps |= GL_ENGINE_SILENT_WHEN_CLEAN;
        facts->name = g_ascii_strdown(facts->title, -1);
        if (facts->log == NULL)
            facts->log = g_strdup("lsan");
    }
    if (facts->reports == NULL)
        facts->reports = g_strdup_printf("%s's reports", facts->title);
    if (facts->outside == NULL)
        facts->outside = g_strdup("it wrote no report");
}

/* engine.txt is a handful of short lines. */
#define ENGINE_MAX_BYTES 4096

void gl_engine_facts_read(const char *dir, GlEngineFacts *facts)
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
        for (char **line = lines + 1; *line != NULL; line++)
            take_engine_line(facts, *line);
    }
    take_engine_defaults(facts);
}

void gl_engine_facts_clear(GlEngineFacts *facts)
{
    g_free((gpointer) facts->title);
    for (guint i = 0; i < G_N_ELEMENTS(engine_keys); i++)
        if (!engine_keys[i].flag && !engine_keys[i].number)
            g_free((gpointer) *text_field(facts, &engine_keys[i]));
    memset(facts, 0, sizeof *facts);
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
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!gl_run_dir_is_pid_file(name, GL_PROTO_LOADED_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        gint64 pid = g_ascii_strtoll(name + strlen(GL_PROTO_LOADED_PREFIX), NULL, 10);
        g_array_append_val(pids, pid);
    }
    return pids;
}

/* A list of what a process ran outside the engine, or of what its test
 * files took: a line each, a few; a preamble's bound (argv may be long). */
#define HELPER_LIST_MAX_BYTES ((gsize) 4 * 1024 * 1024)

/* Returns: (transfer full): what gl_run_dir_outside() says of @dir, a run
 * of the engine called @title (nullable: engine.txt's, read at the first
 * process that ran outside it; most runs have none). */
static GPtrArray *outside_in(const char *dir, const char *title)
{
    GPtrArray *said = g_ptr_array_new_with_free_func(g_free);
    g_auto(GlEngineFacts) run = { 0 };
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!gl_run_dir_is_pid_file(name, GL_PROTO_OUTSIDE_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        if (title == NULL) {
            gl_engine_facts_read(dir, &run);
            title = run.title;
        }
        gint pid = (gint) g_ascii_strtoll(name + strlen(GL_PROTO_OUTSIDE_PREFIX), NULL, 10);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        /* Even an unreadable one says that something ran unchecked. */
        if (!gl_file_read_regular(path, HELPER_LIST_MAX_BYTES, &text, &length, NULL))
            text = g_strdup("");
        char *end = strchr(text, '\n');   /* one line: the helper writes no more */
        if (end != NULL)
            *end = '\0';
        g_autofree char *line = g_utf8_make_valid(text, -1);  /* a path's raw bytes */
        g_ptr_array_add(said, *line != '\0'
            ? g_strdup_printf("process %d: %s", pid, line)
            : g_strdup_printf("process %d: below a launcher, it ran outside %s", pid, title));
    }
    g_ptr_array_sort(said, gl_compare_strings);
    return said;
}

GPtrArray *gl_run_dir_outside(const char *dir)
{
    return outside_in(dir, NULL);
}

char *gl_run_dir_ruby_versions(const char *dir)
{
    g_autoptr(GPtrArray) versions = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        GlProcessFacts facts;
        if (!gl_run_dir_is_pid_file(name, GL_PROTO_RUBY_PREFIX, GL_PROTO_FILE_SUFFIX) ||
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

GHashTable *gl_run_dir_test_durations(const char *dir)
{
    GHashTable *durations = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_autoptr(GDir) handle = g_dir_open(dir, 0, NULL);
    const char *name;
    while (handle != NULL && (name = g_dir_read_name(handle)) != NULL) {
        if (!gl_run_dir_is_pid_file(name, GL_PROTO_DURATIONS_PREFIX, GL_PROTO_FILE_SUFFIX))
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        gsize length = 0;
        if (!gl_file_read_regular(path, HELPER_LIST_MAX_BYTES, &text, &length, NULL))
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

/* ---- which processes were checked ---- */

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

/* Returns: TRUE if @dir holds a report of process @pid that the engine of
 * @run wrote (log_path=DIR/lsan: lsan.PID), or the helper's word that the
 * engine's runtime was in it (engine-PID.txt): an engine that writes
 * nothing for a process without leaks checked it all the same. */
static gboolean has_engine_record(const char *dir, gint64 pid, const GlEngineFacts *run)
{
    /* engine.txt before its log key: a sanitizer's reports were named as
     * its engine is */
    const char *log = run->log != NULL ? run->log : run->name;
    g_autofree char *report = g_strdup_printf("%s/%s.%" G_GINT64_FORMAT, dir, log, pid);
    g_autofree char *said = g_strdup_printf("%s/" GL_PROTO_ENGINE_PREFIX "%" G_GINT64_FORMAT
                                            GL_PROTO_FILE_SUFFIX, dir, pid);
    return g_file_test(report, G_FILE_TEST_EXISTS) || g_file_test(said, G_FILE_TEST_EXISTS);
}

/* Returns: (transfer full) (nullable): why process @pid's verdicts are not
 * true: the Ruby it ran (its helper said) is older than the engine of
 * @run needs; NULL when it is not, or nobody said. */
static char *older_than_engine(const char *dir, gint64 pid, const GlEngineFacts *run)
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

/* Adds to @coverage what process @pid of the run directory @dir (of the
 * engine @run, a tracer or not), which the helper listed, says: checked,
 * or why not. */
static void coverage_of_process(const char *dir, gint64 pid, const GlEngineFacts *run,
                                gboolean tracer, GlRunCoverage *coverage)
{
    coverage->lists++;
    g_autofree char *valid = gl_process_loaded(dir, pid);
    if (valid == NULL)
        return;
    if (has_xml(dir, pid) || (!tracer && has_engine_record(dir, pid, run))) {
        g_autofree char *too_old = older_than_engine(dir, pid, run);
        if (too_old != NULL)
            g_ptr_array_add(coverage->unchecked, g_steal_pointer(&too_old));
        else
            coverage->checked++;
        return;
    }
    g_ptr_array_add(coverage->unchecked,
                    g_strdup_printf("process %" G_GINT64_FORMAT ": it loaded %s outside %s (%s)",
                                    pid, valid, run->title, run->outside));
}

/* Adds to @coverage what the directory @dir says: its lists, which of
 * their processes have XML (or a record of the engine's), and its
 * outside-PID.txt sentences. */
static void coverage_of_dir(const char *dir, GlRunCoverage *coverage)
{
    g_auto(GlEngineFacts) run = { 0 };
    gl_engine_facts_read(dir, &run);
    /* an engine that writes PID.xml traces every process it runs; one
     * that writes NAME.PID is a runtime in the process, which the helper's
     * engine-PID.txt accounts for when it wrote nothing */
    gboolean tracer = run.log == NULL &&
                      !gl_engine_facts_say(&run, GL_ENGINE_SILENT_WHEN_CLEAN);
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
        } else if (gl_run_dir_is_pid_file(name, "", ".xml") ||
                   gl_run_dir_is_pid_file(name, "", ".xml.gz")) {
            g_autofree char *list = g_strdup_printf("%s/" GL_PROTO_LOADED_PREFIX "%" G_GINT64_FORMAT
                                                    GL_PROTO_FILE_SUFFIX, dir,
                                                    g_ascii_strtoll(name, NULL, 10));
            coverage->unlisted += !g_file_test(list, G_FILE_TEST_EXISTS);
        } else if (gl_run_dir_is_pid_file(name, GL_PROTO_LOADED_PREFIX, GL_PROTO_FILE_SUFFIX)) {
            gint64 pid = g_ascii_strtoll(name + strlen(GL_PROTO_LOADED_PREFIX), NULL, 10);
            coverage_of_process(dir, pid, &run, tracer, coverage);
        }
    }
    g_autoptr(GPtrArray) outside = outside_in(dir, run.title);
    for (guint i = 0; i < outside->len; i++)
        g_ptr_array_add(coverage->unchecked, g_strdup(g_ptr_array_index(outside, i)));
}

void gl_run_dir_coverage(const char *const *inputs, GlRunCoverage *coverage)
{
    memset(coverage, 0, sizeof *coverage);
    coverage->unchecked = g_ptr_array_new_with_free_func(g_free);
    /* what a directory without engine.txt was written by, unless one
     * says another */
    g_auto(GlEngineFacts) plain = { 0 };
    gl_engine_facts_read(NULL, &plain);
    coverage->engine = g_strdup(plain.title);
    coverage->reports = g_strdup(plain.reports);
    g_autoptr(GPtrArray) dirs = gl_run_dirs(inputs);
    for (guint i = 0; i < dirs->len; i++)
        coverage_of_dir(g_ptr_array_index(dirs, i), coverage);
    g_ptr_array_sort(coverage->unchecked, gl_compare_strings);
}
