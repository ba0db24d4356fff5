# frozen_string_literal: true

# What runs as the helper loads, after every part is defined: a launcher
# (launch.rb) watches and hands over; any other Ruby records its
# extensions, hooks require, fork, exit! and exec, and does at exit what
# a check needs of it.
case GemLeakLaunch.start
when :launcher
  Object.prepend(GemLeakLaunch::Watch) # Object, as GemLeakHelper::Require below
  Kernel.singleton_class.prepend(GemLeakLaunch::HandOver)
  Object.prepend(GemLeakLaunch::Spawn)
  [Kernel.singleton_class, Process.singleton_class].each { |mod| mod.prepend(GemLeakLaunch::SpawnPublic) }
  at_exit { GemLeakLaunch.check_extensions(restart: false) }
  return
when :outside
  Object.prepend(GemLeakLaunch::Watch)
  at_exit { GemLeakLaunch.check_extensions(restart: false) }
  return
when :unchecked
  return
end

# The checks (checks.rb) load now where they follow the tests (per test
# under Valgrind, --growth): what the helper loads, it loads before the
# first; elsewhere when first needed.
if GemLeakHelper::PerTest.checks_after_tests?
  GemLeakHelper.later("checks")
  GemLeakHelper.later("per_test_again")
end
GemLeakHelper.later("growth_run") if GemLeakHelper::Growth.on?
GemLeakHelper.start_list
GemLeakHelper.record_new_extensions
# Object, not Kernel: bundler/setup, which RUBYOPT loads after the helper,
# replaces Kernel#require with Ruby's own to turn RubyGems' gem activation
# off; with a module prepended to Kernel that replacement does not hold,
# and a require that fails (an optional dependency probed for) has
# RubyGems look through every gem, warning "Ignoring NAME because its
# extensions are not built. Try: gem pristine" about the project's own
# gemspec. Every object that can call require is an Object.
Object.prepend(GemLeakHelper::Require)
if GemLeakHelper::Instrumented.on?
  Object.prepend(GemLeakHelper::Instrumented::Require)
  Kernel.singleton_class.prepend(GemLeakHelper::Instrumented::Require)
end
Process.singleton_class.prepend(GemLeakHelper::Fork) if Process.respond_to?(:_fork)
GemLeakHelper::PerTest.start_owners if GemLeakHelper::Runtime.mapped?
GemLeakHelper::Requiring.start
# exit! ends the run of a test run again (per test, or for --growth), not the process
if GemLeakHelper::Runtime.mapped? || GemLeakHelper::PerTest.on? || GemLeakHelper::Growth.on?
  Object.prepend(GemLeakHelper::PrivateExitBang)
  [Process.singleton_class, Kernel.singleton_class].each { |mod| mod.prepend(GemLeakHelper::ExitBang) }
end
unless GemLeakHelper::Core::RUN_DIR.nil?
  Object.prepend(GemLeakHelper::PrivateExec)
  [Process.singleton_class, Kernel.singleton_class].each { |mod| mod.prepend(GemLeakHelper::Exec) }
end

# Registered before the test framework's own at_exit, so it runs after it.
# With the collector as the helper needs it, from its first call: a process
# that exits with GC.stress on (json's suite forks a child that sets it)
# has each allocation make a full collection, and a call whose cache is
# empty allocates (its cache). with_collector alone turned it off some 16
# collections in, 40 ms of json's child; warmed (below), 7 collections
# still came first: at_exit's own call of a block allocates, and the
# suite's definitions empty caches the block's first calls fill. Under a
# sanitizer's engine the client library registers the block
# (Native.at_exit_uncollected): the collector is off until the block has
# turned GC.stress off, and on again after it (native.c). Elsewhere the
# block is called once now (warming), which fills the caches of the calls
# that turn it off and on again, then registered with at_exit. The suite's
# setting is back for what Ruby does after it. The proc is a method's
# (GemLeakHelper.exit_work): one made here would keep this scope, every
# part's module and class bodies, run once, which each collection of the
# process would then mark.
module GemLeakHelper
  def self.exit_work
    proc do |warming|
      stress = GemLeakHelper::Core.unstress
      begin
        unless warming
          begin
            GemLeakHelper::Core.with_collector do
              GemLeakHelper::PerTest.finish if GemLeakHelper::PerTest.on? # the last file, a test cut short
              GemLeakHelper::Growth.run if GemLeakHelper::Growth.on? # each test again, measured
              GemLeakHelper::PerTest.exiting # after a check of what a forked child inherited, too
              # Garbage the extension's free functions must see freed: a Ruby
              # that frees its memory at exit frees every object, and runs every
              # free function, without a collection first.
              unless GemLeakHelper::FREES_AT_EXIT
                GemLeakHelper.forget_minitest_lets
                GemLeakHelper::Core.collect
              end
              if GemLeakHelper.forked? # Ruby before 3.1 has no Process._fork
                GemLeakHelper.later("checks")
                GemLeakHelper.forked
              end
              GemLeakHelper.record_new_extensions
              GemLeakHelper::Durations.write
            end
          rescue Exception => e # rubocop:disable Lint/RescueException -- never fail the suite
            GemLeakHelper::Core.say("process #{GemLeakHelper::Core.digits(GemLeakHelper::Core.pid)}: the " \
                                    "helper failed at exit (#{e.class}: #{e.message})")
          end
          # A child that a test run again for --growth forked, and that ended
          # with exit: its status, now that the helper is done in it.
          GemLeakHelper::Growth.child_exit if GemLeakHelper::Growth.on?
        end
      ensure
        GemLeakHelper::Core.restress(stress)
      end
    end
  end
end
exit_work = GemLeakHelper.exit_work
if GemLeakHelper::Runtime.mapped? && GemLeakHelper::Core.native? &&
   GemLeakHelper::Native.respond_to?(:at_exit_uncollected)
  GemLeakHelper::Native.at_exit_uncollected(exit_work)
else
  exit_work.call(true)
  at_exit(&exit_work)
end
# Last: what the helper reads of the run's variables it has read.
GemLeakHelper::Core.leave_environment if GemLeakHelper::Runtime.mapped?
