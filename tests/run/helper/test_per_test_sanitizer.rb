# frozen_string_literal: true

require_relative "support"

# --per-test under LeakSanitizer: the helper's client is the runtime's
# interface (GemLeakHelper::Sanitizer), here played by Ruby: markers are
# lines of a report file, and each check appends a report of every object
# "lost" so far, as __lsan_do_recoverable_leak_check does (with
# report_objects=1), Ruby's own among them, new ones at each check. What the
# helper reads back from that file is what its search for the test goes by.
class PerTestSanitizerTest < Minitest::Test
  include HelperTest

  # A minitest suite of COUNT tests; LEAKER loses one object each run.
  def search(count, leaker)
    code = <<~RUBY
      REPORT = File.join(DIR, "lsan.report")
      CHECKS = File.open(File.join(DIR, "checks.txt"), "w")
      CHECKS.sync = true
      $objects = []   # [address, module] of every object lost so far
      $next = 0x602000000010
      $marker = nil
      $roots = 0
      $reported = 0
      def lose(mod)
        $objects << [$next, mod]
        $next += 0x20
      end
      def append(text) = File.open(REPORT, "a") { |f| f.write(text) }
      report = lambda do
        # Ruby's: a block referenced from memory the runtime does not scan,
        # a new one at each check
        lose("#{RbConfig.ruby}")
        append("\\n====\\n==1==ERROR: LeakSanitizer: detected memory leaks\\n\\n")
        $objects.each do |address, mod|
          append("Direct leak of 6 byte(s) in 1 object(s) allocated from:\\n" \\
                 "F|0|0x7f0000001000|/usr/lib/liblsan.so|0x1000|malloc|0x0|<null>|0|0\\n" \\
                 "F|1|0x7f0000002000|\#{mod}|0x2000|fake_leak|0x0|fake.c|3|0\\n\\n" \\
                 "Objects leaked above:\\n0x\#{address.to_s(16)} (6 bytes)\\n\\n")
        end
        append("SUMMARY: LeakSanitizer: 6 byte(s) leaked in 1 allocation(s).\\n")
        ours = $objects.count { |_, mod| mod == EXT }
        CHECKS.write("\#{$marker}\\t=> \#{ours - $reported}\\n")
        $reported = ours
        1
      end
      GemLeakHelper::PerTest.instance_variable_set(
        :@client, GemLeakHelper::Sanitizer.client(
          marker: ->(text) { $marker = text.delete("\\0"); append("\#{$marker}\\n") },
          check: report,
          root: ->(_address, _size) { $roots += 1 },
          report_path: -> { REPORT }
        )
      )
      at_exit { File.write(File.join(DIR, "roots.txt"), $roots.to_s) }
      $runs = Hash.new(0)
      require "minitest/autorun"
      class SearchTest < Minitest::Test
        #{count}.times do |i|
          define_method("test_\#{i + 1}") do
            lose(EXT) if i + 1 == #{leaker}
            assert true
          end
        end
      end
    RUBY
    run = run_suite(code, env: { "GEMLEAK_PER_TEST" => "test" })
    assert_ran(run)
    assert_match(/^#{count} runs, #{count} assertions, 0 failures/, run.out)
    refute_match(/per-test/, run.err)
    @report = File.read(File.join(run.dir, "lsan.report"))
    @roots = File.read(File.join(run.dir, "roots.txt")).to_i
    File.read(File.join(run.dir, "checks.txt")).lines(chomp: true)
  end

  # The tests each check after one test run again alone found lost.
  def named(checks)
    checks.filter_map { |line| line[/^gemleak:again\t1\t(SearchTest#test_\d+)\t.*=> [1-9]/, 1] }
  end

  def test_one_leaking_test_of_sixty_named_through_the_report_file
    checks = search(60, 37)
    assert_equal ["SearchTest#test_37"], named(checks)
    assert_match(/^gemleak:tests\t60\t.*=> 1$/, checks[1])
    assert_operator checks.size, :<=, 6, checks.join("\n")
    # each check closed, the exit said, in the report file, in order
    markers = @report.lines(chomp: true).grep(/^gemleak:/)
    assert_equal "gemleak:setup", markers[0]
    assert_equal "gemleak:checked", markers[1]
    assert_equal "gemleak:exit", markers[-1]
    assert_equal checks.size, markers.count("gemleak:checked")
    # Ruby's object pages registered as roots before the first check
    assert_operator @roots, :>, 0
  end

  def test_nothing_lost_by_the_project_two_checks
    checks = search(30, 0)
    assert_equal 2, checks.size, checks.join("\n")
  end
end
