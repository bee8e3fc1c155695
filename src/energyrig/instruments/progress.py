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
        self._since = self._asked = self._base = self._done = 0.0
        self.advance()

    def advance(self) -> None:
        """Something new happened: the bound starts again, and the work budget with it."""
        self._since = self._asked = self._clock()
        self._base = self._done = self._work() if self._work is not None else 0.0

    def expired(self, working: bool = True) -> bool:
        """Whether ``bound_s`` passed without progress; ``working``: whether the work done
        now counts (``False`` while nothing is expected of the process, e.g. a scope that
        waits for its trigger)."""
        now = self._clock()
        # ``work`` reads /proc: asked at most every tenth of the bound (its resolution).
        if working and self._work is not None and now - self._asked >= self.bound_s / 10:
            self._asked = now
            done = self._work()
            if done != self._done and done - self._base <= self.bound_s:
                self._done, self._since = done, now
        return now - self._since > self.bound_s
