#!/usr/bin/env python3
"""Makes a large Valgrind XML file from a small real one, for bench/bench.sh.

    bench/genxml.py SOURCE.xml OUT.xml MEGABYTES

The errors of SOURCE (real stacks: most never enter the extension, a few
do) are repeated, each copy with a fresh <unique>, until OUT holds at
least MEGABYTES; the header and the trailer are SOURCE's own. The result
is what a long suite under Valgrind writes: one document, tens of
thousands of errors.
"""
import re
import sys


def main():
    source, out_path, megabytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    text = open(source, encoding="utf-8").read()
    first = text.index("\n<error>")
    last = text.rindex("</error>\n") + len("</error>\n")
    head, body, tail = text[:first + 1], text[first + 1:last], text[last:]
    errors = re.findall(r"<error>.*?</error>\n", body, re.S)
    unique = re.compile(r"<unique>0x[0-9a-f]+</unique>")
    target = megabytes * 1024 * 1024
    written = 0
    counter = 0
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(head)
        written += len(head)
        while written < target:
            chunk = []
            for error in errors:
                counter += 1
                chunk.append(unique.sub("<unique>0x%x</unique>" % counter, error, count=1))
            block = "\n".join(chunk) + "\n"
            out.write(block)
            written += len(block)
        out.write(tail)
    print("%s: %d errors, %d MiB" % (out_path, counter, (written + len(tail)) // (1024 * 1024)))


if __name__ == "__main__":
    main()
