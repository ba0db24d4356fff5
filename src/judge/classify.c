/* The classifier: the rules (rules.c) applied to each record, on one
 * thread, with what it learns of each object and function name cached
 * (see classify.h and gemleak(1), "RULES"). */
#include "gemleak/judge/classify.h"
#include "gemleak/base/text.h"
#include "rules_int.h"

#include <stdlib.h>
#include <string.h>

/* How Valgrind (--track-origins=yes) begins the part of an uninitialised
 * value's error that says where the value was created: "... by a heap
 * allocation", "... by a stack allocation", "... by a client request". */
#define ORIGIN_TEXT "Uninitialised value was created by"

const char *gl_verdict_describe(GlVerdict verdict, guint64 count)
{
    switch (verdict) {
    case GL_VERDICT_KEEP: return "kept";
    case GL_VERDICT_SKIP_KIND: return count == 1 ? "of another leak kind" : "of other leak kinds";
    case GL_VERDICT_SKIP_NO_TARGET: return "not in a target";
    case GL_VERDICT_SKIP_RUBY: return "Ruby's own memory";
    case GL_VERDICT_SKIP_INIT: return "in Init code";
    case GL_VERDICT_SKIP_UNJUDGED:
        return count == 1 ? "of a process on too old a Ruby" : "of processes on too old a Ruby";
    case GL_N_VERDICTS: break;
    }
    return "unknown";
}

typedef struct {
    gboolean is_target;
    gboolean is_ruby;
    gboolean is_loader;   /* the dynamic loader, ld.so */
    char *init_function;  /* "Init_<name>" for a target, else NULL */
} ObjectFacts;

struct GlClassifier {
    const GlRules *rules;
    GHashTable *objects;    /* object path -> ObjectFacts* */
    GHashTable *functions;  /* function name -> GINT_TO_POINTER(GL_FN_* flags) */
    /* Frames of one record share their object strings, so the last lookup
     * answers most of the next ones without hashing. */
    const char *last_obj;
    ObjectFacts *last_facts;
    /* The executable of the document last seen, resolved: Ruby, whatever its name. */
    gint64 exe_pid;
    char *exe_path;
    gboolean free_at_exit;  /* the process in hand freed Ruby's memory at exit */
    gboolean frame_pointers;  /* its Ruby keeps frame pointers */
    gboolean every_kind;      /* judge every leak kind (--growth's samples) */
};

static void facts_free(gpointer data)
{
    ObjectFacts *facts = data;
    g_free(facts->init_function);
    g_free(facts);
}

GlClassifier *gl_classifier_new(const GlRules *rules)
{
    GlClassifier *classifier = g_new0(GlClassifier, 1);
    classifier->rules = rules;
    classifier->objects = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, facts_free);
    classifier->functions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    classifier->exe_pid = -1;
    return classifier;
}

void gl_classifier_free(GlClassifier *classifier)
{
    if (classifier == NULL)
        return;
    g_hash_table_unref(classifier->objects);
    g_hash_table_unref(classifier->functions);
    g_free(classifier->exe_path);
    g_free(classifier);
}

void gl_classifier_set_free_at_exit(GlClassifier *classifier, gboolean free_at_exit)
{
    classifier->free_at_exit = free_at_exit;
}

void gl_classifier_set_frame_pointers(GlClassifier *classifier, gboolean frame_pointers)
{
    classifier->frame_pointers = frame_pointers;
}

gboolean gl_classifier_frame_pointers(const GlClassifier *classifier)
{
    return classifier->frame_pointers;
}

void gl_classifier_set_every_kind(GlClassifier *classifier, gboolean every_kind)
{
    classifier->every_kind = every_kind;
}

gboolean gl_classifier_ruby_rule(const GlClassifier *classifier)
{
    return gl_rules_ruby_memory_rule(classifier->rules);
}

void gl_classifier_collect_objects(const GlClassifier *classifier, GHashTable *set)
{
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, classifier->objects);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        if (!g_hash_table_contains(set, key))
            g_hash_table_add(set, g_strdup(key));
}

