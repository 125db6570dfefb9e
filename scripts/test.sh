#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting, lints, docs, every test, the
# 64-bit ARM tests under qemu-user, and the fuzz targets for a minute each.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage's wall time, printed at the end (also when a stage fails), so that a slow
# stage shows against CI's time limit.
stages=() starts=()
stage() {
  stages+=("$1")
  starts+=("$SECONDS")
  echo "== $1"
}
timings() {
  local status=$? i took
  starts+=("$SECONDS")
  echo "== time per stage (m:ss)"
  for i in "${!stages[@]}"; do
    took=$((starts[i + 1] - starts[i]))
    printf '%4d:%02d  %s\n' $((took / 60)) $((took % 60)) "${stages[i]}"
  done
  printf '%4d:%02d  in all\n' $((SECONDS / 60)) $((SECONDS % 60))
  return "$status"
}
trap timings EXIT

stage "set-up"
./scripts/setup.sh
export RUSTDOCFLAGS="-D warnings"
# A clean build gains nothing from incremental caches, which would take gigabytes of disk.
export CARGO_INCREMENTAL=0

stage "structure (import cycles, file and function lengths)"
python3 scripts/check-structure.py
stage "cargo fmt --check"
cargo fmt --all -- --check
stage "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
stage "cargo doc"
cargo doc --workspace --no-deps --quiet
stage "cargo test: the build"
cargo test --workspace --no-run --quiet
stage "cargo test"
# The browser test (web_browser, about 15 s) fails, rather than skips, without chromium and
# chromedriver, which setup.sh installs.
TRANSPUTATION_REQUIRE_BROWSER=1 cargo test --workspace
stage "without the udt and quic features, libudt hidden"
# The UDT4 library's headers and library are looked for where these point (nowhere): a
# build that still needed libudt would stop here. The binary must not link it either.
# Built and tested: the crates whose build the features change, the transport crate and
# those that depend on it (the others have no features, so their builds and tests are
# those above, byte for byte). They share target/ with the default build, which holds
# everything they do not change; but for the C library (libtransputation_ffi.so), which
# cargo names the same for every feature set, so that sharing target/ would leave one
# build's library to the other's tests: it has a target directory of its own.
(
  export UDT_INCLUDE_DIR=/nonexistent UDT_LIB_DIR=/nonexistent
  featured=(-p transputation-transport -p transputation-auto -p transputation-experiments
    -p transputation-2pc -p transputation)
  cargo test --no-default-features "${featured[@]}" --no-run
  bin=${CARGO_TARGET_DIR:-target}/debug/transputation
  if [ ! -x "$bin" ]; then
    echo "no binary at $bin after the build without the features" >&2
    exit 1
  fi
  libs=$(ldd "$bin")
  if grep -q libudt <<<"$libs"; then
    echo "the build without the udt feature links libudt" >&2
    exit 1
  fi
  cargo test --no-default-features "${featured[@]}"
  CARGO_TARGET_DIR=target/no-default-features \
    cargo test --no-default-features -p transputation-transport-ffi
)
stage "64-bit ARM under qemu-user: the armv8 AES backend"
# Cross-compiled (the linker and runner are in .cargo/config.toml): the AES and garbling
# crates' tests, whose every-backend checks take the armv8 backend (qemu's CPU has the AES
# instructions), and a 2PC session between this host's garbler and an ARM evaluator.
cargo clippy --quiet --target aarch64-unknown-linux-gnu -p transputation-core \
  -p transputation-garble --all-targets -- -D warnings
cargo doc --quiet --no-deps --target aarch64-unknown-linux-gnu -p transputation-core \
  -p transputation-garble
cargo test --quiet --target aarch64-unknown-linux-gnu -p transputation-core \
  -p transputation-garble --lib --test determinism
# The x86 garbler: the binary just built for the tests without the features (a tcp
# session needs neither udt nor quic).
X86_TRANSPUTATION=${CARGO_TARGET_DIR:-target}/debug/transputation ./scripts/arm-2pc.sh
stage "fuzz (${FUZZ_SECONDS:=60} s per target)"
(
  cd fuzz
  for target in $(cargo fuzz list); do
    log=$(mktemp)
    mkdir -p "corpus/$target"
    if ! cargo fuzz run --sanitizer none "$target" "corpus/$target" "seeds/$target" -- \
      -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "fuzz target $target failed (a finding is saved under fuzz/artifacts/$target)" >&2
      exit 1
    fi
    echo "$target: $(grep -E '^Done' "$log" || echo 'no summary')"
    rm -f "$log"
  done
)
echo "all checks passed"
