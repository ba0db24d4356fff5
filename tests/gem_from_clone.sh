#!/bin/sh
# The gem route as a new user takes it. tests/integration/gem.c
# (test_gem_from_a_fresh_clone) runs this as an unprivileged user, with HOME
# and GEM_HOME private to it and nothing of gemleak in the environment:
#
#   tests/gem_from_clone.sh CLONE WORK
#
# CLONE is a fresh clone of gemleak, WORK a directory holding the README's
# blocks (install.sh, Gemfile.line, bundle.sh, Rakefile.snippet). Each step prints a
# "== " line; a step that does not go as the README says stops the script
# with "FAILED: ...".
set -eu
clone=$1
work=$2

step() { printf '== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*"; exit 1; }

# rake ARGS... in the small gem, its output in $work/rake.out (and here).
rake_in_gem() {
    status=0
    (cd "$work/tally" && rake "$@") >"$work/rake.out" 2>&1 || status=$?
    cat "$work/rake.out"
    return $status
}

if command -v gemleak >/dev/null 2>&1; then fail "gemleak is on PATH: $(command -v gemleak)"; fi
[ -z "${GEMLEAK:-}" ] || fail "GEMLEAK is set"
[ "$(id -u)" -ne 0 ] || fail "running as root"

step "the README's commands build and install the gem into GEM_HOME=$GEM_HOME"
(cd "$clone" && sh -eux "$work/install.sh") || fail "the README's gem commands"
gem list --local gemleak | grep -q '^gemleak ' || fail "gem list shows no gemleak"

step "the gem's command: \$GEM_HOME/bin/gemleak --version and filter"
gl="$GEM_HOME/bin/gemleak"
[ -x "$gl" ] || fail "gem install gave no $gl"
"$gl" --version >"$work/cmd.out" 2>&1 || fail "$gl --version: $(cat "$work/cmd.out")"
grep -q '^gemleak [0-9]' "$work/cmd.out" || fail "$gl --version printed $(cat "$work/cmd.out")"
status=0
"$gl" filter --object leaky "$clone/fixtures/xml/leak.xml" >"$work/cmd.out" 2>&1 || status=$?
cat "$work/cmd.out"
[ $status -eq 1 ] || fail "$gl filter: status $status, not 1 (findings)"
grep -q '^gemleak: FAIL: 3 leaks losing 284 bytes$' "$work/cmd.out" || fail "$gl filter: no FAIL line"
status=0
"$gl" filter --no-such-option >/dev/null 2>&1 || status=$?
[ $status -eq 2 ] || fail "$gl with a wrong option: status $status, not 2"

step "the manual, where man does not find it: \$GEM_HOME/bin/gemleak help"
if command -v man >/dev/null 2>&1 && man -w gemleak >/dev/null 2>&1; then
    fail "man finds a gemleak page before make install: $(man -w gemleak)"
fi
"$gl" help run >"$work/cmd.out" 2>&1 || fail "$gl help run: $(cat "$work/cmd.out")"
grep -q '^       --engine=ENGINE$' "$work/cmd.out" || fail "$gl help run shows no --engine"
grep -q '^RUN$' "$work/cmd.out" || fail "$gl help run shows no RUN section"

step "a small gem whose Rakefile holds its test task and the README's snippet"
cp -R "$clone/fixtures/sample-gem" "$work/tally"
rm -f "$work/tally/Rakefile" "$work/tally/test/failing_test.rb" "$work/tally/test/stopwords_test.rb"
{
    printf 'require "rake/testtask"\n'
    printf 'Rake::TestTask.new { |t| t.libs << "test"; t.test_files = FileList["test/**/*_test.rb"] }\n'
    cat "$work/Rakefile.snippet"
} >"$work/tally/Rakefile"

step "rake test:valgrind fails on the planted leak"
if rake_in_gem test:valgrind; then fail "rake test:valgrind passed with the leak in tally_count"; fi
grep -q '^ \*tally_count (ext/tally/tally\.c:[0-9]*)$' "$work/rake.out" || fail "no tally_count frame in the report"
grep -q '^GemLeak::Error: gemleak: 1 finding ' "$work/rake.out" || fail "no GemLeak::Error naming the finding"

step "\$GEM_HOME/bin/gemleak run on the small gem's leaking test"
status=0
(cd "$work/tally" && "$gl" run -- ruby -Ilib -Itest test/count_test.rb) >"$work/cmd.out" 2>&1 || status=$?
cat "$work/cmd.out"
[ $status -eq 1 ] || fail "$gl run: status $status, not 1 (a leak, the tests passed)"
grep -q '^ \*tally_count (ext/tally/tally\.c:[0-9]*)$' "$work/cmd.out" || fail "$gl run: no tally_count frame"

step "and passes without it"
ruby -i -pe 'sub(/return LONG2NUM\(each_word\(copy, NULL, Qnil\)\);/,
                 "long n = each_word(copy, NULL, Qnil); free(copy); return LONG2NUM(n);")' \
    "$work/tally/ext/tally/tally.c"
