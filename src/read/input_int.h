/* What a format fills in to be read through the input seam (input.h), as
 * curl's vtls backends fill in struct Curl_ssl: one GlInputFormat per
 * format, each the only thing its file exports to the seam, declared and
 * listed once, in input.c. src/read/ only. */
#ifndef GEMLEAK_INPUT_INT_H
#define GEMLEAK_INPUT_INT_H

#include "gemleak/read/input.h"

struct GlInputFormat {
    const char *name;
    /* What gemleak filter --help says it reads of this format: a phrase,
     * its lines at most 74 characters, broken with "\n". */
    const char *reads;
    /* (nullable) Returns: TRUE if a file of a directory named @name (a
     * base name) is this format's by its name alone (Valgrind's PID.xml). */
    gboolean (*named)(const char *name);
    /* (nullable: the format of what no other claims, Valgrind's XML)
     * Returns: TRUE if @head, the first (at most GL_INPUT_HEAD_BYTES) bytes
     * of a regular file, are this format's; @listed: the file was found in
     * a directory. */
    gboolean (*detect)(const char *head, gsize length, gboolean listed);
    /* Returns: (transfer full): the state of a reading of @fd, which it
     * closes when freed (-1: none), or of @data (@size bytes that outlive
     * it) when @fd is -1; @name names it in messages, and is the file's
     * path when there is one. */
    gpointer (*open)(int fd, const char *data, gsize size, const char *name);
    /* Returns: (transfer full) (nullable): the next record, NULL at the end. */
    GlRecord *(*next)(gpointer state);
    /* Returns: (transfer none): what was read of the process so far. */
    const GlProcess *(*process)(gconstpointer state);
    /* Returns: (transfer none): the problems (GError*). */
    const GPtrArray *(*problems)(gconstpointer state);
    /* (nullable) Returns: (transfer none): notes (char*). */
    const GPtrArray *(*notes)(gconstpointer state);
    /* (nullable) Returns: (transfer none): suppression name -> count. */
    GHashTable *(*suppressed)(gconstpointer state);
    void (*free)(gpointer state);
};

#endif
