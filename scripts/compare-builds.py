#!/usr/bin/env python3
"""Two or more builds side by side: `transputation run` of one circuit over loopback `tcp`,
every configuration in turn in each round (so that the machine's slow and quiet periods
fall on all of them alike), then each configuration's median and minimum of
`total_ms + handshake_ms` (the protocol), the evaluator's median `ot_ms`, and the median
`wall_ms` (the whole wait: `run` started until its report).

Usage: scripts/compare-builds.py ROUNDS CIRCUIT BINARY:MODE [BINARY:MODE ...]
CIRCUIT is aes128, sha256 or mincut (the MinCut-size synthetic circuit); MODE is i
(`--insecure`) or p (protected, the default). Example, a build before and after a change:
  scripts/compare-builds.py 15 mincut /tmp/before:i /tmp/after:i /tmp/before:p /tmp/after:p
"""
import statistics as st, sys

from benchlib import run

ROUNDS, CIRCUIT, CONFIGS = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
times = {c: [] for c in CONFIGS}
ot = {c: [] for c in CONFIGS}
wall = {c: [] for c in CONFIGS}
for _ in range(ROUNDS):
    for c in CONFIGS:
        binary, mode = c.rsplit(":", 1)
        v = run(binary, CIRCUIT, insecure=mode == "i")
        times[c].append(v["total_ms"] + v["handshake_ms"])
        ot[c].append(v["evaluator"]["ot_ms"])
        wall[c].append(v["wall_ms"])
for c in CONFIGS:
    t = times[c]
    print(f"{c}: median {st.median(t):.1f} min {min(t):.1f} max {max(t):.1f}  "
          f"evaluator ot_ms median {st.median(ot[c]):.1f}  wall median {st.median(wall[c]):.0f}  "
          f"runs {[round(x, 1) for x in t]}")
