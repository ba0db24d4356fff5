/* The rules as the user set them (see classify.h and gemleak(1), "RULES"):
 * targets, --skip-function, leak kinds, and what Ruby's functions and
 * objects are called. The classifier (classify.c) applies them. */
#include "gemleak/judge/rules.h"
#include "gemleak/base/text.h"
#include "rules_int.h"
#include "gemleak/base/errors.h"
#include "gemleak/base/sys.h"
#include "gemleak/read/demangle.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* A list of function patterns, one a line: a megabyte is tens of thousands
 * of them. More is a wrong file (/dev/zero), refused. */
#define SKIP_FILE_MAX_BYTES (1u << 20)

typedef enum { TARGET_NAME, TARGET_GLOB, TARGET_PATH, TARGET_REGEX } TargetKind;

typedef struct {
    TargetKind kind;
    char *pattern;   /* as the user gave it */
    char *match;     /* NAME: the file name it stands for; PATH: the path, resolved */
    GRegex *regex;   /* REGEX */
} Target;

struct GlRules {
    GPtrArray *targets;    /* Target* */
    GPtrArray *skip_globs;    /* char* globs of --skip-function, NULL-terminated */
    GPtrArray *skip_regexes;  /* GRegex* of --skip-function /REGEX/ */
    gboolean ruby_memory_rule;  /* rule 2, Ruby's own memory; off with --no-default-skips */
    GlLeakKind leak_kinds;
    gboolean all_errors;
    gboolean free_at_exit;
    guint64 growth_min_bytes;
};

/* Ruby's functions that allocate for their caller (rule 2): the xmalloc
 * family (ruby/internal/xmalloc.h, memory.h: "ruby_xfree(), ruby_xrealloc(),
 * or ruby_xrealloc2()" release what they return), the structs of Data and
 * TypedData objects (ruby/internal/core/rdata.h: the data "was allocated
 * using ruby_xmalloc() (or variants), and shall be freed using
 * ruby_xfree()"), then their insides, which a stack shows where a call to
 * them was a tail call. Memory one of these returns is its caller's to
 * free. Every other function of Ruby's that allocates does so for Ruby (a
 * string, an array, a class, a method cache, a GC), unless Ruby's headers
 * say its caller releases what it hands out (caller_owned_functions). */
static const char *const allocation_functions[] = {
    "ruby_xmalloc", "ruby_xmalloc2", "ruby_xcalloc", "ruby_xrealloc", "ruby_xrealloc2",
    "ruby_sized_xrealloc", "ruby_sized_xrealloc2",
    "rb_xmalloc_mul_add", "rb_xmalloc_mul_add_mul", "rb_xcalloc_mul_add",
    "rb_xcalloc_mul_add_mul", "rb_xrealloc_mul_add",
    "rb_data_object_zalloc", "rb_data_typed_object_zalloc", "rb_data_object_alloc",
    "rb_data_typed_object_alloc",
    "ruby_xmalloc_body", "ruby_xmalloc2_body", "ruby_xcalloc_body", "ruby_xrealloc_body",
    "ruby_xrealloc2_body", "ruby_sized_xrealloc_body", "ruby_sized_xrealloc2_body", "objspace_xmalloc0", "objspace_xmalloc2", "objspace_xcalloc",
    "objspace_xrealloc", "rb_gc_impl_malloc", "rb_gc_impl_calloc", "rb_gc_impl_realloc",
    "calloc1",
    NULL,
};

/* The functions of Ruby's public API (Ruby 2.7 to 3.4) whose memory, by
 * Ruby's own headers, the caller releases, each with the words that say
 * so (rule 2): to the rule they are allocation functions, as ruby_xmalloc
 * is. Memory the GC frees by itself (an ALLOCV buffer, which an object
 * holds) is not here: its caller has nothing to release. */
