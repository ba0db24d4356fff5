#!/bin/sh
# gemleak's benchmark: how fast and how small it reads Valgrind XML, as a
# ratio to libxml2's own floor, in one invocation on one machine.
#
#   make bench                 (or: bench/bench.sh [build/gemleak])
#   BENCH_SIZES="150 1024"     file sizes in MiB (default: 150 and 1024)
#   BENCH_RUNS=3               runs of each command; the fastest counts
#   BENCH_RUN=0                skip the gemleak run measurements (3 to 8)
#   BENCH_SECTIONS="5 6 7"     only these sections (default: all thirteen)
#   BENCH_TESTS=100000         tests in section 9's files
#   BENCH_RUBY34=PATH          the Ruby 3.3+ of section 8 (default: GEMLEAK_TEST_RUBY34,
#                              else scripts/build-ruby's 3.4.5)
#   BENCH_RUBY34_FP=PATH       section 8's Ruby with frame pointers (scripts/build-ruby fp)
#   BENCH_REFERENCE=PATH       sections 1 and 13 time this gemleak too (a build of an
#                              earlier tree): "no slowdown" is its ratio, in the same invocation
#   BENCH_RUBY_SOURCE=PATH     section 10's Ruby source tarball (default:
#                              ../shared/ruby/ruby3.4_3.4.5.orig.tar.xz)
#   BENCH_VALGRIND=1           section 10 times the Valgrind engine too (once each)
#   BENCH_ROUNDS=9             section 10's rounds of native, the floor and --engine lsan
#                              in turn (its --exact-stacks runs once)
#   BENCH_DIR=PATH             where it works (default: bench/out); the runs' TMPDIR is
#                              its tmp/, emptied as the bench starts (a leaking run's
#                              directory is kept there, for gemleak filter to read again)
#
# 1. For each size, a file made from fixtures/xml/leak.xml by
#    bench/genxml.py; `xmllint --stream --noout` reads it (libxml2's
#    xmlTextReader and nothing else: the floor), then `gemleak filter`.
#    Printed: both times, the ratio, both peak memory figures; with
#    BENCH_REFERENCE, that gemleak's time on the same file, and the ratio
#    of this one's to it (1.00: as fast).
# 2. Per-process files, as a forked suite leaves them: -j 1 against -j 2.
# 3. gemleak run --jobs 1 against --jobs 2 on a suite of 6 test files.
# 4. gemleak run against gemleak run --per-test (and --per-test=file, and
#    --per-test=each, a leak check after every test) on the example gem's
#    own suite, and on 60 short tests in 6 files, one of which leaks: where
#    a leak check after each test weighs most. The test --per-test names
#    is checked.
# 5. The README's first command, gemleak run -- bundle exec rake test,
#    whose test task rebuilds the extension first (as on a CI machine), on
#    a real suite's shape (Bundler, Rake, a build step): against the same
#    tests run directly (gemleak run -- ruby -Ilib -Itest, and the same
#    under bundle exec), by default (the launchers natively, what they
#    start under Valgrind) and with --trace-launchers (the launchers under
#    it too); and the Rake task, bundle exec rake test:valgrind, which
#    builds natively and puts only the test files' Ruby under gemleak.
# 6. gemleak run --jobs 2 against --jobs 1 on files of unequal cost (one
#    heavy, six light), shared by the durations a first run recorded.
# 7. gemleak run against bare valgrind with the same options on the same
#    files: what gemleak adds (its helper in Ruby, reading, reporting).
# 8. The engines on a real-size suite, 120 allocation-heavy minitest
#    tests, clean and with one leaking test, on a stock Ruby 3.3+ and on
#    one with frame pointers: natively, under --engine lsan (fast stacks,
#    exact ones only where something leaked), --engine lsan --exact-stacks
#    (every allocation unwound exactly: the engine before issue 28) and the
#    Valgrind engine, with ratios, and what the run says of the leak (its
#    stack whole, certain); then --engine asan on 3 test files, and
#    --engine lsan --per-test against --engine lsan on the example gem's
#    suite and on section 4's 60 short tests.
# 9. Reading a long --per-test suite: 100k tests, each with its markers
#    and a leak check reporting one loss record again (bench/gentests.py),
#    against the same errors without markers: attributing is linear.
# 10. Real suites (issue 36): psych's (610 tests), json's (133) and
#    strscan's (142), from Ruby's source tarball (BENCH_RUBY_SOURCE,
#    default ../shared/ruby/ruby3.4_3.4.5.orig.tar.xz), their extensions
#    built out of tree against the stock Ruby and the one with frame
#    pointers; and an Async-style reactor, 2,000 fibers resumed in turn
#    (bench/reactor.rb). Each clean, then with one planted leak
#    (bench/plant.rb: a method of the gem prepended, from outside its
#    suite, to call ext/leaky's Leaky.leak; a fiber's Fibers.leak):
#    natively, under LeakSanitizer's runtime preloaded by hand (its fast
#    unwinder, RUBY_FREE_AT_EXIT=1: the floor of this approach), --engine
#    lsan, --engine lsan --exact-stacks, and with BENCH_VALGRIND=1 the
#    Valgrind engine (once, stock Ruby); ratios to native and to the floor,
#    whether the command ran again, the verdict, and the leak as found.
#    Native, the floor and --engine lsan run in turn, BENCH_ROUNDS rounds
#    (in_turn, each run timed to the millisecond), the three runs of a
#    round running the suite's tests in one order (--seed=ROUND): the
#    fastest of each, and the median of the rounds' ratios.
#    This machine's speed moves by a tenth from one run to the next, and
#    more over seconds: three rounds' median moved by as much as the
#    overhead it measures (a suite of 0.2 s). --exact-stacks, 6 to 20 times
#    slower, runs once.
# 11. --growth's cost (issue 39): section 8's 120 tests on the stock Ruby,
#    under --engine lsan with --growth=2 (each test run twice more, a
#    measure before and after each run: two collections and the counts)
#    against --engine lsan on the same suite with each test's body run
#    three times (the same work, without the counting and the measures):
#    what the counting and the measures cost; and against that suite with
#    a full collection before each run again (the measures' collections):
#    what the counting alone costs; then what the run found
#    (nothing: the suite frees what it allocates), and with
#    BENCH_VALGRIND=1 the Valgrind engine on 2 test files, with and
#    without --growth. Then psych's suite (section 10's build): natively,
#    under --engine lsan, with --growth=2, and against the whole suite
#    three times over (Ruby's runner, --repeat-count=3), with and without
#    a full collection before each run of a test again
#    (bench/collect_each.rb).
# 12. The work of section 10's suites, counted (stock Ruby): the
#    instructions each process ran under Callgrind, summed, for the floor
#    and for --engine lsan, the same tests in the same order (--seed=1),
#    each forked child counted from its fork (bench/fork_zero.c), the
#    runner's timeouts a hundred times as long (--timeout-scale=100), and
#    psych's suite less test_ractor.rb, whose Ractors' children do not end
#    under Callgrind (cut short by their timeouts, they made psych's count
#    move from 3,238M to 3,994M between two runs); the floor without
#    its leak check (detect_leaks=0: it stopped for good, traced, in a
#    run of strscan's); each count has a deadline (BENCH_COUNT_DEADLINE,
#    1800 s), and a run past it says so, no count. Time on
#    this machine moves by a fifth from one run to the next; a count does
#    not. What it leaves out: LeakSanitizer cannot stop the world under
#    Valgrind (ptrace), so neither's leak check runs past its start; and
#    time that is not instructions (the kernel's, cache misses). Printed:
#    both counts and their ratio, gemleak's own process, and what ran in
#    its two libraries in Ruby (the allocation front, the client).
# 13. A run's fixed cost (stock Ruby): what gemleak adds to each run and
#    to each Ruby of a run, whatever its suite does (its start and end,
#    the run's directory and the helper's, the watchdog, the helper's load
#    in Ruby, the check's reading): a Ruby that loads an extension
#    (strscan's, section 10's build) and ends, natively, under the floor
#    and under --engine lsan, in turn (BENCH_ROUNDS rounds, in_turn).
#    Printed: the fastest of each and the medians over the rounds of what
#    gemleak adds, in milliseconds; with BENCH_REFERENCE, that gemleak
#    against this one, in turn. On a suite of 0.3 s under the floor
#    (strscan's, section 10) each millisecond is a third of a percent of
#    its ratio to the floor.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
gemleak=$(cd "$(dirname "${1:-$root/build/gemleak}")" && pwd)/$(basename "${1:-build/gemleak}")
sizes=${BENCH_SIZES:-"150 1024"}
runs=${BENCH_RUNS:-3}
rounds=${BENCH_ROUNDS:-9}
work=${BENCH_DIR:-$root/bench/out}
mkdir -p "$work"
# The runs' temporary directory, emptied as the bench starts: a leaking
# run keeps its report directory (TMPDIR/gemleak-run-*), as it should,
# and those of every leaking run of section 10 and the others went to
# /tmp, 1,443 of them after some dozen benches; /tmp then held them, and
# each file a later run made went into that directory. In $work/tmp they
# are there to read until the next bench.
TMPDIR=$work/tmp
export TMPDIR
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"

