/* The project's own frames (see project_paths.h). */
#include "gemleak/judge/project_paths.h"
#include "gemleak/read/source.h"

#include <string.h>

gboolean gl_frame_from_a_runtime(const GlFrame *frame)
{
    g_autofree char *path = gl_frame_path(frame);
    if (path == NULL)
        return FALSE;
    /* rustc records its standard library's sources under the commit it
     * was built from (--remap-path-prefix), whatever the machine */
    return g_str_has_prefix(path, "/rustc/") || g_str_has_prefix(path, "/rust/deps/") ||
           strstr(path, "/.cargo/registry/src/") != NULL ||
           strstr(path, "/.cargo/git/checkouts/") != NULL ||
           strstr(path, "/.rustup/toolchains/") != NULL;
}

gboolean gl_frame_linked_in(const GlFrame *frame)
{
    return gl_frame_from_a_header(frame) || gl_frame_from_a_runtime(frame);
}

gboolean gl_stack_has_own_source(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->in_target && frame->file != NULL && !gl_frame_linked_in(frame))
            return TRUE;
    }
    return FALSE;
}

gboolean gl_frame_is_own(const GlFrame *frame, gboolean own_source)
{
    if (!frame->in_target)
        return FALSE;
    if (own_source)
        return frame->file != NULL && !gl_frame_linked_in(frame);
    return !gl_frame_from_a_header(frame);
}
