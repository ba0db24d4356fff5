#!/bin/sh
# gemleak's benchmark: how fast and how small it reads Valgrind XML, as a
# ratio to libxml2's own floor, in one invocation on one machine.
#
#   make bench                 (or: bench/bench.sh [build/gemleak])
#   BENCH_SIZES="150 1024"     file sizes in MiB (default: 150 and 1024)
#   BENCH_RUNS=3               runs of each command; the fastest counts
#   BENCH_RUN=0                skip the gemleak run measurements (3 and 4)
#
# 1. For each size, a file made from fixtures/xml/leak.xml by
#    bench/genxml.py; `xmllint --stream --noout` reads it (libxml2's
#    xmlTextReader and nothing else: the floor), then `gemleak filter`.
#    Printed: both times, the ratio, both peak memory figures.
# 2. Per-process files, as a forked suite leaves them: -j 1 against -j 2.
# 3. gemleak run --jobs 1 against --jobs 2 on a suite of 6 test files.
# 4. gemleak run against gemleak run --per-test (and --per-test=file) on
#    the example gem's own suite, and on 60 short tests, where the leak
#    check after each test weighs most.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
gemleak=$(cd "$(dirname "${1:-$root/build/gemleak}")" && pwd)/$(basename "${1:-build/gemleak}")
sizes=${BENCH_SIZES:-"150 1024"}
runs=${BENCH_RUNS:-3}
work=${BENCH_DIR:-$root/bench/out}
mkdir -p "$work"

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

echo "gemleak benchmark on $(nproc) cores; $(xmllint --version 2>&1 | head -1)"
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
done

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

if [ "${BENCH_RUN:-1}" != 0 ]; then
    echo
    echo "== 3. gemleak run on a suite of 6 test files: --jobs 1 against --jobs 2"
    suite="$work/suite"
    rm -rf "$suite"
    cp -r "$root/fixtures/sample-gem" "$suite"
    (cd "$suite/ext/tally" && ruby extconf.rb >/dev/null && make -s >/dev/null)
    mkdir -p "$suite/lib/tally"
    cp "$suite/ext/tally/tally.so" "$suite/lib/tally/"
    # Six test files that each work the extension for a while, as real tests
    # do; empty ones would measure only Ruby's start and exit under Valgrind.
    i=1
    while [ "$i" -le 6 ]; do
        cat > "$suite/test/work_${i}_test.rb" <<EOF
require_relative "test_helper"
class Work${i}Test < Minitest::Test
  TEXT = ("the quick brown fox jumps over the lazy dog " * 200).freeze
  def test_frequencies
    300.times { assert_equal 200, Tally.frequencies(TEXT)["fox"] }
  end
end
EOF
        i=$((i + 1))
    done
    cd "$suite"
    loader='ARGV.each { |f| require File.expand_path(f) }'
    set -- $(best_of "$gemleak" run --jobs 1 -- ruby -Ilib -Itest -e "$loader" ::: test/work_?_test.rb)
    one=$1
    set -- $(best_of "$gemleak" run --jobs 2 -- ruby -Ilib -Itest -e "$loader" ::: test/work_?_test.rb)
    two=$1
    echo "  --jobs 1: ${one}s   --jobs 2: ${two}s   speed-up: $(ratio "$one" "$two")x"

    echo
    echo "== 4. gemleak run against gemleak run --per-test: a GC and a leak check after each test"
    # 60 tests that each do little: the worst case, where the checks are
    # most of the time. Ten to a file, for --per-test=file.
    i=1
    while [ "$i" -le 6 ]; do
        {
            echo 'require_relative "test_helper"'
            echo "class Short${i}Test < Minitest::Test"
            j=1
            while [ "$j" -le 10 ]; do
                printf '  def test_%s\n    assert_equal 2, Tally.frequencies("a b a")["a"]\n  end\n' "$j"
                j=$((j + 1))
            done
            echo "end"
        } > "$suite/test/short_${i}_test.rb"
        i=$((i + 1))
    done
    # per_test NAME TESTS FILE...: the three modes, one after the other
    per_test() {
        name=$1 tests=$2
        shift 2
        set -- $(best_of "$gemleak" run -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
        plain=$1
        shift 2
        set -- $(best_of "$gemleak" run --per-test=file -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
        file=$1
        shift 2
        set -- $(best_of "$gemleak" run --per-test -- ruby -Ilib -Itest -e "$loader" "$@") "$@"
        each=$1
        echo "  $name, $tests tests: plain ${plain}s" \
            "  --per-test=file ${file}s ($(ratio "$file" "$plain")x)" \
            "  --per-test ${each}s ($(ratio "$each" "$plain")x," \
            "+$(awk -v a="$each" -v b="$plain" -v n="$tests" 'BEGIN { printf "%.2f", (a - b) / n }')s a test)"
    }
    per_test "example gem (count, frequencies)" 3 test/count_test.rb test/frequencies_test.rb
    per_test "60 short tests in 6 files" 60 test/short_?_test.rb
fi
