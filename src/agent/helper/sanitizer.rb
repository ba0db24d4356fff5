# frozen_string_literal: true

module GemLeakHelper
  # The runtime preloaded into Ruby (a sanitizer's engine) as the client of
  # the check a process makes when it ends with exit! or execs (the
  # runtime's own check at exit does not run then; a forked child checks
  # nothing at the fork: gemleak run writes that check in from its
  # parent's report, src/read/sanitizer_inherited.c): its interface called through GemLeakHelper::Native
  # (the client library, Core.native?). A marker is a
  # line of the process's report file (__sanitizer_report_error_summary
  # prints its text and a newline there, between the reports, in order); a
  # check is __lsan_do_recoverable_leak_check, which does not exit and
  # reports every object lost so far, followed by "gemleak:checked" (so
  # that gemleak tells a check's report from the runtime's own at exit).
  #
  # LeakSanitizer does not scan memory Ruby maps itself: objects whose only
  # reference is in a Ruby object would be reported lost while Ruby runs.
  # Before each check, Ruby's object pages (the 64 KiB-aligned pages the
  # live objects lie in) are registered as root regions; what is left
  # (Ruby's shape tree, fibers' stacks, a page of hidden objects only) gemleak
  # leaves out when the exit report does not hold it.
  module Sanitizer
    CHECKED = (Protocol::MARKER_PREFIX + Protocol::MARKER_CHECKED + "\0").freeze
    EXIT = (Protocol::MARKER_PREFIX + Protocol::MARKER_EXIT + "\0").freeze
    DONE = (Protocol::MARKER_PREFIX + Protocol::MARKER_DONE + "\0").freeze
    LIVE = (Protocol::MARKER_PREFIX + Protocol::MARKER_LIVE + "\0").freeze
    EXEC = (Protocol::MARKER_PREFIX + Protocol::MARKER_EXEC + "\0").freeze

    class << self
      # Returns: the client PerTest calls (as the Valgrind library's).
      def client(functions = nil)
        functions ||= runtime_functions
        @functions = functions
        @pages = {}
        @ranges = []
        @allocated_pages = nil
        {
          marker: functions[:marker],
          check: -> { check },
          full_check: -> { check },
          # The check a process that ends with exit! makes: its report
          # stands for the runtime's at exit (no "checked" after it), and
          # says it ran to its end as the preloaded library's does.
          last_check: lambda {
            functions[:marker].call(LIVE)
            check(closed: false)
            functions[:marker].call(DONE) if Core::PROOF
          },
          # Before exec: what this image lost, checked, and said so.
          exec_check: lambda {
            functions[:marker].call(LIVE)
            check(closed: false)
            functions[:marker].call(EXEC)
          },
          exit: lambda {
            functions[:marker].call(EXIT)
            # Ruby frees its memory next: the allocation front keeps no
            # address back any more (src/agent/alloc_held.c)
            functions[:exiting]&.call
          },
        }
      end

      # Before the first fork of a process under a sanitizer's runtime: a
      # child's report at its exit (or before its exit!) has the runtime
      # symbolize Ruby's frames, which first reads all of Ruby's debug
      # information (50 ms, inflated where it is compressed) in each child
      # again; read once here, every child inherits it. AddressSanitizer's:
      # LeakSanitizer's runtime names no frame (symbolize=0, gemleak names
      # them after the run), and the call costs it nothing.
      def before_fork
        return if @warmed || !Runtime.mapped? || !Core.native?

        @warmed = true
        Native.sanitizer_warm
      rescue StandardError => e
        Core.debug(e)
      end

      def runtime_functions
        raise Core.native_error unless Core.native?

        {
          marker: ->(text) { Native.sanitizer_line(text) },
          check: -> { Native.sanitizer_check },
          root: ->(address, size) { Native.sanitizer_root(address, size) },
          unroot: ->(address, size) { Native.sanitizer_unroot(address, size) },
          address: ->(object) { Native.address(object) },
          exiting: -> { Native.exiting },
        }
      end
    end
  end
end
