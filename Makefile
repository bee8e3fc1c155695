# The two commands of the README (both install the locked set, requirements/lock.txt):
#   make run   installs what is needed and runs the main job on the simulated bench
#   make test  installs what is needed and runs every test (C and Python)
# and, while working on the code:
#   make check runs the fast tier: every unit and contract test, no bench started (meant to
#              take under a minute; the tests marked slow run in make test: tests/README.md)
.PHONY: run test check deps lock firmware-host firmware-qemu firmware-zephyr firmware-footprint test-mbedtls36 clean

VENV := .venv
RIG := $(VENV)/bin/rig
PY := $(VENV)/bin/python
HOST_BUILD := build/host
QEMU_BUILD := build/qemu-m4
# pytest with its bytecode (the modules' and the tests' rewritten assertions) cached under
# build/pycache, out of the source tree: where PYTHONDONTWRITEBYTECODE=1 is set (an empty value
# unsets it), every run would compile them all again (docs/performance.md, the suite's time).
PYTEST := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/build/pycache $(PY) -m pytest

# runs/quick is replaced on each `make run` (rig sweep --overwrite says so). The simulated
# bench is calibrated first, unattended, as an operator would before a sweep. Its DUT is the
# emulated Cortex-M4 (RUN_FIXTURE): windows of the board's cycles at its clock, so every
# point meets the plan's CI target, faster than on the host DUT (fixtures/sim.toml, for what
# only it can do: docs/performance.md, benchmarks/m4_vs_host.py). RUN_FIXTURE=fixtures/sim.toml
# make run runs the host DUT's bench instead.
RUN_FIXTURE := fixtures/sim-m4.toml
run: deps firmware-host firmware-qemu
	$(RIG) calibrate all --yes -f $(RUN_FIXTURE)
	@# exit 3: complete with failed points (stored as failed, with the reason): report them too
	$(RIG) sweep plans/quick.toml -f $(RUN_FIXTURE) --out runs/quick --overwrite; status=$$?; \
	  [ $$status -eq 0 ] || [ $$status -eq 3 ] || exit $$status
	$(RIG) report runs/quick
	@echo "open runs/quick/report/report.html (the run's tables: runs/quick/*.parquet)"

# Every test, on TEST_WORKERS processes (pytest-xdist) in two lanes (tests/support/lanes.py):
# the tests marked slow, which start a bench and wait on its real time more than they compute,
# on BENCH_WORKERS of them, a file's on one, two benches at a time (three at a time beside two
# busy loops starved a PPK2 stream's reader until its emulator overflowed and a point failed,
# in one of four .ci/run passes: docs/performance.md, "make check on three workers"); every
# other test, CPU-bound (reports, fuzzing, the firmware's C tests under valgrind), on the
# others, niced, in the CPU those benches leave (docs/performance.md, "Two lanes").
TEST_WORKERS := 4
BENCH_WORKERS := 2
test: deps firmware-host firmware-qemu
	$(PYTEST) -n $(TEST_WORKERS) --bench-workers $(BENCH_WORKERS)

# A test that starts a bench (DUT, QEMU, an emulator's process, a lab) and is not marked slow
# fails, saying so (tests/support/tiers.py): this tier needs no firmware built. A test marked
# pipeline (a whole report drawn, a browser, `rig report` in a child) runs in make test only.
# The tier runs on CHECK_WORKERS processes (pytest-xdist; its tests share no path or port), each
# test file on one of them (its module-scoped fixtures built once): three, since the tier's own
# waits (a stream read late, a child's start) leave the cores partly idle on two workers
# (docs/performance.md, "make check on three workers"). It fuzzes each reader with
# CHECK_FUZZ_EXAMPLES damaged files (make test: 60, tests/test_fuzz.py), and kills the run
# store's writer at one moment of each kind (make test: every moment, tests/results/test_kill_store.py).
CHECK_WORKERS := 3
CHECK_FUZZ_EXAMPLES := 15
check: deps
	ENERGYRIG_FUZZ_EXAMPLES=$(CHECK_FUZZ_EXAMPLES) ENERGYRIG_KILL_MOMENTS=kinds \
	  $(PYTEST) -q -n $(CHECK_WORKERS) --dist loadfile \
	  -m "not slow and not pipeline"

deps:
	VENV=$(VENV) ./scripts/install-deps.sh

# A new lock (requirements/lock.txt): the newest versions pyproject.toml allows, installed
# and tested (`make test`); commit it when the tests pass. README.md, "Locked installs".
lock:
	./scripts/refresh-lock.sh

firmware-host:
	cmake -S firmware/port/host -B $(HOST_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(HOST_BUILD)

# The firmware for QEMU's MPS2 AN386 (Cortex-M4), bare metal (firmware/port/qemu-m4): Debian's
# arm-none-eabi GCC and newlib, Mbed TLS 3.6 from crates.io (cargo's cache; fetched once,
# when the build directory is configured). tests/firmware/test_firmware_m4.py runs it on QEMU.
firmware-qemu:
	@test -f $(QEMU_BUILD)/build.ninja || cmake -S firmware/port/qemu-m4 -B $(QEMU_BUILD) -G Ninja \
	  -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/firmware/port/qemu-m4/arm-none-eabi.cmake \
	  -DER_MBEDTLS_SOURCE_DIR="$$(firmware/tests/mbedtls36-source.sh build/mbedtls36)"
	cmake --build $(QEMU_BUILD)

# The firmware for a Zephyr board with your own Zephyr workspace (firmware/README.md):
#   ZEPHYR_BASE=~/zephyrproject/zephyr make firmware-zephyr BOARD=nrf52840dk/nrf52840
# Outside a west workspace, also ZEPHYR_MODULES="<mbedtls>;<cmsis>;<hal>;...". Output in
# build/zephyr/<board with / as _>/zephyr/.
ZEPHYR_BUILD = build/zephyr/$(subst /,_,$(BOARD))
firmware-zephyr:
	@test -n "$(BOARD)" || { echo "usage: make firmware-zephyr BOARD=<board target>"; exit 2; }
	@test -f "$$ZEPHYR_BASE/VERSION" || { echo "ZEPHYR_BASE must name a Zephyr tree (firmware/README.md)"; exit 2; }
	cmake -G Ninja -S firmware -B $(ZEPHYR_BUILD) -DBOARD=$(BOARD)
	cmake --build $(ZEPHYR_BUILD)

# Flash and RAM per op of that build (firmware/README.md): the firmware with an empty
# catalogue, then each op alone (ER_OPS_ONLY), into $(ZEPHYR_BUILD)/footprint.json. The
# build directory ends with the whole catalogue again.
firmware-footprint: deps firmware-zephyr
	$(PY) -m energyrig.cli.footprint $(ZEPHYR_BUILD)

# The firmware and its C tests built against mbedTLS 3.6 LTS, the one Zephyr's module ships
# (needs cargo: the source comes from a crates.io package). Not part of `make test`.
test-mbedtls36:
	firmware/tests/mbedtls36.sh

clean:
	rm -rf build $(VENV)
	find src -name "*.so" -delete
