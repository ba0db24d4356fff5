#!/usr/bin/env python3
"""Makes the Valgrind XML of a long suite under --per-test, for bench/bench.sh.

    bench/gentests.py SOURCE.xml OUT.xml TESTS markers|plain

SOURCE is a real capture of a --per-test run (fixtures/xml/per_test.xml):
its header, and the leak its leak check reported after a test. OUT holds
TESTS tests, each with gemleak's start and end markers and the leak check
after it reporting that loss record again, grown ("markers"), as a leak in
every test of a suite does; or the same TESTS errors without the markers
("plain"), to read against.
"""
import re
import sys


def main():
    source, out_path, tests, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    text = open(source, encoding="utf-8").read()
    head = text[:text.index("\n<clientmsg>") + 1]
    leak_at = text.index("<error>", text.index("gemleak:end\tLeakyTest#test_leak\t"))
    leak = text[leak_at:text.index("</error>", leak_at) + len("</error>\n")]
    unique = re.compile(r"<unique>0x[0-9a-f]+</unique>")
    marker = "<clientmsg>\n  <tid>1</tid>\n  <text>gemleak:%s\tBenchTest#test_%d\t/bench/bench_test.rb:%d  </text>\n</clientmsg>\n"
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(head)
        for n in range(1, tests + 1):
            if mode == "markers":
                out.write(marker % ("start", n, n))
                out.write(marker % ("end", n, n))
            out.write(unique.sub("<unique>0x%x</unique>" % n, leak, count=1))
        out.write("</valgrindoutput>\n")


if __name__ == "__main__":
    main()
