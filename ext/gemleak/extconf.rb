# frozen_string_literal: true

# RubyGems (gem install, Bundler) runs this when it installs the gemleak gem,
# as for any native gem. It checks what building the gemleak binary needs,
# then writes a Makefile whose targets run gemleak's own Makefile and put
# the binary in the gem's libexec/, where the Ruby library looks for it.
#
# Where the binary cannot be built (no compiler, pkg-config or headers: a
# macOS or Windows CI job of a gem whose Gemfile names gemleak), the install
# still succeeds: a Gemfile line must not break `bundle install`. The gem
# then records why (GemLeak::Unbuilt), and its command and Rake tasks say
# it when they are used.
#
# Not mkmf: the gemleak binary is a program, not a Ruby extension, and
# needs neither Ruby's headers nor its compiler flags.

require "fileutils"
require "rbconfig"
require "shellwords"
require_relative "../../rake/lib/gemleak/unbuilt"

ROOT = File.expand_path("../..", __dir__)
BUILD = "ext/gemleak/build" # relative to ROOT, where the project's Makefile runs
UNBUILT = GemLeak::Unbuilt.path(ROOT)
BUILD_LOG = File.join(ROOT, "ext", "gemleak", "build.log")

def on_path?(command)
  return File.executable?(command) if command.include?("/")

  ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).any? do |dir|
    path = File.join(dir, command)
    File.file?(path) && File.executable?(path)
  end
end

def first_word(command)
  command.to_s.shellsplit.first.to_s
end

cc = first_word(ENV["CC"] || "cc")
make = first_word(ENV["MAKE"] || "make")
pkg_config = first_word(ENV["PKG_CONFIG"] || "pkg-config")

missing = []
missing << "a C compiler (#{cc})" unless on_path?(cc)
missing << make unless on_path?(make)
if on_path?(pkg_config)
  absent = %w[libxml-2.0 glib-2.0 json-glib-1.0 zlib libdw libelf].reject { |m| system(pkg_config, "--exists", m) }
  missing << "#{absent.join(", ")} (pkg-config finds no .pc file)" unless absent.empty?
else
  missing << "pkg-config"
end
# GNU libiberty (the demangler Valgrind embeds) comes without a .pc file:
# the compiler says whether it finds its header.
if on_path?(cc)
  IO.popen([cc, "-E", "-x", "c", "-"], "w", err: File::NULL, out: File::NULL) do |io|
    io.write("#include <libiberty/demangle.h>\n")
  end
  missing << "GNU libiberty's demangle.h (libiberty-dev, binutils-devel)" unless $?.success?
end

FileUtils.mkdir_p(File.dirname(UNBUILT))

unless missing.empty?
  why = "its build was missing #{missing.join(", ")}"
  GemLeak::Unbuilt.record(ROOT, why)
  # Shown by `gem install --verbose`, and in the gem's gem_make.out.
  puts <<~MESSAGE

    gemleak: the gemleak binary is not built: missing #{missing.join(", ")}.
    The gem installs without it; its command and Rake tasks say so when used.
    Install the packages it builds with, then install the gem again:
    #{GemLeak::Unbuilt::INSTALL.gsub(/^/, "  ").chomp}
    (gemleak runs Valgrind: install valgrind too.)

  MESSAGE
  # Targets that do nothing, for whichever make RubyGems runs (GNU make,
  # nmake): no recipe, no GNU extension.
  File.write("Makefile", <<~MAKEFILE)
    # Written by ext/gemleak/extconf.rb: the gemleak binary cannot be built
    # here (#{why}); #{GemLeak::Unbuilt::FILE} says so.

    all:

    install:

    clean:
  MAKEFILE
  exit
end

# RubyGems runs make clean, make, make install here, and some versions make
# clean again afterwards: the binary lives outside what clean removes.
# -Werror stays a developer's setting: a newer compiler's new warning must
# not fail a user's install. A build that fails all the same (a system
# gemleak was never built on) leaves the gem without its binary, and says
# why, rather than fail the install: its output is in build.log.
failed = "its build failed (its output: #{BUILD_LOG})"
File.write("Makefile", <<~MAKEFILE)
  # Written by ext/gemleak/extconf.rb.
  GEM_ROOT = #{ROOT.shellescape}
  BUILD = #{BUILD}
  UNBUILT = #{UNBUILT.shellescape}
  BUILD_LOG = #{BUILD_LOG.shellescape}

  all:
  \t@if $(MAKE) -C $(GEM_ROOT) B=$(BUILD) WERROR= $(BUILD)/gemleak >$(BUILD_LOG) 2>&1; then \\
  \t    rm -f $(UNBUILT); \\
  \telse \\
  \t    tail -n 30 $(BUILD_LOG); \\
  \t    echo "gemleak: the gemleak binary could not be built: the gem installs without it (see $(BUILD_LOG))"; \\
  \t    echo #{failed.shellescape} >$(UNBUILT); \\
  \tfi

  install: all
  \t@if [ -f $(GEM_ROOT)/$(BUILD)/gemleak ] && [ ! -f $(UNBUILT) ]; then \\
  \t    mkdir -p $(GEM_ROOT)/libexec && \\
  \t    cp $(GEM_ROOT)/$(BUILD)/gemleak $(GEM_ROOT)/libexec/gemleak.new && \\
  \t    mv -f $(GEM_ROOT)/libexec/gemleak.new $(GEM_ROOT)/libexec/gemleak; \\
  \tfi

  clean:
  \trm -rf $(GEM_ROOT)/$(BUILD)

  .PHONY: all install clean
MAKEFILE
