/* Records: one error with its stacks, owning its strings. */
#include "gemleak/base/record.h"

#include <string.h>

/* Most records hold one stack of up to 50 frames whose strings (object
 * paths, function and file names) take a few kilobytes. */
#define RECORD_STRINGS_CHUNK 2048

static void aux_clear(gpointer data)
{
    GlAux *aux = data;
    g_free(aux->stack.frames);
}

GlRecord *gl_record_new(void)
{
    GlRecord *record = g_new0(GlRecord, 1);
    record->strings = g_string_chunk_new(RECORD_STRINGS_CHUNK);
    record->aux = g_array_new(FALSE, TRUE, sizeof(GlAux));
    g_array_set_clear_func(record->aux, aux_clear);
    record->fd = -1;
    return record;
}

GlTest *gl_test_new(const char *name, const char *location)
{
    GlTest *test = g_new0(GlTest, 1);
    test->name = g_strdup(name != NULL ? name : "");
    test->location = g_strdup(location);
    return test;
}

void gl_test_free(GlTest *test)
{
    if (test == NULL)
        return;
    g_free(test->name);
    g_free(test->location);
    g_free(test);
}

gboolean gl_test_equal(const GlTest *a, const GlTest *b)
{
    return strcmp(a->name, b->name) == 0 && g_strcmp0(a->location, b->location) == 0;
}

GlTest *gl_test_copy(const GlTest *test)
{
    GlTest *copy = gl_test_new(test->name, test->location);
    copy->seq = test->seq;
    return copy;
}

/* Whether @a ran before @b: a known place before an unknown one. */
static gboolean ran_before(const GlTest *a, const GlTest *b)
{
    return a->seq != 0 && (b->seq == 0 || a->seq < b->seq);
}

gboolean gl_tests_insert(GPtrArray *tests, GlTest *test, guint max)
{
    guint at = tests->len;
    for (guint i = 0; i < tests->len; i++) {
        GlTest *there = g_ptr_array_index(tests, i);
        if (gl_test_equal(there, test)) {
            gboolean earlier = ran_before(test, there);
            guint64 seq = test->seq;
            gl_test_free(test);
            if (!earlier)
                return FALSE;
            /* named again, at an earlier place known (another process's
             * count): it goes there */
            test = g_ptr_array_steal_index(tests, i);
            test->seq = seq;
            return gl_tests_insert(tests, test, max);
        }
        if (at == tests->len && ran_before(test, there))
            at = i;
    }
    if (at >= max) {
        gl_test_free(test);
        return TRUE;
    }
    g_ptr_array_insert(tests, (gint) at, test);
    if (tests->len <= max)
        return FALSE;
    g_ptr_array_remove_index(tests, tests->len - 1);
    return TRUE;
}

void gl_judged_free(GlJudged *judged)
{
    if (judged == NULL)
        return;
    if (judged->pids != NULL)
        g_array_unref(judged->pids);
    if (judged->tests != NULL)
        g_ptr_array_unref(judged->tests);
    gl_test_free(judged->among_first);
    gl_test_free(judged->among_last);
    if (judged->sites != NULL)
        g_ptr_array_unref(judged->sites);
    g_free(judged->growth_bytes);
    g_free(judged->growth_blocks);
    g_free(judged);
}

