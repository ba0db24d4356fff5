# frozen_string_literal: true

require_relative "support"

# A Ruby outside Valgrind below gemleak (GEMLEAK_ENGINE_COMMAND set) execs itself
# under Valgrind, started again exactly as it was started (item 13). Here
# "Valgrind" is a script that notes how it was started, then runs the
# command with an LD_PRELOAD that looks like Valgrind's, as Valgrind's
# traced child would.
class UnderValgrindAgainTest < Minitest::Test
  include HelperTest

  FAKE_VALGRIND = <<~'SH'
    #!/bin/sh
    { pwd -P; for arg; do printf '%s\n' "$arg"; done; } > "$FAKE_VALGRIND_LOG"
    while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done
    LD_PRELOAD="$FAKE_VGPRELOAD" exec "$@"
  SH

  def setup
    super
    @dir = File.realpath(Dir.mktmpdir("gemleak-helper-test-"))
    @dirs << @dir
    @fake = File.join(@dir, "valgrind")
    File.write(@fake, FAKE_VALGRIND)
    File.chmod(0o755, @fake)
    @log = File.join(@dir, "valgrind.log")
    @run_dir = File.join(@dir, "run")
    Dir.mkdir(@run_dir, 0o700)
    # What gemleak writes there before anything runs: the engine's title
    # first, which the helper names the engine by.
    File.write(File.join(@run_dir, "engine.txt"), "Valgrind\nname valgrind\n")
    # Valgrind's preload by its name, libc (loaded anyway) by its contents.
    libc = File.readlines("/proc/self/maps").map { |line| line.split[5] }.compact
               .find { |path| File.basename(path).match?(/\Alibc[.-].*so/) }
    @vgpreload = File.join(@dir, "vgpreload_fake.so")
    File.symlink(libc, @vgpreload)
  end

  def environment
    { "RUBYOPT" => "-r#{HELPER}", "RUBYLIB" => nil, "GEMLEAK_RUN_DIR" => @run_dir,
      "GEMLEAK_ENGINE_COMMAND" => [@fake, "--tool=memcheck", "--trace-children-skip=make,*/make"].join("\x1f"),
      "FAKE_VALGRIND_LOG" => @log, "FAKE_VGPRELOAD" => @vgpreload, "GEMLEAK_PER_TEST" => nil, "GEMLEAK_DURATIONS" => nil,
      "GEMLEAK_PID" => Process.pid.to_s } # as gemleak: build tools above it do not count
  end

  # What the fake Valgrind saw: [its directory, Ruby's arguments].
  def valgrind_saw
    directory, *command = File.read(@log).lines(chomp: true)
    command.shift while command.first&.start_with?("--")
    [directory, command.drop(1)]
  end

  def test_chdir_is_not_taken_twice
    FileUtils.mkdir_p(File.join(@dir, "lib"))
    FileUtils.mkdir_p(File.join(@dir, "sub"))
    File.write(File.join(@dir, "lib", "marker.rb"), "MARKER = 'from lib'\n")
    File.write(File.join(@dir, "sub", "suite.rb"), <<~'RUBY')
      require "marker"
      puts "ran in #{File.basename(Dir.pwd)}, #{MARKER}, #{ENV['LD_PRELOAD']}"
    RUBY
    out, err, status = Open3.capture3(environment, RbConfig.ruby, "-I", "lib", "-C", "sub", "suite.rb",
                                      chdir: @dir)
    assert status.success?, err
    assert_equal "ran in sub, from lib, #{@vgpreload}\n", out
    directory, args = valgrind_saw
    assert_equal @dir, directory
    assert_equal %w[-I lib -C sub suite.rb], args
  end

  # No directory it may have started in leads through "-C ../sub" to
  # where it is: the -C goes, and it runs where the -C took it.
  def test_a_chdir_from_an_unknown_directory_is_dropped
    FileUtils.mkdir_p(File.join(@dir, "a"))
    FileUtils.mkdir_p(File.join(@dir, "sub"))
    File.write(File.join(@dir, "sub", "suite.rb"), "puts \"ran in \#{File.basename(Dir.pwd)}\"\n")
    out, err, status = Open3.capture3(environment.merge("PWD" => "/"), RbConfig.ruby, "-wC../sub",
                                      "suite.rb", chdir: File.join(@dir, "a"))
    assert status.success?, err
    assert_equal "ran in sub\n", out
    assert_equal [File.join(@dir, "sub"), %w[-w suite.rb]], valgrind_saw
  end

  def test_a_script_on_standard_input_is_read_again
    script = "#!/usr/bin/env ruby -w\nputs \"#{'#{$0} #{$VERBOSE} #{__LINE__} #{DATA.read.chomp}'}\"\n__END__\nthe data\n"
    out, err, status = Open3.capture3(environment, RbConfig.ruby, stdin_data: script, chdir: @dir)
    assert status.success?, err
    assert_match(/^- true 2 the data$/, out)
    assert_equal [], valgrind_saw[1]
  end

  # The lead's guard: a Ruby below a build tool stays native, but starts
  # again under Valgrind when it loads the project's extension.
  def test_a_ruby_below_make_that_loads_an_extension_starts_again
    err = start_again_below_make
    assert_match(/^gemleak: suite\.rb \(pid \d+\) loaded \S+fake\.so itself: it runs again from the start, under Valgrind$/,
                 err)
  end

  # Issue 38: what the helper says names the run's engine, as the run
  # directory's engine.txt does, not Valgrind under every engine.
  def test_the_engine_is_named_as_the_run_says
    File.write(File.join(@run_dir, "engine.txt"), "LeakSanitizer\nname lsan\n")
    err = start_again_below_make
    assert_match(/^gemleak: suite\.rb \(pid \d+\) loaded \S+fake\.so itself: it runs again from the start, under LeakSanitizer$/,
                 err)
    File.unlink(File.join(@run_dir, "engine.txt"))
    err = start_again_below_make
    assert_match(/ it runs again from the start, under the engine$/, err)
  end

  # Runs a suite below make that loads the project's extension.
  # Returns: what the helper said.
  def start_again_below_make
    FileUtils.mkdir_p(File.join(@dir, "ext"))
    File.write(File.join(@dir, "ext", "fake.so"), "")
    File.write(File.join(@dir, "trigger.rb"), "")
    File.write(File.join(@dir, "suite.rb"), <<~'RUBY')
      puts "suite started, #{ENV['LD_PRELOAD'] ? 'under' : 'outside'} Valgrind"
      $LOADED_FEATURES << File.join(__dir__, "ext", "fake.so")
      require File.join(__dir__, "trigger")
    RUBY
    File.write(File.join(@dir, "Makefile"), "test:\n\t$(RUBY) suite.rb\n")
    out, err, status = Open3.capture3(environment, "make", "-s", "RUBY=#{RbConfig.ruby}", chdir: @dir)
    assert status.success?, err
    assert_equal ["suite started, outside Valgrind", "suite started, under Valgrind"], out.lines(chomp: true)
    assert_equal ["suite.rb"], valgrind_saw[1]
    err
  end
end
