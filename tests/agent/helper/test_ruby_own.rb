# frozen_string_literal: true

require_relative "support"

# Ruby's own, never the project's (protocol.h's GL_PROTO_RUBY_DIRS, the
# helper's Protocol::RUBY_DIRS): an extension of Ruby's own loaded beside
# the project's is not among the process's extensions (loaded-PID.txt,
# gemleak's default targets).
class RubyOwnTest < Minitest::Test
  include HelperTest

  PROTOCOL = File.expand_path("../../../src/agent/helper/protocol.rb", __dir__)

  def test_an_extension_of_rubys_own_is_not_the_projects
    run = run_suite(<<~'RUBY')
      require "etc"
      puts "etc #{$LOADED_FEATURES.find { |f| f.end_with?("/etc.so") }}"
      load_extension
    RUBY
    assert_ran(run)
    etc = run.out[/^etc (.+)$/, 1]
    assert etc && File.file?(etc), "this Ruby loads etc.so from a file: #{run.out}"
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
  end

  # Each directory the helper asks RbConfig for is one it has.
  def test_rubys_directories_are_rbconfigs
    names = File.read(PROTOCOL)[/^\s*RUBY_DIRS = "([^"]*)"$/, 1]
    refute_nil names, "#{PROTOCOL} holds RUBY_DIRS"
    names.split.each { |name| assert RbConfig::CONFIG.key?(name), "RbConfig::CONFIG[#{name.inspect}]" }
    assert_includes names.split, "rubyarchdir"
  end
end
