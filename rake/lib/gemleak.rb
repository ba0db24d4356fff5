# frozen_string_literal: true

require "fileutils"
require "json"
require "shellwords"
require "tmpdir"
require "gemleak/version"

# Runs a gem's test suite under the gemleak binary (Valgrind memcheck, with
# Ruby's own noise filtered out) from Rake. See gemleak/rake (minitest and
# test-unit) and gemleak/rspec.
module GemLeak
  class Error < StandardError; end

  # What `gemleak run` is told: each setting maps to one of its options.
  class Configuration
    # Target extensions, as create_makefile names them ("tally"), paths or globs
    # (--object). Empty: the extensions the suite loaded.
    attr_accessor :binary_names
    attr_accessor :valgrind            # --valgrind PATH
    attr_accessor :valgrind_options    # --valgrind-opt, each
    attr_accessor :suppressions_dir    # --suppressions-dir DIR
    attr_accessor :skip_functions      # --skip-function, each (callbacks into Ruby)
    attr_accessor :reports             # ["junit:gemleak.xml", "sarif:gemleak.sarif"]: --format, each
    attr_accessor :all_errors          # --all-errors
    attr_accessor :free_at_exit        # --free-at-exit (Ruby 3.4+)
    attr_accessor :leak_kinds          # --leak-kinds
    attr_accessor :fail_on             # --fail-on
    attr_accessor :max_bytes           # --max-bytes
    attr_accessor :baseline            # --baseline FILE
    attr_accessor :gen_suppressions    # --gen-suppressions
    attr_accessor :keep_xml            # --keep-xml DIR
    attr_accessor :extra_arguments     # anything else, as gemleak run takes it
    # The gemleak executable; by default $GEMLEAK, else gemleak on PATH.
    attr_writer :executable

    def initialize
      @binary_names = []
      @valgrind_options = []
      @skip_functions = []
      @reports = []
      @extra_arguments = []
    end

    def binary_name=(name)
      @binary_names = Array(name)
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

      ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).each do |dir|
        candidate = File.join(dir, "gemleak")
        return candidate if File.file?(candidate) && File.executable?(candidate)
      end
      raise Error, "gemleak not found: install it (make install in gemleak's source) " \
                   "or set GEMLEAK=/path/to/gemleak"
    end

    # The options of `gemleak run`, without the command.
    def arguments
      args = []
      binary_names.each { |name| args.push("--object", name.to_s) }
      args.push("--valgrind", valgrind.to_s) if valgrind
      valgrind_options.each { |opt| args.push("--valgrind-opt", opt.to_s) }
      args.push("--suppressions-dir", suppressions_dir.to_s) if suppressions_dir
      skip_functions.each { |fn| args.push("--skip-function", fn.to_s) }
      args.push("--all-errors") if all_errors
      args.push("--free-at-exit") if free_at_exit
      args.push("--leak-kinds", leak_kinds.to_s) if leak_kinds
      args.push("--fail-on", fail_on.to_s) if fail_on
      args.push("--max-bytes", max_bytes.to_s) if max_bytes
      args.push("--baseline", baseline.to_s) if baseline
      args.push("--gen-suppressions") if gen_suppressions
      args.push("--keep-xml", keep_xml.to_s) if keep_xml
      args.concat(extra_arguments.map(&:to_s))
      args
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

    # Sets binary_name in a line, as the reference tool's users expect.
    def config(binary_name: nil, **settings)
      configuration.binary_name = binary_name if binary_name
      settings.each { |name, value| configuration.public_send("#{name}=", value) }
      configuration
    end
  end

  # What both task classes share: an optional GemLeak::Configuration as the
  # first argument of new, else GemLeak.configure's.
  module ConfiguredTask
    def initialize(*args, &block)
      @gemleak = args.first.is_a?(Configuration) ? args.shift : nil
      super(*args, &block)
    end

    # The task's own configuration, else GemLeak.configure's as it is when
    # the task runs (so the configure block may come anywhere in the Rakefile).
    def gemleak
      @gemleak || GemLeak.configuration
    end
  end

  # One run of a suite under gemleak: the command prefix, and after the run,
  # what gemleak found. gemleak's exit status tells a leak (1) from a failing
  # suite (4) and both (5); its JSON report, written here, says what was
  # found and the suite's own status.
  class Session
    # Raises GemLeak::Error when there is no gemleak to run, before it
    # makes the directory that #check! removes.
    def initialize(configuration)
      executable = configuration.executable
      @dir = Dir.mktmpdir("gemleak-rake-")
      @report_path = File.join(@dir, "report.json")
      formats = ["--format", "text", "--format", "json:#{@report_path}"]
      configuration.reports.each { |report| formats.push("--format", report.to_s) }
      @prefix_words = [executable, "run", *configuration.arguments, *formats, "--"].freeze
    end

    # The shell words that go before the Ruby command.
    attr_reader :prefix_words

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
      report&.fetch("findings", [])
    end

    def gate_failed?
      report&.dig("gate", "failed") == true
    end

    # Raises when gemleak found what fails the gate, when the command
    # failed, or both; then when gemleak could not read all that Valgrind
    # wrote. gemleak's exit status says which (1, 4, 5, 3), its JSON report
    # how the command ended.
    def check!(ok, status, command_name)
      begin
        suite_status = report&.dig("command", "status")
        if gate_failed?
          count = findings.size
          found = "#{count} finding#{count == 1 ? "" : "s"} (leaks or memory errors) in the extension"
          if suite_status.to_i.nonzero?
            raise Error, "#{command_name} failed (status #{suite_status}), and gemleak found #{found}: " \
                         "both are reported above"
          end
          raise Error, "gemleak: #{found}; the report is above"
        end
        return if ok

        if findings.nil?
          raise Error, "gemleak could not run the #{command_name} (status #{exit_status(status)}); " \
                       "its message is above"
        end
        if suite_status.to_i.zero?
          raise Error, "gemleak could not read all that Valgrind wrote (status #{exit_status(status)}); " \
                       "its message is above"
        end
        raise Error, "#{command_name} failed (status #{suite_status}); gemleak found no leaks"
      ensure
        FileUtils.rm_rf(@dir)
      end
    end

    private

    def exit_status(status)
      status.respond_to?(:exitstatus) && status.exitstatus ? status.exitstatus : status.inspect
    end
  end
end
