# frozen_string_literal: true

require "rake"
require "rake/testtask"
require "gemleak"

module GemLeak
  # A Rake::TestTask whose Ruby runs under `gemleak run`. Give it the block
  # of your Rake::TestTask:
  #
  #   test_config = ->(t) { t.libs << "test"; t.test_files = FileList["test/**/*_test.rb"] }
  #   Rake::TestTask.new(test: :compile, &test_config)
  #   namespace(:test) { GemLeak::TestTask.new(valgrind: :compile, &test_config) }
  #
  # It takes its settings from GemLeak.configure (wherever it stands in the
  # Rakefile), or from a GemLeak::Configuration given as the first argument.
  class TestTask < Rake::TestTask
    include ConfiguredTask

    # Rake::TestTask runs its command through FileUtils#ruby with one string
    # of shell words; ours goes through gemleak first.
    def ruby(*args, **options, &block)
      session = Session.new(gemleak)
      words = args.length > 1 ? args.shelljoin : args.first.to_s
      command = "#{session.prefix} #{RUBY.shellescape} #{words}"
      sh(command, **options) do |ok, status|
        session.check!(ok, status, "test suite")
        block&.call(ok, status)
      end
    end
  end
end
