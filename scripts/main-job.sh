#!/usr/bin/env bash
# The main job: set up, build, and run real two-party computations. Both parties run as
# separate processes over 127.0.0.1 (`transputation run`): AES-128 on the FIPS-197 vector
# over every transport that works here and under every garbling scheme, SHA-256 of "abc",
# and the paper's MinCut-size circuit; then the transports alone. Emulated wide-area links
# arrive with the testbed (issue 7).
set -euo pipefail
cd "$(dirname "$0")/.."
TRANSPUTATION_SKIP_FUZZ_SETUP=1 ./scripts/setup.sh
cargo build --release --quiet -p transputation
bin=target/release/transputation
shared=../shared/circuits

echo
echo "== The paper's benchmark circuits (Transputation paper, Table 2) and ours =="
circuits=(aes128 sha256 synthetic:and=999960,xor=2524920,inputs=250000)
[ -d "$shared" ] && circuits+=("$shared/bristol/AES-non-expanded.txt" "$shared/bristol/sha-256.txt")
"$bin" circuit stats "${circuits[@]}"

# One 2PC run: prints a table row, checks the output.
row() { # circuit scheme transport garbler-input evaluator-input expected-output
  local json
  json=$("$bin" run --circuit "$1" --scheme "$2" --transport "$3" \
    --garbler-input "$4" --evaluator-input "$5" --json)
  local out
  out=$(jq -r .output <<<"$json")
  local ok=yes
  [ "$out" = "$6" ] || ok="NO (got $out)"
  printf '%-10s %-9s %-16s %9.2f %8.2f %10.2f %9.2f %13s %13s  %s\n' "$1" "$2" "$3" \
    "$(jq .total_ms <<<"$json")" "$(jq .ot_ms <<<"$json")" "$(jq .garble_ms <<<"$json")" \
    "$(jq .eval_ms <<<"$json")" "$(jq .bytes_garbler_to_evaluator <<<"$json")" \
    "$(jq .bytes_evaluator_to_garbler <<<"$json")" "$ok"
  [ "$ok" = yes ]
}
header() {
  printf '%-10s %-9s %-16s %9s %8s %10s %9s %13s %13s  %s\n' circuit scheme transport \
    "total ms" "OT ms" "garble ms" "eval ms" "bytes G->E" "bytes E->G" "correct"
}

key=000102030405060708090a0b0c0d0e0f
pt=00112233445566778899aabbccddeeff
ct=69c4e0d86a7b0430d8cdb78070b4c55a
transports=$("$bin" transports --json | jq -r '.[] | select(.available) | .name')

echo
echo "== 2PC: AES-128 (FIPS-197 C.1), garbler holds the key, evaluator the plaintext =="
echo "   every transport that works here; protocol time from connection to output"
header
for t in $transports mtcp:streams=4; do
  row aes128 ideal "$t" "$key" "$pt" "$ct"
done
for s in circular prf; do
  row aes128 "$s" tcp "$key" "$pt" "$ct"
done

echo
echo "== 2PC: SHA-256 of \"abc\" and the MinCut-size circuit (999,960 AND gates) =="
header
row sha256 ideal tcp "61626380$(printf '0%.0s' {1..56})" "$(printf '0%.0s' {1..48})0000000000000018" \
  ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
zeros=$(printf '0%.0s' {1..62500})
mincut=synthetic:and=999960,xor=2524920,inputs=250000
want=$("$bin" circuit eval "$mincut" --garbler-input "$zeros" --evaluator-input "$zeros")
for s in ideal prf; do
  json=$("$bin" run --circuit "$mincut" --scheme "$s" --transport tcp \
    --garbler-input "$zeros" --evaluator-input "$zeros" --json)
  [ "$(jq -r .output <<<"$json")" = "$want" ] || { echo "wrong MinCut-size output" >&2; exit 1; }
  printf 'MinCut-size, %-5s over tcp: %.1f ms protocol time, %.1f million AND gates per second, %s bytes garbler->evaluator\n' \
    "$s" "$(jq .total_ms <<<"$json")" "$(jq '.and_gates / .total_ms / 1000' <<<"$json")" \
    "$(jq .bytes_garbler_to_evaluator <<<"$json")"
done

echo
echo "== The transports alone: 32 MiB (the MinCut circuit's tables) over loopback =="
for t in $transports mtcp:streams=4; do
  json=$("$bin" transport-bench --transport "$t" --bytes 32MiB --json)
  printf '%-15s %8.1f ms  %8.0f Mbit/s\n' "$t" \
    "$(jq '.seconds * 1000' <<<"$json")" "$(jq .mbit_per_s <<<"$json")"
done

echo
echo "Next: \`$bin circuit list\` for every built-in and its inputs, \`$bin transports\`,"
echo "\`$bin garbler --help\` and \`$bin evaluator --help\` to run the parties on two machines."
