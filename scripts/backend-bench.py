#!/usr/bin/env python3
"""Every AES backend of this CPU side by side: `garble-bench` of each scheme on each circuit
and the AES floor of each (`aes_floor`, the AES work alone), each backend in turn in every
round so that the machine's slow and quiet periods fall on all alike; then per backend,
scheme and circuit the median garbling and evaluation ns per AND gate and their ratio to
the floor.

Usage: scripts/backend-bench.py ROUNDS BINARY[,BINARY...] FLOOR [SCHEME,...] [CIRCUIT,...]
BINARY: a release `transputation`, or several separated by commas (builds before and after
a change: each runs in turn for every measurement, and the table gets a column naming
it); FLOOR: the release `aes_floor` example
(target/release/examples/aes_floor). Schemes default to ideal,prf,circular; circuits to
the MinCut size (mincut), the built-in sha256 and aes128; a circuit may be a Bristol file.
Example:
  cargo build --release -p transputation
  cargo build --release -p transputation-garble --examples
  scripts/backend-bench.py 5 target/release/transputation target/release/examples/aes_floor
"""

import re
import statistics
import subprocess
import sys

from benchlib import MINCUT, json_of, output

if len(sys.argv) < 4:
    sys.exit(__doc__)
ROUNDS, BINARIES, FLOOR = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3]
BINARY = BINARIES[0]
SCHEMES = sys.argv[4].split(",") if len(sys.argv) > 4 else ["ideal", "prf", "circular"]
CIRCUITS = sys.argv[5].split(",") if len(sys.argv) > 5 else ["mincut", "sha256", "aes128"]
NAMES = {"mincut": MINCUT}

backends = []
for b in ["portable", "aes-ni", "vaes256", "vaes", "armv8"]:
    r = subprocess.run([BINARY, "garble-bench", "--circuit", "aes128", "--scheme", "ideal",
                        "--backend", b, "--repeat", "1", "--json"], capture_output=True)
    if r.returncode == 0 and b != "portable":
        backends.append(b)


def per_gate_floors(backend):
    """aes_floor's AES work per gate on `backend`: {(part, kind): ns} for part garbling or
    evaluation and kind `ideal AND`, `circular AND`, `prf AND`, `prf XOR`."""
    text = output([FLOOR, "3", backend])
    out = {}
    for part in ("garbling", "evaluation"):
        line = next(l for l in text.splitlines() if l.strip().startswith(part + ":"))
        for kind, ns in re.findall(r"(ideal AND|circular AND|prf AND|prf XOR) ([\d.]+)", line):
            out[(part, kind)] = float(ns)
    return out


def floor(f, part, scheme, and_gates, xor_gates):
    """A scheme's AES floor per AND gate of a circuit: prf's XOR gates cost AES too."""
    if scheme == "prf":
        return f[(part, "prf AND")] + xor_gates / and_gates * f[(part, "prf XOR")]
    return f[(part, scheme + " AND")]


garble, evaluate, floor_g, floor_e = {}, {}, {}, {}
for _ in range(ROUNDS):
    for b in backends:
        f = per_gate_floors(b)
        for c in CIRCUITS:
            for s in SCHEMES:
                for binary in BINARIES:
                    key = (b, s, c, binary)
                    v = json_of([binary, "garble-bench", "--circuit", NAMES.get(c, c), "--scheme",
                                 s, "--backend", b, "--repeat", "3", "--json"])
                    ands, xors = v["and_gates"], v["xor_gates"]
                    garble.setdefault(key, []).append(v["garble_ns_per_and"])
                    evaluate.setdefault(key, []).append(v["eval_ns_per_and"])
                    floor_g.setdefault(key, []).append(floor(f, "garbling", s, ands, xors))
                    floor_e.setdefault(key, []).append(floor(f, "evaluation", s, ands, xors))

several = len(BINARIES) > 1
print(("| build " if several else "") + "| backend | scheme | circuit | garble ns/AND | floor | "
      "ratio | evaluate ns/AND | floor | ratio |")
print(("|---" if several else "") + "|---|---|---|---:|---:|---:|---:|---:|---:|")
for key in garble:
    m = statistics.median
    g, fg, e, fe = m(garble[key]), m(floor_g[key]), m(evaluate[key]), m(floor_e[key])
    build = f"| {key[3]} " if several else ""
    print(f"{build}| {key[0]} | {key[1]} | {key[2]} | {g:.2f} | {fg:.2f} | {g / fg:.2f} "
          f"| {e:.2f} | {fe:.2f} | {e / fe:.2f} |")
