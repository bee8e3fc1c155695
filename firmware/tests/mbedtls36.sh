#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Build the host firmware against mbedTLS 3.6 -- the LTS that Zephyr's mbedTLS module ships,
# which the boards use -- and run the firmware's C tests with it. Zephyr cannot be built
# here; this checks that every op and er_mbedtls_compat.h compile without warnings and pass
# their known-answer tests on the boards' mbedTLS, not only on Debian's 2.28.
#
# mbedTLS 3.6 comes from crates.io (mbedtls36-source.sh). Nothing is installed outside the
# work directory.
#
# usage: firmware/tests/mbedtls36.sh [WORKDIR]   (default build/mbedtls36)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
work=$(mkdir -p "${1:-build/mbedtls36}" && cd "${1:-build/mbedtls36}" && pwd)
src=$("$here/mbedtls36-source.sh" "$work")
grep -h 'define MBEDTLS_VERSION_STRING ' "$src/include/mbedtls/build_info.h"

# The library, with its default configuration, installed into the work directory.
cmake -S "$src" -B "$work/mbedtls" -G Ninja -DCMAKE_BUILD_TYPE=Release \
	-DENABLE_TESTING=OFF -DENABLE_PROGRAMS=OFF -DMBEDTLS_FATAL_WARNINGS=OFF \
	-DCMAKE_INSTALL_PREFIX="$work/prefix" > "$work/mbedtls.log"
ninja -C "$work/mbedtls" install >> "$work/mbedtls.log"

# The host firmware and its tests against it (-Werror as always).
cmake -S "$here/../port/host" -B "$work/host" -G Ninja -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_PREFIX_PATH="$work/prefix" > "$work/host.log"
ninja -C "$work/host" >> "$work/host.log"
grep -q "MBEDTLS_INCLUDE_DIR:PATH=$work/prefix/include" "$work/host/CMakeCache.txt" || {
	echo "mbedtls36.sh: the host build did not pick up mbedTLS 3.6" >&2
	exit 1
}
cd "$work/host"
ctest --output-on-failure
