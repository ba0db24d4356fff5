/* The plain data that flows from the readers to the judges and reports:
 * one error, leak or fatal signal with its stacks, whatever format it was
 * read from (Valgrind's <error> and <fatal_signal>, a sanitizer's report, a
 * finding of gemleak's own JSON report). Nothing here knows a format or
 * Ruby. */
#ifndef GEMLEAK_RECORD_H
#define GEMLEAK_RECORD_H

#include <glib.h>

/* Leak kinds, as flags so that a set of them (--leak-kinds) is one integer. */
typedef enum {
    GL_LEAK_NONE = 0,            /* not a leak: a memory error or a fatal signal */
    GL_LEAK_DEFINITE = 1 << 0,
    GL_LEAK_INDIRECT = 1 << 1,
    GL_LEAK_POSSIBLE = 1 << 2,
    GL_LEAK_REACHABLE = 1 << 3,
} GlLeakKind;
#define GL_LEAK_ALL (GL_LEAK_DEFINITE | GL_LEAK_INDIRECT | GL_LEAK_POSSIBLE | GL_LEAK_REACHABLE)

/* The pseudo-kind gemleak gives a <fatal_signal>, so that a crash flows
 * through classification and reports like any other error. */
#define GL_KIND_FATAL_SIGNAL "FatalSignal"
/* The kind of a finding of --growth: a site of a target whose live memory
 * rose over a test's repetitions and never fell back (judge/growth.h). */
#define GL_KIND_GROWTH "Growth"

typedef struct {
    guint64 ip;
    /* ip's offset in obj, as a sanitizer runtime gives it (its "module
     * offset", the address the object's symbols and debug information
     * use); 0 when unknown (Valgrind's frames) */
    guint64 offset;
    const char *obj;     /* every string: nullable, owned by the record */
    const char *fn;
    const char *dir;
    const char *file;
    guint line;          /* 0 when unknown */
    gboolean in_target;  /* set by the classifier, FALSE until then */
    /* A target's frame without a file (an object built without -g): the
     * source file of its compilation unit, as the object's symbol table
     * names it, found on disk (judge/project_paths.h); nullable */
    const char *unit;
} GlFrame;

typedef struct {
    GlFrame *frames;
    guint n_frames;
} GlStack;

/* An auxiliary part of an error: the auxwhat/xauxwhat text (or an origin's
 * what) and the stack that follows it, either of which may be absent. */
typedef struct {
    const char *text;
    GlStack stack;       /* n_frames == 0 when no stack follows the text */
} GlAux;

typedef struct {
    const char *name;    /* sname */
    const char *kind;    /* skind: "Memcheck:Leak" */
    const char *aux;     /* skaux, nullable */
    const char *rawtext; /* the ready-to-paste block Valgrind wrote, nullable */
    const char **frames; /* "fun:NAME" or "obj:PATH", NULL-terminated */
} GlSuppression;

/* A block of a leak's loss record, when the engine lists them
 * (LeakSanitizer's report_objects=1): its address and size. */
typedef struct {
    guint64 address;
    guint64 bytes;
} GlBlock;

/* A test of the suite (gemleak run --per-test): where the helper's markers
 * place an occurrence. */
typedef struct {
    char *name;            /* "CountTest#test_count", RSpec's full description;
                            * "" for a whole test file (--per-test=file) */
    char *location;        /* as the helper wrote it: "/abs/test/count_test.rb:6",
                            * or the file alone; nullable */
    /* Where it came in its process's run: 1 for the first test that
     * started, 2 for the next...; 0 when not known (a report read back). */
    guint64 seq;
} GlTest;

/* Returns: (transfer full): free with gl_test_free(). */
GlTest *gl_test_new(const char *name, const char *location);
/* Returns: (transfer full): a copy of @test, its place in the run too. */
GlTest *gl_test_copy(const GlTest *test);
void gl_test_free(GlTest *test);
gboolean gl_test_equal(const GlTest *a, const GlTest *b);
/* Puts @test (taken) into @tests (GlTest*, owned) in the order the tests
 * ran (by seq; one whose place is not known after those whose is, in the
 * order they came), unless it is there already, keeping the first @max:
 * the tests a finding names are the first that lost it, whatever order
 * the engine reported its loss records in.
 * Returns: TRUE when a test was left out for want of room. */
