/* Fingerprints: a finding's name across runs and machines (see
 * fingerprint.h). */
#include "gemleak/judge/fingerprint.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/project_paths.h"
#include "gemleak/base/sys.h"
#include "gemleak/read/demangle.h"
#include "gemleak/read/source.h"

#include <stdlib.h>
#include <string.h>

/* A fingerprint's frames are the extension's own: Ruby's between them and
 * around them are named on a Ruby with symbols and not on a stripped one,
 * and change with every Ruby version (ruby_xmalloc's way to malloc went
 * from one function to four between 3.1 and 3.4); so do the frames a
 * header inlined into the extension (ruby.h's inline functions, glibc's
 * _FORTIFY_SOURCE wrappers, which Debian's flags add). */
static gboolean frame_identifies(const GlFrame *frame)
{
    return frame->in_target && frame->fn != NULL && !gl_frame_from_a_header(frame);
}

/* Version 3's: the project's own frames (project_paths.h), nor those of a
 * runtime linked into the extension (Rust's standard library, which moves
 * with each toolchain, and which each engine names by what it reads). */
static gboolean own_frame_identifies(const GlFrame *frame, gboolean own_source)
{
    return frame->fn != NULL && gl_frame_is_own(frame, own_source);
}

/* Returns: TRUE if @stack has a frame that identifies a finding. */
static gboolean stack_identifies(const GlStack *stack)
{
    for (guint i = 0; i < stack->n_frames; i++)
        if (frame_identifies(&stack->frames[i]))
            return TRUE;
    return FALSE;
}

static void hash_stack(GChecksum *sum, const GlStack *stack)
{
    const char *last = NULL;
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (!frame_identifies(frame))
            continue;
        /* a recursion's depth is no part of a leak */
        if (last != NULL && strcmp(last, frame->fn) == 0)
            continue;
        last = frame->fn;
        g_checksum_update(sum, (const guchar *) "\n", 1);
        g_checksum_update(sum, (const guchar *) frame->fn, -1);
        if (frame->obj != NULL) {
            g_checksum_update(sum, (const guchar *) "@", 1);
            g_checksum_update(sum, (const guchar *) gl_base_name(frame->obj), -1);
        }
    }
}

/* The stacks that make a finding what it is: a freed block's free and
 * allocation stacks, else every stack. */
static gboolean identity_includes_primary(const GlFinding *finding)
{
    return !finding->freed_block;
}

/* Returns: TRUE if the finding's primary stack is part of its identity:
 * always, but for a freed block whose free and allocation stacks are all
 * Ruby's (then the extension's access to it tells it). */
static gboolean identity_uses_primary(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (identity_includes_primary(finding))
        return TRUE;
    for (guint i = 0; i < record->aux->len; i++)
        if (stack_identifies(&g_array_index(record->aux, GlAux, i).stack))
            return FALSE;
    return TRUE;
}

/* Returns: (transfer full): the first 16 hex digits of @sum after @rank
 * (which site of one set of functions it is; 0 adds nothing). 64 bits
 * tell apart every leak a suite will ever have. Every version's. */
static char *fingerprint_finish(GChecksum *sum, guint rank)
{
    if (rank > 0) {
        g_autofree char *text = g_strdup_printf("\n#%u", rank);
        g_checksum_update(sum, (const guchar *) text, -1);
    }
    return g_strndup(g_checksum_get_string(sum), 16);
}

/* Version 2 (issue 20), frozen for the baselines written then: the kind
 * and the extension's functions in the finding's stacks, then @rank: which
 * site of those functions it is, in line order. */
static char *fingerprint_v2(const GlFinding *finding, guint rank, gpointer unused)
{
    (void) unused;
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    const GlRecord *record = finding->record;
    if (identity_includes_primary(finding))
        g_checksum_update(sum, (const guchar *) record->kind, -1);
    else
        g_checksum_update(sum, (const guchar *) "freed block", -1);
    if (identity_uses_primary(finding))
        hash_stack(sum, &record->stack);
    for (guint i = 0; i < record->aux->len; i++) {
        g_checksum_update(sum, (const guchar *) "\n--", 3);
        hash_stack(sum, &g_array_index(record->aux, GlAux, i).stack);
    }
    return fingerprint_finish(sum, rank);
}

