/* Between the files of the run directory (gemleak/run/rundir.h): how the
 * files the engines and the helper write there are named, which rundir.c
 * knows and rundir_processes.c, rundir_compress.c and rundir_clean.c look
 * for. src/run/ only. */
#ifndef GEMLEAK_RUNDIR_INT_H
#define GEMLEAK_RUNDIR_INT_H

#include <glib.h>

/* Returns: TRUE if @name is @prefix, one or more digits (a pid), @suffix:
 * "loaded-12.txt" for GL_PROTO_LOADED_PREFIX and GL_PROTO_FILE_SUFFIX,
 * "12.xml" for "" and ".xml". */
gboolean gl_rundir_is_pid_file(const char *name, const char *prefix, const char *suffix);

/* Returns: TRUE if @name is the XML of a process image (PID.xml,
 * PID.N.xml), compressed (.xml.gz) when @compressed. */
gboolean gl_rundir_is_xml_file(const char *name, gboolean compressed);

#endif
