/* The run directory's protocol: what gemleak and the Ruby helper it loads
 * into every traced Ruby (src/agent/helper/) say to each other through files
 * and variables. Spelled here only: the Makefile writes every GL_PROTO_
 * string below into the helper's Protocol module at build time (the part
 * src/agent/helper/protocol.rb), so that a change here reaches both sides,
 * and a Ruby name is the C name without GL_PROTO_.
 *
 * In TMPDIR, gemleak's own directories, each GL_PROTO_*_DIR followed by
 * six characters of g_dir_make_tmp():
 *   gemleak-run-XXXXXX/      a run: Valgrind's %p.xml, and what the helper
 *                            writes (below); gemleak-run.txt marks it
 *   gemleak-helper-XXXXXX/   the helper (and client library), alone
 * In a run directory, for process PID, appended by the helper:
 *   loaded-PID.txt           the extensions it loaded, one path a line
 *                            (gemleak's default targets)
 *   outside-PID.txt          what it ran outside Valgrind, one line each
 *   durations-PID.txt        "SECONDS<TAB>FILE" for each test file timed
 *   ruby-PID.txt             "VERSION[ free-at-exit]": the Ruby the process
 *                            ran, and whether it frees its own memory at exit
 *                            (Ruby 3.3 and later with RUBY_FREE_AT_EXIT set):
 *                            what is still allocated at exit was then nobody's
 *                            to keep, and rules 2 and 3 do not apply to it
 *   engine-PID.txt           the engine's runtime (GL_PROTO_RUNTIME_VARIABLE)
 *                            was mapped in the process: it ran under an
 *                            engine that writes nothing for a process
 *                            without leaks (LeakSanitizer)
 * and, written by gemleak, engine.txt: the engine the run used, its title
 * ("LeakSanitizer") and what the analysis needs to know of it,
 * interrupted.txt: the signal that interrupted the run ("SIGTERM"), after
 * which what the command had not run was not checked, and recorded.txt:
 * what the findings needed of the objects and the checkout, as they were.
 * In Valgrind's XML, client messages (<clientmsg>) that begin with
 * GL_PROTO_MARKER_PREFIX: "gemleak:setup", "gemleak:forked",
 * "gemleak:start<TAB>NAME<TAB>LOCATION", "gemleak:end<TAB>NAME<TAB>LOCATION",
 * "gemleak:tests<TAB>COUNT<TAB>FIRST-NAME<TAB>FIRST-LOCATION<TAB>LAST-NAME<TAB>LAST-LOCATION"
 * (a check after COUNT tests), "gemleak:again" (tests run again begin),
 * "gemleak:again<TAB>RUNS" (a check after RUNS runs again) and
 * "gemleak:again<TAB>1<TAB>NAME<TAB>LOCATION" (a check after one test ran
 * again alone): see gemleak/judge/attribute.h. Under LeakSanitizer the same
 * markers are lines of its report file (lsan.PID), with "gemleak:checked"
 * after each check and "gemleak:exit" at exit (see the reader,
 * gemleak/read/sanitizer_reader.h).
 * In the environment: GEMLEAK_ENGINE_COMMAND, the engine's command line (Valgrind's), its
 * arguments joined by GL_PROTO_ENGINE_COMMAND_SEPARATOR, for a process started
 * outside Valgrind (below a spared launcher) to start again under it; for
 * an engine preloaded into Ruby (LeakSanitizer), "env", "LD_PRELOAD=RUNTIME"
 * and GEMLEAK_ENGINE_RUNTIME the runtime's path: a Ruby that does not have
 * it mapped starts again with it, one that has takes it out of LD_PRELOAD
 * for what it starts (a compiler under LeakSanitizer crashes).
 * RUBY_FREE_AT_EXIT, when gemleak sets it, is GL_PROTO_FREE_AT_EXIT_VALUE:
 * the library gemleak preloads into every process of the run
 * (src/agent/quiet.c) hides Ruby 3.4's warning about it from the
 * suite's output, and only in a process where the variable has that value,
 * not where the suite set it itself. */
#ifndef GEMLEAK_PROTOCOL_H
#define GEMLEAK_PROTOCOL_H

/* gemleak's directories in TMPDIR. */
#define GL_PROTO_RUN_DIR "gemleak-run-"
#define GL_PROTO_HELPER_DIR "gemleak-helper-"
/* The file that says a directory is a gemleak run's. */
#define GL_PROTO_RUN_MARKER "gemleak-run.txt"

