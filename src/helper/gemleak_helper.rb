# frozen_string_literal: true

require "rbconfig" # RubyGems loads it, but ruby --disable-gems does not

# gemleak's helper, loaded into every Ruby process that `gemleak run` starts
# (RUBYLIB points at it and RUBYOPT says -rgemleak_helper, so processes that
# rake or the tests spawn load it too).
#
# It writes the native extensions the process loads to loaded-<pid>.txt in
# the run directory, as they load (a process that crashes or is killed
# never reaches at_exit) and again at exit: they are gemleak's default
# targets. At exit it also lets go of what a test suite keeps for nothing,
# so that Valgrind sees less. Nothing here may fail the suite under test.
module GemLeakHelper
  @pid = Process.pid
  @recorded = {}
  @features_seen = 0

  class << self
    # Ruby's own extensions (etc.so, monitor.so, enc/*.so, ...) and installed
    # gems are not the project's code.
    def foreign_dirs
      @foreign_dirs ||= begin
        dirs = RbConfig::CONFIG.values_at(
          "rubylibprefix", "rubyarchdir", "rubylibdir", "archdir",
          "vendordir", "vendorarchdir", "vendorlibdir",
          "sitedir", "sitearchdir", "sitelibdir"
        )
        dirs.concat(Gem.path) if defined?(Gem) && Gem.respond_to?(:path)
        dirs.compact.reject(&:empty?).map { |dir| real(dir) + "/" }.uniq
      end
    end

    def real(path)
      File.realpath(path)
    rescue SystemCallError
      path
    end

    # Records the extensions loaded since the last call. Built-in features
    # (enumerator.so, complex.so) are listed without a path and skipped.
    def record_new_extensions
      dir = ENV["GEMLEAK_RUN_DIR"]
      features = $LOADED_FEATURES
      return if dir.nil? || features.size == @features_seen

      fresh = features[@features_seen..] || features
      @features_seen = features.size
      paths = fresh.select { |f| f.end_with?(".so") && File.absolute_path?(f) && File.file?(f) }
                   .map { |f| real(f) }
                   .reject { |path| @recorded[path] || foreign_dirs.any? { |d| path.start_with?(d) } }
      return if paths.empty?

      paths.each { |path| @recorded[path] = true }
      File.open(File.join(dir, "loaded-#{Process.pid}.txt"), "a") do |io|
        paths.each { |path| io.puts(path) }
      end
    rescue StandardError => e
      warn("gemleak helper: #{e.class}: #{e.message}") if ENV["GEMLEAK_DEBUG"]
    end

    # The process's list exists from its start, empty until an extension
    # loads: gemleak then knows that this process loaded none (a LoadError
    # before the extension was built), rather than that nobody recorded.
    def start_list
      dir = ENV["GEMLEAK_RUN_DIR"]
      return if dir.nil?

      File.open(File.join(dir, "loaded-#{Process.pid}.txt"), "a") {}
    rescue StandardError => e
      warn("gemleak helper: #{e.class}: #{e.message}") if ENV["GEMLEAK_DEBUG"]
    end

    # A forked child writes its own file, from the start.
    def forked
      @pid = Process.pid
      @recorded = {}
      @features_seen = 0
      start_list
    end

    def forked?
      @pid != Process.pid
    end

    # Minitest::Spec memoizes `let` values in each test instance.
    def forget_minitest_lets
      return unless defined?(Minitest::Runnable)

      ObjectSpace.each_object(Minitest::Runnable) do |test|
        test.instance_variable_set(:@_memoized, nil) if test.instance_variable_defined?(:@_memoized)
      end
    end
  end

  # Kernel#require, then a look at what it loaded. Prepended, so that
  # RubyGems', Bootsnap's or Zeitwerk's own require stay in the chain.
  module Require
    private

    def require(*args)
      result = super
      GemLeakHelper.record_new_extensions if result
      result
    end
  end

  # After fork, the child records into its own loaded-<pid>.txt.
  module Fork
    def _fork
      pid = super
      GemLeakHelper.forked if pid.zero?
      pid
    end
  end
end

GemLeakHelper.start_list
GemLeakHelper.record_new_extensions
Kernel.prepend(GemLeakHelper::Require)
Process.singleton_class.prepend(GemLeakHelper::Fork) if Process.respond_to?(:_fork)

# Registered before the test framework's own at_exit, so it runs after it.
at_exit do
  begin
    GemLeakHelper.forget_minitest_lets
    GC.start
    GemLeakHelper.forked if GemLeakHelper.forked? # Ruby before 3.1 has no Process._fork
    GemLeakHelper.record_new_extensions
  rescue Exception => e # rubocop:disable Lint/RescueException -- never fail the suite
    warn("gemleak helper: #{e.class}: #{e.message}") if ENV["GEMLEAK_DEBUG"]
  end
end
