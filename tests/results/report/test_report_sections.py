"""The report's sections: one registered object each (its tables, its figure, its HTML), and
the registry drives the tables, the figures and the page."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest

from energyrig.domain import Point, Window
from energyrig.results import RunWriter, load
from energyrig.results.report.page import page_html
from energyrig.results.report.sections import SECTIONS, report_tables
from energyrig.results.report.tables import ReportTables, Section
from energyrig.results.store.read import Run
from energyrig.rig.flags import FLAGS

if TYPE_CHECKING:  # matplotlib: imported where a figure is drawn, not at collection
    from energyrig.results.report.figures import Drawing

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Two families (hash, symmetric), each one op at two payload sizes, twice (a 2^2
    design: op × payload); written once for the module (its tests only read it: the same
    tables, so each figure drawn once, support/report_memo.py)."""
    run_dir = tmp_path_factory.mktemp("sections") / "run"
    with RunWriter.create(run_dir, plan={"name": "sections"}) as writer:
        for op, family, key_bits in (("sha256", "hash", None),
                                     ("aes-ecb-encrypt", "symmetric", 128)):
            for size in (64, 256):
                for rep in range(2):
                    cost = size * 1e-9 * (1 + 0.01 * rep)
                    writer.write_point(
                        Point(op=op, family=family, board="host", key_bits=key_bits,
                              payload_bytes=size, rep=rep),
                        [Window(0.0, cost * 1e3, 100, cost, 0.0),
                         Window(0.0, cost * 1.02e3, 100, cost * 1.02, 0.0)], batch_n=10)
    return load(run_dir)


def _ops_tables(run: Run, tables: ReportTables) -> dict[str, Any]:
    return {"toy_ops": tables.ok.groupby("op").size().rename("points").reset_index()}


def _ops_figure(tables: ReportTables, family: str) -> Drawing:
    from matplotlib.figure import Figure

    from energyrig.results.report.figures import Drawing
    figure = Figure()
    figure.subplots().bar(tables.toy_ops["op"], tables.toy_ops["points"])
    return Drawing(figure, "", [{"label": str(op), "x": i, "y": float(n)} for i, (op, n)
                                in enumerate(zip(tables.toy_ops["op"], tables.toy_ops["points"],
                                                 strict=True))])


def _ops_html(run: Run, tables: ReportTables, family: str,
              images: Mapping[str, str]) -> list[str]:
    counts = ", ".join(f"{r.op}: {r.points}" for r in tables.toy_ops.itertuples())
    return ["<h2 id='toy'>Toy</h2>", f"<p>points per op: {counts}</p>",
            f"<img src='{images['']}'>"]


TOY = Section("toy", _ops_html, tables=_ops_tables, figure=_ops_figure, measured=True)


def _family_html(run: Run, tables: ReportTables, family: str,
                 images: Mapping[str, str]) -> list[str]:
    return [f"<p class='toy'>toy of {family}: {images.get(family)}</p>"]


def _family_figure(tables: ReportTables, family: str) -> Drawing | None:
    from matplotlib.figure import Figure

    from energyrig.results.report.figures import Drawing
    return None if family == "hash" else Drawing(Figure())


TOY_FAMILY = Section("toy_family", _family_html, figure=_family_figure, per_family=True,
                     measured=True)


def _report(run: Run, sections: tuple[Section, ...], out: Path) -> tuple[ReportTables, str]:
    from energyrig.results.report.figures import draw_figures

    tables = report_tables(run, FLAGS, sections)
    out.mkdir()
    return tables, page_html(run, tables, draw_figures(tables, out))


