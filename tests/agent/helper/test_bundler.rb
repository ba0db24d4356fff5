# frozen_string_literal: true

require_relative "support"

# The helper loads before the suite's RUBYOPT (bundle exec's -rbundler/setup):
# Bundler must still find Kernel#require its own to take RubyGems' gem
# activation out of the way, or a require that fails (an optional
# dependency a library probes for) makes RubyGems look through every gem,
# and it warns "Ignoring NAME because its extensions are not built. Try:
# gem pristine" about the project's own gemspec (a path: gem, whose
# extension rake-compiler builds into lib/, not where RubyGems looks).
class BundlerTest < Minitest::Test
  include HelperTest

  def test_a_failing_require_under_bundler_names_no_gem_to_pristine
    dir = Dir.mktmpdir("gemleak-helper-bundler-")
    @dirs << dir
    File.write(File.join(dir, "native.gemspec"), <<~RUBY)
      Gem::Specification.new do |s|
        s.name = "native"
        s.version = "1.0.0"
        s.summary = "an extension built in place, as rake-compiler builds it"
        s.authors = ["gemleak"]
        s.files = ["ext/native/extconf.rb"]
        s.extensions = ["ext/native/extconf.rb"]
      end
    RUBY
    FileUtils.mkdir_p(File.join(dir, "ext", "native"))
    File.write(File.join(dir, "ext", "native", "extconf.rb"), "")
    File.write(File.join(dir, "Gemfile"), "gemspec\n")
    env = { "BUNDLE_GEMFILE" => File.join(dir, "Gemfile"), "BUNDLE_PATH" => nil, "RUBYOPT" => nil,
            "HOME" => dir }
    _, err, status = Open3.capture3(env, "bundle", "install", "--local", "--quiet", chdir: dir)
    skip "bundle install --local: #{err}" unless status.success?

    run = run_suite(<<~'RUBY', env: env.merge("RUBYOPT" => "-r#{HELPER} -rbundler/setup"))
      begin
        require "an_optional_dependency_that_is_not_installed"
      rescue LoadError
        puts "not there"
      end
    RUBY
    assert_ran(run)
    assert_includes run.out, "not there"
    refute_match(/Ignoring native-1\.0\.0/, run.err)
  end
end
