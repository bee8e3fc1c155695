"""The report's page: the HTML of a run's tables, with the figures' PNG files beside it.

:func:`page_html` takes the tables of :mod:`energyrig.results.report.tables` and the file
names of the figures drawn (:class:`Images`; none are needed) and returns the whole page:
its head (the run, its manifest and conditions), then each section's HTML (the ``*_html``
functions here, which :mod:`energyrig.results.report.sections` registers), in the order of
the sections the tables were computed for. SI values become text here, through
:mod:`energyrig.units`.
"""
from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from energyrig.energy.budget import unstated_because
from energyrig.results.report.methods import largest_components, methods_paragraph
from energyrig.results.report.tables import (
    METRICS,
    WARMUP_SPREAD,
    ReportTables,
    config_label,
)
from energyrig.results.stats import PAIRED_METHOD, SKEW_LIMIT
from energyrig.results.store.read import Run
from energyrig.results.store.schema import FLAG_LIST, POINT_COMPONENTS, field_name
from energyrig.units import column_prefix, format_gum, format_si


class Images(dict[str, dict[str, str]]):
    """The PNG files the page shows, as names relative to the page, by section
    (:attr:`~energyrig.results.report.tables.Section.name`: ``energy_time``, ``relative``,
    ``payload``, ``factorial``, ...), then by op family (``""`` for a figure of the whole
    run): ``Images(energy_time={"hash": "energy-time-hash.png"})``. None drawn: no image."""


@dataclass(frozen=True)
class Column:
    """A column of an HTML table: header and how to show a row's value."""

    header: str
    cell: Callable[[pd.Series], str]
    numeric: bool = True

    def bound(self, df: pd.DataFrame) -> Column:
        """The column as it shows the rows of ``df``: itself."""
        return self


def _number(value: Any) -> float | None:
    """A table cell's number as a float, None where missing (NaN, None, pandas' NA)."""
    return None if pd.isna(value) else float(value)


@dataclass(frozen=True)
class Quantity:
    """A column of values of one unit, in one SI prefix chosen for the column
    (:func:`~energyrig.units.column_prefix`, written in its heading: ``time / op (µs)``),
    each value to the GUM's digits of its uncertainty (:func:`~energyrig.units.format_gum`).

    Attributes
    ----------
    header:
        The heading, before the unit.
    unit:
        The SI unit of the values (``s``, ``J``, ``J/B`` ...).
    value:
        A row's value, in ``unit``; a text instead is shown as it is (``unknown``).
    u:
        A row's uncertainty that sets the value's digits (None: ``digits`` significant).
    with_u:
        Write ``± u`` after the value (else a column beside states the interval).
    digits:
        Significant digits of a value without an uncertainty.
    note:
        A line under a row's value (``not significant``), ``""`` for none.
    missing:
        The text of a missing value.
    """

    header: str
    unit: str
    value: Callable[[pd.Series], float | str]
    u: Callable[[pd.Series], float] | None = None
    with_u: bool = False
    digits: int = 3
    note: Callable[[pd.Series], str] | None = None
    missing: str = "–"

    def bound(self, df: pd.DataFrame) -> Column:
        """The column as it shows the rows of ``df``: their prefix in its heading."""
        values = [self.value(r) for _, r in df.iterrows()]
        prefix = column_prefix(_number(v) for v in values if not isinstance(v, str))

        def cell(row: pd.Series) -> str:
            value = self.value(row)
            if isinstance(value, str):
                return value
            text = format_gum(_number(value), _number(self.u(row)) if self.u else None,
                              prefix=prefix, digits=self.digits, missing=self.missing,
                              with_u=self.with_u)
            note = self.note(row) if self.note else ""
            return f"{text}\n{note}" if note else text

        return Column(f"{self.header} ({prefix}{self.unit})", cell)


def html_table(df: pd.DataFrame, columns: Sequence[Column | Quantity]) -> str:
    """The rows of ``df`` as a table that sorts by a click on a heading (:data:`SORT_JS`),
    in a box that scrolls sideways rather than overflow the page; a :class:`Quantity`
    column in the one prefix of its values."""
    columns = [c.bound(df) for c in columns]
    head = "".join(f"<th title='click to sort'>{html.escape(c.header)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td class='{'num' if c.numeric else ''}'>"
                         + "<br>".join(html.escape(line) for line in c.cell(r).split("\n"))
                         + "</td>" for c in columns) + "</tr>"
        for _, r in df.iterrows())
    return (f"<div class='scroll'><table class='sortable'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")


