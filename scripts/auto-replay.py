#!/usr/bin/env python3
"""Replays `--transport auto`'s decisions on a testbed grid's recorded paths with another
build, and scores the choices against the fixed transports measured in the same cells.

For every `auto` run of the experiment, the path its evaluator decided on (round trip,
rate, loss and loss bound, as its report states them) goes to `BINARY select --simulate`
for the run's circuit and scheme; the transport chosen is mapped to the fixed transport
of the grid that runs the same setting, and that transport's measured time to the output
stands for the choice (the median of its runs there). Then the issue's two bars: the choice within 10 % (or 30 ms) of
the cell's fastest transport, and not more than 10 % slower than `tcp`. What it cannot
replay: `auto`'s own costs (probe, agreement), a connection held from the probe, a
session started at once over kernel TCP (its recorded choice is taken as it was), and the
evaluator's measured set-up in the prediction. So it compares decision rules, not
sessions.

The predictions are made for hosts whose kernel TCP runs the congestion control the
experiment's emulated hosts ran (`select --host-cc`), so that the incumbent (what a session
without `auto` runs) is theirs, not this machine's.

Usage: scripts/auto-replay.py DB EXPERIMENT BINARY [--show]
  DB: a results database (docs/results/auto/results.sqlite); EXPERIMENT: its id, or its
  name (every experiment of that name).
  --show: print every cell whose choice changed or misses a bar.
"""

import json
import sqlite3
import subprocess
import sys

if len(sys.argv) < 4:
    sys.exit(__doc__)
DB, EXPERIMENT, BINARY = sys.argv[1:4]
SHOW = "--show" in sys.argv[4:]

con = sqlite3.connect(DB)
which = "e.id = ?" if EXPERIMENT.isdigit() else "e.name = ?"
runs = con.execute(
    "select r.circuit, r.scheme, r.condition, r.transport, r.first_output_ms, "
    "r.evaluator_report from runs r join experiments e on e.id = r.experiment_id "
    f"where {which} and r.status = 'ok'",
    (EXPERIMENT,),
).fetchall()
if not runs:
    sys.exit(f"no successful runs of experiment {EXPERIMENT!r} in {DB}")
# The emulated hosts' TCP congestion control ('system': this machine's, when it ran).
HOST_CC = [
    cc for (cc,) in con.execute(
        f"select distinct e.host_cc from experiments e where {which}", (EXPERIMENT,))
    if cc and cc != "system"
]
if len(HOST_CC) > 1:
    sys.exit(f"experiment {EXPERIMENT!r}: hosts of several congestion controls {HOST_CC}")

cells = {}
for circuit, scheme, cond, transport, ms, report in runs:
    cell = cells.setdefault((circuit, scheme, cond), {"times": {}, "auto": None})
    if transport == "auto":
        cell["auto"] = json.loads(report)["auto"]
        cell["auto_ms"] = ms
    else:
        cell["times"].setdefault(transport, []).append(ms)

# Each fixed transport's median over its runs in the cell.
for cell in cells.values():
    cell["times"] = {t: sorted(v)[len(v) // 2] for t, v in cell["times"].items()}


def fixed_of(name, times):
    """The grid's fixed transport that runs the setting `name`, or None."""
    if name in times:
        return name
    aliases = {
        "tcp:cc=cubic": "tcp",
        "tcp:cc=bbr": "tcp-bbr",
        "quic:cc=cubic": "quic",
        "mtcp:streams=4,cc=cubic": "mtcp",
        "udt:mss=1500": "udt",
    }
    if name in aliases:
        return aliases[name]
    if name.startswith("quic:cc=bbr"):
        return next((t for t in times if t.startswith("quic:cc=bbr,iw=")), None)
    return None


def simulate(circuit, scheme, a):
    args = [
        BINARY, "select", "--simulate", "--json",
        "--rtt", f"{a['rtt_ms']}ms", "--rate", f"{round(a['rate_mbps'] * 1e6)}",
        "--loss", str(a["loss"]), "--loss-bound", str(max(a["loss_upper"], a["loss"])),
        "--circuit", circuit, "--scheme", scheme,
    ] + [f"--host-cc={cc}" for cc in HOST_CC]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["decision"]["choice"]


near = slower = tcp_cells = changed = 0
for (circuit, scheme, cond), cell in sorted(cells.items()):
    a, times = cell["auto"], cell["times"]
    if a is None or not times:
        continue
    recorded = a["chosen"]
    provisional = a.get("path_from") not in ("cache", "probe") or recorded == "tcp"
    choice = recorded if provisional else simulate(circuit, scheme, a)
    fixed = fixed_of(choice, times)
    ms = times.get(fixed) if fixed else None
    if ms is None:
        print(f"{circuit} {scheme} {cond}: {choice} has no fixed run; skipped")
        continue
    best = min(times.values())
    ok = ms <= max(best * 1.1, best + 30)
    near += ok
    bad = "tcp" in times and ms > 1.1 * times["tcp"]
    tcp_cells += "tcp" in times
    slower += bad
    changed += fixed_of(recorded, times) != fixed
    if SHOW and (not ok or bad or fixed_of(recorded, times) != fixed):
        print(f"{circuit[:10]} {scheme} {cond}: recorded {recorded}, now {choice} ({ms:.0f} ms); "
              f"best {best:.0f}, tcp {times.get('tcp', float('nan')):.0f}"
              f"{' MISS' if not ok else ''}{' SLOWER-THAN-TCP' if bad else ''}")
total = sum(1 for c in cells.values() if c["auto"] is not None and c["times"])
print(f"{BINARY}: within 10 % (or 30 ms) of the fastest in {near} of {total} cells; more "
      f"than 10 % slower than tcp in {slower} of {tcp_cells}; {changed} choices changed")
