/* json-glib, loaded where JSON is read or written (gemleak/base/json.h
 * says why). */
#define GL_JSONLIB_LOADER
#include "gemleak/base/json.h"
#include "gemleak/base/sys.h"

#include <dlfcn.h>
#include <stdint.h>

static GlJsonLib lib;

static gpointer load_once(gpointer data)
{
    (void) data;
    const char *missing = NULL;
    void *handle = dlopen(GL_JSONLIB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL)
        goto failed;
#define RESOLVE(name)                                                         \
    lib.name = (__typeof__(lib.name)) (uintptr_t) dlsym(handle, #name);       \
    if (lib.name == NULL) {                                                   \
        missing = #name;                                                      \
        goto failed;                                                          \
    }
    GL_JSONLIB_FUNCTIONS(RESOLVE)
#undef RESOLVE
    return &lib;
failed:
    gl_library_missing("json-glib", GL_JSONLIB_LIBRARY, missing,
                       "JSON reports, baselines and --jobs' durations", "libjson-glib-1.0-0");
}

const GlJsonLib *gl_jsonlib(void)
{
    static GOnce once = G_ONCE_INIT;
    return g_once(&once, load_once, NULL);
}

void gl_jsonlib_object_unref(void *object)
{
    gl_jsonlib()->g_object_unref(object);
}

void gl_jsonlib_node_unref(GlJsonNode *node)
{
    gl_jsonlib()->json_node_unref(node);
}
