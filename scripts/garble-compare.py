#!/usr/bin/env python3
"""Two or more builds side by side on `transputation garble-bench`: each build in turn in
every round (so that the machine's slow and quiet periods fall on all of them alike), then
each build's median, minimum and maximum of `garble_ns_per_and` and median of
`eval_ns_per_and`.

Usage: scripts/garble-compare.py ROUNDS SCHEME CIRCUIT BINARY [BINARY ...]
`--repeat` of each run from the environment variable REPEAT (default 6). Example:
  scripts/garble-compare.py 5 ideal synthetic /tmp/before /tmp/after
"""

import os
import statistics
import sys

from benchlib import garble_bench

if len(sys.argv) < 5:
    sys.exit(__doc__)
ROUNDS, SCHEME, CIRCUIT, BINARIES = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
REPEAT = os.environ.get("REPEAT", "6")
garble = {b: [] for b in BINARIES}
evaluate = {b: [] for b in BINARIES}
for _ in range(ROUNDS):
    for b in BINARIES:
        v = garble_bench(b, SCHEME, CIRCUIT, REPEAT)
        garble[b].append(v["garble_ns_per_and"])
        evaluate[b].append(v["eval_ns_per_and"])
for b in BINARIES:
    g, e = garble[b], evaluate[b]
    print(f"{b} {SCHEME} {CIRCUIT}: garble median {statistics.median(g):.2f} "
          f"(min {min(g):.2f}, max {max(g):.2f}), evaluate median {statistics.median(e):.2f}")
