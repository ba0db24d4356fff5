/* Whether an exec starts a static program, which LD_PRELOAD never reaches
 * and gemleak's guard follows (src/agent/program_kind.c): real
 * programs the C compiler builds, the dynamic loader, scripts, and ELF
 * headers written by hand for the edges. */
#define _GNU_SOURCE
#include "testutil.h"
#include "gemleak/agent/program_kind.h"
#include "gemleak/base/protocol.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

/* An ELF file written by hand: a header, program headers of @types, and,
 * for a PT_DYNAMIC one, a dynamic section holding DT_SONAME when @soname. */
typedef struct {
    gboolean wide;      /* ELFCLASS64 */
    unsigned type;      /* ET_EXEC, ET_DYN... */
    const unsigned *segments;  /* PT_ types, ending with PT_NULL */
    gboolean soname;
    unsigned char data; /* EI_DATA: 0 for this machine's */
} HandMade;

/* Writes @elf to @path, executable.
 * Returns: (transfer none): @path. */
static const char *write_elf(const char *path, const HandMade *elf)
{
    GByteArray *bytes = g_byte_array_new();
    guint n = 0;
    while (elf->segments[n] != PT_NULL)
        n++;
    gsize header = elf->wide ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    gsize entsize = elf->wide ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    gsize dynamic_at = header + n * entsize;
    unsigned char ident[EI_NIDENT] = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3,
                                       elf->wide ? ELFCLASS64 : ELFCLASS32,
                                       elf->data != 0 ? elf->data
                                       : G_BYTE_ORDER == G_LITTLE_ENDIAN ? ELFDATA2LSB
                                                                        : ELFDATA2MSB,
                                       EV_CURRENT };
/* the same for either class, with its types */
#define WRITE_ELF(Ehdr, Phdr, Dyn, machine)                                                      \
    do {                                                                                         \
        Ehdr e = { .e_type = elf->type, .e_machine = (machine), .e_version = EV_CURRENT,         \
                   .e_phoff = header, .e_ehsize = header, .e_phentsize = entsize,                \
                   .e_phnum = n };                                                               \
        memcpy(e.e_ident, ident, sizeof ident);                                                  \
        g_byte_array_append(bytes, (guint8 *) &e, sizeof e);                                     \
        for (guint i = 0; i < n; i++) {                                                          \
            Phdr p = { .p_type = elf->segments[i] };                                             \
            if (p.p_type == PT_DYNAMIC) {                                                        \
                p.p_offset = dynamic_at;                                                         \
                p.p_filesz = 2 * sizeof(Dyn);                                                    \
            }                                                                                    \
            g_byte_array_append(bytes, (guint8 *) &p, sizeof p);                                 \
        }                                                                                        \
        Dyn dyn[2] = { { .d_tag = elf->soname ? DT_SONAME : DT_NEEDED }, { .d_tag = DT_NULL } }; \
        g_byte_array_append(bytes, (guint8 *) dyn, sizeof dyn);                                  \
    } while (0)
    if (elf->wide)
        WRITE_ELF(Elf64_Ehdr, Elf64_Phdr, Elf64_Dyn, EM_X86_64);
    else
        WRITE_ELF(Elf32_Ehdr, Elf32_Phdr, Elf32_Dyn, EM_386);
#undef WRITE_ELF
    gl_test_write(path, (const char *) bytes->data, bytes->len);
    g_byte_array_unref(bytes);
    ck_assert_int_eq(g_chmod(path, 0755), 0);
    return path;
}

static int fd_is_static(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "%s: cannot open", path);
    int is = gl_program_fd_is_static(fd);
    close(fd);
    return is;
}

/* What the kernel runs itself is static, whatever its class or type; what
 * names an interpreter is not, nor a shared object that names itself (the
 * dynamic loader run by its path reads LD_PRELOAD); static-pie, whose
 * dynamic section names nothing, is static. */
