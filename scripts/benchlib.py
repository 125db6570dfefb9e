"""What the comparison scripts (compare-builds.py, garble-compare.py, before-after.py) run:
one `transputation garble-bench` or one `transputation run` of a build, as JSON."""

import json
import subprocess
import sys
import time

MINCUT = "synthetic:and=999960,xor=2524920,inputs=250000"

# `run`'s circuits by short name: the circuit and the two parties' inputs.
RUN_INPUTS = {
    "aes128": ("aes128", "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff"),
    "sha256": ("sha256", "0" * 64, "0" * 64),
    "mincut": (MINCUT, "0" * 62500, "0" * 62500),
}


def output(cmd):
    """What a command prints; a failed command ends the script with its stderr."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return r.stdout


def json_of(cmd):
    """The JSON a command prints (see `output`)."""
    return json.loads(output(cmd))


def garble_bench(binary, scheme, circuit, repeat, backend=None):
    """`garble-bench --json` of one build (on `backend` if given): the parsed report."""
    cmd = [binary, "garble-bench", "--circuit", circuit, "--scheme", scheme,
           "--repeat", str(repeat), "--json"]
    if backend:
        cmd += ["--backend", backend]
    return json_of(cmd)


def run(binary, circuit, insecure):
    """`run --json` of one build over loopback tcp on a circuit of RUN_INPUTS: the parsed
    report. A build older than `wall_ms` in the report (dc2377c) gets it from here: the
    command's start to its exit, measured around it."""
    name, g_in, e_in = RUN_INPUTS[circuit]
    cmd = [binary, "run", "--circuit", name, "--transport", "tcp", "--garbler-input", g_in,
           "--evaluator-input", e_in, "--json"]
    if insecure:
        cmd.append("--insecure")
    start = time.monotonic()
    report = json_of(cmd)
    report.setdefault("wall_ms", (time.monotonic() - start) * 1e3)
    return report