/* Returns: (transfer full) (nullable): a copy of @from that shares nothing with it. */
static GlJudged *judged_copy(const GlJudged *from)
{
    if (from == NULL)
        return NULL;
    GlJudged *judged = g_memdup2(from, sizeof *from);
    if (from->pids != NULL) {
        judged->pids = g_array_sized_new(FALSE, FALSE, sizeof(gint64), from->pids->len);
        g_array_append_vals(judged->pids, from->pids->data, from->pids->len);
    }
    if (from->tests != NULL) {
        judged->tests = g_ptr_array_new_with_free_func((GDestroyNotify) gl_test_free);
        for (guint i = 0; i < from->tests->len; i++) {
            const GlTest *test = g_ptr_array_index(from->tests, i);
            g_ptr_array_add(judged->tests, gl_test_new(test->name, test->location));
        }
    }
    judged->among_first = from->among_first != NULL
        ? gl_test_new(from->among_first->name, from->among_first->location) : NULL;
    judged->among_last = from->among_last != NULL
        ? gl_test_new(from->among_last->name, from->among_last->location) : NULL;
    judged->growth_bytes = from->growth_bytes != NULL
        ? g_memdup2(from->growth_bytes, from->growth_repetitions * sizeof(gint64)) : NULL;
    judged->growth_blocks = from->growth_blocks != NULL
        ? g_memdup2(from->growth_blocks, from->growth_repetitions * sizeof(gint64)) : NULL;
    if (from->sites != NULL) {
        judged->sites = g_ptr_array_new_with_free_func((GDestroyNotify) gl_record_free);
        for (guint i = 0; i < from->sites->len; i++)
            g_ptr_array_add(judged->sites, gl_record_copy(g_ptr_array_index(from->sites, i)));
    }
    return judged;
}

void gl_record_free(GlRecord *record)
{
    if (record == NULL)
        return;
    if (record->blocks != NULL)
        g_array_unref(record->blocks);
    gl_judged_free(record->judged);
    g_free(record->stack.frames);
    g_array_unref(record->aux);
    if (record->suppression != NULL) {
        g_free(record->suppression->frames);
        g_free(record->suppression);
    }
    g_string_chunk_free(record->strings);
    g_free(record);
}

/* Copies @from's frames into @to, their strings interned in @record. */
static void copy_stack(GlRecord *record, GlStack *to, const GlStack *from)
{
    to->n_frames = from->n_frames;
    to->frames = from->n_frames > 0 ? g_new(GlFrame, from->n_frames) : NULL;
    for (guint i = 0; i < from->n_frames; i++) {
        GlFrame frame = from->frames[i];
        frame.obj = gl_record_intern(record, frame.obj);
        frame.fn = gl_record_intern(record, frame.fn);
        frame.dir = gl_record_intern(record, frame.dir);
        frame.file = gl_record_intern(record, frame.file);
        frame.unit = gl_record_intern(record, frame.unit);
        to->frames[i] = frame;
    }
}

GlRecord *gl_record_copy(const GlRecord *from)
{
    GlRecord *record = gl_record_new();
    GStringChunk *strings = record->strings;
    GArray *aux = record->aux;
    *record = *from;
    record->strings = strings;
    record->aux = aux;
    record->threadname = gl_record_intern(record, from->threadname);
    record->kind = gl_record_intern(record, from->kind);
    record->what = gl_record_intern(record, from->what);
    record->fd_path = gl_record_intern(record, from->fd_path);
    record->marker = gl_record_intern(record, from->marker);
    record->unnamed_object = gl_record_intern(record, from->unnamed_object);
    record->whole_stacks = gl_record_intern(record, from->whole_stacks);
    copy_stack(record, &record->stack, &from->stack);
    for (guint i = 0; i < from->aux->len; i++) {
        const GlAux *theirs = &g_array_index(from->aux, GlAux, i);
        GlAux ours = { .text = gl_record_intern(record, theirs->text) };
        copy_stack(record, &ours.stack, &theirs->stack);
        g_array_append_val(record->aux, ours);
    }
    record->suppression = NULL;
    if (from->suppression != NULL) {
        const GlSuppression *theirs = from->suppression;
        GlSuppression *ours = g_new0(GlSuppression, 1);
        ours->name = gl_record_intern(record, theirs->name);
        ours->kind = gl_record_intern(record, theirs->kind);
        ours->aux = gl_record_intern(record, theirs->aux);
        ours->rawtext = gl_record_intern(record, theirs->rawtext);
        guint n = 0;
        while (theirs->frames != NULL && theirs->frames[n] != NULL)
            n++;
        ours->frames = g_new0(const char *, n + 1);
        for (guint i = 0; i < n; i++)
            ours->frames[i] = gl_record_intern(record, theirs->frames[i]);
        record->suppression = ours;
    }
    record->blocks = NULL;
    if (from->blocks != NULL) {
        record->blocks = g_array_sized_new(FALSE, FALSE, sizeof(GlBlock), from->blocks->len);
        g_array_append_vals(record->blocks, from->blocks->data, from->blocks->len);
    }
    record->judged = judged_copy(from->judged);
    return record;
}