/* The helper's files in a run directory: PREFIX, the pid, SUFFIX. */
#define GL_PROTO_LOADED_PREFIX "loaded-"
#define GL_PROTO_OUTSIDE_PREFIX "outside-"
#define GL_PROTO_DURATIONS_PREFIX "durations-"
#define GL_PROTO_ENGINE_PREFIX "engine-"
#define GL_PROTO_RUBY_PREFIX "ruby-"
#define GL_PROTO_FILE_SUFFIX ".txt"
/* In the helper's directory: what the helper needs of a Ruby's
 * RbConfig::CONFIG, PREFIX, its executable's device and inode, SUFFIX
 * (written by the first process of that Ruby; ".PID" after it until it is
 * whole). */
#define GL_PROTO_RBCONFIG_PREFIX "rbconfig-"

/* In ruby-PID.txt, after the version: Ruby frees its memory at exit; it
 * keeps frame pointers; the allocation front could not keep the
 * extensions' blocks from recent addresses (src/agent/alloc_held.c). */
#define GL_PROTO_FREE_AT_EXIT "free-at-exit"
#define GL_PROTO_FRAME_POINTERS "frame-pointers"
#define GL_PROTO_RECENT_UNKEPT "recent-unkept"

/* The engine a run used: its title on the first line, then "KEY VALUE"
 * lines, the keys and what they hold described once, in
 * gemleak/read/run_dir.h (GL_ENGINE_FILE_KEYS), which both its writer and
 * its reader follow. A directory without one is Valgrind's (gemleak
 * before 0.2 wrote none for Valgrind, and only the title for the others). */
#define GL_PROTO_ENGINE_FILE "engine.txt"
/* The signal that interrupted a run, by its name. */
#define GL_PROTO_INTERRUPTED_FILE "interrupted.txt"
/* What gemleak run recorded of the objects and sources its findings
 * needed, for the directory to read the same anywhere and any time
 * (gemleak/read/run_record.h). */
#define GL_PROTO_RECORD_FILE "recorded.txt"

/* The markers the helper writes through Valgrind's client requests. */
#define GL_PROTO_MARKER_PREFIX "gemleak:"
#define GL_PROTO_MARKER_SETUP "setup"
#define GL_PROTO_MARKER_FORKED "forked"
/* Under a sanitizer's engine, right after "gemleak:forked" in a forked
 * child: "gemleak:parent<TAB>PPID". The child made no check at the fork;
 * gemleak run writes one in place of this line, of the blocks the child's
 * reports list lost that its parent's report lists lost too
 * (gemleak/read/sanitizer_inherited.h). */
#define GL_PROTO_MARKER_PARENT "parent"
#define GL_PROTO_MARKER_START "start"
#define GL_PROTO_MARKER_END "end"
#define GL_PROTO_MARKER_TESTS "tests"
#define GL_PROTO_MARKER_AGAIN "again"
/* Under LeakSanitizer (whose report file holds the markers, written with
 * __sanitizer_report_error_summary): "gemleak:checked" right after each
 * check the helper asked for, so that the report just before it is told
 * from the one the runtime writes at exit; "gemleak:exit" when the helper
 * is done at exit, after which the runtime's exit check follows (no report:
 * nothing leaked at exit). */
#define GL_PROTO_MARKER_CHECKED "checked"
#define GL_PROTO_MARKER_EXIT "exit"
/* --per-test under a sanitizer's engine: "gemleak:owned<TAB>NAME<TAB>LOCATION
 * <TAB>ADDRESS ADDRESS ...", written at exit before the runtime's leak check
 * by the client library (src/agent/owners.c): the blocks still
 * allocated that were allocated while that test ran (NAME and LOCATION
 * empty: before the first test), their addresses in hexadecimal. */
#define GL_PROTO_MARKER_OWNED "owned"
/* Where the allocation front (src/agent/alloc.c) puts the owner in the
 * block's own stack instead: the frame after the runtime's and the
 * front's first, a return address two bytes an owner into an array of
 * gemleak_alloc.so's, which "gemleak:owner-frames<TAB>OFFSET" (hexadecimal,
 * its offset in that library as the report's frames give offsets) says
 * before each check; and, at exit before the runtime's check, from the
 * client library, "gemleak:owner<TAB>INDEX<TAB>NAME<TAB>LOCATION" for each
 * test (INDEX decimal, from 1): the frame at OFFSET + 2 * INDEX (or one
 * more) says the block was allocated while that test ran. */
