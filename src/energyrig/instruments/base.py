"""The acquisition interface every power instrument implements.

Two very different kinds of instrument sit behind one interface:

* a **streaming** instrument (PPK2, Joulescope) samples continuously from :meth:`start` on;
  :meth:`Acquisition.arm` marks the stream position ``pre_s`` before "now", and
  :meth:`Acquisition.collect` waits until the trigger channel has gone high and fallen again,
  plus ``post_s`` of samples, and returns everything from the mark on;
* a **single-shot recorder** (an oscilloscope, a sigrok capture) does nothing until armed;
  :meth:`Acquisition.arm` sets the timebase so that ``pre_s + window_s + post_s`` fits the
  record and arms a single trigger on the trigger channel, and :meth:`Acquisition.collect`
  waits for the acquisition to complete and downloads the record.

The caller (the bench) uses both the same way and never knows which it has::

    with instrument:                       # start() ... stop()
        instrument.arm(pre_s=0.01, window_s=expected_s, post_s=0.01)
        dut.run(batch_n)                    # trigger high, N ops, trigger low
        capture = instrument.collect(timeout_s=expected_s + 5.0)
        windows = find_windows(capture.chunks(), settings)

``window_s`` is the caller's estimate of the trigger window; a stream uses it only to size
its buffer check, a scope to choose its timebase (so it must not be an underestimate there).

The window a collect waits for is the first trigger rise after ``arm()`` returned; a window
that happened earlier (inside the ``pre_s`` look-back of a stream) is not taken for it.
Sample indices of the returned chunks are the instrument's own time base: for a stream,
sample 0 is the first sample after ``start()`` (so windows of successive collects share one
time base, which the simulated bench maps to CLOCK_MONOTONIC through its truth log); for a
recorder, sample 0 is the first sample of the record.

Units are SI: seconds, amperes, volts. Nothing here knows about energy or about sweeps.
"""
from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from energyrig.capture import Chunk
from energyrig.errors import InstrumentError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resolution:
    """The ADC step of an instrument's current channel, per current range.

    Attributes
    ----------
    ranges:
        ``(highest current of the range, A; its step, A)`` per range, ascending; a current
        above the last range's bound takes the last step.
    source:
        Where the steps come from (the instrument's own calibration, its vertical setup).
    """

    ranges: tuple[tuple[float, float], ...]
    source: str

    def __post_init__(self) -> None:
        bounds = [upto for upto, _ in self.ranges]
        if not self.ranges or bounds != sorted(bounds) or not all(
                step > 0 and math.isfinite(step) for _, step in self.ranges):
            raise ValueError(f"Resolution: need ranges ascending with finite steps > 0, got "
                             f"{self.ranges!r}")

    def step_a(self, current_a: float) -> float:
        """The step of the lowest range that holds ``|current_a|``, A."""
        i = bisect.bisect_left([upto for upto, _ in self.ranges], abs(current_a))
        return self.ranges[min(i, len(self.ranges) - 1)][1]


@dataclass(frozen=True)
class Limits:
    """What the bench must know of an acquisition to size a batch and wait for it.

    Attributes
    ----------
    sample_rate_hz:
        Samples per second the records hold, Hz.
    max_record_s:
        Longest record (``pre + window_margin × window + post``) it holds at
        ``sample_rate_hz``, s; ``None``: a stream, bounded only by its buffer.
    stream_lag_s:
        How far behind real time its samples reach the host, s (0 for a recorder, whose
        :meth:`~energyrig.instruments.base.Acquisition.collect` waits for the whole record).
    window_margin:
        How many times the expected window a record reserves (a scope's ``window_margin``;
        1 for others).
    resolution:
        The current channel's ADC step (``None``: not known; the uncertainty budget's ADC
        resolution component is then unknown).
    max_windows:
        Most trigger windows one record holds (``arm(..., windows=R)``): a stream records
        a group of windows in one record, a recorder one window per record.
    """

    sample_rate_hz: float
    max_record_s: float | None
    stream_lag_s: float
    window_margin: float = 1.0
    resolution: Resolution | None = None
    max_windows: int = 1

    def __post_init__(self) -> None:
        if not (self.sample_rate_hz > 0 and math.isfinite(self.sample_rate_hz)):
            raise ValueError(f"sample_rate_hz must be a finite number > 0, got "
                             f"{self.sample_rate_hz!r}")
        if not self.window_margin >= 1.0:
            raise ValueError(f"window_margin must be >= 1, got {self.window_margin!r}")
        if self.max_windows < 1:
            raise ValueError(f"max_windows must be >= 1, got {self.max_windows!r}")

    @property
    def period_s(self) -> float:
        """Sample period, s."""
        return 1.0 / self.sample_rate_hz

    def max_window_s(self, pre_s: float, post_s: float) -> float | None:
        """Longest expected window a record with margins ``pre_s`` and ``post_s`` holds at
        ``sample_rate_hz``, s (``None``: a stream, no limit)."""
        if self.max_record_s is None:
            return None
        return max(0.0, (self.max_record_s - pre_s - post_s) / self.window_margin)