char *gl_record_loss_key(const GlRecord *record)
{
    GString *key = g_string_new(NULL);
    g_string_append_printf(key, "%" G_GINT64_FORMAT "\n%s\n", record->pid, record->kind);
    for (guint i = 0; i < record->stack.n_frames; i++)
        g_string_append_printf(key, "%" G_GINT64_MODIFIER "x\n", record->stack.frames[i].ip);
    return g_string_free(key, FALSE);
}

const char *gl_record_intern(GlRecord *record, const char *s)
{
    if (s == NULL)
        return NULL;
    /* No sharing by hash here: hashing every string of every frame cost
     * more than the copies (bench/). The reader shares repeated object paths
     * itself. */
    return g_string_chunk_insert(record->strings, s);
}

GlLeakKind gl_leak_kind_from_name(const char *kind)
{
    if (kind == NULL || strncmp(kind, "Leak_", 5) != 0)
        return GL_LEAK_NONE;
    kind += 5;
    if (strcmp(kind, "DefinitelyLost") == 0)
        return GL_LEAK_DEFINITE;
    if (strcmp(kind, "IndirectlyLost") == 0)
        return GL_LEAK_INDIRECT;
    if (strcmp(kind, "PossiblyLost") == 0)
        return GL_LEAK_POSSIBLE;
    if (strcmp(kind, "StillReachable") == 0)
        return GL_LEAK_REACHABLE;
    return GL_LEAK_NONE;
}

gboolean gl_leak_kind_from_word(const char *word, GlLeakKind *kind)
{
    static const GlLeakKind kinds[] = {
        GL_LEAK_DEFINITE, GL_LEAK_INDIRECT, GL_LEAK_POSSIBLE, GL_LEAK_REACHABLE,
    };
    for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
        if (g_strcmp0(word, gl_leak_kind_to_string(kinds[i])) == 0) {
            *kind = kinds[i];
            return TRUE;
        }
    }
    return FALSE;
}

const char *gl_leak_kind_to_string(GlLeakKind kind)
{
    switch (kind) {
    case GL_LEAK_DEFINITE: return "definite";
    case GL_LEAK_INDIRECT: return "indirect";
    case GL_LEAK_POSSIBLE: return "possible";
    case GL_LEAK_REACHABLE: return "reachable";
    case GL_LEAK_NONE: break;
    }
    return "none";
}

static const GlFrame *first_target_in(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (stack->frames[i].in_target)
            return &stack->frames[i];
    return NULL;
}

const GlFrame *gl_record_first_target_frame(const GlRecord *record)
{
    const GlFrame *frame = first_target_in(&record->stack);
    for (guint i = 0; frame == NULL && i < record->aux->len; i++)
        frame = first_target_in(&g_array_index(record->aux, GlAux, i).stack);
    return frame;
}

void gl_counts_add(GHashTable *counts, char *name, guint64 n)
{
    guint64 before = GPOINTER_TO_SIZE(g_hash_table_lookup(counts, name));
    g_hash_table_replace(counts, name, GSIZE_TO_POINTER((gsize) gl_add_saturating(before, n)));
}

gboolean gl_aux_says_freed(const char *text)
{
    return text != NULL && (strstr(text, "free'd") != NULL ||
                            g_str_has_prefix(text, "freed by thread "));
}

gboolean gl_aux_says_allocated(const char *text)
{
    return text != NULL && (strstr(text, "alloc'd") != NULL ||
                            strstr(text, "allocated by thread ") != NULL);
}
