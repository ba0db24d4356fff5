/* Records -> the tests they belong to (see attribute.h). */
#include "gemleak/judge/attribute.h"
#include "gemleak/base/protocol.h"

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
} Held;

struct GlAttributor {
    GlFindings *findings;
    GHashTable *held;          /* loss key (owned) -> Held* (owned) */
    guint64 repeated;
    guint64 inherited;
};

static void held_free(gpointer data)
{
    Held *held = data;
    gl_record_free(held->record);
    g_ptr_array_unref(held->attribution.tests);
    g_free(held);
}

GlAttributor *gl_attributor_new(GlFindings *findings)
{
    GlAttributor *attributor = g_new0(GlAttributor, 1);
    attributor->findings = findings;
    attributor->held = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, held_free);
    return attributor;
}

void gl_attributor_free(GlAttributor *attributor)
{
    if (attributor == NULL)
        return;
    g_hash_table_unref(attributor->held);
    g_free(attributor);
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

GlMarkerKind gl_marker_parse(const char *text, GlTest **test)
{
    if (test != NULL)
        *test = NULL;
    if (text == NULL || !g_str_has_prefix(text, GL_PROTO_MARKER_PREFIX))
        return GL_MARKER_NONE;
    /* Valgrind ends a client message's text with white space of its own;
     * the helper escapes any in the fields. */
    g_autofree char *copy = g_strchomp(g_strdup(text + strlen(GL_PROTO_MARKER_PREFIX)));
    g_auto(GStrv) fields = g_strsplit(copy, "\t", 4);
    if (strcmp(fields[0], GL_PROTO_MARKER_SETUP) == 0)
        return GL_MARKER_SETUP;
    if (strcmp(fields[0], GL_PROTO_MARKER_FORKED) == 0)
        return GL_MARKER_FORKED;
    GlMarkerKind kind = strcmp(fields[0], GL_PROTO_MARKER_START) == 0 ? GL_MARKER_START
                        : strcmp(fields[0], GL_PROTO_MARKER_END) == 0 ? GL_MARKER_END : GL_MARKER_NONE;
    if (kind == GL_MARKER_NONE || fields[1] == NULL || fields[2] == NULL)
        return GL_MARKER_NONE;
    if (test != NULL) {
        g_autofree char *name = unescape(fields[1]);
        g_autofree char *location = unescape(fields[2]);
        *test = gl_test_new(name, *location != '\0' ? location : NULL);
    }
    return kind;
}

/* ---- attributing ---------------------------------------------------------------- */

/* Returns: (transfer full): what Valgrind's loss record is in one process:
 * its kind and the exact addresses of its allocation stack. Merge keys are
 * coarser (they stop at the last target frame): two loss records of one
 * finding must not be taken for one. */
static char *loss_key(const GlRecord *record)
{
    GString *key = g_string_new(NULL);
    g_string_append_printf(key, "%" G_GINT64_FORMAT "\n%s\n", record->pid, record->kind);
    for (guint i = 0; i < record->stack.n_frames; i++)
        g_string_append_printf(key, "%" G_GINT64_MODIFIER "x\n", record->stack.frames[i].ip);
    return g_string_free(key, FALSE);
}

/* Appends @test to @tests unless it is there already, or @tests already
 * holds one more test than a finding shows: the first
 * GL_FINDING_MAX_TESTS + 1 distinct tests decide what the finding says
 * (those it names, and that there are others), and a loss record that grows
 * in every test of a long suite must not cost a scan of every test before
 * it (100k tests read in quadratic time). Takes @test. */
static void append_test(GPtrArray *tests, GlTest *test)
{
    if (tests->len > GL_FINDING_MAX_TESTS) {
        gl_test_free(test);
        return;
    }
    for (guint i = 0; i < tests->len; i++)
        if (gl_test_equal(g_ptr_array_index(tests, i), test)) {
            gl_test_free(test);
            return;
        }
    g_ptr_array_add(tests, test);
}

static GPtrArray *new_tests(void)
{
    return g_ptr_array_new_with_free_func((GDestroyNotify) gl_test_free);
}

/* A leak a mid-run check reported: held, with the test it was lost in,
 * and with the latest check's numbers when an earlier check reported the
 * same loss record (Valgrind's count then is the total, not what grew). */
static void hold(GlAttributor *attributor, char *key, GlRecord *record, guint64 order,
                 GlMarkerKind kind, GlTest *test)
{
    Held *held = g_hash_table_lookup(attributor->held, key);
    if (held == NULL) {
        held = g_new0(Held, 1);
        held->order = order;
        held->attribution.tests = new_tests();
        if (kind == GL_MARKER_FORKED) {
            held->inherited = TRUE;
            held->inherited_bytes = record->leaked_bytes;
            held->inherited_blocks = record->leaked_blocks;
            held->inherited_direct = gl_record_direct_bytes(record);
        }
        g_hash_table_insert(attributor->held, key, held);
    } else {
        g_free(key);
        gl_record_free(held->record);
        attributor->repeated++;
    }
    held->record = record;
    /* After "end", or after "start" when the test ran a check of its own. */
    if (test != NULL)
        append_test(held->attribution.tests, test);
    else if (kind == GL_MARKER_SETUP)
        held->attribution.before_tests = TRUE;
    /* After "forked": what the child inherited, which its parent reports. */
}

/* Returns: @record (taken) less what its process inherited (@held's
 * numbers): its own blocks, with a text that says what was left out; or
 * NULL (@record freed) when every block of it was inherited. */
static GlRecord *own_part(GlAttributor *attributor, const Held *held, GlRecord *record)
{
    if (!held->inherited)
        return record;
    guint64 bytes = record->leaked_bytes > held->inherited_bytes
        ? record->leaked_bytes - held->inherited_bytes : 0;
    guint64 blocks = record->leaked_blocks > held->inherited_blocks
        ? record->leaked_blocks - held->inherited_blocks : 0;
    guint64 direct = gl_record_direct_bytes(record);
    direct = direct > held->inherited_direct ? direct - held->inherited_direct : 0;
    if (blocks == 0) {
        attributor->inherited++;
        gl_record_free(record);
        return NULL;
    }
    /* Valgrind's own words for the rest ("are definitely lost in loss
     * record 3 of 9"), the numbers the child's own; merge reads the direct
     * share back from "N (D direct, I indirect) bytes". */
    const char *rest = record->what != NULL ? strstr(record->what, " are ") : NULL;
    g_autoptr(GString) what = g_string_new(NULL);
    if (direct < bytes)
        g_string_append_printf(what, "%" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " direct, %"
                               G_GUINT64_FORMAT " indirect) bytes", bytes, direct, bytes - direct);
    else
        g_string_append_printf(what, "%" G_GUINT64_FORMAT " bytes", bytes);
    g_string_append_printf(what, " in %" G_GUINT64_FORMAT " blocks%s, not counting %"
                           G_GUINT64_FORMAT " bytes in %" G_GUINT64_FORMAT " blocks inherited "
                           "from the parent process", blocks, rest != NULL ? rest : "",
                           held->inherited_bytes, held->inherited_blocks);
    record->what = gl_record_intern(record, what->str);
    record->leaked_bytes = bytes;
    record->leaked_blocks = blocks;
    return record;
}

void gl_attributor_add(GlAttributor *attributor, GlRecord *record, guint64 order)
{
    GlTest *test = NULL;
    GlMarkerKind kind = gl_marker_parse(record->marker, &test);
    g_autoptr(GPtrArray) tests = new_tests();
    GlAttribution attribution = { .tests = tests };

    if (record->leak_kind == GL_LEAK_NONE) {
        /* An error happened when it was written: during a test, or outside any. */
        if (kind == GL_MARKER_START)
            g_ptr_array_add(tests, g_steal_pointer(&test));
        gl_test_free(test);
        gl_findings_add_attributed(attributor->findings, record, order, &attribution);
        return;
    }
    char *key = loss_key(record);
    if (!record->at_exit) {
        hold(attributor, key, record, order, kind, test);
        return;
    }
    gpointer stolen_key = NULL, stolen = NULL;
    if (g_hash_table_steal_extended(attributor->held, key, &stolen_key, &stolen)) {
        /* One occurrence, with the exit check's numbers: it reports every
         * block of the loss record, those the mid-run checks saw included. */
        Held *held = stolen;
        attributor->repeated++;
        /* A child forked during a test, still in it: what it lost itself
         * was lost there. */
        if (held->inherited && kind == GL_MARKER_START)
            append_test(held->attribution.tests, g_steal_pointer(&test));
        record = own_part(attributor, held, record);
        if (record != NULL)
            gl_findings_add_attributed(attributor->findings, record, MIN(held->order, order),
                                       &held->attribution);
        held_free(held);
        g_free(stolen_key);
    } else {
        if (kind == GL_MARKER_START)
            g_ptr_array_add(tests, g_steal_pointer(&test));  /* the process ended in a test */
        else if (kind != GL_MARKER_NONE && kind != GL_MARKER_FORKED)
            attribution.at_exit = TRUE;  /* still referenced when the last check ran */
        /* After "forked" alone: a child that ran no test lost it, after the
         * check of what it inherited. */
        gl_findings_add_attributed(attributor->findings, record, order, &attribution);
    }
    gl_test_free(test);
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
        GlRecord *record = own_part(attributor, one, g_steal_pointer(&one->record));
        if (record != NULL)
            gl_findings_add_attributed(attributor->findings, record, one->order,
                                       &one->attribution);
    }
}
