"""The firmware's C tests (firmware/tests, ``ctest`` on the host build ``make firmware-host``
makes): every op's known-answer self-test, the protocol, a hostile DUT session and the
catalogue under valgrind, each op's window holding its work alone.

They run as one test of the slow tier, so that ``make test`` runs them beside the Python
benches, which wait on real time more than they compute, instead of before them (8-9 s of the
suite's wall time, measured side by side: docs/performance.md, "A corrupt sample at a window's
or a chunk's edge; ctest beside the benches"). Marked ``cpu``: valgrind keeps no time, so
they run on a niced worker of the CPU lane (tests/support/lanes.py). ``ctest --test-dir
build/host`` runs them alone, as firmware/port/host/README.md says.
"""
from __future__ import annotations

import re
import subprocess

import pytest
from support.paths import ROOT

HOST_BUILD = ROOT / "build" / "host"

pytestmark = [pytest.mark.slow, pytest.mark.cpu, pytest.mark.timeout(900)]


def test_every_c_test_of_the_host_build_passes() -> None:
    assert (HOST_BUILD / "CTestTestfile.cmake").is_file(), (
        f"no host build in {HOST_BUILD}: make firmware-host (make test builds it)")
    done = subprocess.run(["ctest", "--test-dir", str(HOST_BUILD), "--output-on-failure",
                           "-j", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = re.search(r"100% tests passed, 0 tests failed out of (\d+)", done.stdout)
    assert passed and int(passed[1]) > 0, done.stdout