def _ci(row: pd.Series, col: str, unit: str) -> str:
    """The 95 % CI of a summarised column as its half-width relative to the mean (in the
    unit where the mean is 0); a bootstrap interval as its two ends relative to the mean."""
    mean, low, high = row[f"{col}_mean"], row[f"{col}_ci_low"], row[f"{col}_ci_high"]
    if not np.isfinite(low):
        return "–"
    if row.get(f"{col}_ci_method") == "bootstrap" and mean:  # skewed: asymmetric ends
        return (f"{(low / mean - 1) * 100:+.2g} % … {(high / mean - 1) * 100:+.2g} %"
                "\n(bootstrap)")
    if not mean:
        return "±" + format_si((high - low) / 2, unit)
    return f"±{(high - low) / 2 / abs(mean) * 100:.2g} %"


def _half_width(col: str) -> Callable[[pd.Series], float]:
    """A row's half-width of the 95 % CI of a summarised column: the uncertainty that sets
    the digits of its mean (the larger half of an asymmetric bootstrap interval)."""
    return lambda r: max(r[f"{col}_mean"] - r[f"{col}_ci_low"],
                         r[f"{col}_ci_high"] - r[f"{col}_mean"])


def _mean(col: str, header: str) -> Quantity:
    """The column of the mean of a summarised per-op figure, to the digits of its CI."""
    return Quantity(header, _unit(col), lambda r: r[f"{col}_mean"], u=_half_width(col))


def _percent(value: float) -> str:
    """``+1.25 %``; a value that rounds to zero is ``0.00 %``, never ``-0.00 %``."""
    rounded = round(value, 2) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{rounded:+.2f} %" if rounded else "0.00 %"


def _fmt_int(value: Any) -> str:
    return "–" if pd.isna(value) else f"{int(value):,}"


def _unit(col: str) -> str:
    """The SI unit of a per-op figure column (``time_per_op_s`` → ``s``)."""
    return "s" if col.endswith("_s") else "J"


def _flags(row: pd.Series) -> str:
    """A row's flags, one a line (:data:`energyrig.rig.flags.FLAGS` explains them in the
    page's legend), and how many of its windows were left out of the estimate and why."""
    lines = list(row.get(FLAG_LIST) or [])
    left_out = row.get("windows_excluded")
    if pd.notna(left_out) and left_out:
        lines.append(f"{int(left_out)} window{'s' if left_out != 1 else ''} left out: "
                     f"{row.get('excluded_reason') or ''}".rstrip(": "))
    return "\n".join(lines)


#: The flags of a workload, point or window (first: at 800 px they stay in sight).
FLAGS_COLUMN = Column("flags", _flags, numeric=False)


def _factor(header: str, col: str, show: Callable[[Any], str] = str,
            numeric: bool = False) -> Column:
    """The column of factor ``col`` of a point: ``show`` of its value, ``–`` where it has
    none."""
    return Column(header, lambda r: "–" if pd.isna(r[col]) else show(r[col]), numeric)


#: How a factor of a point is headed and shown (the columns of every table of points).
FACTOR_COLUMNS: dict[str, Column] = {
    "op": _factor("op", "op"),
    "key_bits": _factor("key bits", "key_bits", lambda v: str(int(v)), numeric=True),
    "payload_bytes": _factor("payload", "payload_bytes", lambda v: f"{int(v):,} B",
                             numeric=True),
    "curve": _factor("curve", "curve"),
    "backend": _factor("backend", "backend"),
    "board": _factor("board", "board"),
    "cpu_hz": _factor("clock", "cpu_hz", lambda v: format_si(v, "Hz"), numeric=True),
    "rep": _factor("rep", "rep", lambda v: str(int(v)), numeric=True),
}


def _point_columns(factors: Sequence[str], *columns: Column) -> tuple[Column, ...]:
    """A table of points: their flags, the factors that vary in the run, then ``columns``."""
    return (FLAGS_COLUMN, *(FACTOR_COLUMNS[f] for f in factors), *columns)


