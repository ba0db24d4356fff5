# frozen_string_literal: true

module GemLeakHelper
  # `gemleak run --growth[=K]` (GEMLEAK_GROWTH=K): memory that only grows,
  # which no leak check sees (a cache freed at exit). The test frameworks
  # are hooked as for --per-test (per_test_frameworks.rb), with or without
  # it, and each test that ended is kept with how to run it again. After
  # the suite (its own run is the warm-up), at exit, in the process that
  # ran the tests, each test runs K more times, and the memory live after
  # each run is measured (include/gemleak/base/protocol.h, the comment
  # above GL_PROTO_GROWTH_VARIABLE, is the protocol):
  #
  #   gemleak:growth                                   the repetitions begin
  #   gemleak:growth<TAB>0<TAB>NAME<TAB>LOCATION        before the first: a measure
  #   gemleak:growth<TAB>REP<TAB>NAME<TAB>LOCATION      after the REP-th run again: a measure
  #   gemleak:growth<TAB>unmeasured<TAB>NAME<TAB>LOCATION<TAB>WHY
  #   gemleak:growth<TAB>measured<TAB>N                 the last: N tests measured
  #
  # Before each measure, a collection: the stack below scrubbed, a full
  # collection, the stack scrubbed again. A free deferred to a finalizer
  # (a Data object without RUBY_TYPED_FREE_IMMEDIATELY) runs as the
  # collection returns, at Ruby's next interrupt check, before the measure:
  # a second collection for it cost as much as the first and changed no
  # measure (make bench, section 11; the fixtures' deferred test). A measure under
  # Valgrind is a leak check of the loss records that changed since the
  # last (every kind shown, still reachable ones above all); under a
  # sanitizer's engine, the client library's count of what is live per
  # site of the project's extensions (Native.growth_checkpoint), which
  # writes the marker itself.
  #
  # A test runs again as --per-test runs one (PerTest.run_again): what it
  # raises is swallowed (a test that fails run again may still grow);
  # exit!, exit or abort in it end its repetitions, and it is unmeasured;
  # so is a test that leaves a thread it started running (THREAD_GRACE).
  module Growth
    REPETITIONS = begin
      k = Core::VARIABLES[Protocol::GROWTH_VARIABLE].to_s
      k = k.match?(/\A[1-9][0-9]?\z/) ? Integer(k, 10) : 0
      k.between?(Protocol::GROWTH_MIN, Protocol::GROWTH_MAX) ? k : nil
    end

    # The rest, what runs the tests again and measures them, is
    # growth_run.rb: loaded as the helper starts where --growth is on
    # (start.rb), and only there.
    class << self
      def on?
        !REPETITIONS.nil?
      end
    end
  end
end
