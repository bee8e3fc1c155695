"""The report's sections, in the page's order: each one registered object that holds its
tables, its figure and its HTML (:class:`~energyrig.results.report.tables.Section`).

:func:`report_tables` computes the tables of every section, :func:`~energyrig.results
.report.figures.draw_figures` draws their figures and :func:`~energyrig.results.report.page
.page_html` writes their HTML, all three by walking :data:`SECTIONS` (or the sections given):
a new section is one entry here, its three pieces written beside their kind (its tables in
:mod:`~energyrig.results.report.tables`, its drawing in :mod:`~energyrig.results.report
.figures`, its HTML in :mod:`~energyrig.results.report.page`). A figure's function here
imports :mod:`~energyrig.results.report.figures` (and so matplotlib) inside itself, when it
draws, never before.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from energyrig.results.report.clock import clock_figure, clock_html, clock_tables
from energyrig.results.report.page import (
    comparisons_html,
    estimates_html,
    factorial_html,
    footprint_html,
    legend_html,
    methods_html,
    payload_html,
    problems_html,
    relative_html,
    uncertainty_html,
    warmups_html,
    workloads_html,
)
from energyrig.results.report.tables import (
    Drawn,
    ReportTables,
    Section,
    by_factor,
    comparison_tables,
    factorial_tables,
    flag_tables,
    footprint_tables,
    payload_tables,
    recorded_supply_v,
    relative_tables,
    series_labels,
    summarise_workloads,
    varying_factors,
    warmup_tables,
    with_current_and_charge,
    with_family,
)
from energyrig.flags import Flag
from energyrig.results.store.read import Run


def _energy_time_figure(tables: ReportTables, family: str) -> Drawn | None:
    from energyrig.results.report.figures import (  # matplotlib: only to draw
        figure_energy_time,
        series_colours,
    )
    return figure_energy_time(tables.summary, family, series_colours(tables.series))


def _relative_figure(tables: ReportTables, family: str) -> Drawn | None:
    if not tables.has_relative(family):
        return None
    from energyrig.results.report.figures import figure_relative  # matplotlib: only to draw
    return figure_relative(tables.relative, family)


def _payload_figure(tables: ReportTables, family: str) -> Drawn | None:
    if not tables.has_payload_fits(family):
        return None
    from energyrig.results.report.figures import (  # matplotlib: only to draw
        figure_payload,
        series_colours,
    )
    return figure_payload(tables.ok, tables.fits, family, series_colours(tables.series))


def _allocation_figure(tables: ReportTables, family: str) -> Drawn | None:
    if tables.factorial is None:
        return None
    from energyrig.results.report.figures import figure_allocation  # matplotlib: only to draw
    return figure_allocation(tables.factorial.allocation)


#: The report's sections, in the page's order (after its head: the run, its manifest, the
#: firmware's conditions and the count of points).
SECTIONS: tuple[Section, ...] = (
    Section("flags", legend_html, tables=flag_tables),
    Section("estimates", estimates_html, measured=True),
    Section("energy_time", workloads_html, figure=_energy_time_figure, per_family=True,
            measured=True),
    Section("relative", relative_html, tables=relative_tables, figure=_relative_figure,
            per_family=True, measured=True),
    Section("payload", payload_html, tables=payload_tables, figure=_payload_figure,
            per_family=True, measured=True),
    Section("clock", clock_html, tables=clock_tables, figure=clock_figure, measured=True),
    Section("warmups", warmups_html, tables=warmup_tables, measured=True),
    Section("comparisons", comparisons_html, tables=comparison_tables, measured=True),
    Section("factorial", factorial_html, tables=factorial_tables, figure=_allocation_figure,
            measured=True, file="allocation"),
    Section("uncertainty", uncertainty_html, measured=True),
    Section("methods", methods_html),
    Section("footprint", footprint_html, tables=footprint_tables),
    Section("problems", problems_html),
)


def report_tables(run: Run, flags: Mapping[str, Flag],
                  sections: Sequence[Section] = SECTIONS) -> ReportTables:
    """The tables of ``run`` (finished or still being written: what is there): those every
    section reads, then each section's own (:attr:`~energyrig.results.report.tables.Section
    .tables`, in the order of ``sections``; a section that needs a measured point has none
    without one). ``flags`` explain the flags the legend lists (the registry of every
    layer's flags, :data:`energyrig.rig.flags.FLAGS`).

    Raises
    ------
    ConfigError
        The plan recorded in the manifest has a malformed ``[[compare]]`` entry.
    """
    points = by_factor(run.points.assign(family=with_family(run.points)))
    ok = points[points["status"] == "ok"]
    windows = run.windows[run.windows["point_key"].isin(ok["point_key"])]
    supply_v = recorded_supply_v(run.manifest)
    summary = (with_current_and_charge(summarise_workloads(windows, ok), supply_v)
               if len(windows) else pd.DataFrame())
    tables = ReportTables(points=points, windows=windows, summary=summary, supply_v=supply_v,
                          factors=varying_factors(points), series=series_labels(points),
                          sections=tuple(sections), flag_notes=flags)
    for section in sections:
        if section.tables is not None and (tables.measured or not section.measured):
            tables.parts.update(section.tables(run, tables))
    return tables
