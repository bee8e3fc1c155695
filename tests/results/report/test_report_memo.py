"""The tests' memo of the report's figures (support/report_memo.py) copies only what drawing
again would write: a figure drawn twice from the same run is the same bytes, the memo's copy
is those bytes, and a test that breaks the drawing still sees it break."""
from __future__ import annotations

from pathlib import Path

import pytest
from support import report_memo
from support.synthetic import OPS, make_run

from energyrig.results import load
from energyrig.results.report.sections import SECTIONS, report_tables
from energyrig.results.report.tables import ReportTables, Section
from energyrig.rig.flags import FLAGS


def _tables(tmp_path: Path, name: str) -> ReportTables:
    """The tables of a small run: two hash ops on two boards, over the payload sizes."""
    ops = tuple(o for o in OPS if o.op in ("sha256", "sha3-256"))
    return report_tables(load(make_run(tmp_path / name, ops=ops, reps=1, n_windows=2)), FLAGS)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.fixture
def relative() -> Section:
    """The section of the ratios to the reference: one panel, among the cheapest to draw."""
    return next(s for s in SECTIONS if s.name == "relative")


def test_a_figure_drawn_again_from_the_same_run_is_the_same_files(
        tmp_path: Path, relative: Section) -> None:
    # matplotlib imported here, not at collection: each `make check` worker collects every file
    from energyrig.results.report import figures
    for name in ("a", "b"):
        (tmp_path / f"out-{name}").mkdir()
        figures.draw_figure(_tables(tmp_path, name), relative, "hash", tmp_path / f"out-{name}")
    drawn = _files(tmp_path / "out-a")
    assert sorted(drawn) == ["relative-hash.csv", "relative-hash.json", "relative-hash.png",
                             "relative-hash.svg"]
    assert drawn == _files(tmp_path / "out-b")


def test_the_memo_copies_what_it_drew_and_steps_aside_for_a_broken_savefig(
        tmp_path: Path, relative: Section, figures_drawn_once: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.figure

    from energyrig.results.report import figures
    tables = _tables(tmp_path, "run")
    real = tmp_path / "real"
    real.mkdir()
    report_memo._REAL["draw"](tables, relative, "hash", real)
    copied = dict(report_memo.stats)
    for name in ("first", "again"):
        (tmp_path / name).mkdir()
        assert figures.draw_figure(tables, relative, "hash", tmp_path / name) == \
            "relative-hash.png"
        assert _files(tmp_path / name) == _files(real)
    assert report_memo.stats["copied"] >= copied["copied"] + 1  # the second at least

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full_disk)
    (tmp_path / "full").mkdir()
    with pytest.raises(OSError, match="No space left"):
        figures.draw_figure(tables, relative, "hash", tmp_path / "full")
