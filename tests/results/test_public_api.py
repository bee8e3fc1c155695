"""Issue 23, 11: `energyrig.results` shows its public API in a notebook (dir, help), each name
with a docstring, still imported lazily; its plotting helpers draw the report's own figures
(the same colours, the same intervals)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from support.synthetic import OPS, make_run

import energyrig.results
from energyrig.results import load, plot_allocation, plot_energy_time, plot_payload
from energyrig.results.report.sections import SECTIONS, report_tables
from energyrig.rig.flags import FLAGS

if TYPE_CHECKING:  # matplotlib: imported by the tests that draw, not at collection
    from matplotlib.figure import Figure

PUBLIC = {"Run", "RunError", "RunWriter", "load", "load_many", "query", "plot_energy_time",
          "plot_payload", "plot_relative", "plot_allocation"}


def test_dir_and_help_list_the_public_api_without_importing_pandas() -> None:
    code = """
import pydoc, sys
import energyrig.results as results
names = dir(results)
assert 'pandas' not in sys.modules, 'dir() imported pandas'
print(names)
print(pydoc.render_doc(results, renderer=pydoc.plaintext))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    listed, _, text = done.stdout.partition("\n")
    assert PUBLIC <= set(eval(listed)), listed  # noqa: S307 (our own repr of a list)
    assert set(energyrig.results.__all__) == PUBLIC
    # help() documents each name with its docstring's first line
    for name in PUBLIC:
        doc = getattr(energyrig.results, name).__doc__
        assert doc and doc.strip(), name
        assert doc.strip().splitlines()[0].strip() in text, name


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A run of symmetric and hash ops over payload sizes on two boards, and the data the
    report writes beside its energy-time and payload figures (``<file>-<family>.json``).

    The data is the report's own: its tables (``report_tables(run, FLAGS)``, every section, as
    ``write_report`` builds them), each section's figure of each family and the figure's
    :meth:`~energyrig.results.report.figures.Drawing.data` through JSON, as ``draw_figure``
    writes it. The PNGs and SVGs, the other figures and the traces a whole report would also
    save (~50 s of a loaded worker) are not what these tests compare: whole reports are
    drawn in the pipeline tests (tests/results/report/test_report.py)."""
    ops = tuple(o for o in OPS if o.op in ("aes-ecb-encrypt", "rc6-ecb-encrypt", "sha256",
                                           "sha3-256") and o.key_bits in (None, 128))
    run = make_run(tmp_path_factory.mktemp("api") / "run", ops=ops, payloads=(64, 1024),
                   n_windows=3)
    tables = report_tables(load(run), FLAGS)
    drawn: dict[str, Any] = {}
    for section in (s for s in SECTIONS if s.name in ("energy_time", "payload")):
        for family in ("symmetric", "hash"):
            drawing = section.figure(tables, family)
            assert drawing is not None, (section.name, family)
            drawn[f"{section.file_name}-{family}.json"] = json.loads(json.dumps(drawing.data()))
    return run, drawn


def _drawn(figure: Figure) -> tuple[dict[tuple[float, float], str], list[np.ndarray]]:
    """Each point a figure draws (x, y) → its colour, and the ends of its error bars (not
    the rings around a point: no face colour)."""
    # matplotlib imported here, not at collection: each `make check` worker collects every file
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.colors import to_hex

    points: dict[tuple[float, float], str] = {}
    bars: list[np.ndarray] = []
    for ax in figure.axes:
        for artist in ax.collections:
            if isinstance(artist, PathCollection) and len(artist.get_facecolors()):
                offsets, colours = artist.get_offsets(), artist.get_facecolors()
                for k, xy in enumerate(offsets):  # one colour for all, or one each
                    points[(float(xy[0]), float(xy[1]))] = to_hex(colours[k % len(colours)])
            elif isinstance(artist, LineCollection):
                bars += [np.asarray(s) for s in artist.get_segments()]
    return points, bars


def _has_bar(bars: list[np.ndarray], ends: tuple[float, float], axis: int) -> bool:
    return any(np.allclose(sorted(s[:, axis]), sorted(ends), rtol=1e-9) for s in bars
               if len(s) == 2)


@pytest.mark.parametrize(("name", "helper", "file"), [
    ("energy-time", plot_energy_time, "energy-time-{}.json"),
    ("payload", plot_payload, "payload-{}.json")])
def test_the_plotting_helpers_draw_what_the_report_draws(
        report: tuple[Path, dict[str, Any]], name: str, helper, file: str) -> None:
    from matplotlib.figure import Figure

    run_dir, report_data = report
    run = load(run_dir)
    for family in ("symmetric", "hash"):
        figure = helper(run, family)
        assert isinstance(figure, Figure)
        points, bars = _drawn(figure)
        drawn = report_data[file.format(family)]["points"]
        assert len(drawn) > 2
        for p in drawn:  # the report's point, in the report's colour, with its interval
            assert points[(p["x"], p["y"])] == p["colour"], (family, p["label"])
            assert _has_bar(bars, tuple(p["y_ci"]), axis=1), (family, p["label"])
            if "x_ci" in p:
                assert _has_bar(bars, tuple(p["x_ci"]), axis=0), (family, p["label"])
    # a run directory does as well as a loaded run
    assert _drawn(helper(run_dir, "hash"))[0] == _drawn(helper(run, "hash"))[0]


def test_a_figure_the_run_has_not_is_a_value_error_naming_what_it_has(
        report: tuple[Path, dict[str, Any]]) -> None:
    run_dir, _ = report
    with pytest.raises(ValueError, match=r"no energy_time figure of family 'public-key' "
                                         r"\(families measured: symmetric, hash\)"):
        plot_energy_time(run_dir, "public-key")
    with pytest.raises(ValueError, match="no factorial figure"):
        plot_allocation(run_dir)
