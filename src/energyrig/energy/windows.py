"""Trigger windows and their energy, from any :class:`~energyrig.capture.Capture`.

The trigger bit of the logic channel is high around each batch of operations. A *window* is a
run of trigger-high samples; its energy is the integral of v·i over it. Everything works
chunk by chunk (:class:`WindowFinder`), so captures of any length run in bounded memory and
windows may span any number of chunk boundaries. The hot loop is the compiled kernel
``energyrig.energy._energy`` (one pass over each chunk, GIL released); this module turns its
events into :class:`Window` records.

Definitions
-----------
Sample ``k`` (absolute index, lost samples counted) is at ``t_k = k·T`` with ``T`` the sample
period. A window is the run of high samples ``a..b`` (lows shorter than ``min_pulse_s``
inside it are bridged, see *Glitches*).

* **Edges.** The true rising edge lies between the last low sample before ``a`` and ``t_a``;
  it is estimated half a sample before ``t_a``. Likewise the falling edge is estimated half a
  sample after ``t_b``. So ``start_s = t_a − T/2``, ``end_s = t_b + T/2`` and
  ``duration_s = (b − a + 1)·T``.
* **Energy** ``energy_j`` is the trapezoidal integral of ``p = v·i`` over ``[t_a, t_b]``
  through the received samples (lost samples inside a window are bridged by the straight line
  between their neighbours), plus ``p_a·T/2`` and ``p_b·T/2`` for the half samples out to the
  estimated edges. For a window without lost samples this equals ``T·Σp``.
* **Edge error bound** ``edge_error_j`` bounds the error that edge quantisation can cause,
  one sample at each edge: ``(t_a − t_prev)·max(|p_prev|, |p_a|) + (t_next − t_b)·max(|p_b|,
  |p_next|)``, where ``prev`` is the last received sample before the window and ``next`` the
  first after it (``t_a − t_prev = T`` unless samples were lost there). It holds whenever the
  true power between two neighbouring samples stays within the larger of their magnitudes
  (constant, step and ramp currents; for smooth signals up to a term of order T² that the
  trapezoid itself adds). With the half-sample edge estimate the actual edge error of a step
  is at most half of it.
* **Baseline** ``baseline_w`` is the mean power of the trigger-low samples in the span of
  ``baseline_s`` that ends ``guard_s`` before the rising edge (``[t_a − guard − baseline,
  t_a − guard)``). If that span is not entirely inside the low run before the window (the
  capture starts too late, or the previous window ends too close), the span of the same
  length starting ``guard_s`` after the falling edge is used and the window is flagged
  ``baseline_after``; if that one is cut short too (the next window, the end of the capture),
  ``baseline_w`` is NaN and the window is flagged ``no_baseline``.
* **Net energy** ``net_energy_j = energy_j − baseline_w·duration_s``; mean power
  ``energy_j / duration_s``.
* **Charge** (``WindowFinder(charge=True)``, :class:`WindowCurrent`) is the same integral of
  ``i`` alone (the kernel run a second time with ``v ≡ 1 V``), and the baseline current the
  same mean of ``i`` over the same span; :func:`windows_max_current` is the largest current
  of the window's samples ``a..b``.

Glitches
--------
With ``min_pulse_s > 0``, a high pulse shorter than ``min_pulse_s`` is a glitch: it is
recorded in :attr:`WindowFinder.glitches`, not reported as a window, and the next window is
flagged ``glitch``. A low dip shorter than ``min_pulse_s`` inside a window (trigger bounce)
is bridged: the window continues through it and is flagged ``glitch``. A window ends when the
trigger has been low for ``min_pulse_s``.

Lost samples
------------
A window is flagged ``dropped_samples`` when samples were lost (:attr:`Chunk.gaps`) inside
it, next to one of its edges, or in its guard and baseline span (before it, or after it when
flagged ``baseline_after``): its energy, edges or baseline may lack what happened there.

Unpaired edges
--------------
A capture that begins with the trigger high, or ends with it high, has an edge without its
partner. Those spans are never guessed into windows; they are listed in
:attr:`WindowFinder.unpaired`.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from energyrig.capture import NO_GAPS, Capture, Chunk
from energyrig.domain import Window, WindowSettings
from energyrig.errors import CaptureError, ChannelError
from energyrig.energy import _energy
from energyrig.flags import (BASELINE_AFTER, BASELINE_CLIPPED, CORRUPT, DROPPED_SAMPLES, GLITCH,
                             NO_BASELINE, SATURATED, TOO_FEW_SAMPLES)

log = logging.getLogger(__name__)

# The flags this module sets are declared in energyrig.flags (ENERGY_FLAGS).

_EV_WINDOW, _EV_GLITCH, _EV_UNPAIRED_FALL, _EV_UNPAIRED_RISE = range(4)
_BASE_AFTER, _BASE_NONE = 1, 2
#: The flags :meth:`WindowFinder._window` sets, bit k of its mask = flag k; and the flags
#: tuple of each of the 64 masks, made once (a window's is one index, and windows with the
#: same flags share the tuple).
_FLAG_BITS = (TOO_FEW_SAMPLES, DROPPED_SAMPLES, SATURATED, GLITCH, NO_BASELINE, BASELINE_AFTER)
_FLAG_SETS = tuple(tuple(f for k, f in enumerate(_FLAG_BITS) if mask >> k & 1)
                   for mask in range(1 << len(_FLAG_BITS)))


@dataclass(frozen=True)
class Glitch:
    """A high pulse shorter than ``min_pulse_s``: its first and last high sample times, s."""

    start_s: float
    end_s: float


@dataclass(frozen=True)
class UnpairedEdge:
    """An edge without its partner at the start or end of a capture.

    ``kind`` is ``"fall"`` (the capture began with the trigger high; ``time_s`` is the
    estimated falling edge) or ``"rise"`` (the capture ended with the trigger high;
    ``time_s`` is the estimated rising edge).
    """

    kind: str
    time_s: float


@dataclass(frozen=True)
class WindowCurrent:
    """The current of one window, as the Power Profiler app shows a selection's (SI units).

    Attributes
    ----------
    charge_c:
        ∫ i dt over the window, the trapezoid of ``energy_j`` through the same samples, C.
    baseline_a:
        Mean current of the span ``baseline_w`` is the mean power of, A (NaN without one).
    max_current_a:
        The largest current of the window's samples, A (NaN: not computed).
    """

    charge_c: float
    baseline_a: float
    max_current_a: float = math.nan


@dataclass
class WindowFinder:
    """Streaming window finder: feed chunks in time order, then call :meth:`finish`.

    Windows are returned as soon as they are complete (the falling edge confirmed and the
    baseline known). Glitches and unpaired edges accumulate in :attr:`glitches` and
    :attr:`unpaired`; with ``charge``, the :class:`WindowCurrent` of each window returned
    (without its maximum) in :attr:`currents`, in the same order.
    """

    settings: WindowSettings = field(default_factory=WindowSettings)
    source: str = "capture"
    charge: bool = False
    glitches: list[Glitch] = field(default_factory=list, init=False)
    unpaired: list[UnpairedEdge] = field(default_factory=list, init=False)
    currents: list[WindowCurrent] = field(default_factory=list, init=False)
    _kernel: _energy.Integrator | None = field(default=None, init=False, repr=False)
    # The same kernel fed v = 1 V: its "energy" is the charge (with ``charge``).
    _amps: _energy.Integrator | None = field(default=None, init=False, repr=False)
    _period_s: float = field(default=0.0, init=False, repr=False)
    # Guard and baseline span in samples; the lost samples [start, end) not yet behind
    # every window that could still need them (absolute indices, one row per gap).
    _guard_base: tuple[int, int] = field(default=(0, 0), init=False, repr=False)
    _lost: npt.NDArray[np.int64] = field(default_factory=lambda: NO_GAPS, init=False,
                                         repr=False)

    def _start(self, period_s: float) -> _energy.Integrator:
        if not (period_s > 0 and math.isfinite(period_s)):
            raise CaptureError(self.source, f"sample period must be > 0 s, got {period_s}")
        pulse, guard, base = self.settings.in_samples(period_s)
        self._period_s = period_s
        self._guard_base = guard, base
        args = (period_s, self.settings.trigger_bit, self.settings.active_high, pulse, guard,
                base)
        self._kernel = _energy.Integrator(*args)
        self._amps = _energy.Integrator(*args) if self.charge else None
        return self._kernel

    def feed(self, chunk: Chunk) -> list[Window]:
        """Process one chunk; return the windows completed so far (in time order)."""
        kernel = self._kernel or self._start(chunk.period_s)
        if not math.isclose(chunk.period_s, self._period_s, rel_tol=1e-9):
            raise CaptureError(self.source, f"sample period changed from {self._period_s} s "
                                            f"to {chunk.period_s} s at sample {chunk.start_index}")
        if chunk.logic is None:
            raise ChannelError(self.source, "capture has no logic channel to find the trigger in")
        n = len(chunk)
        if n == 0:
            return []
        current = _samples(chunk.current_a)
        voltage = (float(chunk.voltage_v) if np.isscalar(chunk.voltage_v)
                   else _samples(chunk.voltage_v))  # type: ignore[arg-type]
        logic = np.ascontiguousarray(chunk.logic, dtype=np.uint8)
        saturated = (None if chunk.saturated is None
                     else np.ascontiguousarray(chunk.saturated, dtype=np.bool_))
        # Split at the gaps: each contiguous segment goes to the kernel with its absolute index.
        bounds = [0, *chunk.gaps[:, 0].tolist(), n]
        lost_before = [0, *np.cumsum(chunk.gaps[:, 1]).tolist()]
        if len(chunk.gaps):  # where the lost samples were, for the spans beside the windows
            end = chunk.start_index + chunk.gaps[:, 0] + np.asarray(lost_before[1:])
            self._lost = np.concatenate((self._lost, np.stack((end - chunk.gaps[:, 1], end),
                                                              axis=1)))
        events: list[tuple] = []
        amps: list[tuple] = []
        for seg, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
            if hi <= lo:
                continue
            part = (logic[lo:hi], None if saturated is None else saturated[lo:hi],
                    chunk.start_index + lo + lost_before[seg])
            try:
                events += kernel.feed(
                    current[lo:hi], voltage if isinstance(voltage, float) else voltage[lo:hi],
                    *part)
                if self._amps is not None:
                    amps += self._amps.feed(current[lo:hi], 1.0, *part)
            except ValueError as exc:  # overlapping chunks, arrays of different lengths
                raise CaptureError(self.source, f"bad chunk at sample {chunk.start_index}: "
                                                f"{exc}") from exc
        return self._windows(events, amps)

    def _charges(self, amps: list[tuple]) -> None:
        """Note the :class:`WindowCurrent` of the window events of the v = 1 V kernel."""
        self.currents += [WindowCurrent(charge_c=ev[4], baseline_a=ev[5])
                          for ev in amps if ev[0] == _EV_WINDOW]

    def finish(self) -> list[Window]:
        """Close the capture; return the windows completed by its end."""
        if self._kernel is None:
            return []
        return self._windows(self._kernel.finish(),
                             [] if self._amps is None else self._amps.finish())

    def _windows(self, events: list[tuple], amps: list[tuple]) -> list[Window]:
        self._charges(amps)
        out: list[Window] = []
        T = self._period_s
        for ev in events:
            kind = ev[0]
            if kind == _EV_WINDOW:
                out.append(self._window(ev))
            elif kind == _EV_GLITCH:
                self.glitches.append(Glitch(ev[1] * T, ev[2] * T))
                log.info("%s: trigger glitch at %.6f s", self.source, ev[1] * T)
            else:
                edge = UnpairedEdge("fall" if kind == _EV_UNPAIRED_FALL else "rise",
                                    (ev[1] - 0.5) * T)
                self.unpaired.append(edge)
                log.info("%s: unpaired %s edge at %.6f s", self.source, edge.kind, edge.time_s)
        return out

    def _lost_beside(self, a: int, b: int, base_src: int) -> bool:
        """Whether samples were lost beside the window ``a..b``: in its baseline span, the
        guard or at an edge (before it, or after it for a baseline taken after; only at the
        edges for a window without baseline). Forgets the gaps no later window can reach."""
        if not len(self._lost):
            return False
        guard, base = self._guard_base
        lo, hi = a - 1, b + 1
        if base_src == _BASE_AFTER:
            hi = b + guard + base
        elif base_src != _BASE_NONE:
            lo = a - guard - base
        lost = self._lost
        beside = bool(np.any((lost[:, 0] <= hi) & (lost[:, 1] > lo)))
        self._lost = lost[lost[:, 1] > b]
        return beside

    def _window(self, ev: tuple) -> Window:
        _, a, b, n, energy, baseline, edge_err, base_src, lost, sat, glitch = ev
        T = self._period_s
        mask = ((n < self.settings.min_samples)
                | (lost > 0 or self._lost_beside(a, b, base_src)) << 1
                | (sat > 0) << 2 | bool(glitch) << 3
                | (base_src == _BASE_NONE) << 4 | (base_src == _BASE_AFTER) << 5)
        return Window((a - 0.5) * T, (b + 0.5) * T, n, energy, baseline, edge_err,
                      _FLAG_SETS[mask], lost_samples=lost)


def _samples(values: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:
    """``values`` as the kernel reads them: float32 (as a file holds them) or float64, not
    converted; anything else as float64."""
    dtype = np.float32 if values.dtype == np.float32 else np.float64
    return np.ascontiguousarray(values, dtype=dtype)


def stream_flags(chunks: Iterable[Chunk], window: Window,
                 settings: WindowSettings) -> tuple[str, ...]:
    """The integrity flags of one ``window`` (:func:`windows_stream_flags`)."""
    return windows_stream_flags(chunks, [window], settings)[0]


def windows_stream_flags(chunks: Iterable[Chunk], windows: Sequence[Window],
                         settings: WindowSettings) -> list[tuple[str, ...]]:
    """The integrity flags of each of ``windows`` from the masks its capture's chunks carry,
    in one pass over the chunks (a file read again, in bounded memory):
    ``corrupt_samples`` when a corrupt sample lies in the window, on one of the two samples
    that made its edges (with ``min_pulse_s`` 0 a one-sample dip of the trigger splits a
    window, and the longer part ends or starts at the corrupt sample), or in its baseline
    span (the span before it, or after it for a window flagged ``baseline_after``), and
    ``baseline_clipped`` when more than half of the baseline span is at the instrument's
    floor. Chunks without the masks give no flags. Vectorised over the windows per chunk."""
    corrupt = np.zeros(len(windows), dtype=np.int64)
    floor = np.zeros(len(windows), dtype=np.int64)
    span = np.zeros(len(windows), dtype=np.int64)
    spans = None
    for chunk in chunks:
        if not len(chunk) or (chunk.corrupt is None and chunk.at_floor is None):
            continue
        if spans is None:
            spans = _flag_spans(windows, chunk.period_s, settings)
            order = np.argsort(spans[0], kind="stable")
            lo_sorted = spans[0][order]
            widest = int((spans[1] - spans[0]).max(initial=0))
        lo, hi, b_lo, b_hi = spans
        # The windows whose span [lo, hi] meets the chunk: lo at most its end, at least its
        # start less the widest span.
        near = order[np.searchsorted(lo_sorted, chunk.start_index - widest):
                     np.searchsorted(lo_sorted, chunk.end_index)]
        near = near[hi[near] >= chunk.start_index]
        if not near.size:
            continue
        index = chunk.indices()
        if chunk.corrupt is not None:
            corrupt[near] += _count(index, chunk.corrupt, lo[near], hi[near] + 1)
        if chunk.at_floor is not None:
            span[near] += _count(index, None, b_lo[near], b_hi[near])
            floor[near] += _count(index, chunk.at_floor, b_lo[near], b_hi[near])
    return [tuple(name for name, on in ((CORRUPT, c > 0), (BASELINE_CLIPPED, n > 0 and f > n / 2))
                  if on) for c, f, n in zip(corrupt, floor, span)]


def windows_max_current(chunks: Iterable[Chunk], windows: Sequence[Window]
                        ) -> npt.NDArray[np.float64]:
    """The largest current of each of ``windows``' samples (``a..b``,
    :meth:`~energyrig.domain.Window.sample_range`), A, in one pass over the chunks of the
    capture they were found in (bounded memory; NaN for a window none of whose samples
    came). Vectorised over the windows per chunk."""
    out = np.full(len(windows), -np.inf)
    first = last = None
    for chunk in chunks:
        if not len(chunk) or not len(windows):
            continue
        if first is None:
            first, last = np.array([w.sample_range(chunk.period_s) for w in windows],
                                   dtype=np.int64).reshape(-1, 2).T
        index = chunk.indices()
        near = np.flatnonzero((first <= index[-1]) & (last >= index[0]))
        if not near.size:
            continue
        lo = np.searchsorted(index, first[near])
        hi = np.searchsorted(index, last[near] + 1)
        keep = hi > lo
        # The windows do not overlap: [lo, hi) in turn is one ascending list, and every
        # other reduction is over a window's samples (-inf ends the last one).
        current = np.append(np.asarray(chunk.current_a, dtype=np.float64), -np.inf)
        tops = np.maximum.reduceat(current, np.stack((lo[keep], hi[keep]), axis=1).ravel())
        np.maximum.at(out, near[keep], tops[::2])
    out[np.isneginf(out)] = np.nan
    return out


def _count(index: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_] | None,
           a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Per span, the samples at absolute ``index`` in ``[a, b)`` (those set in ``mask``)."""
    if mask is None:
        return np.searchsorted(index, b) - np.searchsorted(index, a)
    total = np.concatenate(([0], np.cumsum(mask, dtype=np.int64)))
    return total[np.searchsorted(index, b)] - total[np.searchsorted(index, a)]


