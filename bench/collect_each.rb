# frozen_string_literal: true

# make bench, section 11: under Ruby's own test framework (tool/lib), a
# full collection before each run of a test but its first, as --growth
# collects before its measures, for a reference that differs from
# --growth=2 by the counting alone (run with --repeat-count=3).
require "test/unit"

module GemLeakBenchCollect
  RAN = {}.compare_by_identity

  def run(*args)
    ran = (RAN[self.class] ||= {})
    GC.start(full_mark: true, immediate_sweep: true) if ran[__name__]
    ran[__name__] = true
    super
  end
end
Test::Unit::TestCase.prepend(GemLeakBenchCollect)
