/* What an input says of the process whose output it is: the one model
 * every format fills in (Valgrind's reader as its document goes, the
 * sanitizer reader as its report does, gemleak's JSON report read back
 * with the counts of the run it judged), and all that the judges see of a
 * process besides its records. A field a format has nothing to say about
 * stays 0, FALSE or NULL. Owned by the input that read it. */
#ifndef GEMLEAK_PROCESS_H
#define GEMLEAK_PROCESS_H

#include <glib.h>

/* How a process's allocation stacks were made (GL_PROTO_MARKER_UNWOUND). */
typedef enum {
    GL_UNWOUND_RUNTIME = 0,  /* by the engine itself, as it unwinds */
    /* by gemleak's allocation front: the allocating call, and an extension's
     * call of Ruby's allocation functions on the way; no more */
    GL_UNWOUND_CALL,
    /* by frame pointers, with the front's frame between such a call and
     * the extension */
    GL_UNWOUND_FRAMES,
} GlUnwound;

/* What an engine's output leaves to the judges, the same for every
 * process of its format: how far its stacks and its checks can be taken at
 * their word. Valgrind's: all zero. */
typedef struct {
    /* Its checks while the process ran (the helper's, between tests, at a
     * fork) report every object lost so far, again in each: the judges
     * re-create Valgrind's added checks from them (judge/checks.h). */
    gboolean full_checks;
    /* Its unwinder may give up short of main: a leak's stack shorter than
     * @stack_limit program counters (the limit counting @hidden_frames the
     * output does not show) that reaches neither main nor a thread's start
     * cannot decide the leak (judge/stacks.h). 0: stacks are whole. */
    guint stack_limit;
    guint hidden_frames;
    /* It calls every block of a lost cycle indirect (judge/cycles.h). */
    gboolean cycles_indirect;
    /* A frame with a source line may have no module named (a frame format
     * that does not print it): such a frame cannot be told to be a
     * target's or not. (nullable) Why, and what to do: " (the runtime's
     * default frame format): ...". */
    const char *modules_hidden;
    /* (nullable) Why an engine that stopped the process at an error
     * (GlProcess.halted) stops there, and what to do. */
    const char *halted_why;
    /* The input is one process's output, whose facts hold even when it has
     * no record (a clean process's report). */
    gboolean one_process;
    /* It says when the process's leak check ran to its end (done, exec). */
    gboolean says_done;
    /* Its runtime names frames from DWARF alone and gives source paths as
     * the compiler recorded them: the judges name and place them as
     * Valgrind does, from the objects (read/symbolize.h). */
    gboolean named_by_runtime;
    /* How the process's allocation stacks were made: with gemleak's
     * allocation front, every call an extension made into Ruby's
     * allocation functions shows in the stacks below it (GlRecord.via),
     * and a stack without one was allocated outside any (judge/stacks.h). */
    GlUnwound unwound;
} GlOutputTraits;

/* What an input already judged (gemleak's JSON report: a CI shard's) says
 * of the run it judged, as it counted it. */
typedef struct {
    guint processes;            /* its summary's "files" */
    guint64 errors_seen;
    /* its skipped errors by reason, as it names them */
    guint64 other_leak_kinds;
    guint64 not_in_target;
    guint64 ruby_memory;
    guint64 in_init;
    guint64 unjudged_process;
    guint64 repeated;           /* repeated by a later leak check (--per-test) */
    guint64 inherited;          /* inherited from the parent process */
    guint free_at_exit;         /* processes whose Ruby freed its memory at exit */
    guint recent_unkept;        /* processes kept from no recent address (GlSummary's) */
    GPtrArray *targets;         /* char*, owned */
    /* What its run could not check: a report whose gate was not complete
     * always has a problem and incomplete_files or unchecked_processes
     * above 0 (a terse one gets them here). */
    guint incomplete_files;
    guint unchecked_processes;
    GPtrArray *problems;        /* char*, owned: one message each */
    GPtrArray *truncated_files; /* char*, owned */
    /* --growth, when its run asked for it: the tests measured, the most
     * repetitions, the tests not measured ("NAME (LOCATION): WHY"), and
     * the processes that stopped before saying how many they measured */
    gboolean growth_asked;
    guint growth_measured;
    guint growth_repetitions;
    GPtrArray *growth_unmeasured; /* char*, owned */
    guint growth_unfinished;
} GlJudgedRun;

