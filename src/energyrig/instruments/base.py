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

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from energyrig.capture import Chunk
from energyrig.instruments.family import InstrumentInfo, Limits

log = logging.getLogger(__name__)


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
    """

    pre_s: float
    window_s: float
    post_s: float

    def __post_init__(self) -> None:
        for name in ("pre_s", "window_s", "post_s"):
            value = getattr(self, name)
            if not value >= 0.0:  # also rejects NaN
                raise ValueError(f"arm(): {name} must be >= 0 s, got {value!r}")

    @property
    def total_s(self) -> float:
        """Length of the record the request asks for, s."""
        return self.pre_s + self.window_s + self.post_s


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
    """

    source: str
    chunk_list: tuple[Chunk, ...]
    trigger_bit: int = 0
    flags: tuple[str, ...] = ()
    corrections: tuple[tuple[str, float], ...] = ()

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

    def arm(self, pre_s: float, window_s: float, post_s: float) -> None:
        """Prepare to record one trigger window; call before the DUT runs.

        Parameters
        ----------
        pre_s:
            Seconds of samples to keep before the trigger rises.
        window_s:
            Expected trigger window length, s.
        post_s:
            Seconds of samples to keep after the trigger falls.
        """
        ...

    def collect(self, timeout_s: float) -> RecordedCapture:
        """Return the samples of the armed window plus its margins.

        Call after the DUT replied. Blocks until the record is complete (a stream: the
        trigger has risen and fallen and ``post_s`` more seconds arrived; a recorder: its
        single acquisition finished) or ``timeout_s`` passed, which raises
        :class:`~energyrig.errors.InstrumentError`. Disarms the instrument.
        """
        ...

    def stop(self) -> None:
        """Stop sampling and release the device. Safe to call twice."""
        ...

    def limits(self) -> Limits:
        """Sample rate, longest record and stream lag: what the caller needs to size a
        batch and to wait for samples (:class:`~energyrig.instruments.family.Limits`)."""
        ...

    def describe(self) -> InstrumentInfo:
        """Identity and settings, for the run manifest and ``rig instruments check``
        (:class:`~energyrig.instruments.family.InstrumentInfo`)."""
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