static const struct {
    const char *glob;
    const char *header;  /* where Ruby says so, for gemleak(1) and the tests */
    const char *words;
} caller_owned_functions[] = {
    { "ruby_strdup", "ruby/util.h",
      "Return value must be discarded using ruby_xfree()." },
    { "ruby_getcwd", "ruby/util.h",
      "Return value must be discarded using ruby_xfree()." },
    /* rb_fd_set, rb_fd_copy and rb_fd_dup grow the set's bitmap. */
    { "rb_fd_init", "ruby/internal/intern/select/largesize.h (ruby/intern.h before 3.0)",
      "`rb_fd_init` allocates the memory. `rb_fd_term` frees the memory. `rb_fd_set` may "
      "re-allocate bitmap." },
    { "rb_fd_set", "ruby/internal/intern/select/largesize.h", "`rb_fd_set` may re-allocate bitmap." },
    { "rb_fd_copy", "ruby/internal/intern/select/largesize.h", "`rb_fd_term` frees the memory." },
    { "rb_fd_dup", "ruby/internal/intern/select/largesize.h", "`rb_fd_term` frees the memory." },
    { "rb_econv_open", "ruby/internal/encoding/transcode.h (ruby/encoding.h before 3.0)",
      "Return value must be passed to rb_econv_close() exactly once." },
    { "rb_econv_open_opts", "ruby/internal/encoding/transcode.h (ruby/encoding.h before 3.0)",
      "Return value must be passed to rb_econv_close() exactly once." },
    /* st.h pairs every constructor with rb_st_free_table; what the table
     * grows into (st_insert, rebuild_table) is freed with it. */
    { "st_*", "ruby/st.h", "st_table *rb_st_init_table(...); void rb_st_free_table(st_table *);" },
    { "rb_st_*", "ruby/st.h", "st_table *rb_st_init_table(...); void rb_st_free_table(st_table *);" },
    { "rebuild_table*", "ruby/st.h (st.c's growth of a table)",
      "void rb_st_free_table(st_table *);" },
    { "onig_new", "ruby/onigmo.h", "int onig_new(OnigRegex*, ...); void onig_free(OnigRegex);" },
    { "onig_new_deluxe", "ruby/onigmo.h",
      "int onig_new_deluxe(OnigRegex* reg, ...); void onig_free(OnigRegex);" },
    { "onig_region_new", "ruby/onigmo.h",
      "OnigRegion* onig_region_new(void); void onig_region_free(OnigRegion* region, int free_self);" },
    { "onig_region_resize", "ruby/onigmo.h",
      "int onig_region_resize(OnigRegion* region, int n); void onig_region_free(...);" },
    { "onig_region_copy", "ruby/onigmo.h",
      "void onig_region_copy(OnigRegion* to, const OnigRegion* from); void onig_region_free(...);" },
    { "rb_memory_view_get", "ruby/memory_view.h (Ruby 3.0 and later)",
      "The exported MemoryView must be released by `rb_memory_view_release` when the "
      "MemoryView is no longer needed." },
};

/* Ruby's functions that allocate the struct of a Data or TypedData object
 * (ruby/internal/core/rdata.h, rtypeddata.h: rb_data_object_zalloc and
 * rb_data_typed_object_zalloc, and the inline rb_data_object_make and
 * rb_data_typed_object_make that call them): what one allocates lives as
 * long as its object, which the GC frees with it. Growth there (--growth)
 * is held by the objects the test keeps, one block an object
 * (judge/growth.h; gemleak(1), RULES). */
static const char *const data_struct_functions[] = {
    "rb_data_object_zalloc", "rb_data_typed_object_zalloc", "rb_data_object_make",
    "rb_data_typed_object_make", NULL,
};

/* Ruby's extension loader, which calls an extension's Init function
 * (rule 3): dln.c and load.c. */
static const char *const loader_functions[] = { "dln_load*", "load_ext", NULL };

/* Ruby's garbage collector, as a Ruby with symbols names it (rule 5): it
 * marks the machine stack conservatively, and memcheck sees it branch on
 * every uninitialised word it finds there. */
static const char *const gc_functions[] = {
    "gc_*", "garbage_collect*", "rb_gc", "rb_gc_*", "mark_*", NULL,
};

/* Ruby's marking functions an extension's mark function calls on the
 * values it holds: an uninitialised one is the extension's. */
static const char *const marking_functions[] = {
    "rb_gc_mark", "rb_gc_mark_movable", "rb_gc_mark_maybe", "rb_gc_mark_locations",
    "rb_mark_tbl", "rb_mark_tbl_no_pin", "rb_mark_hash", "rb_mark_set", NULL,
};

/* The dynamic loader (rule 5). */
static const char *const dynamic_loader_globs[] = { "ld-linux*.so*", "ld-*.so*", "ld.so*", NULL };


static void target_free(gpointer data)
{
    Target *target = data;
    g_free(target->pattern);
    g_free(target->match);
    if (target->regex != NULL)
        g_regex_unref(target->regex);
    g_free(target);
}

/* A pattern written /REGEX/ is a regular expression: how a Ruby Regexp
 * reaches gemleak (GemLeak's Rake settings write them so). Function names
 * never hold a '/', and an object path never ends with one.
 * Returns: (transfer full) (nullable): the compiled expression, or NULL
 * when @pattern is not written so, or, with @error set, when it does not
 * compile. */
