# frozen_string_literal: true

# make check's last line adds up the tests of every runner: each writes
# "NAME PASSED SKIPPED FAILED" to the file GEMLEAK_TEST_COUNTS names (the
# C runners through gl_test_print_counts(), minitest's through this
# reporter), so that a skipped test is never counted as passed.
module GemLeakTestCounts
  module_function

  def write(name, passed, skipped, failed)
    path = ENV["GEMLEAK_TEST_COUNTS"].to_s
    return if path.empty?

    File.open(path, "a") { |file| file.puts("#{name} #{passed} #{skipped} #{failed}") }
  end

  # Counts the minitest run of this process as NAME.
  def minitest(name)
    require "minitest"
    reporter = Class.new(Minitest::StatisticsReporter) do
      define_method(:report) do
        super()
        GemLeakTestCounts.write(name, count - failures - errors - skips, skips, failures + errors)
      end
    end
    Minitest.singleton_class.define_method(:plugin_gemleak_counts_init) do |_options|
      Minitest.reporter << reporter.new($stdout)
    end
    # minitest loads no plugin of the gems' once one is named: none is used here
    Minitest.extensions << "gemleak_counts"
  end
end
