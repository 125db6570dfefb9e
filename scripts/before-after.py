#!/usr/bin/env python3
"""Two builds of `transputation` side by side on the figures a change must not slow down:
`garble-bench` (ideal and prf, on the MinCut-size circuit and a Bristol file), `run` over
loopback tcp (aes128 and the MinCut-size circuit, insecure and protected) and one testbed
cell. In every round each measurement runs once per build, old then new, so that the
machine's slow and quiet periods fall on both alike; at the end each figure's medians and
the ratio new / old.

Usage: scripts/before-after.py ROUNDS OLD_BINARY NEW_BINARY [BRISTOL_FILE]
BRISTOL_FILE defaults to ../shared/circuits/bristol/sha-256.txt. The testbed cell (aes128
over tcp on a 10 ms, 1 Gbit/s emulated link) needs root; without root it is left out, with
a note. Results databases of the testbed cell go to a temporary directory.
"""
import os
import statistics as st
import sys
import tempfile

from benchlib import MINCUT, garble_bench, json_of, output, run

if len(sys.argv) not in (4, 5):
    sys.exit(__doc__)
ROUNDS, OLD, NEW = int(sys.argv[1]), sys.argv[2], sys.argv[3]
BRISTOL = sys.argv[4] if len(sys.argv) == 5 else "../shared/circuits/bristol/sha-256.txt"
TMP = tempfile.mkdtemp(prefix="before-after-")


def garble(binary, scheme, circuit):
    return garble_bench(binary, scheme, circuit, 5)["garble_ns_per_and"]


def run_ms(binary, circuit, mode):
    v = run(binary, circuit, insecure=mode == "insecure")
    return v["total_ms"] + v["handshake_ms"]


def testbed(binary, label):
    db = os.path.join(TMP, f"{label}.sqlite")
    output([binary, "testbed", "run", "--circuits", "aes128", "--transports", "tcp",
            "--rtt", "10ms", "--rate", "1gbit", "--runs", "1", "--db", db, "--quiet"])
    v = json_of([binary, "testbed", "report", "--db", db, "--format", "json"])
    return v["rows"][0]["cells"][0]["mean_ms"]


FIGURES = []  # (label, unit, function of (binary, build label))
for scheme in ("ideal", "prf"):
    for circuit in (MINCUT, BRISTOL):
        FIGURES.append((f"garble-bench {scheme} {os.path.basename(circuit)}", "ns/AND",
                        lambda b, _l, s=scheme, c=circuit: garble(b, s, c)))
for circuit in ("aes128", "mincut"):
    for mode in ("insecure", "protected"):
        FIGURES.append((f"run {circuit} {mode}", "ms",
                        lambda b, _l, c=circuit, m=mode: run_ms(b, c, m)))
if os.geteuid() == 0:
    FIGURES.append(("testbed aes128 tcp 10ms 1gbit", "ms", testbed))
else:
    print("not root: the testbed cell is left out", file=sys.stderr)

values = {(f[0], b): [] for f in FIGURES for b in ("old", "new")}
for r in range(ROUNDS):
    for label, _unit, fn in FIGURES:
        for build, binary in (("old", OLD), ("new", NEW)):
            values[(label, build)].append(fn(binary, build))
    print(f"round {r + 1}/{ROUNDS} done", file=sys.stderr)

print(f"| figure | old median | new median | new / old |")
print(f"|---|---|---|---|")
for label, unit, _fn in FIGURES:
    old, new = st.median(values[(label, "old")]), st.median(values[(label, "new")])
    print(f"| {label} ({unit}) | {old:.2f} | {new:.2f} | {new / old:.3f} |")
