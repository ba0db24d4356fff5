#ifndef __RESOURCE_gl_resources_H__
#define __RESOURCE_gl_resources_H__

#include <gio/gio.h>

extern GResource *gl_resources_get_resource (void);
#endif
