# frozen_string_literal: true

# The native extensions a process loads, written to loaded-<pid>.txt in the
# run directory as they load and again at exit, and what the process says
# of itself from its start (ruby-<pid>.txt, engine-<pid>.txt); the hooks
# into require and fork that keep the list.
module GemLeakHelper
  # What the helper needs of RbConfig::CONFIG: the directories of Ruby's own
  # code (Protocol::RUBY_DIRS), CFLAGS, DLEXT. RubyGems loads rbconfig.rb;
  # a Ruby started without it (ruby --disable=gems: assert_separately's
  # children) has no RbConfig, and gets none of the helper's: rbconfig.rb
  # is read into a module of the helper's own. That took 4 ms, more than
  # the rest of the helper: the first process of each Ruby (its
  # executable, by device, inode and time, and its revision) writes the
  # values beside the helper, whole or not at all (gemleak keeps them
  # between runs), and a Ruby that has not loaded rbconfig.rb reads them
  # there. Read as the helper loads, before the suite can swap File.
  module RubyConfig
    NAMES = [*Protocol::RUBY_DIRS.split, "CFLAGS", "DLEXT"].freeze
    DIR = File.dirname(Core::VARIABLES[Protocol::CLIENT_VARIABLE].to_s).freeze

    class << self
      # Returns: {NAME => value} of NAMES.
      def load_values
        key, path = cache
        unless defined?(RbConfig) || path.nil?
          cached = read(path, key)
          return cached if cached
        end
        config = defined?(RbConfig) ? RbConfig::CONFIG : own_config
        values = NAMES.to_h { |name| [name, config[name].to_s] }
        write(path, key, values) if path && !File.file?(path)
        values
      end

      # rbconfig.rb evaluated in a module of the helper's own: its RbConfig
      # is that module's, not the suite's.
      def own_config
        kind, path = $LOAD_PATH.resolve_feature_path("rbconfig")
        raise LoadError, "rbconfig.rb not found" unless kind == :rb

        holder = Module.new
        holder.module_eval(File.read(path), path, 1)
        holder::RbConfig::CONFIG
      rescue StandardError, ScriptError
        require "rbconfig"
        RbConfig::CONFIG
      end

      # Returns: [the first line of the cache, its path]; [nil, nil] when
      # there is no helper directory or the executable cannot be read.
      def cache
        return [nil, nil] if Core::VARIABLES[Protocol::CLIENT_VARIABLE].to_s.empty? || !File.directory?(DIR)

        exe = File.readlink("/proc/self/exe")
        stat = File.stat(exe)
        revision = defined?(RUBY_REVISION) ? RUBY_REVISION.to_s : RUBY_VERSION
        key = [RUBY_ENGINE, RUBY_VERSION, RUBY_PLATFORM, revision, exe, stat.dev, stat.ino,
               stat.mtime.to_i, stat.size].join("\t")
        name = "#{Protocol::RBCONFIG_PREFIX}#{Core.digits(stat.dev)}-#{Core.digits(stat.ino)}" \
               "#{Protocol::FILE_SUFFIX}"
        [key, File.join(DIR, name)]
      rescue StandardError
        [nil, nil]
      end

      def read(path, key)
        lines = File.read(path).split("\n", -1)
        return nil unless lines.shift == key && lines.size > NAMES.size

        NAMES.zip(lines).to_h
      rescue StandardError
        nil
      end

      def write(path, key, values)
        partial = "#{path}.#{Core.digits(Core.pid)}"
        File.write(partial, [key, *NAMES.map { |name| values[name].delete("\n") }, ""].join("\n"))
        File.rename(partial, path)
      rescue StandardError
        begin
          File.unlink(partial)
        rescue StandardError
          nil
        end
      end
    end

    VALUES = load_values.freeze
  end

  # Ruby 3.3 and later free their memory at exit when RUBY_FREE_AT_EXIT is
  # set, to anything (ruby.c asks getenv, before any option), as it was
  # when this process started: the helper loads before the suite's code.
  FREES_AT_EXIT = (RUBY_VERSION.split(".").map(&:to_i) <=> [3, 3]) >= 0 &&
                 !ENV["RUBY_FREE_AT_EXIT"].nil?
  # Whether this Ruby was built keeping frame pointers (its CFLAGS, the last
  # of the two flags winning, as with the compiler): a fast unwinder walks
  # its frames then, and gemleak reads its stacks whole.
  FRAME_POINTERS = RubyConfig::VALUES["CFLAGS"].to_s.split.reverse
                           .find { |flag| ["-fno-omit-frame-pointer", "-fomit-frame-pointer"].include?(flag) } ==
                   "-fno-omit-frame-pointer"

  @pid = Core.pid
  @recorded = {}
  @features_seen = 0
  @failed = false
  # What each extension feature ($LOADED_FEATURES' .so paths) is: the
  # project's, by its real path, or not (false). Kept through a fork: a
  # child's features are its parent's, and resolving them all again (a
  # real path of each, Ruby's own among them) cost every forked child some
  # 300 system calls.
  @extension_of = {}

  class << self
    # Ruby's own extensions (etc.so, monitor.so, enc/*.so, ...), in the
    # directories Protocol::RUBY_DIRS names, and installed gems are not the
    # project's code.
    def foreign_dirs
      @foreign_dirs ||= begin
        dirs = RubyConfig::VALUES.values_at(*Protocol::RUBY_DIRS.split)
        dirs.concat(Gem.path) if defined?(Gem) && Gem.respond_to?(:path)
        # gemleak's own (its client library, required from there)
        dirs << RubyConfig::DIR unless Core::VARIABLES[Protocol::CLIENT_VARIABLE].to_s.empty?
        dirs.compact.reject(&:empty?).map { |dir| real(dir) + "/" }.uniq
      end
    end

    def real(path)
      Core::REALPATH.call(path)
    rescue SystemCallError
      path
    end

    # The project's extensions among @features, as real paths. Built-in
    # features (enumerator.so, complex.so) are listed without a path.
    def project_extensions(features)
      features.filter_map do |feature|
        next unless feature.end_with?(".so")

        @extension_of[feature] = project_extension(feature) unless @extension_of.key?(feature)
        @extension_of[feature]
      end
    end

    # Returns: the real path of @feature (a .so) if it is the project's
    # extension, else false.
    def project_extension(feature)
      return false unless Core::ABSOLUTE_P.call(feature) && Core::FILE_P.call(feature)

      path = real(feature)
      foreign_dirs.any? { |d| path.start_with?(d) } ? false : path
    end

    # Records the extensions loaded since the last call.
    def record_new_extensions
      features = $LOADED_FEATURES
      return if Core::RUN_DIR.nil? || features.size == @features_seen

      fresh = features[@features_seen..] || features
      @features_seen = features.size
      paths = project_extensions(fresh).reject { |path| @recorded[path] }
      return if paths.empty?

      paths.each { |path| @recorded[path] = true }
      Core.append(Core.run_file(Protocol::LOADED_PREFIX), paths.map { |path| "#{path}\n" }.join)
    rescue StandardError => e
      cannot_record(e)
    end

    # The process's list exists from its start, empty until an extension
    # loads: gemleak then knows that this process loaded none (a LoadError
    # before the extension was built), rather than that nobody recorded.
    def start_list
      return if Core::RUN_DIR.nil?

      Core.append(Core.run_file(Protocol::LOADED_PREFIX), "")
      # The Ruby this process runs, whatever `ruby` on PATH is: what an
      # engine needs of Ruby is decided here, and whether Ruby frees its
      # own memory at exit decides whose memory a leak is.
      # And whether the allocation front could keep the extension's blocks
      # from recent addresses, which a check's stale words may name
      # (src/agent/alloc_held.c): gemleak says so where it could not.
      Core.append(Core.run_file(Protocol::RUBY_PREFIX),
                  "#{RUBY_VERSION}#{FREES_AT_EXIT ? " #{Protocol::FREE_AT_EXIT}" : ""}" \
                  "#{FRAME_POINTERS ? " #{Protocol::FRAME_POINTERS}" : ""}" \
                  "#{recent_unkept? ? " #{Protocol::RECENT_UNKEPT}" : ""}\n")
      # An engine that writes nothing for a process without leaks: gemleak
      # takes "no report" for "no leaks" only from a process that says here
      # that the engine's runtime was in it.
      if Runtime.whole?
        Core.append(Core.run_file(Protocol::ENGINE_PREFIX), "#{Runtime::PATH}\n")
      elsif Runtime.mapped?
        # the engine's runtime without gemleak's front: not checked, said
        Core.append(Core.run_file(Protocol::OUTSIDE_PREFIX),
                    "gemleak's library #{Runtime::FRONT} was not loaded into it (the dynamic loader " \
                    "refused it, or its LD_PRELOAD lost it): what it allocated on a Fiber's stack " \
                    "was not checked\n")
      end
    rescue StandardError => e
      cannot_record(e)
    end

    # The extensions a process loads are its run's default targets, and a
    # process that loaded one and has no XML fails the run: never silently.
    def cannot_record(error)
      return if @failed

      @failed = true
      Core.say("process #{Core.digits(Core.pid)} could not record the extensions it loaded in " \
               "#{Core::RUN_DIR} (#{error.class}: #{error.message})")
    end

    # Minitest::Spec memoizes `let` values in each test instance.
    def forget_minitest_lets
      return unless defined?(Minitest::Runnable)

      ObjectSpace.each_object(Minitest::Runnable) do |test|
        test.instance_variable_set(:@_memoized, nil) if test.instance_variable_defined?(:@_memoized)
      end
    end

    def recent_unkept?
      Runtime.whole? && Core.native? && Native.recent_unkept == 1
    end

    def forked?
      @pid != Core.pid
    end
  end

  # While a require runs, the allocation front gives what code outside
  # Ruby's own allocates (an extension's Init_, and what it has Ruby's
  # allocation functions allocate) its whole stack (src/agent/alloc.c):
  # what an extension allocates once as it loads is judged as Init code in
  # the first pass, not run again for its stack. On where the front is.
  # A Ractor's require runs here too: no state but a constant (ON, true,
  # shareable), and Native.requiring is Ractor-safe (native.c).
  module Requiring
    class << self
      def start
        return unless Runtime.whole? && !Runtime::FRONT.empty? && Core.native? &&
                      Native.respond_to?(:requiring)

        const_set(:ON, true)
      end

      def enter
        Native.requiring(1) if const_defined?(:ON, false)
      end

      def leave
        Native.requiring(0) if const_defined?(:ON, false)
      end
    end
  end

  # Kernel#require, then a look at what it loaded. Prepended, so that
  # RubyGems', Bootsnap's or Zeitwerk's own require stay in the chain. An
  # error it passes on (a require that fails) leaves without this frame.
  module Require
    # The helper's file, as its frames name it.
    OWN_PATH = __FILE__

    # Takes this module's frames out of @error's backtrace, its locations
    # kept (Ruby 3.4 and later sets a backtrace of locations): what the
    # suite prints of the error is what it prints natively. Before 3.4
    # only lines can be set, which would leave the error without
    # locations: there it is left as it is.
    def self.unframe(error)
      locations = error.backtrace_locations
      return if locations.nil? || RUBY_VERSION < "3.4"

      kept = locations.reject { |location| location.path == OWN_PATH }
      error.set_backtrace(kept) if kept.size < locations.size
    rescue StandardError
      nil
    end

    private

    def require(*args)
      Requiring.enter
      begin
        result = super
      ensure
        Requiring.leave
      end
      if result
        GemLeakHelper.record_new_extensions
        GemLeakHelper::PerTest.install
      end
      result
    rescue Exception => e # rubocop:disable Lint/RescueException -- passed on as it came
      Require.unframe(e)
      raise
    end
  end

  # After fork, the child records into its own loaded-<pid>.txt.
  module Fork
    def _fork
      GemLeakHelper.later("checks") # in the parent, once, not in each child
      GemLeakHelper::Sanitizer.before_fork
      pid = super
      if pid.zero?
        GemLeakHelper.forked
        GemLeakHelper::Durations.forked
        GemLeakHelper::PerTest.forked
        GemLeakHelper::Growth.forked if GemLeakHelper::Growth.on?
      end
      pid
    end
  end
end
