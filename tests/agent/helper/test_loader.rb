# frozen_string_literal: true

require_relative "support"

# What RUBYOPT loads (src/agent/helper_loader.rb, gemleak_helper.rb in the
# helper directory): the helper beside it, compiled by the first Ruby of
# the run and kept there, loaded by the others; a cache that cannot be read
# is compiled again; nothing of the loader stays in the suite's Ruby, and
# it says nothing under -w.
class LoaderTest < Minitest::Test
  include HelperTest

  LOADER = File.expand_path("../../../src/agent/helper_loader.rb", __dir__)

  # A helper directory as gemleak writes it.
  def helper_dir
    dir = Dir.mktmpdir("gemleak-helper-loader-")
    @dirs << dir
    FileUtils.cp(LOADER, File.join(dir, "gemleak_helper.rb"))
    FileUtils.cp(HELPER, File.join(dir, "gemleak_helper_body.rb"))
    dir
  end

  def compiled(dir)
    Dir.children(dir).select { |name| name.start_with?("gemleak_helper_body-") }
  end

  def test_the_first_ruby_compiles_the_helper_and_the_others_load_it
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    code = "load_extension\nputs defined?(compiled).inspect, defined?(body).inspect\n"
    first = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}" })
    assert_ran(first)
    assert_equal "", first.err
    assert_equal "nil\nnil\n", first.out.lines.drop(1).join
    assert_equal "#{first.ext}\n", first.file("loaded-#{first.pid}.txt")
    caches = compiled(dir)
    assert_equal 1, caches.size, Dir.children(dir).inspect
    assert_match(/\Agemleak_helper_body-\w+-[\d.]+-.+\.iseq\z/, caches.first)

    written = File.mtime(File.join(dir, caches.first))
    second = run_suite(code, env: { "RUBYOPT" => "-W -r#{loader}" })
    assert_ran(second)
    assert_equal "", second.err
    assert_equal "#{second.ext}\n", second.file("loaded-#{second.pid}.txt")
    assert_equal [caches.first], compiled(dir)
    assert_equal written, File.mtime(File.join(dir, caches.first))
  end

  def test_a_cache_that_cannot_be_read_is_compiled_again
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    assert_ran(run_suite("load_extension\n", env: { "RUBYOPT" => "-r#{loader}" }))
    cache = File.join(dir, compiled(dir).first)
    File.binwrite(cache, "not instructions")
    run = run_suite("load_extension\n", env: { "RUBYOPT" => "-W -r#{loader}" })
    assert_ran(run)
    assert_equal "", run.err
    assert_equal "#{run.ext}\n", run.file("loaded-#{run.pid}.txt")
    refute_equal "not instructions", File.binread(cache)
  end

  # A Ruby just started without RubyGems (assert_separately's children)
  # collected its garbage while it loaded the helper: once on Ruby 3.1,
  # twice on 3.4, some 2 ms. The collector waits until the helper is
  # loaded, and is on again for the suite.
  def test_no_collection_while_the_helper_loads
    dir = helper_dir
    loader = File.join(dir, "gemleak_helper.rb")
    File.write(File.join(dir, "before.rb"), "$collections = GC.count\n")
    File.write(File.join(dir, "after.rb"), "print GC.count - $collections, \" \", GC.enable\n")
    opt = "-r#{File.join(dir, "before.rb")} -r#{loader} -r#{File.join(dir, "after.rb")}"
    2.times do |i| # the first Ruby compiles the helper, the second loads it
      run_dir = File.join(dir, "run#{i}")
      Dir.mkdir(run_dir)
      out, err, status = Open3.capture3({ "RUBYOPT" => opt, "RUBYLIB" => nil, "GEMLEAK_RUN_DIR" => run_dir },
                                        RbConfig.ruby, "--disable=gems", "-e", "0")
      assert status.success?, err
      assert_equal "0 false", out, "collections while the helper loaded, and GC.enable after it"
    end
    assert_equal 1, compiled(dir).size
  end
end
