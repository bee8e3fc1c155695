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
from matplotlib import colormaps, rc_context
from matplotlib.colors import hsv_to_rgb, to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from energyrig.opfamilies import OP_FAMILIES
from energyrig.results.report.page import Images
from energyrig.results.report.tables import (
    METRICS,
    Drawn,
    ReportTables,
    config_label,
    op_verb,
    plain,
)
from energyrig.results.stats import CONFIG, select
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
        Annotations: ``panel``, ``text``, ``anchor`` (the data point the ring and the
        arrow mark, SI units) and ``text_at`` (where the text stands, axes fraction).
    """

    figure: Figure
    bars: str = ""
    points: list[dict[str, Any]] = field(default_factory=list)
    marks: list[dict[str, Any]] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        """The JSON written beside the PNG (NaN as null)."""
        def clean(v: Any) -> Any:
            if isinstance(v, float):
                return v if math.isfinite(v) else None
            if isinstance(v, (list, tuple)):
                return [clean(x) for x in v]
            return v
        return {"error_bars": self.bars,
                "points": [{k: clean(v) for k, v in p.items()} for p in self.points],
                "marks": [{k: clean(v) for k, v in m.items()} for m in self.marks]}


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
    algorithm, marker: board and clock). The point nearest the origin, each axis scaled by
    its largest value, is ringed.

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
            best = int(np.argmin(np.hypot(x / x.max(), y / y.max())))
            drawing.marks.append({"panel": title, "text": "best",
                                  "label": f"{d['algorithm'].iloc[best]} · "
                                           f"{d['where'].iloc[best]}",
                                  **_mark_best(ax, x, y, best)})
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
    if drawing.marks:
        handles.append(Line2D([], [], color="crimson", marker="o", fillstyle="none",
                              markersize=12, linestyle="",
                              label="best trade-off (nearest the origin)"))
    fig.suptitle(f"{family}: net energy against time per op (bars: 95 % CI of the mean)",
                 fontsize=10)
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               fontsize=8, frameon=False)
    return drawing


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
    many KiB) with the fitted lines, one column per board; the 95 % CI of each point and,
    where stated, its expanded uncertainty as error bars.

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
    fig = Figure(figsize=(5.0 * len(boards), 6.4), layout="tight")
    axes = fig.subplots(2, len(boards), squeeze=False)
    drawing = Drawing(fig, f"error bars: {CI_BARS}; {U_BARS}")
    colours = colours or series_colours(
        list(dict.fromkeys(config_label(r, with_board=False) for _, r in fam.iterrows())))
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
                ax.scatter(x, y, s=12, label=label, color=colour, zorder=3)
                ci = _ends(g, col)
                _bars(ax, x, y, colour, y_ci=ci, y_u=u)
                drawing.points += [{"panel": f"{board}: {name} per op", "label": label,
                                    "colour": colour,
                                    "x": x[k], "y": y[k], "y_ci": [ci[0][k], ci[1][k]],
                                    "y_u": [y[k] - u[k], y[k] + u[k]]} for k in range(len(g))]
                f = select(fit, {c: plain(k) for c, k in zip(CONFIG, keys, strict=True)})
                if len(f):
                    xs = np.geomspace(max(x.min(), 1.0), x.max(), 50)
                    ax.plot(xs, f["intercept"].iloc[0] + f["slope"].iloc[0] * xs,
                            color=colour, linewidth=1)
            ax.set_title(f"{board}: {name} per op", fontsize=9)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _bytes_label(v)))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("payload (log scale)", fontsize=8)
            ax.set_ylabel(f"{name} per op", fontsize=9)
            _si_axis(ax, "y", unit)
            ax.tick_params(labelsize=8)
            ax.legend(fontsize=8)
    fig.suptitle(f"{family}: against payload size (bars: 95 % CI; light: U, k = 2)",
                 fontsize=10)
    return drawing


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


def figure_relative(rel: pd.DataFrame, family: str) -> Drawing | None:
    """Bars of each op's time and net energy relative to the family's reference.

    Parameters
    ----------
    rel:
        :func:`~energyrig.results.report.tables.relative_to_reference` (ratios, no unit).
    family:
        The op family drawn.
    """
    fam = rel[rel["family"] == family]
    if fam.empty:
        return None
    fig = Figure(figsize=(7.5, 0.45 * len(fam) + 1.2), layout="tight")
    ax = fig.subplots()
    pos = np.arange(len(fam))
    for k, (col, name) in enumerate(METRICS):
        values = fam[f"{col}_ratio"].to_numpy()
        bars = ax.barh(pos + (k - 0.5) * 0.38, values, height=0.36, label=name)
        ax.bar_label(bars, labels=[f"×{v:.3g}" for v in values], fontsize=7, padding=2)
    ax.set_yticks(pos, fam["label"], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ratios = fam[[f"{col}_ratio" for col, _ in METRICS]].to_numpy()
    _ratio_axis(ax.xaxis, min(ratios.min(), 1.0) / 1.6, max(ratios.max(), 1.0) * 2.2)
    ax.set_xlabel("relative to the reference (geometric mean over matched boards and sizes)")
    ax.set_title(f"{family}: relative to {', '.join(dict.fromkeys(fam['reference']))}",
                 fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    return Drawing(fig, "", [{"panel": family, "label": f"{label}: {name}", "x": float(v),
                              "y": float(p)}
                             for col, name in METRICS
                             for p, label, v in zip(pos, fam["label"], fam[f"{col}_ratio"],
                                                    strict=True)])


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
    # no date and no random ids in the SVG: the same figure drawn again is the same file
    with rc_context({"svg.hashsalt": name}):
        for fmt in FORMATS:
            drawing.figure.savefig(out_dir / f"{name}.{fmt}", dpi=DPI, bbox_inches="tight",
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
            drawing = section.figure(tables, family)
            if drawing is not None:
                name = "-".join(filter(None, (section.file_name, _file_safe(family))))
                images.setdefault(section.name, {})[family] = _save(drawing, out_dir, name)
    return images
