/* Records -> the tests they belong to (see attribute.h). */
#include "gemleak/judge/attribute.h"
#include "gemleak/base/protocol.h"
#include "gemleak/read/process.h"

#include <string.h>

/* A loss record of a mid-run leak check, until the exit check reports it
 * again. */
typedef struct {
    GlRecord *record;          /* the latest check's report: its numbers are the total */
    guint64 order;             /* where the first report was read */
    GlAttribution attribution; /* tests owned */
    /* Reported by the check right after a fork: what the child inherited,
     * its parent's. Its later checks' numbers include these. */
    gboolean inherited;
    guint64 inherited_bytes;
    guint64 inherited_blocks;
    guint64 inherited_direct;
    /* What grew in the checks after tests ran again: those runs', not the
     * suite's (--per-test). */
    guint64 again_bytes;
    guint64 again_blocks;
    guint64 again_direct;
    /* First reported by a check after tests ran again: a loss record of
     * their path alone (the helper's calls, not the suite's), every block
     * of it theirs, those a check found only later too, when the suite's
     * own runs lost the same finding (suite_lost); else it is kept whole:
     * what only runs again lost is never hidden. */
    gboolean again_only;
    char *merge_key;           /* its finding's (gl_record_merge_key()), owned */
    /* Its span of tests (a check after several), owned, until a test run
     * again alone lost it again. */
    GlTest *among_first;
    GlTest *among_last;
} Held;

/* A finding's blocks that the checks after several tests found lost, and
 * those the tests named lost again alone: fewer, and other tests lost some
 * too. Counted over all its loss records: one leak is several where its
 * stacks differ beyond the extension (the first call of a C method goes
 * through another frame of Ruby's than the calls after it), and a test
 * named is named for each of them, its blocks counted once. */
typedef struct {
    guint64 among_blocks;
    guint64 named_blocks;
} Tally;

struct GlAttributor {
    GlFindings *findings;
    GHashTable *held;          /* loss key (owned) -> Held* (owned) */
    /* The merge keys (owned) of the findings the suite's own runs lost: a
     * check not after tests ran again reported them. */
    GHashTable *suite_lost;
    GHashTable *tallies;       /* merge key (owned) -> Tally* (owned) */
    guint64 repeated;
    guint64 inherited;
    /* The place of each test in the run of the process being read
     * (GlProcess.test_order), a reference; nullable. */
    GHashTable *test_order;
};

static void held_free(gpointer data)
{
    Held *held = data;
    gl_record_free(held->record);
    g_ptr_array_unref(held->attribution.tests);
    gl_test_free(held->among_first);
    gl_test_free(held->among_last);
    g_free(held->merge_key);
    g_free(held);
}

GlAttributor *gl_attributor_new(GlFindings *findings)
{
    GlAttributor *attributor = g_new0(GlAttributor, 1);
    attributor->findings = findings;
    attributor->held = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, held_free);
    attributor->suite_lost = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    attributor->tallies = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return attributor;
}

void gl_attributor_free(GlAttributor *attributor)
{
    if (attributor == NULL)
        return;
    g_hash_table_unref(attributor->held);
    g_hash_table_unref(attributor->suite_lost);
    g_hash_table_unref(attributor->tallies);
    if (attributor->test_order != NULL)
        g_hash_table_unref(attributor->test_order);
    g_free(attributor);
}

void gl_attributor_set_test_order(GlAttributor *attributor, GHashTable *order)
{
    if (order == attributor->test_order)
        return;
    if (attributor->test_order != NULL)
        g_hash_table_unref(attributor->test_order);
    attributor->test_order = order != NULL ? g_hash_table_ref(order) : NULL;
}

guint64 gl_attributor_repeated(const GlAttributor *attributor)
{
    return attributor->repeated;
}

guint64 gl_attributor_inherited(const GlAttributor *attributor)
{
    return attributor->inherited;
}

/* ---- markers ------------------------------------------------------------------ */

