#!/bin/sh
# The gem route as a new user takes it. tests/check_integration.c
# (test_gem_from_a_fresh_clone) runs this as an unprivileged user, with HOME
# and GEM_HOME private to it and nothing of gemleak in the environment:
#
#   tests/gem_from_clone.sh CLONE WORK
#
# CLONE is a fresh clone of gemleak, WORK a directory holding the README's
# blocks (install.sh, Gemfile.line, Rakefile.snippet). Each step prints a
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

step "a small gem whose Rakefile holds only the README's snippet"
cp -R "$clone/fixtures/sample-gem" "$work/tally"
rm -f "$work/tally/Rakefile" "$work/tally/test/failing_test.rb" "$work/tally/test/stopwords_test.rb"
cp "$work/Rakefile.snippet" "$work/tally/Rakefile"

step "rake test:valgrind fails on the planted leak"
if rake_in_gem test:valgrind; then fail "rake test:valgrind passed with the leak in tally_count"; fi
grep -q '^ \*tally_count (ext/tally/tally\.c:[0-9]*)$' "$work/rake.out" || fail "no tally_count frame in the report"
grep -q '^GemLeak::Error: gemleak: 1 finding ' "$work/rake.out" || fail "no GemLeak::Error naming the finding"

step "and passes without it"
ruby -i -pe 'sub(/return LONG2NUM\(each_word\(copy, NULL, Qnil\)\);/,
                 "long n = each_word(copy, NULL, Qnil); free(copy); return LONG2NUM(n);")' \
    "$work/tally/ext/tally/tally.c"
grep -q 'free(copy)' "$work/tally/ext/tally/tally.c" || fail "could not fix the leak"
rake_in_gem test:valgrind || fail "rake test:valgrind failed without the leak"
grep -q '^gemleak: pass: no findings$' "$work/rake.out" || fail "no pass line"
grep -q 'warning' "$work/rake.out" && fail "a warning"

step "Bundler: the README's Gemfile line, from the clone, builds the binary"
mkdir -p "$work/bundled"
cp -R "$work/tally/." "$work/bundled/"
# the README's line, with this clone for the repository's URL
sed "s|\"https://[^\"]*\"|\"$clone\"|" "$work/Gemfile.line" >"$work/bundled/Gemfile"
printf 'gem "rake"\n' >>"$work/bundled/Gemfile"
(cd "$work/bundled" && bundle install --local --quiet) || fail "bundle install"
# (require, not ruby -r, which comes before bundler/setup)
(cd "$work/bundled" && bundle exec ruby -e 'require "gemleak"; print GemLeak::Configuration.new.executable') \
    >"$work/bundled.exe" || fail "bundle exec ruby: require \"gemleak\""
case "$(cat "$work/bundled.exe")" in
    */bundler/gems/*/libexec/gemleak) ;;
    *) fail "Bundler's gemleak runs $(cat "$work/bundled.exe"), not the binary it built" ;;
esac

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
