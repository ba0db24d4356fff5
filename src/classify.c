/* The classification rules (see classify.h and gemleak(1), "RULES"). */
#include "gemleak/classify.h"
#include "gemleak/errors.h"
#include "gemleak/sys.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* A list of function patterns, one a line: a megabyte is tens of thousands
 * of them. More is a wrong file (/dev/zero), refused. */
#define SKIP_FILE_MAX_BYTES (1u << 20)

typedef enum { TARGET_NAME, TARGET_GLOB, TARGET_PATH } TargetKind;

typedef struct {
    TargetKind kind;
    char *pattern;   /* as the user gave it */
    char *match;     /* NAME: the file name it stands for; PATH: the path, resolved */
} Target;

struct GlRules {
    GPtrArray *targets;    /* Target* */
    GPtrArray *callbacks;  /* char* globs, NULL-terminated */
    gboolean default_callbacks;
    GlLeakKind leak_kinds;
    gboolean all_errors;
    gboolean free_at_exit;
};

/* What the reference Ruby tool skips, plus what a stripped Ruby (Debian's,
 * Ubuntu's) shows of the static functions it cannot name: the exported
 * entry points (rb_eval_string*, rb_protect, rb_ensure, rb_block_call...),
 * and rb_iseq_* -- rb_eval_string tail-calls the static
 * eval_string_with_cref, so that Ruby compiling the code it was given is
 * all that names the callback (seen on Ruby 3.1.2 in fixtures/xml/callback.xml). */
static const char *const default_callbacks[] = {
    "eval_string_with_cref", "intern_str", "rb_add_method_cfunc", "rb_check_funcall*",
    "rb_class_boot", "rb_enc_raise", "rb_exc_raise", "rb_extend_object", "rb_funcall*",
    "rb_intern*", "rb_ivar_set", "rb_module_new", "rb_raise", "rb_rescue*",
    "rb_respond_to", "rb_thread_create", "rb_vm_exec", "rb_yield*",
    "rb_eval_string*", "rb_protect", "rb_ensure", "rb_block_call*", "rb_proc_call*",
    "rb_obj_call_init*", "rb_call_super*", "rb_apply", "rb_require*", "rb_iseq_*",
    NULL,
};

/* Ruby's executable and shared library under the names distributions give
 * them: ruby, ruby3.1, libruby.so.3.3.0, libruby-3.1.so.3.1.2. */
static const char *const ruby_object_globs[] = {
    "ruby", "ruby[0-9]*", "ruby-[0-9]*", "libruby.so*", "libruby-*.so*", "libruby[0-9]*.so*",
    NULL,
};

const char *gl_verdict_describe(GlVerdict verdict)
{
    switch (verdict) {
    case GL_VERDICT_KEEP: return "kept";
    case GL_VERDICT_SKIP_KIND: return "other leak kinds";
    case GL_VERDICT_SKIP_NO_TARGET: return "not in a target";
    case GL_VERDICT_SKIP_CALLBACK: return "callbacks into Ruby";
    case GL_VERDICT_SKIP_INIT: return "in Init_ functions";
    case GL_N_VERDICTS: break;
    }
    return "unknown";
}

static void target_free(gpointer data)
{
    Target *target = data;
    g_free(target->pattern);
    g_free(target->match);
    g_free(target);
}

GlRules *gl_rules_new(void)
{
    GlRules *rules = g_new0(GlRules, 1);
    rules->targets = g_ptr_array_new_with_free_func(target_free);
    rules->callbacks = g_ptr_array_new_null_terminated(8, g_free, TRUE);
    rules->default_callbacks = TRUE;
    rules->leak_kinds = GL_LEAK_DEFINITE;
    return rules;
}

