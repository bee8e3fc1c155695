"""Issue 23 item 6: the report's figures claim no more than its statistics do — every ratio
drawn carries the CI of the paired-comparison row it comes from, a best is marked only where
it is significantly best, a Pareto front replaces a distance that mixed ns with nJ, no
filler chart of a family with one op, and payload fits are drawn as the curves they are on
the axes shown, with their bands and their numbers."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from energyrig.domain import Point, Window
from energyrig.results import RunWriter, load
from energyrig.results.report.page import page_html
from energyrig.results.report.sections import report_tables
from energyrig.results.report.tables import summarise_workloads
from energyrig.rig.flags import FLAGS

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

# Each window's spread around a point's mean: the first rep's and the second's.
SPREAD = ((1.0, 1.01, 0.99), (1.004, 0.996, 1.0))


def _write(writer: RunWriter, op: str, family: str, cost: float, *, key_bits: int | None = None,
           sizes: Sequence[int | None] = (64, 256, 1024), reps: int = 2,
           jitter: Sequence[float] = (1.0, 1.0), spread: float = 1.0) -> None:
    """Points of ``op`` at each size and rep: time and energy per op ``cost`` (s, J) per byte
    (or once, without a size), rep ``r`` scaled by ``jitter[r]``, windows spread by
    ``spread`` times :data:`SPREAD`."""
    for size in sizes:
        for rep in range(reps):
            c = cost * (size or 1) * jitter[rep]
            writer.write_point(
                Point(op=op, family=family, board="host", key_bits=key_bits,
                      payload_bytes=size, rep=rep),
                [Window(0.0, c * 10 * (1 + (f - 1) * spread), 100,
                        c * 1e-3 * 10 * (1 + (f - 1) * spread), 0.0)
                 for f in SPREAD[rep % 2]], batch_n=10)


def _ratio_run(run_dir: Path, plan: dict | None = None) -> Path:
    """Symmetric ops against AES-128: AES-256 clearly dearer, RC6 within the noise of the
    reference (its rep 0 dearer, its rep 1 cheaper); a hash family of one op."""
    with RunWriter.create(run_dir, plan=plan or {"name": "ratios"}) as writer:
        _write(writer, "aes-ecb-encrypt", "symmetric", 1e-6, key_bits=128)
        _write(writer, "aes-ecb-encrypt", "symmetric", 1.33e-6, key_bits=256)
        _write(writer, "rc6-ecb-encrypt", "symmetric", 1e-6, key_bits=128,
               jitter=(1.2, 0.85))
        _write(writer, "sha256", "hash", 2e-6)
    return run_dir


@pytest.fixture(scope="module")
def ratio_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The ratio run and a folder of its report: the page of every section, as write_report
    builds it from the same tables, and the one kind of figure these tests read drawn into
    it, each family's bars relative to its reference (draw_figures of that section). The
    energy-time and payload figures, two thirds of the drawing, are not drawn: the page
    shows no image of them, the rest of it is the same."""
    from energyrig.results.report.figures import draw_figures

    run = _ratio_run(tmp_path_factory.mktemp("runs") / "ratios")
    out = tmp_path_factory.mktemp("report")
    loaded = load(run)
    tables = report_tables(loaded, FLAGS)
    relative = tuple(s for s in tables.sections if s.name == "relative")
    page = page_html(loaded, tables, draw_figures(replace(tables, sections=relative), out))
    (out / "report.html").write_text(page, encoding="utf-8")
    return run, out


def test_every_ratio_drawn_has_the_ci_of_its_paired_table_row(
        ratio_report: tuple[Path, Path]) -> None:
    run, report = ratio_report
    drawn = json.loads((report / "relative-symmetric.json").read_text())["points"]
    table = report_tables(load(run), FLAGS).comparisons
    assert {(p["a"], p["metric"]) for p in drawn} == {
        (a, m) for a in ("aes-ecb-encrypt 256", "rc6-ecb-encrypt 128")
        for m in ("time", "net energy")}
    for p in drawn:
        row = table[(table["a"] == p["a"]) & (table["b"] == p["b"])
                    & (table["metric"] == p["metric"])]
        assert len(row) == 1, p
        row = row.iloc[0]
        assert p["b"] == "aes-ecb-encrypt 128"
        assert p["x"] == row["ratio"]
        assert p["x_ci"] == [row["ratio_ci_low"], row["ratio_ci_high"]]
        assert p["x_ci"][0] <= p["x"] <= p["x_ci"][1]
        assert p["significant"] == row["significant"]
    # the rc6 ratio's CI contains 1: drawn as no significant difference, as the table says
    rc6 = [p for p in drawn if p["a"].startswith("rc6")]
    assert rc6 and not any(p["significant"] for p in rc6)
    assert all(p["x_ci"][0] < 1.0 < p["x_ci"][1] for p in rc6)
    page = (report / "report.html").read_text()
    row = table[(table["a"] == "rc6-ecb-encrypt 128") & (table["metric"] == "time")].iloc[0]
    assert (f"{row['ratio']:.3g} [{row['ratio_ci_low']:.3g}, {row['ratio_ci_high']:.3g}]"
            in page)


