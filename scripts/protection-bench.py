#!/usr/bin/env python3
"""The cost of protected sessions: alternating protected (default) and --insecure runs of
the MinCut-size circuit over loopback, as docs/BENCHMARKS.md records them.

Usage: scripts/protection-bench.py [BINARY [RUNS [TRANSPORT]]]
(defaults: target/release/transputation, 5 runs of each, tcp). Compares total_ms +
handshake_ms (the handshake is outside total_ms) by the medians, and prints each run with the
load average, since other work on the machine moves these figures a lot."""
import json, resource, statistics as st, subprocess, sys
B = sys.argv[1] if len(sys.argv) > 1 else "target/release/transputation"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5
T = sys.argv[3] if len(sys.argv) > 3 else "tcp"
Z = "0" * 62500
res = {"protected": [], "insecure": []}
cpu_all = {}
for i in range(N):
    for mode in ("protected", "insecure"):
        cmd = [B, "run", "--circuit", "synthetic:and=999960,xor=2524920,inputs=250000",
               "--transport", T, "--garbler-input", Z, "--evaluator-input", Z, "--json"]
        if mode == "insecure":
            cmd.append("--insecure")
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        v = json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e3
        cpu_all.setdefault(mode, []).append(cpu)
        res[mode].append((v["total_ms"], v["handshake_ms"], v["bytes_garbler_to_evaluator"], v["protection"]))
        print(mode, round(v["total_ms"], 2), round(v["handshake_ms"], 2), v["bytes_garbler_to_evaluator"], v["protection"], "cpu_ms(all processes)", round(cpu), open("/proc/loadavg").read().split()[0], flush=True)
med = {}
for mode, rs in res.items():
    tot = [t + h for t, h, _, _ in rs]
    med[mode] = st.median(tot)
    print(f"{mode}: total_ms+handshake_ms median {st.median(tot):.2f}, min {min(tot):.2f}, max {max(tot):.2f}; runs {[round(x,1) for x in tot]}")
for mode, c in cpu_all.items():
    print(f"{mode}: CPU ms of all processes (load, both parties) median {st.median(c):.0f}")
print(f"cost of protection (medians): {med['protected'] - med['insecure']:.2f} ms = {100 * (med['protected'] / med['insecure'] - 1):.1f} %")
