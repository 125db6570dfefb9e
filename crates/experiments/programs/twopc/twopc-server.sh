#!/bin/sh
# A sample user program for `transputation testbed run --program twopc=DIR`: the server side,
# the garbler of an AES-128 session (key 000102…0f), run in namespace A.
#   $1 = the peer's address, $2 = this side's address (IP:PORT, listen here),
#   $3 = the transport; $TRANSPUTATION = the binary, $TPB_PARTY_FLAGS = the session
#   protection flags the testbed chose (a pre-shared key file, --insecure, or nothing).
set -eu
# shellcheck disable=SC2086 # the flags are words
exec "${TRANSPUTATION:-transputation}" garbler --listen "$2" --transport "$3" \
    --circuit aes128 --input 000102030405060708090a0b0c0d0e0f ${TPB_PARTY_FLAGS:-}
