"""The report's figures: matplotlib (Agg, no display) drawings of the report's tables.

Each ``figure_*`` function takes tables of :mod:`energyrig.results.report.tables` and returns
a :class:`Drawing` — the :class:`~matplotlib.figure.Figure` and the data it shows, each point
with the ends of its error bars — or None when there is nothing to draw; :func:`draw_figures`
draws the figure of each section of the report
(:data:`energyrig.results.report.sections.SECTIONS`) and writes the PNG files the page shows,
each with its SVG twin, its data as JSON and its points' numbers as CSV beside it
(``energy-time-hash.png``, ``.svg``, ``.json``, ``.csv``), so what a figure shows can be
checked without reading pixels and drawn again from the report alone. A per-op figure draws
the 95 % confidence interval of each mean as error bars, and the expanded uncertainty
(k = 2) where it is known as a thinner, lighter bar.
This and :mod:`energyrig.results.trace` (a window's trace) are the only modules of the rig
that import matplotlib.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import colormaps, rc_context, rcParams
from matplotlib.colors import hsv_to_rgb, to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from energyrig.opfamilies import OP_FAMILIES
from energyrig.results.report.page import Images, fit_text, ratio_ci
from energyrig.results.report.tables import (
    METRICS,
    Drawn,
    ReportTables,
    Section,
    config_label,
    op_verb,
    plain,
)
from energyrig.results.stats import CONFIG, line_band, pareto_front, select, separated_best
from energyrig.units import format_si, superscript

# Families whose energy-time panels are split by what the op does (its name's last word):
# signing and verifying are different workloads; encrypting with AES or RC4 is one (each
# family's data row says, energyrig.opfamilies).
VERB_PANELS: frozenset[str] = frozenset(fam.name for fam in OP_FAMILIES if fam.verb_panels)
MAX_PANELS = 12
DPI = 110
# Decades a log ratio axis may span with ticks at 1, 2 and 5 of each decade; wider axes
# get one tick per decade (or per few decades), else the labels run into each other.
_RATIO_DECADES_125 = 3.0


@dataclass
class Drawing:
    """A figure and what it shows.

    Attributes
    ----------
    figure:
        The matplotlib figure.
    bars:
        What its error bars are (the caption's words), ``""`` for a figure without them.
    points:
        One entry per point drawn: ``panel``, ``label``, ``x``, ``y``, ``colour`` (of its
        series, ``#rrggbb``) and, per axis with error bars, ``{axis}_ci`` (the 95 %
        interval's ends) and ``{axis}_u`` (value ± U, k = 2), in SI units; NaN ends where
        there is no interval.
    marks:
        Annotations: ``panel``, ``text`` (``best``, or what the panel says instead),
        ``label`` (of the point marked best), ``anchor`` (the data point the ring and the
        arrow mark, SI units; None for a text alone) and ``text_at`` (where the text
        stands, axes fraction).
    fronts:
        Per panel of energy against time, its Pareto front: ``panel``, ``labels``, ``x``,
        ``y``, ``x_ci`` and ``y_ci`` of its points in order of time (SI units).
    fits:
        Per fitted line drawn: ``panel``, ``label``, the fit (``slope``, ``slope_ci``,
        ``intercept``, ``intercept_ci``, ``r2``), ``text`` (as printed beside the panel)
        and the curve drawn (``curve_x``, ``curve_y``, ``band_low``, ``band_high``).
    """

    figure: Figure
    bars: str = ""
    points: list[dict[str, Any]] = field(default_factory=list)
    marks: list[dict[str, Any]] = field(default_factory=list)
    fronts: list[dict[str, Any]] = field(default_factory=list)
    fits: list[dict[str, Any]] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        """The JSON written beside the PNG (NaN as null)."""
        def clean(v: Any) -> Any:
            if isinstance(v, float):
                return v if math.isfinite(v) else None
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v
        return {"error_bars": self.bars,
                **{name: [{k: clean(v) for k, v in item.items()} for item in items]
                   for name, items in (("points", self.points), ("marks", self.marks),
                                       ("pareto_fronts", self.fronts),
                                       ("fits", self.fits))}}


CI_BARS = ("95 % confidence interval of the mean (Student t over the windows; percentile "
           "bootstrap where the data are skewed)")
U_BARS = "thin light bars: expanded uncertainty (k = 2) of the point where stated"


#: The colour of what is not a series: the board/clock markers of the legend.
NEUTRAL = "#808080"
# tab20's strong colours (tab10's), then its light ones, without its two greys (indices
# 14, 15), which would read as the neutral markers.
_TAB20 = [colormaps["tab20"].colors[i] for i in (*range(0, 20, 2), *range(1, 20, 2))
          if i not in (14, 15)]


def palette(n: int) -> list[str]:
    """``n`` distinct colours (``#rrggbb``), none grey: tab20 less its greys, then hues
    spaced evenly around the circle (at a saturation and value tab20 does not use)."""
    colours = [to_hex(c) for c in _TAB20[:n]]
    extra = n - len(colours)
    if extra > 0:
        hues = (np.arange(extra) + 0.5) / extra
        colours += [to_hex(c) for c in hsv_to_rgb(np.column_stack(
            [hues, np.full(extra, 0.9), np.full(extra, 0.6)]))]
    return colours


def series_colours(series: Sequence[str]) -> dict[str, str]:
    """Each series (an op configuration's label) → its colour (``#rrggbb``): the colour of
    its place in ``series`` (:func:`palette`), so that one op has one colour in every figure
    of a report, and in every report of the same plan
    (:func:`~energyrig.results.report.tables.series_labels`)."""
    return dict(zip(series, palette(len(series)), strict=True))


def _bars(ax: Any, x: np.ndarray, y: np.ndarray, colour: Any, *,
          x_ci: tuple[np.ndarray, np.ndarray] | None = None,
          y_ci: tuple[np.ndarray, np.ndarray] | None = None,
          y_u: np.ndarray | None = None) -> None:
    """Error bars from the intervals' ends (``(low, high)`` arrays): the CI with caps, and
    ``y ± y_u`` thinner and lighter, offset so both stay visible."""
    def spread(v: np.ndarray, ends: tuple[np.ndarray, np.ndarray] | None) -> Any:
        return None if ends is None else np.abs(np.vstack([v - ends[0], ends[1] - v]))
    if y_u is not None:
        ax.errorbar(x, y, yerr=np.abs(y_u), fmt="none", ecolor=colour, alpha=0.35,
                    elinewidth=3.0, capsize=0)
    ax.errorbar(x, y, xerr=spread(x, x_ci), yerr=spread(y, y_ci), fmt="none", ecolor=colour,
                elinewidth=0.9, capsize=2.5)


def _ends(d: pd.DataFrame, col: str) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % interval's ends of a summarised column (NaN where there is none)."""
    return (d[f"{col}_ci_low"].to_numpy(dtype=float, na_value=np.nan),
            d[f"{col}_ci_high"].to_numpy(dtype=float, na_value=np.nan))


def _grid(n: int, width: float = 3.6, height: float = 2.9) -> tuple[Figure, np.ndarray]:
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="tight")
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes.flat


def _si_axis(ax: Any, axis: str, unit: str) -> None:
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(FuncFormatter(lambda v, _: format_si(v, unit)))
    target.set_major_locator(MaxNLocator(5 if axis == "x" else 7))


def _where(row: pd.Series) -> str:
    return config_label(row).split(" · ", 1)[1]


def figure_energy_time(summary: pd.DataFrame, family: str,
                       colours: Mapping[str, str] | None = None) -> Drawing | None:
    """Energy against time, one panel per payload size (and, for public-key ops, per kind of
    op: keygen, sign, ...; see :data:`VERB_PANELS`), one point per configuration (colour:
    algorithm, marker: board and clock) with its 95 % CIs. A point is ringed "best" only
    where it is significantly best (:data:`BEST`); elsewhere the panel says there is no
    significant difference, and a dashed line joins its Pareto front.

    Parameters
    ----------
    summary:
        :func:`~energyrig.results.report.tables.summarise_workloads` (s, J).
    family:
        The op family drawn.
    colours:
        Each algorithm's colour (:func:`series_colours`); by default, those of the
        algorithms drawn in their order.
    """
    fam = summary[summary["family"] == family].assign(
        verb=lambda d: d["op"].map(op_verb) if family in VERB_PANELS else "",
        algorithm=lambda d: [config_label(r, with_board=False) for _, r in d.iterrows()],
        where=lambda d: [_where(r) for _, r in d.iterrows()])
    panels = list(fam.groupby(["verb", "payload_bytes"], dropna=False, sort=True))[:MAX_PANELS]
    if not panels:
        return None
    algorithms = list(dict.fromkeys(fam["algorithm"]))
    colours = colours or series_colours(algorithms)
    markers = {w: "os^Dv<>p*h"[i % 10] for i, w in enumerate(dict.fromkeys(fam["where"]))}
    fig, axes = _grid(len(panels))
    drawing = Drawing(fig, f"error bars: {CI_BARS}")
    for ax, ((verb, payload), d) in zip(axes, panels, strict=False):
        title = verb or family
        title = title if pd.isna(payload) else f"{title} · {int(payload):,} B"
        x, y = d["time_per_op_s_mean"].to_numpy(), d["net_energy_per_op_j_mean"].to_numpy()
        x_ci, y_ci = _ends(d, "time_per_op_s"), _ends(d, "net_energy_per_op_j")
        for k, (xi, yi, a, w) in enumerate(zip(x, y, d["algorithm"], d["where"], strict=True)):
            ax.scatter([xi], [yi], s=28, color=colours[a], marker=markers[w], zorder=3)
            _bars(ax, x[k:k + 1], y[k:k + 1], colours[a],
                  x_ci=(x_ci[0][k:k + 1], x_ci[1][k:k + 1]),
                  y_ci=(y_ci[0][k:k + 1], y_ci[1][k:k + 1]))
            drawing.points.append({"panel": title, "label": f"{a} · {w}", "x": xi, "y": yi,
                                   "colour": colours[a], "x_ci": [x_ci[0][k], x_ci[1][k]],
                                   "y_ci": [y_ci[0][k], y_ci[1][k]]})
        ax.set_xlim(0, np.nanmax([x.max(), *x_ci[1]]) * 1.15)
        ax.set_ylim(0, np.nanmax([y.max(), *y_ci[1]]) * 1.15)
        if len(d) > 1:
            labels = [f"{a} · {w}" for a, w in zip(d["algorithm"], d["where"], strict=True)]
            _mark_claims(ax, drawing, title, labels, x, y, x_ci, y_ci)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time per op", fontsize=8)
        ax.set_ylabel("net energy per op", fontsize=8)
        _si_axis(ax, "x", "s")
        _si_axis(ax, "y", "J")
        ax.tick_params(labelsize=7)
    handles = [Line2D([], [], color=colours[a], marker="o", linestyle="", label=a)
               for a in algorithms]
    handles += [Line2D([], [], color=NEUTRAL, marker=m, linestyle="", label=w)
                for w, m in markers.items()]
    if any(m["text"] == "best" for m in drawing.marks):
        handles.append(Line2D([], [], color="crimson", marker="o", fillstyle="none",
                              markersize=12, linestyle="", label=BEST))
    if any(len(f["labels"]) > 1 for f in drawing.fronts):
        handles.append(Line2D([], [], color=NEUTRAL, linestyle="--", label=FRONT))
    fig.suptitle(f"{family}: net energy against time per op (bars: 95 % CI of the mean)",
                 fontsize=10)
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               fontsize=8, frameon=False)
    return drawing


#: What the ring of a panel of energy against time means (:func:`separated_best`).
BEST = "best: its 95 % CIs of time and energy each below every other point's"
#: What the dashed line means (:func:`pareto_front`).
FRONT = "Pareto front: no other point both faster and cheaper"
#: Written on a panel where no point is significantly best, and the front is one point.
NO_DIFFERENCE = "no significant difference"
#: ... and where the front has several points.
TRADE_OFF = "no single best: a trade-off along the Pareto front"


def _mark_claims(ax: Any, drawing: Drawing, panel: str, labels: Sequence[str],
                 x: np.ndarray, y: np.ndarray, x_ci: tuple[np.ndarray, np.ndarray],
                 y_ci: tuple[np.ndarray, np.ndarray]) -> None:
    """On a panel of energy against time (linear axes from 0), what the statistics
    support: the Pareto front (:func:`~energyrig.results.stats.pareto_front`) joined, and
    a ring on the point that is significantly best (:func:`~energyrig.results.stats
    .separated_best`) or else :data:`NO_DIFFERENCE` / :data:`TRADE_OFF` written on it.
    Records them in ``drawing`` (``fronts``: each point of the front with its intervals;
    ``marks``)."""
    front = pareto_front(x, y)
    drawing.fronts.append({"panel": panel, "labels": [labels[i] for i in front],
                           "x": [float(x[i]) for i in front], "y": [float(y[i]) for i in front],
                           "x_ci": [[float(x_ci[0][i]), float(x_ci[1][i])] for i in front],
                           "y_ci": [[float(y_ci[0][i]), float(y_ci[1][i])] for i in front]})
    best = separated_best(x_ci, y_ci)
    if best is not None:
        drawing.marks.append({"panel": panel, "text": "best", "label": labels[best],
                              **_mark_best(ax, x, y, best)})
        return
    if len(front) > 1:
        ax.plot(x[front], y[front], linestyle="--", color=NEUTRAL, linewidth=1.0, zorder=2)
    text = NO_DIFFERENCE if len(front) == 1 else TRADE_OFF
    ax.text(0.03, 0.97, text, transform=ax.transAxes, fontsize=7, va="top", ha="left",
            color="dimgray")
    drawing.marks.append({"panel": panel, "text": text, "label": "", "anchor": None,
                          "text_at": [0.03, 0.97]})


# Where the "best" text may stand relative to its point, axes fraction: the first of these
# farthest from every other point is taken, and an arrow joins the text to its point.
_TEXT_OFFSETS = np.array([(0.10, 0.12), (-0.10, 0.12), (0.10, -0.12), (-0.10, -0.12),
                          (0.16, 0.0), (-0.16, 0.0), (0.0, 0.16), (0.0, -0.16)])


def _mark_best(ax: Any, x: np.ndarray, y: np.ndarray, best: int) -> dict[str, Any]:
    """Ring point ``best`` of a panel with linear axes from 0 and put "best" beside it,
    away from the other points, with an arrow to it; the mark's ``anchor`` and
    ``text_at`` (axes fraction)."""
    (_, x_hi), (_, y_hi) = ax.get_xlim(), ax.get_ylim()
    at = np.column_stack([x / x_hi, y / y_hi])  # points in axes fraction
    others = np.delete(at, best, axis=0)
    texts = np.clip(at[best] + _TEXT_OFFSETS, 0.04, 0.9)
    room = np.hypot(*(texts[:, None, :] - others[None, :, :]).transpose(2, 0, 1)).min(axis=1)
    text_at = texts[int(np.argmax(room))]
    ax.scatter([x[best]], [y[best]], s=220, facecolors="none", edgecolors="crimson",
               linewidths=1.6, zorder=4)
    ax.annotate("best", xy=(x[best], y[best]), xycoords="data", xytext=tuple(text_at),
                textcoords="axes fraction", fontsize=8, color="crimson",
                ha="center", va="center",
                arrowprops={"arrowstyle": "->", "color": "crimson", "linewidth": 1.0,
                            "shrinkB": 7})
    return {"anchor": [float(x[best]), float(y[best])],
            "text_at": [float(v) for v in text_at]}


def figure_payload(points: pd.DataFrame, fits: dict[str, pd.DataFrame], family: str,
                   colours: Mapping[str, str] | None = None) -> Drawing | None:
    """Time and net energy per op against payload size (a log axis: sizes from 16 B to
    many KiB), one column per board; the 95 % CI of each point and, where stated, its
    expanded uncertainty as error bars; each fitted line drawn as the curve it is on the log
    axis, with its 95 % confidence band, and printed in the legend (slope and intercept
    with their CIs, R²: :func:`~energyrig.results.report.page.fit_text`).

    Parameters
    ----------
    points:
        The ok points with their ``family`` (s, J).
    fits:
        :attr:`~energyrig.results.report.tables.ReportTables.fits`.
    family:
        The op family drawn.
    colours:
        Each configuration's colour (:func:`series_colours`); by default, those of the
        configurations drawn in their order.
    """
    fam = points[(points["family"] == family) & points["payload_bytes"].notna()]
    boards = list(dict.fromkeys(fam["board"]))
    if not boards:
        return None
    series = list(dict.fromkeys(config_label(r, with_board=False) for _, r in fam.iterrows()))
    # each panel as tall as its legend beside it: two lines a series (name, fit)
    fig = Figure(figsize=(9.0 * len(boards), 2 * max(3.2, 0.36 * len(series) + 0.6)),
                 layout="constrained")
    axes = fig.subplots(2, len(boards), squeeze=False)
    drawing = Drawing(fig, f"error bars: {CI_BARS}; {U_BARS}")
    colours = colours or series_colours(series)
    for j, board in enumerate(boards):
        d = fam[fam["board"] == board]
        for i, (col, name) in enumerate(METRICS):
            ax = axes[i, j]
            fit = fits[col]
            unit = "s" if col.endswith("_s") else "J"
            u_col = "time_per_op_u_s" if unit == "s" else "net_energy_per_op_u_j"
            for keys, g in d.groupby(list(CONFIG), dropna=False, sort=True):
                label = config_label(g.iloc[0], with_board=False)
                x = g["payload_bytes"].to_numpy(dtype=float)
                y = g[f"{col}_mean"].to_numpy(dtype=float)
                u = (g[u_col].to_numpy(dtype=float, na_value=np.nan) if u_col in g
                     else np.full(len(g), np.nan))
                colour = colours[label]
                ci = _ends(g, col)
                _bars(ax, x, y, colour, y_ci=ci, y_u=u)
                drawing.points += [{"panel": f"{board}: {name} per op", "label": label,
                                    "colour": colour,
                                    "x": x[k], "y": y[k], "y_ci": [ci[0][k], ci[1][k]],
                                    "y_u": [y[k] - u[k], y[k] + u[k]]} for k in range(len(g))]
                f = select(fit, {c: plain(k) for c, k in zip(CONFIG, keys, strict=True)})
                if len(f):
                    drawing.fits.append(_draw_fit(ax, f.iloc[0], x, colour, unit,
                                                  panel=f"{board}: {name} per op",
                                                  label=label))
                    label = f"{label}\n{drawing.fits[-1]['text']}"
                ax.scatter(x, y, s=12, label=label, color=colour, zorder=3)
            ax.set_title(f"{board}: {name} per op", fontsize=9)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _bytes_label(v)))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("payload (log scale)", fontsize=8)
            ax.set_ylabel(f"{name} per op", fontsize=9)
            _si_axis(ax, "y", unit)
            ax.tick_params(labelsize=8)
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                      frameon=False)
    fig.suptitle(f"{family}: against payload size (bars: 95 % CI; light: U, k = 2; "
                 "lines: least-squares fits, shaded: their 95 % confidence band)",
                 fontsize=10)
    return drawing


