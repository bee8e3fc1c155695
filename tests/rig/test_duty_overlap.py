"""A sweep stores a point while it measures the next (issue 24 part 3): storing is the host's
work (a point's tables and files: a few hundred ms a point on the quick plan), measuring
mostly waits on the DUT and the instrument. One store at a time, in the points' order, each
ended before the next one starts and the last before the sweep returns; a store's error
still ends the sweep.

The bench is scripted; what is asserted is what the executor did in which order, never how
long it took (the bound below only ends the test when the overlap is missing)."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from support.sweep import ScriptedBench, make_plan, run

from energyrig.results.store.layout import POINTS
from energyrig.results.store.write import RunWriter

#: How long the first point's store waits for the next point to start, s: a bound on a
#: missing overlap, never reached when the store runs beside the next point.
OVERLAP_BOUND_S = 60.0

TWO_POINTS = """
    [adaptive]
    min_windows = 3
    max_windows = 3
    [factors]
    op = ["sha256"]
    payload_bytes = [16, 64, 256]
    """


def test_a_point_is_stored_while_the_next_one_is_measured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = ScriptedBench()
    write_point = RunWriter.write_point
    stored: list[tuple[str, bool]] = []  # (key, the next point prepared during its store)

    def slow_store(self: RunWriter, point: Any, *args: Any, **kwargs: Any) -> Any:
        after = bench.prepared.index(point.key) + 2  # points prepared once the next is
        if not stored:  # the first point's store waits for the next point's prepare
            waited = threading.Event()
            for _ in range(int(OVERLAP_BOUND_S / 0.01)):
                if len(bench.prepared) >= after:
                    break
                waited.wait(0.01)
        stored.append((point.key, len(bench.prepared) >= after))
        return write_point(self, point, *args, **kwargs)

    monkeypatch.setattr(RunWriter, "write_point", slow_store)
    outcome = run(tmp_path, make_plan(tmp_path, TWO_POINTS), bench)
    assert outcome.all_ok and outcome.measured == 3
    assert stored[0][1], "the next point was not measured while the first was stored"
    # in the points' order, each stored once
    assert [key for key, _ in stored] == bench.prepared
    assert sorted(pd.read_parquet(tmp_path / "run" / POINTS)["point_key"]) == \
        sorted(bench.prepared)


def test_a_store_that_fails_ends_the_sweep_with_its_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: RunWriter, point: Any, *args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RunWriter, "write_point", broken)
    bench = ScriptedBench()
    with pytest.raises(OSError, match="No space left"):
        run(tmp_path, make_plan(tmp_path, TWO_POINTS), bench)
    assert len(bench.prepared) <= 2  # no point measured past the one whose store failed