static GRegex *pattern_regex(const char *option, const char *pattern, GError **error)
{
    size_t length = strlen(pattern);
    if (length < 2 || pattern[0] != '/' || pattern[length - 1] != '/')
        return NULL;
    g_autofree char *source = g_strndup(pattern + 1, length - 2);
    g_autoptr(GError) local = NULL;
    GRegex *regex = g_regex_new(source, 0, 0, &local);
    if (regex == NULL)
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "%s %s: not a regular expression: %s",
                    option, pattern, local->message);
    return regex;
}

/* Unanchored, as Ruby's Regexp#match?. GRegex reads UTF-8 only: a name
 * that is not cannot match. */
static gboolean regex_matches(const GRegex *regex, const char *text)
{
    return g_utf8_validate(text, -1, NULL) && g_regex_match(regex, text, 0, NULL);
}

GlRules *gl_rules_new(void)
{
    GlRules *rules = g_new0(GlRules, 1);
    rules->targets = g_ptr_array_new_with_free_func(target_free);
    rules->skip_globs = g_ptr_array_new_null_terminated(8, g_free, TRUE);
    rules->skip_regexes = g_ptr_array_new_with_free_func((GDestroyNotify) g_regex_unref);
    rules->ruby_memory_rule = TRUE;
    rules->leak_kinds = GL_LEAK_DEFINITE;
    /* 0: a table that doubles less often than every repetition has a
     * median of 0 and still grows */
    rules->growth_min_bytes = 0;
    return rules;
}

void gl_rules_free(GlRules *rules)
{
    if (rules == NULL)
        return;
    g_ptr_array_unref(rules->targets);
    g_ptr_array_unref(rules->skip_globs);
    g_ptr_array_unref(rules->skip_regexes);
    g_free(rules);
}

gboolean gl_rules_add_target(GlRules *rules, const char *pattern, GError **error)
{
    if (pattern == NULL || *pattern == '\0') {
        g_set_error(error, GL_ERROR, GL_ERROR_USAGE, "--object needs a name, path or glob");
        return FALSE;
    }
    g_autoptr(GError) local = NULL;
    GRegex *regex = pattern_regex("--object", pattern, &local);
    if (local != NULL) {
        g_propagate_error(error, g_steal_pointer(&local));
        return FALSE;
    }
    Target *target = g_new0(Target, 1);
    target->pattern = g_strdup(pattern);
    if (regex != NULL) {
        target->kind = TARGET_REGEX;
        target->regex = regex;
    } else if (strpbrk(pattern, "*?[") != NULL) {
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
        return strcmp(gl_base_name(path), target->match) == 0;
    case TARGET_GLOB:
        /* No FNM_PATHNAME: "*" in "*\/ext.so" should span directories. */
        return fnmatch(target->pattern,
                       strchr(target->pattern, '/') != NULL ? path : gl_base_name(path), 0) == 0;
    case TARGET_PATH:
        return strcmp(path, target->match) == 0 || strcmp(path, target->pattern) == 0;
    case TARGET_REGEX: {
        /* The path, the file name, or the name create_makefile gave it. */
        const char *file = gl_base_name(path);
        const char *dot = strchr(file, '.');
        g_autofree char *name = dot != NULL ? g_strndup(file, (gsize) (dot - file)) : NULL;
        return regex_matches(target->regex, path) || regex_matches(target->regex, file) ||
               (name != NULL && regex_matches(target->regex, name));
    }
    }
    return FALSE;
}

gboolean gl_rules_add_skip_function(GlRules *rules, const char *pattern, GError **error)
{
    g_autoptr(GError) local = NULL;
    GRegex *regex = pattern_regex("--skip-function", pattern, &local);
    if (local != NULL) {
        g_propagate_error(error, g_steal_pointer(&local));
        return FALSE;
    }
    if (regex != NULL)
        g_ptr_array_add(rules->skip_regexes, regex);
    else
        g_ptr_array_add(rules->skip_globs, g_strdup(pattern));
    return TRUE;
}

gboolean gl_rules_add_skip_functions_from_data(GlRules *rules, const char *data, gsize length,
                                          const char *name, GError **error)
{
    const char *end = data + length;
    long number = 0;
    for (const char *line = data; line < end;) {
        const char *newline = memchr(line, '\n', (gsize) (end - line));
        const char *stop = newline != NULL ? newline : end;
        const char *hash = memchr(line, '#', (gsize) (stop - line));
        /* A NUL cannot be in a pattern: the line ends there. */
        const char *nul = memchr(line, '\0', (gsize) (stop - line));
        number++;
        if (hash != NULL)
            stop = hash;
        if (nul != NULL && nul < stop)
            stop = nul;
        g_autofree char *pattern = g_strndup(line, (gsize) (stop - line));
        g_strstrip(pattern);
        if (*pattern != '\0' && !gl_rules_add_skip_function(rules, pattern, error)) {
            g_prefix_error(error, "%s:%ld: ", name, number);
            return FALSE;
        }
        line = newline != NULL ? newline + 1 : end;
    }
    return TRUE;
}