def test_the_plans_pairs_leave_the_reference_rows_the_figures_draw(tmp_path: Path) -> None:
    plan = {"name": "ratios", "compare": [{"a": "sha256", "b": "rc6-ecb-encrypt"}]}
    tables = report_tables(load(_ratio_run(tmp_path / "planned", plan)), FLAGS)
    table = tables.comparisons
    assert set(table["origin"]) == {"plan", "reference"}
    # the figure the report draws of the family (the data its JSON holds), not drawn to files
    relative = next(s for s in tables.sections if s.name == "relative")
    drawn = relative.figure(tables, "symmetric").data()["points"]
    assert drawn
    for p in drawn:
        row = table[(table["origin"] == "reference") & (table["a"] == p["a"])
                    & (table["metric"] == p["metric"])].iloc[0]
        assert p["x_ci"] == [row["ratio_ci_low"], row["ratio_ci_high"]]


def test_a_family_of_one_op_gets_no_chart_relative_to_itself(
        ratio_report: tuple[Path, Path]) -> None:
    run, report = ratio_report
    assert (report / "relative-symmetric.png").exists()
    assert not list(report.glob("relative-hash.*"))
    page = (report / "report.html").read_text()
    hash_section = page[page.index("<h2>hash</h2>"):page.index("<h2>Paired comparisons</h2>")]
    assert "Relative to the reference" not in hash_section
    assert "sha256" in hash_section


def _summary(run_dir: Path, costs: dict[str, tuple[float, float]], spread: float) -> Path:
    """A symmetric family at one size: each op's (time, energy) per op, its windows spread
    by ``spread`` times :data:`SPREAD`."""
    with RunWriter.create(run_dir, plan={"name": "trade-offs"}) as writer:
        for op, (t, e) in costs.items():
            for rep in range(2):
                writer.write_point(
                    Point(op=op, family="symmetric", board="host", key_bits=128,
                          payload_bytes=64, rep=rep),
                    [Window(0.0, t * 10 * (1 + (f - 1) * spread), 100,
                            e * 10 * (1 + (f - 1) * spread), 0.0) for f in SPREAD[rep]],
                    batch_n=10)
    return run_dir


def _energy_time(run_dir: Path) -> dict:
    from energyrig.results.report.figures import figure_energy_time

    windows = load(run_dir).windows
    drawing = figure_energy_time(summarise_workloads(windows), "symmetric")
    assert drawing is not None
    return drawing.data()


def test_best_is_marked_only_where_its_intervals_stand_apart(tmp_path: Path) -> None:
    # rc6 is cheaper by its means, but within the noise of AES: no best, and it says so
    costs = {"aes-ecb-encrypt": (1.0e-4, 1.0e-6), "rc6-ecb-encrypt": (0.99e-4, 0.99e-6)}
    data = _energy_time(_summary(tmp_path / "overlap", costs, spread=5.0))
    assert [m["text"] for m in data["marks"]] == ["no significant difference"]
    assert data["marks"][0]["anchor"] is None
    (front,) = data["pareto_fronts"]
    assert front["labels"] == ["rc6-ecb-encrypt 128 · host"]  # best by its means alone
    # the same means, tight windows: the intervals stand apart, rc6 is the best
    data = _energy_time(_summary(tmp_path / "apart", costs, spread=0.01))
    (mark,) = data["marks"]
    assert mark["text"] == "best" and mark["label"] == "rc6-ecb-encrypt 128 · host"
    rc6 = next(p for p in data["points"] if p["label"] == mark["label"])
    assert mark["anchor"] == [rc6["x"], rc6["y"]]
    others = [p for p in data["points"] if p is not rc6]
    assert all(rc6["x_ci"][1] < p["x_ci"][0] and rc6["y_ci"][1] < p["y_ci"][0]
               for p in others)


