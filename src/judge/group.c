/* Groups of findings: one bug, one entry (see group.h). */
#include "gemleak/judge/group.h"
#include "gemleak/base/text.h"
#include "gemleak/judge/project_paths.h"
#include "gemleak/judge/rules.h"
#include "gemleak/judge/structures.h"
#include "gemleak/read/source.h"

#include <string.h>

static void group_free(gpointer data)
{
    GlGroup *group = data;
    g_ptr_array_unref(group->findings);
    g_array_unref(group->pids);
    g_ptr_array_unref(group->functions);
    g_array_unref(group->ways);
    g_array_unref(group->owned);
    g_free(group);
}

/* The stack whose extension frames place the finding: a leak's allocation
 * or an error's access, else (an error on a freed block whose access is
 * Ruby's alone) the first other stack that has one. */
static const GlStack *placing_stack(const GlRecord *record)
{
    for (guint i = 0; i < record->stack.n_frames; i++)
        if (record->stack.frames[i].in_target)
            return &record->stack;
    for (guint a = 0; a < record->aux->len; a++) {
        const GlStack *stack = &g_array_index(record->aux, GlAux, a).stack;
        for (guint i = 0; i < stack->n_frames; i++)
            if (stack->frames[i].in_target)
                return stack;
    }
    return NULL;
}

/* The call path of group.h: @finding's frames from (a), *first, out to
 * (b), *last, in *stack. Returns: FALSE when no extension frame places it. */
static gboolean call_path(const GlFinding *finding, const GlStack **stack, guint *first,
                          guint *last)
{
    const GlStack *placing = placing_stack(finding->record);
    if (placing == NULL)
        return FALSE;
    guint i = 0;
    while (!placing->frames[i].in_target)
        i++;
    /* (a) passes over what a header inlined there (glibc's memcpy wrapper,
     * ruby.h's inline functions) and a runtime linked in (Rust's alloc::):
     * every bug in the extension goes through those, as
     * gl_finding_location() passes them over too. */
    gboolean own_source = gl_stack_has_own_source(placing);
    guint own = i;
    while (own < placing->n_frames && placing->frames[own].in_target &&
           !gl_frame_is_own(&placing->frames[own], own_source))
        own++;
    if (own < placing->n_frames && placing->frames[own].in_target)
        i = own;
    *first = i;
    /* Outward while the frames are the extension's: a bundled library's
     * frames are, Ruby's (a callback's rb_funcall, the VM) are not. */
    while (i + 1 < placing->n_frames && placing->frames[i + 1].in_target)
        i++;
    *last = i;
    *stack = placing;
    return TRUE;
}

void gl_finding_group_frames(const GlFinding *finding, const GlFrame **function,
                             const GlFrame **entry)
{
    const GlStack *stack = NULL;
    guint first = 0, last = 0;
    if (!call_path(finding, &stack, &first, &last)) {
        *function = NULL;
        *entry = NULL;
        return;
    }
    *function = &stack->frames[first];
    *entry = &stack->frames[last];
}

/* ---- the rules of group.h -------------------------------------------------- */

/* What the grouping knows of one finding. */
typedef struct {
    GlFinding *finding;
    const char *class;       /* its kind class */
    const GlFrame *path;     /* its call path, (a) first; NULL: none */
    guint length;
    const GlFrame *site;     /* an uncertain leak no frame places: where it was allocated */
    gint holder;             /* an indirect leak owned: its holder's index; else -1 */
    guint parent;            /* union-find */
} Item;

static guint find_root(GArray *items, guint i)
{
    while (g_array_index(items, Item, i).parent != i) {
        Item *item = &g_array_index(items, Item, i);
        item->parent = g_array_index(items, Item, item->parent).parent;
        i = item->parent;
    }
    return i;
}

/* Joins two findings' groups; the earlier finding's root stays the root,
 * so that a group's place follows its first finding. */
static void join(GArray *items, guint a, guint b)
{
    guint x = find_root(items, a), y = find_root(items, b);
    if (x == y)
        return;
    if (x < y)
        g_array_index(items, Item, y).parent = x;
    else
        g_array_index(items, Item, x).parent = y;
}

/* TRUE if @a and @b are one call: the same function, file and line. */
static gboolean same_call(const GlFrame *a, const GlFrame *b)
{
    return g_strcmp0(a->fn, b->fn) == 0 && a->line == b->line &&
           g_strcmp0(a->file != NULL ? gl_base_name(a->file) : NULL,
                     b->file != NULL ? gl_base_name(b->file) : NULL) == 0;
}

/* Returns: (transfer full): a key of @frame's call, for buckets. */
static char *call_key(const char *class, const GlFrame *frame)
{
    return g_strdup_printf("%s\n%s\n%s:%u", class, frame->fn != NULL ? frame->fn : "",
                           frame->file != NULL ? gl_base_name(frame->file) : "", frame->line);
}

