#!/usr/bin/env python3
"""What a grid of `auto` beside fixed transports shows, from its report's CSV.

    transputation testbed report EXPERIMENT --db DB --format csv > report.csv
    scripts/auto-grid-summary.py report.csv [more.csv ...]

Reads the `auto` rows the testbed's report writes (one per cell: circuit, scheme, link;
several reports, such as a grid run as two experiments, are read as one grid)
and prints: how many cells have `auto` within 10 % or 30 ms of the fastest transport
(`auto_within`), by circuit and by kind of link; how many have it more than 10 % slower
than `tcp` (`auto_slower_than_tcp`), and in how many more cells `tcp` did not finish
(stopped by the cutoff or the timeout) where `auto` did; what `auto` chose; and every cell
that misses either bar, with the times. Times are the report's medians of time to the output,
probing included. A cell whose `auto` runs all failed counts as a miss.
"""

import csv
import sys
from collections import Counter, defaultdict

NAMED = ("lan", "eu-us", "eu-aus", "cw-lan", "cw-wifi", "cw-wan")


def link_kind(condition):
    """The group a link belongs to: the named ones, or a sweep's round trip."""
    if condition in NAMED:
        return "named links"
    words = condition.split()
    if len(words) >= 2 and words[0] == "rtt":
        return f"{words[1]} links"
    return "other links"


def number(text):
    return float(text) if text not in ("", None) else None


NEED = {"circuit", "scheme", "condition", "transport", "auto_within",
        "auto_slower_than_tcp", "auto_choice", "output_median_ms", "ok"}


def read_report(path):
    """The rows of one report's CSV, checked for the columns this needs."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    if not rows or not NEED <= rows[0].keys():
        missing = sorted(NEED - (rows[0].keys() if rows else set()))
        sys.exit(f"{path}: not a testbed report's CSV (missing columns: "
                 f"{', '.join(missing) or 'every row'})")
    return rows


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip())
    cells = defaultdict(dict)
    for path in sys.argv[1:]:
        for r in read_report(path):
            key = (r["circuit"], r["scheme"], r["condition"])
            if r["transport"] in cells[key]:
                sys.exit(f"{path}: {' '.join(key)} {r['transport']} is in another report too")
            cells[key][r["transport"]] = r
    within, by_circuit, by_link = [0, 0], defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    behind_tcp = [0, 0]
    tcp_stopped = 0
    choices = Counter()
    misses, behind = [], []
    for key, transports in cells.items():
        auto = transports.get("auto")
        if auto is None:
            continue
        circuit, scheme, condition = key
        ok = auto["auto_within"] == "true"
        for tally in (within, by_circuit[circuit], by_link[link_kind(condition)]):
            tally[0] += ok
            tally[1] += 1
        if auto["auto_choice"]:
            choices[auto["auto_choice"]] += 1
        fastest = auto.get("auto_fastest", "")
        fast_ms = number(transports.get(fastest, {}).get("output_median_ms"))
        auto_ms = number(auto["output_median_ms"])
        if not ok:
            misses.append((key, auto_ms, fastest, fast_ms, auto["auto_choice"]))
        if auto["auto_slower_than_tcp"] in ("true", "false"):
            behind_tcp[1] += 1
            if auto["auto_slower_than_tcp"] == "true":
                behind_tcp[0] += 1
                tcp_ms = number(transports.get("tcp", {}).get("output_median_ms"))
                behind.append((key, auto_ms, tcp_ms, auto["auto_choice"]))
        elif auto_ms is not None and number(transports.get("tcp", {}).get("ok")) == 0:
            tcp_stopped += 1

    def share(t):
        return f"{t[0]} of {t[1]}" + (f" ({100 * t[0] / t[1]:.1f} %)" if t[1] else "")

    def ms(v):
        return "failed" if v is None else f"{v:,.1f} ms"

    def cell(key):
        return " ".join(key)

    print(f"auto within 10 % or 30 ms of the fastest: {share(within)}")
    for c, t in by_circuit.items():
        print(f"  {c}: {share(t)}")
    for k in sorted(by_link, key=lambda k: (k != "named links", k)):
        print(f"  {k}: {share(by_link[k])}")
    print(f"auto more than 10 % slower than tcp: {share(behind_tcp)} of the cells where tcp "
          f"finished; in {tcp_stopped} more tcp did not finish (stopped) and auto did")
    print("auto chose (its most common choice per cell): "
          + ", ".join(f"{c} {n}" for c, n in choices.most_common()))
    for key, auto_ms, fastest, fast_ms, choice in misses:
        print(f"miss: {cell(key)}: auto {ms(auto_ms)} over {choice or '?'}, "
              f"{fastest or 'the fastest'} {ms(fast_ms)}")
    for key, auto_ms, tcp_ms, choice in behind:
        print(f"behind tcp: {cell(key)}: auto {ms(auto_ms)} over {choice or '?'}, "
              f"tcp {ms(tcp_ms)}")


if __name__ == "__main__":
    main()
