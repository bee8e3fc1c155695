"""A sweep says what to do next and why a count went back (issue 23, 10): a complete run with
a failed point, resumed or not, exits 3 and prints the exact `--retry-failed` command; a
point whose batch changed says so where its window count restarts."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from support.cli import on_scripted_bench, rig
from support.sweep import SIM, ScriptedBench, factory, make_plan

from energyrig.cli.sweepview import SweepDisplay
from energyrig.fixtures import load_fixture
from energyrig.rig.sweep.events import BatchChanged, SweepEvent, WindowMeasured
from energyrig.rig.sweep.run import start_sweep

PLAN = """
    [adaptive]
    min_windows = 3
    max_windows = 3
    [factors]
    op = ["sha256", "broken"]
    payload_bytes = [16]
    """


@pytest.mark.parametrize("as_json", [False, True])
def test_a_finished_run_with_a_failed_point_says_how_to_retry_it(
        as_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    on_scripted_bench(tmp_path, monkeypatch, ScriptedBench(), PLAN)
    run_dir = "my run"  # a path the shell needs quoted
    json_opt = ["--json"] if as_json else []
    assert rig(monkeypatch, "sweep", "plan.toml", "--out", run_dir, "--fixture", str(SIM),
               "--allow-uncalibrated", *json_opt) == 3
    command = "rig sweep --resume 'my run' --retry-failed"
    assert command in capsys.readouterr().err
    # resuming the finished run measures nothing and says the same
    assert rig(monkeypatch, "sweep", "--resume", run_dir, "--allow-uncalibrated",
               *json_opt) == 3
    captured = capsys.readouterr()
    assert command in captured.err and "1 point of the run failed" in captured.err
    if as_json:
        assert all(json.loads(line) for line in captured.out.splitlines())
    # the command as printed is what the operator types: it runs and measures it again
    assert rig(monkeypatch, "sweep", "--resume", run_dir, "--retry-failed",
               "--allow-uncalibrated") == 3
    assert "measuring 1 failed points again" in capsys.readouterr().err


class Collect:
    def __init__(self) -> None:
        self.events: list[SweepEvent] = []

    def report(self, event: SweepEvent) -> None:
        self.events.append(event)


GROWS = """
    [adaptive]
    min_windows = 3
    max_windows = 4
    [factors]
    op = ["grows"]
    payload_bytes = [16]
    """


def test_a_batch_change_is_an_event_before_the_count_restarts(tmp_path: Path) -> None:
    seen = Collect()
    start_sweep(make_plan(tmp_path, GROWS), tmp_path / "run", fixture=load_fixture(SIM),
                bench_factory=factory(ScriptedBench()), reporter=seen)
    kinds = [(type(e).__name__, getattr(e, "windows", None)) for e in seen.events
             if isinstance(e, (WindowMeasured, BatchChanged))]
    # the scripted op doubles its batch in its second window: windows start over at 1
    assert kinds[:3] == [("WindowMeasured", 1), ("BatchChanged", None), ("WindowMeasured", 1)]
    changed = next(e for e in seen.events if isinstance(e, BatchChanged))
    assert (changed.old, changed.new) == (10, 20)
    windows = [e for e in seen.events if isinstance(e, WindowMeasured)]
    assert [e.readout.batch_n for e in windows[:2]] == [10, 20]


def test_the_display_says_why_the_window_count_went_back(tmp_path: Path) -> None:
    console = Console(width=80, file=io.StringIO(), record=True)
    shown: list[str] = []

    class Snapshot(SweepDisplay):
        def report(self, event: SweepEvent) -> None:
            super().report(event)
            if isinstance(event, WindowMeasured):
                snap = Console(width=80, file=io.StringIO(), record=True)
                snap.print(self)
                shown.append(snap.export_text())

    with Snapshot(console) as display:
        start_sweep(make_plan(tmp_path, GROWS), tmp_path / "run", fixture=load_fixture(SIM),
                    bench_factory=factory(ScriptedBench()), reporter=display)
    assert "[1/4]" in shown[0] and "batch" not in shown[0]
    assert "[1/4]" in shown[1] and "(batch 10 -> 20, windows restart)" in shown[1]