void gl_rules_free(GlRules *rules)
{
    if (rules == NULL)
        return;
    g_ptr_array_unref(rules->targets);
    g_ptr_array_unref(rules->callbacks);
    g_free(rules);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

gboolean gl_rules_add_target(GlRules *rules, const char *pattern, GError **error)
{
    if (pattern == NULL || *pattern == '\0') {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--object needs a name, path or glob");
        return FALSE;
    }
    Target *target = g_new0(Target, 1);
    target->pattern = g_strdup(pattern);
    if (strpbrk(pattern, "*?[") != NULL) {
        target->kind = TARGET_GLOB;
    } else if (strchr(pattern, '/') != NULL) {
        target->kind = TARGET_PATH;
        /* Valgrind names objects by their real path. */
        g_autofree char *absolute = g_canonicalize_filename(pattern, NULL);
        char *resolved = realpath(absolute, NULL);
        target->match = resolved != NULL ? g_strdup(resolved) : g_strdup(absolute);
        free(resolved);
    } else {
        target->kind = TARGET_NAME;
        target->match = g_str_has_suffix(pattern, ".so") ? g_strdup(pattern)
                                                         : g_strconcat(pattern, ".so", NULL);
    }
    g_ptr_array_add(rules->targets, target);
    return TRUE;
}

guint gl_rules_n_targets(const GlRules *rules)
{
    return rules->targets->len;
}

const char *gl_rules_target_pattern(const GlRules *rules, guint index)
{
    g_return_val_if_fail(index < rules->targets->len, NULL);
    return ((const Target *) g_ptr_array_index(rules->targets, index))->pattern;
}

gboolean gl_rules_target_matches(const GlRules *rules, guint index, const char *path)
{
    g_return_val_if_fail(index < rules->targets->len, FALSE);
    const Target *target = g_ptr_array_index(rules->targets, index);
    if (path == NULL)
        return FALSE;
    switch (target->kind) {
    case TARGET_NAME:
        return strcmp(base_name(path), target->match) == 0;
    case TARGET_GLOB:
        /* No FNM_PATHNAME: "*" in "*\/ext.so" should span directories. */
        return fnmatch(target->pattern,
                       strchr(target->pattern, '/') != NULL ? path : base_name(path), 0) == 0;
    case TARGET_PATH:
        return strcmp(path, target->match) == 0 || strcmp(path, target->pattern) == 0;
    }
    return FALSE;
}

void gl_rules_add_callback(GlRules *rules, const char *pattern)
{
    g_ptr_array_add(rules->callbacks, g_strdup(pattern));
}

void gl_rules_add_callbacks_from_data(GlRules *rules, const char *data, gsize length)
{
    const char *end = data + length;
    for (const char *line = data; line < end;) {
        const char *newline = memchr(line, '\n', (gsize) (end - line));
        const char *stop = newline != NULL ? newline : end;
        const char *hash = memchr(line, '#', (gsize) (stop - line));
        /* A NUL cannot be in a pattern: the line ends there. */
        const char *nul = memchr(line, '\0', (gsize) (stop - line));
        if (hash != NULL)
            stop = hash;
        if (nul != NULL && nul < stop)
            stop = nul;
        g_autofree char *pattern = g_strndup(line, (gsize) (stop - line));
        g_strstrip(pattern);
        if (*pattern != '\0')
            gl_rules_add_callback(rules, pattern);
        line = newline != NULL ? newline + 1 : end;
    }
}

gboolean gl_rules_add_callbacks_from_file(GlRules *rules, const char *path, GError **error)
{
    g_autofree char *contents = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!gl_file_read_bounded(path, SKIP_FILE_MAX_BYTES, &contents, &length, &local)) {
        g_set_error(error, GL_ERROR, local->code, "--skip-functions-file %s%s", local->message,
                    local->code == GL_ERROR_LIMIT ? ": not a list of function patterns" : "");
        return FALSE;
    }
    gl_rules_add_callbacks_from_data(rules, contents, length);
    return TRUE;
}

void gl_rules_drop_default_callbacks(GlRules *rules)
{
    rules->default_callbacks = FALSE;
}

const char *const *gl_rules_default_callbacks(void)
{
    return default_callbacks;
}

void gl_rules_set_leak_kinds(GlRules *rules, GlLeakKind kinds)
{
    rules->leak_kinds = kinds;
}

GlLeakKind gl_rules_get_leak_kinds(const GlRules *rules)
{
    return rules->leak_kinds;
}

gboolean gl_leak_kinds_parse(const char *spec, GlLeakKind *kinds, GError **error)
{
    GlLeakKind result = 0;
    g_auto(GStrv) words = g_strsplit(spec != NULL ? spec : "", ",", -1);
    /* An empty value (an unset CI variable) would report nothing at all. */
    if (words[0] == NULL) {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                    "--leak-kinds: the value is empty (give definite, indirect, possible, "
                    "reachable, all or none)");
        return FALSE;
    }
    for (char **word = words; *word != NULL; word++) {
        GlLeakKind kind = 0;
        g_strstrip(*word);
        if (gl_leak_kind_from_word(*word, &kind))
            result |= kind;
        else if (strcmp(*word, "all") == 0)
            result |= GL_LEAK_ALL;
        else if (strcmp(*word, "none") != 0) {
            g_set_error(error, GL_ERROR, GL_ERROR_USAGE,
                        "unknown leak kind '%s' (use definite, indirect, possible, "
                        "reachable, all or none)", *word);
            return FALSE;
        }
    }
    *kinds = result;
    return TRUE;
}

void gl_rules_set_all_errors(GlRules *rules, gboolean all_errors)
{
    rules->all_errors = all_errors;
}

void gl_rules_set_free_at_exit(GlRules *rules, gboolean free_at_exit)
{
    rules->free_at_exit = free_at_exit;
}

