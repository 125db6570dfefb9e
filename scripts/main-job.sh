#!/usr/bin/env bash
# The main job: set up, build, and show what Transputation computes today. Until the 2PC
# protocol lands (issue 5) this is the circuit library: the paper's benchmark circuits with
# their gate counts, and AES-128 and SHA-256 evaluated in plaintext against their standard
# vectors. Later it becomes a real 2PC over several transports on an emulated wide-area link.
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
echo "Next: \`$bin circuit list\` for every built-in and its encoding."
