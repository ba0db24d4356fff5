# frozen_string_literal: true

# --per-test's search for the test that lost memory (per_test.rb says when
# it runs): the tests since a check that found a loss run again, each
# group of them a different number of times, until a check names the test.
# Loaded as the helper starts where a check follows the tests (per test
# under Valgrind) or where tests run again (--growth): GemLeakHelper.later.
module GemLeakHelper
  module PerTest
    # At most this many groups run again before one check: group m runs m
    # times (0 to GROUPS - 1), so a test may run GROUPS - 1 times more.
    GROUPS = 8
    # Tests named for what one check found lost: a report names a few.
    ENOUGH = 5

    class << self
      # The check after @tests, which ended since the last one (per_test.rb's
      # close); when they lost something, which of them did.
      def check_tests(tests)
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
        tests.each { |test| run_again(test.again) }
        tests.size
      end

      # Runs a test again by its @again lambda, the hooks standing aside.
      # Returns: false when it would have ended the process (its run
      # ended there), true otherwise, failed or not. (--growth runs its
      # repetitions so too.)
      def run_again(again)
        @again = true
        @again_pid = Core.pid
        @ended = false
        again.call
        !@ended
      rescue StandardError, ScriptError => e
        Core.debug(e) # a test that fails when run again may just not leak
        true
      rescue Ended, SystemExit => e
        raise unless Core.pid == @again_pid

        Core.debug(e)
        false
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
    end
  end
end