/* The fingerprint's frames before issue 20: every named frame up to the
 * last target frame, Ruby's too. Kept to match the baselines written then. */
static void legacy_hash_stack(GChecksum *sum, const GlStack *stack)
{
    guint n = gl_stack_relevant_frames(stack);
    const char *last = NULL;
    for (guint i = 0; i < n; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (frame->fn == NULL)
            continue;
        if (last != NULL && strcmp(last, frame->fn) == 0 && !frame->in_target)
            continue;
        last = frame->fn;
        g_checksum_update(sum, (const guchar *) "\n", 1);
        g_checksum_update(sum, (const guchar *) frame->fn, -1);
        if (frame->in_target && frame->obj != NULL) {
            g_checksum_update(sum, (const guchar *) "@", 1);
            g_checksum_update(sum, (const guchar *) gl_base_name(frame->obj), -1);
        }
    }
}

/* Version 1, gemleak 0.1's, before issue 20: a baseline without
 * "fingerprint_version". */
static char *fingerprint_v1(const GlFinding *finding, guint rank, gpointer unused)
{
    (void) unused;
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    const GlRecord *record = finding->record;
    if (identity_includes_primary(finding)) {
        g_checksum_update(sum, (const guchar *) record->kind, -1);
        legacy_hash_stack(sum, &record->stack);
    } else {
        g_checksum_update(sum, (const guchar *) "freed block", -1);
    }
    for (guint i = 0; i < record->aux->len; i++) {
        g_checksum_update(sum, (const guchar *) "\n--", 3);
        legacy_hash_stack(sum, &g_array_index(record->aux, GlAux, i).stack);
    }
    return fingerprint_finish(sum, rank);
}

char **gl_finding_functions(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    g_autoptr(GStrvBuilder) functions = g_strv_builder_new();
    g_autofree char *last = NULL;
    for (guint s = identity_uses_primary(finding) ? 0 : 1; s <= record->aux->len; s++) {
        const GlStack *stack = s == 0 ? &record->stack
                                      : &g_array_index(record->aux, GlAux, s - 1).stack;
        gboolean own_source = gl_stack_has_own_source(stack);
        for (guint i = 0; i < stack->n_frames; i++) {
            const GlFrame *frame = &stack->frames[i];
            if (!own_frame_identifies(frame, own_source))
                continue;
            g_autofree char *fn = gl_symbol_unsplit(frame->fn);
            if (last != NULL && strcmp(last, fn) == 0)
                continue;
            g_strv_builder_add(functions, fn);
            g_free(last);
            last = g_steal_pointer(&fn);
        }
    }
    return g_strv_builder_end(functions);
}

/* Compares the lines of the target frames of two stacks, in order. */
static gint compare_target_lines(const GlStack *a, const GlStack *b)
{
    guint na = gl_stack_relevant_frames(a), nb = gl_stack_relevant_frames(b);
    guint i = 0, j = 0;
    for (;;) {
        while (i < na && !a->frames[i].in_target)
            i++;
        while (j < nb && !b->frames[j].in_target)
            j++;
        if (i >= na || j >= nb)
            return (i < na) - (j < nb);
        if (a->frames[i].line != b->frames[j].line)
            return a->frames[i].line < b->frames[j].line ? -1 : 1;
        i++;
        j++;
    }
}

/* Orders the sites of one set of functions by their lines, numerically:
 * an order a shift of lines keeps. */