# best_of CMD...: the fastest of $runs runs, as "seconds peak-KiB".
best_of() {
    best=""
    i=0
    while [ "$i" -lt "$runs" ]; do
        /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>&1 || true
        # time writes "Command exited with non-zero status N" first when it did
        read -r secs kib <<EOF
$(tail -n 1 "$work/time")
EOF
        if [ -z "$best" ] || awk -v a="$secs" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then
            best="$secs $kib"
        fi
        i=$((i + 1))
    done
    echo "$best"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# in_turn A B C: three commands (each one string of words, as sh splits
# them) run in turn, A B C A B C ..., $rounds rounds: a machine whose speed
# drifts over seconds moves the three alike, where three runs of one
# command and then three of the next see different machines. Echoes the
# fastest run of each, then the median over the rounds of C's time over
# A's and of C's over B's (each round's ratios, as farm-bench takes them).
# Timed to the millisecond (bench/in_turn.py): GNU time's two decimals
# moved a 0.14 s suite's ratio by 0.07 a round.
in_turn() {
    python3 "$root/bench/in_turn.py" "$rounds" "$1" "$2" "$3"
}

sections=${BENCH_SECTIONS:-"1 2 3 4 5 6 7 8 9 10 11 12 13"}
[ "${BENCH_RUN:-1}" != 0 ] || sections=$(for n in $sections; do case $n in 1|2|9) echo "$n";; esac; done | xargs)
want() { case " $sections " in *" $1 "*) return 0;; esac; return 1; }

echo "gemleak benchmark on $(nproc) cores; $(xmllint --version 2>&1 | head -1)"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
if want 1; then
echo
echo "== 1. One large file: gemleak filter against xmllint --stream --noout"
printf "%8s %9s %9s %7s %9s %9s %9s\n" "size" "errors" "xmllint" "gemleak" "ratio" "xmllint" "gemleak"
printf "%8s %9s %9s %7s %9s %9s %9s\n" "MiB" "" "s" "s" "" "peak MiB" "peak MiB"
for size in $sizes; do
    file="$work/bench-$size.xml"
    [ -f "$file" ] || python3 "$root/bench/genxml.py" "$root/fixtures/xml/leak.xml" "$file" "$size" >/dev/null
    errors=$(grep -c '^<error>$' "$file")
    cat "$file" > /dev/null   # the page cache, warm for both
    set -- $(best_of xmllint --stream --noout "$file")
    x_secs=$1 x_kib=$2
    set -- $(best_of "$gemleak" filter -O leaky -j 1 --format json -o /dev/null "$file")
    g_secs=$1 g_kib=$2
    printf "%8s %9s %9s %7s %9s %9s %9s\n" "$size" "$errors" "$x_secs" "$g_secs" \
        "$(ratio "$g_secs" "$x_secs")" "$((x_kib / 1024))" "$((g_kib / 1024))"
    if [ -n "${BENCH_REFERENCE:-}" ]; then
        set -- $(best_of "$BENCH_REFERENCE" filter -O leaky -j 1 --format json -o /dev/null "$file")
        echo "         reference gemleak ($BENCH_REFERENCE): ${1}s, peak $(($2 / 1024)) MiB;" \
             "this one takes $(ratio "$g_secs" "$1")x its time"
    fi
done

fi

if want 2; then
echo
echo "== 2. Per-process files (48 of them, 3,000 errors each): -j 1 against -j 2"
parts="$work/parts"
if [ ! -d "$parts" ]; then
    mkdir -p "$parts"
    python3 "$root/bench/genxml.py" "$root/fixtures/xml/leak.xml" "$parts/1.xml" 8 >/dev/null
    n=2
    while [ "$n" -le 48 ]; do cp "$parts/1.xml" "$parts/$n.xml"; n=$((n + 1)); done
fi
set -- $(best_of "$gemleak" filter -O leaky -j 1 --format json -o /dev/null "$parts")
one=$1
set -- $(best_of "$gemleak" filter -O leaky -j 2 --format json -o /dev/null "$parts")
two=$1
echo "  -j 1: ${one}s   -j 2: ${two}s   speed-up: $(ratio "$one" "$two")x"
fi