@pytest.mark.pipeline  # two whole reports drawn (tests/README.md)
def test_a_section_registered_is_in_the_tables_the_figures_and_the_page(
        run: Run, tmp_path: Path) -> None:
    tables, page = _report(run, (*SECTIONS, TOY), tmp_path / "report")
    assert list(tables.toy_ops["op"]) == ["aes-ecb-encrypt", "sha256"]
    assert list(tables.toy_ops["points"]) == [4, 4]
    # its figure, written under its name with its data, and shown by its HTML
    data = json.loads((tmp_path / "report" / "toy.json").read_text())
    assert [(p["label"], p["y"]) for p in data["points"]] == [("aes-ecb-encrypt", 4.0),
                                                              ("sha256", 4.0)]
    assert (tmp_path / "report" / "toy.png").read_bytes()[:4] == b"\x89PNG"
    assert "<p>points per op: aes-ecb-encrypt: 4, sha256: 4</p>" in page
    assert "<img src='toy.png'>" in page
    # at its place in the order: after the last registered section
    assert page.index(">Failed and skipped points<") < page.index("<h2 id='toy'>Toy</h2>")
    # the same run without it: none of it
    tables, page = _report(run, SECTIONS, tmp_path / "plain")
    with pytest.raises(AttributeError, match="toy_ops"):
        _ = tables.toy_ops
    assert "Toy" not in page and not (tmp_path / "plain" / "toy.png").exists()


def test_a_per_family_section_stands_under_each_family(run: Run, tmp_path: Path) -> None:
    at = next(i for i, s in enumerate(SECTIONS) if s.name == "payload") + 1
    sections = (*SECTIONS[:at], TOY_FAMILY, *SECTIONS[at:])
    _, page = _report(run, sections, tmp_path / "report")
    assert re.findall(r"<p class='toy'>toy of (\w+): ([^<]+)</p>", page) == [
        ("symmetric", "toy-family-symmetric.png"), ("hash", "None")]
    # under each family's heading, after its payload section, before what follows
    heads = [page.index(f"<h2>{f}</h2>") for f in ("symmetric", "hash")]
    toys = [page.index(f"toy of {f}:") for f in ("symmetric", "hash")]
    payload = [m.start() for m in re.finditer("<h3>Against payload size</h3>", page)]
    assert heads[0] < payload[0] < toys[0] < heads[1] < payload[1] < toys[1]
    assert toys[1] < page.index(">Paired comparisons<")
    assert sorted(p.name for p in (tmp_path / "report").glob("toy*")) == [
        "toy-family-symmetric.csv", "toy-family-symmetric.json", "toy-family-symmetric.png",
        "toy-family-symmetric.svg"]


def test_the_registry_drives_the_tables_figures_and_page(run: Run, tmp_path: Path) -> None:
    without = tuple(s for s in SECTIONS if s.name != "relative")
    tables, page = _report(run, without, tmp_path / "report")
    assert "Relative to the reference" not in page
    assert not list((tmp_path / "report").glob("relative-*"))
    with pytest.raises(AttributeError, match="relative"):
        _ = tables.relative
    # the others are all there
    assert ">Paired comparisons<" in page and "<h3>Against payload size</h3>" in page
    assert sorted(p.name for p in (tmp_path / "report").glob("*.png")) == [
        "allocation.png", "energy-time-hash.png", "energy-time-symmetric.png", "payload-hash.png",
        "payload-symmetric.png"]
    # the order is the registry's
    moved = (*(s for s in SECTIONS if s.name != "flags"),
             next(s for s in SECTIONS if s.name == "flags"))
    _, page = _report(run, moved, tmp_path / "moved")
    assert page.index(">Failed and skipped points<") < page.index("<h2 id='flags'>Flags</h2>")


def test_without_a_measured_point_the_measured_sections_make_way_for_one_sentence(
        tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "empty"):
        pass
    run = load(tmp_path / "empty")
    tables, page = _report(run, (*SECTIONS, TOY, TOY_FAMILY), tmp_path / "report")
    assert not tables.measured
    with pytest.raises(AttributeError):
        _ = tables.toy_ops  # a measured section computes nothing without a measured point
    assert page.count("<p>No point was measured.</p>") == 1
    assert page.index("<h2 id='flags'>Flags</h2>") < page.index("No point was measured")
    assert page.index("No point was measured") < page.index(">Failed and skipped points<")
    assert "Toy" not in page and "toy of" not in page
    assert list((tmp_path / "report").iterdir()) == []
    assert isinstance(tables.flags, pd.DataFrame)  # a section for every run has its table
