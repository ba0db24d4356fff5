# frozen_string_literal: true

# make check-docs: every example of the README, doc/guide.md and
# gemleak(1)'s EXAMPLES runs as written, against the example gem
# (fixtures/sample-gem), with the built gemleak on PATH.
#
#   ruby tests/docs/examples.rb path/to/gemleak [FILE...]
#
# What each fenced block's language means (doc/guide.md, "The tests"):
#   sh                  each command (a line and its \ continuations) ends with status 0 or 1
#   sh script status=N  the block is one script, and ends with status N
#   sh tested-by=FILE   FILE (a test) runs it; here it is only parsed
#   sh no-run="why"     only parsed (sh -n)
#   console             each "$ " line runs as an sh command does
#   yaml                parsed with Psych; each step that runs gemleak runs (status=N:
#                       ends with N); contents-read: every job keeps contents: read;
#                       rakefile=MARKER, baseline=FILE: the checkout's Rakefile has the
#                       marked block, and the baseline is written as the README says;
#                       writes-baseline=FILE: each job runs first without FILE, which it
#                       writes, says it wrote, and uploads when it uploads artifacts, then
#                       again with what it wrote committed; steps-of=MARKER: a list of
#                       steps, run as the marked workflow with its steps of the same
#                       names replaced
#   ruby                parsed (ruby -c); json parsed; text not run
# A block without a language, or with another one, fails: no example
# escapes the test by accident. GEMLEAK_DOCS_ONLY=FILE:LINE runs one block.

require "fileutils"
require "json"
require "open3"
require "shellwords"
require "tmpdir"
require "yaml"
require_relative "../counts"