static void note_document(GlClassifier *classifier, const GlProcess *doc)
{
    if (doc == NULL || doc->pid == classifier->exe_pid)
        return;
    classifier->exe_pid = doc->pid;
    g_clear_pointer(&classifier->exe_path, g_free);
    if (doc->exe != NULL && strchr(doc->exe, '/') != NULL) {
        char *resolved = realpath(doc->exe, NULL);
        classifier->exe_path = g_strdup(resolved != NULL ? resolved : doc->exe);
        free(resolved);
    }
}

static const ObjectFacts *object_facts(GlClassifier *classifier, const char *obj)
{
    if (obj == NULL)
        return NULL;
    if (obj == classifier->last_obj)
        return classifier->last_facts;
    ObjectFacts *facts = g_hash_table_lookup(classifier->objects, obj);
    if (facts == NULL) {
        const GlRules *rules = classifier->rules;
        facts = g_new0(ObjectFacts, 1);
        for (guint i = 0; i < gl_rules_n_targets(rules) && !facts->is_target; i++)
            facts->is_target = gl_rules_target_matches(rules, i, obj);
        facts->is_ruby = !facts->is_target &&
                         (gl_is_ruby_object(obj) || g_strcmp0(obj, classifier->exe_path) == 0);
        facts->is_loader = !facts->is_target && gl_is_dynamic_loader(obj);
        if (facts->is_target) {
            /* Ruby calls Init_<name> for <name>.so, <name> ending at the first dot. */
            const char *name = gl_base_name(obj);
            const char *dot = strchr(name, '.');
            facts->init_function = g_strdup_printf("Init_%.*s",
                                                   (int) (dot ? (size_t) (dot - name) : strlen(name)),
                                                   name);
        }
        g_hash_table_insert(classifier->objects, g_strdup(obj), facts);
    }
    classifier->last_obj = obj;
    classifier->last_facts = facts;
    return facts;
}

/* What the rules say of @fn, learnt once a thread. */
static guint function_flags(GlClassifier *classifier, const char *fn)
{
    gpointer known = g_hash_table_lookup(classifier->functions, fn);
    if (known != NULL)
        return (guint) GPOINTER_TO_INT(known);
    guint flags = gl_rules_function_flags(classifier->rules, fn);
    g_hash_table_insert(classifier->functions, g_strdup(fn), GINT_TO_POINTER((gint) flags));
    return flags;
}

/* Marks the frames of @stack that lie in a target.
 * Returns: the index of the first, or -1. */
static gint mark_targets(GlClassifier *classifier, GlStack *stack)
{
    gint first = -1;
    for (guint i = 0; i < stack->n_frames; i++) {
        const ObjectFacts *facts = object_facts(classifier, stack->frames[i].obj);
        stack->frames[i].in_target = facts != NULL && facts->is_target;
        if (stack->frames[i].in_target && first < 0)
            first = (gint) i;
    }
    return first;
}

/* Rule 5: TRUE if @stack reaches a target frame before a frame of the
 * dynamic loader (from the innermost outward). */
static gboolean enters_target_before_loader(GlClassifier *classifier, const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++) {
        if (stack->frames[i].in_target)
            return TRUE;
        const ObjectFacts *facts = object_facts(classifier, stack->frames[i].obj);
        if (facts != NULL && facts->is_loader)
            return FALSE;
    }
    return FALSE;
}

static gboolean is_uninitialised_value(const GlRecord *record)
{
    return g_strcmp0(record->kind, "UninitCondition") == 0 ||
           g_strcmp0(record->kind, "UninitValue") == 0;
}

/* Returns: (nullable): where @record's uninitialised value was created, as
 * Valgrind says with --track-origins=yes. */
static const GlAux *value_origin(const GlRecord *record)
{
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        if (aux->text != NULL && g_str_has_prefix(aux->text, ORIGIN_TEXT))
            return aux;
    }
    return NULL;
}

static gboolean created_on_a_stack(const GlAux *origin)
{
    return strstr(origin->text, "stack allocation") != NULL;
}

static gboolean stack_in_target(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (stack->frames[i].in_target)
            return TRUE;
    return FALSE;
}