gboolean gl_tests_insert(GPtrArray *tests, GlTest *test, guint max);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlTest, gl_test_free)

struct GlRecord;

/* What an input already judged says of a record: a finding of gemleak's
 * own JSON report (a CI shard's), merged and counted where it was read,
 * which the judges merge as it is and never judge again. Owned by its
 * record. */
typedef struct {
    guint occurrences;
    guint64 total_bytes;
    guint64 total_blocks;
    guint64 direct_bytes;
    GArray *pids;              /* gint64 */
    GPtrArray *tests;          /* GlTest*, owned */
    gboolean more_tests;
    gboolean lost_before_tests;
    gboolean lost_at_exit;
    gboolean found_again;
    gboolean allocated_in_tests;
    guint64 among;             /* lost in one of this many tests, from among_first to among_last */
    GlTest *among_first;       /* nullable, owned */
    GlTest *among_last;        /* nullable, owned */
    GPtrArray *sites;          /* struct GlRecord*, owned: the other accesses to its freed
                                * block; nullable */
    /* --growth: a growth finding's series, as the report wrote it
     * (gemleak/judge/merge.h's GlGrowth); growth_repetitions 0: none. */
    guint growth_repetitions;
    gint64 *growth_bytes;      /* [growth_repetitions], owned */
    gint64 *growth_blocks;     /* [growth_repetitions], owned */
    guint64 growth_median_bytes;
    gboolean growth_held;
    gboolean growth_lost;
} GlJudged;

/* Frees @judged (nullable) and what it holds; the entries of its arrays
 * that were stolen (set to NULL) are skipped. */
void gl_judged_free(GlJudged *judged);

typedef struct GlRecord {
    /* Valgrind's number for the error; a sanitizer's report numbers its
     * records in the order its log holds them; a JSON report's finding its
     * place among the report's findings. */
    guint64 unique;
    gint tid;
    gint64 pid;              /* of the process whose document held the error */
    const char *threadname;  /* nullable */
    const char *kind;        /* as Valgrind spells it: "Leak_DefinitelyLost" */
    GlLeakKind leak_kind;
    const char *what;        /* <what>, or <xwhat><text> */
    gboolean has_leak_size;
    guint64 leaked_bytes;
    guint64 leaked_blocks;
    /* --growth: what the loss record's live bytes and blocks changed by
     * since the measure before (Valgrind's changed leak check, "64 (+64)
     * bytes in 1 (+1) blocks"; a sanitizer's "gemleak:grew" line). */
    gboolean has_change;
    gint64 change_bytes;
    gint64 change_blocks;
    GlStack stack;           /* the primary stack; frames[0] is innermost */
    GArray *aux;             /* of GlAux, in document order */
    gint fd;                 /* protocol 5 file-descriptor errors, -1 otherwise */
    const char *fd_path;
    GlSuppression *suppression; /* nullable */
    /* The text of the last client message (VALGRIND_PRINTF) its process
     * wrote before it, nullable: where in the run it happened. */
    const char *marker;
    gboolean at_exit;        /* written after the process finished (the exit leak check) */
    /* Found by a check made while Ruby still ran (before exit! or exec, at
     * a fork, between tests): Ruby had freed none of its memory then, even
     * in a process that frees it at exit. */
    gboolean while_running;
    /* A copy the reader made of an exit report's record, to say which test
     * allocated some of its blocks (--per-test under a sanitizer): no error
     * of its own, counted nowhere. */
    gboolean attribution_only;
    /* Set by the classifier: a kept leak whose owner cannot be told, because
     * the Ruby frames that would tell have no names (a Ruby without symbols). */
    gboolean uncertain;
    guint unnamed_frames;        /* how many such frames */
    const char *unnamed_object;  /* the file name of the object they are in */
    /* Set by the analysis for a LeakSanitizer record whose unwinder gave up
     * (its fast unwinder on a Ruby without frame pointers: 2 or 3 frames):
     * how many frames the stack has, short of main and of the runtime's
     * depth limit; 0 for a whole stack. Such a record is uncertain. */
    guint stack_cut;
    /* (nullable) What makes the next output's stacks whole, in the
     * engine's own words, where no gemleak run wrote this one (a log read
     * on its own, which --exact-stacks cannot run again): the runtime's
     * options. Set by the reader; the reports say it of a stack cut short. */
    const char *whole_stacks;
    /* The blocks of a leak's loss record (GlBlock), when the engine listed
     * them; nullable. */
    GArray *blocks;
    /* Its allocation ran below an extension's call of one of Ruby's
     * allocation functions (gemleak's allocation front said so: its
     * gemleak_via frame, which the reader takes out of the stack). */
    gboolean via;
    /* Frames of gemleak's own libraries the reader took out of the stack,
     * which the engine's depth limit counted. */
    guint dropped_frames;
    /* An occurrence already judged (a JSON report's finding); nullable: a
     * record to judge. */
    GlJudged *judged;
    GStringChunk *strings;   /* owns every string of the record */
} GlRecord;

