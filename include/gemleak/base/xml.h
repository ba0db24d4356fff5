/* libxml2, loaded the first time gemleak reads or writes XML: Valgrind's
 * reports (the Valgrind engine, `gemleak filter`) and --format junit. A run
 * under a sanitizer's engine does neither, and no longer pays for it at
 * each start: linked, libxml2 brought ICU and libstdc++ into every gemleak
 * process, 3.8M of the 9.8M instructions `gemleak run --engine lsan` spent
 * before its command started, most of them the dynamic loader resolving
 * libstdc++'s symbols (Callgrind). The functions gemleak calls, by
 * libxml2's names less "xml", each of the type libxml2 declares. */
#ifndef GEMLEAK_XML_H
#define GEMLEAK_XML_H

#include <libxml/parser.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlwriter.h>

/* libxml2's soname, as Debian's libxml2 package installs it. */
#define GL_XML_LIBRARY "libxml2.so.2"

typedef struct {
    __typeof__(xmlInitParser) *InitParser;
    __typeof__(xmlSetExternalEntityLoader) *SetExternalEntityLoader;
    __typeof__(xmlSetGenericErrorFunc) *SetGenericErrorFunc;
    __typeof__(xmlReaderForMemory) *ReaderForMemory;
    __typeof__(xmlReaderNewMemory) *ReaderNewMemory;
    __typeof__(xmlFreeTextReader) *FreeTextReader;
    __typeof__(xmlTextReaderRead) *TextReaderRead;
    __typeof__(xmlTextReaderDepth) *TextReaderDepth;
    __typeof__(xmlTextReaderNodeType) *TextReaderNodeType;
    __typeof__(xmlTextReaderIsEmptyElement) *TextReaderIsEmptyElement;
    __typeof__(xmlTextReaderConstLocalName) *TextReaderConstLocalName;
    __typeof__(xmlTextReaderConstString) *TextReaderConstString;
    __typeof__(xmlTextReaderConstValue) *TextReaderConstValue;
    __typeof__(xmlTextReaderSetStructuredErrorHandler) *TextReaderSetStructuredErrorHandler;
    __typeof__(xmlBufferCreate) *BufferCreate;
    __typeof__(xmlBufferFree) *BufferFree;
    __typeof__(xmlBufferContent) *BufferContent;
    __typeof__(xmlBufferLength) *BufferLength;
    __typeof__(xmlNewTextWriterMemory) *NewTextWriterMemory;
    __typeof__(xmlFreeTextWriter) *FreeTextWriter;
    __typeof__(xmlTextWriterSetIndent) *TextWriterSetIndent;
    __typeof__(xmlTextWriterSetIndentString) *TextWriterSetIndentString;
    __typeof__(xmlTextWriterStartDocument) *TextWriterStartDocument;
    __typeof__(xmlTextWriterEndDocument) *TextWriterEndDocument;
    __typeof__(xmlTextWriterStartElement) *TextWriterStartElement;
    __typeof__(xmlTextWriterEndElement) *TextWriterEndElement;
    __typeof__(xmlTextWriterWriteAttribute) *TextWriterWriteAttribute;
    __typeof__(xmlTextWriterWriteString) *TextWriterWriteString;
} GlXml;

/* Returns: libxml2's functions, loaded once (thread-safe) and kept for
 * the life of the process. Where libxml2 cannot be loaded (an installation
 * without it, which the dynamic loader refused to start before), says so
 * on standard error and exits with status 3: nothing was read. */
const GlXml *gl_xml(void);

#endif
