"""The report's figures drawn once per process: a test of the report that draws a figure an
earlier test drew (the same section and family, the same matplotlib settings, the same data
in each of the tables the figure read when it was drawn) gets the files copied, as
:func:`support.synthetic.make_run` copies a run. The tables a figure reads are noted while it
is drawn (each attribute read of them), so a report with another section's tables added or
left out, whose figures read none of those, copies the figures it has in common.

A module opts in with ``pytestmark = pytest.mark.usefixtures("figures_drawn_once")``: while
its tests run, :func:`energyrig.results.report.figures.draw_figure` (what ``draw_figures`` and
so ``write_report`` call for each figure) is :func:`draw_figure_once`. Drawing is
deterministic (the same tables give the same PNG, SVG, JSON and CSV bytes:
``tests/results/report/test_report_memo.py``), so a copy is what drawing again would write.
The memo steps aside where a test has replaced ``Figure.savefig`` (a full disk, say), and for
a section it cannot key (a function that cannot be pickled by name).
"""
from __future__ import annotations

import atexit
import copy
import functools
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

#: (section, family, settings) -> the figures drawn of it: the names of the tables it read,
#: the digest of what they held, and (folder, files, image).
_DRAWN: dict[str, list[tuple[tuple[str, ...], str, tuple[Path, list[str], str | None]]]] = {}
_REAL: dict[str, Any] = {}  # draw_figure and Figure.savefig as the report module has them
stats = {"drawn": 0, "copied": 0}


_MISSING = "<no such table>"


@functools.cache
def _figures_dir() -> Path:
    """A folder for the figures drawn first, one per process, removed when it exits."""
    path = Path(tempfile.mkdtemp(prefix="rig-test-figures-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _figure_key(section: Section, family: str) -> str | None:
    """The section (its functions by name), the family, the figure module's settings and
    matplotlib's; None where the section cannot be pickled."""
    import matplotlib

    from energyrig.results.report import figures

    settings = repr((figures.FORMATS, figures.DPI, sorted(matplotlib.rcParams.items())))
    try:
        return hashlib.sha256(pickle.dumps((section, family, settings), protocol=5)).hexdigest()
    except (pickle.PicklingError, AttributeError, TypeError):
        return None


def _digest(tables: ReportTables, names: tuple[str, ...]) -> str | None:
    """What the tables hold under ``names`` (a name they have not, as such; methods left
    out: what they read is read through the names too); None where it cannot be pickled."""
    held: dict[str, Any] = {}
    for name in names:
        try:
            value = getattr(tables, name)
        except AttributeError:
            value = _MISSING
        if not callable(value):
            held[name] = value
    try:
        return hashlib.sha256(pickle.dumps(held, protocol=5)).hexdigest()
    except (pickle.PicklingError, AttributeError, TypeError):
        return None


def _reading(tables: ReportTables) -> tuple[ReportTables, list[str]]:
    """A copy of ``tables`` that notes the name of each attribute read of it (a table, a
    property such as ``ok``, one it has not), and the list of those names."""
    read: list[str] = []
    base = type(tables)

    class Reading(base):  # type: ignore[misc, valid-type]
        def __getattribute__(self, name: str) -> Any:
            if not name.startswith("__"):
                read.append(name)
            return base.__getattribute__(self, name)

    reading = copy.copy(tables)
    object.__setattr__(reading, "__class__", Reading)  # a frozen dataclass
    return reading, read


def draw_figure_once(tables: ReportTables, section: Section, family: str, out_dir: Path
                     ) -> str | None:
    """:func:`~energyrig.results.report.figures.draw_figure`, or a copy of what it wrote for
    the same figure before in this process: the same section, family and settings, and the
    same data in each of the tables the figure read when it was drawn (what else the tables
    hold, another section's tables say, does not change it)."""
    from matplotlib.figure import Figure

    draw = _REAL["draw"]
    key = _figure_key(section, family) if Figure.savefig is _REAL["savefig"] else None
    if key is None:
        return draw(tables, section, family, out_dir)
    for names, digest, (folder, files, image) in _DRAWN.get(key, []):
        if _digest(tables, names) == digest:
            for name in files:
                shutil.copyfile(folder / name, out_dir / name)
            stats["copied"] += 1
            return image
    before = {p.name for p in out_dir.iterdir()}
    reading, read = _reading(tables)
    image = draw(reading, section, family, out_dir)
    names = tuple(sorted(set(read)))
    digest = _digest(tables, names)
    files = sorted(p.name for p in out_dir.iterdir() if p.name not in before)
    if digest is not None:
        folder = Path(tempfile.mkdtemp(dir=_figures_dir()))
        for name in files:
            shutil.copyfile(out_dir / name, folder / name)
        _DRAWN.setdefault(key, []).append((names, digest, (folder, files, image)))
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
