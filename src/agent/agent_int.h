/* What every library of src/agent/ shares (the client library, the
 * allocation front): symbols that stay inside their library, and memory
 * of its own. src/agent/ only.
 *
 * Built on its own: no GLib; it runs inside the suite's Ruby, which may
 * load two of these libraries at once: nothing here is exported, so that
 * neither calls the other's copy. */
#ifndef GEMLEAK_AGENT_INT_H
#define GEMLEAK_AGENT_INT_H

#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A symbol the library's files share, and nothing outside it sees. */
#define AGENT_HIDDEN __attribute__((visibility("hidden")))

/* Returns: @bytes of zeroed memory, mapped, or NULL. Never the allocator's:
 * these libraries run inside its hooks and its allocation functions, where
 * an allocation would call itself. */
static inline void *agent_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Reads the file at @path whole, when it holds 1 to @limit - 1 bytes, into
 * memory mapped here (agent_map, NUL after it; *@length its bytes, those
 * read when it was cut short). Returns: the text (owned here for the
 * process's life), or NULL when it cannot be read or is out of bounds. */
static inline char *agent_read_file(const char *path, size_t limit, size_t *length)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *text = NULL;
    *length = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && (size_t) st.st_size < limit) {
        size_t size = (size_t) st.st_size;
        text = agent_map(size + 1);
        while (text != NULL && *length < size) {
            ssize_t n = read(fd, text + *length, size - *length);
            if (n <= 0)
                break;
            *length += (size_t) n;
        }
    }
    close(fd);
    return text;
}

#endif
