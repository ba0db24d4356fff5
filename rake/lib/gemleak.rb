# frozen_string_literal: true

require "fileutils"
require "json"
require "rbconfig"
require "shellwords"
require "tmpdir"
require "gemleak/version"
require "gemleak/unbuilt"
require "gemleak/asan_build"

# Runs a gem's test suite under the gemleak binary (Valgrind memcheck, with
# Ruby's own noise filtered out) from Rake. See gemleak/rake (minitest and
# test-unit) and gemleak/rspec.
module GemLeak
  class Error < StandardError; end

  # The gemleak binary that the gemleak gem built when it was installed
  # (ext/gemleak/extconf.rb puts it there), and the one `make` builds in a
  # source tree (a Bundler `path:` gem, which Bundler does not build).
  GEM_ROOT = File.expand_path("../..", __dir__)
  GEM_EXECUTABLES = [
    File.join(GEM_ROOT, "libexec", "gemleak"),
    File.join(GEM_ROOT, "build", "gemleak"),
  ].freeze

  # make install writes gemleak/installed.rb beside this file: where it put
  # the binary.
  installed = File.join(__dir__, "gemleak", "installed.rb")
  require installed if File.file?(installed)

  # Turns a pattern setting (binary_name, skip_functions...) into what
  # gemleak's --object and --skip-function take: a String as it is, a Regexp
  # as /SOURCE/, which gemleak matches as Ruby's Regexp#match? does.
  # Raises GemLeak::Error for what cannot be passed on.
  module Pattern
    # Ruby's flags that PCRE, which gemleak's GRegex is, spells inline.
    INLINE_FLAGS = { Regexp::IGNORECASE => "i", Regexp::EXTENDED => "x", Regexp::MULTILINE => "s" }.freeze

    def self.argument(value, setting)
      case value
      when Regexp then regexp(value, setting)
      when String, Symbol then value.to_s
      else raise Error, "#{setting}: #{value.inspect} is neither a String nor a Regexp"
      end
    end

    def self.regexp(regexp, setting)
      source = regexp.source
      refuse = lambda do |why|
        raise Error, "#{setting}: #{regexp.inspect} cannot be passed to gemleak: #{why}"
      end
      if (regexp.options & Regexp::NOENCODING).nonzero? ||
         !%w[UTF-8 US-ASCII].include?(regexp.encoding.name)
        refuse.call("gemleak matches names as UTF-8; drop the encoding flag")
      end
      # Where Ruby and PCRE read the same text differently.
      refuse.call("\\h is a hex digit in Ruby, a space in gemleak; write [0-9a-fA-F]") if source =~ /(?<!\\)(?:\\\\)*\\h/
      # (?m) turned on; Regexp.union's and interpolation's (?-mix:...) turn it off, as PCRE's does.
      refuse.call("(?m) is Ruby's dot-all, PCRE's multi-line; give the /m flag instead") if source =~ /\(\?[ix]*m[imx]*(?:-[imx]*)?[:)]/
      flags = INLINE_FLAGS.filter_map { |bit, letter| letter if (regexp.options & bit).nonzero? }.join
      "/#{flags.empty? ? "" : "(?#{flags})"}#{source}/"
    end
  end

  # What `gemleak run` is told: each setting maps to one of its options.
  # ruby_memcheck's setting names work too, with ruby_memcheck's meaning
  # (see doc/guide.md, "ruby_memcheck's settings").
  class Configuration
    # ruby_memcheck lists the Ruby functions whose allocations are Ruby's;
    # gemleak needs no list: its rule 2 knows Ruby's allocation functions
    # instead, and every other Ruby function allocates for Ruby. So the
    # defaults are empty, and `DEFAULT_SKIPPED_RUBY_FUNCTIONS + [...]`, as a
    # ruby_memcheck Rakefile writes it, adds just the patterns given.
    DEFAULT_SKIPPED_RUBY_FUNCTIONS = [].freeze

    # Target extensions, as create_makefile names them ("tally"), paths,
    # globs or Regexps (--object). Empty: the extensions the suite loaded.
    attr_accessor :binary_names
    # :lsan (or "lsan"): --engine lsan, LeakSanitizer preloaded into Ruby 3.3+,
    # leaks only, several times faster; :asan: --engine asan, the extension
    # built with AddressSanitizer into tmp/gemleak-asan/ (AsanBuild) and run
    # with its runtime preloaded: memory errors at compiled-in speed, and
    # leaks on Ruby 3.3+; :valgrind or nil: Valgrind, the default
    attr_accessor :engine
    attr_accessor :valgrind            # --valgrind PATH (words after the first: --valgrind-opt)
    attr_accessor :valgrind_options    # --valgrind-opt, each
    attr_accessor :suppressions_dir    # --suppressions-dir DIR
    attr_accessor :skip_functions      # --skip-function, each: Strings (globs) or Regexps
    attr_accessor :default_skips       # false: --no-default-skips
    attr_accessor :reports             # ["junit:gemleak.xml", "sarif:gemleak.sarif"]: --format, each
    attr_accessor :all_errors          # --all-errors
    attr_accessor :free_at_exit        # --free-at-exit (Ruby 3.4+)
    attr_accessor :leak_kinds          # --leak-kinds
    attr_accessor :fail_on             # --fail-on
    attr_accessor :max_bytes           # --max-bytes
    attr_accessor :baseline            # --baseline FILE
    attr_accessor :write_baseline      # --write-baseline FILE: the run passes, and writes it
    # true: --write-baseline-if-missing, the baseline written by the first
    # run (a gem's first CI run), which passes; read by the next
    attr_accessor :write_baseline_if_missing
    attr_accessor :gen_suppressions    # --gen-suppressions
    attr_accessor :keep_xml            # --keep-xml DIR
    # true or :test: --per-test (each leak names the test it was lost in);
    # :file: --per-test=file (a check per test file: cheaper on big suites)
    attr_accessor :per_test
    # true: --growth (memory that only grows: after the suite each test
    # runs again, 3 times, and a site of the extension whose live memory
    # rose each time is reported with the test); K: --growth=K, K runs
    # again (GROWTH_REPETITIONS)
    attr_accessor :growth
    attr_accessor :extra_arguments     # anything else, as gemleak run takes it
    # The gemleak executable: by default $GEMLEAK, else the gemleak gem's
    # own, else where make install put it, else gemleak on PATH (but for
    # a gem installed where it could not be built, which says so).
    attr_writer :executable

    # ruby_memcheck's settings that gemleak has no use for, and why.
    NOT_FOR_GEMLEAK = {
      ruby: "the tasks run the Ruby that runs Rake (RSpec: its rspec command)",
      temp_dir: "gemleak keeps Valgrind's XML in a private directory; keep_xml = DIR keeps it there",
      output_io: "the report goes to standard error; reports = [\"text:FILE\"] writes it to a file too",
    }.freeze

    # Settings by name, as GemLeak.config and ruby_memcheck's
    # Configuration.new take them: Configuration.new(binary_name: "tally").
    def initialize(**settings)
      @binary_names = []
      @valgrind_options = []
      @skip_functions = []
      @default_skips = true
      @reports = []
      @extra_arguments = []
      set(**settings)
    end

    # Sets each setting given by name; raises GemLeak::Error for a name
    # that is not one, saying why when it is ruby_memcheck's.
    def set(**settings)
      settings.each do |name, value|
        if NOT_FOR_GEMLEAK.key?(name.to_sym)
          raise Error, "GemLeak: #{name} is ruby_memcheck's, not gemleak's: #{NOT_FOR_GEMLEAK[name.to_sym]}"
        end
        unless respond_to?("#{name}=")
          raise Error, "GemLeak: unknown setting #{name} (see doc/guide.md, \"Rake settings\", for the settings)"
        end

        public_send("#{name}=", value)
      end
      self
    end

    def binary_name=(name)
      @binary_names = Array(name)
    end

    def binary_name
      binary_names.size == 1 ? binary_names.first : binary_names
    end

    # ruby_memcheck's names, with its meaning.

    # ruby_memcheck's list of functions to skip: skipped in addition to what
    # rule 2 leaves out (see DEFAULT_SKIPPED_RUBY_FUNCTIONS).
    def skipped_ruby_functions=(patterns)
      @skip_functions = Array(patterns)
    end

    def skipped_ruby_functions
      skip_functions
    end

    alias valgrind_suppressions_dir= suppressions_dir=
    alias valgrind_suppressions_dir suppressions_dir
    alias valgrind_generate_suppressions= gen_suppressions=
    alias valgrind_generate_suppressions gen_suppressions
    alias use_only_ruby_free_at_exit= free_at_exit=
    alias use_only_ruby_free_at_exit free_at_exit

    # ruby_memcheck reports every memory error unless filter_all_errors;
    # gemleak keeps those that enter the extension unless all_errors.
    def filter_all_errors=(filter)
      @all_errors = !filter
    end

    def filter_all_errors
      !all_errors
    end

    def initialize_copy(other)
      super
      %i[@binary_names @valgrind_options @skip_functions @reports @extra_arguments].each do |ivar|
        instance_variable_set(ivar, other.instance_variable_get(ivar).dup)
      end
    end

    def executable
      return @executable if @executable

      from_env = ENV["GEMLEAK"]
      return from_env if from_env && !from_env.empty?

      candidates = GEM_EXECUTABLES.dup
      candidates << INSTALLED_EXECUTABLE if defined?(INSTALLED_EXECUTABLE)
      found = candidates.find { |candidate| File.file?(candidate) && File.executable?(candidate) }
      return found if found

      # Installed where it could not be built: its install said why. Not
      # PATH's gemleak: under Bundler that is this gem's own command.
      unbuilt = Unbuilt.message(GEM_ROOT)
      raise Error, unbuilt if unbuilt

      on_path = ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).map { |dir| File.join(dir, "gemleak") }
      found = on_path.find { |candidate| File.file?(candidate) && File.executable?(candidate) }
      return found if found

      raise Error, "gemleak's binary is not built: install the gemleak gem (gem install, or Bundler " \
                   "with git: or a gem source, builds it), run make in gemleak's source (for " \
                   "Bundler's path:), or set GEMLEAK=/path/to/gemleak"
    end

    # What gemleak's messages call each engine (gemleak run --engine).
    ENGINE_TITLES = { "valgrind" => "Valgrind", "lsan" => "LeakSanitizer",
                      "asan" => "AddressSanitizer" }.freeze

    # The engine that runs, as gemleak's messages name it: "Valgrind" by
    # default, "LeakSanitizer" for engine :lsan.
    def engine_title
      name = engine.nil? || engine.to_s.empty? ? "valgrind" : engine.to_s
      ENGINE_TITLES.fetch(name, name)
    end

    # The options of `gemleak run`, without the command. Raises
    # GemLeak::Error for a setting that cannot be passed on.
    def arguments
      args = []
      binary_names.each { |name| args.push("--object", Pattern.argument(name, "binary_name")) }
      args.push("--engine", string(engine, "engine")) if engine
      if valgrind
        words = valgrind.is_a?(Array) ? valgrind.map(&:to_s) : string(valgrind, "valgrind").shellsplit
        args.push("--valgrind", words.first)
        words.drop(1).each { |opt| args.push("--valgrind-opt", opt) }
      end
      valgrind_options.each { |opt| args.push("--valgrind-opt", string(opt, "valgrind_options")) }
      args.push("--suppressions-dir", string(suppressions_dir, "suppressions_dir")) if suppressions_dir
      args.push("--no-default-skips") unless default_skips
      skip_functions.each { |fn| args.push("--skip-function", Pattern.argument(fn, "skip_functions")) }
      args.push("--all-errors") if all_errors
      args.push("--free-at-exit") if free_at_exit
      args.push("--leak-kinds", string(leak_kinds, "leak_kinds")) if leak_kinds
      args.push("--fail-on", string(fail_on, "fail_on")) if fail_on
      args.push("--max-bytes", string(max_bytes, "max_bytes")) if max_bytes
      args.push("--baseline", string(baseline, "baseline")) if baseline
      args.push("--write-baseline", string(write_baseline, "write_baseline")) if write_baseline
      args.push("--write-baseline-if-missing") if write_baseline_if_missing
      args.push("--gen-suppressions") if gen_suppressions
      args.push("--keep-xml", string(keep_xml, "keep_xml")) if keep_xml
      args.push(*per_test_arguments)
      args.push(*growth_arguments)
      args.concat(extra_arguments.map { |arg| string(arg, "extra_arguments") })
      args
    end

    private

    def per_test_arguments
      case per_test
      when nil, false then []
      when true, :test, "test" then ["--per-test"]
      when :file, "file" then ["--per-test=file"]
      else raise Error, "per_test: #{per_test.inspect} is none of true, :test, :file or false"
      end
    end

    def growth_arguments
      case growth
      when nil, false then []
      when true then ["--growth"]
      when Integer
        raise Error, growth_refused unless GROWTH_REPETITIONS.cover?(growth)

        ["--growth=#{growth}"]
      else raise Error, growth_refused
      end
    end

    def growth_refused
      "growth: #{growth.inspect} is none of true, false or how many times each test runs " \
        "again (#{GROWTH_REPETITIONS.min} to #{GROWTH_REPETITIONS.max})"
    end

    # A setting that is a name, a number or a path; a Regexp means nothing there.
    def string(value, setting)
      raise Error, "#{setting}: a Regexp (#{value.inspect}) is no #{setting}; give a String" if value.is_a?(Regexp)

      value.to_s
    end
  end

  class << self
    def configuration
      @configuration ||= Configuration.new
    end

    def configure
      yield configuration
      configuration
    end

    # Settings in a line, as ruby_memcheck's RubyMemcheck.config takes them:
    # GemLeak.config(binary_name: "tally", skipped_ruby_functions: [...]).
    def config(**settings)
      configuration.set(**settings)
    end
  end

  # What both task classes share: an optional GemLeak::Configuration as the
  # first argument of new, else GemLeak.configure's; a description for
  # rake -T that names the engine; compile first when the Rakefile has such
  # a task; a word when another library's task of the same name is there;
  # and, given no block, the tests of the task it stands beside (`rake
  # test`, `rake spec`), as that task runs them.
  module ConfiguredTask
    def initialize(*args, &block)
      @gemleak = args.first.is_a?(Configuration) ? args.shift : nil
      args.unshift(self.class::DEFAULT_NAME) if args.empty?
      # No block: no test files of its own, but those of the suite's task.
      @gemleak_mirror = block.nil?
      super(*args, &block)
    end

    # The task's own configuration, else GemLeak.configure's as it is when
    # the task runs (so the configure block may come anywhere in the Rakefile).
    def gemleak
      @gemleak || GemLeak.configuration
    end

    private

    # The description rake -T shows, naming the engine that runs: read when
    # Rake shows it, after the whole Rakefile, since GemLeak.configure may
    # come after the task. @text: "Run the tests under %s with gemleak".
    def gemleak_describe(full_name, text)
      task = Rake::Task[full_name]
      configured = self
      comment = -> { format(text, configured.gemleak.engine_title) }
      task.define_singleton_method(:comment) { comment.call }
      task.define_singleton_method(:full_comment) { comment.call }
    end

    # Where the task library (Rake::TestTask, Minitest::TestTask, RSpec's
    # RakeTask) that defined the Rake task @name did it: each defines its
    # task with a block run on itself, whose binding's receiver is the
    # library (and, for RSpec's, holds the block it was given).
    # Returns: nil when there is no such task, or another defined it.
    def gemleak_suite_binding(name)
      return nil unless Rake::Task.task_defined?(name)

      Rake::Task[name].actions.each do |action|
        binding = begin
          action.binding
        rescue ArgumentError
          nil # a Proc made from a method has no binding
        end
        receiver = binding&.receiver
        return binding if receiver.is_a?(Rake::TaskLib) && !receiver.is_a?(ConfiguredTask)
      end
      nil
    end

    # What the suite's task needs first (compile, among others), as `rake
    # test` invokes it; but with engine :asan, the compile task: the run
    # loads the AddressSanitizer build, and the project's own is left as
    # it is.
    def gemleak_invoke_prerequisites(name)
      gemleak_ready!
      return unless Rake::Task.task_defined?(name)

      Rake::Task[name].prerequisite_tasks.each do |task|
        next if gemleak_asan? && (task.name == "compile" || task.name.start_with?("compile:"))

        task.invoke
      end
    end

    def gemleak_asan?
      gemleak.engine.to_s == "asan"
    end

    # Before anything is built: a gemleak to run (a gem installed without
    # its binary says what to install, not that the compiler is missing).
    def gemleak_ready!
      gemleak_failing { gemleak.executable }
    end

    # "3 test files", "1 spec file".
    def gemleak_files(count, kind)
      "#{count} #{kind} file#{count == 1 ? "" : "s"}"
    end

    # The task's full name ("test:valgrind") for @name as given (a name, or
    # a Hash of a name and its prerequisites).
    def gemleak_task_name(name)
      name = name.keys.first if name.is_a?(Hash)
      Rake.application.current_scope.path_with_task_name(name.to_s)
    end

    # Rake adds a second definition's action to the first's: both would run
    # the suite under gemleak. Returns: true when the task may be defined.
    def gemleak_task_free?(full_name)
      return true unless Rake::Task.task_defined?(full_name)

      warn "gemleak: rake task #{full_name} is already defined (by ruby_memcheck?); gemleak leaves " \
           "it alone rather than run the suite twice: remove the other definition, or give " \
           "gemleak's task another name"
      # A desc given for gemleak's task must not land on the next one.
      Rake.application.last_description = nil
      false
    end

    # What a task runs: a GemLeak::Error it raises (a failing gate or
    # suite, no gemleak to run) is a message and an exit status, as a
    # failing `rake test` is, without a backtrace: Rake prints one, leaving
    # out only its own and Ruby's lines, and this library's tell a user
    # nothing.
    def gemleak_failing
      yield
    rescue Error => e
      e.set_backtrace([])
      raise
    end

    # When the task runs: the extension is built first (rake-compiler's
    # compile task, wherever the Rakefile defines it; with engine :asan, its
    # AddressSanitizer build instead), and another library that added an
    # action to this task is named.
    # Returns: the Ruby options that put the AddressSanitizer build first
    # on the load path, else none; and the variables that have the suite
    # load that build however it requires the extension (gemleak's helper
    # reads them: require_relative, a path built from __dir__), else none.
    def gemleak_prepare(full_name)
      gemleak_ready!
      load_path = []
      environment = {}
      if gemleak_asan?
        built = AsanBuild.new.build!
        load_path = ["-I", built]
        environment = { INSTRUMENTED_VARIABLE => built }
      elsif Rake::Task.task_defined?("compile")
        Rake::Task["compile"].invoke
      end
      actions = Rake::Task[full_name].actions.size
      if actions > 1
        warn "gemleak: rake task #{full_name} also runs #{actions - 1} action(s) that another library " \
             "(ruby_memcheck?) added: the suite runs more than once under #{gemleak.engine_title}"
      end
      [load_path, environment]
    end
  end

  # The members of gemleak's JSON report that the tasks read. Spelled once,
  # in gemleak's include/gemleak/base/json_format.h: each is GL_MEMBER_ and
  # its name there, and tests/rake/test_messages.rb fails when one is not.
  module JsonMembers
    FINDINGS = "findings"
    SUMMARY = "summary"
    PROBLEMS = "problems"
    COMMAND = "command"
    STATUS = "status"
    GATE = "gate"
    FAILED = "failed"
    COMPLETE = "complete"
    MESSAGE = "message"
    ERROR = "error"
    UNMATCHED_OBJECT = "unmatched_object"
    LOADED = "loaded"
  end

  # GL_PROTO_INSTRUMENTED_VARIABLE of gemleak's protocol.h: the directory
  # of a build of the project's extensions the helper loads in place of the
  # project's own (tests/rake/test_messages.rb holds it equal).
  INSTRUMENTED_VARIABLE = "GEMLEAK_INSTRUMENTED"
  # GL_PROTO_GROWTH_MIN to GL_PROTO_GROWTH_MAX of protocol.h: the
  # repetitions growth = K may ask for.
  GROWTH_REPETITIONS = (2..20).freeze

  # One run of a suite under gemleak: the command prefix, and after the run,
  # what gemleak found. The JSON report it writes says what it found, and
  # how the command ended; the exit status alone cannot tell a leak from a
  # failing suite.
  class Session
    include JsonMembers

    # Raises GemLeak::Error when there is no gemleak to run, or a setting
    # cannot be passed on, before it makes the directory #check! removes.
    def initialize(configuration, environment = {})
      @configuration = configuration
      @environment = environment.freeze
      executable = configuration.executable
      arguments = configuration.arguments
      @dir = Dir.mktmpdir("gemleak-rake-")
      @report_path = File.join(@dir, "report.json")
      formats = ["--format", "text", "--format", "json:#{@report_path}"]
      configuration.reports.each { |report| formats.push("--format", report.to_s) }
      @prefix_words = [executable, "run", *arguments, *formats, "--"].freeze
    end

    # The shell words that go before the Ruby command.
    attr_reader :prefix_words
    # The variables the command runs with besides Rake's (a Hash for
    # system and sh).
    attr_reader :environment

    def prefix
      prefix_words.shelljoin
    end

    # gemleak's JSON report of the run, read once it is over; nil when
    # gemleak wrote none (it stopped before: a usage or environment error,
    # already on stderr).
    def report
      return @report if defined?(@report)

      @report = File.file?(@report_path) ? JSON.parse(File.read(@report_path)) : nil
    rescue JSON::ParserError
      @report = nil
    end

    # The findings of the run, or nil when there is no report.
    def findings
      report&.fetch(FINDINGS, nil)
    end

    def gate_failed?
      report&.dig(GATE, FAILED) == true
    end

    # Raises when gemleak found what fails the gate, when the command
    # failed, or both, saying which in Rake's terms.
    def check!(ok, status, command_name)
      failure = failure_message(ok, status, command_name)
      raise Error, failure if failure
    ensure
      FileUtils.rm_rf(@dir)
    end

    private

    def failure_message(ok, status, command_name)
      return binary_name_message(report[ERROR]) if report&.dig(ERROR, UNMATCHED_OBJECT)

      suite_status = command_status(status)
      if gate_failed?
        count = findings.size
        found = "#{count} finding#{count == 1 ? "" : "s"} (leaks or memory errors) in the extension"
        return "gemleak: #{found}; the report is above" if suite_status.zero?

        return "#{command_name} failed (status #{suite_status}), and gemleak found #{found}: " \
               "both are reported above"
      end
      return nil if ok

      if report.nil?
        return "gemleak could not run the #{command_name} (status #{exit_status(status)}); " \
               "its message is above"
      end
      incomplete = report.dig(GATE, COMPLETE) == false
      if suite_status.nonzero?
        return "#{command_name} failed (status #{suite_status}); gemleak found no leaks" unless incomplete
        if checked_nothing?
          return "#{command_name} failed (status #{suite_status}), and gemleak checked nothing: no " \
                 "process it checked loaded the extension; its messages are above"
        end

        return "#{command_name} failed (status #{suite_status}), and gemleak could not read all " \
               "that its engine wrote (no leaks in what it read); its messages are above"
      end
      if checked_nothing?
        return "gemleak: nothing was checked (status #{exit_status(status)}): no process it checked " \
               "loaded the extension; its message is above"
      end

      "gemleak could not read all that its engine wrote (status #{exit_status(status)}); its message is above"
    end

    # The run read all there was, and no process under Valgrind loaded a
    # target: not XML gemleak could not read. The report says it only in
    # words, in the gate's line and the summary's problems.
    def checked_nothing?
      problems = Array(report&.dig(SUMMARY, PROBLEMS))
      gate = report&.dig(GATE, MESSAGE).to_s
      gate.include?("nothing was checked") || problems.any? { |p| p.to_s.start_with?("nothing was checked") }
    end

    # How the command under gemleak ended, 0 when it passed: the report says
    # so. A gemleak too old to say uses the command's status as its own, but
    # for 1, 2 and 3.
    def command_status(status)
      command = report&.fetch(COMMAND, nil)
      return command[STATUS].to_i if command.is_a?(Hash) && command.key?(STATUS)

      code = status.respond_to?(:exitstatus) ? status.exitstatus.to_i : 0
      [2, 3].include?(code) || (code == 1 && gate_failed?) ? 0 : code
    end

    # gemleak stopped after the run because a binary_name matched nothing the
    # suite loaded: say so in the Rakefile's words.
    def binary_name_message(error)
      pattern = error[UNMATCHED_OBJECT]
      setting = @configuration.binary_names.find do |name|
        Pattern.argument(name, "binary_name") == pattern
      rescue Error
        false
      end
      loaded = Array(error[LOADED])
      names = loaded.map { |path| File.basename(path).sub(/\..*\z/, "") }.uniq
      hint = case names.size
             when 0 then ""
             when 1 then " (#{names.first.inspect}, as create_makefile names it)"
             else " (#{names.map(&:inspect).join(" or ")}, as create_makefile names them)"
             end
      "binary_name #{(setting || pattern).inspect} names no extension the tests loaded " \
        "(they loaded: #{loaded.join(", ")}): fix binary_name in your Rakefile#{hint}, " \
        "or leave it unset to check every extension the tests load"
    end

    def exit_status(status)
      status.respond_to?(:exitstatus) && status.exitstatus ? status.exitstatus : status.inspect
    end
  end
end