static gint compare_sites_by_line(const GlFinding *x, const GlFinding *y)
{
    const GlRecord *a = x->record, *b = y->record;
    gint by = identity_includes_primary(x) ? compare_target_lines(&a->stack, &b->stack) : 0;
    for (guint i = 0; by == 0 && i < MIN(a->aux->len, b->aux->len); i++)
        by = compare_target_lines(&g_array_index(a->aux, GlAux, i).stack,
                                  &g_array_index(b->aux, GlAux, i).stack);
    return by != 0 ? by : gl_record_compare_content(a, b);
}

static gint compare_for_ranking(gconstpointer a, gconstpointer b)
{
    const GlFinding *x = *(const GlFinding *const *) a;
    const GlFinding *y = *(const GlFinding *const *) b;
    int by_print = strcmp(x->fingerprint, y->fingerprint);
    return by_print != 0 ? by_print : compare_sites_by_line(x, y);
}

/* ---- versions 3 (issue 26) and 4 (issue 37) -------------------------------------- */

/* Returns: (transfer full): the text of @frame's source line as version 3
 * holds it: its words, each run of blanks between them one space, so that
 * reindenting keeps it (SARIF's partialFingerprints hash a line's text the
 * same way); "" when the file cannot be read where gemleak runs. */
static char *line_text(GlSources *sources, const GlFrame *frame)
{
    g_autofree char *path = gl_frame_path(frame);
    const char *line = path != NULL && frame->line > 0 ? gl_sources_line(sources, path, frame->line)
                                                       : NULL;
    GString *text = g_string_new(NULL);
    gboolean blank = FALSE;
    for (const char *c = line != NULL ? line : ""; *c != '\0'; c++) {
        if (*c == ' ' || *c == '\t' || *c == '\v' || *c == '\f' || *c == '\r') {
            blank = TRUE;
            continue;
        }
        if (blank && text->len > 0)
            g_string_append_c(text, ' ');
        blank = FALSE;
        g_string_append_c(text, *c);
    }
    return g_string_free(text, FALSE);
}

/* How a version names a function: version 3 as the object's symbols do,
 * version 4 as the function a compiler split or cloned ("f" for "f.cold",
 * "f.part.0"): -O2 moves a function's unlikely paths to "f.cold", -O0 does
 * not, and the leak is the same. */
typedef enum {
    NAMES_AS_SYMBOLS,
    NAMES_UNSPLIT,
} Names;

/* Returns: (transfer full): @frame's function as @names names it. */
static char *function_name(const GlFrame *frame, Names names)
{
    return names == NAMES_UNSPLIT ? gl_symbol_unsplit(frame->fn) : g_strdup(frame->fn);
}

/* Appends the extension's functions of @stack as versions 3 and 4 hold
 * them: version 2's, each with the text of its line, named as @names
 * says. Two allocations in one function are two lines that say different
 * things: told apart wherever they move. */
static void identity_stack(GString *identity, const GlStack *stack, GlSources *sources,
                           Names names)
{
    g_autoptr(GPtrArray) seen = g_ptr_array_new_with_free_func(g_free);
    const char *last_symbol = NULL;
    gboolean own_source = gl_stack_has_own_source(stack);
    for (guint i = 0; i < stack->n_frames; i++) {
        const GlFrame *frame = &stack->frames[i];
        if (!own_frame_identifies(frame, own_source))
            continue;
        g_autofree char *fn = function_name(frame, names);
        const char *last = seen->len > 0 ? g_ptr_array_index(seen, seen->len - 1) : NULL;
        if (last != NULL && strcmp(last, fn) == 0) {
            /* a function calling a part of itself (f.cold from f) is one
             * function; version 3: so is a recursion, whatever its depth */
            if (names == NAMES_AS_SYMBOLS || last_symbol == NULL ||
                strcmp(last_symbol, frame->fn) != 0) {
                last_symbol = frame->fn;
                continue;
            }
        }
        /* Version 4: a recursion ends the identity. Its depth is no part
         * of a leak, and what called it lies as many frames further as
         * it is deep: past the frames one engine keeps and within
         * another's (Valgrind's --num-callers, a sanitizer's
         * malloc_context_size), so the same leak would be named twice. */
        if (names == NAMES_UNSPLIT &&
            g_ptr_array_find_with_equal_func(seen, fn, g_str_equal, NULL))
            break;
        g_autofree char *text = line_text(sources, frame);
        g_string_append_printf(identity, "\n%s", fn);
        if (frame->obj != NULL)
            g_string_append_printf(identity, "@%s", gl_base_name(frame->obj));
        g_string_append_printf(identity, "\t%s", text);
        last_symbol = frame->fn;
        g_ptr_array_add(seen, g_steal_pointer(&fn));
    }
}

