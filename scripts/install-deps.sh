#!/usr/bin/env bash
# Installs what energyrig needs on a Debian machine: apt packages (only those missing),
# a virtual environment in .venv (VENV) holding exactly the locked Python distributions
# (requirements/lock.txt, scripts/refresh-lock.sh) and the package itself (with its
# compiled kernels).
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
    gcc-arm-none-eabi libnewlib-arm-none-eabi      # the firmware's Cortex-M4 build (firmware-qemu)
    qemu-system-arm                                # runs it: the emulated MPS2 AN386 (tests)
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# Mbed TLS 3.6's source for the Cortex-M4 build comes through cargo (firmware/tests/
# mbedtls36-source.sh): Debian's cargo where no Rust toolchain is on the PATH.
command -v cargo >/dev/null || missing+=(cargo)
if ((${#missing[@]})); then
    echo "installing apt packages: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}             # where the environment goes (a test makes one elsewhere)
LOCK=requirements/lock.txt      # every Python distribution, pinned with its hashes
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
# Reinstall only when the lock, the package description or a compiled kernel changed.
stamp=$VENV/.energyrig-installed
if [ ! -f "$stamp" ] || [ -n "$(find "$LOCK" pyproject.toml setup.py src -newer "$stamp" \( -name '*.c' -o -name '*.toml' -o -name 'setup.py' -o -name "$(basename "$LOCK")" \) -print -quit)" ]; then
    # Exactly the locked set: each file checked against its hash, no dependency resolved
    # here (the lock holds them all, pip and the build backend too), and whatever the venv
    # held that is not locked removed.
    "$PY" -m pip install -q --require-hashes --no-deps -r "$LOCK"
    extraneous=$("$PY" scripts/lockcheck.py "$LOCK" --extraneous)
    [ -z "$extraneous" ] || "$PY" -m pip uninstall -q -y $extraneous
    # pyserial and labgrid's fork pyserial-labgrid install the same `serial` module; the fork
    # (a superset) must be the one in place: reinstall it last (pyproject.toml).
    "$PY" scripts/lockcheck.py "$LOCK" --entry pyserial-labgrid > "$VENV/.pyserial-labgrid.txt"
    "$PY" -m pip install -q --require-hashes --no-deps --force-reinstall \
        -r "$VENV/.pyserial-labgrid.txt"
    # The package itself, editable, with its compiled kernels built by the locked setuptools.
    "$PY" -m pip install -q --no-deps --no-build-isolation -e .
    "$PY" scripts/lockcheck.py "$LOCK"
    touch "$stamp"
fi
