# frozen_string_literal: true

require "rbconfig" # RubyGems loads it, but ruby --disable-gems does not

# gemleak's helper, loaded into every Ruby process that `gemleak run` starts
# (RUBYLIB points at it and RUBYOPT says -rgemleak_helper, so processes that
# rake or the tests spawn load it too).
#
# At exit it lets go of what a test suite keeps for nothing, so that
# Valgrind sees less, and writes the native extensions the process loaded
# to loaded-<pid>.txt in the run directory: they are gemleak's default
# targets. Nothing here may fail the suite under test.
module GemLeakHelper
  module_function

  # Ruby's own extensions (etc.so, monitor.so, enc/*.so, ...) and installed
  # gems are not the project's code.
  def foreign_dirs
    dirs = RbConfig::CONFIG.values_at(
      "rubylibprefix", "rubyarchdir", "rubylibdir", "archdir",
      "vendordir", "vendorarchdir", "vendorlibdir",
      "sitedir", "sitearchdir", "sitelibdir"
    )
    dirs.concat(Gem.path) if defined?(Gem) && Gem.respond_to?(:path)
    dirs.compact.reject(&:empty?).map { |dir| real(dir) + "/" }.uniq
  end

  def real(path)
    File.realpath(path)
  rescue SystemCallError
    path
  end

  # Built-in features (enumerator.so, complex.so) are listed without a path.
  def loaded_extensions
    foreign = foreign_dirs
    $LOADED_FEATURES
      .select { |feature| feature.end_with?(".so") && File.absolute_path?(feature) && File.file?(feature) }
      .map { |feature| real(feature) }
      .reject { |path| foreign.any? { |dir| path.start_with?(dir) } }
      .uniq
  end

  def record_loaded_extensions(dir)
    paths = loaded_extensions
    return if paths.empty?

    File.open(File.join(dir, "loaded-#{Process.pid}.txt"), "a") do |io|
      paths.each { |path| io.puts(path) }
    end
  end

  # Minitest::Spec memoizes `let` values in each test instance.
  def forget_minitest_lets
    return unless defined?(Minitest::Runnable)

    ObjectSpace.each_object(Minitest::Runnable) do |test|
      test.instance_variable_set(:@_memoized, nil) if test.instance_variable_defined?(:@_memoized)
    end
  end
end

# Registered before the test framework's own at_exit, so it runs after it.
at_exit do
  begin
    GemLeakHelper.forget_minitest_lets
    GC.start
    dir = ENV["GEMLEAK_RUN_DIR"]
    GemLeakHelper.record_loaded_extensions(dir) if dir
  rescue Exception => e # rubocop:disable Lint/RescueException -- never fail the suite
    warn("gemleak helper: #{e.class}: #{e.message}") if ENV["GEMLEAK_DEBUG"]
  end
end