/* Returns: (transfer full): what versions 3 and 4 say a finding is, but
 * its rank and the kinds of the errors on a freed block: version 2's
 * stacks, each function with its line's text. */
static char *identity_of(const GlFinding *finding, GlSources *sources, Names names)
{
    const GlRecord *record = finding->record;
    GString *identity = g_string_new(identity_includes_primary(finding) ? record->kind
                                                                        : "freed block");
    if (identity_uses_primary(finding))
        identity_stack(identity, &record->stack, sources, names);
    /* a part without a stack (AddressSanitizer's "located N bytes inside
     * of a region", which Valgrind's record has not) is no part of it */
    for (guint i = 0; i < record->aux->len; i++) {
        const GlStack *stack = &g_array_index(record->aux, GlAux, i).stack;
        if (stack->n_frames == 0)
            continue;
        g_string_append(identity, "\n--");
        identity_stack(identity, stack, sources, names);
    }
    return g_string_free(identity, FALSE);
}

/* Returns: (transfer full) (nullable): the kinds of the errors on a freed
 * block (a read, a write, a second free of it), sorted, each once, joined
 * by ','; NULL for any other finding, whose kind is in its identity. */
static char *freed_block_kinds(const GlFinding *finding)
{
    if (!finding->freed_block)
        return NULL;
    g_autoptr(GPtrArray) kinds = g_ptr_array_new();
    guint n = finding->sites != NULL ? finding->sites->len : 0;
    for (guint i = 0; i <= n; i++) {
        const GlRecord *site = i < n ? g_ptr_array_index(finding->sites, i) : finding->record;
        gboolean seen = FALSE;
        for (guint k = 0; k < kinds->len && !seen; k++)
            seen = strcmp(g_ptr_array_index(kinds, k), site->kind) == 0;
        if (!seen)
            g_ptr_array_add(kinds, (gpointer) site->kind);
    }
    g_ptr_array_sort(kinds, gl_compare_strings);
    g_ptr_array_add(kinds, NULL);
    return g_strjoinv(",", (char **) kinds->pdata);
}

/* Returns: (transfer full): the fingerprint of @identity (version 3's or
 * 4's), an error on a freed block of @kinds (nullable), the @rank-th site
 * of it. */
static char *print_identity(const char *identity, const char *kinds, guint rank)
{
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(sum, (const guchar *) identity, -1);
    if (kinds != NULL) {
        g_checksum_update(sum, (const guchar *) "\nkinds ", -1);
        g_checksum_update(sum, (const guchar *) kinds, -1);
    }
    return fingerprint_finish(sum, rank);
}

/* What versions 3 and 4 compute once a finding: its identities (the
 * source lines are read once) and the kinds of its errors. */
typedef struct {
    char *identity;     /* version 4's */
    char *identity_v3;  /* the functions as the symbols name them */
    char *kinds;        /* nullable */
} Identity;

static void identity_free(gpointer data)
{
    Identity *id = data;
    g_free(id->identity);
    g_free(id->identity_v3);
    g_free(id->kinds);
    g_free(id);
}

/* Version 3 (issue 26), frozen for the baselines written then. */
static char *fingerprint_v3(const GlFinding *finding, guint rank, gpointer identities)
{
    const Identity *id = g_hash_table_lookup(identities, finding);
    return print_identity(id->identity_v3, id->kinds, rank);
}

