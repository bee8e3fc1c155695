"""One trigger window recorded: arm the instrument → run what makes the window on the DUT →
collect the record. The point pipeline (:meth:`energyrig.rig.pipeline.Measurement.window`)
and every calibration routine (:mod:`energyrig.calibration.routines`) record their windows
through :func:`record_window`; what the DUT runs (a batch of ops, a ``mark`` window, an
empty window) is the caller's :attr:`WindowRequest.run`.

The bench is typed by what this needs of it (:class:`WindowBench`: an instrument that arms
and collects), so the package imports nothing of the rig or the instruments.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Recorder(Protocol[R_co]):
    """What :func:`record_window` needs of an instrument
    (:class:`energyrig.instruments.base.Acquisition`)."""

    def arm(self, pre_s: float, window_s: float, post_s: float, windows: int = 1) -> None: ...

    def collect(self, timeout_s: float) -> R_co: ...


class WindowBench(Protocol[R_co]):
    """What :func:`record_window` needs of an open bench: its instrument."""

    @property
    def instrument(self) -> Recorder[R_co]: ...


@dataclass(frozen=True)
class WindowRequest:
    """One window to record.

    Attributes
    ----------
    pre_s, window_s, post_s:
        What the instrument is armed for: the span before the window, the window's expected
        length and the span after it, s.
    run:
        Makes the trigger window on the DUT (and any idle around it); called once the
        instrument is armed. What it returns is the caller's (a closure keeps the reply).
    collect_timeout_s:
        How long the instrument may take to deliver the record once ``run`` returned, s.
    windows:
        Trigger windows ``run`` makes and the record holds (a group: ``window_s`` then
        spans them, from the first rise to the last fall).
    after_run:
        Called once ``run`` returned, before the record is collected: work that needs the
        DUT, not the record, done while the instrument's stream still brings it (``None``:
        nothing).
    """

    pre_s: float
    window_s: float
    post_s: float
    run: Callable[[], object]
    collect_timeout_s: float
    windows: int = 1
    after_run: Callable[[], object] | None = None


@dataclass(frozen=True)
class Recording(Generic[R]):
    """A recorded window: the instrument's ``record`` and the host's monotonic clock just
    before ``run`` started (``sent_ns``) and after it returned (``replied_ns``), ns."""

    record: R
    sent_ns: int
    replied_ns: int


def record_window(bench: WindowBench[R], request: WindowRequest) -> Recording[R]:
    """Arm ``bench``'s instrument for ``request``, run it, collect the record.

    Raises
    ------
    DutError, InstrumentError
        What ``run`` or the instrument raised (a record the window outlasted:
        :class:`~energyrig.errors.RecordTooShort`; none in it:
        :class:`~energyrig.errors.NoTriggerWindow`).
    """
    group = {"windows": request.windows} if request.windows > 1 else {}
    bench.instrument.arm(pre_s=request.pre_s, window_s=request.window_s,
                         post_s=request.post_s, **group)
    sent_ns = time.monotonic_ns()
    request.run()
    replied_ns = time.monotonic_ns()
    if request.after_run is not None:
        request.after_run()
    return Recording(bench.instrument.collect(timeout_s=request.collect_timeout_s), sent_ns,
                     replied_ns)
