# frozen_string_literal: true

# A process that does not reach at_exit: exit! (no atexit handler runs,
# and with it no leak check of a sanitizer's runtime) and exec (the new
# image's report takes the old one's name). Each is hooked, and what the
# process lost is checked first (the checks: checks.rb, loaded then).
module GemLeakHelper
  # exit! under a sanitizer's engine: the check the runtime would have made
  # at exit (PerTest.exit_bang), then exit! as it is; in a test --per-test
  # runs again, the end of that run (PerTest::Ended), not of the process.
  # Process.exit! and Kernel.exit! are public, Kernel#exit! private.
  module ExitBang
    def exit!(*args)
      GemLeakHelper.later("checks")
      GemLeakHelper::PerTest.exit_bang
      super
    end
  end

  module PrivateExitBang
    include ExitBang
    private :exit!
  end

  # Kernel#exec, Process.exec: what this image lost is checked before the
  # new one replaces it (PerTest.before_exec).
  module Exec
    def exec(*args)
      GemLeakHelper.later("checks")
      GemLeakHelper::PerTest.before_exec
      super
    end
  end

  module PrivateExec
    include Exec
    private :exec
  end
end
