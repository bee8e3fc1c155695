"""The report of a run: ``report.html`` with PNG figures beside it.

:func:`write_report` loads a run (finished or still being written), computes the tables and
statistics of :mod:`energyrig.results.stats` and renders them with matplotlib (Agg). Units are
converted here and only here: seconds to ms/µs, joules to µJ/mJ and nWh.
"""
from __future__ import annotations

import html
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from energyrig.domain import describe_finite
from energyrig.errors import ConfigError
from energyrig.results.stats import (
    CONFIG,
    PairedComparison,
    allocation_of_variation,
    geometric_mean,
    is_two_level_design,
    paired_comparison,
    payload_regression,
    select,
)
from energyrig.results.store import Run, load

log = logging.getLogger(__name__)

WORKLOAD: tuple[str, ...] = (*CONFIG, "payload_bytes")
FAMILY_ORDER: tuple[str, ...] = ("symmetric", "hash", "public-key", "composite")
# References of each family for the relative bars and the automatic paired comparisons,
# in order of preference: predicates on a configuration's row. An op is compared with a
# reference that does the same (its name's last word: encrypt, sign, ...), else with one of
# the same algorithm (first word); among those, the first predicate that matches wins.
REFERENCES: dict[str, tuple[Callable[[pd.Series], bool], ...]] = {
    "symmetric": (lambda r: str(r["op"]).startswith("aes") and r["key_bits"] == 128,),
    "hash": (lambda r: str(r["op"]).replace("-", "") == "sha256",),
    "public-key": (lambda r: str(r["op"]).startswith("rsa") and r["key_bits"] == 2048,
                   lambda r: r["curve"] == "p256"),
}
# Inferred family where the store has none, by the op name's first word.
FAMILY_BY_PREFIX: dict[str, str] = {
    "aes": "symmetric", "rc4": "symmetric", "rc5": "symmetric", "rc6": "symmetric",
    "chacha20": "symmetric", "md5": "hash", "sha1": "hash", "sha256": "hash",
    "sha512": "hash", "sha3": "hash", "rsa": "public-key", "ecdsa": "public-key",
    "ecdh": "public-key", "dh": "public-key", "dsa": "public-key", "x25519": "public-key",
    "ed25519": "public-key", "join": "composite",
}
# Families whose energy-time panels are split by what the op does (its name's last word):
# signing and verifying are different workloads; encrypting with AES or RC4 is one.
VERB_PANELS: frozenset[str] = frozenset({"public-key"})
METRICS: tuple[tuple[str, str], ...] = (("time_per_op_s", "time"),
                                        ("net_energy_per_op_j", "net energy"))
