/* The run's variables given back to a program started with an environment
 * of its own (gemleak/agent/restore_env.h): no allocation, no GLib. */
#define _GNU_SOURCE  /* stpcpy, O_CLOEXEC: the client libraries build as plain C11 */
#include "gemleak/agent/restore_env.h"
#include "gemleak/base/protocol.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

void gl_restore_parse(GlRestoreSet *set, char *list, const char *whole)
{
    set->n = 0;
    for (char *item = list; item != NULL && set->n < GL_RESTORE_MAX_ENTRIES;) {
        char *next = strchr(item, GL_PROTO_RESTORE_SEPARATOR[0]);
        if (next != NULL)
            *next++ = '\0';
        char *equals = *item != '\0' ? strchr(item + 1, '=') : NULL;
        if (equals != NULL && equals > item + 1 &&
            (item[0] == GL_PROTO_RESTORE_SET || item[0] == GL_PROTO_RESTORE_FRONT ||
             item[0] == GL_PROTO_RESTORE_BACK)) {
            GlRestoreEntry *entry = &set->entries[set->n++];
            entry->how = item[0];
            entry->name = item + 1;
            entry->name_length = (size_t) (equals - item - 1);
            entry->value = equals + 1;
        }
        item = next;
    }
    if (whole != NULL && set->n < GL_RESTORE_MAX_ENTRIES) {
        GlRestoreEntry *itself = &set->entries[set->n++];
        itself->how = GL_PROTO_RESTORE_SET;
        itself->name = GL_PROTO_RESTORE_VARIABLE;
        itself->name_length = strlen(GL_PROTO_RESTORE_VARIABLE);
        itself->value = whole;
    }
}

/* Returns: the index of @set's entry for the variable @name; @set->n when
 * there is none. */
static size_t entry_index(const GlRestoreSet *set, const char *name)
{
    size_t length = strlen(name);
    size_t i = 0;
    while (i < set->n && (set->entries[i].name_length != length ||
                          strncmp(set->entries[i].name, name, length) != 0))
        i++;
    return i;
}

GlRestoreEntry *gl_restore_entry(GlRestoreSet *set, const char *name)
{
    size_t i = entry_index(set, name);
    return i < set->n ? &set->entries[i] : NULL;
}

const char *gl_restore_value(const GlRestoreSet *set, const char *name)
{
    size_t i = entry_index(set, name);
    return i < set->n ? set->entries[i].value : NULL;
}

const char *gl_restore_engine_preload(const char *engine_command)
{
    static const char preload[] = "LD_PRELOAD=";
    if (engine_command == NULL)
        return NULL;
    const char *word = strchr(engine_command, GL_PROTO_ENGINE_COMMAND_SEPARATOR[0]);
    if (word == NULL || word == engine_command || strncmp(word + 1, preload, strlen(preload)) != 0)
        return NULL;
    const char *list = word + 1 + strlen(preload);
    if (*list == '\0' || strchr(list, GL_PROTO_ENGINE_COMMAND_SEPARATOR[0]) != NULL)
        return NULL;
    return list;
}

/* Returns: the value of @entry's variable in @envp, NULL when unset. */
static const char *lookup(char *const envp[], const GlRestoreEntry *entry)
{
    for (char *const *var = envp; var != NULL && *var != NULL; var++)
        if (strncmp(*var, entry->name, entry->name_length) == 0 &&
            (*var)[entry->name_length] == '=')
            return *var + entry->name_length + 1;
    return NULL;
}

/* Returns: nonzero when @value holds @part whole, between @separators (or
 * its ends). */
static int holds(const char *value, const char *part, const char *separators)
{
    size_t length = strlen(part);
    for (const char *at = strstr(value, part); at != NULL; at = strstr(at + 1, part)) {
        int starts = at == value || strchr(separators, at[-1]) != NULL;
        int ends = at[length] == '\0' || strchr(separators, at[length]) != NULL;
        if (starts && ends)
            return 1;
    }
    return 0;
}

/* Returns: how many bytes "NAME=VALUE" of @entry needs once restored in
 * @envp, its NUL included; 0 when @envp needs nothing of it. */
static size_t needs(char *const envp[], const GlRestoreEntry *entry)
{
    const char *theirs = lookup(envp, entry);
    size_t ours = entry->name_length + 1 + strlen(entry->value) + 1;
    if (theirs == NULL)
        return ours;
    switch (entry->how) {
    case GL_PROTO_RESTORE_REPLACE:
        return strcmp(theirs, entry->value) == 0 ? 0 : ours;
    case GL_PROTO_RESTORE_FRONT:
        return holds(theirs, entry->value, " \t") ? 0 : ours + strlen(theirs) + 1;
    case GL_PROTO_RESTORE_BACK:
        return holds(theirs, entry->value, ": ") ? 0 : ours + strlen(theirs) + 1;
    default:
        return 0;
    }
}

