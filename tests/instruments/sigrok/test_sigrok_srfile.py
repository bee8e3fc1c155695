"""The .sr reader against sigrok-cli itself, and against hand-made files for the corner cases.

Reference outputs of sigrok-cli 0.7.2 / libsigrok 0.5.2, and why these:

- ``-i FILE --show``: sample rate, channel names and types, logic unitsize, logic and analog
  sample counts.
- ``-O analog``: every analog sample of every channel, one labelled line each
  (``A1: 3.09 V DC``). It prints each packet as it comes, so it keeps all data when logic
  and analog chunks differ in length (``-O csv`` pairs them up and discards the rest:
  "Discarding partial packet"). It prints 2 decimals (the session driver declares 2
  digits), so values are compared within half of the last digit.
- ``-O bits -C Dn``: every logic sample of one channel as 0/1 digits, exact.

Not used: ``-O csv`` (discards data, above), ``-O wav`` (crashes on two analog channels and
on ``-C A1``), ``-C An`` with ``-O analog`` (on input files it prints channel A0 whatever
channel is named), ``-O binary`` (writes more bytes than the file holds samples).
"""
from __future__ import annotations

import itertools
import json
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from support.cli import RigCli
from support.sigrok_cli import ANALOG_PRINT_TOLERANCE_V, sigrok, sigrok_analog, sigrok_bits, sigrok_show

from energyrig.capture import Chunk
from energyrig.errors import CaptureError, ChannelError
from energyrig.instruments.fileopts import CaptureOptions
from energyrig.instruments.files import open_capture
from energyrig.instruments.sigrok.srfile import SrCapture, SrOptions, parse_samplerate
from energyrig.energy.windows import WindowFinder, WindowSettings, find_windows

def make_demo(path: Path, samples: int, channels: str | None, driver: str = "demo",
              samplerate: str = "1M") -> Path:
    """A session file written by sigrok-cli's demo driver (``channels=None``: all enabled)."""
    sigrok("--driver", driver, "--config", f"samplerate={samplerate}", "--samples", str(samples),
           *(["--channels", channels] if channels else []), "--output-file", str(path))
    return path


