/* What kind of program an exec starts (gemleak/agent/program_kind.h): read
 * from the file's ELF header and program headers, with pread() into
 * buffers on the stack. */
#define _GNU_SOURCE  /* ST_NOEXEC */
#include "gemleak/agent/program_kind.h"
#include "gemleak/base/protocol.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

/* The kernel follows a script's interpreter this many times (fs/exec.c). */
#define MAX_SCRIPT_DEPTH 5
/* What the kernel reads of a script's first line (BINPRM_BUF_SIZE). */
#define SCRIPT_HEAD 256

/* A program header or dynamic entry of either class, as read. */
typedef struct {
    unsigned long type;
    unsigned long offset;
    unsigned long size;
} Segment;

/* Reads program header @i of the ELF file at @fd (@wide: 64-bit).
 * Returns: 0, or -1 when it cannot. */
static int segment(int fd, int wide, unsigned long phoff, unsigned long entsize, unsigned long i,
                   Segment *out)
{
    off_t at = (off_t) (phoff + i * entsize);
    if (wide) {
        Elf64_Phdr header;
        if (entsize < sizeof header || pread(fd, &header, sizeof header, at) != (ssize_t) sizeof header)
            return -1;
        *out = (Segment) { header.p_type, header.p_offset, header.p_filesz };
    } else {
        Elf32_Phdr header;
        if (entsize < sizeof header || pread(fd, &header, sizeof header, at) != (ssize_t) sizeof header)
            return -1;
        *out = (Segment) { header.p_type, header.p_offset, header.p_filesz };
    }
    return 0;
}

/* Returns: 1 when the dynamic section @dynamic of the ELF file at @fd
 * names the object (DT_SONAME): a shared object, the dynamic loader
 * run by its path among them; 0 when not, or unreadable. */
static int names_itself(int fd, int wide, const Segment *dynamic)
{
    size_t entry = wide ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
    for (unsigned long at = 0; at + entry <= dynamic->size; at += entry) {
        long tag;
        if (wide) {
            Elf64_Dyn dyn;
            if (pread(fd, &dyn, sizeof dyn, (off_t) (dynamic->offset + at)) != (ssize_t) sizeof dyn)
                return 0;
            tag = (long) dyn.d_tag;
        } else {
            Elf32_Dyn dyn;
            if (pread(fd, &dyn, sizeof dyn, (off_t) (dynamic->offset + at)) != (ssize_t) sizeof dyn)
                return 0;
            tag = (long) dyn.d_tag;
        }
        if (tag == DT_NULL)
            return 0;
        if (tag == DT_SONAME)
            return 1;
    }
    return 0;
}

int gl_program_fd_is_static(int fd)
{
    unsigned char ident[EI_NIDENT];
    if (pread(fd, ident, sizeof ident, 0) != (ssize_t) sizeof ident ||
        memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_DATA] != NATIVE_DATA ||
        (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32))
        return 0;
    int wide = ident[EI_CLASS] == ELFCLASS64;
    unsigned long type, phoff, entsize, count;
    if (wide) {
        Elf64_Ehdr header;
        if (pread(fd, &header, sizeof header, 0) != (ssize_t) sizeof header)
            return 0;
        type = header.e_type, phoff = header.e_phoff, entsize = header.e_phentsize;
        count = header.e_phnum;
    } else {
        Elf32_Ehdr header;
        if (pread(fd, &header, sizeof header, 0) != (ssize_t) sizeof header)
            return 0;
        type = header.e_type, phoff = header.e_phoff, entsize = header.e_phentsize;
        count = header.e_phnum;
    }
    if ((type != ET_EXEC && type != ET_DYN) || count == 0)
        return 0;
    Segment dynamic = { PT_NULL, 0, 0 };
    for (unsigned long i = 0; i < count; i++) {
        Segment found;
        if (segment(fd, wide, phoff, entsize, i, &found) != 0)
            return 0;
        if (found.type == PT_INTERP)
            return 0;
        if (found.type == PT_DYNAMIC)
            dynamic = found;
    }
    /* static-pie has a dynamic section too, but names no object */
    return type == ET_DYN && dynamic.type == PT_DYNAMIC && names_itself(fd, wide, &dynamic) ? 0 : 1;
}

/* Returns: 1 when the file at @fd may be exec'd as a program the guard can
 * follow: a regular file, without setuid or setgid, not on a filesystem
 * mounted noexec. */
