#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Fetch the source of mbedTLS 3.6 -- the LTS that Zephyr's mbedTLS module ships, which the
# boards use -- and print the directory that holds it (its include/ and library/).
#
# It comes from crates.io: the mbedtls-rs-sys crate vendors its source (3.6.5 in 0.3.1),
# fetched with cargo into cargo's own cache (CARGO_HOME). Nothing is installed; the
# throwaway package that depends on it is written under WORKDIR. Used by mbedtls36.sh (the
# host build against 3.6) and by the Cortex-M4 build (port/qemu-m4, `make firmware-qemu`).
#
# usage: firmware/tests/mbedtls36-source.sh WORKDIR
set -eu

work=$(mkdir -p "$1" && cd "$1" && pwd)
crate=mbedtls-rs-sys
version=0.3.1

mkdir -p "$work/fetch/src"
cat > "$work/fetch/Cargo.toml" <<TOML
[package]
name = "er-mbedtls36-fetch"
version = "0.0.0"
edition = "2021"

[dependencies]
$crate = "=$version"
TOML
: > "$work/fetch/src/lib.rs"
(cd "$work/fetch" && cargo fetch --quiet)
src=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d \
	-name "$crate-$version" | head -n 1)
if [ -z "$src" ] || [ ! -f "$src/mbedtls/include/mbedtls/build_info.h" ]; then
	echo "mbedtls36-source.sh: $crate $version has no mbedtls source under ${CARGO_HOME:-$HOME/.cargo}" >&2
	exit 1
fi
echo "$src/mbedtls"
