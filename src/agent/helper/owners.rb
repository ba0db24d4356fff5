# frozen_string_literal: true

module GemLeakHelper
  # --per-test under a sanitizer's engine: which test allocated each block,
  # recorded by the allocation front for the blocks it judges
  # (src/agent/alloc_owners.c), else by the client library through the
  # runtime's allocator hooks (src/agent/owners.c), and written at exit
  # beside the leak check's objects. No check runs while the tests do, and
  # no test runs twice: the price is a table's insert at each allocation
  # an extension makes.
  module Owners
    # The test that started this process (GEMLEAK_ORIGIN, "NAME\tLOCATION"
    # escaped), taken out of the suite's environment: what this process
    # allocates outside a test of its own is that test's.
    @origin = ENV.delete(Protocol::ORIGIN_VARIABLE)
    @origin = nil if @origin&.empty?

    class << self
      # Starts recording: what is allocated from now on is the setup's,
      # until the first test, with @setup; without it (the owners the exact
      # pass alone reads, which treats the setup's blocks as nobody's: the
      # setup runs again whatever it reruns), nothing is recorded before
      # the first test, the bulk of a suite's allocations (its files,
      # parsed). Returns: whether it could.
      #
      # In a process a test started (@origin), what it allocates is that
      # test's: a line says so ("gemleak:origin"), and nothing is recorded
      # until a test of its own runs. The exact pass runs that test again,
      # which starts this process again.
      def start(_path, setup: true)
        raise Core.native_error unless Core.native?
        return false if Native.owners_start.zero?

        @owner = ->(text) { text.nil? ? Native.owner_none : Native.owner(text) }
        @write = -> { Native.owners_write }
        if @origin
          Native.sanitizer_line("#{Protocol::MARKER_PREFIX}#{Protocol::MARKER_ORIGIN}\t#{@origin}\0")
        elsif setup
          @owner.call("\t\0")
        end
        true
      end

      # What is allocated from now on is the test's (NAME, LOCATION escaped).
      def test(name, location)
        @owner.call("#{name}\t#{location}\0")
      end

      # ... or nobody's: the suite is done.
      def none
        @owner.call(nil)
      end

      # Before exit!, which runs no atexit handler: the lines now.
      def write
        @write.call
      end
    end
  end
end