SI_PREFIXES: tuple[tuple[float, str], ...] = ((1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"),
                                              (1e-9, "n"), (1e-12, "p"))
J_PER_NWH = 3600.0 * 1e-9
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
MAX_PANELS = 12


def format_si(value: float, unit: str, digits: int = 3) -> str:
    """``0.0000123, "J"`` → ``"12.3 µJ"``; NaN → ``"–"``."""
    if value is None or not np.isfinite(value):
        return "–"
    if value == 0:
        return f"0 {unit}"
    scale, prefix = next(((sc, p) for sc, p in SI_PREFIXES if abs(value) >= sc * 0.9995),
                         SI_PREFIXES[-1])
    return f"{value / scale:.{digits}g} {prefix}{unit}"


def format_nwh(energy_j: float) -> str:
    """Energy in nWh with three significant digits (the unit of the Arduino/ESP32 study)."""
    if energy_j is None or not np.isfinite(energy_j):
        return "–"
    nwh = energy_j / J_PER_NWH
    if abs(nwh) >= 1000:
        return f"{nwh:,.0f} nWh"
    if nwh == 0 or abs(nwh) >= 1e-3:
        return f"{nwh:.3g} nWh"
    exponent = math.floor(math.log10(abs(nwh)))
    digits = str(exponent).translate(SUPERSCRIPT)
    return f"{nwh / 10.0 ** exponent:.3g}·10{digits} nWh"


def config_label(row: pd.Series | dict[str, Any], with_board: bool = True) -> str:
    """``aes-ecb-encrypt 128``, ``ecdsa-sign p256 · esp32 hardware 240 MHz`` ..."""
    parts = [str(row["op"])]
    if pd.notna(row.get("key_bits")):
        parts.append(str(int(row["key_bits"])))
    if pd.notna(row.get("curve")):
        parts.append(str(row["curve"]))
    if with_board:
        where = [str(row["board"])]
        if row.get("backend") not in (None, "software") and pd.notna(row.get("backend")):
            where.append(str(row["backend"]))
        if pd.notna(row.get("cpu_hz")):
            where.append(f"{row['cpu_hz'] / 1e6:g} MHz")
        parts.append("· " + " ".join(where))
    return " ".join(parts)


def _family(df: pd.DataFrame) -> pd.Series:
    inferred = df["op"].astype(str).str.split("-").str[0].map(FAMILY_BY_PREFIX)
    return inferred.where(df["family"].isna(), df["family"]).fillna("other")


def _family_order(families: Iterable[str]) -> list[str]:
    present = set(families)
    return [f for f in FAMILY_ORDER if f in present] + sorted(present - set(FAMILY_ORDER))


def summarise_workloads(windows: pd.DataFrame) -> pd.DataFrame:
    """One row per workload (configuration and payload size) over all its windows.

    Columns: the workload's factors, ``family``, ``n_windows``, ``n_points``, and per
    metric ``_mean`` ``_ci_low`` ``_ci_high``, plus ``energy_per_op_j_mean``,
    ``mean_power_w_mean``, ``cycles_per_op_mean``.
    """
    rows = []
    for keys, group in windows.groupby(list(WORKLOAD), dropna=False, sort=True):
        row: dict[str, Any] = dict(zip(WORKLOAD, keys, strict=True))
        row["family"] = group["family"].iloc[0]
        row["n_windows"] = len(group)
        row["n_points"] = group["point_key"].nunique()
        for col in ("time_per_op_s", "energy_per_op_j", "net_energy_per_op_j"):
            d = describe_finite(group[col].to_numpy(dtype=np.float64, na_value=np.nan))
            row.update({f"{col}_mean": d.mean if d else np.nan,
                        f"{col}_ci_low": d.ci_low if d else np.nan,
                        f"{col}_ci_high": d.ci_high if d else np.nan})
        for col in ("mean_power_w", "cycles_per_op", "true_net_energy_per_op_j"):
            values = group[col].dropna()
            row[f"{col}_mean"] = float(values.mean()) if len(values) else np.nan
        row["flags"] = ", ".join(sorted({f for fl in group["flags"] for f in fl.split(",") if f}))
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["family"] = _family(out)
        out["label"] = [config_label(r) for _, r in out.iterrows()]
    return out


def _references(family: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that are references of ``family``, with their ``priority`` (0 = preferred)."""
    predicates = REFERENCES.get(family, ())
    priority = [next((i for i, p in enumerate(predicates) if bool(p(r))), -1)
                for _, r in rows.iterrows()]
    out = rows.assign(priority=priority)
    return out[out["priority"] >= 0]


def _reference_row(row: pd.Series, candidates: pd.DataFrame) -> pd.Series | None:
    """The reference ``row`` is compared with (see :data:`REFERENCES`), or None.

    Tried in turn: a reference doing the same (same last word), one of the same algorithm
    (same first word), one whose name or the op's does not say what it does (rc4, sha256).
    """
    verb = _verb(row["op"])
    for same in (lambda op: _verb(op) == verb,
                 lambda op: str(op).split("-")[0] == str(row["op"]).split("-")[0],
                 lambda op: not verb or not _verb(op)):
        fitting = candidates[[bool(same(op)) for op in candidates["op"]]]
        if len(fitting):
            return fitting.sort_values("priority", kind="stable").iloc[0]
    return None


def relative_to_reference(summary: pd.DataFrame) -> pd.DataFrame:
    """Each op configuration against its family's reference, matched on board, clock and
    payload size; the ratio is the geometric mean over the matched workloads.

    Returns one row per (family, op, key_bits, curve, backend) with ``reference`` (label)
    and ``<metric>_ratio`` for time and net energy.
    """
    rows = []
    algo = ["op", "key_bits", "curve", "backend"]
    for family, fam in summary.groupby("family", sort=False):
        refs = _references(str(family), fam)
        ref_algos = refs.drop_duplicates(algo)
        for keys, group in fam.groupby(algo, dropna=False, sort=True):
            first = group.iloc[0]
            ref = _reference_row(first, ref_algos)
            if ref is None:
                continue
            ref_rows = select(refs, {c: _none(ref[c]) for c in algo})
            on = ["board", "cpu_hz", "payload_bytes"]
            merged = group.merge(ref_rows, on=on, suffixes=("", "_ref"))
            if merged.empty:  # ops without payload against a reference with one: by board
                merged = group.merge(ref_rows.drop(columns="payload_bytes"),
                                     on=["board", "cpu_hz"], suffixes=("", "_ref"))
            if merged.empty:
                continue
            row = {"family": family, **dict(zip(algo, keys, strict=True)),
                   "label": config_label(first, with_board=False),
                   "reference": config_label(ref, with_board=False)}
            for col, _ in METRICS:
                row[f"{col}_ratio"] = geometric_mean(merged[f"{col}_mean"]
                                                     / merged[f"{col}_mean_ref"])
            rows.append(row)
    return pd.DataFrame(rows)


def auto_comparisons(points: pd.DataFrame) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Pairs (configuration, family reference) to compare, from the points present."""
    ok = points.assign(family=_family(points))
    algo = ["op", "key_bits", "curve", "backend"]
    configs = ok.drop_duplicates(algo)
    pairs = []
    for family, fam in configs.groupby("family", sort=False):
        refs = _references(str(family), fam)
        for _, row in fam.iterrows():
            ref = _reference_row(row, refs)
            if ref is None or all(_none(row[c]) == _none(ref[c]) for c in algo):
                continue
            pairs.append(({c: _none(row[c]) for c in algo}, {c: _none(ref[c]) for c in algo}))
    return pairs


def _none(value: Any) -> Any:
    """A table cell as a plain Python value, None where missing."""
    if pd.isna(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


def comparisons(points: pd.DataFrame, pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]]
                ) -> tuple[pd.DataFrame, list[str]]:
    """Paired comparisons of each pair on time and net energy, matched on board, clock,
    payload size and repetition. Returns the table and notes on pairs that could not be
    compared."""
    rows, notes = [], []
    on = ["board", "cpu_hz", "payload_bytes", "rep"]
    for a, b in pairs:
        for col, name in METRICS:
            try:
                result: PairedComparison = paired_comparison(
                    points, a, b, on=on, response=f"{col}_mean",
                    labels=(config_label(a, with_board=False), config_label(b, with_board=False)))
            except ValueError as exc:
                notes.append(str(exc))
                break
            rows.append({"metric": name, **asdict(result), "significant": result.significant})
    return pd.DataFrame(rows), sorted(set(notes))


def design_factors(points: pd.DataFrame) -> list[str] | None:
    """The factors of a 2^k design, if the ok points form one (aliased factors merged)."""
    candidates = [c for c in WORKLOAD if points[c].nunique(dropna=False) == 2]
    factors: list[str] = []
    for c in candidates:
        aliased = any(len(points.groupby([f, c], dropna=False)) == 2 for f in factors)
        if not aliased:
            factors.append(c)
    varying = [c for c in WORKLOAD if points[c].nunique(dropna=False) > 1]
    if len(factors) < 2 or len(varying) != len(candidates):
        return None
    return factors if is_two_level_design(points, factors) else None


def factorial(points: pd.DataFrame, factors: list[str]
              ) -> tuple[pd.DataFrame, dict[str, tuple[Any, Any]]]:
    """Allocation of variation of time and net energy per op, raw and log scale, and the
    factors' (low, high) levels."""
    data = points
    counts = points.groupby(factors, dropna=False).size()
    if counts.nunique() != 1:  # unequal repetitions: analyse the cell means
        data = points.groupby(factors, dropna=False, as_index=False)[
            [f"{c}_mean" for c, _ in METRICS]].mean()
    tables = []
    for col, name in METRICS:
        for log_scale in (False, True):
            t = allocation_of_variation(data, factors, f"{col}_mean", log=log_scale)
            tables.append(t.assign(response=name, scale="log10" if log_scale else "raw"))
    return pd.concat(tables, ignore_index=True), tables[0].attrs["levels"]


# ---------------------------------------------------------------- figures


def _save(fig: Figure, out_dir: Path, name: str) -> str:
    fig.savefig(out_dir / name, dpi=110, bbox_inches="tight")
    return name


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


def _verb(op: str) -> str:
    """What an op does, from its name's last word: ``rsa-sign`` → ``sign``; ``""`` when the
    name does not say (``sha256``, ``sha3-256``)."""
    words = str(op).split("-")
    return words[-1] if len(words) > 1 and words[-1].isalpha() else ""


def _where(row: pd.Series) -> str:
    return config_label(row).split(" · ", 1)[1]


def figure_energy_time(summary: pd.DataFrame, family: str, out_dir: Path) -> str | None:
    """Energy against time, one panel per payload size (and, for public-key ops, per kind of
    op: keygen, sign, ...; see :data:`PANELS`), one point per configuration (colour:
    algorithm, marker: board and clock). The point nearest the origin, each axis scaled by
    its largest value, is ringed."""
    fam = summary[summary["family"] == family].assign(
        verb=lambda d: d["op"].map(_verb) if family in VERB_PANELS else "",
        algorithm=lambda d: [config_label(r, with_board=False) for _, r in d.iterrows()],
        where=lambda d: [_where(r) for _, r in d.iterrows()])
    panels = list(fam.groupby(["verb", "payload_bytes"], dropna=False, sort=True))[:MAX_PANELS]
    if not panels:
        return None
    algorithms = dict.fromkeys(fam["algorithm"])
    colours = {a: colormaps["tab10"](i % 10) for i, a in enumerate(algorithms)}
    markers = {w: "os^Dv<>p*h"[i % 10] for i, w in enumerate(dict.fromkeys(fam["where"]))}
    fig, axes = _grid(len(panels))
    for ax, ((verb, payload), d) in zip(axes, panels, strict=False):
        x, y = d["time_per_op_s_mean"].to_numpy(), d["net_energy_per_op_j_mean"].to_numpy()
        for xi, yi, a, w in zip(x, y, d["algorithm"], d["where"], strict=True):
            ax.scatter([xi], [yi], s=28, color=colours[a], marker=markers[w])
        best = int(np.argmin(np.hypot(x / x.max(), y / y.max())))
        ax.scatter([x[best]], [y[best]], s=220, facecolors="none", edgecolors="crimson",
                   linewidths=1.6)
        ax.annotate("best", (x[best], y[best]), xytext=(8, 8), textcoords="offset points",
                    fontsize=7, color="crimson")
        ax.set_xlim(0, x.max() * 1.15)
        ax.set_ylim(0, y.max() * 1.15)
        title = verb or family
        ax.set_title(title if pd.isna(payload) else f"{title} · {int(payload):,} B", fontsize=9)
        ax.set_xlabel("time per op", fontsize=8)
        ax.set_ylabel("net energy per op", fontsize=8)
        _si_axis(ax, "x", "s")
        _si_axis(ax, "y", "J")
        ax.tick_params(labelsize=7)
    handles = [Line2D([], [], color=c, marker="o", linestyle="", label=a)
               for a, c in colours.items()]
    handles += [Line2D([], [], color="grey", marker=m, linestyle="", label=w)
                for w, m in markers.items()]
    handles.append(Line2D([], [], color="crimson", marker="o", fillstyle="none",
                                           markersize=12, linestyle="",
                                           label="best trade-off (nearest the origin)"))
    fig.suptitle(f"{family}: net energy against time per op", fontsize=10)
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               fontsize=7, frameon=False)
    return _save(fig, out_dir, f"energy-time-{family}.png")