/* Returns: (transfer full): @field with its %XX escapes undone, as UTF-8
 * (the helper escapes bytes, and a name may have been cut mid-character). */
static char *unescape(const char *field)
{
    GString *out = g_string_sized_new(strlen(field));
    for (const char *c = field; *c != '\0'; c++) {
        int high, low;
        if (c[0] == '%' && (high = g_ascii_xdigit_value(c[1])) >= 0 &&
            (low = g_ascii_xdigit_value(c[2])) >= 0) {
            char byte = (char) (high * 16 + low);
            if (byte != '\0')
                g_string_append_c(out, byte);
            c += 2;
        } else {
            g_string_append_c(out, *c);
        }
    }
    char *valid = g_utf8_make_valid(out->str, (gssize) out->len);
    g_string_free(out, TRUE);
    return valid;
}

/* Returns: (transfer full): the test of NAME and LOCATION, escaped, with
 * its place in the run when @order (nullable: the process's
 * GlProcess.test_order) knows it. */
static GlTest *test_of(const char *name, const char *location, GHashTable *order)
{
    g_autofree char *plain_name = unescape(name);
    g_autofree char *plain_location = unescape(location);
    GlTest *test = gl_test_new(plain_name, *plain_location != '\0' ? plain_location : NULL);
    if (order != NULL)
        test->seq = GPOINTER_TO_SIZE(g_hash_table_lookup(
            order, GSIZE_TO_POINTER(gl_process_test_key(name, location))));
    return test;
}

/* Returns: the count in @field, 0 when it is none. */
static guint64 count_of(const char *field)
{
    guint64 count = 0;
    if (field == NULL || !g_ascii_string_to_unsigned(field, 10, 1, G_MAXUINT64, &count, NULL))
        return 0;
    return count;
}

/* The fields of a "gemleak:growth" marker (@fields[0] the word, @n of
 * them) into @marker, when they are well formed. */
static void read_growth(GlMarker *marker, const char *const *fields, guint n, GHashTable *order)
{
    guint64 count = 0;
    if (n == 1) {
        marker->growth = GL_GROWTH_BEGIN;
    } else if (n == 3 && strcmp(fields[1], GL_PROTO_GROWTH_MEASURED) == 0 &&
               g_ascii_string_to_unsigned(fields[2], 10, 0, G_MAXUINT64, &count, NULL)) {
        marker->growth = GL_GROWTH_MEASURED;
    } else if (n >= 4 && strcmp(fields[1], GL_PROTO_GROWTH_UNMEASURED) == 0) {
        marker->growth = GL_GROWTH_UNMEASURED;
        marker->test = test_of(fields[2], fields[3], order);
        marker->why = n >= 5 ? unescape(fields[4]) : g_strdup("");
    } else if (n >= 4 && g_ascii_string_to_unsigned(fields[1], 10, 0, GL_PROTO_GROWTH_MAX, &count,
                                                    NULL)) {
        marker->growth = GL_GROWTH_REPETITION;
        marker->test = test_of(fields[2], fields[3], order);
    } else {
        return;
    }
    marker->kind = GL_MARKER_GROWTH;
    marker->count = count;
}

/* gl_marker_read(), each test with its place in the run from @order
 * (nullable). */
