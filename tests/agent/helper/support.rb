# frozen_string_literal: true

require "minitest/autorun"
require "fileutils"
require "open3"
require "rbconfig"
require "tmpdir"

module HelperTest
  # The helper as gemleak carries it: its parts (src/agent/helper/) joined by
  # the build, which make check-helper names.
  HELPER = ENV["GEMLEAK_HELPER"] || File.expand_path("../../../build/helper/gemleak_helper.rb", __dir__)

  # What a run of one suite left: its output, status, and the run directory.
  Run = Struct.new(:dir, :run_dir, :ext, :suite, :out, :err, :status, keyword_init: true) do
    # The pid the suite printed first ("pid N").
    def pid
      out[/^pid (\d+)$/, 1]
    end

    def file(name)
      path = File.join(run_dir, name)
      File.exist?(path) ? File.read(path) : nil
    end

    def files
      Dir.children(run_dir).sort
    end
  end

  # The suite's first lines: how an extension of the project loading looks
  # to the helper (an absolute .so path outside Ruby's directories, new
  # in $LOADED_FEATURES after a require that returned true).
  PRELUDE = <<~'RUBY'
    DIR = File.dirname(File.expand_path(__FILE__))
    EXT = File.join(DIR, "ext", "fake.so")
    puts "pid #{Process.pid}"
    $triggers = 0
    def load_extension
      $LOADED_FEATURES << EXT
      $triggers += 1
      require File.join(DIR, "trigger#{$triggers}")
    end
  RUBY

  # Runs CODE as a suite (suite_test.rb in a new directory), with ENV's
  # gemleak variables as gemleak run sets them (no Valgrind: the helper
  # is "traced"), plus ENV.
  # DIR (nullable): where, when the test must know it before (a path the
  # suite's names hold). RUBY: the Ruby that runs it (default: this one).
  def run_suite(code, env: {}, dir: nil, ruby: RbConfig.ruby)
    dir ||= Dir.mktmpdir("gemleak-helper-test-")
    @dirs << dir
    run_dir = File.join(dir, "run")
    Dir.mkdir(run_dir, 0o700)
    FileUtils.mkdir_p(File.join(dir, "ext"))
    ext = File.join(dir, "ext", "fake.so")
    File.write(ext, "")
    5.times { |i| File.write(File.join(dir, "trigger#{i + 1}.rb"), "") }
    suite = File.join(dir, "suite_test.rb")
    File.write(suite, PRELUDE + code)
    base = {
      "RUBYOPT" => "-r#{HELPER}", "RUBYLIB" => nil, "GEMLEAK_RUN_DIR" => run_dir,
      "GEMLEAK_ENGINE_COMMAND" => nil, "GEMLEAK_PER_TEST" => nil, "GEMLEAK_CLIENT" => nil,
      "GEMLEAK_DURATIONS" => nil, "GEMLEAK_DEBUG" => nil
    }
    out, err, status = Open3.capture3(base.merge(env), ruby, suite, chdir: dir)
    Run.new(dir: dir, run_dir: run_dir, ext: File.realpath(ext), suite: File.realpath(suite),
            out: out, err: err, status: status)
  end

  # A Ruby 3.4 or newer, as the integration tests find it
  # (GEMLEAK_TEST_RUBY34, else the one scripts/build-ruby builds); nil
  # when there is none.
  def ruby34
    given = ENV["GEMLEAK_TEST_RUBY34"].to_s
    ruby = given.empty? ? "/root/.cache/gemleak/ruby-3.4.5/bin/ruby" : given
    return nil unless File.executable?(ruby)

    version, status = Open3.capture2(ruby, "--disable-gems", "-e", "print RUBY_VERSION")
    status.success? && Gem::Version.new(version) >= Gem::Version.new("3.4") ? ruby : nil
  end

  def setup
    @dirs = []
  end

  def teardown
    @dirs.each { |dir| FileUtils.rm_rf(dir) }
  end

  def assert_ran(run)
    assert run.status.success?, "the suite failed (#{run.status}):\n#{run.out}\n#{run.err}"
  end
end
