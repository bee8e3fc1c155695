"""``rig calibrate baseline`` computes the Allan deviation only as far as its decision needs.

Each span tried costs a pass over every idle sample: a scope's 2 s idles at ~0.5 MS/s are
3 x 1.05 M samples and 47 spans, 1.6-2.4 s of CPU for the whole curve, where a steady idle
is decided on its first five spans (docs/performance.md, "The slow tier's waits"). The
span found must be the one the whole curve gives, for every kind of idle the routine meets.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from energyrig.calibration.routines.baseline import allan_deviation, allan_span

N = 40_000


def _shortest_on_the_whole_curve(spans: np.ndarray, deviation: np.ndarray,
                                 precision_a: float) -> int | None:
    """The rule of ``allan_span``, applied to the deviation at every span."""
    ok = deviation <= precision_a
    for k in range(len(spans)):
        upto = spans <= 2 * spans[k] * (1 + 1e-9)
        if ok[k:][upto[k:]].all():
            return k
    return None


def _idles(kind: str, rng: np.random.Generator) -> list[np.ndarray]:
    t = np.arange(N) * 1e-5
    white = [rng.normal(3e-6, 0.2e-6, N) for _ in range(2)]
    if kind == "white":
        return white
    if kind == "drift":
        return [w + 2e-6 * t for w in white]
    # 2 mA for 1 ms every 50 ms, each record at its own phase
    return [w + np.where(np.mod(t + 0.013 * i, 0.05) < 1e-3, 2e-3, 0.0)
            for i, w in enumerate(white)]


@pytest.mark.parametrize("kind, precision_a", [
    ("white", 0.2e-6 / math.sqrt(150)),   # a few spans up
    ("white", 0.2e-6 / math.sqrt(3000)),  # the middle of the curve
    ("drift", 5e-9),
    ("load", 2e-5),                       # spans of several of the load's periods
    ("load", 1e-9),                       # none: every span computed
])
def test_the_span_found_is_the_whole_curve_s(kind: str, precision_a: float) -> None:
    idle = _idles(kind, np.random.default_rng(11))
    spans, deviation, k = allan_span(idle, precision_a)
    whole = allan_deviation(idle, spans)
    assert k == _shortest_on_the_whole_curve(spans, whole, precision_a)
    computed = ~np.isnan(deviation)
    np.testing.assert_array_equal(deviation[computed], whole[computed])
    if k is None:
        assert computed.all()  # the error message names the lowest deviation of all


def test_a_steady_idle_is_decided_on_its_first_spans() -> None:
    idle = _idles("white", np.random.default_rng(12))
    spans, deviation, k = allan_span(idle, 0.2e-6 / math.sqrt(90))  # the shortest span
    assert k == 0
    # the spans up to twice the shortest, no further
    assert np.flatnonzero(~np.isnan(deviation)).tolist() == \
        list(range(int(np.sum(spans <= 2 * spans[0]))))