/* Returns: (transfer full): an empty record; free with gl_record_free(). */
GlRecord *gl_record_new(void);
void gl_record_free(GlRecord *record);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GlRecord, gl_record_free)

/* Returns: (transfer full): what a leak's loss record is in one process:
 * its pid, its kind and the exact addresses of its allocation stack, which
 * stay where they are for the life of the process and in a child it forks.
 * Merge keys (merge.h) are coarser (they stop at the last target frame):
 * two loss records of one finding must not be taken for one. */
char *gl_record_loss_key(const GlRecord *record);

/* Returns: (transfer full): a copy of @from that shares nothing with it;
 * free with gl_record_free(). */
GlRecord *gl_record_copy(const GlRecord *from);

/* Returns: (transfer none): @s copied into the record's strings, or NULL for NULL. */
const char *gl_record_intern(GlRecord *record, const char *s);

/* Returns: the leak kind Valgrind's kind name stands for, GL_LEAK_NONE for others. */
GlLeakKind gl_leak_kind_from_name(const char *kind);

/* Returns: TRUE if @word is one of "definite", "indirect", "possible",
 * "reachable" (Valgrind's --show-leak-kinds words), its flag in *kind. */
gboolean gl_leak_kind_from_word(const char *word, GlLeakKind *kind);

/* Returns: (transfer none): "definite", "indirect", ... for one flag. */
const char *gl_leak_kind_to_string(GlLeakKind kind);

/* Returns: (transfer none) (nullable): the first frame the classifier marked
 * as in the target, in the primary stack or else the auxiliary ones. */
const GlFrame *gl_record_first_target_frame(const GlRecord *record);

/* Returns: TRUE if @text (an auxiliary stack's heading, nullable) says the
 * stack is where the block was freed: Valgrind's "... a block of size 115
 * free'd", AddressSanitizer's "freed by thread T0 here". */
gboolean gl_aux_says_freed(const char *text);

/* Returns: TRUE if @text says the stack is where the block was allocated:
 * Valgrind's "Block was alloc'd at", AddressSanitizer's "previously
 * allocated by thread T0 here". */
gboolean gl_aux_says_allocated(const char *text);

/* Returns: @a + @b, or G_MAXUINT64 where that would wrap: a total that
 * wrapped could read as "nothing lost". */
static inline guint64 gl_add_saturating(guint64 a, guint64 b)
{
    return a + b < a ? G_MAXUINT64 : a + b;
}

/* Adds @n to the count of @name (transfer full) in @counts (char* ->
 * count, as GSIZE_TO_POINTER), saturating: suppressions' counts. */
void gl_counts_add(GHashTable *counts, char *name, guint64 n);

#endif