static GlMarkerKind read_marker(const char *text, GHashTable *order, GlMarker *marker)
{
    *marker = (GlMarker) { .kind = GL_MARKER_NONE };
    if (text == NULL || !g_str_has_prefix(text, GL_PROTO_MARKER_PREFIX))
        return GL_MARKER_NONE;
    /* Valgrind ends a client message's text with white space of its own;
     * the helper escapes any in the fields. */
    g_autofree char *copy = g_strchomp(g_strdup(text + strlen(GL_PROTO_MARKER_PREFIX)));
    g_auto(GStrv) fields = g_strsplit(copy, "\t", 7);
    guint n = g_strv_length(fields);
    const char *word = fields[0];
    if (strcmp(word, GL_PROTO_MARKER_SETUP) == 0) {
        marker->kind = GL_MARKER_SETUP;
    } else if (strcmp(word, GL_PROTO_MARKER_FORKED) == 0) {
        marker->kind = GL_MARKER_FORKED;
    } else if (strcmp(word, GL_PROTO_MARKER_START) == 0 || strcmp(word, GL_PROTO_MARKER_END) == 0) {
        if (n >= 3) {
            marker->kind = strcmp(word, GL_PROTO_MARKER_START) == 0 ? GL_MARKER_START : GL_MARKER_END;
            marker->test = test_of(fields[1], fields[2], order);
        }
    } else if (strcmp(word, GL_PROTO_MARKER_OWNED) == 0) {
        /* No test (its fields empty, and cut as white space): before the
         * first. A test file (--per-test=file) has a location and no name,
         * as its start and end markers have. */
        marker->kind = GL_MARKER_OWNED;
        const char *location = n >= 3 ? fields[2] : "";
        if (n >= 2 && (*fields[1] != '\0' || *location != '\0'))
            marker->test = test_of(fields[1], location, order);
    } else if (strcmp(word, GL_PROTO_MARKER_TESTS) == 0) {
        guint64 count = n >= 6 ? count_of(fields[1]) : 0;
        if (count > 0) {
            marker->kind = GL_MARKER_TESTS;
            marker->count = count;
            marker->test = test_of(fields[2], fields[3], order);
            marker->last = test_of(fields[4], fields[5], order);
        }
    } else if (strcmp(word, GL_PROTO_MARKER_GROWTH) == 0) {
        read_growth(marker, (const char *const *) fields, n, order);
    } else if (strcmp(word, GL_PROTO_MARKER_AGAIN) == 0) {
        guint64 runs = n >= 2 ? count_of(fields[1]) : 0;
        marker->forked = n == 2 && strcmp(fields[1], GL_PROTO_MARKER_FORKED) == 0;
        if (n == 1 || runs > 0 || marker->forked) {
            marker->kind = GL_MARKER_AGAIN;
            marker->count = runs;
            if (runs == 1 && n >= 4)
                marker->test = test_of(fields[2], fields[3], order);
        }
    }
    return marker->kind;
}

GlMarkerKind gl_marker_read(const char *text, GlMarker *marker)
{
    return read_marker(text, NULL, marker);
}

void gl_marker_clear(GlMarker *marker)
{
    gl_test_free(marker->test);
    gl_test_free(marker->last);
    g_free(marker->why);
    marker->test = NULL;
    marker->last = NULL;
    marker->why = NULL;
}

GlMarkerKind gl_marker_parse(const char *text, GlTest **test)
{
    GlMarker marker;
    GlMarkerKind kind = gl_marker_read(text, &marker);
    if (test != NULL && kind != GL_MARKER_TESTS) {
        *test = marker.test;
        marker.test = NULL;
    } else if (test != NULL) {
        *test = NULL;
    }
    gl_marker_clear(&marker);
    return kind;
}

/* ---- attributing ---------------------------------------------------------------- */

/* Puts @test into @tests unless it is there already, in the order the
 * tests ran, keeping one more test than a finding shows: the first
 * GL_FINDING_MAX_TESTS + 1 distinct tests decide what the finding says
 * (those it names, and that there are others), and a loss record that grows
 * in every test of a long suite must not cost a scan of every test before
 * it (100k tests read in quadratic time). Takes @test. */
static void append_test(GPtrArray *tests, GlTest *test)
{
    gl_tests_insert(tests, test, GL_FINDING_MAX_TESTS + 1);
}

static GPtrArray *new_tests(void)
{
    return g_ptr_array_new_with_free_func((GDestroyNotify) gl_test_free);
}

/* Returns: (transfer none): the tally of the finding whose merge key is
 * @key, made at first. */
