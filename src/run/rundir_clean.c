/* gemleak clean: removes gemleak's own run and helper directories that
 * no running gemleak holds, and only what gemleak writes in them. */
#include "gemleak/run/rundir.h"
#include "gemleak/run/cache.h"
#include "rundir_int.h"
#include "runner_int.h"
#include "gemleak/run/engine.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"
#include "gemleak/base/text.h"
#include "gemleak/read/run_dir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Returns: TRUE if @name is one gemleak writes in a run directory (XML,
 * compressed XML, a half-written compressed file, the helper's lists) or
 * in a helper directory. */
static gboolean written_by_gemleak(const char *name, gboolean helper)
{
    if (helper)
        return gl_run_is_helper_file(name);
    if (gl_rundir_is_xml_file(name, FALSE) || gl_rundir_is_xml_file(name, TRUE) ||
        gl_run_dir_is_pid_file(name, GL_PROTO_LOADED_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        gl_run_dir_is_pid_file(name, GL_PROTO_DURATIONS_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        gl_run_dir_is_pid_file(name, GL_PROTO_OUTSIDE_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        gl_run_dir_is_pid_file(name, GL_PROTO_RUBY_PREFIX, GL_PROTO_FILE_SUFFIX) ||
        strcmp(name, GL_PROTO_RUN_MARKER) == 0)
        return TRUE;
    /* a sanitizer engine's reports (lsan.PID, asan.PID) and the helper's
     * word that its runtime was in a process */
    if (gl_engine_is_log(name, NULL) || strcmp(name, GL_PROTO_ENGINE_FILE) == 0 ||
        strcmp(name, GL_PROTO_INTERRUPTED_FILE) == 0 || strcmp(name, GL_PROTO_RECORD_FILE) == 0 ||
        gl_run_dir_is_pid_file(name, GL_PROTO_ENGINE_PREFIX, GL_PROTO_FILE_SUFFIX))
        return TRUE;
    /* .NNN.xml.gz.XXXXXX, compress_file's temporary */
    const char *gz = strstr(name, ".xml.gz.");
    if (name[0] != '.' || gz == NULL || strlen(gz) != strlen(".xml.gz.XXXXXX"))
        return FALSE;
    g_autofree char *xml = g_strndup(name + 1, (gsize) (gz - name - 1 + strlen(".xml")));
    return gl_rundir_is_xml_file(xml, FALSE);
}

/* Returns: (transfer full) (nullable): why @path is not a directory that
 * gemleak clean may remove, or NULL; *bytes: what it holds. */
static char *not_ours(const char *path, gboolean helper, guint64 *bytes)
{
    struct stat st;
    *bytes = 0;
    if (lstat(path, &st) != 0)
        return g_strdup(g_strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return g_strdup("not a directory");
    if (st.st_uid != geteuid())
        return g_strdup("another user's");
    if ((st.st_mode & 07777) != 0700)
        return g_strdup_printf("mode %04o, where gemleak makes 0700", (unsigned) (st.st_mode & 07777));
    g_autoptr(GError) error = NULL;
    g_autoptr(GDir) dir = g_dir_open(path, 0, &error);
    if (dir == NULL)
        return g_strdup(error->message);
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *child = g_build_filename(path, name, NULL);
        struct stat cst;
        if (!written_by_gemleak(name, helper) || lstat(child, &cst) != 0 || !S_ISREG(cst.st_mode))
            return g_strdup_printf("it holds %s, which gemleak does not write", name);
        *bytes += (guint64) cst.st_size;
    }
    return NULL;
}

/* Returns: TRUE if @path (@shown, escaped) is gemleak's to remove
 * (not_ours()), *@bytes what it holds; FALSE after saying on @out why it
 * is left. */
static gboolean ours_or_said(const char *path, const char *shown, gboolean helper,
                             guint64 *bytes, FILE *out)
{
    g_autofree char *why = not_ours(path, helper, bytes);
    if (why == NULL)
        return TRUE;
    g_autofree char *why_shown = gl_text_escape(why);
    fprintf(out, "left %s: %s\n", shown, why_shown);
    return FALSE;
}

/* Removes @path (@shown, escaped, holding @bytes), but with @dry_run, and
 * says on @out what became of it. Returns: TRUE if it is (or would be)
 * removed. */
static gboolean remove_and_say(const char *path, const char *shown, guint64 bytes,
                               gboolean dry_run, FILE *out)
{
    g_autofree char *size = gl_format_bytes(bytes);
    if (!dry_run)
        gl_remove_tree(path);
    if (!dry_run && g_file_test(path, G_FILE_TEST_EXISTS)) {
        fprintf(out, "left %s: cannot remove all of it\n", shown);
        return FALSE;
    }
    fprintf(out, "%s %s (%s)\n", dry_run ? "would remove" : "removed", shown, size);
    return TRUE;
}

guint gl_rundir_clean(const char *tmpdir, gboolean dry_run, FILE *out)
{
    g_autoptr(GDir) dir = g_dir_open(tmpdir, 0, NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        gboolean run = g_str_has_prefix(name, GL_PROTO_RUN_DIR) &&
                       strlen(name) == strlen(GL_PROTO_RUN_DIR) + 6;
        gboolean helper = g_str_has_prefix(name, GL_PROTO_HELPER_DIR) &&
                          strlen(name) == strlen(GL_PROTO_HELPER_DIR) + 6;
        if (run || helper)
            g_ptr_array_add(names, g_strdup(name));
    }
    g_ptr_array_sort(names, gl_compare_strings);
    guint removed = 0;
    guint64 freed = 0;
    for (guint i = 0; i < names->len; i++) {
        const char *base = g_ptr_array_index(names, i);
        gboolean helper = g_str_has_prefix(base, GL_PROTO_HELPER_DIR);
        g_autofree char *path = g_build_filename(tmpdir, base, NULL);
        /* TMPDIR and the names in it may hold anything: escaped, on one line */
        g_autofree char *shown = gl_text_escape(path);
        guint64 bytes = 0;
        if (!ours_or_said(path, shown, helper, &bytes, out))
            continue;
        /* Held until removed: a gemleak starting now makes a new name. */
        int lock = gl_rundir_lock(path);
        if (lock < 0) {
            fprintf(out, "left %s: a running gemleak is using it\n", shown);
            continue;
        }
        /* A run that ended between the look and the lock took its
         * directory with it: the lock is on a directory no longer there. */
        struct stat held, now;
        if (fstat(lock, &held) != 0 || lstat(path, &now) != 0 || held.st_dev != now.st_dev ||
            held.st_ino != now.st_ino) {
            close(lock);
            continue;
        }
        gboolean gone = remove_and_say(path, shown, bytes, dry_run, out);
        close(lock);
        if (!gone)
            continue;
        removed++;
        freed += bytes;
    }
    g_autofree char *total = gl_format_bytes(freed);
    g_autofree char *where = gl_text_escape(tmpdir);
    fprintf(out, "%s %u director%s of gemleak's in %s, %s\n",
            dry_run ? "would remove" : "removed", removed, removed == 1 ? "y" : "ies", where,
            total);
    return removed;
}

/* Returns: TRUE if @name is a directory of gemleak's cache that a build
 * of gemleak keeps its helper in ("helper-" and 16 hexadecimal digits). */
static gboolean helper_cache_name(const char *name)
{
    if (!g_str_has_prefix(name, GL_RUN_HELPER_CACHE_PREFIX) ||
        strlen(name) != strlen(GL_RUN_HELPER_CACHE_PREFIX) + 16)
        return FALSE;
    for (const char *c = name + strlen(GL_RUN_HELPER_CACHE_PREFIX); *c != '\0'; c++)
        if (!g_ascii_isxdigit(*c))
            return FALSE;
    return TRUE;
}

guint gl_rundir_clean_cache(gboolean dry_run, FILE *out)
{
    g_autofree char *root = gl_cache_root();
    if (root == NULL)
        return 0;
    g_autoptr(GDir) dir = g_dir_open(root, 0, NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL)
        if (helper_cache_name(name) && strcmp(name, gl_run_helper_cache_name()) != 0)
            g_ptr_array_add(names, g_strdup(name));
    g_ptr_array_sort(names, gl_compare_strings);
    guint removed = 0;
    guint64 freed = 0;
    for (guint i = 0; i < names->len; i++) {
        g_autofree char *path = g_build_filename(root, g_ptr_array_index(names, i), NULL);
        g_autofree char *shown = gl_text_escape(path);
        guint64 bytes = 0;
        if (!ours_or_said(path, shown, TRUE, &bytes, out) ||
            !remove_and_say(path, shown, bytes, dry_run, out))
            continue;
        removed++;
        freed += bytes;
    }
    if (names->len > 0) {
        g_autofree char *total = gl_format_bytes(freed);
        fprintf(out, "%s what gemleak's cache kept for %u other build%s of gemleak, %s\n",
                dry_run ? "would remove" : "removed", removed, removed == 1 ? "" : "s", total);
    }
    return removed;
}
