"""The PPK2's wall-clock bounds under load (docs/performance.md, "Tests under load"): a
``collect`` counts its bound from the stream's progress, not from the call.

A loaded host reads the stream late and in bursts: while samples still arrive, the wait goes
on however long the host takes (the record must only complete within ``timeout_s`` of
*stream*, the device's own time), and a stream that stopped is still reported once no sample
came for ``timeout_s``. Unit tests drive the bound with a fake clock that each stored piece of
the stream advances by a second (a starved reader); the others run in real time against a
paced port and the emulator.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import numpy as np
import pytest
from support.paths import ROOT

from energyrig.calibration.routines.marks import record_marks
from energyrig.capture import Chunk
from energyrig.errors import InstrumentError, NoTriggerWindow
from energyrig.fixtures import load_fixture
from energyrig.instruments.ppk2.clock import StreamLoss
from energyrig.instruments.ppk2.decode import encode_words
from energyrig.instruments.ppk2.driver import Ppk2
from energyrig.instruments.ppk2.metadata import format_metadata
from energyrig.instruments.ppk2.protocol import Command
from energyrig.instruments.sim.power import PowerModel
from energyrig.instruments.ppk2.emulator import DEFAULT_CALIBRATION
from energyrig.instruments.sim.process import EmulatorProcess
from energyrig.rig.bench import open_bench
from energyrig.energy.windows import find_windows

METADATA = format_metadata(DEFAULT_CALIBRATION).encode()
PIECE = 1000  # samples per piece of the stream (10 ms)


def _stream(n: int, rise: int, fall: int) -> list[bytes]:
    """``n`` samples, the trigger high over ``[rise, fall)``, in pieces of :data:`PIECE`."""
    high = (np.arange(n) >= rise) & (np.arange(n) < fall)
    raw = encode_words(np.where(high, 3e-3, 1e-3), DEFAULT_CALIBRATION, 3000,
                       logic=high.astype(np.uint8)).tobytes()
    step = 4 * PIECE
    return [raw[i:i + step] for i in range(0, len(raw), step)]


class Port:
    """Answers GET_META_DATA; once :meth:`release` is called, the stream's pieces, one per
    read, each read taking ``pace_s`` of real time (a reader that runs late)."""

    def __init__(self, pieces: list[bytes], pace_s: float = 0.0) -> None:
        self._out: deque[bytes] = deque()
        self._pieces, self._pace_s = pieces, pace_s

    def write(self, data: bytes) -> int:
        if data[0] == Command.GET_META_DATA:
            self._out.append(METADATA)
        return len(data)

    def read(self, size: int = 1) -> bytes:
        if self._out:
            return self._out.popleft()
        time.sleep(self._pace_s if self._pieces and self._released else 0.005)
        return self._pieces.pop(0) if self._pieces and self._released else b""

    _released = False

    def release(self) -> None:
        self._released = True

    def close(self) -> None:
        pass


class StarvedClock:
    """A fake monotonic clock, s: every look at it costs ``step_s`` (a loaded host), and
    every piece of the stream stored costs ``piece_s`` (:func:`starve`)."""

    def __init__(self, step_s: float = 0.02) -> None:
        self.now, self.step_s = 0.0, step_s

    def __call__(self) -> float:
        self.now += self.step_s
        return self.now


def starve(ppk: Ppk2, clock: StarvedClock, piece_s: float) -> None:
    """Each piece the reader stores arrives ``piece_s`` of ``clock`` after the one before
    (advanced under the driver's lock, with the piece: ``collect`` sees both or neither)."""
    store = ppk._store

    def late(chunk: Chunk, loss: StreamLoss | None = None) -> None:
        with ppk._cond:
            clock.now += piece_s
            store(chunk, loss)

    ppk._store = late  # type: ignore[method-assign]


def _collect(pieces: list[bytes], timeout_s: float, *, piece_s: float = 1.0,
             post_s: float = 0.01):
    clock = StarvedClock()
    port = Port(pieces)
    ppk = Ppk2(transport=port, clock=clock)
    starve(ppk, clock, piece_s)
    with ppk:
        ppk.arm(pre_s=0.0, window_s=0.05, post_s=post_s)
        port.release()
        return ppk.collect(timeout_s=timeout_s), clock.now


def test_a_starved_reader_still_receiving_the_stream_is_waited_for() -> None:
    """26 pieces, a (fake) second apart, with a bound of 0.5 s: the record completes."""
    record, took_s = _collect(_stream(40_000, 20_000, 25_000), timeout_s=0.5)
    (window,) = find_windows(record)
    assert window.duration_s == pytest.approx(0.05)
    assert list(record.chunks())[-1].end_index == 26_000
    assert took_s > 20 * 0.5  # the host took far longer than the bound, the stream did not


def test_a_stream_that_runs_on_without_the_window_times_out_in_stream_time() -> None:
    """However slowly it arrives, 0.3 s of stream past the call without a window is a
    timeout (the device's time decides, not the host's)."""
    with pytest.raises(NoTriggerWindow, match="trigger never rose"):
        _collect(_stream(60_000, 70_000, 70_000), timeout_s=0.3)


def test_a_stream_that_stops_is_reported_after_the_bound() -> None:
    """The stream stops inside the window: no sample for the bound is a stopped stream."""
    with pytest.raises(InstrumentError, match="the stream stopped.*rose but did not fall"):
        _collect(_stream(10_000, 5_000, 20_000), timeout_s=0.5, piece_s=0.0)


def test_a_late_reader_in_real_time_is_not_declared_lost() -> None:
    """Each read of 10 ms of stream takes 100 ms (a reader 10x slower than real time, as a
    starved one catching up on a backlog): the record's 6 pieces take ~0.6 s to arrive, past
    a bound of 0.4 s counted from the call, yet within 0.4 s of stream and never 0.4 s
    without a new piece."""
    port = Port(_stream(7_000, 2_000, 5_000), pace_s=0.1)
    with Ppk2(transport=port) as ppk:
        ppk.arm(pre_s=0.0, window_s=0.03, post_s=0.01)
        port.release()
        record = ppk.collect(timeout_s=0.4)
    assert len(list(find_windows(record))) == 1


@pytest.mark.slow
def test_a_ppk2_that_stops_streaming_is_reported() -> None:
    """The emulator (a PPK2 on its port) is told AVERAGE_STOP after the arm: the port stays
    open but no sample comes; collect reports the stopped stream after its bound."""
    with EmulatorProcess(PowerModel(idle_a=1e-3)) as emu, Ppk2(emu.port) as ppk:
        ppk.arm(pre_s=0.01, window_s=0.1, post_s=0.0)
        ppk._command(Command.AVERAGE_STOP)
        with pytest.raises(InstrumentError, match="the stream stopped"):
            ppk.collect(timeout_s=1.0)


# -- the simulated bench's load switch: a record after it holds only the new load ---------

def test_waiting_for_a_sample_counts_from_the_stream_s_progress() -> None:
    """``wait_received`` waits while pieces come, a (fake) second apart, past a bound of
    0.5 s; it reports a stream that stopped before the sample."""
    clock = StarvedClock()
    port = Port(_stream(30_000, 40_000, 40_000))
    ppk = Ppk2(transport=port, clock=clock)
    starve(ppk, clock, 1.0)
    with ppk:
        port.release()
        ppk.wait_received(25_000, bound_s=0.5)
        assert clock.now > 20 * 0.5
        with pytest.raises(InstrumentError, match="the stream stopped.*waiting for sample 31000"):
            ppk.wait_received(31_000, bound_s=0.5)


def late_reads(late_s: float) -> Callable[[Ppk2], bytes]:
    """A ``Ppk2._read`` that hands the driver what its port sent ``late_s`` ago: the stream
    of a host that reads it this late (a loaded one), at full rate (every sample arrives)."""
    read = Ppk2._read
    lines: dict[int, deque[tuple[float, bytes]]] = {}

    def late(ppk: Ppk2) -> bytes:
        line = lines.setdefault(id(ppk), deque())
        data, now = read(ppk), time.monotonic()
        if data:
            line.append((now, data))
        out = b""
        while line and line[0][0] <= now - late_s:
            out += line.popleft()[1]
        return out

    return late


@pytest.mark.slow
def test_a_record_after_the_switch_holds_only_the_new_load(monkeypatch) -> None:
    """The stream reaches the rig 0.6 s late, far more than its stated lag (0.1 s): the
    bench waits for the stream to pass the switch, so a mark record taken after switching to
    the 1 kohm reference reads its current only (before: the record reached back to the
    board's current, and the gain routine refused the record)."""
    monkeypatch.setattr(Ppk2, "_read", late_reads(0.6))
    fixture = load_fixture(ROOT / "fixtures" / "sim.toml")
    with open_bench(fixture) as bench:
        assert bench.limits.stream_lag_s < 0.6
        record_marks(bench, 1, 20e-3)  # the board on the input, as before a routine
        bench.connect("reference", 1000.0)
        (record,) = record_marks(bench, 1, 20e-3)
    current = np.concatenate([c.current_a for c in record.chunk_list])
    supply_v = float(np.mean([np.mean(c.voltage_v) for c in record.chunk_list]))
    want = supply_v / bench.actual_ohms(1000.0)
    off = np.abs(current - want) > 0.02 * want
    assert current.size > 0.02 * 100_000 and not off.any(), f"{off.sum()} samples off"