static gboolean matches_any(const char *const *globs, const char *name)
{
    for (; *globs != NULL; globs++)
        if (fnmatch(*globs, name, 0) == 0)
            return TRUE;
    return FALSE;
}

gboolean gl_is_ruby_object(const char *path)
{
    return path != NULL && matches_any(ruby_object_globs, base_name(path));
}

/* ---- the per-thread classifier --------------------------------------------- */

typedef struct {
    gboolean is_target;
    gboolean is_ruby;
    char *init_function;  /* "Init_<name>" for a target, else NULL */
} ObjectFacts;

struct GlClassifier {
    const GlRules *rules;
    GHashTable *objects;    /* object path -> ObjectFacts* */
    GHashTable *callbacks;  /* function name -> GINT_TO_POINTER(is a callback + 1) */
    /* Frames of one record share their object strings, so the last lookup
     * answers most of the next ones without hashing. */
    const char *last_obj;
    ObjectFacts *last_facts;
    /* The executable of the document last seen, resolved: Ruby, whatever its name. */
    gint64 exe_pid;
    char *exe_path;
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
    classifier->callbacks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    classifier->exe_pid = -1;
    return classifier;
}

void gl_classifier_free(GlClassifier *classifier)
{
    if (classifier == NULL)
        return;
    g_hash_table_unref(classifier->objects);
    g_hash_table_unref(classifier->callbacks);
    g_free(classifier->exe_path);
    g_free(classifier);
}

static void note_document(GlClassifier *classifier, const GlDocument *doc)
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
        for (guint i = 0; i < rules->targets->len && !facts->is_target; i++)
            facts->is_target = gl_rules_target_matches(rules, i, obj);
        facts->is_ruby = !facts->is_target &&
                         (gl_is_ruby_object(obj) || g_strcmp0(obj, classifier->exe_path) == 0);
        if (facts->is_target) {
            /* Ruby calls Init_<name> for <name>.so, <name> ending at the first dot. */
            const char *name = base_name(obj);
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

static gboolean is_callback(GlClassifier *classifier, const char *fn)
{
    gpointer known = g_hash_table_lookup(classifier->callbacks, fn);
    if (known != NULL)
        return GPOINTER_TO_INT(known) - 1;
    const GlRules *rules = classifier->rules;
    gboolean callback = (rules->default_callbacks && matches_any(default_callbacks, fn)) ||
                        (rules->callbacks->len > 0 &&
                         matches_any((const char *const *) rules->callbacks->pdata, fn));
    g_hash_table_insert(classifier->callbacks, g_strdup(fn), GINT_TO_POINTER(callback + 1));
    return callback;
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

GlVerdict gl_classifier_classify(GlClassifier *classifier, GlRecord *record,
                                 const GlDocument *doc)
{
    const GlRules *rules = classifier->rules;
    note_document(classifier, doc);
    /* The cache of the last object is keyed by pointer: new record, new strings. */
    classifier->last_obj = NULL;

    gint first = mark_targets(classifier, &record->stack);
    gboolean enters_target = first >= 0;
    for (guint i = 0; i < record->aux->len; i++)
        if (mark_targets(classifier, &g_array_index(record->aux, GlAux, i).stack) >= 0)
            enters_target = TRUE;

    if (record->leak_kind == GL_LEAK_NONE) {
        /* Memory errors: any stack that enters a target (a block the target
         * freed and Ruby then read counts), or all of them on request. */
        return enters_target || rules->all_errors ? GL_VERDICT_KEEP : GL_VERDICT_SKIP_NO_TARGET;
    }

    if ((record->leak_kind & rules->leak_kinds) == 0)
        return GL_VERDICT_SKIP_KIND;
    /* Rule 1: a leak decides on its allocation stack alone. */
    if (first < 0)
        return GL_VERDICT_SKIP_NO_TARGET;
    if (rules->free_at_exit)
        return GL_VERDICT_KEEP;

    /* Rule 2: between the allocation and the first target frame, Ruby
     * itself was called back: the allocation is Ruby's. */
    const GlStack *stack = &record->stack;
    for (gint i = 0; i < first; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->fn == NULL)
            continue;  /* a stripped frame is neither a callback nor a target */
        const ObjectFacts *facts = object_facts(classifier, frame->obj);
        if (facts != NULL && facts->is_ruby && is_callback(classifier, frame->fn))
            return GL_VERDICT_SKIP_CALLBACK;
    }
    /* Rule 3: anything the extension's own Init_ function leaks, however
     * deep, happened once at require time and does not grow. */
    for (guint i = (guint) first; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (!frame->in_target || frame->fn == NULL)
            continue;
        const ObjectFacts *facts = object_facts(classifier, frame->obj);
        if (strcmp(frame->fn, facts->init_function) == 0)
            return GL_VERDICT_SKIP_INIT;
    }
    return GL_VERDICT_KEEP;
}
