# frozen_string_literal: true

require_relative "support"

# What suites do to the Ruby they run in, and what the helper must record
# all the same: the extensions each process loaded (loaded-PID.txt, on
# which the run's targets and verdict depend), how long each file's tests
# took (durations-PID.txt), the per-test markers; and what it says when it
# cannot.
class SuiteHabitsTest < Minitest::Test
  include HelperTest

  # A popular JSON library's own test suite redefines Integer#to_s in a
  # forked child.
  def test_a_forked_child_that_redefines_integer_to_s_records_its_extensions
    run = run_suite(<<~'RUBY')
      child = fork do
        class Integer
          def to_s(*)
            "#<Integer:0x0001>"
          end
        end
        load_extension
      end
      Process.wait(child)
      puts "child #{child}"
    RUBY
    assert_ran(run)
    child = run.out[/^child (\d+)$/, 1]
    assert_equal "#{run.ext}\n", run.file("loaded-#{child}.txt"), run.files.inspect
    assert_equal "", run.file("loaded-#{run.pid}.txt")
    assert_empty run.files.grep(/#</)
  end

  def test_a_suite_that_clears_env_is_recorded
    run = run_suite(<<~'RUBY')
      ENV.clear
      load_extension
    RUBY
    assert_ran(run)
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
  end

  def test_a_suite_that_replaces_env_is_recorded
    run = run_suite(<<~'RUBY')
      Object.send(:remove_const, :ENV)
      Object.const_set(:ENV, { "GEMLEAK_RUN_DIR" => "/nowhere" })
      load_extension
    RUBY
    assert_ran(run)
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
  end

  # FakeFS puts a File of its own in File's place: File.file? says no to
  # every real file, and what File.open writes stays in memory.
  def test_a_suite_with_a_fake_file_is_recorded_at_exit
    run = run_suite(<<~'RUBY')
      require "stringio"
      class FakeFile < File
        def self.file?(*) = false
        def self.realpath(path, *) = raise(Errno::ENOENT, path)
        def self.open(*) = block_given? ? yield(StringIO.new) : StringIO.new
        def self.write(*) = 0
      end
      Object.send(:remove_const, :File)
      Object.const_set(:File, FakeFile)
      $LOADED_FEATURES << EXT # seen at exit, FakeFS still active
    RUBY
    assert_ran(run)
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
  end

  # rspec-mocks' allow(File).to receive(:open) stubs the real File's methods.
  def test_a_suite_that_stubs_file_methods_is_recorded
    run = run_suite(<<~'RUBY')
      %i[open write file? realpath join expand_path].each do |name|
        File.singleton_class.send(:define_method, name) { |*| raise "stubbed File.#{name}" }
      end
      $LOADED_FEATURES << EXT
    RUBY
    assert_ran(run)
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
  end

  # A test's own `def format` or `def warn` at the top level becomes a
  # private method of Object, which every object calls first.
  def test_per_test_markers_with_top_level_format_and_warn
    run = run_suite(<<~'RUBY', env: { "GEMLEAK_PER_TEST" => "test" })
      MARKS = File.open(File.join(DIR, "markers.txt"), "w")
      MARKS.sync = true
      GemLeakHelper::PerTest.instance_variable_set(
        :@client, { marker: ->(text) { MARKS.write("#{text.delete("\0")}\n") }, check: -> {}, lost: ->(_which) { 0 } }
      )
      def format(*)
        raise "the suite's own format"
      end

      def warn(*)
        nil
      end

      require "minitest/autorun"
      class HabitTest < Minitest::Test
        define_method("test_with space") { assert true }
      end
    RUBY
    assert_ran(run)
    line = File.read(run.suite).lines.index { |l| l.include?("define_method") } + 1
    name = "HabitTest#test_with%20space\t#{run.suite}:#{line}"
    assert_equal ["gemleak:setup", "gemleak:start\t#{name}", "gemleak:end\t#{name}"],
                 File.read(File.join(run.dir, "markers.txt")).lines(chomp: true)
    refute_match(/per-test/, run.err)
  end

  # Timecop (mock_process_clock) and friends make Process.clock_gettime
  # stand still: the durations the next --jobs shares are balanced by
  # must come from the real clock.
  def test_durations_with_a_mocked_clock
    run = run_suite(<<~'RUBY', env: { "GEMLEAK_DURATIONS" => "1" })
      require "minitest/autorun"
      Process.singleton_class.prepend(Module.new { def clock_gettime(*) = 0.0 })
      class SlowTest < Minitest::Test
        def test_slow
          sleep 0.3
        end
      end
    RUBY
    assert_ran(run)
    durations = run.file("durations-#{run.pid}.txt")
    refute_nil durations, run.files.inspect
    milliseconds, file = durations.chomp.split("\t")
    assert_equal run.suite, file
    assert_operator milliseconds.to_i, :>=, 250, durations
  end

  # What a verdict depends on is never lost without a word.
  def test_says_when_it_cannot_record_the_extensions
    run = run_suite(<<~'RUBY', env: { "GEMLEAK_RUN_DIR" => "/nonexistent/gemleak-run" })
      load_extension
    RUBY
    assert_ran(run)
    said = "gemleak: process #{run.pid} could not record the extensions it loaded in " \
           "/nonexistent/gemleak-run (Errno::ENOENT: "
    assert_match(/^#{Regexp.escape(said)}/, run.err)
    assert_equal 1, run.err.scan(/could not record/).size, run.err
  end

  # What it says names paths and errors that may hold anything: a control
  # character reaches the terminal escaped, as gemleak's own messages do.
  def test_what_it_says_is_one_line_escaped
    odd = "/nonexistent/x\e[2J\ngemleak: pass\u009b"
    run = run_suite(<<~'RUBY', env: { "GEMLEAK_RUN_DIR" => odd })
      load_extension
    RUBY
    assert_ran(run)
    refute_match(/[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f]/, run.err.dup.force_encoding("UTF-8"))
    refute_match(/^gemleak: pass/, run.err)
    assert_includes run.err, "in /nonexistent/x\\x1b[2J\\ngemleak: pass\\u009b (Errno::ENOENT: "
  end

  def test_says_when_per_test_stops
    run = run_suite(<<~'RUBY', env: { "GEMLEAK_PER_TEST" => "test" })
      GemLeakHelper::PerTest.instance_variable_set(
        :@client, { marker: ->(_text) { raise IOError, "no marker" }, check: -> {} }
      )
      require "minitest/autorun"
      class SomeTest < Minitest::Test
        def test_one = assert(true)
        def test_two = assert(true)
      end
    RUBY
    assert_ran(run)
    assert_match(/^gemleak: --per-test is off in process #{run.pid} after an error \(IOError: no marker\)/,
                 run.err)
    assert_equal 1, run.err.scan(/--per-test is off/).size, run.err
  end

  # A require that fails (a subprocess of the suite without its load path,
  # a gem not installed) prints on Ruby 3.4 and later what it prints
  # natively: the error's backtrace has no frame of the helper's require
  # hook, and its locations stay, as many as natively, for those who read
  # them (error_highlight, RSpec). Before 3.4 an error's backtrace cannot
  # be set with its locations: there the frame stays, and the locations.
  FAILING_REQUIRE = <<~'RUBY'
    begin
      require "gemleak_no_such_feature"
    rescue LoadError => e
      puts "locations #{e.backtrace_locations.nil? ? "none" : e.backtrace_locations.size}"
    end
    require "gemleak_no_such_feature"
  RUBY

  def test_a_failing_require_shows_only_the_suites_frames
    ruby = ruby34
    skip "no Ruby 3.4 or newer (GEMLEAK_TEST_RUBY34; scripts/build-ruby builds one)" if ruby.nil?
    helped = run_suite(FAILING_REQUIRE, ruby: ruby)
    native = run_suite(FAILING_REQUIRE, ruby: ruby, env: { "RUBYOPT" => nil })
    refute helped.status.success?
    assert_equal native.status.exitstatus, helped.status.exitstatus
    assert_equal native.err.gsub(native.dir, "DIR"), helped.err.gsub(helped.dir, "DIR")
    refute_match(/gemleak_helper/, helped.err)
    assert_equal native.out.lines.last, helped.out.lines.last
  end

  def test_a_failing_require_keeps_its_locations_before_ruby_34
    skip "this Ruby (#{RUBY_VERSION}) sets a backtrace with its locations" if RUBY_VERSION >= "3.4"
    helped = run_suite(FAILING_REQUIRE)
    native = run_suite(FAILING_REQUIRE, env: { "RUBYOPT" => nil })
    assert_equal native.status.exitstatus, helped.status.exitstatus
    refute_equal "locations none\n", helped.out.lines.last
    assert_equal native.err.lines.first, helped.err.lines.first
  end

  # A test that fails reads as it does natively: the hooks' frames, between
  # the framework's own, are left out of the backtrace that test-unit and
  # RSpec show (minitest cuts it above its own frames already).
  def test_a_failing_test_shows_the_frames_it_shows_natively
    {
      "test-unit" => <<~'RUBY',
        require "test/unit"
        class FailTest < Test::Unit::TestCase
          def test_fail = assert_equal(1, 2)
          def test_error = raise("boom")
        end
      RUBY
      "rspec" => <<~'RUBY',
        require "rspec/autorun"
        RSpec.describe("fail") do
          it("fails") { expect(1).to eq(2) }
          it("errors") { raise "boom" }
        end
      RUBY
    }.each do |framework, code|
      helped = run_suite(code, env: { "GEMLEAK_DURATIONS" => "1" })
      native = run_suite(code, env: { "RUBYOPT" => nil })
      timing = /[0-9]+\.[0-9]+ ?(seconds|s)|[0-9.]+ (tests|assertions)\/s|[0-9.]+% passed/
      shown = ->(run) { run.out.sub(/\Apid \d+\n/, "").gsub(run.dir, "DIR").gsub(timing, "T") }
      assert_equal shown.call(native), shown.call(helped), framework
      assert_match(/boom/, helped.out, framework)
      refute_match(/gemleak_helper/, helped.out, framework)
    end
  end
end