def figure_payload(points: pd.DataFrame, fits: dict[str, pd.DataFrame], family: str,
                   out_dir: Path) -> str | None:
    """Time and net energy per op against payload size with the fitted lines, one column
    per board."""
    fam = points[(points["family"] == family) & points["payload_bytes"].notna()]
    boards = list(dict.fromkeys(fam["board"]))
    if not boards:
        return None
    fig = Figure(figsize=(5.0 * len(boards), 6.4), layout="tight")
    axes = fig.subplots(2, len(boards), squeeze=False)
    for j, board in enumerate(boards):
        d = fam[fam["board"] == board]
        for i, (col, name) in enumerate(METRICS):
            ax = axes[i, j]
            fit = fits[col]
            for keys, g in d.groupby(list(CONFIG), dropna=False, sort=True):
                line = ax.scatter(g["payload_bytes"], g[f"{col}_mean"], s=12,
                                  label=config_label(g.iloc[0], with_board=False))
                f = select(fit, {c: _none(k) for c, k in zip(CONFIG, keys, strict=True)})
                if len(f):
                    xs = np.linspace(0, g["payload_bytes"].max(), 50)
                    ax.plot(xs, f["intercept"].iloc[0] + f["slope"].iloc[0] * xs,
                            color=line.get_facecolor()[0], linewidth=1)
            ax.set_title(f"{board}: {name} per op", fontsize=9)
            ax.set_xlabel("payload (bytes)")
            _si_axis(ax, "y", "s" if col.endswith("_s") else "J")
            ax.tick_params(labelsize=7)
            ax.legend(fontsize=6)
    return _save(fig, out_dir, f"payload-{family}.png")