#define GL_PROTO_MARKER_OWNER "owner"
#define GL_PROTO_MARKER_OWNER_FRAMES "owner-frames"
/* How many owners the array has room for: the owners from this one on,
 * few suites have them, are kept in the front's table instead. */
#define GL_PROTO_OWNER_FRAMES_MAX 131072
/* "gemleak:origin<TAB>NAME<TAB>LOCATION": written by the helper first thing
 * in a process a test started (GL_PROTO_ORIGIN_VARIABLE): what the process
 * allocated outside a test of its own is that test's, as if an "owned"
 * line listed every such block (none is recorded: nothing to pay per
 * allocation). */
#define GL_PROTO_MARKER_ORIGIN "origin"
/* "gemleak:done": the process's leak check at exit ran to its end, its
 * report (if it leaked) just before. Written by the library gemleak
 * preloads (src/agent/proof.c) under a sanitizer's engine, which turns
 * the runtime's own check at exit off, and by the helper before exit!. A
 * process that loaded a target without it was not checked. */
#define GL_PROTO_MARKER_DONE "done"
/* "gemleak:exec": the process checked what it had leaked before it exec'd
 * another program (the helper, in Kernel#exec): its report or XML so far,
 * renamed to PID.N.xml or NAME.PID.N (N from 1) so that the new image's
 * does not write over it, ends there, whole. */
#define GL_PROTO_MARKER_EXEC "exec"
/* "gemleak:live": the report that follows is of a check the helper makes
 * while Ruby still runs (before exit! or exec), when Ruby has freed none
 * of its memory. */
#define GL_PROTO_MARKER_LIVE "live"

/* The exact pass (gemleak/run/exact.h): a second run of a suite whose
 * fast pass found leaks it could not judge, or with stacks cut short,
 * with gemleak_alloc.so unwinding exactly at their sites. GEMLEAK_EXACT
 * names the file of sites it takes exact stacks at: "gemleak:sites<TAB>
 * DEPTH" (program counters to keep after the allocator's), then
 * "SIZE<TAB>OFFSET<TAB>MODULE" a line: an allocation of SIZE bytes by the
 * call at OFFSET (hexadecimal, as the runtime prints a frame's offset) in
 * MODULE (a path, as the runtime names it), or "...<TAB>via": below an
 * extension's call at OFFSET of one of Ruby's allocation functions.
 * In the process's report, before each
 * leak check: "gemleak:frame<TAB>K" and the frames symbolized at one
 * program counter in gemleak's frame format (numbered from 0: inlined
 * ones share it), "gemleak:stack<TAB>N<TAB>K K ..." (a stack by its
 * program counters' frames; both once a process), "gemleak:stacks" (a new
 * table of blocks) and "gemleak:at<TAB>N<TAB>ADDRESS ADDRESS ..."
 * (hexadecimal): the blocks still allocated that were allocated there. */
#define GL_PROTO_EXACT_VARIABLE "GEMLEAK_EXACT"
/* The exact pass runs only the tests that allocated what the fast pass
 * found lost, when it can tell (GEMLEAK_EXACT_TESTS names a file of them,
 * "NAME<TAB>LOCATION" a line as "gemleak:owned" lines give them; "<TAB>FILE"
 * stands for every test of FILE): the helper skips the others. The fast
 * pass records owners for it (GEMLEAK_PER_TEST=GL_PROTO_PER_TEST_OWNERS:
 * the owners alone, no marker a test), which gemleak takes out of the
 * reports when --per-test was not asked for. */
#define GL_PROTO_EXACT_TESTS_VARIABLE "GEMLEAK_EXACT_TESTS"
/* Under an engine that unwinds by frame pointers, the library gemleak
 * preloads before the runtime into every Ruby (gemleak_alloc.so,
 * src/agent/alloc.c; GEMLEAK_ALLOC_LIBRARY is its path, which the
 * helper takes out of LD_PRELOAD with the runtime's) gives the runtime the
 * stacks GEMLEAK_ALLOC_MODE says: "call" on a Ruby without frame pointers
 * (the allocating call, and an extension's call of one of Ruby's
 * allocation functions on the way: the function, a frame of the library's
 * gemleak_via, the extension's call), "frames" on one that keeps them (the
 * frames as they are). GEMLEAK_ALLOC_APIS names the file of those
 * functions, a glob a line (from src/judge/rules.c). Before each check it
 * writes "gemleak:unwound<TAB>MODE", then the blocks it could not give a
 * stack the check can judge (allocated on a stack other than the thread's,
 * where it has no scratch stack): "gemleak:hidden" begins the list,
 * "gemleak:hidden<TAB>SIZE<TAB>ADDRESS" (hexadecimal) a block still
 * allocated. gemleak judges those by a run with exact stacks, or the run
 * is INCOMPLETE. */
