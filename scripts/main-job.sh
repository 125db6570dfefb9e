#!/usr/bin/env bash
# The main job: set up, build, and show what Transputation does today. Until the 2PC protocol
# lands (issue 5) that is: the paper's benchmark circuits with their gate counts, AES-128 and
# SHA-256 evaluated in plaintext against their standard vectors, the three garbling schemes
# on AES-128, and the transports moving a garbled-circuit-sized stream over loopback. Later
# it becomes a real 2PC over several transports on an emulated wide-area link.
set -euo pipefail
cd "$(dirname "$0")/.."
TRANSPUTATION_SKIP_FUZZ_SETUP=1 ./scripts/setup.sh
cargo build --release --quiet -p transputation
bin=target/release/transputation
shared=../shared/circuits

echo
echo "== The paper's benchmark circuits (Transputation paper, Table 2) and ours =="
circuits=(aes128 sha256 mincut synthetic:and=999960,xor=2524920,inputs=250000)
[ -d "$shared" ] && circuits+=("$shared/bristol/AES-non-expanded.txt" "$shared/bristol/sha-256.txt")
"$bin" circuit stats "${circuits[@]}"

echo
echo "== Plaintext evaluation =="
ct=$("$bin" circuit eval aes128 --garbler-input 000102030405060708090a0b0c0d0e0f \
  --evaluator-input 00112233445566778899aabbccddeeff)
echo "aes128, FIPS-197 C.1:  key 000102..0f, plaintext 0011..ff -> $ct"
[ "$ct" = 69c4e0d86a7b0430d8cdb78070b4c55a ] || { echo "wrong AES output" >&2; exit 1; }
digest=$("$bin" circuit eval sha256 --garbler-input "61626380$(printf '0%.0s' {1..56})" \
  --evaluator-input "$(printf '0%.0s' {1..48})0000000000000018")
echo "sha256, padded \"abc\":  -> $digest"
[ "$digest" = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad ] \
  || { echo "wrong SHA-256 output" >&2; exit 1; }

echo
echo "== Garbling AES-128 on one thread (ns per AND gate) =="
# The value of a key in the one-line JSON objects the commands print.
val() { tr -d '\n ' | grep -o "\"$1\":[^,}]*" | head -n 1 | cut -d: -f2 | tr -d '"'; }
for scheme in ideal circular prf; do
  json=$("$bin" garble-bench --circuit aes128 --scheme "$scheme" --repeat 3 --json)
  printf '%-9s garble %6.1f  evaluate %6.1f  table bytes %8d  AES %s\n' "$scheme" \
    "$(val garble_ns_per_and <<<"$json")" "$(val eval_ns_per_and <<<"$json")" \
    "$(val table_bytes <<<"$json")" "$(val backend <<<"$json")"
done

echo
echo "== Moving 32 MiB (the MinCut circuit's tables) over loopback =="
for transport in tcp tcp-bbr mtcp:streams=4 udp; do
  json=$("$bin" transport-bench --transport "$transport" --bytes 32MiB --json)
  printf '%-15s %8.1f ms  %8.0f Mbit/s\n' "$transport" \
    "$(awk "BEGIN { print $(val seconds <<<"$json") * 1000 }")" "$(val mbit_per_s <<<"$json")"
done

echo
echo "Next: \`$bin circuit list\` for every built-in and its encoding, \`$bin transports\`."
