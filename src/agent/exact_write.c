/* The exact pass (gemleak_alloc.so, alloc.c) writes its table into the
 * process's report: the frames at each program counter once, symbolized by
 * the runtime and kept, each stack once, then the blocks still allocated by
 * stack, in gemleak's frame format:
 *
 *   gemleak:frame<TAB>K                then the frames symbolized at one
 *                                      program counter (inlined ones too),
 *                                      numbered from 0, in gemleak's format
 *   gemleak:stack<TAB>N<TAB>K K ...    stack N: its program counters' frames
 *   gemleak:stacks                     a new table of blocks: the last is void
 *   gemleak:at<TAB>N<TAB>ADDRESS ...   blocks allocated on stack N (hex)
 *
 * (frames and stacks once a process, before the first table that needs
 * them). gemleak joins them to the check's objects (report_objects=1) by
 * address, and gives each block the fast pass saw at that site and size
 * the stack found here (src/read/sanitizer_exact.c).
 *
 * It runs with the table's lock held: nothing here allocates (memory is
 * mapped, and sorted in place). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "gemleak/base/protocol.h"
#include "exact_int.h"

#define RENDER_BYTES 8192

/* The runtime's: a line into the process's report, and its symbolizer. */
typedef void (*Symbolize)(void *, const char *, char *, size_t);
static AgentReportLine report_line;
static Symbolize symbolize;

static char line[LINE_BYTES];
static char rendered[RENDER_BYTES];

/* The frames symbolized at a program counter (a frame and those inlined
 * at it share it), kept: the runtime's symbolizer costs far more than the
 * writing, and stacks share most of their frames. */
typedef struct {
    uintptr_t pc;      /* 0: empty */
    char *text;        /* mapped: for each frame, module, function, source and numbers, NUL after each */
    int frames;
    uint32_t index;    /* its number in the report */
    int written;       /* its lines are in this process's report */
} Rendered;

#define FIRST_RENDERED ((size_t) 1 << 12)
#define ARENA_BYTES ((size_t) 1 << 20)
static Rendered *rendered_pcs;  /* mapped, rendered_capacity of them */
static size_t rendered_capacity;
static size_t n_rendered;
static char *arena;
static size_t arena_left;

/* Returns: a copy of @size bytes of @text in memory mapped here, or NULL. */
static char *keep(const char *text, size_t size)
{
    if (size > arena_left) {
        size_t chunk = size > ARENA_BYTES ? size : ARENA_BYTES;
        arena = agent_map(chunk);
        arena_left = arena != NULL ? chunk : 0;
        if (arena == NULL)
            return NULL;
    }
    char *copy = memcpy(arena, text, size);
    arena += size;
    arena_left -= size;
    return copy;
}

