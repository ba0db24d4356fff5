/* json-glib, loaded where JSON is read or written (gemleak/base/json.h
 * says why). */
#define GL_JSONLIB_LOADER
#include "gemleak/base/json.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
    if (missing != NULL)
        fprintf(stderr, "gemleak: %s has no %s", GL_JSONLIB_LIBRARY, missing);
    else
        fprintf(stderr, "gemleak: cannot load json-glib: %s", dlerror());
    fprintf(stderr, " (JSON reports, baselines and --jobs' durations need it; Debian's "
                    "package: libjson-glib-1.0-0)\n");
    exit(3);
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
