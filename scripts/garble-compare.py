#!/usr/bin/env python3
"""Two or more builds side by side on `transputation garble-bench`: each build in turn in
every round, the order reversed every other round (so that the machine's slow and quiet
periods fall on all of them alike), then each build's median, minimum, lower quartile and
maximum of `garble_ns_per_and` and of `eval_ns_per_and`. On a shared machine whose speed
drifts by a third between minutes, the minimum and the lower quartile of many rounds
compare builds better than the median.

Usage: scripts/garble-compare.py ROUNDS SCHEME CIRCUIT BINARY [BINARY ...]
`--repeat` of each run from the environment variable REPEAT (default 6); the AES backend
from BACKEND (default: the one the CPU is detected to have). Example:
  scripts/garble-compare.py 5 ideal synthetic /tmp/before /tmp/after
  BACKEND=aes-ni REPEAT=3 scripts/garble-compare.py 15 prf sha256 /tmp/before /tmp/after
"""

import os
import statistics
import sys

from benchlib import garble_bench

if len(sys.argv) < 5:
    sys.exit(__doc__)
ROUNDS, SCHEME, CIRCUIT, BINARIES = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
REPEAT = os.environ.get("REPEAT", "6")
BACKEND = os.environ.get("BACKEND")
garble = {b: [] for b in BINARIES}
evaluate = {b: [] for b in BINARIES}
for r in range(ROUNDS):
    for b in BINARIES if r % 2 == 0 else BINARIES[::-1]:
        v = garble_bench(b, SCHEME, CIRCUIT, REPEAT, BACKEND)
        garble[b].append(v["garble_ns_per_and"])
        evaluate[b].append(v["eval_ns_per_and"])


def spread(v):
    """median (min, lower quartile, max) of `v`."""
    q1 = statistics.quantiles(v, n=4, method="inclusive")[0] if len(v) > 1 else v[0]
    return f"{statistics.median(v):.2f} (min {min(v):.2f}, q1 {q1:.2f}, max {max(v):.2f})"


for b in BINARIES:
    print(f"{b} {SCHEME} {CIRCUIT}: garble median {spread(garble[b])}, "
          f"evaluate median {spread(evaluate[b])}")
