#!/usr/bin/env bash
# Installs what energyrig needs on a Debian machine: apt packages (only those missing),
# a virtual environment in .venv and the package itself (with its compiled kernels).
# Idempotent: a second run does nothing but check.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
    build-essential cmake ninja-build pkg-config   # the host firmware build and the kernels
    libmbedtls-dev                                 # the same mbedTLS the board runs
    python3 python3-venv python3-dev               # the rig
    sigrok-cli                                     # sigrok devices and the .sr reference
    clang                                          # libFuzzer target of the firmware parser
    libclang-rt-14-dev                             # libFuzzer and ASan runtimes for clang
    valgrind                                       # leak check of a hostile DUT session (ctest)
    chromium                                       # headless check of the report (Playwright)
    ser2net                                        # labgrid's exporter shares serial ports with it
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "installing apt packages: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# Reinstall only when the package description or a compiled kernel changed.
stamp=.venv/.energyrig-installed
if [ ! -f "$stamp" ] || [ -n "$(find pyproject.toml setup.py src -newer "$stamp" \( -name '*.c' -o -name '*.toml' -o -name 'setup.py' \) -print -quit)" ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e '.[test,lab]'
    # pyserial and labgrid's fork pyserial-labgrid install the same `serial` module; the fork
    # (a superset) must be the one in place: reinstall it last (pyproject.toml).
    .venv/bin/python -m pip install -q --force-reinstall --no-deps \
        "pyserial-labgrid==$(.venv/bin/python -c 'from importlib.metadata import version; print(version("pyserial-labgrid"))')"
    touch "$stamp"
fi
