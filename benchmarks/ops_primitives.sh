#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds benchmarks/ops_primitives.c with the firmware's release flags and runs it.
# Usage (from the repository root): benchmarks/ops_primitives.sh
set -eu
out=build/bench
mkdir -p "$out"
lib=firmware/ops/lib
cc -std=c11 -O2 -DNDEBUG -Wall -Wextra -I firmware/ops benchmarks/ops_primitives.c \
    "$lib/er_keccak.c" "$lib/er_rc4.c" "$lib/er_rc_key.c" "$lib/er_rc5.c" "$lib/er_rc6.c" \
    -lmbedcrypto -lcrypto -o "$out/ops_primitives"
"$out/ops_primitives"
