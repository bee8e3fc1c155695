"""The sweep executor: adaptive windows, failed points, stops between windows and exact
resume, first against a scripted bench (to place failures and stops precisely), then as a real
`rig sweep` process on the simulated bench, killed mid-run and resumed."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import psutil
import pytest
from support.paths import ROOT, SIM
from support.sweep import CATALOGUE, HASHES, Prepared, ScriptedBench, factory, make_plan, run
from support.fixtures import write_fixture

from energyrig.errors import ConfigError
from energyrig.fixtures import load_fixture
from energyrig.fixtures.paths import FIXTURE_DIRS_ENV
from energyrig.fixtures.schema import Fixture
from energyrig.domain import Point, Window
from energyrig.results import RunError, RunWriter, load
from energyrig.results.store.layout import CAPTURES, capture_path
from energyrig.results.footprint import Footprint, Memory, run_footprints, write_footprint
from energyrig.rig.plan import Target, expand, load_plan
from energyrig.rig.sweep.boards import survey
from energyrig.rig.sweep.dryrun import OpTiming, dry_run, read_target, time_ops
from energyrig.rig.sweep.run import resume_sweep, start_sweep
from energyrig.rig.sweep.stopping import StopRequest, enough_windows

if TYPE_CHECKING:
    from support.cli import RigCli


@pytest.fixture(autouse=True)
def _trust_test_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures these tests write run the host DUT: trust their directory."""
    monkeypatch.setenv(FIXTURE_DIRS_ENV, str(tmp_path))


def board_fixture(tmp_path: Path, board: str) -> Fixture:
    """fixtures/sim.toml as another board (a file, so a resume finds it again)."""
    return load_fixture(write_fixture(tmp_path / f"sim-{board}.toml", **{
        "dut.board": board, "name": f"sim-{board}"}))


# --- the adaptive rule --------------------------------------------------------------------

def test_windows_stop_when_the_interval_is_narrow(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, HASHES)
    bench = ScriptedBench(noise={"sha256": 1e-4, "md5": 0.3})
    outcome = run(tmp_path, plan, bench)
    assert outcome.complete and outcome.measured == 6
    pts = load(tmp_path / "run").points
    # the noisy op stopped at max_windows short of its target: flagged, and counted
    assert outcome.target_not_met == 3
    assert all("ci_target_not_met" in f for f in pts.query("op == 'md5'")["flag_list"])
    assert not any("ci_target_not_met" in f for f in pts.query("op == 'sha256'")["flag_list"])
    assert set(pts.loc[pts["op"] == "sha256", "n_windows"]) == {3}   # ±0.01 %: at the minimum
    assert set(pts.loc[pts["op"] == "md5", "n_windows"]) == {8}      # ±30 %: at the maximum


def test_windows_of_a_smaller_batch_are_dropped(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, "[factors]\nop = ['grows']\npayload_bytes = [8]",
                     head="batch = 7\n[adaptive]\nmin_windows = 3\nmax_windows = 3")
    run(tmp_path, plan, ScriptedBench())
    stored = load(tmp_path / "run")
    assert stored.points["batch_n"].tolist() == [14]
    assert stored.windows["batch_n"].tolist() == [14, 14, 14]
    assert stored.windows["energy_j"].to_numpy() == pytest.approx(14e-6)


def test_enough_windows_follows_the_t_interval(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, "[factors]\nop = ['md5']",
                     head="[adaptive]\nci_target = 0.01\nmin_windows = 2\nmax_windows = 50")

    def windows(values: list[float]) -> list[Window]:
        return [Window(0.0, 1.0, 100, v, 0.0) for v in values]

    # mean 1, s = 0.01, n = 4: half-width = t(0.975, 3) * 0.01 / 2 = 0.0159 > 1 %
    four = [1 - 0.01 * np.sqrt(0.75), 1 + 0.01 * np.sqrt(0.75)] * 2
    assert np.std(four, ddof=1) == pytest.approx(0.01)
    assert not enough_windows(windows(four), plan)
    # n = 8, same s: t(0.975, 7) * 0.01 / sqrt(8) = 0.0084 <= 1 %
    assert enough_windows(windows(four * 2), plan)
    assert not enough_windows(windows([1.0]), plan)
    assert enough_windows(windows([1.0, 2.0] * 25), plan)           # max_windows


