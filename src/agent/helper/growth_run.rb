# frozen_string_literal: true

# What --growth does once a process runs tests (growth.rb says what it
# measures): each test kept as it ends, and run again after the suite,
# measured. Loaded as the helper starts where --growth is on
# (GemLeakHelper.later): a run without it never loads it.
module GemLeakHelper
  module Growth
    # Why a test was not measured, as the markers say it.
    CANNOT_RUN_AGAIN = "cannot run again"
    ENDED = "ended its run"
    THREAD = "a thread it started still runs"
    # How long the threads a test started have to end, once run again:
    # long enough for one that ends with its work, not for one that waits.
    THREAD_GRACE = 1.0
    NO_HOOKS = "no allocation hooks"
    PREFIX = (Protocol::MARKER_PREFIX + Protocol::MARKER_GROWTH).freeze

    @tests = []      # PerTest::Test, as each ended
    @pid = nil       # the process that ran them (a forked child starts again)
    @open = nil      # [name, location] of the test begun
    @done = false

    class << self
      # A test begins (as PerTest.started is told).
      def started(name, file, line)
        file = Core::EXPAND.call(file.to_s)
        @open = [PerTest.escape(name), PerTest.escape(line ? "#{file}:#{line}" : file)]
      rescue StandardError => e
        Core.debug(e)
      end

      # It ended; @again runs it again (nil: it cannot be). NAME (nullable)
      # is its name as it is now (RSpec's description, given as it ran).
      def finished(name, again)
        return if @open.nil? || PerTest.again?

        @open[0] = PerTest.escape(name) if name
        @tests = [] unless @pid == Core.pid
        @pid = Core.pid
        @tests << PerTest::Test.new(*@open, again, 0.0)
        @open = nil
      rescue StandardError => e
        Core.debug(e)
      end

      # A forked child ran none of its parent's tests.
      def forked
        @tests = []
        @pid = nil
        @open = nil
      end

      # At exit, after the suite: the repetitions, in the process that ran
      # the tests, once.
      def run
        return if @done || @tests.empty? || @pid != Core.pid || PerTest.again?

        @done = true
        client = PerTest.client
        if client.nil?
          Core.say("--growth: process #{Core.digits(Core.pid)} cannot write its markers " \
                   "(#{Core.native_error || "no client library"}): its tests are not measured")
          return
        end
        Core.with_collector { measure_all(client) }
      rescue SystemExit => e
        raise if Core.pid == @pid

        @child_exit = e # the exit of a child a test forked: the helper ends first
      rescue StandardError => e
        Core.say("--growth: process #{Core.digits(Core.pid)} stopped measuring after an error " \
                 "(#{e.class}: #{e.message})")
      end

      # In a child a test run again forked, which ended with exit: that
      # exit again, its status the child's, once the helper is done.
      def child_exit
        exit_error = @child_exit
        @child_exit = nil
        raise exit_error if exit_error
      end

      private

      def measure_all(client)
        marker = client[:marker]
        # what the suite's last test allocated, its; the repetitions', nobody's
        Owners.none if PerTest.owners?
        marker.call("#{PREFIX}\0")
        measure = measurer(marker)
        measured = 0
        @tests.each do |test|
          why = if test.again.nil? then CANNOT_RUN_AGAIN
                elsif measure.nil? then NO_HOOKS
                else repeat(test, measure)
                end
          # a child a test forked, back here: its parent measures
          return unless Core.pid == @pid

          if why
            marker.call("#{[PREFIX, Protocol::GROWTH_UNMEASURED, test.name, test.location, why].join("\t")}\0")
          else
            measured += 1
          end
        end
        marker.call("#{[PREFIX, Protocol::GROWTH_MEASURED, Core.digits(measured)].join("\t")}\0")
      end

      # Returns: nil when @test ran K times, each measured; else why not.
      # The measure before the first repetition needs no collection of its
      # own when the last thing done was the previous test's last
      # collection and measure (@collected): nothing ran since.
      def repeat(test, measure)
        collect unless @collected
        measure.call("#{[PREFIX, "0", test.name, test.location].join("\t")}\0")
        threads = Thread.list
        REPETITIONS.times do |i|
          @collected = false
          ran = PerTest.run_again(test.again)
          return ENDED unless ran && Core.pid == @pid
          # what is live at the measure would depend on how far it got
          return THREAD if still_running(threads)

          collect
          measure.call("#{[PREFIX, Core.digits(i + 1), test.name, test.location].join("\t")}\0")
        end
        @collected = true
        nil
      end

      # Returns: how to measure (given the marker's text), nil when this
      # process cannot: under a sanitizer, a client library without the
      # allocation hooks, or a runtime that does not take them.
      def measurer(marker)
        return valgrind_measurer(marker) unless Runtime.mapped?
        return nil unless Native.respond_to?(:growth_start) && Native.respond_to?(:growth_checkpoint)

        GemLeakHelper.record_new_extensions
        GemLeakHelper.project_extensions_loaded.each do |path|
          Native.growth_target("#{path}\0")
        end
        return nil if Native.growth_start.zero?

        ->(text) { Native.growth_checkpoint(text) }
      end

      def valgrind_measurer(marker)
        return nil unless Native.respond_to?(:valgrind_changed_check)

        # The first changed check would list every loss record of the
        # process (60 MB of XML on Debian's Ruby 3.1): a quick one right
        # before it, which lists none, is its baseline.
        baseline = Native.respond_to?(:valgrind_quick_check)
        lambda do |text|
          Native.valgrind_quick_check if baseline
          baseline = false
          marker.call(text)
          Native.valgrind_changed_check
        end
      end

      # Returns: whether a thread not in @before (those alive before the
      # test ran again) still runs after THREAD_GRACE seconds in all.
      def still_running(before)
        deadline = Core.monotonic + THREAD_GRACE
        (Thread.list - before).any? do |thread|
          !thread.join([deadline - Core.monotonic, 0].max)
        rescue StandardError, ScriptError
          false # it ended with an error: it runs no more
        end
      end

      def collect
        Sanitizer.scrub(Sanitizer::SCRUB_DEPTH)
        Core::GC_START.call(full_mark: true, immediate_sweep: true)
        Sanitizer.scrub(Sanitizer::SCRUB_DEPTH)
      end
    end
  end
end
