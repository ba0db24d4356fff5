# frozen_string_literal: true

module GemLeakHelper
  # `gemleak run` with files after ::: (GEMLEAK_DURATIONS=1): how long the
  # tests of each file took, which the next run's --jobs shares are
  # balanced by. Written at exit to durations-<pid>.txt in the run
  # directory, "MILLISECONDS<TAB>/absolute/file.rb" a line; a forked child
  # counts its own.
  module Durations
    @on = Core::VARIABLES[Protocol::DURATIONS_VARIABLE] == "1" && !Core::RUN_DIR.nil?
    @seconds = Hash.new(0.0)

    class << self
      def on?
        @on
      end

      def time(file)
        return yield unless @on && file

        start = Core.monotonic
        begin
          yield
        ensure
          @seconds[Core::EXPAND.call(file.to_s)] += Core.monotonic - start
        end
      end

      def forked
        @seconds = Hash.new(0.0)
      end

      def write
        return if !@on || @seconds.empty?

        lines = @seconds.map { |file, seconds| "#{Core.digits((seconds * 1000).round)}\t#{file}\n" }
        Core.append(Core.run_file(Protocol::DURATIONS_PREFIX), lines.join)
      rescue StandardError => e
        Core.say("process #{Core.digits(Core.pid)} could not record how long its test files took " \
                 "(#{e.class}: #{e.message}); the next --jobs shares are balanced by file size")
      end
    end
  end
end