/* Rule 5, an uninitialised value used under the target's frame @first:
 * used inside Ruby's GC, it is Ruby's, by the same principle as Ruby's
 * memory behind an API call (the GC marks the machine stack
 * conservatively, during any allocation of an object); used inside another
 * Ruby function, a value Ruby created is Ruby's. It is the extension's when
 * its own code used it, when the extension made the block it lies in (or
 * asked Ruby to), or when the extension marks it. Where Ruby has no symbols
 * to tell a GC and Valgrind no origin, it is uncertain. */
static GlVerdict classify_uninitialised(GlClassifier *classifier, GlRecord *record, guint first)
{
    const GlStack *stack = &record->stack;
    const GlAux *origin = value_origin(record);
    gboolean origin_in_target = origin != NULL && stack_in_target(&origin->stack);
    if (first == 0 || (origin_in_target && !created_on_a_stack(origin)))
        return GL_VERDICT_KEEP;
    gboolean in_ruby = FALSE, in_gc = FALSE;
    guint unnamed = 0;
    const char *unnamed_obj = NULL;
    for (guint i = 0; i < first; i++) {
        const GlFrame *frame = &stack->frames[i];
        const ObjectFacts *facts = object_facts(classifier, frame->obj);
        if (facts == NULL || !facts->is_ruby)
            continue;
        in_ruby = TRUE;
        if (frame->fn == NULL) {
            unnamed++;
            unnamed_obj = frame->obj;
            continue;
        }
        guint flags = function_flags(classifier, frame->fn);
        /* The extension asked Ruby to mark what it holds. */
        if (i + 1 == first && (flags & GL_FN_MARKING) != 0)
            return GL_VERDICT_KEEP;
        in_gc |= (flags & GL_FN_GC) != 0;
    }
    if (!in_ruby)
        return GL_VERDICT_KEEP;
    if (in_gc || (origin != NULL && !origin_in_target))
        return GL_VERDICT_SKIP_RUBY;
    if (unnamed > 0) {
        record->uncertain = TRUE;
        record->unnamed_frames = unnamed;
        record->unnamed_object = gl_record_intern(record, gl_base_name(unnamed_obj));
    }
    return GL_VERDICT_KEEP;
}

static GlVerdict classify_error(GlClassifier *classifier, GlRecord *record, gint first)
{
    if (gl_rules_all_errors(classifier->rules))
        return GL_VERDICT_KEEP;
    gboolean uninitialised = is_uninitialised_value(record);
    if (enters_target_before_loader(classifier, &record->stack))
        return uninitialised ? classify_uninitialised(classifier, record, (guint) first)
                             : GL_VERDICT_KEEP;
    for (guint i = 0; i < record->aux->len; i++) {
        const GlAux *aux = &g_array_index(record->aux, GlAux, i);
        /* A local of the extension used where it never ran: the GC
         * scanning the stack. */
        if (uninitialised && aux == value_origin(record) && created_on_a_stack(aux))
            continue;
        if (enters_target_before_loader(classifier, &aux->stack))
            return GL_VERDICT_KEEP;
    }
    return GL_VERDICT_SKIP_NO_TARGET;
}

/* Rule 3: the leak happened while the extension was being loaded. */
static gboolean in_init(GlClassifier *classifier, const GlStack *stack, guint first)
{
    guint outermost = first;
    for (guint i = first; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (!frame->in_target)
            continue;
        outermost = i;
        /* The extension's own Init_<name>, however deep. */
        const ObjectFacts *facts = object_facts(classifier, frame->obj);
        if (frame->fn != NULL && strcmp(frame->fn, facts->init_function) == 0)
            return TRUE;
    }
    /* Ruby's loader calls the extension only to run its Init function: a
     * function of the extension it called is Init code, whatever its name
     * (an Init_<name> that ends in a tail call leaves no frame of its own). */
    if (outermost + 1 < stack->n_frames) {
        const GlFrame *caller = &stack->frames[outermost + 1];
        const ObjectFacts *facts = object_facts(classifier, caller->obj);
        if (facts != NULL && facts->is_ruby && caller->fn != NULL &&
            (function_flags(classifier, caller->fn) & GL_FN_LOADER) != 0)
            return TRUE;
    }
    return FALSE;
}