module DocExamples
  ROOT = File.expand_path("../..", __dir__)
  FILES = %w[README.md doc/guide.md].freeze
  # 1 is the example gem's leak failing the gate: an example that shows a
  # report shows that one.
  COMMAND_STATUSES = [0, 1].freeze
  # The example gem's tests that fail or mix frameworks on purpose, for
  # gemleak's own tests: not part of a suite a user's example runs.
  ON_PURPOSE = %w[test/failing_test.rb spec/failing_spec.rb test/words_unit_test.rb].freeze
  COMMAND_TIMEOUT = 600
  # What the README shows first: the suite as `rake test` runs it, no
  # Rakefile edit (issue 29).
  FIRST_COMMAND = "gemleak run -- bundle exec rake test"
  FIRST_LINES = 40

  Block = Struct.new(:file, :line, :lang, :attrs, :text, :marker, keyword_init: true) do
    def where
      "#{file}:#{line}"
    end
  end

  class Failure < StandardError; end

  module_function

  # "sh script status=1 no-run=\"a b\"" -> ["sh", {"script" => true, "status" => "1", "no-run" => "a b"}]
  def info(string)
    words = Shellwords.split(string.to_s)
    lang = words.shift.to_s
    attrs = words.to_h { |word| word.include?("=") ? word.split("=", 2) : [word, true] }
    [lang, attrs]
  end

  # The fenced blocks of a Markdown file, with the gemleak:NAME marker of
  # the HTML comment just above each, if any.
  def markdown_blocks(file)
    blocks = []
    open = nil
    marker = nil
    File.readlines(File.join(ROOT, file), chomp: true).each_with_index do |line, index|
      if open
        if line.strip == "```"
          blocks << Block.new(file: file, line: open[:line], lang: open[:lang], attrs: open[:attrs],
                              text: open[:lines].map { |l| l.delete_prefix(open[:indent]) }.join("\n") + "\n",
                              marker: open[:marker])
          open = nil
        else
          open[:lines] << line
        end
      elsif (m = line.match(/\A(\s*)```(.*)\z/))
        lang, attrs = info(m[2])
        open = { line: index + 1, indent: m[1], lang: lang, attrs: attrs, lines: [], marker: marker }
        marker = nil
      else
        marker = line[/<!-- gemleak:([\w-]+):/, 1] || (line.strip.empty? ? marker : nil)
      end
    end
    raise Failure, "#{file}: a block opened at line #{open[:line]} never closes" if open

    blocks
  end

  # gemleak(1)'s EXAMPLES: each .nf/.fi block is an sh block.
  def man_blocks(file)
    blocks = []
    section = nil
    open = nil
    File.readlines(File.join(ROOT, file), chomp: true).each_with_index do |line, index|
      section = line.sub(/\A\.SH\s+/, "") if line.start_with?(".SH")
      next unless section == "EXAMPLES"

      if line == ".nf"
        open = { line: index + 1, lines: [] }
      elsif line == ".fi" && open
        text = open[:lines].join("\n").gsub("\\-", "-").gsub("\\e", "\\").gsub("\\(dq", "\"")
                           .gsub("\\&", "") + "\n"
        blocks << Block.new(file: file, line: open[:line], lang: "sh", attrs: {}, text: text)
        open = nil
      elsif open
        open[:lines] << line
      end
    end
    raise Failure, "#{file}: no examples in EXAMPLES" if blocks.empty?

    blocks
  end

  # GitHub's anchor for a heading: lower case, punctuation but - and _ gone,
  # spaces made -.
  def slug(heading)
    heading.downcase.gsub(/[^\p{Word}\- ]/, "").tr(" ", "-")
  end

  # Every relative link of the Markdown files reaches a file, and a heading
  # in it: the README links the guide by section.
  def broken_links
    anchors = Hash.new do |hash, file|
      path = File.join(ROOT, file)
      hash[file] = File.file?(path) ? File.read(path).scan(/^#+ (.+)$/).map { |(h)| slug(h) } : nil
    end
    FILES.flat_map do |file|
      text = File.read(File.join(ROOT, file)).gsub(/^\s*```.*?^\s*```$/m, "")
      text.scan(/\]\(([^)\s]+)\)/).flatten.reject { |link| link.match?(%r{\A[a-z]+://}) }.filter_map do |link|
        target, anchor = link.split("#", 2)
        target = target.empty? ? file : File.join(File.dirname(file), target).delete_prefix("./")
        target = File.expand_path(target, ROOT).delete_prefix("#{ROOT}/")
        next "#{file}: #{link}: no #{target}" unless File.exist?(File.join(ROOT, target))
        next if anchor.nil? || !target.end_with?(".md")
        next if anchors[target].include?(anchor)

        "#{file}: #{link}: no heading ##{anchor} in #{target}"
      end
    end
  end

  # Logical lines: \ continuations joined, blank lines and comments left out.
  def commands(text)
    text.gsub(/\\\n/, " ").lines.map(&:strip).reject { |l| l.empty? || l.start_with?("#") }
  end

  class Runner
    def initialize(gemleak)
      @gemleak = File.expand_path(gemleak)
      @work = Dir.mktmpdir("gemleak-docs-")
      @failures = []
      @blocks = 0
      prepare
    end

    attr_reader :failures

    def finish
      FileUtils.rm_rf(@work)
    end

    # The example gem, built once, with a Gemfile that names this gemleak by
    # path: (so that `bundle exec gemleak` and `bundle exec rake` work as the
    # README's Bundler user has them), and gemleak on PATH.
    def prepare
      @gem = File.join(@work, "gem")
      FileUtils.cp_r(File.join(ROOT, "fixtures/sample-gem"), @gem)
      ON_PURPOSE.each { |path| FileUtils.rm_f(File.join(@gem, path)) }
      File.write(File.join(@gem, "Gemfile"), <<~RUBY)
        source "https://rubygems.org"
        gem "gemleak", path: #{ROOT.inspect}
        gem "rake"
        gem "minitest"
        gem "rspec"
      RUBY
      bin = File.join(@work, "bin")
      FileUtils.mkdir_p([bin, File.join(@work, "tmp"), File.join(@work, "home")])
      File.symlink(@gemleak, File.join(bin, "gemleak"))
      @env = {
        "PATH" => "#{bin}:#{ENV.fetch("PATH")}",
        "RUBYLIB" => File.join(ROOT, "rake/lib"),
        "GEMLEAK" => @gemleak,
        "TMPDIR" => File.join(@work, "tmp"),
        "BUNDLE_GEMFILE" => nil, "BUNDLE_PATH" => nil, "RUBYOPT" => nil, "GEM_HOME" => nil,
        "GITHUB_ACTIONS" => nil, "GITHUB_WORKSPACE" => nil, "CI_NODE_INDEX" => nil,
        "CI_NODE_TOTAL" => nil, "CIRCLE_NODE_INDEX" => nil, "BUILDKITE_PARALLEL_JOB" => nil
      }
      must_run(@gem, "bundle install --local --quiet", "the example gem's bundle")
      must_run(@gem, "rake compile", "the example gem's extensions")
    end

    def must_run(dir, command, what, env = {})
      out, status = Open3.capture2e(@env.merge(env), "sh", "-c", command, chdir: dir)
      raise Failure, "#{what}: #{command} ended with #{status.exitstatus}:\n#{out}" unless status.success?

      out
    end

    # A checkout of the example gem for one example.
    def checkout
      dir = File.join(@work, "ex#{@blocks += 1}")
      FileUtils.cp_r(@gem, dir)
      dir
    end

    # Runs @script in @dir with @shell; returns [status, output].
    def run(dir, script, env = {}, shell: %w[sh -c])
      out = +""
      status = nil
      Open3.popen2e(@env.merge(env), *shell, script, chdir: dir, pgroup: true) do |stdin, io, thread|
        stdin.close
        reader = Thread.new { io.read }
        unless thread.join(COMMAND_TIMEOUT)
          Process.kill("KILL", -thread.pid)
          thread.join
        end
        out = reader.value
        status = thread.value
      end
      [status.exitstatus || (128 + status.termsig.to_i), out]
    end

    def fail!(block, message)
      @failures << "#{block.where}: #{message}"
      warn "FAIL #{block.where} (#{block.lang}): #{message}"
    end

    def check(block)
      case block.lang
      when "sh" then sh(block)
      when "console" then console(block)
      when "yaml" then yaml(block)
      when "ruby" then ruby(block)
      when "json" then JSON.parse(block.text)
      when "text" then nil
      else fail!(block, "a block needs a language this test knows (sh, console, yaml, ruby, json, text)")
      end
      puts "ok   #{block.where} #{block.lang} #{block.attrs.map { |k, v| v == true ? k : "#{k}=#{v}" }.join(" ")}".rstrip
    rescue JSON::ParserError, Psych::SyntaxError => e
      fail!(block, "does not parse: #{e.message}")
    end

    def parses_as_sh(block)
      status, out = run(ROOT, block.text, {}, shell: %w[sh -n -c])
      fail!(block, "sh -n: #{out}") unless status.zero?
    end

    def sh(block)
      if block.attrs["no-run"]
        fail!(block, "no-run needs a reason: no-run=\"why\"") if block.attrs["no-run"] == true
        return parses_as_sh(block)
      end
      if (test = block.attrs["tested-by"])
        path = File.join(ROOT, test)
        return fail!(block, "tested-by #{test}: no such file") unless File.file?(path)
        # the test reads this very block, by its marker
        unless block.marker && File.read(path).include?("\"#{block.marker}\"")
          fail!(block, "tested-by #{test}: it does not read the block's marker (gemleak:#{block.marker})")
        end
        return parses_as_sh(block)
      end
      dir = checkout
      if block.attrs["script"]
        want = block.attrs.fetch("status", "0").to_i
        status, out = run(dir, block.text)
        fail!(block, "the script ended with #{status}, not #{want}:\n#{out}") unless status == want
        return
      end
      DocExamples.commands(block.text).each { |command| command_in(block, dir, command) }
    end

    # A command ends with 0 or 1, or with the block's status=N: a Rake task
    # that fails exits 1 whatever failed, so a workflow says what it expects.
    # Returns: its output.
    def command_in(block, dir, command, env = {}, shell: %w[sh -c])
      statuses = block.attrs["status"] ? [block.attrs["status"].to_i] : COMMAND_STATUSES
      status, out = run(dir, command, env, shell: shell)
      fail!(block, "#{command}\nended with #{status}, not #{statuses.join(" or ")}:\n#{out}") unless statuses.include?(status)
      out
    end

    def console(block)
      dir = checkout
      block.text.lines.grep(/\A\$ /).each { |line| command_in(block, dir, line.delete_prefix("$ ").strip) }
    end

    def ruby(block)
      file = File.join(@work, "block.rb")
      File.write(file, block.text)
      out, status = Open3.capture2e("ruby", "-c", file)
      fail!(block, "ruby -c: #{out}") unless status.success?
    end

    # A workflow: parsed, then each job (each value of its matrix) in a
    # checkout of its own, the steps that run gemleak run as GitHub runs
    # them (bash -e), artifacts passed from the jobs that upload them to
    # those that download them.
    def yaml(block)
      workflow = workflow_of(block)
      jobs = workflow.is_a?(Hash) ? workflow["jobs"] : nil
      return fail!(block, "no jobs") unless jobs.is_a?(Hash) && !jobs.empty?

      if block.attrs["contents-read"]
        jobs.each do |name, job|
          next if job.dig("permissions", "contents") == "read"

          fail!(block, "job #{name}: its permissions lack contents: read (a private repository's checkout needs it)")
        end
      end
      ran = 0
      # artifacts pass from the jobs of this workflow that upload them to
      # those that download them
      artifacts = File.join(@work, "artifacts#{@blocks}")
      jobs.each do |name, job|
        matrix_values(job).each do |matrix|
          ran += run_job(block, job, matrix, "#{name} #{matrix}", artifacts)
        end
      end
      fail!(block, "no step runs gemleak") if ran.zero?
    end

    # The workflow of a yaml block: the block itself, or with steps-of=MARKER
    # (the block a list of steps), the marked workflow with its steps of the
    # same names replaced by these.
    def workflow_of(block)
      steps = YAML.safe_load(block.text)
      return steps unless (marker = block.attrs["steps-of"])

      raise Failure, "#{block.where}: steps-of needs a list of steps" unless steps.is_a?(Array)

      workflow = YAML.safe_load(@marked.fetch(marker) { raise Failure, "#{block.where}: no block marked gemleak:#{marker}" })
      replaced = 0
      workflow.fetch("jobs").each_value do |job|
        job["steps"] = Array(job["steps"]).map do |step|
          mine = steps.find { |s| s["name"] && s["name"] == step["name"] }
          replaced += 1 if mine
          mine || step
        end
      end
      raise Failure, "#{block.where}: no step of gemleak:#{marker} has the name of one of these" if replaced.zero?

      workflow
    end

    # Runs one job (one value of its matrix) in a checkout of its own; with
    # writes-baseline=FILE, first without FILE, then with the FILE that run
    # wrote committed. Returns: how many steps ran gemleak.
    def run_job(block, job, matrix, label, artifacts)
      first = job_in_checkout(block, job, matrix, label, artifacts)
      return first[:ran] unless (baseline = block.attrs["writes-baseline"])

      written = File.join(first[:dir], baseline)
      unless File.file?(written)
        fail!(block, "#{label}: the first run, without #{baseline}, did not write it")
        return first[:ran]
      end
      unless first[:output].include?(baseline) && first[:output].match?(/commit/)
        fail!(block, "#{label}: the first run wrote #{baseline} without saying so (and that it is to commit):\n#{first[:output]}")
      end
      if first[:uploaded] && Dir.glob(File.join(first[:artifacts], "*", baseline)).empty?
        fail!(block, "#{label}: the job uploads artifacts, but not the #{baseline} it wrote on the runner")
      end
      again = job_in_checkout(block, job, matrix, "#{label} (#{baseline} committed)",
                              "#{artifacts}-again") do |dir|
        FileUtils.cp(written, File.join(dir, baseline))
      end
      if again[:output].match?(/wrote|written/) && again[:output].include?(baseline)
        fail!(block, "#{label}: with #{baseline} committed, the job wrote it again:\n#{again[:output]}")
      end
      first[:ran] + again[:ran]
    end

    # Returns: what the steps of @job did in a new checkout (yielded first):
    # its directory, the steps that ran gemleak, their output, whether it
    # uploaded artifacts and where they went.
    def job_in_checkout(block, job, matrix, label, artifacts)
      dir = checkout
      set_up_checkout(block, dir)
      yield dir if block_given?
      env = { "GITHUB_ACTIONS" => "true", "GITHUB_WORKSPACE" => dir }
      done = { dir: dir, ran: 0, output: +"", uploaded: false, artifacts: artifacts }
      Array(job["steps"]).each do |step|
        done[:uploaded] ||= step["uses"].to_s.start_with?("actions/upload-artifact@")
        out = step_in(block, dir, step, matrix, env, artifacts, label)
        next unless out

        done[:ran] += 1
        done[:output] << out
      end
      done
    end

    # The example's Rakefile lines (a marked ruby block) and committed
    # baseline, as the text around the workflow has them.
    def set_up_checkout(block, dir)
      if (marker = block.attrs["rakefile"])
        lines = @marked.fetch(marker) { raise Failure, "#{block.where}: no block marked gemleak:#{marker}" }
        File.open(File.join(dir, "Rakefile"), "a") { |f| f.write("\n", lines) }
      end
      return unless (baseline = block.attrs["baseline"])

      # the whole suite's findings, as a maintainer commits them
      must_run(dir, "gemleak run --write-baseline #{baseline.shellescape} -- ruby -Ilib -Itest ::: " \
                    "test/*_test.rb >/dev/null 2>&1",
               "#{block.where}: the committed baseline")
    end

    def matrix_values(job)
      matrix = job.dig("strategy", "matrix")
      return [{}] unless matrix.is_a?(Hash)

      keys = matrix.keys
      values = keys.map { |key| Array(matrix[key]) }
      values.first.product(*values.drop(1)).map { |combination| keys.zip(combination).to_h }
    end

    def step_in(block, dir, step, matrix, env, artifacts, job)
      case step["uses"].to_s
      when %r{\Aactions/upload-artifact@}
        with = step.fetch("with", {})
        name = expand(with["name"].to_s, matrix)
        target = File.join(artifacts, name)
        FileUtils.mkdir_p(target)
        # one pattern a line; v4 leaves out hidden files unless told
        hidden = with["include-hidden-files"] == true
        expand(with["path"].to_s, matrix).lines.map(&:strip).reject(&:empty?).each do |pattern|
          Dir.glob(pattern, File::FNM_DOTMATCH, base: dir).each do |path|
            next if !hidden && path.split("/").any? { |part| part.start_with?(".") && part != "." }

            FileUtils.cp_r(File.join(dir, path), target)
          end
        end
        return false
      when %r{\Aactions/download-artifact@}
        pattern = step.dig("with", "pattern") || "*"
        Dir.glob(pattern, base: artifacts).each { |name| FileUtils.cp_r(File.join(artifacts, name), dir) }
        return false
      when %r{\Agithub/codeql-action/upload-sarif@}
        sarif = step.dig("with", "sarif_file").to_s
        fail!(block, "#{job}: upload-sarif: no #{sarif}") unless File.file?(File.join(dir, sarif))
        return false
      end
      script = step["run"].to_s
      return false unless script.match?(/\bgemleak\b|(test|spec):valgrind/)

      command_in(block, dir, expand(script, matrix), env, shell: %w[bash -e -c])
    end

    def expand(text, matrix)
      text.gsub(/\$\{\{\s*matrix\.(\w+)\s*\}\}/) do
        matrix.fetch(Regexp.last_match(1)) { raise Failure, "no matrix value #{Regexp.last_match(1)}" }.to_s
      end
    end

    def check_all(blocks, only)
      @marked = blocks.select(&:marker).to_h { |b| [b.marker, b.text] }
      raise Failure, "GEMLEAK_DOCS_ONLY=#{only}: no block starts there" if only && blocks.none? { |b| b.where == only }

      blocks.each do |block|
        next if only && block.where != only

        check(block)
      end
    end
  end

  # What the README asks of a reader, in the order a reader does it
  # (issue 37, item 8): no Rake task named before the section that puts
  # it into the Rakefile, and every report its CI Rakefile writes into the
  # checkout named for .gitignore.
  def readme_order
    readme = File.read(File.join(ROOT, "README.md"))
    section = readme.index(/^## Rake/) or raise Failure, "README.md: no Rake section"
    early = readme.index(/rake\s+(test|spec):valgrind/)
    if early && early < section
      line = readme[0...early].count("\n") + 1
      raise Failure, "README.md:#{line}: names a Rake task before the section that puts it into the Rakefile"
    end
    ci = readme[/<!-- gemleak:rakefile-ci:.*?```ruby\n(.*?)```/m, 1] or raise Failure, "README.md: no rakefile-ci block"
    paragraphs = readme.split(/\n\s*\n/).select { |p| p.include?(".gitignore") }
    ci.scan(/"[a-z]+:([^"\s-][^"\s]*)"/).flatten.each do |file|
      next if paragraphs.any? { |p| p.include?("`#{file}`") }

      raise Failure, "README.md: its CI Rakefile writes #{file} into the checkout, and no word says to add it to .gitignore"
    end
  end

  def main(argv)
    gemleak = argv.shift or abort "usage: ruby tests/docs/examples.rb GEMLEAK"
    blocks = FILES.flat_map { |file| markdown_blocks(file) } + man_blocks("man/gemleak.1")
    # Private repositories need contents: read to check out; the README's
    # CI job is the one people copy.
    first = blocks.find { |b| b.file == "README.md" && b.lang == "yaml" }
    raise Failure, "README.md: no CI example" unless first
    raise Failure, "#{first.where}: the first CI example must be checked for contents: read" unless first.attrs["contents-read"]
    links = broken_links
    raise Failure, "links that lead nowhere:\n#{links.join("\n")}" unless links.empty?
    # A CI job installs what the gem builds with: the README's list.
    needed = File.read(File.join(ROOT, "README.md"))[/^sudo apt-get install (.*?)\s+#/, 1].to_s.split
                 .select { |package| package.end_with?("-dev") || package == "pkg-config" }
    raise Failure, "README.md: no Debian install line" if needed.empty?
    blocks.select { |b| b.lang == "yaml" }.each do |b|
      b.text.scan(/apt-get install -y([^"\n]*(?:\n\s+[a-z][\w.+-]*(?: [\w.+-]+)*)*)/).flatten.each do |line|
        missing = needed - line.split
        raise Failure, "#{b.where}: apt-get install lacks #{missing.join(" ")}" unless missing.empty?
      end
    end
    # The first thing to try, no Rakefile edit, where a new user reads first.
    try = blocks.find do |b|
      b.file == "README.md" && b.lang == "sh" && b.attrs.empty? && b.line <= FIRST_LINES &&
        b.text.include?(FIRST_COMMAND)
    end
    raise Failure, "README.md: no sh block running #{FIRST_COMMAND} in its first #{FIRST_LINES} lines" unless try

    readme_order
    runner = Runner.new(gemleak)
    begin
      runner.check_all(blocks, ENV["GEMLEAK_DOCS_ONLY"])
    ensure
      runner.finish
    end
    checked = ENV["GEMLEAK_DOCS_ONLY"] ? 1 : blocks.size
    GemLeakTestCounts.write("check-docs", checked - runner.failures.size, 0, runner.failures.size)
    if runner.failures.empty?
      puts "docs: #{blocks.size} blocks, every example ran as written"
      return 0
    end
    warn "docs: #{runner.failures.size} failing:\n#{runner.failures.join("\n\n")}"
    1
  rescue Failure => e
    warn "docs: #{e.message}"
    1
  end
end

exit DocExamples.main(ARGV.dup) if $PROGRAM_NAME == __FILE__
