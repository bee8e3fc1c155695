"""The emulated STM32 Power Shield, seen through raw pyserial (the exact exchanges the
board's protocol makes) and through the rig's driver (a session: settings, stream, D7's
events as the window, stop)."""
from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
import serial

from energyrig.errors import DutError, InstrumentError
from energyrig.instruments.lpm01a.config import Lpm01aConfig
from energyrig.instruments.lpm01a.driver import Lpm01a
from energyrig.instruments.lpm01a import emulator as emulator_module
from energyrig.instruments.lpm01a.emulator import CommandError, Lpm01aEmulator
from energyrig.instruments.lpm01a.processing import D7_BIT, StreamDecoder
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.sim.wire import edge_records

MODEL = PowerModel(idle_a=3e-6, active_a=3.3e-3, accel_a=0.0)


@pytest.fixture
def emulator() -> Iterator[Lpm01aEmulator]:
    with Lpm01aEmulator(MODEL, latency_s=0.02) as emu:
        yield emu


def exchange(port: serial.Serial, command: str, lines: int = 1) -> list[str]:
    """Send ``command``; the board's next ``lines`` lines (without their CR LF)."""
    port.write(command.encode() + b"\r\n")
    got: list[str] = []
    while len(got) < lines:
        line = port.readline()
        assert line.endswith(b"\r\n"), f"no complete reply to {command!r}: {line!r}"
        got.append(line[:-2].decode())
    return got


def test_every_setting_is_acknowledged_or_refused_with_its_detail(
        emulator: Lpm01aEmulator) -> None:
    with serial.Serial(emulator.port, 3_686_400, timeout=5.0) as port:
        assert exchange(port, "volt 3000m", 2) == [
            "PowerShield > error volt 3000m",
            "Error detail: host has not taken control; send 'htc' first"]
        assert exchange(port, "htc") == ["PowerShield > ack htc"]
        assert exchange(port, "status") == ["PowerShield > ack status ok"]
        assert exchange(port, "volt get") == ["PowerShield > ack volt get 3300-03"]
        assert exchange(port, "volt 3000m") == ["PowerShield > ack volt 3000m"]
        assert exchange(port, "volt get") == ["PowerShield > ack volt get 3000-03"]
        assert exchange(port, "volt 5", 2) == [
            "PowerShield > error volt 5", "Error detail: voltage out of range [1800m; 3300m]"]
        assert exchange(port, "freq 100k") == ["PowerShield > ack freq 100k"]
        assert exchange(port, "freq 3k", 2)[1].startswith("Error detail: frequency not in list")
        assert exchange(port, "acqtime 0") == ["PowerShield > ack acqtime 0"]
        assert exchange(port, "format bin_hexa") == ["PowerShield > ack format bin_hexa"]
        assert exchange(port, "format hex", 2)[1] == (
            "Error detail: argument must be one of ascii_dec, bin_hexa")
        assert exchange(port, "trigsrc sw") == ["PowerShield > ack trigsrc sw"]
        assert exchange(port, "eventsrc d7 fal") == ["PowerShield > ack eventsrc d7 fal"]
        assert exchange(port, "frobnicate", 2) == [
            "PowerShield > error frobnicate", "Error detail: command 'frobnicate' unknown; "
                                              "send 'help'"]
        assert (emulator.volt_mv, emulator.rate_hz, emulator.fmt, emulator.eventsrc) == (
            3000, 100_000, "bin_hexa", "fal")


def test_ascii_at_100_khz_without_a_time_limit_is_refused(emulator: Lpm01aEmulator) -> None:
    with serial.Serial(emulator.port, 3_686_400, timeout=5.0) as port:
        for command in ("htc", "freq 100k", "acqtime 0", "format ascii_dec"):
            exchange(port, command)
        assert exchange(port, "start", 2) == [
            "PowerShield > error start",
            "Error detail: format ascii_dec limited to 5k without an acquisition time; "
            "use bin_hexa"]
        assert not emulator.acquiring


