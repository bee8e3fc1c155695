"""What a sweep costs beyond its windows (issue 24 part 3): its points are measured and stored
without importing scipy (the t quantile is :mod:`energyrig.results.student`'s; scipy only
where a report's statistics need it), a one-board sweep measures on the bench its survey
opened instead of starting it twice, and the simulated bench's point flags (the DUT's
``hello``) are asked while a record waits for the stream, not in a round trip of their own.
Scripted benches and DUTs only: no bench is started."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from typing import Any

from support.paths import ROOT, SIM
from support.pipeline import POINT
from support.pipeline import ScriptedBench as PipelineBench
from support.sweep import HASHES, ScriptedBench, make_plan, run

from energyrig.fixtures import load_fixture
from energyrig.fixtures.schema import Fixture
from energyrig.instruments.sim.flags import TRIGGER_DROPS
from energyrig.rig.bench import SimBench
from energyrig.rig.pipeline import measure_point, reps_done
from energyrig.rig.sweep.boards import KeptOpen

#: A child python that sweeps a scripted plan (measured, stored, consolidated) and prints
#: the statistics libraries then loaded.
SWEEP_CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from support.sweep import HASHES, ScriptedBench, make_plan, run
    import energyrig.cli.sweep, energyrig.rig.sweep.run  # the sweep command's modules
    tmp = Path(sys.argv[1])
    outcome = run(tmp, make_plan(tmp, HASHES), ScriptedBench(noise={"sha256": 1e-3}))
    assert outcome.complete and outcome.measured == 6, outcome
    print(sorted({m.split(".")[0] for m in sys.modules} & {"scipy", "statsmodels"}))
    """)


def test_a_sweep_measures_and_stores_its_points_without_scipy(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])}
    child = subprocess.run([sys.executable, "-c", SWEEP_CHILD, str(tmp_path)], env=env,
                           capture_output=True, text=True, check=False)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip().splitlines()[-1] == "[]"


def test_a_one_board_sweep_measures_on_the_bench_its_survey_opened(tmp_path: Path) -> None:
    bench = ScriptedBench()
    outcome = run(tmp_path, make_plan(tmp_path, HASHES), bench)
    assert outcome.complete and outcome.measured == 6
    assert bench.opened == 1


class Opener:
    """A bench factory that counts the benches it opened and those open now."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.open_now: list[str] = []
        self.most_open = 0

    @contextlib.contextmanager
    def __call__(self, fixture: Fixture) -> Iterator[ScriptedBench]:
        name = fixture.dut.board
        self.opened.append(name)
        self.open_now.append(name)
        self.most_open = max(self.most_open, len(self.open_now))
        try:
            yield ScriptedBench(board=name)
        finally:
            self.open_now.remove(name)


def test_kept_open_keeps_each_fixtures_first_bench_only_and_one_at_a_time() -> None:
    a = load_fixture(ROOT / "fixtures" / "sim.toml")
    b = a.model_copy(update={"dut": a.dut.model_copy(update={"board": "b"})})
    opener = Opener()
    with KeptOpen(opener) as kept:
        with kept(a) as surveyed_a:
            pass
        assert opener.open_now == [a.dut.board]  # kept open after its `with`
        with kept(b):                      # another fixture: the kept bench closes first
            assert opener.open_now == ["b"]
        with kept(b) as measured_b:        # the bench kept open, handed out again
            assert opener.opened == [a.dut.board, "b"]
        assert opener.open_now == []       # closed with the `with` that took it again
        with kept(b) as reopened_b:        # not b's first bench: a fresh start, not kept
            assert reopened_b is not measured_b
        assert opener.open_now == []
        with kept(a) as again_a:           # a's first bench was closed: a fresh one
            assert again_a is not surveyed_a
        assert opener.open_now == []
    assert opener.most_open == 1
    assert opener.opened == [a.dut.board, "b", "b", a.dut.board]


class LoggedReplies(PipelineBench):
    def after_reply(self) -> None:
        self.log.append("after_reply")


def test_each_recorded_request_is_followed_by_after_reply_before_its_collect() -> None:
    bench = LoggedReplies()
    assert measure_point(bench, POINT, until=reps_done(2), batch_n=500).ok
    recorded = [i for i, step in enumerate(bench.log) if step == "arm"]
    assert len(recorded) == 2
    for i in recorded:  # arm, run, after_reply, collect
        assert bench.log[i + 1].startswith("run") and bench.log[i + 2:i + 4] == [
            "after_reply", "collect"]


class HelloDut:
    """A DUT whose ``hello`` reports ``trigger_drops``; ``requests`` counts what it was asked."""

    def __init__(self) -> None:
        self.drops = 0
        self.requests = 0
        self.hellos = 0

    def hello(self) -> dict[str, Any]:
        self.requests += 1
        self.hellos += 1
        return {"trigger_drops": self.drops}


def test_point_flags_ask_hello_only_when_the_dut_was_asked_something_since_the_last() -> None:
    bench = SimBench(load_fixture(SIM))
    dut = HelloDut()
    bench._dut = dut  # type: ignore[assignment]
    dut.requests = 5                      # the bench's opening and a point's requests
    assert bench.point_flags() == [] and dut.hellos == 1
    dut.requests += 1                     # a recorded request: edges sent, 2 dropped
    dut.drops = 2
    bench.after_reply()                   # counted while the record waits
    assert dut.hellos == 2
    assert bench.point_flags() == [TRIGGER_DROPS] and dut.hellos == 2   # no round trip
    assert bench.point_flags() == [] and dut.hellos == 2                # counted once
    dut.requests += 1                     # asked something since (edges may have gone)
    dut.drops = 3
    assert bench.point_flags() == [TRIGGER_DROPS] and dut.hellos == 3
