"""A window's trace (energyrig.results.trace) on generated samples: what is kept and marked."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from energyrig.capture import Chunk, write_csv
from energyrig.domain import Window, WindowSettings
from energyrig.energy.cut import cut
from energyrig.flags import BASELINE_AFTER
from energyrig.results.trace import plot_trace, window_trace

T = 1e-5
SETTINGS = WindowSettings(guard_s=1e-3, baseline_s=5e-3)


def _chunks(n: int = 5000, per: int = 700) -> list[Chunk]:
    current = np.linspace(1e-3, 2e-3, n)
    logic = np.zeros(n, dtype=np.uint8)
    logic[1000:1400] = 1
    whole = Chunk(100, T, current, 3.0, logic)
    return [whole.sliced(k, min(k + per, n)) for k in range(0, n, per)]


def test_cut_keeps_the_window_guard_baseline_and_margin_only() -> None:
    # samples 1100..1499 (absolute) are the window; its baseline starts 600 samples before
    window = Window(start_s=1099.5 * T, end_s=1499.5 * T, samples=400, energy_j=1.0,
                    baseline_w=0.0)
    kept = cut(_chunks(), window, SETTINGS)
    index = np.concatenate([c.indices() for c in kept])
    assert index[0] == 1100 - 600 - 100 and index[-1] == 1499 + 100
    assert np.array_equal(index, np.arange(index[0], index[-1] + 1))
    assert np.concatenate([c.current_a for c in kept])[0] == pytest.approx(
        np.linspace(1e-3, 2e-3, 5000)[400 - 100])


def test_trace_after_the_window_when_the_baseline_was_taken_after(tmp_path: Path) -> None:
    window = Window(start_s=1099.5 * T, end_s=1499.5 * T, samples=400, energy_j=1.0,
                    baseline_w=0.0, flags=(BASELINE_AFTER,))
    trace = window_trace(_chunks(), window, SETTINGS, title="test")
    assert trace.guard_s == pytest.approx((1499.5 * T, 1599.5 * T))
    assert trace.baseline_s == pytest.approx((1599.5 * T, 2099.5 * T))
    assert trace.time_s[0] == pytest.approx(1000 * T) and trace.time_s[-1] == pytest.approx(
        2199 * T)
    png = plot_trace(trace, tmp_path / "w.png")
    data = json.loads(png.with_suffix(".json").read_text())
    assert data["flags"] == [BASELINE_AFTER] and data["samples"] == 1200


def test_write_csv_keeps_time_base_and_gaps(tmp_path: Path) -> None:
    from energyrig.instruments.csvfile import CsvCapture

    logic = np.zeros(20, np.uint8)
    logic[5:9] = 1
    chunk = Chunk(7, T, np.linspace(1e-3, 3e-3, 20), 3.3, logic,
                  gaps=np.array([[10, 4]], dtype=np.int64))
    assert write_csv([chunk], tmp_path / "c.csv") == 20
    lines = (tmp_path / "c.csv").read_text().splitlines()
    assert lines[0] == "time_s,current_a,voltage_v,trigger"
    assert [float(line.split(",")[0]) for line in lines[9:12]] == pytest.approx(
        [15 * T, 16 * T, 21 * T])  # samples 9 and 10 of the chunk: 4 lost between
    (read,) = CsvCapture(tmp_path / "c.csv").chunks()
    assert read.gaps.tolist() == [[10, 4]] and np.array_equal(read.logic, logic)
    assert np.allclose(read.current_a, chunk.current_a, rtol=1e-8)