static char *fingerprint_v4(const GlFinding *finding, guint rank, gpointer identities)
{
    const Identity *id = g_hash_table_lookup(identities, finding);
    return print_identity(id->identity, id->kinds, rank);
}

/* Returns: (transfer full) (nullable): the fingerprint of each kind of
 * the errors on a freed block of @identity and @kinds alone, as a finding
 * of that kind alone would have it, sorted; NULL when it has one kind or
 * none. A baseline that knows each knows the finding: a write fixed leaves
 * the known read known. */
static char **kind_fingerprints(const char *identity, const char *kinds, guint rank)
{
    if (kinds == NULL || strchr(kinds, ',') == NULL)
        return NULL;
    g_auto(GStrv) each = g_strsplit(kinds, ",", -1);
    g_autoptr(GStrvBuilder) prints = g_strv_builder_new();
    for (char **kind = each; *kind != NULL; kind++) {
        g_autofree char *print = print_identity(identity, *kind, rank);
        g_strv_builder_add(prints, print);
    }
    char **all = g_strv_builder_end(prints);
    qsort(all, g_strv_length(all), sizeof *all, gl_compare_strings);
    return all;
}

/* ---- ranks -------------------------------------------------------------------- */

/* Gives every finding of @sorted its fingerprint as @print makes them (with
 * @data): the sites of one print ranked by their lines. @ranks (nullable)
 * gets each finding's rank (GUINT_TO_POINTER). */
static void rank_fingerprints(GPtrArray *sorted, char *(*print)(const GlFinding *, guint, gpointer),
                              gpointer data, GHashTable *ranks)
{
    for (guint i = 0; i < sorted->len; i++) {
        GlFinding *finding = g_ptr_array_index(sorted, i);
        g_free(finding->fingerprint);
        finding->fingerprint = print(finding, 0, data);
    }
    g_ptr_array_sort(sorted, compare_for_ranking);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autofree char *base = NULL;
    guint rank = 0;
    for (guint i = 0; i < sorted->len; i++) {
        GlFinding *finding = g_ptr_array_index(sorted, i);
        if (base != NULL && strcmp(base, finding->fingerprint) == 0) {
            rank++;
        } else {
            g_free(base);
            base = g_strdup(finding->fingerprint);
            rank = 0;
        }
        guint mine = rank;
        /* A rank that another set of functions already has (most unlikely)
         * moves on, so that fingerprints stay unique in the report. */
        if (rank > 0) {   /* rank 0's was made above */
            g_free(finding->fingerprint);
            finding->fingerprint = print(finding, rank, data);
        }
        for (guint r = rank + 1; g_hash_table_contains(seen, finding->fingerprint); r++) {
            g_free(finding->fingerprint);
            finding->fingerprint = print(finding, r, data);
            mine = r;
        }
        g_hash_table_add(seen, g_strdup(finding->fingerprint));
        if (ranks != NULL)
            g_hash_table_insert(ranks, finding, GUINT_TO_POINTER(mine));
    }
}

/* ---- structures ------------------------------------------------------------------ */

/* Returns: TRUE if @finding is a block of a lost structure: one that holds
 * indirectly lost blocks, or one of those. In a lost cycle Valgrind calls
 * the block it meets first (the lowest address) definitely lost and the
 * others indirectly lost, so which one it names moves from run to run. */
static gboolean in_lost_structure(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (finding->freed_block)
        return FALSE;
    return record->leak_kind == GL_LEAK_INDIRECT ||
           (record->leak_kind == GL_LEAK_DEFINITE && finding->direct_bytes < finding->total_bytes);
}

/* Returns: (transfer full) (nullable): the site of a lost structure's
 * block, whatever kind Valgrind gave it this run, as version 2 made it:
 * its functions. */