static Tally *tally_of(GlAttributor *attributor, const char *key)
{
    Tally *tally = g_hash_table_lookup(attributor->tallies, key);
    if (tally == NULL) {
        tally = g_new0(Tally, 1);
        g_hash_table_insert(attributor->tallies, g_strdup(key), tally);
    }
    return tally;
}

/* @test, run again alone, lost @record again: it is named for every loss
 * record of the same finding that the suite's own runs lost, its @blocks
 * counted once for the finding. */
static void name_again(GlAttributor *attributor, const char *key, const GlTest *test,
                       guint64 blocks)
{
    GHashTableIter iter;
    gpointer value;
    gboolean named = FALSE;
    g_hash_table_iter_init(&iter, attributor->held);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        Held *held = value;
        if (held->record->leaked_blocks <= held->again_blocks)
            continue;  /* lost only by runs again */
        if (strcmp(key, held->merge_key) == 0) {
            append_test(held->attribution.tests, gl_test_copy(test));
            held->attribution.again = TRUE;
            named = TRUE;
        }
    }
    if (named)
        tally_of(attributor, key)->named_blocks += blocks;
}

/* A leak a mid-run check reported: held, with the test it was lost in,
 * and with the latest check's numbers when an earlier check reported the
 * same loss record (Valgrind's count then is the total, not what grew).
 * Takes @key and @record. */
static void hold(GlAttributor *attributor, char *key, GlRecord *record, guint64 order,
                 GlMarker *marker)
{
    Held *held = g_hash_table_lookup(attributor->held, key);
    guint64 bytes_before = 0, blocks_before = 0, direct_before = 0;
    if (held == NULL) {
        held = g_new0(Held, 1);
        held->order = order;
        held->attribution.tests = new_tests();
        held->again_only = marker->kind == GL_MARKER_AGAIN;
        held->merge_key = gl_record_merge_key(record);
        if (marker->kind == GL_MARKER_FORKED) {
            held->inherited = TRUE;
            held->inherited_bytes = record->leaked_bytes;
            held->inherited_blocks = record->leaked_blocks;
            held->inherited_direct = gl_record_direct_bytes(record);
        }
        g_hash_table_insert(attributor->held, key, held);
    } else {
        g_free(key);
        bytes_before = held->record->leaked_bytes;
        blocks_before = held->record->leaked_blocks;
        direct_before = gl_record_direct_bytes(held->record);
        attributor->repeated += held->record->attribution_only ? 0 : 1;
        gl_record_free(held->record);
    }
    held->record = record;
    /* The suite's own runs lost it: any check but those after tests ran
     * again, or at a fork (what the child inherited). */
    if (marker->kind != GL_MARKER_AGAIN && marker->kind != GL_MARKER_FORKED &&
        !g_hash_table_contains(attributor->suite_lost, held->merge_key))
        g_hash_table_add(attributor->suite_lost, g_strdup(held->merge_key));
    switch (marker->kind) {
    case GL_MARKER_END:  /* after "end" */
    case GL_MARKER_START:  /* after "start", when the test ran a check of its own */
        if (marker->test != NULL)
            append_test(held->attribution.tests, g_steal_pointer(&marker->test));
        break;
    case GL_MARKER_SETUP:
        held->attribution.before_tests = TRUE;
        break;
    case GL_MARKER_OWNED:  /* blocks of it allocated in a test, or before the first */
        held->attribution.allocated = TRUE;
        if (marker->test != NULL)
            append_test(held->attribution.tests, g_steal_pointer(&marker->test));
        else
            held->attribution.before_tests = TRUE;
        break;
    case GL_MARKER_TESTS:  /* in one of those, unless one is found */
        tally_of(attributor, held->merge_key)->among_blocks +=
            record->leaked_blocks > blocks_before ? record->leaked_blocks - blocks_before : 0;
        if (held->among_first == NULL && marker->test != NULL && marker->last != NULL) {
            held->attribution.among = marker->count;
            held->among_first = g_steal_pointer(&marker->test);
            held->among_last = g_steal_pointer(&marker->last);
        }
        break;
    case GL_MARKER_AGAIN: {
        /* What grew since the check before is the runs' again. */
        guint64 direct = gl_record_direct_bytes(record);
        held->again_bytes += record->leaked_bytes > bytes_before ? record->leaked_bytes - bytes_before : 0;
        held->again_blocks += record->leaked_blocks > blocks_before
            ? record->leaked_blocks - blocks_before : 0;
        held->again_direct += direct > direct_before ? direct - direct_before : 0;
        /* One test alone lost it again: that test lost what the suite's
         * own runs lost at the same place (the same finding: a test run
         * again reaches it by another path, another loss record). */
        if (marker->test != NULL && marker->count == 1)
            name_again(attributor, held->merge_key, marker->test,
                       record->leaked_blocks > blocks_before ? record->leaked_blocks - blocks_before : 0);
        break;
    }
    case GL_MARKER_FORKED:  /* what the child inherited, which its parent reports */
    case GL_MARKER_GROWTH:  /* --growth's measures are no checks (judge/growth.h) */
    case GL_MARKER_NONE:
        break;
    }
}