#: Points a fitted line is drawn through, evenly spaced on the log payload axis: dense
#: enough that the straight line of the model shows as the curve it is on that axis.
FIT_SAMPLES = 200


def _draw_fit(ax: Any, fit: pd.Series, x: np.ndarray, colour: str, unit: str, *,
              panel: str, label: str) -> dict[str, Any]:
    """Draw the line ``fit`` (a :func:`~energyrig.results.stats.payload_regression` row)
    over the payload sizes ``x`` measured, sampled densely on the log axis, with its 95 %
    confidence band (:func:`~energyrig.results.stats.line_band`); what was drawn
    (:attr:`Drawing.fits`)."""
    xs = np.geomspace(x.min(), x.max(), FIT_SAMPLES)
    y, low, high = line_band(fit, xs)
    ax.plot(xs, y, color=colour, linewidth=1)
    ax.fill_between(xs, low, high, color=colour, alpha=0.15, linewidth=0)
    return {"panel": panel, "label": label, "text": fit_text(fit, unit),
            **{name: float(fit[name]) for name in ("slope", "intercept", "r2")},
            **{f"{name}_ci": [float(fit[f"{name}_ci_low"]), float(fit[f"{name}_ci_high"])]
               for name in ("slope", "intercept")},
            "curve_x": xs.tolist(), "curve_y": y.tolist(), "band_low": low.tolist(),
            "band_high": high.tolist()}


