"""Every test sees an empty calibration store and an empty cache unless it sets its own: a
record an operator keeps in fixtures/calibration must not change what the tests measure. Set
at import, so the environment copies test modules make when they are imported carry it too.

A test that needs a bench unlike fixtures/sim.toml builds it in code: ``sim_fixture(**{
"sim.power.gain_error": 0.05})`` (dotted keys, :func:`support.fixtures.write_fixture`), never
by editing the fixture's text."""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.fixtures import write_fixture

# The fast and slow tiers (make check, make test) and the check that a fast test starts no bench;
# the report's figures drawn once per process for the modules that opt in (support/report_memo.py);
# make test's two lanes, the benches apart from the CPU-bound rest (support/lanes.py).
pytest_plugins = ["support.tiers", "support.report_memo", "support.lanes"]


def _own_dir(prefix: str) -> str:
    """A temporary directory of this test process's, removed when it exits."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


os.environ["ENERGYRIG_CALIBRATION_DIR"] = _own_dir("rig-test-calibration-")
# Nor may the catalogue `rig ops` keeps in the operator's cache (energyrig.rig.opscache).
os.environ["ENERGYRIG_CACHE_DIR"] = _own_dir("rig-test-cache-")


@pytest.fixture
def sim_fixture(tmp_path: Path) -> Callable[..., Path]:
    """A builder of fixture files: ``sim_fixture(**{"sim.power.gain_error": 0.05})`` writes
    fixtures/sim.toml with that override as ``tmp_path/bench.toml`` (:func:`~support.fixtures.write_fixture`;
    ``base=`` another fixture of fixtures/, ``to=`` another path or name in tmp_path) and
    returns its path."""
    def build(base: str = "sim.toml", to: str | Path = "bench.toml", **overrides: Any) -> Path:
        return write_fixture(tmp_path / to, base, **overrides)

    return build


@pytest.fixture
def rig_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
            ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``rig_cli(*ARGS)`` runs ``rig ARGS`` through the console script's entry point (so the
    EnergyrigError -> exit 2 mapping is exercised) in the test's process: its exit code and
    streams as a child's, without a child python's second or two of imports."""
    from support.cli import rig_streams  # energyrig.cli.app: imported by the tests that run it

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        code, out, err = rig_streams(monkeypatch, capsys, *args)
        return subprocess.CompletedProcess(["rig", *args], code, out, err)
    return run