/* Returns: @record (taken) less what its process inherited and what the
 * runs of tests again lost (@held's numbers): its own blocks, with a text
 * that says what was left out; or NULL (@record freed) when every block
 * of it was inherited or lost again. */
static GlRecord *own_part(GlAttributor *attributor, const Held *held, GlRecord *record)
{
    if (held->again_only) {
        if (!g_hash_table_contains(attributor->suite_lost, held->merge_key))
            return record;  /* no evidence it is the runs' alone: kept */
        attributor->repeated++;
        gl_record_free(record);
        return NULL;
    }
    guint64 less_bytes = held->inherited_bytes + held->again_bytes;
    guint64 less_blocks = held->inherited_blocks + held->again_blocks;
    guint64 less_direct = held->inherited_direct + held->again_direct;
    if (less_blocks == 0)
        return record;
    guint64 bytes = record->leaked_bytes > less_bytes ? record->leaked_bytes - less_bytes : 0;
    guint64 blocks = record->leaked_blocks > less_blocks ? record->leaked_blocks - less_blocks : 0;
    guint64 direct = gl_record_direct_bytes(record);
    direct = direct > less_direct ? direct - less_direct : 0;
    if (blocks == 0) {
        if (held->inherited)
            attributor->inherited++;
        else
            attributor->repeated++;
        gl_record_free(record);
        return NULL;
    }
    /* Valgrind's own words for the rest ("are definitely lost in loss
     * record 3 of 9"), the numbers the process's own; merge reads the
     * direct share back from "N (D direct, I indirect) bytes". */
    const char *rest = record->what != NULL ? strstr(record->what, " are ") : NULL;
    g_autoptr(GString) what = g_string_new(NULL);
    if (direct < bytes)
        g_string_append_printf(what, "%" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " direct, %"
                               G_GUINT64_FORMAT " indirect) bytes", bytes, direct, bytes - direct);
    else
        g_string_append_printf(what, "%" G_GUINT64_FORMAT " bytes", bytes);
    g_string_append_printf(what, " in %" G_GUINT64_FORMAT " blocks%s", blocks,
                           rest != NULL ? rest : "");
    if (held->inherited_blocks > 0)
        g_string_append_printf(what, ", not counting %" G_GUINT64_FORMAT " bytes in %"
                               G_GUINT64_FORMAT " blocks inherited from the parent process",
                               held->inherited_bytes, held->inherited_blocks);
    if (held->again_blocks > 0)
        g_string_append_printf(what, ", not counting %" G_GUINT64_FORMAT " bytes in %"
                               G_GUINT64_FORMAT " blocks lost by running tests again to find "
                               "which lost it", held->again_bytes, held->again_blocks);
    record->what = gl_record_intern(record, what->str);
    record->leaked_bytes = bytes;
    record->leaked_blocks = blocks;
    return record;
}

/* Adds what @held's loss record became (@record, taken) to the findings:
 * with the tests named, or else its span of tests. */