# The example gem, built, and test files that each work the extension for
# a while, as real tests do (empty ones would measure only Ruby's start and
# exit under Valgrind): work_test NAME ROUNDS writes test/NAME_test.rb.
suite="$work/suite"
make_suite() {
    cd "$root"
    rm -rf "$suite"
    cp -r "$root/fixtures/sample-gem" "$suite"
    (cd "$suite/ext/tally" && ruby extconf.rb >/dev/null && make -s >/dev/null)
    mkdir -p "$suite/lib/tally"
    cp "$suite/ext/tally/tally.so" "$suite/lib/tally/"
}
work_test() {
    class=$(echo "$1" | awk -F_ '{ for (i = 1; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }')
    cat > "$suite/test/${1}_test.rb" <<EOF
require_relative "test_helper"
class ${class}Test < Minitest::Test
  TEXT = ("the quick brown fox jumps over the lazy dog " * 200).freeze
  def test_frequencies
    $2.times { assert_equal 200, Tally.frequencies(TEXT)["fox"] }
  end
end
EOF
}
loader='ARGV.each { |f| require File.expand_path(f) }'
# heavy_tests [LEAK [TIMES [COLLECT]]]: 120 tests in 12 files (sections 8
# and 11), each building a text of 400 words and counting it 50 times
# (Ruby strings, arrays and hashes, and the extension's malloc and free),
# as a gem's suite allocates; with LEAK, the seventh test of the fourth
# file also calls Tally.count, whose copy of the text is never freed; each
# body run TIMES times over (default 1), with COLLECT a full collection
# before each run but the first: what --growth=2 collects before its
# measures.
heavy_tests() {
    rm -f "$suite"/test/*_test.rb
    i=1
    while [ "$i" -le 12 ]; do
        {
            echo 'require_relative "test_helper"'
            echo "class Heavy${i}Test < Minitest::Test"
            echo '  WORDS = %w[the quick brown fox jumps over the lazy dog again and again]'
            j=1
            while [ "$j" -le 10 ]; do
                echo "  def test_$j"
                echo "    ${2:-1}.times do |n|"
                [ -n "${3:-}" ] && echo '      GC.start(full_mark: true, immediate_sweep: true) if n > 0'
                [ -n "${1:-}" ] && [ "$i" = 4 ] && [ "$j" = 7 ] && echo '      assert_equal 3, Tally.count("a b a")'
                echo "      text = Array.new(400) { |k| WORDS[(k * $j) % WORDS.size] + k.to_s }.join(\" \")"
                echo '      f = nil'
                echo '      50.times { f = Tally.frequencies(text) }'
                echo '      assert_equal 400, f.size'
                echo '      assert_equal 400, f.keys.map(&:dup).sort.uniq.size'
                echo '    end'
                echo '  end'
                j=$((j + 1))
            done
            echo 'end'
        } > "$suite/test/heavy_${i}_test.rb"
        i=$((i + 1))
    done
}

# short_tests: 60 tests that each do little, ten to a file in
# test/short_N_test.rb of the suite: the seventh test of the fourth file
# leaks (Tally.count). Sections 4 and 8 time --per-test on them.
short_tests() {
    i=1
    while [ "$i" -le 6 ]; do
        {
            echo 'require_relative "test_helper"'
            echo "class Short${i}Test < Minitest::Test"
            j=1
            while [ "$j" -le 10 ]; do
                if [ "$i" = 4 ] && [ "$j" = 7 ]; then
                    printf '  def test_%s\n    assert_equal 3, Tally.count("a b a")\n  end\n' "$j"
                else
                    printf '  def test_%s\n    assert_equal 2, Tally.frequencies("a b a")["a"]\n  end\n' "$j"
                fi
                j=$((j + 1))
            done
            echo "end"
        } > "$suite/test/short_${i}_test.rb"
        i=$((i + 1))
    done
}
# The suite's extension built with AddressSanitizer into asan-lib/, as the
# Rake task's engine :asan builds it, to go first on the load path.
asan_build() {
    mkdir -p "$suite/asan-build" "$suite/asan-lib"
    cp "$suite"/ext/tally/*.c "$suite/ext/tally/extconf.rb" "$suite/asan-build/"
    (cd "$suite/asan-build" && ruby extconf.rb \
        --with-cflags="$(ruby -rrbconfig -e 'print RbConfig::CONFIG["CFLAGS"]') -fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer" \
        --with-ldflags="$(ruby -rrbconfig -e 'print RbConfig::CONFIG["LDFLAGS"]') -fsanitize=address" >/dev/null &&
        make -s >/dev/null 2>&1 && make -s install sitearchdir="$suite/asan-lib" sitelibdir="$suite/asan-lib" >/dev/null)
}

if want 3 || want 4; then
    echo
    echo "== 3. gemleak run on a suite of 6 test files: --jobs 1 against --jobs 2"
    make_suite
    suite="$work/suite"
    i=1
    while [ "$i" -le 6 ]; do work_test "work_$i" 300; i=$((i + 1)); done
    cd "$suite"
    set -- $(best_of "$gemleak" run --jobs 1 -- ruby -Ilib -Itest -e "$loader" ::: test/work_?_test.rb)
    one=$1
    set -- $(best_of "$gemleak" run --jobs 2 -- ruby -Ilib -Itest -e "$loader" ::: test/work_?_test.rb)
    two=$1
    echo "  --jobs 1: ${one}s   --jobs 2: ${two}s   speed-up: $(ratio "$one" "$two")x"

    echo
    echo "== 4. gemleak run against gemleak run --per-test: which test leaked, and its price"
    # 60 tests that each do little: the worst case, where the checks are
    # most of the time. Ten to a file, for --per-test=file; the seventh
    # test of the fourth file leaks.
    short_tests
    # per_test NAME TESTS FILE...: the four modes, one after the other
    per_test() {
        name=$1 tests=$2
        shift 2
        set -- $(best_of "$gemleak" run -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
        plain=$1
        shift 2
        set -- $(best_of "$gemleak" run --per-test=file -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
        file=$1
        shift 2
        set -- $(best_of "$gemleak" run --per-test=each -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
        each=$1
        shift 2
        set -- $(best_of "$gemleak" run --per-test -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
        found=$1
        shift 2
        named=$("$gemleak" run --per-test -- ruby -Ilib -Itest -e "$loader" "$@" 2>&1 >/dev/null |
            sed -n 's/^first lost in //p' | head -n 1)
        echo "  $name, $tests tests: plain ${plain}s" \
            "  --per-test=file ${file}s ($(ratio "$file" "$plain")x)" \
            "  --per-test=each ${each}s ($(ratio "$each" "$plain")x)" \
            "  --per-test ${found}s ($(ratio "$found" "$plain")x)"
        echo "    --per-test names: ${named:-nothing}"
    }
    per_test "example gem (count, frequencies)" 3 test/count_test.rb test/frequencies_test.rb
    per_test "60 short tests in 6 files" 60 test/short_?_test.rb
fi

if want 5; then
    echo
    echo "== 5. gemleak run -- bundle exec rake test against the same tests run directly"
    make_suite
    i=1
    while [ "$i" -le 6 ]; do work_test "work_$i" 600; i=$((i + 1)); done
    cd "$suite"
    # The example gem's tasks, on the work files; its compile task rebuilds
    # from nothing each time, as a CI machine does.
    # compile.rake builds in tmp/: what make_suite built in ext/ would
    # stand in for its objects
    rm -f ext/*/*.o ext/*/*.so ext/*/Makefile ext/*/mkmf.log
    sed -i 's|^test_files = .*|test_files = FileList["test/work_*_test.rb"]|' Rakefile
    printf '\ntask(:rebuild) { rm_rf "tmp" }\ntask compile: :rebuild\n' >> Rakefile
    printf 'source "https://rubygems.org"\ngem "rake"\ngem "minitest"\ngem "rspec"\n' > Gemfile
    bundle install --local --quiet >/dev/null 2>&1
    export RUBYLIB="$root/rake/lib${RUBYLIB:+:$RUBYLIB}" GEMLEAK="$gemleak"
    # Once each first: each must pass, or the times say nothing.
    bundle exec rake test:valgrind >"$work/rake.out" 2>&1 || { echo "  rake test:valgrind failed:"; tail "$work/rake.out"; }
    "$gemleak" run -- bundle exec rake test >"$work/rake.out" 2>&1 || { echo "  gemleak run -- bundle exec rake test failed:"; tail "$work/rake.out"; }
    "$gemleak" run --trace-launchers -- bundle exec rake test >"$work/rake.out" 2>&1 || { echo "  gemleak run --trace-launchers -- bundle exec rake test failed:"; tail "$work/rake.out"; }
    "$gemleak" run -- ruby -Ilib -Itest -e "$loader" test/work_*_test.rb >"$work/rake.out" 2>&1 || { echo "  gemleak run -- ruby ... failed:"; tail "$work/rake.out"; }
    set -- $(best_of "$gemleak" run -- ruby -Ilib -Itest -e "$loader" test/work_*_test.rb)
    direct=$1
    set -- $(best_of "$gemleak" run -- bundle exec ruby -Ilib -Itest -e "$loader" test/work_*_test.rb)
    bundled=$1
    set -- $(best_of "$gemleak" run -- bundle exec rake test)
    whole=$1
    set -- $(best_of "$gemleak" run --trace-launchers -- bundle exec rake test)
    traced=$1
    set -- $(best_of bundle exec rake test:valgrind)
    task=$1
    echo "  the tests directly, gemleak run -- ruby -Ilib -Itest: ${direct}s; under bundle exec: ${bundled}s"
    echo "  gemleak run -- bundle exec rake test (rebuilding first): ${whole}s   $(ratio "$whole" "$direct")x direct," \
         "$(ratio "$whole" "$bundled")x under bundle exec"
    echo "  with --trace-launchers: ${traced}s   $(ratio "$traced" "$direct")x direct   (the launchers cost" \
         "$(awk -v a="$traced" -v b="$whole" 'BEGIN { printf "%.1f", a - b }') s more under Valgrind)"
    echo "  the Rake task, rake test:valgrind: ${task}s   $(ratio "$task" "$direct")x direct"
    unset RUBYLIB GEMLEAK
fi

if want 6; then
    echo
    echo "== 6. gemleak run --jobs 2 against --jobs 1 on unequal files (one heavy, six light)"
    make_suite
    work_test heavy 1800
    i=1
    while [ "$i" -le 6 ]; do work_test "light_$i" 300; i=$((i + 1)); done
    cd "$suite"
    files="test/heavy_test.rb test/light_1_test.rb test/light_2_test.rb test/light_3_test.rb test/light_4_test.rb test/light_5_test.rb test/light_6_test.rb"
    rm -f .gemleak-durations.json
    # The first run, by file size, records what each file took.
    "$gemleak" run --jobs 2 -- ruby -Ilib -Itest ::: $files >/dev/null 2>&1
    set -- $(best_of "$gemleak" run --jobs 1 -- ruby -Ilib -Itest ::: $files)
    one=$1
    set -- $(best_of "$gemleak" run --jobs 2 -- ruby -Ilib -Itest ::: $files)
    two=$1
    echo "  --jobs 1: ${one}s   --jobs 2: ${two}s   ratio: $(ratio "$two" "$one")x of the serial time"
fi

if want 7; then
    echo
    echo "== 7. gemleak run against bare valgrind with the same options"
    make_suite
    i=1
    while [ "$i" -le 3 ]; do work_test "work_$i" 600; i=$((i + 1)); done
    cd "$suite"
    files="test/work_1_test.rb test/work_2_test.rb test/work_3_test.rb"
    version=$(ruby -e 'print RUBY_VERSION')
    supp="--suppressions=$root/suppressions/ruby.supp"
    for name in "ruby-${version%%.*}" "ruby-${version%.*}" "ruby-$version"; do
        [ -f "$root/suppressions/$name.supp" ] && supp="$supp --suppressions=$root/suppressions/$name.supp"
    done
    xml="$work/bare-xml"
    # gemleak's own options (but --trace-children-skip, which changes
    # nothing here), its suppressions, RUBY_FREE_AT_EXIT as it sets it
    bare="rm -rf '$xml' && mkdir -p '$xml' && RUBY_FREE_AT_EXIT=1 exec valgrind --tool=memcheck \
--xml=yes --xml-file='$xml/%p.xml' --trace-children=yes --num-callers=50 --error-limit=no \
--undef-value-errors=no --leak-check=full --freelist-vol=100000000 --show-leak-kinds=definite $supp \
ruby -Ilib -Itest -e '$loader' $files"
    set -- $(best_of sh -c "$bare")
    plain=$1
    set -- $(best_of "$gemleak" run --jobs 1 -- ruby -Ilib -Itest -e "$loader" ::: $files)
    ours=$1
    echo "  valgrind: ${plain}s   gemleak run: ${ours}s   ratio: $(ratio "$ours" "$plain")x"
    rm -rf "$xml"
fi

if want 8; then
    echo
    echo "== 8. The engines on a real-size suite: 120 allocation-heavy tests, clean and with one leaking test"
    # engines_on RUBY TITLE: the suite natively, under --engine lsan (fast
    # stacks, exact ones only where something leaked), --engine lsan
    # --exact-stacks (every allocation unwound exactly: what --engine lsan
    # did before), and the Valgrind engine; clean, then leaking.
    engines_on() {
        ruby34=$1
        if ! [ -x "$ruby34" ] || ! "$ruby34" -e 'exit(RUBY_VERSION >= "3.3")'; then
            echo "  $2: skipped: no Ruby 3.3 or newer at $ruby34 (BENCH_RUBY34=PATH, BENCH_RUBY34_FP=PATH; scripts/build-ruby [fp] builds one)"
            return
        fi
        saved_path=$PATH
        PATH=$(dirname "$ruby34"):$PATH
        make_suite
        cd "$suite"
        echo "  $2: Ruby $(ruby -e 'print RUBY_VERSION'), RUBY_FREE_AT_EXIT=1"
        for kind in clean leaking; do
            heavy_tests "$([ "$kind" = leaking ] && echo leak)"
            files=$(ls test/heavy_*_test.rb)
            set -- $(best_of env RUBY_FREE_AT_EXIT=1 ruby -Ilib -Itest -e "$loader" $files)
            native=$1
            set -- $(best_of "$gemleak" run --engine lsan -- ruby -Ilib -Itest -e "$loader" $files)
            lsan=$1
            set -- $(best_of "$gemleak" run --engine lsan --exact-stacks -- ruby -Ilib -Itest -e "$loader" $files)
            exact=$1
            set -- $(best_of "$gemleak" run -- ruby -Ilib -Itest -e "$loader" $files)
            valgrind=$1
            echo "    $kind: native ${native}s   --engine lsan ${lsan}s ($(ratio "$lsan" "$native")x)" \
                "  --exact-stacks ${exact}s ($(ratio "$exact" "$native")x)" \
                "  Valgrind ${valgrind}s ($(ratio "$valgrind" "$native")x)" \
                "  lsan/exact-only: $(ratio "$lsan" "$exact")x"
            if [ "$kind" = leaking ]; then
                # what the run says of the leak, and of the stacks it paid
                "$gemleak" run --engine lsan --format json:"$work/leak.json" -- ruby -Ilib -Itest -e "$loader" $files \
                    >/dev/null 2>"$work/leak.err" || true
                sed -n 's/^gemleak: exact stacks: /      exact stacks: /p' "$work/leak.err"
                python3 -c 'import json,sys
f = json.load(open(sys.argv[1]))["findings"]
said = ["%s %s bytes, %s, %d frames through %s" % (x["location"]["fn"] if x["location"] else "?", x["bytes"], "certain" if x["certain"] else "UNCERTAIN", len(x["frames"]), ", ".join(fr["fn"] for fr in x["frames"] if fr.get("in_target"))) for x in f]
print("      finding: %s" % ("; ".join(said) or "none"))' "$work/leak.json"
            fi
        done
        PATH=$saved_path
    }
    engines_on "${BENCH_RUBY34:-${GEMLEAK_TEST_RUBY34:-/root/.cache/gemleak/ruby-3.4.5/bin/ruby}}" "stock Ruby (no frame pointers)"
    engines_on "${BENCH_RUBY34_FP:-/root/.cache/gemleak/ruby-3.4.5-fp/bin/ruby}" "Ruby with frame pointers"

    ruby34=${BENCH_RUBY34:-${GEMLEAK_TEST_RUBY34:-/root/.cache/gemleak/ruby-3.4.5/bin/ruby}}
    if [ -x "$ruby34" ] && "$ruby34" -e 'exit(RUBY_VERSION >= "3.3")'; then
        saved_path=$PATH
        PATH=$(dirname "$ruby34"):$PATH
        # AddressSanitizer on 3 test files, the extension built with it
        make_suite
        i=1
        while [ "$i" -le 3 ]; do work_test "work_$i" 600; i=$((i + 1)); done
        cd "$suite"
        files="test/work_1_test.rb test/work_2_test.rb test/work_3_test.rb"
        set -- $(best_of env RUBY_FREE_AT_EXIT=1 ruby -Ilib -Itest -e "$loader" $files)
        native=$1
        asan_build
        set -- $(best_of "$gemleak" run --engine asan -- ruby -Iasan-lib -Ilib -Itest -e "$loader" $files)
        asan=$1
        echo "  --engine asan, 3 test files (the extension built with AddressSanitizer): native ${native}s   --engine asan ${asan}s ($(ratio "$asan" "$native")x)"
        # --per-test under LeakSanitizer against its plain run (issue 19's
        # target: 1.2x): the example gem's suite, and section 4's 60 short
        # tests in 6 files (the seventh test of the fourth leaks). No check
        # runs between tests: the price is the client library's allocation
        # hooks. The test it names is printed.
        short_tests
        lsan_per_test() {
            name=$1
            shift
            set -- $(best_of "$gemleak" run --engine lsan -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
            plain=$1
            shift 2
            set -- $(best_of "$gemleak" run --engine lsan --per-test -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
            per_test=$1
            shift 2
            named=$("$gemleak" run --engine lsan --per-test -- ruby -Ilib -Itest -e "$loader" "$@" 2>&1 >/dev/null |
                sed -n 's/^allocated in //p' | head -n 1)
            echo "  --engine lsan, $name: plain ${plain}s   --per-test ${per_test}s ($(ratio "$per_test" "$plain")x)"
            echo "    --per-test names: ${named:-nothing}"
        }
        lsan_per_test "example gem (count, frequencies, words)" test/count_test.rb test/frequencies_test.rb test/words_test.rb
        lsan_per_test "60 short tests in 6 files" test/short_?_test.rb
        PATH=$saved_path
    fi
fi

if want 9; then
    echo
    tests=${BENCH_TESTS:-100000}
    echo "== 9. Reading $tests tests' markers against $tests errors without them"
    for mode in markers plain; do
        [ -f "$work/tests-$tests-$mode.xml" ] ||
            python3 "$root/bench/gentests.py" "$root/fixtures/xml/per_test.xml" \
                "$work/tests-$tests-$mode.xml" "$tests" "$mode"
    done
    cat "$work/tests-$tests-markers.xml" "$work/tests-$tests-plain.xml" > /dev/null
    set -- $(best_of "$gemleak" filter -O leaky -j 1 --format json -o /dev/null "$work/tests-$tests-plain.xml")
    plain=$1
    set -- $(best_of "$gemleak" filter -O leaky -j 1 --format json -o /dev/null "$work/tests-$tests-markers.xml")
    marked=$1
    echo "  without markers: ${plain}s   with markers: ${marked}s   ratio: $(ratio "$marked" "$plain")x"
fi
# Sections 10 and 11: the suites of Ruby's own gems, from Ruby's source
# tarball into $real (real_sources: false without the tarball), their
# extensions built out of tree for the Ruby first in PATH into
# $real/build-WHICH, whose path is then $build (real_build WHICH).
tarball=${BENCH_RUBY_SOURCE:-$root/../shared/ruby/ruby3.4_3.4.5.orig.tar.xz}
real="$work/real"
real_sources() {
    [ -f "$tarball" ] || return 1
    if ! [ -d "$real/test/psych" ]; then
        rm -rf "$real" && mkdir -p "$real"
        tar -xJf "$tarball" -C "$real" --strip-components=1 --wildcards \
            'ruby-*/ext/psych' 'ruby-*/ext/json' 'ruby-*/ext/strscan' \
            'ruby-*/test/psych' 'ruby-*/test/json' 'ruby-*/test/strscan' 'ruby-*/tool/lib'
    fi
}
real_build() {
    build="$real/build-$1"
    [ -f "$build/done" ] && return 0
    rm -rf "$build" && mkdir -p "$build/psych" "$build/strscan" "$build/json/parser" \
        "$build/json/generator" "$build/jsonlib/json/ext" "$build/leaky" "$build/fibers"
    (cd "$build/psych" && ruby "$real/ext/psych/extconf.rb" >/dev/null && make -s >/dev/null 2>&1)
    (cd "$build/strscan" && ruby "$real/ext/strscan/extconf.rb" >/dev/null && make -s >/dev/null 2>&1)
    for part in parser generator; do
        (cd "$build/json/$part" && ruby "$real/ext/json/$part/extconf.rb" >/dev/null &&
            make -s >/dev/null 2>&1 && cp "$part.so" "$build/jsonlib/json/ext/")
    done
    cp -r "$root/fixtures/ext/leaky/." "$build/leaky/"
    (cd "$build/leaky" && ruby extconf.rb >/dev/null && make -s >/dev/null 2>&1)
    cp -r "$root/fixtures/ext/fibers/." "$build/fibers/"
    (cd "$build/fibers" && ruby extconf.rb >/dev/null && make -s >/dev/null 2>&1)
    touch "$build/done"
}
psych_suite='Dir["test/psych/**/test_*.rb"].sort.each { |f| require File.expand_path(f) }'
json_suite='Dir["test/json/**/*_test.rb"].sort.each { |f| require File.expand_path(f) }'
strscan_suite='Dir["test/strscan/**/test_*.rb"].sort.each { |f| require File.expand_path(f) }'

