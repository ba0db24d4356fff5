# frozen_string_literal: true

require "rspec/core/rake_task"
require "gemleak"

module GemLeak
  module RSpec
    # An RSpec::Core::RakeTask run under `gemleak run`: spec:valgrind,
    # beside the gem's own spec task.
    #
    #   GemLeak::RSpec::RakeTask.new
    #
    # Settings, the compile task and names as for GemLeak::TestTask.
    class RakeTask < ::RSpec::Core::RakeTask
      include ConfiguredTask

      DEFAULT_NAME = "spec:valgrind"
      DESCRIPTION = "Run RSpec code examples under Valgrind with gemleak"

      def run_task(verbose)
        gemleak_failing do
          load_path = gemleak_prepare(@gemleak_task)
          # first on the load path: gemleak run names an extension the
          # suite loaded from elsewhere, not built with AddressSanitizer
          self.ruby_opts = [load_path.shelljoin, *Array(ruby_opts)] unless load_path.empty?
          @session = Session.new(gemleak)
          exit_error = nil
          begin
            super
          rescue SystemExit => e
            # RSpec's task exits when the command fails; say why first.
            exit_error = e
          end
          @session.check!(exit_error.nil?, $?, "spec suite")
        end
      end

      private

      def define(args, &task_block)
        @gemleak_task = gemleak_task_name(name)
        return unless gemleak_task_free?(@gemleak_task)

        desc DESCRIPTION unless ::Rake.application.last_description
        super
      end

      def spec_command
        "#{@session.prefix} #{super}"
      end
    end
  end
end