/* Rule 2: the same calls from the allocation out through another function
 * than the allocating one. */
static gboolean one_routine(const Item *x, const Item *y)
{
    for (guint t = 0; t < x->length && t < y->length && same_call(&x->path[t], &y->path[t]); t++)
        if (g_strcmp0(x->path[t].fn, x->path[0].fn) != 0)
            return TRUE;
    return FALSE;
}

/* Rule 3: the same calls from the entry point inward, its own and one
 * more at least, parting at two lines of one function, each allocated
 * there or one call further; or one stopping at a call the other goes on
 * into. */
static gboolean one_call(const Item *x, const Item *y)
{
    guint m = 0;
    while (m < x->length && m < y->length &&
           same_call(&x->path[x->length - 1 - m], &y->path[y->length - 1 - m]))
        m++;
    if (m < 2)
        return FALSE;
    guint rest_x = x->length - m, rest_y = y->length - m;
    if (rest_x > 2 || rest_y > 2)
        return FALSE;
    return rest_x == 0 || rest_y == 0 ||
           g_strcmp0(x->path[rest_x - 1].fn, y->path[rest_y - 1].fn) == 0;
}

/* Groups the findings of each bucket of @buckets (key -> GArray of item
 * indexes) that @related says are one bug. */
static void join_related(GArray *items, GHashTable *buckets,
                         gboolean (*related)(const Item *, const Item *))
{
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, buckets);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        GArray *bucket = value;
        for (guint i = 0; i < bucket->len; i++)
            for (guint j = i + 1; j < bucket->len; j++) {
                guint a = g_array_index(bucket, guint, i), b = g_array_index(bucket, guint, j);
                if (find_root(items, a) != find_root(items, b) &&
                    related(&g_array_index(items, Item, a), &g_array_index(items, Item, b)))
                    join(items, a, b);
            }
    }
}

static void bucket_add(GHashTable *buckets, char *key, guint index)
{
    GArray *bucket = g_hash_table_lookup(buckets, key);
    if (bucket == NULL) {
        bucket = g_array_new(FALSE, FALSE, sizeof(guint));
        g_hash_table_insert(buckets, key, bucket);
    } else {
        g_free(key);
    }
    g_array_append_val(bucket, index);
}

static GHashTable *buckets_new(void)
{
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
}

/* Rule 4: a call path that is its entry point alone, on a line of another
 * file than the method's other paths, joins them when they are one group. */
static void join_entry_only(GArray *items)
{
    for (guint i = 0; i < items->len; i++) {
        const Item *x = &g_array_index(items, Item, i);
        if (x->path == NULL || x->length != 1 || x->holder >= 0 || x->path[0].file == NULL ||
            x->path[0].fn == NULL)
            continue;
        gint only = -1;
        gboolean several = FALSE;
        for (guint j = 0; j < items->len && !several; j++) {
            const Item *y = &g_array_index(items, Item, j);
            if (y->path == NULL || y->length < 2 || y->holder >= 0 ||
                strcmp(y->class, x->class) != 0 ||
                g_strcmp0(y->path[y->length - 1].fn, x->path[0].fn) != 0 ||
                y->path[y->length - 1].file == NULL ||
                strcmp(gl_base_name(y->path[y->length - 1].file), gl_base_name(x->path[0].file)) == 0)
                continue;
            gint root = (gint) find_root(items, j);
            if (only < 0)
                only = root;
            else if (only != root)
                several = TRUE;
        }
        if (only >= 0 && !several)
            join(items, i, (guint) only);
    }
}

/* Returns: (transfer none) (nullable): where an uncertain leak that no
 * frame of the extension places was allocated: the first named frame
 * outward of the allocator (frame 0) and of Ruby's allocation functions.
 * Its frames name no module the rules could place (a runtime's default
 * frame format), or its stack stops short: the site is all it says. */
static const GlFrame *allocation_site(const GlFinding *finding)
{
    const GlRecord *record = finding->record;
    if (finding->certain || record->leak_kind == GL_LEAK_NONE)
        return NULL;
    for (guint i = 1; i < record->stack.n_frames; i++) {
        const GlFrame *frame = &record->stack.frames[i];
        if (frame->fn != NULL && !gl_rules_is_allocation_function(frame->fn))
            return frame;
    }
    return NULL;
}