static int followable(int fd)
{
    struct stat st;
    struct statvfs vfs;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_ISUID) ||
        ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP)))
        return 0;
    return fstatvfs(fd, &vfs) != 0 || !(vfs.f_flag & ST_NOEXEC);
}

int gl_program_is_static(const char *path)
{
    char interpreter[SCRIPT_HEAD];
    const char *current = path;
    for (int depth = 0; depth < MAX_SCRIPT_DEPTH; depth++) {
        if (current == NULL || *current == '\0' || access(current, X_OK) != 0)
            return 0;
        int fd = open(current, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 0;
        char head[SCRIPT_HEAD];
        ssize_t n = followable(fd) ? pread(fd, head, sizeof head - 1, 0) : -1;
        if (n < 2 || head[0] != '#' || head[1] != '!') {
            int is = n >= 0 && gl_program_fd_is_static(fd);
            close(fd);
            return is;
        }
        close(fd);
        /* "#! INTERPRETER [ARGUMENT]": the interpreter is what runs */
        head[n] = '\0';
        const char *start = head + 2;
        while (*start == ' ' || *start == '\t')
            start++;
        size_t length = strcspn(start, " \t\n");
        if (length == 0 || length >= sizeof interpreter)
            return 0;
        memcpy(interpreter, start, length);
        interpreter[length] = '\0';
        current = interpreter;
    }
    return 0;
}

/* Returns: 1 when @name (@name_length bytes) matches the glob @glob
 * (@glob_length bytes): '*' any run of characters, "[a-b]" one character
 * of a range or a set, anything else itself. No allocation: fnmatch() may
 * allocate in a multibyte locale, and this runs in a vfork child. */
static int glob_matches(const char *glob, size_t glob_length, const char *name, size_t name_length)
{
    if (glob_length == 0)
        return name_length == 0;
    if (*glob == '*') {
        for (size_t skip = 0; skip <= name_length; skip++)
            if (glob_matches(glob + 1, glob_length - 1, name + skip, name_length - skip))
                return 1;
        return 0;
    }
    if (name_length == 0)
        return 0;
    if (*glob == '[') {
        const char *end = memchr(glob, ']', glob_length);
        if (end != NULL) {
            int in = 0;
            for (const char *c = glob + 1; c < end; c++) {
                if (c + 2 < end && c[1] == '-') {
                    in |= *name >= c[0] && *name <= c[2];
                    c += 2;
                } else {
                    in |= *name == *c;
                }
            }
            size_t used = (size_t) (end - glob) + 1;
            return in && glob_matches(end + 1, glob_length - used, name + 1, name_length - 1);
        }
    }
    return *glob == *name && glob_matches(glob + 1, glob_length - 1, name + 1, name_length - 1);
}

int gl_program_name_in(const char *path, const char *list)
{
    if (path == NULL || list == NULL)
        return 0;
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    size_t name_length = strlen(name);
    for (const char *glob = list + strspn(list, " "); *glob != '\0';) {
        size_t length = strcspn(glob, " ");
        if (glob_matches(glob, length, name, name_length))
            return 1;
        glob += length;
        glob += strspn(glob, " ");
    }
    return 0;
}

int gl_program_is_ruby(const char *path)
{
    if (!gl_program_name_in(path, GL_PROTO_RUBY_PROGRAMS) || access(path, X_OK) != 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    unsigned char head[SELFMAG];
    int is = followable(fd) && pread(fd, head, sizeof head, 0) == (ssize_t) sizeof head &&
             memcmp(head, ELFMAG, SELFMAG) == 0 && !gl_program_fd_is_static(fd);
    close(fd);
    return is;
}

int gl_program_find(const char *file, const char *search, char *out, size_t size)
{
    if (file == NULL || *file == '\0')
        return -1;
    size_t length = strlen(file);
    if (strchr(file, '/') != NULL) {
        if (length >= size)
            return -1;
        memcpy(out, file, length + 1);
        return 0;
    }
    const char *dir = search != NULL ? search : "/bin:/usr/bin";
    for (;;) {
        size_t dir_length = strcspn(dir, ":");
        size_t need = dir_length + (dir_length > 0) + length + 1;
        if (need <= size) {
            memcpy(out, dir, dir_length);
            char *name = out + dir_length;
            if (dir_length > 0)
                *name++ = '/';
            memcpy(name, file, length + 1);
            struct stat st;
            if (access(out, X_OK) == 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
                return 0;
        }
        if (dir[dir_length] == '\0')
            return -1;
        dir += dir_length + 1;
    }
}
