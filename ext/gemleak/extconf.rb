# frozen_string_literal: true

# RubyGems (gem install, Bundler) runs this when it installs the gemleak gem,
# as for any native gem. It checks what building the gemleak binary needs,
# then writes a Makefile whose targets run gemleak's own Makefile and put
# the binary in the gem's libexec/, where the Ruby library looks for it.
#
# Not mkmf: the gemleak binary is a program, not a Ruby extension, and
# needs neither Ruby's headers nor its compiler flags.

require "rbconfig"
require "shellwords"

ROOT = File.expand_path("../..", __dir__)
BUILD = "ext/gemleak/build" # relative to ROOT, where the project's Makefile runs

DEBIAN = "gcc make pkg-config libxml2-dev libglib2.0-dev libjson-glib-dev zlib1g-dev"
FEDORA = "gcc make pkgconf-pkg-config libxml2-devel glib2-devel json-glib-devel zlib-devel"

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
  absent = %w[libxml-2.0 glib-2.0 gio-2.0 json-glib-1.0 zlib].reject { |m| system(pkg_config, "--exists", m) }
  missing << "#{absent.join(", ")} (pkg-config finds no .pc file)" unless absent.empty?
else
  missing << "pkg-config"
end
missing << "glib-compile-resources (GLib's development tools)" unless on_path?("glib-compile-resources")

unless missing.empty?
  abort <<~MESSAGE

    gemleak: cannot build the gemleak binary: missing #{missing.join(", ")}.
    Install the packages it builds with, then install the gem again:
      Debian, Ubuntu: sudo apt-get install #{DEBIAN}
      Fedora:         sudo dnf install #{FEDORA}
    (gemleak runs Valgrind: install valgrind too.)

  MESSAGE
end

# RubyGems runs make clean, make, make install here, and some versions make
# clean again afterwards: the binary lives outside what clean removes.
# -Werror stays a developer's setting: a newer compiler's new warning must
# not fail a user's install.
File.write("Makefile", <<~MAKEFILE)
  # Written by ext/gemleak/extconf.rb.
  GEM_ROOT = #{ROOT.shellescape}
  BUILD = #{BUILD}

  all:
  \t$(MAKE) -C $(GEM_ROOT) B=$(BUILD) WERROR= $(BUILD)/gemleak

  install: all
  \tmkdir -p $(GEM_ROOT)/libexec
  \tcp $(GEM_ROOT)/$(BUILD)/gemleak $(GEM_ROOT)/libexec/gemleak.new
  \tmv -f $(GEM_ROOT)/libexec/gemleak.new $(GEM_ROOT)/libexec/gemleak

  clean:
  \trm -rf $(GEM_ROOT)/$(BUILD)

  .PHONY: all install clean
MAKEFILE
