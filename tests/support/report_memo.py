"""The report's figures drawn once per process: a test of the report that draws a figure an
earlier test drew (the same section and family of the same tables, the same matplotlib
settings) gets the files copied, as :func:`support.synthetic.make_run` copies a run.

A module opts in with ``pytestmark = pytest.mark.usefixtures("figures_drawn_once")``: while
its tests run, :func:`energyrig.results.report.figures.draw_figure` (what ``draw_figures`` and
so ``write_report`` call for each figure) is :func:`draw_figure_once`. Drawing is
deterministic (the same tables give the same PNG, SVG, JSON and CSV bytes:
``tests/results/report/test_report_memo.py``), so a copy is what drawing again would write.
The memo steps aside where a test has replaced ``Figure.savefig`` (a full disk, say), and for
a section it cannot key (a function that cannot be pickled by name).
"""
from __future__ import annotations

import hashlib
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # matplotlib and the figures: imported by the modules that opt in only
    from energyrig.results.report.tables import ReportTables, Section

_DRAWN: dict[str, tuple[Path, list[str], str | None]] = {}  # key -> (folder, files, image)
_REAL: dict[str, Any] = {}  # draw_figure and Figure.savefig as the report module has them
stats = {"drawn": 0, "copied": 0}


def _key(tables: ReportTables, section: Section, family: str) -> str | None:
    """What a figure depends on: the tables (their data; not which other sections the report
    has), the section (its functions by name), the family, the figure module's settings and
    matplotlib's; None where the section cannot be pickled."""
    import matplotlib

    from energyrig.results.report import figures

    data = {k: v for k, v in vars(tables).items() if k != "sections"}
    settings = repr((figures.FORMATS, figures.DPI, sorted(matplotlib.rcParams.items())))
    try:
        pickled = pickle.dumps((data, section, family, settings), protocol=5)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None
    return hashlib.sha256(pickled).hexdigest()


def draw_figure_once(tables: ReportTables, section: Section, family: str, out_dir: Path
                     ) -> str | None:
    """:func:`~energyrig.results.report.figures.draw_figure`, or a copy of what it wrote for
    the same figure before in this process."""
    from matplotlib.figure import Figure

    draw = _REAL["draw"]
    key = _key(tables, section, family) if Figure.savefig is _REAL["savefig"] else None
    if key is None:
        return draw(tables, section, family, out_dir)
    if key in _DRAWN:
        folder, names, image = _DRAWN[key]
        for name in names:
            shutil.copyfile(folder / name, out_dir / name)
        stats["copied"] += 1
        return image
    before = {p.name for p in out_dir.iterdir()}
    image = draw(tables, section, family, out_dir)
    names = sorted(p.name for p in out_dir.iterdir() if p.name not in before)
    folder = Path(tempfile.mkdtemp(prefix="rig-test-figure-"))
    for name in names:
        shutil.copyfile(out_dir / name, folder / name)
    _DRAWN[key] = (folder, names, image)
    stats["drawn"] += 1
    return image


@pytest.fixture(scope="module")
def figures_drawn_once() -> Iterator[None]:
    """While the module's tests run, the report draws each distinct figure once."""
    from matplotlib.figure import Figure

    from energyrig.results.report import figures

    _REAL.setdefault("draw", figures.draw_figure)
    _REAL.setdefault("savefig", Figure.savefig)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(figures, "draw_figure", draw_figure_once)
        yield
