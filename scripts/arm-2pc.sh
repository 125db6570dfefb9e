#!/usr/bin/env bash
# A 2PC round trip between an x86-64 garbler and a 64-bit ARM evaluator run under
# qemu-user, the evaluator on the `armv8` AES backend: AES-128 on FIPS-197's key and
# plaintext must give FIPS-197's ciphertext. Builds the ARM binary without the udt and quic
# features (no ARM libudt here). Used by scripts/test.sh; needs what scripts/setup.sh
# installs (qemu-user, the aarch64 cross compiler, the Rust target).
set -euo pipefail
cd "$(dirname "$0")/.."
target=aarch64-unknown-linux-gnu
# The x86 garbler: $X86_TRANSPUTATION if set (scripts/test.sh gives the binary its tests
# have just built), else a build of it here.
x86=${X86_TRANSPUTATION:-}
if [ -z "$x86" ]; then
  cargo build --quiet -p transputation
  x86=${CARGO_TARGET_DIR:-target}/debug/transputation
fi
cargo build --quiet -p transputation --target "$target" --no-default-features
arm=${CARGO_TARGET_DIR:-target}/$target/debug/transputation
work=$(mktemp -d)
trap 'kill "${garbler:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$x86" keygen --psk --out "$work/psk" 2>/dev/null
"$x86" garbler --listen 127.0.0.1:0 --psk-file "$work/psk" --circuit aes128 --scheme ideal \
  --input 000102030405060708090a0b0c0d0e0f --accept-timeout 120 --json \
  >"$work/garbler.json" 2>"$work/garbler.err" &
garbler=$!
addr=
for _ in $(seq 100); do
  addr=$(grep -oE '127\.0\.0\.1:[0-9]+' "$work/garbler.err" | head -n 1 || true)
  [ -n "$addr" ] && break
  sleep 0.1
done
if [ -z "$addr" ]; then
  cat "$work/garbler.err" >&2
  echo "arm-2pc: the garbler did not announce its address" >&2
  exit 1
fi
qemu-aarch64 -L /usr/aarch64-linux-gnu "$arm" evaluator --connect "$addr" \
  --psk-file "$work/psk" --circuit aes128 --scheme ideal --backend armv8 --timeout 120 \
  --input 00112233445566778899aabbccddeeff --json >"$work/evaluator.json"
wait "$garbler"
out=$(jq -r .output "$work/evaluator.json")
backend=$(jq -r .backend "$work/evaluator.json")
if [ "$out" != 69c4e0d86a7b0430d8cdb78070b4c55a ] || [ "$backend" != armv8 ]; then
  echo "arm-2pc: the ARM evaluator gave $out on $backend" >&2
  exit 1
fi
echo "arm-2pc: x86-64 garbler ($(jq -r .backend "$work/garbler.json")) and aarch64 evaluator (armv8, qemu-user): $out"
