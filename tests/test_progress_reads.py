"""A bound advanced on every poll reads its process's work at most once per tenth of it.

``work`` (:func:`energyrig.instruments.progress.cpu_time_s`) reads /proc for the process
tree: ~5 ms of CPU on a machine of 130 processes, ~11 ms at 500. The Otii driver advances
its bound on every poll that brought samples and the scope's wait on every new state, and
each advance read it: 452 readings in one Otii calibrate-then-run test, 429 in the scope's
calibrate all, a fifth of the test process's time under a profiler (docs/performance.md,
"The slow tier's waits"). The bound's resolution was already a tenth of it (``expired``
reads no more often); advancing now keeps to it.
"""
from __future__ import annotations

from energyrig.instruments.progress import ProgressBound


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Work:
    """A process tree's CPU time, s, counting how often it is read."""

    def __init__(self) -> None:
        self.used = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.used


def test_advancing_on_every_poll_reads_the_work_once_per_tenth_of_the_bound() -> None:
    clock, work = Clock(), Work()
    bound = ProgressBound(2.0, work=work, clock=clock)
    for _ in range(1000):  # 20 s of polls 20 ms apart, each bringing something new
        clock.now += 0.02
        work.used += 0.001
        bound.advance()
        assert not bound.expired()
    assert work.reads <= 1 + 20.0 / (2.0 / 10) + 1


def test_a_process_that_stops_right_after_an_advance_is_hung_a_bound_later() -> None:
    clock, work = Clock(), Work()
    bound = ProgressBound(2.0, work=work, clock=clock)
    for _ in range(100):  # working, and advancing on every poll
        clock.now += 0.02
        work.used += 0.01
        bound.advance()
    last = clock.now
    while not bound.expired():  # then it does nothing
        clock.now += 0.02
    # the bound counts from the last advance, the work read at its resolution (a tenth)
    assert 2.0 < clock.now - last <= 2.0 + 2.0 / 10 + 0.02
