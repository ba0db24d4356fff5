# frozen_string_literal: true

# minitest, test-unit and RSpec, hooked: each test marked (per_test.rb),
# its owner named (owners.rb), timed (durations.rb), skipped when the exact
# pass does not run it, and kept so that it can run again
# (per_test_again.rb); what the hooks do as a test starts and ends. Loaded
# when the first of them is (PerTest.install): a Ruby that runs no tests
# (a suite's child Ruby) never loads it. The checks a test is followed by
# are checks.rb's, loaded with this where something is checked or marked
# while the tests run (PerTest.checks_with_tests?): the owners alone, the
# fast pass's, name each test to the client library and need none of it.
module GemLeakHelper
  module PerTest
    # At most this much of a name: the location tells apart two tests whose
    # names begin alike, and the markers stay lines, not pages.
    FIELD_BYTES = 1000
    # "%XX" for each byte that would be ambiguous in a marker; made with
    # Kernel.format, Kernel's own, which a suite's top-level `format` (a
    # method of Object) does not hide.
    ESCAPED = /[%\x00-\x20\x7f]/n.freeze
    ESCAPES = ([0x25, 0x7f] + (0x00..0x20).to_a).to_h { |byte| [byte.chr.b, Kernel.format("%%%02X", byte)] }.freeze
    # Per test, a check when the tests since the last one ran this many
    # times as long as it cost: checks are then at most a fifth of the time.
    CHECK_EVERY = 4.0

    # A test that ended: its (escaped) name and location, how to run it
    # again (nil: it cannot be) and how long it took.
    Test = Struct.new(:name, :location, :again, :seconds)

    class << self
      # Whether a test's hook makes the proc that runs it again: only where
      # something does (--growth; per test under Valgrind, whose search runs
      # the tests that lost again). Under a sanitizer's engine the owners
      # say which test allocated a block, and nothing runs again in the
      # process: a proc made for every test was garbage at once.
      def runs_again?
        Growth.on? || (on? && @grain != "file" && keeps_tests?)
      end

      # Whether an ended test is kept, to be checked with the tests after
      # it and run again if they lost: per test under Valgrind. Per file,
      # after each test (each), or with owners, finished does not keep it.
      def keeps_tests?
        @grain != "each" && !@owners
      end

      # Returns: whether the exact pass skips the test NAME at FILE:LINE:
      # the tests it runs are those that allocated what the fast pass
      # found lost (GEMLEAK_EXACT_TESTS).
      def skip?(name, file, line)
        return false if @only.nil? || @again

        file = Core::EXPAND.call(file.to_s)
        location = escape(line ? "#{file}:#{line}" : file)
        !@only.key?("#{escape(name)}\t#{location}".b) && !@only.key?("\t#{escape(file)}".b)
      rescue StandardError => e
        Core.debug(e)
        false
      end

      # A marker of a test's (start, end), but in the owners alone.
      def test_marker(*fields)
        marker(*fields) unless @owners_only
      end

      # A test's name or location as a field of a marker: its bytes, with
      # %, space and control bytes written %XX, at most FIELD_BYTES. Most
      # need nothing done (a method's name, a path): those are returned as
      # they are, without the three strings made for each of the others.
      def escape(text)
        text = text.to_s
        return text if text.bytesize <= FIELD_BYTES && text.ascii_only? && !ESCAPED.match?(text)

        text.b[0, FIELD_BYTES].gsub(ESCAPED, ESCAPES)
      end

      # What was lost before the first test (while the suite loaded), or
      # what a forked child inherited, is checked for before any test runs.
      def ready
        if @pid != Core.pid # forked, and Process._fork did not say (Ruby < 3.1)
          GemLeakHelper.later("checks")
          forked
        elsif !@ready
          @ready = true
          check(Protocol::MARKER_PREFIX + Protocol::MARKER_SETUP) unless @owners
        end
      end

      # Returns: FILE absolute (File.expand_path), the same string for
      # each test of an absolute FILE, expanded once (a microsecond of the
      # hooks' some 11 a test); a relative one is expanded each time, from
      # the directory the test runs in.
      def expanded(file)
        file = file.to_s
        return Core::EXPAND.call(file) unless file.start_with?("/")

        (@expanded ||= {})[file] ||= Core::EXPAND.call(file).freeze
      end

      # A test begins: NAME, and where it is ("/abs/file.rb", line).
      def started(name, file, line)
        Growth.started(name, file, line) if Growth.on?
        # the owners alone need no client: Owners records (start_owners)
        return unless on? && (@owners_only || client)

        ready
        file = expanded(file)
        if @grain == "file"
          return if @open && @open[1] == escape(file)

          finish
          @open = ["", escape(file)]
        else
          @open = [escape(name), escape(line ? "#{file}:#{line}" : file)]
        end
        @began = Core.monotonic
        Owners.test(*@open) if @owners
        test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_START, *@open) unless @owners_only
      rescue StandardError => e
        failed(e)
      end

      # A test ended (@again: how to run it again, nil if it cannot be);
      # per file, its file ends when the next file's test begins, or at
      # exit. NAME (nullable) is its name as it is now: an RSpec example
      # without a description gets one as it runs.
      def finished(name = nil, again = nil)
        Growth.finished(name, again) if Growth.on?
        return unless on? && @open && @grain != "file"

        @open[0] = escape(name) if name
        unless keeps_tests?
          finish
          return
        end
        seconds = Core.monotonic - @began
        @tests << Test.new(*@open, again, seconds)
        @since += seconds
        @open = nil
        # A test that cannot run again is checked for alone.
        close if again.nil? || @since >= CHECK_EVERY * @cost
      rescue StandardError => e
        failed(e)
      end

      # The check after the tests ended since the last one, and the search
      # for the one that lost (per_test_again.rb, loaded as the helper
      # starts where they are checked: under a sanitizer's engine they
      # never are, the owners say which test allocated a block).
      def close
        tests = @tests
        return if tests.empty?

        @tests = []
        GemLeakHelper.later("per_test_again")
        check_tests(tests)
      end

      # The tests since the last check, and a test cut short (finish).
      def close_tests
        close
        return unless @open

        fields = @open
        @open = nil
        if @owners
          test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_END, *fields) unless @owners_only
        else
          check(Protocol::MARKER_PREFIX + Protocol::MARKER_END, *fields)
        end
      end
    end

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
