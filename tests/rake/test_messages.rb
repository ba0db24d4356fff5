# frozen_string_literal: true

# What the Rake tasks say when a run fails, from the JSON report gemleak
# wrote (no Valgrind: the report is written here as gemleak writes it).
require "minitest/autorun"
require_relative "../counts"
GemLeakTestCounts.minitest("check-helper-rake")
require "json"
$LOAD_PATH.unshift(File.expand_path("../../rake/lib", __dir__))
require "gemleak"

class RakeMessagesTest < Minitest::Test
  Status = Struct.new(:exitstatus)

  # The message GemLeak::Error carries for a run that ended with @status
  # and wrote @report; nil when the task passes.
  def message_for(report, status)
    session = GemLeak::Session.new(GemLeak::Configuration.new(executable: "/bin/true"))
    File.write(session.instance_variable_get(:@report_path), JSON.generate(report))
    session.check!(status.zero?, Status.new(status), "rake test")
    nil
  rescue GemLeak::Error => e
    e.message
  end

  def report(gate_message, problems, command_status: 0)
    {
      "findings" => [],
      "summary" => { "problems" => problems },
      "command" => { "status" => command_status },
      "gate" => { "failed" => false, "complete" => false, "message" => gate_message },
    }
  end

  NOTHING = "gemleak: INCOMPLETE: nothing was checked: no process under Valgrind loaded a " \
            "target extension (see gemleak's messages)"

  # gemleak read everything there was; there was just nothing to read
  def test_nothing_checked_says_so
    message = message_for(report(NOTHING, ["nothing was checked: no process under Valgrind loaded tally"]), 3)
    assert_match(/nothing was checked/, message)
    refute_match(/could not read/, message)
  end

  def test_nothing_checked_and_the_suite_failed
    message = message_for(report(NOTHING, ["nothing was checked"], command_status: 1), 3)
    assert_match(/\Arake test failed \(status 1\), and gemleak checked nothing/, message)
    refute_match(/could not read/, message)
  end

  def test_xml_cut_short_still_says_it_could_not_be_read
    gate = "gemleak: INCOMPLETE: no findings in what could be read; 1 input could not all be " \
           "read (see gemleak's messages)"
    message = message_for(report(gate, ["1.xml: truncated at byte 20 after 0 complete errors"]), 3)
    assert_match(/could not read all that its engine wrote/, message)
  end
end

# What the Rake library spells that gemleak spells too: held to
# include/gemleak/base/protocol.h, where each is spelled once.
class RakeProtocolTest < Minitest::Test
  PROTOCOL = File.read(File.expand_path("../../include/gemleak/base/protocol.h", __dir__))

  def protocol(name)
    value = PROTOCOL[/^#define GL_PROTO_#{name} "(.*)"$/, 1]
    refute_nil value, "GL_PROTO_#{name} is not in protocol.h"
    value
  end

  def test_asan_flags_are_the_engines
    assert_equal protocol("ASAN_CFLAGS"), GemLeak::AsanBuild::CFLAGS
    assert_equal protocol("ASAN_LDFLAGS"), GemLeak::AsanBuild::LDFLAGS
  end

  def test_the_instrumented_build_is_named_as_the_helper_reads_it
    assert_equal protocol("INSTRUMENTED_VARIABLE"), GemLeak::INSTRUMENTED_VARIABLE
  end

  def test_growth_repetitions_are_the_runs
    min, max = %w[MIN MAX].map { |end_| PROTOCOL[/^#define GL_PROTO_GROWTH_#{end_} (\d+)$/, 1]&.to_i }
    assert_equal (min..max), GemLeak::GROWTH_REPETITIONS
  end
end

# c.growth = true | K: gemleak run --growth[=K]; anything else refused
# before anything runs.
class RakeGrowthTest < Minitest::Test
  def arguments(growth)
    GemLeak::Configuration.new(growth: growth).arguments
  end

  def test_growth_is_passed_on
    assert_equal [], arguments(nil)
    assert_equal [], arguments(false)
    assert_equal ["--growth"], arguments(true)
    assert_equal ["--growth=2"], arguments(2)
    assert_equal ["--growth=20"], arguments(20)
    assert_equal ["--per-test", "--growth=5"], GemLeak::Configuration.new(per_test: true, growth: 5).arguments
  end

  def test_other_values_are_refused
    [1, 21, 2.5, "3", :yes].each do |bad|
      error = assert_raises(GemLeak::Error, bad.inspect) { arguments(bad) }
      assert_equal "growth: #{bad.inspect} is none of true, false or how many times each test runs " \
                   "again (2 to 20)", error.message
    end
  end
end

# The members of gemleak's JSON report that the Rake library reads: held to
# include/gemleak/base/json_format.h, where each is spelled once.
class RakeJsonMembersTest < Minitest::Test
  JSON_FORMAT = File.read(File.expand_path("../../include/gemleak/base/json_format.h", __dir__))
  LIBRARY = File.expand_path("../../rake/lib", __dir__)
  # What the library looks up by a literal that is no member of a report:
  # the environment, RbConfig, Rake's tasks and file lists.
  NOT_JSON = %w[ENV CONFIG Task FileList].freeze

  def test_every_member_read_is_the_headers
    names = GemLeak::JsonMembers.constants
    refute_empty names
    names.each do |name|
      value = JSON_FORMAT[/^#define GL_MEMBER_#{name} "(.*)"$/, 1]
      refute_nil value, "GemLeak::JsonMembers::#{name}: no GL_MEMBER_#{name} in json_format.h"
      assert_equal value, GemLeak::JsonMembers.const_get(name), "GemLeak::JsonMembers::#{name}"
    end
  end

  # A member read by a string of its own would escape the test above.
  def test_no_member_is_read_by_a_literal
    literals = Dir[File.join(LIBRARY, "**", "*.rb")].flat_map do |path|
      File.read(path).scan(/([\w\])]+)&?(?:\.(?:dig|fetch|key\?)\(\s*|\[\s*)"([^"]*)"/)
          .reject { |receiver, _| NOT_JSON.include?(receiver) }
          .map { |receiver, name| "#{File.basename(path)}: #{receiver}[#{name.inspect}]" }
    end
    assert_empty literals, "name these in GemLeak::JsonMembers, as json_format.h spells them"
  end

  # make demo reads the report too: by the header's names, none its own.
  def test_the_demo_reads_no_member_by_a_literal
    demo = File.read(File.expand_path("../../fixtures/sample-gem/demo.sh", __dir__))
    assert_includes demo, "GL_MEMBER_"
    assert_empty demo.scan(/\[\s*"[a-z_]+"\s*\]/), "fixtures/sample-gem/demo.sh: read these by m[...]"
  end
end
