# frozen_string_literal: true

require "fileutils"
require "rbconfig"
require "shellwords"

module GemLeak
  # The extensions of a project built with AddressSanitizer for engine :asan,
  # beside the native build, which stays as it is: each ext/**/extconf.rb's
  # sources are copied to tmp/gemleak-asan/RUBY_VERSION/build/ (built where
  # they are, make would take a native build's objects for its own through
  # mkmf's VPATH) and configured there with Ruby's own CFLAGS
  # and LDFLAGS followed by AddressSanitizer's (mkmf's --with-cflags and
  # --with-ldflags replace Ruby's, they do not add to them), and installed
  # into tmp/gemleak-asan/RUBY_VERSION/lib/ as `require` names it
  # ("tally/tally.so"), which the suite's Ruby gets first on its load path.
  # -fsanitize-recover=address lets the suite go on after an error, so that
  # one run reports every error (gemleak run sets halt_on_error=0).
  class AsanBuild
    # GL_PROTO_ASAN_CFLAGS and GL_PROTO_ASAN_LDFLAGS of gemleak's protocol.h
    # (tests/rake/test_messages.rb holds them equal)
    CFLAGS = "-fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer"
    LDFLAGS = "-fsanitize=address"

    def initialize(root = Dir.pwd)
      @root = root
      @dir = File.join(root, "tmp", "gemleak-asan", RUBY_VERSION)
    end

    def lib_dir
      File.join(@dir, "lib")
    end

    # Builds (again, as make sees fit) every extension.
    # Returns: lib_dir. Raises GemLeak::Error when there is none to build, or
    # a build fails.
    def build!
      extconfs = Dir.glob(File.join(@root, "ext", "**", "extconf.rb")).sort
      if extconfs.empty?
        raise Error, "engine :asan builds the extension with AddressSanitizer from ext/**/extconf.rb, " \
                     "and there is none under #{@root}/ext"
      end
      FileUtils.mkdir_p(lib_dir)
      extconfs.each { |extconf| build_one(extconf) }
      lib_dir
    end

    private

    # What a build leaves in an extension's directory, not copied.
    PRODUCTS = /\.(o|so|bundle|dll|dylib|log)\z|\A(Makefile|extconf\.h)\z/.freeze

    def build_one(extconf)
      source = File.dirname(extconf)
      build = File.join(@dir, "build", source.delete_prefix("#{@root}/"))
      FileUtils.mkdir_p(build)
      copy_sources(source, build)
      makefile = File.join(build, "Makefile")
      unless File.file?(makefile) && File.mtime(makefile) >= File.mtime(extconf)
        # the copy's frames name the sources' own lines (reports, annotations)
        cflags = "#{RbConfig::CONFIG["CFLAGS"]} #{CFLAGS} -fdebug-prefix-map=#{build}=#{source}"
        ldflags = "#{RbConfig::CONFIG["LDFLAGS"]} #{LDFLAGS}"
        run(build, FileUtils::RUBY, "extconf.rb", "--with-cflags=#{cflags}", "--with-ldflags=#{ldflags}")
      end
      run(build, "make")
      run(build, "make", "install", "sitearchdir=#{lib_dir}", "sitelibdir=#{lib_dir}")
    end

    # Copies what changed, keeping times, so that make rebuilds only that.
    def copy_sources(source, build)
      Dir.children(source).each do |name|
        from = File.join(source, name)
        to = File.join(build, name)
        next if name.match?(PRODUCTS)
        next if File.file?(from) && File.file?(to) && File.mtime(to) == File.mtime(from)

        FileUtils.cp_r(from, build, preserve: true, remove_destination: true)
      end
    end

    def run(dir, *command)
      $stderr.puts "gemleak: (in #{dir}) #{command.shelljoin}" if Rake.application.options.trace
      return if system(*command, chdir: dir, out: File::NULL)

      raise Error, "engine :asan: #{command.shelljoin} failed in #{dir} (status " \
                   "#{$?.exitstatus.inspect}): building the extension with AddressSanitizer needs " \
                   "gcc or clang with it (Debian: gcc, libasan8)"
    end
  end
end