def test_a_trade_off_is_drawn_as_its_pareto_front_with_its_intervals(tmp_path: Path) -> None:
    # fast but hungry, slow but frugal, and one worse than both on both counts; time in
    # µs and energy in nJ would rank them differently by distance to the origin
    costs = {"aes-ecb-encrypt": (1.0e-5, 4.0e-6), "rc6-ecb-encrypt": (4.0e-5, 1.0e-6),
             "rc4": (5.0e-5, 5.0e-6)}
    data = _energy_time(_summary(tmp_path / "front", costs, spread=1.0))
    (front,) = data["pareto_fronts"]
    assert front["labels"] == ["aes-ecb-encrypt 128 · host", "rc6-ecb-encrypt 128 · host"]
    assert front["x"] == sorted(front["x"])  # joined in order of time
    for label, x, x_ci, y_ci in zip(front["labels"], front["x"], front["x_ci"],
                                    front["y_ci"], strict=True):
        point = next(p for p in data["points"] if p["label"] == label)
        assert (x, x_ci, y_ci) == (point["x"], point["x_ci"], point["y_ci"])
    assert [m["text"] for m in data["marks"]] == [
        "no single best: a trade-off along the Pareto front"]
    assert "nearest the origin" not in json.dumps(data)


def test_a_payload_fit_is_drawn_as_the_curve_it_is_with_its_band_and_numbers(
        tmp_path: Path) -> None:
    from energyrig.results.report.figures import figure_payload

    with RunWriter.create(tmp_path / "fits", plan={"name": "fits"}) as writer:
        _write(writer, "aes-ecb-encrypt", "symmetric", 1e-6, key_bits=128,
               sizes=(16, 64, 256, 1024, 4096), spread=3.0)
    tables = report_tables(load(tmp_path / "fits"), FLAGS)
    drawing = figure_payload(tables.ok, tables.fits, "symmetric")
    assert drawing is not None
    data = drawing.data()
    assert {f["panel"] for f in data["fits"]} == {"host: time per op",
                                                 "host: net energy per op"}
    for fit, ax in zip(data["fits"], drawing.figure.axes, strict=True):
        x, y = np.array(fit["curve_x"]), np.array(fit["curve_y"])
        # the straight line E = a + b n, sampled densely and evenly on the log axis shown
        assert ax.get_xscale() == "log" and len(x) >= 100
        assert x[0] == 16 and x[-1] == pytest.approx(4096)
        steps = np.diff(np.log(x))
        assert steps.max() < 0.05 and steps == pytest.approx(steps[0])
        assert y == pytest.approx(fit["intercept"] + fit["slope"] * x)
        assert any(np.array_equal(line.get_xdata(), x) for line in ax.get_lines())
        # its 95 % confidence band around it, shaded
        low, high = np.array(fit["band_low"]), np.array(fit["band_high"])
        assert (low < y).all() and (y < high).all()
        assert ax.collections and any(len(c.get_paths()) for c in ax.collections)
        # and the fit printed beside it: slope and intercept with their CIs, R²
        row = tables.fits["time_per_op_s" if "time" in fit["panel"] else
                          "net_energy_per_op_j"].iloc[0]
        assert fit["slope_ci"] == [row["slope_ci_low"], row["slope_ci_high"]]
        assert fit["text"].startswith("slope ") and " ± " in fit["text"]
        assert "/B, intercept " in fit["text"] and f"R² {row['r2']:.4f}" in fit["text"]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any(fit["text"] in t for t in legend)


def test_the_pareto_front_and_the_separated_best_compare_each_unit_alone() -> None:
    from energyrig.results.stats import pareto_front, separated_best

    # times in s, energies in J: 1 ns against 1 J would win any distance that mixed them
    x, y = [2e-9, 1e-9, 3e-9, 1.5e-9, np.nan], [1.0, 3.0, 4.0, 3.5, 0.1]
    assert pareto_front(x, y).tolist() == [1, 0]  # in order of time; NaN left out
    ends = (np.array([0.9, 2.0, 3.0]), np.array([1.1, 2.5, 3.5]))
    assert separated_best(ends, ends) == 0
    overlapping = (np.array([0.9, 1.0, 3.0]), np.array([1.1, 2.5, 3.5]))
    assert separated_best(ends, overlapping) is None  # apart in x, not in y
    assert separated_best((ends[0], ends[1] * np.nan), ends) is None
    assert separated_best((np.array([1.0]), np.array([2.0])),
                          (np.array([1.0]), np.array([2.0]))) is None  # one point