START_TEST(test_hand_made_headers)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "elf", NULL);
    static const unsigned load[] = { PT_LOAD, PT_NULL };
    static const unsigned interp[] = { PT_PHDR, PT_INTERP, PT_LOAD, PT_DYNAMIC, PT_NULL };
    static const unsigned dynamic[] = { PT_LOAD, PT_DYNAMIC, PT_NULL };
    static const unsigned none[] = { PT_NULL };
    const struct {
        HandMade elf;
        int is;
    } cases[] = {
        { { TRUE, ET_EXEC, load, FALSE, 0 }, 1 },
        { { FALSE, ET_EXEC, load, FALSE, 0 }, 1 },
        { { TRUE, ET_EXEC, interp, FALSE, 0 }, 0 },
        { { FALSE, ET_DYN, interp, FALSE, 0 }, 0 },
        { { TRUE, ET_DYN, dynamic, FALSE, 0 }, 1 },   /* static-pie */
        { { TRUE, ET_DYN, dynamic, TRUE, 0 }, 0 },    /* ld.so, a library */
        { { FALSE, ET_DYN, dynamic, TRUE, 0 }, 0 },
        { { TRUE, ET_REL, load, FALSE, 0 }, 0 },
        { { TRUE, ET_EXEC, none, FALSE, 0 }, 0 },
        { { TRUE, ET_EXEC, load, FALSE,
            G_BYTE_ORDER == G_LITTLE_ENDIAN ? ELFDATA2MSB : ELFDATA2LSB }, 0 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        write_elf(path, &cases[i].elf);
        ck_assert_msg(fd_is_static(path) == cases[i].is, "case %u: %d", i, fd_is_static(path));
        ck_assert_int_eq(gl_program_is_static(path), cases[i].is);
    }
    gl_remove_tree(dir);
}
END_TEST

/* What is not a whole ELF header is no static program: a text file, an
 * empty one, a header cut short, program headers past the file's end. */
START_TEST(test_not_elf)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "file", NULL);
    gl_test_write(path, "hello\n", -1);
    ck_assert_int_eq(fd_is_static(path), 0);
    gl_test_write(path, "", 0);
    ck_assert_int_eq(fd_is_static(path), 0);
    static const unsigned load[] = { PT_LOAD, PT_NULL };
    HandMade elf = { TRUE, ET_EXEC, load, FALSE, 0 };
    write_elf(path, &elf);
    g_autofree char *whole = gl_test_read(path, NULL);
    gl_test_write(path, whole, 20);
    ck_assert_int_eq(fd_is_static(path), 0);
    gl_test_write(path, whole, sizeof(Elf64_Ehdr) + 8);
    ck_assert_int_eq(fd_is_static(path), 0);
    ck_assert_int_eq(gl_program_is_static(path), 0);
    ck_assert_int_eq(gl_program_is_static(dir), 0);
    g_autofree char *missing = g_build_filename(dir, "missing", NULL);
    ck_assert_int_eq(gl_program_is_static(missing), 0);
    ck_assert_int_eq(gl_program_is_static(""), 0);
    gl_remove_tree(dir);
}
END_TEST

/* Builds @dir/@name from a program that exits 0, with the C compiler's
 * @flags; the test is skipped, saying why, where it cannot.
 * Returns: (transfer full): its path. */
static char *compiled(const char *dir, const char *name, const char *flags)
{
    g_autofree char *source = g_build_filename(dir, "main.c", NULL);
    gl_test_write(source, "int main(void) { return 0; }\n", -1);
    char *path = g_build_filename(dir, name, NULL);
    g_autofree char *command = g_strdup_printf("cc %s -o '%s' '%s'", flags, path, source);
    const char *argv[] = { "sh", "-c", command, NULL };
    g_autofree char *err = NULL;
    if (gl_test_spawn(argv, NULL, &err) != 0) {
        gl_remove_tree(dir);
        gl_test_skip("cc %s does not link here: %s", flags, err);
    }
    return path;
}

/* Programs the C compiler builds: static and static-pie ones are static,
 * a dynamic one is not, nor the dynamic loader this process runs under,
 * nor a shell. */
START_TEST(test_real_programs)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *plain = compiled(dir, "static", "-static");
    ck_assert_int_eq(gl_program_is_static(plain), 1);
    g_autofree char *pie = compiled(dir, "static-pie", "-static-pie -fPIE");
    ck_assert_int_eq(gl_program_is_static(pie), 1);
    g_autofree char *dynamic = compiled(dir, "dynamic", "");
    ck_assert_int_eq(gl_program_is_static(dynamic), 0);
    ck_assert_int_eq(gl_program_is_static("/bin/sh"), 0);
    g_autofree char *loader = gl_test_mapped_library("/ld-");
    ck_assert_ptr_nonnull(loader);
    ck_assert_msg(gl_program_is_static(loader) == 0, "%s", loader);
    gl_remove_tree(dir);
}
END_TEST

/* A static program the kernel would not run as it is, or would run
 * without its privileges if traced, is none to follow: not executable,
 * setuid, setgid. */
START_TEST(test_not_followed)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *path = g_build_filename(dir, "elf", NULL);
    static const unsigned load[] = { PT_LOAD, PT_NULL };
    HandMade elf = { TRUE, ET_EXEC, load, FALSE, 0 };
    write_elf(path, &elf);
    ck_assert_int_eq(gl_program_is_static(path), 1);
    ck_assert_int_eq(g_chmod(path, 0644), 0);  /* root too runs nothing without an execute bit */
    ck_assert_int_eq(gl_program_is_static(path), 0);
    ck_assert_int_eq(g_chmod(path, 04755), 0);
    ck_assert_int_eq(gl_program_is_static(path), 0);
    ck_assert_int_eq(g_chmod(path, 02755), 0);
    ck_assert_int_eq(gl_program_is_static(path), 0);
    ck_assert_int_eq(g_chmod(path, 02745), 0);  /* setgid without group execute: locking */
    ck_assert_int_eq(gl_program_is_static(path), 1);
    gl_remove_tree(dir);
}
END_TEST

