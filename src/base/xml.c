/* libxml2, loaded where XML is read or written (gemleak/base/xml.h says
 * why). */
#include "gemleak/base/xml.h"
#include "gemleak/base/sys.h"

#include <dlfcn.h>
#include <stdint.h>

#include <glib.h>

static GlXml xml;

/* Resolves libxml2's function xml@NAME into xml.@NAME; on failure, says
 * which and gives up on the load. */
#define RESOLVE(handle, name)                                                  \
    do {                                                                       \
        xml.name = (__typeof__(xml.name)) (uintptr_t) dlsym((handle), "xml" #name); \
        if (xml.name == NULL) {                                                \
            missing = "xml" #name;                                             \
            goto failed;                                                       \
        }                                                                      \
    } while (0)

static gpointer load_once(gpointer data)
{
    (void) data;
    const char *missing = NULL;
    void *handle = dlopen(GL_XML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL)
        goto failed;
    RESOLVE(handle, InitParser);
    RESOLVE(handle, SetExternalEntityLoader);
    RESOLVE(handle, SetGenericErrorFunc);
    RESOLVE(handle, ReaderForMemory);
    RESOLVE(handle, ReaderNewMemory);
    RESOLVE(handle, FreeTextReader);
    RESOLVE(handle, TextReaderRead);
    RESOLVE(handle, TextReaderDepth);
    RESOLVE(handle, TextReaderNodeType);
    RESOLVE(handle, TextReaderIsEmptyElement);
    RESOLVE(handle, TextReaderConstLocalName);
    RESOLVE(handle, TextReaderConstString);
    RESOLVE(handle, TextReaderConstValue);
    RESOLVE(handle, TextReaderSetStructuredErrorHandler);
    RESOLVE(handle, BufferCreate);
    RESOLVE(handle, BufferFree);
    RESOLVE(handle, BufferContent);
    RESOLVE(handle, BufferLength);
    RESOLVE(handle, NewTextWriterMemory);
    RESOLVE(handle, FreeTextWriter);
    RESOLVE(handle, TextWriterSetIndent);
    RESOLVE(handle, TextWriterSetIndentString);
    RESOLVE(handle, TextWriterStartDocument);
    RESOLVE(handle, TextWriterEndDocument);
    RESOLVE(handle, TextWriterStartElement);
    RESOLVE(handle, TextWriterEndElement);
    RESOLVE(handle, TextWriterWriteAttribute);
    RESOLVE(handle, TextWriterWriteString);
    return &xml;
failed:
    gl_library_missing("libxml2", GL_XML_LIBRARY, missing,
                       "reading Valgrind's XML and writing JUnit reports", "libxml2");
}

const GlXml *gl_xml(void)
{
    static GOnce once = G_ONCE_INIT;
    return g_once(&once, load_once, NULL);
}