if want 10; then
    echo
    echo "== 10. Real suites: psych, json, strscan (Ruby's own source) and 2,000 fibers; clean, then one planted leak"
    liblsan=$(realpath "$(gcc -print-file-name=liblsan.so.0)")
    if ! real_sources; then
        echo "  skipped: no Ruby source tarball at $tarball (BENCH_RUBY_SOURCE=PATH)"
    else
        # plant.rb: one leak planted in each suite from outside it, by a
        # method of the gem prepended to call ext/leaky (a target: it is
        # in the project); reactor.rb: the fibers' suite, an Async-style
        # loop resuming 2,000 fibers in turn.
        cp "$root/bench/plant.rb" "$root/bench/reactor.rb" "$real/"
        real_on() {
            ruby=$1
            label=$2
            which=$3
            if ! [ -x "$ruby" ] || ! "$ruby" -e 'exit(RUBY_VERSION >= "3.3")'; then
                echo "  $label: skipped: no Ruby 3.3 or newer at $ruby (BENCH_RUBY34, BENCH_RUBY34_FP)"
                return
            fi
            saved_path=$PATH
            PATH=$(dirname "$ruby"):$PATH
            real_build "$which"
            cd "$real"
            echo "  $label: Ruby $(ruby -e 'print RUBY_VERSION'); the floor: $liblsan preloaded by hand, fast_unwind_on_malloc=1, RUBY_FREE_AT_EXIT=1"
            for name in psych json strscan reactor; do
                for kind in clean leaking; do
                    # the tests in one order in the three runs of a round
                    # (--seed=ROUND; --seed=1 in the runs outside in_turn):
                    # Ruby's runner shuffles them at each run otherwise, and
                    # the heap a test finds (the pages a collection sweeps)
                    # moves with what ran before it: json's test_gc, a child
                    # that collects at each allocation, found 42 to 73 pages
                    case $name in
                    psych) set -- -I"$build/psych" -Iext/psych/lib -Itool/lib -Itest -e "$psych_suite" -- --seed=1 ;;
                    json) set -- -I"$build/jsonlib" -Iext/json/lib -Itool/lib -e "$json_suite" -- --seed=1 ;;
                    strscan) set -- -I"$build/strscan" -Itool/lib -e "$strscan_suite" -- --seed=1 ;;
                    reactor) set -- -I"$build/fibers" reactor.rb ;;
                    esac
                    plant=""
                    leak_env="REACTOR_LEAK=0"
                    if [ "$kind" = leaking ]; then
                        if [ "$name" = reactor ]; then leak_env="REACTOR_LEAK=1"; else leak_env="PLANT=$name"; plant="-I$build/leaky -r$real/plant.rb"; fi
                    fi
                    # native, the floor and gemleak in turn (in_turn), each
                    # argument quoted as sh would read it
                    args=""
                    for a in "$@"; do
                        [ "$a" = --seed=1 ] && a="--seed={round}"
                        args="$args '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
                    done
                    with="env $leak_env RUBYOPT='$plant'"
                    read -r native floor lsan median_native median_floor <<ROUNDS