static char *structure_fingerprint_v2(const GlFinding *finding)
{
    if (!in_lost_structure(finding))
        return NULL;
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(sum, (const guchar *) "lost structure", -1);
    hash_stack(sum, &finding->record->stack);
    return fingerprint_finish(sum, 0);
}

/* The same in versions 3 and 4: its functions with their lines' text, so
 * that two blocks allocated in one function are two sites. */
static char *structure_fingerprint(const GlFinding *finding, GlSources *sources, Names names)
{
    if (!in_lost_structure(finding))
        return NULL;
    g_autoptr(GString) identity = g_string_new("lost structure");
    identity_stack(identity, &finding->record->stack, sources, names);
    return print_identity(identity->str, NULL, 0);
}

void gl_findings_fingerprint(GlFindings *findings, GlSources *given)
{
    g_autoptr(GPtrArray) all = gl_findings_list(findings);
    g_autoptr(GlSources) own = given == NULL ? gl_sources_new() : NULL;
    GlSources *sources = given != NULL ? given : own;
    g_autoptr(GHashTable) identities = g_hash_table_new_full(NULL, NULL, NULL, identity_free);
    for (guint i = 0; i < all->len; i++) {
        GlFinding *finding = g_ptr_array_index(all, i);
        Identity *id = g_new0(Identity, 1);
        id->identity = identity_of(finding, sources, NAMES_UNSPLIT);
        id->identity_v3 = identity_of(finding, sources, NAMES_AS_SYMBOLS);
        id->kinds = freed_block_kinds(finding);
        g_hash_table_insert(identities, finding, id);
    }
    /* The fingerprints of old baselines first, then today's. */
    char *(*const earlier[])(const GlFinding *, guint, gpointer) = { fingerprint_v1,
                                                                       fingerprint_v2,
                                                                       fingerprint_v3 };
    G_STATIC_ASSERT(G_N_ELEMENTS(earlier) == GL_FINGERPRINT_VERSION - 1);
    for (guint v = 0; v < G_N_ELEMENTS(earlier); v++) {
        g_autoptr(GHashTable) ranks = g_hash_table_new(NULL, NULL);
        rank_fingerprints(all, earlier[v], identities, ranks);
        for (guint i = 0; i < all->len; i++) {
            GlFinding *finding = g_ptr_array_index(all, i);
            g_free(finding->earlier_fingerprints[v]);
            finding->earlier_fingerprints[v] = g_steal_pointer(&finding->fingerprint);
            if (earlier[v] != fingerprint_v3)
                continue;
            const Identity *id = g_hash_table_lookup(identities, finding);
            g_strfreev(finding->earlier_kind_fingerprints[v]);
            finding->earlier_kind_fingerprints[v] = kind_fingerprints(
                id->identity_v3, id->kinds, GPOINTER_TO_UINT(g_hash_table_lookup(ranks, finding)));
        }
    }
    g_autoptr(GHashTable) ranks = g_hash_table_new(NULL, NULL);
    rank_fingerprints(all, fingerprint_v4, identities, ranks);
    for (guint i = 0; i < all->len; i++) {
        GlFinding *finding = g_ptr_array_index(all, i);
        const Identity *id = g_hash_table_lookup(identities, finding);
        g_strfreev(finding->kind_fingerprints);
        finding->kind_fingerprints = kind_fingerprints(
            id->identity, id->kinds, GPOINTER_TO_UINT(g_hash_table_lookup(ranks, finding)));
        g_free(finding->earlier_structure_fingerprints[1]);
        finding->earlier_structure_fingerprints[1] = structure_fingerprint_v2(finding);
        g_free(finding->earlier_structure_fingerprints[2]);
        finding->earlier_structure_fingerprints[2] = structure_fingerprint(finding, sources,
                                                                           NAMES_AS_SYMBOLS);
        g_free(finding->structure_fingerprint);
        finding->structure_fingerprint = structure_fingerprint(finding, sources, NAMES_UNSPLIT);
    }
}
