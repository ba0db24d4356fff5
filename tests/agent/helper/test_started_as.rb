# frozen_string_literal: true

require_relative "support"

# How the helper reads Ruby's command line to start it again under
# Valgrind exactly as it was started (item 13): the -C among Ruby's own
# switches, and only those.
class StartedAsTest < Minitest::Test
  include HelperTest

  # Runs CODE in a Ruby with the helper loaded (outside any gemleak run:
  # GemLeakLaunch is there, and does nothing), and the part a Ruby started
  # outside the engine loads (launch_outside.rb).
  def helper_eval(code)
    out, err, status = Open3.capture3({ "GEMLEAK_ENGINE_COMMAND" => nil, "GEMLEAK_RUN_DIR" => nil },
                                      RbConfig.ruby, "-r#{HELPER}", "-e",
                                      "GemLeakHelper.later('launch_outside')\n#{code}")
    assert status.success?, err
    Marshal.load([out].pack("H*")) # rubocop:disable Security/MarshalLoad -- our own child
  end

  def chdirs(*argv)
    helper_eval("print Marshal.dump(GemLeakLaunch.chdirs_in(#{argv.inspect})).unpack1('H*')")
  end

  def test_the_chdirs_among_rubys_switches
    assert_equal [[3, 1, false, "sub"]], chdirs("ruby", "-I", "lib", "-C", "sub", "t.rb")
    assert_equal [[1, 2, true, "sub"]], chdirs("ruby", "-wCsub", "-e", "p 1")
    assert_equal [[1, 1, true, "a"], [2, 1, false, "b"]], chdirs("ruby", "-Ca", "-X", "b", "t.rb")
    assert_equal [[4, 1, false, "d"]], chdirs("ruby", "--encoding", "UTF-8", "-W:no-deprecated", "-C", "d", "-")
    assert_equal [[3, 1, false, "d"]], chdirs("ruby", "-0e", "p 1", "-C", "d")  # -0, then -e
    assert_equal [[1, 4, true, "d"]], chdirs("ruby", "-W2lCd", "t.rb")
  end

  def test_what_only_looks_like_a_chdir
    assert_empty chdirs("ruby", "-e", "-C", "t.rb")          # -e's code
    assert_empty chdirs("ruby", "-I", "-C", "t.rb")          # -I's directory
    assert_empty chdirs("ruby", "-iC", "t.rb")               # -i's extension
    assert_empty chdirs("ruby", "--dump", "-C", "t.rb")      # --dump's argument
    assert_empty chdirs("ruby", "t.rb", "-C", "d")           # the script's
    assert_empty chdirs("ruby", "--", "-C", "d")             # after --
    assert_empty chdirs("ruby", "-", "-C", "d")              # the script is standard input
  end

  def test_arguments_without_their_chdirs
    without = helper_eval(<<~'RUBY')
      cases = [%w[ruby -I lib -C sub t.rb], %w[ruby -wCsub -e x], %w[ruby -Ca -wX b t.rb]]
      print Marshal.dump(cases.map { |argv| GemLeakLaunch.without_chdirs(argv, GemLeakLaunch.chdirs_in(argv)) }).unpack1("H*")
    RUBY
    assert_equal [%w[ruby -I lib t.rb], %w[ruby -w -e x], %w[ruby -w t.rb]], without
  end
end