def _bytes_label(v: float) -> str:
    """``64 B``, ``1 KiB``, ``16 KiB``: a payload axis's ticks (powers of two)."""
    return f"{v:g} B" if v < 1024 else f"{v / 1024:g} KiB"


def _ratio_label(v: float) -> str:
    """``×0.5``, ``×20``; a power of ten outside 0.001..1000 as ``×10⁴``."""
    if 1e-3 <= v < 1e4:
        return f"×{v:g}"
    return f"×10{superscript(round(math.log10(v)))}"


def _ratio_axis(axis: Any, low: float, high: float) -> None:
    """Limits and ticks of a log axis of ratios from ``low`` to ``high``."""
    axis.axes.set_xlim(low, high)
    wide = math.log10(high / low) > _RATIO_DECADES_125
    axis.set_major_locator(LogLocator(subs=(1.0,) if wide else (1.0, 2.0, 5.0), numticks=8))
    axis.set_major_formatter(FuncFormatter(lambda v, _: _ratio_label(v)))
    axis.set_minor_formatter(NullFormatter())


#: What the bars relative to the reference show, and their error bars.
RATIO_BARS = ("error bars: 95 % CI of the ratio, from the paired comparison of the same row "
              "of the paired-comparisons table (paired log-ratio over matched conditions); "
              "pale hatched bars: no significant difference (the CI contains ×1)")


