#!/usr/bin/env python3
"""How the whole wait and the memory grow with the circuit: `transputation run` over
loopback TCP on synthetic circuits of 1 M, 10 M, 100 M and 1 G AND gates (2.5 XOR gates per
AND, 1,000 input bits a party, levels of 1,000 AND gates as in the paper's MinCut circuit),
printing per size the wall time of `run` (its start until the merged report: what a user
waits for), the protocol time (`total_ms`), the parties' loading and set-up, the peak
resident memory of each party, and AND gates per second of wall time beside those per
second of protocol time; and whether the size meets issue 22's bounds (wall at most
1.5 x protocol + 150 ms, each party under 300 MB). The output of each run is checked against
`transputation circuit eval` (plaintext) on the same random inputs.

Why levels of 1,000 AND gates (`depth` = AND gates / 1,000): a synthetic circuit's wires
are read up to about two levels after they are made, so the wires alive at once, and the
labels a party must hold, grow with the level width. At the default depth of 1,000 the
levels of a 1 G-AND circuit hold 3.5 M gates each and 7 M wires stay alive (over 100 MB of
labels, read at random); with levels of a fixed width the live set, and so the memory, stays
the same at every size, as it does for circuits compiled from programs.

Usage: scripts/scale-bench.py BINARY [--sizes 1M,10M,100M,1G] [--skip-largest]
                              [--scheme ideal] [--mem-limit GIB] [--no-check] [--json]
BINARY: a release `transputation`. --skip-largest leaves out the largest size (for small
machines). Each party runs under an address-space limit (--mem-limit, default: half of this
machine's memory, so that both parties fit), so that a size too large for this machine
ends as "out of memory" instead of pushing the machine into swap; the sizes after it are
left out. --no-check skips the plaintext check (which takes about a quarter of the run's
time). --json prints one JSON object per size instead of the table.

Example:
  cargo build --release -p transputation
  scripts/scale-bench.py target/release/transputation --sizes 1M,10M
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys

SUFFIX = {"K": 10**3, "M": 10**6, "G": 10**9}


def size(text):
    """`10M` -> 10_000_000."""
    t = text.strip().upper()
    if t and t[-1] in SUFFIX:
        return int(float(t[:-1]) * SUFFIX[t[-1]])
    return int(t)


def label(n):
    for s, v in (("G", 10**9), ("M", 10**6), ("K", 10**3)):
        if n >= v and n % v == 0:
            return f"{n // v}{s}"
    return str(n)


def mem_total_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return None


def spec(and_gates):
    """The synthetic circuit of `and_gates` AND gates: see the module documentation."""
    depth = max(1, and_gates // 1000)
    return (f"synthetic:and={and_gates},xor={and_gates * 5 // 2},inputs={INPUTS},"
            f"depth={depth}")


INPUTS = 1000


def random_hex(seed):
    rng = random.Random(seed)
    return "".join(rng.choice("0123456789abcdef") for _ in range(INPUTS // 4))


def limited(limit_bytes):
    def limit():
        if limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    return limit


def one_run(binary, and_gates, scheme, limit_bytes):
    """`run --json` of a synthetic circuit of `and_gates` AND gates on random inputs: the
    parsed report, or (None, why) when it failed."""
    garbler, evaluator = random_hex(2 * and_gates), random_hex(2 * and_gates + 1)
    cmd = [binary, "run", "--circuit", spec(and_gates), "--scheme", scheme, "--transport",
           "tcp", "--garbler-input", garbler, "--evaluator-input", evaluator, "--insecure",
           "--json", "--timeout", "3600"]
    r = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limited(limit_bytes))
    if r.returncode != 0:
        err = r.stderr.strip()
        if "memory allocation" in err or "out of memory" in err.lower() or r.returncode < 0:
            return None, f"out of memory under the {limit_bytes / 2**30:.1f} GiB limit"
        return None, err.splitlines()[-1] if err else f"exit {r.returncode}"
    return json.loads(r.stdout), None


def plaintext(binary, and_gates):
    """The circuit's output on the inputs `one_run` gives, evaluated in plaintext."""
    garbler, evaluator = random_hex(2 * and_gates), random_hex(2 * and_gates + 1)
    r = subprocess.run([binary, "circuit", "eval", spec(and_gates), "--garbler-input", garbler,
                        "--evaluator-input", evaluator], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"circuit eval {spec(and_gates)}: {r.stderr.strip()}")
    return r.stdout.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("--sizes", default="1M,10M,100M,1G")
    p.add_argument("--skip-largest", action="store_true")
    p.add_argument("--scheme", default="ideal")
    p.add_argument("--mem-limit", type=float, default=None, metavar="GIB")
    p.add_argument("--no-check", action="store_true")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    try:
        sizes = sorted(size(s) for s in a.sizes.split(","))
    except ValueError:
        sys.exit(f"--sizes {a.sizes!r}: give sizes such as 1M,10M,100M,1G")
    if a.skip_largest and len(sizes) > 1:
        sizes = sizes[:-1]
    total = mem_total_bytes()
    limit = int(a.mem_limit * 2**30) if a.mem_limit else (total // 2 if total else None)

    rows = []
    for n in sizes:
        v, why = one_run(a.binary, n, a.scheme, limit)
        if v is None:
            rows.append({"and_gates": n, "error": why})
            print(f"{label(n)}: {why}; larger sizes left out", file=sys.stderr)
            break
        if not a.no_check:
            want = plaintext(a.binary, n)
            if v["output"] != want:
                sys.exit(f"{label(n)}: the 2PC output {v['output']} is not the plaintext {want}")
        g, e = v["garbler"], v["evaluator"]
        row = {
            "and_gates": n,
            "wall_ms": v["wall_ms"],
            "total_ms": v["total_ms"],
            "load_ms": max(g["load_ms"], e["load_ms"]),
            "setup_ms": max(g["setup_ms"], e["setup_ms"]),
            "peak_rss_garbler_bytes": v["peak_rss_bytes"]["garbler"],
            "peak_rss_evaluator_bytes": v["peak_rss_bytes"]["evaluator"],
            "and_per_s_wall": n / (v["wall_ms"] / 1e3),
            "and_per_s_protocol": n / (v["total_ms"] / 1e3),
            "backend": v["backend"]["garbler"],
            "output": v["output"],
            "output_checked": not a.no_check,
        }
        peak = max(row["peak_rss_garbler_bytes"] or 0, row["peak_rss_evaluator_bytes"] or 0)
        row["meets_bounds"] = (row["wall_ms"] <= 1.5 * row["total_ms"] + 150
                               and 0 < peak < 300e6)
        rows.append(row)
        if a.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"{label(n)}: wall {row['wall_ms']:.0f} ms, protocol {row['total_ms']:.0f} ms",
                  file=sys.stderr, flush=True)
    if a.json:
        return
    head = ["AND gates", "wall ms", "protocol ms", "wall/protocol", "load ms", "set-up ms",
            "peak MB garbler", "peak MB evaluator", "M AND/s wall", "M AND/s protocol",
            "within bounds"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        if "error" in r:
            print(f"| {label(r['and_gates'])} | {r['error']} |" + " |" * (len(head) - 2))
            continue
        mb = lambda b: f"{b / 1e6:.0f}" if b is not None else "?"
        print(f"| {label(r['and_gates'])} | {r['wall_ms']:.0f} | {r['total_ms']:.0f} | "
              f"{r['wall_ms'] / r['total_ms']:.1f} | {r['load_ms']:.0f} | {r['setup_ms']:.0f} | "
              f"{mb(r['peak_rss_garbler_bytes'])} | {mb(r['peak_rss_evaluator_bytes'])} | "
              f"{r['and_per_s_wall'] / 1e6:.1f} | {r['and_per_s_protocol'] / 1e6:.1f} | "
              f"{'yes' if r['meets_bounds'] else 'no'} |")
    ok = [r for r in rows if "error" not in r]
    if ok:
        checked = "outputs checked against plaintext" if not a.no_check else "outputs not checked"
        print(f"\nAES backend: {ok[0]['backend']}; scheme {a.scheme}; loopback tcp; "
              f"{os.cpu_count()} CPUs; {checked}")


if __name__ == "__main__":
    main()
