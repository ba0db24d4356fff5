# frozen_string_literal: true

require_relative "support"

# What RUBYOPT loads (src/agent/helper_loader.rb, gemleak_helper.rb in the
# helper directory): the helper beside it, compiled by the first Ruby of
# the run and kept there, loaded by the others; a cache that cannot be read
# is compiled again; nothing of the loader stays in the suite's Ruby, and
# it says nothing under -w.
class LoaderTest < Minitest::Test
  include HelperTest

  LOADER = File.expand_path("../../../src/agent/helper_loader.rb", __dir__)

  # A helper directory as gemleak writes it.
  def helper_dir
    dir = Dir.mktmpdir("gemleak-helper-loader-")
    @dirs << dir
    FileUtils.cp(LOADER, File.join(dir, "gemleak_helper.rb"))
    FileUtils.cp(HELPER, File.join(dir, "gemleak_helper_body.rb"))
    Dir.glob(File.join(File.dirname(HELPER), "gemleak_helper_*.rb")).each { |part| FileUtils.cp(part, dir) }
    dir
  end

  def compiled(dir)
    Dir.children(dir).select { |name| name.start_with?("gemleak_helper_body-") }
  end

  # What of the helper's files was compiled and kept: their names.
  def kept(dir)
    Dir.children(dir).grep(/\.iseq\z/).map { |name| name[/\A[a-z_]+(?=-)/] }.sort
  end

  def test_the_first_ruby_compiles_the_helper_and_the_others_load_it
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    code = "load_extension\nputs defined?(compiled).inspect, defined?(body).inspect\n"
    first = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}" })
    assert_ran(first)
    assert_equal "", first.err
    assert_equal "nil\nnil\n", first.out.lines.drop(1).join
    assert_equal "#{first.ext}\n", first.file("loaded-#{first.pid}.txt")
    caches = compiled(dir)
    assert_equal 1, caches.size, Dir.children(dir).inspect
    assert_match(/\Agemleak_helper_body-\w+-[\d.]+-.+\.iseq\z/, caches.first)

    written = File.mtime(File.join(dir, caches.first))
    second = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}" })
    assert_ran(second)
    assert_equal "", second.err
    assert_equal "#{second.ext}\n", second.file("loaded-#{second.pid}.txt")
    assert_equal [caches.first], compiled(dir)
    assert_equal written, File.mtime(File.join(dir, caches.first))
  end

  def test_a_cache_that_cannot_be_read_is_compiled_again
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    assert_ran(run_suite("load_extension\n", env: { "RUBYOPT" => "-r#{loader}" }))
    cache = File.join(dir, compiled(dir).first)
    File.binwrite(cache, "not instructions")
    run = run_suite("load_extension\n", env: { "RUBYOPT" => "-W -r#{loader}" })
    assert_ran(run)
    assert_equal "", run.err
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
    refute_equal "not instructions", File.binread(cache)
  end

  # Each collection of every Ruby of a run marks what the helper keeps.
  # A proc made where the helper loads, not in one of its methods (the
  # work at exit, registered with at_exit), kept the whole load's
  # instructions alive through its scope: every part's module and class
  # bodies, run once, and their constants' caches, some 60 instruction
  # sequences and 180 objects in all. Its procs are its methods' own.
  def test_the_helper_keeps_no_scope_of_its_load
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    code = <<~'RUBY'
      load_extension
      GC.start
      scopes = ObjectSpace.each_object(Proc).filter_map do |made|
        iseq = RubyVM::InstructionSequence.of(made)
        next unless iseq && File.basename(iseq.path.to_s).start_with?("gemleak_helper_body")

        "#{iseq.label} (#{File.basename(iseq.path)}:#{iseq.first_lineno})" if iseq.label.match?(/\Ablock (\(\d+ levels\) )?in </)
      end
      puts "kept: #{scopes.sort.join(", ")}"
    RUBY
    2.times do # the first Ruby compiles the helper, the second loads it
      run = run_suite(code, env: { "RUBYOPT" => "-r#{loader}" })
      assert_ran(run)
      assert_equal "kept: \n", run.out.lines.last
    end
  end

  # What `ruby --disable=gems -e 0` prints with @before loaded before the
  # loader and @after after it, in a helper directory of its own: the
  # first Ruby compiles the helper, the second loads it. Returns: both
  # outputs, and the directory.
  def around_the_loader(before, after)
    dir = helper_dir
    File.write(File.join(dir, "before.rb"), before)
    File.write(File.join(dir, "after.rb"), after)
    opt = "-r#{File.join(dir, "before.rb")} -r#{File.join(dir, "gemleak_helper.rb")} " \
          "-r#{File.join(dir, "after.rb")}"
    outs = 2.times.map do |i|
      run_dir = File.join(dir, "run#{i}")
      Dir.mkdir(run_dir)
      out, err, status = Open3.capture3({ "RUBYOPT" => opt, "RUBYLIB" => nil, "GEMLEAK_RUN_DIR" => run_dir },
                                        RbConfig.ruby, "--disable=gems", "-e", "0")
      assert status.success?, err
      out
    end
    [outs, dir]
  end

  # A Ruby just started without RubyGems (assert_separately's children)
  # collected its garbage while it loaded the helper: once on Ruby 3.1,
  # twice on 3.4, some 2 ms. The collector waits until the helper is
  # loaded, and is on again for the suite. The collections are counted as
  # the loader turns the collector on again: one the heap, grown while it
  # waited, needs at once after is the suite's (it came with a loader a few
  # objects longer).
  def test_no_collection_while_the_helper_loads
    outs, dir = around_the_loader(<<~RUBY, "print(($at_enable || GC.count) - $collections, \" \", GC.enable)\n")
      $collections = GC.count
      GC.singleton_class.prepend(Module.new { def enable; $at_enable ||= GC.count; super; end })
    RUBY
    assert_equal ["0 false"] * 2, outs, "collections while the helper loaded, and GC.enable after it"
    assert_equal 1, compiled(dir).size
  end

  # A collection marking as the helper loads (RubyGems' load leaves a
  # major one under way in `ruby -e 0`) goes on as it would have:
  # GC.disable finishes it first, the whole heap marked and swept at once,
  # which a short Ruby (`ruby -e`, a suite's child) never did without the
  # helper (counted, 6M of `ruby -e 0`'s 300M instructions under the run).
  # The collector waits only where none is marking.
  def test_a_collection_marking_is_not_finished_as_the_helper_loads
    outs, = around_the_loader(<<~RUBY, "print $under_way, \" \", $states.inspect, \" \", GC.enable\n")
      $states = []
      GC.singleton_class.prepend(Module.new { def disable; $states << GC.latest_gc_info(:state); super; end })
      GC.start(full_mark: true, immediate_mark: false, immediate_sweep: false)
      $under_way = GC.latest_gc_info(:state)
    RUBY
    assert_equal ["marking [] false"] * 2, outs, "the collection under way, GC.disable's calls, GC.enable after"
  end

  # The parts of the helper a process may not need (HELPER_LATER) are
  # loaded only where it does: --growth's repetitions where it is on (and
  # --per-test's search, which runs tests again as it does); what a Ruby
  # started outside the engine does, never in one under it; the test
  # frameworks' hooks once a framework loads, where tests are marked,
  # named to their owners or timed, and the checks where they are checked
  # or marked (a Ruby that runs no test loads none:
  # test_per_test_sanitizer.rb has one that forks, exit!s and execs). Each
  # is compiled once and kept, as the body is.
  # A part that threads need at once (four threads' first forks, a fork
  # and an exit! beside it) is loaded by one while the others wait: they
  # went on while it loaded, and its names were not there yet ("NameError:
  # uninitialized constant GemLeakHelper::Sanitizer", an exit! that raised
  # NoMethodError and did not exit).
  def test_threads_that_need_a_part_at_once_wait_for_it
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    code = "$stdout.sync = true\nload_extension\n" \
           "4.times.map { Thread.new { Process.wait(fork { exit!(0) }); $?.exitstatus } }.map(&:value)" \
           ".then { |s| puts s.inspect }\n" \
           "Thread.new { Process.wait(fork { exit!(0) }) }; Thread.new { exit!(7) }; sleep 5; puts :survived\n"
    5.times do
      forks = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}" })
      assert_equal "", forks.err
      assert_equal "[0, 0, 0, 0]\n", forks.out.lines.drop(1).join, forks.out
      assert_equal 7, forks.status.exitstatus
      FileUtils.rm_f(Dir[File.join(dir, "gemleak_helper_checks-*")])
    end
  end

  def test_a_part_loads_only_where_it_is_needed
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    code = "load_extension\nputs GemLeakHelper::Growth.respond_to?(:run), GemLeakLaunch.respond_to?(:decide_outside), " \
           "GemLeakHelper::PerTest.respond_to?(:hook_frameworks)\n"
    plain = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}" })
    assert_ran(plain)
    assert_equal "", plain.err
    assert_equal "false\nfalse\nfalse\n", plain.out.lines.drop(1).join
    assert_equal ["gemleak_helper_body"], kept(dir)

    # timed, without a framework: no hooks
    timed = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}", "GEMLEAK_DURATIONS" => "1" })
    assert_ran(timed)
    assert_equal "false\nfalse\nfalse\n", timed.out.lines.drop(1).join
    assert_equal ["gemleak_helper_body"], kept(dir)

    # timed, with minitest: its hook, around the test; nothing checked or
    # marked, so no checks (nor where the owners alone name the tests, the
    # fast pass's: under a sanitizer's runtime, which this test has not)
    test = "require \"minitest/autorun\"\nclass OneTest < Minitest::Test\n  def test_one\n#{code}  end\nend\n"
    framework = run_suite(test, env: { "RUBYOPT" => "-W -r#{loader}", "GEMLEAK_DURATIONS" => "1" })
    assert_ran(framework)
    assert_includes framework.out, "false\nfalse\ntrue\n"
    assert_equal(1, Dir[File.join(framework.run_dir, "durations-*")].size, "the test was timed")
    assert_equal %w[gemleak_helper_body gemleak_helper_per_test_frameworks], kept(dir)

    # --per-test's markers (here without a sanitizer: checks after the tests)
    per_test = run_suite(test, env: { "RUBYOPT" => "-W -r#{loader}", "GEMLEAK_PER_TEST" => "test" })
    assert_ran(per_test)
    assert_equal %w[gemleak_helper_body gemleak_helper_checks gemleak_helper_per_test_again
                    gemleak_helper_per_test_frameworks], kept(dir)

    growth = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}", "GEMLEAK_GROWTH" => "3" })
    assert_ran(growth)
    assert_equal "", growth.err
    assert_equal "true\nfalse\nfalse\n", growth.out.lines.drop(1).join
    # its tests run again as --per-test's search runs them
    assert_equal %w[gemleak_helper_body gemleak_helper_checks gemleak_helper_growth_run
                    gemleak_helper_per_test_again gemleak_helper_per_test_frameworks], kept(dir)
  end
end