/* Writes @entry's "NAME=VALUE" at @out (needs() bytes), as restored in
 * @envp. */
static void write_entry(char *out, char *const envp[], const GlRestoreEntry *entry)
{
    const char *theirs = lookup(envp, entry);
    memcpy(out, entry->name, entry->name_length);
    out += entry->name_length;
    *out++ = '=';
    if (entry->how == GL_PROTO_RESTORE_BACK && theirs != NULL) {
        out = stpcpy(out, theirs);
        *out++ = ':';
    }
    out = stpcpy(out, entry->value);
    if (entry->how == GL_PROTO_RESTORE_FRONT && theirs != NULL) {
        *out++ = ' ';
        stpcpy(out, theirs);
    }
}

/* Returns: nonzero when @var ("NAME=VALUE" of @envp) is one a restored
 * entry replaces. */
static int replaced(const GlRestoreSet *set, char *const envp[], const char *var)
{
    for (size_t i = 0; i < set->n; i++) {
        const GlRestoreEntry *entry = &set->entries[i];
        if (strncmp(var, entry->name, entry->name_length) == 0 &&
            var[entry->name_length] == '=' && needs(envp, entry) > 0)
            return 1;
    }
    return 0;
}

size_t gl_restore_size(const GlRestoreSet *set, char *const envp[], size_t *count)
{
    size_t bytes = 0;
    *count = 0;
    for (char *const *var = envp; var != NULL && *var != NULL; var++)
        (*count)++;
    for (size_t i = 0; i < set->n; i++)
        bytes += needs(envp, &set->entries[i]);
    return bytes;
}

void gl_restore_fill(const GlRestoreSet *set, char *const envp[], char **vars, char *text)
{
    size_t n = 0;
    for (char *const *var = envp; var != NULL && *var != NULL; var++)
        if (!replaced(set, envp, *var))
            vars[n++] = *var;
    for (size_t i = 0; i < set->n; i++) {
        size_t need = needs(envp, &set->entries[i]);
        if (need == 0)
            continue;
        write_entry(text, envp, &set->entries[i]);
        vars[n++] = text;
        text += need;
    }
    vars[n] = NULL;
}

/* Writes the decimal digits of @number (not negative) to end just before
 * @end.
 * Returns: where they begin. */
static char *digits(char *end, long number)
{
    char *at = end;
    do {
        *--at = (char) ('0' + number % 10);
        number /= 10;
    } while (number > 0 && at > end - 20);
    return at;
}

int gl_restore_say_outside(const GlRestoreSet *set, long pid, const char *const *parts)
{
    const char *dir = gl_restore_value(set, GL_PROTO_RUN_DIR_VARIABLE);
    if (dir == NULL || *dir == '\0' || pid < 0)
        return -1;
    char number[24];
    const char *pid_text = digits(number + sizeof number - 1, pid);
    number[sizeof number - 1] = '\0';
    char path[PATH_MAX];
    size_t length = strlen(dir) + 1 + strlen(GL_PROTO_OUTSIDE_PREFIX) + strlen(pid_text) +
                    strlen(GL_PROTO_FILE_SUFFIX);
    if (length >= sizeof path)
        return -1;
    char *end = stpcpy(path, dir);
    *end++ = '/';
    end = stpcpy(end, GL_PROTO_OUTSIDE_PREFIX);
    end = stpcpy(end, pid_text);
    stpcpy(end, GL_PROTO_FILE_SUFFIX);
    /* one write of the whole line: appended whole, whoever else appends */
    char line[4096];
    size_t used = 0;
    for (const char *const *part = parts; *part != NULL; part++)
        for (const char *c = *part; *c != '\0' && used < sizeof line - 1; c++) {
            char shown = *c;
            if ((unsigned char) shown < 0x20 || shown == 0x7f)
                shown = '?';
            line[used++] = shown;
        }
    line[used++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ssize_t written = write(fd, line, used);
    close(fd);
    return written == (ssize_t) used ? 0 : -1;
}

int gl_restore_say_unfollowed(const GlRestoreSet *set, long pid, const char *program,
                              const char *why)
{
    static const char after[] = ", which LD_PRELOAD does not reach, and gemleak could not follow "
                                "what it started (";
    const char *const parts[] = { "it ran the static program ", program, after, why, ")", NULL };
    return gl_restore_say_outside(set, pid, parts);
}
