/* gemleak's cache between runs (gemleak/run/cache.h). */
#include "gemleak/run/cache.h"
#include "gemleak/base/protocol.h"
#include "gemleak/base/sys.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* Far above what is kept: a compiled helper is some 130 kB. */
#define MAX_KEPT_BYTES ((gsize) 16 << 20)

/* Returns: TRUE if @path is a directory (not a link to one) of this user's
 * that nobody else can write to. */
static gboolean own_directory(const char *path)
{
    struct stat st;
    return g_lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* Returns: TRUE if @path is that directory, made (mode 0700) when missing. */
static gboolean made(const char *path)
{
    if (g_mkdir(path, 0700) != 0 && errno != EEXIST)
        return FALSE;
    return own_directory(path);
}

/* Returns: (transfer full) (nullable): where the cache's directories are
 * (XDG_CACHE_HOME/gemleak/runs), made or not; NULL without a cache
 * directory of the user's. */
static char *runs_path(void)
{
    const char *base = g_get_user_cache_dir();
    if (base == NULL || *base == '\0')
        return NULL;
    return g_build_filename(base, "gemleak", "runs", NULL);
}

char *gl_cache_root(void)
{
    char *runs = runs_path();
    if (runs == NULL)
        return NULL;
    g_autofree char *gemleak = g_path_get_dirname(runs);
    if (!own_directory(gemleak) || !own_directory(runs)) {
        g_free(runs);
        return NULL;
    }
    return runs;
}

char *gl_cache_dir(const char *name)
{
    g_autofree char *runs = runs_path();
    if (runs == NULL || name == NULL || *name == '\0' || strchr(name, '/') != NULL)
        return NULL;
    g_autofree char *gemleak = g_path_get_dirname(runs);
    g_autofree char *base = g_path_get_dirname(gemleak);
    char *dir = g_build_filename(runs, name, NULL);
    if (g_mkdir_with_parents(base, 0700) != 0 || !made(gemleak) || !made(runs) || !made(dir)) {
        g_free(dir);
        return NULL;
    }
    return dir;
}

/* Returns: (transfer full) (nullable): the text of the regular file
 * @path, not a link, NULL when it cannot be read. */
static char *kept_text(const char *path, gsize *length)
{
    char *text = NULL;
    if (!gl_file_read_regular(path, MAX_KEPT_BYTES, &text, length, NULL))
        return NULL;
    return text;
}

char *gl_cache_get(const char *name, const char *file, const char *key)
{
    g_autofree char *dir = gl_cache_dir(name);
    if (dir == NULL || file == NULL || strchr(file, '/') != NULL)
        return NULL;
    g_autofree char *path = g_build_filename(dir, file, NULL);
    gsize length = 0;
    g_autofree char *text = kept_text(path, &length);
    if (text == NULL)
        return NULL;
    gsize key_length = strlen(key);
    if (length <= key_length || strncmp(text, key, key_length) != 0 || text[key_length] != '\n')
        return NULL;
    return g_strdup(text + key_length + 1);
}

void gl_cache_put(const char *name, const char *file, const char *key, const char *value)
{
    g_autofree char *dir = gl_cache_dir(name);
    if (dir == NULL || file == NULL || strchr(file, '/') != NULL || strchr(key, '\n') != NULL)
        return;
    g_autofree char *path = g_build_filename(dir, file, NULL);
    g_autofree char *text = g_strconcat(key, "\n", value, NULL);
    /* whole, unsynced: what is lost is made again (a sync a file cost some
     * 6 ms a run for what a run copies into its helper's directory) */
    gl_file_replace_unsynced(path, text, strlen(text), NULL);
}

guint gl_cache_copy(const char *from, const char *to, gboolean (*wanted)(const char *name))
{
    g_autoptr(GDir) listing = from != NULL && to != NULL ? g_dir_open(from, 0, NULL) : NULL;
    if (listing == NULL)
        return 0;
    guint copied = 0;
    const char *name;
    while ((name = g_dir_read_name(listing)) != NULL) {
        if (!wanted(name))
            continue;
        g_autofree char *source = g_build_filename(from, name, NULL);
        g_autofree char *target = g_build_filename(to, name, NULL);
        /* one file under both names: nothing to do; on one filesystem, a
         * second name, not a copy (a run read and wrote some 800 kB) */
        struct stat from_st, to_st;
        if (g_lstat(source, &from_st) != 0 || !S_ISREG(from_st.st_mode) ||
            (guint64) from_st.st_size > MAX_KEPT_BYTES)
            continue;
        if (g_lstat(target, &to_st) == 0 && to_st.st_dev == from_st.st_dev &&
            to_st.st_ino == from_st.st_ino)
            continue;
        if (gl_file_link_replace(source, target, NULL)) {
            copied++;
            continue;
        }
        gsize length = 0, there_length = 0;
        g_autofree char *text = kept_text(source, &length);
        if (text == NULL)
            continue;
        /* the same already there: nothing to write */
        g_autofree char *there = kept_text(target, &there_length);
        if (there != NULL && there_length == length && memcmp(there, text, length) == 0)
            continue;
        gl_file_replace_unsynced(target, text, length, NULL);
        copied++;
    }
    return copied;
}

char *gl_cache_program_key(const char *program, const char *what, char **file)
{
    g_autofree char *found = strchr(program, '/') != NULL ? g_strdup(program)
                                                          : g_find_program_in_path(program);
    char *real = found != NULL ? realpath(found, NULL) : NULL;
    struct stat st;
    if (real == NULL || g_stat(real, &st) != 0 || strchr(real, '\n') != NULL ||
        (what != NULL && (strchr(what, '/') != NULL || strchr(what, '\n') != NULL))) {
        free(real);
        return NULL;
    }
    g_autofree char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, real, -1);
    *file = g_strdup_printf("%.16s%s%s%s", sum, what != NULL ? "-" : "", what != NULL ? what : "",
                            GL_PROTO_FILE_SUFFIX);
    char *key = g_strdup_printf("%s\t%ju\t%ju\t%jd\t%jd.%09ld\t%jd.%09ld%s%s", real,
                                (uintmax_t) st.st_dev, (uintmax_t) st.st_ino,
                                (intmax_t) st.st_size, (intmax_t) st.st_mtim.tv_sec,
                                st.st_mtim.tv_nsec, (intmax_t) st.st_ctim.tv_sec,
                                st.st_ctim.tv_nsec, what != NULL ? "\t" : "",
                                what != NULL ? what : "");
    free(real);
    return key;
}
