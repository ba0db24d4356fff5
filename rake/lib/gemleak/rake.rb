# frozen_string_literal: true

require "rake"
require "rake/tasklib"
require "rake/testtask"
require "gemleak"

module GemLeak
  # A Rake::TestTask whose Ruby runs under `gemleak run`: test:valgrind,
  # beside the gem's own test task. Given no block, it runs the tests that
  # `rake test` runs, as `rake test` runs them (the same files, load path
  # and options, after the same prerequisites), whatever defined that task:
  # Rake::TestTask, Minitest::TestTask or RSpec's RakeTask.
  #
  #   GemLeak::TestTask.new
  #
  # Given a block, it is a Rake::TestTask of its own, with what the block
  # sets:
  #
  #   GemLeak::TestTask.new do |t|
  #     t.libs << "test"
  #     t.test_files = FileList["test/**/*_test.rb"]
  #   end
  #
  # It builds the extension first when the Rakefile has a compile task
  # (rake-compiler's), and takes its settings from GemLeak.configure
  # (wherever it stands in the Rakefile), or from a GemLeak::Configuration
  # given as the first argument. A name, or a name and prerequisites, may
  # follow: GemLeak::TestTask.new("test:memory" => :build).
  class TestTask < Rake::TestTask
    include ConfiguredTask

    DEFAULT_NAME = "test:valgrind"
    # %s: the engine that runs ("Valgrind", "LeakSanitizer")
    DESCRIPTION = "Run the tests under %s with gemleak"
    # The task whose tests a task given no block runs.
    SUITE_TASK = "test"

    # Rake's description would be "Run tests for {:valgrind=>:compile}";
    # one the block set, or a desc just before, is kept.
    def define
      @gemleak_task = gemleak_task_name(@name)
      return self unless gemleak_task_free?(@gemleak_task)

      given = Rake.application.last_description
      @description = given if given
      ours = given.nil? && (@description.nil? || @description.start_with?("Run tests"))
      @description = format(DESCRIPTION, "Valgrind") if ours
      if @gemleak_mirror
        desc @description
        task(@name => Array(deps)) { gemleak_run_suite_task }
      else
        super
      end
      gemleak_describe(@gemleak_task, DESCRIPTION) if ours
      self
    end

    # Rake::TestTask runs its command through FileUtils#ruby with one string
    # of shell words; ours goes through gemleak first.
    def ruby(*args, **options, &block)
      words = args.length > 1 ? args.shelljoin : args.first.to_s
      gemleak_say_files(file_list.size)
      gemleak_sh(words, options, &block)
    end

    private

    # The suite's own task, `rake test`, as it runs: its prerequisites,
    # then its command under gemleak. A Rakefile without one gets
    # Rake::TestTask's defaults, and says so.
    def gemleak_run_suite_task
      gemleak_invoke_prerequisites(SUITE_TASK)
      library = gemleak_suite_binding(SUITE_TASK)&.receiver
      if defined?(::Minitest::TestTask) && library.is_a?(::Minitest::TestTask)
        files = Dir[*library.test_globs].uniq
        gemleak_say_files(files.size, library)
        gemleak_sh(library.make_test_cmd, { verbose: library.verbose })
      elsif defined?(::RSpec::Core::RakeTask) && library.is_a?(::RSpec::Core::RakeTask)
        gemleak_run_rspec_task(library)
      else
        gemleak_run_rake_test_task(library.is_a?(Rake::TestTask) ? library : nil)
      end
    end

    # A Rake::TestTask's command, as its own task builds it (@library nil:
    # this task's, with Rake::TestTask's defaults).
    def gemleak_run_rake_test_task(library)
      source = library || self
      files = source.file_list
      if library.nil?
        $stderr.puts "gemleak: #{@gemleak_task}: no Rake::TestTask, Minitest::TestTask or RSpec " \
                     "task defines `rake #{SUITE_TASK}`: it runs Rake::TestTask's default test files " \
                     "(#{@pattern}, or TEST=); give GemLeak::TestTask a block to name yours"
      end
      gemleak_say_files(files.size, library)
      words = "#{source.ruby_opts_string} #{source.run_code} #{source.file_list_string} " \
              "#{source.option_list}"
      Rake::FileUtilsExt.verbose(source.verbose) { gemleak_sh(words, {}) }
    end

    # RSpec's task named `test`: its rspec command, the AddressSanitizer
    # build (engine :asan) first on the load path.
    def gemleak_run_rspec_task(library)
      files = ENV["SPEC"] ? FileList[ENV["SPEC"]] : Dir.glob(library.pattern).uniq
      gemleak_say_files(files.size, library)
      gemleak_failing do
        load_path, environment = gemleak_prepare(@gemleak_task)
        copy = library.dup
        copy.ruby_opts = [load_path.shelljoin, *Array(copy.ruby_opts)] unless load_path.empty?
        session = Session.new(gemleak, environment)
        command = "#{session.prefix} #{copy.send(:spec_command)}"
        ok = system(session.environment, command)
        session.check!(ok, $?, "test suite")
      end
    end

    # Says how many test files run, and whose they are: "gemleak:
    # test:valgrind runs 84 test files, those of rake test
    # (Minitest::TestTask)".
    def gemleak_say_files(count, library = nil)
      whose = library.nil? ? "" : ", those of rake #{SUITE_TASK} (#{library.class})"
      $stderr.puts "gemleak: #{@gemleak_task} runs #{gemleak_files(count, "test")}#{whose}"
    end

    # Runs Ruby with @words (what follows Ruby on its command line, one
    # string of shell words) under gemleak, the AddressSanitizer build
    # (engine :asan) first on the load path.
    def gemleak_sh(words, options, &block)
      gemleak_failing do
        load_path, environment = gemleak_prepare(@gemleak_task)
        session = Session.new(gemleak, environment)
        command = [session.prefix, [RUBY, *load_path].shelljoin, words].join(" ")
        sh(*[session.environment].reject(&:empty?), command, **options) do |ok, status|
          session.check!(ok, status, "test suite")
          block&.call(ok, status)
        end
      end
    end
  end
end
