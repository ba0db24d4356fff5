# frozen_string_literal: true

# minitest, test-unit and RSpec, hooked: each test marked (per_test.rb),
# timed (durations.rb), skipped when the exact pass does not run it, and
# kept so that it can run again (per_test_again.rb). Loaded when the first
# of them is (PerTest.install): a Ruby that runs no tests (a suite's
# child Ruby) never loads it.
module GemLeakHelper
  module PerTest
    class << self
      # The test frameworks loaded, hooked once each (install() says when).
      def hook_frameworks
        if !@installed[:minitest] && defined?(::Minitest) && ::Minitest.respond_to?(:run_one_method)
          @installed[:minitest] = true
          ::Minitest.singleton_class.prepend(MinitestHook)
        end
        if !@installed[:test_unit] && defined?(::Test::Unit::TestCase)
          @installed[:test_unit] = true
          ::Test::Unit::TestCase.prepend(TestUnitHook)
          unframe_test_unit
        end
        if !@installed[:rspec] && defined?(::RSpec::Core::Example)
          @installed[:rspec] = true
          ::RSpec::Core::Example.prepend(RSpecHook)
          # a failure's backtrace as RSpec shows it natively, without the hook's frames
          ::RSpec.configuration.backtrace_exclusion_patterns << OWN_FRAME if defined?(::RSpec.configuration)
        end
      rescue StandardError => e
        Core.debug(e)
      end

      # test-unit shows a failure's backtrace less its own frames, but
      # those of the hook sit between two of its own: its filter drops
      # them too, so that a failure reads as it does natively.
      def unframe_test_unit
        return unless defined?(::Test::Unit::Util::BacktraceFilter)

        filter = ::Test::Unit::Util::BacktraceFilter
        filter.prepend(TestUnitFilterPrivate)
        filter.singleton_class.prepend(TestUnitFilter)
      end

      def source_location(klass, method_name)
        klass.instance_method(method_name).source_location
      rescue NameError
        nil
      end
    end

    # A line of a backtrace in the helper's file, or in this one, which
    # holds the hooks.
    OWN_FRAME = /\A(?:#{Regexp.escape(Require::OWN_PATH)}|#{Regexp.escape(__FILE__)}):/.freeze

    # test-unit's filter less the hook's frames; public as its module
    # function, private as the method its failures and errors include.
    module TestUnitFilter
      def filter_backtrace(*args)
        filtered = super
        filtered.is_a?(Array) ? filtered.grep_v(OWN_FRAME) : filtered
      end
    end

    module TestUnitFilterPrivate
      include TestUnitFilter
      private :filter_backtrace
    end

    # Minitest.run_one_method makes the test object, runs it and drops it:
    # after it, a GC frees what the test kept in instance variables. Run
    # again, a new object runs; its result is nobody's.
    module MinitestHook
      def run_one_method(klass, method_name, *rest)
        return super if PerTest.again?

        file, line = PerTest.source_location(klass, method_name)
        name = "#{klass.name || klass.inspect}##{method_name}"
        return MinitestHook.skipped(klass, method_name) if PerTest.skip?(name, file, line)

        begin
          PerTest.started(name, file, line)
          if Durations.on?
            Durations.time(file) { super(klass, method_name, *rest) }
          else
            super(klass, method_name, *rest)
          end
        ensure
          PerTest.finished(nil, (-> { klass.new(method_name).run } if PerTest.runs_again?)) unless PerTest.again?
        end
      end

      # A test the exact pass skips: a result that ran nothing, for the
      # reporter (whose output nobody reads).
      def self.skipped(klass, method_name)
        test = klass.new(method_name)
        test.time = 0.0 if test.respond_to?(:time=)
        defined?(::Minitest::Result) ? ::Minitest::Result.from(test) : test
      end
    end

    # test-unit's suite holds the test object until the next one runs. Run
    # again, a new object runs into a result of its own; a test with data
    # (data-driven) is not run again.
    module TestUnitHook
      def run(result, &block)
        return super if PerTest.again?

        file, line = PerTest.source_location(self.class, method_name)
        name = "#{self.class.name || self.class.inspect}##{method_name}"
        return nil if PerTest.skip?(name, file, line)

        begin
          PerTest.started(name, file, line)
          if Durations.on?
            Durations.time(file) { super(result, &block) }
          else
            super(result, &block)
          end
        ensure
          unless PerTest.again?
            klass = self.class
            test_name = method_name
            again = if PerTest.runs_again? && (!respond_to?(:data_label) || data_label.nil?)
                      -> { klass.new(test_name).run(::Test::Unit::TestResult.new) { |*| nil } }
                    end
            PerTest.finished(nil, again)
          end
        end
      end
    end

    # After Example#run, RSpec drops the example group instance; letting go
    # of its instance variables (its lets) first is what rspec-core 3.13
    # does itself. Run again, a copy of the example runs in a new instance
    # of its group and reports to nobody (the example itself keeps its
    # result).
    module RSpecHook
      def run(example_group_instance, reporter)
        return super if PerTest.again?
        return true if PerTest.skip?(full_description, metadata[:file_path], metadata[:line_number])

        begin
          PerTest.started(full_description, metadata[:file_path], metadata[:line_number])
          if Durations.on?
            Durations.time(metadata[:file_path]) { super(example_group_instance, reporter) }
          else
            super(example_group_instance, reporter)
          end
        ensure
          unless PerTest.again?
            example_group_instance&.instance_variables&.each do |ivar|
              example_group_instance.instance_variable_set(ivar, nil)
            end
            PerTest.finished(full_description,
                             (RSpecHook.again(self) if PerTest.runs_again? && respond_to?(:duplicate_with)))
          end
        end
      end

      def self.again(example)
        lambda do
          copy = example.duplicate_with
          group = example.example_group
          group.examples.delete(copy)
          instance = group.new(copy.inspect_output)
          group.set_ivars(instance, group.before_context_ivars)
          copy.run(instance, ::RSpec::Core::NullReporter)
        end
      end
    end
  end
end
