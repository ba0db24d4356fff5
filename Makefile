# gemleak: find the real memory leaks in Ruby native extensions.
#
#   make            build build/gemleak
#   make demo       run gemleak on the bundled example gem
#   make check      unit, helper (Ruby), documentation and integration tests (real Ruby,
#                   real Valgrind)
#   make asan       the unit suite under AddressSanitizer and UBSan
#   make fuzz       reader, classifier and reports under libFuzzer, FUZZ_SECONDS=60
#   make bench      the benchmark in bench/ (see README.md, "Performance")
#   make lint       the stage order and circles (scripts/check-layers), cppcheck and
#                   clang-tidy over every folder of src/
#   make install    PREFIX=/usr/local DESTDIR= RUBYLIBDIR= (binary, man page, data,
#                   Ruby library)
#
# Targets that need packages install them first when run as root
# (scripts/install-deps); elsewhere they name what is missing.

VERSION    := 0.1.0
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
DATADIR    ?= $(PREFIX)/share/gemleak
MANDIR     ?= $(PREFIX)/share/man/man1
# The Ruby library (gemleak.rb, gemleak/rake.rb...): in Ruby's own site
# directory when that lies under PREFIX (/usr/local/lib/site_ruby on Debian,
# where `require "gemleak/rake"` then just works), else under PREFIX, where
# Ruby finds it with RUBYLIB. Packagers set it (Debian: /usr/lib/ruby/vendor_ruby).
RUBY_SITEDIR = $(shell ruby -rrbconfig -e 'print RbConfig::CONFIG["sitedir"]' 2>/dev/null)
RUBYLIBDIR ?= $(if $(filter $(PREFIX)/%,$(RUBY_SITEDIR)),$(RUBY_SITEDIR),$(PREFIX)/lib/ruby/site_ruby)
DESTDIR    ?=

CC         ?= cc
PKG_CONFIG ?= pkg-config
PKGS       := libxml-2.0 glib-2.0 json-glib-1.0 zlib libdw libelf
# libxml2 and json-glib are not linked: gemleak loads them where it reads
# or writes XML (include/gemleak/base/xml.h) or JSON (json.h), and a clean
# run under a sanitizer does neither. json-glib brought GIO and GObject.
PKGS_LINKED := $(filter-out libxml-2.0 json-glib-1.0,$(PKGS))
# GNU libiberty's demangler (Debian: libiberty-dev), the one Valgrind embeds,
# comes as a static library without a .pc file.
IBERTY_LIBS ?= -liberty
CFLAGS     ?= -O2 -g

# pkg-config runs when a recipe first needs the flags, after the dependency
# installer has run, and only once (a fresh machine has no .pc files yet).
PKG_CFLAGS  = $(eval PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS    = $(eval PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS_LINKED)) $(IBERTY_LIBS) -ldl)$(PKG_LIBS)
CHECK_CFLAGS = $(eval CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check))$(CHECK_CFLAGS)
# The tests read and write JSON with json-glib themselves.
CHECK_LIBS  = $(eval CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check json-glib-1.0))$(CHECK_LIBS)

# WERROR= builds with warnings not fatal (the gem's install does).
WERROR   ?= -Werror
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 $(WERROR)
DEFINES  := -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700 \
            -DGEMLEAK_VERSION='"$(VERSION)"' -DGEMLEAK_DATADIR='"$(DATADIR)"'
ALL_CFLAGS = -std=c11 $(DEFINES) -Iinclude -I$(B)/gen $(WARNINGS) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP

SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# A small quarantine keeps the memory bounds of the hostile-input tests
# meaningful under ASan (its default holds 256 MB of freed memory).
# The sanitized build runs several times slower: the bounds that catch a
# hang (a test case's own, seconds where the hang takes hours) stretch with
# it (Check's CK_TIMEOUT_MULTIPLIER).
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:quarantine_size_mb=16 UBSAN_OPTIONS=print_stacktrace=1 \
    CK_TIMEOUT_MULTIPLIER=10
FUZZ_SECONDS ?= 60
# Inputs the fuzzer starts from, and that make asan replays.
FUZZ_SEEDS := fuzz/corpus fuzz/regressions fuzz/options fixtures/xml fixtures/xml/fork fixtures/xml/redcarpet-ruby34 fixtures/edge \
              fixtures/lsan fixtures/asan