/* Each indirect leak's holder among @items' definite leaks (structures.h). */
static void find_holders(GArray *items)
{
    g_autoptr(GPtrArray) records = g_ptr_array_new();
    g_autoptr(GArray) index = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < items->len; i++) {
        const GlRecord *record = g_array_index(items, Item, i).finding->record;
        if (record->leak_kind == GL_LEAK_DEFINITE) {
            g_ptr_array_add(records, (gpointer) record);
            g_array_append_val(index, i);
        }
    }
    if (records->len == 0)
        return;
    for (guint i = 0; i < items->len; i++) {
        Item *item = &g_array_index(items, Item, i);
        if (item->finding->record->leak_kind != GL_LEAK_INDIRECT)
            continue;
        const GlRecord *holder = gl_structures_holder(records, item->finding->record);
        for (guint r = 0; holder != NULL && r < records->len; r++)
            if (g_ptr_array_index(records, r) == holder)
                item->holder = (gint) g_array_index(index, guint, r);
    }
}

/* ---- the groups ------------------------------------------------------------- */

static GlGroup *group_new(guint id)
{
    GlGroup *group = g_new0(GlGroup, 1);
    group->id = id;
    group->findings = g_ptr_array_new();
    group->pids = g_array_new(FALSE, FALSE, sizeof(gint64));
    group->functions = g_ptr_array_new();
    group->ways = g_array_new(FALSE, TRUE, sizeof(GlWayIn));
    group->owned = g_array_new(FALSE, TRUE, sizeof(GlOwned));
    return group;
}

static void group_add(GlGroup *group, const Item *item)
{
    GlFinding *finding = item->finding;
    g_ptr_array_add(group->findings, finding);
    group->total_bytes = gl_add_saturating(group->total_bytes, finding->total_bytes);
    group->total_blocks = gl_add_saturating(group->total_blocks, finding->total_blocks);
    group->direct_bytes = gl_add_saturating(group->direct_bytes, finding->direct_bytes);
    group->occurrences = gl_add_saturating(group->occurrences, finding->occurrences);
    group->certain |= finding->certain;
    for (guint i = 0; i < finding->pids->len; i++)
        gl_pids_add(group->pids, g_array_index(finding->pids, gint64, i));
    if (item->path == NULL) {
        if (item->site == NULL)
            return;
        if (group->function == NULL)
            group->function = item->site->fn;
        if (!g_ptr_array_find_with_equal_func(group->functions, item->site->fn, g_str_equal, NULL))
            g_ptr_array_add(group->functions, (gpointer) item->site->fn);
        return;
    }
    const GlFrame *function = &item->path[0], *entry = &item->path[item->length - 1];
    if (group->function == NULL) {
        group->function = function->fn;
        group->entry = entry->fn;
    }
    if (function->fn != NULL &&
        !g_ptr_array_find_with_equal_func(group->functions, function->fn, g_str_equal, NULL))
        g_ptr_array_add(group->functions, (gpointer) function->fn);
    GlWayIn *way = NULL;
    for (guint w = 0; w < group->ways->len && way == NULL; w++)
        if (g_strcmp0(g_array_index(group->ways, GlWayIn, w).frame->fn, entry->fn) == 0)
            way = &g_array_index(group->ways, GlWayIn, w);
    if (way == NULL) {
        GlWayIn fresh = { .frame = entry, .shallow = item->length == 1 };
        g_array_append_val(group->ways, fresh);
        way = &g_array_index(group->ways, GlWayIn, group->ways->len - 1);
    } else if (way->shallow && item->length > 1) {
        way->frame = entry;
        way->shallow = FALSE;
    }
    way->call_paths++;
    way->bytes = gl_add_saturating(way->bytes, finding->total_bytes);
    way->blocks = gl_add_saturating(way->blocks, finding->total_blocks);
}

static void group_add_owned(GlGroup *group, const GlFinding *finding)
{
    guint64 bytes = finding->total_bytes, blocks = finding->total_blocks;
    GlOwned owned = { .finding = finding, .bytes = bytes, .blocks = blocks };
    g_array_append_val(group->owned, owned);
    group->owned_bytes = gl_add_saturating(group->owned_bytes, bytes);
    group->owned_blocks = gl_add_saturating(group->owned_blocks, blocks);
}