@dataclass(frozen=True)
class StatedCalibration:
    """The calibration an instrument stores of itself (a PPK2's metadata), as a gain
    calibration checks it.

    Attributes
    ----------
    identity:
        Which stored calibration it is (recorded with a gain measured through it).
    calibrated:
        Whether the instrument says it was calibrated.
    gain_warn, gain_refuse:
        How far the measured gain (measured / true) may be from 1 by what it states, as a
        fraction: beyond ``gain_warn`` the two disagree (a warning), beyond ``gain_refuse``
        one of them is wrong (a wrong reference, a broken unit: refused).
    basis:
        Why those bounds, in one phrase.
    """

    identity: str
    calibrated: bool
    gain_warn: float
    gain_refuse: float
    basis: str


@dataclass(frozen=True)
class InstrumentInfo:
    """Who an acquisition is and how it is set up (replaces an untyped ``describe()`` dict).

    Attributes
    ----------
    kind:
        The family's fixture ``kind`` (``"ppk2"``).
    name:
        What the instrument calls itself: a scope's ``*IDN?``, a sigrok device's model, the
        PPK2's hardware revision.
    address:
        Where it was reached (serial port, VISA resource, sigrok ``--driver`` spec).
    sample_rate_hz:
        Samples per second as set up, Hz (NaN: not configured).
    details:
        The family's settings and calibration, JSON-serialisable.
    serial:
        What tells this unit from every other of its model (a PPK2's serial number from its
        metadata or its USB descriptor, a scope's from ``*IDN?``), ``""`` when it offers none.
    stated:
        The calibration the instrument holds of itself and how far its gain may be off by
        it, or ``None`` (it holds none the rig can read).
    """

    kind: str
    name: str
    address: str
    sample_rate_hz: float
    details: Mapping[str, Any] = field(default_factory=dict)
    serial: str = ""
    stated: StatedCalibration | None = None

    def to_dict(self) -> dict[str, Any]:
        """What a run manifest records: ``kind``, ``name``, ``serial`` (``None``: none),
        ``address``, ``sample_rate_hz`` (``None`` when not configured) and the details'
        keys."""
        rate = self.sample_rate_hz if math.isfinite(self.sample_rate_hz) else None
        return {"kind": self.kind, "name": self.name, "serial": self.serial or None,
                "address": self.address, "sample_rate_hz": rate, **self.details}


@dataclass(frozen=True, slots=True)
class ArmRequest:
    """What :meth:`Acquisition.arm` was asked for, in seconds.

    Attributes
    ----------
    pre_s:
        Samples to keep before the trigger rises (the idle lead-in), s.
    window_s:
        Expected length of the trigger window, s (an estimate; recorders size their record
        from it, streams ignore it except for buffer checks).
    post_s:
        Samples to keep after the trigger falls, s.
    windows:
        Trigger windows the record holds: it ends ``post_s`` after the last one's fall
        (``window_s`` then spans them all).
    """

    pre_s: float
    window_s: float
    post_s: float
    windows: int = 1

    def __post_init__(self) -> None:
        for name in ("pre_s", "window_s", "post_s"):
            value = getattr(self, name)
            if not value >= 0.0:  # also rejects NaN
                raise ValueError(f"arm(): {name} must be >= 0 s, got {value!r}")
        if self.windows < 1:
            raise ValueError(f"arm(): windows must be >= 1, got {self.windows!r}")

    @property
    def total_s(self) -> float:
        """Length of the record the request asks for, s."""
        return self.pre_s + self.window_s + self.post_s

    def one_window(self, source: str) -> ArmRequest:
        """This request, refused (:class:`~energyrig.errors.InstrumentError` naming
        ``source``) when it asks a recorder, whose record holds one window
        (``Limits.max_windows`` 1), for several."""
        if self.windows > 1:
            raise InstrumentError(f"{source}: records one trigger window per record, not "
                                  f"{self.windows} (its limits' max_windows is 1)")
        return self


