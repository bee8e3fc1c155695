"""The PPK2 emulator, seen through real clients: the ppk2-api package and raw pyserial.

Sample-by-sample checks align the decoded stream with the model through the truth log's
stream start (sample k is at t0 + k * 10 us).
"""
from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import psutil
import pytest
import serial
from ppk2_api.ppk2_api import PPK2_API

from energyrig.errors import InstrumentError
from energyrig.instruments.ppk2.decode import ADC_MULT, Ppk2Decoder
from energyrig.instruments.ppk2.metadata import MetadataAccumulator, Ppk2Calibration
from energyrig.instruments.ppk2.protocol import Command, regulator_set
from energyrig.instruments.sim.power import PeriodicLoad, PowerModel, model_current
from energyrig.instruments.ppk2.emulator import DEFAULT_CALIBRATION, SERIAL_BASE, Ppk2Emulator
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.instruments.sim.truth import read_truth
from energyrig.instruments.sim.wire import NO_EDGES, edge_records, send_edges

# Nested loads: each 10 ms of a 50 ms period the total drops by about a decade, from 1.2 A
# (range 4) down to the 3 uA idle current (range 0).
ALL_RANGES = PowerModel(idle_a=3e-6, accel_a=0.0, loads=(
    PeriodicLoad(1e-3, 0.05, 0.8), PeriodicLoad(0.02, 0.05, 0.6),
    PeriodicLoad(0.2, 0.05, 0.4), PeriodicLoad(1.0, 0.05, 0.2)))


def all_sent(emu: Ppk2Emulator) -> Callable[[], bool]:
    """Whether ``emu`` has stopped streaming and holds no byte it has not written to its pty:
    what it made is then all on the port."""
    return lambda: not emu.streaming and not emu._tx


def drain(ser: serial.Serial, sent: Callable[[], bool] | None) -> bytes:
    """The rest of a stream after ``AVERAGE_STOP``: with ``sent`` (:func:`all_sent`), every
    byte the emulator made, however late a loaded host runs its thread; without (an emulator
    in another process), until a read times out."""
    raw = bytearray()
    while True:
        done = sent is not None and sent()  # before the read: what it sent is in the pty
        piece = ser.read(65536)
        raw += piece
        if not piece and (sent is None or done):
            return bytes(raw)