/* A script is what its interpreter is, followed as the kernel follows
 * it, through scripts and with an argument after the interpreter. */
START_TEST(test_scripts)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *elf_path = g_build_filename(dir, "static", NULL);
    static const unsigned load[] = { PT_LOAD, PT_NULL };
    HandMade elf = { TRUE, ET_EXEC, load, FALSE, 0 };
    write_elf(elf_path, &elf);
    /* @ stands for the static program, DIR for the directory */
    const struct {
        const char *name;
        const char *text;
        int is;
    } scripts[] = {
        { "on-static", "#!@\necho\n", 1 },
        { "spaced", "#!  @ -x\n", 1 },
        { "tab", "#!\t@\targ", 1 },
        { "on-script", "#!DIR/on-static\n", 1 },
        { "on-sh", "#!/bin/sh\n@\n", 0 },
        { "empty", "#!\n@", 0 },
        { "missing", "#!@.missing\n", 0 },
    };
    for (guint i = 0; i < G_N_ELEMENTS(scripts); i++) {
        g_autofree char *path = g_build_filename(dir, scripts[i].name, NULL);
        g_auto(GStrv) around_dir = g_strsplit(scripts[i].text, "DIR", -1);
        g_autofree char *with_dir = g_strjoinv(dir, around_dir);
        g_auto(GStrv) around = g_strsplit(with_dir, "@", -1);
        g_autofree char *text = g_strjoinv(elf_path, around);
        gl_test_write(path, text, -1);
        ck_assert_int_eq(g_chmod(path, 0755), 0);
        ck_assert_msg(gl_program_is_static(path) == scripts[i].is, "%s", scripts[i].name);
    }
    /* a script that runs itself: the kernel gives up, and so does this */
    g_autofree char *loop = g_build_filename(dir, "loop", NULL);
    g_autofree char *text = g_strdup_printf("#!%s\n", loop);
    gl_test_write(loop, text, -1);
    ck_assert_int_eq(g_chmod(loop, 0755), 0);
    ck_assert_int_eq(gl_program_is_static(loop), 0);
    gl_remove_tree(dir);
}
END_TEST

/* As execvp() finds a program: by its path when it has a '/', else in
 * PATH's directories in order, the first executable regular file; an
 * empty entry is the current directory; the C library's default when
 * PATH is unset. */
START_TEST(test_find_on_path)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *first = g_build_filename(dir, "first", NULL);
    g_autofree char *second = g_build_filename(dir, "second", NULL);
    g_mkdir(first, 0700);
    g_mkdir(second, 0700);
    g_autofree char *plain = g_build_filename(first, "tool", NULL);
    g_autofree char *runs = g_build_filename(second, "tool", NULL);
    g_autofree char *subdir = g_build_filename(first, "sub", NULL);
    g_autofree char *program = g_build_filename(second, "sub", NULL);
    gl_test_write(plain, "", 0);  /* not executable: passed over */
    gl_test_write(runs, "", 0);
    g_chmod(runs, 0755);
    g_mkdir(subdir, 0755);        /* a directory: passed over */
    gl_test_write(program, "", 0);
    g_chmod(program, 0755);
    g_autofree char *search = g_strconcat(first, ":", second, NULL);
    char out[PATH_MAX];
    ck_assert_int_eq(gl_program_find("tool", search, out, sizeof out), 0);
    ck_assert_str_eq(out, runs);
    ck_assert_int_eq(gl_program_find("sub", search, out, sizeof out), 0);
    ck_assert_str_eq(out, program);
    ck_assert_int_eq(gl_program_find("absent", search, out, sizeof out), -1);
    ck_assert_int_eq(gl_program_find("", search, out, sizeof out), -1);
    ck_assert_int_eq(gl_program_find("./any/thing", search, out, sizeof out), 0);
    ck_assert_str_eq(out, "./any/thing");
    ck_assert_int_eq(gl_program_find("sh", NULL, out, sizeof out), 0);
    ck_assert_msg(strcmp(out, "/bin/sh") == 0 || strcmp(out, "/usr/bin/sh") == 0, "%s", out);
    /* an empty entry: the current directory */
    g_autofree char *cwd = g_get_current_dir();
    ck_assert_int_eq(chdir(second), 0);
    ck_assert_int_eq(gl_program_find("tool", ":/nowhere", out, sizeof out), 0);
    ck_assert_str_eq(out, "tool");
    ck_assert_int_eq(chdir(cwd), 0);
    /* what does not fit is not found */
    ck_assert_int_eq(gl_program_find("tool", search, out, 8), -1);
    gl_remove_tree(dir);
}
END_TEST

