/* gemleak's own JSON files, and the name of every member in them, spelled
 * here only: the report (--format json), which report/report_json.c
 * writes, read/json_report.c reads back (the shards of a CI matrix) and
 * judge/baseline.c reads as a baseline; the baseline (--write-baseline,
 * report/report_baseline.c), what identifies each finding of a report; the
 * report that says an --object matched nothing (cli/pipeline_targets.c);
 * and the durations file (run/durations.c). Below every stage that writes
 * or reads them, so that an input never includes a report's header.
 *
 * A member name is GL_MEMBER_ and the name in capitals, once whatever
 * object holds it. The Rake library reads some of them (GemLeak::JsonMembers
 * in rake/lib/gemleak.rb): each is spelled there as here without
 * GL_MEMBER_, and tests/rake/test_messages.rb fails when one is not. */
#ifndef GEMLEAK_JSON_FORMAT_H
#define GEMLEAK_JSON_FORMAT_H

/* Raised when a change would mislead an older reader. 2: growth findings
 * (--growth), which a reader of 1 would take for memory errors of an
 * unknown kind and fail the gate on. */
#define GL_JSON_REPORT_VERSION 2
/* What a report's and an error report's tool.name says. */
#define GL_JSON_TOOL_NAME "gemleak"

/* A report: { tool: { name, version }, report_version, fingerprint_version,
 * targets: [PATTERN...], findings: [FINDING...], groups: [GROUP...],
 * summary: SUMMARY, command: { status } (gemleak run's command), gate:
 * { failed, complete, message } }. A baseline: { fingerprint_version,
 * findings: [{ kind, fingerprint, structure_fingerprint, kind_fingerprints,
 * location: "FILE:LINE", functions: [NAME...] }...] }. */
#define GL_MEMBER_TOOL "tool"
#define GL_MEMBER_NAME "name"
#define GL_MEMBER_VERSION "version"
#define GL_MEMBER_REPORT_VERSION "report_version"
#define GL_MEMBER_FINGERPRINT_VERSION "fingerprint_version"
#define GL_MEMBER_TARGETS "targets"
#define GL_MEMBER_FINDINGS "findings"
#define GL_MEMBER_GROUPS "groups"
#define GL_MEMBER_SUMMARY "summary"
#define GL_MEMBER_COMMAND "command"
#define GL_MEMBER_STATUS "status"
#define GL_MEMBER_GATE "gate"
#define GL_MEMBER_FAILED "failed"
#define GL_MEMBER_COMPLETE "complete"
#define GL_MEMBER_MESSAGE "message"
#define GL_MEMBER_FUNCTIONS "functions"

/* FINDING: { kind, leak_kind, message, what, bytes, direct_bytes, blocks,
 * occurrences, pids, tests: [TEST...], found_again, allocated_in_tests,
 * lost_among: { tests (a count), first: TEST, last: TEST }, more_tests,
 * lost_before_tests, lost_at_exit, fingerprint, group, structure_fingerprint,
 * kind_fingerprints, certain, uncertainty, unnamed_frames, stack_cut,
 * unnamed_object, location: { fn, file, line, stack }, frames: [FRAME...],
 * stacks: [{ text, frames }...], accesses: [{ kind, message, frames }...],
 * suppression, growth: GROWTH }. TEST: { name, location }. A growth finding
 * (--growth) has kind "Growth", leak_kind "growth" and its test first in
 * tests; GROWTH: { repetitions, bytes: [CHANGE...], blocks: [CHANGE...],
 * median_bytes, held, lost }, the change each repetition made; absent
 * from every other finding. */
#define GL_MEMBER_KIND "kind"
#define GL_MEMBER_LEAK_KIND "leak_kind"
#define GL_MEMBER_WHAT "what"
#define GL_MEMBER_BYTES "bytes"
#define GL_MEMBER_DIRECT_BYTES "direct_bytes"
#define GL_MEMBER_BLOCKS "blocks"
#define GL_MEMBER_OCCURRENCES "occurrences"
#define GL_MEMBER_PIDS "pids"
#define GL_MEMBER_TESTS "tests"
#define GL_MEMBER_FOUND_AGAIN "found_again"
#define GL_MEMBER_ALLOCATED_IN_TESTS "allocated_in_tests"
#define GL_MEMBER_LOST_AMONG "lost_among"
#define GL_MEMBER_FIRST "first"
#define GL_MEMBER_LAST "last"
#define GL_MEMBER_MORE_TESTS "more_tests"
#define GL_MEMBER_LOST_BEFORE_TESTS "lost_before_tests"
#define GL_MEMBER_LOST_AT_EXIT "lost_at_exit"
#define GL_MEMBER_FINGERPRINT "fingerprint"
#define GL_MEMBER_GROUP "group"
#define GL_MEMBER_STRUCTURE_FINGERPRINT "structure_fingerprint"
#define GL_MEMBER_KIND_FINGERPRINTS "kind_fingerprints"
#define GL_MEMBER_CERTAIN "certain"
#define GL_MEMBER_UNCERTAINTY "uncertainty"
#define GL_MEMBER_UNNAMED_FRAMES "unnamed_frames"
#define GL_MEMBER_STACK_CUT "stack_cut"
#define GL_MEMBER_UNNAMED_OBJECT "unnamed_object"
#define GL_MEMBER_LOCATION "location"
#define GL_MEMBER_STACK "stack"
#define GL_MEMBER_FRAMES "frames"
#define GL_MEMBER_STACKS "stacks"
#define GL_MEMBER_TEXT "text"
#define GL_MEMBER_ACCESSES "accesses"
#define GL_MEMBER_SUPPRESSION "suppression"
#define GL_MEMBER_GROWTH "growth"
#define GL_MEMBER_REPETITIONS "repetitions"
#define GL_MEMBER_MEDIAN_BYTES "median_bytes"
#define GL_MEMBER_HELD "held"
#define GL_MEMBER_LOST "lost"
/* A growth finding's leak_kind, and a group's of growth findings. */
#define GL_JSON_LEAK_KIND_GROWTH "growth"

