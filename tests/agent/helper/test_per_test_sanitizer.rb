# frozen_string_literal: true

require_relative "support"

# --per-test under a sanitizer's engine: the client library records which
# test allocates each block (GemLeakHelper::Owners), and the helper tells it
# when each test starts; markers are lines of the report file, through the
# runtime's interface (GemLeakHelper::Sanitizer). Both are played here by
# Ruby, writing what they are called with into the report file: no check
# runs while the tests do, and no test runs twice.
class PerTestSanitizerTest < Minitest::Test
  include HelperTest

  # Client and owners that write what they are told, in order, to
  # DIR/lsan.report; the suite after it.
  FAKES = <<~'RUBY'
    GemLeakHelper.later("checks") # the client, as the helper loads it with the first check
    REPORT = File.join(DIR, "lsan.report")
    def append(text) = File.open(REPORT, "a") { |f| f.write(text) }
    GemLeakHelper::PerTest.instance_variable_set(
      :@client, GemLeakHelper::Sanitizer.client(
        marker: ->(text) { append("#{text.delete("\0")}\n") },
        check: -> { append("CHECK\n"); 1 },
        root: ->(_address, _size) {},
        unroot: ->(_address, _size) {},
        address: ->(_object) { 0 }
      )
    )
    owners = GemLeakHelper::Owners
    owners.instance_variable_set(:@owner, ->(text) { append("OWNER #{text.nil? ? "none" : text.delete("\0").inspect}\n") })
    owners.instance_variable_set(:@write, -> { append("OWNED\n") })
    GemLeakHelper::PerTest.instance_variable_set(:@owners, true)
  RUBY

  # BEFORE: what runs first, before FAKES.
  def report(code, env: { "GEMLEAK_PER_TEST" => "test" }, before: "")
    run = run_suite(before + FAKES + code, env: env)
    assert_ran(run)
    refute_match(/per-test/, run.err)
    [run, File.read(File.join(run.dir, "lsan.report")).lines(chomp: true)]
  end

  def test_each_test_owns_what_it_allocates_and_nothing_is_checked
    run, lines = report(<<~RUBY)
      require "minitest/autorun"
      class OwnTest < Minitest::Test
        20.times { |i| define_method("test_\#{i + 1}") { assert true } }
      end
    RUBY
    assert_match(/^20 runs, 20 assertions, 0 failures/, run.out)
    refute_includes lines, "CHECK"
    owners = lines.grep(/^OWNER /)
    assert_equal 21, owners.size, lines.join("\n")
    assert_equal "OWNER none", owners.last
    # each test owns from its start marker on, and ends with its own end
    first = lines.index { |line| line.start_with?("OWNER \"OwnTest#test_") }
    name, location = lines[first][/"(.*)"/, 1].split("\\t")
    assert_equal "gemleak:start\t#{name}\t#{location}", lines[first + 1]
    assert_equal "gemleak:end\t#{name}\t#{location}", lines[first + 2]
    assert_match(%r{\A/.*suite_test\.rb:\d+\z}, location)
    assert_equal "gemleak:exit", lines.last
  end

  # Ruby's object pages go to the runtime as few root regions as they are
  # runs of adjacent pages (each region costs a read of the process's
  # memory map at each check); a run that grows is given again whole.
  def test_pages_are_roots_a_run_of_adjacent_pages_at_a_time
    run = run_suite(<<~'RUBY', env: { "GEMLEAK_PER_TEST" => nil })
      GemLeakHelper.later("checks") # what a check does, loaded with the first check
      calls = []
      sanitizer = GemLeakHelper::Sanitizer
      sanitizer.client(marker: ->(_) {}, check: -> { 1 }, address: ->(_) { 0 },
                       root: ->(a, n) { calls << "root #{a.to_s(16)} #{n.to_s(16)}" },
                       unroot: ->(a, n) { calls << "unroot #{a.to_s(16)} #{n.to_s(16)}" })
      page = GemLeakHelper::Sanitizer::PAGE
      pages = sanitizer.instance_variable_get(:@pages)
      [0x100, 0x101, 0x102, 0x200].each { |n| pages[n * page] = true }
      sanitizer.send(:register_ranges)
      calls << "--"
      pages[0x103 * page] = true
      sanitizer.send(:register_ranges)
      puts calls
    RUBY
    assert_ran(run)
    assert_equal ["root 1000000 30000", "root 2000000 10000", "--",
                  "unroot 1000000 30000", "root 1000000 40000"], run.out.lines(chomp: true).drop(1)
  end

  # A child forked during a test checks what it inherited, as under every
  # engine; nothing else is checked.
  def test_a_forked_child_checks_what_it_inherited_only
    _run, lines = report(<<~RUBY)
      require "minitest/autorun"
      class ForkTest < Minitest::Test
        def test_fork
          pid = fork { exit 0 }
          Process.wait(pid)
          assert_predicate $?, :success?
        end
      end
    RUBY
    forked = lines.index("gemleak:forked")
    refute_nil forked, lines.join("\n")
    assert_equal ["CHECK", "gemleak:checked"], lines[forked + 1, 2]
    assert_equal 1, lines.count("CHECK")
  end

  # exit! runs no atexit handler: the owners' lines are written, and the
  # last check made, before it; no "checked" after it (it stands for the
  # runtime's check at exit). Kernel#exit! stays private.
  def test_exit_bang_writes_the_owners_and_checks
    _run, lines = report(<<~RUBY)
      require "minitest/autorun"
      GemLeakHelper::Runtime.singleton_class.define_method(:mapped?) { true }
      Object.prepend(GemLeakHelper::PrivateExitBang)
      Process.singleton_class.prepend(GemLeakHelper::ExitBang)
      class ExitTest < Minitest::Test
        def test_fork_exit_bang
          assert_raises(NoMethodError) { Object.new.exit! }
          pid = fork { exit!(0) }
          Process.wait(pid)
          assert_predicate $?, :success?
        end
      end
    RUBY
    child = lines[lines.index("gemleak:forked")..]
    bang = child.index("OWNED")
    refute_nil bang, child.join("\n")
    # "live": the report after it is of a check made while Ruby ran
    assert_equal "gemleak:live", child[bang + 1]
    assert_equal "CHECK", child[bang + 2]
    refute_equal "gemleak:checked", child[bang + 3]
  end

  # A Ruby that runs no test (a suite's child Ruby) loads the checks
  # (checks.rb) only when it needs one: a child it forks checks what it
  # inherited, exit! and exec make the check the process would not make,
  # as in a suite's process.
  def test_a_ruby_without_tests_loads_the_checks_when_it_forks_exits_or_execs
    before = "puts \"checks: \#{GemLeakHelper::PerTest.respond_to?(:exit_bang)}\"\n"
    run, lines = report(<<~'RUBY', env: { "GEMLEAK_PER_TEST" => nil }, before: before)
      GemLeakHelper::Runtime.singleton_class.define_method(:mapped?) { true }
      Object.prepend(GemLeakHelper::PrivateExitBang)
      pid = fork { exit!(0) }
      Process.wait(pid)
      puts $?.exitstatus
      pid = fork { exec("true") }
      Process.wait(pid)
      puts $?.exitstatus
    RUBY
    # loaded by the fakes (as a first check would), not before
    assert_equal ["checks: false", "0", "0"], run.out.lines(chomp: true).drop(1)
    forks = lines.each_index.select { |i| lines[i] == "gemleak:forked" }
    assert_equal 2, forks.size, lines.join("\n")
    bang = lines[forks[0]...forks[1]]
    assert_equal ["OWNED", "gemleak:live", "CHECK"], bang.last(3), lines.join("\n")
    # the second child's lines, after "forked" and "parent" (the parent's
    # own, at its exit, follow)
    assert_equal ["gemleak:live", "CHECK", "gemleak:exec"], lines[forks[1] + 2, 3], lines.join("\n")
  end

  # exit! in a rescue, the suite's error in $!, loads the checks as any
  # exit! does (Kernel#load raises $! again once it has loaded a file:
  # exit! would have raised the suite's error) and exits as asked.
  def test_exit_bang_in_a_rescue_loads_the_checks_and_exits
    run = run_suite(<<~'RUBY', env: { "GEMLEAK_PER_TEST" => nil })
      REPORT = File.join(DIR, "lsan.report")
      def append(text) = File.open(REPORT, "a") { |f| f.write(text) }
      GemLeakHelper::Runtime.singleton_class.define_method(:mapped?) { true }
      GemLeakHelper::PerTest.instance_variable_set(
        :@client, { marker: ->(text) { append("#{text.delete("\0")}\n") }, last_check: -> { append("LAST\n") } }
      )
      Object.prepend(GemLeakHelper::PrivateExitBang)
      append("checks: #{GemLeakHelper::PerTest.respond_to?(:exit_bang)}\n")
      begin
        raise "the suite's error"
      rescue RuntimeError
        exit!(3)
      end
    RUBY
    assert_equal 3, run.status.exitstatus, run.err
    assert_equal "", run.err
    assert_equal "checks: false\nLAST\n", File.read(File.join(run.dir, "lsan.report"))
  end

  # A child that cannot make its check before exit! takes back the word
  # that the engine was in it: with no report, it is not counted as checked.
  def test_exit_bang_without_its_check_is_not_counted_as_checked
    run, _lines = report(<<~RUBY)
      require "minitest/autorun"
      GemLeakHelper::Runtime.singleton_class.define_method(:mapped?) { true }
      Process.singleton_class.prepend(GemLeakHelper::ExitBang)
      class FailingCheckTest < Minitest::Test
        def test_fork_exit_bang
          pid = fork do
            GemLeakHelper::PerTest.instance_variable_get(:@client)[:last_check] = -> { raise "no check" }
            File.write(File.join(DIR, "child.txt"), "\#{Process.pid} \#{File.exist?(GemLeakHelper::Core.run_file("engine-"))}")
            Process.exit!(0)
          end
          Process.wait(pid)
          assert_predicate $?, :success?
        end
      end
    RUBY
    child, had = File.read(File.join(run.dir, "child.txt")).split
    assert_equal "true", had
    refute File.exist?(File.join(run.run_dir, "engine-#{child}.txt"))
    assert_match(/process #{child} ends with exit! and could not check for leaks first \(RuntimeError: no check\): it is not counted as checked/, run.err)
  end
  # Under a sanitizer's engine nothing runs a test again in the process
  # (the owners name the test): no test's hook makes the proc that would,
  # minitest's or test-unit's. A name that needs escaping is escaped as
  # ever; one that does not is the field as it is.
  def test_owners_make_no_proc_to_run_a_test_again
    run, lines = report(<<~RUBY)
      agains = []
      GemLeakHelper::PerTest.singleton_class.prepend(Module.new do
        define_method(:finished) { |name = nil, again = nil| agains << again.class; super(name, again) }
      end)
      at_exit { File.write(File.join(DIR, "agains.txt"), agains.uniq.inspect) }
      require "minitest/autorun"
      class AgainTest < Minitest::Test
        3.times { |i| define_method("test_\#{i + 1}") { assert true } }
        define_method("test_with 100% of a name") { assert true }
      end
    RUBY
    assert_match(/^4 runs, 4 assertions, 0 failures/, run.out)
    assert_equal "[NilClass]", File.read(File.join(run.dir, "agains.txt"))
    owners = lines.grep(/^OWNER "AgainTest/)
    assert_equal 4, owners.size, lines.join("\n")
    assert owners.any? { |line| line.start_with?('OWNER "AgainTest#test_with%20100%25%20of%20a%20name\\t') }, owners.join("\n")
    assert owners.any? { |line| line.start_with?('OWNER "AgainTest#test_2\\t') }, owners.join("\n")
  end
end

# The fast pass of --engine lsan records owners for the exact pass alone
# (GEMLEAK_PER_TEST=owners): each test owns what it allocates, and no
# marker of a test reaches the report. The exact pass runs only the tests
# it names (GEMLEAK_EXACT_TESTS); the others are skipped.
class ExactPassHelperTest < Minitest::Test
  include HelperTest

  SUITE = <<~RUBY
    require "minitest/autorun"
    class PickTest < Minitest::Test
      5.times { |i| define_method("test_\#{i + 1}") { File.write(File.join(DIR, "ran"), "\#{name}\\n", mode: "a") } }
    end
  RUBY

  def test_owners_alone_write_no_test_marker
    run = run_suite(PerTestSanitizerTest::FAKES + SUITE, env: { "GEMLEAK_PER_TEST" => "owners" })
    assert_ran(run)
    lines = File.read(File.join(run.dir, "lsan.report")).lines(chomp: true)
    assert_equal 5, lines.grep(/^OWNER "PickTest#test_/).size, lines.join("\n")
    assert_empty lines.grep(/^gemleak:(start|end)/), lines.join("\n")
  end

  def test_the_exact_pass_runs_the_tests_named
    dir = Dir.mktmpdir("gemleak-helper-test-")
    @dirs << dir
    list = File.join(dir, "tests.txt")
    line = (PerTestSanitizerTest::FAKES + PRELUDE + SUITE).lines.index { |text| text.include?("define_method") } + 1
    File.write(list, "PickTest#test_3\t#{File.realpath(dir)}/suite_test.rb:#{line}\n")
    run = run_suite(PerTestSanitizerTest::FAKES + SUITE, dir: dir,
                    env: { "GEMLEAK_PER_TEST" => "owners", "GEMLEAK_EXACT_TESTS" => list })
    assert_ran(run)
    assert_equal ["test_3"], File.read(File.join(run.dir, "ran")).lines(chomp: true)
    assert_match(/^5 runs, 0 assertions, 0 failures, 0 errors/, run.out)
  end
end
