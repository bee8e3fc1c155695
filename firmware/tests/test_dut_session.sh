#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A hostile session against the built DUT (energyrig-dut --stdio): one JSON reply line per
# request line whatever the bytes, a clean exit at EOF, and (with valgrind) no leak and no
# invalid access. Usage: test_dut_session.sh DUT [valgrind]
set -euo pipefail
dut=$1
runner=()
if [ "${2:-}" = valgrind ]; then
    runner=(valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all
            --error-exitcode=99)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
    printf 'hello\nops\nhelp\n\n   \nfoo\nHELLO\nhello x\nrun\nrun n=0\nrun n=abc\nrun n=1 n=1\n'
    printf 'prep\nprep nope\nprep x y z\nprep a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9\n'
    printf 'idle ms=0\nidle ms=2\nmark cycles=0\nmark cycles=1000\n'
    head -c 3000 /dev/zero | tr '\0' 'x'; printf '\n'
    printf 'a\0b\nhel\rlo\n\xff\xfe\x80\n\x1b[2J\n'
    head -c 20000 /dev/urandom
    printf '\nhello\n'
    # The first op of the catalogue, prepared at its smallest size and run (when there is one).
    printf 'run n=2\n'
} >"$tmp/in"

"${runner[@]}" "$dut" --stdio <"$tmp/in" >"$tmp/out"
requests=$(tr -cd '\n' <"$tmp/in" | wc -c)
replies=$(wc -l <"$tmp/out")
if [ "$requests" -ne "$replies" ]; then
    echo "FAILED: $requests request lines but $replies reply lines" >&2
    exit 1
fi
if grep -v -E '^\{"ok":(true|false),.*\}$' "$tmp/out" >&2; then
    echo "FAILED: reply lines above are not JSON objects starting with \"ok\"" >&2
    exit 1
fi
tail -n 2 "$tmp/out" | head -n 1 | grep -q '"protocol":1' || { echo "FAILED: no hello after the noise" >&2; exit 1; }
echo "$requests requests, $replies replies, exit 0"