/* FRAME: { fn, obj, dir, file, path, line, ip, in_target, linked }. */
#define GL_MEMBER_FN "fn"
#define GL_MEMBER_OBJ "obj"
#define GL_MEMBER_DIR "dir"
#define GL_MEMBER_FILE "file"
#define GL_MEMBER_PATH "path"
#define GL_MEMBER_LINE "line"
#define GL_MEMBER_IP "ip"
#define GL_MEMBER_IN_TARGET "in_target"
#define GL_MEMBER_LINKED "linked"

/* GROUP: { id, kind, leak_kind, message, reason, function, entry, bytes,
 * direct_bytes, blocks, occurrences, certain, uncertainty, fingerprints, functions:
 * [NAME...], entries: [{ fn, file, line, call_paths, bytes, blocks }...],
 * owned: [{ fingerprint, bytes, blocks, location: { fn, file, line } }...] }. */
#define GL_MEMBER_ID "id"
#define GL_MEMBER_REASON "reason"
#define GL_MEMBER_FUNCTION "function"
#define GL_MEMBER_ENTRY "entry"
#define GL_MEMBER_FINGERPRINTS "fingerprints"
#define GL_MEMBER_ENTRIES "entries"
#define GL_MEMBER_CALL_PATHS "call_paths"
#define GL_MEMBER_OWNED "owned"

/* SUMMARY: { files, clean_processes, errors_seen, findings, groups, growth (counts:
 * growth the findings that are growth, among findings),
 * occurrences, uncertain, skipped, skipped_by_reason: { other_leak_kinds,
 * not_in_target, ruby_memory, in_init, unjudged_process,
 * repeated_by_later_check, inherited_from_parent }, baseline_known,
 * baseline_known_occurrences, truncated_files, incomplete_files,
 * unchecked_processes, free_at_exit_processes, recent_unkept_processes, problems }. */
#define GL_MEMBER_FILES "files"
#define GL_MEMBER_CLEAN_PROCESSES "clean_processes"
#define GL_MEMBER_ERRORS_SEEN "errors_seen"
#define GL_MEMBER_UNCERTAIN "uncertain"
#define GL_MEMBER_SKIPPED "skipped"
#define GL_MEMBER_SKIPPED_BY_REASON "skipped_by_reason"
#define GL_MEMBER_OTHER_LEAK_KINDS "other_leak_kinds"
#define GL_MEMBER_NOT_IN_TARGET "not_in_target"
#define GL_MEMBER_RUBY_MEMORY "ruby_memory"
#define GL_MEMBER_IN_INIT "in_init"
#define GL_MEMBER_UNJUDGED_PROCESS "unjudged_process"
#define GL_MEMBER_REPEATED_BY_LATER_CHECK "repeated_by_later_check"
#define GL_MEMBER_INHERITED_FROM_PARENT "inherited_from_parent"
#define GL_MEMBER_BASELINE_KNOWN "baseline_known"
#define GL_MEMBER_BASELINE_KNOWN_OCCURRENCES "baseline_known_occurrences"
#define GL_MEMBER_TRUNCATED_FILES "truncated_files"
#define GL_MEMBER_INCOMPLETE_FILES "incomplete_files"
#define GL_MEMBER_UNCHECKED_PROCESSES "unchecked_processes"
#define GL_MEMBER_FREE_AT_EXIT_PROCESSES "free_at_exit_processes"
#define GL_MEMBER_RECENT_UNKEPT_PROCESSES "recent_unkept_processes"
#define GL_MEMBER_PROBLEMS "problems"
/* summary.growth_measures, when --growth was asked: { repetitions,
 * tests_measured, tests_not_measured: ["NAME (LOCATION): WHY"...],
 * unfinished_processes } */
#define GL_MEMBER_GROWTH_MEASURES "growth_measures"
#define GL_MEMBER_TESTS_MEASURED "tests_measured"
#define GL_MEMBER_TESTS_NOT_MEASURED "tests_not_measured"
#define GL_MEMBER_UNFINISHED_PROCESSES "unfinished_processes"

/* An --object that matched nothing the run loaded, instead of a report:
 * { tool, error: { message, unmatched_object, loaded: [PATH...] } }. */
#define GL_MEMBER_ERROR "error"
#define GL_MEMBER_UNMATCHED_OBJECT "unmatched_object"
#define GL_MEMBER_LOADED "loaded"

/* The durations file: { format: "gemleak-durations", version, about,
 * files: { PATH: MILLISECONDS... } }. */
#define GL_MEMBER_FORMAT "format"
#define GL_MEMBER_ABOUT "about"

#endif
