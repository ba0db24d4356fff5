# One leak planted in a real gem's suite from outside it (bench/bench.sh,
# section 10), loaded with RUBYOPT="-I<leaky> -r.../plant.rb" and PLANT
# naming the gem: the gem loaded first (from the suite's load path, as the
# suite would load it), then a method of it prepended to call ext/leaky's
# Leaky.leak (a malloc'd block, never freed) the first time it runs in a
# process, as a leak on an error path the suite takes once. Nothing of the
# suite changes.
require "leaky"

case ENV["PLANT"]
when "psych"
  require "psych"
  Psych::Parser.prepend(Module.new { def parse(*) = ($planted ||= Leaky.leak || true; super) })
when "json"
  require "json"
  JSON::Ext::Parser.prepend(Module.new { def parse(*) = ($planted ||= Leaky.leak || true; super) })
when "strscan"
  require "strscan"
  StringScanner.prepend(Module.new { def peek(*) = ($planted ||= Leaky.leak || true; super) })
end
