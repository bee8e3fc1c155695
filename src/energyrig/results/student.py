"""Quantiles of Student's t distribution in plain Python (no scipy): the ``t`` of every
interval of a mean the rig states (:func:`energyrig.results.stats.describe`).

``rig analyze --json`` states a 95 % interval per figure; importing ``scipy.special`` for
its ``stdtrit`` alone cost about 0.5 s of CPU per run on the rig's machine, half the
command's fixed cost. This module gives the same value (to 1e-10 relative over 1 to 10^6
degrees of freedom and the probabilities of a two-sided interval from 50 % to 99.9 %,
held to ``scipy.stats.t.ppf`` in ``tests/results/test_t_quantile.py``) from ``math`` alone:

* the upper tail ``P(T > t) = ½·I_x(ν/2, ½)`` with ``x = ν/(ν + t²)``, ``I`` the regularised
  incomplete beta function, evaluated by its continued fraction (Abramowitz & Stegun
  26.5.8) with the modified Lentz algorithm (Press et al., *Numerical Recipes*, 3rd ed.,
  §6.4 ``betacf``), on ``I_x(a, b)`` or ``1 − I_{1−x}(b, a)``, whichever converges;
* its prefactor's ``ln B(ν/2, ½)`` from ``ln Γ(a + ½) − ln Γ(a)``, which for large ``a`` is
  taken from the difference of Stirling's series (A&S 6.1.40) instead of two ``lgamma``
  values of ~10^6 whose difference would lose 1e-9;
* the quantile by Newton's method on the tail (convex and decreasing for t > 0, so Newton
  converges from any start), started from the Cornish-Fisher expansion (A&S 26.7.5) of a
  normal quantile (A&S 26.2.23); ν = 1 (Cauchy) in closed form.
"""
from __future__ import annotations

import functools
import math

_EPS = 2.0 ** -52
#: Below this, ``lgamma(a + ½) − lgamma(a)`` directly (its terms are < 40: ~1e-14 absolute).
_STIRLING_FROM = 20.0
_TINY = 1e-300
#: t² from which the tail is ``I_x(a, ½)``'s fraction, below it ``1 − I_{1−x}(½, a)``'s.
#: The first converges fast for t² > 3ν/(ν + 2) but, for ν in the 10^5..10^6 and t near
#: that bound, loses up to 1e-11 to rounding (1 + a·d nears 0 in Lentz's steps); the second
#: stays within 1e-13 there and loses digits only as the tail shrinks (½ − ~½): it is used
#: up to t = 3 (tail > 1e-3 for every ν), the first beyond.
_DIRECT_FROM_T2 = 9.0


def _stirling_tail(z: float) -> float:
    """The terms of Stirling's series for ln Γ(z) after ``(z − ½) ln z − z + ½ ln 2π``,
    up to z⁻⁷ (the next is < 2e-15 for z >= 20)."""
    z2 = z * z
    return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680) / z2) / z2) / z2) / z


def _log_gamma_half_ratio(a: float) -> float:
    """``ln Γ(a + ½) − ln Γ(a)`` for a > 0."""
    if a < _STIRLING_FROM:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    return (a * math.log1p(0.5 / a) - 0.5 + 0.5 * math.log(a)
            + _stirling_tail(a + 0.5) - _stirling_tail(a))


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of ``I_x(a, b)`` (``I = x^a (1−x)^b / (a B(a, b)) · this``),
    modified Lentz; it converges fast for ``x < (a + 1)/(a + b + 2)``."""
    def nonzero(v: float) -> float:
        return v if abs(v) >= _TINY else _TINY

    c, d = 1.0, 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, 1_000_000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((a - 1.0 + m2) * (a + m2)),
                   -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1.0 + m2))):
            d = 1.0 / nonzero(1.0 + aa * d)
            c = nonzero(1.0 + aa / c)
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"the incomplete beta fraction did not converge (a={a}, b={b}, "
                          f"x={x})")


def t_tail(t: float, dof: float) -> float:
    """``P(T > t)`` of Student's t with ``dof`` degrees of freedom, t >= 0."""
    a, t2 = dof / 2.0, t * t
    if not t2:
        return 0.5
    log_beta = 0.5 * math.log(math.pi) - _log_gamma_half_ratio(a)  # ln B(a, ½)
    front = math.exp(-a * math.log1p(t2 / dof) + 0.5 * math.log(t2 / (dof + t2)) - log_beta)
    if t2 >= _DIRECT_FROM_T2:  # I_x(a, ½), x = dof/(dof + t²): within its fast region
        return 0.5 * front * _beta_fraction(a, 0.5, dof / (dof + t2)) / a
    return 0.5 - front * _beta_fraction(0.5, a, t2 / (dof + t2))  # ½(1 − I_{1−x}(½, a))


def _t_density(t: float, dof: float) -> float:
    log_beta = 0.5 * math.log(math.pi) - _log_gamma_half_ratio(dof / 2.0)
    return math.exp(-(dof + 1.0) / 2.0 * math.log1p(t * t / dof) - log_beta) / math.sqrt(dof)


def _normal_upper(p: float) -> float:
    """z with P(Z > z) = p, 0 < p <= ½, to 4.5e-4 (A&S 26.2.23): a start only."""
    s = math.sqrt(-2.0 * math.log(p))
    return s - (2.515517 + 0.802853 * s + 0.010328 * s * s) / (
        1.0 + 1.432788 * s + 0.189269 * s * s + 0.001308 * s ** 3)


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, dof: float) -> float:
    """The ``q`` quantile of Student's t with ``dof`` > 0 degrees of freedom (any real
    ``dof``, as a Welch interval's): ``scipy.stats.t.ppf(q, dof)`` to 1e-10 relative
    (module docstring). Kept once computed: every point's summary asks for the same few
    (each a few Newton steps of continued fractions: a fraction of a millisecond).

    Raises
    ------
    ValueError
        ``q`` not in (0, 1), or ``dof`` not a positive finite number.
    """
    q, dof = float(q), float(dof)
    if not 0.0 < q < 1.0:
        raise ValueError(f"a quantile's probability must lie in (0, 1), got {q}")
    if not (dof > 0.0 and math.isfinite(dof)):
        raise ValueError(f"degrees of freedom must be positive and finite, got {dof}")
    if q == 0.5:
        return 0.0
    p, sign = (1.0 - q, 1.0) if q > 0.5 else (q, -1.0)  # the upper tail beyond |t|
    if dof == 1.0:
        return sign * math.tan(math.pi * (0.5 - p))
    z = _normal_upper(p)
    z2 = z * z
    t = z + (z2 + 1.0) * z / (4.0 * dof) + ((5.0 * z2 + 16.0) * z2 + 3.0) * z / (96.0 * dof * dof)
    for _ in range(60):
        step = (t_tail(t, dof) - p) / _t_density(t, dof)
        new = t + step if t + step > 0 else t / 2.0
        if abs(new - t) <= 1e-15 * new:
            return sign * new
        t = new
    return sign * t
