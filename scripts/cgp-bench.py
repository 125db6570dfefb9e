#!/usr/bin/env python3
"""Coarse-grained parallel garbling (issue 21) measured side by side with `garble-bench`.

    scripts/cgp-bench.py ROUNDS BINARY SCHEMES "C1;C2;..."

Each circuit (it must have parallel regions: `circuit stats` shows them) under each scheme
is garbled and evaluated three ways in every round, one after another: `--parallel none`
(one thread, the whole circuit planned at once), `--parallel cgp --threads 1` and
`--parallel cgp --threads 2` (a piece of regions per thread). Each run is
`garble-bench --repeat 1 --json`. Garbling is timed with its set-up (the plan of the
circuit, or of each piece, which cgp makes while garbling), and so is evaluation; the
script prints, per row, the medians over ROUNDS in milliseconds and the speed-ups, as a
Markdown table.
"""

import json
import statistics
import subprocess
import sys

MODES = [("none", 1), ("cgp", 1), ("cgp", 2)]


def bench(binary, circuit, scheme, mode, threads):
    cmd = [binary, "garble-bench", "--circuit", circuit, "--scheme", scheme,
           "--repeat", "1", "--parallel", mode, "--threads", str(threads), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    v = json.loads(out)
    return (v["garble_setup_ms"] + v["garble_ms"], v["eval_setup_ms"] + v["eval_ms"])


def main():
    rounds, binary, schemes, circuits = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    print("| circuit | scheme | garble none / cgp t1 / cgp t2 (ms) | cgp t2 vs none | "
          "cgp t2 vs t1 | eval none / cgp t1 / cgp t2 (ms) | cgp t2 vs none | cgp t2 vs t1 |")
    print("|---|---|---|---|---|---|---|---|")
    for circuit in circuits.split(";"):
        for scheme in schemes.split(","):
            runs = {m: [] for m in MODES}
            for _ in range(rounds):
                for m in MODES:
                    runs[m].append(bench(binary, circuit, scheme, *m))
            med = {m: [statistics.median(r[i] for r in runs[m]) for i in (0, 1)] for m in MODES}
            cells = []
            for i in (0, 1):
                none, t1, t2 = (med[m][i] for m in MODES)
                cells += [f"{none:.0f} / {t1:.0f} / {t2:.0f}", f"{none / t2:.2f}x",
                          f"{t1 / t2:.2f}x"]
            print(f"| `{circuit}` | `{scheme}` | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
