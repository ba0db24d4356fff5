/* Between the rules (rules.c) and the classifier that applies them
 * (classify.c): what the classifier asks of the rules beyond classify.h.
 * src/judge/ only. */
#ifndef GEMLEAK_RULES_INT_H
#define GEMLEAK_RULES_INT_H

#include <glib.h>
#include "gemleak/judge/rules.h"

/* What a function name says (gl_rules_function_flags()). */
enum {
    GL_FN_ALLOCATION = 1 << 0,  /* Ruby's allocator: allocates for its caller */
    GL_FN_LOADER = 1 << 1,      /* Ruby's extension loader */
    GL_FN_SKIP = 1 << 2,        /* matches a --skip-function pattern */
    GL_FN_KNOWN = 1 << 3,       /* always set: a flag word is never 0 */
    GL_FN_GC = 1 << 4,          /* Ruby's garbage collector */
    GL_FN_MARKING = 1 << 5,     /* what a mark function calls to mark its values */
    GL_FN_CALLER_OWNED = 1 << 6,/* an API whose memory Ruby's headers say the caller releases */
    GL_FN_DATA_STRUCT = 1 << 7, /* allocates a Data object's struct (--growth: held) */
};

/* Returns: the GL_FN_ flags of the function @fn, compiler suffixes
 * (".part.0", ".constprop.0") aside. Not cached: the classifier does. */
guint gl_rules_function_flags(const GlRules *rules, const char *fn);

/* Returns: TRUE if @path names the dynamic loader (ld.so, rule 5). */
gboolean gl_is_dynamic_loader(const char *path);

gboolean gl_rules_all_errors(const GlRules *rules);
gboolean gl_rules_free_at_exit(const GlRules *rules);
/* Returns: TRUE unless --no-default-skips turned rule 2 off. */
gboolean gl_rules_ruby_memory_rule(const GlRules *rules);

#endif
