# frozen_string_literal: true

# `gemleak run -- bundle exec rake test` starts the launcher (bundle, rake)
# outside Valgrind, and hands Valgrind's command line down in
# GEMLEAK_ENGINE_COMMAND: a launcher only starts the processes that run the
# suite, and under Valgrind each costs a start and a leak check at exit.
# Here, first thing, every Ruby process below it but another launcher,
# extconf.rb and what build tools start puts itself under Valgrind, by
# exec: the same pid, and Ruby started again exactly as it was (its
# arguments, environment, directory and a script read from standard
# input). A launcher or build step that loads an extension of the project
# runs tests itself: it starts again, from the start, under Valgrind; a
# process forked from it, which cannot, is named to gemleak
# (outside-<pid>.txt), and the run does not pass.
module GemLeakLaunch
  SEPARATOR = GemLeakHelper::Protocol::ENGINE_COMMAND_SEPARATOR
  LAUNCHERS = GemLeakHelper::Protocol::LAUNCHERS.split(" ").freeze
  BUILD_STEPS = GemLeakHelper::Protocol::BUILD_STEPS.split(" ").freeze
  Core = GemLeakHelper::Core
  EXEC = Process.method(:exec)
  # Ruby's switches (ruby.c, proc_options), for the -C among them: those
  # that take an argument, attached or the next word; those that take the
  # rest of the word; the long options whose argument may be the next word.
  ARGUMENT_SWITCHES = "CXeIrE"
  REST_SWITCHES = "ixF"
  LONG_WITH_ARGUMENT = GemLeakHelper::Protocol::RUBY_LONG_WITH_VALUE.split.map { |name| "--#{name}" }.freeze

  class << self
    # :traced (under Valgrind, or no launcher above), :launcher, :outside
    # (a build step, or a Ruby below a build tool: native, as Valgrind's
    # --trace-children-skip would keep it, unless it loads the project's
    # extension), or :unchecked (it could not tell, and said so).
    def start
      prefix = GemLeakHelper::Core::VARIABLES[GemLeakHelper::Protocol::ENGINE_COMMAND_VARIABLE]
      return :traced if prefix.nil?

      decide(prefix)
    rescue StandardError => e
      # Never silently unchecked: gemleak says so, and the run cannot pass.
      outside("#{File.basename($0.to_s)} could not go under #{Core.engine_title} (#{e.class}: #{e.message})")
      :unchecked
    end

    def decide(prefix)
      # Under Valgrind. GEMLEAK_ENGINE_COMMAND stays for the children: those
      # Valgrind traces are under it too; a Ruby below a program it skips
      # (make) runs without Valgrind's LD_PRELOAD, and looks for itself.
      return :traced if ENV["LD_PRELOAD"].to_s.include?("/vgpreload_")
      if GemLeakHelper::Runtime.mapped?
        GemLeakHelper::Runtime.keep_to_self
        return :traced
      end

      # Started outside the engine: what to do is the later part's
      # (launch_outside.rb), which a Ruby under the engine never loads.
      GemLeakHelper.later("launch_outside")
      decide_outside(prefix)
    end

    # Tells gemleak (outside-<pid>.txt) what this process ran outside
    # Valgrind, in a sentence: what it ran was not checked.
    def outside(what)
      @reported = true
      Core.append(Core.run_file(GemLeakHelper::Protocol::OUTSIDE_PREFIX), "#{what.tr("\n", " ")}\n") if Core::RUN_DIR
    rescue StandardError => e
      Core.say("process #{Core.digits(Core.pid)}: #{what}, and cannot tell gemleak so " \
               "(#{e.class}: #{e.message}): what it ran was not checked")
    end
  end
end
