# frozen_string_literal: true

module GemLeak
  # Kept equal to the gemleak binary's version (VERSION in the Makefile).
  VERSION = "0.1.0"
end