/* TRUE if Ruby had freed its own memory when @record was found: a process
 * whose Ruby frees it at exit, at its exit check; not a check made while
 * Ruby still ran (before exit! or exec, at a fork, between tests), when
 * Ruby's memory was all there, as rule 2 assumes. */
static gboolean freed_by_ruby(const GlClassifier *classifier, const GlRecord *record)
{
    return classifier->free_at_exit && record->at_exit && !record->while_running;
}

/* TRUE if the frames @a and @b name the same source file: a function's
 * own file, where its implementation lies. Unknown is never the same. */
static gboolean same_source(const GlFrame *a, const GlFrame *b)
{
    return a->file != NULL && b->file != NULL && strcmp(a->file, b->file) == 0 &&
           g_strcmp0(a->dir, b->dir) == 0;
}

/* Rules 2 and 4: whose memory a leak is, from the frames between the
 * allocation and the first target frame, read outward.
 * - A frame of an API function that, by Ruby's headers, hands its memory to
 *   the caller (rb_fd_init, rb_econv_open, st_*: GL_FN_CALLER_OWNED) gives
 *   what was allocated inside it to its caller, and the frames inside it
 *   are its implementation: unnamed ones (static functions, which only
 *   their own file can call: a Ruby without symbols names only exported
 *   functions) and named ones of its own source file.
 * - A frame of Ruby's allocator (the xmalloc family: GL_FN_ALLOCATION)
 *   allocates for its caller too, but Ruby's GC runs inside it, in its own
 *   file: only the one internal frame that called the system allocator
 *   (objspace_xmalloc0, unnamed without symbols) is its own.
 * - Any other named function of Ruby's that the extension called allocated
 *   for Ruby: Ruby's memory.
 * - Unnamed frames nothing explains leave the owner unknown: uncertain,
 *   unless it is the one innermost frame, Ruby's allocator entered from the
 *   extension (or a library) by a tail call. */
static GlVerdict classify_owner(GlClassifier *classifier, GlRecord *record, guint first)
{
    const GlRules *rules = classifier->rules;
    const GlStack *stack = &record->stack;
    /* A Ruby that freed its own memory at exit left none of it: what is
     * still allocated was handed to the extension (rule 2's premise, that
     * Ruby leaves its memory at exit, does not hold). */
    gboolean rule = gl_rules_ruby_memory_rule(rules) && !freed_by_ruby(classifier, record);
    /* The Ruby frames met since the last frame that decided for them. */
    guint pending_unnamed = 0, pending_named = 0;
    gint pending_first = -1, innermost_ruby = -1;
    const GlFrame *named[8];
    guint unexplained = 0, unnamed_total = 0;
    const char *unnamed_obj = NULL;
    for (guint i = 0; i < first; i++) {
        const GlFrame *frame = &stack->frames[i];
        guint flags = frame->fn != NULL ? function_flags(classifier, frame->fn) : 0;
        if ((flags & GL_FN_SKIP) != 0)
            return GL_VERDICT_SKIP_RUBY;
        const ObjectFacts *facts = object_facts(classifier, frame->obj);
        if (facts == NULL || !facts->is_ruby)
            continue;
        if (innermost_ruby < 0)
            innermost_ruby = (gint) i;
        if (pending_first < 0)
            pending_first = (gint) i;
        if (frame->fn == NULL) {
            pending_unnamed++;
            unnamed_total++;
            unnamed_obj = frame->obj;
            continue;
        }
        if ((flags & (GL_FN_ALLOCATION | GL_FN_CALLER_OWNED)) == 0) {
            if (pending_named < G_N_ELEMENTS(named))
                named[pending_named] = frame;
            pending_named++;
            continue;
        }
        if ((flags & GL_FN_CALLER_OWNED) != 0) {
            for (guint n = 0; n < pending_named && rule; n++)
                if (n >= G_N_ELEMENTS(named) || !same_source(named[n], frame))
                    return GL_VERDICT_SKIP_RUBY;
        } else {
            if (pending_named > 0 && rule)
                return GL_VERDICT_SKIP_RUBY;
            if (pending_unnamed > 1 || (pending_unnamed == 1 && pending_first != innermost_ruby))
                unexplained += pending_unnamed;
        }
        pending_unnamed = pending_named = 0;
        pending_first = -1;
    }
    /* The extension called a Ruby function that allocates for Ruby (or
     * called back into Ruby): Ruby's memory. */
    if (pending_named > 0 && rule)
        return GL_VERDICT_SKIP_RUBY;
    if (!rule)
        return GL_VERDICT_KEEP;
    if (pending_unnamed > 1 || (pending_unnamed == 1 && pending_first != innermost_ruby))
        unexplained += pending_unnamed;
    if (unexplained == 0)
        return GL_VERDICT_KEEP;
    record->uncertain = TRUE;
    record->unnamed_frames = unnamed_total;
    record->unnamed_object = gl_record_intern(record, gl_base_name(unnamed_obj));
    return GL_VERDICT_KEEP;
}