@dataclass(frozen=True, slots=True)
class RecordedCapture:
    """A capture held in memory: what :meth:`Acquisition.collect` returns.

    Implements :class:`energyrig.capture.Capture`. ``flags`` carries what the instrument
    noticed about this record that the energy math cannot see in the samples (for example
    ``"late_trigger"``); lost samples travel in each chunk's ``gaps`` instead.

    Attributes
    ----------
    source:
        The instrument resource (``"ppk2:/dev/ttyACM0"``), used in error messages.
    chunk_list:
        The chunks, in time order, with consecutive absolute indices.
    trigger_bit:
        Which logic bit carries the trigger (0 = D0).
    flags:
        Instrument-level remarks about the record, empty when clean.
    corrections:
        What a correction stage took out of the samples, ``(name, value)`` in SI units
        (empty as the instrument gave it).
    loss_spans:
        Where the stream lost samples its counter could not count, ``[first, end)``
        absolute sample indices (the spans behind a ``stream_loss`` in ``flags``): a record
        of several windows flags only the windows whose stretch meets one.
    """

    source: str
    chunk_list: tuple[Chunk, ...]
    trigger_bit: int = 0
    flags: tuple[str, ...] = ()
    corrections: tuple[tuple[str, float], ...] = ()
    loss_spans: tuple[tuple[int, int], ...] = ()

    def chunks(self) -> Iterator[Chunk]:
        """Yield the chunks in time order."""
        return iter(self.chunk_list)

    @property
    def n_samples(self) -> int:
        """Samples held (lost samples not counted)."""
        return sum(len(c) for c in self.chunk_list)

    @property
    def lost(self) -> int:
        """Samples the instrument reported as lost inside this record."""
        return sum(c.lost for c in self.chunk_list)


@runtime_checkable
class Acquisition(Protocol):
    """A power instrument as the bench sees it.

    Lifecycle: ``start()`` once (opens the device, configures it, starts a stream), then any
    number of ``arm()`` / ``collect()`` pairs, then ``stop()``. Use it as a context manager;
    ``__exit__`` calls ``stop()`` even when the body failed, and ``stop()`` is idempotent.

    Errors: every method raises :class:`energyrig.errors.InstrumentError` (with a message
    naming the instrument) when the device does not answer, answers nonsense, or lost data
    that the returned capture cannot describe.
    """

    def start(self) -> None:
        """Open and configure the instrument; a stream starts sampling here."""
        ...

    def arm(self, pre_s: float, window_s: float, post_s: float, windows: int = 1) -> None:
        """Prepare to record one trigger window (or ``windows`` of them); call before the
        DUT runs.

        Parameters
        ----------
        pre_s:
            Seconds of samples to keep before the trigger rises.
        window_s:
            Expected trigger window length, s (with several windows, from the first rise
            to the last fall).
        post_s:
            Seconds of samples to keep after the trigger falls.
        windows:
            Trigger windows the record holds, at most ``limits().max_windows``.
        """
        ...

    def collect(self, timeout_s: float) -> RecordedCapture:
        """Return the samples of the armed window plus its margins.

        Call after the DUT replied, so after the window ended (a stream knows from that
        when to stop waiting for a window too short to be seen). Blocks until the record is
        complete (a stream: the trigger has risen and fallen and ``post_s`` more seconds
        arrived; a recorder: its single acquisition finished) or ``timeout_s`` passed, which
        raises :class:`~energyrig.errors.InstrumentError`. Disarms the instrument.
        """
        ...

    def stop(self) -> None:
        """Stop sampling and release the device. Safe to call twice."""
        ...

    def limits(self) -> Limits:
        """Sample rate, longest record and stream lag: what the caller needs to size a
        batch and to wait for samples (:class:`~energyrig.instruments.base.Limits`)."""
        ...

    def describe(self) -> InstrumentInfo:
        """Identity and settings, for the run manifest and ``rig instruments check``
        (:class:`~energyrig.instruments.base.InstrumentInfo`)."""
        ...

    def __enter__(self) -> Self:
        ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        ...


class OpenCloseBase:
    """Context-manager plumbing: ``with x:`` calls ``x.open()``, and ``x.close()`` on the way
    out even when the body failed. For emulators and listeners; acquisitions use
    :class:`AcquisitionBase`, whose pair is ``start``/``stop``."""

    def open(self) -> object:  # pragma: no cover - overridden
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class AcquisitionBase(OpenCloseBase):
    """Base of implementations of :class:`Acquisition`: ``with instrument:`` starts and stops.

    Subclasses implement ``start``, ``arm``, ``collect``, ``stop``, ``limits`` and
    ``describe``.

    ``work``: the CPU time (s) the instrument's process has spent, when the instrument is a
    process on this host (the simulated bench's emulator sets it), else ``None``; waits on
    the instrument count its work as progress (:mod:`energyrig.instruments.progress`).
    """

    work: Callable[[], float] | None = None

    def start(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def stop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def open(self) -> None:
        self.start()

    def close(self) -> None:
        self.stop()
