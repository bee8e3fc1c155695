"""Statistics of the literature, as a library: the one per-op summary of a set of windows
(mean, median, std and the 95 % interval of the mean: Student t, or the percentile bootstrap
where t does not fit) that ``rig run``, the results store, ``rig analyze``, ``rig sweep``'s
stopping rule and the report all show, paired comparisons, regressions against payload size
and the 2^k factorial allocation of variation.

Every function takes plain pandas/numpy data (the tables of :mod:`energyrig.results.store`
or anything with the same columns) and returns a dataclass or a DataFrame; the report and
the CLI are built on top. Intervals are two-sided at ``confidence`` (0.95 by default) and
use Student's t of :mod:`energyrig.results.student` (a line's: statsmodels' arithmetic and
scipy.special's t, :func:`_ols_line`).
"""
from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from energyrig.domain import in_estimate
from energyrig.results.student import t_quantile, t_tail

if TYPE_CHECKING:  # pandas and scipy.special where a function needs them: `rig analyze` does not
    import pandas as pd

log = logging.getLogger(__name__)

# Per-op figures summarised with describe_finite().
SUMMARISED: tuple[str, ...] = ("time_per_op_s", "energy_per_op_j", "net_energy_per_op_j")
# Figures summarised by their mean only.
AVERAGED: tuple[str, ...] = ("cycles_per_op", "mean_power_w", "true_energy_per_op_j",
                             "true_net_energy_per_op_j")
STAT_SUFFIXES: tuple[str, ...] = ("mean", "median", "std", "ci_low", "ci_high")


#: |Sample skewness| above which the Student t interval of a mean is not trusted (a long
#: warm-up window among few: :func:`fitted_interval`).
SKEW_LIMIT = 2.0
#: Resamples of the bootstrap interval (:func:`fitted_interval`); its seed is fixed so a
#: summary is the same every time it is computed.
BOOTSTRAP_RESAMPLES = 4000


@dataclass(frozen=True, slots=True)
class Summary:
    """n, mean, median, sample std (ddof=1) and an interval of the mean: Student t
    (``ci_method`` ``"t"``) or, where :func:`fitted_interval` found it does not fit, the
    percentile bootstrap (``"bootstrap"``)."""

    n: int
    mean: float
    median: float
    std: float
    ci_low: float
    ci_high: float
    ci_method: str = "t"

    @property
    def ci_halfwidth_rel(self) -> float:
        """Half-width of the interval relative to the mean (0.01 = ±1 %)."""
        return (self.ci_high - self.ci_low) / 2.0 / abs(self.mean) if self.mean else math.inf

    @property
    def stats(self) -> tuple[float, ...]:
        """The values named by :data:`STAT_SUFFIXES`, in that order."""
        return (self.mean, self.median, self.std, self.ci_low, self.ci_high)