#define GL_PROTO_ALLOC_LIBRARY_VARIABLE "GEMLEAK_ALLOC_LIBRARY"
#define GL_PROTO_ALLOC_MODE_VARIABLE "GEMLEAK_ALLOC_MODE"
#define GL_PROTO_ALLOC_APIS_VARIABLE "GEMLEAK_ALLOC_APIS"
#define GL_PROTO_MARKER_UNWOUND "unwound"
#define GL_PROTO_UNWOUND_CALL "call"
#define GL_PROTO_UNWOUND_FRAMES "frames"
#define GL_PROTO_VIA_FUNCTION "gemleak_via"
/* The frame the exact pass writes into a record it gave a stack, right
 * after the allocator's (in a library of gemleak's: the reader takes it
 * out): the stack is whole as written. */
#define GL_PROTO_EXACT_FUNCTION "gemleak_exact"
/* The function every process's library calls before a check, and the
 * helper before the checks it makes. */
#define GL_PROTO_BEFORE_CHECK_FUNCTION "gemleak_alloc_before_check"
/* The function called with 1 right before each check and with 0 right
 * after it (int on): what the allocation front must keep from the check's
 * scan meanwhile. */
#define GL_PROTO_CHECKING_FUNCTION "gemleak_alloc_checking"
/* What the names of the libraries gemleak preloads begin with
 * (gemleak_preload.so, gemleak_client.so, gemleak_alloc.so): a frame of
 * theirs in an allocation's stack (their allocation functions, before the
 * runtime's) is not the allocating call's. */
#define GL_PROTO_LIBRARY_PREFIX "gemleak_"
/* What the client library's bytes say of it: "...=1" when it makes
 * Valgrind's client requests (built with Valgrind's headers). */
#define GL_PROTO_CLIENT_REQUESTS_MARK "gemleak-client-requests="
#define GL_PROTO_MARKER_HIDDEN "hidden"
#define GL_PROTO_PER_TEST_OWNERS "owners"
#define GL_PROTO_MARKER_SITES "sites"
#define GL_PROTO_MARKER_STACKS "stacks"
#define GL_PROTO_MARKER_STACK "stack"
#define GL_PROTO_MARKER_AT "at"
#define GL_PROTO_MARKER_FRAME "frame"

/* --growth[=K] (gemleak run): memory that only grows. GEMLEAK_GROWTH is K,
 * the repetitions (GL_PROTO_GROWTH_MIN to GL_PROTO_GROWTH_MAX). The helper
 * hooks the test frameworks as --per-test does and keeps each test that can
 * run again; after the suite's own run (the warm-up), in the process that
 * ran the tests, before its check at exit, "gemleak:growth" begins the
 * repetitions, and for each test: a collection (a full GC, the stack below
 * scrubbed), "gemleak:growth<TAB>0<TAB>NAME<TAB>LOCATION" and a measure,
 * then K times: the test again, a collection,
 * "gemleak:growth<TAB>REP<TAB>NAME<TAB>LOCATION" (REP from 1) and a measure.
 * A test that cannot run again, or that ended its runs (exit!, a fork that
 * returned in the child) is "gemleak:growth<TAB>unmeasured<TAB>NAME<TAB>
 * LOCATION<TAB>WHY"; the last marker, "gemleak:growth<TAB>measured<TAB>N",
 * says how many tests were measured. A measure under Valgrind is a leak
 * check that reports every loss record that changed since the last
 * (VALGRIND_DO_CHANGED_LEAK_CHECK, every leak kind shown): "N (+D) bytes in
 * M (+E) blocks", D and E the change. Under a sanitizer's engine the client
 * library (src/agent/growth.c) counts what is live per site of a target:
 * every call a target makes through its GOT to an allocation function
 * (the C library's, C++'s, Ruby's xmalloc family, and those rule 2 names
 * its caller's, GL_PROTO_ALLOC_APIS_VARIABLE's list), and what is allocated
 * below it; it writes after the marker, for each site whose live memory
 * changed since the last measure, first once a process the site's stack
 * ("gemleak:site<TAB>SITE" then its frames, #0 the function called, #1 the
 * target's call: in gemleak's frame format, GL_SANITIZER_FRAME_FORMAT,
 * symbolized by the runtime as a leak's would be, or as the runtime writes
 * a frame it cannot name, "    #N 0xPC (MODULE+0xOFFSET)"), then "gemleak:grew<TAB>SITE<TAB>LIVE-BYTES<TAB>CHANGE-BYTES<TAB>
 * LIVE-BLOCKS<TAB>CHANGE-BLOCKS" (decimal, changes signed). */
