#!/bin/sh
# A sample user program for `transputation testbed run --program twopc=DIR`: the client side,
# the evaluator of an AES-128 session (plaintext 00112233…ff), run in namespace B. It prints
# `output: 69c4e0d86a7b0430d8cdb78070b4c55a` (FIPS-197, appendix C.1), which the testbed keeps.
#   $1 = the peer's address (IP:PORT, connect here), $2 = this side's address,
#   $3 = the transport; $TRANSPUTATION and $TPB_PARTY_FLAGS as for the server.
set -eu
# shellcheck disable=SC2086 # the flags are words
exec "${TRANSPUTATION:-transputation}" evaluator --connect "$1" --transport "$3" \
    --circuit aes128 --input 00112233445566778899aabbccddeeff ${TPB_PARTY_FLAGS:-}