$(in_turn "$with RUBY_FREE_AT_EXIT=1 ruby $args" \
    "$with RUBY_FREE_AT_EXIT=1 LD_PRELOAD='$liblsan' LSAN_OPTIONS=fast_unwind_on_malloc=1:exitcode=0 ruby $args" \
    "$with '$gemleak' run --engine lsan -- ruby $args")
ROUNDS
                    exact=$(runs=1 best_of env $leak_env RUBYOPT="$plant" "$gemleak" run --engine lsan --exact-stacks -- ruby "$@")
                    exact=${exact% *}
                    line="    $name, $kind: native ${native}s   floor ${floor}s ($(ratio "$floor" "$native")x)   --engine lsan ${lsan}s ($(ratio "$lsan" "$native")x native, $(ratio "$lsan" "$floor")x the floor; in each round, the median: ${median_native}x native, ${median_floor}x the floor)   --exact-stacks ${exact}s ($(ratio "$exact" "$native")x)"
                    if [ "${BENCH_VALGRIND:-0}" = 1 ] && [ "$which" = stock ]; then
                        start=$(date +%s.%N)
                        env $leak_env RUBYOPT="$plant" "$gemleak" run -- ruby "$@" >/dev/null 2>&1 || true
                        valgrind=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
                        line="$line   Valgrind ${valgrind}s ($(ratio "$valgrind" "$native")x)"
                    fi
                    echo "$line"
                    # what the run says: whether it ran again, its verdict, the leak
                    env $leak_env RUBYOPT="$plant" "$gemleak" run --engine lsan --format json -o "$work/real.json" \
                        --format text -- ruby "$@" >/dev/null 2>"$work/real.err" || true
                    again=$(sed -n 's/^gemleak: exact stacks: /      exact stacks: /p' "$work/real.err")
                    echo "${again:-      ran once}"
                    verdict=$(grep -E '^gemleak: (pass|FAIL|INCOMPLETE)' "$work/real.err" | head -n 1)
                    echo "      ${verdict:-no verdict: see $work/real.err}"
                    if [ "$kind" = leaking ]; then
                        python3 -c 'import json,sys