#define GL_PROTO_GROWTH_VARIABLE "GEMLEAK_GROWTH"
#define GL_PROTO_GROWTH_DEFAULT 3
#define GL_PROTO_GROWTH_MIN 2
#define GL_PROTO_GROWTH_MAX 20
#define GL_PROTO_MARKER_GROWTH "growth"
#define GL_PROTO_GROWTH_UNMEASURED "unmeasured"
#define GL_PROTO_GROWTH_MEASURED "measured"
#define GL_PROTO_MARKER_SITE "site"
#define GL_PROTO_MARKER_GREW "grew"

/* Valgrind's command line for the processes outside it. */
/* The variables gemleak sets in every process of a run, for the helper:
 * that a run is on; its directory; gemleak's own pid (the watchdog's and
 * the helper's "who started the run"); the client library's path
 * (--per-test); whether to time the test files; --per-test's grain and
 * the leak kinds asked for; the helper's debugging output. */
#define GL_PROTO_RUNNING_VARIABLE "GEMLEAK_RUNNING"
#define GL_PROTO_RUN_DIR_VARIABLE "GEMLEAK_RUN_DIR"
#define GL_PROTO_PID_VARIABLE "GEMLEAK_PID"
#define GL_PROTO_CLIENT_VARIABLE "GEMLEAK_CLIENT"
#define GL_PROTO_DURATIONS_VARIABLE "GEMLEAK_DURATIONS"
#define GL_PROTO_PER_TEST_VARIABLE "GEMLEAK_PER_TEST"
#define GL_PROTO_LEAK_KINDS_VARIABLE "GEMLEAK_LEAK_KINDS"
#define GL_PROTO_DEBUG_VARIABLE "GEMLEAK_DEBUG"
#define GL_PROTO_ENGINE_COMMAND_VARIABLE "GEMLEAK_ENGINE_COMMAND"
#define GL_PROTO_ENGINE_COMMAND_SEPARATOR "\x1f"
/* The run's own variables, which the library gemleak preloads gives back
 * to a program a process of the run execs with an environment of its own
 * (src/agent/restore.c): "HOWNAME=VALUE" items joined by
 * GL_PROTO_RESTORE_SEPARATOR (GEMLEAK_ENGINE_COMMAND's value holds the other),
 * HOW one of the characters below. */
#define GL_PROTO_RESTORE_VARIABLE "GEMLEAK_RESTORE"
#define GL_PROTO_RESTORE_SEPARATOR "\x1e"
/* set when the program's environment lacks it (as text for the helper) */
#define GL_PROTO_RESTORE_SET_TEXT "="
#define GL_PROTO_RESTORE_SET (GL_PROTO_RESTORE_SET_TEXT[0])
#define GL_PROTO_RESTORE_FRONT '<'  /* put in front, after a space, when its value lacks it */
#define GL_PROTO_RESTORE_BACK '>'   /* put after its value and a ':', when it lacks it */
#define GL_PROTO_RESTORE_REPLACE '!' /* set, in place of the program's own value: never in
                                      * GEMLEAK_RESTORE, only the origin below */
/* The test a process was started in (under a sanitizer's engine, where
 * the client library records which test allocates each block):
 * "NAME<TAB>LOCATION" as the helper escaped them, given by the library
 * gemleak preloads (src/agent/restore.c) to each program a process execs
 * while one of its tests runs, and passed on by a program that runs no
 * test of its own. The helper takes it out of the environment Ruby shows
 * the suite; what such a Ruby allocates is that test's (Owners): the
 * exact pass runs that test again, which starts the process again. */