# Decades a log ratio axis may span with ticks at 1, 2 and 5 of each decade; wider axes
# get one tick per decade (or per few decades), else the labels run into each other.
_RATIO_DECADES_125 = 3.0


def _ratio_label(v: float) -> str:
    """``×0.5``, ``×20``; a power of ten outside 0.001..1000 as ``×10⁴``."""
    if 1e-3 <= v < 1e4:
        return f"×{v:g}"
    return f"×10{str(round(math.log10(v))).translate(SUPERSCRIPT)}"


def _ratio_axis(axis: Any, low: float, high: float) -> None:
    """Limits and ticks of a log axis of ratios from ``low`` to ``high``."""
    axis.axes.set_xlim(low, high)
    wide = math.log10(high / low) > _RATIO_DECADES_125
    axis.set_major_locator(LogLocator(subs=(1.0,) if wide else (1.0, 2.0, 5.0), numticks=8))
    axis.set_major_formatter(FuncFormatter(lambda v, _: _ratio_label(v)))
    axis.set_minor_formatter(NullFormatter())


def figure_relative(rel: pd.DataFrame, family: str, out_dir: Path) -> str | None:
    """Bars of each op's time and net energy relative to the family's reference."""
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
    ax.legend(fontsize=7, loc="lower right")
    return _save(fig, out_dir, f"relative-{family}.png")