f = json.load(open(sys.argv[1]))["findings"]
said = ["%s %s bytes, %s, %d frames" % (x["location"]["fn"] if x["location"] else "?", x["bytes"], "certain" if x["certain"] else "UNCERTAIN", len(x["frames"])) for x in f]
print("      finding: %s" % ("; ".join(said) or "none"))' "$work/real.json"
                    fi
                done
            done
            PATH=$saved_path
        }
        real_on "${BENCH_RUBY34:-${GEMLEAK_TEST_RUBY34:-/root/.cache/gemleak/ruby-3.4.5/bin/ruby}}" "stock Ruby (no frame pointers)" stock
        real_on "${BENCH_RUBY34_FP:-/root/.cache/gemleak/ruby-3.4.5-fp/bin/ruby}" "Ruby with frame pointers" fp
    fi
fi
if want 11; then
    echo
    echo "== 11. --growth's cost: the 120 allocation-heavy tests and psych's suite, stock Ruby"
    ruby34=${BENCH_RUBY34:-${GEMLEAK_TEST_RUBY34:-/root/.cache/gemleak/ruby-3.4.5/bin/ruby}}
    if ! [ -x "$ruby34" ] || ! "$ruby34" -e 'exit(RUBY_VERSION >= "3.3")'; then
        echo "  skipped: no Ruby 3.3 or newer at $ruby34 (BENCH_RUBY34=PATH)"
    else
        saved_path=$PATH
        PATH=$(dirname "$ruby34"):$PATH
        make_suite
        cd "$suite"
        heavy_tests
        files=$(ls test/heavy_*_test.rb)
        set -- $(best_of env RUBY_FREE_AT_EXIT=1 ruby -Ilib -Itest -e "$loader" $files)
        native=$1
        set -- $(best_of "$gemleak" run --engine lsan -- ruby -Ilib -Itest -e "$loader" $files)
        lsan=$1
        set -- $(best_of "$gemleak" run --engine lsan --growth=2 -- ruby -Ilib -Itest -e "$loader" $files)
        growth=$1
        "$gemleak" run --engine lsan --growth=2 -- ruby -Ilib -Itest -e "$loader" $files \
            >/dev/null 2>"$work/growth.err" || true
        heavy_tests "" 3
        set -- $(best_of "$gemleak" run --engine lsan -- ruby -Ilib -Itest -e "$loader" $files)
        thrice=$1
        heavy_tests "" 3 collect
        set -- $(best_of "$gemleak" run --engine lsan -- ruby -Ilib -Itest -e "$loader" $files)
        collected=$1
        echo "  Ruby $(ruby -e 'print RUBY_VERSION'): native ${native}s   --engine lsan ${lsan}s ($(ratio "$lsan" "$native")x)" \
             "  --engine lsan --growth=2 ${growth}s ($(ratio "$growth" "$native")x native)"
        echo "  each test's body three times under --engine lsan: ${thrice}s;" \
             "--growth=2 costs $(ratio "$growth" "$thrice")x that (the counting and the measures)"
        echo "  the same with a full collection before each run again: ${collected}s;" \
             "--growth=2 costs $(ratio "$growth" "$collected")x that (the counting)"
        verdict=$(grep -E '^gemleak: (pass|FAIL|INCOMPLETE)' "$work/growth.err" | head -n 1)
        measured=$(sed -n 's/^gemleak: note: --growth: /      /p' "$work/growth.err" | head -n 1)
        echo "      ${verdict:-no verdict: see $work/growth.err}"
        echo "${measured:-      nothing said of what was measured: see $work/growth.err}"
        if [ "${BENCH_VALGRIND:-0}" = 1 ]; then
            heavy_tests
            files="test/heavy_1_test.rb test/heavy_2_test.rb"
            set -- $(best_of "$gemleak" run -- ruby -Ilib -Itest -e "$loader" $files)
            plain=$1
            set -- $(best_of "$gemleak" run --growth=2 -- ruby -Ilib -Itest -e "$loader" $files)
            grown=$1
            echo "  Valgrind, 2 test files: ${plain}s; with --growth=2 ${grown}s ($(ratio "$grown" "$plain")x: a leak check a measure)"
        fi
        # A real suite: psych's, 610 tests (section 10's sources and build)
        if real_sources; then
            real_build stock
            cd "$real"
            set -- -I"$build/psych" -Iext/psych/lib -Itool/lib -Itest
            native=$(best_of env RUBY_FREE_AT_EXIT=1 ruby "$@" -e "$psych_suite")
            lsan=$(best_of "$gemleak" run --engine lsan -- ruby "$@" -e "$psych_suite")
            growth=$(best_of "$gemleak" run --engine lsan --growth=2 -- ruby "$@" -e "$psych_suite")
            # the whole suite three times (Ruby's runner: --repeat-count),
            # then with a full collection before each run again
            thrice=$(best_of "$gemleak" run --engine lsan -- ruby "$@" -e "$psych_suite" -- --repeat-count=3)
            collected=$(best_of "$gemleak" run --engine lsan -- ruby -r"$root/bench/collect_each.rb" "$@" \
                -e "$psych_suite" -- --repeat-count=3)
            native=${native% *} lsan=${lsan% *} growth=${growth% *} thrice=${thrice% *} collected=${collected% *}
            echo "  psych's suite: native ${native}s   --engine lsan ${lsan}s ($(ratio "$lsan" "$native")x)" \
                 "  --engine lsan --growth=2 ${growth}s ($(ratio "$growth" "$native")x native)"
            echo "  the suite three times under --engine lsan: ${thrice}s; --growth=2 costs $(ratio "$growth" "$thrice")x that;" \
                 "with a full collection before each run again ${collected}s: $(ratio "$growth" "$collected")x that (the counting)"
            "$gemleak" run --engine lsan --growth=2 -- ruby "$@" -e "$psych_suite" >/dev/null 2>"$work/growth.err" || true
            verdict=$(grep -E '^gemleak: (pass|FAIL|INCOMPLETE)' "$work/growth.err" | head -n 1)
            measured=$(sed -n 's/^gemleak: note: --growth: /      /p' "$work/growth.err" | head -n 1)
            echo "      ${verdict:-no verdict: see $work/growth.err}"
            echo "${measured:-      nothing said of what was measured: see $work/growth.err}"
        else
            echo "  psych's suite: skipped: no Ruby source tarball at $tarball (BENCH_RUBY_SOURCE=PATH)"
        fi
        PATH=$saved_path
    fi