def read_all(capture: SrCapture, first: int | None = None
             ) -> tuple[list[Chunk], np.ndarray, np.ndarray | float, np.ndarray | None]:
    """Chunks of a capture (its ``first`` chunks only, if given) and their concatenated
    current, voltage and logic."""
    chunks = list(itertools.islice(capture.chunks(), first))
    current = np.concatenate([c.current_a for c in chunks])
    voltage = (np.concatenate([c.voltage_v for c in chunks])
               if not isinstance(chunks[0].voltage_v, float) else chunks[0].voltage_v)
    logic = (np.concatenate([c.logic for c in chunks])
             if chunks[0].logic is not None else None)
    return chunks, current, voltage, logic


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Logic and analog channels, enough samples for many chunks of different lengths."""
    return make_demo(tmp_path_factory.mktemp("sr") / "demo.sr", 60_000, "D0,D1,D3,A0,A1,A2")


def test_demo_file_has_many_chunks_of_different_lengths(demo: Path) -> None:
    with zipfile.ZipFile(demo) as archive:
        sizes = {info.filename: info.file_size for info in archive.infolist()}
    logic = [n for n in sizes if n.startswith("logic-1-")]
    analog = [n for n in sizes if n.startswith("analog-1-9-")]
    assert len(logic) >= 10 and len(analog) >= 40
    assert sizes["logic-1-1"] != sizes["analog-1-9-1"] // 4  # streams chunked differently


def test_counts_and_channels_match_sigrok_show(demo: Path) -> None:
    show = sigrok_show(demo)
    meta = SrCapture(demo, SrOptions(voltage="A1")).metadata
    assert meta.samplerate_hz == show["samplerate"] == 1_000_000
    assert meta.unitsize == show["unitsize"]
    assert meta.logic_samples == show["logic_samples"] == 60_000
    assert all(meta.analog_samples(name) == show["analog_samples"] for name in meta.analog_members)
    logic_named = [name for index, (name, kind) in enumerate(show["channels"])
                   if kind == "logic" and name != str(index)]  # unnamed = disabled probes
    assert list(meta.logic_bits) == logic_named == ["D0", "D1", "D3"]
    assert meta.logic_bits == {"D0": 0, "D1": 1, "D3": 3}
    assert list(meta.analog_members) == [n for n, kind in show["channels"] if kind == "analog"]


def test_analog_values_match_sigrok_cli(demo: Path) -> None:
    printed = sigrok_analog(demo)
    assert sorted(printed) == ["A0", "A1", "A2"]
    for name, reference in printed.items():
        capture = SrCapture(demo, SrOptions(current=name, voltage=3.3, chunk_samples=7_000))
        _, current, _, _ = read_all(capture)
        assert len(current) == len(reference) == 60_000
        assert np.max(np.abs(current - reference)) <= ANALOG_PRINT_TOLERANCE_V
        assert np.ptp(reference) > 1.0  # a real signal, not a constant that trivially agrees


@pytest.mark.parametrize("channel", ["D0", "D1"])
def test_logic_values_match_sigrok_cli(demo: Path, channel: str) -> None:
    reference = sigrok_bits(demo, channel)
    _, _, _, logic = read_all(SrCapture(demo, SrOptions(trigger=channel, voltage=3.3,
                                                        chunk_samples=5_000)))
    assert len(reference) == 60_000
    assert 0 < reference.sum() < len(reference)
    np.testing.assert_array_equal(logic, reference)


def test_logic_channel_maps_by_probe_number_not_by_order(demo: Path) -> None:
    """D3 is ``probe4``: bit 3, even though it is the third enabled channel.

    The demo driver of libsigrok 0.5.2 fills one bit per *enabled* channel (bits 0-2 here),
    so bit 3 stays 0 and sigrok-cli prints D3 as all zeros; a reader that took the third
    enabled channel to be bit 2 would return bit 2's busy signal instead.
    """
    reference = sigrok_bits(demo, "D3")
    _, _, _, logic = read_all(SrCapture(demo, SrOptions(trigger="D3", voltage=3.3)))
    np.testing.assert_array_equal(logic, reference)
    with zipfile.ZipFile(demo) as archive:
        raw = np.frombuffer(b"".join(archive.read(f"logic-1-{k}") for k in range(1, 4)), np.uint8)
    assert ((raw >> 2) & 1).any() and not ((raw >> 3) & 1).any()


#: Blocks of one sample are read over the file's first three logic members and a sample (twelve
#: analog members): a chunk of one sample takes the same steps wherever it falls, and those
#: samples cross both kinds of member boundary, each several times; the file's end is read by
#: the other blocks, whose last chunks are partial (60 000 = 60 x 999 + 60 = 14 x 4097 + 2642).
#: The whole file in blocks of one was 60 000 chunks, 2.3 s of CPU (docs/performance.md).
ONE_SAMPLE_PREFIX = 3 * 4096 + 1


def test_chunking_does_not_change_the_samples(demo: Path) -> None:
    """Blocks that divide neither 4096 (logic) nor 1020 (analog) give the same samples, and so
    do blocks of one sample (:data:`ONE_SAMPLE_PREFIX`)."""
    whole = read_all(SrCapture(demo, SrOptions(voltage="A1", chunk_samples=1 << 20)))
    for block, first in ((1, ONE_SAMPLE_PREFIX), (999, None), (4097, None)):
        chunks, current, voltage, logic = read_all(
            SrCapture(demo, SrOptions(voltage="A1", chunk_samples=block)), first)
        assert [c.start_index for c in chunks] == list(np.cumsum([0] + [len(c) for c in chunks[:-1]]))
        assert max(len(c) for c in chunks) == min(block, 60_000)
        read = sum(len(c) for c in chunks)
        assert read == (first or 60_000)
        np.testing.assert_array_equal(current, whole[1][:read])
        np.testing.assert_array_equal(voltage, whole[2][:read])
        np.testing.assert_array_equal(logic, whole[3][:read])
        assert all(c.period_s == 1e-6 for c in chunks)


def test_unitsize_two_reads_high_logic_channels(tmp_path: Path) -> None:
    path = make_demo(tmp_path / "u2.sr", 12_000, None,
                     driver="demo:logic_channels=12:analog_channels=1")
    show = sigrok_show(path)
    capture = SrCapture(path, SrOptions(trigger="D10", voltage=1.8))
    assert capture.metadata.unitsize == show["unitsize"] == 2
    assert capture.metadata.logic_bits["D10"] == 10
    _, _, _, logic = read_all(capture)
    reference = sigrok_bits(path, "D10")
    assert 0 < reference.sum() < len(reference)
    np.testing.assert_array_equal(logic, reference)


def test_analog_only_file(tmp_path: Path) -> None:
    path = make_demo(tmp_path / "analog.sr", 5_000, "A0,A2")
    capture = SrCapture(path, SrOptions(current="A2", voltage="A0"))
    assert capture.metadata.analog_members == {"A0": "analog-1-1", "A2": "analog-1-2"}
    assert capture.metadata.logic_samples == 0 and capture.trigger_channel is None
    chunks, current, voltage, logic = read_all(capture)
    printed = sigrok_analog(path)
    assert logic is None and len(current) == sigrok_show(path)["analog_samples"] == 5_000
    assert np.max(np.abs(current - printed["A2"])) <= ANALOG_PRINT_TOLERANCE_V
    assert np.max(np.abs(voltage - printed["A0"])) <= ANALOG_PRINT_TOLERANCE_V
    with pytest.raises(ChannelError, match="no logic channel 'D0'.*analog: A0, A2"):
        SrCapture(path, SrOptions(trigger="D0", voltage=3.3))


def test_scaling_options(demo: Path) -> None:
    _, shunt_v, supply_v, _ = read_all(SrCapture(demo, SrOptions(current="A0", voltage="A1")))
    _, i_shunt, _, _ = read_all(SrCapture(demo, SrOptions(current="A0", shunt_ohms=0.5,
                                                          voltage=3.3)))
    np.testing.assert_allclose(i_shunt, shunt_v / 0.5, rtol=1e-15)
    _, i_scaled, v_const, _ = read_all(SrCapture(demo, SrOptions(current="A0",
                                                                 current_scale_a_per_v=0.1,
                                                                 voltage="3.3")))
    np.testing.assert_allclose(i_scaled, shunt_v * 0.1, rtol=1e-15)
    assert v_const == 3.3
    _, _, board_v, _ = read_all(SrCapture(demo, SrOptions(current="A0", shunt_ohms=1.0,
                                                          voltage="A1", voltage_minus_shunt=True)))
    np.testing.assert_allclose(board_v, supply_v - shunt_v, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("options", "error", "message"), [
    (SrOptions(current="A7", voltage=3.3), ChannelError, "no analog channel 'A7' for the current"),
    (SrOptions(voltage="VDD"), ChannelError, "no analog channel 'VDD' for the voltage"),
    (SrOptions(trigger="D2", voltage=3.3), ChannelError, "no logic channel 'D2'.*logic: D0, D1, D3"),
    (SrOptions(), ChannelError, "no supply voltage given"),
    (SrOptions(voltage=3.3, shunt_ohms=1.0, current_scale_a_per_v=2.0), CaptureError, "not both"),
    (SrOptions(voltage=3.3, shunt_ohms=0.0), CaptureError, "must be > 0"),
    (SrOptions(voltage=3.3, chunk_samples=0), CaptureError, "chunk_samples must be >= 1"),
    (SrOptions(trigger="A1", voltage=3.3), CaptureError,
     "trigger 'A1' is an analog channel: give its threshold with --trigger-level"),
    (SrOptions(trigger="D1", trigger_level_v=1.0, voltage=3.3), CaptureError,
     "a trigger level applies to an analog trigger channel"),
    (SrOptions(trigger_bit=1, voltage=3.3), CaptureError,
     "--trigger-bit applies to a packed CSV column or a PPK2 file; name the sigrok trigger"),
])
def test_option_errors_name_the_file_and_the_problem(demo: Path, options: SrOptions,
                                                     error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as info:
        SrCapture(demo, options)
    assert str(info.value).startswith(f"{demo}: ")


def test_rig_analyze_reads_session_files(demo: Path, rig_cli: RigCli) -> None:
    options = ["--trigger", "D1", "--current", "A0", "--shunt-ohms", "10", "--voltage", "A1"]
    done = rig_cli("analyze", str(demo), *options, "--json")
    assert done.returncode == 0, done.stderr
    energies = [w["energy_j"] for w in json.loads(done.stdout)["windows"]]
    capture = open_capture(demo, CaptureOptions(trigger="D1", current="A0", shunt_ohms=10.0,
                                                voltage="A1"))
    assert isinstance(capture, SrCapture)
    assert energies == [w.energy_j for w in find_windows(capture)] and len(energies) > 100


@pytest.mark.parametrize(("args", "message"), [
    (["--trigger", "D5", "--voltage", "3.3"], "no logic channel 'D5' for the trigger"),
    ([], "no supply voltage given"),
])
def test_rig_analyze_channel_errors_exit_2_with_one_line(demo: Path, args: list[str],
                                                         message: str, rig_cli: RigCli) -> None:
    done = rig_cli("analyze", str(demo), *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"{demo}: {message}" in done.stderr


# --- an analog trigger: the demo driver's square wave on A2, thresholded -----------------

SQUARE_LEVEL_V = 1.65


@pytest.fixture(scope="module")
def square(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A2 set to a 0..3.3 V square wave (``-g A2 --config pattern=square:...``; a channel
    group's --config cannot also set the sample rate: the demo's default 200 kHz), A1 a sine."""
    path = tmp_path_factory.mktemp("sq") / "square.sr"
    sigrok("--driver", "demo", "-g", "A2", "--config",
           f"pattern=square:amplitude={SQUARE_LEVEL_V}:offset={SQUARE_LEVEL_V}",
           "--channels", "A1,A2", "--samples", "30000", "--output-file", str(path))
    return path


