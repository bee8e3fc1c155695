"""`rig analyze` at its reader's speed, third round (issue 24 part 2): the energy kernel reads
float32 samples as a JLS or a sigrok session holds them, every sum in double, so the
readers hand them unconverted to `rig analyze`'s window scan (``keep_float32``), with the
same energies bit for bit; a current that must be scaled, a supply computed from two
channels and a calibrated scan stay float64."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from energyrig.capture import plausible_chunks
from energyrig.domain import WindowSettings
from energyrig.energy import _energy, windows
from energyrig.energy.windows import find_windows
from energyrig.errors import CaptureError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from energyrig.instruments.sigrok.srfile import SrOptions
from energyrig.rig.analysis import WindowScan
from support.jls import write_js220

from support.float32_files import RATE, SR_OPTIONS, recording, write_session

SETTINGS = WindowSettings(guard_s=0.001, baseline_s=0.01)


def events(current: np.ndarray, voltage: np.ndarray | float, logic: np.ndarray
           ) -> list[tuple]:
    """Every event of one kernel fed the samples in two segments, then closed."""
    kernel = _energy.Integrator(1 / RATE, 0, True, 1, 100, 1000)
    half = len(current) // 2
    out = []
    for lo, hi in ((0, half), (half, len(current))):
        v = voltage if isinstance(voltage, float) else voltage[lo:hi]
        out += kernel.feed(current[lo:hi], v, logic[lo:hi], None, lo)
    return out + kernel.finish()


@pytest.mark.parametrize("voltage_kind", ["float32", "float64", "constant"])
@pytest.mark.parametrize("current_kind", ["float32", "float64"])
def test_the_kernel_reads_float32_as_its_float64_conversion_bit_for_bit(
        current_kind: str, voltage_kind: str) -> None:
    current, volts, high = recording()
    logic = high.astype(np.uint8)
    reference = events(current.astype(np.float64), volts.astype(np.float64), logic)
    assert sum(ev[0] == 0 for ev in reference) == 40
    fed_current = current if current_kind == "float32" else current.astype(np.float64)
    fed_volts: np.ndarray | float = {"float32": volts, "float64": volts.astype(np.float64),
                                     "constant": 3.3}[voltage_kind]
    if voltage_kind == "constant":
        reference = events(current.astype(np.float64), 3.3, logic)
    assert events(fed_current, fed_volts, logic) == reference


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_the_kernel_refuses_other_sample_types(dtype: type) -> None:
    kernel = _energy.Integrator(1 / RATE, 0, True, 1, 100, 1000)
    with pytest.raises(TypeError, match="float64 or float32"):
        kernel.feed(np.zeros(8, dtype=dtype), 3.3, np.zeros(8, dtype=np.uint8), None, 0)


@pytest.fixture
def jls(tmp_path: Path) -> Path:
    path = tmp_path / "rec.jls"
    write_js220(path, RATE, *recording())
    return path


def test_a_jls_reader_asked_keeps_float32(jls: Path) -> None:
    kept = list(open_capture(jls, CaptureOptions(keep_float32=True,
                                                 chunk_samples=65_536)).chunks())
    assert all(c.current_a.dtype == np.float32 and c.voltage_v.dtype == np.float32
               for c in kept)
    widened = list(open_capture(jls, CaptureOptions(chunk_samples=65_536)).chunks())
    assert all(c.current_a.dtype == np.float64 for c in widened)
    assert [c.bounds for c in kept] == [c.bounds for c in widened]


def test_the_window_scan_reads_float32_and_its_windows_are_those_of_float64(
        jls: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fed: set[str] = set()
    samples = windows._samples

    def spy(values: np.ndarray) -> np.ndarray:  # what the finder hands the kernel
        out = samples(values)
        fed.add(str(out.dtype))
        return out

    monkeypatch.setattr(windows, "_samples", spy)
    scanned = list(WindowScan(jls, settings=SETTINGS))
    assert fed == {"float32"}
    fed.clear()
    widened = list(find_windows(open_capture(jls).chunks(), SETTINGS))
    assert fed == {"float64"}
    assert [(w.energy_j, w.baseline_w, w.edge_error_j, w.flags) for w in scanned] == \
        [(w.energy_j, w.baseline_w, w.edge_error_j, w.flags) for w in widened]


def test_a_nan_in_a_kept_float32_jls_is_still_corrupt_and_zero(tmp_path: Path) -> None:
    current, volts, high = recording()
    current[3 * 5_000 + 3_100] = np.nan
    path = tmp_path / "nan.jls"
    write_js220(path, RATE, current, volts, high)
    windows = list(WindowScan(path, settings=SETTINGS))
    current[3 * 5_000 + 3_100] = 0.0
    p = current.astype(np.float64) * volts.astype(np.float64)
    assert windows[3].energy_j == pytest.approx(p[3 * 5_000 + 3_000:
                                                  3 * 5_000 + 4_200].sum() / RATE, rel=1e-9)
    assert "corrupt_samples" in windows[3].flags


@pytest.mark.parametrize("signal, value, what", [("current", 5e3, "current"),
                                                 ("voltage", -2e3, "supply voltage")])
def test_an_implausible_float32_sample_is_still_refused_by_its_index(
        tmp_path: Path, signal: str, value: float, what: str) -> None:
    current, volts, high = recording()
    (current if signal == "current" else volts)[123_456] = value
    path = tmp_path / "bad.jls"
    write_js220(path, RATE, current, volts, high)
    capture = open_capture(path, CaptureOptions(keep_float32=True))
    with pytest.raises(CaptureError, match=f"sample 123456.*{what} {value:g}"):
        list(plausible_chunks(capture.chunks(), capture.source))


@pytest.mark.parametrize("shunt_ohms, minus_shunt, current_dtype, supply_dtype", [
    (1.0, False, np.float32, np.float32),   # as read: the kernel's alone
    (2.0, False, np.float64, np.float32),   # scaled: in float64, as before
    (1.0, True, np.float32, np.float64),    # the supply less the shunt: in float64
])
def test_a_sigrok_session_keeps_float32_only_where_nothing_is_computed(
        tmp_path: Path, shunt_ohms: float, minus_shunt: bool, current_dtype: type,
        supply_dtype: type) -> None:
    current, volts, high = recording()
    shunt_v = current * np.float32(shunt_ohms)
    path = write_session(tmp_path / "s.sr", shunt_v, volts, high)
    options = SrOptions(shunt_ohms=shunt_ohms, voltage_minus_shunt=minus_shunt,
                        chunk_samples=65_536, **SR_OPTIONS)
    kept = list(open_capture(path, SrOptions(**{**options.__dict__, "keep_float32": True}))
                .chunks())
    assert {c.current_a.dtype for c in kept} == {np.dtype(current_dtype)}
    assert {c.voltage_v.dtype for c in kept} == {np.dtype(supply_dtype)}
    widened = list(open_capture(path, options).chunks())
    for k, w in zip(kept, widened, strict=True):  # the same values, wider or not
        np.testing.assert_array_equal(k.current_a, w.current_a)
        np.testing.assert_array_equal(k.voltage_v, w.voltage_v)
    scanned = list(WindowScan(path, options, SETTINGS))
    found = list(find_windows(iter(widened), SETTINGS))
    assert [w.energy_j for w in scanned] == [w.energy_j for w in found]
