# frozen_string_literal: true

module GemLeakHelper
  # --per-test under a sanitizer's engine: which test allocated each block,
  # recorded by the client library through the runtime's allocator hooks
  # (src/agent/owners.c) and written at exit beside the leak check's
  # objects. No check runs while the tests do, and no test runs twice: the
  # price is a hash table's insert at each allocation.
  module Owners
    class << self
      # Starts recording: what is allocated from now on is the setup's,
      # until the first test, with @setup; without it (the owners the exact
      # pass alone reads, which treats the setup's blocks as nobody's: the
      # setup runs again whatever it reruns), nothing is recorded before
      # the first test, the bulk of a suite's allocations (its files,
      # parsed). Returns: whether it could.
      def start(_path, setup: true)
        raise Core.native_error unless Core.native?
        return false if Native.owners_start.zero?

        @owner = ->(text) { text.nil? ? Native.owner_none : Native.owner(text) }
        @write = -> { Native.owners_write }
        @owner.call("\t\0") if setup
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