# --- failures and skips -------------------------------------------------------------------

def test_failed_points_are_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, """
        [adaptive]
        min_windows = 3
        max_windows = 3
        [factors]
        op = ["broken", "hangs", "sha256", "aes-ecb-encrypt"]
        key_bits = [128, 512]
        payload_bytes = [64, 100]
        """)
    bench = ScriptedBench()
    outcome = run(tmp_path, plan, bench)
    assert (outcome.measured, outcome.failed, outcome.complete) == (3, 4, True)
    pts = load(tmp_path / "run").points.set_index("op")
    failed = pts[pts["status"] == "failed"]
    assert set(failed.index) == {"broken", "hangs"}
    assert set(failed.loc["broken", "reason"]) == {"broken: self-test failed"}
    assert set(failed.loc["hangs", "n_windows"]) == {1}     # the window before the hang is kept
    assert "did not answer" in failed.loc["hangs", "reason"].iloc[0]
    skipped = pts[pts["status"] == "skipped"]
    assert len(skipped) == outcome.skipped == 3        # aes: 3 of 4 (key, size)
    # Opened to survey (and measure on), and again after each failed point but a last one.
    last_failed = bench.prepared[-1].startswith(("op=broken", "op=hangs"))
    assert bench.opened == 1 + 4 - last_failed
    run_ = load(tmp_path / "run")
    assert run_.manifest["ended_at"] is not None and run_.manifest["seed"] == 7
    assert run_.manifest["plan"]["factors"][0]["op"][0] == "broken"
    assert run_.manifest["fixture"]["path"] == str(SIM)
    assert run_.manifest["firmware"] == {"board": "bench", "build": "t"}


def test_failed_points_are_measured_again_on_request_and_both_attempts_are_kept(
        tmp_path: Path) -> None:
    plan = make_plan(tmp_path, """
        [adaptive]
        min_windows = 2
        max_windows = 2
        [factors]
        op = ["broken", "sha256"]
        payload_bytes = [8, 16]
        """)
    first = run(tmp_path, plan, ScriptedBench())
    assert (first.complete, first.all_ok, first.failed) == (True, False, 2)
    again = resume_sweep(tmp_path / "run", bench_factory=factory(ScriptedBench()))
    assert (again.measured, again.failed_before, again.all_ok) == (0, 2, False)
    fixed = ScriptedBench(broken=frozenset())
    retried = resume_sweep(tmp_path / "run", bench_factory=factory(fixed),
                           retry_failed=True)
    assert (retried.measured, retried.failed, retried.all_ok) == (2, 0, True)
    assert sorted(fixed.prepared) == sorted(p for p in fixed.prepared if "op=broken" in p)
    newest = load(tmp_path / "run")
    assert len(newest.points) == 4 and set(newest.points["status"]) == {"ok"}
    assert set(newest.points.query("op == 'broken'")["attempt"]) == {2}
    assert len(newest.windows) == 8  # two windows per point, of its newest attempt only
    every = load(tmp_path / "run", all_attempts=True).points.query("op == 'broken'")
    assert sorted(zip(every["attempt"], every["status"])) == [
        (1, "failed"), (1, "failed"), (2, "ok"), (2, "ok")]
    assert set(every.query("attempt == 1")["reason"]) == {"broken: self-test failed"}


def test_an_error_after_a_stop_request_is_not_a_failed_point(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, "[factors]\nop = ['hangs']\npayload_bytes = [8]")
    stop = StopRequest()
    bench = ScriptedBench(stop=stop, stop_after=2)   # Ctrl-C also killed the DUT process
    outcome = run(tmp_path, plan, bench, stop=stop)
    assert (outcome.failed, outcome.remaining, outcome.stopped) == (0, 1, "test")
    assert len(load(tmp_path / "run").points) == 0


