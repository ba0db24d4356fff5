# frozen_string_literal: true

require "rbconfig" # RubyGems loads it, but ruby --disable-gems does not

# gemleak's helper, loaded into every Ruby process that `gemleak run` starts
# (RUBYOPT says -r/its/absolute/path, so processes that rake or the tests
# spawn load it too, whatever their RUBYLIB).
#
# It writes the native extensions the process loads to loaded-<pid>.txt in
# the run directory, as they load (a process that crashes or is killed
# never reaches at_exit) and again at exit: they are gemleak's default
# targets. At exit it also lets go of what a test suite keeps for nothing,
# so that Valgrind sees less. Nothing here may fail the suite under test.
module GemLeakHelper
  # The run directory's protocol: the files, markers and variables gemleak
  # reads. The build writes the lines between BEGIN and END from
  # include/gemleak/base/protocol.h (GL_PROTO_NAME is NAME here): change
  # them there. These copies let the helper run from its source too.
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
    FREE_AT_EXIT = "free-at-exit"
    ENGINE_FILE = "engine.txt"
    ENGINE_NAME = "name"
    ENGINE_VERSION = "version"
    ENGINE_MIN_RUBY = "min-ruby"
    ENGINE_MIN_RUBY_WHY = "min-ruby-why"
    ENGINE_LEAKS_MIN_RUBY = "leaks-min-ruby"
    ENGINE_LEAKS_MIN_RUBY_WHY = "leaks-min-ruby-why"
    ENGINE_PROOF = "proof"
    ENGINE_SILENT = "silent-when-clean"
    ENGINE_REPORTS = "reports"
    ENGINE_LOG = "log"
    ENGINE_INSTRUMENTED = "instrumented"
    ENGINE_OUTSIDE = "outside"
    INTERRUPTED_FILE = "interrupted.txt"
    MARKER_PREFIX = "gemleak:"
    MARKER_SETUP = "setup"
    MARKER_FORKED = "forked"
    MARKER_START = "start"
    MARKER_END = "end"
    MARKER_TESTS = "tests"
    MARKER_AGAIN = "again"
    MARKER_CHECKED = "checked"
    MARKER_EXIT = "exit"
    MARKER_OWNED = "owned"
    MARKER_DONE = "done"
    MARKER_EXEC = "exec"
    MARKER_LIVE = "live"
    EXACT_VARIABLE = "GEMLEAK_EXACT"
    EXACT_TESTS_VARIABLE = "GEMLEAK_EXACT_TESTS"
    HIDDEN_VARIABLE = "GEMLEAK_HIDDEN"
    LIBRARY_PREFIX = "gemleak_"
    MARKER_HIDDEN = "hidden"
    PER_TEST_OWNERS = "owners"
    EXACT_LIBRARY_VARIABLE = "GEMLEAK_EXACT_LIBRARY"
    MARKER_SITES = "sites"
    MARKER_STACKS = "stacks"
    MARKER_STACK = "stack"
    MARKER_AT = "at"
    MARKER_FRAME = "frame"
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
    PROOF_VARIABLE = "GEMLEAK_PROOF"
    RUNTIME_VARIABLE = "GEMLEAK_ENGINE_RUNTIME"
    FREE_AT_EXIT_VALUE = "1-gemleak"
    LAUNCHERS = "bundle bundler rake"
    RUBY_LONG_WITH_VALUE = "enable disable encoding external-encoding internal-encoding dump backtrace-limit parser crash-report"
    ASAN_CFLAGS = "-fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer"
    ASAN_LDFLAGS = "-fsanitize=address"
    # END protocol.h
  end

  # What the helper needs, taken when it loads, before any of the suite
  # runs. Suites redefine Integer#to_s, define a top-level `format` or
  # `warn` (which every object, this module too, then calls instead of
  # Kernel's), clear or replace ENV, swap File for a fake (FakeFS), stub
  # File.open (rspec-mocks) or mock the clock (Timecop): the helper reads
  # its variables once, calls bound methods of the core classes, writes
  # through IO objects on descriptors it opened itself, and says on
  # standard error (its own IO on descriptor 2) what it could not record.
  module Core
    RUN_DIR = ENV[Protocol::RUN_DIR_VARIABLE]&.dup&.freeze
    DEBUG = !ENV[Protocol::DEBUG_VARIABLE].to_s.empty?
    # The library gemleak preloads makes the engine's leak check at exit and
    # says it ran ("gemleak:done"): what ends without exit says it here.
    PROOF = !ENV[Protocol::PROOF_VARIABLE].to_s.empty?
    PID = Process.method(:pid)
    CLOCK = Process.method(:clock_gettime)
    MONOTONIC = Process::CLOCK_MONOTONIC
    INTEGER_TO_S = Integer.instance_method(:to_s)
    SYSOPEN = IO.method(:sysopen)
    IO_NEW = IO.method(:new)
    SYSWRITE = IO.instance_method(:syswrite)
    CLOSE = IO.instance_method(:close)
    REALPATH = File.method(:realpath)
    FILE_P = File.method(:file?)
    ABSOLUTE_P = File.method(:absolute_path?)
    EXPAND = File.method(:expand_path)
    APPEND = File::WRONLY | File::APPEND | File::CREAT | (defined?(File::CLOEXEC) ? File::CLOEXEC : 0)

    class << self
      def pid
        PID.call
      end

      # Integer#to_s as Ruby defines it, whatever the suite made of it.
      def digits(number)
        INTEGER_TO_S.bind(number).call
      end

      # Returns: "/run/dir/PREFIXPID.txt" for this process.
      def run_file(prefix)
        "#{RUN_DIR}/#{prefix}#{digits(pid)}#{Protocol::FILE_SUFFIX}"
      end

      # Appends TEXT to PATH, made when missing.
      def append(path, text)
        io = IO_NEW.call(SYSOPEN.call(path, APPEND, 0o600), "w")
        begin
          SYSWRITE.bind(io).call(text) unless text.empty?
        ensure
          CLOSE.bind(io).call
        end
      end

      # One line on standard error, "gemleak: TEXT".
      def say(text)
        err = IO_NEW.call(2, "w", autoclose: false)
        SYSWRITE.bind(err).call("gemleak: #{one_line(text)}\n")
      rescue StandardError
        nil # no standard error left to say it on
      end

      CONTROL_ESCAPES = { "\n" => "\\n", "\r" => "\\r", "\t" => "\\t" }.freeze

      # TEXT as gemleak's own messages show what came from outside (a path,
      # an error's message): control characters escaped as gemleak escapes
      # them (\n, \x1b, \u009b), so that none reaches the terminal raw or
      # forges a line. Integer#to_s by its bound method: suites redefine it.
      def one_line(text)
        valid = text.to_s.dup.force_encoding(Encoding::UTF_8).scrub("\uFFFD")
        valid.gsub(/[\x00-\x1f\x7f\u0080-\u009f]/) do |c|
          code = c.ord
          CONTROL_ESCAPES[c] ||
            (code < 0x80 ? "\\x#{INTEGER_TO_S.bind(code).call(16).rjust(2, "0")}"
                         : "\\u#{INTEGER_TO_S.bind(code).call(16).rjust(4, "0")}")
        end
      end

      # An error that costs nothing a verdict depends on.
      def debug(error)
        say("helper: #{error.class}: #{error.message}") if DEBUG
      end

      def monotonic
        CLOCK.call(MONOTONIC)
      end
    end
  end

  # The engine's runtime preloaded into Ruby (LeakSanitizer's liblsan), when
  # the run uses one: GEMLEAK_ENGINE_RUNTIME names it.
  module Runtime
    PATH = ENV[Protocol::RUNTIME_VARIABLE].to_s.dup.freeze
    REAL = begin
      PATH.empty? ? "" : File.realpath(PATH).freeze
    rescue SystemCallError
      PATH
    end
    MAPPED = !REAL.empty? && begin
      File.foreach("/proc/self/maps").any? { |line| line.include?(REAL) }
    rescue SystemCallError
      false
    end

    class << self
      def mapped?
        MAPPED
      end

      # The runtime stays in this process and leaves LD_PRELOAD, for what
      # it starts: a compiler or an assembler under LeakSanitizer leaks or
      # crashes. A Ruby it starts starts again with it (GemLeakLaunch). So
      # do the libraries preloaded before it: the client library (per test,
      # under LeakSanitizer) and the exact pass's.
      def keep_to_self
        preload = ENV["LD_PRELOAD"].to_s.split(/[: ]/).reject(&:empty?)
        ours = [ENV[Protocol::CLIENT_VARIABLE].to_s, ENV[Protocol::EXACT_LIBRARY_VARIABLE].to_s].reject(&:empty?)
        kept = preload.reject { |lib| lib == PATH || lib == REAL || ours.include?(lib) }
        return if kept.size == preload.size

        kept.empty? ? ENV.delete("LD_PRELOAD") : ENV["LD_PRELOAD"] = kept.join(":")
      end
    end
  end

  # Ruby 3.3 and later free their memory at exit when RUBY_FREE_AT_EXIT is
  # set, to anything (ruby.c asks getenv, before any option), as it was
  # when this process started: the helper loads before the suite's code.
  FREES_AT_EXIT = (RUBY_VERSION.split(".").map(&:to_i) <=> [3, 3]) >= 0 &&
                 !ENV["RUBY_FREE_AT_EXIT"].nil?

  @pid = Core.pid
  @recorded = {}
  @features_seen = 0
  @failed = false

  class << self
    # Ruby's own extensions (etc.so, monitor.so, enc/*.so, ...) and installed
    # gems are not the project's code.
    def foreign_dirs
      @foreign_dirs ||= begin
        dirs = RbConfig::CONFIG.values_at(
          "rubylibprefix", "rubyarchdir", "rubylibdir", "archdir",
          "vendordir", "vendorarchdir", "vendorlibdir",
          "sitedir", "sitearchdir", "sitelibdir"
        )
        dirs.concat(Gem.path) if defined?(Gem) && Gem.respond_to?(:path)
        dirs.compact.reject(&:empty?).map { |dir| real(dir) + "/" }.uniq
      end
    end

    def real(path)
      Core::REALPATH.call(path)
    rescue SystemCallError
      path
    end

    # The project's extensions among @features, as real paths. Built-in
    # features (enumerator.so, complex.so) are listed without a path.
    def project_extensions(features)
      features.select { |f| f.end_with?(".so") && Core::ABSOLUTE_P.call(f) && Core::FILE_P.call(f) }
              .map { |f| real(f) }
              .reject { |path| foreign_dirs.any? { |d| path.start_with?(d) } }
    end

    # Records the extensions loaded since the last call.
    def record_new_extensions
      features = $LOADED_FEATURES
      return if Core::RUN_DIR.nil? || features.size == @features_seen

      fresh = features[@features_seen..] || features
      @features_seen = features.size
      paths = project_extensions(fresh).reject { |path| @recorded[path] }
      return if paths.empty?

      paths.each { |path| @recorded[path] = true }
      Core.append(Core.run_file(Protocol::LOADED_PREFIX), paths.map { |path| "#{path}\n" }.join)
    rescue StandardError => e
      cannot_record(e)
    end

    # The process's list exists from its start, empty until an extension
    # loads: gemleak then knows that this process loaded none (a LoadError
    # before the extension was built), rather than that nobody recorded.
    def start_list
      return if Core::RUN_DIR.nil?

      Core.append(Core.run_file(Protocol::LOADED_PREFIX), "")
      # The Ruby this process runs, whatever `ruby` on PATH is: what an
      # engine needs of Ruby is decided here, and whether Ruby frees its
      # own memory at exit decides whose memory a leak is.
      Core.append(Core.run_file(Protocol::RUBY_PREFIX),
                  "#{RUBY_VERSION}#{FREES_AT_EXIT ? " #{Protocol::FREE_AT_EXIT}" : ""}\n")
      # An engine that writes nothing for a process without leaks: gemleak
      # takes "no report" for "no leaks" only from a process that says here
      # that the engine's runtime was in it.
      Core.append(Core.run_file(Protocol::ENGINE_PREFIX), "#{Runtime::PATH}\n") if Runtime.mapped?
    rescue StandardError => e
      cannot_record(e)
    end

    # The extensions a process loads are its run's default targets, and a
    # process that loaded one and has no XML fails the run: never silently.
    def cannot_record(error)
      return if @failed

      @failed = true
      Core.say("process #{Core.digits(Core.pid)} could not record the extensions it loaded in " \
               "#{Core::RUN_DIR} (#{error.class}: #{error.message})")
    end

    # A forked child writes its own file, from the start.
    def forked
      @pid = Core.pid
      @recorded = {}
      @features_seen = 0
      @failed = false
      start_list
      # What the parent loaded, the child has: a child killed before it
      # requires anything (fiddle, which the parent may have loaded already)
      # still counts as one that loaded the extension, whose check must run.
      record_new_extensions
    end

    def forked?
      @pid != Core.pid
    end

    # Minitest::Spec memoizes `let` values in each test instance.
    def forget_minitest_lets
      return unless defined?(Minitest::Runnable)

      ObjectSpace.each_object(Minitest::Runnable) do |test|
        test.instance_variable_set(:@_memoized, nil) if test.instance_variable_defined?(:@_memoized)
      end
    end
  end

  # Kernel#require, then a look at what it loaded. Prepended, so that
  # RubyGems', Bootsnap's or Zeitwerk's own require stay in the chain.
  module Require
    private

    def require(*args)
      result = super
      if result
        GemLeakHelper.record_new_extensions
        GemLeakHelper::PerTest.install
      end
      result
    end
  end

  # After fork, the child records into its own loaded-<pid>.txt.
  module Fork
    def _fork
      pid = super
      if pid.zero?
        GemLeakHelper.forked
        GemLeakHelper::Durations.forked
        GemLeakHelper::PerTest.forked
      end
      pid
    end
  end

  # exit! under a sanitizer's engine: the check the runtime would have made
  # at exit (PerTest.exit_bang), then exit! as it is; in a test --per-test
  # runs again, the end of that run (PerTest::Ended), not of the process.
  # Process.exit! and Kernel.exit! are public, Kernel#exit! private.
  module ExitBang
    def exit!(*args)
      GemLeakHelper::PerTest.exit_bang
      super
    end
  end

  module PrivateExitBang
    include ExitBang
    private :exit!
  end

  # Kernel#exec, Process.exec: what this image lost is checked before the
  # new one replaces it (PerTest.before_exec).
  module Exec
    def exec(*args)
      GemLeakHelper::PerTest.before_exec
      super
    end
  end

  module PrivateExec
    include Exec
    private :exec
  end

  # `gemleak run` with files after ::: (GEMLEAK_DURATIONS=1): how long the
  # tests of each file took, which the next run's --jobs shares are
  # balanced by. Written at exit to durations-<pid>.txt in the run
  # directory, "MILLISECONDS<TAB>/absolute/file.rb" a line; a forked child
  # counts its own.
  module Durations
    @on = ENV[Protocol::DURATIONS_VARIABLE] == "1" && !Core::RUN_DIR.nil?
    @seconds = Hash.new(0.0)

    class << self
      def on?
        @on
      end

      def time(file)
        return yield unless @on && file

        start = Core.monotonic
        begin
          yield
        ensure
          @seconds[Core::EXPAND.call(file.to_s)] += Core.monotonic - start
        end
      end

      def forked
        @seconds = Hash.new(0.0)
      end

      def write
        return if !@on || @seconds.empty?

        lines = @seconds.map { |file, seconds| "#{Core.digits((seconds * 1000).round)}\t#{file}\n" }
        Core.append(Core.run_file(Protocol::DURATIONS_PREFIX), lines.join)
      rescue StandardError => e
        Core.say("process #{Core.digits(Core.pid)} could not record how long its test files took " \
                 "(#{e.class}: #{e.message}); the next --jobs shares are balanced by file size")
      end
    end
  end

  # The runtime preloaded into Ruby (a sanitizer's engine) as the client of
  # the check a forked child makes of what it inherited, and of the one a
  # process makes when it ends with exit! (the runtime's own check at exit
  # does not run then): its interface called through Fiddle. A marker is a
  # line of the process's report file (__sanitizer_report_error_summary
  # prints its text and a newline there, between the reports, in order); a
  # check is __lsan_do_recoverable_leak_check, which does not exit and
  # reports every object lost so far, followed by "gemleak:checked" (so
  # that gemleak tells a check's report from the runtime's own at exit).
  #
  # LeakSanitizer does not scan memory Ruby maps itself: objects whose only
  # reference is in a Ruby object would be reported lost while Ruby runs.
  # Before each check, Ruby's object pages (the 64 KiB-aligned pages the
  # live objects lie in) are registered as root regions; what is left
  # (Ruby's shape tree, fibers' stacks, a page of hidden objects only) gemleak
  # leaves out when the exit report does not hold it.
  module Sanitizer
    # Ruby 3.3 and 3.4's heap pages: 64 KiB, aligned to their size.
    PAGE = 1 << 16
    CHECKED = (Protocol::MARKER_PREFIX + Protocol::MARKER_CHECKED + "\0").freeze
    EXIT = (Protocol::MARKER_PREFIX + Protocol::MARKER_EXIT + "\0").freeze
    DONE = (Protocol::MARKER_PREFIX + Protocol::MARKER_DONE + "\0").freeze
    LIVE = (Protocol::MARKER_PREFIX + Protocol::MARKER_LIVE + "\0").freeze
    EXEC = (Protocol::MARKER_PREFIX + Protocol::MARKER_EXEC + "\0").freeze
    # How deep scrub goes: some 100 KiB of C stack.
    SCRUB_DEPTH = 100

    class << self
      # Returns: the client PerTest calls (as the Valgrind library's).
      def client(functions = nil)
        require "fiddle" # Fiddle.dlwrap: where Ruby's objects are
        functions ||= runtime_functions
        @functions = functions
        @pages = {}
        @allocated_pages = nil
        {
          marker: functions[:marker],
          check: -> { check },
          full_check: -> { check },
          # The check a process that ends with exit! makes: its report
          # stands for the runtime's at exit (no "checked" after it), and
          # says it ran to its end as the preloaded library's does.
          last_check: lambda {
            functions[:marker].call(LIVE)
            check(closed: false)
            functions[:marker].call(DONE) if Core::PROOF
          },
          # Before exec: what this image lost, checked, and said so.
          exec_check: lambda {
            functions[:marker].call(LIVE)
            check(closed: false)
            functions[:marker].call(EXEC)
          },
          exit: -> { functions[:marker].call(EXIT) },
        }
      end

      def runtime_functions
        lib = Fiddle::Handle::DEFAULT
        voidp = Fiddle::TYPE_VOIDP
        {
          marker: Fiddle::Function.new(lib["__sanitizer_report_error_summary"], [voidp], Fiddle::TYPE_VOID),
          check: Fiddle::Function.new(lib["__lsan_do_recoverable_leak_check"], [], Fiddle::TYPE_INT),
          root: Fiddle::Function.new(lib["__lsan_register_root_region"], [voidp, Fiddle::TYPE_SIZE_T],
                                     Fiddle::TYPE_VOID),
        }
      end

      def check(closed: true)
        disabled = GC.disable
        filled = fill_free_slots
        register_pages
        exact_write
        scrub(SCRUB_DEPTH)
        @functions[:check].call
        @functions[:marker].call(CHECKED) if closed
      ensure
        filled&.clear
        GC.enable unless disabled
      end

      # Before the check lists the lost blocks, what the libraries gemleak
      # preloads write beside it: under fast stacks, the blocks allocated on
      # another stack than the thread's, which the check cannot judge
      # (src/run/client/hidden.c); in the exact pass, the stacks of the
      # blocks allocated at the sites it unwinds exactly (exact.c).
      def exact_write
        @before_check ||= [[Protocol::HIDDEN_VARIABLE, "gemleak_preload_hidden"],
                           [Protocol::EXACT_VARIABLE, "gemleak_exact_write"]].filter_map do |variable, name|
          next if ENV[variable].to_s.empty?

          Fiddle::Function.new(Fiddle::Handle::DEFAULT[name], [], Fiddle::TYPE_VOID)
        rescue Fiddle::DLError => e
          Core.debug(e)
          nil
        end
        @before_check.each(&:call)
      rescue StandardError => e
        Core.debug(e)
      end

      # Ruby's object pages, registered as roots, hold free slots too, and
      # a free slot keeps what its dead object held: the address of a buffer
      # Ruby freed, which LeakSanitizer's allocator hands out again at once.
      # A block the extension then lost at that address looked reachable
      # (fork { leak; exit! } passed after a GC). Before a check, every free
      # slot of every heap is taken by a string as long as the slot, all
      # zeros. Returns them, to keep until the check is done.
      def fill_free_slots
        return [] unless defined?(GC::INTERNAL_CONSTANTS) && GC.respond_to?(:stat_heap)

        heaps = GC::INTERNAL_CONSTANTS[:HEAP_COUNT].to_i
        filled = []
        heaps.times do |i|
          stat = GC.stat_heap(i)
          live = stat[:total_allocated_objects].to_i - stat[:total_freed_objects].to_i
          free = stat[:heap_eden_slots].to_i - live
          # An embedded string: a 24-byte header, its bytes and a NUL.
          length = stat[:slot_size].to_i - 25
          next if free <= 0 || length <= 0

          free.times { filled << ("\0" * length) }
        end
        filled
      rescue StandardError => e
        Core.debug(e)
        filled || []
      end

      # The C stack below where Ruby runs, written over before a check:
      # LeakSanitizer scans each thread's stack from where it is, and a
      # pointer left there (a leaked block's, in a frame that has returned)
      # would keep the block found, not lost. Each level calls back through
      # Array#each into Ruby: a few hundred bytes of C frames each.
      def scrub(depth)
        return if depth.zero?

        [depth].each { |n| scrub(n - 1) }
      end

      # Ruby's object pages, as roots; looked for only when Ruby allocated
      # pages since the last look.
      def register_pages
        allocated = GC.stat(:total_allocated_pages)
        return if allocated == @allocated_pages

        @allocated_pages = allocated
        root = @functions[:root]
        ObjectSpace.each_object(BasicObject) do |object|
          page = Fiddle.dlwrap(object) & ~(PAGE - 1)
          next if @pages[page]

          @pages[page] = true
          root.call(page, PAGE)
        end
      end
    end
  end

  # --per-test under a sanitizer's engine: which test allocated each block,
  # recorded by the client library through the runtime's allocator hooks
  # (src/run/client/owners.c) and written at exit beside the leak check's
  # objects. No check runs while the tests do, and no test runs twice: the
  # price is a hash table's insert at each allocation.
  module Owners
    class << self
      # Starts recording (what is allocated from now on is the setup's,
      # until the first test). Returns: whether it could.
      def start(path)
        require "fiddle"
        lib = Fiddle.dlopen(path)
        start = Fiddle::Function.new(lib["gemleak_client_owners_start"], [], Fiddle::TYPE_INT)
        @owner = Fiddle::Function.new(lib["gemleak_client_owner"], [Fiddle::TYPE_VOIDP], Fiddle::TYPE_VOID)
        @write = Fiddle::Function.new(lib["gemleak_client_owners_write"], [], Fiddle::TYPE_VOID)
        return false if start.call.zero?

        @owner.call("\t\0")
        true
      end

      # What is allocated from now on is the test's (NAME, LOCATION escaped).
      def test(name, location)
        @owner.call("#{name}\t#{location}\0")
      end

      # ... or nobody's: the suite is done.
      def none
        @owner.call(nil)
      end

      # Before exit!, which runs no atexit handler: the lines now.
      def write
        @write.call
      end
    end
  end

  # `gemleak run --per-test` (GEMLEAK_PER_TEST=test, each or file): markers
  # in Valgrind's output around the tests, and leak checks between them, so
  # that gemleak can say during which test each leak became lost. The
  # markers, one <clientmsg> each:
  #
  #   gemleak:setup                        before the first test: lost while loading
  #   gemleak:forked                       first thing in a forked child: inherited
  #                                        (in every run under Valgrind, not only per test)
  #   gemleak:start<TAB>NAME<TAB>LOCATION  a test (or file) begins
  #   gemleak:end<TAB>NAME<TAB>LOCATION    it ended, and a check follows
  #   gemleak:tests<TAB>N<TAB>FIRST-NAME<TAB>FIRST-LOCATION<TAB>LAST-NAME<TAB>LAST-LOCATION
  #                                        N tests ended since the last check,
  #                                        and a check follows
  #   gemleak:again                        tests run again (below) begin
  #   gemleak:again<TAB>RUNS               they ran RUNS times in all; a check follows
  #   gemleak:again<TAB>1<TAB>NAME<TAB>LOCATION
  #                                        one test ran again alone; a check follows
  #   gemleak:again<TAB>forked             first in a child forked by a test run again
  #
  # Under a sanitizer's engine the markers are lines of the report file,
  # and no check runs between the tests: the client library records which
  # test allocated each block (Owners), and "end" is followed by nothing.
  #
  # A check is a GC (the objects the tests dropped are freed, so that what
  # they leaked is lost now) and VALGRIND_DO_ADDED_LEAK_CHECK, which reports
  # the loss records that grew since the last check; but forked: a full
  # check, which reports every loss record the child inherited (Valgrind
  # copied the parent's last check into the child, which the added check
  # would count from). gemleak subtracts those from the child's later
  # checks: a block lost before the fork is the parent's, counted once.
  #
  # A check costs a scan of the whole heap (0.1 to 0.2 s under Valgrind),
  # more than most tests. Per test (the default), the tests run as they
  # would, with a check only when they have run for several times what a
  # check costs; when a check finds that those tests lost memory, they run
  # again, a different number of times for each group of them, and a check
  # after them tells from how much was lost again which group lost it: a
  # few checks find the test, whatever the suite's size. The test found
  # runs once more alone, with a check after it: that check names it. The
  # memory lost again is the runs': gemleak subtracts it. "each" checks
  # after every test and runs nothing again; "file" after each test file.
  #
  # NAME is "Class#test_name" or RSpec's full description (empty per file);
  # LOCATION is "/absolute/file.rb:LINE" (the file alone per file). Bytes
  # that would be ambiguous (%, controls, space) are written %XX.
  #
  # The client requests need native code: gemleak writes a small library
  # beside this file (GEMLEAK_CLIENT) and it is called through Fiddle.
  module PerTest
    @grain = ENV[Protocol::PER_TEST_VARIABLE]
    @grain = nil unless ["test", "each", "file", Protocol::PER_TEST_OWNERS].include?(@grain)
    # The owners alone (GemLeak's fast pass, under a sanitizer): which test
    # allocated each block, for the exact pass to run those tests only; no
    # marker a test, no attribution in the report.
    @owners_only = @grain == Protocol::PER_TEST_OWNERS
    @grain = "test" if @owners_only
    # The exact pass: the tests to run ("NAME\tLOCATION" as escaped here;
    # "\tFILE": every test of FILE); the others are skipped. nil: all.
    @only = begin
      path = ENV[Protocol::EXACT_TESTS_VARIABLE].to_s
      path.empty? ? nil : File.readlines(path, chomp: true).to_h { |line| [line.b, true] }
    rescue SystemCallError
      nil
    end
    @client_path = ENV[Protocol::CLIENT_VARIABLE]&.dup
    # Whether possibly lost memory counts (--leak-kinds has "possible").
    @possible = ENV[Protocol::LEAK_KINDS_VARIABLE].to_s.split(",").include?("possible")
    @pid = Core.pid
    @ready = false   # the setup (or forked) check is done in this process
    @open = nil      # [name, location] of the test or file begun and not ended
    @began = nil     # when it began
    @installed = {}
    @tests = []      # the tests ended since the last check, per test (Test)
    @since = 0.0     # how long they ran
    @cost = 0.2      # what the last check cost, in seconds
    @lost = nil      # what the last check found lost in all (see lost)
    @again = false   # running tests again: the hooks stand aside
    @again_pid = nil # the process running them (a child a test forks is not)
    @named = []      # tests named since the last check of the suite's runs
    @owners = false  # under a sanitizer's engine: Owners records, nothing is checked
    # At most this much of a name: the location tells apart two tests whose
    # names begin alike, and the markers stay lines, not pages.
    FIELD_BYTES = 1000
    # "%XX" for each byte that would be ambiguous in a marker; made here,
    # with Kernel's format, before a suite's own `format` may hide it.
    ESCAPES = ([0x25, 0x7f] + (0x00..0x20).to_a).to_h { |byte| [byte.chr.b, Kernel.format("%%%02X", byte)] }.freeze
    # Per test, a check when the tests since the last one ran this many
    # times as long as it cost: checks are then at most a fifth of the time.
    CHECK_EVERY = 4.0
    # At most this many groups run again before one check: group m runs m
    # times (0 to GROUPS - 1), so a test may run GROUPS - 1 times more.
    GROUPS = 8
    # Tests named for what one check found lost: a report names a few.
    ENOUGH = 5

    # A test run again that would end the process (exit!) ends its run
    # instead: running a test again must not change the suite. An
    # Exception, not a StandardError, so that a test's rescue lets it by.
    class Ended < Exception # rubocop:disable Lint/InheritException -- as SystemExit is one
    end

    # A test that ended: its (escaped) name and location, how to run it
    # again (nil: it cannot be) and how long it took.
    Test = Struct.new(:name, :location, :again, :seconds)

    class << self
      def on?
        !@grain.nil?
      end

      def again?
        @again
      end

      # Returns: whether the exact pass skips the test NAME at FILE:LINE:
      # the tests it runs are those that allocated what the fast pass
      # found lost (GEMLEAK_EXACT_TESTS).
      def skip?(name, file, line)
        return false if @only.nil? || @again

        file = Core::EXPAND.call(file.to_s)
        location = escape(line ? "#{file}:#{line}" : file)
        !@only.key?("#{escape(name)}\t#{location}".b) && !@only.key?("\t#{escape(file)}".b)
      rescue StandardError => e
        Core.debug(e)
        false
      end

      # A marker of a test's (start, end), but in the owners alone.
      def test_marker(*fields)
        marker(*fields) unless @owners_only
      end

      # Returns: whether this process is running tests again (not a child
      # one of them forked, which ends as it says).
      def again_here?
        @again && @again_pid == Core.pid
      end

      # Under a sanitizer's engine, first thing: which test allocates each
      # block is recorded from here on (the setup's until the first test).
      # Without the client library, or a runtime that takes hooks, this
      # process's leaks are not put at tests, and it says so.
      def start_owners
        return unless on? && Runtime.mapped?

        @owners = !@client_path.nil? && Owners.start(@client_path)
        return if @owners

        failed(RuntimeError.new("the client library cannot record which test allocates what " \
                                "(#{@client_path.inspect})"))
      rescue LoadError, StandardError => e
        failed(e)
      end

      # The library's functions, loaded on first use; nil (with a word on
      # stderr) when they cannot be, and natively, outside Valgrind. Under
      # LeakSanitizer, the runtime's (Sanitizer).
      def client
        return @client if defined?(@client)

        @client = nil
        path = @client_path
        begin
          require "fiddle"
          if Runtime.mapped?
            path = Runtime::PATH
            return @client = Sanitizer.client
          end
          lib = Fiddle.dlopen(path)
          running = Fiddle::Function.new(lib["gemleak_client_running_on_valgrind"], [], Fiddle::TYPE_INT)
          return @client if running.call.zero?

          @client = {
            marker: Fiddle::Function.new(lib["gemleak_client_marker"], [Fiddle::TYPE_VOIDP], Fiddle::TYPE_VOID),
            check: Fiddle::Function.new(lib["gemleak_client_leak_check"], [], Fiddle::TYPE_VOID),
            full_check: Fiddle::Function.new(lib["gemleak_client_full_leak_check"], [], Fiddle::TYPE_VOID),
            lost: Fiddle::Function.new(lib["gemleak_client_lost"], [Fiddle::TYPE_INT], Fiddle::TYPE_LONG),
          }
        rescue LoadError, StandardError => e
          what = on? ? "--per-test is off" : "what it inherited may be counted twice"
          Core.say("#{what} in process #{Core.digits(Core.pid)}: cannot load #{path.inspect} " \
                   "with Fiddle (#{e.class}: #{e.message.lines.first&.chomp})")
          @client = nil
        end
        @client
      end

      def escape(text)
        text.to_s.b[0, FIELD_BYTES].gsub(/[%\x00-\x20\x7f]/n, ESCAPES)
      end

      # A test that cannot be marked puts its leaks at the wrong test: this
      # process stops marking, and says so.
      def failed(error)
        Core.say("--per-test is off in process #{Core.digits(Core.pid)} after an error " \
                 "(#{error.class}: #{error.message}); its leaks are put at the test before")
        @grain = nil
      end

      def marker(*fields)
        # NUL-terminated whatever Ruby's own buffer holds: Fiddle passes
        # the string's bytes as they are.
        @client[:marker].call("#{fields.join("\t")}\0")
      end

      # Lets the memory the finished tests dropped be freed (objects' dfree
      # run), so that what they leaked is lost now, not at a later check.
      # Returns: what was lost since the last check (see grown).
      def check(*fields)
        began = Core.monotonic
        GC.start
        marker(*fields)
        @client[:check].call
        grown(began)
      end

      # Returns: what the check just made found lost beyond the one before,
      # [bytes, blocks] definitely or indirectly lost, and possibly lost
      # when those count; nil when nothing more was. Notes what it cost.
      def grown(began)
        lost = (@possible ? 0..3 : 0..1).map { |which| @client[:lost].call(which) }
        before = @lost || lost.map { 0 }
        @lost = lost
        @cost = Core.monotonic - began
        @since = 0.0
        growth = lost.zip(before).map { |now, was| now - was }
        growth.any?(&:positive?) ? growth : nil
      end

      # What was lost before the first test (while the suite loaded), or
      # what a forked child inherited, is checked for before any test runs.
      def ready
        if @pid != Core.pid # forked, and Process._fork did not say (Ruby < 3.1)
          forked
        elsif !@ready
          @ready = true
          check(Protocol::MARKER_PREFIX + Protocol::MARKER_SETUP) unless @owners
        end
      end

      # In every run that has a client (the library under Valgrind, the
      # runtime under LeakSanitizer), not only per test: forks are rare,
      # and without this check the child's leaks cannot be told from its
      # parent's.
      def forked
        @pid = Core.pid
        @ready = true
        @tests = []
        return if (@client_path.nil? && !on? && !Runtime.mapped?) || !client

        # What garbage the parent held but had not collected owns is lost
        # now, not at the child's exit, where it would seem the child's.
        GC.start
        marker(Protocol::MARKER_PREFIX + Protocol::MARKER_FORKED)
        @client[:full_check].call
        @lost = nil
        grown(Core.monotonic) if on? && !@owners
        # A child forked during a test runs on in it.
        test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_START, *@open) if on? && @open
        # A child forked by a test run again: what it loses, the runs again
        # lose, not the suite.
        marker(Protocol::MARKER_PREFIX + Protocol::MARKER_AGAIN, Protocol::MARKER_FORKED) if @again
      rescue StandardError => e
        on? ? failed(e) : Core.debug(e)
      end

      # A test begins: NAME, and where it is ("/abs/file.rb", line).
      def started(name, file, line)
        return unless on? && client

        ready
        file = Core::EXPAND.call(file.to_s)
        if @grain == "file"
          return if @open && @open[1] == escape(file)

          finish
          @open = ["", escape(file)]
        else
          @open = [escape(name), escape(line ? "#{file}:#{line}" : file)]
        end
        @began = Core.monotonic
        Owners.test(*@open) if @owners
        test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_START, *@open)
      rescue StandardError => e
        failed(e)
      end

      # A test ended (@again: how to run it again, nil if it cannot be);
      # per file, its file ends when the next file's test begins, or at
      # exit. NAME (nullable) is its name as it is now: an RSpec example
      # without a description gets one as it runs.
      def finished(name = nil, again = nil)
        return unless on? && @open && @grain != "file"

        @open[0] = escape(name) if name
        if @grain == "each" || @owners
          finish
          return
        end
        seconds = Core.monotonic - @began
        @tests << Test.new(*@open, again, seconds)
        @since += seconds
        @open = nil
        # A test that cannot run again is checked for alone.
        close if again.nil? || @since >= CHECK_EVERY * @cost
      rescue StandardError => e
        failed(e)
      end

      # At exit: the last file, the tests since the last check, a test cut short.
      def finish
        return unless client

        close
        return unless @open

        fields = @open
        @open = nil
        if @owners
          test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_END, *fields)
        else
          check(Protocol::MARKER_PREFIX + Protocol::MARKER_END, *fields)
        end
      end

      # Under LeakSanitizer, the last marker: the runtime's exit check
      # follows (a report, or none when nothing was lost).
      def exiting
        Owners.none if @owners
        @client[:exit]&.call if @client
      rescue StandardError => e
        Core.debug(e)
      end

      # Under a sanitizer's engine, a process that ends with exit! runs no
      # atexit handler: neither the runtime's leak check nor the client
      # library's lines. They are made here, the check with Ruby's pages as
      # roots (Ruby has not freed its memory), its report the process's last.
      def exit_bang
        raise Ended, "exit! while run again" if again_here?
        return unless Runtime.mapped? && !@exited

        @exited = true
        begin
          finish if on?
          Owners.none if @owners
          GC.start
          Owners.write if @owners
        rescue StandardError => e
          Core.debug(e)
        end
        last_check
      end

      # exec replaces the process's image: no exit, and the new image's
      # report (or Valgrind's XML) would take the same name and write over
      # this one's. What this image lost is checked first, said
      # ("gemleak:exec"), and its file renamed NAME.PID.N or PID.N.xml,
      # which the new image's name leaves alone.
      def before_exec
        return if Core::RUN_DIR.nil? || @exec_checked == Core.pid

        @exec_checked = Core.pid
        check = if Runtime.mapped?
                  client&.fetch(:exec_check, nil)
                else
                  exec_check_under_valgrind
                end
        return if check.nil?

        begin
          finish if on?
          GC.start
        rescue StandardError => e
          Core.debug(e)
        end
        check.call
        set_image_aside
      rescue StandardError => e
        Core.say("process #{Core.digits(Core.pid)} execs and could not check for leaks first " \
                 "(#{e.class}: #{e.message}): what it lost before may be left out")
      end

      def exec_check_under_valgrind
        valgrind = client
        return nil if valgrind.nil? || valgrind[:full_check].nil?

        lambda {
          valgrind[:marker].call(Protocol::MARKER_PREFIX + Protocol::MARKER_LIVE)
          valgrind[:full_check].call
          valgrind[:marker].call(Protocol::MARKER_PREFIX + Protocol::MARKER_EXEC)
        }
      end

      # Renames this image's report, PID.xml or NAME.PID, to the first free
      # PID.N.xml or NAME.PID.N.
      def set_image_aside
        pid = Core.digits(Core.pid)
        Dir.children(Core::RUN_DIR).each do |name|
          next unless name == "#{pid}.xml" || name.end_with?(".#{pid}")
          next if name.start_with?(Protocol::LOADED_PREFIX, Protocol::RUBY_PREFIX)

          n = 1
          n += 1 while File.exist?(File.join(Core::RUN_DIR, image_name(name, pid, n)))
          File.rename(File.join(Core::RUN_DIR, name), File.join(Core::RUN_DIR, image_name(name, pid, n)))
        end
      end

      def image_name(name, pid, n)
        name == "#{pid}.xml" ? "#{pid}.#{n}.xml" : "#{name}.#{n}"
      end

      # The check exit! would skip. A process that cannot make it takes back
      # its word that the engine was in it (engine-PID.txt): without a
      # report, it is then not counted as checked.
      def last_check
        check = client&.fetch(:last_check, nil)
        raise "the runtime's interface could not be loaded" if check.nil?

        check.call
      rescue StandardError => e
        Core.say("process #{Core.digits(Core.pid)} ends with exit! and could not check for leaks " \
                 "first (#{e.class}: #{e.message}): it is not counted as checked")
        begin
          File.unlink(Core.run_file(Protocol::ENGINE_PREFIX)) unless Core::RUN_DIR.nil?
        rescue SystemCallError
          nil
        end
      end

      # The check after the tests ended since the last one; when they lost
      # something, which of them did.
      def close
        tests = @tests
        return if tests.empty?

        @tests = []
        if tests.size == 1
          check(Protocol::MARKER_PREFIX + Protocol::MARKER_END, tests[0].name, tests[0].location)
          return
        end
        growth = check(Protocol::MARKER_PREFIX + Protocol::MARKER_TESTS, tests.size,
                       tests[0].name, tests[0].location, tests[-1].name, tests[-1].location)
        return unless growth && tests.all?(&:again)

        @named = []
        find(tests, growth)
      end

      # @tests lost @growth when they ran: splits them into groups, runs
      # group m again m times, and the check after tells which group lost
      # it (the growth m times over; nothing: the group that did not run),
      # until one test is left, which runs alone. When the growth is no
      # multiple, or the test found explains only part of it (two tests
      # lost, or not the same each run, or two groups' runs added up to a
      # multiple), each half of the tests not named runs again with a check
      # after it, and the halves that lost are looked into the same way,
      # until enough tests are named for a report (it names a few and says
      # there are others). A test that lost only on its first run is named
      # by none. Returns: what the tests named lost again alone, in all.
      def find(tests, growth)
        explained = growth.map { 0 }
        return explained if @named.size >= ENOUGH

        if tests.size == 1
          lost = alone(tests[0])
          return lost || explained
        end
        groups = split(tests, groups_for(tests))
        runs = again(groups.each_with_index.flat_map { |group, m| group * m })
        found = check(Protocol::MARKER_PREFIX + Protocol::MARKER_AGAIN, runs)
        m = multiple(found, growth)
        if m && m < groups.size
          explained = find(groups[m], growth)
          # Nothing lost again but by group 0, which did not run: the
          # other groups are clean, and group 0 was looked into.
          return explained if explained == growth || found.nil?
        end
        split(tests.reject { |test| @named.include?(test) }, 2).each do |half|
          next if half.empty? || @named.size >= ENOUGH

          if half.size == 1
            explained = add(explained, alone(half[0]))
            next
          end
          runs = again(half)
          lost = check(Protocol::MARKER_PREFIX + Protocol::MARKER_AGAIN, runs)
          explained = add(explained, find(half, lost)) if lost
        end
        explained
      end

      # One test again, alone: the check after it names it. Returns: what
      # it lost again, nil if nothing.
      def alone(test)
        again([test])
        named(test, check(Protocol::MARKER_PREFIX + Protocol::MARKER_AGAIN, 1, test.name, test.location))
      end

      # Returns: @lost, which @test lost again alone (nil: nothing), noted.
      def named(test, lost)
        @named << test if lost
        lost || [0] * @lost.size
      end

      def add(a, b)
        a.zip(b).map { |x, y| x + y }
      end

      # Runs @tests again, in order. Returns: how many ran. A test that
      # would end the process run again (exit!, exit, abort: the first run
      # went on, so the suite must) ends its run: the tests after it, and
      # the rest of the suite, still run. What a forked child raises is its
      # own: it ends the child.
      def again(tests)
        marker(Protocol::MARKER_PREFIX + Protocol::MARKER_AGAIN)
        @again = true
        @again_pid = Core.pid
        tests.each do |test|
          test.again.call
        rescue StandardError, ScriptError => e
          Core.debug(e) # a test that fails when run again may just not leak
        rescue Ended, SystemExit => e
          raise unless Core.pid == @again_pid

          Core.debug(e)
        end
        tests.size
      ensure
        @again = false if Core.pid == @again_pid
      end

      # The number of groups that costs least for what it tells: a check,
      # and the tests run again ((k - 1) / 2 times the tests' time), for
      # log2(k) halvings.
      def groups_for(tests)
        seconds = tests.sum(&:seconds)
        (2..[GROUPS, tests.size].min).min_by { |k| (@cost + (seconds * (k - 1) / 2)) / Math.log2(k) }
      end

      def split(tests, count)
        size, rest = tests.size.divmod(count)
        start = 0
        Array.new(count) do |i|
          length = size + (i < rest ? 1 : 0)
          tests[start, length].tap { start += length }
        end
      end

      # Returns: m when @found is @growth m times over (0 when nothing was
      # found), else nil.
      def multiple(found, growth)
        return 0 if found.nil?

        index = growth.index(&:positive?)
        m, rest = found[index].divmod(growth[index])
        return nil unless rest.zero? && found.zip(growth).all? { |f, g| f == m * g }

        m
      end

      # The test frameworks, hooked once each as they load (per test, or
      # to time each file's tests).
      def install
        return unless on? || Durations.on?

        if !@installed[:minitest] && defined?(::Minitest) && ::Minitest.respond_to?(:run_one_method)
          @installed[:minitest] = true
          ::Minitest.singleton_class.prepend(MinitestHook)
        end
        if !@installed[:test_unit] && defined?(::Test::Unit::TestCase)
          @installed[:test_unit] = true
          ::Test::Unit::TestCase.prepend(TestUnitHook)
        end
        if !@installed[:rspec] && defined?(::RSpec::Core::Example)
          @installed[:rspec] = true
          ::RSpec::Core::Example.prepend(RSpecHook)
        end
      rescue StandardError => e
        Core.debug(e)
      end

      def source_location(klass, method_name)
        klass.instance_method(method_name).source_location
      rescue NameError
        nil
      end
    end

    # Minitest.run_one_method makes the test object, runs it and drops it:
    # after it, a GC frees what the test kept in instance variables. Run
    # again, a new object runs; its result is nobody's.
    module MinitestHook
      def run_one_method(klass, method_name, *rest)
        return super if PerTest.again?

        file, line = PerTest.source_location(klass, method_name)
        name = "#{klass.name || klass.inspect}##{method_name}"
        return MinitestHook.skipped(klass, method_name) if PerTest.skip?(name, file, line)

        begin
          PerTest.started(name, file, line)
          Durations.time(file) { super(klass, method_name, *rest) }
        ensure
          PerTest.finished(nil, -> { klass.new(method_name).run }) unless PerTest.again?
        end
      end

      # A test the exact pass skips: a result that ran nothing, for the
      # reporter (whose output nobody reads).
      def self.skipped(klass, method_name)
        test = klass.new(method_name)
        test.time = 0.0 if test.respond_to?(:time=)
        defined?(::Minitest::Result) ? ::Minitest::Result.from(test) : test
      end
    end

    # test-unit's suite holds the test object until the next one runs. Run
    # again, a new object runs into a result of its own; a test with data
    # (data-driven) is not run again.
    module TestUnitHook
      def run(result, &block)
        return super if PerTest.again?

        file, line = PerTest.source_location(self.class, method_name)
        name = "#{self.class.name || self.class.inspect}##{method_name}"
        return nil if PerTest.skip?(name, file, line)

        begin
          PerTest.started(name, file, line)
          Durations.time(file) { super(result, &block) }
        ensure
          unless PerTest.again?
            klass = self.class
            test_name = method_name
            again = if !respond_to?(:data_label) || data_label.nil?
                      -> { klass.new(test_name).run(::Test::Unit::TestResult.new) { |*| nil } }
                    end
            PerTest.finished(nil, again)
          end
        end
      end
    end

    # After Example#run, RSpec drops the example group instance; letting go
    # of its instance variables (its lets) first is what rspec-core 3.13
    # does itself. Run again, a copy of the example runs in a new instance
    # of its group and reports to nobody (the example itself keeps its
    # result).
    module RSpecHook
      def run(example_group_instance, reporter)
        return super if PerTest.again?
        return true if PerTest.skip?(full_description, metadata[:file_path], metadata[:line_number])

        begin
          PerTest.started(full_description, metadata[:file_path], metadata[:line_number])
          Durations.time(metadata[:file_path]) { super(example_group_instance, reporter) }
        ensure
          unless PerTest.again?
            example_group_instance&.instance_variables&.each do |ivar|
              example_group_instance.instance_variable_set(ivar, nil)
            end
            PerTest.finished(full_description, (RSpecHook.again(self) if respond_to?(:duplicate_with)))
          end
        end
      end

      def self.again(example)
        lambda do
          copy = example.duplicate_with
          group = example.example_group
          group.examples.delete(copy)
          instance = group.new(copy.inspect_output)
          group.set_ivars(instance, group.before_context_ivars)
          copy.run(instance, ::RSpec::Core::NullReporter)
        end
      end
    end
  end