def test_start_streams_until_stop_ends_it_with_its_tag_and_summary(
        emulator: Lpm01aEmulator) -> None:
    with serial.Serial(emulator.port, 3_686_400, timeout=0.05) as port:
        for command in ("htc", "volt 3000m", "freq 100k", "format bin_hexa", "pwr on"):
            exchange(port, command)
        port.write(b"start\r\n")
        assert port.read_until(b"\r\n") == b"PowerShield > ack start\r\n"
        decoder = StreamDecoder("bin_hexa", 100_000, 3.0)
        chunks = []
        while sum(len(c.current_a) for c in chunks) < 20_000:  # 0.2 s, however slow the host
            chunk = decoder.feed(port.read(65536))
            if chunk is not None:
                chunks.append(chunk)
        port.write(b"stop\r\n")
        while not decoder.ended:
            if (chunk := decoder.feed(port.read(65536))) is not None:
                chunks.append(chunk)
        tail = bytes(decoder.tail) + port.read(1000)
    assert b"PowerShield > Acquisition completed\r\n" in tail
    current = np.concatenate([c.current_a for c in chunks])
    # the idle board at 3 µA, to the stream's 12 significant bits
    assert np.allclose(current, 3e-6, rtol=1 / 512)
    assert decoder.stats.timestamps >= 1 and decoder.stats.lost == 0
    assert not emulator.acquiring


@pytest.fixture
def shield(emulator: Lpm01aEmulator) -> Iterator[Lpm01a]:
    device = Lpm01a(emulator.port, Lpm01aConfig(supply_v=3.0))
    device.start()
    try:
        yield device
    finally:
        device.stop()


def test_the_driver_sets_up_the_board_and_measures_the_window_d7_marks(
        emulator: Lpm01aEmulator, shield: Lpm01a) -> None:
    shield.arm(0.02, 0.01, 0.005)
    t = time.monotonic_ns()
    emulator.inject_edges(edge_records([t + 5_000_000, t + 15_000_000], [1, 0]))
    record = shield.collect(10.0)
    current = np.concatenate([c.current_a for c in record.chunk_list])
    level = np.concatenate([c.logic for c in record.chunk_list]) >> D7_BIT & 1
    assert record.trigger_bit == D7_BIT
    rises, falls = np.flatnonzero(np.diff(level.astype(int)) == 1) + 1, np.flatnonzero(
        np.diff(level.astype(int)) == -1) + 1
    assert len(rises) == 1 and len(falls) == 1
    assert falls[0] - rises[0] == 1000  # 10 ms at 100 kHz
    assert np.allclose(current[rises[0]:falls[0]], 3.3e-3, rtol=1 / 512)
    assert np.allclose(current[:rises[0]], 3e-6, rtol=1 / 512)
    info = shield.describe()
    assert info.serial == emulator.board_id and info.details["version"] == "1.0.5"
    assert emulator.commands[:13] == [
        "stop", "htc", "status", "version", "powershield", "volt 3000m", "freq 100k", "acqtime 0",
        "output current", "format bin_hexa", "trigsrc sw", "eventsrc d7 both", "pwr on"]
    assert emulator.powered and emulator.acquiring


def test_stop_ends_the_acquisition_switches_off_and_releases(emulator: Lpm01aEmulator) -> None:
    device = Lpm01a(emulator.port, Lpm01aConfig(supply_v=3.0))
    device.start()
    device.stop()
    assert emulator.commands[-4:] == ["start", "stop", "pwr off", "hrc"]
    assert not (emulator.acquiring or emulator.powered or emulator.controlled)


def test_a_link_lost_before_the_reader_saw_it_closes_as_one_it_saw(
        emulator: Lpm01aEmulator, caplog: pytest.LogCaptureFixture) -> None:
    # A bench host killed: the stop's write fails before the reader has read the loss
    # (whichever comes first is a race); the port closes either way, the stop's later
    # commands are not tried on the lost link, and an error in flight is not replaced.
    device = Lpm01a(emulator.port, Lpm01aConfig(supply_v=3.0))

    def lost(data: bytes) -> int:
        raise serial.SerialException("write failed: [Errno 5] Input/output error")

    with pytest.raises(DutError, match="in flight"):
        with device:
            device._ser.write = lost  # type: ignore[union-attr,method-assign]
            raise DutError("in flight")
    assert device._ser is None
    assert caplog.text.count("not stopped") == 1 and "Input/output error" in caplog.text
    assert emulator.commands[-1] == "start"


