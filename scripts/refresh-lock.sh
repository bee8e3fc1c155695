#!/usr/bin/env bash
# Refreshes requirements/lock.txt, the locked set scripts/install-deps.sh installs: the
# newest versions pyproject.toml's ranges allow (with the test and lab extras) and the
# build tools of requirements/tools.in, each with its files' sha256 hashes, for the
# Python and machine of the project (CPython 3.11, x86_64 Linux: Debian 12's). Then
# `make test` installs exactly that set (the lock changed, so the venv is synced again) and
# runs every test against it. Commit the lock when they pass (`make lock` runs this).
#
#   scripts/refresh-lock.sh              every dependency to its newest allowed version
#   scripts/refresh-lock.sh -P numpy     only numpy (uv's --upgrade-package), the rest kept
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9               # the resolver; a registry package with its binary inside
TOOLS=build/lock-tools          # its own venv, apart from the project's
PYTHON=${PYTHON:-python3}
if [ ! -x "$TOOLS/bin/uv" ] || [ "$("$TOOLS/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    "$PYTHON" -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install -q "uv==$UV_VERSION"
fi
upgrade=(--upgrade)
if (($#)); then
    upgrade=()
    while (($#)); do
        [ "$1" = -P ] && [ $# -ge 2 ] || { echo "usage: $0 [-P PACKAGE]..." >&2; exit 2; }
        upgrade+=(--upgrade-package "$2")
        shift 2
    done
fi
"$TOOLS/bin/uv" pip compile pyproject.toml requirements/tools.in --extra test --extra lab \
    --generate-hashes --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
    --custom-compile-command "scripts/refresh-lock.sh" --quiet "${upgrade[@]}" \
    -o requirements/lock.txt
make test
