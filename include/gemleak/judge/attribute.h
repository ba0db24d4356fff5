/* Which test a leak or error belongs to (gemleak run --per-test). The Ruby
 * helper writes a marker (a Valgrind client message) when each test starts,
 * and one before each leak check it asks for between tests; the reader gives
 * every record the last marker its process wrote before it (record->marker)
 * and whether it came from the exit leak check (record->at_exit). This
 * module reads those, one process's records at a time:
 *
 * - a leak a mid-run check reported after "end X" was lost during X;
 * - an error written between "start X" and "end X" happened during X;
 * - a leak the exit check reports again is one occurrence, with the exit
 *   check's numbers and the tests of the mid-run checks before it;
 * - a leak first reported by the exit check was lost at exit;
 * - a mid-run leak no exit check reported again (the process was killed)
 *   stays an occurrence of its own, with the latest check's numbers.
 * - a forked child's first check ("gemleak:forked", a full check) holds
 *   what it inherited: its parent's, which the parent reports. The child's
 *   later reports of those loss records count only what grew beyond that
 *   (its own blocks); one that did not grow is left out (inherited).
 * - a leak a check reported after "tests N FIRST LAST" was lost in one of
 *   those N tests; one a check after "again 1 X" reported (it grew when X
 *   ran again alone) was lost in X, found by running it again;
 * - what grew in the checks after tests ran again ("again RUNS", "again 1
 *   X") was lost by those runs, not the suite's: it is subtracted from the
 *   loss record's numbers, and a loss record only they lost is left out
 *   (repeated) when the suite's own checks reported its finding, kept
 *   whole when they did not; what a child forked by a test run again
 *   ("again forked") lost is left out.
 *
 * - under a sanitizer's engine, no check runs while the tests do: the
 *   reader puts before each exit record a copy for each test that
 *   allocated blocks of it ("owned NAME LOCATION", with those blocks'
 *   numbers); the finding names the tests its blocks were allocated in.
 *
 * It knows the helper's markers, nothing about XML or Ruby's frames. */
#ifndef GEMLEAK_ATTRIBUTE_H
#define GEMLEAK_ATTRIBUTE_H

#include <glib.h>
#include "gemleak/judge/merge.h"
#include "gemleak/base/record.h"


typedef enum {
    GL_MARKER_NONE,    /* no marker, or not one of gemleak's */
    GL_MARKER_SETUP,   /* "gemleak:setup": before the first test, a check follows */
    GL_MARKER_FORKED,  /* "gemleak:forked": first thing in a forked child, a check follows */
    GL_MARKER_START,   /* "gemleak:start\tNAME\tLOCATION": a test begins */
    GL_MARKER_END,     /* "gemleak:end\tNAME\tLOCATION": it ended, a check follows */
    GL_MARKER_TESTS,   /* "gemleak:tests\tN\tFIRST-NAME\tFIRST-LOCATION\tLAST-NAME\t
                        * LAST-LOCATION": N tests ended, a check follows */
    GL_MARKER_AGAIN,   /* "gemleak:again": tests run again begin; "gemleak:again\tRUNS":
                        * they ran, a check follows; "gemleak:again\t1\tNAME\tLOCATION":
                        * one ran alone, a check follows; "gemleak:again\tforked": a
                        * child forked by a test run again */
    GL_MARKER_OWNED,   /* "gemleak:owned\tNAME\tLOCATION": the blocks of a record
                        * allocated while that test ran ("gemleak:owned" alone:
                        * before the first test); the reader gives it to a copy
                        * of an exit report's record, read before it */
    GL_MARKER_GROWTH,  /* --growth's (gemleak/base/protocol.h): "gemleak:growth" (its
                        * repetitions begin), "gemleak:growth\tREP\tNAME\tLOCATION" (a
                        * measure after the test's REPth run again, 0 the one before),
                        * "gemleak:growth\tunmeasured\tNAME\tLOCATION\tWHY",
                        * "gemleak:growth\tmeasured\tN" (the last) */
} GlMarkerKind;

/* Which of --growth's markers a GL_MARKER_GROWTH is. */
typedef enum {
    GL_GROWTH_BEGIN,
    GL_GROWTH_REPETITION,
    GL_GROWTH_UNMEASURED,
    GL_GROWTH_MEASURED,
} GlGrowthMarker;

/* A marker, read. */
typedef struct {
    GlMarkerKind kind;
    GlTest *test;      /* START, END, AGAIN alone, OWNED: the test; TESTS: the first (owned) */
    GlTest *last;      /* TESTS: the last test (owned) */
    guint64 count;     /* TESTS: the tests; AGAIN: the runs, 0 when they begin */
    gboolean forked;   /* AGAIN: in a child forked by a test run again */
    GlGrowthMarker growth;  /* GROWTH: which; its test in @test (REPETITION, UNMEASURED),
                             * the repetition or the tests measured in @count */
    char *why;         /* GROWTH UNMEASURED: why, unescaped (owned) */
} GlMarker;

/* Reads @text (nullable) into @marker; free its tests with
 * gl_marker_clear(). A marker of gemleak's that is not well formed is
 * GL_MARKER_NONE. Returns: its kind. */
GlMarkerKind gl_marker_read(const char *text, GlMarker *marker);
void gl_marker_clear(GlMarker *marker);

/* Reads a marker (nullable). NAME and LOCATION are %XX-escaped by the
 * helper; Valgrind adds white space at the end.
 * Returns: what it is; for START, END and AGAIN alone, *test (nullable)
 * receives the test, (transfer full), else NULL. */
GlMarkerKind gl_marker_parse(const char *text, GlTest **test);

typedef struct GlAttributor GlAttributor;

/* Returns: (transfer full): an attributor that adds the records of one
 * input to @findings, which must outlive it. */
GlAttributor *gl_attributor_new(GlFindings *findings);
void gl_attributor_free(GlAttributor *attributor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlAttributor, gl_attributor_free)

/* The place of each test in the run of the process whose records come
 * next (GlProcess.test_order, nullable; a reference is kept): the tests a
 * finding names are those that ran first, whatever order the engine
 * reported its loss records in. */
void gl_attributor_set_test_order(GlAttributor *attributor, GHashTable *order);

/* Takes a kept @record, read at @order (as gl_findings_add() takes it): an
 * error is added at once; a mid-run leak is held until the exit check
 * reports it again, or the input ends. */
void gl_attributor_add(GlAttributor *attributor, GlRecord *record, guint64 order);

/* Adds the mid-run leaks still held (in the order they were read): no exit
 * check reported them again. Call once, at the end of the input. */
void gl_attributor_finish(GlAttributor *attributor);

/* Returns: how many records were not added because a later leak check of
 * the same process reported the same loss record again. */
guint64 gl_attributor_repeated(const GlAttributor *attributor);

/* Returns: how many records were not added because every block of them
 * was inherited from the parent process (reported by a forked child's
 * check at fork, and not grown since). */
guint64 gl_attributor_inherited(const GlAttributor *attributor);

#endif
