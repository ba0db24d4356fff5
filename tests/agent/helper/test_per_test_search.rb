# frozen_string_literal: true

require_relative "support"

# --per-test: how the helper finds the test that lost memory, with a
# client that plays Valgrind: a check costs a little time, and what the
# tests "leak" is counted in Ruby. What the helper wrote (its markers, and
# what each check found lost beyond the last) is what gemleak reads.
class PerTestSearchTest < Minitest::Test
  include HelperTest

  # A minitest suite of COUNT tests; LEAKS maps a test number to what it
  # loses each run (:once: on its first run only). The helper's clock is
  # the suite's: a check costs 0.02 s, a test nothing, whatever else the
  # machine runs (the search's groups follow what tests and checks cost:
  # on a busy machine a test that took a few milliseconds made one
  # check more).
  def search(count, leaks)
    code = <<~RUBY
      CHECKS = File.open(File.join(DIR, "checks.txt"), "w")
      CHECKS.sync = true
      $lost = 0
      $marker = nil
      $seen = 0
      $clock = 0.0
      GemLeakHelper::Core.define_singleton_method(:monotonic) { $clock }
      GemLeakHelper::PerTest.instance_variable_set(
        :@client, {
          marker: ->(text) { $marker = text.delete("\\0") },
          check: -> { $clock += 0.02; CHECKS.write("\#{$marker}\\t=> \#{$lost - $seen}\\n"); $seen = $lost },
          lost: ->(which) { which.zero? ? $lost * 6 : $lost }
        }
      )
      LEAKS = #{leaks.inspect}
      $runs = Hash.new(0)
      require "minitest/autorun"
      class SearchTest < Minitest::Test
        #{count}.times do |i|
          define_method("test_\#{i + 1}") do
            $runs[i + 1] += 1
            leak = LEAKS[i + 1]
            $lost += 1 if leak == 1 || (leak == :once && $runs[i + 1] == 1)
            assert true
          end
        end
      end
    RUBY
    run = run_suite(code, env: { "GEMLEAK_PER_TEST" => "test" })
    assert_ran(run)
    assert_match(/^#{count} runs, #{count} assertions, 0 failures/, run.out)
    refute_match(/per-test/, run.err)
    File.read(File.join(run.dir, "checks.txt")).lines(chomp: true)
  end

  # The tests each check after one test run again alone found lost.
  def named(checks)
    checks.filter_map { |line| line[/^gemleak:again\t1\t(SearchTest#test_\d+)\t.*=> [1-9]/, 1] }
  end

  def test_one_leaking_test_of_sixty_in_five_checks
    checks = search(60, { 37 => 1 })
    assert_equal ["SearchTest#test_37"], named(checks)
    assert_match(/^gemleak:setup\t=> 0$/, checks[0])
    assert_match(/^gemleak:tests\t60\t.*=> 1$/, checks[1])
    assert_operator checks.size, :<=, 5, checks.join("\n")
  end

  def test_two_leaking_tests_are_both_named
    checks = search(40, { 3 => 1, 29 => 1 })
    assert_equal ["SearchTest#test_29", "SearchTest#test_3"], named(checks).sort
  end

  # A test that lost memory on its first run only: no check after a test
  # run again alone finds anything, and nothing is named.
  def test_a_test_that_leaks_once_is_named_by_none
    checks = search(20, { 11 => :once })
    assert_equal [], named(checks)
    assert_match(/^gemleak:tests\t20\t.*=> 1$/, checks[1])
  end

  # Issue 26, item 13: a test that ends the process when it runs again
  # (exit!, exit, abort) ends its run again, not the suite; a child a test
  # forks while it runs again still exits as it says.
  def test_running_a_test_again_never_ends_the_suite
    code = <<~RUBY
      $lost = 0
      $marker = nil
      GemLeakHelper::PerTest.instance_variable_set(
        :@client, {
          marker: ->(text) { $marker = text.delete("\\0") },
          check: -> { sleep 0.02 },
          lost: ->(which) { which.zero? ? $lost * 6 : $lost }
        }
      )
      $runs = Hash.new(0)
      require "minitest/autorun"
      class AgainTest < Minitest::Test
        i_suck_and_my_tests_are_order_dependent!
        def again? = ($runs[name] += 1) > 1
        def test_1_loses = ($lost += 1)
        def test_2_exit_bang = (exit!(0) if again?)
        def test_3_exit = (exit(0) if again?)
        def test_4_abort = (abort("run again") if again?)
        def test_5_child
          status = Process.wait2(fork { exit!(3) })[1].exitstatus
          warn "a child exited \#{status}"
        end
        def test_6_last = warn("the last test ran")
      end
    RUBY
    run = run_suite(code, env: { "GEMLEAK_PER_TEST" => "test" })
    assert_ran(run)
    # minitest's summary: the suite ran to its end (run again, a test prints too)
    assert_match(/^6 runs, 0 assertions, 0 failures/, run.out)
    assert_match(/^the last test ran$/, run.err)
    assert_operator run.err.scan(/^a child exited 3$/).size, :>=, 2, run.err
    refute_match(/^a child exited [^3]/, run.err)
  end

  def test_nothing_lost_two_checks
    checks = search(30, {})
    assert_equal 2, checks.size, checks.join("\n")
  end
end
