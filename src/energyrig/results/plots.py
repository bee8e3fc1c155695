"""The report's figures in a notebook: each helper draws one figure of ``rig report`` from a
run's DataFrames, with the report's own functions (its sections' figures,
:data:`energyrig.results.report.sections.SECTIONS`), so colours, markers and intervals are
the report's: an op keeps the colour it has in the report
(:func:`~energyrig.results.report.figures.series_colours` of the run's configurations), and
every point has the 95 % confidence interval (and, where stated, U) the report draws.

    >>> from energyrig.results import load, plot_energy_time
    >>> run = load("runs/quick")
    >>> plot_energy_time(run, "symmetric").savefig("symmetric.svg")

To draw part of a run, draw a run of its filtered tables:
``dataclasses.replace(run, points=run.points[...], windows=run.windows[...])``.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from energyrig.results.report.sections import SECTIONS, report_tables
from energyrig.results.report.tables import family_order
from energyrig.results.store.read import Run, load

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(run: Run | str | os.PathLike[str], section_name: str, family: str) -> Figure:
    """The figure of the report's section ``section_name`` for ``family`` (``""``: a figure
    of the whole run), drawn by the section's own function from ``run``'s tables.

    Raises
    ------
    ValueError
        The run has nothing that figure draws (naming the families that have).
    """
    run = run if isinstance(run, Run) else load(run)
    section = next(s for s in SECTIONS if s.name == section_name)
    assert section.figure is not None
    tables = report_tables(run, {}, sections=(section,))
    drawing = (section.figure(tables, family)
               if tables.measured or not section.measured else None)
    if drawing is None:
        what = f" of family {family!r}" if family else ""
        families = ", ".join(family_order(tables.ok["family"])) or "none"
        raise ValueError(f"{run.name}: the report has no {section_name} figure{what} "
                         f"(families measured: {families})")
    return drawing.figure


def plot_energy_time(run: Run | str | os.PathLike[str], family: str) -> Figure:
    """Net energy against time per op of ``family`` (``symmetric``, ``hash`` ...) in
    ``run`` (a loaded run or its directory), as the report draws it: one panel per payload
    size (and kind of op), one point per configuration with the 95 % CI of both means as
    error bars (s, J). The figure is not shown: ``.savefig`` it, or show it in a notebook.
    A ``ValueError`` when ``family`` has no measured point."""
    return _figure(run, "energy_time", family)


def plot_payload(run: Run | str | os.PathLike[str], family: str) -> Figure:
    """Time and net energy per op of ``family`` in ``run`` against payload size, as the
    report draws them: the fitted lines, each point's 95 % CI and, where stated, its
    expanded uncertainty U (k = 2) as error bars (s, J). A ``ValueError`` when no op of
    ``family`` has a payload regression (one payload size, or none measured)."""
    return _figure(run, "payload", family)


def plot_relative(run: Run | str | os.PathLike[str], family: str) -> Figure:
    """Each op's time and net energy relative to its family's reference (AES-128, SHA-256
    ...) in ``run``, as the report draws them (ratios, geometric means over matched
    workloads). A ``ValueError`` when no op of ``family`` was compared with a reference."""
    return _figure(run, "relative", family)


def plot_allocation(run: Run | str | os.PathLike[str]) -> Figure:
    """The allocation of variation of a 2^k design in ``run``: the % of the variation of
    time and net energy per op each factor and interaction explains, as the report draws
    it. A ``ValueError`` when the run's measured points do not form a 2^k design."""
    return _figure(run, "factorial", "")
