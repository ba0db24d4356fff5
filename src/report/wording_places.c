/* Where a frame, a finding and a test are, as every report names them:
 * the place a finding is reported at, paths relative to the project's
 * root (gemleak/report/wording.h). */
#include "gemleak/report/wording.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/project_paths.h"

#include <string.h>

void gl_frame_describe(const GlFrame *frame, const char *project_root, GString *out)
{
    if (frame->fn != NULL && frame->file != NULL) {
        /* As JSON, SARIF and GitHub name it: ext/x/x.c, not x.c, for a
         * terminal or an editor to open. */
        gboolean under_root = FALSE;
        g_autofree char *path = project_root != NULL
            ? gl_frame_source_path(frame, project_root, &under_root) : NULL;
        /* Outside the project, the file's name alone: the engines split a
         * path into dir and file differently (Valgrind's file can be
         * rustc's "library/alloc/src/alloc.rs", a sanitizer's "alloc.rs"),
         * and the whole path is JSON's. */
        g_string_append_printf(out, "%s (%s:%u)", frame->fn,
                               under_root ? path : gl_base_name(frame->file), frame->line);
    } else if (frame->fn != NULL && frame->unit != NULL) {
        /* built without -g: the source file its symbol table names */
        gboolean under_root = FALSE;
        g_autofree char *path = gl_frame_place(frame, project_root, &under_root);
        g_string_append_printf(out, "%s (%s)", frame->fn, under_root ? path : gl_base_name(path));
    } else if (frame->obj != NULL && frame->in_target && project_root != NULL) {
        /* the extension's object, as the project has it: its absolute
         * path would be a build's, and long */
        gboolean under_root = FALSE;
        g_autofree char *path = gl_frame_place(frame, project_root, &under_root);
        g_string_append_printf(out, "%s (at %s)", frame->fn != NULL ? frame->fn : "???",
                               under_root ? path : frame->obj);
    } else if (frame->obj != NULL) {
        g_string_append_printf(out, "%s (at %s)", frame->fn != NULL ? frame->fn : "???",
                               frame->obj);
    } else if (frame->fn != NULL) {
        g_string_append(out, frame->fn);
    } else {
        g_string_append_printf(out, "0x%" G_GINT64_MODIFIER "X", frame->ip);
    }
}

/* The first target frame of @stack, by preference: in the project's own
 * source (not a header's inlined code, a C++ template of the system's, a
 * runtime linked in: project_paths.h), then with any source file, then
 * any. */
static const GlFrame *first_target(const GlStack *stack)
{
    gboolean own_source = gl_stack_has_own_source(stack);
    const GlFrame *with_file = NULL, *any = NULL;
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (!frame->in_target)
            continue;
        if (any == NULL)
            any = frame;
        if (frame->file == NULL)
            continue;
        if (gl_frame_is_own(frame, own_source))
            return frame;
        if (with_file == NULL)
            with_file = frame;
    }
    return with_file != NULL ? with_file : any;
}

const GlFrame *gl_finding_location(const GlFinding *finding)
{
    return gl_finding_location_in(finding, NULL);
}

const GlFrame *gl_finding_location_in(const GlFinding *finding, const char **stack)
{
    const GlRecord *record = finding->record;
    /* a growth's site is where its blocks were allocated, as a leak's */
    const char *which = record->leak_kind != GL_LEAK_NONE || finding->growth != NULL
                            ? "allocation" : "access";
    const GlFrame *frame = first_target(&record->stack);
    /* A tail call can take the extension's frame off the access stack; the
     * block's free or allocation stack still has it. */
    for (guint i = 0; frame == NULL && i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        frame = first_target(&aux->stack);
        if (frame != NULL)
            which = aux->text == NULL ? "other"
                    : gl_aux_says_freed(aux->text) ? "free"
                    : gl_aux_says_allocated(aux->text) ? "allocation" : "other";
    }
    if (stack != NULL)
        *stack = which;
    return frame;
}

/* Returns: (transfer full): @path (transfer full, already normalised)
 * relative to @project_root when under it; *under_root (nullable) says
 * which. */
static char *strip_root(char *path, const char *project_root, gboolean *under_root)
{
    if (under_root != NULL)
        *under_root = FALSE;
    if (project_root != NULL && path[0] == '/') {
        g_autofree char *root = gl_path_normalize(project_root);
        gsize n = strlen(root);
        if (n == 1)
            n = 0;  /* "/" */
        if (strncmp(path, root, n) == 0 && path[n] == '/') {
            if (under_root != NULL)
                *under_root = TRUE;
            char *relative = g_strdup(path + n + 1);
            g_free(path);
            return relative;
        }
    }
    return path;
}

char *gl_frame_place(const GlFrame *frame, const char *project_root, gboolean *under_root)
{
    if (frame == NULL) {
        if (under_root != NULL)
            *under_root = FALSE;
        return NULL;
    }
    char *path = gl_frame_source_path(frame, project_root, under_root);
    if (path != NULL)
        return path;
    const char *place = frame->unit != NULL ? frame->unit : frame->obj;
    if (place == NULL)
        return NULL;
    return strip_root(gl_path_normalize(place), project_root, under_root);
}

char *gl_frame_source_path(const GlFrame *frame, const char *project_root, gboolean *under_root)
{
    char *path = gl_frame_path(frame);
    if (path == NULL) {
        if (under_root != NULL)
            *under_root = FALSE;
        return NULL;
    }
    return strip_root(path, project_root, under_root);
}

char *gl_test_location(const GlTest *test, const char *project_root)
{
    if (test->location == NULL)
        return NULL;
    /* "FILE:LINE", or the file alone */
    const char *colon = strrchr(test->location, ':');
    gboolean has_line = colon != NULL && colon[1] != '\0';
    for (const char *c = has_line ? colon + 1 : ""; *c != '\0'; c++)
        has_line &= g_ascii_isdigit(*c);
    g_autofree char *file = has_line ? g_strndup(test->location, (gsize) (colon - test->location))
                                     : g_strdup(test->location);
    g_autofree char *relative = strip_root(gl_path_normalize(file), project_root, NULL);
    return has_line ? g_strconcat(relative, colon, NULL) : g_steal_pointer(&relative);
}

char *gl_test_name(const GlTest *test, const char *project_root)
{
    if (*test->name != '\0' || test->location == NULL)
        return g_strdup(test->name);
    return gl_test_location(test, project_root);
}
