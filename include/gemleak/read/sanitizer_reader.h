/* A reader of LeakSanitizer and AddressSanitizer reports (the text the
 * runtimes write to log_path.PID), into the same records the Valgrind
 * reader hands out, so that the classifier, merge and reports need not know
 * which engine ran. It knows the runtimes' text, nothing about Ruby.
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

typedef enum {
    GL_SANITIZER_UNKNOWN = 0,
    GL_SANITIZER_LSAN,   /* "ERROR: LeakSanitizer" only */
    GL_SANITIZER_ASAN,   /* an "ERROR: AddressSanitizer" (its leak check, if
                          * any, is a LeakSanitizer report in the same file) */
} GlSanitizerTool;

/* What one report file says about its process. */
typedef struct {
    GlSanitizerTool tool;
    gint64 pid;          /* from the report's "==PID==", else the file name's
                          * ".PID" suffix (log_path=DIR/NAME), else 0 */
    guint n_reports;     /* "==PID==ERROR:" headers */
    guint n_records;
    /* Every report ended with its SUMMARY line. FALSE: the process died or
     * was killed while writing, and the last, unfinished record was dropped. */
    gboolean complete;
    /* LeakSanitizer did not report every leak ("Too many leaks! Only the
     * first 5000 ..." or a fatal error of its own): what is missing may be
     * the extension's, so the process cannot pass. */
    gboolean incomplete;
    const char *incomplete_reason;  /* (transfer none) nullable: a static phrase */
    const char *incomplete_hint;    /* (transfer none) nullable: what to do about it */
    /* AddressSanitizer stopped the process at an error ("==PID==ABORTING"):
     * it halts at the first unless the code was built with
     * -fsanitize-recover=address (and halt_on_error=0 given). */
    gboolean halted;
    /* Records of mid-run checks left out because the exit check did not
     * report their loss record (see gl_sanitizer_read_data). */
    guint n_not_lost;
    /* "gemleak:done": the process's leak check at exit ran to its end (the
     * library gemleak preloads, or the helper before exit!); without it, a
     * run that asked for it (engine.txt's proof) did not check the process. */
    gboolean done;
    /* "gemleak:exec": the process checked what it had leaked before it
     * exec'd another program; this report is that image's, whole. */
    gboolean exec;
    /* The helper marked tests in it (a marker but "gemleak:forked",
     * "gemleak:checked" and "gemleak:exit"): --per-test followed them. */
    gboolean marked;
} GlSanitizerFacts;

/* How much of an input's start gl_sanitizer_detect() looks at. */
#define GL_SANITIZER_DETECT_BYTES ((gsize) 64 * 1024)

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

/* Reads every record of the @length bytes of @data; @name (a file name,
 * nullable) names it in messages and gives the pid when the text does not.
 * *records gets (transfer full) a GPtrArray of GlRecord* (freeing them) in
 * report order, frames[0] innermost as Valgrind's; @facts what the report
 * says about its process.
 * LeakSanitizer's "Direct leak" is Leak_DefinitelyLost, "Indirect leak"
 * Leak_IndirectlyLost; AddressSanitizer's errors take Valgrind's kind names
 * (InvalidRead, InvalidWrite, InvalidFree, MismatchedFree, Overlap,
 * FatalSignal for a SEGV), with the "freed by" and "allocated by" stacks as
 * auxiliary stacks. A leak's tid is 0 (LeakSanitizer does not say which
 * thread allocated) and at_exit is TRUE; an error's tid is Valgrind's
 * number for the runtime's thread T<n>, n + 1.
 * --per-test: the helper's markers ("gemleak:...", gemleak/base/protocol.h)
 * are lines of the file; each record's marker is the last one before its
 * report (but "gemleak:checked" and "gemleak:exit"). A report followed by
 * "gemleak:checked" is a check the helper asked for while the process ran:
 * its records have at_exit FALSE and Valgrind's added-check meaning (only
 * the loss records with objects, by their addresses from report_objects=1,
 * that no earlier check saw; their numbers every object seen so far). Once
 * the process reached exit (a report outside any check, or
 * "gemleak:exit"), a mid-run record whose loss record the exit report does
 * not hold is left out (facts->n_not_lost): it was never lost, only out of
 * the runtime's sight while Ruby ran.
 * A log of the runtime with no report in it (only its "==PID==WARNING:"
 * lines) is no leak: no records, n_reports 0. A report cut short is no
 * error either: @facts says it (complete).
 * Returns: FALSE with GL_ERROR_EMPTY for no data or only blanks, and
 * GL_ERROR_MALFORMED for text that holds no line of either runtime. */
gboolean gl_sanitizer_read_data(const char *data, gsize length, const char *name,
                                GPtrArray **records, GlSanitizerFacts *facts, GError **error);

/* The same for the file @path.
 * Returns: FALSE with GL_ERROR_IO when it cannot be read, GL_ERROR_LIMIT
 * when it is larger than 1 GiB, or as gl_sanitizer_read_data(). */
gboolean gl_sanitizer_read_file(const char *path, GPtrArray **records, GlSanitizerFacts *facts,
                                GError **error);

#endif
