#!/usr/bin/env python3
"""in_turn.py ROUNDS A B C: three commands run in turn, A B C A B C ...

Each command is one string, split as sh splits words (its quotes; no
pipes, redirections or variables), found on PATH and run with its output
thrown away; "{round}" in a word is the round's number (1, 2, ...), the
same in the three runs of a round. A run is timed from just before its
start to just after its exit, with the monotonic clock: bench.sh's
sections time with GNU time, whose elapsed seconds have two decimals, and
a suite of 0.14 s then read 0.14 or 0.15 for the same run, a ratio moved
by 0.07 at each round. Prints the fastest run of each command in seconds
(three decimals), then the median over the rounds of C's time over A's
and of C's over B's (each round's own ratios, as farm-bench takes
them); with IN_TURN_DIFF=1, then the medians of C's time less A's and
less B's, in milliseconds (what C adds, where it is a fixed cost)."""
import os
import shlex
import statistics
import subprocess
import sys
import time


def timed(argv):
    start = time.monotonic()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - start


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: in_turn.py ROUNDS A B C")
    rounds = int(sys.argv[1])
    commands = [shlex.split(c) for c in sys.argv[2:]]
    times = [[timed([word.replace("{round}", str(r + 1)) for word in argv]) for argv in commands]
             for r in range(rounds)]
    best = [min(t[i] for t in times) for i in range(3)]
    over_a = statistics.median(t[2] / t[0] for t in times)
    over_b = statistics.median(t[2] / t[1] for t in times)
    line = "%.3f %.3f %.3f %.2f %.2f" % (best[0], best[1], best[2], over_a, over_b)
    if os.environ.get("IN_TURN_DIFF") == "1":
        less_a = statistics.median((t[2] - t[0]) * 1000 for t in times)
        less_b = statistics.median((t[2] - t[1]) * 1000 for t in times)
        line += " %.1f %.1f" % (less_a, less_b)
    print(line)


if __name__ == "__main__":
    main()
