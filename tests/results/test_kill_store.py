"""kill -9 of a run's writer at many moments, then a resume (issue 11): the stored points are
exactly the plan's, none twice, every table readable (by ``load`` and by one
``pandas.read_parquet``), and nothing temporary is left.

The writer (``support/store_child.py``) kills itself just before the K-th call of a function
the store uses to write: so the kill falls inside a point's write, inside a merge of parts into
a segment, inside the manifest's rewrite, deterministically; a few kills at random times
complete the set.
"""
from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from multiprocessing import forkserver
from pathlib import Path

import pandas as pd
import pytest
from support.paths import ROOT
from support import store_child
from support.store_child import MOMENTS, ONE_OF_EACH_KIND, POINTS, WINDOWS

from energyrig.results import load

# Writers start from a server that imported the store once (a fresh interpreter per kill
# would spend seconds importing pandas and pyarrow); "forkserver", not "fork": the test
# process may hold threads, which a plain fork does not take along.
CONTEXT = multiprocessing.get_context("forkserver")
CONTEXT.set_forkserver_preload(["support.store_child", "scipy.stats"])


@pytest.fixture(scope="module", autouse=True)
def _forkserver() -> None:
    """Start the server with tests/ on its path, so that it can preload the writer."""
    tests = str(ROOT / "tests")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")])))
        forkserver.ensure_running()

# `make check` kills at one moment of each kind (the check line sets ENERGYRIG_KILL_MOMENTS=kinds;
# tests/results/test_kill_moments.py shows they are every kind of MOMENTS) and at one random
# time; `make test` at every moment and four random times (tests/README.md).
MOMENTS_RUN = {"all": MOMENTS, "kinds": ONE_OF_EACH_KIND}[
    os.environ.get("ENERGYRIG_KILL_MOMENTS", "all")]
RANDOM_KILLS = 4 if MOMENTS_RUN is MOMENTS else 1


def _child(run_dir: Path, function: str = "none", k: int = 0) -> multiprocessing.Process:
    child = CONTEXT.Process(target=store_child.main, args=(run_dir, function, k))
    child.start()
    return child


def _finish(child: multiprocessing.Process) -> int | None:
    child.join(timeout=120)
    return child.exitcode


def _check_whole(run_dir: Path) -> None:
    run = load(run_dir)
    assert sorted(run.points["point_key"]) == sorted(p.key for p in POINTS)
    assert not run.points["point_key"].duplicated().any()
    assert len(run.windows) == len(POINTS) * WINDOWS
    assert not run.windows[["point_key", "window"]].duplicated().any()
    assert not run.in_progress
    # the one-line pandas read of the closed run: every point once
    assert len(pd.read_parquet(run_dir / "points.parquet")) == len(POINTS)
    assert len(pd.read_parquet(run_dir / "windows.parquet")) == len(POINTS) * WINDOWS
    leftovers = [p for p in run_dir.rglob(".*") if p.name != ".lock"]
    assert not leftovers, leftovers


@pytest.mark.parametrize(("function", "k"), MOMENTS_RUN,
                         ids=[f"{f}-{k}" for f, k in MOMENTS_RUN])
def test_a_writer_killed_inside_a_write_or_a_merge_loses_and_repeats_nothing(
        tmp_path: Path, function: str, k: int) -> None:
    run_dir = tmp_path / "run"
    code = _finish(_child(run_dir, function, k))
    assert code in (-signal.SIGKILL, 0)
    if code == -signal.SIGKILL and not (run_dir / "manifest.json").exists():
        return  # killed before the run existed: nothing to resume
    assert _finish(_child(run_dir)) == 0
    _check_whole(run_dir)


@pytest.mark.parametrize("seed", range(RANDOM_KILLS))
def test_a_writer_killed_at_a_random_time_loses_and_repeats_nothing(tmp_path: Path,
                                                                    seed: int) -> None:
    run_dir = tmp_path / "run"
    rng = random.Random(seed)
    for _ in range(3):  # three kills in a row, each at a random time, then a clean finish
        child = _child(run_dir)
        time.sleep(rng.uniform(0.05, 0.5))
        child.kill()
        _finish(child)
    assert _finish(_child(run_dir)) == 0
    _check_whole(run_dir)