/* Most bytes first, then in the order given. */
static gint compare_ways(gconstpointer a, gconstpointer b)
{
    const GlWayIn *x = a, *y = b;
    return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

static gint compare_owned(gconstpointer a, gconstpointer b)
{
    const GlOwned *x = a, *y = b;
    return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

/* Most bytes first, as findings are, then most occurrences, then in the
 * order of their first finding. */
static gint compare_groups(gconstpointer a, gconstpointer b)
{
    const GlGroup *x = *(const GlGroup *const *) a;
    const GlGroup *y = *(const GlGroup *const *) b;
    if (x->total_bytes != y->total_bytes)
        return x->total_bytes > y->total_bytes ? -1 : 1;
    if (x->occurrences != y->occurrences)
        return x->occurrences > y->occurrences ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Returns: (transfer full): one item for each of @findings, in order,
 * with its class and its call path, or else its allocation site. */
static GArray *items_new(const GPtrArray *findings)
{
    GArray *items = g_array_sized_new(FALSE, TRUE, sizeof(Item), findings->len);
    for (guint i = 0; i < findings->len; i++) {
        GlFinding *finding = g_ptr_array_index(findings, i);
        /* A freed block's accesses are one finding already, and the kind
         * of its first access says little: its class is "freed block". */
        const char *kind = finding->record->kind;
        Item item = { .finding = finding, .holder = -1, .parent = i,
                      .class = finding->freed_block ? "freed block" : kind != NULL ? kind : "" };
        const GlStack *stack = NULL;
        guint first = 0, last = 0;
        if (call_path(finding, &stack, &first, &last)) {
            item.path = &stack->frames[first];
            item.length = last - first + 1;
        } else {
            item.site = allocation_site(finding);
        }
        g_array_append_val(items, item);
    }
    return items;
}

/* Joins the @items no structure holds that are one bug: by function and
 * entry, by site (rules 1 and 5), then by routine, by call, and by entry
 * alone. */
static void join_items(GArray *items)
{
    g_autoptr(GHashTable) same_function = buckets_new();
    g_autoptr(GHashTable) same_allocation = buckets_new();
    g_autoptr(GHashTable) same_entry = buckets_new();
    g_autoptr(GHashTable) same_site = buckets_new();
    for (guint i = 0; i < items->len; i++) {
        const Item *item = &g_array_index(items, Item, i);
        /* rule 5: an uncertain leak no frame places, by its site's function */
        if (item->site != NULL && item->holder < 0)
            bucket_add(same_site, g_strdup_printf("%s\n%s", item->class, item->site->fn), i);
        const GlFrame *entry = item->path != NULL ? &item->path[item->length - 1] : NULL;
        /* a frame without a name says nothing of where the bug is */
        if (entry == NULL || item->holder >= 0 || item->path[0].fn == NULL || entry->fn == NULL)
            continue;
        bucket_add(same_function,
                   g_strdup_printf("%s\n%s\n%s", item->class, item->path[0].fn, entry->fn), i);
        bucket_add(same_allocation, call_key(item->class, &item->path[0]), i);
        bucket_add(same_entry, call_key(item->class, entry), i);
    }
    /* rule 1: every finding of a bucket with its first */
    GHashTableIter iter;
    gpointer value;
    GHashTable *joining[] = { same_function, same_site };
    for (guint b = 0; b < G_N_ELEMENTS(joining); b++) {
        g_hash_table_iter_init(&iter, joining[b]);
        while (g_hash_table_iter_next(&iter, NULL, &value)) {
            GArray *bucket = value;
            for (guint j = 1; j < bucket->len; j++)
                join(items, g_array_index(bucket, guint, 0), g_array_index(bucket, guint, j));
        }
    }
    join_related(items, same_allocation, one_routine);
    join_related(items, same_entry, one_call);
    join_entry_only(items);
}

/* Returns: (transfer full): the groups of the joined @items, each with
 * the indirect leaks its structures held, most bytes first, numbered from 1. */
static GPtrArray *groups_of_items(GArray *items)
{
    GPtrArray *groups = g_ptr_array_new_with_free_func(group_free);
    g_autoptr(GHashTable) by_root = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < items->len; i++) {
        const Item *item = &g_array_index(items, Item, i);
        if (item->holder >= 0)
            continue;
        guint root = find_root(items, i);
        GlGroup *group = g_hash_table_lookup(by_root, GUINT_TO_POINTER(root + 1));
        if (group == NULL) {
            group = group_new(groups->len + 1);
            g_ptr_array_add(groups, group);
            g_hash_table_insert(by_root, GUINT_TO_POINTER(root + 1), group);
        }
        group_add(group, item);
    }
    /* What the structures held: the indirect leaks the report lists. */
    for (guint i = 0; i < items->len; i++) {
        const Item *item = &g_array_index(items, Item, i);
        if (item->holder < 0)
            continue;
        guint root = find_root(items, (guint) item->holder);
        GlGroup *group = g_hash_table_lookup(by_root, GUINT_TO_POINTER(root + 1));
        group_add_owned(group, item->finding);
    }
    for (guint g = 0; g < groups->len; g++) {
        GlGroup *group = g_ptr_array_index(groups, g);
        g_array_sort(group->ways, compare_ways);
        g_array_sort(group->owned, compare_owned);
    }
    g_ptr_array_sort(groups, compare_groups);
    for (guint g = 0; g < groups->len; g++)
        ((GlGroup *) g_ptr_array_index(groups, g))->id = g + 1;
    return groups;
}

GPtrArray *gl_findings_group(const GPtrArray *findings)
{
    g_autoptr(GArray) items = items_new(findings);
    find_holders(items);
    join_items(items);
    return groups_of_items(items);
}
