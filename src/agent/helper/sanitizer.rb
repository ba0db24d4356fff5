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
    # Ruby 3.3 and 3.4's heap pages: 64 KiB, aligned to their size.
    PAGE = 1 << 16
    CHECKED = (Protocol::MARKER_PREFIX + Protocol::MARKER_CHECKED + "\0").freeze
    EXIT = (Protocol::MARKER_PREFIX + Protocol::MARKER_EXIT + "\0").freeze
    DONE = (Protocol::MARKER_PREFIX + Protocol::MARKER_DONE + "\0").freeze
    LIVE = (Protocol::MARKER_PREFIX + Protocol::MARKER_LIVE + "\0").freeze
    EXEC = (Protocol::MARKER_PREFIX + Protocol::MARKER_EXEC + "\0").freeze
    # How deep scrub goes: some 100 KiB of C stack.
    SCRUB_DEPTH = 100

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

      def check(closed: true)
        disabled = GC.disable
        filled = fill_free_slots
        register_pages
        exact_write
        scrub(SCRUB_DEPTH)
        @functions[:check].call
        @functions[:marker].call(CHECKED) if closed
      ensure
        filled&.clear
        GC.enable unless disabled
      end

      # Before the check lists the lost blocks, what the allocation front
      # writes beside it (src/agent/alloc.c): how its stacks were made,
      # the blocks the check cannot judge, and in the exact pass the stacks
      # of the blocks allocated at the sites it unwinds exactly.
      def exact_write
        return if Runtime::FRONT.empty? || !Core.native?

        Native.before_check
      rescue StandardError => e
        Core.debug(e)
      end

      # Ruby's object pages, registered as roots, hold free slots too, and
      # a free slot keeps what its dead object held: the address of a buffer
      # Ruby freed, which LeakSanitizer's allocator hands out again at once.
      # A block the extension then lost at that address looked reachable
      # (fork { leak; exit! } passed after a GC). Before a check, every free
      # slot of every heap is taken by a string as long as the slot, all
      # zeros. Returns them, to keep until the check is done.
      def fill_free_slots
        return [] unless defined?(GC::INTERNAL_CONSTANTS) && GC.respond_to?(:stat_heap)

        heaps = GC::INTERNAL_CONSTANTS[:HEAP_COUNT].to_i
        filled = []
        heaps.times do |i|
          stat = GC.stat_heap(i)
          live = stat[:total_allocated_objects].to_i - stat[:total_freed_objects].to_i
          free = stat[:heap_eden_slots].to_i - live
          # An embedded string: a 24-byte header, its bytes and a NUL.
          length = stat[:slot_size].to_i - 25
          next if free <= 0 || length <= 0

          free.times { filled << ("\0" * length) }
        end
        filled
      rescue StandardError => e
        Core.debug(e)
        filled || []
      end

      # The C stack below where Ruby runs, written over before a check:
      # LeakSanitizer scans each thread's stack from where it is, and a
      # pointer left there (a leaked block's, in a frame that has returned)
      # would keep the block found, not lost. Each level calls back through
      # Array#each into Ruby: a few hundred bytes of C frames each.
      def scrub(depth)
        return if depth.zero?

        [depth].each { |n| scrub(n - 1) }
      end

      # Ruby's object pages, as roots; looked for only when Ruby allocated
      # pages since the last look.
      def register_pages
        allocated = GC.stat(:total_allocated_pages)
        return if allocated == @allocated_pages

        @allocated_pages = allocated
        address = @functions[:address]
        fresh = false
        ObjectSpace.each_object(BasicObject) do |object|
          page = address.call(object) & ~(PAGE - 1)
          next if @pages[page]

          @pages[page] = true
          fresh = true
        end
        register_ranges if fresh
      end

      # The pages as root regions, each run of adjacent pages one region:
      # LeakSanitizer reads the process's memory map again for each root
      # region at each check (lsan_common.cpp, ProcessRootRegions), which
      # a page a region made hundreds of reads, most of a check's time.
      # A runtime that cannot drop a region gets a region a page.
      def register_ranges
        wanted = []
        @pages.keys.sort.each do |page|
          if !wanted.empty? && wanted.last[0] + wanted.last[1] == page
            wanted.last[1] += PAGE
          else
            wanted << [page, PAGE]
          end
        end
        wanted = @pages.keys.sort.map { |page| [page, PAGE] } unless @functions[:unroot]
        (@ranges - wanted).each { |first, size| @functions[:unroot]&.call(first, size) }
        (wanted - @ranges).each { |first, size| @functions[:root].call(first, size) }
        @ranges = wanted
      end
    end
  end
end
