#!/usr/bin/env python3
"""A load test of `transputation garbler --serve` over loopback: one serving garbler, EVALUATORS
evaluator processes at once, each an open session of COMPUTATIONS computations of aes128
(FIPS-197's key at the garbler, a plaintext per evaluator), protected with a one-time
pre-shared key. Every output is checked against AES; the garbler's resident memory is
sampled every 0.2 s while it serves.

    scripts/serve-load.py [EVALUATORS [COMPUTATIONS [BINARY]]]    (defaults 10, 100, the release build)

Prints one JSON object: the counts, failures, wall time, the garbler's memory (resident kB
after each tenth of the computations, and its peak) and the median online time of the
computations after each session's first.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

KEY = "000102030405060708090a0b0c0d0e0f"
# FIPS-197 C.1, and the all-zero block under the same key.
CASES = [
    ("00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a"),
    ("00000000000000000000000000000000", "c6a13b37878f5b826f4f8162a1c8d879"),
]


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    evaluators = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    computations = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    here = os.path.dirname(os.path.abspath(__file__))
    binary = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        here, "..", "target", "release", "transputation")
    with tempfile.TemporaryDirectory() as d:
        psk = os.path.join(d, "load.psk")
        subprocess.run([binary, "keygen", "--psk", "--out", psk], check=True,
                       capture_output=True)
        garbler = subprocess.Popen(
            [binary, "garbler", "--serve", "--sessions", str(evaluators),
             "--max-sessions", str(evaluators), "--listen", "127.0.0.1:0",
             "--circuit", "aes128", "--input", KEY, "--psk-file", psk, "--json",
             "--accept-timeout", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        addr = garbler.stderr.readline().strip().removeprefix("listening on ")
        g_err = []
        threading.Thread(target=lambda: g_err.extend(garbler.stderr), daemon=True).start()
        g_lines = []
        threading.Thread(target=lambda: g_lines.extend(garbler.stdout), daemon=True).start()
        samples = []
        done = threading.Event()

        def sample():
            while not done.is_set():
                r = rss_kb(garbler.pid)
                if r is not None:
                    samples.append((len(g_lines), r))
                time.sleep(0.2)

        threading.Thread(target=sample, daemon=True).start()
        start = time.monotonic()
        procs = []
        for i in range(evaluators):
            pt, _ = CASES[i % 2]
            procs.append(subprocess.Popen(
                [binary, "evaluator", "--connect", addr, "--circuit", "aes128",
                 "--input", pt, "--repeat", str(computations), "--psk-file", psk,
                 "--json", "--timeout", "60"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        wrong, failed, online = 0, 0, []
        for i, p in enumerate(procs):
            out, err = p.communicate()
            if p.returncode != 0:
                failed += 1
                print(f"evaluator {i} failed: {err.strip()[-400:]}", file=sys.stderr)
                continue
            for line in out.splitlines():
                r = json.loads(line)
                if r["output"] != CASES[i % 2][1]:
                    wrong += 1
                if r["computation"] > 1:
                    online.append(r["online_ms"])
        garbler.wait(timeout=120)
        wall = time.monotonic() - start
        done.set()
        total = evaluators * computations
        tenths = []
        for k in range(1, 11):
            at = [r for n, r in samples if n >= k * total // 10]
            tenths.append(at[0] if at else None)
        print(json.dumps({
            "evaluators": evaluators,
            "computations_each": computations,
            "garbler_reports": len(g_lines),
            "evaluator_outputs_checked": len(online) + evaluators - failed,
            "wrong_outputs": wrong,
            "failed_evaluators": failed,
            "garbler_exit": garbler.returncode,
            "garbler_summary": next((l.strip() for l in g_err if l.startswith("served")), None),
            "wall_s": round(wall, 2),
            "garbler_rss_kb_at_each_tenth": tenths,
            "garbler_rss_kb_peak": max((r for _, r in samples), default=None),
            "online_ms_median_after_first": round(statistics.median(online), 3) if online else None,
        }, indent=1))
        if wrong or failed or garbler.returncode != 0:
            sys.exit(1)


if __name__ == "__main__":
    main()
