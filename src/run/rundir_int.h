/* Between the files of the run directory (gemleak/run/rundir.h): how the
 * XML files Valgrind writes there are named, which rundir.c knows and
 * rundir_compress.c and rundir_clean.c look for (the helper's files:
 * gl_run_dir_is_pid_file(), gemleak/read/run_dir.h). src/run/ only. */
#ifndef GEMLEAK_RUNDIR_INT_H
#define GEMLEAK_RUNDIR_INT_H

#include <glib.h>

/* Returns: TRUE if @name is the XML of a process image (PID.xml,
 * PID.N.xml), compressed (.xml.gz) when @compressed. */
gboolean gl_rundir_is_xml_file(const char *name, gboolean compressed);

#endif
