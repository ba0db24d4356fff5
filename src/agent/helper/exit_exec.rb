# frozen_string_literal: true

# A process that does not reach at_exit: exit! (no atexit handler runs,
# and with it no leak check of a sanitizer's runtime) and exec (the new
# image's report takes the old one's name). Each is hooked, and what the
# process lost is checked first.
module GemLeakHelper
  # exit! under a sanitizer's engine: the check the runtime would have made
  # at exit (PerTest.exit_bang), then exit! as it is; in a test --per-test
  # runs again, the end of that run (PerTest::Ended), not of the process.
  # Process.exit! and Kernel.exit! are public, Kernel#exit! private.
  module ExitBang
    def exit!(*args)
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
      GemLeakHelper::PerTest.before_exec
      super
    end
  end

  module PrivateExec
    include Exec
    private :exec
  end

  module PerTest
    class << self
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
end
