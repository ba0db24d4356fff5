# frozen_string_literal: true

# The Ruby helper's own tests (make check-helper): plain Ruby, no Valgrind.
# Each test runs a small suite in a Ruby of its own with the helper loaded
# as `gemleak run` loads it (RUBYOPT=-r/path/gemleak_helper.rb), the suite
# doing what real suites do to the Ruby they run in, and looks at what the
# helper wrote and said. GEMLEAK_HELPER names another helper to test.
require_relative "../../counts"
GemLeakTestCounts.minitest("check-helper")
Dir[File.join(__dir__, "test_*.rb")].sort.each { |file| require file }
