/* A reader of LeakSanitizer and AddressSanitizer reports (the text the
 * runtimes write to log_path.PID), a format of the input seam
 * (gemleak/read/input.h, "sanitizer"), into the same records and process
 * facts the Valgrind reader hands out, so that the judges and reports need
 * not know which engine ran. It knows the runtimes' text and the lines
 * gemleak's helper writes among them, nothing about Ruby. It reads a line
 * at a time: what it holds is the report in hand (a check's records are
 * told from the exit check's by the line after it), never the file.
 *
 * The runtimes' default frame format ("    #0 0x... in fn file:line:col",
 * "(module+0xoffset)"), the one gemleak asks for (GL_SANITIZER_FRAME_FORMAT)
 * and the one it asked for before, F|%n|%p|%m|%o|%f|%q|%s|%l|%c (one field
 * a '|', the module always given, "<null>" for what is unknown), which kept
 * run directories hold, are read. */
#ifndef GEMLEAK_SANITIZER_READER_H
#define GEMLEAK_SANITIZER_READER_H

#include <glib.h>
#include "gemleak/base/record.h"

/* The frame format gemleak asks the runtimes for (their stack_trace_format),
 * a frame on four lines: its module, function and source file, each alone
 * after a tag and the frame's number to the end of its line, then its
 * numbers, which close it. A path may hold any byte but NUL, and a format
 * prints no NUL: no separator would do ('|' in a checkout's name split the
 * fields of F|%n|%p|%m|...), so none is needed. A line that is not the tag
 * due next continues the field before it: a newline in a path. */
#define GL_SANITIZER_FRAME_FORMAT "Gm %n %m\nGf %n %f\nGs %n %s\nG %n %p %o %q %l %c"

/* How much of an input's start gl_sanitizer_detect() looks at. */
#define GL_SANITIZER_DETECT_BYTES ((gsize) 64 * 1024)
/* The most of a report read whole (the exact pass, the naming of its
 * frames): far above any a suite writes. */
#define GL_SANITIZER_REPORT_MAX_BYTES ((gsize) 1 << 30)

/* The depth LeakSanitizer and AddressSanitizer unwind to by default, and
 * that gemleak run sets (malloc_context_size). The runtime counts in it two
 * frames of its own allocator that it does not print: a stack the limit cut
 * shows GL_SANITIZER_STACK_LIMIT - GL_SANITIZER_HIDDEN_FRAMES program
 * counters (GCC 12's runtime, measured at limits 20, 30 and 40). A stack of
 * fewer that does not reach main is one the unwinder gave up on. */
#define GL_SANITIZER_STACK_LIMIT 30
#define GL_SANITIZER_HIDDEN_FRAMES 2

/* Returns: TRUE if @data (the start of an input is enough) holds a
 * LeakSanitizer or AddressSanitizer report header
 * ("==PID==ERROR: LeakSanitizer:" or "...: AddressSanitizer:") at the start
 * of a line, in its first 64 KiB. */
gboolean gl_sanitizer_detect(const char *data, gsize length);

/* How the records read (gl_input_next()) are:
 * LeakSanitizer's "Direct leak" is Leak_DefinitelyLost, "Indirect leak"
 * Leak_IndirectlyLost; AddressSanitizer's errors take Valgrind's kind names
 * (InvalidRead, InvalidWrite, InvalidFree, MismatchedFree, Overlap,
 * FatalSignal for a SEGV), with the "freed by" and "allocated by" stacks as
 * auxiliary stacks. A leak's tid is 0 (LeakSanitizer does not say which
 * thread allocated) and at_exit is TRUE; an error's tid is Valgrind's
 * number for the runtime's thread T<n>, n + 1. report_objects=1's lists
 * become each leak's blocks.
 * --per-test: the helper's markers ("gemleak:...", gemleak/base/protocol.h)
 * are lines of the file; each record's marker is the last one before its
 * report (but "gemleak:checked" and "gemleak:exit"). A report followed by
 * "gemleak:checked" is a check the helper asked for while the process ran:
 * its leaks have at_exit FALSE and while_running TRUE, and are handed out
 * once that line is read; what they mean (Valgrind's added check) is the
 * judges' (gemleak/judge/checks.h). "gemleak:owned" lines fill the
 * process's owners.
 * A log of the runtime with no report in it (only its "==PID==WARNING:"
 * lines) is no leak: no records, n_reports 0. A report cut short is a
 * problem (GL_ERROR_TRUNCATED), its unfinished record dropped; no data or
 * only blanks is GL_ERROR_EMPTY, and text that holds no line of either
 * runtime GL_ERROR_MALFORMED (the process's stands_for then 0). */

#endif