# --- stop and resume ----------------------------------------------------------------------

@pytest.mark.parametrize("stop_after", [1, 5, 11, 17])
def test_a_stop_between_windows_then_resume_measures_each_point_once(
        tmp_path: Path, stop_after: int) -> None:
    plan = make_plan(tmp_path, HASHES, head="repetitions = 2")
    expected = {p.key for p in expand(plan, Target.from_dut({}, CATALOGUE, "bench")).points}
    stop = StopRequest()
    first = ScriptedBench(stop=stop, stop_after=stop_after)
    outcome = run(tmp_path, plan, first, stop=stop)
    assert not outcome.complete and outcome.stopped == "test"
    stored = load(tmp_path / "run")
    # Points are 3 windows each (no noise): the point in progress at the stop is dropped.
    assert len(stored.points) == (stop_after - 1) // 3 == outcome.measured
    assert stored.in_progress
    assert outcome.remaining == len(expected) - outcome.measured

    second = ScriptedBench()
    again = resume_sweep(tmp_path / "run", fixture=load_fixture(SIM),
                         bench_factory=factory(second))
    assert again.complete and again.already_done == outcome.measured
    assert set(second.prepared).isdisjoint(set(stored.points["point_key"]))
    final = load(tmp_path / "run")
    assert set(final.points["point_key"]) == expected
    assert len(final.points) == len(expected)
    assert final.windows.groupby("point_key").size().eq(3).all()
    assert not final.in_progress and len(final.manifest["resumed_at"]) == 1
    # the order of the first execution is kept by the resume
    order = [k for k in first.prepared[:-1]] + second.prepared
    assert order == [p.key for p in expand(plan, Target.from_dut({}, CATALOGUE, "bench")).points]


def test_kept_captures_survive_a_stop_and_resume_once_each(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, HASHES)
    stop = StopRequest()
    outcome = run(tmp_path, plan, ScriptedBench(stop=stop, stop_after=8), stop=stop,
                  keep_captures="all")
    assert not outcome.complete
    resume_sweep(tmp_path / "run", fixture=load_fixture(SIM),
                 bench_factory=factory(ScriptedBench()))
    final = load(tmp_path / "run")
    assert final.manifest["keep_captures"] == "all"
    kept = sorted(p.relative_to(tmp_path / "run") for p in
                  (tmp_path / "run" / CAPTURES).rglob("*"))
    expected = sorted({capture_path(Path(), row.point_key, row.window).parent
                       for row in final.windows.itertuples()} |
                      {capture_path(Path(), row.point_key, row.window).with_suffix(suffix)
                       for row in final.windows.itertuples() for suffix in (".csv", ".npz")})
    assert expected == kept   # no duplicate, none lost (CSV and exact samples)
    row = final.windows.iloc[-1]
    text = capture_path(tmp_path / "run", row.point_key, row.window).read_text()
    assert float(text.splitlines()[2].split(",")[1]) == pytest.approx(row.energy_j, rel=1e-8)


def test_keep_flagged_keeps_the_windows_flagged_for_their_own_samples() -> None:
    from dataclasses import replace

    from energyrig.rig.pipeline import measure_point

    class Flagged(Prepared):
        def window(self) -> Window:
            row = super().window()
            return replace(row, flags=(("uncalibrated",), ("glitch", "uncalibrated"),
                                       ("ci_target_not_met",))[self.n - 1])

    bench = ScriptedBench()
    bench.prepare = lambda point, **kw: Flagged(bench, point, 10,  # type: ignore[method-assign]
                                                np.random.default_rng(1))
    result = measure_point(bench, Point(op="sha256", board="bench", payload_bytes=16),
                           until=lambda windows: len(windows) >= 3, keep="flagged")
    assert list(result.captures) == [1]
    assert result.captures[1][0].current_a[0] == pytest.approx(result.windows[1].energy_j)


