"""`.ppk2` sessions written by third-party tools, whose digital word is not the app's bit
pairs (issue 25, item 2).

The files are written as the tools' sources write them:

- m-mcgowan/ppk2-python, ``src/ppk2/ppk2file.py`` ``save_ppk2`` (commit 50f4ed88): a zip
  (deflate, level 6) of ``session.raw`` (``struct.pack_into("<fH", ..., s.current_ua,
  s.logic)``, ``Sample.logic`` "D0-D7 as 8-bit bitmask", ``src/ppk2/types.py``),
  ``metadata.json`` (``json.dumps({"metadata": {"samplesPerSecond", "startSystemTime"},
  "formatVersion": 2})``) and ``minimap.raw``;
- trembel/x_to_ppk2_converter, ``csv2ppk2-converter.py`` (commit e64916bf): every sample's
  bits ``struct.pack('<H', DEFAULT_DIGITAL_BITS)`` with ``DEFAULT_DIGITAL_BITS = 0xAAAA``
  ("Default value when no digital data is present"), and ``"createdBy":
  "csv2ppk2-converter.py"`` in the metadata.
"""
from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support.cli import rig_output

from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture

RATE = 100_000
N = 30_000
SUPPLY_V = 1.8
CHANNEL = 3
PERIOD = 10_000
HIGH = (4_000, 6_000)
#: A frame of ``struct`` ``"<fH"``: current in µA, the 16-bit word little-endian.
FRAME_LE = np.dtype([("current_ua", "<f4"), ("logic", "<u2")])


def save_ppk2(path: Path, current_ua: np.ndarray, logic: np.ndarray,
              metadata: dict | None = None) -> None:
    """A session as ppk2-python's ``save_ppk2`` writes it (``metadata`` replaces its inner
    metadata, for the converter's)."""
    frames = np.empty(len(current_ua), FRAME_LE)
    frames["current_ua"] = current_ua
    frames["logic"] = logic
    inner = metadata or {"samplesPerSecond": RATE, "startSystemTime": 1_700_000_000_000}
    minimap = {"lastElementFoldCount": 1, "data": {"length": 0, "min": [], "max": []},
               "maxNumberOfElements": 10_000, "numberOfTimesToFold": 0}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        zf.writestr("session.raw", frames.tobytes())
        zf.writestr("metadata.json", json.dumps({"metadata": inner, "formatVersion": 2}))
        zf.writestr("minimap.raw", json.dumps(minimap))


def _profile() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Current in µA (multiples of 1/8: exact in float32), the D0..D7 bit mask (D3 the
    trigger, D0 toggling, D7 always high) and the trigger."""
    k = np.arange(N)
    phase = k % PERIOD
    trigger = (phase >= HIGH[0]) & (phase < HIGH[1])
    current = np.where(trigger, np.round((800 + (phase - HIGH[0]) * 0.25) * 8) / 8, 5.0)
    mask = (trigger.astype(np.uint16) << CHANNEL) | (k % 2).astype(np.uint16) | (1 << 7)
    return current.astype(np.float32), mask, trigger


Analyze = Callable[..., tuple[int, str]]


@pytest.fixture
def analyze(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Analyze:
    """``analyze(path, *args)``: ``rig analyze PATH --voltage 1.8 --json ARGS`` through the
    console script; its exit code and stdout (stderr when it failed)."""
    return lambda path, *args: rig_output(monkeypatch, capsys, "analyze", str(path),
                                          "--voltage", str(SUPPLY_V), "--json", *args)


def test_ppk2_python_bit_mask_is_told_from_the_apps_pairs(tmp_path: Path,
                                                          analyze: Analyze) -> None:
    current, mask, trigger = _profile()
    path = tmp_path / "ppk2-python.ppk2"
    save_ppk2(path, current, mask)
    code, output = analyze(path, "--trigger", "D3")
    assert code == 0, output
    windows = json.loads(output)["windows"]
    i = current.astype(np.float64) * 1e-6
    rise = np.flatnonzero(trigger[1:] & ~trigger[:-1]) + 1
    assert len(windows) == len(rise) == 3
    for got, a in zip(windows, rise, strict=True):
        assert got["flags"] == [] and got["samples"] == HIGH[1] - HIGH[0]
        true = SUPPLY_V / RATE * float(i[a:a + HIGH[1] - HIGH[0]].sum())
        assert got["energy_j"] == pytest.approx(true, rel=1e-9)
    # Every channel as written: D0 toggles, D7 is high throughout.
    chunks = list(open_capture(path, CaptureOptions(voltage=SUPPLY_V)).chunks())
    logic = np.concatenate([c.logic for c in chunks])
    assert np.array_equal(logic, mask.astype(np.uint8))


def test_the_layout_given_overrides_the_files(tmp_path: Path, analyze: Analyze) -> None:
    """Read as the app's pairs, the mask's low byte holds D0..D3 as "no state": D3 never
    rises; the option is what the error names, and what a user can force."""
    current, mask, _ = _profile()
    path = tmp_path / "ppk2-python.ppk2"
    save_ppk2(path, current, mask)
    code, output = analyze(path, "--trigger", "D3", "--digital-layout", "pairs")
    assert code == 2 and "never went high" in output
    code, output = analyze(path, "--trigger", "D3", "--digital-layout", "mask")
    assert code == 0, output


def test_a_converters_session_without_digital_channels_is_refused(tmp_path: Path,
                                                                  analyze: Analyze) -> None:
    current, _, _ = _profile()
    path = tmp_path / "converted.ppk2"
    save_ppk2(path, current, np.full(N, 0xAAAA, np.uint16), metadata={
        "samplesPerSecond": RATE, "startSystemTime": 1.7e12,
        "createdBy": "csv2ppk2-converter.py",
        "sourceFileInfo": {"filename": "log.csv", "type": "CSV"}})
    code, output = analyze(path)
    assert code == 2
    assert output.strip() == (
        f"rig: error: {path}: written by csv2ppk2-converter.py (metadata.json createdBy), "
        "which stores no digital channels (every sample 0xAAAA): this file holds no trigger; "
        "analyze the recording it was converted from instead")


def test_a_csv_layout_is_refused_for_a_session(tmp_path: Path, analyze: Analyze) -> None:
    current, mask, _ = _profile()
    path = tmp_path / "s.ppk2"
    save_ppk2(path, current[:10], mask[:10])
    code, output = analyze(path, "--digital-layout", "d7-first")
    assert code == 2
    assert output.strip() == (f"rig: error: {path}: --digital-layout d7-first does not apply "
                              "to a Power Profiler session: its layouts are pairs, mask")