fi
if want 12; then
    echo
    echo "== 12. Section 10's suites, counted: the instructions each process ran under Callgrind (stock Ruby, --seed=1)"
    ruby34=${BENCH_RUBY34:-${GEMLEAK_TEST_RUBY34:-/root/.cache/gemleak/ruby-3.4.5/bin/ruby}}
    liblsan=$(realpath "$(gcc -print-file-name=liblsan.so.0)")
    if ! command -v valgrind >/dev/null || ! [ -f /usr/include/valgrind/callgrind.h ]; then
        echo "  skipped: no valgrind, or no /usr/include/valgrind/callgrind.h"
    elif ! [ -x "$ruby34" ] || ! "$ruby34" -e 'exit(RUBY_VERSION >= "3.3")'; then
        echo "  skipped: no Ruby 3.3 or newer at $ruby34 (BENCH_RUBY34=PATH)"
    elif ! real_sources; then
        echo "  skipped: no Ruby source tarball at $tarball (BENCH_RUBY_SOURCE=PATH)"
    else
        zero="$work/fork_zero.so"
        gcc -O2 -shared -fPIC -o "$zero" "$root/bench/fork_zero.c"
        saved_path=$PATH
        PATH=$(dirname "$ruby34"):$PATH
        real_build stock
        cd "$real"
        # counted DIR COMMAND...: runs COMMAND, every process under
        # Callgrind, each forked child from zero; prints the sum, then
        # gemleak's own processes' and its libraries' in the others; or
        # "cut" when the command ran out of its deadline (a count of part
        # of a run is no count).
        deadline=${BENCH_COUNT_DEADLINE:-1800}
        counted() {
            dir=$1
            shift
            rm -rf "$dir" && mkdir -p "$dir"
            rc=0
            timeout -k 30 "$deadline" valgrind --tool=callgrind --trace-children=yes \
                --callgrind-out-file="$dir/out.%p" --log-file="$dir/log.%p" "$@" >"$dir/output" 2>&1 || rc=$?
            if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                echo "cut"
                return
            fi
            total=0 own=0 libs=0
            for log in "$dir"/log.*; do
                n=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log")
                [ -n "$n" ] || continue
                total=$((total + n))
                if grep -q "Command: $gemleak " "$log"; then
                    own=$((own + n))
                else
                    out="$dir/out.${log##*.}"
                    n=$(callgrind_annotate --threshold=100 "$out" 2>/dev/null |
                        awk '/gemleak_(alloc|client)\.so\]$/ { gsub(",", "", $1); s += $1 } END { printf "%d", s }')
                    libs=$((libs + n))
                fi
            done
            echo "$total $own $libs"
        }
        for name in psych json strscan; do
            case $name in
            # psych's less test_ractor.rb: under Callgrind its Ractors' children do not end
            psych) set -- -I"$build/psych" -Iext/psych/lib -Itool/lib -Itest \
                -e 'Dir["test/psych/**/test_*.rb"].sort.each { |f| require File.expand_path(f) unless f.end_with?("/test_ractor.rb") }' ;;
            json) set -- -I"$build/jsonlib" -Iext/json/lib -Itool/lib -e "$json_suite" ;;
            strscan) set -- -I"$build/strscan" -Itool/lib -e "$strscan_suite" ;;
            esac
            # the floor without its leak check: under Callgrind the check
            # is not counted (above), and it can stop for good in the
            # traced state
            read -r floor _ _ <<COUNT
