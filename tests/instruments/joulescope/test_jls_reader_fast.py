"""The JLS reader's one pass (issue 24 part 2): float32 signals converted once, their NaN
check and the plausibility check fused into one min and one max over the float32 samples
(the chunk's ``bounds``), and the energies still those numpy computes independently; the
sigrok session reader's float32 channels the same way (``capture.widened``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from energyrig.capture import plausible_chunks, scaled_bounds, widened
from energyrig.domain import WindowSettings
from energyrig.errors import CaptureError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from energyrig.instruments.joulescope.jlsfile import JlsCapture
from energyrig.rig.analysis import WindowScan
from support.float32_files import PERIOD, RATE, SR_OPTIONS, recording, write_session
from support.jls import write_js220

def numpy_energies(current: np.ndarray, volts: np.ndarray, high: np.ndarray) -> np.ndarray:
    """T · Σ v·i over each run of trigger-high samples (float64 of the float32 samples)."""
    p = current.astype(np.float64) * volts.astype(np.float64)
    edges = np.flatnonzero(np.diff(high.astype(np.int8)))
    rises, falls = edges[::2] + 1, edges[1::2] + 1
    return np.array([p[a:b].sum() for a, b in zip(rises, falls)]) / RATE


@pytest.fixture
def jls(tmp_path: Path) -> tuple[Path, tuple[np.ndarray, ...]]:
    data = recording()
    path = tmp_path / "rec.jls"
    write_js220(path, RATE, *data)
    return path, data


def test_chunks_are_float64_once_with_their_bounds(jls) -> None:
    path, (current, volts, _) = jls
    chunks = list(JlsCapture(path, CaptureOptions(chunk_samples=65_536)).chunks())
    assert all(c.current_a.dtype == np.float64 and c.voltage_v.dtype == np.float64
               for c in chunks)
    np.testing.assert_array_equal(np.concatenate([c.current_a for c in chunks]), current)
    for c in chunks:
        assert c.corrupt is None
        assert c.bounds == {"current_a": (c.current_a.min(), c.current_a.max()),
                            "voltage_v": (c.voltage_v.min(), c.voltage_v.max())}


def test_energies_are_numpys_to_1e_9(jls) -> None:
    path, data = jls
    windows = list(WindowScan(path, settings=WindowSettings(guard_s=0.001, baseline_s=0.01)))
    np.testing.assert_allclose([w.energy_j for w in windows], numpy_energies(*data),
                               rtol=1e-9)


def test_a_scaled_current_keeps_float64_precision(tmp_path: Path) -> None:
    """A current given as volts across a shunt: scaled after the conversion, in float64."""
    current, volts, high = recording()
    path = tmp_path / "shunt.jls"
    write_js220(path, RATE, current * np.float32(0.5), volts, high)  # volts across 0.5 ohm
    windows = list(WindowScan(path, CaptureOptions(shunt_ohms=0.5),
                              WindowSettings(guard_s=0.001, baseline_s=0.01)))
    volts_across = (current * np.float32(0.5)).astype(np.float64)
    expected = numpy_energies((volts_across / 0.5), volts, high)
    np.testing.assert_allclose([w.energy_j for w in windows], expected, rtol=1e-9)


def test_a_nan_sample_is_corrupt_and_counts_as_zero(tmp_path: Path) -> None:
    current, volts, high = recording()
    lost = 3 * PERIOD + 3_100  # inside the fourth window
    current[lost] = np.nan
    path = tmp_path / "nan.jls"
    write_js220(path, RATE, current, volts, high)
    chunks = list(JlsCapture(path, CaptureOptions(chunk_samples=65_536)).chunks())
    hit = next(c for c in chunks if c.corrupt is not None)
    assert hit.bounds is None and int(hit.corrupt.sum()) == 1
    assert np.isfinite(hit.current_a).all()
    windows = list(WindowScan(path, settings=WindowSettings(guard_s=0.001, baseline_s=0.01)))
    current[lost] = 0.0
    np.testing.assert_allclose([w.energy_j for w in windows],
                               numpy_energies(current, volts, high), rtol=1e-9)
    assert "corrupt_samples" in windows[3].flags
    assert not any(w.flags for k, w in enumerate(windows) if k != 3)


@pytest.mark.parametrize("signal, value, what", [("current", 5e3, "current"),
                                                 ("voltage", -2e3, "supply voltage")])
def test_an_implausible_sample_is_still_refused(tmp_path: Path, signal: str, value: float,
                                                what: str) -> None:
    """The plausibility check takes the reader's bounds instead of its own passes, and
    still names the sample."""
    current, volts, high = recording()
    (current if signal == "current" else volts)[123_456] = value
    path = tmp_path / "bad.jls"
    write_js220(path, RATE, current, volts, high)
    capture = JlsCapture(path)
    with pytest.raises(CaptureError, match=f"sample 123456.*{what} {value:g}"):
        list(plausible_chunks(capture.chunks(), capture.source))


# --- the same one pass for a sigrok session's float32 channels (capture.widened) ----------

def test_a_sigrok_session_is_widened_once_with_its_bounds(tmp_path: Path) -> None:
    current, volts, high = recording()
    path = write_session(tmp_path / "s.sr", current * np.float32(2.0), volts, high)
    options = CaptureOptions(shunt_ohms=2.0, chunk_samples=65_536, **SR_OPTIONS)
    chunks = list(open_capture(path, options).chunks())
    for c in chunks:
        assert c.current_a.dtype == np.float64 and c.voltage_v.dtype == np.float64
        assert c.bounds == {"current_a": (c.current_a.min(), c.current_a.max()),
                            "voltage_v": (c.voltage_v.min(), c.voltage_v.max())}
    windows = list(WindowScan(path, options, WindowSettings(guard_s=0.001, baseline_s=0.01)))
    shunt_v = (current * np.float32(2.0)).astype(np.float64)
    np.testing.assert_allclose([w.energy_j for w in windows],
                               numpy_energies(shunt_v / 2.0, volts, high), rtol=1e-9)


def test_a_nan_in_a_sigrok_channel_is_still_refused(tmp_path: Path) -> None:
    current, volts, high = recording()
    volts[77_777] = np.nan
    path = write_session(tmp_path / "nan.sr", current, volts, high)
    capture = open_capture(path, CaptureOptions(shunt_ohms=1.0, **SR_OPTIONS))
    with pytest.raises(CaptureError, match="sample 77777.*supply voltage nan"):
        list(plausible_chunks(capture.chunks(), capture.source))


@pytest.mark.parametrize("factor", [3.0, 1 / 3, -0.7])
def test_scaled_bounds_are_the_products_min_and_max(factor: float) -> None:
    x = np.random.default_rng(2).normal(0, 1, 10_001).astype(np.float32)
    wide, bounds = widened(x)
    assert bounds == (wide.min(), wide.max())
    assert scaled_bounds(bounds, factor) == ((wide * factor).min(), (wide * factor).max())
    x[5] = np.inf
    assert widened(x)[1] is None
