"""What a sweep tells its caller (:mod:`energyrig.rig.sweep.events`): the events of a local
and of a lab sweep on scripted benches, the stop a signal asks for, and how ``rig sweep``
shows them (rich, or ``--json`` lines a program can parse)."""
from __future__ import annotations

import io
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from support.sweep import DyingBench, ScriptedSlot
from support.sweep import SIM, ScriptedBench, factory, make_plan

from energyrig.cli.app import main as rig_main
from energyrig.cli.sweepview import SweepDisplay
from energyrig.fixtures import load_fixture
from energyrig.results import RunWriter, load
from energyrig.rig.sweep import boards
from energyrig.rig.sweep.boards import survey
from energyrig.rig.sweep.events import (
    LaneClosed,
    LaneOpened,
    PlaceGone,
    PointStarted,
    PointStored,
    StopRequested,
    SweepEvent,
    SweepFinished,
    SweepStarted,
    WindowMeasured,
)
from energyrig.rig.sweep.execute import execute
from energyrig.rig.sweep.run import start_sweep
from energyrig.rig.sweep.stopping import StopRequest

PLAN = """
    [adaptive]
    min_windows = 3
    max_windows = 4
    [factors]
    op = ["sha256", "broken"]
    payload_bytes = [16, 64]
    """


class Collect:
    """A reporter that keeps every event (from any thread)."""

    def __init__(self) -> None:
        self.events: list[SweepEvent] = []
        self._lock = threading.Lock()

    def report(self, event: SweepEvent) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def test_a_sweep_reports_each_point_from_its_start_to_its_store(tmp_path: Path) -> None:
    seen = Collect()
    outcome = start_sweep(make_plan(tmp_path, PLAN), tmp_path / "run", fixture=load_fixture(SIM),
                          bench_factory=factory(ScriptedBench()), reporter=seen)
    first, last = seen.events[0], seen.events[-1]
    assert isinstance(first, SweepStarted) and (first.total, first.already_done) == (4, 0)
    assert isinstance(last, SweepFinished) and last.outcome is outcome
    stored = seen.of(PointStored)
    points = load(tmp_path / "run").points
    assert sorted(e.point.key for e in stored) == sorted(points["point_key"])
    assert {e.point.key: e.status for e in stored} == \
        {k: ("failed" if s == "failed" else "ok" if not f else "flagged")
         for k, s, f in zip(points["point_key"], points["status"],
                            points["flag_list"], strict=True)}
    assert [e.reason for e in stored if e.status == "failed"] == \
        ["broken: self-test failed"] * outcome.failed == ["broken: self-test failed"] * 2
    for e in stored:  # each point: started, then its windows one by one, then stored
        mine = [x for x in seen.events if getattr(x, "point", None) == e.point]
        assert isinstance(mine[0], PointStarted) and mine[-1] is e
        windows = [x.windows for x in mine if isinstance(x, WindowMeasured)]
        assert windows == list(range(1, len(windows) + 1))
        assert (len(windows) >= 3) == (e.status != "failed")
    assert all(e.place == "" for e in stored)


def test_a_lab_sweep_reports_its_lanes_and_the_place_that_died(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, PLAN.replace('"broken"', '"md5"')).with_seed()
    victim = ScriptedSlot("a", DyingBench(dies_at=2))
    slots = [victim, ScriptedSlot("b", DyingBench(after=victim.gone))]
    seen = Collect()
    found = survey(plan, [load_fixture(SIM)], factory(ScriptedBench()))
    with RunWriter.create(tmp_path / "run", plan=plan.record(), seed=plan.seed) as writer:
        outcome = execute(found, writer, plan, reporter=seen, slots={"bench": slots})
    assert outcome.handed_over == 1 and outcome.complete
    assert sorted(e.place for e in seen.of(LaneOpened)) == ["a", "b"]
    assert sorted(e.place for e in seen.of(LaneClosed)) == ["a", "b"]
    # its bench would not reopen after the failed point, then that point went to b
    opening, handing = seen.of(PlaceGone)
    assert {(g.place, g.host) for g in (opening, handing)} == {("a", "host-a")}
    assert opening.handed_over is None and "connection refused" in opening.reason
    stored = seen.of(PointStored)
    assert handing.handed_over in [e.point for e in stored if e.place == "b"]
    points = load(tmp_path / "run").points
    assert {e.point.key: e.place for e in stored} == dict(zip(points["point_key"],
                                                             points["place"], strict=True))


def test_a_signal_is_reported_as_a_stop_request() -> None:
    seen = Collect()
    stop = StopRequest()
    with stop.handle_signals(seen):
        os.kill(os.getpid(), signal.SIGINT)
        stop.wait(5.0)  # the handler runs in this thread before the wait returns
    assert seen.events == [StopRequested("SIGINT")] and stop.reason == "SIGINT"


def test_the_display_draws_failures_gone_places_and_the_outcome(tmp_path: Path) -> None:
    console = Console(record=True, width=200, file=io.StringIO())
    with SweepDisplay(console) as display:
        start_sweep(make_plan(tmp_path, PLAN), tmp_path / "run", fixture=load_fixture(SIM),
                    bench_factory=factory(ScriptedBench()), reporter=display)
        display.report(PlaceGone("bench-a", "10.0.0.7", "connection refused"))
    shown = console.export_text()
    assert shown.count("failed sha256") == 0 and shown.count("failed broken") == 2
    assert "broken: self-test failed" in shown
    assert "place bench-a (10.0.0.7) is gone: connection refused" in shown
    assert f"run {tmp_path / 'run'}: 2 points measured, 2 failed" in shown


def test_rig_sweep_json_writes_one_parsable_event_per_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(boards, "calibrated_benches",
                        lambda calibration: factory(ScriptedBench()))
    make_plan(tmp_path, PLAN)  # writes plan.toml
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["rig", "sweep", "plan.toml", "--out", "run", "--fixture",
                                      str(SIM), "--allow-uncalibrated", "--json"])
    with pytest.raises(SystemExit) as exited:
        rig_main()
    assert exited.value.code == 3  # complete, with failed points
    lines = capsys.readouterr().out.splitlines()
    events = [json.loads(line) for line in lines]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "sweep_started" and kinds[-1] == "sweep_finished"
    assert events[0]["total"] == 4
    stored = [e for e in events if e["event"] == "point_stored"]
    points = load(tmp_path / "run").points
    assert sorted(e["point"]["key"] for e in stored) == sorted(points["point_key"])
    assert {e["status"] for e in stored} <= {"ok", "flagged", "failed"}
    windows = [e for e in events if e["event"] == "window_measured"]
    assert windows and all(e["readout"]["net_energy_per_op_j"] > 0 for e in windows)
    finished = events[-1]["outcome"]
    assert (finished["measured"], finished["failed"], finished["complete"]) == (2, 2, True)
    assert finished["run_dir"] == "run"