WORKLOAD_COLUMNS: tuple[Column | Quantity, ...] = (
    FLAGS_COLUMN,
    Column("configuration", lambda r: r["label"], numeric=False),
    FACTOR_COLUMNS["payload_bytes"],
    Column("windows", lambda r: f"{r['n_windows']} ({r['n_points']} "
                                f"point{'s' if r['n_points'] != 1 else ''})"),
    _mean("time_per_op_s", "time / op"),
    Column("time / op 95 % CI", lambda r: _ci(r, "time_per_op_s", "s")),
    _mean("energy_per_op_j", "gross energy / op"),
    Column("gross energy / op 95 % CI", lambda r: _ci(r, "energy_per_op_j", "J")),
    _mean("net_energy_per_op_j", "net energy / op"),
    Column("net energy / op 95 % CI", lambda r: _ci(r, "net_energy_per_op_j", "J")),
    Quantity("net charge / op", "C", lambda r: r["net_charge_per_op_c_mean"]),
    Quantity("mean power", "W", lambda r: r["mean_power_w_mean"]),
    Quantity("mean current", "A", lambda r: r["mean_current_a_mean"]),
    Column("cycles / op", lambda r: _fmt_int(r["cycles_per_op_mean"])),
)


def _vs_truth(row: pd.Series) -> str:
    truth = row["true_net_energy_per_op_j_mean"]
    if not np.isfinite(truth) or truth == 0:
        return "–"
    return _percent((row['net_energy_per_op_j_mean'] / truth - 1) * 100)


# Shown where the bench is simulated and knows the true energy of every window.
TRUTH_COLUMN = Column("net vs true", _vs_truth)


def _fit_half(name: str) -> Callable[[pd.Series], float]:
    """The half-width of a fit's 95 % CI of ``name`` (``slope``, ``intercept``)."""
    return lambda r: (r[f"{name}_ci_high"] - r[f"{name}_ci_low"]) / 2


def _fit_estimate(fit: pd.Series, name: str, unit: str) -> str:
    """A fit's ``name`` ± the half-width of its 95 % CI, in its own prefix."""
    value, half = fit[name], _fit_half(name)(fit)
    return format_gum(value, half, unit=unit, prefix=column_prefix([value or half]))


def fit_text(fit: pd.Series, unit: str) -> str:
    """A payload fit (:func:`~energyrig.results.stats.payload_regression` row) in a line, as
    the payload figures print it beside their curves: ``slope 32.1 ± 0.4 ns/B, intercept
    9.4 ± 1.1 µs (± 95 % CI), R² 0.9998``; ``unit`` that of the response."""
    return (f"slope {_fit_estimate(fit, 'slope', f'{unit}/B')}, intercept "
            f"{_fit_estimate(fit, 'intercept', unit)} (± 95 % CI), R² {fit['r2']:.4f}")


def _fit_columns(unit: str) -> tuple[Column | Quantity, ...]:
    def est(name: str, header: str, per: str) -> Quantity:
        return Quantity(header, unit + per, lambda r: r[name], u=_fit_half(name),
                        with_u=True, note=lambda r: "" if r[f"{name}_significant"]
                        else "not significant")

    return (Column("configuration", lambda r: config_label(r), numeric=False),
            Column("n", lambda r: str(r["n"])),
            est("slope", "slope (per byte) ± 95 % CI", "/B"),
            est("intercept", "intercept (fixed) ± 95 % CI", ""),
            Column("R²", lambda r: f"{r['r2']:.4f}"))


# The unit of each metric by its name in the report ("time" → s).
_METRIC_UNIT = {name: _unit(col) for col, name in METRICS}


def _verdict(row: pd.Series) -> str:
    """``rc6-ecb-encrypt 128 faster``, ``… uses less energy``, or no verdict where the
    ratio's interval contains 1."""
    if not row["significant"]:
        return "no significant difference"
    return f"{row['lower']} " + ("faster" if row["metric"] == "time" else "uses less energy")


def ratio_ci(row: pd.Series) -> str:
    """A paired comparison's ratio A / B and its 95 % CI, ``1.33 [1.21, 1.47]``: as the
    comparisons table and the bars relative to the reference both print it."""
    return (f"{row['ratio']:.3g} [{row['ratio_ci_low']:.3g}, {row['ratio_ci_high']:.3g}]")