def describe(values: npt.ArrayLike, confidence: float = 0.95) -> Summary:
    """Summary of a sample with the Student-t interval of its mean (the t quantile of
    :func:`~energyrig.results.student.t_quantile`: scipy.stats.t's, without scipy).

    One value has std and interval NaN; the unit is that of ``values``.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        raise ValueError("describe needs at least one value")
    mean = float(x.mean())
    if x.size < 2:
        return Summary(1, mean, mean, np.nan, np.nan, np.nan)
    std = float(x.std(ddof=1))
    if std == 0.0:  # identical values: the interval is the point (scipy would give NaN)
        low = high = mean
    else:
        scale = std / np.sqrt(x.size)  # scipy.stats.t.interval's two ends, exactly
        low, high = (t_quantile(q, x.size - 1) * scale + mean
                     for q in ((1.0 - confidence) / 2, (1.0 + confidence) / 2))
    return Summary(int(x.size), mean, median(x), std, float(low), float(high))


def median(x: npt.NDArray[np.float64]) -> float:
    """``np.median(x)`` bit for bit (NaN when a value is NaN; the mean of the two middle
    values of an even count), from one ``np.partition``: np.median imports numpy.ma, a
    fifth of a second of numpy's import again, on `rig analyze --json`'s path."""
    n = x.size
    if not n or np.isnan(x).any():
        return math.nan
    k = n // 2
    if n % 2:
        return float(np.partition(x, k)[k])
    part = np.partition(x, (k - 1, k))
    return float((part[k - 1] + part[k]) / 2.0)


def fitted_interval(values: npt.ArrayLike, confidence: float = 0.95) -> Summary:
    """:func:`describe`, with the percentile-bootstrap interval of the mean in place of the
    Student t one where the t interval does not fit the data: positive values (a time, a
    gross energy) whose t interval reaches 0 or below, or at least 3 values whose sample
    skewness exceeds :data:`SKEW_LIMIT` in magnitude (one long warm-up window among few).
    The bootstrap's ends lie within the values' range, so a positive figure keeps a
    positive interval; ``ci_method`` says which was used."""
    x = np.asarray(values, dtype=np.float64)
    d = describe(x, confidence)
    if x.size < 2 or not d.std > 1e-12 * abs(d.mean):  # identical to rounding: no shape
        return d
    skewed = x.size >= 3 and abs(_skewness(x)) > SKEW_LIMIT
    if not (skewed or ((x > 0).all() and d.ci_low <= 0)):
        return d
    rng = np.random.default_rng(0)
    means = x[rng.integers(0, x.size, (BOOTSTRAP_RESAMPLES, x.size))].mean(axis=1)
    low, high = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2])
    return replace(d, ci_low=float(low), ci_high=float(high), ci_method="bootstrap")


def _skewness(x: npt.NDArray[np.float64]) -> float:
    """The adjusted Fisher-Pearson sample skewness G1 of 3 or more values (scipy.stats.skew
    with ``bias=False``)."""
    n = x.size
    dev = x - x.mean()
    g1 = float((dev ** 3).mean() / (dev ** 2).mean() ** 1.5)
    return g1 * math.sqrt(n * (n - 1)) / (n - 2)


def describe_finite(values: npt.ArrayLike, confidence: float = 0.95,
                    fit: bool = False) -> Summary | None:
    """:func:`describe` (with ``fit``, :func:`fitted_interval`) of the finite values only
    (NaN, e.g. the net energy of a window without a baseline, and ±inf left out); ``None``
    when no value is finite."""
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if not x.size:
        return None
    return fitted_interval(x, confidence) if fit else describe(x, confidence)


def summarise_per_op(frame: pd.DataFrame | Mapping[str, Any]) -> dict[str, float | str]:
    """The one per-op summary of a set of windows (rows of :func:`windows_frame`, possibly of
    several points; or its columns as a mapping of sequences, as the results store has
    them): ``{col}_{stat}`` for each :data:`SUMMARISED` column and :data:`STAT_SUFFIXES`
    stat (finite values only, NaN where none; the interval of :func:`fitted_interval`, its
    method in ``{col}_ci_method``), and ``{col}_mean`` for each :data:`AVERAGED` column
    (NaN left out). Windows that failed an integrity check are left out
    (:func:`in_estimate` of their ``flag_list``)."""
    keep = (np.array(in_estimate(frame["flag_list"]), dtype=bool) if "flag_list" in frame
            else slice(None))
    out: dict[str, float | str] = {}
    for col in SUMMARISED:
        d = describe_finite(_floats(frame[col])[keep], fit=True)
        values = d.stats if d is not None else (np.nan,) * len(STAT_SUFFIXES)
        out.update({f"{col}_{s}": float(v) for s, v in zip(STAT_SUFFIXES, values, strict=True)})
        out[f"{col}_ci_method"] = d.ci_method if d is not None else ""
    for col in AVERAGED:
        values = _floats(frame[col])[keep]
        values = values[~np.isnan(values)]
        out[f"{col}_mean"] = float(values.mean()) if values.size else np.nan
    return out


def _floats(column: Any) -> npt.NDArray[np.float64]:
    """A column (pandas, of any numeric or nullable dtype, or a sequence) as float64, NaN
    where a value is missing."""
    if hasattr(column, "to_numpy"):
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(column, dtype=np.float64)


# Columns that tell one configuration of an op from another (the point's factors less rep).
CONFIG: tuple[str, ...] = ("board", "op", "key_bits", "curve", "backend", "cpu_hz")

Selector = str | Mapping[str, Any]


def select(df: pd.DataFrame, selector: Selector) -> pd.DataFrame:
    """Rows of ``df`` matching a selector: an op name, or a mapping column -> value
    (``None`` matches a missing value)."""
    sel = {"op": selector} if isinstance(selector, str) else dict(selector)
    missing = [c for c in sel if c not in df.columns]
    if missing:
        raise KeyError(f"no column {missing} to select on; columns are {list(df.columns)}")
    mask = np.ones(len(df), dtype=bool)
    for col, value in sel.items():
        match = df[col].isna() if value is None else (df[col] == value).fillna(False)
        mask &= match.to_numpy(dtype=bool)
    return df.loc[mask]


def selector_columns(selector: Selector) -> list[str]:
    """The columns ``selector`` (:func:`select`) reads."""
    return ["op"] if isinstance(selector, str) else list(selector)


def _label(selector: Selector) -> str:
    if isinstance(selector, str):
        return selector
    return " ".join(str(v) for v in selector.values() if v is not None)


#: How :func:`paired_comparison` compares, in the words the report prints.
PAIRED_METHOD = ("paired log-ratio: the geometric mean of the per-condition ratios A / B with "
                 "the Student t interval of their logarithms; a difference is called only "
                 "when that interval excludes 1")


@dataclass(frozen=True)
class PairedComparison:
    """Two algorithms compared over matched conditions (Jain, ch. 13.4), by one method
    (:data:`PAIRED_METHOD`): one estimate, one interval, one verdict.

    ``a`` and ``b`` are labels; ``ratio`` is ``a / b`` of the response (for example net
    energy per op): the geometric mean of the per-condition ratios, its interval the t
    interval of their logarithms, ``p_value`` the t test of their mean against 0. A ratio
    suits responses that span decades over the conditions (payload sizes, key sizes), where a
    mean difference would be the largest condition's alone. ``lower`` is the label with the
    smaller response by the estimate; ``gain_pct`` the share of the other one's cost saved
    by switching to it, ``100 * (1 - lower / higher)``, with its interval from the ratio's.
    """

    a: str
    b: str
    response: str
    n_pairs: int
    mean_a: float
    mean_b: float
    ratio: float
    ratio_ci_low: float
    ratio_ci_high: float
    p_value: float
    lower: str
    gain_pct: float
    gain_ci_low: float
    gain_ci_high: float

    @property
    def significant(self) -> bool:
        """True when the interval of the ratio excludes 1: only then is one of the two
        called faster (or cheaper)."""
        return not (self.ratio_ci_low <= 1.0 <= self.ratio_ci_high)


def paired_comparison(df: pd.DataFrame, a: Selector, b: Selector, *, on: Sequence[str],
                      response: str, confidence: float = 0.95,
                      labels: tuple[str, str] | None = None) -> PairedComparison:
    """Compare ``a`` against ``b`` over conditions matched on the columns ``on``, by the
    ratio of :data:`PAIRED_METHOD`.

    Parameters
    ----------
    df:
        Observations, e.g. the points table (``response`` is then a per-point mean) or the
        windows table.
    a, b:
        The two algorithms: an op name, or a mapping of columns to values
        (``{"op": "aes-ecb-encrypt", "key_bits": 128}``).
    on:
        Columns that define a condition (board, payload size, ...). Several rows of one
        algorithm in one condition are averaged first.
    response:
        Column compared; must be positive (time, energy).
    confidence:
        Level of the interval.
    labels:
        Names of ``a`` and ``b`` in the result (by default made from the selectors).

    Returns
    -------
    PairedComparison

    Raises
    ------
    ValueError
        Fewer than two matched conditions, or a non-positive response.
    """
    import pandas as pd

    on = list(on)
    # only the columns compared on, the response and the selectors' (not every row's copy)
    df = df[[c for c in dict.fromkeys([*on, response, *selector_columns(a), *selector_columns(b)])
             if c in df.columns]]
    means = [select(df, s).groupby(on, dropna=False)[response].mean() for s in (a, b)]
    pairs = pd.concat(means, axis=1, keys=["a", "b"], join="inner").dropna()
    la, lb = labels or (_label(a), _label(b))
    if len(pairs) < 2:
        raise ValueError(f"{la} and {lb} were measured under {len(pairs)} common "
                         f"condition(s) (same {', '.join(on)}); a paired comparison needs "
                         "at least 2")
    ya = pairs["a"].to_numpy(dtype=np.float64)
    yb = pairs["b"].to_numpy(dtype=np.float64)
    if (ya <= 0).any() or (yb <= 0).any():
        raise ValueError(f"{response} must be positive to compare {la} and {lb} by ratio")
    logs = np.log(ya / yb)
    log_ratio = describe(logs, confidence)
    ratio = float(np.exp(log_ratio.mean))
    ratio_lo, ratio_hi = float(np.exp(log_ratio.ci_low)), float(np.exp(log_ratio.ci_high))
    if ratio >= 1.0:  # b is the lower: replacing a by b saves 1 - b/a = 1 - 1/ratio
        lower = lb
        gain, g_lo, g_hi = (100.0 * (1.0 - 1.0 / r) for r in (ratio, ratio_lo, ratio_hi))
    else:
        lower = la
        gain, g_lo, g_hi = (100.0 * (1.0 - r) for r in (ratio, ratio_hi, ratio_lo))
    se = log_ratio.std / np.sqrt(len(logs))  # the t test of the mean log ratio against 0
    p_value = (2.0 * t_tail(abs(log_ratio.mean) / se, len(logs) - 1) if se > 0
               else float(log_ratio.mean == 0.0))
    return PairedComparison(
        a=la, b=lb, response=response, n_pairs=len(pairs),
        mean_a=float(ya.mean()), mean_b=float(yb.mean()),
        ratio=ratio, ratio_ci_low=ratio_lo, ratio_ci_high=ratio_hi, p_value=p_value,
        lower=lower, gain_pct=gain, gain_ci_low=g_lo, gain_ci_high=g_hi)


#: How :func:`ratio_of_means` compares one run's point with another's, in the words the
#: report prints.
RATIO_METHOD = ("ratio of the means B / A of the windows' per-op values, with Fieller's "
                "interval for two independent means (Welch–Satterthwaite degrees of freedom); "
                "a difference is called only when that interval excludes 1")


@dataclass(frozen=True)
class RatioOfMeans:
    """The ratio ``mean(b) / mean(a)`` of two independent samples and its interval
    (:data:`RATIO_METHOD`). An interval that is not bounded (the mean of ``a`` is not
    distinguishable from 0) is ``(-inf, inf)``.
    """

    ratio: float
    ci_low: float
    ci_high: float
    n_a: int
    n_b: int

    @property
    def significant(self) -> bool:
        """True when the interval excludes 1: only then do ``a`` and ``b`` differ."""
        return not (self.ci_low <= 1.0 <= self.ci_high)


def ratio_of_means(a: npt.ArrayLike, b: npt.ArrayLike,
                   confidence: float = 0.95) -> RatioOfMeans:
    """``mean(b) / mean(a)`` with Fieller's interval (independent samples, unequal variances).

    The bounds are the roots of ``(mb - r ma)^2 = t^2 (vb + r^2 va)`` (``va``, ``vb``: the
    squared standard errors of the means), ``t`` the Student quantile at the
    Welch–Satterthwaite degrees of freedom of ``mb - r ma`` at the estimate ``r``.

    Parameters
    ----------
    a, b:
        Per-op values (time in s, energy in J) of the same point in two runs; at least two
        each, ``a``'s mean positive.
    confidence:
        Level of the interval.

    Raises
    ------
    ValueError
        Fewer than two values in a sample, or a mean of ``a`` that is not positive.
    """
    xa, xb = (np.asarray(x, dtype=np.float64) for x in (a, b))
    if len(xa) < 2 or len(xb) < 2:
        raise ValueError(f"a ratio of means needs two values or more in each sample "
                         f"({len(xa)} and {len(xb)})")
    ma, mb = float(xa.mean()), float(xb.mean())
    if ma <= 0:
        raise ValueError("the reference sample's mean must be positive to take a ratio")
    va, vb = xa.var(ddof=1) / len(xa), xb.var(ddof=1) / len(xb)
    r = mb / ma
    spread = (vb ** 2 / (len(xb) - 1) + r ** 4 * va ** 2 / (len(xa) - 1))
    dof = (vb + r * r * va) ** 2 / spread if spread > 0 else len(xa) + len(xb) - 2
    t = float(t_quantile(0.5 + confidence / 2, dof))
    quad = ma * ma - t * t * va  # > 0: the mean of a is distinguishable from 0
    if quad <= 0:
        return RatioOfMeans(r, -math.inf, math.inf, len(xa), len(xb))
    half = math.sqrt(max(ma * ma * mb * mb - quad * (mb * mb - t * t * vb), 0.0))
    return RatioOfMeans(r, float((ma * mb - half) / quad), float((ma * mb + half) / quad),
                        len(xa), len(xb))


#: The columns of a :func:`payload_regression` row that :func:`line_band` reads besides the
#: line: the variances of intercept and slope, their covariance and the residual degrees
#: of freedom.
BAND_COLUMNS: tuple[str, ...] = ("var_intercept", "var_slope", "cov_intercept_slope",
                                 "df_resid")


def line_band(fit: Mapping[str, Any], x: npt.ArrayLike, confidence: float = 0.95
              ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                         npt.NDArray[np.float64]]:
    """A fitted line ``intercept + slope * x`` of :func:`payload_regression` at ``x``, and
    its confidence band (of the mean response, at ``confidence``): ``(y, low, high)``, in
    the unit of the response; ``x`` in that of the regressor."""
    xs = np.asarray(x, dtype=np.float64)
    y = fit["intercept"] + fit["slope"] * xs
    var = fit["var_intercept"] + 2.0 * xs * fit["cov_intercept_slope"] + xs ** 2 * fit["var_slope"]
    half = t_quantile(0.5 + confidence / 2.0, fit["df_resid"]) * np.sqrt(np.maximum(var, 0.0))
    return y, y - half, y + half


def _ols_line(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64],
              confidence: float) -> dict[str, float | bool]:
    """The line ``y = intercept + slope * x`` by ordinary least squares: the columns of a
    :func:`payload_regression` row after ``n``.

    The same arithmetic, step for step, as ``statsmodels.api.OLS(y, add_constant(x)).fit()``
    (its default ``pinv`` method: the pseudo-inverse from the SVD, singular values below
    1e-15 of the largest dropped; the covariance ``scale · pinv pinvᵀ``, ``scale`` the sum
    of squared residuals over ``n − rank``) and its ``conf_int``, ``pvalues`` and
    ``rsquared``, each from the same ``scipy.special`` function ``scipy.stats.t`` calls:
    the same bits, without importing statsmodels and scipy.stats (about 1.5 s of CPU, most
    of the report's tables; ``tests/results/test_stats_analysis.py`` holds the two equal).
    """
    from scipy import special  # the t distribution's functions alone

    design = np.column_stack([np.ones(x.shape[0]), x])
    u, s, vt = np.linalg.svd(design, False)
    kept = s > 1e-15 * np.maximum.reduce(s)
    inverse_s = np.where(kept, 1.0 / np.where(kept, s, 1.0), 0.0)
    pinv = np.dot(np.transpose(vt), np.multiply(inverse_s[:, np.newaxis], np.transpose(u)))
    params = np.dot(pinv, y)
    df_resid = float(x.shape[0]) - np.linalg.matrix_rank(np.diag(s))
    resid = y - np.dot(design, params)
    ssr = np.dot(resid, resid)
    cov = np.dot(pinv, np.transpose(pinv)) * (ssr / df_resid)
    bse = np.sqrt(np.diag(cov))
    p_values = special.stdtr(df_resid, -np.abs(params / bse)) * 2
    q = special.stdtrit(df_resid, 1 - (1.0 - confidence) / 2)
    low, high = params - q * bse, params + q * bse
    row: dict[str, float | bool] = {}
    for i, name in enumerate(("intercept", "slope")):
        row[name] = float(params[i])
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = float(low[i]), float(high[i])
        row[f"{name}_p"] = float(p_values[i])
        row[f"{name}_significant"] = not (low[i] <= 0.0 <= high[i])
    centered = y - y.mean()
    row["r2"] = float(1 - ssr / np.dot(centered, centered))
    row["var_intercept"], row["var_slope"] = float(cov[0, 0]), float(cov[1, 1])
    row["cov_intercept_slope"], row["df_resid"] = float(cov[0, 1]), float(df_resid)
    return row


def payload_regression(df: pd.DataFrame, response: str, *, x: str = "payload_bytes",
                       by: Sequence[str] = CONFIG, confidence: float = 0.95) -> pd.DataFrame:
    """Least-squares line of ``response`` against ``x`` for each group (:func:`_ols_line`:
    statsmodels' OLS, without importing it).

    Parameters
    ----------
    df:
        Observations with the columns ``x``, ``response`` and ``by``.
    response:
        E.g. ``"time_per_op_s"`` or ``"net_energy_per_op_j"``.
    x:
        Regressor, bytes by default: the slope is then the cost per byte and the intercept
        the fixed cost of one op.
    by:
        Columns whose combinations get one line each (board, op and the rest of the
        configuration by default; columns absent from ``df`` are ignored).
    confidence:
        Level of the intervals.

    Returns
    -------
    DataFrame
        One row per group with at least 3 observations at 2 or more distinct ``x``: the
        ``by`` columns, ``n``, ``slope``, ``slope_ci_low``, ``slope_ci_high``, ``slope_p``,
        ``intercept`` (with the same), ``r2``, ``slope_significant`` /
        ``intercept_significant`` (False where the interval contains zero), and what the
        line's confidence band needs (:data:`BAND_COLUMNS`, :func:`line_band`).
    """
    import pandas as pd

    by = [c for c in by if c in df.columns]
    rows: list[dict[str, Any]] = []
    data = df.dropna(subset=[x, response])
    for keys, group in data.groupby(by, dropna=False, sort=True) if by else [((), data)]:
        xs = group[x].to_numpy(dtype=np.float64)
        if len(group) < 3 or np.unique(xs).size < 2:
            continue
        row = dict(zip(by, keys if isinstance(keys, tuple) else (keys,), strict=True))
        row["n"] = len(group)
        row.update(_ols_line(xs, group[response].to_numpy(dtype=np.float64), confidence))
        rows.append(row)
    columns = [*by, "n", "slope", "slope_ci_low", "slope_ci_high", "slope_p",
               "slope_significant", "intercept", "intercept_ci_low", "intercept_ci_high",
               "intercept_p", "intercept_significant", "r2", *BAND_COLUMNS]
    return pd.DataFrame(rows, columns=columns)


def allocation_of_variation(df: pd.DataFrame, factors: Sequence[str], response: str,
                            log: bool = False, confidence: float = 0.95) -> pd.DataFrame:
    """Effects and allocation of variation of a 2^k factorial design, with replication.

    The sign-table method of Jain, *The Art of Computer Systems Performance Analysis*,
    ch. 17–18: each factor's two levels are coded -1 (the lower, in sort order) and +1;
    the effect of a term is ``q = mean(sign * cell mean)`` over the 2^k cells; its sum of
    squares ``2^k r q^2``; the fraction of variation ``SS / SST``. With r > 1 replications
    per cell, the residual within cells is the ``error`` term and every effect gets a t
    interval with 2^k (r - 1) degrees of freedom.

    Parameters
    ----------
    df:
        Observations: the factor columns and the response.
    factors:
        The k factor columns; each must take exactly two values.
    response:
        Column analysed.
    log:
        Analyse ``log10(response)`` (multiplicative model, Jain 18.7); the response must be
        positive. Effects are then in decades.
    confidence:
        Level of the effect intervals.

    Returns
    -------
    DataFrame
        One row per term: ``term`` ("A", "B", "A:B", ... in Yates order, then ``error``),
        ``effect``, ``ci_low``, ``ci_high``, ``sum_of_squares``, ``fraction`` (0..1,
        summing to 1). ``attrs`` holds ``mean_effect`` (q0), ``levels`` (factor -> (low,
        high)) and ``replications``.

    Raises
    ------
    ValueError
        A factor without exactly two levels, an empty cell, unequal replication, or a
        non-positive response with ``log``.
    """
    import pandas as pd

    factors = list(factors)
    if not factors:
        raise ValueError("allocation_of_variation needs at least one factor")
    data = df[[*factors, response]].dropna(subset=[response])
    levels: dict[str, tuple[Any, Any]] = {}
    for f in factors:
        values = sorted(data[f].dropna().unique().tolist())
        if len(values) != 2:
            raise ValueError(f"factor {f!r} has levels {values}; a 2^k design needs exactly 2")
        levels[f] = (values[0], values[1])
    y = data[response].to_numpy(dtype=np.float64)
    if log:
        if (y <= 0).any():
            raise ValueError(f"{response} must be positive for the log model")
        y = np.log10(y)
    codes = pd.DataFrame({f: np.where(data[f] == levels[f][1], 1, -1) for f in factors})
    codes["y"] = y
    cells = codes.groupby(factors)["y"].agg(["mean", "count", "var"])
    k = len(factors)
    if len(cells) != 2 ** k:
        raise ValueError(f"the design has {len(cells)} of its {2 ** k} cells; "
                         f"every combination of {factors} needs observations")
    reps = cells["count"].unique()
    if reps.size != 1:
        raise ValueError(f"replications per cell differ ({sorted(reps.tolist())}); "
                         "balance the design or average each cell first")
    r = int(reps[0])
    signs = cells.index.to_frame(index=False).to_numpy(dtype=np.float64)  # 2^k x k
    cell_means = cells["mean"].to_numpy()
    n_cells = 2 ** k
    terms: list[tuple[str, float]] = []
    for order in range(1, k + 1):
        for combo in itertools.combinations(range(k), order):
            column = np.prod(signs[:, combo], axis=1)
            terms.append((":".join(factors[i] for i in combo),
                          float(column @ cell_means / n_cells)))
    sse = float(((cells["var"].fillna(0.0)) * (r - 1)).sum())
    sst = float(((y - y.mean()) ** 2).sum())
    dof_e = n_cells * (r - 1)
    if dof_e > 0:
        s_q = np.sqrt(sse / dof_e) / np.sqrt(n_cells * r)
        half = float(t_quantile(0.5 + confidence / 2.0, dof_e) * s_q)
    else:
        half = np.nan
    rows = [{"term": name, "effect": q, "ci_low": q - half, "ci_high": q + half,
             "sum_of_squares": n_cells * r * q * q} for name, q in terms]
    if r > 1:
        rows.append({"term": "error", "effect": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                     "sum_of_squares": sse})
    out = pd.DataFrame(rows)
    out["fraction"] = out["sum_of_squares"] / sst if sst > 0 else np.nan
    out.attrs.update(mean_effect=float(cell_means.mean()), levels=levels, replications=r)
    return out


def is_two_level_design(df: pd.DataFrame, factors: Sequence[str]) -> bool:
    """True when ``factors`` take exactly two values each and every combination occurs."""
    if not factors or any(df[f].nunique(dropna=False) != 2 for f in factors):
        return False
    return len(df.groupby(list(factors), dropna=False)) == 2 ** len(factors)


def pareto_front(x: npt.ArrayLike, y: npt.ArrayLike) -> npt.NDArray[np.intp]:
    """The indices of the non-dominated points of two costs to minimise (time and energy
    per op, each in its own unit: nothing mixes them), in order of ``x``: no other point
    is as low on both and lower on one. Points with a NaN cost are left out."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(xs) & np.isfinite(ys))
    xf, yf = xs[finite, None], ys[finite, None]
    dominated = ((xf.T <= xf) & (yf.T <= yf) & ((xf.T < xf) | (yf.T < yf))).any(axis=1)
    front = finite[~dominated]
    return front[np.lexsort((ys[front], xs[front]))]


def separated_best(x_ci: tuple[npt.ArrayLike, npt.ArrayLike],
                   y_ci: tuple[npt.ArrayLike, npt.ArrayLike]) -> int | None:
    """The point significantly best on two costs to minimise, by separated intervals: the
    one whose interval of ``x`` lies wholly below every other point's, and its interval of
    ``y`` too (each ``(low, high)`` ends, e.g. 95 % CIs of the mean); None when no point is
    (intervals overlap, a NaN end, fewer than two points)."""
    (xl, xh), (yl, yh) = ((np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))
                          for lo, hi in (x_ci, y_ci))
    if xl.size < 2:
        return None
    for i in range(xl.size):
        others = np.arange(xl.size) != i
        if (xh[i] < xl[others]).all() and (yh[i] < yl[others]).all():
            return i
    return None

