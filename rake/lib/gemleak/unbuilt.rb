# frozen_string_literal: true

module GemLeak
  # A gem installed where the gemleak binary could not be built (no C
  # compiler, pkg-config or headers: a macOS or Windows CI job, a slim
  # container). The install goes on, so that the Gemfile line never breaks
  # `bundle install` or `gem install` there, and a file in the gem says
  # why; the gem's command (bin/gemleak) and the Rake tasks say it, and
  # fail, when they are used. ext/gemleak/extconf.rb writes it, and its
  # Makefile when the build itself fails; a build that succeeds removes it.
  module Unbuilt
    # Where, relative to the gem's root.
    FILE = "libexec/gemleak-not-built.txt"

    # What building the binary needs.
    DEBIAN = "gcc make pkg-config libxml2-dev libglib2.0-dev libjson-glib-dev zlib1g-dev libdw-dev libiberty-dev"
    FEDORA = "gcc make pkgconf-pkg-config libxml2-devel glib2-devel json-glib-devel zlib-devel elfutils-devel binutils-devel"

    # The packages to install, a line each, indented.
    INSTALL = <<~TEXT
      Debian, Ubuntu: sudo apt-get install #{DEBIAN}
      Fedora:         sudo dnf install #{FEDORA}
    TEXT

    class << self
      def path(root)
        File.join(root, FILE)
      end

      # Records, for the gem in @root, @why it has no binary: "its build
      # was missing pkg-config".
      def record(root, why)
        File.write(path(root), "#{why}\n")
      end

      # Returns: what a user of the gem in @root is told, several lines,
      # when its install recorded why it has no binary; nil otherwise.
      def message(root)
        why = File.read(path(root)).strip
        <<~MESSAGE.chomp
          gemleak: the gemleak gem in #{root} has no gemleak binary: when it was installed, #{why}.
          Install what it builds with (and valgrind, which it runs):
          #{INSTALL.gsub(/^/, "  ").chomp}
          then build it again: bundle pristine gemleak (Bundler), or gem pristine gemleak.
        MESSAGE
      rescue SystemCallError
        nil
      end
    end
  end
end
