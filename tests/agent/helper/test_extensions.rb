# frozen_string_literal: true

require_relative "support"

# The extensions a process loaded (extensions.rb): a forked child lists
# what its parent loaded in loaded-<its pid>.txt from its start. What each
# feature is (the project's extension, by its real path, or not) was
# decided in the parent; the child decides none of it again: a suite that
# forks often (json's forks a child per test of its own) paid a real path
# of every extension, Ruby's own among them, in every child.
class ExtensionsTest < Minitest::Test
  include HelperTest

  # The extension's file gone before the fork (a build step replaced it):
  # the child, which has it mapped, still lists it, as its parent did.
  def test_a_forked_child_lists_what_its_parent_found_without_looking_again
    code = <<~'RUBY'
      load_extension
      File.rename(EXT, EXT + ".old")
      pid = fork { puts "child #{Process.pid}" }
      Process.wait(pid)
      File.rename(EXT + ".old", EXT)
    RUBY
    run = run_suite(code)
    assert_ran(run)
    child = run.out[/^child (\d+)$/, 1]
    refute_nil child, run.out
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
    assert_equal "#{run.ext}\n", run.file("loaded-#{child}.txt"), "the child looked at the file again"
  end
end
