"""The suite's two tiers (tests/support/tiers.py): a test not marked slow that starts a bench
fails, saying to mark it, even where it catches the failure; a test marked slow, or one that
requests a bench fixture, may start one, and ``-m "not slow"`` (make check) leaves it out; the
fast tier (``-m "not slow and not pipeline"``) leaves out a test that drives a browser
(PIPELINE_FIXTURES) without its module marking it."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.paths import ROOT
from support.tiers import bench_program

from energyrig.instruments.sim.process import python_module, tethered

TESTS = ROOT / "tests"


@pytest.mark.parametrize("argv, starts", [
    (["build/host/energyrig-dut", "--pty"], True),
    (["/r/firmware/port/qemu-m4/energyrig-m4-dut", "--pty"], True),
    ("qemu-system-arm -M mps2-an386 -nographic", True),
    (tethered(["/r/.venv/bin/labgrid-coordinator", "-l", "127.0.0.1:1"]), True),
    ([*python_module("energyrig.cli.emulate"), "energyrig.instruments.ppk2.emulator"], True),
    ([*python_module("energyrig.cli.labsim"), "--bench", "bench-a"], True),
    ([sys.executable, "-m", "energyrig.cli.app", "-q", "sweep", "plan.toml"], True),
    ([sys.executable, "-c", "from energyrig.cli.app import main; main()", "run"], True),
    ([sys.executable, "/usr/sbin/ser2net", "-n"], True),
    ([sys.executable, "-m", "energyrig.cli.app", "analyze", "capture.csv"], False),
    ([sys.executable, "-c", "from energyrig.cli.app import main; main()", "report"], False),
    (["arm-none-eabi-size", "build/host/energyrig-dut"], False),
    (["git", "rev-parse", "HEAD"], False),
    ([b"sigrok-cli", b"--version"], False),
])
def test_a_bench_is_told_from_other_children_by_its_command_line(argv, starts: bool) -> None:
    assert (bench_program(argv) is not None) == starts


def _inner_suite(tmp_path: Path) -> Path:
    dut = tmp_path / "energyrig-dut"           # a DUT by its name, that ends at once
    dut.write_text("#!/bin/sh\nexit 0\n")
    dut.chmod(0o755)
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["support.tiers"]\n')
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(f"""\
        import subprocess
        import pytest

        DUT = {str(dut)!r}

        def test_unmarked():
            subprocess.run([DUT, "--pty"], check=True)

        def test_unmarked_catching():
            try:
                subprocess.run([DUT, "--pty"], check=True)
            except BaseException:
                pass

        @pytest.mark.slow
        def test_marked():
            subprocess.run([DUT, "--pty"], check=True)

        @pytest.fixture(scope="module")
        def bench():
            subprocess.run([DUT, "--pty"], check=True)
            yield DUT

        def test_with_a_bench_fixture(bench):
            assert bench == DUT

        def test_other_children():
            subprocess.run(["true"], check=True)
        """))
    return tmp_path


def _pytest(suite: Path, *args: str) -> str:
    """The output of pytest run on ``suite`` in a child, with the tiers' plugin and no other
    (the plugins installed beside pytest load in 2 s, and none is needed here)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
                           "-o", "markers=slow", "--rootdir", str(suite), *args, str(suite)],
                          capture_output=True, text=True, cwd=suite, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS),
                               "PYTHONDONTWRITEBYTECODE": "1",
                               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    return done.stdout


def test_an_unmarked_test_that_starts_a_bench_fails_and_a_marked_one_runs(tmp_path: Path) -> None:
    out = _pytest(_inner_suite(tmp_path))
    dut = tmp_path / "energyrig-dut"
    assert (f"test_inner.py::test_unmarked starts the bench program {dut} but is not marked "
            "slow: mark it @pytest.mark.slow") in out
    assert "ERROR at teardown of test_unmarked_catching" in out
    assert f"test_inner.py::test_unmarked_catching started the bench program {dut}" in out
    for passed in ("test_marked", "test_with_a_bench_fixture", "test_other_children"):
        assert f"PASSED test_inner.py::{passed}" in out
    assert "1 failed, 4 passed, 1 error" in out  # the catching test's call passed


def test_the_fast_tier_leaves_out_the_marked_tests_and_the_bench_fixtures(tmp_path: Path
                                                                          ) -> None:
    out = _pytest(_inner_suite(tmp_path), "-m", "not slow")
    assert "1 failed, 2 passed, 2 deselected, 1 error" in out
    assert "PASSED test_inner.py::test_other_children" in out
    assert "test_marked" not in out and "test_with_a_bench_fixture" not in out


def test_a_test_that_requests_the_browser_is_left_out_of_the_fast_tier(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["support.tiers"]\n')
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""\
        import pytest

        @pytest.fixture(scope="module")
        def browser():
            return "a browser"

        def test_in_a_browser(browser):
            assert browser

        def test_unit():
            assert True
        """))
    out = _pytest(tmp_path, "-m", "not slow and not pipeline")
    assert "PASSED test_inner.py::test_unit" in out
    assert "test_in_a_browser" not in out
    assert "1 passed, 1 deselected" in out