$(counted "$work/counted-floor" env RUBY_FREE_AT_EXIT=1 LD_PRELOAD="$liblsan:$zero" \
    LSAN_OPTIONS=fast_unwind_on_malloc=1:exitcode=0:detect_leaks=0 ruby "$@" -- --seed=1 --timeout-scale=100)
COUNT
            read -r lsan own libs <<COUNT
$(LD_PRELOAD="$zero" counted "$work/counted-lsan" "$gemleak" run --engine lsan -- ruby "$@" -- --seed=1 --timeout-scale=100)
COUNT
            if [ "$floor" = cut ] || [ "$lsan" = cut ]; then
                echo "    $name: no count: $( [ "$floor" = cut ] && echo "the floor" || echo "--engine lsan") ran past ${deadline}s" \
                     "under Callgrind (BENCH_COUNT_DEADLINE) and was stopped; see $work/counted-*/output"
                continue
            fi
            echo "    $name: the floor $(awk -v n="$floor" 'BEGIN { printf "%.0f", n / 1e6 }')M instructions" \
                 "  --engine lsan $(awk -v n="$lsan" 'BEGIN { printf "%.0f", n / 1e6 }')M ($(ratio "$lsan" "$floor")x the floor)" \
                 "  of which gemleak's own process $(ratio "$own" "$floor")x, its libraries in Ruby $(ratio "$libs" "$floor")x"
        done
        PATH=$saved_path
    fi
fi
if want 13; then
    echo
    echo "== 13. A run's fixed cost: a Ruby that loads an extension and ends (stock Ruby)"
    ruby34=${BENCH_RUBY34:-${GEMLEAK_TEST_RUBY34:-/root/.cache/gemleak/ruby-3.4.5/bin/ruby}}
    liblsan=$(realpath "$(gcc -print-file-name=liblsan.so.0)")
    if ! [ -x "$ruby34" ] || ! "$ruby34" -e 'exit(RUBY_VERSION >= "3.3")'; then
        echo "  skipped: no Ruby 3.3 or newer at $ruby34 (BENCH_RUBY34=PATH)"
    elif ! real_sources; then
        echo "  skipped: no Ruby source tarball at $tarball (BENCH_RUBY_SOURCE=PATH)"
    else
        saved_path=$PATH
        PATH=$(dirname "$ruby34"):$PATH
        real_build stock
        cd "$real"
        code="require 'strscan'; StringScanner.new('a').scan(/a/)"
        # the Ruby, as in_turn reads a command (one string, sh's words)
        ruby_cmd="ruby -I'$build/strscan' -e \"$code\""
        floor_cmd="env RUBY_FREE_AT_EXIT=1 LD_PRELOAD='$liblsan' LSAN_OPTIONS=fast_unwind_on_malloc=1:exitcode=0 $ruby_cmd"
        read -r t_native t_floor t_lsan _ _ lsan_less_native lsan_less_floor <<ROUNDS
$(IN_TURN_DIFF=1 in_turn "env RUBY_FREE_AT_EXIT=1 $ruby_cmd" "$floor_cmd" "'$gemleak' run --engine lsan -- $ruby_cmd")
ROUNDS
        echo "  a Ruby that loads strscan and ends: native ${t_native}s   floor ${t_floor}s   --engine lsan ${t_lsan}s:" \
             "gemleak adds ${lsan_less_floor} ms to the floor (${lsan_less_native} ms to native), medians of $rounds rounds"
        if [ -n "${BENCH_REFERENCE:-}" ]; then
            read -r _ t_ref _ _ _ _ lsan_less_ref <<ROUNDS
$(IN_TURN_DIFF=1 in_turn "$floor_cmd" "'$BENCH_REFERENCE' run --engine lsan -- $ruby_cmd" "'$gemleak' run --engine lsan -- $ruby_cmd")
ROUNDS
            echo "  the same under the reference gemleak ($BENCH_REFERENCE): ${t_ref}s;" \
                 "this gemleak takes ${lsan_less_ref} ms more than it (a median of $rounds rounds; less is faster)"
        fi
        PATH=$saved_path
    fi
fi
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
