# frozen_string_literal: true

require_relative "support"

# What the helper needs of RbConfig::CONFIG (extensions.rb, RubyConfig):
# the first process of a Ruby writes it beside the helper; a Ruby that has
# not loaded rbconfig.rb (ruby --disable=gems, as assert_separately starts
# one) reads it there instead of loading it (4 ms), and records what a
# Ruby with rbconfig.rb records: Ruby's own extensions (etc.so) are not
# the project's, the project's is, the same facts of itself. Such a Ruby
# gets no RbConfig of the helper's, cache or not.
class RubyConfigTest < Minitest::Test
  include HelperTest

  def test_a_ruby_without_rbconfig_reads_what_the_first_one_wrote
    helper_dir = Dir.mktmpdir("gemleak-helper-config-")
    @dirs << helper_dir
    env = { "GEMLEAK_CLIENT" => File.join(helper_dir, "gemleak_client.so") }
    code = "require 'etc'\nload_extension\nputs $LOADED_FEATURES.grep(/rbconfig/).size, defined?(RbConfig).inspect\n"
    first = run_suite(code, env: env)
    assert_ran(first)
    cached = Dir.children(helper_dir)
    assert_equal 1, cached.size, cached.inspect
    assert_match(/\Arbconfig-\d+-\d+\.txt\z/, cached.first)

    second = run_suite(code, env: env.merge("RUBYOPT" => "--disable=gems -r#{HELPER}"))
    assert_ran(second)
    assert_equal "", second.err
    assert_equal ["0", "nil"], second.out.lines.last(2).map(&:chomp), "rbconfig.rb was loaded"
    assert_equal "#{second.ext}\n", second.file("loaded-#{second.pid}.txt")
    assert_equal first.file("ruby-#{first.pid}.txt"), second.file("ruby-#{second.pid}.txt")
    assert_equal cached, Dir.children(helper_dir)
  end

  # A cache of another Ruby (another first line) is not read: rbconfig.rb
  # is, into the helper's own module.
  def test_a_cache_of_another_ruby_is_not_read
    helper_dir = Dir.mktmpdir("gemleak-helper-config-")
    @dirs << helper_dir
    env = { "GEMLEAK_CLIENT" => File.join(helper_dir, "gemleak_client.so") }
    code = "require 'etc'\nload_extension\nputs defined?(RbConfig).inspect\n"
    assert_ran(run_suite(code, env: env))
    path = File.join(helper_dir, Dir.children(helper_dir).first)
    File.write(path, File.read(path).sub(/\A[^\n]*/, "another ruby"))
    run = run_suite(code, env: env.merge("RUBYOPT" => "--disable=gems -r#{HELPER}"))
    assert_ran(run)
    assert_equal "nil", run.out.lines.last.chomp, "the suite got the helper's RbConfig"
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
  end
end
