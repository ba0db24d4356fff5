# An Async-style reactor (bench/bench.sh, section 10): 2,000 fibers resumed
# in turn until all are done, each building and counting small texts, and
# keeping a block of fixtures/ext/fibers' cache (reachable); with
# REACTOR_LEAK=1, one fiber also loses 48 bytes (Fibers.leak).
require "fibers"

leak = ENV["REACTOR_LEAK"] == "1"
words = %w[the quick brown fox jumps over the lazy dog]
fibers = Array.new(2000) do |i|
  Fiber.new do
    40.times do |k|
      text = Array.new(20) { |j| words[(i + j + k) % words.size] }.join(" ")
      Fiber.yield text.split.tally.size
    end
    Fibers.leak(48) if leak && i == 1000
    Fibers.cache
  end
end
until fibers.empty?
  fibers.each(&:resume)
  fibers.select!(&:alive?)
end
