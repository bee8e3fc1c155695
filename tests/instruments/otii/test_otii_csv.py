"""Otii's CSV export, written as otiio 0.1.1's ``export.py`` states Otii writes it (one file
per channel, ``CHANNEL - DEVICE.csv``, header ``"Timestamp","Value"``, ``%.6f`` seconds and
``%.9g`` values): `rig analyze` finds it by content, reads the channels' files together and
its windows' energies equal numpy on the same files to 1e-9; what it cannot read is one
error naming the file."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.cli import RigCli

from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

RATE = 50_000


def write_export(folder: Path, signals: dict[str, np.ndarray], device: str = "Ace",
                 t0: float = 1.25) -> dict[str, Path]:
    """Each channel's file as Otii's export writes it; their paths by channel label."""
    paths = {}
    for label, values in signals.items():
        path = folder / f"{label} - {device}.csv"
        t = t0 + np.arange(len(values)) / RATE
        with path.open("w", encoding="utf-8", newline="") as f:
            f.write('"Timestamp","Value"\n')
            np.savetxt(f, np.column_stack((t, values.astype(np.float32))),
                       fmt=("%.6f", "%.9g"), delimiter=",")
        paths[label] = path
    return paths


def _signals(n: int = 40_000) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    high = np.zeros(n, dtype=bool)
    high[5_000:12_345] = high[20_000:31_000] = True
    return {"Main current": np.where(high, 4.2e-3, 0.3e-3) + rng.normal(0, 4e-6, n),
            "Main voltage": 3.0 + rng.normal(0, 1e-4, n),
            "ADC voltage": np.where(high, 3.3, 0.0) + rng.normal(0, 0.02, n)}


def _numpy_energies(paths: dict[str, Path]) -> list[float]:
    """numpy alone on the same files: v * i over the rows whose ADC voltage is above 1.65 V
    (the noise stays far from the hysteresis band), times the period from the stamps."""
    t, i = np.loadtxt(paths["Main current"], delimiter=",", skiprows=1, unpack=True)
    v = np.loadtxt(paths["Main voltage"], delimiter=",", skiprows=1)[:, 1]
    high = np.loadtxt(paths["ADC voltage"], delimiter=",", skiprows=1)[:, 1] >= 1.65
    period = float(np.median(np.diff(t)))
    edges = np.flatnonzero(np.diff(high.astype(np.int8))) + 1
    return [float(np.sum(i[a:b] * v[a:b])) * period for a, b in zip(edges[::2], edges[1::2])]


def test_rig_analyze_reads_the_export_by_content(tmp_path: Path, rig_cli: RigCli) -> None:
    paths = write_export(tmp_path, _signals())
    for given in ("Main current", "ADC voltage"):  # any file of the recording
        done = rig_cli("analyze", str(paths[given]), "--trigger", "ADC voltage",
                       "--trigger-level", "1.65", "--json")
        assert done.returncode == 0, done.stderr
        windows = json.loads(done.stdout)["windows"]
        assert len(windows) == 2
        assert [w["energy_j"] for w in windows] == pytest.approx(_numpy_energies(paths),
                                                                 rel=1e-9)


def test_chunks_keep_the_files_in_step(tmp_path: Path) -> None:
    signals = _signals(5000)
    paths = write_export(tmp_path, signals)
    capture = open_capture(paths["Main current"], CaptureOptions(
        trigger="ADC voltage", trigger_level_v=1.65, chunk_samples=777))
    chunks = list(capture.chunks())
    assert [c.start_index for c in chunks[:3]] == [0, 777, 1554]
    np.testing.assert_array_equal(np.concatenate([c.voltage_v for c in chunks]),
                                  np.loadtxt(paths["Main voltage"], delimiter=",",
                                             skiprows=1)[:, 1])


@pytest.mark.parametrize(("change", "options", "error", "message"), [
    ("drop-voltage", {"trigger": "ADC voltage", "trigger_level_v": 1.65}, ChannelError,
     r"voltage: no file 'Main voltage - Ace.csv' beside it \(there: ADC voltage - Ace.csv, "
     r"Main current - Ace.csv\)"),
    ("", {}, ChannelError, r"trigger: name the channel that carries it"),
    ("shift-voltage", {"trigger": "ADC voltage", "trigger_level_v": 1.65}, CaptureError,
     r"Main voltage - Ace.csv: not on the time base of Main current - Ace.csv near row 2"),
    ("", {"trigger": "ADC voltage"}, ChannelError,
     r"trigger: values other than 0 and 1 near row 2: give --trigger-level"),
])
def test_an_export_it_cannot_read_is_one_error(tmp_path: Path, change: str,
                                               options: dict[str, object],
                                               error: type[Exception], message: str) -> None:
    paths = write_export(tmp_path, _signals(3000))
    if change == "drop-voltage":
        paths["Main voltage"].unlink()
    if change == "shift-voltage":
        paths["Main voltage"].unlink()
        write_export(tmp_path, {"Main voltage": _signals(3000)["Main voltage"]}, t0=1.5)
    with pytest.raises(error, match=message):
        list(open_capture(paths["Main current"], CaptureOptions(**options)).chunks())


def test_a_file_not_named_as_otii_names_it_is_refused(tmp_path: Path) -> None:
    paths = write_export(tmp_path, _signals(100))
    odd = paths["Main current"].rename(tmp_path / "current.csv")
    with pytest.raises(CaptureError, match=r"current.csv: an Otii CSV export is named "
                                           r"'CHANNEL - DEVICE.csv'"):
        open_capture(odd, CaptureOptions(trigger="ADC voltage", trigger_level_v=1.65))
