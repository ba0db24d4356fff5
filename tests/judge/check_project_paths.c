/* Which frames of an extension are its project's own source: not a
 * header's, not a runtime's or a dependency's linked into it, and, where
 * the stack has a source of its own, not without a file. */
#include "testutil.h"
#include "gemleak/judge/project_paths.h"

static GlFrame frame_at(const char *dir, const char *file)
{
    GlFrame frame = { .fn = "f", .obj = "/g/x.so", .dir = dir, .file = file, .in_target = TRUE };
    return frame;
}

/* Rust's standard library as rustup's builds record it, the crates Cargo
 * fetched, a toolchain's own sources. */
START_TEST(test_runtime_sources)
{
    static const char *const runtimes[][2] = {
        { "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860", "library/alloc/src/alloc.rs" },
        { "/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/alloc/src", "alloc.rs" },
        { "/rust/deps/gimli-0.32.3/src", "read.rs" },
        { "/home/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/libc-0.2.150/src", "lib.rs" },
        { "/home/me/.cargo/git/checkouts/magnus-1a2b/src", "value.rs" },
        { "/home/me/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/core/src", "mem.rs" },
    };
    for (guint i = 0; i < G_N_ELEMENTS(runtimes); i++) {
        GlFrame frame = frame_at(runtimes[i][0], runtimes[i][1]);
        ck_assert_msg(gl_frame_from_a_runtime(&frame), "%s/%s", runtimes[i][0], runtimes[i][1]);
        ck_assert(gl_frame_linked_in(&frame));
    }
    GlFrame header = frame_at("/usr/include/c++/12/bits", "unique_ptr.h");
    ck_assert(!gl_frame_from_a_runtime(&header));
    ck_assert(gl_frame_linked_in(&header));
    /* the project's own, a Rust crate's src/ and an ext/ */
    GlFrame own = frame_at("/home/me/gem/src", "lib.rs");
    ck_assert(!gl_frame_linked_in(&own));
    GlFrame ext = frame_at("/home/me/gem/ext/x", "x.c");
    ck_assert(!gl_frame_linked_in(&ext));
    GlFrame bare = { .fn = "f", .obj = "/g/x.so", .in_target = TRUE };
    ck_assert(!gl_frame_linked_in(&bare));
}
END_TEST

/* A frame without a file is the project's only where no frame of the
 * target has a source of the project's (an extension built without debug
 * information); a header's never is; a frame outside the target never. */
START_TEST(test_own_frames_of_a_stack)
{
    GlFrame frames[] = {
        { .fn = "malloc", .obj = "/vg.so" },
        { .fn = "try_allocate_in", .obj = "/g/x.so", .in_target = TRUE },
        frame_at("/rustc/5980/library/alloc/src", "alloc.rs"),
        frame_at("/home/me/gem/src", "lib.rs"),
    };
    GlStack stack = { .frames = frames, .n_frames = G_N_ELEMENTS(frames) };
    ck_assert(gl_stack_has_own_source(&stack));
    ck_assert(!gl_frame_is_own(&frames[0], TRUE));
    ck_assert(!gl_frame_is_own(&frames[1], TRUE));
    ck_assert(!gl_frame_is_own(&frames[2], TRUE));
    ck_assert(gl_frame_is_own(&frames[3], TRUE));

    GlFrame stripped[] = {
        { .fn = "malloc", .obj = "/vg.so" },
        { .fn = "x_alloc", .obj = "/g/x.so", .in_target = TRUE },
        frame_at("/usr/include/x86_64-linux-gnu/bits", "string_fortified.h"),
    };
    GlStack bare = { .frames = stripped, .n_frames = G_N_ELEMENTS(stripped) };
    ck_assert(!gl_stack_has_own_source(&bare));
    ck_assert(gl_frame_is_own(&stripped[1], FALSE));
    ck_assert(!gl_frame_is_own(&stripped[2], FALSE));
}
END_TEST

Suite *gl_project_paths_suite(void)
{
    Suite *suite = suite_create("project_paths");
    TCase *tc = tcase_create("project_paths");
    tcase_add_test(tc, test_runtime_sources);
    tcase_add_test(tc, test_own_frames_of_a_stack);
    suite_add_tcase(suite, tc);
    return suite;
}
