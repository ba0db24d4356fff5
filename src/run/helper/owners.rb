# frozen_string_literal: true

module GemLeakHelper
  # --per-test under a sanitizer's engine: which test allocated each block,
  # recorded by the client library through the runtime's allocator hooks
  # (src/run/client/owners.c) and written at exit beside the leak check's
  # objects. No check runs while the tests do, and no test runs twice: the
  # price is a hash table's insert at each allocation.
  module Owners
    class << self
      # Starts recording (what is allocated from now on is the setup's,
      # until the first test). Returns: whether it could.
      def start(path)
        require "fiddle"
        lib = Fiddle.dlopen(path)
        start = Fiddle::Function.new(lib["gemleak_client_owners_start"], [], Fiddle::TYPE_INT)
        @owner = Fiddle::Function.new(lib["gemleak_client_owner"], [Fiddle::TYPE_VOIDP], Fiddle::TYPE_VOID)
        @write = Fiddle::Function.new(lib["gemleak_client_owners_write"], [], Fiddle::TYPE_VOID)
        return false if start.call.zero?

        @owner.call("\t\0")
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
