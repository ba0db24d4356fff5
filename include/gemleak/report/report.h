/* Reports. A format is a GlReporter, a small table of functions (begin, one
 * call a finding, end) in a file of its own, as curl's TLS backends are a
 * struct Curl_ssl each: a new format is its file, src/report/report_NAME.c,
 * and one line in report.c's list (its declaration there too); --format,
 * its help and its errors take their names from that list. What several
 * formats say alike is gemleak/report/wording.h's, never another format's. */
#ifndef GEMLEAK_REPORT_H
#define GEMLEAK_REPORT_H

#include <stdio.h>
#include <glib.h>
#include "gemleak/judge/analyze.h"
#include "gemleak/judge/gate.h"
#include "gemleak/judge/group.h"
#include "gemleak/judge/merge.h"

typedef struct {
    const GlAnalysis *analysis;
    const GPtrArray *findings;     /* GlFinding* to report: the analysis's, less the baseline's */
    guint baseline_known;          /* findings left out because the baseline knows them */
    const GlGateResult *gate;
    const char *exit_line;         /* gemleak run: its exit status and why (nullable) */
    /* What the problems come to, in the engine's words: "Valgrind's XML
     * could not all be read", "a process that loaded an extension was not
     * checked" (nullable: "an input could not all be read"). */
    const char *trouble;
    const GlGate *fail_on;         /* which findings fail (nullable: all of them) */
    const char *const *targets;    /* the target patterns or paths, NULL-terminated */
    gboolean color;                /* ANSI colour (text only) */
    gboolean suppressions;         /* show the suppression block of each finding */
    const char *project_root;      /* absolute: locations are shown relative to it */
    guint frames_after;            /* text: frames shown past the outermost target
                                    * frame; G_MAXUINT: every frame, none collapsed */
    gboolean ran_command;          /* gemleak run: command_status says how the command ended */
    gboolean verdict_elsewhere;    /* the gate's line and exit_line are said once on gemleak's
                                    * streams, by another report or by the sinks: a report
                                    * written to a stream leaves them out */
    int command_status;            /* its exit status, 128+N when signal N killed it */
} GlReportContext;

typedef struct {
    const char *name;              /* as given to --format */
    /* Returns: (transfer full): the reporter's state for the next calls. */
    gpointer (*begin)(const GlReportContext *context, FILE *out);
    void (*finding)(gpointer state, const GlFinding *finding, guint index);
    /* Optional: when set, called once a group of findings (group.h), in
     * place of finding(): a format that shows one bug as one entry. */
    void (*group)(gpointer state, const GlGroup *group, guint index);
    /* Writes what is left and frees the state. */
    void (*end)(gpointer state);
} GlReporter;

/* The formats other stages name, each defined in src/report/report_<name>.c
 * (the others are only report.c's list): the default one, which says the
 * gate's line on gemleak's stream (sinks.c); the one --suppressions-out
 * writes. */
extern const GlReporter gl_report_text;
extern const GlReporter gl_report_supp;
/* --write-baseline: {"fingerprint_version", "findings": [{"kind",
 * "fingerprint", "location" ("ext/x/x.c:12", relative to the project root),
 * "functions"}]}, in fingerprint order; no pid, count or absolute path, so
 * that two runs of the same leaks write the same bytes. */
extern const GlReporter gl_report_baseline;

/* Returns: (transfer none) (nullable): the reporter called @name. */
const GlReporter *gl_reporter_find(const char *name);

/* Returns: (transfer none): every reporter, NULL-terminated. */
const GlReporter *const *gl_reporters(void);

/* Returns: (transfer none): "text, json, ...": every reporter's name, in
 * the list's order, for --format's help and its errors. */
const char *gl_reporter_names(void);

/* Writes a whole report to @out: the groups of @context's findings to a
 * reporter with a group() (gl_findings_group(), made here once for every
 * format), else each finding; @out_name names it in errors.
 * Returns: FALSE with GL_ERROR_IO when writing failed. */
gboolean gl_report_write(const GlReporter *reporter, const GlReportContext *context, FILE *out,
                         const char *out_name, GError **error);

#endif
