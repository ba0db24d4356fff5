# frozen_string_literal: true

require_relative "lib/gemleak/version"

Gem::Specification.new do |spec|
  spec.name = "gemleak"
  spec.version = GemLeak::VERSION
  spec.summary = "Rake tasks that run a gem's tests under gemleak and fail on real leaks"
  spec.description = <<~TEXT
    GemLeak::TestTask (minitest, test-unit) and GemLeak::RSpec::RakeTask run a
    native extension's test suite under the gemleak binary, which runs Valgrind
    memcheck and keeps only the leaks and memory errors of the extension.
    The gemleak binary itself is built from the same source (make install).
  TEXT
  spec.authors = ["gemleak developers"]
  spec.files = Dir[File.join(__dir__, "lib", "**", "*.rb")].map { |f| f.delete_prefix("#{__dir__}/") }
  spec.require_paths = ["lib"]
  spec.required_ruby_version = ">= 2.7"
  spec.add_runtime_dependency "rake", ">= 12", "< 14"
end
