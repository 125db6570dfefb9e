#!/usr/bin/env bash
# Installs what Transputation needs on a Debian machine: system packages, the Rust components
# the build and checks use, and cargo-fuzz. Idempotent: a second run only checks.
set -euo pipefail

need_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# System packages: a C/C++ toolchain (the UDT shim and the C interface examples are built
# with it), the UDT4 library the `udt` transport links (libudt-dev), pkg-config, and the
# tools the testbed drives (iproute2; ethtool, which turns offloads off for netem; time), and
# jq, with which the main job reads JSON, and a font for the text of the PNG plots.
packages=(build-essential libudt-dev pkg-config curl ca-certificates iproute2 ethtool time jq
  fonts-dejavu-core)
# The web UI's browser test (crates/transputation/tests/web_browser.rs): headless Chromium
# and the chromedriver it is driven through.
packages+=(chromium chromium-driver)
# The 64-bit ARM tests (the `armv8` AES backend, cross-compiled and run under qemu-user): the
# cross compiler and its C library, and qemu-user.
packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  need_root apt-get update -qq
  need_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# Rust: the toolchain comes with rustup; make sure of the components we check with.
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: Rust is missing; install it with rustup (https://rustup.rs) and run this again" >&2
    exit 1
  fi
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || true
  rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1 || true
fi

# cargo-fuzz, for the fuzz targets (runs on stable with --sanitizer none).
if [ "${TRANSPUTATION_SKIP_FUZZ_SETUP:-0}" != 1 ] && ! cargo fuzz --version >/dev/null 2>&1; then
  echo "setup: installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi
