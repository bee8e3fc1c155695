"""The report's section on the CPU clock (issue 22 item 5; study 4 of the literature): each
workload's energy and time per op against the clock it ran at, where a run varied it.

Its table (:func:`clock_tables`, pandas only), its figure (:func:`clock_figure`, matplotlib
imported inside, only to draw) and its HTML (:func:`clock_html`) are registered as one
:class:`~energyrig.results.report.tables.Section` in
:data:`~energyrig.results.report.sections.SECTIONS`. Units: SI (Hz, s, J).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from energyrig.results.report.page import Column, figure_html, html_table
from energyrig.results.report.tables import Drawn, ReportTables, by_factor, config_label
from energyrig.results.store.read import Run
from energyrig.units import format_si

#: Per workload and clock: its series (the workload but for its clock), then the summary's.
SERIES = "series"


def _series(row: pd.Series) -> str:
    """``sha256 1,024 B · mps2-an386``: the workload without its clock."""
    size = f" {int(row['payload_bytes']):,} B" if pd.notna(row.get("payload_bytes")) else ""
    return f"{config_label(row, with_board=False)}{size} · {row['board']}"


def clock_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The workloads of ``summary`` (:func:`~energyrig.results.report.tables
    .summarise_workloads`) measured at more than one CPU clock, one row per clock: their
    :data:`SERIES`, ``cpu_hz`` and figures per op, with ``lowest`` true at the clock of a
    series' least gross energy per op and ``apart`` true there when its 95 % CI lies below
    every other clock's (:func:`_apart`); empty when no workload ran at two clocks."""
    if summary.empty or "cpu_hz" not in summary or summary["cpu_hz"].isna().all():
        return pd.DataFrame()
    rows = summary[summary["cpu_hz"].notna()].copy()
    rows[SERIES] = [_series(r) for _, r in rows.iterrows()]
    clocks = rows.groupby(SERIES)["cpu_hz"].transform("nunique")
    rows = by_factor(rows[clocks > 1])
    if rows.empty:
        return rows
    least = rows.groupby(SERIES)["energy_per_op_j_mean"].transform("min")
    rows = rows.assign(lowest=rows["energy_per_op_j_mean"] == least)
    return rows.assign(apart=[_apart(rows[rows[SERIES] == r[SERIES]], i) if r["lowest"]
                              else False for i, r in rows.iterrows()])


def _apart(series: pd.DataFrame, lowest: Any) -> bool:
    """Whether the 95 % CI of the least gross energy per op (row ``lowest`` of ``series``)
    lies wholly below every other clock's: only then is that clock significantly the least
    (False where a CI is not known)."""
    if not {"energy_per_op_j_ci_low", "energy_per_op_j_ci_high"} <= set(series):
        return False
    others = series.drop(index=lowest)["energy_per_op_j_ci_low"]
    return bool((series.at[lowest, "energy_per_op_j_ci_high"] < others).all())


def clock_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    """The section's table: ``clock`` (:func:`clock_table` of the run's workloads)."""
    return {"clock": clock_table(tables.summary)}


def clock_figure(tables: ReportTables, family: str) -> Drawn | None:
    """Gross energy per op against the clock, one line per series, its 95 % CI as bars (the
    figure's data: ``x`` the clock, Hz; ``y`` the energy per op, J)."""
    table = tables.clock
    if table.empty:
        return None
    from energyrig.results.report.figures import (  # matplotlib: only to draw
        Drawing,
        Figure,
        series_colours,
    )
    series = tuple(dict.fromkeys(table[SERIES]))
    colours = series_colours(series)
    fig = Figure(figsize=(7.5, 4.2), layout="tight")
    ax = fig.subplots()
    points: list[dict[str, Any]] = []
    for name in series:
        s = table[table[SERIES] == name].sort_values("cpu_hz")
        x, y = s["cpu_hz"].to_numpy() / 1e6, s["energy_per_op_j_mean"].to_numpy() * 1e6
        low = s["energy_per_op_j_ci_low"].to_numpy() * 1e6
        high = s["energy_per_op_j_ci_high"].to_numpy() * 1e6
        ax.errorbar(x, y, yerr=[y - low, high - y], marker="o", capsize=3, label=name,
                    color=colours[name])
        points.extend({"panel": "", "label": name, "x": float(hz), "y": float(e),
                       "colour": colours[name], "y_ci": [float(lo), float(hi)]}
                      for hz, e, lo, hi in zip(s["cpu_hz"], s["energy_per_op_j_mean"],
                                               s["energy_per_op_j_ci_low"],
                                               s["energy_per_op_j_ci_high"], strict=True))
    ax.set_xlabel("CPU clock (MHz)")
    ax.set_ylabel("gross energy per op (µJ)")
    ax.set_title("Energy per op against the CPU clock", fontsize=9)
    ax.legend(fontsize=8)
    return Drawing(fig, "95 % CI of the mean over the windows", points)


CLOCK_COLUMNS: tuple[Column, ...] = (
    Column("workload", lambda r: r[SERIES], numeric=False),
    Column("clock", lambda r: format_si(r["cpu_hz"], "Hz")),
    Column("time / op", lambda r: format_si(r["time_per_op_s_mean"], "s")),
    Column("gross energy / op", lambda r: format_si(r["energy_per_op_j_mean"], "J")),
    Column("95 % CI", lambda r: (f"{format_si(r['energy_per_op_j_ci_low'], 'J')} .. "
                                 f"{format_si(r['energy_per_op_j_ci_high'], 'J')}")),
    Column("net energy / op", lambda r: format_si(r["net_energy_per_op_j_mean"], "J")),
    Column("mean power", lambda r: format_si(r["mean_power_w_mean"], "W")),
    Column("least energy", lambda r: ("" if not r["lowest"] else "◀ least" if r["apart"]
                                      else "lowest mean; CIs overlap"), numeric=False),
)


def clock_html(run: Run, tables: ReportTables, family: str,
               images: Mapping[str, str]) -> list[str]:
    """The workloads against the clock, where some ran at more than one."""
    if tables.clock.empty:
        return []
    return ["<h2>Against the CPU clock</h2>",
            ("<p class='note'>Each workload at every clock it ran at (the plan's "
             "<code>cpu_hz</code>): the same cycles take cycles / clock, and the energy per op "
             "is the power at that clock over that time, so it falls while the part of the "
             "power that does not follow the clock dominates and rises where the power grows "
             "faster than the clock. On the simulated bench that power is the model's "
             "(docs/sweep.md, \"The CPU clock\").</p>"),
            figure_html(images.get(""), "energy per op against the CPU clock"),
            html_table(tables.clock, CLOCK_COLUMNS)]