/* Names as gemleak's lists give them: each blank-separated name or glob
 * of the list matches a path's base name whole ('*' any run, "[0-9]" a
 * range). */
START_TEST(test_names_in_lists)
{
    const char *ruby = GL_PROTO_RUBY_PROGRAMS;
    ck_assert_int_eq(gl_program_name_in("/usr/bin/ruby", ruby), 1);
    ck_assert_int_eq(gl_program_name_in("ruby3.1", ruby), 1);
    ck_assert_int_eq(gl_program_name_in("/opt/rubies/bin/ruby-3.4.5", ruby), 1);
    ck_assert_int_eq(gl_program_name_in("/lib/libruby.so.3.4.5", ruby), 1);
    ck_assert_int_eq(gl_program_name_in("/usr/bin/jruby", ruby), 0);
    ck_assert_int_eq(gl_program_name_in("rubyx", ruby), 0);
    ck_assert_int_eq(gl_program_name_in("ruby-", ruby), 0);
    ck_assert_int_eq(gl_program_name_in("/ruby/bin/irb", ruby), 0);
    ck_assert_int_eq(gl_program_name_in("", ruby), 0);
    ck_assert_int_eq(gl_program_name_in(NULL, ruby), 0);
    const char *launchers = GL_PROTO_LAUNCHERS;
    ck_assert_int_eq(gl_program_name_in("/home/me/.gem/bin/rake", launchers), 1);
    ck_assert_int_eq(gl_program_name_in("bundle", launchers), 1);
    ck_assert_int_eq(gl_program_name_in("rakefile", launchers), 0);
    ck_assert_int_eq(gl_program_name_in("ext/x/extconf.rb", GL_PROTO_BUILD_STEPS), 1);
    ck_assert_int_eq(gl_program_name_in("extconf.rbx", GL_PROTO_BUILD_STEPS), 0);
    ck_assert_int_eq(gl_program_name_in("a", "  b  a "), 1);
    ck_assert_int_eq(gl_program_name_in("x9", "x[0-9]"), 1);
    ck_assert_int_eq(gl_program_name_in("xa", "x[0-9]"), 0);
    ck_assert_int_eq(gl_program_name_in("[0", "[0"), 1);  /* an open bracket is itself */
}
END_TEST

/* A Ruby an exec starts itself: a dynamic program named as Ruby's
 * executables are; not a script (its interpreter runs first), not a
 * static program (LD_PRELOAD never reaches it), not another name, not a
 * setuid one. */
START_TEST(test_ruby_programs)
{
    g_autofree char *dir = gl_test_tmpdir();
    g_autofree char *dynamic = compiled(dir, "dynamic", "");
    g_autofree char *named = g_build_filename(dir, "ruby3.4", NULL);
    ck_assert_int_eq(link(dynamic, named), 0);
    ck_assert_int_eq(gl_program_is_ruby(named), 1);
    ck_assert_int_eq(gl_program_is_ruby(dynamic), 0);
    g_autofree char *plain = compiled(dir, "static", "-static");
    g_autofree char *static_ruby = g_build_filename(dir, "ruby", NULL);
    ck_assert_int_eq(link(plain, static_ruby), 0);
    ck_assert_int_eq(gl_program_is_ruby(static_ruby), 0);
    g_autofree char *script = g_build_filename(dir, "ruby-3.4.5", NULL);
    g_autofree char *text = g_strdup_printf("#!%s\n", named);
    gl_test_write(script, text, -1);
    ck_assert_int_eq(g_chmod(script, 0755), 0);
    ck_assert_int_eq(gl_program_is_ruby(script), 0);
    g_autofree char *missing = g_build_filename(dir, "ruby3.3", NULL);
    ck_assert_int_eq(gl_program_is_ruby(missing), 0);
    ck_assert_int_eq(g_chmod(named, 04755), 0);
    ck_assert_int_eq(gl_program_is_ruby(named), 0);
    gl_remove_tree(dir);
}
END_TEST

Suite *gl_program_kind_suite(void)
{
    Suite *suite = suite_create("program_kind");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_hand_made_headers);
    tcase_add_test(tc, test_not_elf);
    tcase_add_test(tc, test_real_programs);
    tcase_add_test(tc, test_not_followed);
    tcase_add_test(tc, test_scripts);
    tcase_add_test(tc, test_find_on_path);
    tcase_add_test(tc, test_names_in_lists);
    tcase_add_test(tc, test_ruby_programs);
    suite_add_tcase(suite, tc);
    return suite;
}
