# frozen_string_literal: true

require_relative "rake/lib/gemleak/version"

# The gemleak gem carries the whole tool: gem install (or Bundler) builds the
# gemleak binary from these sources with the project's own Makefile
# (ext/gemleak/extconf.rb), and the Ruby library in rake/lib runs it.
Gem::Specification.new do |spec|
  spec.name = "gemleak"
  spec.version = GemLeak::VERSION
  spec.summary = "Find the real memory leaks and memory errors of Ruby native extensions with Valgrind"
  spec.description = <<~TEXT
    gemleak runs a native extension's test suite under Valgrind memcheck and
    keeps only the leaks and memory errors that belong to the extension,
    leaving out the thousands Ruby itself leaves at exit. The gem builds the
    gemleak binary when it is installed, and gives Rake tasks:
    GemLeak::TestTask (minitest, test-unit) and GemLeak::RSpec::RakeTask.
  TEXT
  spec.authors = ["gemleak developers"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 2.7"
  spec.requirements = ["Valgrind 3.10 or newer; to build: a C compiler, make, pkg-config, " \
                       "libxml2, GLib, JSON-GLib and zlib headers (and Valgrind's, " \
                       "valgrind-devel on Fedora, for --per-test)"]

  # What building the binary needs, and what it and the library use at run
  # time; not the tests, benchmarks or fuzzing.
  spec.files = Dir.chdir(__dir__) do
    Dir["Makefile", "LICENSE", "README.md", "doc/guide.md", "gemleak.gemspec", "ext/gemleak/extconf.rb",
        "include/gemleak/**/*.h", "src/*/*.c", "src/*/*_int.h", "scripts/gen-resources",
        "src/agent/*.h", "src/agent/*.rb", "src/agent/helper/*.rb",
        "suppressions/*.supp", "man/gemleak.1", "scripts/install-deps",
        "rake/lib/**/*.rb", "bin/gemleak"].reject { |path| path.end_with?("/installed.rb") }
  end
  spec.require_paths = ["rake/lib"]
  # The gemleak command (bin/gemleak runs the binary the gem built):
  # $GEM_HOME/bin/gemleak, bundle exec gemleak, binstubs.
  spec.bindir = "bin"
  spec.executables = ["gemleak"]
  spec.extensions = ["ext/gemleak/extconf.rb"]
  spec.add_runtime_dependency "rake", ">= 12", "< 14"
end