def _flag_spans(windows: Sequence[Window], period_s: float, settings: WindowSettings
                ) -> tuple[npt.NDArray[np.int64], ...]:
    """Per window, the absolute sample indices ``lo..hi`` (inclusive) a corrupt sample
    flags (the window, its edge samples, its guard and baseline span), and the baseline
    span ``[b_lo, b_hi)`` (:meth:`WindowSettings.spans`)."""
    first, last, b_lo, b_hi = np.array([settings.spans(w, period_s) for w in windows],
                                       dtype=np.int64).reshape(-1, 4).T
    after = np.array([BASELINE_AFTER in w.flags for w in windows], dtype=bool)
    lo = np.where(after, first - 1, b_lo)
    hi = np.where(after, b_hi - 1, last + 1)
    return lo, hi, b_lo, b_hi


def find_windows(capture: Capture | Iterable[Chunk],
                 settings: WindowSettings | None = None,
                 finder: WindowFinder | None = None) -> Iterator[Window]:
    """Yield the windows of a capture (or of an iterable of chunks) in time order.

    Pass your own ``finder`` to inspect its glitches and unpaired edges afterwards.
    """
    if finder is None:
        finder = WindowFinder(settings or WindowSettings(),
                              source=getattr(capture, "source", "capture"))
    chunks = capture.chunks() if isinstance(capture, Capture) else capture
    for chunk in chunks:
        yield from finder.feed(chunk)
    yield from finder.finish()


def longest(found: Sequence[Window]) -> Window:
    """The window a record is measured by: the longest of those found in it."""
    return max(found, key=lambda x: x.duration_s)
