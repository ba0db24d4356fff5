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

      # A test that cannot be marked puts its leaks at the wrong test: this
      # process stops marking, and says so.
      def failed(error)
        Core.say("--per-test is off in process #{Core.digits(Core.pid)} after an error " \
                 "(#{error.class}: #{error.message}); its leaks are put at the test before")
        @grain = nil
      end

      # The test frameworks, hooked once each as they load (per test, to
      # time each file's tests, or to run each test again for --growth):
      # their hooks (per_test_frameworks.rb) load with the first of them.
      def install
        return unless on? || Durations.on? || Growth.on?
        return unless defined?(::Minitest) || defined?(::Test::Unit::TestCase) || defined?(::RSpec::Core::Example)

        GemLeakHelper.later("checks") if checks_with_tests?
        GemLeakHelper.later("per_test_frameworks")
        hook_frameworks
      rescue StandardError => e
        Core.debug(e)
      end

      # Whether the tests' hooks check or mark anything while the tests run,
      # or hand them to a client (checks.rb): per test under Valgrind,
      # --per-test's markers under a sanitizer, --growth. Not the owners
      # alone (the fast pass's), nor the tests only timed (--jobs).
      def checks_with_tests?
        (on? && !@owners_only) || Growth.on?
      end

      # Whether a process checks after its tests, or runs them again: what
      # per_test_again.rb does.
      def checks_after_tests?
        (on? && !Runtime.mapped?) || Growth.on?
      end

      # At exit (and before exit! or exec): the last file, the tests since
      # the last check, a test cut short. A process that ran no test (a
      # suite's child) has nothing to close, and never loads checks.rb.
      def finish
        return if @open.nil? && @tests.empty?

        GemLeakHelper.later("checks") if checks_with_tests?
        close_tests if @owners_only || client
      end

      # Under LeakSanitizer, the last marker: the runtime's exit check
      # follows (a report, or none when nothing was lost). Said through the
      # client (checks.rb) where the process made one; else by the runtime
      # straight, as the client says it, where it would have made one at
      # exit (per test: finish).
      def exiting
        Owners.none if @owners
        if defined?(@client)
          @client[:exit]&.call if @client
        elsif on? && Runtime.mapped? && Core.native?
          Native.sanitizer_line("#{Protocol::MARKER_PREFIX}#{Protocol::MARKER_EXIT}\0")
          Native.exiting
        end
      rescue StandardError => e
        Core.debug(e)
      end
    end
  end
end
