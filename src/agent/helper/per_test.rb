# frozen_string_literal: true

module GemLeakHelper
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
  # (The search is per_test_again.rb; the test frameworks' hooks,
  # per_test_frameworks.rb; exit! and exec, exit_exec.rb.)
  #
  # NAME is "Class#test_name" or RSpec's full description (empty per file);
  # LOCATION is "/absolute/file.rb:LINE" (the file alone per file). Bytes
  # that would be ambiguous (%, controls, space) are written %XX.
  #
  # The client requests need native code: gemleak writes a small library
  # beside this file (GEMLEAK_CLIENT), which the helper requires as a Ruby
  # extension (GemLeakHelper::Native, Core.native?).
  module PerTest
    @grain = Core::VARIABLES[Protocol::PER_TEST_VARIABLE]
    @grain = nil unless ["test", "each", "file", Protocol::PER_TEST_OWNERS].include?(@grain)
    # The owners alone (GemLeak's fast pass, under a sanitizer): which test
    # allocated each block, for the exact pass to run those tests only; no
    # marker a test, no attribution in the report.
    @owners_only = @grain == Protocol::PER_TEST_OWNERS
    @grain = "test" if @owners_only
    # The exact pass: the tests to run ("NAME\tLOCATION" as escaped here;
    # "\tFILE": every test of FILE); the others are skipped. nil: all.
    @only = begin
      path = Core::VARIABLES[Protocol::EXACT_TESTS_VARIABLE].to_s
      path.empty? ? nil : File.readlines(path, chomp: true).to_h { |line| [line.b, true] }
    rescue SystemCallError
      nil
    end
    @client_path = Core::VARIABLES[Protocol::CLIENT_VARIABLE]&.dup
    # Whether possibly lost memory counts (--leak-kinds has "possible").
    @possible = Core::VARIABLES[Protocol::LEAK_KINDS_VARIABLE].to_s.split(",").include?("possible")
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
    ESCAPED = /[%\x00-\x20\x7f]/n.freeze
    ESCAPES = ([0x25, 0x7f] + (0x00..0x20).to_a).to_h { |byte| [byte.chr.b, Kernel.format("%%%02X", byte)] }.freeze
    # Per test, a check when the tests since the last one ran this many
    # times as long as it cost: checks are then at most a fifth of the time.
    CHECK_EVERY = 4.0

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

      # Under a sanitizer's engine, Owners records which test allocates.
      def owners?
        @owners
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

        @owners = !@client_path.nil? && Owners.start(@client_path, setup: !@owners_only)
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
        begin
          raise Core.native_error unless Core.native?
          return @client = Sanitizer.client if Runtime.mapped?
          return @client if Native.running_on_valgrind.zero?

          @client = {
            marker: ->(text) { Native.valgrind_marker(text) },
            check: -> { Native.valgrind_check },
            full_check: -> { Native.valgrind_full_check },
            lost: ->(which) { Native.valgrind_lost(which) },
          }
        rescue LoadError, StandardError => e
          what = on? ? "--per-test is off" : "what it inherited may be counted twice"
          Core.say("#{what} in process #{Core.digits(Core.pid)}: #{e.message}")
          @client = nil
        end
        @client
      end

      # A test's name or location as a field of a marker: its bytes, with
      # %, space and control bytes written %XX, at most FIELD_BYTES. Most
      # need nothing done (a method's name, a path): those are returned as
      # they are, without the three strings made for each of the others.
      def escape(text)
        text = text.to_s
        return text if text.bytesize <= FIELD_BYTES && text.ascii_only? && !ESCAPED.match?(text)

        text.b[0, FIELD_BYTES].gsub(ESCAPED, ESCAPES)
      end

      # Whether a test's hook makes the proc that runs it again: only where
      # something does (--growth; per test under Valgrind, whose search runs
      # the tests that lost again). Under a sanitizer's engine the owners
      # say which test allocated a block, and nothing runs again in the
      # process: a proc made for every test was garbage at once.
      def runs_again?
        Growth.on? || (on? && @grain != "file" && keeps_tests?)
      end

      # Whether an ended test is kept, to be checked with the tests after
      # it and run again if they lost: per test under Valgrind. Per file,
      # after each test (each), or with owners, finished does not keep it.
      def keeps_tests?
        @grain != "each" && !@owners
      end

      # A test that cannot be marked puts its leaks at the wrong test: this
      # process stops marking, and says so.
      def failed(error)
        Core.say("--per-test is off in process #{Core.digits(Core.pid)} after an error " \
                 "(#{error.class}: #{error.message}); its leaks are put at the test before")
        @grain = nil
      end

      def marker(*fields)
        # NUL-terminated: the client reads up to the first NUL, whatever
        # Ruby's own buffer holds.
        @client[:marker].call("#{fields.join("\t")}\0")
      end

      # Lets the memory the finished tests dropped be freed (objects' dfree
      # run), so that what they leaked is lost now, not at a later check.
      # Returns: what was lost since the last check (see grown).
      # The C stack below where the hooks run is written over first, before
      # the collection and before the check, as under a sanitizer
      # (Sanitizer.scrub): the frames a test returned from (a collection
      # deep in the extension) leave copies of pointers there, which the
      # collection would take for live objects and Valgrind's scan for
      # references, and a block the test lost would be lost only at a
      # later test's check.
      def check(*fields)
        began = Core.monotonic
        Core.with_collector do
          Sanitizer.scrub(Sanitizer::SCRUB_DEPTH)
          GC.start
          Sanitizer.scrub(Sanitizer::SCRUB_DEPTH)
          marker(*fields)
          @client[:check].call
        end
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

        if Runtime.mapped?
          # Under a sanitizer, no check (it cost 0.05 s a child): gemleak
          # run writes one in from the parent's report (what both lost).
          marker(Protocol::MARKER_PREFIX + Protocol::MARKER_FORKED)
          marker(Protocol::MARKER_PREFIX + Protocol::MARKER_PARENT, Process.ppid.to_s)
        else
          # What garbage the parent held but had not collected owns is lost
          # now, not at the child's exit, where it would seem the child's.
          Core.collect
          marker(Protocol::MARKER_PREFIX + Protocol::MARKER_FORKED)
          @client[:full_check].call
        end
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

      # Returns: FILE absolute (File.expand_path), the same string for
      # each test of an absolute FILE, expanded once (a microsecond of the
      # hooks' some 11 a test); a relative one is expanded each time, from
      # the directory the test runs in.
      def expanded(file)
        file = file.to_s
        return Core::EXPAND.call(file) unless file.start_with?("/")

        (@expanded ||= {})[file] ||= Core::EXPAND.call(file).freeze
      end

      # A test begins: NAME, and where it is ("/abs/file.rb", line).
      def started(name, file, line)
        Growth.started(name, file, line) if Growth.on?
        return unless on? && client

        ready
        file = expanded(file)
        if @grain == "file"
          return if @open && @open[1] == escape(file)

          finish
          @open = ["", escape(file)]
        else
          @open = [escape(name), escape(line ? "#{file}:#{line}" : file)]
        end
        @began = Core.monotonic
        Owners.test(*@open) if @owners
        test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_START, *@open) unless @owners_only
      rescue StandardError => e
        failed(e)
      end

      # A test ended (@again: how to run it again, nil if it cannot be);
      # per file, its file ends when the next file's test begins, or at
      # exit. NAME (nullable) is its name as it is now: an RSpec example
      # without a description gets one as it runs.
      def finished(name = nil, again = nil)
        Growth.finished(name, again) if Growth.on?
        return unless on? && @open && @grain != "file"

        @open[0] = escape(name) if name
        unless keeps_tests?
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

      # The check after the tests ended since the last one, and the search
      # for the one that lost (per_test_again.rb, loaded as the helper
      # starts where they are checked: under a sanitizer's engine they
      # never are, the owners say which test allocated a block).
      def close
        tests = @tests
        return if tests.empty?

        @tests = []
        GemLeakHelper.later("per_test_again")
        check_tests(tests)
      end

      # The test frameworks, hooked once each as they load (per test, to
      # time each file's tests, or to run each test again for --growth):
      # their hooks (per_test_frameworks.rb) load with the first of them.
      def install
        return unless on? || Durations.on? || Growth.on?
        return unless defined?(::Minitest) || defined?(::Test::Unit::TestCase) || defined?(::RSpec::Core::Example)

        GemLeakHelper.later("per_test_frameworks")
        hook_frameworks
      rescue StandardError => e
        Core.debug(e)
      end

      # Whether a process checks after its tests, or runs them again: what
      # per_test_again.rb does.
      def checks_after_tests?
        (on? && !Runtime.mapped?) || Growth.on?
      end

      # At exit: the last file, the tests since the last check, a test cut short.
      def finish
        return unless client

        close
        return unless @open

        fields = @open
        @open = nil
        if @owners
          test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_END, *fields) unless @owners_only
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
    end
  end
end
