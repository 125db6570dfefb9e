#!/usr/bin/env python3
"""Two or more builds side by side: `transputation run` of one circuit over loopback `tcp`,
every configuration in turn in each round (so that the machine's slow and quiet periods
fall on all of them alike), then each configuration's median and minimum of
`total_ms + handshake_ms` and the evaluator's median `ot_ms`.

Usage: scripts/compare-builds.py ROUNDS CIRCUIT BINARY:MODE [BINARY:MODE ...]
CIRCUIT is aes128, sha256 or mincut (the MinCut-size synthetic circuit); MODE is i
(`--insecure`) or p (protected, the default). Example, a build before and after a change:
  scripts/compare-builds.py 15 mincut /tmp/before:i /tmp/after:i /tmp/before:p /tmp/after:p
"""
import json, statistics as st, subprocess, sys

ROUNDS, CIRCUIT, CONFIGS = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
INPUTS = {
    "aes128": ("aes128", "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff"),
    "sha256": ("sha256", "0" * 64, "0" * 64),
    "mincut": ("synthetic:and=999960,xor=2524920,inputs=250000", "0" * 62500, "0" * 62500),
}
circuit, g_in, e_in = INPUTS[CIRCUIT]
times = {c: [] for c in CONFIGS}
ot = {c: [] for c in CONFIGS}
for _ in range(ROUNDS):
    for c in CONFIGS:
        binary, mode = c.rsplit(":", 1)
        cmd = [binary, "run", "--circuit", circuit, "--transport", "tcp",
               "--garbler-input", g_in, "--evaluator-input", e_in, "--json"]
        if mode == "i":
            cmd.append("--insecure")
        v = json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)
        times[c].append(v["total_ms"] + v["handshake_ms"])
        ot[c].append(v["evaluator"]["ot_ms"])
for c in CONFIGS:
    t = times[c]
    print(f"{c}: median {st.median(t):.1f} min {min(t):.1f} max {max(t):.1f}  "
          f"evaluator ot_ms median {st.median(ot[c]):.1f}  runs {[round(x, 1) for x in t]}")
