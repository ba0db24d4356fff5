# frozen_string_literal: true

require "rspec/core/rake_task"
require "gemleak"

module GemLeak
  module RSpec
    # An RSpec::Core::RakeTask run under `gemleak run`:
    #
    #   RSpec::Core::RakeTask.new(spec: :compile)
    #   namespace(:spec) { GemLeak::RSpec::RakeTask.new(valgrind: :compile) }
    #
    # Settings as for GemLeak::TestTask.
    class RakeTask < ::RSpec::Core::RakeTask
      include ConfiguredTask

      def run_task(verbose)
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

      private

      def spec_command
        "#{@session.prefix} #{super}"
      end
    end
  end
end
