"""Bounds counted from the last sign of progress, not from the start.

A wait on an instrument or a process needs a bound, to find one that hung; counted from the
start, that bound also fires when this host is merely slow (a loaded machine starves the
emulator, the host DUT and the rig alike). :class:`ProgressBound` counts it from the last
sign of progress instead: something new the caller saw (:meth:`ProgressBound.advance`: a new
state of the scope), or CPU time spent by the processes doing the awaited work (``work``:
:func:`cpu_time_s` of an emulator, of a simulated lab). Work counts only up to ``bound_s`` of
CPU time since the last advance: a process busy without end has hung too.

docs/performance.md ("Tests under load") lists the bounds and what each counts from.
"""
from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable

import psutil


def cpu_time_s(pids: Iterable[int]) -> float:
    """CPU time (user + system) that the processes ``pids`` and their living descendants have
    used, s (a process that is gone counts 0)."""
    total = 0.0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            procs = [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for p in procs:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                times = p.cpu_times()
                total += times.user + times.system
    return total


class ProgressBound:
    """``bound_s`` (s) counted from the last sign of progress.

    Parameters
    ----------
    bound_s:
        Longest time without progress, s; also the most CPU time ``work`` may take as
        progress since the last :meth:`advance`.
    work:
        CPU time (s) used so far by the processes doing the awaited work, or ``None``: only
        :meth:`advance` is progress (hardware).
    clock:
        Monotonic clock, s (tests pass a fake one).
    """

    def __init__(self, bound_s: float, *, work: Callable[[], float] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bound_s = bound_s
        self._work = work
        self._clock = clock
        self._since = self._base = self._done = 0.0
        self._asked = -math.inf
        self.advance()

    def _ask(self, now: float) -> bool:
        """Read ``work`` into ``_done`` if the last reading is a tenth of the bound old (its
        resolution: it reads /proc, ~5 ms of CPU on a machine of 130 processes); whether it
        was read."""
        if self._work is None or now - self._asked < self.bound_s / 10:
            return False
        self._asked = now
        self._done = self._work()
        return True

    def advance(self) -> None:
        """Something new happened: the bound starts again, and the work budget with it (from
        the newest reading of ``work``, at most a tenth of the bound old: a caller that
        advances on every poll reads /proc no more often than :meth:`expired` does)."""
        self._since = now = self._clock()
        self._ask(now)
        self._base = self._done

    def expired(self, working: bool = True) -> bool:
        """Whether ``bound_s`` passed without progress; ``working``: whether the work done
        now counts (``False`` while nothing is expected of the process, e.g. a scope that
        waits for its trigger)."""
        now = self._clock()
        if working:
            done = self._done
            if self._ask(now) and self._done != done and self._done - self._base <= self.bound_s:
                self._since = now
        return now - self._since > self.bound_s
