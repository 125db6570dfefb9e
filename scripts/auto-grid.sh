#!/usr/bin/env bash
# Issue 17's grid: `auto` beside every fixed transport (with its defaults, and the settings
# an expert would write for the cell) for AES-128, SHA-256 and the MinCut-size circuit
# under `ideal` and `prf`, on 24 emulated links, as two experiments in one database:
# AES-128 and SHA-256 three runs a cell (their sessions take tens of milliseconds, and one
# run varies from the next by about the 10 % the issue's bars allow), the MinCut size one
# run a cell (its sessions take seconds). Then the testbed's reports, the summary against
# the bars, and the model's error on these runs.
#
# Usage (as root, about 2.5 hours on a 2-vCPU machine):
#   scripts/auto-grid.sh OUT_DIR [TRANSPUTATION_BINARY]
# OUT_DIR gets results.sqlite (every run; an interrupted grid resumes when run again with
# the same OUT_DIR), report-small.md/.csv, report-mincut.md/.csv, plots/, summary.txt and
# calibration.txt. The binary defaults to target/release/transputation, built from this
# checkout first.
set -euo pipefail

out=${1:?usage: scripts/auto-grid.sh OUT_DIR [TRANSPUTATION_BINARY]}
bin=${2:-target/release/transputation}
here=$(cd "$(dirname "$0")/.." && pwd)
# The default binary is built from this checkout every time (a no-op when it is current),
# so that a binary left from another branch or commit never runs the grid.
if [ "$bin" = target/release/transputation ]; then
  (cd "$here" && cargo build --release -p transputation)
  bin="$here/target/release/transputation"
fi
[ -x "$bin" ] || { echo "auto-grid: $bin is not an executable" >&2; exit 1; }
mkdir -p "$out/plots/small" "$out/plots/mincut"
db="$out/results.sqlite"

transports='auto;blast;quic:cc=bbr,iw={bdp};tcp-bbr;mtcp:streams=8,cc=bbr;quic;udt;mtcp;tcp'
mincut='synthetic:and=999960,xor=2524920,inputs=250000'
links=(--conditions lan,eu-us,eu-aus,cw-lan,cw-wifi,cw-wan --rtt 5ms,50ms,200ms
  --loss 0,0.1%,1% --rate 50mbit,500mbit --max-rate 500mbit)
common=(--schemes ideal,prf --transports "$transports" "${links[@]}" --probe-cache 600
  --timeout 120 --cutoff 3 --db "$db")

# Runs experiment NAME (circuits CIRCUITS, RUNS a cell), or resumes it if it is unfinished
# in the database.
run() {
  local name=$1 circuits=$2 runs=$3 id
  id=""
  if [ -f "$db" ]; then
    id=$("$bin" testbed experiments --db "$db" | awk -v n="$name" '$2 == n { id = $1 } END { print id }')
  fi
  if [ -n "$id" ]; then
    "$bin" testbed run --resume "$id" --db "$db"
  else
    "$bin" testbed run --name "$name" --circuits "$circuits" --runs "$runs" "${common[@]}"
  fi
}

run auto-grid-small 'aes128;sha256' 3
run auto-grid-mincut "$mincut" 1

for part in small mincut; do
  "$bin" testbed report "auto-grid-$part" --db "$db" --format markdown \
    --plots "$out/plots/$part" > "$out/report-$part.md"
  "$bin" testbed report "auto-grid-$part" --db "$db" --format csv > "$out/report-$part.csv"
done
python3 "$here/scripts/auto-grid-summary.py" "$out/report-small.csv" "$out/report-mincut.csv" \
  | tee "$out/summary.txt"
# The model's error per transport on these runs, on a copy (a --calibration file that does
# not exist yet: an existing one would be the fit's starting point, not the declared
# constants).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$db" "$tmp/cal.sqlite"
"$bin" select --calibrate --db "$tmp/cal.sqlite" --calibration "$tmp/cal.json" \
  | tee "$out/calibration.txt"