grep -q 'free(copy)' "$work/tally/ext/tally/tally.c" || fail "could not fix the leak"
rake_in_gem test:valgrind || fail "rake test:valgrind failed without the leak"
grep -q '^gemleak: pass: no findings$' "$work/rake.out" || fail "no pass line"
grep -q 'warning' "$work/rake.out" && fail "a warning"

# Bundler with a path of its own sees none of the system's gems, and this
# test has no network: .gem files made from the installed rake, minitest
# and test-unit (the small gem has tests of both) stand in for
# rubygems.org, in the project's vendor/cache, where bundle install looks
# first.
for name in rake minitest test-unit power_assert; do
    (mkdir -p "$work/gem-$name" && cd "$work/gem-$name" && ruby -rrubygems/package -rfileutils -e '
        spec = Gem::Specification.find_by_name(ARGV[0])
        FileUtils.cp_r("#{spec.gem_dir}/.", ".")
        spec.files = Dir["**/*"].select { |path| File.file?(path) }
        Gem::DefaultUserInteraction.use_ui(Gem::SilentUI.new) { Gem::Package.build(spec) }' "$name") ||
        fail "making a $name gem for vendor/cache"
done
# bundle_in DIR: a project with the small gem, and those gems in vendor/cache
bundle_in() {
    mkdir -p "$1/vendor/cache"
    cp -R "$work/tally/." "$1/"
    cp "$work"/gem-*/*.gem "$1/vendor/cache/"
}

# bundler_stops DIR GEM_HOME-or-empty: Bundler with the README's Gemfile line
# in DIR, into gems this user cannot write: it must stop, saying one of the
# messages the README quotes (its paragraph after the bundler-stops marker:
# each quoted phrase of more than one word), whatever was there before.
bundler_stops() {
    mkdir -p "$1"
    sed "s|\"https://[^\"]*\"|\"file://$clone\"|" "$work/Gemfile.line" >"$1/Gemfile"
    status=0
    if [ -n "$2" ]; then
        (cd "$1" && GEM_HOME="$2" bundle install) >"$work/bundle.out" 2>&1 </dev/null || status=$?
    else
        (cd "$1" && env -u GEM_HOME bundle install) >"$work/bundle.out" 2>&1 </dev/null || status=$?
    fi
    cat "$work/bundle.out"
    [ $status -ne 0 ] || fail "bundle install into gems this user cannot write passed"
    # Bundler wraps its messages at 80 columns: the words, whatever the lines
    ruby -e '
        readme = File.read(ARGV[0])
        paragraph = readme[/<!-- gemleak:bundler-stops:.*?-->\n(.*?)\n\n/m, 1] or abort "no bundler-stops paragraph"
        words = ->(text) { text.split.join(" ") }
        quoted = paragraph.scan(/`([^`]+)`/).flatten.map(&words).select { |q| q.include?(" ") && !q.include?("...") }
        said = words.call(File.read(ARGV[1]))
        exit(quoted.any? { |q| said.include?(q) } ? 0 : 1)' "$clone/README.md" "$work/bundle.out" ||
        fail "Bundler said none of the messages the README quotes"
}

step "Bundler into the system's gems, which this user cannot write: it stops, as the README says"
bundler_stops "$work/system-bundled" ""

# As root (CI), gem.c installed gemleak from this clone with Bundler into
# $work/root-gems, as a trial does into the system's gems: the same commit
# checked out there, and Bundler's git cache, both root's.
step "Bundler into gems where root installed this very commit before: it stops, as the README says"
if [ -d "$work/root-gems/bundler/gems" ]; then
    bundler_stops "$work/root-bundled" "$work/root-gems"
else
    printf '(not run: no gems installed by root beforehand; the test runs as root in CI)\n'
fi

step "Bundler, git: the README's Gemfile line and commands, without GEM_HOME"
bundle_in "$work/bundled"
# the README's line, with a file:// clone for the repository's URL
sed "s|\"https://[^\"]*\"|\"file://$clone\"|" "$work/Gemfile.line" >"$work/bundled/Gemfile"
printf 'gem "rake"\ngem "minitest"\ngem "test-unit"\n' >>"$work/bundled/Gemfile"
(cd "$work/bundled" && env -u GEM_HOME sh -eux "$work/bundle.sh") >"$work/bundle.out" 2>&1 ||
    { cat "$work/bundle.out"; fail "the README's bundle commands"; }
cat "$work/bundle.out"
grep -q '^gemleak [0-9]' "$work/bundle.out" || fail "bundle exec gemleak --version printed no version"
[ -d "$work/bundled/vendor/bundle" ] || fail "Bundler did not install into vendor/bundle"
# (require, not ruby -r, which comes before bundler/setup)
(cd "$work/bundled" && env -u GEM_HOME bundle exec ruby -e 'require "gemleak"; print GemLeak::Configuration.new.executable') \
    >"$work/bundled.exe" || fail "bundle exec ruby: require \"gemleak\""
case "$(cat "$work/bundled.exe")" in
    */vendor/bundle/*/bundler/gems/*/libexec/gemleak) ;;
    *) fail "Bundler's gemleak runs $(cat "$work/bundled.exe"), not the binary it built" ;;