def figure_relative(rel: pd.DataFrame, family: str) -> Drawing | None:
    """Bars of each op's time and net energy relative to the family's reference, each with
    the 95 % CI of its paired comparison; a bar whose CI contains 1 pale and marked
    ``n.s.``. The reference itself is the line at ×1, never a bar of its own.

    Parameters
    ----------
    rel:
        :func:`~energyrig.results.report.tables.reference_comparisons` (ratios, no unit):
        one row per op and metric.
    family:
        The op family drawn.
    """
    fam = rel[rel["family"] == family]
    if fam.empty:
        return None
    labels = list(dict.fromkeys(fam["a"]))
    fig = Figure(figsize=(7.5, 0.55 * len(labels) + 1.4), layout="tight")
    ax = fig.subplots()
    pos = np.arange(len(labels))
    drawing = Drawing(fig, RATIO_BARS)
    colours = palette(len(METRICS))
    for k, (_, name) in enumerate(METRICS):
        m = fam[fam["metric"] == name].set_index("a").reindex(labels)
        values = m["ratio"].to_numpy(dtype=float)
        low, high = (m[c].to_numpy(dtype=float) for c in ("ratio_ci_low", "ratio_ci_high"))
        sig = m["significant"].fillna(False).to_numpy(dtype=bool)
        y = pos + (k - 0.5) * 0.38
        bars = ax.barh(y, values, height=0.36, label=name, color=colours[k])
        for bar, significant in zip(bars, sig, strict=True):
            if not significant:
                bar.set_alpha(0.35)
                bar.set_hatch("//")
        ax.errorbar(values, y, xerr=np.abs(np.vstack([values - low, high - values])),
                    fmt="none", ecolor="black", elinewidth=0.9, capsize=2.5)
        texts = [f"×{ratio_ci(r)}" + ("" if r["significant"] else " n.s.")
                 for _, r in m.iterrows()]
        for yi, hi, text in zip(y, np.fmax(high, values), texts, strict=True):
            ax.annotate(text, (hi, yi), xytext=(3, 0), textcoords="offset points",
                        fontsize=7, va="center")
        drawing.points += [{"panel": family, "label": f"{a}: {name}", "a": a,
                            "b": r["b"], "metric": name, "x": float(r["ratio"]),
                            "x_ci": [float(r["ratio_ci_low"]), float(r["ratio_ci_high"])],
                            "significant": bool(r["significant"]), "y": float(yi)}
                           for (a, r), yi in zip(m.iterrows(), y, strict=True)]
    ax.set_yticks(pos, labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ends = fam[["ratio", "ratio_ci_low", "ratio_ci_high"]].to_numpy(dtype=float)
    _ratio_axis(ax.xaxis, min(np.nanmin(ends), 1.0) / 1.6, max(np.nanmax(ends), 1.0) * 4.0)
    ax.set_xlabel("relative to the reference: paired ratio, 95 % CI (as the paired "
                  "comparisons table)", fontsize=8)
    ax.set_title(f"{family}: relative to {', '.join(dict.fromkeys(fam['b']))} (= ×1)",
                 fontsize=9)
    handles = [Patch(color=c, label=name) for c, (_, name) in zip(colours, METRICS,
                                                                   strict=True)]
    handles.append(Patch(facecolor="white", edgecolor=NEUTRAL, hatch="//",
                         label="n.s.: the CI contains ×1"))
    ax.legend(handles=handles, fontsize=8, loc="lower right")
    return drawing


def figure_allocation(alloc: pd.DataFrame) -> Drawing:
    """Stacked bars of the fraction of variation per term, per response and scale.

    Parameters
    ----------
    alloc:
        :attr:`~energyrig.results.report.tables.Factorial.allocation`.
    """
    groups = list(dict.fromkeys(zip(alloc["response"], alloc["scale"], strict=True)))
    terms = list(dict.fromkeys(alloc["term"]))
    fig = Figure(figsize=(7.5, 0.6 * len(groups) + 1.6), layout="tight")
    ax = fig.subplots()
    left = np.zeros(len(groups))
    colours = palette(len(terms))
    for i, term in enumerate(terms):
        widths = np.array([alloc[(alloc["response"] == r) & (alloc["scale"] == s)
                                 & (alloc["term"] == term)]["fraction"].sum() * 100
                           for r, s in groups])
        ax.barh(range(len(groups)), widths, left=left, color=colours[i], label=term)
        left += widths
    ax.set_yticks(range(len(groups)), [f"{r} ({s})" for r, s in groups], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of variation explained")
    ax.legend(fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return Drawing(fig, "", [{"panel": "allocation", "label": f"{r.response} ({r.scale}): "
                              f"{r.term}", "x": float(r.fraction), "y": 0.0}
                             for r in alloc.itertuples()])


#: What each figure is written as besides its data: the PNG the page shows, and the SVG
#: (vector, for a paper) drawn from the same figure.
FORMATS: tuple[str, ...] = ("png", "svg")


def drawn_points(data: Mapping[str, Any]) -> pd.DataFrame:
    """The points of a drawing's data (:meth:`Drawing.data`) as a table, one row each: an
    interval's ends (``x_ci``, ``y_ci``, ``y_u``) as two columns each (``y_ci_low``,
    ``y_ci_high``, ...), in SI units; empty where a figure drew no point."""
    rows = [{**{k: v for k, v in p.items() if not isinstance(v, list)},
             **{f"{k}_{end}": v[i] for k, v in p.items() if isinstance(v, list)
                for i, end in enumerate(("low", "high"))}}
            for p in data["points"]]
    return pd.DataFrame(rows)


def _save(drawing: Drawn, out_dir: Path, name: str) -> str:
    """Write ``out_dir/<name>.png`` and ``<name>.svg`` (:data:`FORMATS`), its data as
    ``<name>.json`` (:meth:`Drawing.data`) and the numbers of its points as ``<name>.csv``
    (:func:`drawn_points`), so that a figure can be checked and drawn again from the files
    beside it alone; the PNG's name."""
    # Laid out and its tight box found once, at the PNG's resolution, then drawn once per
    # format as it stands (bbox_inches="tight" would lay out and draw it twice per format).
    fig = drawing.figure
    fig.set_dpi(DPI)
    fig.draw_without_rendering()
    box = fig.get_tightbbox().padded(rcParams["savefig.pad_inches"])
    fig.set_layout_engine(None)
    # no date and no random ids in the SVG: the same figure drawn again is the same file
    with rc_context({"svg.hashsalt": name}):
        for fmt in FORMATS:
            fig.savefig(out_dir / f"{name}.{fmt}", dpi=DPI, bbox_inches=box,
                        metadata={"Date": None} if fmt == "svg" else None)
    data = drawing.data()
    (out_dir / f"{name}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    drawn_points(data).to_csv(out_dir / f"{name}.csv", index=False)
    return f"{name}.png"


def _file_safe(name: str) -> str:
    """``name`` as a file name: anything but letters, digits, ``-``, ``_`` and ``.`` (a
    ``/`` in a family read from an old run's tables, say) becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def draw_figures(tables: ReportTables, out_dir: Path) -> Images:
    """Draw the figure of every section of ``tables`` (per op family for a per-family
    section, once for the others) and write them as PNG files into ``out_dir``
    (``<file>-<family>.png`` or ``<file>.png``, :attr:`~energyrig.results.report.tables
    .Section.file_name`, each with its data as JSON, :func:`_save`).

    Returns
    -------
    Images
        The file names (relative to ``out_dir``) of the figures drawn, by section and family.
    """
    images = Images()
    for section in tables.sections:
        if section.figure is None or (section.measured and not tables.measured):
            continue
        for family in tables.families if section.per_family else [""]:
            image = draw_figure(tables, section, family, out_dir)
            if image is not None:
                images.setdefault(section.name, {})[family] = image
    return images


def draw_figure(tables: ReportTables, section: Section, family: str, out_dir: Path
                ) -> str | None:
    """Draw ``section``'s figure of ``family`` (``""``: of the whole run) and write it into
    ``out_dir`` (:func:`_save`); the PNG's name, or None where the section draws nothing."""
    drawing = section.figure(tables, family) if section.figure is not None else None
    if drawing is None:
        return None
    return _save(drawing, out_dir, "-".join(filter(None, (section.file_name,
                                                          _file_safe(family)))))