def test_a_disk_too_full_for_the_captures_keeps_the_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from energyrig.results.store import write as store_write

    def full(chunks: Any, path: Path, trigger_bit: int = 0) -> int:
        Path(path).write_text("time_s,cur")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(store_write, "write_csv", full)
    run(tmp_path, make_plan(tmp_path, HASHES), ScriptedBench(), keep_captures="flagged")
    assert not (tmp_path / "run" / CAPTURES).exists()  # nothing flagged: nothing kept
    (tmp_path / "run2").mkdir()
    outcome = start_sweep(make_plan(tmp_path, HASHES), tmp_path / "run2",
                          fixture=load_fixture(SIM), bench_factory=factory(ScriptedBench()), keep_captures="all")
    assert outcome.complete and outcome.measured == 6
    assert len(load(tmp_path / "run2").points) == 6
    assert not list((tmp_path / "run2" / CAPTURES).iterdir())  # no partial file, no tmp


def test_resume_of_a_finished_run_measures_nothing(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, HASHES)
    run(tmp_path, plan, ScriptedBench())
    bench = ScriptedBench()
    again = resume_sweep(tmp_path / "run", fixture=load_fixture(SIM),
                         bench_factory=factory(bench))
    assert again.complete and again.measured == 0 and bench.prepared == []


