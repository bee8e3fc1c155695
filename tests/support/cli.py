"""`rig` run as the console script runs it (its exit code and streams), on scripted benches:
shared by the CLI tests of the sweep's display and hints."""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.sweep import ScriptedBench, factory, make_plan

from energyrig.cli.app import main as rig_main
from energyrig.rig.sweep import boards

#: ``rig ARGS`` run in the test's process, its result as a child's (the ``rig_cli`` fixture of
#: tests/conftest.py).
RigCli = Callable[..., subprocess.CompletedProcess[str]]


def rig(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run ``rig ARGS`` through its entry point; its exit code."""
    monkeypatch.setattr(sys, "argv", ["rig", *args])
    with pytest.raises(SystemExit) as exited:
        rig_main()
    return int(exited.value.code or 0)


def rig_streams(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                *args: str) -> tuple[int, str, str]:
    """Run ``rig ARGS`` through its entry point, in this process: its exit code, stdout and
    stderr (as a child's, without a child's seconds of start-up)."""
    capsys.readouterr()
    code = rig(monkeypatch, *args)
    out = capsys.readouterr()
    return code, out.out, out.err


def rig_output(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               *args: str) -> tuple[int, str]:
    """Run ``rig ARGS`` through its entry point: its exit code and what it printed (stdout,
    or stderr when it failed)."""
    code, out, err = rig_streams(monkeypatch, capsys, *args)
    return code, out if code == 0 else err


def on_scripted_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bench: ScriptedBench,
                      plan: str) -> None:
    """Sweeps of ``rig`` measure on ``bench``, from ``tmp_path`` holding ``plan.toml``."""
    monkeypatch.setattr(boards, "calibrated_benches", lambda calibration: factory(bench))
    make_plan(tmp_path, plan)
    monkeypatch.chdir(tmp_path)
