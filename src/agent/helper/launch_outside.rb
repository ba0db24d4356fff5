# frozen_string_literal: true

# What a Ruby started outside the engine does (launch.rb says when): a
# launcher watches and hands its Rubies over, a build step or a Ruby below a
# build tool is watched, any other starts again under the engine. Loaded
# by launch.rb the first time a process needs it (GemLeakHelper.later): a
# Ruby under the engine never does.
module GemLeakLaunch
  class << self
    # The rest of decide (launch.rb), for a Ruby outside the engine.
    def decide_outside(prefix)
      @valgrind = prefix.split(SEPARATOR)
      @argv = File.binread("/proc/self/cmdline").split("\0")
      @env = ENV.to_h
      @name = File.basename($0.to_s)
      @pid = Core.pid
      @seen = $LOADED_FEATURES.size
      started_as
      if BUILD_STEPS.include?(@name)
        @role = "the build step #{@name}"
        :outside
      elsif under_build_tool?
        @role = "#{@name} (below a build tool)"
        :outside
      elsif LAUNCHERS.include?(@name)
        @role = "the launcher #{@name}"
        :launcher
      else
        start_again
      end
    end

    # A build tool among this process's ancestors, up to gemleak: make
    # running Ruby stays out of Valgrind, as make itself does.
    def under_build_tool?
      skip = @valgrind.reverse.find { |arg| arg.start_with?("--trace-children-skip=") }
      patterns = skip.to_s.delete_prefix("--trace-children-skip=").split(",")
      return false if patterns.empty?

      stop = ENV[GemLeakHelper::Protocol::PID_VARIABLE].to_i
      pid = Process.ppid
      32.times do
        break if pid <= 1 || pid == stop

        stat = File.read("/proc/#{pid}/stat")
        comm = stat[stat.index("(") + 1...stat.rindex(")")]
        return true if patterns.any? { |p| File.fnmatch?(p, comm) || File.fnmatch?(p, "/#{comm}") }

        pid = stat[stat.rindex(")") + 2..].split[1].to_i
      end
      false
    rescue StandardError
      false
    end

    # How to start this Ruby again as it was started. When the helper
    # loads, Ruby has already taken its switches: -C has changed
    # directory (so that the same arguments would chdir twice: "Can't
    # chdir"), and a script on standard input has been read from (its
    # first line).
    def started_as
      @args = @argv.drop(1)
      chdirs = chdirs_in(@argv)
      unless chdirs.empty?
        @directory = start_directory(chdirs.map(&:last))
        @args = without_chdirs(@argv, chdirs).drop(1) if @directory.nil?
      end
      keep_script if $0 == "-"
    end

    # The -C (and -X) switches among Ruby's options, as [index of the
    # word, offset of the switch in it, whether the directory is attached,
    # the directory].
    def chdirs_in(argv)
      found = []
      i = 1
      while i < argv.size
        word = argv[i]
        break if word == "-" || word == "--" || !word.start_with?("-")

        if word.start_with?("--")
          i += 1 if LONG_WITH_ARGUMENT.include?(word)
        else
          i += 1 if chdir_in_switches(argv, i, found)
        end
        i += 1
      end
      found
    end

    # One word of single-letter switches (-wCdir, -I lib). Returns: true
    # when the last switch took the next word as its argument.
    def chdir_in_switches(argv, i, found)
      word = argv[i]
      j = 1
      while j < word.size
        c = word[j]
        if ARGUMENT_SWITCHES.include?(c)
          attached = j + 1 < word.size
          found << [i, j, attached, attached ? word[(j + 1)..] : argv[i + 1].to_s] if "CX".include?(c)
          return !attached
        end
        return false if REST_SWITCHES.include?(c) || (c == "W" && word[j + 1] == ":")

        j += 1
        j += 1 if c == "K"
        digits = { "0" => "01234567", "T" => "0123456789", "W" => "0123456789" }[c]
        j += 1 while digits && j < word.size && digits.include?(word[j])
      end
      false
    end

    # The directory this Ruby started in, before its -C: the one among
    # its parent's, $PWD and the one the -C went down from that leads,
    # through the same -C, to the directory it is in. nil if none.
    def start_directory(chdirs)
      here = GemLeakHelper.real(Dir.pwd)
      candidates = [parent_directory, ENV["PWD"], unwound(chdirs)].compact.uniq
      candidates.find do |dir|
        GemLeakHelper.real(chdirs.reduce(dir) { |from, to| File.expand_path(to, from) }) == here
      rescue StandardError
        false
      end
    end

    def parent_directory
      File.readlink("/proc/#{Process.ppid}/cwd")
    rescue SystemCallError
      nil
    end

    # Up from here as far as relative -C went down; nil past an absolute
    # one or a "..".
    def unwound(chdirs)
      dir = Dir.pwd
      chdirs.reverse_each do |to|
        parts = to.split("/").reject { |part| part.empty? || part == "." }
        return nil if to.start_with?("/") || parts.include?("..")

        parts.size.times { dir = File.dirname(dir) }
      end
      dir
    end

    # Ruby's arguments without their -C, to run in the directory they led to.
    def without_chdirs(argv, chdirs)
      argv = argv.dup
      chdirs.reverse_each do |i, j, attached, _dir|
        argv.delete_at(i + 1) unless attached
        if j == 1
          argv.delete_at(i)
        else
          argv[i] = argv[i][0...j]
        end
      end
      argv
    end

    # Ruby reads a script on standard input ($0 "-") as far as its first
    # line, and takes that line's switches, before it loads the helper; it
    # pushes "#!\n" back in its place. The script, its first line made
    # again (with the switches in force), goes to an unnamed file that
    # becomes standard input: this Ruby parses it from there, and Ruby
    # under Valgrind reads it again.
    def keep_script
      text = STDIN.read.b
      text = "#!ruby#{switches_in_force}\n#{text.byteslice(3..)}" if text.start_with?("#!\n")
      @script = unnamed_file
      @script.write(text)
      @script.flush
      @script.rewind
      STDIN.reopen(@script)
    end

    def switches_in_force
      switches = +""
      switches << " -w" if $VERBOSE
      switches << " -W0" if $VERBOSE.nil?
      switches << " -d" if $DEBUG
      verbose = $VERBOSE
      $VERBOSE = nil # $-a and friends are unset without their switch
      switches << " -a" if $-a
      switches << " -l" if $-l
      switches << " -p" if $-p
      switches
    ensure
      $VERBOSE = verbose
    end

    def unnamed_file
      dir = Core::RUN_DIR || "/tmp"
      File.open(dir, File::RDWR | File::TMPFILE, 0o600, binmode: true)
    rescue SystemCallError, NameError
      path = "#{dir}/stdin-#{Core.digits(Core.pid)}.rb"
      file = File.open(path, File::RDWR | File::CREAT | File::EXCL, 0o600, binmode: true)
      File.unlink(path)
      file
    end

    # This Ruby, from the start, under Valgrind: in the environment and
    # directory it started in, its script again on standard input.
    def start_again
      if @script
        @script.sysseek(0)
        STDIN.reopen(@script)
      end
      options = { unsetenv_others: true }
      options[:chdir] = @directory if @directory
      exec_under_engine(@args, @env, options)
    end

    def exec_under_engine(args, env, options)
      STDOUT.flush
      STDERR.flush
      ruby = File.readlink("/proc/self/exe")
      EXEC.call(env, [@valgrind[0], @valgrind[0]], *@valgrind.drop(1), ruby, *args, **options)
    rescue SystemCallError => e
      Core.say("cannot start #{Core.engine_title} (#{@valgrind[0]}) for #{args.first}: #{e.message}")
      Process.exit(1)
    end

    # Bundler's `bundle exec` loads a Ruby script into its own process,
    # $0 set to it: what bundle exec would have exec'd goes under Valgrind.
    def hand_over(file)
      return if LAUNCHERS.include?(File.basename(file.to_s)) || Core.pid != @pid

      exec_under_engine([file.to_s, *ARGV], ENV.to_h, {})
    end

    # What the launcher starts goes under Valgrind from its start, with all
    # it starts in turn (Valgrind follows each exec), as when the launcher
    # itself runs under it: a Ruby started with an environment of its own
    # (env -i, a static launcher that clears it) or that ignores RUBYOPT
    # (ruby --disable=rubyopt) is checked all the same. @args are
    # Kernel#system's: [ENV,] COMMAND [ARG...] [, OPTIONS].
    # Returns: the arguments that run it under Valgrind; nil for a program
    # Valgrind would not trace (a build tool, another launcher) or what
    # cannot be told apart (the launcher started as [PROGRAM, ARGV0]).
    def under_engine(args)
      return nil if @valgrind.nil? || args.empty?

      args = args.dup
      env = args.first.is_a?(Hash) ? args.shift : nil
      options = args.last.is_a?(Hash) ? args.pop : nil
      words = command_words(args)
      return nil if words.nil?

      program = resolve(words[0], env)
      return nil if program.nil? || skipped?(program)

      [*([env] if env), [@valgrind[0], @valgrind[0]], *@valgrind.drop(1), program,
       *words.drop(1), *([options] if options)]
    rescue StandardError => e
      Core.debug(e)
      nil
    end

    # A command's words: a string as Ruby runs it (through the shell when
    # it holds what only the shell reads), else its program and arguments.
    def command_words(args)
      if args.size == 1 && args[0].respond_to?(:to_str)
        line = args[0].to_str
        return ["/bin/sh", "-c", line] if line.match?(SHELL_SYNTAX)

        words = line.split
        return words.empty? ? nil : words
      end
      return nil if args[0].is_a?(Array)

      args.map { |arg| File.path(arg) }
    end

    # What Ruby leaves to /bin/sh in a command given as one string.
    SHELL_SYNTAX = /[*?{}\[\]<>()~&|\\$;'`"\n#=%]/.freeze

    # @name's path, as the command's PATH finds it; nil if none does.
    def resolve(name, env)
      return name if name.include?("/")

      path = env&.key?("PATH") ? env["PATH"] : ENV["PATH"]
      path.to_s.split(File::PATH_SEPARATOR).each do |dir|
        candidate = File.join(dir, name)
        return candidate if File.file?(candidate) && File.executable?(candidate)
      end
      nil
    end

    # A program Valgrind's --trace-children-skip keeps out (a compiler),
    # or a launcher, which runs as this one does.
    # Under a sanitizer's engine, any program but a Ruby: what it starts
    # would inherit the runtime's LD_PRELOAD (make and the compiler leak or
    # crash under it, and their leaks are no Ruby's), and a Ruby it starts
    # loads this helper (or has the run's variables given back by the
    # library every process of the run gets) and puts itself under the
    # engine as it starts.
    def skipped?(program)
      base = File.basename(program)
      return true if LAUNCHERS.include?(base)
      return !ruby_program?(base) if sanitizer?

      skip = @valgrind.reverse.find { |arg| arg.start_with?("--trace-children-skip=") }
      patterns = skip.to_s.delete_prefix("--trace-children-skip=").split(",")
      patterns.any? { |p| File.fnmatch?(p, program) || File.fnmatch?(p, base) }
    end

    # The engine is a sanitizer's: its command sets the runtime's
    # LD_PRELOAD (gl_sanitizer_handover), where Valgrind's is Valgrind.
    def sanitizer?
      @valgrind.drop(1).first.to_s.start_with?("LD_PRELOAD=")
    end

    # A program by one of the names Ruby's executable has.
    def ruby_program?(base)
      GemLeakHelper::Protocol::RUBY_PROGRAMS.split.any? { |glob| File.fnmatch?(glob, base) }
    end

    # Looks at the project's extensions loaded since the last look: a
    # launcher or build step that loads one starts again under Valgrind; at
    # exit, or in a fork, it no longer can.
    def check_extensions(restart: true)
      features = $LOADED_FEATURES
      return if @reported || features.size == @seen

      fresh = features[@seen..] || features
      @seen = features.size
      path = GemLeakHelper.project_extensions(fresh).first
      return if path.nil?

      if Core.pid != @pid
        outside("forked from #{@role}, it loaded #{path} outside #{Core.engine_title}")
      elsif !restart
        outside("#{@role} loaded #{path} outside #{Core.engine_title} (seen at its exit)")
      else
        Core.say("#{@name} (pid #{Core.digits(Core.pid)}) loaded #{path} itself: it runs again " \
                 "from the start, under #{Core.engine_title}")
        start_again
      end
    rescue StandardError => e
      Core.debug(e)
    end
  end

  module Watch
    private

    def require(*args)
      result = super
      GemLeakLaunch.check_extensions if result
      result
    end
  end

  module HandOver
    def load(file, *rest)
      GemLeakLaunch.hand_over(file) if $0 == file
      super
    end
  end

  # Kernel#system, #spawn and #exec, and Process.spawn and .exec, in a
  # launcher: what it starts, under Valgrind (GemLeakLaunch.under_engine).
  # What it starts otherwise (a pipe, backquotes) runs natively, each Ruby
  # below putting itself under Valgrind as below a spared launcher.
  module Spawn
    private

    def system(*args)
      wrapped = GemLeakLaunch.under_engine(args)
      wrapped ? super(*wrapped) : super
    end

    def spawn(*args)
      wrapped = GemLeakLaunch.under_engine(args)
      wrapped ? super(*wrapped) : super
    end

    def exec(*args)
      wrapped = GemLeakLaunch.under_engine(args)
      wrapped ? super(*wrapped) : super
    end
  end

  # The same, called on Kernel or Process.
  module SpawnPublic
    def system(*args)
      wrapped = GemLeakLaunch.under_engine(args)
      wrapped ? super(*wrapped) : super
    end

    def spawn(*args)
      wrapped = GemLeakLaunch.under_engine(args)
      wrapped ? super(*wrapped) : super
    end

    def exec(*args)
      wrapped = GemLeakLaunch.under_engine(args)
      wrapped ? super(*wrapped) : super
    end
  end
end