esac
status=0
(cd "$work/bundled" && env -u GEM_HOME bundle exec rake test:valgrind) >"$work/rake.out" 2>&1 || status=$?
cat "$work/rake.out"
[ $status -eq 0 ] || fail "bundle exec rake test:valgrind failed without the leak"
grep -q '^gemleak: pass: no findings$' "$work/rake.out" || fail "no pass line"
grep -q 'warning\|Ignoring' "$work/rake.out" && fail "a warning"

step "Bundler, path: after make in the clone"
(cd "$clone" && make -s all) >/dev/null || fail "make in the clone"
bundle_in "$work/pathed"
printf 'gem "gemleak", path: "%s", group: :development\n' "$clone" >"$work/pathed/Gemfile"
(cd "$work/pathed" && env -u GEM_HOME sh -eux "$work/bundle.sh") >"$work/bundle.out" 2>&1 ||
    { cat "$work/bundle.out"; fail "the README's bundle commands with path:"; }
cat "$work/bundle.out"
grep -q '^gemleak [0-9]' "$work/bundle.out" || fail "bundle exec gemleak --version (path:) printed no version"

step "make install PREFIX=\$HOME/.local"
(cd "$clone" && make -s install PREFIX="$HOME/.local") || fail "make install"
"$HOME/.local/bin/gemleak" --version || fail "the installed binary"
unset GEM_HOME
export RUBYLIB="$HOME/.local/lib/ruby/site_ruby"
[ "$(ruby -rgemleak -e 'print GemLeak::Configuration.new.executable')" = "$HOME/.local/bin/gemleak" ] ||
    fail "the installed Ruby library does not run the installed binary"
rake_in_gem test:valgrind || fail "rake test:valgrind with make install's library and binary"
grep -q '^gemleak: pass: no findings$' "$work/rake.out" || fail "no pass line"
grep -q 'warning' "$work/rake.out" && fail "a warning"
step "done"