class StopInCooldown(StopRequest):
    """A stop that comes during the first cooldown; records each wait: (s, stopped)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[tuple[float, bool]] = []

    def wait(self, seconds: float) -> bool:
        self.set("stop during the cooldown")
        stopped = super().wait(seconds)
        self.waits.append((seconds, stopped))
        return stopped


def test_cooldown_is_interrupted_by_a_stop(tmp_path: Path) -> None:
    # What the sweep decided, not how long this machine took: it cooled down through the
    # stop request, which ended the wait and the sweep.
    plan = make_plan(tmp_path, HASHES, head="cooldown_s = 30")
    stop = StopInCooldown()
    outcome = run(tmp_path, plan, ScriptedBench(), stop=stop)
    assert stop.waits == [(30.0, True)]
    assert outcome.measured == 1 and outcome.remaining == 5


def test_overwrite_replaces_a_run_and_refuses_a_live_one(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, HASHES)
    run(tmp_path, plan, ScriptedBench())
    unopened = ScriptedBench()
    with pytest.raises(RunError, match="already holds a run; resume it"):
        run(tmp_path, plan, unopened)
    assert unopened.opened == 0
    outcome = run(tmp_path, plan, ScriptedBench(noise={"md5": 0.3}), overwrite=True)
    assert outcome.measured == 6
    assert set(load(tmp_path / "run").points.query("op == 'md5'")["n_windows"]) == {8}
    with RunWriter.resume(tmp_path / "run"):
        with pytest.raises(RunError, match="another sweep"):
            run(tmp_path, plan, ScriptedBench(), overwrite=True)
        unopened = ScriptedBench()
        with pytest.raises(RunError, match="another sweep"):
            resume_sweep(tmp_path / "run", bench_factory=factory(unopened))
        assert unopened.opened == 0

def test_a_plan_or_a_run_directory_cannot_run_a_program_from_an_untrusted_fixture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FIXTURE_DIRS_ENV)
    elsewhere = board_fixture(tmp_path, "x")          # runs a program: dut.command
    plan = make_plan(tmp_path, HASHES, head=f"fixture = '{elsewhere.path}'")
    unopened = ScriptedBench()
    with pytest.raises(ConfigError, match=r"plan.toml: fixture: .*sim-x.toml runs a program "
                                          r"\(dut.command\) and is not in a trusted"):
        start_sweep(plan, tmp_path / "run", bench_factory=factory(unopened))
    assert unopened.opened == 0 and not (tmp_path / "run").exists()
    # Named by the operator it is fine; a resume then refuses what the manifest names ...
    start_sweep(plan, tmp_path / "run", fixture=elsewhere,
                bench_factory=factory(ScriptedBench()))
    with pytest.raises(ConfigError, match="manifest.json: fixture.path: .*not in a trusted"):
        resume_sweep(tmp_path / "run", bench_factory=factory(unopened))
    # ... and, trusted, refuses a fixture changed since the run began.
    monkeypatch.setenv(FIXTURE_DIRS_ENV, str(tmp_path))
    elsewhere.path.write_text(elsewhere.path.read_text() + "\n# edited\n")
    with pytest.raises(RunError, match="sim-x.toml changed since the run began; resume with "
                                       "--fixture FILE"):
        resume_sweep(tmp_path / "run", bench_factory=factory(unopened))
    assert unopened.opened == 0


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_sweep_never_writes_into_or_deletes_a_folder_with_files_it_did_not_write(
        tmp_path: Path, overwrite: bool) -> None:
    plan = make_plan(tmp_path, HASHES)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    unopened = ScriptedBench()
    with pytest.raises(RunError, match=r"other: holds files .*\(notes.txt\)"):
        start_sweep(plan, other, fixture=load_fixture(SIM), bench_factory=factory(unopened), overwrite=overwrite)
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"] and unopened.opened == 0
    # A run with the operator's notes put in it afterwards: --overwrite keeps both.
    run(tmp_path, plan, ScriptedBench())
    (tmp_path / "run" / "notes.txt").write_text("mine")
    before = sorted(p.name for p in (tmp_path / "run").iterdir())
    with pytest.raises(RunError, match=r"run: holds a run and files it did not write "
                                       r"\(notes.txt\); not removed"):
        run(tmp_path, plan, ScriptedBench(), overwrite=True)
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == before


# --- several boards ----------------------------------------------------------------------

def test_a_plan_over_two_fixtures_measures_each_board_on_its_bench(tmp_path: Path) -> None:
    fixtures = [board_fixture(tmp_path, "a"), board_fixture(tmp_path, "b")]
    plan = make_plan(tmp_path, HASHES, head=f"repetitions = 2\nfixture = "
                                            f"{[str(f.path) for f in fixtures]}")
    stop = StopRequest()
    a = ScriptedBench(board="a", hello={"board": "a", "build": "1"}, stop=stop, stop_after=20)
    b = ScriptedBench(board="b", hello={"board": "b", "build": "2"})
    outcome = start_sweep(plan, tmp_path / "run", bench_factory=factory(ScriptedBench(), a, b), stop=stop)
    assert outcome.total == 24 and outcome.measured == 6 and b.prepared == []
    manifest = load(tmp_path / "run").manifest
    assert manifest["firmware"]["boards"] == {"a": {"board": "a", "build": "1"},
                                              "b": {"board": "b", "build": "2"}}
    assert [f["name"] for f in manifest["fixture"]["fixtures"]] == ["sim-a", "sim-b"]

    # The fixtures come back from the manifest (their paths) on resume.
    again = resume_sweep(tmp_path / "run", bench_factory=factory(ScriptedBench(), a, b))
    assert again.complete and again.measured == 18
    points = load(tmp_path / "run").points
    assert points.groupby("board").size().to_dict() == {"a": 12, "b": 12}
    assert {k.split("board=")[1].split("|")[0] for k in b.prepared} == {"b"}
    with pytest.raises(ConfigError, match="board"):
        survey(plan, [fixtures[0]] * 2, factory(ScriptedBench(), a))


def test_the_sweep_keeps_the_footprint_the_fixture_names(tmp_path: Path) -> None:
    footprint = Footprint(board="host", zephyr=None, crypto=None, toolchain="cc",
                          build_id="t", empty=Memory(flash_bytes=100, ram_bytes=10),
                          full=Memory(flash_bytes=300, ram_bytes=10), ops=())
    write_footprint(footprint, tmp_path / "fp.json")
    fixture = write_fixture(tmp_path / "bench.toml", **{"dut.footprint": "fp.json"})
    start_sweep(make_plan(tmp_path, HASHES), tmp_path / "run", fixture=load_fixture(fixture),
                bench_factory=factory(ScriptedBench()))
    assert run_footprints(tmp_path / "run") == {"bench": footprint}


def test_dry_run_over_two_fixtures(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, HASHES)
    d = dry_run(plan, [board_fixture(tmp_path, "a"), board_fixture(tmp_path, "b")],
                          read=lambda fx: Target.from_dut({}, CATALOGUE, fx.dut.board))
    assert [e.target.board for e in d.expansions] == ["a", "b"]
    assert len(d.points) == 12 and 0 < d.min_s < d.max_s


def test_dry_run_estimate_counts_timed_ops(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, HASHES)                   # 2 x 3 points, 3..8 windows
    fixture = load_fixture(SIM)                          # windows of 2000 samples: 20 ms

    def timer(fx: Fixture, points: Sequence[Point]) -> dict[str, OpTiming]:
        return {p.config_key: OpTiming(prep_s=0.5, op_s=1.0)
                for p in points if p.op == "sha256"}

    d = dry_run(plan, [fixture], read=lambda fx: Target.from_dut({}, CATALOGUE, "host"),
                timer=timer)
    # sha256 (3 points): prep 0.5 + probe 2 x 1.0 + latency 0.05; windows of
    # pre 0.02 + op 1.0 + post 0.005 + latency 0.05 + exchange 0.1 s.
    # md5 (3 points): 0.3 s per point; windows of 0.02 + 0.02 + 0.005 + 0.05 + 0.1 s.
    for windows, bound in ((3, d.min_s), (8, d.max_s)):
        assert bound == pytest.approx(3 * (2.55 + windows * 1.175) + 3 * (0.3 + windows * 0.195))
    assert d.timed


@pytest.mark.slow
def test_time_ops_on_the_host_firmware() -> None:
    points = [Point("sha256", "host", payload_bytes=64),
              Point("sha256", "host", payload_bytes=64, rep=1),
              Point("rsa-keygen", "host", key_bits=1024),
              Point("aes-ecb-encrypt", "host", key_bits=100, payload_bytes=64)]
    timings = time_ops(load_fixture(SIM), points)
    sha, rsa = (timings[p.config_key] for p in points[::2])
    assert len(timings) == 2                             # the refused prep is left out
    assert 0 < sha.op_s < 1e-3 < rsa.op_s
    assert sha.prep_s >= 0 and rsa.prep_s >= 0


# --- a real sweep process on the simulated bench ------------------------------------------

KILL_PLAN = """
seed = 11
fixture = "{fixture}"
[adaptive]
min_windows = 2
max_windows = 2
[factors]
op = ["sha256", "md5", "aes-ecb-encrypt", "rc4"]
key_bits = [128]
payload_bytes = [64, 256]
"""


def _rig(*args: str) -> list[str]:
    return [sys.executable, "-m", "energyrig.cli.app", *args]


WIDE = {**os.environ, "COLUMNS": "200"}   # rich wraps its messages at the terminal's width


def _wait_for_parts(run_dir: Path, n: int, proc: subprocess.Popen) -> None:
    """Until the sweep ``proc`` stored ``n`` points; it ending first fails the test. No
    deadline of its own: the rig's bounds end a hung point, pytest's timeout is the
    backstop (docs/performance.md, "Tests under load")."""
    parts = run_dir / "parts"
    while not (parts.is_dir() and sum(1 for p in parts.iterdir()
                                      if not p.name.startswith(".")) >= n):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


@pytest.fixture()
def sim_plan(tmp_path: Path) -> tuple[Path, set[str]]:
    path = tmp_path / "kill.toml"
    path.write_text(KILL_PLAN.format(fixture=SIM), encoding="utf-8")
    plan = load_plan(path)
    expected = {p.key for p in expand(plan, read_target(load_fixture(SIM))).points}
    return path, expected


def _check_complete(run_dir: Path, expected: set[str]) -> None:
    final = load(run_dir)
    assert sorted(final.points["point_key"]) == sorted(expected)
    assert (final.points["status"] == "ok").all(), final.points[["op", "reason"]]
    assert final.windows.groupby("point_key").size().eq(2).all()
    assert len(final.windows) == 2 * len(expected)
    assert not final.in_progress


@pytest.fixture
def rig_tmp() -> Iterator[Path]:
    """The temporary directory of the rigs a test starts: its own, so that no other rig on
    the machine (a rig removes the bench directories of dead rigs) touches what the test
    checks; and short, so that a bench's trigger wire socket under it fits a Unix socket's
    path (under pytest-xdist a ``tmp_path`` is 10 bytes longer, and the socket's path then
    was 108 bytes: the rig refuses it)."""
    path = Path(tempfile.mkdtemp(prefix="rig-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _env(rig_tmp: Path) -> dict[str, str]:
    return {**WIDE, "TMPDIR": str(rig_tmp)}


def _start(plan_path: Path, run_dir: Path, rig_tmp: Path, **popen: Any) -> subprocess.Popen:
    return subprocess.Popen(_rig("sweep", str(plan_path), "--out", str(run_dir),
                                 "--allow-uncalibrated"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=run_dir.parent, env=_env(rig_tmp), **popen)


def _resume(run_dir: Path, expected: set[str], rig_tmp: Path) -> str:
    """`rig sweep --resume` to the end; its stderr."""
    done = subprocess.run(_rig("sweep", "--resume", str(run_dir), "--allow-uncalibrated"),
                          capture_output=True, text=True, cwd=run_dir.parent,
                          env=_env(rig_tmp))
    assert done.returncode == 0, done.stderr
    _check_complete(run_dir, expected)
    return done.stderr


@pytest.mark.slow
def test_a_killed_sweep_process_resumes_without_repeating_or_losing_a_point(
        tmp_path: Path, sim_plan: tuple[Path, set[str]], rig_tmp: Path) -> None:
    plan_path, expected = sim_plan
    run_dir = tmp_path / "run"
    proc = _start(plan_path, run_dir, rig_tmp)
    children: list[psutil.Process] = []
    try:
        _wait_for_parts(run_dir, 3, proc)
        children = psutil.Process(proc.pid).children(recursive=True)
        proc.kill()                                   # a crash: no clean-up at all
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
        # the DUT (a parent-death signal) and the emulator (it watches its parent) die with
        # the rig; whatever did not is this test's to stop
        # the rig: waited for without a deadline, pytest's timeout is the backstop
        psutil.wait_procs(children)
        proc.communicate()
    assert len(children) >= 2
    left = list(rig_tmp.glob(f"rig-{proc.pid}-*"))
    assert left  # SIGKILL left the bench's temporary directory; the next rig removes it
    before = load(run_dir)
    assert before.in_progress and 3 <= len(before.points) < len(expected)
    written = dict(zip(before.points["point_key"], before.points["written_at"]))

    resumed = _resume(run_dir, expected, rig_tmp)
    assert f"{len(expected) - len(written)} points measured" in resumed
    assert not any(p.exists() for p in left)
    run = load(run_dir)
    after = run.points.set_index("point_key")["written_at"]
    assert all(after[k] == t for k, t in written.items())      # stored points untouched
    # --allow-uncalibrated on an empty store: the manifest and every point say so
    assert run.manifest["calibration"]["complete"] is False
    assert all("uncalibrated" in f for f in run.points["flag_list"])
    budget = run.points["uncertainty_budget"].iloc[0]
    assert list(budget)[-3:] == ["window_overhead", "offset_calibration", "supply_voltage"]
    assert budget["gain_calibration"]["u_j"] is None       # uncalibrated: unknown
    assert run.points["net_energy_per_op_u_j"].isna().all()    # uncalibrated: no U stated


@pytest.mark.slow
def test_ctrl_c_stops_between_windows_and_the_run_resumes(
        tmp_path: Path, sim_plan: tuple[Path, set[str]], rig_tmp: Path) -> None:
    plan_path, expected = sim_plan
    run_dir = tmp_path / "run"
    # Ctrl-C in a terminal signals the whole foreground process group: the DUT and the
    # emulator die with it, in the middle of a window.
    proc = _start(plan_path, run_dir, rig_tmp, start_new_session=True)
    try:
        _wait_for_parts(run_dir, 2, proc)
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "stopping after the current window" in err
    assert "0 failed" in err                # the window the DUT's death cut is no failure
    assert f"rig sweep --resume {run_dir}" in err
    assert not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children)
    stopped = load(run_dir)
    assert stopped.in_progress and 2 <= len(stopped.points) < len(expected)
    assert not (run_dir / "parts").exists() or not any(
        p.name.startswith(".tmp") for p in (run_dir / "parts").iterdir())

    _resume(run_dir, expected, rig_tmp)


@pytest.mark.slow
def test_a_crashed_dut_fails_one_point_and_the_bench_is_reopened(
        tmp_path: Path, sim_plan: tuple[Path, set[str]], rig_tmp: Path) -> None:
    plan_path, expected = sim_plan
    run_dir = tmp_path / "run"
    proc = _start(plan_path, run_dir, rig_tmp)
    try:
        _wait_for_parts(run_dir, 2, proc)
        dut = [c for c in psutil.Process(proc.pid).children(recursive=True)
               if "energyrig-dut" in " ".join(c.cmdline())]
        assert len(dut) == 1
        dut[0].kill()                              # the DUT crashes mid-sweep
        _, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err  # complete, with a failed point
    final = load(run_dir)
    assert sorted(final.points["point_key"]) == sorted(expected)
    failed = final.points[final.points["status"] == "failed"]
    assert len(failed) == 1, final.points[["op", "status", "reason"]]
    assert "DUT" in failed["reason"].iloc[0]
    assert (final.points["status"] != "failed").sum() == len(expected) - 1


@pytest.fixture
def wide_rig(rig_cli: RigCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RigCli:
    """``rig ARGS`` from ``tmp_path`` on a wide terminal, through the console script's entry
    point in the test's process (``rig_cli``: its exit code and streams as a child's, without
    a child python's imports)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", WIDE["COLUMNS"])
    return rig_cli


