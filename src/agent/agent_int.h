/* What every library of src/agent/ shares (the client library, the
 * allocation front, the preloaded library): symbols that stay inside
 * their library, memory of its own, the runtime's leak check run with
 * the front told. src/agent/ only.
 *
 * Built on its own: no GLib; it runs inside the suite's Ruby, which may
 * load two of these libraries at once: nothing here is exported, so that
 * neither calls the other's copy. */
#ifndef GEMLEAK_AGENT_INT_H
#define GEMLEAK_AGENT_INT_H

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
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

/* A sanitizer runtime's hooks on every allocation and free
 * (__sanitizer_install_malloc_and_free_hooks), and the writer of a line of
 * its report (__sanitizer_report_error_summary: the text and a newline). */
typedef int (*AgentInstallHooks)(void (*)(const volatile void *, size_t),
                                 void (*)(const volatile void *));
typedef void (*AgentReportLine)(const char *);

/* Finds the sanitizer runtime's hook installer and line writer in the
 * process (a file that includes this defines _GNU_SOURCE first, for
 * RTLD_DEFAULT). Returns: 1 when there are both, 0 when there is no such
 * runtime (each found is set all the same). */
static inline int agent_sanitizer_runtime(AgentInstallHooks *install, AgentReportLine *report_line)
{
    *install = (AgentInstallHooks) (uintptr_t) dlsym(RTLD_DEFAULT,
                                                     "__sanitizer_install_malloc_and_free_hooks");
    *report_line = (AgentReportLine) (uintptr_t) dlsym(RTLD_DEFAULT,
                                                       "__sanitizer_report_error_summary");
    return *install != NULL && *report_line != NULL;
}

/* A spin lock taken in the allocator's hooks, held for a few probes of a
 * table, without a call into the C library (which may allocate). */
static inline void agent_spin_lock(volatile char *lock)
{
    while (__atomic_test_and_set(lock, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(lock, __ATOMIC_RELAXED))
            sched_yield();
}

static inline void agent_spin_unlock(volatile char *lock)
{
    __atomic_clear(lock, __ATOMIC_RELEASE);
}

/* The runtime's leak check, int (*)(void), and the allocation front's
 * GL_PROTO_CHECKING_FUNCTION, told 1 right before the check and 0 right
 * after it (nullable: no front in the process). */
typedef int (*AgentCheck)(void);
typedef void (*AgentChecking)(int);

/* Runs @check with the front (@checking, nullable) keeping from its scan
 * what it must not meet (alloc_stack.c: the main thread's scratch stack).
 * Returns: what @check returned. */
static inline int agent_checked(AgentCheck check, AgentChecking checking)
{
    if (checking != NULL)
        checking(1);
    int found = check();
    if (checking != NULL)
        checking(0);
    return found;
}

#endif