gboolean gl_classifier_ruby_in_view(GlClassifier *classifier, const GlRecord *record)
{
    /* in every process: what a Ruby function allocated for its own use and
     * did not free, even at exit under free-at-exit, is Ruby's leftover; an
     * API whose memory its caller releases is looked past, to its caller */
    if (!gl_rules_ruby_memory_rule(classifier->rules))
        return FALSE;
    const GlStack *stack = &record->stack;
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        const ObjectFacts *facts = object_facts(classifier, frame->obj);
        if (facts != NULL && facts->is_target)
            return FALSE;
        if (facts == NULL || !facts->is_ruby || frame->fn == NULL)
            continue;
        guint flags = function_flags(classifier, frame->fn);
        if ((flags & (GL_FN_ALLOCATION | GL_FN_CALLER_OWNED)) == 0)
            return TRUE;
    }
    return FALSE;
}

gboolean gl_classifier_data_struct(GlClassifier *classifier, const GlRecord *record)
{
    const GlStack *stack = &record->stack;
    /* the cache of the last object is keyed by pointer: another record's */
    classifier->last_obj = NULL;
    guint first = 0;
    while (first < stack->n_frames && !stack->frames[first].in_target)
        first++;
    if (first == 0 || first >= stack->n_frames)
        return FALSE;
    /* the target's call, and what it called: the frame next to it */
    const GlFrame *called = &stack->frames[first - 1];
    const ObjectFacts *facts = object_facts(classifier, called->obj);
    return facts != NULL && facts->is_ruby && called->fn != NULL &&
           (function_flags(classifier, called->fn) & GL_FN_DATA_STRUCT) != 0;
}

GlVerdict gl_classifier_classify(GlClassifier *classifier, GlRecord *record,
                                 const GlProcess *doc)
{
    const GlRules *rules = classifier->rules;
    note_document(classifier, doc);
    /* The cache of the last object is keyed by pointer: new record, new strings. */
    classifier->last_obj = NULL;
    record->uncertain = FALSE;

    gint first = mark_targets(classifier, &record->stack);
    for (guint i = 0; i < record->aux->len; i++)
        mark_targets(classifier, &g_array_index(record->aux, GlAux, i).stack);

    if (record->leak_kind == GL_LEAK_NONE)
        return classify_error(classifier, record, first);
    if (!classifier->every_kind && (record->leak_kind & gl_rules_get_leak_kinds(rules)) == 0)
        return GL_VERDICT_SKIP_KIND;
    /* Rule 1: a leak decides on its allocation stack alone. */
    if (first < 0)
        return GL_VERDICT_SKIP_NO_TARGET;
    if (gl_rules_free_at_exit(rules))
        return GL_VERDICT_KEEP;
    /* Rule 3 first: whoever allocated it, a leak of Init code happened
     * once, at load, and is counted there. Checked after rule 2, every
     * method and class Init_<name> defined counted as Ruby's memory, and
     * Init code showed only its own mallocs. */
    if (in_init(classifier, &record->stack, (guint) first))
        return GL_VERDICT_SKIP_INIT;
    return classify_owner(classifier, record, (guint) first);
}
