"""Stopping a sweep: the stop request (Ctrl-C, SIGTERM, a caller) and the adaptive rule
that ends a point."""
from __future__ import annotations

import contextlib
import logging
import math
import signal
import threading
from collections.abc import Iterator, Sequence
from types import FrameType

from energyrig.domain import PER_OP, Window, estimate
from energyrig.results.stats import describe_finite
from energyrig.rig.plan import Plan
from energyrig.rig.sweep.events import SILENT, Reporter, StopRequested

log = logging.getLogger(__name__)


class StopRequest:
    """Set by Ctrl-C/SIGTERM (see :meth:`handle_signals`) or by a caller; checked between
    windows."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def set(self, reason: str = "stop requested") -> None:
        self.reason = reason
        self._event.set()

    def __bool__(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` unless a stop comes first; True when stopped."""
        return self._event.wait(seconds) if seconds > 0 else bool(self)

    @contextlib.contextmanager
    def handle_signals(self, reporter: Reporter = SILENT) -> Iterator[None]:
        """First SIGINT/SIGTERM: stop after the current window (``reporter`` is told:
        :class:`~energyrig.rig.sweep.events.StopRequested`). Second: abort now."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handler(signum: int, frame: FrameType | None) -> None:
            if self:
                raise KeyboardInterrupt
            self.set(signal.Signals(signum).name)
            log.info("%s: stopping after the current window", self.reason)
            reporter.report(StopRequested(self.reason))

        previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)


# --- the adaptive rule --------------------------------------------------------------------

def _metric(window: Window, metric: str) -> float:
    """The adaptive rule's figure of one window, per window (batch_n cancels in the ratio):
    the window column whose per-op column is ``metric`` (see ``store.PER_OP``)."""
    return float(getattr(window, PER_OP[metric]))


def enough_windows(windows: Sequence[Window], plan: Plan) -> bool:
    """The adaptive rule: at least ``min_windows`` in the estimate (windows that failed an
    integrity check are replaced: :func:`~energyrig.domain.estimate`), then until the 95 %
    CI half-width of the metric is at most ``ci_target`` of its mean, at most
    ``max_windows`` measured in all."""
    rule = plan.adaptive
    if len(windows) >= rule.max_windows:
        return True
    return len(estimate(windows)) >= rule.min_windows and target_met(windows, plan)


def target_met(windows: Sequence[Window], plan: Plan) -> bool:
    """True when the 95 % CI half-width of the plan's metric over the windows of the
    estimate is within its ``ci_target`` (a point that stopped at ``max_windows`` without it
    is flagged ``ci_target_not_met``)."""
    summary = describe_finite([_metric(w, plan.adaptive.metric) for w in estimate(windows)])
    return summary is not None and summary.n >= 2 and \
        summary.ci_halfwidth_rel <= plan.adaptive.ci_target


def next_group(windows: Sequence[Window], plan: Plan) -> int:
    """How many windows to ask for next (one request, one record where the bench can:
    :meth:`energyrig.rig.pipeline.Measurement.windows`), from the CI reached so far: the
    windows ``min_windows`` still needs, then the windows the 95 % CI half-width needs to
    reach ``ci_target`` (it shrinks as 1/sqrt(n): n × (half-width / target)² in all),
    within ``max_windows``; at least 1."""
    rule = plan.adaptive
    kept = estimate(windows)
    if len(kept) < rule.min_windows:
        need = rule.min_windows - len(kept)
    else:
        summary = describe_finite([_metric(w, rule.metric) for w in kept])
        if summary is None or summary.n < 2 or not math.isfinite(summary.ci_halfwidth_rel):
            need = 1
        else:
            ratio = summary.ci_halfwidth_rel / rule.ci_target
            need = math.ceil(summary.n * ratio * ratio) - summary.n
    return max(1, min(rule.max_windows - len(windows), need))
