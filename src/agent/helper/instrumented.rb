# frozen_string_literal: true

module GemLeakHelper
  # A build of the project's extensions made for the engine (the Rake
  # library's AddressSanitizer build: GEMLEAK_INSTRUMENTED names its
  # directory, where each lies as `require` names it, "scanner/scanner.so"),
  # loaded in place of the project's own build however the suite asks for
  # it: through the load path ("scanner/scanner"), with require_relative
  # from lib/scanner.rb, or by a path built from __dir__. Putting the
  # directory first on the load path catches the first way only; a gem
  # that loads its extension relative to its own file ran the plain build,
  # and its memory errors went unseen. Here no file of the project is
  # touched: the project's own build stays as it is, whatever ends the run.
  module Instrumented
    DIR = Core::VARIABLES[Protocol::INSTRUMENTED_VARIABLE].to_s
    DLEXT = ".#{RubyConfig::VALUES["DLEXT"]}"

    class << self
      def on?
        !files.empty?
      end

      # The instrumented build: what `require` names each ("scanner/scanner")
      # -> its path.
      def files
        @files ||= if DIR.empty? || !Core::ABSOLUTE_P.call(DIR)
                     {}
                   else
                     Dir.glob("**/*#{DLEXT}", base: DIR).to_h do |relative|
                       [relative.delete_suffix(DLEXT), File.join(DIR, relative)].map(&:freeze)
                     end.freeze
                   end
      rescue StandardError => e
        Core.debug(e)
        @files = {}.freeze
      end

      # Returns: the instrumented build's path for @feature as require
      # takes it, when @feature is one of the project's extensions (an
      # absolute path that ends as one of them does, or the name require
      # gives it); nil otherwise (Ruby files, the build itself, the rest).
      def for(feature)
        path = File.path(feature)
        return nil if path.start_with?("#{DIR}/")

        plain = path.end_with?(DLEXT) ? path.delete_suffix(DLEXT) : path
        return files[plain] unless Core::ABSOLUTE_P.call(path)
        # a Ruby file of that name comes first, as it does for require
        return nil if plain == path && (Core::FILE_P.call(path) || Core::FILE_P.call("#{path}.rb"))

        files.each { |name, instrumented| return instrumented if plain.end_with?("/#{name}") }
        nil
      rescue StandardError => e
        Core.debug(e)
        nil
      end
    end

    # Kernel#require and #require_relative, taking the instrumented build
    # for the project's own. Prepended to Object, as GemLeakHelper::Require
    # (extensions.rb says why), and to Kernel's singleton.
    module Require
      private

      def require(feature)
        instrumented = Instrumented.for(feature)
        instrumented ? super(instrumented) : super
      end

      # require_relative takes its base from the Ruby frame that called it,
      # which a method in its place is: it resolves the path as Ruby does,
      # against the caller's file (code eval'd with a file name, as Bundler
      # reads a gemspec, has that name for its file), and requires that (as
      # Bootsnap does).
      def require_relative(feature)
        location = caller_locations(1, 1)&.first
        base = location&.absolute_path || location&.path
        raise LoadError, "cannot infer basepath" if base.nil? || base.start_with?("(eval")

        path = File.expand_path(File.path(feature), File.dirname(base))
        require(Instrumented.for(path) || path)
      end
    end
  end
end