@pytest.mark.slow
def test_dry_run_prints_points_skips_and_estimate(tmp_path: Path, wide_rig: RigCli) -> None:
    out = wide_rig("sweep", str(ROOT / "plans" / "public-key.toml"), "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "66 points to measure (33 configurations × 2 repetitions), 6 combinations skipped" \
        in out.stdout
    assert "rsa-keygen: key_bits=8192 not allowed (allowed: 1024, 2048, 3072, 4096)" in out.stdout
    assert "estimated duration:" in out.stdout and "--probe times them" in out.stdout
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_cli_errors_name_the_plan_field(tmp_path: Path, wide_rig: RigCli) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[factors]\nop = ['md5']\nkeybits = [128]\n")
    out = wide_rig("sweep", str(bad), "--dry-run")
    assert out.returncode == 2
    assert f"rig: error: {bad}: factors[0].keybits: unknown field (misspelt?)" in out.stderr


@pytest.mark.slow
def test_cli_resume_takes_the_run_directory_only(tmp_path: Path, wide_rig: RigCli) -> None:
    out = wide_rig("sweep", str(ROOT / "plans" / "quick.toml"), "--resume", str(tmp_path))
    assert out.returncode == 2 and "--resume takes the run directory only" in out.stderr
    out = wide_rig("sweep", "--resume", str(tmp_path / "nothing"))
    assert out.returncode == 2
    assert f"rig: error: {tmp_path / 'nothing'}: no manifest.json: not a run directory" \
        in out.stderr


@pytest.mark.parametrize("metric", ["energy_per_op_j", "net_energy_per_op_j", "time_per_op_s"])
def test_adaptive_metric_is_the_stores_per_op_column_times_the_batch(
        metric: str, tmp_path: Path) -> None:
    from energyrig.rig.sweep.stopping import _metric

    windows = [Window(0.1, 0.3, 2000, 4e-3, 5e-3), Window(0.5, 0.62, 1200, 2.5e-3, 4.5e-3)]
    with RunWriter.create(tmp_path / "run") as writer:
        writer.write_point(Point(op="sha256", board="b"), windows, batch_n=7)
    stored = load(tmp_path / "run").windows[metric].to_numpy()
    assert [_metric(w, metric) for w in windows] == pytest.approx(stored * 7, rel=1e-12)
