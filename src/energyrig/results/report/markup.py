"""The report's tables as text for a README or a paper: Markdown and LaTeX (booktabs).

In the style of pqm4's benchmark tables: one table per op family, the factors that vary in
it as the first columns (those that do not, once above it), then time and net energy per op
of each measured point as value ± U (the expanded uncertainty, k = 2, written the GUM's way:
:func:`energyrig.units.format_gum`), each column in one unit with one SI prefix
(:func:`energyrig.units.column_prefix`), then cycles per op and the point's flags. The
cells are those of the HTML page (:data:`~energyrig.results.report.page.FACTOR_COLUMNS`,
:data:`~energyrig.results.report.page.FLAGS_COLUMN`); :func:`family_table` is what both
formats write, :func:`~energyrig.results.report.write_tables` writes them as a file.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from energyrig.results.report.page import FACTOR_COLUMNS, FLAGS_COLUMN
from energyrig.results.report.tables import METRICS, ReportTables, family_order, flag_legend
from energyrig.results.store.read import Run
from energyrig.units import MISSING, column_prefix, format_gum

#: Each per-op figure of :data:`~energyrig.results.report.tables.METRICS` → the column of
#: its expanded uncertainty (k = 2), same unit.
U_COLUMNS: dict[str, str] = {"time_per_op_s": "time_per_op_u_s",
                             "net_energy_per_op_j": "net_energy_per_op_u_j"}


@dataclass(frozen=True)
class TextTable:
    """One family's table as text cells, for any markup.

    Attributes
    ----------
    family:
        The op family.
    fixed:
        The factors that are the same in every row: ``(header, value)``, said once above
        the table.
    headers:
        The columns' headers (units in brackets: ``time per op [µs]``).
    numeric:
        Per column, whether it holds numbers (right-aligned).
    rows:
        The cells, one list per point, in factor order.
    """

    family: str
    fixed: list[tuple[str, str]]
    headers: list[str]
    numeric: list[bool]
    rows: list[list[str]]


def family_table(tables: ReportTables, family: str) -> TextTable:
    """The measured points of ``family`` (:attr:`~energyrig.results.report.tables
    .ReportTables.ok`, sorted by factor) as text cells: the factors that vary among them
    (``op`` always), time and net energy per op ± U, cycles per op where measured, and the
    flags where any point carries one."""
    points = tables.ok[tables.ok["family"] == family]
    factors = [f for f in tables.factors
               if f == "op" or points[f].nunique(dropna=False) > 1]
    columns = [FACTOR_COLUMNS[f] for f in factors]
    headers = [c.header for c in columns]
    numeric = [c.numeric for c in columns]
    cells = [[c.cell(r) for c in columns] for _, r in points.iterrows()]
    for col, name in METRICS:
        unit = "s" if col.endswith("_s") else "J"
        values = points[f"{col}_mean"].to_numpy(dtype=float, na_value=np.nan)
        u = (points[U_COLUMNS[col]].to_numpy(dtype=float, na_value=np.nan)
             if U_COLUMNS[col] in points else np.full(len(points), np.nan))
        prefix = column_prefix(values)
        headers.append(f"{name} per op [{prefix}{unit}]")
        numeric.append(True)
        for row, v, uk in zip(cells, values, u, strict=True):
            row.append(format_gum(v, uk, prefix=prefix))
    cycles = points["cycles_per_op_mean"].to_numpy(dtype=float, na_value=np.nan) \
        if "cycles_per_op_mean" in points else np.array([])
    if np.isfinite(cycles).any():
        headers.append("cycles per op")
        numeric.append(True)
        for row, c in zip(cells, cycles, strict=True):
            row.append(f"{c:,.0f}" if np.isfinite(c) else MISSING)
    flags = [FLAGS_COLUMN.cell(r).replace("\n", ", ") for _, r in points.iterrows()]
    if any(flags):
        headers.append(FLAGS_COLUMN.header)
        numeric.append(False)
        for row, f in zip(cells, flags, strict=True):
            row.append(f)
    fixed = [(FACTOR_COLUMNS[f].header, FACTOR_COLUMNS[f].cell(points.iloc[0]))
             for f in FACTOR_COLUMNS if f not in factors and f != "rep" and len(points)
             and pd.notna(points.iloc[0][f])]
    return TextTable(family, fixed, headers, numeric, cells)


def _families(tables: ReportTables) -> list[TextTable]:
    return [family_table(tables, f) for f in family_order(tables.ok["family"])]


def _legend(tables: ReportTables) -> list[tuple[str, str]]:
    """The flags the measured points carry and what each means."""
    legend = flag_legend(tables.ok, tables.windows, tables.flag_notes)
    return [(r.flag, r.meaning) for r in legend.itertuples() if r.points]


#: What the values are, said once under the tables' heading.
ABOUT = ("Each value is the mean over the point's trigger windows ± its expanded "
         "uncertainty U (k = 2, GUM: U to two significant digits, the value to the same "
         "place); a value without ± has no stated uncertainty (no calibration).")


def markdown(run: Run, tables: ReportTables) -> str:
    """The tables of ``run`` as Markdown (GitHub's pipe tables), one per op family."""
    def row(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    parts = [f"## {run.name}: time and energy per op", "", ABOUT, ""]
    for t in _families(tables):
        parts += [f"### {t.family}", ""]
        if t.fixed:
            parts += ["; ".join(f"{h}: {v}" for h, v in t.fixed), ""]
        parts += [row(t.headers), row(["--:" if n else ":--" for n in t.numeric]),
                  *(row(r) for r in t.rows), ""]
    if legend := _legend(tables):
        parts += ["Flags: " + "; ".join(f"`{f}`: {m}" if m else f"`{f}`"
                                        for f, m in legend), ""]
    return "\n".join(parts)


_TEX = str.maketrans({"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$",
                      "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                      "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                      "µ": r"\textmu{}", "±": r"$\pm$", "–": "--",
                      "·": r"\textperiodcentered{}", "×": r"$\times$", "≥": r"$\geq$",
                      "≤": r"$\leq$"})


def tex_escape(text: str) -> str:
    """``text`` as LaTeX text (its special characters, and the few non-ASCII ones the
    tables use, as commands)."""
    return text.translate(_TEX)


def latex(run: Run, tables: ReportTables) -> str:
    """The tables of ``run`` as LaTeX, one ``table`` per op family with a booktabs
    ``tabular`` (``\\usepackage{booktabs}``)."""
    def row(cells: list[str]) -> str:
        return " & ".join(tex_escape(c) for c in cells) + r" \\"

    parts = [f"% {tex_escape(run.name)}: time and energy per op (rig report --format tex)",
             f"% {ABOUT}", ""]
    for t in _families(tables):
        caption = t.family + (" (" + "; ".join(f"{h}: {v}" for h, v in t.fixed) + ")"
                              if t.fixed else "") + ": value ± U (k = 2)"
        parts += [r"\begin{table}", r"\centering",
                  rf"\caption{{{tex_escape(caption)}}}",
                  rf"\begin{{tabular}}{{{''.join('r' if n else 'l' for n in t.numeric)}}}",
                  r"\toprule", row(t.headers), r"\midrule", *(row(r) for r in t.rows),
                  r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    if legend := _legend(tables):
        parts += ["% flags: " + "; ".join(f"{f}: {m}" for f, m in legend), ""]
    return "\n".join(parts)


#: The text formats of ``rig report --format``: name → (file suffix, writer).
TEXT_FORMATS: dict[str, tuple[str, Callable[[Run, ReportTables], str]]] = {
    "md": (".md", markdown), "tex": (".tex", latex)}