gboolean gl_rules_add_skip_functions_from_file(GlRules *rules, const char *path, GError **error)
{
    g_autofree char *contents = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!gl_file_read_bounded(path, SKIP_FILE_MAX_BYTES, &contents, &length, &local)) {
        g_set_error(error, GL_ERROR, local->code, "--skip-functions-file %s%s", local->message,
                    local->code == GL_ERROR_LIMIT ? ": not a list of function patterns" : "");
        return FALSE;
    }
    return gl_rules_add_skip_functions_from_data(rules, contents, length, path, error);
}

void gl_rules_drop_ruby_memory_rule(GlRules *rules)
{
    rules->ruby_memory_rule = FALSE;
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

void gl_rules_set_growth_min_bytes(GlRules *rules, guint64 bytes)
{
    rules->growth_min_bytes = bytes;
}

guint64 gl_rules_get_growth_min_bytes(const GlRules *rules)
{
    return rules->growth_min_bytes;
}

static gboolean matches_any(const char *const *globs, const char *name)
{
    for (; *globs != NULL; globs++)
        if (fnmatch(*globs, name, 0) == 0)
            return TRUE;
    return FALSE;
}

static gboolean is_caller_owned(const char *fn)
{
    for (gsize i = 0; i < G_N_ELEMENTS(caller_owned_functions); i++)
        if (fnmatch(caller_owned_functions[i].glob, fn, 0) == 0)
            return TRUE;
    return FALSE;
}

guint gl_rules_n_caller_owned(void)
{
    return G_N_ELEMENTS(caller_owned_functions);
}

const char *gl_rules_caller_owned(guint index, const char **header, const char **words)
{
    g_return_val_if_fail(index < G_N_ELEMENTS(caller_owned_functions), NULL);
    if (header != NULL)
        *header = caller_owned_functions[index].header;
    if (words != NULL)
        *words = caller_owned_functions[index].words;
    return caller_owned_functions[index].glob;
}

const char *const *gl_rules_allocator_globs(void)
{
    static const char **globs;
    if (g_once_init_enter(&globs)) {
        GPtrArray *all = g_ptr_array_new();
        for (const char *const *fn = allocation_functions; *fn != NULL; fn++)
            g_ptr_array_add(all, (gpointer) *fn);
        for (gsize i = 0; i < G_N_ELEMENTS(caller_owned_functions); i++)
            g_ptr_array_add(all, (gpointer) caller_owned_functions[i].glob);
        g_ptr_array_add(all, NULL);
        /* kept for the process's life, as the tables it points into */
        g_once_init_leave(&globs, (const char **) g_ptr_array_free(all, FALSE));
    }
    return globs;
}

gboolean gl_is_dynamic_loader(const char *path)
{
    return matches_any(dynamic_loader_globs, gl_base_name(path));
}

gboolean gl_rules_all_errors(const GlRules *rules)
{
    return rules->all_errors;
}

gboolean gl_rules_free_at_exit(const GlRules *rules)
{
    return rules->free_at_exit;
}

gboolean gl_rules_ruby_memory_rule(const GlRules *rules)
{
    return rules->ruby_memory_rule;
}

guint gl_rules_function_flags(const GlRules *rules, const char *fn)
{
    g_autofree char *base = gl_symbol_unsplit(fn);
    guint flags = GL_FN_KNOWN;
    if (matches_any(allocation_functions, base))
        flags |= GL_FN_ALLOCATION;
    else if (is_caller_owned(base))
        flags |= GL_FN_CALLER_OWNED;
    if (matches_any(loader_functions, base))
        flags |= GL_FN_LOADER;
    if ((flags & (GL_FN_ALLOCATION | GL_FN_CALLER_OWNED)) == 0 && matches_any(gc_functions, base))
        flags |= GL_FN_GC;
    if (matches_any(marking_functions, base))
        flags |= GL_FN_MARKING;
    if (matches_any(data_struct_functions, base))
        flags |= GL_FN_DATA_STRUCT;
    gboolean skip = rules->skip_globs->len > 0 &&
                    (matches_any((const char *const *) rules->skip_globs->pdata, fn) ||
                     matches_any((const char *const *) rules->skip_globs->pdata, base));
    for (guint i = 0; !skip && i < rules->skip_regexes->len; i++)
        skip = regex_matches(g_ptr_array_index(rules->skip_regexes, i), fn);
    if (skip)
        flags |= GL_FN_SKIP;
    return flags;
}

gboolean gl_rules_is_allocation_function(const char *fn)
{
    g_autofree char *base = gl_symbol_unsplit(fn);
    return matches_any(allocation_functions, base);
}