def figure_allocation(alloc: pd.DataFrame, out_dir: Path) -> str:
    """Stacked bars of the fraction of variation per term, per response and scale."""
    groups = list(dict.fromkeys(zip(alloc["response"], alloc["scale"], strict=True)))
    terms = list(dict.fromkeys(alloc["term"]))
    fig = Figure(figsize=(7.5, 0.6 * len(groups) + 1.6), layout="tight")
    ax = fig.subplots()
    left = np.zeros(len(groups))
    cmap = colormaps["tab20"]
    for i, term in enumerate(terms):
        widths = np.array([alloc[(alloc["response"] == r) & (alloc["scale"] == s)
                                 & (alloc["term"] == term)]["fraction"].sum() * 100
                           for r, s in groups])
        ax.barh(range(len(groups)), widths, left=left, color=cmap(i % 20), label=term)
        left += widths
    ax.set_yticks(range(len(groups)), [f"{r} ({s})" for r, s in groups], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of variation explained")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return _save(fig, out_dir, "allocation.png")


# ---------------------------------------------------------------- HTML


@dataclass(frozen=True)
class Column:
    """A column of an HTML table: header and how to show a row's value."""

    header: str
    cell: Callable[[pd.Series], str]
    numeric: bool = True


def _table(df: pd.DataFrame, columns: Sequence[Column]) -> str:
    head = "".join(f"<th>{html.escape(c.header)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td class='{'num' if c.numeric else ''}'>"
                         + "<br>".join(html.escape(line) for line in c.cell(r).split("\n"))
                         + "</td>" for c in columns) + "</tr>"
        for _, r in df.iterrows())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _ci(row: pd.Series, col: str, unit: str) -> str:
    mean, low, high = row[f"{col}_mean"], row[f"{col}_ci_low"], row[f"{col}_ci_high"]
    if not np.isfinite(low):
        return "–"
    return f"±{(high - low) / 2 / mean * 100:.2g} %" if mean else format_si(high - low, unit)


def _energy(energy_j: float) -> str:
    return f"{format_si(energy_j, 'J')}\n{format_nwh(energy_j)}"