# B is the build directory: build/ normally, build-asan/ for sanitizer builds.
B ?= build

# The sources by stage of the data's way (README.md, "Layout"): base/ under
# everything, read/ the inputs, judge/ the rules, run/ the suite under
# Valgrind, report/ the formats and destinations, cli/ the command line.
# Objects mirror them under $(B)/obj/<stage>/, tests under tests/<stage>/.
STAGES    := base read judge run report cli
# The code that runs inside the suite's processes (src/agent/: the Ruby
# helper, the libraries gemleak preloads, the guard), built on its own
# below. gemleak shares two of its files with the programs it puts in the
# run (restore.c, the guard): whether a program is static, the run's
# variables given back (gemleak/agent/program_kind.h, restore_env.h).
AGENT     := src/agent
SHARED_CLIENT_SRCS := $(AGENT)/restore_env.c $(AGENT)/program_kind.c
LIB_SRCS  := $(filter-out src/cli/main.c,$(foreach s,$(STAGES),$(wildcard src/$(s)/*.c))) \
             $(SHARED_CLIENT_SRCS)
LIB_OBJS  := $(LIB_SRCS:src/%.c=$(B)/obj/%.o) $(B)/obj/resources.o
UNIT_SRCS := tests/check_main.c tests/testutil.c $(foreach s,$(STAGES) agent,$(wildcard tests/$(s)/*.c))
# The agent's files its unit tests call, beyond those gemleak shares
# (linked into the unit runner only: gemleak never calls them).
UNIT_AGENT_SRCS := $(AGENT)/hidden_table.c $(AGENT)/got.c
UNIT_OBJS := $(UNIT_SRCS:tests/%.c=$(B)/obj/tests/%.o) $(UNIT_AGENT_SRCS:src/%.c=$(B)/obj/%.o)
# The integration suite: a harness and a file per area in tests/integration/,
# one runner (its main.c).
INTEG_SRCS := $(wildcard tests/integration/*.c)
INTEG_OBJS := $(INTEG_SRCS:tests/%.c=$(B)/obj/tests/%.o) $(B)/obj/tests/testutil.o
# The Ruby helper gemleak loads into every Ruby of a run is one file,
# $(B)/helper/gemleak_helper_body.rb (gemleak carries it as a resource),
# joined from these parts, one concern each, in this order
# (src/agent/helper/protocol.rb says what each holds). A part's first line is
# the magic comment the joined file's first line is. RUBYOPT's -r loads
# $(B)/helper/gemleak_helper.rb, src/agent/helper_loader.rb, which loads the
# body compiled once per Ruby of the run.
HELPER_PARTS := $(addprefix $(AGENT)/helper/,protocol.rb core.rb extensions.rb instrumented.rb durations.rb \
                owners.rb per_test.rb \
                growth.rb exit_exec.rb launch.rb start.rb)
# The parts a Ruby of the run may not need, each a file of its own beside
# the body, $(B)/helper/gemleak_helper_PART.rb, which the helper loads the
# first time it does (GemLeakHelper.later): the checks made while a
# process runs and the tests they follow (a Ruby that runs no test, forks,
# exit!s nor execs, a suite's child, makes none), the search for the test that
# lost (per test under Valgrind), what --growth runs again, what a Ruby
# started outside the engine does (a launcher's), and the test frameworks'
# hooks (a Ruby that loads none, a suite's child, needs none). Every Ruby
# loading them cost it their instructions, their objects in each of its
# collections and their freeing at exit.
HELPER_LATER := $(addprefix $(AGENT)/helper/,checks.rb per_test_again.rb launch_outside.rb growth_run.rb \
                per_test_frameworks.rb)
HELPER_MAGIC := \# frozen_string_literal: true
# What gemleak carries: the helper (its body and the parts loaded later:
# src/run/helper_dir.c writes each), the libraries and the man page.
# Defined after the helper's parts: a prerequisite list is expanded as
# make reads it.
RESOURCES := $(B)/helper/gemleak_helper.rb $(B)/helper/gemleak_helper_body.rb \
             $(HELPER_LATER:$(AGENT)/helper/%=$(B)/helper/gemleak_helper_%) \
             $(B)/client/gemleak_client.so \
             $(B)/client/gemleak_preload.so $(B)/client/gemleak_alloc.so $(B)/client/gemleak_guard \
             $(B)/man/gemleak.1

.PHONY: all demo check check-unit check-helper helper-protocol check-docs check-integration asan fuzz bench lint \
        lint-objects \
        install uninstall clean deps-build deps-check deps-demo deps-fuzz deps-bench deps-lint

all: deps-build
	@$(MAKE) --no-print-directory $(B)/gemleak

deps-build deps-check deps-demo deps-fuzz deps-bench deps-lint:
	@scripts/install-deps $(@:deps-%=%)

$(B)/gemleak: $(B)/obj/cli/main.o $(B)/libgemleak.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(B)/libgemleak.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(B)/obj/%.o: src/%.c | $(B)/gen/helper_sum.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/obj/tests/%.o: tests/%.c | $(B)/gen/helper_sum.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests $(CHECK_CFLAGS) -c -o $@ $<

# The files compiled into gemleak (include/gemleak/base/resources.h), by
# their paths under $(B): the source names them, the assembler reads them.
$(B)/gen/resources.c: scripts/gen-resources Makefile | $(RESOURCES)
	@mkdir -p $(@D)
	scripts/gen-resources $(B) $(RESOURCES) > $@.tmp
	mv $@.tmp $@

# The start of the SHA-256 of the files a run's helper directory holds (the
# resources but the man page), which names their directory in gemleak's
# cache (src/run/helper_dir.c): summed here, once, not by every run. A
# cached file is one of this build's.
HELPER_FILES := $(filter-out %.1,$(RESOURCES))
$(B)/gen/helper_sum.h: $(HELPER_FILES)
	@mkdir -p $(@D)
	printf '#define GL_HELPER_SUM "%s"\n' "$$(cat $^ | sha256sum | cut -c1-16)" > $@.tmp
	@grep -Eq '"[0-9a-f]{16}"' $@.tmp || { echo "$@: no SHA-256 of $^" >&2; exit 1; }
	mv $@.tmp $@

# The run directory's protocol (file names, markers, variables) is spelled
# once, in include/gemleak/base/protocol.h; each "#define GL_PROTO_NAME
# "value"" (or a decimal number) there becomes "NAME = "value"" between
# protocol.rb's "# BEGIN protocol.h" and "# END protocol.h", in the build's
# copy of that part.
PROTOCOL_H := include/gemleak/base/protocol.h
$(B)/helper/protocol.rb: $(AGENT)/helper/protocol.rb $(PROTOCOL_H)
	@mkdir -p $(@D)
	sed -n 's/^#define GL_PROTO_\([A-Z_]*\) \(".*"\|[0-9][0-9]*\)$$/    \1 = \2/p' $(PROTOCOL_H) > $@.lines
	@test -s $@.lines || { echo "no GL_PROTO_ strings in $(PROTOCOL_H)" >&2; exit 1; }
	awk -v lines=$@.lines '/# END protocol.h/ { while ((getline l < lines) > 0) print l; skip = 0 } \
	    !skip { print } /# BEGIN protocol.h/ { skip = 1 }' $< > $@.tmp
	@grep -q 'LOADED_PREFIX = ' $@.tmp || { echo "$<: no # BEGIN/END protocol.h block" >&2; exit 1; }
	rm -f $@.lines && mv $@.tmp $@

# gemleak(1), which `gemleak help` shows where man cannot (src/cli/help.c).
$(B)/man/gemleak.1: man/gemleak.1
	@mkdir -p $(@D)
	cp $< $@

# Each part after the first without its magic comment and the blank line
# after it, and a line that names where it came from.
$(B)/helper/gemleak_helper.rb: $(AGENT)/helper_loader.rb
	@mkdir -p $(@D)
	cp $< $@

$(B)/helper/gemleak_helper_%.rb: $(AGENT)/helper/%.rb
	@mkdir -p $(@D)
	@head -n 1 $< | grep -qx '$(HELPER_MAGIC)' || { echo "$<: its first line is not \"$(HELPER_MAGIC)\"" >&2; exit 1; }
	cp $< $@

$(B)/helper/gemleak_helper_body.rb: $(B)/helper/protocol.rb $(filter-out %/protocol.rb,$(HELPER_PARTS))
	@mkdir -p $(@D)
	awk -v magic='$(HELPER_MAGIC)' 'FNR == 1 && $$0 != magic { \
	        print FILENAME ": its first line is not \"" magic "\"" > "/dev/stderr"; exit 1 } \
	    FNR == 1 && NR > 1 { print ""; print "# " FILENAME; next } \
	    FNR == 2 && NR > 2 && $$0 == "" { next } { print }' $^ > $@.tmp
	mv $@.tmp $@

# The libraries below load into the suite's processes, with flags of their
# own, spelled here: each is rebuilt when this file changes (a tree built
# before -fno-omit-frame-pointer came kept a library LeakSanitizer's fast
# unwinder could not get past).
# The client library (src/agent/): Valgrind's client requests for
# --per-test and the check at a fork, the owners of blocks under a
# sanitizer, and GemLeakHelper::Native, through which the helper calls them
# and the sanitizer runtime (a Ruby extension it requires, native.c: no
# Fiddle). Compiled into gemleak as a resource, with frame pointers (its
# realloc comes before LeakSanitizer's, whose fast unwinder must get past it
# to the allocating call). Its own flags, never make asan's: it runs in
# Ruby, not in gemleak. Without Valgrind's headers (Fedora keeps them in
# valgrind-devel) it makes no client request, says so in its bytes, and
# --per-test under Valgrind says why it cannot run.
CLIENT_CFLAGS := -std=c11 -O2 -fPIC -shared -Wall -Wextra -Wmissing-prototypes \
                 -Wstrict-prototypes -Wformat=2 $(WERROR)
# The hidden-address table (hidden_table.c) is compiled into each library
# that keeps one: nothing of it is exported, so that the client library and
# the allocation front, loaded into one Ruby, never call each other's.
AGENT_HEADERS := $(AGENT)/agent_int.h $(AGENT)/hidden_table_int.h $(AGENT)/got_int.h $(AGENT)/via_int.h
CLIENT_SRCS := $(AGENT)/gemleak_client.c $(AGENT)/owners.c $(AGENT)/native.c $(AGENT)/hidden_table.c \
               $(AGENT)/growth.c $(AGENT)/got.c
$(B)/client/gemleak_client.so: $(CLIENT_SRCS) $(AGENT_HEADERS) $(AGENT)/growth_int.h $(PROTOCOL_H) Makefile
	@mkdir -p $(@D)
	@requests=0; \
	if printf '#include <valgrind/valgrind.h>\n#include <valgrind/memcheck.h>\n' | \
	    $(CC) -E -x c - >/dev/null 2>&1; then requests=1; else \
	    echo "warning: no <valgrind/valgrind.h> (Debian: valgrind; Fedora: valgrind-devel):" \
	         "gemleak is built without --per-test under Valgrind" >&2; \
	fi; \
	echo "$(CC) $(CLIENT_CFLAGS) -fno-omit-frame-pointer -DGEMLEAK_CLIENT_REQUESTS=$$requests -Iinclude -o $@ $(CLIENT_SRCS) -ldl -pthread"; \
	$(CC) $(CLIENT_CFLAGS) -fno-omit-frame-pointer -DGEMLEAK_CLIENT_REQUESTS=$$requests -Iinclude -o $@ $(CLIENT_SRCS) -ldl -pthread

# The library gemleak preloads into every process of a run, so that Ruby
# 3.4's warning about RUBY_FREE_AT_EXIT, which gemleak sets, stays out of
# the suite's output (src/agent/quiet.c). Needs nothing but the C
# library: always built.
PRELOAD_SRCS := $(AGENT)/quiet.c $(AGENT)/restore.c $(AGENT)/proof.c \
                $(SHARED_CLIENT_SRCS)
SHARED_CLIENT_HEADERS := include/gemleak/agent/restore_env.h include/gemleak/agent/program_kind.h
$(B)/client/gemleak_preload.so: $(PRELOAD_SRCS) $(AGENT)/agent_int.h $(PROTOCOL_H) $(SHARED_CLIENT_HEADERS) Makefile
	@mkdir -p $(@D)
	$(CC) $(CLIENT_CFLAGS) -Iinclude -o $@ $(PRELOAD_SRCS) -ldl -pthread

# The guard (src/agent/guard.c), through which that library execs a
# static program under the sanitizers' engines, following what it starts:
# a static program itself, so that LD_PRELOAD is nothing to it. A
# compiler without a static C library (Fedora without glibc-static) gets
# an empty file: gemleak then has no guard, and a run says which static
# program it could not follow.
GUARD_SRCS := $(AGENT)/guard.c $(SHARED_CLIENT_SRCS)
GUARD_CFLAGS := -std=c11 -O2 -static -s -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes \
                -Wformat=2 $(WERROR)
$(B)/client/gemleak_guard: $(GUARD_SRCS) $(PROTOCOL_H) $(SHARED_CLIENT_HEADERS) Makefile
	@mkdir -p $(@D)
	@if printf 'int main(void) { return 0; }\n' | $(CC) -static -x c -o $@.probe - >/dev/null 2>&1; \
	then \
	    rm -f $@.probe; \
	    echo "$(CC) $(GUARD_CFLAGS) -Iinclude -o $@ $(GUARD_SRCS)"; \
	    $(CC) $(GUARD_CFLAGS) -Iinclude -o $@ $(GUARD_SRCS); \
	else \
	    rm -f $@.probe; \
	    echo "warning: $(CC) -static links nothing here (Debian: libc6-dev; Fedora: glibc-static):" \
	         "gemleak is built without its guard, and a static program that starts Ruby makes a" \
	         "sanitizer's run INCOMPLETE" >&2; \
	    : > $@; \
	fi

# The allocation front, preloaded before a sanitizer's runtime into every
# Ruby whose runtime unwinds by frame pointers (src/agent/alloc.c):
# stacks the leak check can judge, on a Ruby with or without frame pointers
# and on a Fiber's stack, and exact stacks at the exact pass's sites. Frame
# pointers of its own, so that the runtime's fast unwinder gets past it to
# the allocating call.
ALLOC_SRCS := $(AGENT)/alloc.c $(AGENT)/alloc_held.c $(AGENT)/alloc_owners.c $(AGENT)/alloc_stack.c \
              $(AGENT)/alloc_via.c $(AGENT)/alloc_sites.c \
              $(AGENT)/exact_sites.c $(AGENT)/exact_blocks.c $(AGENT)/exact_write.c \
              $(AGENT)/hidden_table.c $(AGENT)/got.c
$(B)/client/gemleak_alloc.so: $(ALLOC_SRCS) $(AGENT)/alloc_int.h $(AGENT)/exact_int.h $(AGENT_HEADERS) \
                              $(PROTOCOL_H) Makefile
	@mkdir -p $(@D)
	$(CC) $(CLIENT_CFLAGS) -fno-omit-frame-pointer -Iinclude -o $@ $(ALLOC_SRCS) -ldl -pthread

# Rebuilt when a file it carries changes: the assembler read it.
$(B)/obj/resources.o: $(B)/gen/resources.c $(RESOURCES)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/tests/check_unit: $(UNIT_OBJS) $(B)/libgemleak.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(PKG_LIBS)

$(B)/tests/check_integration: $(INTEG_OBJS) $(B)/libgemleak.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(PKG_LIBS)

# ---- tests -----------------------------------------------------------------

# check installs what is missing first, then builds and runs in a new make,
# which reads pkg-config's flags once the packages are there. Each runner
# adds "NAME PASSED SKIPPED FAILED" to $(CHECK_COUNTS); the last line adds
# them up, a test that could not run counted as skipped, never as passed.
CHECK_COUNTS = $(abspath $(B))/check-counts.txt
check: deps-check
	@mkdir -p $(B) && rm -f $(CHECK_COUNTS)
	@GEMLEAK_TEST_COUNTS=$(CHECK_COUNTS) $(MAKE) --no-print-directory check-unit check-helper \
	    check-docs check-integration
	@awk '{ p += $$(NF-2); s += $$(NF-1); f += $$NF } \
	    END { printf "make check: %d tests: %d passed, %d skipped, %d failed\n", p + s + f, p, s, f }' \
	    $(CHECK_COUNTS)

# The filter's test of libxml2's loading runs the binary (tests/cli/check_filter.c).
check-unit: $(B)/tests/check_unit $(B)/gemleak
	$(B)/tests/check_unit fixtures

# The Ruby helper's and the Rake library's own tests: plain Ruby and
# minitest, no Valgrind.
check-helper:
	$(MAKE) --no-print-directory $(B)/helper/gemleak_helper_body.rb $(B)/helper/gemleak_helper.rb \
	    $(HELPER_LATER:$(AGENT)/helper/%=$(B)/helper/gemleak_helper_%)
	@cmp -s $(AGENT)/helper/protocol.rb $(B)/helper/protocol.rb || { \
	    echo "$(AGENT)/helper/protocol.rb: its protocol block is not $(PROTOCOL_H)'s:" \
	        "make helper-protocol writes it" >&2; exit 1; }
	@test -z "$(filter-out $(HELPER_PARTS) $(HELPER_LATER),$(wildcard $(AGENT)/helper/*.rb))" || { \
	    echo "$(filter-out $(HELPER_PARTS) $(HELPER_LATER),$(wildcard $(AGENT)/helper/*.rb)):" \
	        "not in HELPER_PARTS nor HELPER_LATER (Makefile): the helper leaves it out" >&2; exit 1; }
	@for rb in $(HELPER_LATER:$(AGENT)/helper/%=gemleak_helper_%); do \
	    grep -q "\"$$rb\"" src/run/helper_dir.c || { \
	        echo "src/run/helper_dir.c: $$rb is not in helper_later[]: gemleak would not write it" >&2; exit 1; }; \
	done
	@for rb in $(HELPER_PARTS) $(HELPER_LATER) $(B)/helper/gemleak_helper_body.rb $(AGENT)/helper_loader.rb; do \
	    ! ruby -wc $$rb 2>&1 | grep -v '^Syntax OK$$' || { \
	        echo "$$rb warns under ruby -w: a suite's output would show it" >&2; exit 1; }; \
	done
	GEMLEAK_HELPER=$(abspath $(B)/helper/gemleak_helper_body.rb) ruby tests/agent/helper/run.rb
	ruby tests/rake/test_messages.rb

# Writes protocol.h's names into protocol.rb's "# BEGIN protocol.h" block
# in the source tree, as the build does into its copy: the committed part
# reads as the helper runs, and check-helper fails while they differ.
helper-protocol: $(B)/helper/protocol.rb
	cp $(B)/helper/protocol.rb $(AGENT)/helper/protocol.rb

# Every example of README.md, doc/guide.md and gemleak(1)'s EXAMPLES, run
# as written against the example gem (doc/guide.md, "The tests").
check-docs: $(B)/gemleak
	ruby tests/docs/examples.rb $(B)/gemleak

check-integration: $(B)/gemleak $(B)/tests/check_integration
	$(B)/tests/check_integration fixtures $(B)/gemleak

# The front's tests (tests/agent/check_alloc.c) read the plain build's
# gemleak_alloc.so, and the filter's test of libxml2's loading runs its
# gemleak: a clean checkout's make asan builds them too, rather than
# skipping those tests.
asan: deps-check $(B)/client/gemleak_alloc.so $(B)/gemleak
	@$(MAKE) --no-print-directory B=build-asan CFLAGS="-O1 -g $(SANITIZE)" \
	    LDFLAGS="$(SANITIZE)" build-asan/tests/check_unit build-asan/gemleak build-asan/fuzz_replay
	$(ASAN_ENV) build-asan/tests/check_unit fixtures
	$(ASAN_ENV) build-asan/fuzz_replay $(FUZZ_SEEDS)

# The fuzz target without libFuzzer: the sanitizer build replays inputs.
$(B)/fuzz_replay: $(B)/obj/fuzz/fuzz_reader.o $(B)/obj/fuzz/replay.o $(B)/libgemleak.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(B)/obj/fuzz/%.o: fuzz/%.c | $(B)/gen/helper_sum.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

fuzz: deps-fuzz
	@$(MAKE) --no-print-directory B=build-fuzz CC=clang \
	    CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" \
	    build-fuzz/libgemleak.a build-fuzz/obj/fuzz/fuzz_reader.o
	clang -fsanitize=fuzzer,address,undefined -o build-fuzz/fuzz_reader \
	    build-fuzz/obj/fuzz/fuzz_reader.o build-fuzz/libgemleak.a $(PKG_LIBS)
	@mkdir -p build-fuzz/corpus
	build-fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=1024 \
	    -dict=fuzz/valgrind.dict -artifact_prefix=fuzz/regressions/ build-fuzz/corpus $(FUZZ_SEEDS)

# ---- the rest ----------------------------------------------------------------

demo: deps-demo
	@$(MAKE) --no-print-directory $(B)/gemleak
	@fixtures/sample-gem/demo.sh $(B)/gemleak

bench: deps-bench
	@$(MAKE) --no-print-directory $(B)/gemleak
	bench/bench.sh $(B)/gemleak

# make lint holds the stage order and finds circles between files
# (scripts/check-layers) in the includes and in the calls between the
# objects of each program: gemleak's, and those of src/agent/, whose
# libraries are linked from their sources at once and get objects here.
LAYER_OBJS := $(filter-out $(B)/obj/resources.o,$(LIB_OBJS)) $(B)/obj/cli/main.o
AGENT_PROGRAMS := gemleak_client.so:CLIENT gemleak_preload.so:PRELOAD gemleak_alloc.so:ALLOC gemleak_guard:GUARD
agent_lint_objs = $($(1)_SRCS:src/%.c=$(B)/lint/obj/%.o)
AGENT_LINT_OBJS := $(sort $(foreach p,$(AGENT_PROGRAMS),$(call agent_lint_objs,$(lastword $(subst :, ,$(p))))))

$(B)/lint/obj/agent/%.o: $(AGENT)/%.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -fPIC -DGEMLEAK_CLIENT_REQUESTS=0 -Iinclude -MMD -MP -c -o $@ $<

lint-objects: $(LAYER_OBJS) $(AGENT_LINT_OBJS)

lint: deps-lint
	@$(MAKE) --no-print-directory lint-objects
	scripts/check-layers --self-test
	scripts/check-layers --program gemleak $(LAYER_OBJS) \
	    $(foreach p,$(AGENT_PROGRAMS),--program $(firstword $(subst :, ,$(p))) \
	        $(call agent_lint_objs,$(lastword $(subst :, ,$(p)))))
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	    --std=c11 --library=gtk --library=scripts/cppcheck-glib.cfg -Iinclude \
	    --suppress=missingIncludeSystem src
	clang-tidy --quiet $(foreach s,$(STAGES),src/$(s)/*.c) -- -std=c11 $(DEFINES) -Iinclude -I$(B)/gen $(PKG_CFLAGS)
	clang-tidy --quiet $(AGENT)/*.c -- -std=c11 -Iinclude

# The Ruby library learns where the binary went (gemleak/installed.rb), so
# that it needs neither PATH nor GEMLEAK.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(DATADIR)/suppressions \
	    $(DESTDIR)$(RUBYLIBDIR)/gemleak
	install -m 755 $(B)/gemleak $(DESTDIR)$(BINDIR)/gemleak
	install -m 644 man/gemleak.1 $(DESTDIR)$(MANDIR)/gemleak.1
	install -m 644 suppressions/*.supp $(DESTDIR)$(DATADIR)/suppressions/
	install -m 644 rake/lib/gemleak.rb $(DESTDIR)$(RUBYLIBDIR)/gemleak.rb
	install -m 644 rake/lib/gemleak/*.rb $(DESTDIR)$(RUBYLIBDIR)/gemleak/
	printf '# frozen_string_literal: true\n\n# Written by make install.\nmodule GemLeak\n  INSTALLED_EXECUTABLE = "%s"\nend\n' \
	    '$(BINDIR)/gemleak' > $(DESTDIR)$(RUBYLIBDIR)/gemleak/installed.rb
	@echo "installed the Ruby library in $(DESTDIR)$(RUBYLIBDIR) (RUBYLIB=$(RUBYLIBDIR) if Ruby does not look there)"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gemleak $(DESTDIR)$(MANDIR)/gemleak.1
	rm -rf $(DESTDIR)$(DATADIR)
	rm -rf $(DESTDIR)$(RUBYLIBDIR)/gemleak $(DESTDIR)$(RUBYLIBDIR)/gemleak.rb

clean:
	rm -rf build build-asan build-fuzz

-include $(wildcard $(B)/obj/*/*.d $(B)/obj/*/*/*.d $(B)/lint/obj/*/*.d)
