# frozen_string_literal: true

# gemleak's helper, loaded into every Ruby process that `gemleak run` starts
# (RUBYOPT says -r/its/absolute/path, so processes that rake or the tests
# spawn load it too, whatever their RUBYLIB).
#
# It writes the native extensions the process loads to loaded-<pid>.txt in
# the run directory, as they load (a process that crashes or is killed
# never reaches at_exit) and again at exit: they are gemleak's default
# targets. At exit it also lets go of what a test suite keeps for nothing,
# so that Valgrind sees less. Nothing here may fail the suite under test.
#
# It is one file when it runs (RUBYOPT's -r loads one file, and gemleak
# carries it compiled in). Its source is in parts, one concern each, which
# the build joins in the order HELPER_PARTS in the Makefile lists them into
# build/helper/gemleak_helper_body.rb; each part reopens the modules it adds
# to, nested, so that it finds the others' constants as the joined file
# does. The parts HELPER_LATER lists stay files of their own, which a
# process loads only when it needs them (GemLeakHelper.later, core.rb):
#   protocol.rb            this; what gemleak and the helper say to each other
#   core.rb                what the helper takes when it loads; the engine's runtime
#   extensions.rb          the extensions a process loads, recorded; require and fork
#   instrumented.rb        the engine's build of the extensions, loaded in place of the project's
#   durations.rb           how long each test file took (--jobs)
#   owners.rb              which test allocated each block, under a sanitizer
#   per_test.rb            --per-test: markers around the tests, checks between them
#     checks.rb              (later) the checks a process makes while it runs (a sanitizer's
#                            runtime's too), and the tests they follow
#     per_test_again.rb      (later) --per-test: tests run again, to find the one that lost
#     per_test_frameworks.rb (later) minitest, test-unit and RSpec hooked, once one loads
#   growth.rb              --growth: whether it is on
#     growth_run.rb          (later) each test run again after the suite, measured
#   exit_exec.rb           exit! and exec: the check the process would not make
#   launch.rb              a Ruby started outside the engine, or under it
#     launch_outside.rb      (later) a launcher's Ruby processes put under the engine
#   start.rb               what runs as the helper loads, and at exit
module GemLeakHelper
  # The run directory's protocol: the files, markers and variables gemleak
  # reads. The build writes the lines between BEGIN and END from
  # include/gemleak/base/protocol.h (GL_PROTO_NAME is NAME here): change
  # them there. These copies are what the build writes (make
  # helper-protocol), so that this file reads as the helper runs: make
  # check-helper fails while they differ.
  module Protocol
    # BEGIN protocol.h
    RUN_DIR = "gemleak-run-"
    HELPER_DIR = "gemleak-helper-"
    RUN_MARKER = "gemleak-run.txt"
    LOADED_PREFIX = "loaded-"
    OUTSIDE_PREFIX = "outside-"
    DURATIONS_PREFIX = "durations-"
    ENGINE_PREFIX = "engine-"
    RUBY_PREFIX = "ruby-"
    FILE_SUFFIX = ".txt"
    RBCONFIG_PREFIX = "rbconfig-"
    FREE_AT_EXIT = "free-at-exit"
    FRAME_POINTERS = "frame-pointers"
    RECENT_UNKEPT = "recent-unkept"
    ENGINE_FILE = "engine.txt"
    INTERRUPTED_FILE = "interrupted.txt"
    RECORD_FILE = "recorded.txt"
    MARKER_PREFIX = "gemleak:"
    MARKER_SETUP = "setup"
    MARKER_FORKED = "forked"
    MARKER_PARENT = "parent"
    MARKER_START = "start"
    MARKER_END = "end"
    MARKER_TESTS = "tests"
    MARKER_AGAIN = "again"
    MARKER_CHECKED = "checked"
    MARKER_EXIT = "exit"
    MARKER_OWNED = "owned"
    MARKER_OWNER = "owner"
    MARKER_OWNER_FRAMES = "owner-frames"
    OWNER_FRAMES_MAX = 131072
    MARKER_ORIGIN = "origin"
    MARKER_DONE = "done"
    MARKER_EXEC = "exec"
    MARKER_LIVE = "live"
    EXACT_VARIABLE = "GEMLEAK_EXACT"
    EXACT_TESTS_VARIABLE = "GEMLEAK_EXACT_TESTS"
    ALLOC_LIBRARY_VARIABLE = "GEMLEAK_ALLOC_LIBRARY"
    ALLOC_MODE_VARIABLE = "GEMLEAK_ALLOC_MODE"
    ALLOC_APIS_VARIABLE = "GEMLEAK_ALLOC_APIS"
    MARKER_UNWOUND = "unwound"
    UNWOUND_CALL = "call"
    UNWOUND_FRAMES = "frames"
    VIA_FUNCTION = "gemleak_via"
    EXACT_FUNCTION = "gemleak_exact"
    BEFORE_CHECK_FUNCTION = "gemleak_alloc_before_check"
    CHECKING_FUNCTION = "gemleak_alloc_checking"
    LIBRARY_PREFIX = "gemleak_"
    CLIENT_REQUESTS_MARK = "gemleak-client-requests="
    MARKER_HIDDEN = "hidden"
    PER_TEST_OWNERS = "owners"
    MARKER_SITES = "sites"
    MARKER_STACKS = "stacks"
    MARKER_STACK = "stack"
    MARKER_AT = "at"
    MARKER_FRAME = "frame"
    GROWTH_VARIABLE = "GEMLEAK_GROWTH"
    GROWTH_DEFAULT = 3
    GROWTH_MIN = 2
    GROWTH_MAX = 20
    MARKER_GROWTH = "growth"
    GROWTH_UNMEASURED = "unmeasured"
    GROWTH_MEASURED = "measured"
    MARKER_SITE = "site"
    MARKER_GREW = "grew"
    RUNNING_VARIABLE = "GEMLEAK_RUNNING"
    RUN_DIR_VARIABLE = "GEMLEAK_RUN_DIR"
    PID_VARIABLE = "GEMLEAK_PID"
    CLIENT_VARIABLE = "GEMLEAK_CLIENT"
    DURATIONS_VARIABLE = "GEMLEAK_DURATIONS"
    PER_TEST_VARIABLE = "GEMLEAK_PER_TEST"
    LEAK_KINDS_VARIABLE = "GEMLEAK_LEAK_KINDS"
    DEBUG_VARIABLE = "GEMLEAK_DEBUG"
    ENGINE_COMMAND_VARIABLE = "GEMLEAK_ENGINE_COMMAND"
    ENGINE_COMMAND_SEPARATOR = "\x1f"
    RESTORE_VARIABLE = "GEMLEAK_RESTORE"
    RESTORE_SEPARATOR = "\x1e"
    RESTORE_SET_TEXT = "="
    ORIGIN_VARIABLE = "GEMLEAK_ORIGIN"
    GUARD_VARIABLE = "GEMLEAK_GUARD"
    PROOF_VARIABLE = "GEMLEAK_PROOF"
    RUNTIME_VARIABLE = "GEMLEAK_ENGINE_RUNTIME"
    FREE_AT_EXIT_VALUE = "1-gemleak"
    LAUNCHERS = "bundle bundler rake"
    BUILD_STEPS = "extconf.rb"
    RUBY_PROGRAMS = "ruby ruby[0-9]* ruby-[0-9]* libruby.so* libruby-*.so* libruby[0-9]*.so*"
    RUBY_DIRS = "rubylibprefix rubyarchdir rubylibdir archdir vendordir vendorarchdir vendorlibdir sitedir sitearchdir sitelibdir"
    RUBY_LONG_WITH_VALUE = "enable disable encoding external-encoding internal-encoding dump backtrace-limit parser crash-report"
    INSTRUMENTED_VARIABLE = "GEMLEAK_INSTRUMENTED"
    ASAN_CFLAGS = "-fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer"
    ASAN_LDFLAGS = "-fsanitize=address"
    # END protocol.h
  end
end
