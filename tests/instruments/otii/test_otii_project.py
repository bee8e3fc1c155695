"""Otii 3 projects (``.otii3``), built here from the layout otiio 0.1.1 reads
(github.com/andyshinn/otiio, ``_layout.py``, ``model.py``: ``data/meta/project_format`` and
``saved_version``, ``data/versions/<v>/data/project.json``, each ``samples`` channel a
float32 ``samples.dat`` blob): `rig analyze` finds them by content, its windows and energies
equal numpy on the same samples to 1e-9, and every file it cannot read is one error line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from support.cli import RigCli
from support.otii3 import write_otii3

RATE = 50_000
VOLT = 3.3


def _signals(n: int = 60_000) -> dict[str, np.ndarray]:
    """mc, mv and av (the trigger GPIO on the ADC input) of a board with three windows."""
    rng = np.random.default_rng(7)
    high = np.zeros(n, dtype=bool)
    for a, b in ((8_000, 15_500), (25_000, 31_234), (44_444, 52_000)):
        high[a:b] = True
    mc = np.where(high, 6.5e-3, 0.4e-3) + rng.normal(0, 5e-6, n)
    mv = VOLT + rng.normal(0, 1e-4, n)
    av = np.where(high, VOLT, 0.0) + rng.normal(0, 0.02, n)
    return {"mc": mc.astype("<f4"), "mv": mv.astype("<f4"), "av": av.astype("<f4")}


def _numpy_windows(signals: dict[str, np.ndarray], level: float) -> list[float]:
    """Each window's energy by numpy alone: the samples whose av is above the level (no
    noise reaches the hysteresis band here), v * i summed, times the period."""
    high = signals["av"].astype(np.float64) >= level
    edges = np.flatnonzero(np.diff(high.astype(np.int8)))
    rises, falls = edges[::2] + 1, edges[1::2] + 1
    power = signals["mc"].astype(np.float64) * signals["mv"].astype(np.float64)
    return [float(np.sum(power[a:b])) / RATE for a, b in zip(rises, falls)]


def test_rig_analyze_reads_a_project_by_content(tmp_path: Path, rig_cli: RigCli) -> None:
    signals = _signals()
    stub = write_otii3(tmp_path, signals, RATE)
    renamed = stub.with_suffix(".project")  # no extension any kind claims: found by content
    os.link(stub, renamed)
    for path in (stub, renamed):
        done = rig_cli("analyze", str(path), "--trigger", "av", "--trigger-level", "1.65",
                       "--json")
        assert done.returncode == 0, done.stderr
        windows = json.loads(done.stdout)["windows"]
        assert [w["energy_j"] for w in windows] == pytest.approx(
            _numpy_windows(signals, 1.65), rel=1e-9)


def test_channels_are_aligned_by_their_offsets_and_read_in_chunks(tmp_path: Path) -> None:
    """mv starts 2 samples (40 us) after mc and av: the capture starts at mv's first sample,
    and chunks of 1000 samples give the windows of one chunk."""
    signals = _signals()
    shifted = dict(signals, mv=signals["mv"][2:])
    stub = write_otii3(tmp_path, shifted, RATE, offsets_us={"mv": 40.0})
    capture = open_capture(stub, CaptureOptions(trigger="av", trigger_level_v=1.65,
                                                chunk_samples=1000))
    chunks = list(capture.chunks())
    assert max(len(c) for c in chunks) == 1000
    current = np.concatenate([c.current_a for c in chunks])
    voltage = np.concatenate([c.voltage_v for c in chunks])
    np.testing.assert_array_equal(current, signals["mc"][2:].astype(np.float64))
    np.testing.assert_array_equal(voltage, signals["mv"][2:].astype(np.float64))


GPI = {"measurement": {"id": "g", "source": {"name": "i1", "data_type": "digital",
                                              "type": "digital", "device": "dev-1"}},
       "data": {"id": "blob-g"}, "offset": 0}


@pytest.mark.parametrize(("write", "options", "error", "message"), [
    ({"fmt": "18"}, {}, CaptureError, r"Otii project format '18': this reader knows format 17"),
    ({"extra": [GPI]}, {}, ChannelError,
     r"trigger: GPI1 \('i1'\) is stored as 'digital', whose layout no published source "
     r"documents"),
    ({}, {"trigger": "sp"}, ChannelError, r"trigger: no channel 'sp' in the recording "
                                          r"\(channels: av, mc, mv\)"),
    ({}, {"trigger": "av"}, ChannelError, r"give its threshold, e.g. --trigger-level 1.65"),
])
def test_a_project_it_cannot_read_is_one_error_naming_the_file(
        tmp_path: Path, write: dict[str, Any], options: dict[str, Any],
        error: type[Exception], message: str) -> None:
    stub = write_otii3(tmp_path, _signals(2000), RATE, **write)
    with pytest.raises(error, match=message) as err:
        open_capture(stub, CaptureOptions(**options))
    assert str(stub) in str(err.value)


def test_a_stub_without_its_data_folder_is_refused(tmp_path: Path) -> None:
    stub = tmp_path / "moved.otii3"
    stub.write_text('{"name": "moved"}')
    with pytest.raises(CaptureError, match="not an Otii 3 project: no data/meta/project_format"):
        open_capture(stub, CaptureOptions(trigger="av", trigger_level_v=1.65))


def test_a_truncated_sample_file_is_refused(tmp_path: Path) -> None:
    stub = write_otii3(tmp_path, _signals(2000), RATE)
    blob = tmp_path / "data" / "data" / "project" / "blob-0" / "samples.dat"
    blob.write_bytes(blob.read_bytes()[:-3])
    with pytest.raises(CaptureError, match=r"channel mc: .* not whole float32 samples"):
        open_capture(stub, CaptureOptions(trigger="av", trigger_level_v=1.65))


def test_rig_analyze_refuses_in_one_line_with_exit_2(tmp_path: Path) -> None:
    stub = write_otii3(tmp_path, _signals(2000), RATE, extra=[GPI])
    done = subprocess.run([sys.executable, "-m", "energyrig.cli.app", "analyze", str(stub)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith(f"rig: error: {stub}: ") and done.stderr.count("\n") == 1
    assert "GPI1 ('i1') is stored as 'digital'" in done.stderr
