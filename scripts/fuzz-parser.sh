#!/usr/bin/env bash
# Builds the firmware protocol parser's libFuzzer target (clang, ASan, UBSan) and runs it.
#   scripts/fuzz-parser.sh SECONDS [extra libFuzzer flags]
# The growing corpus is kept in build/fuzz/corpus; a crash leaves its input in build/fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
    echo "usage: $0 SECONDS [libFuzzer flags...]" >&2
    exit 2
fi
seconds=$1
shift
cmake -S firmware/fuzz -B build/fuzz -G Ninja -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build build/fuzz
mkdir -p build/fuzz/corpus
cd build/fuzz
exec ./fuzz_parser -max_total_time="$seconds" -max_len=2048 -print_final_stats=1 \
    -dict=../../firmware/fuzz/parser.dict "$@" corpus ../../firmware/fuzz/corpus