static void add_held(GlAttributor *attributor, Held *held, GlRecord *record, guint64 order)
{
    record = own_part(attributor, held, record);
    if (record == NULL)
        return;
    if (held->attribution.tests->len == 0 && held->among_first != NULL) {
        held->attribution.among_first = held->among_first;
        held->attribution.among_last = held->among_last;
    } else {
        held->attribution.among = 0;
    }
    const Tally *tally = g_hash_table_lookup(attributor->tallies, held->merge_key);
    held->attribution.more_tests = held->attribution.again && tally != NULL &&
                                   tally->named_blocks < tally->among_blocks;
    gl_findings_add_attributed(attributor->findings, record, order, &held->attribution);
}

void gl_attributor_add(GlAttributor *attributor, GlRecord *record, guint64 order)
{
    GlMarker marker;
    GlMarkerKind kind = read_marker(record->marker, attributor->test_order, &marker);
    g_autoptr(GPtrArray) tests = new_tests();
    GlAttribution attribution = { .tests = tests };

    if (record->leak_kind == GL_LEAK_NONE) {
        /* An error happened when it was written: during a test, or outside any. */
        if (kind == GL_MARKER_START)
            g_ptr_array_add(tests, g_steal_pointer(&marker.test));
        gl_marker_clear(&marker);
        gl_findings_add_attributed(attributor->findings, record, order, &attribution);
        return;
    }
    char *key = gl_record_loss_key(record);
    if (!record->at_exit) {
        hold(attributor, key, record, order, &marker);
        gl_marker_clear(&marker);
        return;
    }
    gpointer stolen_key = NULL, stolen = NULL;
    if (g_hash_table_steal_extended(attributor->held, key, &stolen_key, &stolen)) {
        /* One occurrence, with the exit check's numbers: it reports every
         * block of the loss record, those the mid-run checks saw included. */
        Held *held = stolen;
        attributor->repeated += held->record->attribution_only ? 0 : 1;
        /* A child forked during a test, still in it: what it lost itself
         * was lost there. */
        if (held->inherited && kind == GL_MARKER_START)
            append_test(held->attribution.tests, g_steal_pointer(&marker.test));
        add_held(attributor, held, record, MIN(held->order, order));
        held_free(held);
        g_free(stolen_key);
    } else if (kind == GL_MARKER_AGAIN && marker.forked) {
        /* A child forked by a test run again lost it: the runs again's. */
        attributor->repeated++;
        gl_record_free(record);
    } else {
        if (kind == GL_MARKER_START)
            g_ptr_array_add(tests, g_steal_pointer(&marker.test));  /* the process ended in a test */
        /* After --growth's measures (no leak checks), where it was lost
         * nobody says. */
        else if (kind != GL_MARKER_NONE && kind != GL_MARKER_FORKED && kind != GL_MARKER_GROWTH)
            attribution.at_exit = TRUE;  /* still referenced when the last check ran */
        /* After "forked" alone: a child that ran no test lost it, after the
         * check of what it inherited. */
        gl_findings_add_attributed(attributor->findings, record, order, &attribution);
    }
    gl_marker_clear(&marker);
    g_free(key);
}

static gint compare_held(gconstpointer a, gconstpointer b)
{
    const Held *x = *(const Held *const *) a;
    const Held *y = *(const Held *const *) b;
    return x->order < y->order ? -1 : x->order > y->order;
}

void gl_attributor_finish(GlAttributor *attributor)
{
    g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func(held_free);
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, attributor->held);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        g_ptr_array_add(held, value);
        g_hash_table_iter_steal(&iter);
        g_free(key);
    }
    /* Read order, so that the tests of one finding come first seen first. */
    g_ptr_array_sort(held, compare_held);
    for (guint i = 0; i < held->len; i++) {
        Held *one = g_ptr_array_index(held, i);
        add_held(attributor, one, g_steal_pointer(&one->record), one->order);
    }
}
