# frozen_string_literal: true

require_relative "support"

# --growth (GEMLEAK_GROWTH=K): after the suite, at exit, each test that can
# run again runs K more times, a measure before the first and after each
# (include/gemleak/base/protocol.h, GL_PROTO_GROWTH_VARIABLE). Valgrind's
# client requests and the client library's counting are played here by
# Ruby, writing what they are called with to DIR/calls, in order.
class GrowthTest < Minitest::Test
  include HelperTest

  VALGRIND = <<~'RUBY'
    CALLS = File.join(DIR, "calls")
    def call(text) = File.open(CALLS, "a") { |f| f.write("#{text.to_s.delete("\0")}\n") }
    module GemLeakHelper
      module Native
        def self.valgrind_changed_check = call("CHANGED")
        def self.valgrind_quick_check = call("QUICK")
      end
    end
    GemLeakHelper::PerTest.instance_variable_set(:@client, { marker: ->(text) { call(text) } })
  RUBY

  # A sanitizer's runtime in the process, and a client library that has
  # the counting (@hooks: what growth_start says) or not (nil).
  def sanitizer(hooks)
    counting = if hooks.nil?
                 ""
               else
                 <<~RUBY
                   def self.growth_target(path) = call("TARGET \#{path}")
                   def self.growth_start = #{hooks}.tap { call("START") }
                   def self.growth_checkpoint(text) = call("CHECKPOINT \#{text}")
                 RUBY
               end
    <<~RUBY
      CALLS = File.join(DIR, "calls")
      def call(text) = File.open(CALLS, "a") { |f| f.write("\#{text.to_s.delete("\\0")}\\n") }
      module GemLeakHelper
        module Native
          #{counting}
        end
        module Runtime
          def self.mapped? = true
        end
      end
      GemLeakHelper::PerTest.instance_variable_set(:@client, { marker: ->(text) { call(text) } })
    RUBY
  end

  # Three minitest tests; each counts its runs in DIR/runs.
  SUITE = <<~'RUBY'
    require "minitest/autorun"
    RUNS = File.join(DIR, "runs")
    class GrowTest < Minitest::Test
      %w[a b c].each do |name|
        define_method("test_#{name}") { File.open(RUNS, "a") { |f| f.puts(name) }; assert true }
      end
    end
  RUBY

  def calls(code, env: { "GEMLEAK_GROWTH" => "3" })
    run = run_suite(code, env: env)
    assert_ran(run)
    path = File.join(run.dir, "calls")
    [run, File.exist?(path) ? File.read(path).lines(chomp: true) : []]
  end

  def tests_of(lines, location_file)
    lines.grep(/\Agemleak:growth\t0\t/).map do |line|
      _, _, name, location = line.split("\t")
      assert_match(/\A#{Regexp.escape(location_file)}:\d+\z/, location)
      [name, location]
    end
  end

  def test_each_test_runs_k_more_times_each_measured_under_valgrind
    run, lines = calls(VALGRIND + SUITE)
    assert_match(/^3 runs, 3 assertions, 0 failures/, run.out)
    assert_equal "", run.err
    tests = tests_of(lines, run.suite)
    assert_equal %w[GrowTest#test_a GrowTest#test_b GrowTest#test_c], tests.map(&:first).sort
    expected = ["gemleak:growth"]
    tests.each_with_index do |(name, location), i|
      expected << "QUICK" if i.zero? # the baseline of the first changed check, once
      (0..3).each { |rep| expected.push("gemleak:growth\t#{rep}\t#{name}\t#{location}", "CHANGED") }
    end
    expected << "gemleak:growth\tmeasured\t3"
    assert_equal expected, lines
    # the suite's run, then 3 more of each, in the order the suite ran them
    runs = File.read(File.join(run.dir, "runs")).lines(chomp: true)
    order = tests.map { |name, _| name[/test_(.)/, 1] }
    assert_equal order + order.flat_map { |name| [name] * 3 }, runs
  end

  def test_k_is_the_variable
    _, lines = calls(VALGRIND + SUITE, env: { "GEMLEAK_GROWTH" => "2" })
    assert_equal 3, lines.grep(/\Agemleak:growth\t2\t/).size
    assert_empty lines.grep(/\Agemleak:growth\t3\t/)
    assert_equal "gemleak:growth\tmeasured\t3", lines.last
  end

  # Without --growth (or with a K gemleak would not give), nothing of it:
  # no marker, no test run again.
  def test_off_without_the_variable
    [{}, { "GEMLEAK_GROWTH" => "1" }, { "GEMLEAK_GROWTH" => "21" }, { "GEMLEAK_GROWTH" => "x" }].each do |env|
      run, lines = calls(VALGRIND + SUITE, env: env)
      assert_empty lines, env.inspect
      assert_equal 3, File.read(File.join(run.dir, "runs")).lines.size, env.inspect
    end
  end

  # A test that ends the process when run again (exit!, exit) ends its own
  # repetitions, not the process: it is unmeasured, the others are.
  def test_a_test_that_ends_its_run_is_unmeasured
    run, lines = calls(VALGRIND + <<~'RUBY')
      require "minitest/autorun"
      $runs = Hash.new(0)
      class EndTest < Minitest::Test
        i_suck_and_my_tests_are_order_dependent!
        def test_a_bang = ($runs[:bang] += 1) > 2 ? exit!(3) : assert(true)
        def test_b_exit = ($runs[:exit] += 1) > 1 ? exit(4) : assert(true)
        def test_c_fine = assert(true)
      end
    RUBY
    assert_equal 0, run.status.exitstatus
    unmeasured = lines.grep(/\tunmeasured\t/)
    assert_equal 2, unmeasured.size, lines.join("\n")
    assert_match(/\Agemleak:growth\tunmeasured\tEndTest#test_a_bang\t\S+:\d+\tended its run\z/, unmeasured[0])
    assert_match(/\Agemleak:growth\tunmeasured\tEndTest#test_b_exit\t\S+:\d+\tended its run\z/, unmeasured[1])
    # test_a_bang was measured before its third run, test_b_exit before its second
    assert_equal 2, lines.grep(/\Agemleak:growth\t\d\tEndTest#test_a_bang\t/).size
    assert_equal 1, lines.grep(/\Agemleak:growth\t\d\tEndTest#test_b_exit\t/).size
    assert_equal 4, lines.grep(/\Agemleak:growth\t\d\tEndTest#test_c_fine\t/).size
    assert_equal "gemleak:growth\tmeasured\t1", lines.last
  end

  # A test that leaves a thread running when run again is unmeasured: what
  # is live at its measure depends on how far the thread got. A thread
  # that ends with its test, and one the suite left before the
  # repetitions, change nothing.
  def test_a_test_that_leaves_a_thread_running_is_unmeasured
    run, lines = calls(VALGRIND + <<~'RUBY')
      require "minitest/autorun"
      $left = Thread.new { sleep }
      $runs = 0
      class ThreadTest < Minitest::Test
        i_suck_and_my_tests_are_order_dependent!
        def test_a_joined = assert(Thread.new { 1 + 1 }.join)
        def test_b_left
          # the suite's run leaves none, its runs again one each
          Thread.new { sleep } if ($runs += 1) > 1
          assert true
        end
        def test_c_fine = assert(true)
      end
    RUBY
    assert_equal 0, run.status.exitstatus
    unmeasured = lines.grep(/\tunmeasured\t/)
    assert_equal 1, unmeasured.size, lines.join("\n")
    assert_match(/\Agemleak:growth\tunmeasured\tThreadTest#test_b_left\t\S+:\d+\t/, unmeasured[0])
    assert unmeasured[0].end_with?("\ta thread it started still runs"), unmeasured[0]
    assert_equal 1, lines.grep(/\Agemleak:growth\t\d\tThreadTest#test_b_left\t/).size
    assert_equal 4, lines.grep(/\Agemleak:growth\t\d\tThreadTest#test_a_joined\t/).size
    assert_equal "gemleak:growth\tmeasured\t2", lines.last
  end

  # A test the hooks were told cannot run again (a data-driven test-unit
  # test) is named, unmeasured.
  def test_a_test_that_cannot_run_again_is_unmeasured
    run, lines = calls(VALGRIND + SUITE.sub("class GrowTest", <<~'RUBY'.chomp))
      GemLeakHelper::PerTest.started("Data#test_x[one]", "/abs/data_test.rb", 7)
      GemLeakHelper::PerTest.finished(nil, nil)
      class GrowTest
    RUBY
    assert_match(/^3 runs/, run.out)
    assert_equal "gemleak:growth\tunmeasured\tData#test_x[one]\t/abs/data_test.rb:7\tcannot run again",
                 lines[1]
    assert_equal "gemleak:growth\tmeasured\t3", lines.last
  end

  # Names and locations are escaped as --per-test's markers are.
  def test_names_escaped
    _, lines = calls(VALGRIND + <<~'RUBY')
      require "minitest/autorun"
      class EscapeTest < Minitest::Test
        define_method("test_a b\t100%") { assert true }
      end
    RUBY
    assert_includes lines[2], "\tEscapeTest#test_a%20b%09100%25\t"
  end

  # Under a sanitizer's engine, the client library counts per site of the
  # project's extensions: each is its target, then counting starts, and
  # each measure is a checkpoint, which writes the marker itself.
  def test_sanitizer_counting
    run, lines = calls(sanitizer(1) + "load_extension\n" + SUITE)
    assert_equal "gemleak:growth", lines[0]
    assert_equal ["TARGET #{run.ext}", "START"], lines[1, 2]
    checkpoints = lines.grep(/\ACHECKPOINT /)
    assert_equal 12, checkpoints.size
    assert_match(/\ACHECKPOINT gemleak:growth\t0\tGrowTest#test_.\t/, checkpoints[0])
    assert_empty lines.grep(/\Agemleak:growth\t\d/) # the checkpoint writes them
    assert_equal "gemleak:growth\tmeasured\t3", lines.last
  end

  # A client library without the counting, or a runtime without hooks:
  # every test unmeasured, said, never silently nothing.
  def test_sanitizer_without_hooks
    [nil, 0].each do |hooks|
      run, lines = calls(sanitizer(hooks) + SUITE)
      unmeasured = lines.grep(/\tunmeasured\t/)
      assert_equal 3, unmeasured.size, lines.join("\n")
      unmeasured.each { |line| assert line.end_with?("\tno allocation hooks"), line }
      assert_empty lines.grep(/\ACHECKPOINT /)
      assert_equal "gemleak:growth\tmeasured\t0", lines.last
      assert_equal 3, File.read(File.join(run.dir, "runs")).lines.size # nothing ran again
    end
  end

  # A child a test forks while it runs again, and that returns to the
  # helper (fork without a block), ends there: its parent measures on. One
  # that exits ends with its own status.
  def test_forked_child_leaves_the_measures_to_its_parent
    run, lines = calls(VALGRIND + <<~'RUBY')
      require "minitest/autorun"
      $runs = 0
      class ForkTest < Minitest::Test
        def test_fork
          $runs += 1
          if $runs >= 2 && (pid = fork).nil?
            File.open(File.join(DIR, "child"), "a") { |f| f.puts(Process.pid) }
            exit 7 if $runs == 3
            return
          end
          if pid
            Process.wait(pid)
            File.open(File.join(DIR, "statuses"), "a") { |f| f.puts($?.exitstatus) }
          end
          assert true
        end
      end
    RUBY
    children = File.read(File.join(run.dir, "child")).lines.map(&:to_i)
    assert_equal 3, children.size
    assert_equal [0, 7, 0], File.read(File.join(run.dir, "statuses")).lines.map(&:to_i)
    assert_equal 4, lines.grep(/\Agemleak:growth\t\d\tForkTest#test_fork\t/).size, lines.join("\n")
    assert_equal 1, lines.grep(/\Agemleak:growth\tmeasured\t1\z/).size, lines.join("\n")
  end
end
