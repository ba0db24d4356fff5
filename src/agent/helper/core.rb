# frozen_string_literal: true

module GemLeakHelper
  # What the helper needs, taken when it loads, before any of the suite
  # runs. Suites redefine Integer#to_s, define a top-level `format` or
  # `warn` (which every object, this module too, then calls instead of
  # Kernel's), clear or replace ENV, swap File for a fake (FakeFS), stub
  # File.open (rspec-mocks) or mock the clock (Timecop): the helper reads
  # its variables once, calls bound methods of the core classes, writes
  # through IO objects on descriptors it opened itself, and says on
  # standard error (its own IO on descriptor 2) what it could not record.
  module Core
    # The run's variables (protocol.rb's *_VARIABLE names), as this process
    # started: what the helper reads of them, later too, it reads here (the
    # suite may clear ENV, and the helper takes them out of it:
    # leave_environment).
    VARIABLES = Protocol.constants.grep(/_VARIABLE\z/).filter_map do |constant|
      name = Protocol.const_get(constant)
      value = ENV[name]
      [name, value.dup.freeze] unless value.nil?
    end.to_h.freeze
    RUN_DIR = VARIABLES[Protocol::RUN_DIR_VARIABLE]
    DEBUG = !VARIABLES[Protocol::DEBUG_VARIABLE].to_s.empty?
    # The library gemleak preloads makes the engine's leak check at exit and
    # says it ran ("gemleak:done"): what ends without exit says it here.
    PROOF = !VARIABLES[Protocol::PROOF_VARIABLE].to_s.empty?
    PID = Process.method(:pid)
    CLOCK = Process.method(:clock_gettime)
    MONOTONIC = Process::CLOCK_MONOTONIC
    INTEGER_TO_S = Integer.instance_method(:to_s)
    SYSOPEN = IO.method(:sysopen)
    IO_NEW = IO.method(:new)
    SYSWRITE = IO.instance_method(:syswrite)
    SYSREAD = IO.instance_method(:sysread)
    CLOSE = IO.instance_method(:close)
    REALPATH = File.method(:realpath)
    FILE_P = File.method(:file?)
    ABSOLUTE_P = File.method(:absolute_path?)
    EXPAND = File.method(:expand_path)
    APPEND = File::WRONLY | File::APPEND | File::CREAT | (defined?(File::CLOEXEC) ? File::CLOEXEC : 0)
    GC_START = GC.method(:start)
    GC_ENABLE = GC.method(:enable)
    GC_DISABLE = GC.method(:disable)
    GC_STRESS = GC.method(:stress)
    GC_SET_STRESS = GC.method(:stress=)

    class << self
      def pid
        PID.call
      end

      # Takes the run's variables out of the environment Ruby shows the
      # suite, where the library gemleak preloads (gemleak_preload.so, in
      # this process) gives each back to every program the process execs,
      # as GEMLEAK_RESTORE lists them, that list among them
      # (src/agent/restore.c); the helper read them as it loaded
      # (VARIABLES). Kept: GEMLEAK_RUNNING and GEMLEAK_RUN_DIR, which the
      # suite is told of; GEMLEAK_INSTRUMENTED, which may be the user's;
      # RUBY_FREE_AT_EXIT, which Ruby reads as it exits; and what gemleak
      # adds to a variable of the user's (RUBYOPT, LD_PRELOAD, the
      # runtime's options). Ruby's own test library compares the whole
      # environment before and after each test (tool/lib/leakchecker.rb):
      # the run's dozen variables more were a fifth of what psych's suite
      # took beyond the floor, counted.
      def leave_environment
        list = VARIABLES[Protocol::RESTORE_VARIABLE]
        return if list.nil?

        items = list.split(Protocol::RESTORE_SEPARATOR).map { |item| [item[0], *item[1..].split("=", 2)] }
        preload = items.find { |_, name, _| name == "LD_PRELOAD" }&.last.to_s.split(":").last.to_s
        return if preload.empty? || !Runtime.loaded?(preload, File.basename(preload))

        kept = [Protocol::RUNNING_VARIABLE, Protocol::RUN_DIR_VARIABLE, Protocol::INSTRUMENTED_VARIABLE,
                "RUBY_FREE_AT_EXIT"]
        items.each do |how, name, _|
          ENV.delete(name) if how == Protocol::RESTORE_SET_TEXT && !kept.include?(name)
        end
        ENV.delete(Protocol::RESTORE_VARIABLE)
      end

      # Integer#to_s as Ruby defines it, whatever the suite made of it.
      def digits(number)
        INTEGER_TO_S.bind(number).call
      end

      # Returns: "/run/dir/PREFIXPID.txt" for this process.
      def run_file(prefix)
        "#{RUN_DIR}/#{prefix}#{digits(pid)}#{Protocol::FILE_SUFFIX}"
      end

      # Appends TEXT to PATH, made when missing.
      def append(path, text)
        io = IO_NEW.call(SYSOPEN.call(path, APPEND, 0o600), "w")
        begin
          SYSWRITE.bind(io).call(text) unless text.empty?
        ensure
          CLOSE.bind(io).call
        end
      end

      # The title of the run's engine ("Valgrind", "LeakSanitizer"), for
      # what the helper says: engine.txt's first line, which gemleak wrote
      # before anything ran; read when first asked.
      def engine_title
        @engine_title ||= begin
          io = IO_NEW.call(SYSOPEN.call("#{RUN_DIR}/#{Protocol::ENGINE_FILE}", File::RDONLY), "r")
          begin
            SYSREAD.bind(io).call(256)[/\A[^\n]*/].strip
          ensure
            CLOSE.bind(io).call
          end
        rescue StandardError
          ""
        end
        @engine_title.empty? ? "the engine" : @engine_title
      end

      # One line on standard error, "gemleak: TEXT".
      def say(text)
        err = IO_NEW.call(2, "w", autoclose: false)
        SYSWRITE.bind(err).call("gemleak: #{one_line(text)}\n")
      rescue StandardError
        nil # no standard error left to say it on
      end

      CONTROL_ESCAPES = { "\n" => "\\n", "\r" => "\\r", "\t" => "\\t" }.freeze

      # TEXT as gemleak's own messages show what came from outside (a path,
      # an error's message): control characters escaped as gemleak escapes
      # them (\n, \x1b, \u009b), so that none reaches the terminal raw or
      # forges a line. Integer#to_s by its bound method: suites redefine it.
      def one_line(text)
        valid = text.to_s.dup.force_encoding(Encoding::UTF_8).scrub("\uFFFD")
        valid.gsub(/[\x00-\x1f\x7f\u0080-\u009f]/) do |c|
          code = c.ord
          CONTROL_ESCAPES[c] ||
            (code < 0x80 ? "\\x#{INTEGER_TO_S.bind(code).call(16).rjust(2, "0")}"
                         : "\\u#{INTEGER_TO_S.bind(code).call(16).rjust(4, "0")}")
        end
      end

      # An error that costs nothing a verdict depends on.
      def debug(error)
        say("helper: #{error.class}: #{error.message}") if DEBUG
      end

      def monotonic
        CLOCK.call(MONOTONIC)
      end

      # GemLeakHelper::Native (src/agent/native.c): the client library
      # gemleak wrote beside this file (GEMLEAK_CLIENT), required as a Ruby
      # extension, loaded once. Fiddle is not a default gem from Ruby 3.5
      # on. Returns: whether it is there; why not, in @native_error.
      def native?
        return @native unless @native.nil?

        path = VARIABLES[Protocol::CLIENT_VARIABLE].to_s
        @native = false
        if path.empty?
          @native_error = "no client library (#{Protocol::CLIENT_VARIABLE} is not set)"
        else
          require path
          @native = GemLeakHelper.const_defined?(:Native, false) &&
                    GemLeakHelper::Native.respond_to?(:address)
          @native_error = "#{path} defined nothing (Ruby's API not found in the process)" unless @native
        end
        @native
      rescue LoadError, StandardError => e
        @native_error = "cannot load #{path.inspect} (#{e.class}: #{e.message.lines.first&.chomp})"
        @native = false
      end

      attr_reader :native_error

      # Runs the block with the collector as the helper's checks need it,
      # whatever the suite set, then puts the suite's settings back: on (a
      # test that left it off, GC.disable, would have GC.start do nothing,
      # and what its objects lose be lost at a later test's check) and not
      # stressed (GC.stress left on makes every allocation of the helper's
      # a collection).
      def with_collector
        stress = GC_STRESS.call
        GC_SET_STRESS.call(false) if stress
        disabled = GC_ENABLE.call
        yield
      ensure
        GC_DISABLE.call if disabled
        GC_SET_STRESS.call(stress) if stress
      end

      # Turns GC.stress off. Returns: what it was, for restress.
      def unstress
        stress = GC_STRESS.call
        GC_SET_STRESS.call(false) if stress
        stress
      end

      def restress(stress)
        GC_SET_STRESS.call(stress) if stress
      end

      # A full collection, as with_collector has the collector.
      def collect
        with_collector { GC_START.call }
      end
    end
  end

  # Loads the part @name of the helper (gemleak_helper_@name.rb beside the
  # body, HELPER_LATER in the Makefile), once, the first time a process
  # needs it: as the loader loads the body, compiled once per Ruby (LATER,
  # which it sets, with File's methods bound before the suite could swap
  # File or stub them); the helper's own tests, which require the body
  # itself, load the source beside it. As the helper loads, or while the
  # suite runs (a fork, exit!): not stressed, whatever the suite set.
  # Threads that need a part at once wait while one loads it (they went on
  # while its names were not there yet); the thread loading it, asked
  # again from inside the part, goes on; a trap handler, which may not
  # wait, loads it itself.
  @later = {}
  @loading = {}
  LATER_LOCK = Thread::Mutex.new

  def self.later(name)
    return if @later[name]
    return later_load(name) if LATER_LOCK.owned?

    begin
      LATER_LOCK.lock
    rescue ThreadError
      return later_load(name)
    end
    begin
      later_load(name)
    ensure
      LATER_LOCK.unlock
    end
  end

  def self.later_load(name)
    return if @later[name] || @loading[name] == Thread.current

    @loading[name] = Thread.current
    begin
      load_part(name)
      @later[name] = true
    ensure
      @loading.delete(name)
    end
  end

  def self.load_part(name)
    file = "gemleak_helper_#{name}.rb"
    stress = Core.unstress
    begin
      if const_defined?(:LATER, false)
        LATER[1].call(LATER[0], file)
      else
        load(File.join(__dir__, file))
      end
    ensure
      Core.restress(stress)
    end
  end

  # The engine's runtime preloaded into Ruby (LeakSanitizer's liblsan), when
  # the run uses one: GEMLEAK_ENGINE_RUNTIME names it.
  module Runtime
    PATH = Core::VARIABLES[Protocol::RUNTIME_VARIABLE].to_s
    REAL = begin
      PATH.empty? ? "" : File.realpath(PATH).freeze
    rescue SystemCallError
      PATH
    end
    # The allocation front gemleak preloads before the runtime, when the run
    # uses one (GEMLEAK_ALLOC_LIBRARY): without it the runtime's check
    # cannot judge what this process allocated on a Fiber's stack.
    FRONT = Core::VARIABLES[Protocol::ALLOC_LIBRARY_VARIABLE].to_s

    # Whether the dynamic loader loaded an object of one of @names (a
    # path, or a base name): as the client library walks them, or, without
    # it, in /proc/self/maps (some 0.5 ms a process under a sanitizer's
    # runtime, whose mappings are hundreds).
    def self.loaded?(*names)
      if Core.native? && Native.respond_to?(:loaded)
        names.any? { |name| Native.loaded(name) == 1 }
      else
        maps = File.read("/proc/self/maps")
        names.any? { |name| maps.include?(name) }
      end
    rescue SystemCallError
      false
    end

    MAPPED = !REAL.empty? && loaded?(REAL, PATH)
    FRONT_MAPPED = FRONT.empty? || loaded?(FRONT, File.basename(FRONT))

    class << self
      def mapped?
        MAPPED
      end

      # The runtime is here, and what gemleak preloads before it too.
      def whole?
        mapped? && FRONT_MAPPED
      end

      # The runtime stays in this process and leaves LD_PRELOAD, for what
      # it starts: a compiler or an assembler under LeakSanitizer leaks or
      # crashes. A Ruby it starts starts again with it (GemLeakLaunch). So
      # do the libraries preloaded before it: the client library (per test,
      # under LeakSanitizer) and the allocation front.
      def keep_to_self
        preload = ENV["LD_PRELOAD"].to_s.split(/[: ]/).reject(&:empty?)
        ours = [Core::VARIABLES[Protocol::CLIENT_VARIABLE].to_s, FRONT].reject(&:empty?)
        kept = preload.reject { |lib| lib == PATH || lib == REAL || ours.include?(lib) }
        return if kept.size == preload.size

        kept.empty? ? ENV.delete("LD_PRELOAD") : ENV["LD_PRELOAD"] = kept.join(":")
      end
    end
  end
end
