/* The shape of gemleak's JSON report (--format json), which the report
 * writes (report_json.c) and gemleak reads back as an input (read/json_report.c):
 * what both sides of the format share lives here, below both, so that an
 * input never includes a report's header. */
#ifndef GEMLEAK_JSON_FORMAT_H
#define GEMLEAK_JSON_FORMAT_H

/* Raised when a change would mislead an older reader. */
#define GL_JSON_REPORT_VERSION 1

#endif
