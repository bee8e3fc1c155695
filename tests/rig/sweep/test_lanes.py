"""What the lanes of a lab sweep decide (:mod:`energyrig.rig.sweep.lanes`), on scripted benches.

Each slot is a scripted bench (:class:`support.sweep.ScriptedBench`, tests/support/sweep.py) that can
"die": from its K-th point on, the point fails, the bench no longer opens and the slot is no
longer alive, as a place whose exporter host was killed. The whole path through labgrid is
``tests/rig/sweep/test_lab_sweep.py``.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from support.sweep import SIM, DyingBench, ScriptedBench, ScriptedSlot, factory, make_plan

from energyrig.domain import Point
from energyrig.fixtures import load_fixture
from energyrig.results import RunWriter, load
from energyrig.rig.sweep.boards import survey
from energyrig.rig.sweep.execute import execute
from energyrig.rig.sweep.lanes import PointQueue
from energyrig.rig.sweep.state import NO_PLACE_LEFT
from energyrig.rig.sweep.stopping import StopRequest

PLAN = """
    [adaptive]
    min_windows = 2
    max_windows = 2
    [factors]
    op = ["sha256", "md5"]
    payload_bytes = [16, 64, 256]
    """


def lab_run(tmp_path: Path, slots: list[ScriptedSlot], plan_body: str = PLAN,
            stop: StopRequest | None = None):
    plan = make_plan(tmp_path, plan_body).with_seed()
    boards = survey(plan, [load_fixture(SIM)], factory(ScriptedBench()))
    with RunWriter.create(tmp_path / "run", plan=plan.record(), seed=plan.seed) as writer:
        outcome = execute(boards, writer, plan, stop=stop,
                          slots={"bench": slots})
    return outcome, load(tmp_path / "run").points


def test_points_spread_over_the_places_and_each_is_stored_once_with_its_place(
        tmp_path: Path) -> None:
    slots = [ScriptedSlot(n, DyingBench()) for n in ("a", "b")]
    outcome, points = lab_run(tmp_path, slots)
    assert (outcome.measured, outcome.failed, outcome.complete) == (6, 0, True)
    assert points["point_key"].is_unique and len(points) == 6
    assert set(points["place"]) == {"a", "b"}
    assert all(points["host"] == "host-" + points["place"])
    # a place measured exactly the points stored with its name
    for slot in slots:
        mine = set(points.loc[points["place"] == slot.name, "point_key"])
        assert mine == set(slot.bench.prepared)


def test_a_place_that_dies_mid_point_hands_the_point_to_another(tmp_path: Path) -> None:
    victim = ScriptedSlot("a", DyingBench(dies_at=2))
    outcome, points = lab_run(tmp_path, [victim, ScriptedSlot("b", DyingBench(after=victim.gone))])
    assert (outcome.measured, outcome.failed, outcome.handed_over) == (6, 0, 1)
    assert outcome.complete
    assert points["point_key"].is_unique and (points["status"] == "ok").all()
    assert list(points["place"]).count("a") == 1          # its first point only
    assert victim.dead


def test_a_genuine_failure_on_a_live_place_is_stored_failed_where_it_ran(
        tmp_path: Path) -> None:
    slots = [ScriptedSlot(n, DyingBench()) for n in ("a", "b")]
    body = PLAN.replace('op = ["sha256", "md5"]', 'op = ["sha256", "broken"]')
    outcome, points = lab_run(tmp_path, slots, body)
    assert (outcome.measured, outcome.failed, outcome.handed_over) == (3, 3, 0)
    failed = points[points["status"] == "failed"]
    assert set(failed["reason"]) == {"broken: self-test failed"}
    assert failed["place"].notna().all()


def test_the_point_of_the_last_place_of_a_board_is_stored_failed_and_the_rest_left(
        tmp_path: Path) -> None:
    only = ScriptedSlot("a", DyingBench(dies_at=3))
    outcome, points = lab_run(tmp_path, [only])
    # two points measured, the third failed with the place, three never started
    assert (outcome.measured, outcome.failed, outcome.handed_over) == (2, 1, 0)
    assert not outcome.complete and outcome.remaining == 3
    assert outcome.stopped == NO_PLACE_LEFT
    failed = points[points["status"] == "failed"]
    assert len(failed) == 1
    assert "no place left can take board bench" in failed["reason"].iloc[0]


def test_a_stop_leaves_the_run_resumable_with_no_point_twice(tmp_path: Path) -> None:
    stop = StopRequest()
    slots = [ScriptedSlot(n, DyingBench(stop=stop, stop_after=3)) for n in ("a", "b")]
    outcome, points = lab_run(tmp_path, slots, stop=stop)
    assert not outcome.complete and outcome.stopped == "test"
    assert points["point_key"].is_unique
    assert outcome.measured == len(points) < 6


def test_the_queue_waits_for_a_point_that_may_come_back() -> None:
    p1, p2 = (Point(op="sha256", board="x", payload_bytes=n) for n in (16, 64))
    q = PointQueue([p1, p2], {"x": 2})
    assert q.take("x") == p1 and q.take("x") == p2
    assert q.give_back("x", p2)            # p2's lane died: first in line again
    assert q.take("x") == p2
    q.done("x")
    q.done("x")
    assert q.take("x") is None
    lonely = PointQueue([p1], {"x": 1})
    assert lonely.take("x") == p1
    assert not lonely.give_back("x", p1)   # no lane of x is left: not queued again
    assert lonely.take("x") is None


@pytest.mark.parametrize("bad", ["", " , "])
def test_places_must_be_named(bad: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from energyrig.cli.app import app

    result = CliRunner().invoke(app, ["sweep", "plans/quick.toml", "--lab", "127.0.0.1:1",
                                      "--places", bad, "--out", str(tmp_path / "r")])
    assert result.exit_code == 2 and "--lab HOST:PORT and --places" in result.output