end

# `gemleak run -- bundle exec rake test` starts the launcher (bundle, rake)
# outside Valgrind, and hands Valgrind's command line down in
# GEMLEAK_ENGINE_COMMAND: a launcher only starts the processes that run the
# suite, and under Valgrind each costs a start and a leak check at exit.
# Here, first thing, every Ruby process below it but another launcher,
# extconf.rb and what build tools start puts itself under Valgrind, by
# exec: the same pid, and Ruby started again exactly as it was (its
# arguments, environment, directory and a script read from standard
# input). A launcher or build step that loads an extension of the project
# runs tests itself: it starts again, from the start, under Valgrind; a
# process forked from it, which cannot, is named to gemleak
# (outside-<pid>.txt), and the run does not pass.
module GemLeakLaunch
  SEPARATOR = GemLeakHelper::Protocol::ENGINE_COMMAND_SEPARATOR
  LAUNCHERS = GemLeakHelper::Protocol::LAUNCHERS.split(" ").freeze
  BUILD_STEPS = %w[extconf.rb].freeze
  Core = GemLeakHelper::Core
  EXEC = Process.method(:exec)
  # Ruby's switches (ruby.c, proc_options), for the -C among them: those
  # that take an argument, attached or the next word; those that take the
  # rest of the word; the long options whose argument may be the next word.
  ARGUMENT_SWITCHES = "CXeIrE"
  REST_SWITCHES = "ixF"
  LONG_WITH_ARGUMENT = GemLeakHelper::Protocol::RUBY_LONG_WITH_VALUE.split.map { |name| "--#{name}" }.freeze

  class << self
    # :traced (under Valgrind, or no launcher above), :launcher, :outside
    # (a build step, or a Ruby below a build tool: native, as Valgrind's
    # --trace-children-skip would keep it, unless it loads the project's
    # extension), or :unchecked (it could not tell, and said so).
    def start
      prefix = ENV[GemLeakHelper::Protocol::ENGINE_COMMAND_VARIABLE]
      return :traced if prefix.nil?

      decide(prefix)
    rescue StandardError => e
      # Never silently unchecked: gemleak says so, and the run cannot pass.
      outside("#{File.basename($0.to_s)} could not go under Valgrind (#{e.class}: #{e.message})")
      :unchecked
    end

    def decide(prefix)
      # Under Valgrind. GEMLEAK_ENGINE_COMMAND stays for the children: those
      # Valgrind traces are under it too; a Ruby below a program it skips
      # (make) runs without Valgrind's LD_PRELOAD, and looks for itself.
      return :traced if ENV["LD_PRELOAD"].to_s.include?("/vgpreload_")
      if GemLeakHelper::Runtime.mapped?
        GemLeakHelper::Runtime.keep_to_self
        return :traced
      end

      @valgrind = prefix.split(SEPARATOR)
      @argv = File.binread("/proc/self/cmdline").split("\0")
      @env = ENV.to_h
      @name = File.basename($0.to_s)
      @pid = Core.pid
      @seen = $LOADED_FEATURES.size
      started_as
      if BUILD_STEPS.include?(@name)
        @role = "the build step #{@name}"
        :outside
      elsif under_build_tool?
        @role = "#{@name} (below a build tool)"
        :outside
      elsif LAUNCHERS.include?(@name)
        @role = "the launcher #{@name}"
        :launcher
      else
        start_again
      end
    end

    # A build tool among this process's ancestors, up to gemleak: make
    # running Ruby stays out of Valgrind, as make itself does.
    def under_build_tool?
      skip = @valgrind.reverse.find { |arg| arg.start_with?("--trace-children-skip=") }
      patterns = skip.to_s.delete_prefix("--trace-children-skip=").split(",")
      return false if patterns.empty?

      stop = ENV[GemLeakHelper::Protocol::PID_VARIABLE].to_i
      pid = Process.ppid
      32.times do
        break if pid <= 1 || pid == stop

        stat = File.read("/proc/#{pid}/stat")
        comm = stat[stat.index("(") + 1...stat.rindex(")")]
        return true if patterns.any? { |p| File.fnmatch?(p, comm) || File.fnmatch?(p, "/#{comm}") }

        pid = stat[stat.rindex(")") + 2..].split[1].to_i
      end
      false
    rescue StandardError
      false
    end

    # How to start this Ruby again as it was started. When the helper
    # loads, Ruby has already taken its switches: -C has changed
    # directory (so that the same arguments would chdir twice: "Can't
    # chdir"), and a script on standard input has been read from (its
    # first line).
    def started_as
      @args = @argv.drop(1)
      chdirs = chdirs_in(@argv)
      unless chdirs.empty?
        @directory = start_directory(chdirs.map(&:last))
        @args = without_chdirs(@argv, chdirs).drop(1) if @directory.nil?
      end
      keep_script if $0 == "-"
    end

    # The -C (and -X) switches among Ruby's options, as [index of the
    # word, offset of the switch in it, whether the directory is attached,
    # the directory].
    def chdirs_in(argv)
      found = []
      i = 1
      while i < argv.size
        word = argv[i]
        break if word == "-" || word == "--" || !word.start_with?("-")

        if word.start_with?("--")
          i += 1 if LONG_WITH_ARGUMENT.include?(word)
        else
          i += 1 if chdir_in_switches(argv, i, found)
        end
        i += 1
      end
      found
    end

    # One word of single-letter switches (-wCdir, -I lib). Returns: true
    # when the last switch took the next word as its argument.
    def chdir_in_switches(argv, i, found)
      word = argv[i]
      j = 1
      while j < word.size
        c = word[j]
        if ARGUMENT_SWITCHES.include?(c)
          attached = j + 1 < word.size
          found << [i, j, attached, attached ? word[(j + 1)..] : argv[i + 1].to_s] if "CX".include?(c)
          return !attached
        end
        return false if REST_SWITCHES.include?(c) || (c == "W" && word[j + 1] == ":")

        j += 1
        j += 1 if c == "K"
        digits = { "0" => "01234567", "T" => "0123456789", "W" => "0123456789" }[c]
        j += 1 while digits && j < word.size && digits.include?(word[j])
      end
      false
    end

    # The directory this Ruby started in, before its -C: the one among
    # its parent's, $PWD and the one the -C went down from that leads,
    # through the same -C, to the directory it is in. nil if none.
    def start_directory(chdirs)
      here = GemLeakHelper.real(Dir.pwd)
      candidates = [parent_directory, ENV["PWD"], unwound(chdirs)].compact.uniq
      candidates.find do |dir|
        GemLeakHelper.real(chdirs.reduce(dir) { |from, to| File.expand_path(to, from) }) == here
      rescue StandardError
        false
      end
    end

    def parent_directory
      File.readlink("/proc/#{Process.ppid}/cwd")
    rescue SystemCallError
      nil
    end

    # Up from here as far as relative -C went down; nil past an absolute
    # one or a "..".
    def unwound(chdirs)
      dir = Dir.pwd
      chdirs.reverse_each do |to|
        parts = to.split("/").reject { |part| part.empty? || part == "." }
        return nil if to.start_with?("/") || parts.include?("..")

        parts.size.times { dir = File.dirname(dir) }
      end
      dir
    end

    # Ruby's arguments without their -C, to run in the directory they led to.
    def without_chdirs(argv, chdirs)
      argv = argv.dup
      chdirs.reverse_each do |i, j, attached, _dir|
        argv.delete_at(i + 1) unless attached
        if j == 1
          argv.delete_at(i)
        else
          argv[i] = argv[i][0...j]
        end
      end
      argv
    end

    # Ruby reads a script on standard input ($0 "-") as far as its first
    # line, and takes that line's switches, before it loads the helper; it
    # pushes "#!\n" back in its place. The script, its first line made
    # again (with the switches in force), goes to an unnamed file that
    # becomes standard input: this Ruby parses it from there, and Ruby
    # under Valgrind reads it again.
    def keep_script
      text = STDIN.read.b
      text = "#!ruby#{switches_in_force}\n#{text.byteslice(3..)}" if text.start_with?("#!\n")
      @script = unnamed_file
      @script.write(text)
      @script.flush
      @script.rewind
      STDIN.reopen(@script)
    end

    def switches_in_force
      switches = +""
      switches << " -w" if $VERBOSE
      switches << " -W0" if $VERBOSE.nil?
      switches << " -d" if $DEBUG
      verbose = $VERBOSE
      $VERBOSE = nil # $-a and friends are unset without their switch
      switches << " -a" if $-a
      switches << " -l" if $-l
      switches << " -p" if $-p
      switches
    ensure
      $VERBOSE = verbose
    end

    def unnamed_file
      dir = Core::RUN_DIR || "/tmp"
      File.open(dir, File::RDWR | File::TMPFILE, 0o600, binmode: true)
    rescue SystemCallError, NameError
      path = "#{dir}/stdin-#{Core.digits(Core.pid)}.rb"
      file = File.open(path, File::RDWR | File::CREAT | File::EXCL, 0o600, binmode: true)
      File.unlink(path)
      file
    end

    # This Ruby, from the start, under Valgrind: in the environment and
    # directory it started in, its script again on standard input.
    def start_again
      if @script
        @script.sysseek(0)
        STDIN.reopen(@script)
      end
      options = { unsetenv_others: true }
      options[:chdir] = @directory if @directory
      exec_under_engine(@args, @env, options)
    end

    def exec_under_engine(args, env, options)
      STDOUT.flush
      STDERR.flush
      ruby = File.readlink("/proc/self/exe")
      EXEC.call(env, [@valgrind[0], @valgrind[0]], *@valgrind.drop(1), ruby, *args, **options)
    rescue SystemCallError => e
      Core.say("cannot start Valgrind (#{@valgrind[0]}) for #{args.first}: #{e.message}")
      Process.exit(1)
    end

    # Bundler's `bundle exec` loads a Ruby script into its own process,
    # $0 set to it: what bundle exec would have exec'd goes under Valgrind.
    def hand_over(file)
      return if LAUNCHERS.include?(File.basename(file.to_s)) || Core.pid != @pid

      exec_under_engine([file.to_s, *ARGV], ENV.to_h, {})
    end

    # Tells gemleak (outside-<pid>.txt) what this process ran outside
    # Valgrind, in a sentence: what it ran was not checked.
    def outside(what)
      @reported = true
      Core.append(Core.run_file(GemLeakHelper::Protocol::OUTSIDE_PREFIX), "#{what.tr("\n", " ")}\n") if Core::RUN_DIR
    rescue StandardError => e
      Core.say("process #{Core.digits(Core.pid)}: #{what}, and cannot tell gemleak so " \
               "(#{e.class}: #{e.message}): what it ran was not checked")
    end

    # Looks at the project's extensions loaded since the last look: a
    # launcher or build step that loads one starts again under Valgrind; at
    # exit, or in a fork, it no longer can.
    def check_extensions(restart: true)
      features = $LOADED_FEATURES
      return if @reported || features.size == @seen

      fresh = features[@seen..] || features
      @seen = features.size
      path = GemLeakHelper.project_extensions(fresh).first
      return if path.nil?

      if Core.pid != @pid
        outside("forked from #{@role}, it loaded #{path} outside Valgrind")
      elsif !restart
        outside("#{@role} loaded #{path} outside Valgrind (seen at its exit)")
      else
        Core.say("#{@name} (pid #{Core.digits(Core.pid)}) loaded #{path} itself: it runs again " \
                 "from the start, under Valgrind")
        start_again
      end
    rescue StandardError => e
      Core.debug(e)
    end
  end

  module Watch
    private

    def require(*args)
      result = super
      GemLeakLaunch.check_extensions if result
      result
    end
  end

  module HandOver
    def load(file, *rest)
      GemLeakLaunch.hand_over(file) if $0 == file
      super
    end
  end
