# frozen_string_literal: true

# What RUBYOPT's -r loads into every Ruby of a run (gemleak_helper.rb in
# gemleak's helper directory): the helper itself, gemleak_helper_body.rb
# beside this file, 1,800 lines, which a Ruby parsing them at each start
# paid for again in every process of a suite. The first Ruby of the run
# compiles it and keeps its instructions beside it, one file for each Ruby
# (engine, version, platform, revision), written whole or not at all; the
# others load them, a tenth of the time. A Ruby without instruction
# sequences, or that cannot read or write them, loads the source. The
# parts of the helper a process may not need (gemleak_helper_PART.rb
# beside it) are loaded the same way when it does (GemLeakHelper.later),
# through GemLeakHelper::LATER, which this file sets: this directory, and
# how a file of it is loaded. Nothing else here is left behind in the
# process: locals of this file only.
#
# The collector waits while the helper loads: in a Ruby just started
# without RubyGems (assert_separately's children), loading it set off a
# collection, half of its time (2 of 4 ms). It is on again after, unless
# it was off before. Not where a collection is marking (RubyGems' load
# leaves a major one under way): GC.disable finishes it first, the whole
# heap marked and swept at once, which a short Ruby (`ruby -e`, a suite's
# child) never did without the helper; it goes on as it would have. (One
# sweeping is finished, as the Ruby's next allocations would.)
# collector_was_off: nil where the collector was left as it was.
collector_was_off = begin
  GC.latest_gc_info(:state) == :marking ? nil : GC.disable
rescue ArgumentError # a Ruby whose collector says no state
  GC.disable
end
begin
  # Evaluates the file @name of this directory, compiled once per Ruby.
  # File's methods as they are now, bound: a part loaded later (at a fork,
  # at exit!) may load after the suite swapped File for a fake (FakeFS) or
  # stubbed its methods (rspec-mocks).
  file_p = File.method(:file?)
  binread = File.method(:binread)
  binwrite = File.method(:binwrite)
  size = File.method(:size)
  rename = File.method(:rename)
  unlink = File.method(:unlink)
  join = File.method(:join)
  load_compiled = lambda do |dir, name|
    source = join.call(dir, name)
    compiled = nil
    if defined?(RubyVM::InstructionSequence) && RubyVM::InstructionSequence.respond_to?(:load_from_binary)
      key = [RUBY_ENGINE, RUBY_VERSION, RUBY_PLATFORM, defined?(RUBY_REVISION) ? RUBY_REVISION : ""]
      cache = join.call(dir, "#{name.delete_suffix(".rb")}-#{key.join("-").gsub(/[^A-Za-z0-9._-]/, "_")}.iseq")
      # Read at its size: File.binread without one grows its string as it
      # reads, each step a copy (0.2 ms of a Ruby's start under a sanitizer).
      begin
        if file_p.call(cache)
          binary = binread.call(cache, size.call(cache))
          compiled = RubyVM::InstructionSequence.load_from_binary(binary)
        end
      rescue StandardError
        compiled = nil
      end
      unless compiled
        begin
          compiled = RubyVM::InstructionSequence.compile_file(source)
          partial = "#{cache}.#{Process.pid}"
          binwrite.call(partial, compiled.to_binary)
          rename.call(partial, cache)
        rescue StandardError
          begin
            unlink.call(partial) if partial
          rescue SystemCallError
            nil
          end
        end
      end
    end
    compiled ? compiled.eval : load(source)
  end
  module GemLeakHelper
  end
  GemLeakHelper.const_set(:LATER, [__dir__.freeze, load_compiled].freeze)
  load_compiled.call(__dir__, "gemleak_helper_body.rb")
ensure
  GC.enable if collector_was_off == false
end
