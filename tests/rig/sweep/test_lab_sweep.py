"""A sweep over a simulated lab of three places (issue 14's acceptance test).

``plans/quick.toml`` runs across three labgrid places of the simulated lab
(:class:`energyrig.rig.labsim.SimLab`: a coordinator and three exporters, each a host DUT and an
emulated PPK2 shared through ser2net; the plan's own fixture is the emulated Cortex-M4 board's,
``-f fixtures/sim.toml`` as ``rig sweep`` takes it). One bench host is killed (SIGKILL to its whole
process group) once it has stored a point; the sweep must go on, and the run must then hold
every point of the plan exactly once, with the place and host it ran on, none lost, and no
process of the lab or the sweep left behind.

The lanes' decisions (:mod:`energyrig.rig.sweep.lanes`) are checked on local simulated benches
in ``tests/rig/sweep/test_lanes.py``; this file is the whole path through labgrid.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest
from support.paths import ROOT

from energyrig.fixtures import load_fixture
from energyrig.results.store.layout import PARTS, POINTS
from energyrig.rig.labsim import SimLab
from energyrig.rig.plan import load_plan
from energyrig.rig.sweep.boards import plan_fixtures
from energyrig.rig.sweep.dryrun import dry_run
from energyrig.rig.sweep.lab import Lab
from energyrig.rig.sweep.run import resume_sweep, start_sweep
from energyrig.rig.sweep.stopping import StopRequest

QUICK = ROOT / "plans" / "quick.toml"

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


def _stored_places(run: Path) -> pd.Series:
    """The place of each point stored so far (parts not yet folded included; a part being
    written, ``.tmp-*``, or folded away meanwhile is not one: on a loaded host the sweep
    gets there between the listing and the read)."""
    tables = []
    for part in (run / PARTS).glob(f"[!.]*/{POINTS}"):
        try:
            tables.append(pd.read_parquet(part, columns=["place"]))
        except FileNotFoundError:
            continue
    return pd.concat(tables)["place"] if tables else pd.Series([], dtype=object)


def _descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def test_a_lab_sweep_survives_a_dead_bench_host_and_stores_every_point_once(
        tmp_path: Path) -> None:
    before = _descendants()
    run = tmp_path / "run"
    plan = load_plan(QUICK)
    host = load_fixture(ROOT / "fixtures" / "sim.toml")  # the lab's places: host DUTs
    stop = StopRequest()
    outcome: list = []
    errors: list[BaseException] = []
    with SimLab(3) as lab:
        lab_pids = lab.pids()
        victim = lab.places[2]

        def sweep() -> None:
            try:
                outcome.append(start_sweep(plan, run, fixture=host, stop=stop,
                                           lab=Lab(lab.coordinator, tuple(lab.places), None)))
            except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
                errors.append(exc)

        worker = threading.Thread(target=sweep)
        worker.start()
        # Kill the victim's bench host once it has stored a point: it is measuring its next.
        # No deadline of the test's own (docs/performance.md, "Tests under load"): the sweep
        # ends by itself, pytest's timeout is the backstop.
        while worker.is_alive():
            if run.exists() and (victim == _stored_places(run)).any():
                lab.kill(victim)
                break
            time.sleep(0.1)
        worker.join()
    assert not errors, errors
    (out,) = outcome
    assert out.complete and out.stopped == ""

    points = pd.read_parquet(run / POINTS)
    measured = points[points["status"] != "skipped"]
    # Every point of the plan exactly once: the plan expanded on a local simulated bench
    # (not through the lab) says which.
    expected = {p.key for p in dry_run(plan.with_seed(), [host]).points}
    assert measured["point_key"].is_unique
    assert set(measured["point_key"]) == expected
    assert measured["place"].notna().all() and measured["host"].notna().all()
    used = set(measured["place"])
    assert len(used) >= 2 and used <= set(lab.places)
    # The victim stored a point before it died; the point it was measuring then went to
    # another place: none is missing, and none failed for the death of its place. (A point
    # may fail on its own on a live place, e.g. a window lost while this machine is too
    # busy to read three streams: it is stored failed with its reason, where it ran.)
    assert (measured["place"] == victim).sum() >= 1
    assert out.handed_over == 1  # the point the victim was measuring when it was killed
    assert out.measured + out.failed == len(expected)
    failed = measured[measured["status"] == "failed"]
    assert set(measured["status"]) <= {"ok", "failed"}
    assert failed["reason"].str.len().gt(0).all()
    assert not failed["reason"].str.contains("is gone").any(), failed["reason"]

    # No process left: the lab's process groups and every child of this test are gone
    # (reaped as the machine gets to them; one left for good trips pytest's timeout).
    while _descendants() - before:
        time.sleep(0.2)
    for pgid in lab_pids:
        assert not [p for p in psutil.process_iter(["pid"])
                    if _pgid(p.info["pid"]) == pgid]


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


SMALL = """
name = "lab-resume"
seed = 5
fixture = "{fixture}"
repetitions = 2
[adaptive]
min_windows = 2
max_windows = 2
[[factors]]
op = ["sha256", "aes-ecb-encrypt"]
key_bits = [128]
payload_bytes = [64, 256]
"""


def test_a_stopped_lab_run_resumes_on_its_lab_from_its_manifest(tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.toml"
    plan_path.write_text(SMALL.format(fixture=ROOT / "fixtures" / "sim.toml"), encoding="utf-8")
    plan = load_plan(plan_path)
    run = tmp_path / "run"
    stop = StopRequest()
    with SimLab(2) as lab:
        ended = threading.Event()
        stopper = threading.Thread(target=_stop_after, args=(run, 2, stop, ended))
        stopper.start()
        try:
            first = start_sweep(plan, run, stop=stop,
                                lab=Lab(lab.coordinator, tuple(lab.places), None))
        finally:
            ended.set()
            stopper.join()
        assert not first.complete and first.measured + first.failed >= 2
        # No --lab, no --places: the run's manifest names its lab.
        second = resume_sweep(run, calibration=None)
    assert second.complete and second.already_done == first.measured + first.failed
    points = pd.read_parquet(run / POINTS)
    expected = {p.key for p in dry_run(plan.with_seed(), plan_fixtures(plan)).points}
    assert points["point_key"].is_unique and set(points["point_key"]) == expected
    assert points["place"].notna().all()
    manifest = json.loads((run / "manifest.json").read_text())
    assert [p["place"] for p in manifest["lab"]["places"]] == lab.places


def _stop_after(run: Path, n: int, stop: StopRequest, ended: threading.Event) -> None:
    """Ask the sweep to stop once ``n`` points are stored (or give up once it ``ended``)."""
    while not ended.is_set() and not (run.exists() and len(_stored_places(run)) >= n):
        time.sleep(0.05)
    stop.set("test")