end

case GemLeakLaunch.start
when :launcher
  Object.prepend(GemLeakLaunch::Watch) # Object, as GemLeakHelper::Require below
  Kernel.singleton_class.prepend(GemLeakLaunch::HandOver)
  at_exit { GemLeakLaunch.check_extensions(restart: false) }
  return
when :outside
  Object.prepend(GemLeakLaunch::Watch)
  at_exit { GemLeakLaunch.check_extensions(restart: false) }
  return
when :unchecked
  return
end

GemLeakHelper.start_list
GemLeakHelper.record_new_extensions
# Object, not Kernel: bundler/setup, which RUBYOPT loads after the helper,
# replaces Kernel#require with Ruby's own to turn RubyGems' gem activation
# off; with a module prepended to Kernel that replacement does not hold,
# and a require that fails (an optional dependency probed for) has
# RubyGems look through every gem, warning "Ignoring NAME because its
# extensions are not built. Try: gem pristine" about the project's own
# gemspec. Every object that can call require is an Object.
Object.prepend(GemLeakHelper::Require)
Process.singleton_class.prepend(GemLeakHelper::Fork) if Process.respond_to?(:_fork)
GemLeakHelper::PerTest.start_owners if GemLeakHelper::Runtime.mapped?
if GemLeakHelper::Runtime.mapped? || GemLeakHelper::PerTest.on?
  Object.prepend(GemLeakHelper::PrivateExitBang)
  [Process.singleton_class, Kernel.singleton_class].each { |mod| mod.prepend(GemLeakHelper::ExitBang) }
end
unless GemLeakHelper::Core::RUN_DIR.nil?
  Object.prepend(GemLeakHelper::PrivateExec)
  [Process.singleton_class, Kernel.singleton_class].each { |mod| mod.prepend(GemLeakHelper::Exec) }
end

# Registered before the test framework's own at_exit, so it runs after it.
at_exit do
  begin
    GemLeakHelper::PerTest.finish if GemLeakHelper::PerTest.on? # the last file, a test cut short
    GemLeakHelper::PerTest.exiting # after a check of what a forked child inherited, too
    GemLeakHelper.forget_minitest_lets
    GC.start
    GemLeakHelper.forked if GemLeakHelper.forked? # Ruby before 3.1 has no Process._fork
    GemLeakHelper.record_new_extensions
    GemLeakHelper::Durations.write
  rescue Exception => e # rubocop:disable Lint/RescueException -- never fail the suite
    GemLeakHelper::Core.say("process #{GemLeakHelper::Core.digits(GemLeakHelper::Core.pid)}: the " \
                            "helper failed at exit (#{e.class}: #{e.message})")
  end
end