#define GL_PROTO_ORIGIN_VARIABLE "GEMLEAK_ORIGIN"
/* Under an engine preloaded into Ruby (the sanitizers'; Valgrind follows
 * every exec itself), the path of gemleak's guard (src/agent/guard.c),
 * one of the run's variables: the preloaded library execs a static
 * program (which LD_PRELOAD does not reach) through it, and it follows
 * what the program execs, giving it the run's variables back. Empty when
 * this gemleak has no guard: such a program is then said in the run
 * directory (outside-PID.txt) as one that ran unfollowed. */
#define GL_PROTO_GUARD_VARIABLE "GEMLEAK_GUARD"
/* Set (to "1") when the preloaded library is to make the leak check at
 * exit and say it ran (GL_PROTO_MARKER_DONE), the runtime's own off. */
#define GL_PROTO_PROOF_VARIABLE "GEMLEAK_PROOF"

/* The preloaded runtime of the engine (LeakSanitizer's), by its path. */
#define GL_PROTO_RUNTIME_VARIABLE "GEMLEAK_ENGINE_RUNTIME"

/* RUBY_FREE_AT_EXIT as gemleak sets it: Ruby only asks whether it is set;
 * a value no suite would give tells gemleak's from the suite's own, and
 * its leading 1 reads as "on" to whatever reads it as a number. */
#define GL_PROTO_FREE_AT_EXIT_VALUE "1-gemleak"

/* Launchers, by the name of the program, separated by spaces: they only
 * start the processes that run a suite (Bundler, Rake). */
#define GL_PROTO_LAUNCHERS "bundle bundler rake"
/* Build steps, by the name of the script Ruby runs, separated by spaces:
 * they run outside the engine, as Valgrind's --trace-children-skip keeps
 * a compiler out (the helper's launch.rb). */
#define GL_PROTO_BUILD_STEPS "extconf.rb"

/* Ruby's own, which is never the project's, as gemleak and the helper
 * tell it alike (blank-separated):
 * - Ruby's executable and shared library, by the names distributions give
 *   them (globs on a file's base name: ruby, ruby3.1, ruby-3.4.5,
 *   libruby.so.3.3.0, libruby-3.1.so.3.1.2): gemleak plans a bare ruby by
 *   them (base/programs.c), and the rules take a frame in them, or in the
 *   process's own executable (a Ruby whatever its name), for Ruby's
 *   (judge/classify.c);
 * - the directories that hold Ruby's own libraries and extensions (etc.so,
 *   monitor.so, the encodings) and those installed beside it, by their
 *   names in RbConfig::CONFIG: the helper takes no extension loaded from
 *   them, nor from where gems are installed (Gem.path), for one of the
 *   project's, which are gemleak's default targets (extensions.rb). */
#define GL_PROTO_RUBY_PROGRAMS "ruby ruby[0-9]* ruby-[0-9]* libruby.so* libruby-*.so* libruby[0-9]*.so*"
#define GL_PROTO_RUBY_DIRS "rubylibprefix rubyarchdir rubylibdir archdir vendordir vendorarchdir vendorlibdir sitedir sitearchdir sitelibdir"

/* Ruby's long options that take a value, "--NAME=VALUE" or "--NAME VALUE"
 * with the next word (ruby.c's is_option_with_arg), blank-separated: how
 * gemleak and the helper read a Ruby command line alike. */
#define GL_PROTO_RUBY_LONG_WITH_VALUE "enable disable encoding external-encoding internal-encoding dump backtrace-limit parser crash-report"
/* A directory that holds a build of the project's extensions made for
 * the engine (the Rake library's AddressSanitizer build, as `require`
 * names each: "scanner/scanner.so"): the helper loads it in place of the
 * project's own build, however the suite requires that (require,
 * require_relative, a path built from __dir__). Set by whoever built it;
 * given back to a program started with an environment of its own. */
#define GL_PROTO_INSTRUMENTED_VARIABLE "GEMLEAK_INSTRUMENTED"
/* What an extension is compiled with for the AddressSanitizer engine
 * (engine_asan.c; the Rake library's AsanBuild, which a test holds to
 * these). -fsanitize-recover=address lets the suite go on after an
 * error, so that one run reports every error. */
#define GL_PROTO_ASAN_CFLAGS "-fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer"
#define GL_PROTO_ASAN_LDFLAGS "-fsanitize=address"

#endif