/* Returns: (transfer none) (nullable): the frames symbolized at @pc. */
static const Rendered *render(uintptr_t pc)
{
    static const char *const formats[] = { "%m", "%f", "%s", "%p %o %q %l %c" };
    if ((n_rendered + 1) * 2 > rendered_capacity) {
        size_t more = rendered_capacity == 0 ? FIRST_RENDERED : rendered_capacity * 2;
        Rendered *grown = agent_map(more * sizeof *grown);
        if (grown == NULL)
            return NULL;  /* no memory left: this frame goes unnamed */
        for (size_t j = 0; j < rendered_capacity; j++) {
            if (rendered_pcs[j].pc == 0)
                continue;
            size_t k = (size_t) ((rendered_pcs[j].pc * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & (more - 1);
            while (grown[k].pc != 0)
                k = (k + 1) & (more - 1);
            grown[k] = rendered_pcs[j];
        }
        if (rendered_pcs != NULL)
            munmap(rendered_pcs, rendered_capacity * sizeof *rendered_pcs);
        rendered_pcs = grown;
        rendered_capacity = more;
    }
    size_t mask = rendered_capacity - 1;
    size_t i = (size_t) ((pc * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & mask;
    while (rendered_pcs[i].pc != 0 && rendered_pcs[i].pc != pc)
        i = (i + 1) & mask;
    if (rendered_pcs[i].pc == pc)
        return &rendered_pcs[i];
    /* each format's text for every frame at @pc, NUL after each, as the
     * runtime renders the frames of a stack, innermost first; in memory
     * mapped the first time, not this library's, which every check scans
     * whole (only the exact pass renders) */
    static struct {
        char buffers[4][RENDER_BYTES];
        char joined[4 * RENDER_BYTES];
    } *scratch;
    if (scratch == NULL && (scratch = agent_map(sizeof *scratch)) == NULL)
        return NULL;
    char (*buffers)[RENDER_BYTES] = scratch->buffers;
    char *texts[4][16];
    int counts[4] = { 0 };
    for (int f = 0; f < 4; f++) {
        memset(buffers[f], 0, RENDER_BYTES);
        symbolize((void *) pc, formats[f], buffers[f], RENDER_BYTES);
        for (char *p = buffers[f]; *p != '\0' && counts[f] < 16; p += strlen(p) + 1)
            texts[f][counts[f]++] = p;
    }
    int frames = counts[3];
    for (int f = 0; f < 3; f++)
        if (counts[f] < frames)
            frames = counts[f];
    char *joined = scratch->joined;
    size_t length = 0;
    for (int i2 = 0; i2 < frames; i2++)
        for (int f = 0; f < 4; f++) {
            size_t n = strlen(texts[f][i2]) + 1;
            if (length + n > sizeof scratch->joined)
                break;
            memcpy(joined + length, texts[f][i2], n);
            length += n;
        }
    char *text = keep(joined, length > 0 ? length : 1);
    if (text == NULL)
        return NULL;
    rendered_pcs[i] = (Rendered) { .pc = pc, .text = text, .frames = frames,
                                   .index = (uint32_t) n_rendered };
    n_rendered++;
    return &rendered_pcs[i];
}

/* Writes, once a process, the frames symbolized at @pc: "gemleak:frame
 * <TAB>K", then its lines in gemleak's frame format, numbered from 0 (a
 * frame and those inlined at it).
 * Returns: (transfer none) (nullable): them. */
static Rendered *write_frames(uintptr_t pc)
{
    static const char *const tags[] = { "Gm", "Gf", "Gs", "G" };
    Rendered *frames = (Rendered *) render(pc);
    if (frames == NULL || frames->written)
        return frames;
    frames->written = 1;
    snprintf(line, sizeof line, GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_FRAME "\t%u", frames->index);
    report_line(line);
    const char *field = frames->text;
    for (int i = 0; i < frames->frames; i++)
        for (int f = 0; f < 4; f++) {
            snprintf(line, sizeof line, "%s %d %s", tags[f], i, field);
            report_line(line);
            field += strlen(field) + 1;
        }
    return frames;
}

/* Writes, once a process, stack @s: "gemleak:stack<TAB>N<TAB>K K ...",
 * its frames by their numbers (written first). */
static void write_stack(uint32_t s)
{
    Stack *stack = &exact_table.stacks[s];
    if (stack->written)
        return;
    stack->written = 1;
    uint32_t indices[MAX_DEPTH];
    int n = 0;
    for (int f = 0; f < stack->n; f++) {
        const Rendered *frames = write_frames(stack->pcs[f]);
        if (frames != NULL)
            indices[n++] = frames->index;
    }
    size_t length = (size_t) snprintf(line, sizeof line,
                                      GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_STACK "\t%u\t", s);
    for (int i = 0; i < n && length < sizeof line - 16; i++)
        length += (size_t) snprintf(line + length, sizeof line - length, "%s%u", i > 0 ? " " : "",
                                    indices[i]);
    report_line(line);
}

/* Sorts @slots by stack, then address: a shell sort, in place. qsort
 * allocates for large arrays, and an allocation here, with the lock held,
 * would free into the hook that takes it. */
static void sort_by_stack(HiddenSlot *slots_to_sort, size_t n)
{
    static const size_t gaps[] = { 10711, 4711, 1750, 701, 301, 132, 57, 23, 10, 4, 1 };
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
        for (size_t i = gaps[g]; i < n; i++) {
            HiddenSlot slot = slots_to_sort[i];
            size_t j = i;
            while (j >= gaps[g] &&
                   (slots_to_sort[j - gaps[g]].value > slot.value ||
                    (slots_to_sort[j - gaps[g]].value == slot.value &&
                     slots_to_sort[j - gaps[g]].key > slot.key))) {
                slots_to_sort[j] = slots_to_sort[j - gaps[g]];
                j -= gaps[g];
            }
            slots_to_sort[j] = slot;
        }
}

/* Writes the table of blocks still allocated, with their stacks: each
 * stack once, then its blocks, on lines of a few dozen (the runtime's
 * Printf cuts long lines). */
void exact_write_table(void)
{
    if (report_line == NULL || symbolize == NULL)
        return;
    exact_busy++;
    pthread_mutex_lock(&exact_table.lock);
    report_line(GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_STACKS);
    size_t used = exact_table.blocks.used;
    HiddenSlot *live = used > 0 ? agent_map(used * sizeof *live) : NULL;
    size_t n = live != NULL ? hidden_table_copy(&exact_table.blocks, live, used) : 0;
    if (live != NULL)
        sort_by_stack(live, n);
    size_t length = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = (uint32_t) live[i].value;
        if (i == 0 || live[i - 1].value != live[i].value) {
            if (length > 0)
                report_line(rendered);
            length = 0;
            write_stack(s);
        }
        if (length == 0)
            length = (size_t) snprintf(rendered, sizeof rendered,
                                       GL_PROTO_MARKER_PREFIX GL_PROTO_MARKER_AT "\t%u\t", s);
        length += (size_t) snprintf(rendered + length, sizeof rendered - length, "%s%lx",
                                    rendered[length - 1] == '\t' ? "" : " ",
                                    (unsigned long) HIDDEN_KEY(live[i].key));
        if (length > LINE_BYTES - 64) {
            report_line(rendered);
            length = 0;
        }
    }
    if (length > 0)
        report_line(rendered);
    if (live != NULL)
        munmap(live, used * sizeof *live);
    pthread_mutex_unlock(&exact_table.lock);
    exact_busy--;
}

int exact_write_start(AgentReportLine line_into_report)
{
    report_line = line_into_report;
    symbolize = (Symbolize) (uintptr_t) dlsym(RTLD_DEFAULT, "__sanitizer_symbolize_pc");
    return symbolize != NULL;
}

void exact_forget_written(void)
{
    for (size_t i = 0; i < exact_table.n_stacks; i++)
        exact_table.stacks[i].written = 0;
    for (size_t i = 0; i < rendered_capacity; i++)
        rendered_pcs[i].written = 0;
}