def _gain(row: pd.Series) -> str:
    if not row["significant"]:
        return "–"
    return f"{row['gain_pct']:.1f} % [{row['gain_ci_low']:.1f}, {row['gain_ci_high']:.1f}]"


COMPARISON_COLUMNS: tuple[Column, ...] = (
    Column("A", lambda r: r["a"], numeric=False),
    Column("B", lambda r: r["b"], numeric=False),
    Column("metric", lambda r: r["metric"], numeric=False),
    Column("pairs", lambda r: str(r["n_pairs"])),
    Column("A / B [95 % CI]", lambda r: ratio_ci(r)),
    Column("verdict", _verdict, numeric=False),
    Column("saved by switching [95 % CI]", _gain),
)

def _problem_columns(factors: Sequence[str]) -> tuple[Column, ...]:
    """The failed and skipped points: status first, then :func:`_point_columns`."""
    return (Column("status", lambda r: r["status"], numeric=False),
            *_point_columns(factors, Column(
                "reason", lambda r: r["reason"] if pd.notna(r["reason"]) else "",
                numeric=False)))


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
        unit = _METRIC_UNIT[response]
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
    return html_table(table, columns)


CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}h3{margin-top:1.4em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{border:1px solid #ddd;padding:.25em .5em}th{background:#f2f2f2;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{max-width:100%;overflow-x:auto}th[title]{cursor:pointer}
img{max-width:100%;margin:.5em 0}.banner{background:#fff3cd;border:1px solid #e0c36c;
padding:.6em 1em}.note{color:#666;font-size:.85em}dl{display:grid;grid-template-columns:
max-content minmax(0,1fr);gap:.2em 1em}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
p{overflow-wrap:anywhere}
@media (max-width:900px){body{margin:1em auto;padding:0 .5em}table{font-size:.78em}}
"""


# Sorts a table by the column whose heading is clicked (again: the other way round): a
# numeric cell by its first number times its SI prefix (``12 µs`` < ``1.2 ms``), else as text.
SORT_JS = """
const PREFIX = {G: 1e9, M: 1e6, k: 1e3, m: 1e-3, 'µ': 1e-6, n: 1e-9, p: 1e-12, f: 1e-15};
const sortKey = td => {
  const t = td.innerText.replace(/,/g, '');
  const m = td.classList.contains('num') && t.match(/(-?[0-9.]+(?:e-?[0-9]+)?)\\s*([GMkmµnpf]?)/);
  return m ? parseFloat(m[1]) * (PREFIX[m[2]] || 1) : t;
};
document.querySelectorAll('table.sortable th').forEach(th => th.addEventListener(
  'click', () => {
    const col = th.cellIndex, body = th.closest('table').tBodies[0], up = th.dataset.dir !== 'up';
    th.dataset.dir = up ? 'up' : 'down';
    [...body.rows].sort((a, b) => {
      const x = sortKey(a.cells[col]), y = sortKey(b.cells[col]);
      const c = typeof x !== typeof y ? (typeof x === 'number' ? -1 : 1)
                : x < y ? -1 : x > y ? 1 : 0;
      return up ? c : -c;
    }).forEach(r => body.appendChild(r));
  }));
"""


LEGEND_COLUMNS = (
    Column("flag", lambda r: r["flag"], numeric=False),
    Column("points", lambda r: str(r["points"])),
    Column("windows", lambda r: str(r["windows"])),
    Column("what it means", lambda r: r["meaning"] or "not described (a flag this version "
                                                      "of energyrig does not know)",
           numeric=False),
    Column("what to do", lambda r: r["action"], numeric=False),
)


def legend_html(run: Run, tables: ReportTables, family: str,
                images: Mapping[str, str]) -> list[str]:
    """The flags of the run's points and windows, each explained once
    (:data:`energyrig.rig.flags.FLAGS`); the tables name them in their first column."""
    if tables.flags.empty:
        return ["<h2 id='flags'>Flags</h2><p>No point or window carries a flag.</p>"]
    return ["<h2 id='flags'>Flags</h2>",
            "<p class='note'>What the flags in the tables below mean: how many points "
            "(failed ones too) and windows carry each, and what to do about it.</p>",
            html_table(tables.flags, LEGEND_COLUMNS)]


def _title(run: Run) -> str:
    """The plan's name as the manifest records it, else the run directory's name."""
    return str((run.manifest.get("plan") or {}).get("name") or run.name)


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
        "calibration": _calibration_text(cal),
        "host": (m.get("host") or {}).get("hostname", "–"),
        "started": m.get("started_at") or "–",
        "ended": m.get("ended_at") or "not yet (in progress or interrupted)",
        "seed": m.get("seed", "–"),
    }
    return "<dl>" + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(str(v))}</dd>"
                            for k, v in items.items()) + "</dl>"


def _calibration_text(cal: Mapping[str, Any]) -> str:
    """The run's calibration: its record ids, and what is missing when incomplete."""
    if not cal:
        return "none"
    text = cal.get("id") or "none"
    if cal.get("complete") is False:
        text += f" — UNCALIBRATED: {cal.get('problem')}"
    return text


def _conditions_html(run: Run) -> list[str]:
    """What the firmware said shapes its figures (``hello``'s ``conditions``: crypto options
    as compiled, optimisation, clock source, regulator, caches, ...), one column per board."""
    fw = run.manifest.get("firmware") or {}
    boards = fw.get("boards") or {fw.get("board", "board"): fw}
    conditions = {board: hello.get("conditions") or {} for board, hello in boards.items()}
    parts = ["<h2>Measurement conditions</h2>"]
    names = sorted({name for c in conditions.values() for name in c})
    if not names:
        return [*parts, "<p>The firmware did not report its conditions (a build older than "
                        "the <code>conditions</code> field of <code>hello</code>).</p>"]
    head = "".join(f"<th>{html.escape(str(b))}</th>" for b in conditions)
    rows = "".join(f"<tr><td>{html.escape(name)}</td>"
                   + "".join(f"<td>{html.escape(str(c.get(name, '–')))}</td>"
                             for c in conditions.values()) + "</tr>" for name in names)
    return [*parts, (f"<div class='scroll'><table><tr><th>condition</th>{head}</tr>{rows}"
                     "</table></div>"),
            "<p class='note'>As the firmware's <code>hello</code> reported them; each is "
            "explained in firmware/README.md.</p>"]


def figure_html(name: str | None, alt: str) -> str:
    """A figure's PNG, with links to its SVG twin and the CSV of the numbers it was drawn
    from (written beside it: :func:`~energyrig.results.report.figures.draw_figures`)."""
    if not name:
        return ""
    stem = html.escape(name.removesuffix(".png"))
    return (f"<img src='{html.escape(name)}' alt='{html.escape(alt)}'>"
            f"<p class='note'>This figure as <a href='{stem}.svg'>SVG</a>; the numbers it "
            f"shows: <a href='{stem}.csv'>CSV</a>.</p>")


def estimates_html(run: Run, tables: ReportTables, family: str,
                  images: Mapping[str, str]) -> list[str]:
    """How the figures of the tables below are made: the confidence interval's method, and
    the supply voltage currents and charges are derived at."""
    return [("<p class='note'>95 % CI: Student t interval of the mean over the windows; "
             "where it does not fit (a positive figure whose t interval reaches 0, or a "
             f"sample skewness beyond ±{SKEW_LIMIT:g}, as one long warm-up window among few "
             "makes), the percentile bootstrap interval, given as its ends and named.</p>"),
            ("<p class='note'>Mean current and charge per op at the fixture's supply of "
             f"{format_si(tables.supply_v, 'V')}: mean power and net energy per op divided "
             "by it.</p>") if tables.supply_v else
            "<p class='note'>No supply voltage recorded: no current or charge.</p>"]


def workloads_html(run: Run, tables: ReportTables, family: str,
                   images: Mapping[str, str]) -> list[str]:
    """The workloads of ``family`` (against the truth where the bench knows it) and their
    energy against time."""
    fam = tables.summary[tables.summary["family"] == family]
    truth = fam["true_net_energy_per_op_j_mean"].notna().any()
    return [html_table(fam, (*WORKLOAD_COLUMNS, TRUTH_COLUMN) if truth else WORKLOAD_COLUMNS),
            figure_html(images.get(family), f"{family} energy-time")]


def relative_html(run: Run, tables: ReportTables, family: str,
                  images: Mapping[str, str]) -> list[str]:
    """The ops of ``family`` relative to its reference, where one was compared."""
    if not tables.has_relative(family):
        return []
    return ["<h3>Relative to the reference</h3>", figure_html(images.get(family), f"{family} relative")]


def payload_html(run: Run, tables: ReportTables, family: str,
                 images: Mapping[str, str]) -> list[str]:
    """The ops of ``family`` against payload size, and their fits, where there are some."""
    if not tables.has_payload_fits(family):
        return []
    parts = ["<h3>Against payload size</h3>", figure_html(images.get(family), f"{family} payload")]
    fits = tables.family_fits(family)
    for col, name in METRICS:
        parts.append(f"<p>{html.escape(name)} per op = intercept + slope × bytes</p>")
        parts.append(html_table(fits[col], _fit_columns(_unit(col))))
    return parts


WARMUP_COLUMNS = (
    Quantity("first window: time / op", "s", lambda r: r["time_per_op_s"]),
    Quantity("the others: median", "s", lambda r: r["others_median_s"]),
    Quantity("the others: mean", "s", lambda r: r["others_mean_s"]),
)


def warmups_html(run: Run, tables: ReportTables, family: str,
                 images: Mapping[str, str]) -> list[str]:
    """The first windows that are warm-up outliers, apart (they stay in the tables)."""
    if tables.warmups.empty:
        return []
    return ["<h2>Warm-up windows</h2>",
            (f"<p class='note'>The first window of these points lies more than "
             f"{WARMUP_SPREAD:g} robust standard deviations (1.4826 × MAD) above the median "
             "of the point's other windows: a warm-up (caches, clocks, first use of a "
             "peripheral). It is kept in the means and intervals above; the others' median "
             "and mean show the point without it.</p>"),
            html_table(tables.warmups, _point_columns(tables.factors, *WARMUP_COLUMNS))]


def comparisons_html(run: Run, tables: ReportTables, family: str,
                     images: Mapping[str, str]) -> list[str]:
    """The paired comparisons, their method and the pairs that could not be compared: the
    plan's pairs, then each configuration against its family's reference (the rows the
    figures relative to the reference draw)."""
    table = tables.comparisons
    plan, reference = (table[table["origin"] == o] for o in ("plan", "reference"))
    parts = ["<h2>Paired comparisons</h2>",
             "<p class='note'>Over matched conditions (board, clock, payload size, "
             f"repetition). Method: {html.escape(PAIRED_METHOD)}. The saving is the share of "
             "the other one's cost saved by switching to the lower one.</p>"]
    if tables.planned_comparisons:
        parts += ["<h3>The pairs the plan names</h3>",
                  html_table(plan, COMPARISON_COLUMNS) if len(plan) else
                  "<p>None of them could be compared.</p>"]
    if len(reference):
        parts += ["<h3>Each configuration against its family's reference</h3>",
                  "<p class='note'>The ratios, intervals and verdicts the figures "
                  "“relative to the reference” draw.</p>",
                  html_table(reference, COMPARISON_COLUMNS)]
    if not len(table):
        parts.append("<p>No pair could be compared: a paired comparison needs two "
                     "configurations measured under at least two common conditions.</p>")
    parts.extend(f"<p class='note'>{html.escape(n)}</p>" for n in tables.comparison_notes)
    return parts


def factorial_html(run: Run, tables: ReportTables, family: str,
                   images: Mapping[str, str]) -> list[str]:
    """The 2^k design of the ok points, if they form one: its allocation of variation."""
    design = tables.factorial
    if design is None:
        return []
    return [f"<h2>2<sup>{len(design.factors)}</sup> factorial design</h2>",
            "<p>Factors (low, high): " + html.escape("; ".join(
                f"{f} ({lo}, {hi})" for f, (lo, hi) in design.levels.items())) + "</p>",
            figure_html(images.get(""), "allocation of variation"),
            "<p class='note'>Each cell: the fraction of the variation the term explains, and "
            "its effect q (half the change from the low to the high level; in decades on the "
            "log10 scale) with its 95 % CI where the design is replicated.</p>",
            _allocation_table(design.allocation)]


def _budget_u(component: str) -> Callable[[pd.Series], float | str]:
    """A point's standard uncertainty of ``component`` (J), ``unknown`` where its budget
    cannot say, ``–`` where it has no such component."""
    def value(row: pd.Series) -> float | str:
        found = (row["uncertainty_budget"] or {}).get(field_name(component))
        if not found:
            return "–"
        return "unknown" if found["u_j"] is None else float(found["u_j"])
    return value


def _u_or_why(row: pd.Series) -> float | str:
    """A point's U (k=2), J, or why it is not stated: the reasons of its budget's components
    of unknown size (:func:`~energyrig.energy.budget.unstated_because`)."""
    if _number(row["net_energy_per_op_u_j"]) is not None:
        return float(row["net_energy_per_op_u_j"])
    budget = row["uncertainty_budget"] or {}
    unknown = (name for name in POINT_COMPONENTS
               if (found := budget.get(field_name(name))) and found["u_j"] is None)
    return f"– ({unstated_because(unknown)})"


#: A point's components (energyrig.energy.budget.energy_budget; a window's random
#: ones — edge quantisation, baseline and sample noise — are in its repeatability).
BUDGET_COMPONENTS = ("repeatability", "ADC resolution", "gain calibration",
                     "skew calibration", "supply voltage")
UNCERTAINTY_COLUMNS = (
    Quantity("net energy / op ± U", "J", lambda r: r["net_energy_per_op_j_mean"],
             u=lambda r: r["net_energy_per_op_u_j"], with_u=True),
    Quantity("U (k=2)", "J", _u_or_why, digits=2),
    *(Quantity(f"u {name}", "J", _budget_u(name), digits=2) for name in BUDGET_COMPONENTS),
)


def uncertainty_html(run: Run, tables: ReportTables, family: str,
                     images: Mapping[str, str]) -> list[str]:
    """Each measured point's expanded uncertainty and its budget (docs/calibration.md); a
    run written before the budget existed has none."""
    ok = tables.ok
    if "uncertainty_budget" not in ok.columns or ok["uncertainty_budget"].isna().all():
        return []
    return ["<h2>Uncertainty of the net energy per op</h2>",
            "<p class='note'>Expanded uncertainty U (k = 2) and its standard components per "
            "op, in the way of the GUM: repeatability (Type A, which holds each window's "
            "edge quantisation and noise), the ADC resolution and the calibration's gain "
            "and skew (Type B). Unknown without a calibration, or where the instrument "
            "states no resolution: the U column says which.</p>",
            html_table(ok, _point_columns(tables.factors, *UNCERTAINTY_COLUMNS))]


FOOTPRINT_COLUMNS = (
    Column("op", lambda r: f"{r['op']} ({r['backend']})" if r["backend"] != "software"
           else str(r["op"]), numeric=False),
    Column("flash", lambda r: f"{_fmt_int(r['flash_bytes'])} B"),
    Column("RAM", lambda r: f"{_fmt_int(r['ram_bytes'])} B"),
)


def footprint_html(run: Run, tables: ReportTables, family: str,
                   images: Mapping[str, str]) -> list[str]:
    """Flash and RAM per op from the footprint of each board's firmware the run keeps
    (``make firmware-footprint``; absent for a fixture that names none)."""
    parts: list[str] = []
    for board, fp in tables.footprints.items():
        rows = tables.footprint[tables.footprint["board"] == board]
        build = ", ".join(v for v in (f"Zephyr {fp.zephyr}" if fp.zephyr else None,
                                      fp.crypto, fp.toolchain) if v)
        parts += [f"<h3>{html.escape(fp.board)}: build {html.escape(fp.build_id)}</h3>",
                  (f"<p>{html.escape(build)}. Without any op the firmware takes "
                   f"{_fmt_int(fp.empty.flash_bytes)} B of flash and "
                   f"{_fmt_int(fp.empty.ram_bytes)} B of static RAM; with all "
                   f"{len(fp.ops)} ops {_fmt_int(fp.full.flash_bytes)} B and "
                   f"{_fmt_int(fp.full.ram_bytes)} B.</p>"),
                  html_table(rows, FOOTPRINT_COLUMNS) if len(rows) else
                  "<p>The footprint has none of the ops measured.</p>"]
    if not parts:
        return []
    return ["<h2>Footprint</h2>",
            ("<p class='note'>What each op measured adds to the firmware built without any op, "
             "built with that op alone (the way pqm4 measures code size): flash is code, "
             "constants and initial values; RAM is static RAM only (the op's buffers come from "
             "the arena, its stack is the run's <code>stack_bytes</code>). Ops sharing code "
             "each count it.</p>"), *parts]


METHODS_COLUMNS = (
    Column("point", lambda r: str(r["point"]), numeric=False),
    Column("U (k=2)", lambda r: format_si(r["u_expanded_j"], "J")),
    Column("largest component", lambda r: str(r["component"]), numeric=False),
    Column("its u", lambda r: format_si(r["u_j"], "J")),
    Column("share of variance", lambda r: f"{r['share'] * 100:.0f} %"),
)


def methods_parts(run: Run) -> list[str]:
    """How the run's numbers were made (:func:`~energyrig.results.report.methods
    .methods_paragraph`), a paragraph to copy (also ``methods.md`` beside the page), and per
    point the largest component of its uncertainty budget."""
    largest = largest_components(run.points)
    return [f"<p class='methods'>{html.escape(methods_paragraph(run))}</p>",
            "<p class='note'>The same paragraph, with the table below, is in "
            "<code>methods.md</code> beside this page.</p>",
            html_table(largest, METHODS_COLUMNS) if len(largest) else ""]


def methods_html(run: Run, tables: ReportTables, family: str,
                 images: Mapping[str, str]) -> list[str]:
    """The methods section of a run's report: :func:`methods_parts` under its heading."""
    return ["<h2 id='methods'>Methods</h2>", *methods_parts(run)]


def problems_html(run: Run, tables: ReportTables, family: str,
                  images: Mapping[str, str]) -> list[str]:
    """The points that failed or were skipped, and why."""
    problems = tables.points[tables.points["status"] != "ok"]
    return ["<h2>Failed and skipped points</h2>",
            html_table(problems, _problem_columns(tables.factors)) if len(problems)
            else "<p>None.</p>"]


def sections_html(run: Run, tables: ReportTables, images: Images) -> list[str]:
    """The HTML of every section of ``tables`` (:attr:`~energyrig.results.report.tables
    .ReportTables.sections`), in order: the per-family ones together under each family's
    heading, at the place of the first of them; in place of the first that needs a measured
    point, where none was, a sentence that says so."""
    per_family = [s for s in tables.sections if s.per_family]
    parts: list[str] = []
    unmeasured = False
    for section in tables.sections:
        if section.measured and not tables.measured:
            if not unmeasured:
                parts.append("<p>No measured point yet.</p>" if run.in_progress
                             else "<p>No point was measured.</p>")
            unmeasured = True
        elif not section.per_family:
            parts.extend(section.html(run, tables, "", images.get(section.name, {})))
        elif section is per_family[0]:
            for family in tables.families:
                parts.append(f"<h2>{html.escape(family)}</h2>")
                for each in per_family:
                    parts.extend(each.html(run, tables, family, images.get(each.name, {})))
    return parts


def page_html(run: Run, tables: ReportTables, images: Images) -> str:
    """The report page of ``run``.

    Parameters
    ----------
    run:
        The run (its name, manifest and whether it is still in progress).
    tables:
        :func:`~energyrig.results.report.tables.report_tables` of the run.
    images:
        The figures drawn, as file names relative to the page.

    Returns
    -------
    str
        A whole HTML document (UTF-8, styles inline).
    """
    counts = tables.points["status"].value_counts()
    parts = [f"<h1>energyrig report: {html.escape(_title(run))}</h1>",
             f"<p class='note'>run directory {html.escape(str(run.path))}</p>"]
    if run.in_progress:
        parts.append("<p class='banner'>This run has no end time: a sweep is still writing it "
                     "or was interrupted. The report shows the points stored so far.</p>")
    parts.append(_manifest_html(run))
    parts.extend(_conditions_html(run))
    parts.append("<p>Points: " + ", ".join(f"{counts.get(s, 0)} {s}"
                                           for s in ("ok", "failed", "skipped"))
                 + f"; {len(tables.windows)} windows.</p>")
    parts.extend(sections_html(run, tables, images))
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>energyrig: {html.escape(_title(run))}</title><style>{CSS}</style></head>"
            "<body>" + "\n".join(parts) + f"<script>{SORT_JS}</script></body></html>")