def printed_periods(path: Path, channel: str) -> tuple[np.ndarray, np.ndarray]:
    """Rising and falling edges (sample indices) of the square wave sigrok-cli prints."""
    high = (sigrok_analog(path)[channel] > SQUARE_LEVEL_V).astype(np.int8)
    assert 0 < high.sum() < len(high)
    d = np.diff(high)
    return np.flatnonzero(d == 1) + 1, np.flatnonzero(d == -1) + 1


def test_analog_trigger_windows_are_the_printed_square_waves_periods(square: Path) -> None:
    rises, falls = printed_periods(square, "A2")
    falls = falls[falls > rises[0]]                          # complete windows only
    options = SrOptions(trigger="A2", trigger_level_v=SQUARE_LEVEL_V, current="A1",
                        voltage=3.3, chunk_samples=4093)     # edges fall across chunks
    capture = SrCapture(square, options)
    assert capture.trigger_threshold is not None and capture.trigger_channel == "A2"
    chunks = list(capture.chunks())
    assert len(chunks) == 8
    settings = WindowSettings(guard_s=0.0, baseline_s=capture.period_s, min_samples=1)
    finder = WindowFinder(settings, source=capture.source)
    windows = list(find_windows(chunks, finder=finder))
    complete = min(len(rises), len(falls))
    assert len(windows) == complete > 2000
    T = capture.period_s
    rises, falls = rises[:complete], falls[:complete]
    np.testing.assert_array_equal([w.samples for w in windows], falls - rises)
    np.testing.assert_allclose([w.start_s for w in windows], (rises - 0.5) * T,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose([w.end_s for w in windows], (falls - 0.5) * T,
                               rtol=0, atol=1e-12)
    assert [e.kind for e in finder.unpaired] == ["rise"]   # the capture ends high


def test_rig_analyze_with_an_analog_trigger(square: Path, rig_cli: RigCli) -> None:
    rises, falls = printed_periods(square, "A2")
    done = rig_cli("analyze", str(square), "--trigger", "A2", "--trigger-level", "1.65",
               "--trigger-hysteresis", "0.3", "--current", "A1", "--voltage", "3.3",
               "--guard", "0", "--baseline", "5e-6", "--json")
    assert done.returncode == 0, done.stderr
    windows = json.loads(done.stdout)["windows"]
    assert len(windows) == min(len(rises), len(falls[falls > rises[0]]))
    done = rig_cli("analyze", str(square), "--trigger", "A2", "--voltage", "3.3")
    assert done.returncode == 2 and "--trigger-level VOLTS" in done.stderr


# --- hand-made files, written as libsigrok's srzip output writes them ---------------------

def write_sr(path: Path, members: dict[str, bytes], metadata: str | None = None,
             version: bytes = b"2", compression: int = zipfile.ZIP_DEFLATED) -> Path:
    """A session file with the given data members (metadata as srzip writes it by default)."""
    if metadata is None:
        metadata = ("[global]\nsigrok version=0.5.2\n\n[device 1]\ncapturefile=logic-1\n"
                    "total probes=8\nsamplerate=10 kHz\ntotal analog=1\nprobe1=TRIG\n"
                    "analog9=SHUNT\nunitsize=1\n")
    with zipfile.ZipFile(path, "w", compression) as archive:
        archive.writestr("version", version)
        archive.writestr("metadata", metadata)
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_handmade_file_with_unequal_streams_and_unchunked_logic(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    logic = np.array([0, 1, 1, 0, 1], dtype=np.uint8)
    shunt = np.arange(7, dtype="<f4") * 0.25
    path = write_sr(tmp_path / "f.sr", {"logic-1": logic.tobytes(),
                                        "analog-1-9-1": shunt[:3].tobytes(),
                                        "analog-1-9-2": shunt[3:].tobytes()})
    capture = SrCapture(path, SrOptions(voltage=5.0, shunt_ohms=2.0, chunk_samples=2))
    assert "different sample counts" in caplog.text and capture.samples == 5
    chunks, current, voltage, trig = read_all(capture)
    assert [len(c) for c in chunks] == [2, 2, 1] and chunks[0].period_s == 1e-4
    np.testing.assert_array_equal(current, shunt[:5] / 2.0)
    np.testing.assert_array_equal(trig, logic)
    assert voltage == 5.0


@pytest.mark.parametrize(("members", "kwargs", "message"), [
    ({"logic-1-1": b"\0", "logic-1-3": b"\0", "analog-1-9-1": b"\0" * 4}, {},
     "chunk 'logic-1-2' is missing but 'logic-1-3' exists"),
    ({"logic-1-1": b"\0", "analog-1-9-1": b"\0" * 6}, {}, "not whole float32 samples"),
    ({}, {"version": b"3"}, "unsupported sigrok session file version '3'"),
    ({}, {"metadata": "[device 1]\ncapturefile=logic-1\nunitsize=1\n"}, "bad or missing samplerate"),
    ({}, {"metadata": "[global]\nsigrok version=0.5.2\n"}, r"no \[device 1\] section"),
    ({}, {"metadata": "not an ini file"}, "unreadable metadata"),
    ({"logic-1-1": b"\0"}, {"metadata": "[device 1]\ncapturefile=logic-1\nsamplerate=1 kHz\n"
                                        "probe9=D8\nunitsize=1\n"},
     "probe9 does not fit in a logic sample of unitsize 1"),
])
def test_corrupt_files_are_refused(tmp_path: Path, members: dict[str, bytes],
                                   kwargs: dict[str, object], message: str) -> None:
    path = write_sr(tmp_path / "bad.sr", members, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(CaptureError, match=message):
        SrCapture(path, SrOptions(voltage=3.3))


def test_not_a_session_file(tmp_path: Path) -> None:
    text = tmp_path / "capture.sr"
    text.write_text("time_s,current_a\n0,1\n")
    with pytest.raises(CaptureError, match=f"^{text}: not a sigrok session file"):
        SrCapture(text)
    other_zip = tmp_path / "other.sr"
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(CaptureError, match="no 'version' member"):
        SrCapture(other_zip)
    with pytest.raises(CaptureError, match="no such file"):
        SrCapture(tmp_path / "missing.sr")


def test_damaged_member_is_detected_while_streaming(tmp_path: Path) -> None:
    shunt = np.linspace(0, 1, 4096, dtype="<f4")
    path = write_sr(tmp_path / "crc.sr", {"logic-1-1": bytes(4096), "analog-1-9-1": shunt.tobytes()},
                    compression=zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    at = raw.index(shunt[2000:2004].tobytes())
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    capture = SrCapture(path, SrOptions(voltage=3.3))  # the directory is intact
    with pytest.raises(CaptureError, match="corrupt session file while reading.*CRC"):
        list(capture.chunks())


def test_long_capture_streams_in_bounded_memory(tmp_path: Path) -> None:
    """4 M samples (16 MB of float32 per channel, 32 MB decoded) with 64 k-sample chunks."""
    n = 4 << 20
    path = tmp_path / "long.sr"
    write_sr(path, {}, compression=zipfile.ZIP_STORED)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_STORED) as archive:
        # unequal chunking of the two streams, like the demo driver's
        for name, piece in (("analog-1-9", 1 << 18), ("logic-1", 3 << 16)):
            for k, first in enumerate(range(0, n, piece)):
                index = np.arange(first, min(first + piece, n))
                data = ((index % 1024).astype("<f4") if name.startswith("analog")
                        else ((index // 512) % 2).astype(np.uint8))
                archive.writestr(f"{name}-{k + 1}", data.tobytes())
    capture = SrCapture(path, SrOptions(voltage=3.3, chunk_samples=1 << 16))
    tracemalloc.start()
    total, highs, checksum = 0, 0, 0.0
    for chunk in capture.chunks():
        total += len(chunk)
        highs += int(chunk.logic.sum())
        checksum += float(chunk.current_a.sum())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert total == n and highs == n // 2
    assert checksum == n // 1024 * sum(range(1024))
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB while streaming 32 MiB of samples"


@pytest.mark.parametrize(("text", "hz"), [("1 MHz", 1e6), ("200 kHz", 2e5), ("1 GHz", 1e9),
                                          ("20 Hz", 20.0), ("2.5 MHz", 2.5e6), ("5000", 5000.0)])
def test_parse_samplerate(text: str, hz: float) -> None:
    assert parse_samplerate(text) == hz


def test_parse_samplerate_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="not a sample rate"):
        parse_samplerate("fast")