def test_a_refused_setting_stops_start_with_one_line_naming_it_and_the_boards_detail(
        emulator: Lpm01aEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """A board whose firmware knows no ``eventsrc d7 both`` (docs/lpm01a.md: the one setting
    no source shows) refuses it; start says so and leaves the port closed."""
    def refuse(emu: Lpm01aEmulator, args: list[str]) -> None:
        raise CommandError(f"invalid argument '{' '.join(args)}'")

    monkeypatch.setitem(emulator_module._COMMANDS, "eventsrc", refuse)
    device = Lpm01a(emulator.port, Lpm01aConfig(supply_v=3.0))
    with pytest.raises(InstrumentError) as info:
        device.start()
    device.stop()  # nothing to stop: start closed the port
    assert str(info.value) == (f"lpm01a:{emulator.port}: the Power Shield refused 'eventsrc d7 "
                               "both': invalid argument 'd7 both'")
    assert not emulator.acquiring


def test_a_silent_port_is_named_with_what_to_check() -> None:
    """pyserial's loopback echoes the command: a line, but no reply."""
    device = Lpm01a("loop://", Lpm01aConfig(reply_timeout_s=0.2))
    with pytest.raises(InstrumentError, match="no reply to 'htc' within 0.2 s; is this an STM32 "
                                              "Power Shield at 3686400 baud"):
        device.start()
    device.stop()


def test_trigsrc_d7_starts_the_acquisition_at_d7s_rising_edge(emulator: Lpm01aEmulator) -> None:
    with serial.Serial(emulator.port, 3_686_400, timeout=0.05) as port:
        for command in ("htc", "freq 100k", "format bin_hexa", "trigsrc d7", "eventsrc d7 both",
                        "pwr on"):
            exchange(port, command)
        port.write(b"start\r\n")
        assert port.read_until(b"\r\n") == b"PowerShield > ack start\r\n"
        assert port.read(65536) == b"" and emulator.waiting_d7  # no edge yet: no stream
        t = time.monotonic_ns()
        emulator.inject_edges(edge_records([t, t + 20_000_000], [1, 0]))
        decoder = StreamDecoder("bin_hexa", 100_000, 3.0)
        chunks = []
        while sum(len(c.current_a) for c in chunks) < 3000:
            if (chunk := decoder.feed(port.read(65536))) is not None:
                chunks.append(chunk)
        port.write(b"stop\r\n")
    level = np.concatenate([c.logic for c in chunks]) >> D7_BIT & 1
    current = np.concatenate([c.current_a for c in chunks])
    # the first sample is the edge's: D7 high and the board active from it, for 20 ms
    assert level[0] == 1 and np.flatnonzero(np.diff(level.astype(int)))[0] + 1 == 2000
    assert np.allclose(current[:2000], 3.3e-3, rtol=1 / 512)
    assert decoder.stats.events == 2  # the rise at the first sample, then the fall


def test_the_driver_streams_ascii_at_5_khz(emulator: Lpm01aEmulator) -> None:
    device = Lpm01a(emulator.port, Lpm01aConfig(supply_v=1.8, sample_rate_hz=5000,
                                                format="ascii_dec"))
    device.start()
    try:
        device.arm(0.02, 0.01, 0.005)
        t = time.monotonic_ns()
        emulator.inject_edges(edge_records([t + 5_000_000, t + 25_000_000], [1, 0]))
        record = device.collect(10.0)
    finally:
        device.stop()
    level = np.concatenate([c.logic for c in record.chunk_list]) >> D7_BIT & 1
    current = np.concatenate([c.current_a for c in record.chunk_list])
    assert level.sum() == 100  # 20 ms at 5 kHz
    assert np.allclose(current[level == 1], 3.3e-3, rtol=5e-4)
    assert emulator.volt_mv == 1800 and "format ascii_dec" in emulator.commands
    assert emulator.commands[-3:] == ["stop", "pwr off", "hrc"]
