# frozen_string_literal: true

# The checks a process makes while it runs: --per-test's markers and
# checks after the tests (per_test.rb says what they are; the hooks that
# call them, per_test_frameworks.rb), the check of a forked child (and its
# list of extensions), the checks before exit! and exec (exit_exec.rb),
# and how a check is made under a sanitizer's runtime (Sanitizer, below).
# Loaded the first time a process needs them (GemLeakHelper.later): once a
# test framework is hooked where the tests are checked or marked
# (PerTest.checks_with_tests?), at a fork, at exit! or exec, and as the
# helper starts where checks follow the tests (per test under Valgrind)
# or tests run again (--growth). A Ruby that does none of these never
# loads it: a suite's child Ruby under a sanitizer's engine, the most
# common process of a suite that spawns Ruby, and the process that runs
# the tests in the fast pass, where the owners alone name each test.
module GemLeakHelper
  class << self
    # A forked child writes its own file, from the start.
    def forked
      @pid = Core.pid
      @recorded = {}
      @features_seen = 0
      @failed = false
      start_list
      # What the parent loaded, the child has: a child killed before it
      # requires anything (what the parent loaded already)
      # still counts as one that loaded the extension, whose check must run.
      record_new_extensions
    end

    # Returns: the project's extensions this process loaded, as recorded
    # in loaded-PID.txt (real paths).
    def project_extensions_loaded
      @recorded.keys
    end
  end

  module PerTest
    # A test run again that would end the process (exit!) ends its run
    # instead: running a test again must not change the suite. An
    # Exception, not a StandardError, so that a test's rescue lets it by.
    class Ended < Exception # rubocop:disable Lint/InheritException -- as SystemExit is one
    end

    class << self
      # The library's functions, loaded on first use; nil (with a word on
      # stderr) when they cannot be, and natively, outside Valgrind. Under
      # LeakSanitizer, the runtime's (Sanitizer).
      def client
        return @client if defined?(@client)

        @client = nil
        begin
          raise Core.native_error unless Core.native?
          return @client = Sanitizer.client if Runtime.mapped?
          return @client if Native.running_on_valgrind.zero?

          @client = {
            marker: ->(text) { Native.valgrind_marker(text) },
            check: -> { Native.valgrind_check },
            full_check: -> { Native.valgrind_full_check },
            lost: ->(which) { Native.valgrind_lost(which) },
          }
        rescue LoadError, StandardError => e
          what = on? ? "--per-test is off" : "what it inherited may be counted twice"
          Core.say("#{what} in process #{Core.digits(Core.pid)}: #{e.message}")
          @client = nil
        end
        @client
      end

      # Returns: whether this process is running tests again (not a child
      # one of them forked, which ends as it says).
      def again_here?
        @again && @again_pid == Core.pid
      end

      def marker(*fields)
        # NUL-terminated: the client reads up to the first NUL, whatever
        # Ruby's own buffer holds.
        @client[:marker].call("#{fields.join("\t")}\0")
      end

      # Lets the memory the finished tests dropped be freed (objects' dfree
      # run), so that what they leaked is lost now, not at a later check.
      # Returns: what was lost since the last check (see grown).
      # The C stack below where the hooks run is written over first, before
      # the collection and before the check, as under a sanitizer
      # (Sanitizer.scrub): the frames a test returned from (a collection
      # deep in the extension) leave copies of pointers there, which the
      # collection would take for live objects and Valgrind's scan for
      # references, and a block the test lost would be lost only at a
      # later test's check.
      def check(*fields)
        began = Core.monotonic
        Core.with_collector do
          Sanitizer.scrub(Sanitizer::SCRUB_DEPTH)
          GC.start
          Sanitizer.scrub(Sanitizer::SCRUB_DEPTH)
          marker(*fields)
          @client[:check].call
        end
        grown(began)
      end

      # Returns: what the check just made found lost beyond the one before,
      # [bytes, blocks] definitely or indirectly lost, and possibly lost
      # when those count; nil when nothing more was. Notes what it cost.
      def grown(began)
        lost = (@possible ? 0..3 : 0..1).map { |which| @client[:lost].call(which) }
        before = @lost || lost.map { 0 }
        @lost = lost
        @cost = Core.monotonic - began
        @since = 0.0
        growth = lost.zip(before).map { |now, was| now - was }
        growth.any?(&:positive?) ? growth : nil
      end

      # In every run that has a client (the library under Valgrind, the
      # runtime under LeakSanitizer), not only per test: forks are rare,
      # and without this check the child's leaks cannot be told from its
      # parent's.
      def forked
        @pid = Core.pid
        @ready = true
        @tests = []
        return if (@client_path.nil? && !on? && !Runtime.mapped?) || !client

        if Runtime.mapped?
          # Under a sanitizer, no check (it cost 0.05 s a child): gemleak
          # run writes one in from the parent's report (what both lost).
          marker(Protocol::MARKER_PREFIX + Protocol::MARKER_FORKED)
          marker(Protocol::MARKER_PREFIX + Protocol::MARKER_PARENT, Process.ppid.to_s)
        else
          # What garbage the parent held but had not collected owns is lost
          # now, not at the child's exit, where it would seem the child's.
          Core.collect
          marker(Protocol::MARKER_PREFIX + Protocol::MARKER_FORKED)
          @client[:full_check].call
        end
        @lost = nil
        grown(Core.monotonic) if on? && !@owners
        # A child forked during a test runs on in it.
        test_marker(Protocol::MARKER_PREFIX + Protocol::MARKER_START, *@open) if on? && @open
        # A child forked by a test run again: what it loses, the runs again
        # lose, not the suite.
        marker(Protocol::MARKER_PREFIX + Protocol::MARKER_AGAIN, Protocol::MARKER_FORKED) if @again
      rescue StandardError => e
        on? ? failed(e) : Core.debug(e)
      end

      # Under a sanitizer's engine, a process that ends with exit! runs no
      # atexit handler: neither the runtime's leak check nor the client
      # library's lines. They are made here, the check with Ruby's pages as
      # roots (Ruby has not freed its memory), its report the process's last.
      def exit_bang
        if again_here?
          @ended = true # minitest and RSpec take Ended for the test's error
          raise Ended, "exit! while run again"
        end
        return unless Runtime.mapped? && !@exited

        @exited = true
        begin
          finish if on?
          Owners.none if @owners
          Core.collect
          Owners.write if @owners
        rescue StandardError => e
          Core.debug(e)
        end
        last_check
      end

      # exec replaces the process's image: no exit, and the new image's
      # report (or Valgrind's XML) would take the same name and write over
      # this one's. What this image lost is checked first, said
      # ("gemleak:exec"), and its file renamed NAME.PID.N or PID.N.xml,
      # which the new image's name leaves alone.
      def before_exec
        return if Core::RUN_DIR.nil? || @exec_checked == Core.pid

        @exec_checked = Core.pid
        check = if Runtime.mapped?
                  client&.fetch(:exec_check, nil)
                else
                  exec_check_under_valgrind
                end
        return if check.nil?

        begin
          finish if on?
          Core.collect
        rescue StandardError => e
          Core.debug(e)
        end
        check.call
        set_image_aside
      rescue StandardError => e
        Core.say("process #{Core.digits(Core.pid)} execs and could not check for leaks first " \
                 "(#{e.class}: #{e.message}): what it lost before may be left out")
      end

      def exec_check_under_valgrind
        valgrind = client
        return nil if valgrind.nil? || valgrind[:full_check].nil?

        lambda {
          valgrind[:marker].call(Protocol::MARKER_PREFIX + Protocol::MARKER_LIVE)
          valgrind[:full_check].call
          valgrind[:marker].call(Protocol::MARKER_PREFIX + Protocol::MARKER_EXEC)
        }
      end

      # Renames this image's report, PID.xml or NAME.PID, to the first free
      # PID.N.xml or NAME.PID.N.
      def set_image_aside
        pid = Core.digits(Core.pid)
        Dir.children(Core::RUN_DIR).each do |name|
          next unless name == "#{pid}.xml" || name.end_with?(".#{pid}")
          next if name.start_with?(Protocol::LOADED_PREFIX, Protocol::RUBY_PREFIX)

          n = 1
          n += 1 while File.exist?(File.join(Core::RUN_DIR, image_name(name, pid, n)))
          File.rename(File.join(Core::RUN_DIR, name), File.join(Core::RUN_DIR, image_name(name, pid, n)))
        end
      end

      def image_name(name, pid, n)
        name == "#{pid}.xml" ? "#{pid}.#{n}.xml" : "#{name}.#{n}"
      end

      # The check exit! would skip. A process that cannot make it takes back
      # its word that the engine was in it (engine-PID.txt): without a
      # report, it is then not counted as checked.
      def last_check
        check = client&.fetch(:last_check, nil)
        raise "the runtime's interface could not be loaded" if check.nil?

        check.call
      rescue StandardError => e
        Core.say("process #{Core.digits(Core.pid)} ends with exit! and could not check for leaks " \
                 "first (#{e.class}: #{e.message}): it is not counted as checked")
        begin
          File.unlink(Core.run_file(Protocol::ENGINE_PREFIX)) unless Core::RUN_DIR.nil?
        rescue SystemCallError
          nil
        end
      end
    end
  end

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
    # Ruby 3.3 and 3.4's heap pages: 64 KiB, aligned to their size.
    PAGE = 1 << 16
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
