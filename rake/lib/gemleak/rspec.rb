# frozen_string_literal: true

require "rspec/core/rake_task"
require "gemleak"

module GemLeak
  module RSpec
    # An RSpec::Core::RakeTask run under `gemleak run`: spec:valgrind,
    # beside the gem's own spec task. Given no block, it runs the specs of
    # `rake spec` (RSpec's task of that name: its pattern, options and
    # prerequisites), as `rake spec` runs them:
    #
    #   GemLeak::RSpec::RakeTask.new
    #
    # Settings, the compile task and names as for GemLeak::TestTask.
    class RakeTask < ::RSpec::Core::RakeTask
      include ConfiguredTask

      DEFAULT_NAME = "spec:valgrind"
      # %s: the engine that runs ("Valgrind", "LeakSanitizer")
      DESCRIPTION = "Run RSpec code examples under %s with gemleak"
      # The task whose specs a task given no block runs.
      SUITE_TASK = "spec"
      # What RSpec's task keeps of its settings, all but its name.
      SETTINGS = %i[@ruby_opts @rspec_opts @verbose @fail_on_error @rspec_path @pattern
                    @exclude_pattern @failure_message @with_clean_environment].freeze

      # RSpec's run_task, but for its last word: RSpec prints the command
      # again ("... failed") before it exits, and gemleak's is some 600
      # characters; the task's message says instead what failed, in Rake's
      # terms, as GemLeak::TestTask's does.
      def run_task(verbose)
        gemleak_failing do
          gemleak_adopt_suite_task if @gemleak_mirror
          gemleak_say_specs
          load_path, environment = gemleak_prepare(@gemleak_task)
          # first on the load path: gemleak run names an extension the
          # suite loaded from elsewhere, not built with AddressSanitizer
          self.ruby_opts = [load_path.shelljoin, *Array(ruby_opts)] unless load_path.empty?
          @session = Session.new(gemleak, environment)
          command = spec_command
          puts command if verbose
          # (rspec-core before 3.9 has no with_clean_environment)
          clean = respond_to?(:with_clean_environment) && with_clean_environment
          ok = if clean
                 system(@session.environment, command, unsetenv_others: true)
               else
                 system(@session.environment, command)
               end
          puts failure_message if !ok && failure_message
          # fail_on_error = false: a failing suite passes the task, as
          # with RSpec's own; gemleak's findings still fail it
          @session.check!(ok || !fail_on_error, $?, "spec suite")
        end
      end

      private

      def define(args, &task_block)
        @gemleak_task = gemleak_task_name(name)
        return unless gemleak_task_free?(@gemleak_task)

        ours = !::Rake.application.last_description
        desc format(DESCRIPTION, "Valgrind") if ours
        super
        gemleak_describe(@gemleak_task, DESCRIPTION) if ours
      end

      # `rake spec`'s settings, and what it needs first, when it is RSpec's:
      # those set on its task, then those its block sets, which RSpec's task
      # runs only when it runs (on this task, as on its own).
      def gemleak_adopt_suite_task
        binding = gemleak_suite_binding(SUITE_TASK)
        library = binding&.receiver
        return unless library.is_a?(::RSpec::Core::RakeTask)

        gemleak_invoke_prerequisites(SUITE_TASK)
        SETTINGS.each do |ivar|
          instance_variable_set(ivar, library.instance_variable_get(ivar)) if library.instance_variable_defined?(ivar)
        end
        block = binding.local_variable_defined?(:task_block) ? binding.local_variable_get(:task_block) : nil
        block&.call(*[self, ::Rake::TaskArguments.new([], [])].slice(0, block.arity))
        @gemleak_adopted = library
      end

      # "gemleak: spec:valgrind runs 2 spec files, those of rake spec
      # (RSpec::Core::RakeTask)", counted as RSpec finds them (SPEC=, else
      # the pattern, less the exclude pattern).
      def gemleak_say_specs
        files = if ENV["SPEC"]
                  FileList[ENV["SPEC"]].to_a
                else
                  Array(pattern).flat_map { |glob| Dir.glob(glob.to_s) }.uniq -
                    Array(exclude_pattern).flat_map { |glob| Dir.glob(glob.to_s) }
                end
        whose = @gemleak_adopted ? ", those of rake #{SUITE_TASK} (#{@gemleak_adopted.class})" : ""
        $stderr.puts "gemleak: #{@gemleak_task} runs #{gemleak_files(files.size, "spec")}#{whose}"
      end

      def spec_command
        "#{@session.prefix} #{super}"
      end
    end
  end
end
