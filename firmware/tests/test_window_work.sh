#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a trigger window holds, in instructions: test_catalogue under callgrind, counting
# only while the trigger is high, one dump per labelled batch (see test_catalogue.c).
# Checks, for every op, that the first recorded run does the work of the later ones
# (within 2 %: lazy state such as RSA blinding values or Montgomery constants is computed
# before the window, not in its first run), and that an empty window (n=0) holds at most
# OVERHEAD_MAX instructions. Prints the table it judged.
# Usage: test_window_work.sh VALGRIND TEST_CATALOGUE
set -euo pipefail
valgrind=$1
catalogue=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Trigger, two readings of CLOCK_MONOTONIC (vDSO), trigger: 78 instructions on x86-64
# (test_catalogue's trigger wrapper included).
OVERHEAD_MAX=100
# Ops whose work differs between runs by design, each with the reason.
#   rsa-keygen: each run searches for new primes; its work is that of the primes found.
VARIABLE_OPS="rsa-keygen/software"

"$valgrind" --tool=callgrind --instr-atstart=no --callgrind-out-file="$tmp/cg" \
    "$catalogue" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }

for f in "$tmp"/cg.*; do
    label=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
    [ -n "$label" ] && printf '%s %s\n' "$label" "$(sed -n 's/^totals: //p' "$f")"
done | sort >"$tmp/table"

awk -v max="$OVERHEAD_MAX" -v variable="$VARIABLE_OPS" '
    BEGIN { n = split(variable, v, " "); for (i = 1; i <= n; i++) skip[v[i]] = 1 }
    { op = $1; ops[op] = 1; if ($2 == "n=0") zero[op] = $3; else { sub("run=", "", $2); ir[op, $2] = $3 } }
    END {
        printf "%-30s %12s %12s %12s %7s %6s\n", "op", "run 1", "run 2", "run 3", "1/later", "n=0"
        bad = 0
        for (op in ops) {
            later = (ir[op, 2] + ir[op, 3]) / 2
            ratio = later > 0 ? ir[op, 1] / later : 0
            flag = ""
            if (!(op in skip) && (ratio < 0.98 || ratio > 1.02)) { flag = "  FIRST RUN DIFFERS"; bad++ }
            if (zero[op] > max) { flag = flag "  OVERHEAD > " max; bad++ }
            printf "%-30s %12d %12d %12d %7.3f %6d%s\n", op, ir[op, 1], ir[op, 2], ir[op, 3], ratio, zero[op], flag
        }
        if (length(ops) == 0) { print "no labelled windows: was test_catalogue built with callgrind client requests?"; bad++ }
        exit bad > 0
    }' "$tmp/table"