def _fmt_int(value: Any) -> str:
    return "–" if pd.isna(value) else f"{int(value):,}"


def _fmt_num(value: Any, fmt: str = ".3g") -> str:
    return "–" if value is None or pd.isna(value) else format(value, fmt)


WORKLOAD_COLUMNS: tuple[Column, ...] = (
    Column("configuration", lambda r: r["label"], numeric=False),
    Column("payload", lambda r: "–" if pd.isna(r["payload_bytes"])
           else f"{int(r['payload_bytes']):,} B"),
    Column("time / op", lambda r: format_si(r["time_per_op_s_mean"], "s")),
    Column("CI", lambda r: _ci(r, "time_per_op_s", "s")),
    Column("gross energy / op", lambda r: _energy(r["energy_per_op_j_mean"])),
    Column("net energy / op", lambda r: _energy(r["net_energy_per_op_j_mean"])),
    Column("CI", lambda r: _ci(r, "net_energy_per_op_j", "J")),
    Column("mean power", lambda r: format_si(r["mean_power_w_mean"], "W")),
    Column("cycles / op", lambda r: _fmt_int(r["cycles_per_op_mean"])),
    Column("windows", lambda r: f"{r['n_windows']} ({r['n_points']} "
                                f"point{'s' if r['n_points'] != 1 else ''})"),
    Column("flags", lambda r: r["flags"] or "", numeric=False),
)
# Shown where the bench is simulated and knows the true energy of every window.
def _vs_truth(row: pd.Series) -> str:
    truth = row["true_net_energy_per_op_j_mean"]
    if not np.isfinite(truth) or truth == 0:
        return "–"
    return f"{(row['net_energy_per_op_j_mean'] / truth - 1) * 100:+.2f} %"


TRUTH_COLUMN = Column("net vs true", _vs_truth)


def _fit_columns(unit: str) -> tuple[Column, ...]:
    def est(name: str) -> Callable[[pd.Series], str]:
        return lambda r: (f"{format_si(r[name], unit)} [{format_si(r[name + '_ci_low'], unit)}, "
                          f"{format_si(r[name + '_ci_high'], unit)}]"
                          + ("" if r[f"{name}_significant"] else " not significant"))

    return (Column("configuration", lambda r: config_label(r), numeric=False),
            Column("n", lambda r: str(r["n"])),
            Column("slope (per byte) [95 % CI]", est("slope")),
            Column("intercept (fixed) [95 % CI]", est("intercept")),
            Column("R²", lambda r: f"{r['r2']:.4f}"))


def _comparison_columns() -> tuple[Column, ...]:
    def unit(r: pd.Series) -> str:
        return "s" if r["metric"] == "time" else "J"

    return (Column("A", lambda r: r["a"], numeric=False),
            Column("B", lambda r: r["b"], numeric=False),
            Column("metric", lambda r: r["metric"], numeric=False),
            Column("pairs", lambda r: str(r["n_pairs"])),
            Column("mean A − B [95 % CI]",
                   lambda r: f"{format_si(r['mean_diff'], unit(r))} "
                             f"[{format_si(r['diff_ci_low'], unit(r))}, "
                             f"{format_si(r['diff_ci_high'], unit(r))}]"
                             + ("" if r["significant"] else " not significant")),
            Column("A / B [95 % CI]", lambda r: f"{r['ratio']:.3g} "
                   f"[{r['ratio_ci_low']:.3g}, {r['ratio_ci_high']:.3g}]"),
            Column("faster", lambda r: r["faster"], numeric=False),
            Column("gain of switching [95 % CI]",
                   lambda r: f"{r['gain_pct']:.1f} % [{r['gain_ci_low']:.1f}, "
                             f"{r['gain_ci_high']:.1f}]"))


PROBLEM_COLUMNS: tuple[Column, ...] = (
    Column("status", lambda r: r["status"], numeric=False),
    Column("point", lambda r: config_label(r) + ("" if pd.isna(r["payload_bytes"])
                                                 else f" · {int(r['payload_bytes'])} B")
           + f" · rep {r['rep']}", numeric=False),
    Column("reason", lambda r: r["reason"] if pd.notna(r["reason"]) else "", numeric=False),
)

