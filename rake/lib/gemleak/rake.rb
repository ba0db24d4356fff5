# frozen_string_literal: true

require "rake"
require "rake/testtask"
require "gemleak"

module GemLeak
  # A Rake::TestTask whose Ruby runs under `gemleak run`: test:valgrind,
  # beside the gem's own test task. Give it what your Rake::TestTask is given:
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
    DESCRIPTION = "Run the tests under Valgrind with gemleak"

    # Rake's description would be "Run tests for {:valgrind=>:compile}";
    # one the block set is kept.
    def define
      @gemleak_task = gemleak_task_name(@name)
      return self unless gemleak_task_free?(@gemleak_task)

      @description = DESCRIPTION if @description.nil? || @description.start_with?("Run tests")
      super
    end

    # Rake::TestTask runs its command through FileUtils#ruby with one string
    # of shell words; ours goes through gemleak first.
    def ruby(*args, **options, &block)
      gemleak_failing do
        load_path = gemleak_prepare(@gemleak_task)
        session = Session.new(gemleak)
        words = args.length > 1 ? args.shelljoin : args.first.to_s
        command = [session.prefix, [RUBY, *load_path].shelljoin, words].join(" ")
        sh(command, **options) do |ok, status|
          session.check!(ok, status, "test suite")
          block&.call(ok, status)
        end
      end
    end
  end
end