typedef struct {
    /* The processes the input stands for: 1 for an engine's output (every
     * document of a Valgrind file counted as one input); a judged report's
     * own count; 0 for an input that turned out to hold no output of any
     * process (an empty or unrecognised sanitizer log, a JSON report that
     * cannot be read). */
    guint stands_for;
    const char *tool;        /* what wrote it: "memcheck", "LeakSanitizer",
                              * "AddressSanitizer"; nullable */
    gint protocol_version;   /* Valgrind's protocol, 0 for others */
    gint64 pid;              /* 0 until seen */
    gint64 ppid;
    const char *exe;         /* the client's <argv><exe>, nullable */
    GPtrArray *argv;         /* the client's <arg>s, as char *; nullable */
    GPtrArray *vargv;        /* Valgrind's own exe and args, as char *; nullable */
    gboolean started;        /* <status><state>RUNNING</state> seen */
    gboolean finished;       /* <status><state>FINISHED</state> seen */
    /* Valgrind: </valgrindoutput> seen, or the document ends at gemleak's
     * marker that the process checked itself before it exec'd. A sanitizer:
     * every report ended with its SUMMARY line (FALSE: the process died or
     * was killed while writing, and the unfinished record was dropped). */
    gboolean complete;
    /* It checked what it had leaked before it exec'd another program
     * (GL_PROTO_MARKER_EXEC): this output is that image's, whole. */
    gboolean exec;
    /* "gemleak:done": the process's leak check at exit ran to its end. */
    gboolean done;
    /* It got to its exit: the engine's check at exit reported, or the
     * helper said it was done at exit ("gemleak:exit"). */
    gboolean reached_exit;
    gboolean interleaved;    /* elements after its root closed: several processes
                              * wrote one file (--xml-file without %p) */
    const char *marker;      /* the last marker (with the marker prefix), nullable */
    /* The helper marked tests in it (a marker but "gemleak:forked" and the
     * check's own), besides what the last marker says. */
    gboolean marked;
    guint n_errors;          /* records handed out so far, in this input */
    gboolean fatal_signal;   /* the engine saw the process die of a signal */
    guint n_documents;       /* documents that came before this one in the same
                              * input (files concatenated); 0 normally */
    guint n_reports;         /* a sanitizer's "==PID==ERROR:" headers */
    /* The engine did not report every leak ("Too many leaks", max_leaks,
     * a fatal error of its own): what is missing may be the extension's. */
    gboolean incomplete;
    const char *incomplete_reason;  /* nullable: a static phrase */
    const char *incomplete_hint;    /* nullable: what to do about it */
    /* The engine stopped the process at an error (AddressSanitizer's
     * "ABORTING"): what it would have done next did not run. */
    gboolean halted;
    /* Blocks still allocated at the last check that its leak check could
     * not judge (allocated on a Fiber's stack where gemleak's allocation
     * front could not give them a stack: "gemleak:hidden"), and that no
     * exact pass judged since: what they hide may be the extension's. */
    guint hidden_blocks;
    /* --per-test under a sanitizer: which test allocated each block still
     * allocated at exit, address (gint64*) -> the owner's marker
     * "gemleak:owned\tNAME\tLOCATION" (char*); nullable. */
    GHashTable *owners;
    /* The owner's marker ("gemleak:owned\tNAME\tLOCATION") of the blocks
     * at exit owners does not name: the test that started the process
     * ("gemleak:origin"); nullable. */
    const char *origin;
    /* --per-test: the place of each test in the process's run, from the
     * helper's start markers: GSIZE_TO_POINTER(gl_process_test_key() of
     * the marker's NAME and LOCATION) -> GSIZE_TO_POINTER(1 for the first
     * test that started, 2 for the next...); nullable. A judge that keeps
     * it takes a reference. */
    GHashTable *test_order;
    /* --growth: every "gemleak:growth..." marker of the process, in order,
     * as the helper wrote it (the white space Valgrind adds cut): char*,
     * owned; nullable. What they mean is the judges' (judge/growth.h). */
    GPtrArray *growth_markers;
    GlOutputTraits traits;
    const GlJudgedRun *judged;  /* nullable: an input already judged */
} GlProcess;

/* Returns: the key of GlProcess.test_order for the test of @name and
 * @location, as the helper's markers give them (escaped). */
gsize gl_process_test_key(const char *name, const char *location);

/* Notes @marker (a line of the helper's, "gemleak:...") in @process: a
 * start marker gives the test its place in GlProcess.test_order, unless
 * it started before; a growth marker goes to GlProcess.growth_markers. */
void gl_process_note_marker(GlProcess *process, const char *marker);

#endif
