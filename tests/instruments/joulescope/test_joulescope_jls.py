"""The Joulescope JLS reader against files written by pyjls's own ``Writer``.

Each file is laid out as the Joulescope UI / ``pyjoulescope_driver`` ``record.py`` writes
it: one source, FSR signals ``current``/``voltage``/``power`` (f32) and ``gpi[k]`` (u1,
packed little-endian), each from its own first sample id. The currents are piecewise
constant with trigger pulses of known length, so every window's energy has a closed form:
``energy_j = T · L · I · V`` and ``net_energy_j = T · L · (I − I_idle) · V``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pyjls import DataType, SignalType, Writer
from support.cli import RigCli

from energyrig.domain import WindowSettings
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from energyrig.instruments.joulescope.jlsfile import JlsCapture
from energyrig.energy.windows import find_windows, stream_flags

RATE = 100_000
T = 1.0 / RATE
VOLT = 3.0
IDLE_A = 0.001
IDLE_SAMPLES = 2_500  # 25 ms: more than guard + baseline (11 ms) before each pulse
#: (samples the trigger is high, current inside, A) per pulse
PULSES = ((300, 0.020), (1_234, 0.005), (4_000, 0.125), (777, 0.0625))


def trace() -> tuple[np.ndarray, np.ndarray]:
    """Current (A) and trigger (0/1) of the pulses, idle before, between and after."""
    current, trigger = [np.full(IDLE_SAMPLES, IDLE_A)], [np.zeros(IDLE_SAMPLES, np.uint8)]
    for length, amps in PULSES:
        current += [np.full(length, amps), np.full(IDLE_SAMPLES, IDLE_A)]
        trigger += [np.ones(length, np.uint8), np.zeros(IDLE_SAMPLES, np.uint8)]
    return np.concatenate(current), np.concatenate(trigger)


def write_jls(path: Path, f32: dict[str, np.ndarray], u1: dict[str, np.ndarray],
              offsets: dict[str, int] | None = None, rates: dict[str, int] | None = None,
              block: int = 10_000) -> Path:
    """A JLS v2 file of one JS220 source, written in blocks as ``record.py`` does."""
    offsets, rates = offsets or {}, rates or {}
    with Writer(str(path)) as w:
        w.source_def(source_id=1, name="JS220-001234", vendor="Jetperch", model="JS220",
                     version="", serial_number="001234")
        for sid, (name, data) in enumerate([*f32.items(), *u1.items()], start=1):
            is_bits = name in u1
            w.signal_def(signal_id=sid, source_id=1, signal_type=SignalType.FSR,
                         data_type=DataType.U1 if is_bits else DataType.F32,
                         sample_rate=rates.get(name, RATE), name=name,
                         units="" if is_bits else {"current": "A", "voltage": "V"}.get(name, "W"))
            first = offsets.get(name, 0)
            for lo in range(0, len(data), block):  # block is a multiple of 8
                part = data[lo:lo + block]
                if is_bits:
                    w.fsr(sid, first + lo, np.packbits(part, bitorder="little"))
                else:
                    w.fsr_f32(sid, first + lo, part.astype(np.float32))
    return path


def closed_form(volts: float = VOLT) -> list[float]:
    """energy_j, net_energy_j of each pulse in turn, J."""
    return [e for n, amps in PULSES for e in (T * n * amps * volts,
                                              T * n * (amps - IDLE_A) * volts)]


def energies(capture: JlsCapture) -> list[float]:
    """energy_j, net_energy_j of each window in turn, J."""
    return [e for w in find_windows(capture) for e in (w.energy_j, w.net_energy_j)]


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """current, voltage, power, gpi[0] (the trigger) and gpi[1] (always low)."""
    current, trigger = trace()
    volts = np.full(len(current), VOLT)
    return write_jls(tmp_path_factory.mktemp("jls") / "rec.jls",
                     {"current": current, "voltage": volts, "power": current * volts},
                     {"gpi[0]": trigger, "gpi[1]": np.zeros(len(current), np.uint8)})


@pytest.mark.parametrize("chunk", [1 << 20, 1000, 999])
def test_every_window_energy_equals_the_closed_form(recording: Path, chunk: int) -> None:
    capture = open_capture(recording, CaptureOptions(chunk_samples=chunk))
    assert isinstance(capture, JlsCapture) and capture.trigger.name == "gpi[0]"
    assert capture.samples == IDLE_SAMPLES * (len(PULSES) + 1) + sum(n for n, _ in PULSES)
    assert len(list(capture.chunks())) == -(-capture.samples // chunk)
    assert energies(capture) == pytest.approx(closed_form(), rel=1e-6)
    assert [w.samples for w in find_windows(capture)] == [n for n, _ in PULSES]


def test_power_signal_gives_the_same_energies(recording: Path) -> None:
    capture = open_capture(recording, CaptureOptions(current="power", chunk_samples=4096))
    assert energies(capture) == pytest.approx(closed_form(), rel=1e-6)


def test_constant_voltage_replaces_the_voltage_signal(recording: Path) -> None:
    capture = open_capture(recording, CaptureOptions(voltage=1.8))
    assert energies(capture) == pytest.approx(closed_form(1.8), rel=1e-6)


def test_named_gpi_without_pulses_finds_no_window(recording: Path) -> None:
    assert energies(open_capture(recording, CaptureOptions(trigger="gpi[1]"))) == []


def test_signals_starting_at_different_sample_ids_are_aligned(tmp_path: Path) -> None:
    """The driver records each signal from its own first sample id: the trigger here starts
    80 samples before the current, so its first 80 samples are not read."""
    current, trigger = trace()
    lead = np.zeros(80, np.uint8)
    path = write_jls(tmp_path / "offset.jls", {"current": current},
                     {"gpi[2]": np.concatenate([lead, trigger])},
                     offsets={"current": 1080, "gpi[2]": 1000}, block=8000)
    capture = open_capture(path, CaptureOptions(voltage=VOLT, chunk_samples=5000))
    assert capture.samples == len(current)
    assert energies(capture) == pytest.approx(closed_form(), rel=1e-6)


def test_nan_samples_are_flagged_corrupt(tmp_path: Path) -> None:
    current, trigger = trace()
    current[IDLE_SAMPLES + 100] = np.nan  # inside the first pulse
    path = write_jls(tmp_path / "nan.jls", {"current": current}, {"gpi[0]": trigger})
    capture = open_capture(path, CaptureOptions(voltage=VOLT, chunk_samples=1000))
    windows = list(find_windows(capture))
    flags = [stream_flags(capture.chunks(), w, WindowSettings()) for w in windows]
    assert flags == [("corrupt_samples",), (), (), ()]
    assert windows[0].energy_j == pytest.approx(T * 299 * 0.020 * VOLT, rel=1e-6)


def test_content_sniff_recognises_a_jls_without_its_extension(recording: Path,
                                                              tmp_path: Path) -> None:
    renamed = tmp_path / "recording.dat"
    renamed.write_bytes(recording.read_bytes())
    assert isinstance(open_capture(renamed), JlsCapture)


@pytest.mark.parametrize(("options", "rates", "message"), [
    (CaptureOptions(trigger="gpi[3]"), {}, "no digital signal 'gpi[3]' for the trigger"),
    (CaptureOptions(current="amps"), {}, "no current signal 'amps'"),
    (CaptureOptions(trigger="current"), {}, "no digital signal 'current'"),
    (CaptureOptions(voltage="vbus"), {}, "no voltage signal 'vbus'"),
    (CaptureOptions(), {"gpi[0]": 50_000}, "signals recorded at different sample rates"),
])
def test_errors_name_the_file_and_the_signals(tmp_path: Path, options: CaptureOptions,
                                              rates: dict[str, int], message: str) -> None:
    current, trigger = trace()
    path = write_jls(tmp_path / "e.jls", {"current": current, "voltage": current * 0 + VOLT},
                     {"gpi[0]": trigger}, rates=rates)
    with pytest.raises(CaptureError, match=message.replace("[", r"\[")) as err:
        open_capture(path, options)
    assert str(path) in str(err.value)


def test_no_trigger_and_no_voltage_are_named(tmp_path: Path) -> None:
    current, trigger = trace()
    path = write_jls(tmp_path / "bare.jls", {"current": current}, {})
    with pytest.raises(ChannelError, match=r"no general-purpose input.*signals: current"):
        open_capture(path, CaptureOptions(voltage=VOLT))
    path = write_jls(tmp_path / "novolts.jls", {"current": current}, {"gpi[0]": trigger})
    with pytest.raises(ChannelError, match="no voltage signal.*--voltage 3.3"):
        open_capture(path)


def test_a_jls_extension_on_other_content_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "fake.jls"
    fake.write_bytes(b"time_s,current_a\n0,1\n")
    with pytest.raises(CaptureError, match=r"not a Joulescope JLS file \(tried by content\): it looks like a CSV"):
        open_capture(fake)


def test_a_recording_not_closed_is_refused_and_left_untouched(recording: Path,
                                                              tmp_path: Path) -> None:
    """pyjls would repair it in place (it writes to the file it reads)."""
    cut = tmp_path / "cut.jls"
    cut.write_bytes(recording.read_bytes()[:100_000])
    with pytest.raises(CaptureError, match=r"not closed .* the file has 100000\): pyjls"):
        open_capture(cut)
    assert cut.read_bytes() == recording.read_bytes()[:100_000]


def test_rig_analyze_json(recording: Path, rig_cli: RigCli) -> None:
    done = rig_cli("analyze", str(recording), "--json")
    assert done.returncode == 0, done.stderr
    windows = json.loads(done.stdout)["windows"]
    got = [e for w in windows for e in (w["energy_j"], w["net_energy_j"])]
    assert got == pytest.approx(closed_form(), rel=1e-6)
