"""The ground-truth log: windows from edges, exact energies, readable by pandas."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from energyrig.errors import CaptureError
from energyrig.instruments.sim.power import FamilyCurrent, PeriodicLoad, PowerModel
from energyrig.instruments.sim.truth import TruthFollower, TruthRecorder, read_truth
from energyrig.instruments.sim.wire import edge_records


def test_windows_pair_across_feeds_with_exact_energy(tmp_path: Path) -> None:
    model = PowerModel(idle_a=2e-6, active_a=3e-3, accel_a=1e-3,
                       loads=(PeriodicLoad(0.01, 1e-3, 0.5, 0.0),))
    path = tmp_path / "truth.jsonl"
    rec = TruthRecorder(path)
    rec.stream_started(5_000, 10_000, 3.3, model)
    edges = edge_records([1_000_000, 3_000_000, 5_000_000, 5_500_000], [1, 0, 1, 0],
                         accel=[0, 0, 1, 1])
    rec.feed(edges[:1], model, 3.3, True)
    rec.feed(edges[1:3], model, 3.3, True)
    rec.feed(edges[3:], model, 3.3, False)
    rec.close()
    streams, windows = read_truth(path)
    assert streams[0].t0_ns == 5_000 and streams[0].sample_index(105_000) == 10.0
    first, second = windows
    # 2 ms window = two whole load periods (10 mA, 50 % duty): 3.3 V * (3 mA*2 ms + 10 µC).
    assert first.energy_j == pytest.approx(3.3 * (3e-3 * 2e-3 + 0.01 * 1e-3), rel=1e-12)
    assert first.net_energy_j == pytest.approx(3.3 * (3e-3 - 2e-6) * 2e-3, rel=1e-12)
    assert (first.seq, first.accel, first.duration_s) == (0, False, pytest.approx(2e-3))
    assert second.accel and not second.dut_powered and second.energy_j == 0.0
    frame = pd.read_json(path, lines=True)
    assert list(frame["kind"]) == ["stream", "window", "window"]


def test_a_window_logs_its_family_and_draws_its_current(tmp_path: Path) -> None:
    model = PowerModel(idle_a=1e-5, active_a=4e-3, edge_spike_a=5e-3, edge_spike_s=20e-6,
                       families={"hash": FamilyCurrent(6e-3)})
    path = tmp_path / "truth.jsonl"
    rec = TruthRecorder(path)
    rec.feed(edge_records([1_000_000, 2_000_000, 5_000_000, 6_000_000], [1, 0, 1, 0],
                          family=[2, 0, 0, 0]), model, 3.0, True)
    rec.close()
    hash_window, mark_window = read_truth(path)[1]
    assert (hash_window.family, mark_window.family) == ("hash", "")
    spike_j = 3.0 * 5e-3 * 20e-6
    assert hash_window.energy_j == pytest.approx(3.0 * 6e-3 * 1e-3 + spike_j, rel=1e-12)
    assert mark_window.net_energy_j == pytest.approx(3.0 * (4e-3 - 1e-5) * 1e-3 + spike_j,
                                                     rel=1e-12)


def test_unpaired_edges_are_not_windows(tmp_path: Path) -> None:
    path = tmp_path / "truth.jsonl"
    rec = TruthRecorder(path)
    rec.feed(edge_records([10, 20, 30, 40], [0, 1, 1, 0]), PowerModel(), 3.0, True)
    rec.close()
    _, windows = read_truth(path)
    assert [(w.t_rise_ns, w.t_fall_ns) for w in windows] == [(30, 40)]


def test_a_broken_line_names_its_number(tmp_path: Path) -> None:
    path = tmp_path / "truth.jsonl"
    path.write_text('{"kind": "stream", "t0_ns": 0, "period_ns": 10000, "supply_v": 3.0, '
                    '"model": {}}\n{"kind": "window", "seq": 1}\n')
    with pytest.raises(CaptureError, match="line 2"):
        read_truth(path)


def test_the_log_is_rotated_and_a_follower_loses_no_window(tmp_path: Path) -> None:
    model = PowerModel(idle_a=1e-6, active_a=3e-3)
    path = tmp_path / "truth.jsonl"
    rec = TruthRecorder(path, rotate_bytes=2000)  # a window line is ~250 bytes
    follower = TruthFollower(path)
    rec.stream_started(0, 1_000, 3.0, model)
    seen = 0
    # 61: not a multiple of the windows a generation holds (6, as the lines are long today),
    # so the last generation holds a window besides its time base
    for k in range(61):
        t = 1_000_000 * (k + 1)
        rec.feed(edge_records([t, t + 500_000], [1, 0]), model, 3.0, True)
        if k % 3 == 0:  # the follower reads now and then, as the bench does per window
            follower.read()
            seen += len(follower.windows)
            follower.windows.clear()
    rec.close()
    follower.read()
    seen += len(follower.windows)
    assert seen == 61 and follower.stream is not None
    assert path.stat().st_size <= 2000 + 300
    assert (tmp_path / "truth.jsonl.1").stat().st_size <= 2000 + 300
    assert sorted(p.name for p in tmp_path.iterdir()) == ["truth.jsonl", "truth.jsonl.1"]
    streams, windows = read_truth(path)  # each generation starts with its time base
    assert len(streams) == 1 and streams[0].period_ns == 1_000 and windows