def read_raw(port: str, seconds: float, *, produced: Callable[[], int] | None = None,
             sent: Callable[[], bool] | None = None) -> tuple[Ppk2Calibration, bytes]:
    """Metadata and at least ``seconds`` of raw stream from the emulator, over pyserial; with
    ``produced`` (the emulator's count of samples made), without reading the stream until it
    made that many; with ``sent`` (:func:`all_sent`), every sample it made (else until the
    port is quiet for 20 ms: a loaded host may leave a tail unread). Counted in samples, not
    in this host's time: a loaded host takes longer, and gets as much."""
    samples = round(seconds * 100_000)
    with serial.Serial(port, timeout=0.02) as ser:
        ser.write(bytes((Command.GET_META_DATA,)))
        acc = MetadataAccumulator(port)
        while not acc.feed(ser.read(4096)):
            pass
        ser.write(regulator_set(3000) + bytes((Command.AVERAGE_START,)))
        raw = bytearray()
        while (produced() if produced is not None else len(raw) // 4) < samples:
            if produced is None:
                raw += ser.read(65536)
            else:
                time.sleep(0.01)
        ser.write(bytes((Command.AVERAGE_STOP,)))
        raw += drain(ser, sent)
    return acc.calibration(), bytes(raw)


def test_ppk2_api_reads_the_metadata_and_samples_that_match_the_model(tmp_path: Path) -> None:
    wire = tmp_path / "wire"
    # Idle and active both in range 1: ppk2-api's spike filter (applied on range switches)
    # leaves every sample as the device sent it.
    model = PowerModel(idle_a=1.2e-3, active_a=3.3e-3, accel_a=0.0)
    with Ppk2Emulator(model, wire=wire) as emu:
        api = PPK2_API(emu.port, timeout=1)
        try:
            assert api.get_modifiers()
            expected = DEFAULT_CALIBRATION.to_ppk2_api_modifiers()
            for key in ("R", "GS", "GI", "O", "S", "I", "UG"):
                assert api.modifiers[key] == expected[key], key
            api.use_source_meter()
            api.set_source_voltage(3000)
            api.toggle_DUT_power("ON")
            api.start_measuring()
            while not emu.streaming:
                time.sleep(0.005)
            # The windows come after the stream's start, however late a loaded host started it.
            now = time.monotonic_ns()
            starts = now + np.arange(1, 8) * 50_000_000
            edges = np.column_stack([starts, starts + 20_000_000]).ravel()
            send_edges(wire, edge_records(edges, [1, 0] * 7))
            before = (now - emu._t0_ns) // 10_000  # samples of the stream before `now`
            data = b""
            # then 0.4 s of the stream (4-byte words at 100 kS/s), however long this host takes
            while len(data) < 4 * (before + 40_000):
                piece = api.get_data()  # what the pty holds, 4 KB (10 ms of stream) at most:
                data += piece           # read again at once, or a loaded host falls behind
                if not piece:
                    time.sleep(0.001)
            api.stop_measuring()
            samples, bits = api.get_samples(data)
        finally:
            api.ser.close()
    samples_a = np.asarray(samples[before:before + 40_000]) * 1e-6
    high = (np.asarray(bits[before:before + 40_000]) & 1) == 1
    assert len(samples_a) > 20_000
    assert 0.2 < high.mean() < 0.6  # windows of 20 ms every 50 ms
    lsb = 4 * ADC_MULT / DEFAULT_CALIBRATION.r[1]
    np.testing.assert_allclose(samples_a[high], 3.3e-3, atol=lsb)
    np.testing.assert_allclose(samples_a[~high], 1.2e-3, atol=lsb)


def test_decoded_stream_matches_the_model_in_all_five_ranges(tmp_path: Path) -> None:
    truth = tmp_path / "truth.jsonl"
    with Ppk2Emulator(ALL_RANGES, truth=truth) as emu:
        cal, raw = read_raw(emu.port, 0.3)
    # ampere mode after power-up, and its serial number (SERIAL_BASE + seed)
    assert cal == replace(DEFAULT_CALIBRATION, mode=1, serial=SERIAL_BASE)
    words = np.frombuffer(raw, dtype="<u4")
    assert set(((words >> 14) & 7).tolist()) == {0, 1, 2, 3, 4}
    chunk = Ppk2Decoder(cal, 3000).feed(raw)
    assert chunk is not None and chunk.lost == 0 and not chunk.saturated.any()
    (stream,), _ = read_truth(truth)
    t = stream.t0_ns + np.arange(len(chunk)) * stream.period_ns
    expected = model_current(ALL_RANGES, t, NO_EDGES)
    lsb = 4 * ADC_MULT / np.asarray(cal.r)
    rng = np.searchsorted([5e-4, 5e-3, 5e-2, 0.5], expected)
    # Within one ADC step of the range (half a step of rounding plus the quadratic term).
    assert np.all(np.abs(chunk.current_a - expected) <= lsb[rng])
    assert np.all(chunk.logic == 0)


def test_ppk2_api_loses_split_metadata_the_emulator_can_send(tmp_path: Path) -> None:
    with Ppk2Emulator(PowerModel(), metadata_split_s=0.25) as emu:
        api = PPK2_API(emu.port, timeout=1)
        try:
            api.get_modifiers()
        finally:
            api.ser.close()
    # The first half (R0.. O3) never reached ppk2-api's parser: it kept its defaults.
    assert api.modifiers["R"]["0"] == 1031.64 != DEFAULT_CALIBRATION.r[0]
    assert api.modifiers["O"]["0"] == 0 != DEFAULT_CALIBRATION.o[0]


def test_dropped_samples_appear_as_counter_gaps() -> None:
    model = PowerModel(idle_a=1e-3, drop_rate=0.01)
    with Ppk2Emulator(model, seed=3) as emu:
        cal, raw = read_raw(emu.port, 0.3, sent=all_sent(emu))
    chunk = Ppk2Decoder(cal, 3000).feed(raw)
    assert chunk is not None
    assert chunk.lost == emu.stats.fault_dropped > 0
    assert len(chunk) + chunk.lost == emu.stats.samples


def test_corrupted_bytes_disturb_the_stream() -> None:
    model = PowerModel(idle_a=1e-3, corrupt_rate=1e-3)
    # A second of stream: about 400 corrupted bytes and 250 wrong currents, enough that the
    # shares below stand 4 standard deviations clear of their bounds (the emulator's random
    # draws follow its ticks, so the same seed does not give the same stream twice).
    with Ppk2Emulator(model, seed=5) as emu:
        cal, raw = read_raw(emu.port, 1.0, sent=all_sent(emu))
    chunk = Ppk2Decoder(cal, 3000).feed(raw)
    assert chunk is not None and emu.stats.corrupted_bytes > 100
    # A corrupted counter is one corrupt word, not a loss. L corrupted in a row (L >= 2, or
    # one at an end of the stream) can read as a loss of at most 64 L: their L + 1 jumps of at
    # most 63 add up to a multiple of 64. How many such runs a stream holds is chance (about
    # 0.1 a second: (1e-3)^2 * 1e5 words; 8 runs in 100 seeds, 6 of them a loss of 128), so
    # the bound counts them where a fixed 2 * 64 failed when two came in one second (about
    # one run in 250). Word k carries counter k % 64: this stream drops nothing.
    words = np.frombuffer(raw, dtype="<u4")
    wrong = (((words >> 18) & 63) != np.arange(len(words)) % 64).astype(np.int8)
    starts, ends = (np.flatnonzero(np.diff(wrong, prepend=0, append=0) == d) for d in (1, -1))
    runs = ends - starts
    assert chunk.lost <= 64 * runs[(runs >= 2) | (starts == 0) | (ends == len(words))].sum()
    bad = np.abs(chunk.current_a - 1e-3) > 1e-6
    assert 0 < bad.sum() < emu.stats.corrupted_bytes
    # The stream shows most of its corruption itself. A wrong ADC low byte looks healthy, so
    # of the wrong currents about 58 % are marked (0.55-0.65 over 12 seeds, sd 0.03).
    assert chunk.corrupt.sum() > 0.5 * emu.stats.corrupted_bytes
    assert (bad & chunk.corrupt).sum() >= 0.45 * bad.sum()


def test_offset_and_gain_faults_shift_the_reading() -> None:
    model = PowerModel(idle_a=2e-3, offset_a=20e-6, gain_error=0.02)
    with Ppk2Emulator(model) as emu:
        cal, raw = read_raw(emu.port, 0.1)
    chunk = Ppk2Decoder(cal, 3000).feed(raw)
    assert chunk is not None
    assert chunk.current_a.mean() == pytest.approx(2e-3 * 1.02 + 20e-6, abs=0.5e-6)


def test_a_host_that_does_not_read_loses_samples_not_the_emulator() -> None:
    with Ppk2Emulator(PowerModel(idle_a=1e-3), tx_buffer_s=0.02) as emu:
        cal, raw = read_raw(emu.port, 0.4, produced=lambda: emu.stats.samples,
                            sent=all_sent(emu))
    chunk = Ppk2Decoder(cal, 3000).feed(raw)
    assert chunk is not None
    assert emu.stats.overflow_samples > 10_000
    assert len(chunk) + emu.stats.overflow_samples == emu.stats.samples


@pytest.mark.slow
def test_emulator_runs_as_its_own_process(tmp_path: Path) -> None:
    truth = tmp_path / "truth.jsonl"
    with EmulatorProcess(PowerModel(idle_a=1e-3), truth=truth) as proc:
        assert proc.port.startswith("/dev/pts/")
        cal, raw = read_raw(proc.port, 0.2)
    assert cal.r == DEFAULT_CALIBRATION.r
    assert len(raw) >= 4 * 20_000  # 0.2 s at 100 kS/s
    (stream,), _ = read_truth(truth)
    assert stream.period_ns == 10_000


def test_edges_arriving_after_their_samples_are_counted_and_logged(tmp_path: Path) -> None:
    truth = tmp_path / "truth.jsonl"
    with Ppk2Emulator(PowerModel(idle_a=1e-3), truth=truth) as emu:
        with serial.Serial(emu.port, timeout=0.02) as ser:
            ser.write(bytes((Command.AVERAGE_START,)))
            while emu._rendered_ns < emu._t0_ns + 10_000_000:  # 10 ms streamed, however
                time.sleep(0.01)                                 # long this host takes
            past = emu._rendered_ns - 5_000_000                 # already streamed
            emu.inject_edges(edge_records([past, past + 1_000_000], [1, 0]))
            while emu._injected:                                 # the emulator took them
                time.sleep(0.01)
    assert emu.stats.late_edges == 2
    _, (window,) = read_truth(truth)
    assert window.late


def test_power_mode_dut_power_and_regulator_commands(tmp_path: Path) -> None:
    truth = tmp_path / "truth.jsonl"
    model = PowerModel(supply_v=3.3, idle_a=2e-3)
    with Ppk2Emulator(model, truth=truth) as emu, serial.Serial(emu.port, timeout=0.02) as ser:
        def stream(*commands: bytes) -> np.ndarray:
            made = emu.stats.samples
            ser.write(b"".join(commands) + bytes((Command.AVERAGE_START,)))
            while emu.stats.samples < made + 12_000:  # 0.12 s of stream, however long this
                time.sleep(0.01)                      # host takes
            ser.write(bytes((Command.AVERAGE_STOP,)))
            chunk = Ppk2Decoder(DEFAULT_CALIBRATION, emu.vdd_mv).feed(drain(ser, all_sent(emu)))
            assert chunk is not None
            return chunk.current_a

        source_off = stream(bytes((Command.SET_POWER_MODE, 2)), regulator_set(1800),
                            bytes((Command.DEVICE_RUNNING_SET, 0)))
        source_on = stream(bytes((Command.DEVICE_RUNNING_SET, 1)))
        ampere = stream(bytes((Command.SET_POWER_MODE, 1, Command.DEVICE_RUNNING_SET, 0)))
    assert np.abs(source_off).max() < 1e-7  # DUT unpowered
    np.testing.assert_allclose(source_on, 2e-3, atol=1e-6)
    np.testing.assert_allclose(ampere, 2e-3, atol=1e-6)  # external supply: output switch moot
    streams, _ = read_truth(truth)
    assert [s.supply_v for s in streams] == [1.8, 1.8, 3.3]  # regulator, then the model's


@pytest.mark.slow
def test_a_bad_model_stops_the_emulator_process_with_a_clear_error() -> None:
    with pytest.raises(InstrumentError, match="exit code 2"):
        with EmulatorProcess(PowerModel(), extra_args=["--latency-s", "soon"]):
            pass


def test_the_emulator_process_exits_when_its_parent_dies() -> None:
    code = ("import time\n"
            "from energyrig.instruments.sim.power import PowerModel\n"
            "from energyrig.instruments.sim.process import EmulatorProcess\n"
            "with EmulatorProcess(PowerModel()) as emu:\n"
            "    print(emu.pid, flush=True)\n"
            "    time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = psutil.Process(int(parent.stdout.readline()))
    parent.kill()  # no clean-up runs in the parent
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 5
    while child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "emulator outlived its parent"
        time.sleep(0.05)