def _allocation_table(alloc: pd.DataFrame) -> str:
    """Terms as rows, (response, scale) as columns; a cell: fraction, effect, its CI."""
    groups = list(dict.fromkeys(zip(alloc["response"], alloc["scale"], strict=True)))
    table = pd.DataFrame({"term": list(dict.fromkeys(alloc["term"]))})

    def cell(term: str, response: str, scale: str) -> str:
        r = alloc[(alloc["term"] == term) & (alloc["response"] == response)
                  & (alloc["scale"] == scale)].iloc[0]
        text = f"{r['fraction'] * 100:.1f} %"
        if pd.isna(r["effect"]):
            return text
        unit = "s" if response == "time" else "J"
        show = ((lambda v: format_si(v, unit)) if scale == "raw"
                else (lambda v: f"{v:.3g}"))
        text += f"\nq = {show(r['effect'])}"
        if np.isfinite(r["ci_low"]):
            text += f"\n[{show(r['ci_low'])}, {show(r['ci_high'])}]"
        return text

    columns = [Column("term", lambda r: r["term"], numeric=False)]
    columns += [Column(f"{response} ({scale})",
                       lambda r, response=response, scale=scale: cell(r["term"], response, scale))
                for response, scale in groups]
    return _table(table, columns)


CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}h3{margin-top:1.4em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{border:1px solid #ddd;padding:.25em .5em}th{background:#f2f2f2;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
img{max-width:100%;margin:.5em 0}.banner{background:#fff3cd;border:1px solid #e0c36c;
padding:.6em 1em}.note{color:#666;font-size:.85em}dl{display:grid;grid-template-columns:
max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0}
"""


def _manifest_html(run: Run) -> str:
    m = run.manifest
    fw = m.get("firmware") or {}
    sw = m.get("software") or {}
    cal = m.get("calibration") or {}
    items = {
        "plan": " — ".join(str(v) for v in ((m.get("plan") or {}).get("name", "–"),
                                            (m.get("plan") or {}).get("description")) if v),
        "fixture": (m.get("fixture") or {}).get("name", "–"),
        "firmware": " ".join(str(fw[k]) for k in ("firmware", "build", "board", "crypto")
                             if k in fw) or "–",
        "software": f"energyrig {sw.get('energyrig', '?')} ({sw.get('git_revision') or 'no git'})",
        "calibration": cal.get("id", "none") if cal else "none",
        "host": (m.get("host") or {}).get("hostname", "–"),
        "started": m.get("started_at") or "–",
        "ended": m.get("ended_at") or "not yet (in progress or interrupted)",
        "seed": m.get("seed", "–"),
    }
    return "<dl>" + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>"
                            for k, v in items.items()) + "</dl>"


def _img(name: str | None, alt: str) -> str:
    return f"<img src='{html.escape(name)}' alt='{html.escape(alt)}'>" if name else ""


def write_report(run_dir: str | Path, out_dir: str | Path | None = None) -> Path:
    """Write ``report.html`` and its PNG figures for a run.

    Parameters
    ----------
    run_dir:
        The run directory (finished or still being written: what is there is reported).
    out_dir:
        Where to write; ``run_dir/report`` by default.

    Returns
    -------
    Path
        The path of ``report.html``.
    """
    run = load(run_dir)
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    out.mkdir(parents=True, exist_ok=True)
    points = run.points.assign(family=_family(run.points))
    ok = points[points["status"] == "ok"]
    windows = run.windows[run.windows["point_key"].isin(ok["point_key"])]
    counts = points["status"].value_counts()
    parts = [f"<h1>energyrig report: {html.escape(run.name)}</h1>"]
    if run.in_progress:
        parts.append("<p class='banner'>This run has no end time: a sweep is still writing it "
                     "or was interrupted. The report shows the points stored so far.</p>")
    parts.append(_manifest_html(run))
    parts.append("<p>Points: " + ", ".join(f"{counts.get(s, 0)} {s}"
                                           for s in ("ok", "failed", "skipped"))
                 + f"; {len(windows)} windows.</p>")
    summary = summarise_workloads(windows) if len(windows) else pd.DataFrame()
    if summary.empty:
        parts.append("<p>No measured point yet.</p>" if run.in_progress
                     else "<p>No point was measured.</p>")
    else:
        parts.extend(_results_html(summary, ok, run, out))
    problems = points[points["status"] != "ok"]
    parts.append("<h2>Failed and skipped points</h2>")
    parts.append(_table(problems, PROBLEM_COLUMNS) if len(problems) else "<p>None.</p>")
    page = ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>energyrig: {html.escape(run.name)}</title><style>{CSS}</style></head>"
            "<body>" + "\n".join(parts) + "</body></html>")
    path = out / "report.html"
    path.write_text(page, encoding="utf-8")
    log.info("report written to %s", path)
    return path


def plan_comparisons(plan: dict[str, Any], source: str | Path = "plan"
                     ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The pairs a plan asks to compare: ``[[compare]]`` tables with ``a`` and ``b``, each
    an op name or a table of factors (``a = { op = "aes-ecb-encrypt", key_bits = 128 }``).
    """
    pairs = []
    for i, entry in enumerate(plan.get("compare") or []):
        if not isinstance(entry, dict) or not {"a", "b"} <= entry.keys():
            raise ConfigError(source, f"plan.compare[{i}]",
                              "needs an a and a b (an op name or a table of factors)")
        pairs.append(tuple({"op": s} if isinstance(s, str) else dict(s)
                           for s in (entry["a"], entry["b"])))
    return pairs  # type: ignore[return-value]


def _results_html(summary: pd.DataFrame, ok: pd.DataFrame, run: Run, out: Path) -> list[str]:
    parts: list[str] = []
    fits = {col: payload_regression(ok, f"{col}_mean") for col, _ in METRICS}
    rel = relative_to_reference(summary)
    for family in _family_order(summary["family"]):
        fam = summary[summary["family"] == family]
        parts.append(f"<h2>{html.escape(family)}</h2>")
        truth = fam["true_net_energy_per_op_j_mean"].notna().any()
        parts.append(_table(fam, (*WORKLOAD_COLUMNS[:-1], TRUTH_COLUMN, WORKLOAD_COLUMNS[-1])
                            if truth else WORKLOAD_COLUMNS))
        parts.append(_img(figure_energy_time(summary, family, out), f"{family} energy-time"))
        if family in set(rel.get("family", ())):
            parts.append("<h3>Relative to the reference</h3>")
            parts.append(_img(figure_relative(rel, family, out), f"{family} relative"))
        fam_fits = {col: f[f["op"].isin(fam["op"])] for col, f in fits.items()}
        if any(len(f) for f in fam_fits.values()):
            parts.append("<h3>Against payload size</h3>")
            parts.append(_img(figure_payload(ok, fits, family, out), f"{family} payload"))
            for col, name in METRICS:
                parts.append(f"<p>{html.escape(name)} per op = intercept + slope × bytes</p>")
                parts.append(_table(fam_fits[col], _fit_columns("s" if col.endswith("_s")
                                                                else "J")))
    pairs = plan_comparisons(run.manifest.get("plan") or {}, run.path / "manifest.json")
    chosen = "The pairs the plan names" if pairs else "Each configuration against its " \
        "family's reference"
    table, notes = comparisons(ok, pairs or auto_comparisons(ok))
    parts.append("<h2>Paired comparisons</h2>")
    parts.append(f"<p class='note'>{chosen}, over matched conditions (board, clock, payload "
                 "size, repetition); the ratio is the geometric mean of A / B; "
                 "“not significant”: the interval of the difference contains zero.</p>")
    parts.append(_table(table, _comparison_columns()) if len(table) else "<p>None possible.</p>")
    parts.extend(f"<p class='note'>{html.escape(n)}</p>" for n in notes)
    factors = design_factors(ok)
    if factors:
        alloc, levels = factorial(ok, factors)
        parts.append(f"<h2>2<sup>{len(factors)}</sup> factorial design</h2>")
        parts.append("<p>Factors (low, high): " + html.escape("; ".join(
            f"{f} ({lo}, {hi})" for f, (lo, hi) in levels.items())) + "</p>")
        parts.append(_img(figure_allocation(alloc, out), "allocation of variation"))
        parts.append("<p class='note'>Each cell: the fraction of the variation the term "
                     "explains, and its effect q (half the change from the low to the high "
                     "level; in decades on the log10 scale) with its 95 % CI where the design "
                     "is replicated.</p>")
        parts.append(_allocation_table(alloc))
    return parts
