#!/usr/bin/env python3
"""Fine-grained parallel garbling (issue 21) measured side by side with `garble-bench`.

    scripts/fgp-bench.py curve ROUNDS BINARY SCHEMES
    scripts/fgp-bench.py circuits ROUNDS BINARY SCHEMES "C1;C2;..." WINDOWS

`curve`: the level-width efficiency curve. For w = 2^4 .. 2^14, the circuit
`synthetic:and={w*1000},xor=0,depth=1000,inputs=1024` (1000 levels of w AND gates) is
garbled and evaluated on 1 and 2 threads (`--fgp-min-wave 1 --fgp-window 65536`: every
level of two gates or more split), the two runs alternating in every round.

`circuits`: each circuit at each window (gates, e.g. 8192,65536,1048576) on 1 and 2
threads with the scheme's default min wave, alternating in every round.

Each run is `garble-bench --repeat 3 --json` (the fastest of 3); the script prints, per
row, the median over ROUNDS of garbling and evaluating ns per AND gate for each thread
count, the speed-ups t1/t2 and the share of AND gates in split waves, as a Markdown table.
"""

import json
import statistics
import subprocess
import sys


def bench(binary, circuit, scheme, threads, extra):
    cmd = [binary, "garble-bench", "--circuit", circuit, "--scheme", scheme,
           "--repeat", "3", "--threads", str(threads), "--json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def side_by_side(rounds, binary, circuit, scheme, extra):
    """Medians of (garble, eval) ns/AND for 1 and 2 threads, and the split share."""
    runs = {1: [], 2: []}
    share = 0.0
    for _ in range(rounds):
        for t in (1, 2):
            v = bench(binary, circuit, scheme, t, extra)
            runs[t].append((v["garble_ns_per_and"], v["eval_ns_per_and"]))
            if t == 2:
                share = v["split_and_share"]
    med = {t: (statistics.median(g for g, _ in r), statistics.median(e for _, e in r))
           for t, r in runs.items()}
    return med, share


def row(label, med, share):
    (g1, e1), (g2, e2) = med[1], med[2]
    return (f"| {label} | {g1:.2f} | {g2:.2f} | {g1 / g2:.2f}× | {e1:.2f} | {e2:.2f} "
            f"| {e1 / e2:.2f}× | {share:.2f} |")


HEADER = ("| {} | garble t1 | garble t2 | speed-up | eval t1 | eval t2 | speed-up "
          "| split share |\n|---|---|---|---|---|---|---|---|")


def main():
    mode, rounds, binary, schemes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    for scheme in schemes.split(","):
        if mode == "curve":
            print(f"\n{scheme}\n\n" + HEADER.format("level width"))
            for k in range(4, 15):
                w = 1 << k
                circuit = f"synthetic:and={w * 1000},xor=0,depth=1000,inputs=1024"
                extra = ["--fgp-min-wave", "1", "--fgp-window", "65536"]
                med, share = side_by_side(rounds, binary, circuit, scheme, extra)
                print(row(str(w), med, share), flush=True)
        else:
            circuits, windows = sys.argv[5].split(";"), sys.argv[6].split(",")
            print(f"\n{scheme}\n\n" + HEADER.format("circuit, window"))
            for c in circuits:
                for w in windows:
                    med, share = side_by_side(rounds, binary, c, scheme, ["--fgp-window", w])
                    print(row(f"{c}, {w}", med, share), flush=True)


if __name__ == "__main__":
    main()
