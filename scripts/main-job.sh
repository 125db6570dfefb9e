#!/usr/bin/env bash
# The main job: set up, build, print the benchmark circuits, then a short experiment on an
# emulated wide-area link (`transputation testbed run`): AES-128 and the paper's MinCut-size
# circuit over every reliable transport that works here, across one lossy long-distance link
# (RTT 100 ms, 0.1 % loss, 200 Mbit/s each way), the parties in two network namespaces. It
# prints the report table and writes the results database and plots under
# $TRANSPUTATION_RESULTS (default ./results/main-job). The testbed needs root (network
# namespaces, TUN devices); without it the job says so and runs the parties over 127.0.0.1
# instead: AES-128 over every transport, SHA-256 of "abc" and the MinCut-size circuit.
set -euo pipefail
cd "$(dirname "$0")/.."
TRANSPUTATION_SKIP_FUZZ_SETUP=1 ./scripts/setup.sh
cargo build --release --quiet -p transputation
bin=target/release/transputation
shared=../shared/circuits
mincut=synthetic:and=999960,xor=2524920,inputs=250000

echo
echo "== The paper's benchmark circuits (Transputation paper, Table 2) and ours =="
circuits=(aes128 sha256 "$mincut")
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

loopback() {
key=000102030405060708090a0b0c0d0e0f
pt=00112233445566778899aabbccddeeff
ct=69c4e0d86a7b0430d8cdb78070b4c55a
transports=$("$bin" transports --json | jq -r '.[] | select(.available) | .name')

echo
echo "== 2PC: AES-128 (FIPS-197 C.1), garbler holds the key, evaluator the plaintext =="
echo "   every transport that works here; protocol time from connection to output"
header
for t in $transports mtcp:streams=4 auto; do
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
want=$("$bin" circuit eval "$mincut" --garbler-input "$zeros" --evaluator-input "$zeros")
for s in ideal prf; do
  json=$("$bin" run --circuit "$mincut" --scheme "$s" --transport tcp \
    --garbler-input "$zeros" --evaluator-input "$zeros" --json)
  [ "$(jq -r .output <<<"$json")" = "$want" ] || { echo "wrong MinCut-size output" >&2; exit 1; }
  printf 'MinCut-size, %-5s over tcp: %.1f ms protocol time, %.1f million AND gates per second, %s bytes garbler->evaluator\n' \
    "$s" "$(jq .total_ms <<<"$json")" "$(jq '.and_gates / .total_ms / 1000' <<<"$json")" \
    "$(jq .bytes_garbler_to_evaluator <<<"$json")"
done
}

wan() {
  local results=${TRANSPUTATION_RESULTS:-results/main-job}
  mkdir -p "$results"
  rm -f "$results"/results.sqlite*
  local reliable
  reliable=$("$bin" transports --json |
    jq -r '[.[] | select(.available and .name != "udp") | .name] | join(";")')
  # QUIC once more, told the path: BBR from an initial window of the link's bandwidth-delay
  # product (200 Mbit/s x 100 ms = 2.5 MB) instead of slow-starting every direction; and
  # auto, which measures the path, predicts every transport and chooses (probing each run).
  case ";$reliable;" in *";quic;"*) reliable="$reliable;quic:cc=bbr,iw={bdp}" ;; esac
  if "$bin" capabilities --json | jq -e '.features | index("transport-auto")' >/dev/null; then
    reliable="$reliable;auto"
  fi
  echo
  echo "== 2PC across an emulated wide-area link: RTT 100 ms, 0.1 % loss, 200 Mbit/s =="
  echo "   AES-128 and the MinCut-size circuit (ideal scheme) over $reliable;"
  echo "   each party in its own network namespace, buffers sized for the link (paper §4.2)"
  local start=$SECONDS
  "$bin" testbed run --quiet --name main-job --circuits "aes128;$mincut" \
    --transports "$reliable" --rtt 100ms --loss 0.1% --rate 200mbit --timeout 120 \
    --db "$results/results.sqlite" >/dev/null
  "$bin" testbed report main-job --db "$results/results.sqlite" --plots "$results/plots" 2>&1 |
    sed 's/^/   /'
  if compgen -G "$results/plots/*.svg" >/dev/null; then
    echo "   results database: $results/results.sqlite; plots: $results/plots/ ($((SECONDS - start)) s)"
  else
    echo "   results database: $results/results.sqlite ($((SECONDS - start)) s)"
  fi
  echo "   browse it: $bin testbed experiments --db $results/results.sqlite"
  echo "   (or TRANSPUTATION_RESULTS=$results $bin testbed experiments; report main-job likewise)"
}

if [ "$(id -u)" -ne 0 ]; then
  echo
  echo "The testbed needs root (it creates network namespaces and TUN devices, and raises"
  echo "their TCP buffer limits); running the parties over 127.0.0.1 instead."
  loopback
elif ! wan; then
  echo "The emulated link could not be used (see above); running over 127.0.0.1 instead."
  loopback
fi

echo
echo "Next: \`$bin testbed presets\` for the papers' experiments (\`testbed run --preset NAME\`),"
echo "\`$bin circuit list\` for every built-in and its inputs, \`$bin transports\`, and"
echo "\`$bin garbler --help\` and \`$bin evaluator --help\` to run the parties on two machines."
