"""The tests' memo of the report's figures (support/report_memo.py) keys a figure on the tables
it reads: a report with another section's tables added copies the figures it has in common
(what drawing again would write), and a change to a table a figure read draws it anew."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
from support import report_memo
from support.synthetic import OPS, make_run

from energyrig.results import load
from energyrig.results.report.sections import SECTIONS, report_tables
from energyrig.results.report.tables import ReportTables
from energyrig.rig.flags import FLAGS

RELATIVE = next(s for s in SECTIONS if s.name == "relative")  # one panel: cheap to draw


@pytest.fixture
def tables(tmp_path: Path) -> ReportTables:
    """The tables of a small run: two hash ops on two boards, over the payload sizes."""
    ops = tuple(o for o in OPS if o.op in ("sha256", "sha3-256"))
    return report_tables(load(make_run(tmp_path / "run", ops=ops, reps=1, n_windows=2)), FLAGS)


def _draw(tables: ReportTables, out: Path) -> dict[str, bytes]:
    """The relative figure of the hash family drawn into ``out`` (through the memo while
    ``figures_drawn_once`` is active): its files' bytes."""
    from energyrig.results.report import figures

    out.mkdir()
    assert figures.draw_figure(tables, RELATIVE, "hash", out) == "relative-hash.png"
    return {p.name: p.read_bytes() for p in out.iterdir()}


def test_another_sections_table_added_is_a_copy_of_the_same_bytes(
        tables: ReportTables, tmp_path: Path, figures_drawn_once: None) -> None:
    first = _draw(tables, tmp_path / "first")
    more = dataclasses.replace(tables, parts={**tables.parts,
                                              "toy_ops": pd.DataFrame({"op": ["sha256"]})})
    before = dict(report_memo.stats)
    copied = _draw(more, tmp_path / "more")
    assert report_memo.stats["copied"] == before["copied"] + 1
    assert report_memo.stats["drawn"] == before["drawn"]
    # what the copy wrote is what drawing the figure of those tables writes
    real = tmp_path / "real"
    real.mkdir()
    report_memo._REAL["draw"](more, RELATIVE, "hash", real)
    assert copied == {p.name: p.read_bytes() for p in real.iterdir()} == first


def test_a_table_the_figure_read_changed_draws_it_anew(
        tables: ReportTables, tmp_path: Path, figures_drawn_once: None) -> None:
    first = _draw(tables, tmp_path / "first")
    relative = tables.relative.copy()
    relative[["ratio", "ratio_ci_low", "ratio_ci_high"]] *= 1.5
    changed = dataclasses.replace(tables, parts={**tables.parts, "relative": relative})
    before = dict(report_memo.stats)
    again = _draw(changed, tmp_path / "changed")
    assert report_memo.stats["drawn"] == before["drawn"] + 1
    assert report_memo.stats["copied"] == before["copied"]
    assert again["relative-hash.json"] != first["relative-hash.json"]
