#!/bin/sh
# The gem where its binary cannot be built (a macOS or Windows CI job, a
# slim container): no C compiler or pkg-config on PATH.
# tests/integration/gem.c (test_gem_where_it_cannot_be_built) runs this as
# an unprivileged user, with HOME and GEM_HOME private to it:
#
#   tests/gem_without_tools.sh CLONE WORK
#
# CLONE is a fresh clone of gemleak, WORK a directory holding the README's
# blocks (Gemfile.line, Rakefile.snippet). gem install and Bundler with the
# README's Gemfile line must succeed; the gem's command, `bundle exec
# gemleak` and the Rake task must then fail, naming what to install. Each
# step prints a "== " line; one that does not go so stops the script with
# "FAILED: ...".
set -eu
clone=$1
work=$2

step() { printf '== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*"; exit 1; }

[ "$(id -u)" -ne 0 ] || fail "running as root"

step "a PATH with everything this machine has but compilers and pkg-config"
bare="$work/bare-bin"
mkdir -p "$bare" "$work/home-bare"
for program in /usr/bin/* /bin/*; do
    name=$(basename "$program")
    case $name in
        cc | c89 | c99 | gcc | gcc-* | *-gcc | *-gcc-* | clang | clang-* | tcc) continue ;;
        pkg-config | pkgconf | *-pkg-config | *-pkgconf) continue ;;
    esac
    [ -e "$bare/$name" ] || ln -s "$program" "$bare/$name"
done
for absent in cc gcc pkg-config; do
    if (PATH="$bare"; command -v "$absent" >/dev/null 2>&1); then fail "$absent is on the bare PATH"; fi
done

# expect_unbuilt FILE: what a command printed says what to install.
expect_unbuilt() {
    grep -q 'has no gemleak binary: when it was installed, its build was missing a C compiler (cc), pkg-config' "$1" ||
        fail "$1 does not say what the build was missing"
    grep -q 'sudo apt-get install gcc make pkg-config libxml2-dev' "$1" || fail "$1 names no package to install"
    grep -q 'bundle pristine gemleak' "$1" || fail "$1 does not say how to build it again"
}

step "gem install succeeds without them, and the gem's gemleak says what to install"
(cd "$clone" && gem build gemleak.gemspec) >"$work/out" 2>&1 || { cat "$work/out"; fail "gem build"; }
status=0
(cd "$clone" && PATH="$bare" gem install --local gemleak-*.gem) >"$work/out" 2>&1 || status=$?
cat "$work/out"
[ $status -eq 0 ] || fail "gem install without a compiler or pkg-config: status $status"
status=0
PATH="$bare" "$GEM_HOME/bin/gemleak" --version >"$work/out" 2>&1 || status=$?
cat "$work/out"
[ $status -ne 0 ] || fail "the gem's gemleak passed without a binary"
expect_unbuilt "$work/out"

# Bundler with a path of its own sees none of the system's gems, and this
# test has no network: a .gem made from the installed rake stands in for
# rubygems.org in vendor/cache; a HOME of its own keeps Bundler's caches
# (no extension built elsewhere comes from them).
step "Bundler, the README's Gemfile line: bundle install succeeds; bundle exec gemleak and the Rake task say what to install"
project="$work/project"
mkdir -p "$project/vendor/cache" "$work/gem-rake"
(cd "$work/gem-rake" && ruby -rrubygems/package -rfileutils -e '
    spec = Gem::Specification.find_by_name("rake")
    FileUtils.cp_r("#{spec.gem_dir}/.", ".")
    spec.files = Dir["**/*"].select { |path| File.file?(path) }
    Gem::DefaultUserInteraction.use_ui(Gem::SilentUI.new) { Gem::Package.build(spec) }') ||
    fail "making a rake gem for vendor/cache"
cp "$work"/gem-rake/*.gem "$project/vendor/cache/"
cp -R "$clone/fixtures/sample-gem/." "$project/"
{
    printf 'require "rake/testtask"\n'
    printf 'Rake::TestTask.new { |t| t.libs << "test"; t.test_files = FileList["test/count_test.rb"] }\n'
    cat "$work/Rakefile.snippet"
} >"$project/Rakefile"
# the README's line, with a file:// clone for the repository's URL
sed "s|\"https://[^\"]*\"|\"file://$clone\"|" "$work/Gemfile.line" >"$project/Gemfile"
printf 'gem "rake"\n' >>"$project/Gemfile"
in_project() {
    (cd "$project" && env -u GEM_HOME HOME="$work/home-bare" PATH="$bare" "$@")
}
in_project bundle config set --local path vendor/bundle >/dev/null || fail "bundle config"
in_project bundle install >"$work/out" 2>&1 || { cat "$work/out"; fail "bundle install without a compiler or pkg-config"; }
cat "$work/out"
status=0
in_project bundle exec gemleak --version >"$work/out" 2>&1 || status=$?
cat "$work/out"
[ $status -ne 0 ] || fail "bundle exec gemleak passed without a binary"
expect_unbuilt "$work/out"
status=0
in_project bundle exec rake test:valgrind >"$work/out" 2>&1 || status=$?
cat "$work/out"
[ $status -ne 0 ] || fail "bundle exec rake test:valgrind passed without a binary"
grep -q '^GemLeak::Error: gemleak: the gemleak gem in ' "$work/out" || fail "the Rake task's error names no gemleak gem"
expect_unbuilt "$work/out"
step "done"
